"""The student edition (tools/student): its autograder accepts the book's own solution and rejects a
wrong one, for at least one exercise per chapter where the solution runs on the chapter's imports alone,
and `make student`'s output holds no solution and a check after every exercise."""
import ast
import copy
import dataclasses
import re
from pathlib import Path

import nbformat
import numpy as np
import pytest

from tools.student import build, checks

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = {p.name[:2]: p for p in build.chapters(ROOT)}


def _solution_namespace(label):
    md = CHAPTERS[label[3:5]]
    text = md.read_text()
    ns = {"glue": lambda *a, **k: None}
    exec(build.import_code(text), ns)
    cells = [c.group("src") for c in build.CODE_CELL.finditer(text)]
    for key in HELPERS.get(label, ()):  # the chapter's cells (or lines) that define what the solution uses
        if key.startswith("def:"):  # one function of a cell, without the rest of the cell
            src = next(c for c in cells if f"def {key[4:]}(" in c)
            src = "\n".join(l for l in src.splitlines() if not l.startswith(":"))
            src = next(ast.get_source_segment(src, n) for n in ast.parse(src).body
                       if isinstance(n, ast.FunctionDef) and n.name == key[4:])
        else:
            src = next(c for c in cells if key[5:] in c) if key.startswith("cell:") else key
        exec("\n".join(l for l in src.splitlines() if not l.startswith(":")), ns)
    for src in build.solutions(text)[label]:
        src = "\n".join(l for l in src.splitlines() if not l.startswith(":"))
        exec(compile(src, f"{md.name}:{label}", "exec"), ns)
    return ns


# chapter cells a solution needs besides the imports (found by a line they contain; cheap)
HELPERS = {"ex-12-sparse": ("def:pair_label",),
           "ex-11-rows": ('n_adult = len(prepare("Adult", binning="public").y_train)',),
           "ex-14-flip": ("cell:EPS_HAT, DELTA =", "cell:adult = prepare(", "cell:def kl_tv("),
           "ex-08-pseudo-count": ('networks = {name: prepare_network(name, binning="public") for name in NETWORKS}',
                                  'quantile = {name: prepare_network(name, binning="quantile") for name in NETWORKS}')}


def _scale(name, factor):
    def mutate(ns):
        ns[name] = ns[name] * factor
    return mutate


def _drop(name):
    return lambda ns: ns.pop(name)


def _replace_r(name, factor):  # a Calibration-like result with a wrong scale
    def mutate(ns):
        ns[name] = ns[name]._replace(r=ns[name].r * factor) if hasattr(ns[name], "_replace") else \
            type(ns[name])(**{**vars(ns[name]), "r": ns[name].r * factor})
    return mutate


# one (or more) exercise per chapter whose solution needs only the chapter's imports, and a wrong answer
CASES = {
    "ex-01-density": _scale("constant", 1.1),
    "ex-01-bias-limit": _scale("r_needed", 0.9),
    "ex-02-add-remove": _replace_r("add_remove", 0.9),
    "ex-03-new-settings": _scale("brute", 0.9),
    "ex-04-best-order": lambda ns: ns.__setitem__("best", dataclasses.replace(ns["best"], lam=2 * ns["best"].lam))
    if dataclasses.is_dataclass(ns["best"]) else ns.__setitem__("best", ns["best"]._replace(lam=2 * ns["best"].lam)),
    "ex-04-composition": _scale("at_two", 1.1),
    "ex-05-sample-complexity": _scale("n_needed", 1.1),
    "ex-06-calibrate-lam2": _drop("g_ex"),
    "ex-07-neighbour": lambda ns: ns.__setitem__("moved", ns["moved"].assign(public=[0, 1, 1])),
    "ex-08-pseudo-count": lambda ns: ns.__setitem__("loss_ex", ns["loss_ex"].assign(public=ns["loss_ex"]["public"] * 1.1)),
    "ex-09-neighbour-edges": lambda ns: ns.__setitem__("moved_enc", ns["base_enc"]),
    "ex-15-witness": _scale("ratio", 1.1),
    "ex-10-calibrate": _scale("r_ex", 1.1),
    "ex-11-bound": lambda ns: ns.__setitem__("beta_4", 0.05),  # the unmodified prior: not private
    "ex-11-rows": lambda ns: ns.__setitem__("n_min", ns["n_min"] + 1),
    "ex-12-gamma": lambda ns: ns.__setitem__("pmf_ex", np.roll(ns["pmf_ex"], 1)),
    "ex-10-brute-force": _scale("brute", 1.01),
    "ex-12-sparse": lambda ns: ns.__setitem__("fractions", ns["fractions"][::-1]),
    "ex-13-mean": _scale("local", 1.1),
    "ex-14-flip": lambda ns: ns.__setitem__("flip", {30: 0.5, 100: 0.5}),  # N = 30 flips later
}


@pytest.mark.parametrize("label", sorted(CASES))
def test_check_accepts_the_solution_and_rejects_a_wrong_answer(label):
    ns = _solution_namespace(label)
    assert checks.check(label, ns) is True
    wrong = copy.copy(ns)
    CASES[label](wrong)
    with pytest.raises(AssertionError):
        checks.check(label, wrong)


def test_every_exercise_has_a_check_or_a_reason():
    labels = {l for md in CHAPTERS.values() for l in build.solutions(md.read_text())}
    assert labels == set(checks.CHECKS) | set(checks.NO_CHECK)
    assert not set(checks.CHECKS) & set(checks.NO_CHECK)


@pytest.fixture(scope="module")
def student_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("student")
    build.build(out, ROOT)
    return out


def test_student_edition_has_no_solutions_and_a_check_after_every_exercise(student_dir):
    for md in CHAPTERS.values():
        text = md.read_text()
        sols = build.solutions(text)
        student = (student_dir / md.name).read_text()
        assert "solution-start" not in student and "solution-end" not in student
        assert not re.search(r"\{(glue:text|doc|cite|exercise)\}", student), md.name
        for label, cells in sols.items():
            for src in cells:
                code = [l for l in src.splitlines() if l.strip() and not l.startswith((":", "#"))]
                assert "\n".join(code) not in student, f"{md.name}: solution code of {label} left in"
        nb = nbformat.read(student_dir / md.with_suffix(".ipynb").name, as_version=4)
        nbformat.validate(nb)
        assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code")
        for label in sols:
            i = next(k for k, c in enumerate(nb.cells) if f"exercise-label: {label}" in c.source)
            answer, grade = nb.cells[i + 1], nb.cells[i + 2]
            assert answer.cell_type == "code" and answer.source.startswith("# Your answer.")
            assert grade.cell_type == "code" and grade.source == f'check("{label}", globals())'
