"""What adaptive simulation buys, in one run: ``articulated bench speedups``.

Each paper's headline case, run through the public API beside the full methods it replaces
(same model, forces, start and steps, one process), with the paper's own speed-up beside
ours and the cost of a computed joint against a joint of the full DCA:

- **RL, molecule** (Redon & Lin 2005, Sec. 6.3 and Table 1): ``models.molecule(50_000)``
  (gravity off), one force (:func:`~articulated.bench.quasistatics.random_forces`),
  ``eps_max = 2^-19``: :class:`~articulated.QuasiStaticSimulator` adaptive (its defaults:
  the metric refreshed every 10th step) against ``method="quasistatic"`` (the full DCA),
  the mean step after the first, refresh steps included; RL: 350x.
- **RL, protein**: 3KPR (6,106 torsions, :func:`articulated.load_structure`; the
  ``molecules`` extra, else left out), the same at the median of :data:`PLACEMENTS` force
  placements (no paper number: RL has no protein).
- **RGL, pendulum** (Redon, Galoppo & Lin 2005, Sec. 7.2 and Table 1): ``pendulum(300)``
  with one tip force, ``N_A`` = 1 and 50, ``max_update = N_A``, a region update every 20
  steps, the mean step after the first (RGL's average; the first converts the fully
  articulated start): :func:`~articulated.bench.adaptive.table1_cell`; RGL: 295x and
  11.5x.
- **RGL, fresh run**: the same scene from a fresh ``Simulator(model, dt,
  method="adaptive", max_active=1)`` (every other option at its default), ``run(400)``
  timed whole, its first step included (median of :data:`FRESH_RUNS` simulators).

Columns: the adaptive step [ms], the full DCA step [ms] (the same stepping with
:class:`~articulated.DCA`), the full ABA step [ms] (quasi-statics: the bare
:func:`~articulated.aba` call, a lower bound on a step; dynamics: the compiled
``Simulator(method="aba")`` loop a user would run instead, semi-implicit Euler as the
adaptive simulator), the speed-ups over both, the
paper's over its DCA, the joints computed per step and the time per computed joint
against a full-DCA joint (adaptive step / joints against full DCA step / n). Times are
means of steps after the first (quasi-statics, RGL's Table 1 cells) or medians; the
machine is shared: compare the ratios. A second table gives the set-up that the first leaves out: constructing the
simulator (quasi-statics: ``QuasiStaticSimulator`` of each method; the fresh run: the
adaptive ``Simulator`` against ``DCA(model)``), in seconds and in adaptive steps.

``--quick`` (the smoke test): molecule-2,000, pendulum-60 with ``N_A`` = 1 and 6, 60 steps
and a fresh ``run(120)``, no protein: seconds.
"""

from __future__ import annotations

import time

import numpy as np

from .common import bench_main, machine_info, markdown_table

HELP = "adaptive speed-ups beside the papers' (RL molecule and protein, RGL pendulum), one run"

EPS = 2.0 ** -19
"""``eps_max`` of the quasi-statics rows (RL Table 1's finest)."""
PLACEMENTS = 10
"""Force placements on the protein (their median is reported)."""
QS_STEPS = 30
"""Quasi-static steps per run."""
FRESH_RUNS = 7
"""Fresh simulators built and run for the fresh-run row (medians)."""
PAPER = {"rl-molecule": 350.0, "rgl-1": 295.0, "rgl-50": 11.5}
"""The papers' speed-ups over their DCA: RL Sec. 6.4 (50,000 joints, one force, 2^-19),
RGL Table 1 (pendulum-300, one force, N_A = 1 and 50)."""
PAPER_N = {"rl-molecule": 50_000, "rgl-1": 300, "rgl-50": 300, "rgl-fresh": 300}
"""The joints of the papers' scenes (a smaller scene gets no paper or target column)."""
TARGETS = {"rl-molecule": 100.0, "rl-protein": 30.0, "rgl-1": 200.0, "rgl-50": 12.0,
           "rgl-fresh": 50.0}
"""The speed-ups over the full DCA this project aims at on these cases."""


def _qs_row(model, label, key, forces, steps, log):
    """One quasi-statics row: the full DCA and the adaptive simulator from the neutral
    configuration with ``forces`` (``[(body, F, point)]``), ``steps`` steps each, and the
    bare ABA call at the start."""
    from .. import aba
    from .quasistatics import _f_ext, initial_solution, simulate, step_dt, DQ_STEP

    q0 = model.neutral()
    qdd0 = initial_solution(model, q0, forces, repeats=1)[0]
    dt = step_dt(qdd0, DQ_STEP)
    dca = simulate(model, q0, forces, dt, steps, "quasistatic")
    ad = simulate(model, q0, forces, dt, steps, "quasistatic-adaptive", EPS)
    f = _f_ext(model, q0, forces)
    zero, tau = np.zeros(model.nv), np.zeros(model.nv)
    aba(model, q0, zero, tau, f)
    t = []
    for _ in range(5):
        t0 = time.perf_counter()
        aba(model, q0, zero, tau, f)
        t.append(time.perf_counter() - t0)
    row = dict(case=label, key=key, n=model.nv, ad_ms=ad["ms"], dca_ms=dca["ms"],
               aba_ms=float(np.median(t)) * 1e3, joints=ad["joints"],
               ad_setup_s=ad["setup_s"], dca_setup_s=dca["setup_s"])
    log(f"{label}: adaptive {row['ad_ms']:.3f} ms/step ({row['joints']:.0f} joints), DCA "
        f"{row['dca_ms']:.2f}, ABA call {row['aba_ms']:.2f}")
    return row


def rl_molecule(n=50_000, steps=QS_STEPS, log=print):
    """The RL row on ``models.molecule(n)`` (gravity off), one force (seed 0)."""
    from .. import models
    from .quasistatics import random_forces

    model = models.molecule(n, seed=0, gravity=(0.0, 0.0, 0.0))
    return _qs_row(model, f"RL, molecule-{n:,}, eps 2^-19, 1 force", "rl-molecule",
                   random_forces(model, 1, 0), steps, log)


def rl_protein(placements=PLACEMENTS, steps=QS_STEPS, log=print):
    """The RL rows on 3KPR, one per placement, and their median row (None without the
    ``molecules`` extra)."""
    from ..io.structure import load_structure
    from .proteins import structure_file
    from .quasistatics import random_forces

    try:
        path = structure_file()
    except ValueError as e:
        log(f"protein left out: {e}")
        return None
    model = load_structure(path, missing_atoms="allow")
    rows = []
    for seed in range(placements):
        forces = random_forces(model, 1, seed)
        rows.append(_qs_row(model, f"3KPR placement {seed}", "rl-protein", forces, steps,
                            log))
    ratio = [r["dca_ms"] / r["ad_ms"] for r in rows]
    mid = rows[int(np.argsort(ratio)[len(ratio) // 2])]
    return dict(mid, case=f"RL, protein 3KPR ({model.nv:,} torsions), eps 2^-19, 1 force, "
                          f"median of {len(rows)} placements", placements=rows)


def _aba_simulator_ms(model, q0, forces, steps):
    """Mean step [ms] of the compiled ``Simulator(method="aba")`` loop with semi-implicit
    Euler (the adaptive simulator's integrator), after a warm run."""
    from .. import Simulator

    kw = dict(method="aba", integrator="semi_implicit_euler", q0=q0)
    Simulator(model, 1e-3, forces=list(forces), **kw).run(3)
    sim = Simulator(model, 1e-3, forces=list(forces), **kw)
    t0 = time.perf_counter()
    sim.run(steps, record_every=steps)
    return (time.perf_counter() - t0) / steps * 1e3


def rgl_rows(n=300, steps=200, na_values=(1, 50), fresh_steps=400, log=print):
    """The RGL rows on ``pendulum(n)`` with one tip force: one per ``N_A`` (steady state,
    :func:`~articulated.bench.adaptive.table1_cell`) and the fresh ``run(fresh_steps)``
    with ``max_active=1`` only."""
    from .. import DCA, Simulator, models
    from .adaptive import table1_cell
    from .adaptive_runs import initial_state, spread_forces

    model = models.pendulum(n)
    q0 = initial_state(model)
    dca = table1_cell(n, steps, 1, "dca")["median"] * 1e3
    aba = _aba_simulator_ms(model, q0, spread_forces(model, 1), steps)
    rows = []
    for na in na_values:
        c = table1_cell(n, steps, 1, na)
        rows.append(dict(case=f"RGL, pendulum-{n}, 1 force, N_A = {na}", key=f"rgl-{na}",
                         n=n, ad_ms=c["mean"] * 1e3, dca_ms=dca, aba_ms=aba, joints=float(na)))
        log(f"{rows[-1]['case']}: adaptive {rows[-1]['ad_ms']:.4f} ms/step, DCA {dca:.3f}, "
            f"ABA simulator {aba:.3f}")
    forces = spread_forces(model, 1)
    Simulator(model, 1e-3, method="adaptive", max_active=1, q0=q0,
              forces=list(forces)).run(3)                          # kernels loaded
    setup, fresh, dca_setup = [], [], []
    for _ in range(FRESH_RUNS):
        t0 = time.perf_counter()
        sim = Simulator(model, 1e-3, method="adaptive", max_active=1, q0=q0,
                        forces=list(forces))
        t1 = time.perf_counter()
        sim.run(fresh_steps, record_every=fresh_steps)
        t2 = time.perf_counter()
        DCA(model)
        dca_setup.append(time.perf_counter() - t2)
        setup.append(t1 - t0)
        fresh.append((t2 - t1) / fresh_steps * 1e3)
    rows.append(dict(case=f"RGL, pendulum-{n}, 1 force, fresh Simulator(max_active=1)."
                          f"run({fresh_steps})", key="rgl-fresh", n=n,
                     ad_ms=float(np.median(fresh)), dca_ms=dca, aba_ms=aba, joints=1.0,
                     ad_setup_s=float(np.median(setup)),
                     dca_setup_s=float(np.median(dca_setup))))
    log(f"{rows[-1]['case']}: {rows[-1]['ad_ms']:.4f} ms/step, DCA {rows[-1]['dca_ms']:.3f}")
    return rows


def format_report(rows, machine, seconds) -> str:
    """The Markdown report of :func:`bench_speedups`'s rows."""
    head = ["case", "adaptive [ms/step]", "full DCA [ms/step]", "full ABA [ms/step]",
            "x DCA", "x ABA", "paper x DCA", "target x DCA", "joints computed",
            "us per computed joint", "us per full-DCA joint", "ratio"]
    body = []
    for r in rows:
        per = r["ad_ms"] * 1e3 / max(r["joints"], 1.0)
        full = r["dca_ms"] * 1e3 / r["n"]
        at_scale = r["n"] == PAPER_N.get(r["key"], r["n"])      # the paper's scene
        paper = PAPER.get(r["key"]) if at_scale else None
        target = TARGETS.get(r["key"]) if at_scale else None
        body.append([r["case"], f"{r['ad_ms']:.4f}", f"{r['dca_ms']:.3f}",
                     f"{r['aba_ms']:.3f}", f"{r['dca_ms'] / r['ad_ms']:.1f}",
                     f"{r['aba_ms'] / r['ad_ms']:.1f}",
                     "-" if paper is None else f"{paper:g}",
                     "-" if target is None else f"{target:g}",
                     f"{r['joints']:.0f}", f"{per:.2f}", f"{full:.3f}", f"{per / full:.1f}"])
    setup = [[r["case"], f"{r['ad_setup_s']:.3f}", f"{r['dca_setup_s']:.3f}",
              f"{r['ad_setup_s'] * 1e3 / r['ad_ms']:,.0f}"]
             for r in rows if "ad_setup_s" in r]
    return "\n".join([
        "# Adaptive speed-ups beside the papers'", "",
        f"Machine: {machine}; {seconds:.0f} s.", "",
        markdown_table(head, body), "",
        "full ABA: quasi-statics, the bare `aba` call at the start (a lower bound on a "
        "step); dynamics, the compiled `Simulator(method=\"aba\")` loop. ratio: a computed "
        "joint's time over a full-DCA joint's.", "",
        "Set-up (constructing the simulator, untimed above):", "",
        markdown_table(["case", "adaptive set-up [s]", "full DCA set-up [s]",
                        "set-up in adaptive steps"], setup)])


def bench_speedups(quick=False, log=print) -> dict:
    """Run every row (``quick``: the small scenes of the module docstring) and print the
    report. Returns dict(rows, report, machine, seconds)."""
    from .adaptive_runs import warm_up
    from .quasistatics import _warm_up

    t0 = time.perf_counter()
    machine = machine_info()
    warm_up()
    _warm_up()
    rows = [rl_molecule(2000 if quick else 50_000, 5 if quick else QS_STEPS, log)]
    if not quick:
        p = rl_protein(log=log)
        if p is not None:
            rows.append(p)
    rows += (rgl_rows(60, 60, (1, 6), 120, log) if quick else rgl_rows(log=log))
    seconds = time.perf_counter() - t0
    report = format_report(rows, f"{machine['cpu']}, {machine['cores']} cores, load "
                                 f"{machine['load_start']}, commit {machine['commit']}",
                           seconds)
    log(report)
    return dict(rows=rows, report=report, machine=machine, seconds=seconds)


def add_arguments(parser):
    """Declare ``articulated bench speedups [--quick]`` on ``parser``."""
    parser.description = ("The adaptive methods' speed-ups over the full DCA and ABA beside "
                          "the papers' (Redon & Lin 2005 on a molecule and a protein, Redon, "
                          "Galoppo & Lin 2005 on the pendulum), one run.")
    parser.add_argument("--quick", action="store_true", help="small scenes (seconds)")


def run(args) -> int:
    """Run :func:`bench_speedups`; returns 0."""
    bench_speedups(args.quick)
    return 0


def main(argv=None) -> int:
    """``python -m articulated.bench.speedups [--quick]``."""
    return bench_main("speedups", add_arguments, run, argv)


if __name__ == "__main__":  # pragma: no cover
    import sys

    sys.exit(main(sys.argv[1:]))
