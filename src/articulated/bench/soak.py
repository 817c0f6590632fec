"""``articulated bench soak``: long adaptive-dynamics runs that check energy and memory.

Two runs of the adaptive simulator (Redon, Galoppo & Lin 2005), each ``--steps`` steps
(default 10^6), checked every ``--check-every`` steps (default 10^4).

Every run steps ``--dt`` (default 1 ms, the benchmarks' step).

* ``pendulum``: pendulum-300 from the start of RGL Fig. 5 / Table 1
  (:func:`~articulated.bench.adaptive_runs.initial_state`), one 0.05 N world force on the
  tip, ``N_A = 50``, region update every 20 steps (the ``articulated bench adaptive`` run);
* ``crowd``: ``crowd(K)`` humanoids (default K = 20: 1,780 bodies), ten pushed, per-
  character joint budgets decreasing with the distance to a camera, 10 % of the joints in
  all (the ``articulated demo`` crowd run, :mod:`articulated.bench.crowd`).

At every check the total energy ``E = T + V`` of the full model at the adaptive state
(kinetic energy, gravity and the potential ``-f . x`` of the constant world point forces,
all conservative) must stay within **the bound of the full model**: the full DCA with the
same integrator (semi-implicit Euler), step, start and forces, run for ``--reference-steps``
steps (default: as many as the run, the same horizon), gives the largest relative energy rise ``d_full = max (E - E0) /
s`` (``s = max(|E0|, T_max)``, the scale of the energy watch of
:mod:`articulated.simulation.watch`); the adaptive run passes while ``(E - E0) / s <=
d_full``. Adaptive dynamics may lose energy (rigidification impulses remove kinetic energy
by design, RGL Sec. 5.4) but must never gain more than the full model does. The resident
set size (``VmRSS``) is read at every check; the run passes while it stays within
``--rss-growth`` MiB (default 64) of its value at the first check.

Prints one Markdown table per run (step, time, E, relative drift, active joints, RSS,
wall time) and a verdict; writes them to ``OUT/soak-results.md``. Exit status 1 when a
check failed. ``--quick`` runs 2,000 steps checked every 500 on pendulum-300 and crowd(2)
(a smoke test).
"""

from __future__ import annotations

import time
import warnings

import numpy as np

from .adaptive_runs import DT, UPDATE_EVERY, adaptive_simulator, initial_state, reference_run, \
    spread_forces
from .common import MarkdownReport, at_least, bench_main, markdown_table, rss_bytes

STEPS = 10**6
"""Steps of a full soak run."""
CHECK_EVERY = 10**4
"""Steps between two checks of energy and memory."""
RSS_GROWTH_MIB = 64.0
"""Allowed RSS growth [MiB] over a run, from its first check."""

HELP = ("soak: 10^6 adaptive steps of pendulum-300 (N_A = 50) and a crowd (a tenth of its "
        "joints), energy against the full model's bound and RSS every 10^4 steps")
"""One line for ``articulated bench --help``."""


def total_energy(model, forces, q, qd) -> tuple:
    """``(E, T)`` [J] of the full model at a state: ``E = T + V_gravity + sum V_force``
    (:func:`articulated.algorithms.kinematics.energy` and each force's ``potential``)."""
    from ..algorithms.kinematics import energy
    from ..simulation.forces import StateKinematics

    T, V = energy(model, q, qd)
    if forces:
        kin = StateKinematics(model, q, qd)
        V += sum(float(f.potential(model, q, kin=kin)) for f in forces)
    return T + V, T


def full_model_bound(model, q0, forces, steps, chunk=100, dt=DT) -> dict:
    """The full model's energy band: the full DCA with semi-implicit Euler
    (:func:`~articulated.bench.adaptive_runs.reference_run`) from ``q0`` at rest for
    ``steps`` steps of ``dt`` [s], its energy read every ``chunk`` steps. Returns ``E0``
    [J], ``scale`` [J] (``max(|E0|, T_max)``), ``rise`` and ``fall`` (the largest relative
    rise and fall of ``E`` over ``scale``), ``diverged`` (the step at which the full model's
    state stopped being finite, or None) and ``wall_s``."""
    from .. import DCA

    dca = DCA(model)
    q, qd = q0.copy(), np.zeros(model.nv)
    E0, _ = total_energy(model, forces, q, qd)
    E, Tmax, diverged = [E0], 0.0, None
    w0 = time.perf_counter()
    for k in range(max(1, steps // chunk)):
        try:
            with np.errstate(all="ignore"):
                q, qd, _ = reference_run(model, q, qd, forces, chunk, "dca", dca=dca, dt=dt)
        except ValueError:                      # a non-finite state reached the DCA
            diverged = (k + 1) * chunk
            break
        e, T = total_energy(model, forces, q, qd)
        if not np.isfinite(e):
            diverged = (k + 1) * chunk
            break
        E.append(e)
        Tmax = max(Tmax, T)
    E = np.array(E)
    scale = max(abs(E0), Tmax)
    return dict(E0=E0, scale=scale, rise=float((E.max() - E0) / scale),
                fall=float((E0 - E.min()) / scale), diverged=diverged,
                wall_s=time.perf_counter() - w0)


ROUND_OFF = 1e-12
"""Relative energy [1] by which a run may pass the full model's rise: the adaptive
simulator with every joint active is the full model to round-off, not bit for bit."""


def soak(sim, model, forces, steps, check_every, bound, rss_growth_mib=RSS_GROWTH_MIB,
         emit=print) -> dict:
    """Run ``sim`` (an adaptive simulator at its start) ``steps`` steps in chunks of
    ``check_every``; after each chunk check the full model's energy at the state against
    ``bound`` (:func:`full_model_bound`: ``(E - E0) / scale <= rise`` to
    :data:`ROUND_OFF`, scale the larger of
    the bound's and this run's) and the RSS against its first reading plus
    ``rss_growth_mib``. A :class:`~articulated.SimulationDiverged` ends the run as a
    failure. Returns the rows and the verdict (``ok``, ``energy_ok``, ``rss_ok``,
    ``max_rise``, ``max_fall``, ``rss_growth_mib``, ``wall_s``, ``steps_done``,
    ``diverged``: the exception's message or None)."""
    from ..simulation.trajectory import SimulationDiverged

    E0, _ = total_energy(model, forces, sim.q, sim.qd)
    scale = bound["scale"]
    rows, rss0 = [], None
    max_rise = max_fall = growth = 0.0
    energy_ok = rss_ok = True
    w0 = time.perf_counter()
    done, diverged = 0, None
    while done < steps:
        n = min(check_every, steps - done)
        try:
            tr = sim.run(n, record_every=n)
        except SimulationDiverged as e:
            diverged = str(e).split(". ")[0]
            emit(f"  DIVERGED after step {done:,}: {diverged}")
            energy_ok = False
            break
        done += n
        E, T = total_energy(model, forces, sim.q, sim.qd)
        scale = max(scale, T)
        rise, fall = (E - E0) / scale, (E0 - E) / scale
        max_rise, max_fall = max(max_rise, rise), max(max_fall, fall)
        ok = bool(np.isfinite(E)) and rise <= bound["rise"] + ROUND_OFF
        energy_ok &= ok
        rss = rss_bytes() / 2**20
        rss0 = rss if rss0 is None else rss0
        growth = max(growth, rss - rss0)
        rss_ok &= rss - rss0 <= rss_growth_mib
        rows.append((f"{done:,}", f"{sim.t:.1f}", f"{E:.6g}", f"{rise:+.2e}",
                     str(int(tr.active[-1])), f"{rss:.0f}", f"{time.perf_counter() - w0:.0f}",
                     "ok" if ok else "ABOVE BOUND"))
        if len(rows) == 1 or done % (10 * check_every) == 0 or done == steps or not ok:
            emit(f"  step {rows[-1][0]}: E = {rows[-1][2]} J, (E - E0)/s = {rows[-1][3]}, "
                 f"RSS {rows[-1][5]} MiB, {rows[-1][6]} s")
    return dict(rows=rows, ok=energy_ok and rss_ok, energy_ok=energy_ok, rss_ok=rss_ok,
                max_rise=max_rise, max_fall=max_fall, rss_growth_mib=growth,
                wall_s=time.perf_counter() - w0, steps_done=done, E0=E0, diverged=diverged)


def pendulum_case(n=300, n_active=50, dt=DT):
    """``(name, model, q0, forces(), simulator)`` of the pendulum soak run."""
    from .. import models

    model = models.pendulum(n)
    q0 = initial_state(model)
    forces = lambda: spread_forces(model, 1)  # noqa: E731
    sim = adaptive_simulator(model, q0, n_active, forces(), update_every=UPDATE_EVERY, dt=dt)
    return f"pendulum-{n}, N_A = {n_active}, one 0.05 N tip force", model, q0, forces, sim


def crowd_case(k=20, fraction=0.1, n_push=10, dt=DT):
    """``(name, model, q0, forces(), simulator)`` of the crowd soak run (budgets as in
    ``articulated demo``: :func:`~articulated.bench.crowd.distance_budgets`)."""
    from .. import models
    from .crowd import camera_point, crowd_forces, crowd_update, distance_budgets, \
        tree_of_bodies

    model, q0 = models.crowd(k, return_configuration=True)
    roots = np.flatnonzero(model.body_parent < 0)
    tree = tree_of_bodies(model)
    pos = q0[model.jnt_qadr[roots][:, None] + np.arange(3)]
    dist = np.linalg.norm(pos - camera_point(model, q0), axis=1)
    budgets = distance_budgets(dist, round(fraction * model.nb),
                               np.bincount(tree, minlength=roots.size))
    forces = lambda: crowd_forces(model, k, n_push)  # noqa: E731
    sim = adaptive_simulator(model, q0, budgets, forces(), n_update=crowd_update(budgets),
                             update_every=UPDATE_EVERY, dt=dt)
    return (f"crowd({k}): {model.nb:,} bodies, {min(n_push, k)} pushed, {int(budgets.sum())} "
            f"active joints ({100 * budgets.sum() / model.nb:.0f} %)"), model, q0, forces, sim


def add_arguments(parser):
    """Declare the options of ``articulated bench soak`` on ``parser``."""
    parser.description = ("long adaptive runs checking energy against the full model's "
                          "bound and memory")
    parser.add_argument("--steps", type=at_least(1), default=STEPS,
                        help=f"steps per run (default {STEPS:,})")
    parser.add_argument("--check-every", type=at_least(1), default=CHECK_EVERY,
                        help=f"steps between checks (default {CHECK_EVERY:,})")
    parser.add_argument("--reference-steps", type=at_least(100), default=None,
                        help="steps of the full-model run that sets the energy bound "
                             "(default: --steps, the same horizon; the full DCA costs "
                             "about 10x the adaptive step on pendulum-300, 25x on crowd(20))")
    parser.add_argument("--dt", type=float, default=DT,
                        help=f"time step [s] of every run (default {DT:g})")
    parser.add_argument("--crowd", type=at_least(1), default=20, metavar="K",
                        help="humanoids in the crowd run (default 20)")
    parser.add_argument("--runs", default="pendulum,crowd",
                        help="comma-separated runs: pendulum, crowd (default both)")
    parser.add_argument("--rss-growth", type=float, default=RSS_GROWTH_MIB, metavar="MIB",
                        help=f"allowed RSS growth over a run (default {RSS_GROWTH_MIB:g} MiB)")
    parser.add_argument("--quick", action="store_true",
                        help="2,000 steps checked every 500, crowd(2) (smoke test)")
    parser.add_argument("--out", default=".", metavar="DIR",
                        help="folder for soak-results.md (default: the current folder)")


def main(argv=None) -> int:
    """``python -m articulated.bench.soak [options]``: as ``articulated bench soak``."""
    return bench_main("soak", add_arguments, run, argv)


def run(args) -> int:
    """The soak runs of the module docstring; returns 0 when every check passed, else 1."""
    warnings.filterwarnings("ignore", module="numba")
    steps, every = args.steps, args.check_every
    ref = steps if args.reference_steps is None else args.reference_steps
    k, dt = args.crowd, args.dt
    if args.quick:
        steps, every, ref, k = 2000, 500, 500, 2
    report = MarkdownReport("Soak: long adaptive runs", args.out, "soak", args.quick,
                            f" ({steps:,} steps of {dt * 1e3:g} ms, checks every {every:,})")
    emit = report.emit
    cases = {"pendulum": lambda: pendulum_case(dt=dt), "crowd": lambda: crowd_case(k, dt=dt)}
    status = 0
    for name in [r.strip() for r in args.runs.split(",") if r.strip()]:
        if name not in cases:
            raise SystemExit(f"unknown soak run {name!r}; expected pendulum or crowd")
        title, model, q0, forces, sim = cases[name]()
        emit(f"## {title}")
        emit("")
        bound = full_model_bound(model, q0, forces(), ref, dt=dt)
        emit(f"Full model (DCA, semi-implicit Euler, {ref:,} steps, {bound['wall_s']:.0f} s): "
             f"E0 = {bound['E0']:.6g} J, scale {bound['scale']:.4g} J, largest relative rise "
             f"{bound['rise']:.2e} (the bound), largest fall {bound['fall']:.2e}"
             + ("." if bound["diverged"] is None else
                f"; the full model DIVERGED at step {bound['diverged']:,} (the bound is "
                f"that of the steps before)."))
        emit("")
        res = soak(sim, model, forces(), steps, every, bound, args.rss_growth, emit)
        emit("")
        emit(markdown_table(("step", "t [s]", "E [J]", "(E - E0) / s", "active joints",
                             "RSS [MiB]", "wall [s]", "energy"), res["rows"]))
        emit("")
        emit(f"**{'passed' if res['ok'] else 'FAILED'}**: {res['steps_done']:,} steps in "
             f"{res['wall_s']:.0f} s ({res['wall_s'] / res['steps_done'] * 1e6:.1f} us/step "
             f"with the checks); largest relative rise {res['max_rise']:+.2e} (bound "
             f"{bound['rise']:.2e}), largest fall {res['max_fall']:.2e}; RSS growth "
             f"{res['rss_growth_mib']:.1f} MiB (allowed {args.rss_growth:g})"
             + ("." if res["diverged"] is None else f"; diverged: {res['diverged']}."))
        emit("")
        status |= 0 if res["ok"] else 1
    report.write("soak-results-quick.md" if args.quick else "soak-results.md")
    return status


if __name__ == "__main__":
    raise SystemExit(main())
