"""The adaptive quasi-statics benchmark, behind
``articulated bench quasistatics``: the benchmarks of Redon & Lin (2005), "An efficient,
error-bounded approximation algorithm for simulating quasi-statics of complex linkages"
(RL), Sec. 6, measured with our implementation next to our own full DCA, in one run.

(a) :func:`bench_molecule` - RL Table 1 / Fig. 7: the 50,000-DOF molecule
    (:func:`articulated.models.molecule`), ``N_f`` in {1, 10, 100, 1000} constant world
    forces of random direction (1 N) at random atoms (seeded), ``eps_max`` in {2^-3, 2^-7,
    2^-11, 2^-15, 2^-19} (relative joint acceleration error): mean wall time per step,
    mean joints computed (N_E), mean assembly-tree nodes recomputed, the relative displacement
    error against the full-DCA run with the same forces and steps, and the DCA's own time
    per step. Also :func:`bench_scaling`: adaptive time per step at 1 force and 2^-19 on
    molecule-5k vs molecule-50k (issue target: ratio < 2) next to the DCA's ratio.
(b) :func:`bench_millipede` - RL Fig. 5: the 13,000-body millipede, one force on the tip
    link of the middle leg, ``eps_max = 2^-i``, i = 0..19: mean time per step and joints
    computed vs eps with the DCA line (plot ``quasistatics-millipede.png``).
(c) :func:`bench_bicycle` - RL Fig. 1: the 30-link bicycle chain, constant force on the
    last link (at its free pin, in the plane of the chain) for 10,000 steps: final body
    origins for several ``eps_max`` next to the DCA and the initial configuration (plot
    ``quasistatics-bicycle.png``).

Method. Every run is a :class:`articulated.QuasiStaticSimulator` from the same start ``q0``
(the model's neutral configuration): ``method="quasistatic-adaptive"`` (RL's algorithm:
lazy coefficient update along the paths of the moved joints and of the forced bodies,
partial back-substitution) or ``method="quasistatic"`` (the full DCA every step; the world
poses the world-frame forces need come from forward kinematics, O(n)). The step ``dt`` is
chosen per scene and force set so that the first full-DCA step moves the fastest joint by
:data:`DQ_STEP` rad (``dt = sqrt(DQ / max |qdd_0|)``): the explicit quasi-static step
``q <- q + dt^2 qdd`` is stable there, and adaptive and DCA runs share it. Gravity is off for
the molecule and the millipede (RL applies only the forces; with gravity every joint
accelerates and nothing can be skipped); the bicycle chain keeps the default gravity, which
is normal to the plane of the chain and does no work (zero joint torques).

Relative displacement error (after the same number of steps from the same start; P the
(nb, 3) body origins from :func:`articulated.forward_kinematics`)::

    e_F   = ||P_adaptive - P_DCA||_F / ||P_DCA - P_0||_F
    e_max = max_i |P_adaptive,i - P_DCA,i| / max_i |P_DCA,i - P_0,i|     (RL Sec. 6.4 form)

Lower bound on the work: from the exact DCA solution at the initial state, the number of
joints with ``||qdd_j|| > eps * max_j ||qdd_j||``; any method that computes some joint
accelerations exactly and sets the rest to zero must compute at least these to meet the
relative joint error ``eps`` (RL Definitions 1-2).

Timing: wall time of each step, the mean over the steps after the first (the first
includes the initial force update and any numba cache load; the adaptive method's steps
that refresh its metric, every ``metric_every``-th, are counted). Run
``articulated bench quasistatics [--quick] [--steps K] [--out DIR] [--scheduler ADDRESS]``
(``--scheduler``: the Table 1 and millipede runs as cells on Dask workers, one cell per
single-threaded worker at a time, :func:`run_cells`); ``--quick`` uses small
models (seconds; the smoke test ``tests/test_bench_quasistatics.py``).
"""

from __future__ import annotations

import gc
import time
from pathlib import Path

import numpy as np

from .common import (at_least, bench_main, finish_report, machine_info, markdown_table,
                     new_figure, save_figure, time_call)

EPS_TABLE = tuple(2.0 ** -i for i in (3, 7, 11, 15, 19))
"""RL Table 1's error thresholds."""
NF_TABLE = (1, 10, 100, 1000)
"""RL Table 1's numbers of applied forces."""
EPS_SWEEP = tuple(2.0 ** -i for i in range(20))
"""RL Fig. 5's thresholds 2^-i, i = 0..19."""
EPS_BICYCLE = tuple(2.0 ** -i for i in (1, 3, 5, 7))
DQ_STEP = 1e-3
"""Largest joint motion [rad] of the first full-DCA step (sets dt) for the molecule and the
millipede."""
DQ_STEP_BICYCLE = 5e-2
"""Same for the bicycle chain (a larger step, so the chain visibly bends in 10,000 steps)."""

PAPER_TABLE1 = {
    "time_ms": {1: (0.6, 0.9, 1.4, 1.9, 2.4), 10: (0.9, 1.3, 1.8, 2.6, 3.1),
                100: (2.7, 4.1, 6.4, 7.8, 8.4), 1000: (17.8, 21.4, 42.6, 49.2, 49.9)},
    "dca_ms": {1: 875.1, 10: 873.0, 100: 875.0, 1000: 880.0},
    "joints": {1: (25, 37, 47, 59, 73), 10: (32, 45, 56, 75, 85),
               100: (39, 80, 145, 189, 206), 1000: (41, 149, 830, 1060, 1086)},
    "rel_disp": {1: (6e-5, 2e-6, 1e-7, 4e-9, 2e-9), 10: (1e-4, 1e-4, 4e-7, 4e-8, 1e-8),
                 100: (8e-4, 6e-4, 7e-5, 3e-6, 1e-7), 1000: (6e-3, 2e-3, 7e-5, 2e-6, 6e-8)},
}
"""RL Table 1 (C++, 2.8 GHz Pentium, 2005; 4,000 steps) for comparison."""

TARGET_SPEEDUP_1 = 100.0
TARGET_SPEEDUP_1000 = 10.0
TARGET_DISP = 1e-6
TARGET_SIZE_RATIO = 2.0
"""Targets: >= 100x vs the full DCA at 1 force and 2^-19 with e <= 1e-6, >= 10x
at 1000 forces, molecule-50k / molecule-5k time ratio < 2."""


# ============================================================================ helpers

def _log2_label(eps):
    return f"2^-{round(-np.log2(eps))}" if eps > 0 else "0"


def random_forces(model, nf, seed=0, magnitude=1.0):
    """``nf`` distinct random bodies (never the root body) and unit random world directions
    times ``magnitude`` [N], applied at each body's centre of mass. Deterministic in
    (seed, nf). Returns a list of (body, force (3,), point (3,))."""
    rng = np.random.default_rng([seed, nf])
    bodies = rng.choice(np.arange(1, model.nb), size=nf, replace=False)
    d = rng.normal(size=(nf, 3))
    d *= magnitude / np.linalg.norm(d, axis=1, keepdims=True)
    return [(int(b), d[k], model.body_com[b].copy()) for k, b in enumerate(bodies)]


def _f_ext(model, q, forces):
    """(nb, 6) body-frame spatial forces of the world point forces at configuration q."""
    from ..algorithms.kinematics import forward_kinematics

    R = forward_kinematics(model, q)[0]
    f = np.zeros((model.nb, 6))
    for b, F, point in forces:
        fb = R[b].T @ F
        f[b, :3] += np.cross(point, fb)
        f[b, 3:] += fb
    return f


def joint_norms(model, qdd):
    """(nb,) ``||qdd_j||`` per joint (0 for joints without DOF)."""
    out = np.zeros(model.nb)
    for j in np.flatnonzero(model.jnt_nv > 0):
        va, d = model.jnt_vadr[j], model.jnt_nv[j]
        out[j] = np.sqrt(np.dot(qdd[va:va + d], qdd[va:va + d]))
    return out


def initial_solution(model, q0, forces, repeats=5):
    """Exact quasi-statics at the start by the DCA: (qdd, per-joint norms, seconds of one
    bare ``DCA.quasi_statics`` call, median over ``repeats``)."""
    from ..algorithms.dca_solver import DCA

    dca = DCA(model)
    f = _f_ext(model, q0, forces)
    tau = np.zeros(model.nv)
    qdd = dca.quasi_statics(q0, tau, f).copy()
    secs = time_call(lambda: dca.quasi_statics(q0, tau, f), repeats, target_s=0.0)
    del dca
    return qdd, joint_norms(model, qdd), secs


def lower_bound(norms, eps):
    """Joints with ``||qdd_j|| > eps max ||qdd||``: the fewest joints any partial solver
    must compute for relative joint error ``eps``."""
    return int((norms > eps * norms.max()).sum())


def truncation_error(model, q0, qdd0, norms, eps, dt):
    """One-step relative displacement errors (e_F, e_max) of the *ideal* partial solution:
    the exact ``qdd0`` kept on the :func:`lower_bound` joints only (the fewest joints that
    meet ``eps``), one step ``q0 + dt^2 qdd`` against the exact step. What the error measure
    itself allows, whatever the method."""
    from ..configuration import integrate_joints_inplace

    keep = norms > eps * norms.max()
    qdd_t = np.where(keep[model.dof_body], qdd0, 0.0)
    all_j = np.arange(model.nb, dtype=np.int64)
    q_exact, q_trunc = q0.copy(), q0.copy()
    for q, a in ((q_exact, qdd0), (q_trunc, qdd_t)):
        integrate_joints_inplace(all_j, model.nb, model.jnt_type, model.jnt_qadr,
                                 model.jnt_vadr, q, np.ascontiguousarray(a), dt * dt)
    return displacement_errors(model, q0, q_exact, q_trunc)


def step_dt(qdd0, dq):
    """``dt`` such that the first full step moves the fastest joint by ``dq``."""
    return float(np.sqrt(dq / max(np.abs(qdd0).max(), 1e-300)))


def simulate(model, q0, forces, dt, steps, method, eps=0.0):
    """One quasi-static run. Returns dict: ``ms`` (mean step time over steps 2..K),
    ``median_ms`` (median over all steps), ``joints``, ``nodes`` (means), ``bound``
    (largest certified error), ``q`` (final configuration), ``setup_s``."""
    from ..simulation.forces import PointForce
    from ..simulation.quasistatic import QuasiStaticSimulator

    t0 = time.perf_counter()
    sim = QuasiStaticSimulator(model, dt, method=method, eps_max=eps, q0=q0)
    for b, F, point in forces:
        sim.add_force(PointForce(b, F, point=point))
    setup_s = time.perf_counter() - t0
    tr = sim.run(steps)
    wall = tr.wall[1:] if steps > 1 else tr.wall
    out = dict(ms=float(wall.mean() * 1e3), median_ms=float(np.median(tr.wall) * 1e3),
               joints=float(tr.joints.mean()), nodes=float(tr.nodes.mean()),
               bound=float(tr.bound.max()), q=tr.q[-1].copy(), setup_s=setup_s, steps=steps)
    del sim, tr
    gc.collect()
    return out


def displacement_errors(model, q0, q_ref, q):
    """(e_F, e_max) relative displacement errors of q against q_ref from q0 (module
    docstring)."""
    from ..algorithms.kinematics import forward_kinematics

    P0 = forward_kinematics(model, q0)[1]
    Pr = forward_kinematics(model, q_ref)[1]
    P = forward_kinematics(model, q)[1]
    dref = Pr - P0
    den_f = np.linalg.norm(dref)
    den_m = np.linalg.norm(dref, axis=1).max()
    diff = P - Pr
    if den_f == 0.0:
        return (0.0, 0.0) if not diff.any() else (np.inf, np.inf)
    return float(np.linalg.norm(diff) / den_f), float(np.linalg.norm(diff, axis=1).max() / den_m)


def _warm_up():
    """Compile / load every kernel on a tiny model, so no timed step pays for it."""
    from .. import models

    m = models.molecule(50, seed=0, gravity=(0.0, 0.0, 0.0))
    q0 = m.neutral()
    forces = random_forces(m, 2, 0)
    for method in ("quasistatic", "quasistatic-adaptive"):
        simulate(m, q0, forces, 1e-3, 3, method, 2.0 ** -10)
    initial_solution(m, q0, forces, repeats=1)
    displacement_errors(m, q0, q0, q0)


# ============================================================================ (a) molecule

def bench_molecule(n=50_000, steps=30, *, nf_values=NF_TABLE, eps_values=EPS_TABLE, seed=0,
                   log=print, client=None) -> dict:
    """RL Table 1 on molecule-n (:func:`bench_table1` on ``models.molecule(n)``, gravity
    off). Returns :func:`bench_table1`'s dict plus ``n``."""
    from .. import models

    model = models.molecule(n, seed=seed, gravity=(0.0, 0.0, 0.0))
    out = bench_table1(model, f"molecule-{n}", steps, nf_values=nf_values,
                       eps_values=eps_values, seed=seed, log=log, client=client)
    out["n"] = n
    return out


def bench_table1(model, name, steps=30, *, nf_values=NF_TABLE, eps_values=EPS_TABLE, seed=0,
                 log=print, client=None) -> dict:
    """RL Table 1 on ``model`` from its neutral configuration: per N_f the full-DCA run and
    one adaptive run per eps (forces from :func:`random_forces`).

    Each run is one cell (:func:`run_cells`: on the Dask workers of ``client``, a
    ``distributed.Client`` or a scheduler address, one cell per single-threaded worker at a
    time; None: here, one after another). The exact start solution (``dt``, the lower
    bound, the bare-solve time) is computed here.

    Returns dict(name, nb, steps, rows) with one row per N_f: ``nf``, ``dt``, ``dca`` (run
    dict without q, plus ``solve_ms`` of the bare DCA call and ``nodes``), ``adaptive`` (list
    per eps: ``eps``, ``ms``, ``joints``, ``nodes``, ``bound``, ``lower``, ``e_f``,
    ``e_max``, ``speedup``)."""
    q0 = model.neutral()
    starts = []
    for nf in nf_values:
        forces = random_forces(model, nf, seed)
        qdd0, norms, solve_s = initial_solution(model, q0, forces)
        starts.append((nf, forces, qdd0, norms, solve_s, step_dt(qdd0, DQ_STEP)))
    cells = [(forces, dt, steps, method, eps) for nf, forces, *_, dt in starts
             for method, eps in [("quasistatic", 0.0)]
             + [("quasistatic-adaptive", e) for e in eps_values]]
    results = iter(run_cells(model, q0, cells, client))
    rows = []
    for nf, forces, qdd0, norms, solve_s, dt in starts:
        dca = next(results)
        q_ref = dca.pop("q")
        dca["solve_ms"] = solve_s * 1e3
        row = dict(nf=nf, dt=dt, dca=dca, adaptive=[])
        moved = np.abs(q_ref - q0).max()
        log(f"{name} N_f={nf}: dt={dt:.3g} s, DCA {dca['ms']:.1f} ms/step "
            f"(bare solve {solve_s * 1e3:.1f} ms), max |q - q0| after {steps} steps "
            f"{moved:.2e} rad")
        for eps in eps_values:
            r = next(results)
            q = r.pop("q")
            r["eps"] = eps
            r["e_f"], r["e_max"] = displacement_errors(model, q0, q_ref, q)
            r["lower"] = lower_bound(norms, eps)
            r["e_ideal"] = truncation_error(model, q0, qdd0, norms, eps, dt)[0]
            r["speedup"] = dca["ms"] / r["ms"]
            row["adaptive"].append(r)
            log(f"  eps {_log2_label(eps)}: {r['ms']:.2f} ms/step, joints {r['joints']:.0f} "
                f"(lower bound {r['lower']}), nodes {r['nodes']:.0f}, e_F {r['e_f']:.1e}, "
                f"x{r['speedup']:.1f}")
        rows.append(row)
    return dict(name=name, nb=model.nb, nv=model.nv, steps=steps, rows=rows)


def run_cells(model, q0, cells, client=None) -> list:
    """:func:`simulate` of ``model`` from ``q0`` once per cell ``(forces, dt, steps, method,
    eps)``, in order: here, one after another (``client`` None), or on the Dask workers of
    ``client`` (:func:`articulated.sweep.map_cells`: the model is sent to each worker once,
    every worker loads the kernels first, one cell per worker at a time)."""
    from ..sweep import map_cells

    return map_cells(simulate, cells, client=client, common=(model, q0), warm=_warm_up)


def bench_scaling(small=5_000, large=50_000, steps=30, *, seeds=(0, 1, 2, 3, 4),
                  eps=2.0 ** -19,
                  large_rows=None, log=print) -> dict:
    """Time per step at one force and ``eps`` on molecule-small vs molecule-large (the same
    force-placement procedure, several seeds), and the full DCA's ratio (seed 0).

    ``large_rows``: the :func:`bench_molecule` result on molecule-large, whose N_f = 1 runs
    at ``eps`` are reused for seed 0 when given. Returns dict(small, large, rows (per seed:
    ms and joints at both sizes, ratio), dca (ms at both sizes, ratio), median_ratio)."""
    from .. import models

    out = dict(small=small, large=large, steps=steps, eps=eps, rows=[])
    dca_ms = {}
    cache = {}
    if large_rows is not None:
        for row in large_rows["rows"]:
            if row["nf"] == 1:
                for r in row["adaptive"]:
                    if r["eps"] == eps:
                        cache[(large, large_rows.get("seed", 0))] = r
                dca_ms[large] = row["dca"]["ms"]
    per = {}
    for n in (small, large):
        model = models.molecule(n, seed=0, gravity=(0.0, 0.0, 0.0))
        q0 = model.neutral()
        for s in seeds:
            forces = random_forces(model, 1, s)
            if (n, s) in cache and n not in (small,):
                r = cache[(n, s)]
                per[(n, s)] = (r["ms"], r["joints"])
                continue
            qdd0, norms, _ = initial_solution(model, q0, forces, repeats=1)
            dt = step_dt(qdd0, DQ_STEP)
            r = simulate(model, q0, forces, dt, steps, "quasistatic-adaptive", eps)
            per[(n, s)] = (r["ms"], r["joints"])
            if n not in dca_ms and s == seeds[0]:
                d = simulate(model, q0, forces, dt, steps, "quasistatic")
                dca_ms[n] = d["ms"]
        del model
        gc.collect()
    for s in seeds:
        (ms_s, j_s), (ms_l, j_l) = per[(small, s)], per[(large, s)]
        us_s, us_l = ms_s * 1e3 / max(j_s, 1), ms_l * 1e3 / max(j_l, 1)
        out["rows"].append(dict(seed=s, small_ms=ms_s, small_joints=j_s, large_ms=ms_l,
                                large_joints=j_l, ratio=ms_l / ms_s, small_us_per_joint=us_s,
                                large_us_per_joint=us_l, per_joint_ratio=us_l / us_s,
                                large_speedup=dca_ms[large] / ms_l,
                                small_speedup=dca_ms[small] / ms_s))
        log(f"scaling seed {s}: molecule-{small} {ms_s:.2f} ms ({j_s:.0f} joints), "
            f"molecule-{large} {ms_l:.2f} ms ({j_l:.0f} joints), ratio {ms_l / ms_s:.2f}")
    out["dca"] = dict(small_ms=dca_ms[small], large_ms=dca_ms[large],
                      ratio=dca_ms[large] / dca_ms[small])
    out["median_ratio"] = float(np.median([r["ratio"] for r in out["rows"]]))
    out["median_per_joint_ratio"] = float(np.median([r["per_joint_ratio"]
                                                     for r in out["rows"]]))
    return out


# ============================================================================ (b) millipede

def _millipede(quick):
    from .. import models

    if quick:
        return models.millipede(legs=20, leg_links=5, spine=60, gravity=(0.0, 0.0, 0.0)), 20, 5
    return models.millipede(gravity=(0.0, 0.0, 0.0)), 1000, 10


def bench_millipede(quick=False, steps=30, *, eps_values=EPS_SWEEP, log=print,
                    client=None) -> dict:
    """RL Fig. 5: one 1 N force (direction (1, 1, 1)/sqrt(3)) at the centre of mass of the
    tip link of the middle leg; per eps the mean (steps 2..K) and median time per step and
    the mean joints computed, next to the full DCA (the runs as cells of :func:`run_cells`,
    on ``client``'s workers when given). Returns dict(nb, body, steps, dt, dca, rows)."""
    model, legs, leg_links = _millipede(quick)
    body = f"leg{legs // 2}_{leg_links - 1}"
    b = model.body_id(body)
    forces = [(b, np.ones(3) / np.sqrt(3.0), model.body_com[b].copy())]
    q0 = model.neutral()
    qdd0, norms, solve_s = initial_solution(model, q0, forces)
    dt = step_dt(qdd0, DQ_STEP)
    runs = run_cells(model, q0, [(forces, dt, steps, "quasistatic", 0.0)]
                     + [(forces, dt, steps, "quasistatic-adaptive", e) for e in eps_values],
                     client)
    dca = runs[0]
    q_ref = dca.pop("q")
    dca["solve_ms"] = solve_s * 1e3
    log(f"millipede ({model.nb} bodies), force on {body}: DCA {dca['ms']:.2f} ms/step "
        f"(bare solve {solve_s * 1e3:.2f} ms)")
    rows = []
    for eps, r in zip(eps_values, runs[1:]):
        q = r.pop("q")
        r["eps"] = eps
        r["lower"] = lower_bound(norms, eps)
        r["e_f"], r["e_max"] = displacement_errors(model, q0, q_ref, q)
        r["e_ideal"] = truncation_error(model, q0, qdd0, norms, eps, dt)[0]
        r["speedup"] = dca["ms"] / r["ms"]
        rows.append(r)
    return dict(nb=model.nb, dof=model.nv, body=body, steps=steps, dt=dt, dca=dca, rows=rows)



def _eps_axes(*axes):
    """Common styling of the time / joints vs eps_max panels (eps decreasing to the right)."""
    for a in axes:
        a.set_xlabel("relative joint acceleration error eps_max")
        a.invert_xaxis()
        a.grid(True, which="both", alpha=0.3)
        a.legend(loc="best", fontsize=8)


def plot_millipede(res, path):
    """Two panels as RL Fig. 5: time per step and joints computed vs eps (log axes)."""
    eps = np.array([r["eps"] for r in res["rows"]])
    ms = np.array([r["ms"] for r in res["rows"]])
    joints = np.array([r["joints"] for r in res["rows"]])
    lower = np.array([max(r["lower"], 0) for r in res["rows"]])
    fig, (a0, a1) = new_figure((11, 4.2), 1, 2)
    a0.loglog(eps, ms, "o-", label="error-bounded approximation (ours)")
    a0.axhline(res["dca"]["ms"], color="k", ls="--", label="full DCA (ours)")
    a0.set_ylabel("mean time per step [ms]")
    a1.loglog(eps, joints, "o-", label="joints computed (ours)")
    lo = lower > 0
    a1.loglog(eps[lo], lower[lo], "s:", color="gray",
              label="lower bound: joints with |qdd_j| > eps max|qdd|")
    a1.axhline(res["dof"], color="k", ls="--", label=f"full DCA (all {res['dof']} joints)")
    a1.set_ylabel("joint accelerations computed per step")
    _eps_axes(a0, a1)
    fig.suptitle(f"millipede ({res['nb']} bodies), one force on {res['body']}, "
                 f"{res['steps']} steps per setting (cf. Redon & Lin 2005, Fig. 5)")
    return save_figure(fig, path, dpi=110)


# ============================================================================ (c) bicycle

def bench_bicycle(steps=10_000, *, n=30, eps_values=EPS_BICYCLE, log=print) -> dict:
    """RL Fig. 1: 30-link bicycle chain along +x (z pins), a constant 1 N force along +y at
    the free pin of the last link for ``steps`` steps; final body origins (x, y) of the DCA
    and of the adaptive runs. Returns dict(n, steps, dt, p0, dca, rows)."""
    from .. import models
    from ..algorithms.kinematics import forward_kinematics

    model = models.bicycle_chain(n)        # default gravity: normal to the plane, no work
    pitch = models.BICYCLE_PITCH
    forces = [(model.nb - 1, np.array([0.0, 1.0, 0.0]), np.array([pitch, 0.0, 0.0]))]
    q0 = model.neutral()
    qdd0, _, _ = initial_solution(model, q0, forces, repeats=1)
    dt = step_dt(qdd0, DQ_STEP_BICYCLE)

    def tip_path(q):
        R, p = forward_kinematics(model, q)
        tip = p[-1] + R[-1] @ np.array([pitch, 0.0, 0.0])
        return np.vstack([p[:, :2], tip[:2]])

    dca = simulate(model, q0, forces, dt, steps, "quasistatic")
    q_ref = dca.pop("q")
    dca["xy"] = tip_path(q_ref)
    rows = []
    for eps in eps_values:
        r = simulate(model, q0, forces, dt, steps, "quasistatic-adaptive", eps)
        q = r.pop("q")
        r["eps"] = eps
        r["xy"] = tip_path(q)
        r["e_f"], r["e_max"] = displacement_errors(model, q0, q_ref, q)
        r["tip_err"] = float(np.linalg.norm(r["xy"][-1] - dca["xy"][-1]))
        rows.append(r)
    log(f"bicycle chain {n} links, {steps} steps, dt={dt:.3g} s: DCA tip at "
        f"{dca['xy'][-1].round(4).tolist()}")
    return dict(n=n, steps=steps, dt=dt, p0=tip_path(q0), dca=dca, rows=rows)


def plot_bicycle(res, path):
    """Initial and final chain shapes (body origins and the free pin, x-y) as RL Fig. 1."""
    fig, ax = new_figure((8, 5))
    import matplotlib

    ax.plot(*res["p0"].T, "o-", color="0.6", ms=3, label="initial")
    cmap = matplotlib.colormaps["autumn"]
    for k, r in enumerate(res["rows"]):
        ax.plot(*r["xy"].T, ".-", color=cmap(k / max(1, len(res["rows"]))), ms=4, lw=1.2,
                label=f"adaptive eps = {_log2_label(r['eps'])} ({r['joints']:.1f} joints/step, "
                      f"e_F {r['e_f']:.1e})")
    ax.plot(*res["dca"]["xy"].T, "k-", lw=2.2, alpha=0.5, label="full DCA")
    F0 = res["p0"][-1]
    ax.annotate("", xy=(F0[0], F0[1] + 0.04), xytext=tuple(F0),
                arrowprops=dict(arrowstyle="->", color="b"))
    ax.text(F0[0] + 0.004, F0[1] + 0.02, "F", color="b")
    ax.set_aspect("equal", adjustable="datalim")
    ax.set_xlabel("x [m]")
    ax.set_ylabel("y [m]")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper left", fontsize=8)
    ax.set_title(f"bicycle chain, {res['n']} links: constant force on the last link, "
                 f"{res['steps']} quasi-static steps (cf. Redon & Lin 2005, Fig. 1)",
                 fontsize=10)
    return save_figure(fig, path, dpi=110)


def plot_molecule(res, path):
    """Time per step and joints computed vs eps for each N_f (RL Fig. 7), DCA lines."""
    fig, (a0, a1) = new_figure((11, 4.2), 1, 2)
    for k, row in enumerate(res["rows"]):
        c = f"C{k}"
        eps = [r["eps"] for r in row["adaptive"]]
        a0.loglog(eps, [r["ms"] for r in row["adaptive"]], "o-", color=c,
                  label=f"{row['nf']} force{'s' if row['nf'] > 1 else ''}")
        a0.axhline(row["dca"]["ms"], color=c, ls="--", lw=0.8)
        a1.loglog(eps, [r["joints"] for r in row["adaptive"]], "o-", color=c,
                  label=f"{row['nf']} force{'s' if row['nf'] > 1 else ''}")
        a1.loglog(eps, [max(r["lower"], 1) for r in row["adaptive"]], "s:", color=c, ms=3)
    a0.set_ylabel("mean time per step [ms] (dashed: full DCA)")
    a1.axhline(res.get("nv", res["nb"]), color="k", ls="--", lw=0.8)
    a1.set_ylabel("joints computed per step (dotted: lower bound)")
    _eps_axes(a0, a1)
    fig.suptitle(f"{res['name']}, {res['steps']} steps per setting "
                 f"(cf. Redon & Lin 2005, Fig. 7 / Table 1)")
    return save_figure(fig, path, dpi=110)


# ============================================================================ report

def table1_markdown(mol, heading) -> list:
    """Markdown lines of a :func:`bench_table1` result under ``heading``."""
    lines = []
    eps = [r["eps"] for r in mol["rows"][0]["adaptive"]]
    heads = ["N_f"] + [_log2_label(e) for e in eps] + ["full DCA"]
    lines.append(heading)
    lines.append("")
    blocks = [
        ("mean time per step [ms] (DCA: simulator step; bare DCA solve in brackets)",
         lambda r: f"{r['ms']:.2f}",
         lambda d: f"{d['ms']:.1f} ({d['solve_ms']:.1f})"),
        ("speed-up = DCA step / adaptive step", lambda r: f"{r['speedup']:.1f}x",
         lambda d: "1x"),
        ("mean joint accelerations computed per step (lower bound at the start in brackets)",
         lambda r: f"{r['joints']:.0f} ({r['lower']})", lambda d: f"{d['joints']:.0f}"),
        ("mean tree nodes recomputed per step [and us per node]",
         lambda r: f"{r['nodes']:.0f} [{r['ms'] * 1e3 / max(r['nodes'], 1):.1f}]",
         lambda d: f"{d['nodes']:.0f} [{d['ms'] * 1e3 / max(d['nodes'], 1):.2f}]"),
        ("relative displacement error e_F (e_max in brackets)",
         lambda r: f"{r['e_f']:.0e} ({r['e_max']:.0e})", lambda d: "0"),
        ("one-step e_F of the ideal truncation (exact qdd kept on the lower-bound joints "
         "only, at the start)", lambda r: f"{r['e_ideal']:.0e}", lambda d: "0"),
    ]
    for title, fa, fd in blocks:
        lines += [f"**{title}**", "", markdown_table(heads, (
            [f"{row['nf']}"] + [fa(r) for r in row["adaptive"]] + [fd(row["dca"])]
            for row in mol["rows"])), ""]
    return lines


def format_report(res) -> str:
    """Markdown tables of a :func:`bench_quasistatics` result."""
    lines = []
    m = res.get("machine")
    if m:
        lines += [f"machine: {m.get('cpu')} ({m.get('cores')} cores, {m.get('memory_gb')} GB), "
                  f"Python {m.get('python')}, numpy {m.get('numpy')}, numba {m.get('numba')}, "
                  f"commit {m.get('commit')}, {m.get('date')}, load at start "
                  f"{m.get('load_start')}", ""]
    mol = res["molecule"]
    lines += table1_markdown(mol, f"### (a) molecule-{mol['n']}: {mol['steps']} steps per "
                                  f"setting, relative joint error")
    eps = [r["eps"] for r in mol["rows"][0]["adaptive"]]
    heads = ["N_f"] + [_log2_label(e) for e in eps] + ["full DCA"]
    lines.append("dt per N_f: " + ", ".join(f"{row['nf']}: {row['dt']:.3g} s"
                                             for row in mol["rows"]))
    lines.append("")
    if mol["n"] == 50_000 and eps == list(EPS_TABLE):
        lines += ["**Redon & Lin (2005) Table 1 (4,000 steps, C++, 2005 PC): time [ms] / joints "
                  "/ relative displacement error**", "", markdown_table(heads, (
                      [f"{nf}"] + [f"{t} / {j} / {e:.0e}" for t, j, e in zip(
                          PAPER_TABLE1["time_ms"][nf], PAPER_TABLE1["joints"][nf],
                          PAPER_TABLE1["rel_disp"][nf])]
                      + [f"{PAPER_TABLE1['dca_ms'][nf]} / 50,000 / 0"] for nf in NF_TABLE)), ""]
    sc = res.get("scaling")
    if sc:
        lines += [f"### molecule-{sc['large']} vs molecule-{sc['small']}: 1 force, eps "
                  f"{_log2_label(sc['eps'])}", "",
                  markdown_table(
                      ["force seed", f"ms/step {sc['small']}", f"joints {sc['small']}",
                       f"us/joint {sc['small']}", f"speed-up {sc['small']}",
                       f"ms/step {sc['large']}", f"joints {sc['large']}",
                       f"us/joint {sc['large']}", f"speed-up {sc['large']}", "time ratio",
                       "us/joint ratio"],
                      [[f"{r['seed']}", f"{r['small_ms']:.2f}", f"{r['small_joints']:.0f}",
                        f"{r['small_us_per_joint']:.1f}", f"{r['small_speedup']:.1f}x",
                        f"{r['large_ms']:.2f}", f"{r['large_joints']:.0f}",
                        f"{r['large_us_per_joint']:.1f}", f"{r['large_speedup']:.1f}x",
                        f"{r['ratio']:.2f}", f"{r['per_joint_ratio']:.2f}"] for r in sc["rows"]]
                      + [["full DCA", f"{sc['dca']['small_ms']:.1f}", f"{sc['small']}",
                          f"{sc['dca']['small_ms'] * 1e3 / sc['small']:.2f}", "1x",
                          f"{sc['dca']['large_ms']:.1f}", f"{sc['large']}",
                          f"{sc['dca']['large_ms'] * 1e3 / sc['large']:.2f}", "1x",
                          f"{sc['dca']['ratio']:.2f}", ""]]), ""]
    mp = res.get("millipede")
    if mp:
        lines += [f"### (b) millipede ({mp['nb']} bodies), one force on {mp['body']}, "
                  f"{mp['steps']} steps per setting", "",
                  markdown_table(
                      ["eps_max", "mean (median) ms/step", "speed-up", "joints computed",
                       "lower bound", "nodes/step", "e_F (e_max)",
                       "one-step e_F, ideal truncation"],
                      [[_log2_label(r["eps"]), f"{r['ms']:.3f} ({r['median_ms']:.3f})",
                        f"{r['speedup']:.1f}x", f"{r['joints']:.1f}", f"{r['lower']}",
                        f"{r['nodes']:.0f}", f"{r['e_f']:.0e} ({r['e_max']:.0e})",
                        f"{r['e_ideal']:.0e}"] for r in mp["rows"]]
                      + [["full DCA", f"{mp['dca']['ms']:.2f} ({mp['dca']['median_ms']:.2f}; bare "
                          f"solve {mp['dca']['solve_ms']:.2f})", "1x", f"{mp['dof']}", "",
                          f"{mp['dca']['nodes']:.0f}", "0", "0"]]), ""]
    bc = res.get("bicycle")
    if bc:
        lines += [f"### (c) bicycle chain, {bc['n']} links, {bc['steps']} steps "
                  f"(dt {bc['dt']:.3g} s)", "",
                  markdown_table(
                      ["eps_max", "joints/step", "tip error [mm]", "e_F", "mean ms/step"],
                      [[_log2_label(r["eps"]), f"{r['joints']:.1f}", f"{r['tip_err'] * 1e3:.2f}",
                        f"{r['e_f']:.1e}", f"{r['ms']:.3f}"] for r in bc["rows"]]
                      + [["full DCA", f"{bc['n']}", "0", "0", f"{bc['dca']['ms']:.3f}"]]), ""]
    lines += _targets(res)
    if res.get("peak_rss_bytes"):
        lines.append(f"peak RSS of the benchmark process: {res['peak_rss_bytes'] / 1e9:.2f} GB; "
                     f"total {res.get('total_s', 0):.0f} s")
    return "\n".join(lines)


def _targets(res):
    mol = res["molecule"]
    by_nf = {row["nf"]: row for row in mol["rows"]}
    out = []

    def last(nf):
        return min(by_nf[nf]["adaptive"], key=lambda r: r["eps"])

    if 1 in by_nf:
        r = last(1)
        ok = r["speedup"] >= TARGET_SPEEDUP_1 and r["e_f"] <= TARGET_DISP
        out.append(f"target >= {TARGET_SPEEDUP_1:g}x at 1 force, eps {_log2_label(r['eps'])}, "
                   f"e <= {TARGET_DISP:g} (molecule-{mol['n']}): x{r['speedup']:.1f}, "
                   f"e_F {r['e_f']:.1e}: {'met' if ok else 'NOT met'}")
    if 1000 in by_nf:
        r = last(1000)
        ok = r["speedup"] >= TARGET_SPEEDUP_1000
        out.append(f"target >= {TARGET_SPEEDUP_1000:g}x at 1000 forces, eps "
                   f"{_log2_label(r['eps'])}: x{r['speedup']:.1f}: {'met' if ok else 'NOT met'}")
    sc = res.get("scaling")
    if sc:
        ok = sc["median_ratio"] < TARGET_SIZE_RATIO
        out.append(f"target time ratio molecule-{sc['large']} / molecule-{sc['small']} < "
                   f"{TARGET_SIZE_RATIO:g} (1 force, {_log2_label(sc['eps'])}): median "
                   f"{sc['median_ratio']:.2f} over force seeds (full DCA "
                   f"{sc['dca']['ratio']:.2f}): {'met' if ok else 'NOT met'}; time per "
                   f"computed joint, median ratio {sc['median_per_joint_ratio']:.2f}")
    return out


# ============================================================================ driver

def bench_quasistatics(quick=False, steps=None, out="docs", *, bicycle_steps=None,
                       log=print, client=None) -> dict:
    """Run (a) molecule + scaling, (b) millipede, (c) bicycle chain; print the Markdown
    report and write ``quasistatics-{millipede,bicycle,molecule}.png`` into ``out``.

    quick : bool - molecule-2000 (scaling 200 vs 2000), a 160-body millipede, 1,000 bicycle
        steps, 5 steps per setting: seconds
    steps : int - steps per molecule / millipede setting (default 30; quick 5)
    out : folder for the PNGs (created)
    client : distributed.Client, scheduler address or None - run the cells of (a) Table 1
        and (b) the millipede on Dask workers (:func:`run_cells`); the scaling runs and the
        bicycle chain stay here. None: everything here

    Returns dict(molecule, scaling, millipede, bicycle, machine, peak_rss_bytes, total_s,
    figures, report).
    """
    t0 = time.perf_counter()
    machine = machine_info()
    steps = int(steps) if steps else (5 if quick else 30)
    bsteps = int(bicycle_steps) if bicycle_steps else (1000 if quick else 10_000)
    outdir = Path(out)
    outdir.mkdir(parents=True, exist_ok=True)
    _warm_up()
    n_large, n_small = (2000, 200) if quick else (50_000, 5_000)
    res = dict(machine=machine)
    res["molecule"] = bench_molecule(n_large, steps, log=log, client=client)
    res["scaling"] = bench_scaling(n_small, n_large, steps, large_rows=res["molecule"], log=log)
    res["millipede"] = bench_millipede(quick, steps, log=log, client=client)
    res["bicycle"] = bench_bicycle(bsteps, log=log)
    res["figures"] = [plot_millipede(res["millipede"], outdir / "quasistatics-millipede.png"),
                      plot_bicycle(res["bicycle"], outdir / "quasistatics-bicycle.png"),
                      plot_molecule(res["molecule"], outdir / "quasistatics-molecule.png")]
    return finish_report(res, t0, format_report, log)


HELP = ("adaptive quasi-statics (Redon & Lin 2005): molecule Table 1, millipede Fig. 5, "
        "bicycle chain Fig. 1 vs our full DCA; plots into docs/")
"""One line for ``articulated bench --help``."""


def add_arguments(parser):
    """Declare the options of ``articulated bench quasistatics [--quick] [--steps N]
    [--bicycle-steps N] [--out DIR]`` on ``parser``."""
    parser.description = ("Redon & Lin (2005) Sec. 6 benchmarks with our adaptive "
                          "quasi-statics next to our full DCA: molecule Table 1, millipede "
                          "Fig. 5, bicycle chain Fig. 1 (see docs/results/quasistatics.md).")
    p = parser
    p.add_argument("--quick", action="store_true", help="small models, a few steps (seconds)")
    p.add_argument("--steps", type=at_least(1), default=None, metavar="N",
                   help="steps per molecule / millipede setting (default 30; quick 5)")
    p.add_argument("--bicycle-steps", type=at_least(1), default=None, metavar="N",
                   help="bicycle-chain steps (default 10000 as in the paper; quick 1000)")
    p.add_argument("--out", default="docs", metavar="DIR",
                        help="folder for the PNG figures (default docs)")
    p.add_argument("--scheduler", metavar="ADDRESS", default=None,
                   help="run the Table 1 and millipede cells on the Dask workers of this "
                        "scheduler (tcp://host:8786), one cell per single-threaded worker "
                        "at a time; default: here, one after another (docs/guide/sweeps.md)")


def run(args) -> int:
    """Run :func:`bench_quasistatics` with the options of :func:`add_arguments`; returns 0.
    With ``--scheduler`` one client serves every distributed part."""
    import contextlib

    from ..sweep import dask_client

    with (dask_client(args.scheduler) if args.scheduler
          else contextlib.nullcontext()) as client:
        bench_quasistatics(args.quick, args.steps, args.out, bicycle_steps=args.bicycle_steps,
                           client=client)
    return 0


def main(argv=None) -> int:
    """``python -m articulated.bench.quasistatics [options]``: as ``articulated bench
    quasistatics``."""
    return bench_main("quasistatics", add_arguments, run, argv)


if __name__ == "__main__":  # pragma: no cover
    import sys

    sys.exit(main(sys.argv[1:]))
