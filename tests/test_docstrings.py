"""Docstrings a user reads in the API reference, and no tracker numbers in src/ or docs/.

Every public name (``articulated.__all__`` and the public functions and classes of the
public sub-modules) has a numpydoc docstring that opens with a one-line summary: one
sentence that ends with a period, fits one line and is followed by a blank line. Neither
the sources nor the documentation pages cite a tracker or history number ("issue 19",
"session 5"): the history lives in git log.
"""

from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path

import pytest

import articulated

ROOT = Path(__file__).resolve().parents[1]

PUBLIC_MODULES = (
    "articulated",
    "articulated.assembly",
    "articulated.builder",
    "articulated.configuration",
    "articulated.data",
    "articulated.geometry",
    "articulated.io.mjcf",
    "articulated.io.structure",
    "articulated.io.urdf",
    "articulated.model",
    "articulated.models",
    "articulated.pdb",
    "articulated.simulation",
    "articulated.sweep",
    "articulated.viewer",
)
"""Modules a user imports; their ``__all__``, or else the public functions and classes
defined in them, are the public names."""

SUMMARY_MAX = 100
"""Longest accepted summary line (characters, without indentation)."""

TRACKER = re.compile(r"\b(issue|session)s?\s+#?\d+", re.IGNORECASE)

ENGINEER_FILES = ()
"""Source files exempt from the tracker check while they are being rewritten (none)."""


def _public_names(modname):
    mod = importlib.import_module(modname)
    names = getattr(mod, "__all__", None)
    if names is None:
        names = [n for n, o in vars(mod).items()
                 if not n.startswith("_") and (inspect.isfunction(o) or inspect.isclass(o))
                 and getattr(o, "__module__", None) == modname]
    out = []
    for n in names:
        obj = getattr(mod, n)
        if inspect.isfunction(obj) or inspect.isclass(obj) or (
                callable(obj) and hasattr(obj, "py_func")):  # numba dispatchers
            out.append((f"{modname}.{n}", obj))
    return out


def _objects():
    seen, out = set(), []
    for modname in PUBLIC_MODULES:
        for name, obj in _public_names(modname):
            if id(obj) not in seen:
                seen.add(id(obj))
                out.append((name, obj))
    return out


OBJECTS = _objects()


def _summary_problem(doc):
    """What is wrong with the summary of ``doc`` (a cleaned docstring), or None."""
    if not doc or not doc.strip():
        return "no docstring"
    lines = doc.splitlines()
    first = lines[0].strip()
    if not first:
        return "the docstring opens with a blank line"
    if not first.endswith("."):
        return f"the summary does not end with a period: {first!r}"
    if len(first) > SUMMARY_MAX:
        return f"the summary is longer than {SUMMARY_MAX} characters: {first!r}"
    if len(lines) > 1 and lines[1].strip():
        return f"the summary runs over more than one line: {first!r} / {lines[1].strip()!r}"
    return None


def test_public_names_cover_all():
    names = {name.rsplit(".", 1)[1] for name, _ in OBJECTS}
    missing = [n for n in articulated.__all__
               if not inspect.ismodule(getattr(articulated, n)) and n not in names]
    assert not missing


@pytest.mark.parametrize("name,obj", OBJECTS, ids=[n for n, _ in OBJECTS])
def test_public_docstring_has_one_line_summary(name, obj):
    problem = _summary_problem(inspect.getdoc(obj))
    assert problem is None, f"{name}: {problem}"


def test_public_modules_have_docstrings():
    for modname in PUBLIC_MODULES:
        assert _summary_problem(importlib.import_module(modname).__doc__) != "no docstring", \
            modname


def _tracker_hits(paths):
    hits = []
    for path in paths:
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            m = TRACKER.search(line)
            if m:
                hits.append(f"{path.relative_to(ROOT)}:{i}: {m.group(0)}")
    return hits


def test_no_tracker_numbers_in_src():
    paths = [p for p in sorted((ROOT / "src").rglob("*.py"))
             if p.relative_to(ROOT).as_posix() not in ENGINEER_FILES]
    hits = _tracker_hits(paths)
    assert not hits, "tracker or history numbers:\n" + "\n".join(hits[:50])


def test_no_tracker_numbers_in_docs():
    docs = ROOT / "docs"
    paths = [p for pattern in ("*.md", "*.rst", "*.py", "*.txt") for p in sorted(docs.rglob(pattern))
             if "_build" not in p.relative_to(docs).parts]
    hits = _tracker_hits(paths)
    assert not hits, "tracker or history numbers:\n" + "\n".join(hits[:50])
