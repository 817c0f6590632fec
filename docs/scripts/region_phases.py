"""Microseconds per active-region update, phase by phase, on pendulum-300 (Table 1's run).

    python docs/scripts/region_phases.py [N_A,...] [--src SRC] [--reps R]

Copies the package at ``SRC`` (default: the one this script's checkout holds) to
``/tmp/articulated-phases-<digest>/`` with the cycle counter read between the phases of
``region_update_kernel`` (``algorithms/region.py``; the sums go into spare slots of the
solver's ``stats``), then runs there: ``R`` fresh simulators per N_A (Table 1's settings,
one tip force, an update every 20 steps), 2,000 steps each, and prints the mean time of
each phase per update. The copy keeps its numba cache between runs of the same source.
For an A/B run it once per source, alternately."""
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

PHASES = [
    ("lists and seeds", "    passive_front(front, counts[N_FRONT]"),
    ("rigid front and force region from tensors (passive_front)",
     "    _update_biases(path, npas, fup)\n"),
    ("passive force region and active nodes (_update_biases, _update_nodes)",
     "    # ---- 2. acceleration update region"),
    ("update region (partial back-substitution)",
     "    # ---- 3. transient hybrid body (RGL Sec. 5.3.2)\n"),
    ("transient hybrid body (region, frames, reduced-tree ABA)", "    qddT = buf.qddT\n"),
    ("qd += h qdd", "    # ---- 4. new active region"),
    ("velocity metric and traversal", "    nrig = 0\n    moving = False\n"),
    ("rigidification (momentum projection, new reduced tree)",
     "    # ---- 5. new hybrid state."),
    ("new state, rigid nodes", "    # tensors change only where the configuration did"),
    ("nodes to tensorize", "    if nt:\n        tensorize_nodes"),
    ("tensors of the new passive nodes", "    if (nrig and not projected) or added:\n"),
    ("region bookkeeping", "    return nU, nrig, nreg, n_eval, nt, 0, -1\n"),
]
START = "    # ---- 1. fully articulated state around the active region (RGL Sec. 6)\n"


def cycles_source():
    """The imports and the source of :func:`articulated.simulation.cycles._cycles` (the
    cycle counter), taken from that module's text: ``region.py`` cannot import the
    simulation package (a cycle)."""
    import ast
    path = Path(__file__).resolve().parents[2] / "src" / "articulated" / "simulation" / "cycles.py"
    text = path.read_text()
    tree = ast.parse(text)
    imports = [ast.get_source_segment(text, n) for n in tree.body
               if isinstance(n, ast.ImportFrom) and n.module in
               ("llvmlite", "numba", "numba.core", "numba.extending")]
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "_cycles")
    lines = text.splitlines()[fn.decorator_list[0].lineno - 1:fn.end_lineno]
    return "\n" + "\n".join(imports) + "\n\n\n" + "\n".join(lines) + "\n"


SLOT = 8                                 # first spare slot of the solver's stats


def instrumented_copy(src):
    """The instrumented copy of the package directory ``src``; returns its parent."""
    digest = hashlib.sha1()
    for p in sorted(Path(src).rglob("*.py")):
        digest.update(p.read_bytes())
    root = Path(f"/tmp/articulated-phases-{digest.hexdigest()[:12]}")
    if (root / "articulated").exists():
        return root
    shutil.copytree(src, root / "articulated", ignore=shutil.ignore_patterns("__pycache__"))
    region = root / "articulated" / "algorithms" / "region.py"
    s = region.read_text()
    s = s.replace("from __future__ import annotations\n",
                  "from __future__ import annotations\n" + cycles_source(), 1)
    assert s.count(START) == 1
    s = s.replace(START, "    _c0 = _cycles()\n" + START)
    for k, (_, mark) in enumerate(PHASES):
        assert s.count(mark) == 1, mark
        s = s.replace(mark, f"    _c1 = _cycles(); stats[{SLOT + k}] += _c1 - _c0; _c0 = _c1\n"
                      + mark)
    region.write_text(s)
    bundles = root / "articulated" / "algorithms" / "bundles.py"
    b = bundles.read_text()
    assert b.count("N_STATS = 6\n") == 1
    bundles.write_text(b.replace("N_STATS = 6\n", f"N_STATS = {SLOT + len(PHASES)}\n"))
    return root


MEASURE = '''
import sys, numpy as np
from articulated import models
from articulated.bench.adaptive_runs import adaptive_simulator, initial_state, spread_forces
from articulated.simulation.cycles import _cycle_rate
names, slot, reps = {names!r}, {slot}, {reps}
m = models.pendulum(300); q0 = initial_state(m)
rate = _cycle_rate()
for na in {nas!r}:
    tot = np.zeros(len(names)); nup = 0
    for rep in range(reps + 1):                    # the first: compile or load, not counted
        sim = adaptive_simulator(m, q0, na, spread_forces(m, 1))
        sim.run(1)
        st = sim.solver._stats
        st[slot:] = 0
        sim.run(2000, record_every=2000)
        if rep:
            tot += st[slot:slot + len(names)]; nup += 100
    us = tot / nup / rate * 1e6
    print(f"N_A = {{na}}: {{us.sum():.1f}} us per update")
    for n, u in zip(names, us):
        print(f"  {{u:7.2f}}  {{n}}")
'''


def main(argv):
    src = Path(__file__).resolve().parents[2] / "src" / "articulated"
    nas, reps = [1, 50], 3
    args = list(argv)
    while args:
        a = args.pop(0)
        if a == "--src":
            src = Path(args.pop(0))
        elif a == "--reps":
            reps = int(args.pop(0))
        else:
            nas = [int(x) for x in a.split(",")]
    root = instrumented_copy(src)
    code = MEASURE.format(names=[p[0] for p in PHASES], slot=SLOT, reps=reps, nas=nas)
    env = dict(os.environ, PYTHONPATH=str(root))
    return subprocess.call([sys.executable, "-c", code], env=env)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
