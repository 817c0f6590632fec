"""The package's layers (docs: DESIGN.md, "Layers"): spatial -> model -> algorithms ->
simulation -> interfaces, arrows pointing down only, and no import cycle.

Every module's imports are read with ``ast`` (module-level and function-level alike, since
a function-level import is still an arrow between two modules); no module is imported.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = "articulated"
ROOT = Path(__file__).resolve().parents[1] / "src" / PACKAGE

INTERFACES = ("bench", "cli", "compile_notice", "interop", "pdb", "precompile", "sweep",
              "viewer")
"""Module-name prefixes (below the package) of the interfaces layer."""

KNOWN_EXCEPTIONS: set[tuple[str, str]] = set()
"""Import edges ``(importer, imported)`` outside the layer rules that other work is removing;
emptied as it lands. An edge listed here is left out of both checks."""


def _modules() -> dict[str, Path]:
    """Dotted module name -> source file, for every module of the package."""
    out = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = path.relative_to(ROOT.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _imports(name: str, path: Path, modules) -> set[str]:
    """The package's modules that ``name`` imports anywhere in its source."""
    is_pkg = path.name == "__init__.py"
    package = name if is_pkg else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            # ``from pkg import sub`` imports the submodule; other names come from pkg
            targets = [f"{mod}.{a.name}" if f"{mod}.{a.name}" in modules else mod
                       for a in node.names]
        else:
            continue
        for t in targets:
            while t and t not in modules:           # ``import a.b.c`` of a name in a.b
                t = t.rpartition(".")[0]
            if t and t != name:
                found.add(t)
    return found


@pytest.fixture(scope="module")
def graph():
    modules = _modules()
    return {n: {t for t in _imports(n, p, modules) if (n, t) not in KNOWN_EXCEPTIONS}
            for n, p in modules.items()}


def _under(name: str, *prefixes: str) -> bool:
    rel = name[len(PACKAGE) + 1:]
    return any(rel == p or rel.startswith(p + ".") or rel.startswith(p + "_")
               for p in prefixes)


def test_algorithms_import_nothing_above_them(graph):
    bad = sorted((n, t) for n, ts in graph.items() if _under(n, "algorithms")
                 for t in ts if _under(t, "simulation", *INTERFACES))
    assert not bad, f"upward imports from algorithms/: {bad}"


def test_configuration_space_is_model_layer(graph):
    """``configuration`` (integrate, normalize, qdot) sits beside the Model."""
    allowed = {f"{PACKAGE}.{m}" for m in ("spatial", "model", "config", "_views")}
    assert graph[f"{PACKAGE}.configuration"] <= allowed


def test_simulation_imports_no_interface(graph):
    bad = sorted((n, t) for n, ts in graph.items() if _under(n, "simulation")
                 for t in ts if _under(t, *INTERFACES))
    assert not bad, f"upward imports from simulation/: {bad}"


def test_no_import_cycle(graph):
    """Tarjan's strongly connected components of the import graph: each must be a single
    module (an ``__init__`` that re-exports is a module like any other)."""
    index, low, stack, on, cycles = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    assert not cycles, f"import cycles: {cycles}"


MAX_POSITIONAL = 12
"""The most positional parameters of a function in ``algorithms/`` and ``simulation/``
(DESIGN.md: kernels take named bundles, not long positional tuples)."""


def test_no_kernel_takes_more_than_twelve_positional_parameters():
    """Every function of ``algorithms/`` and ``simulation/`` (methods included) takes at
    most :data:`MAX_POSITIONAL` positional parameters; more go into a named bundle or a
    tuple of related arrays. Read with ``ast``; a function with 13 parameters in a
    temporary module is caught by the same reader."""
    def too_many(tree):
        return [(n.name, n.lineno, len(n.args.posonlyargs) + len(n.args.args))
                for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                and len(n.args.posonlyargs) + len(n.args.args) > MAX_POSITIONAL]

    bad = []
    for sub in ("algorithms", "simulation"):
        for path in sorted((ROOT / sub).rglob("*.py")):
            bad += [(path.name,) + x for x in too_many(ast.parse(path.read_text()))]
    assert bad == []
    probe = ast.parse("def f(" + ", ".join(f"a{i}" for i in range(13)) + "): pass\n"
                      "def g(a, b, *, c, d): pass\n")
    assert too_many(probe) == [("f", 1, 13)]
