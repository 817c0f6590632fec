"""Speed as a user gets it (``articulated bench simulator``): the simulators through the
public API, exactly as a user calls them, against the bare forward-dynamics call and
against each other, all measured in one run.

(a) The stepping loop: ``Simulator(model, dt, method=..., integrator=...,
    forces=[PointForce(tip)])`` and ``run(steps)`` with the default recording (every step,
    energies included) against one public ``aba()`` / ``dca()`` call per step; the same
    simulator on the Python path (the force wrapped so that it has no compiled form, called
    from inside the compiled loop through its hook) for comparison.
(b) Adaptive dynamics with the defaults: ``Simulator(method="adaptive", max_active=N_A,
    forces=[PointForce(tip)])`` and ``run(400)`` (default recording, default update
    budget) against ``Simulator(method="dca", integrator="semi_implicit_euler")`` on the
    same scene (the pendulum start of RGL Fig. 5, :func:`~articulated.bench.adaptive_runs.
    initial_state`); also the fresh simulator's first step alone (``run(1)``, its ratio
    that of one DCA step to it).

(c) Small robots, one call: the public ``aba(model, q, qd, tau)`` on every URDF of
    example-robot-data (fixed base, and floating base where the URDF is not a mobile
    base already), against ``pin.aba`` on the same model (:func:`~articulated.interop.
    to_pinocchio`, states converted once, untimed), both from Python; the results are
    compared (1e-8) in the same run.
(d) Batched: ``aba(model, Q, QD, TAU)`` with B states in one call on solo12 (free base)
    against ``pin.aba`` in a Python loop over the same states; one worker thread and the
    default (one per 256 states, at most the cores the process may use).

Timings: every case is run once first (compilation), then the cases are timed in turns
(``--repeats`` rounds, the machine is shared and noisy) and each reports its median per
step; ratios are of medians from the same run. Tables (c) and (d) also give the ratio of
the fastest rounds: where other processes outnumber the cores, a round's time depends on
how often the scheduler took the core away, and the fastest rounds are the least
disturbed ones of each side.
"""

from __future__ import annotations

import os
import time
import warnings

import numpy as np

from .common import MarkdownReport, at_least, bench_main, markdown_table

HELP = "simulators through the public API against the bare dynamics call"


def _tip_force(model):
    from .. import PointForce

    return PointForce(model.nb - 1, (0.0, 0.05, 0.0))


def _python_path(force):
    """``force`` without a compiled form (the simulator's Python path)."""
    from ..simulation.forces import Force

    class PythonPath(Force):
        conservative = force.conservative

        def bind(self, model):
            force.bind(model)
            return self

        def apply(self, model, t, q, qd, tau, f_ext, kin=None):
            force.apply(model, t, q, qd, tau, f_ext, kin=kin)

        def potential(self, model, q, kin=None):
            return force.potential(model, q, kin=kin)

    return PythonPath()


def _per_step(setup, steps):
    run = setup()                 # untimed: a fresh simulator or the state reset
    t0 = time.perf_counter()
    run(steps)
    return (time.perf_counter() - t0) / steps


def _interleaved(cases, repeats):
    """Median seconds per step of each case (name -> (setup() -> run(steps), steps)),
    timed in turns; ``setup`` is not timed."""
    for setup, steps in cases.values():
        setup()(min(steps, 20))
    samples = {name: [] for name in cases}
    for _ in range(repeats):
        for name, (setup, steps) in cases.items():
            samples[name].append(_per_step(setup, steps))
    return {name: float(np.median(s)) for name, s in samples.items()}


def loop_cases(n, steps):
    """(a): name -> (setup() -> run(k), steps) on pendulum(n) with one tip force."""
    from .. import Simulator, aba, dca
    from ..models import pendulum
    from .adaptive_runs import initial_state

    m = pendulum(n)
    q0 = initial_state(m)
    qd0 = np.zeros(m.nv)
    tau = np.zeros(m.nv)
    f_ext = np.zeros((m.nb, 6))
    f_ext[-1, 3:] = (0.0, 0.05, 0.0)

    def bare(fn):
        def run(k):
            for _ in range(k):
                fn(m, q0, qd0, tau, f_ext)
        return lambda: run

    def sim(method, integrator, python=False):
        force = _tip_force(m)
        s = Simulator(m, 1e-4, integrator, method, forces=[_python_path(force) if python
                                                           else force], q0=q0)
        assert s._compiled() is not None     # a Python force is called from the loop
        assert (getattr(s, "_python_forces", None) is not None) == python

        def setup():
            s.set_state(q=q0, qd=qd0, t=0.0)
            return lambda k: s.run(k, progress=False)
        return setup

    cases = {"aba() call": (bare(aba), steps), "dca() call": (bare(dca), steps)}
    for method in ("aba", "dca"):
        for integ in ("semi_implicit_euler", "rk4"):
            cases[f"{method} {integ}"] = (sim(method, integ), steps)
            cases[f"{method} {integ} (Python path)"] = (sim(method, integ, True), steps)
    return cases


def adaptive_cases(n, budgets, steps):
    """(b): name -> (setup() -> run(k), steps) on pendulum(n) with one tip force, defaults
    (the simulator is built in the untimed setup)."""
    from .. import Simulator
    from ..models import pendulum
    from .adaptive_runs import initial_state

    m = pendulum(n)
    q0 = initial_state(m)

    def make(**kw):
        def setup():
            s = Simulator(m, 1e-3, forces=[_tip_force(m)], q0=q0, **kw)
            return lambda k: s.run(k)
        return setup

    cases = {"dca semi_implicit_euler": (make(method="dca", integrator="semi_implicit_euler"),
                                         steps)}
    for na in budgets:
        cases[f"adaptive N_A = {na}"] = (make(method="adaptive", max_active=na), steps)
    for na in budgets:       # the fresh simulator's first step alone: run(1)
        cases[f"adaptive N_A = {na}, first step"] = (make(method="adaptive", max_active=na), 1)
    return cases


def robot_cases(quick):
    """(c): ``[(name, model), ...]`` for every URDF of example-robot-data that loads, fixed
    base and floating base (``quick``: four robots), and ``[(name, reason), ...]`` for those
    that do not."""
    from .. import load_urdf
    from .common import robots_dir

    root = robots_dir()
    if root is None:
        return [], [("example-robot-data", "not installed (pip install articulated[robots])")]
    paths = sorted(root.rglob("*.urdf"))
    if quick:
        keep = ("ur5_robot.urdf", "panda.urdf", "solo12.urdf", "talos_reduced.urdf")
        paths = [p for p in paths if p.name in keep]
    models, failed = [], []
    for path in paths:
        for fb in (False, True):
            name = f"{path.relative_to(root).parts[0].removesuffix('_description')}/" \
                   f"{path.stem} ({'floating' if fb else 'fixed'})"
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    models.append((name, load_urdf(path, floating_base=fb)))
            except (ValueError, OSError) as e:
                msg = str(e).replace(str(path), path.name).splitlines()[0]
                failed.append((name, msg[:110]))
    return models, failed


def _random_state(model, rng):
    from .. import normalize

    q = model.neutral() + 0.3 * rng.standard_normal(model.nq)
    return normalize(model, q), rng.standard_normal(model.nv), rng.standard_normal(model.nv)


def time_robot(model, repeats, calls):
    """``(ours_s, pin_s, err, best)``: median seconds per call of the public ``aba`` and of
    ``pin.aba`` (timed in turns, ``calls`` calls a round), their largest difference, and
    the ratio of their fastest rounds (on an oversubscribed machine, the rounds least
    disturbed by other processes)."""
    import pinocchio as pin

    from .. import aba
    from ..interop import to_pinocchio

    pm = to_pinocchio(model)
    q, qd, tau = _random_state(model, np.random.default_rng(0))
    pq, pv, pt = pm.q(q), pm.v(qd), pm.v(tau)
    err = float(np.abs(aba(model, q, qd, tau)
                       - pm.v_back(pin.aba(pm.model, pm.data, pq, pv, pt))).max())
    ours, peer = [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(calls):
            aba(model, q, qd, tau)
        t1 = time.perf_counter()
        for _ in range(calls):
            pin.aba(pm.model, pm.data, pq, pv, pt)
        t2 = time.perf_counter()
        ours.append((t1 - t0) / calls)
        peer.append((t2 - t1) / calls)
    return float(np.median(ours)), float(np.median(peer)), err, min(peer) / min(ours)


def time_batch(model, B, repeats):
    """(d): ``{case: (median, fastest) seconds per state}`` and the largest difference to
    Pinocchio."""
    import pinocchio as pin

    from .. import aba
    from ..interop import to_pinocchio

    pm = to_pinocchio(model)
    rng = np.random.default_rng(1)
    Q, QD, TAU = (np.array(x) for x in zip(*(_random_state(model, rng) for _ in range(B))))
    pins = [(pm.q(Q[b]), pm.v(QD[b]), pm.v(TAU[b])) for b in range(B)]
    out = np.empty((B, model.nv))

    def pin_loop():
        for pq, pv, pt in pins:
            pin.aba(pm.model, pm.data, pq, pv, pt)

    cases = {"pin.aba, Python loop": pin_loop,
             "aba(Q, QD, TAU), 1 thread": lambda: aba(model, Q, QD, TAU, out=out, threads=1),
             "aba(Q, QD, TAU), default threads": lambda: aba(model, Q, QD, TAU, out=out)}
    samples = {k: [] for k in cases}
    for fn in cases.values():
        fn()
    for _ in range(repeats):
        for k, fn in cases.items():
            t0 = time.perf_counter()
            fn()
            samples[k].append((time.perf_counter() - t0) / B)
    ref = np.array([pm.v_back(pin.aba(pm.model, pm.data, *p)) for p in pins])
    return ({k: (float(np.median(v)), min(v)) for k, v in samples.items()},
            float(np.abs(out - ref).max()))


def add_arguments(parser):
    """Declare the options of ``articulated bench simulator [--quick] [--n N] [--steps K]
    [--repeats R] [--out DIR]`` on ``parser``."""
    parser.description = HELP
    parser.add_argument("--quick", action="store_true", help="pendulum-30, few steps (smoke test)")
    parser.add_argument("--n", type=at_least(2), default=300, help="pendulum links (default 300)")
    parser.add_argument("--steps", type=at_least(1), default=400,
                        help="steps per timed run (default 400)")
    parser.add_argument("--repeats", type=at_least(1), default=7,
                        help="rounds of interleaved timings (default 7)")
    parser.add_argument("--out", default="docs", metavar="DIR",
                        help="folder of the Markdown results (default docs)")


def main(argv=None) -> int:
    """``python -m articulated.bench.simulator [options]``: as ``articulated bench
    simulator``."""
    return bench_main("simulator", add_arguments, run, argv)


def run(args) -> int:
    """Print tables (a) and (b) of the module docstring and write them to
    ``OUT/simulator-results.md`` (``-quick.md`` with ``--quick``); returns 0."""
    warnings.filterwarnings("ignore", module="numba")
    quick = args.quick
    n = 30 if quick else args.n
    steps = 20 if quick else args.steps
    repeats = 2 if quick else args.repeats
    report = MarkdownReport("Simulator speed through the public API", args.out, "simulator",
                            quick, suffix=f" (n = {n}, {steps} steps, {repeats} rounds)")
    emit = report.emit

    t = _interleaved(loop_cases(n, steps), repeats)
    emit(f"## (a) Stepping loop, pendulum-{n}, one world point force on the tip, dt = 1e-4 s, "
         f"`run({steps})` recording every step")
    emit()
    rows = []
    for name, s in t.items():
        base = t["dca() call"] if name.startswith("dca") else t["aba() call"]
        rows.append([name, f"{s * 1e6:.1f}", f"{s / base:.2f}"])
    emit(markdown_table(["case", "us / step", "x the bare call (aba() or dca())"], rows))
    emit()
    budgets = (1, 50) if n >= 50 else (1, n // 2)
    ta = _interleaved(adaptive_cases(n, budgets, steps), repeats)
    emit(f"## (b) Adaptive dynamics with the defaults, pendulum-{n}, one tip force, "
         f"`Simulator(method='adaptive', max_active=N_A)`, `run({steps})`")
    emit()
    ref = ta["dca semi_implicit_euler"]
    emit(markdown_table(["case", "us / step", "speed-up over the DCA simulator"],
                        [[name, f"{s * 1e6:.1f}", f"{ref / s:.1f}"] for name, s in ta.items()]))
    emit()
    robots_tables(emit, quick, repeats)
    path = report.write("simulator-results-quick.md" if quick else "simulator-results.md")
    print(f"wrote {path}")
    return 0


def robots_tables(emit, quick, repeats):
    """Tables (c) and (d) of the module docstring (skipped, with a line saying so, without
    Pinocchio or example-robot-data)."""
    try:
        import pinocchio  # noqa: F401
    except ImportError:
        emit("(c), (d): Pinocchio is not installed (pip install pin): skipped")
        return
    models, failed = robot_cases(quick)
    calls = 200 if quick else 2000
    rows, ratios, bests = [], [], []
    for name, m in models:
        ours, peer, err, best = time_robot(m, max(repeats, 3), calls)
        ratios.append(peer / ours)
        bests.append(best)
        rows.append([name, m.nv, f"{ours * 1e6:.2f}", f"{peer * 1e6:.2f}", f"{peer / ours:.2f}",
                     f"{err:.1e}", f"{best:.2f}"])
    emit("## (c) One `aba()` call from Python on every example-robot-data URDF "
         "(fixed and floating base), against `pin.aba`")
    emit()
    if ratios:
        emit(f"{len(rows)} models; speed-up over Pinocchio: median {np.median(ratios):.2f}, "
             f"lowest {min(ratios):.2f} ({rows[int(np.argmin(ratios))][0]}), highest "
             f"{max(ratios):.2f}; {sum(r >= 1 for r in ratios)} of {len(ratios)} at >= 1. "
             f"Ratio of the fastest rounds: median {np.median(bests):.2f}, lowest "
             f"{min(bests):.2f} ({rows[int(np.argmin(bests))][0]}); "
             f"{sum(r >= 1 for r in bests)} of {len(bests)} at >= 1.")
        emit()
        emit(markdown_table(["model", "nv", "ours us / call", "pin.aba us / call",
                             "speed-up", "max |qdd - pin|", "speed-up, fastest rounds"], rows))
        emit()
    if failed:
        emit(f"Not loaded ({len(failed)}): " + "; ".join(f"{n}: {r}" for n, r in failed))
        emit()
    solo = [m for name, m in models if "solo12 (floating)" in name]
    if solo:
        B = 100 if quick else 1000
        t, err = time_batch(solo[0], B, max(repeats, 3))
        ref, ref_best = t["pin.aba, Python loop"]
        emit(f"## (d) Batched `aba` on solo12 (floating base), B = {B} states, against "
             f"`pin.aba` in a Python loop (largest difference {err:.1e})")
        emit()
        emit(f"Cores this process may use: {len(os.sched_getaffinity(0))}; load average "
             f"before the run: {os.getloadavg()[0]:.2f}.")
        emit()
        emit(markdown_table(["case", "us / state", "speed-up over the pin loop",
                             "us / state, fastest round", "speed-up, fastest rounds"],
                            [[k, f"{v * 1e6:.2f}", f"{ref / v:.2f}", f"{b * 1e6:.2f}",
                              f"{ref_best / b:.2f}"] for k, (v, b) in t.items()]))
        emit()


if __name__ == "__main__":
    raise SystemExit(main())
