"""The student edition (tools/student), end to end.

* Every student notebook is executed from scratch in a fresh kernel twice, as `make grade` runs a
  submission (tools/student/grade.py: a temporary folder, a sandbox where available, a time limit):
  once with the book's solutions pasted into the answer cells (every check passes; the essay shows
  its rubric) and once with a wrong answer per exercise (every check fails with its own message).
  The 30 runs go two at a time; chapters 07-14 need the UCI data.
* The checker cannot be shadowed, every exercise states what its check reads, the checks refuse
  answers that are not numbers (an object whose comparisons always answer True) with a TypeError
  naming the answer, and check the setting asked about.
"""
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import numpy as np
import pytest

from tests.conftest import data_available
from tools.student import build, checks, grade
from tools.student.answers import AnswerTypeError

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = {p.stem: p for p in build.chapters(ROOT)}
NEEDS_DATA = {stem for stem in CHAPTERS if 7 <= int(stem[:2]) <= 14}
LABELS = {stem: list(build.solutions(md.read_text())) for stem, md in CHAPTERS.items()}

# a wrong answer per checked exercise: a line run after the book's solution (it uses only the answer's names,
# so a chapter's helpers can move), and a fragment of the message its check must fail with
WRONG = {
    "ex-01-density": ("constant = constant * 1.1", "constant: got"),
    "ex-01-bias-limit": ("r_needed = 0.9 * r_needed", "r_needed ="),
    "ex-02-add-remove": ("add_remove = replace", "Line 1's eps at add_remove.r"),
    "ex-02-line1": ("worst_gap = 1e-3", "worst_gap ="),
    "ex-03-new-settings": ("cal = SimpleNamespace(r=1.1 * cal.r, alpha=cal.alpha)", "cal (r, alpha)"),
    "ex-03-quadrature": ("numeric = 1.01 * numeric", "numeric (D_5 by quadrature)"),
    "ex-04-best-order": ("best = SimpleNamespace(lam=2 * best.lam, expected_kl=best.expected_kl)",
                         "best.expected_kl (the expected KL at best.lam)"),
    "ex-04-composition": ("at_two = dp_to_rdp(2.0, 2.0, 1e-6)", "at_two: got"),
    "ex-05-new-p": ("chernoff = 2 * chernoff", "chernoff: got"),
    "ex-05-sample-complexity": ("n_needed = 1.1 * n_needed", "Theorem 2's bound at n_needed"),
    "ex-06-calibrate-lam2": ("g_ex = SimpleNamespace(r=1.05 * g_ex.r, epsilon_hat=g_ex.epsilon_hat)",
                             "g_ex.r is not the largest"),
    "ex-06-delta-1e-6": ("table_ex = table_ex * 1.01", "table_ex: got"),
    "ex-07-neighbour": ('moved.loc["test rows coded differently", "public"] = 3', "moved['public']"),
    "ex-07-within-se": ("later = later + 1", "later ="),
    "ex-08-crossing": ("cross_ex = z_ex.index.max()", "cross_ex ="),
    "ex-08-pseudo-count": ("loss_ex = loss_ex * 1.1", "loss_ex[Adult, public]"),
    "ex-09-neighbour-edges": ("moved_enc = base_enc", "moved_enc['quantile']: not the encoding"),
    "ex-09-flat-price": ("worst_ratio = {e: worst_ratio[1.0] for e in worst_ratio}", "worst_ratio[0.1]"),
    "ex-10-brute-force": ("exact = brute = 0.0", "exact (the closed form"),
    "ex-10-calibrate": ("r_ex = 1.1 * r_ex", "r_ex ="),
    "ex-11-bound": ("beta_4 = 0.05", "beta_4 (Algorithm 4 at c = 2)"),
    "ex-11-rows": ("n_min = n_min + 1", "not the smallest"),
    "ex-11-ops": ("err_ops2 = err_ops2 * 0.5", "err_ops2's mean"),
    "ex-12-gamma": ("pmf_ex = np.roll(pmf_ex, 1)", "pmf_ex"),
    "ex-12-crossover": ('cross[4.0]["M_H"] = (1.5 * cross[4.0]["M_H"][0], 0.0)', "cross[4]['M_H'] mean"),
    "ex-12-sparse": ("fractions = fractions[::-1]", "the fraction of epsilon spent"),
    "ex-13-mean": ("smooth = np.maximum(local, np.exp(-betas / 2) * global_)", "smooth (at your betas)"),
    "ex-14-author-order": ("z_fixed = -z_fixed", "z_fixed ="),
    "ex-14-flip": ("flip = {30: 0.5, 100: 0.5}", "flip[30] = 0.5"),
    "ex-15-witness": ("ratio = 1.1 * ratio", "ratio: got"),
    "ex-15-room": ("room = room * 1.01", "room: got"),
}


def test_every_exercise_has_a_check_or_a_rubric_and_a_wrong_answer():
    labels = {label for ls in LABELS.values() for label in ls}
    assert labels == set(checks.CHECKS) | set(checks.NO_CHECK)
    assert not set(checks.CHECKS) & set(checks.NO_CHECK)
    assert set(checks.NO_CHECK) == {"ex-13-printed"}          # only the essay goes without a check
    assert set(WRONG) == set(checks.CHECKS)


@pytest.fixture(scope="module")
def student_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("student")
    build.build(out, ROOT)
    return out


def test_student_edition_has_no_solutions_and_states_every_answer(student_dir):
    for stem, md in CHAPTERS.items():
        text = md.read_text()
        sols = build.solutions(text)
        student = (student_dir / md.name).read_text()
        assert "solution-start" not in student and "solution-end" not in student
        assert not re.search(r"\{(glue:text|doc|cite|exercise)\}", student), md.name
        for label, cells in sols.items():
            for src in cells:
                code = [line for line in src.splitlines() if line.strip() and not line.startswith((":", "#"))]
                assert "\n".join(code) not in student, f"{md.name}: solution code of {label} left in"
        nb = nbformat.read(student_dir / f"{stem}.ipynb", as_version=4)
        nbformat.validate(nb)
        assert nb.metadata["student_edition"] == {"chapter": stem, "exercises": list(sols)}
        assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code")
        for label in sols:
            i = next(k for k, c in enumerate(nb.cells) if f"exercise-label: {label}" in c.source)
            answer, check = nb.cells[i + 1], nb.cells[i + 2]
            assert answer.metadata["student"] == {"exercise": label, "role": "answer"}
            assert check.metadata["student"] == {"exercise": label, "role": "check"}
            assert check.source == build.CHECK_CELL.format(label=label)
            if label in checks.CHECKS:   # every name the check reads, with its type and meaning
                for a in checks.CHECKS[label].answers:
                    assert f"#   {a.name}: {a.type_text()[:40]}" in answer.source, (label, a.name)
            else:
                assert "No automatic check" in answer.source


def test_the_checker_cannot_be_shadowed(student_dir):
    """Chapter 04 binds `check` (an array): the check cells import their own checker."""
    text = CHAPTERS["04_approximate_dp"].read_text()
    assert re.search(r"^check = ", text, re.M)
    student = (student_dir / "04_approximate_dp.md").read_text()
    for label in LABELS["04_approximate_dp"]:
        assert build.CHECK_CELL.format(label=label) in student
    assert not any("check_exercise" in md.read_text() for md in CHAPTERS.values())


# ----------------------------------------------------------------------------- end to end
def _runs(student_dir, stems):
    """Each chapter's student notebook with the solutions and with wrong answers, run as `make grade` runs a
    submission; {(stem, kind): (results by label, status)}."""
    sandbox = grade.sandbox_available()
    jobs = []
    for stem in stems:
        nb = nbformat.read(student_dir / f"{stem}.ipynb", as_version=4)
        sols = build.solution_code(CHAPTERS[stem].read_text())
        wrong = {label: src + "\nfrom types import SimpleNamespace\n" + WRONG[label][0]
                 for label, src in sols.items() if label in WRONG}
        for kind, answers in (("solutions", sols), ("wrong", {**sols, **wrong})):
            jobs.append((stem, kind, build.filled(nb, answers)))

    def one(job):
        stem, kind, nb = job
        prepared, cells, missing = grade.prepared(nb, LABELS[stem])
        assert not missing
        records, status, seconds = grade.run_submission(prepared, cells, 900, sandbox=sandbox)
        return (stem, kind), ({r["label"]: r for r in records}, status, seconds)

    with ThreadPoolExecutor(2) as pool:
        return dict(pool.map(one, sorted(jobs, key=lambda j: -_COST.get(j[0], 1))))


# longest first (seconds of a run measured under load; only the order matters), so the two workers end together
_COST = {"14_all_systems": 177, "13_smooth_sensitivity_naive_bayes": 153, "11_glm_posterior_sampling": 143,
         "12_smoothed_hellinger": 130, "10_rdp_posterior_sampling": 129, "09_approximate_dp_experiments": 90,
         "07_naive_bayes": 55, "06_gohari_comparison": 53, "03_theorem1": 48, "05_utility_bound": 44,
         "15_counterexample": 40, "04_approximate_dp": 35, "08_bayesian_networks": 28, "01_exponential_mechanism": 27,
         "02_algorithm1": 19}


@pytest.fixture(scope="module")
def runs(student_dir):
    stems = [s for s in CHAPTERS if s not in NEEDS_DATA or data_available()]
    return _runs(student_dir, stems)


def _params():
    return [pytest.param(stem, marks=[pytest.mark.needs_data] if stem in NEEDS_DATA else [], id=stem[:2])
            for stem in CHAPTERS]


def _graded(runs, stem, kind):
    """The checked exercises of a completed run (every exercise graded, the essay by its rubric)."""
    results, status, _ = runs[stem, kind]
    assert status == "completed", status
    assert list(results) == LABELS[stem]
    for label in checks.NO_CHECK.keys() & set(results):
        assert results[label]["passed"] == "manual" and "rubric" in results[label]["message"]
    return {label: r for label, r in results.items() if label not in checks.NO_CHECK}


@pytest.mark.parametrize("stem", _params())
def test_student_notebook_passes_with_the_books_solutions(runs, stem):
    for label, r in _graded(runs, stem, "solutions").items():
        assert r["passed"] is True, (label, r["message"])


@pytest.mark.parametrize("stem", _params())
def test_student_notebook_fails_with_a_wrong_answer_per_exercise(runs, stem):
    for label, r in _graded(runs, stem, "wrong").items():
        assert r["passed"] is False, label
        assert r["message"].startswith(f"AssertionError: {label}: ") and WRONG[label][1] in r["message"], \
            (label, r["message"])


# ----------------------------------------------------------------------------- hostile answers
class AlwaysTrue:
    """Compares equal (and less, and greater) to everything."""
    __eq__ = __lt__ = __le__ = __gt__ = __ge__ = lambda self, other: True
    __ne__ = lambda self, other: False
    __float__ = lambda self: 1.0
    __array_priority__ = 1000


HOSTILE = [AlwaysTrue(), "0.5", True, None, [1, "a"], {"r": 1.0}, np.array([AlwaysTrue()], dtype=object)]


@pytest.mark.parametrize("value", HOSTILE, ids=lambda v: type(v).__name__)
@pytest.mark.parametrize("label", ["ex-01-bias-limit", "ex-04-composition", "ex-10-brute-force", "ex-10-calibrate"])
def test_a_non_number_is_a_type_error_naming_the_answer(label, value):
    ns = {a.name: value for a in checks.CHECKS[label].answers}
    name = checks.CHECKS[label].answers[0].name
    with pytest.raises(AnswerTypeError, match=rf"{label}: answer `{name}` must be"):
        checks.check_exercise(label, ns)
    assert issubclass(AnswerTypeError, TypeError)


@pytest.mark.parametrize("value", HOSTILE[:3] + [np.zeros((2, 3)), np.zeros(4)], ids=lambda v: type(v).__name__)
def test_an_object_answer_is_read_attribute_by_attribute(value):
    """ex-07 and ex-02 read tables and objects: an AlwaysTrue table or attribute is refused as well."""
    with pytest.raises(AnswerTypeError, match=r"answer `(moved|add_remove)`"):
        checks.check_exercise("ex-07-neighbour", {"moved": value})
    with pytest.raises(AnswerTypeError, match=r"answer `add_remove`"):
        from types import SimpleNamespace
        checks.check_exercise("ex-02-add-remove", {"replace": SimpleNamespace(r=1.0, alpha=5.0),
                                                   "add_remove": SimpleNamespace(r=value, alpha=value)})


def test_brute_force_checks_the_setting_not_agreement():
    from lib.mechanisms.posterior_sampling import brute_force_worst_case, worst_case
    with pytest.raises(AssertionError, match="exact"):
        checks.check_exercise("ex-10-brute-force", {"exact": 0, "brute": 0})
    # the concentrated setting of the same exercise: the two agree, but it is not the setting the names hold
    prior = np.array([1.0, 2.0, 0.5])
    e = worst_case(prior, 0.5, 1.4, 5, kind="concentrated")
    b = brute_force_worst_case(prior, 0.5, 1.4, 5, kind="concentrated")
    with pytest.raises(AssertionError, match="exact"):
        checks.check_exercise("ex-10-brute-force", {"exact": e, "brute": b})
    right = worst_case(1.0, 0.3, 4.0, 4, rows=2, d=3)
    assert checks.check_exercise("ex-10-brute-force", {"exact": right, "brute": right})
    with pytest.raises(AssertionError, match="brute"):
        checks.check_exercise("ex-10-brute-force", {"exact": right, "brute": right * 1.01})


@pytest.mark.parametrize("grid", ["geometric", "linear"])
def test_smooth_mean_accepts_any_beta_grid(grid):
    from lib.mechanisms import smooth_sensitivity as ss
    x = np.random.default_rng(7).uniform(0.2, 0.8, 40)
    betas = np.geomspace(1e-4, 10, 25) if grid == "geometric" else np.linspace(1e-4, 10, 30)
    ns = {"x_ex": x, "local": ss.local_sensitivity_mean(x, 0.0, 1.0), "global_": ss.global_sensitivity_mean(40, 0.0, 1.0),
          "betas": betas, "smooth": np.array([ss.smooth_sensitivity_mean(x, 0.0, 1.0, b) for b in betas])}
    assert checks.check_exercise("ex-13-mean", ns)
    with pytest.raises(AssertionError, match="betas"):
        checks.check_exercise("ex-13-mean", {**ns, "betas": betas[:-3], "smooth": ns["smooth"][:-3]})
    with pytest.raises(AssertionError, match="smooth"):
        checks.check_exercise("ex-13-mean", {**ns, "smooth": ns["smooth"][::-1]})


def test_the_essay_prints_its_rubric(capsys):
    assert checks.check_exercise("ex-13-printed", {}) is False
    assert "Rubric:" in capsys.readouterr().out


def test_unknown_label_and_bad_namespace():
    with pytest.raises(KeyError, match="ex-99"):
        checks.check_exercise("ex-99", {})
    with pytest.raises(TypeError, match="namespace"):
        checks.check_exercise("ex-01-density", [])


def test_the_instructors_guide_lists_every_exercise_with_its_answer_names():
    guide = (ROOT / "book" / "instructors.md").read_text()
    for label in checks.CHECKS:
        row = next((line for line in guide.splitlines() if line.startswith("| ") and f"| {label} |" in line), None)
        assert row is not None, f"{label} is not in book/instructors.md"
        assert all(f"`{name}`" in row for name in checks.CHECKS[label].names), label
    assert all(f"| {label} |" in guide for label in checks.NO_CHECK) and "rubric of ex-13-printed" in guide
    assert "book/instructors" in (ROOT / "_toc.yml").read_text()
