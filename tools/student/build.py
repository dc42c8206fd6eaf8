"""Write the student edition: `python -m tools.student.build [OUTDIR]` (the `make student` target).

For every chapter of _toc.yml (notebooks/NN_*.md) it writes OUTDIR/NN_name.md (MyST) and
OUTDIR/NN_name.ipynb (no outputs): the chapter without its `{solution-start} ... {solution-end}`
blocks, each `{exercise}` directive turned into a plain "Exercise: <title>" section followed by an
answer cell stating what to define (each name with its type, shape and meaning, from the check
registry tools/student/checks.py) and a check cell that imports the checker itself
(`check_exercise("<label>", globals())`), and the roles `{glue:text}`, `{doc}`, `{cite}`, `{ref}`, ... rendered as text (glue values
from the chapter's stored .ipynb outputs). The HTML book is not touched: it keeps its folded solutions.
"""
from __future__ import annotations

import ast
import json
import re
import sys
import textwrap
from pathlib import Path

import jupytext
import nbformat
import yaml

ROOT = Path(__file__).resolve().parents[2]

FENCE_EXERCISE = re.compile(r"^```\{exercise\}[ \t]*(?P<title>[^\n]*)\n(?P<body>.*?)^```[ \t]*$\n?",
                            re.M | re.S)
SOLUTION = re.compile(r"^```\{solution-start\}[ \t]*(?P<label>\S+).*?^```\{solution-end\}[ \t]*\n```[ \t]*$\n?",
                      re.M | re.S)
ADMONITION = re.compile(r"^```\{admonition\}[ \t]*(?P<title>[^\n]*)\n(?P<body>(?:(?!^```).)*?)^```[ \t]*$",
                        re.M | re.S)
CODE_CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(?P<src>.*?)^```[ \t]*$", re.M | re.S)

SETUP = '''import os
import sys
from pathlib import Path

# the book's repository root (holding lib/ and tools/), so that `lib` and the checks import:
# $DIRICHLET_BOOK_ROOT if set (make grade sets it), else the first parent folder that holds them
for _p in [Path(os.environ.get("DIRICHLET_BOOK_ROOT", Path.cwd())), *Path.cwd().parents]:
    if (_p / "lib" / "__init__.py").exists() and (_p / "tools" / "student").is_dir():
        sys.path.insert(0, str(_p))
        break'''

#: the source of a check cell; the checker is imported in the cell itself, so no name that the
#: chapter or the answer binds can shadow it
CHECK_CELL = '''from tools.student.checks import check_exercise
check_exercise("{label}", globals())'''
CHECK_LABEL = re.compile(r"check_exercise\(\s*[\"'](?P<label>ex-[\w-]+)[\"']")
ANSWER_HEAD = "# Your answer (exercise {label})."


def answer_cell(label: str) -> str:
    """The answer cell of an exercise: what to define (name, type and shape, meaning and units), from the
    check registry (tools/student/checks.py), or why the exercise has no automatic check."""
    from tools.student import checks

    lines = [ANSWER_HEAD.format(label=label)]
    spec = checks.CHECKS.get(label)
    if spec:
        lines.append("# Define (the check below reads exactly these names):")
        for a in spec.answers:
            lines += textwrap.wrap(a.statement(), 96, initial_indent="#   ", subsequent_indent="#       ")
        if spec.note:
            lines += textwrap.wrap(spec.note, 96, initial_indent="# ", subsequent_indent="# ")
    else:
        reason, _ = checks.NO_CHECK[label]
        lines += textwrap.wrap(f"No automatic check: {reason}. Write your answer in a Markdown cell below; "
                               "your instructor grades it with a rubric.", 96,
                               initial_indent="# ", subsequent_indent="# ")
    return "\n".join(lines) + "\n"


def chapters(root: Path = ROOT) -> list[Path]:
    """The chapters of _toc.yml that are notebooks (notebooks/NN_*.md), in book order."""
    toc = yaml.safe_load((root / "_toc.yml").read_text())
    files = [c["file"] for part in toc["parts"] for c in part["chapters"]]
    return [root / f"{f}.md" for f in files if re.match(r"notebooks/\d\d_", f)]


def glue_values(ipynb: Path) -> dict[str, str]:
    """key -> stored text/plain value of every `glue` call in an executed notebook."""
    values = {}
    if not ipynb.exists():
        return values
    for cell in json.loads(ipynb.read_text()).get("cells", []):
        for out in cell.get("outputs", []):
            meta = out.get("metadata", {}).get("scrapbook")
            if not meta:
                continue
            data = out.get("data", {})
            text = data.get(meta.get("mime_prefix", "") + "text/plain", data.get("text/plain"))
            if text is not None:
                values[meta["name"]] = "".join(text) if isinstance(text, list) else text
    return values


def _glue_text(raw: str, spec: str | None) -> str:
    try:
        value = ast.literal_eval(raw)
    except (ValueError, SyntaxError):
        value = raw
    if spec:
        try:
            return format(value, spec)
        except (ValueError, TypeError):
            pass
    return str(value)


def render_roles(text: str, glue: dict[str, str], chapter: str) -> str:
    """Turn MyST roles into text Jupyter displays: glue values, link texts, citation keys."""
    def glue_sub(m):
        key, _, spec = m.group(1).partition(":")
        if key not in glue:
            raise KeyError(f"{chapter}: glue key {key!r} has no stored value (execute the chapter)")
        return _glue_text(glue[key], spec or None)

    text = re.sub(r"\{glue:text\}`([^`]+)`", glue_sub, text)
    text = re.sub(r"\{glue(?::any)?\}`([^`]+)`", lambda m: glue_sub(m), text)

    def titled(m):  # {doc}`Title <path>` -> Title; {doc}`path` -> path
        inner = m.group(2)
        t = re.match(r"(.*?)\s*<[^>]+>$", inner, re.S)
        return t.group(1) if t else inner

    text = re.sub(r"\{(doc|ref|numref|prf:ref|term)\}`([^`]+)`", titled, text)
    text = re.sub(r"\{cite(?::[a-z]+)?\}`([^`]+)`", lambda m: "[" + m.group(1).replace(",", "; ") + "]", text)
    text = re.sub(r"\{eq\}`([^`]+)`", r"(\1)", text)
    return text


def solutions(md_text: str) -> dict[str, list[str]]:
    """label -> the solution's code cells (source text), from a chapter's MyST text."""
    out = {}
    for m in SOLUTION.finditer(md_text):
        out[m.group("label")] = [c.group("src") for c in CODE_CELL.finditer(m.group(0))]
    return out


def _quote(m) -> str:
    """An admonition without nested fences as a Markdown block quote (Jupyter shows no directives)."""
    lines = [l for l in m.group("body").split("\n") if not l.startswith(":")]
    text = "\n".join(lines).strip("\n")
    return "\n".join(["> **" + m.group("title").strip() + "**", ">"] + ["> " + l if l else ">" for l in text.split("\n")])


def _code_cell(src: str) -> str:
    return f"```{{code-cell}} ipython3\n{src.rstrip()}\n```\n"


def student_text(md_path: Path) -> str:
    """The MyST text of a chapter's student edition."""
    from tools.student import checks

    text = md_path.read_text()
    sols = solutions(text)
    glue = glue_values(md_path.with_suffix(".ipynb"))
    body = SOLUTION.sub("", text)

    def exercise(m):
        title = m.group("title").strip()
        lines = m.group("body").split("\n")
        opts = {}
        while lines and lines[0].startswith(":"):
            k, _, v = lines.pop(0)[1:].partition(":")
            opts[k.strip()] = v.strip()
        label = opts.get("label", "")
        if label not in sols:
            raise ValueError(f"{md_path.name}: exercise {label!r} has no solution block")
        if label not in checks.CHECKS and label not in checks.NO_CHECK:
            raise ValueError(f"{md_path.name}: exercise {label!r} has neither a check nor a stated reason")
        out = [f"### Exercise: {title}", "", "\n".join(lines).strip(), "",
               f"<!-- exercise-label: {label} -->", "", "+++", "", _code_cell(answer_cell(label)),
               "", _code_cell(CHECK_CELL.format(label=label)), "", "+++", ""]
        return "\n".join(out)

    body = FENCE_EXERCISE.sub(exercise, body)
    body = ADMONITION.sub(_quote, body)
    head, sep, rest = body.partition("\n---\n") if body.startswith("---\n") else ("", "", body)
    # the setup cell goes right after the title, before the chapter's own cells
    m = re.search(r"^# [^\n]*\n", rest, re.M)
    setup = "\n+++\n\n" + _code_cell(SETUP) + "\n+++\n"
    rest = rest[: m.end()] + setup + rest[m.end():] if m else setup + rest
    rest = render_roles(rest, glue, md_path.name)
    return (head + sep if sep else "") + rest


def filled(nb, answers: dict[str, str]):
    """A copy of a student notebook with the answer cell of each label in ``answers`` replaced by the answer
    header followed by the given code (the book's solution, or a generated wrong answer)."""
    nb = nbformat.from_dict(json.loads(json.dumps(nb)))
    for cell in nb.cells:
        meta = cell.metadata.get("student", {})
        if meta.get("role") == "answer" and meta.get("exercise") in answers:
            head = [l for l in cell.source.splitlines() if l.startswith("#")]
            cell.source = "\n".join(head) + "\n" + answers[meta["exercise"]].rstrip() + "\n"
    return nb


def solution_code(md_text: str) -> dict[str, str]:
    """label -> the book's solution as one answer cell (its code cells joined, MyST options dropped)."""
    return {label: "\n\n".join("\n".join(l for l in src.splitlines() if not l.startswith(":")).strip("\n")
                                for src in cells)
            for label, cells in solutions(md_text).items()}


def build(outdir: Path, root: Path = ROOT) -> list[Path]:
    outdir.mkdir(parents=True, exist_ok=True)
    written = []
    for md in chapters(root):
        text = student_text(md)
        out_md = outdir / md.name
        out_md.write_text(text)
        nb = jupytext.reads(text, fmt="md:myst")
        labels = []
        for k, cell in enumerate(nb.cells):
            if cell.cell_type == "code":
                cell.outputs, cell.execution_count = [], None
                m = CHECK_LABEL.search(cell.source)
                if m:
                    labels.append(m.group("label"))
                    cell.metadata["student"] = {"exercise": m.group("label"), "role": "check"}
                    nb.cells[k - 1].metadata["student"] = {"exercise": m.group("label"), "role": "answer"}
        nb.metadata.pop("jupytext", None)
        nb.metadata["student_edition"] = {"chapter": md.stem, "exercises": labels}
        nbformat.validate(nb)
        out_nb = out_md.with_suffix(".ipynb")
        nbformat.write(nb, out_nb)
        written += [out_md, out_nb]
    return written


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "_build" / "student"
    files = build(target)
    print(f"student edition: {len(files) // 2} chapters in {target}")
