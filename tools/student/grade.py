"""Grade a class: `python -m tools.student.grade SUBMISSIONS [--out DIR] [--timeout S] [--jobs N]`
(the `make grade SUBMISSIONS=<folder>` target).

Every notebook under SUBMISSIONS (``*.ipynb``, searched recursively) is one submission of one chapter
of the student edition (its notebook metadata ``student_edition.chapter``, or its file name
``NN_name.ipynb``). For each submission the grader

1. never trusts what the notebook stores: it drops every output, and puts back the instructor's own
   check cell for every exercise of the chapter (a check cell the student edited or deleted is
   restored from the cell's metadata or its label; one that cannot be found is reported);
2. copies the notebook into a fresh temporary folder, and runs it there in a fresh kernel, in a
   subprocess with a time limit (``--timeout``, for the whole notebook), every cell even after an
   error (so one wrong answer does not hide the others);
3. on Linux, inside a sandbox made with ``unshare`` (a user, mount and PID namespace): the whole
   file system is read-only except the temporary folder (and a private /dev/shm), and every process
   the submission starts dies with it, so a submission that deletes files, loops or forks cannot touch the instructor's
   files or outlive its limit. Where ``unshare`` is not available the run is only in the
   temporary folder with the time limit, and the summary says so.

It writes ``grades.csv`` (one row per submission and exercise: ``submission, exercise, passed,
message``; ``passed`` is ``True``, ``False`` or ``manual`` for the essay graded by rubric) and
``summary.md`` (per submission: passed / checked, and how the run ended; per exercise: how many
passed) into ``--out`` (default ``_build/grades``).
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[2]

# the sandbox: bind the work folder onto itself (a separate, writable mount), give it a private /dev/shm,
# then make / read-only
_SANDBOX_SCRIPT = ('mount --bind "$0" "$0" && mount -t tmpfs tmpfs /dev/shm && mount -o remount,bind,ro / '
                   '&& exec "$@"')


@dataclass
class Result:
    """One exercise of one submission."""
    exercise: str
    passed: bool | str
    message: str


@dataclass
class Outcome:
    """One submission: its exercises and how its run ended."""
    submission: str
    chapter: str
    results: list[Result] = field(default_factory=list)
    status: str = "completed"
    seconds: float = 0.0


def sandbox_available() -> bool:
    """True when ``unshare`` can make a read-only file system for an unprivileged run (Linux)."""
    if not sys.platform.startswith("linux") or shutil.which("unshare") is None:
        return False
    with tempfile.TemporaryDirectory() as tmp:
        probe = subprocess.run(["unshare", "-r", "-m", "-p", "-f", "--kill-child", "sh", "-c", _SANDBOX_SCRIPT,
                                tmp, "true"], capture_output=True, timeout=30)
    return probe.returncode == 0


# ----------------------------------------------------------------------------- the notebook to run
def chapter_of(nb, path: Path, chapters: dict[str, list[str]]) -> str:
    """The chapter a submission belongs to: its metadata, else its file name; ValueError if neither."""
    meta = nb.metadata.get("student_edition", {})
    if isinstance(meta, dict) and meta.get("chapter") in chapters:
        return meta["chapter"]
    stem = re.match(r"\d\d_[a-z0-9_]+", path.stem)
    if stem and stem.group(0) in chapters:
        return stem.group(0)
    raise ValueError(f"{path.name}: not a notebook of the student edition (no chapter in its metadata or name)")


def prepared(nb, labels: list[str]):
    """The submission with every output dropped and the instructor's check cell for every exercise.

    Returns ``(notebook, {cell index: label}, [labels whose check cell is missing])``.
    """
    from tools.student.build import CHECK_CELL, CHECK_LABEL

    nb = nbformat.from_dict(json.loads(json.dumps(nb)))  # a copy
    checks = {}
    for k, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        cell.outputs, cell.execution_count = [], None
        meta = cell.metadata.get("student", {})
        label = meta.get("exercise") if isinstance(meta, dict) and meta.get("role") == "check" else None
        if label is None:
            m = CHECK_LABEL.search(cell.source)
            label = m.group("label") if m else None
        if label in labels and label not in checks.values():
            cell.source = CHECK_CELL.format(label=label)
            checks[k] = label
    return nb, checks, [lab for lab in labels if lab not in checks.values()]


def chapter_exercises(root: Path = ROOT) -> dict[str, list[str]]:
    """chapter stem -> its exercise labels, in order (from the chapters' MyST sources)."""
    from tools.student import build
    return {md.stem: list(build.solutions(md.read_text())) for md in build.chapters(root)}


# ----------------------------------------------------------------------------- inside the sandbox
def _verdict(cell, label: str) -> tuple[bool | str, str]:
    """A check cell's verdict from the outputs it produced in this run."""
    from tools.student import checks
    text = "".join(o.get("text", "") for o in cell.outputs if o.get("output_type") == "stream")
    errors = [o for o in cell.outputs if o.get("output_type") == "error"]
    if errors:
        e = errors[0]
        return False, f"{e.get('ename', 'Error')}: {e.get('evalue', '')}".strip()
    if label in checks.NO_CHECK:
        return "manual", "no automatic check; rubric: " + checks.NO_CHECK[label][1]
    if f"{label}: all checks passed" in text:
        return True, "all checks passed"
    return False, "the check cell printed no verdict"


def run_inside(path: Path, checks: dict[int, str], deadline: float, report) -> str:
    """Execute the notebook at ``path`` cell by cell in a fresh kernel; ``report(label, passed, message)``
    after every check cell. Returns how the run ended."""
    from nbclient import NotebookClient
    from nbclient.exceptions import CellTimeoutError, DeadKernelError

    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=max(1, int(deadline - time.time())), kernel_name="python3",
                            allow_errors=True, resources={"metadata": {"path": str(path.parent)}})
    status, errors = "completed", []
    with client.setup_kernel():
        for k, cell in enumerate(nb.cells):
            if cell.cell_type != "code":
                continue
            left = deadline - time.time()
            if left <= 1:
                status = "stopped at the time limit"
                break
            client.timeout = int(left)
            try:
                client.execute_cell(cell, k)
            except CellTimeoutError:
                status = f"stopped at the time limit (cell {k} still running)"
                break
            except DeadKernelError:
                status = f"the kernel died in cell {k}"
                break
            if k in checks:
                report(checks[k], *_verdict(cell, checks[k]))
            else:
                errors += [(k, o) for o in cell.outputs if o.get("output_type") == "error"]
    if errors:
        k, e = errors[0]
        status += (f"; {len(errors)} other cell{'s' * (len(errors) > 1)} raised (first, cell {k}: "
                   f"{e.get('ename', 'Error')}: {str(e.get('evalue', ''))[:200]})")
    return status


def _child_main(argv: list[str]) -> None:
    """``python -m tools.student.grade --child NOTEBOOK CHECKS_JSON SECONDS FD``: run inside the sandbox and
    write one JSON line per check (and a last line with the status) to file descriptor FD."""
    path, checks, seconds, fd = Path(argv[0]), json.loads(argv[1]), float(argv[2]), int(argv[3])
    out = os.fdopen(fd, "w", buffering=1)
    report = lambda label, passed, message: out.write(json.dumps({"label": label, "passed": passed,
                                                                  "message": message}) + "\n")
    try:
        status = run_inside(path, {int(k): v for k, v in checks.items()}, time.time() + seconds, report)
    except Exception as exc:  # the kernel could not start, the notebook could not be read
        status = f"the run failed: {type(exc).__name__}: {exc}"
    out.write(json.dumps({"status": status}) + "\n")
    out.close()


# ----------------------------------------------------------------------------- one submission
def run_submission(nb, checks: dict[int, str], timeout: float, *, sandbox: bool,
                   data_dir: str | None = None) -> tuple[list[dict], str, float]:
    """Run a prepared notebook in a temporary folder, in a subprocess (sandboxed if ``sandbox``), with the
    time limit ``timeout`` seconds. Returns (the check lines, the status, the seconds it took)."""
    start = time.time()
    with tempfile.TemporaryDirectory(prefix="grade-") as tmp:
        work = Path(tmp) / "work"
        for sub in ("home", "tmp", "runtime", "ipython", "mpl", "cache"):
            (work / sub).mkdir(parents=True)
        nbformat.write(nb, work / "submission.ipynb")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("JPY_", "JUPYTER_", "PYTEST"))}
        env.update(HOME=str(work / "home"), TMPDIR=str(work / "tmp"), JUPYTER_RUNTIME_DIR=str(work / "runtime"),
                   IPYTHONDIR=str(work / "ipython"), MPLCONFIGDIR=str(work / "mpl"), XDG_CACHE_HOME=str(work / "cache"),
                   PYTHONPATH=str(ROOT), DIRICHLET_BOOK_ROOT=str(ROOT), PYTHONDONTWRITEBYTECODE="1",
                   OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
        if data_dir:
            env["DIRICHLET_DATA_DIR"] = data_dir
        read, write = os.pipe()
        cmd = [sys.executable, "-m", "tools.student.grade", "--child", str(work / "submission.ipynb"),
               json.dumps(checks), str(timeout), str(write)]
        if sandbox:
            cmd = ["unshare", "-r", "-m", "-p", "-f", "--kill-child", "sh", "-c", _SANDBOX_SCRIPT, str(work)] + cmd
        proc = subprocess.Popen(cmd, cwd=work, env=env, pass_fds=(write,), stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
        os.close(write)
        lines: list[str] = []
        reader = threading.Thread(target=lambda: lines.extend(os.fdopen(read).read().splitlines()), daemon=True)
        reader.start()
        stderr = b""
        try:
            _, stderr = proc.communicate(timeout=timeout + 60)  # the child stops itself at `timeout`
            killed = False
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            killed = True
        reader.join(10)
    records = [json.loads(line) for line in lines if line.strip()]
    status = next((r["status"] for r in records if "status" in r), None)
    if killed:
        status = "killed at the time limit"
    elif status is None:
        tail = stderr.decode(errors="replace").strip().splitlines()[-1:] if stderr else []
        status = f"the run ended without a report (exit code {proc.returncode}{': ' + tail[0] if tail else ''})"
    return [r for r in records if "label" in r], status, time.time() - start


def grade_one(path: Path, chapters: dict[str, list[str]], timeout: float, *, sandbox: bool,
              data_dir: str | None = None, name: str | None = None) -> Outcome:
    """Grade one submitted notebook (see the module's docstring)."""
    name = name or path.name
    try:
        nb = nbformat.read(path, as_version=4)
        chapter = chapter_of(nb, path, chapters)
    except Exception as exc:
        return Outcome(name, "?", [Result("(notebook)", False, f"not graded: {type(exc).__name__}: {exc}")],
                       status="not a readable student notebook")
    labels = chapters[chapter]
    nb, checks, missing = prepared(nb, labels)
    records, status, seconds = run_submission(nb, checks, timeout, sandbox=sandbox, data_dir=data_dir)
    got = {r["label"]: r for r in records}
    results = []
    for label in labels:
        if label in got:
            results.append(Result(label, got[label]["passed"], got[label]["message"]))
        elif label in missing:
            results.append(Result(label, False, "not graded: the submission has no check cell for this exercise"))
        else:
            results.append(Result(label, False, f"not graded: the run never reached its check ({status})"))
    return Outcome(name, chapter, results, status, seconds)


# ----------------------------------------------------------------------------- a class
def grade_folder(folder: Path, out: Path, *, timeout: float = 900, jobs: int = 1, sandbox: bool | None = None,
                 data_dir: str | None = None) -> list[Outcome]:
    """Grade every ``*.ipynb`` under ``folder``; write ``out/grades.csv`` and ``out/summary.md``."""
    from concurrent.futures import ThreadPoolExecutor

    folder, out = Path(folder), Path(out)
    if not folder.is_dir():
        raise ValueError(f"SUBMISSIONS must be a folder of notebooks; got {str(folder)!r}")
    if not timeout > 0:
        raise ValueError(f"timeout must be a positive number of seconds; got {timeout!r}")
    if not (isinstance(jobs, int) and jobs >= 1):
        raise ValueError(f"jobs must be a positive integer; got {jobs!r}")
    files = sorted(p for p in folder.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
    if not files:
        raise ValueError(f"no notebook (*.ipynb) under {str(folder)!r}")
    sandbox = sandbox_available() if sandbox is None else sandbox
    chapters = chapter_exercises()
    with ThreadPoolExecutor(jobs) as pool:
        outcomes = list(pool.map(lambda p: grade_one(p, chapters, timeout, sandbox=sandbox, data_dir=data_dir,
                                                     name=str(p.relative_to(folder))), files))
    write_reports(outcomes, out, sandbox=sandbox, timeout=timeout)
    return outcomes


def write_reports(outcomes: list[Outcome], out: Path, *, sandbox: bool, timeout: float) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "grades.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["submission", "exercise", "passed", "message"])
        for o in outcomes:
            for r in o.results:
                w.writerow([o.submission, r.exercise, r.passed, r.message])
    lines = ["# Grades", "",
             f"{len(outcomes)} submissions, each run from scratch in a fresh kernel in a temporary folder with a "
             f"limit of {timeout:g} s; " + ("sandboxed (read-only file system outside that folder, every process "
                                            "killed at the end)." if sandbox else
                                            "NOT sandboxed (unshare is not available here): a submission could "
                                            "change files outside its temporary folder."),
             "", "| submission | chapter | passed / checked | manual | run | seconds |", "|---|---|---|---|---|---|"]
    for o in outcomes:
        auto = [r for r in o.results if r.passed != "manual"]
        lines.append(f"| {o.submission} | {o.chapter} | {sum(r.passed is True for r in auto)} / {len(auto)} | "
                     f"{sum(r.passed == 'manual' for r in o.results)} | {o.status} | {o.seconds:.0f} |")
    per = {}
    for o in outcomes:
        for r in o.results:
            per.setdefault(r.exercise, []).append(r.passed)
    lines += ["", "| exercise | passed | submissions |", "|---|---|---|"]
    lines += [f"| {k} | {sum(v is True for v in vs)} | {len(vs)} |" for k, vs in per.items()]
    (out / "summary.md").write_text("\n".join(lines) + "\n")


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        _child_main(argv[1:])
        return 0
    parser = argparse.ArgumentParser(prog="python -m tools.student.grade", description=__doc__.split("\n\n")[0])
    parser.add_argument("submissions", type=Path, help="a folder of submitted notebooks (searched recursively)")
    parser.add_argument("--out", type=Path, default=ROOT / "_build" / "grades", help="where grades.csv and summary.md go")
    parser.add_argument("--timeout", type=float, default=900, help="seconds per submission (the whole notebook)")
    parser.add_argument("--jobs", type=int, default=1, help="submissions graded at once")
    args = parser.parse_args(argv)
    try:
        outcomes = grade_folder(args.submissions, args.out, timeout=args.timeout, jobs=args.jobs,
                                data_dir=os.environ.get("DIRICHLET_DATA_DIR"))
    except ValueError as exc:
        parser.error(str(exc))
    print((args.out / "summary.md").read_text())
    print(f"grades: {args.out / 'grades.csv'} ({sum(len(o.results) for o in outcomes)} rows)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
