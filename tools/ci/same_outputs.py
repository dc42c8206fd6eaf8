"""Compare the outputs of a chapter before and after a change to its code cells.

A refactoring of a chapter (code moved into ``lib``, cells merged or split) may change its code
cells but must not change what the reader sees. This lists every output a notebook shows, in
order, after the same substitutions nbval makes (``tests/book/nbval_sanitize.cfg``), and reports
where two versions differ. Images are compared by their presence only, as nbval does.

Usage::

    python tools/ci/same_outputs.py OLD.ipynb NEW.ipynb
    python tools/ci/same_outputs.py --rev HEAD notebooks/07_naive_bayes.ipynb

The second form compares the notebook as committed at ``--rev`` with the working tree's copy.
Exit status 0 when the outputs agree, 1 otherwise (each difference printed).
"""

from __future__ import annotations

import argparse
import configparser
import difflib
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SANITIZE = ROOT / "tests" / "book" / "nbval_sanitize.cfg"
COMPARED = ("text/plain", "text/html", "text/latex", "image/svg+xml")


def _rules():
    parser = configparser.ConfigParser()
    parser.read(SANITIZE)
    return [(re.compile(parser[s]["regex"]), parser[s]["replace"]) for s in parser.sections()]


def _clean(text: str, rules) -> str:
    for pattern, replacement in rules:
        text = pattern.sub(replacement, text)
    return text


def outputs(notebook: dict) -> list[str]:
    """Every output of every code cell, in order, as sanitized text (one entry per output)."""
    rules = _rules()
    shown = []
    for cell in notebook["cells"]:
        if cell["cell_type"] != "code":
            continue
        for out in cell.get("outputs", []):
            kind = out["output_type"]
            if kind == "stream":
                text = out["text"] if isinstance(out["text"], str) else "".join(out["text"])
                shown.append(f"[{out['name']}] " + _clean(text, rules))
            elif kind in ("execute_result", "display_data"):
                data = out.get("data", {})
                parts = []
                for mime in COMPARED:
                    if mime in data:
                        value = data[mime] if isinstance(data[mime], str) else "".join(data[mime])
                        parts.append(f"<{mime}> " + _clean(value, rules))
                if "image/png" in data:
                    parts.append("<image/png>")
                shown.append(" | ".join(parts))
            elif kind == "error":
                shown.append(f"[error] {out.get('ename')}: {out.get('evalue')}")
    return shown


def _load(path: str, rev: str | None) -> dict:
    if rev is None:
        return json.loads(Path(path).read_text())
    text = subprocess.run(["git", "show", f"{rev}:{path}"], cwd=ROOT, check=True,
                          capture_output=True, text=True).stdout
    return json.loads(text)


def main(argv=None) -> int:
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("paths", nargs="+")
    args.add_argument("--rev", help="compare the notebook at this git revision with the working tree")
    ns = args.parse_args(argv)
    if ns.rev:
        old, new = _load(ns.paths[0], ns.rev), _load(ns.paths[0], None)
    elif len(ns.paths) == 2:
        old, new = _load(ns.paths[0], None), _load(ns.paths[1], None)
    else:
        args.error("give OLD NEW, or --rev REV NOTEBOOK")
    a, b = outputs(old), outputs(new)
    if a == b:
        print(f"same outputs ({len(a)})")
        return 0
    for line in difflib.unified_diff(a, b, "old", "new", lineterm="", n=1):
        print(line[:400])
    return 1


if __name__ == "__main__":
    sys.exit(main())
