"""`make grade` (tools/student/grade.py) on a folder of generated submissions of chapter 02: right,
wrong, raising, crashing (the kernel dies), looping, deleting files, a tampered check cell with forged
stored outputs, and a file that is not a notebook of the edition. Each is graded from scratch in a fresh
kernel with a time limit; the hostile ones are contained and reported, and the instructor's files
(hashed before and after) are untouched."""
import csv
import hashlib
import subprocess
import sys
import uuid
from pathlib import Path

import nbformat
import pytest

from tools.student import build, grade

ROOT = Path(__file__).resolve().parents[2]
STEM = "02_algorithm1"
LABELS = ["ex-02-add-remove", "ex-02-line1"]
TIMEOUT = 60  # seconds per submission; chapter 02 runs in about 10 s


def _hashes(paths):
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() if p.exists() else "deleted" for p in paths}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("grade")
    student = tmp / "student"
    build.build(student, ROOT)
    nb = nbformat.read(student / f"{STEM}.ipynb", as_version=4)
    sols = build.solution_code((ROOT / "notebooks" / f"{STEM}.md").read_text())
    folder = tmp / "submissions"
    folder.mkdir()
    # the instructor's files a hostile submission goes after: a canary in the repository, the
    # submissions folder, the checks
    canary = ROOT / "_build" / f"grade-canary-{uuid.uuid4().hex}.txt"
    canary.parent.mkdir(exist_ok=True)
    canary.write_text("the instructor's file\n")
    delete = (f"import os, shutil\n"
              f"try:\n    open({str(canary)!r}, 'w').write('gone')\nexcept OSError:\n    pass\n"
              f"shutil.rmtree({str(folder)!r}, ignore_errors=True)\n"
              f"os.remove({str(canary)!r})\n")
    wrong = {"ex-02-add-remove": sols["ex-02-add-remove"] + "\nadd_remove = calibrate(1.0, 2.0)",
             "ex-02-line1": sols["ex-02-line1"] + "\nworst_gap = 1e-3"}
    subs = {
        "right": build.filled(nb, sols),
        "wrong": build.filled(nb, wrong),
        "raising": build.filled(nb, {"ex-02-add-remove": "raise RuntimeError('my answer is broken')",
                                     "ex-02-line1": sols["ex-02-line1"]}),
        "crashing": build.filled(nb, {"ex-02-add-remove": "import os\nos._exit(3)"}),
        "looping": build.filled(nb, {"ex-02-add-remove": "while True:\n    pass"}),
    }
    sandbox = grade.sandbox_available()
    if sandbox:  # without the sandbox, the grader could not contain it: the test would delete its canary
        subs["deleting"] = build.filled(nb, {"ex-02-add-remove": delete, "ex-02-line1": sols["ex-02-line1"]})
    # a check cell replaced by a fake verdict, with stored outputs claiming success
    forged = build.filled(nb, {"ex-02-add-remove": "add_remove = replace = 0"})
    for cell in forged.cells:
        if cell.metadata.get("student", {}).get("role") == "check":
            cell.source = f'print("{cell.metadata["student"]["exercise"]}: all checks passed")'
            cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="all checks passed\n")]
    subs["forged"] = forged
    for name, sub in subs.items():
        nbformat.write(sub, folder / f"{name}.ipynb")
    (folder / "notes.ipynb").write_text("not a notebook")
    # (the chapters are not watched: other work may commit them meanwhile)
    watched = [canary, *sorted((ROOT / "tools" / "student").glob("*.py")), *sorted(folder.iterdir())]
    before = _hashes(watched)
    out = tmp / "grades"
    try:
        outcomes = grade.grade_folder(folder, out, timeout=TIMEOUT, jobs=2)
        after = _hashes(watched)
    finally:
        canary.unlink(missing_ok=True)
    rows = list(csv.DictReader(open(out / "grades.csv")))
    return {"before": before, "after": after, "rows": rows, "outcomes": {o.submission: o for o in outcomes},
            "summary": (out / "summary.md").read_text(), "sandbox": sandbox}


def _rows(graded, name):
    return {r["exercise"]: r for r in graded["rows"] if r["submission"] == f"{name}.ipynb"}


def test_right_and_wrong(graded):
    right, wrong = _rows(graded, "right"), _rows(graded, "wrong")
    assert list(right) == LABELS and all(r["passed"] == "True" for r in right.values())
    assert all(r["passed"] == "False" for r in wrong.values())
    assert wrong["ex-02-add-remove"]["message"].startswith("AssertionError: ex-02-add-remove: ")
    assert "worst_gap = 0.001" in wrong["ex-02-line1"]["message"]
    assert graded["outcomes"]["right.ipynb"].status == "completed"


def test_raising_is_reported_and_the_other_exercise_still_graded(graded):
    rows = _rows(graded, "raising")
    assert rows["ex-02-add-remove"]["passed"] == "False" and "define" in rows["ex-02-add-remove"]["message"]
    assert rows["ex-02-line1"]["passed"] == "True"
    assert "RuntimeError: my answer is broken" in graded["outcomes"]["raising.ipynb"].status


def test_crashing_and_looping_are_contained(graded):
    crash, loop = graded["outcomes"]["crashing.ipynb"], graded["outcomes"]["looping.ipynb"]
    assert crash.status.startswith("the kernel died")
    assert loop.status.startswith("stopped at the time limit") and loop.seconds < TIMEOUT + 60
    for name in ("crashing", "looping"):
        rows = _rows(graded, name)
        assert list(rows) == LABELS
        assert all(r["passed"] == "False" and r["message"].startswith("not graded: the run never reached")
                   for r in rows.values())


def test_deleting_leaves_the_instructors_files_untouched(graded):
    if not graded["sandbox"]:
        pytest.skip("unshare is not available: the grader runs without a read-only sandbox here")
    assert graded["after"] == graded["before"]
    status = graded["outcomes"]["deleting.ipynb"].status
    assert "Read-only file system" in status
    assert _rows(graded, "deleting")["ex-02-line1"]["passed"] == "True"


def test_stored_outputs_and_edited_check_cells_are_not_trusted(graded):
    rows = _rows(graded, "forged")
    assert all(r["passed"] == "False" for r in rows.values())
    assert "must be" in rows["ex-02-add-remove"]["message"]  # the real check ran: add_remove = 0 has no .r


def test_not_a_notebook_and_the_summary(graded):
    rows = _rows(graded, "notes")
    assert len(rows) == 1 and rows["(notebook)"]["passed"] == "False"
    summary = graded["summary"]
    assert "| right.ipynb | 02_algorithm1 | 2 / 2 |" in summary
    # passed: right, raising (and deleting); submitted: all but notes.ipynb
    n = 7 if graded["sandbox"] else 6
    assert f"| ex-02-line1 | {n - 4} | {n} |" in summary


def test_bad_arguments(tmp_path):
    with pytest.raises(ValueError, match="SUBMISSIONS"):
        grade.grade_folder(tmp_path / "missing", tmp_path / "out")
    with pytest.raises(ValueError, match="no notebook"):
        grade.grade_folder(tmp_path, tmp_path / "out")
    with pytest.raises(ValueError, match="timeout"):
        grade.grade_folder(tmp_path, tmp_path / "out", timeout=0)
    run = subprocess.run([sys.executable, "-m", "tools.student.grade", str(tmp_path / "missing")], cwd=ROOT,
                         capture_output=True, text=True)
    assert run.returncode == 2 and "SUBMISSIONS must be a folder" in run.stderr
