"""The adaptive-dynamics benchmark (issue 5, item 7), behind ``articulated bench adaptive``:
the experiments of Redon, Galoppo & Lin (2005), "Adaptive dynamics of articulated bodies"
(RGL), Sec. 7, measured with our :class:`articulated.AdaptiveSimulator` next to our own full
DCA and ABA, in one run.

(a) :func:`bench_table1` - RGL Table 1: the 300-link pendulum
    (:func:`articulated.models.pendulum`), ``N_A`` in {1, 50, 100, 150, 200, 250, 300}
    active joints x ``N_F`` in {1, 5, 10, 20, 50, 250} applied forces, active-region update
    every 20 steps (RGL f = 1/20), acceleration update region of ``N_U = N_A`` joints (RGL
    Sec. 7.2: "the size of the acceleration update region was equal to the size of the active
    region"). RGL's N_F is "the number of forces applied at each time step to the pendulum";
    here N_F constant world-frame :class:`articulated.PointForce` s (0.05 N along +y) on N_F
    distinct links spread evenly from the tip (N_F = 1: the last link). Reported per cell:
    median wall time of the hybrid steps (RGL Sec. 4.3), median wall time of the
    active-region updates (RGL Sec. 5.1, every 20th step), the mean over all steps (the
    amortized cost, RGL's "average running time") and the speed-up of that mean over a full
    DCA step and a full ABA step with the same forces.
(b) :func:`bench_fig5` - RGL Fig. 5: the 300-link pendulum under gravity alone from the same
    initial state with ``N_A`` = 300, 100, 50, 20, 1: snapshots of the chain (plot
    ``adaptive-pendulum.png``) and the tip's distance to the full model's tip.
(c) :func:`bench_fig6` - RGL Fig. 6: a 50-link pendulum whose last link is tied by a damped
    spring to a world point, with joint damping, run to equilibrium: all 50 joints active
    (the full model), 5 joints chosen breadth-first in the assembly tree and kept fixed,
    5 joints chosen adaptively (``max_active=5``, with ``max_update=5`` as RGL and with the
    whole body as update region). The equilibrium tip position of each (mean over the last
    quarter of the run) against the full model's (plot ``adaptive-spring.png``).
(d) :func:`bench_crowd` - RGL Fig. 1: ``crowd(200)`` (17,800 bodies, 19,000 DOF), free
    falling humanoids pushed by a few point forces, budget 10% of the joints (``max_active =
    max_update = nb // 10``) against the full DCA and ABA steps.

Method. Every adaptive run is a ``Simulator(model, dt, method="adaptive", ...)`` stepped by
``run(steps)``, which records the wall time of every step (``time.perf_counter``, force
evaluation, dynamics and integration included). A step whose index is a multiple of
``update_every`` is an active-region update, the others hybrid steps; the first update (step
0, which starts from the fully articulated body) is left out of the update median. The
reference "full DCA step" and "full ABA step" are the same semi-implicit Euler step (``qd +=
h qdd; q = integrate(q, qd, h)``) with the forces applied from :class:`StateKinematics`
and ``DCA(model).forward_dynamics`` or :func:`articulated.aba`; median over the steps.
Numba kernels are compiled (or loaded from the cache) by a warm-up run before any timing.
Ratios measured in the same run are what to compare across machines.

Run ``articulated bench adaptive [--quick] [--out DIR]``; ``--quick`` uses small models
(seconds; the smoke test ``tests/test_bench_adaptive.py``).
"""

from __future__ import annotations

import argparse
import time
from collections import deque
from pathlib import Path

import numpy as np

NA_TABLE = (1, 50, 100, 150, 200, 250, 300)
NF_TABLE = (1, 5, 10, 20, 50, 250)
NA_QUICK = (1, 10, 20, 30, 40, 50, 60)
NF_QUICK = (1, 5)
NA_FIG5 = (300, 100, 50, 20, 1)
NA_FIG5_QUICK = (60, 20, 10, 4, 1)
UPDATE_EVERY = 20
DT = 1e-3
FORCE_N = 0.05
"""Magnitude [N] of each Table 1 point force (world +y)."""

PAPER_TABLE1 = {  # RGL Table 1 [ms], rows N_F, columns N_A = 1 .. 250 and the DCA (300)
    1: (0.02, 0.51, 1.71, 2.97, 4.04, 5.40, 5.89),
    5: (0.07, 0.49, 1.54, 3.21, 4.34, 5.19, 5.89),
    10: (0.16, 0.73, 1.47, 3.03, 4.22, 5.16, 5.88),
    20: (0.40, 0.90, 1.60, 3.00, 4.72, 5.56, 5.90),
    50: (0.98, 1.40, 2.16, 3.58, 4.99, 5.59, 5.92),
    250: (1.83, 2.30, 2.97, 4.28, 5.43, 6.31, 6.04),
}

TARGETS = dict(na1=100.0, na50=8.0, crowd=10.0, fig6=1.0 / 3.0)
"""Issue 5 targets: speed-ups over the full DCA (pendulum-300, N_F = 1: N_A = 1 and 50;
crowd at 10%) and the largest adaptive / breadth-first equilibrium-error ratio (Fig. 6)."""


# ------------------------------------------------------------------------- helpers

def initial_state(model, seed=0):
    """The pendulum start of Fig. 5 / Table 1: joint 0 swung by 1.2 rad, every other joint
    perturbed uniformly in [-0.05, 0.05] rad (seeded), at rest."""
    rng = np.random.default_rng(seed)
    q = model.neutral()
    q[1:] = rng.uniform(-0.05, 0.05, model.nq - 1)
    q[0] = 1.2
    return q


def spread_forces(model, nf, magnitude=FORCE_N):
    """``nf`` world-frame point forces (``magnitude`` along +y) at the origins of ``nf``
    distinct links spread evenly from the tip towards the top (nf = 1: the last link)."""
    from . import PointForce

    n = model.nb
    bodies = np.unique(np.round(np.linspace(n - 1, 0, min(nf, n))).astype(int))
    return [PointForce(int(b), (0.0, magnitude, 0.0)) for b in bodies[::-1]]


def split_times(wall, update_every=UPDATE_EVERY, first_step=0):
    """Median hybrid-step and region-update times [s] and the mean over all steps of a
    ``wall`` array from :meth:`AdaptiveSimulator.run` (region updates at step indices that
    are multiples of ``update_every``; the very first step, from the fully articulated
    body, is left out of the update median when others exist)."""
    k = first_step + np.arange(wall.size)
    upd = k % update_every == 0
    u = wall[upd & (k > 0)] if np.any(upd & (k > 0)) else wall[upd]
    return dict(hybrid=float(np.median(wall[~upd])) if np.any(~upd) else float("nan"),
                update=float(np.median(u)) if u.size else float("nan"),
                mean=float(wall.mean()), updates=int(upd.sum()))


def reference_run(model, q0, qd0, forces, steps, method="dca", dt=DT, dca=None):
    """Semi-implicit Euler with the full DCA (or ABA): ``qd += h qdd``, ``q =
    integrate(q, qd, h)``, forces applied from :class:`StateKinematics`. Returns (q, qd,
    wall (steps,) [s])."""
    from . import DCA, aba, integrate
    from .simulation.forces import StateKinematics

    for f in forces:
        if hasattr(f, "bind"):
            f.bind(model)
    if method == "dca":
        dca = dca or DCA(model)
        fd = dca.forward_dynamics
    else:
        def fd(q, qd, tau, f_ext):
            return aba(model, q, qd, tau, f_ext)
    q, qd = q0.copy(), qd0.copy()
    tau = np.zeros(model.nv)
    f_ext = np.zeros((model.nb, 6))
    wall = np.zeros(steps)
    for s in range(steps):
        t0 = time.perf_counter()
        tau[:] = 0.0
        f_ext[:] = 0.0
        if forces:
            kin = StateKinematics(model, q, qd)
            for f in forces:
                f.apply(model, s * dt, q, qd, tau, f_ext, kin)
        qdd = fd(q, qd, tau, f_ext)
        qd = qd + dt * qdd
        q = integrate(model, q, qd, dt)
        wall[s] = time.perf_counter() - t0
    return q, qd, wall


def _adaptive(model, q0, n_active, forces=(), n_update="same", dt=DT, qd0=None,
              update_every=UPDATE_EVERY):
    from . import Simulator

    mu = n_active if n_update == "same" else n_update
    return Simulator(model, dt, method="adaptive", max_active=n_active, max_update=mu,
                     update_every=update_every, q0=q0, qd0=qd0, forces=list(forces))


def _warm_up():
    """Compile / load every numba kernel the timings use (small pendulum, one force)."""
    from . import DCA, aba, models

    m = models.pendulum(12)
    q0 = initial_state(m)
    for na in (12, 3):
        _adaptive(m, q0, na, spread_forces(m, 2)).run(2 * UPDATE_EVERY + 1)
    sim = _adaptive(m, q0, 2)
    sim.impulse_columns = 0                  # the momentum-projection path too
    sim.run(UPDATE_EVERY + 1)
    reference_run(m, q0, np.zeros(m.nv), spread_forces(m, 2), 3, "dca", dca=DCA(m))
    reference_run(m, q0, np.zeros(m.nv), spread_forces(m, 2), 3, "aba")
    aba(m, q0, np.zeros(m.nv), np.zeros(m.nv))


# ------------------------------------------------------------------------- (a) Table 1

def bench_table1(n=300, steps=200, *, na_values=NA_TABLE, nf_values=NF_TABLE, log=print):
    """RGL Table 1 on ``pendulum(n)``: per (N_F, N_A) the hybrid-step, region-update and
    mean step times of the adaptive simulator (``max_active = max_update = N_A``, update
    every 20 steps), and per N_F the full DCA and ABA step times; ``steps`` steps each from
    :func:`initial_state`. For N_A = n the final state is compared with the DCA run's
    (``err_full``: max |q - q_DCA|, identical dynamics up to round-off)."""
    from . import DCA, models

    model = models.pendulum(n)
    q0 = initial_state(model)
    qd0 = np.zeros(model.nv)
    dca = DCA(model)
    rows = []
    for nf in nf_values:
        qf, _, wd = reference_run(model, q0, qd0, spread_forces(model, nf), steps, "dca",
                                  dca=dca)
        _, _, wa = reference_run(model, q0, qd0, spread_forces(model, nf), steps, "aba")
        row = dict(nf=nf, dca=float(np.median(wd)), aba=float(np.median(wa)), cells=[])
        for na in na_values:
            sim = _adaptive(model, q0, na, spread_forces(model, nf))
            tr = sim.run(steps, record_every=steps)
            c = split_times(tr.wall)
            c.update(na=na, active=int(tr.active[-1]),
                     speedup_dca=row["dca"] / c["mean"], speedup_aba=row["aba"] / c["mean"],
                     hybrid_speedup_dca=row["dca"] / c["hybrid"])
            if na >= n:
                c["err_full"] = float(np.abs(sim.q - qf).max())
            row["cells"].append(c)
        rows.append(row)
        log(f"table 1, N_F = {nf}: DCA {row['dca'] * 1e3:.3f} ms/step, " + ", ".join(
            f"N_A={c['na']}: {c['mean'] * 1e3:.3f}" for c in row["cells"]))
    return dict(n=n, steps=steps, update_every=UPDATE_EVERY, rows=rows)


# ------------------------------------------------------------------------- (b) Fig. 5

def chain_points(model, q):
    """(nb + 1, 3) joint positions of a pendulum and its tip [m]."""
    from . import forward_kinematics, point_position

    p = forward_kinematics(model, q)[1]
    L = float(-model.jnt_Xtree_r[1, 2]) if model.nb > 1 else 0.1
    tip = point_position(model, q, model.nb - 1, (0.0, 0.0, -abs(L)))
    return np.vstack([p, tip[None]])


def bench_fig5(n=300, steps=2000, *, na_values=NA_FIG5, frames=8, log=print):
    """RGL Fig. 5: ``pendulum(n)`` under gravity from :func:`initial_state` with each N_A:
    chain snapshots at ``frames`` instants, the tip distance to the full model's at the end,
    the mean time per step and the mean kinetic energy."""
    from . import models

    model = models.pendulum(n)
    q0 = initial_state(model)
    qf, _, wd = reference_run(model, q0, np.zeros(model.nv), [], steps, "dca")
    ref_tip = chain_points(model, qf)[-1]
    every = max(1, steps // frames)
    rows = []
    for na in na_values:
        sim = _adaptive(model, q0, na)
        tr = sim.run(steps, record_every=every)
        snaps = [chain_points(model, q) for q in tr.q]
        tips = np.array([s[-1] for s in snaps])
        rows.append(dict(na=na, t=tr.t, snaps=snaps, tips=tips, kinetic=tr.kinetic,
                         tip_err=float(np.linalg.norm(snaps[-1][-1] - ref_tip)),
                         q_err=float(np.abs(sim.q - qf).max()), **split_times(tr.wall)))
        log(f"fig. 5, N_A = {na}: {tr.wall.mean() * 1e3:.3f} ms/step, final tip "
            f"{rows[-1]['tip_err']:.3f} m from the full model's")
    return dict(n=n, steps=steps, dt=DT, dca=float(np.median(wd)), rows=rows)


def plot_fig5(res, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = res["rows"]
    fig, axes = plt.subplots(1, len(rows), figsize=(3.0 * len(rows), 3.6), sharey=True)
    cmap = plt.get_cmap("viridis")
    for ax, r in zip(np.atleast_1d(axes), rows):
        T = max(r["t"][-1], 1e-300)
        for t, s in zip(r["t"], r["snaps"]):
            ax.plot(s[:, 1], s[:, 2], "-", lw=1.0, color=cmap(t / T))
        ax.plot(r["tips"][:, 1], r["tips"][:, 2], "k.", ms=3)
        ax.set_aspect("equal", adjustable="datalim")
        ax.set_title(f"N_A = {r['na']}\n{r['mean'] * 1e3:.2f} ms/step")
        ax.set_xlabel("y [m]")
    np.atleast_1d(axes)[0].set_ylabel("z [m]")
    fig.suptitle(f"pendulum-{res['n']} under gravity, same start, {res['steps']} steps of "
                 f"{res['dt']:g} s (colour: time; full DCA {res['dca'] * 1e3:.2f} ms/step)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return Path(path)


# ------------------------------------------------------------------------- (c) Fig. 6

SPRING = dict(anchor=(0.0, 3.0, -3.0), stiffness=20.0, damping=5.0, joint_damping=0.05)
"""Fig. 6 scene: spring from the tip of the last link to ``anchor`` [m] (in the y-z plane,
the plane of the x-axis joints), stiffness [N/m], spring damping [N s/m], joint damping
[N m s/rad]."""


def breadth_first_joints(tree, k):
    """The first ``k`` joints of a breadth-first (level by level) traversal of the assembly
    tree from its root(s) (RGL Fig. 6(c))."""
    out, queue = [], deque(int(r) for r in tree.roots)
    while queue and len(out) < k:
        i = queue.popleft()
        if tree.node_joint[i] < 0:
            continue
        out.append(int(tree.node_joint[i]))
        for c in (tree.node_A[i], tree.node_B[i]):
            if c >= 0:
                queue.append(int(c))
    return out


def _spring_forces(model, scene):
    from . import JointDamping, Spring

    L = abs(float(model.jnt_Xtree_r[1, 2]))
    return [Spring(model.nb - 1, (0.0, 0.0, -L), scene["anchor"], scene["stiffness"],
                   damping=scene["damping"]),
            JointDamping(scene["joint_damping"])]


def _fixed_region_run(model, forces, steps, active, dt=DT, record_every=100):
    """Semi-implicit Euler with :meth:`AdaptiveDynamics.forward_dynamics` on a fixed active
    set (``None``: all joints, the full model). Returns (q, recorded q list)."""
    from . import AdaptiveDynamics, integrate
    from .simulation.forces import StateKinematics

    ad = AdaptiveDynamics(model)
    for f in forces:
        f.bind(model)
    q, qd = model.neutral(), np.zeros(model.nv)
    tau, f_ext = np.zeros(model.nv), np.zeros((model.nb, 6))
    rec = []
    for s in range(steps):
        tau[:] = 0.0
        f_ext[:] = 0.0
        kin = StateKinematics(model, q, qd)
        for f in forces:
            f.apply(model, s * dt, q, qd, tau, f_ext, kin)
        qdd = ad.forward_dynamics(q, qd, tau, f_ext, active=active)
        qd = qd + dt * qdd
        q = integrate(model, q, qd, dt)
        if (s + 1) % record_every == 0:
            rec.append(q.copy())
    return q, rec, ad


def bench_fig6(n=50, steps=20_000, *, k=5, scene=SPRING, log=print):
    """RGL Fig. 6: equilibrium of ``pendulum(n)`` with the spring scene :data:`SPRING`:
    full model, ``k`` breadth-first joints (fixed), ``k`` adaptive joints (``max_update = k``
    and whole-body update region). Equilibrium = mean chain over the last quarter of the
    run; error = distance of the tip (and RMS over all joint positions) to the full model's."""
    from . import models

    model = models.pendulum(n)
    record = 100
    _, rec_full, ad = _fixed_region_run(model, _spring_forces(model, scene), steps, None,
                                        record_every=record)
    bfs = breadth_first_joints(ad.tree, k)
    mask = np.zeros(model.nb, dtype=np.bool_)
    mask[bfs] = True
    _, rec_bfs, _ = _fixed_region_run(model, _spring_forces(model, scene), steps, mask,
                                      record_every=record)
    runs = dict(full=(rec_full, list(range(n))), breadth_first=(rec_bfs, bfs))
    for name, mu in (("adaptive", k), ("adaptive_U_all", None)):
        sim = _adaptive(model, model.neutral(), k, _spring_forces(model, scene), n_update=mu)
        rec = []
        for _ in range(steps // record):
            sim.run(record, record_every=record)
            rec.append(sim.q.copy())
        runs[name] = (rec, [int(j) for j in np.flatnonzero(sim.active)])
    tail = lambda rec: rec[len(rec) - max(1, len(rec) // 4):]
    res = dict(n=n, steps=steps, dt=DT, k=k, scene=dict(scene), rows={})
    ref = np.mean([chain_points(model, q) for q in tail(runs["full"][0])], axis=0)
    p0 = chain_points(model, model.neutral())
    for name, (rec, joints) in runs.items():
        pts = np.mean([chain_points(model, q) for q in tail(rec)], axis=0)
        spread = float(np.std([chain_points(model, q)[-1] for q in tail(rec)], axis=0).max())
        res["rows"][name] = dict(points=pts, joints=joints,
                                 tip_err=float(np.linalg.norm(pts[-1] - ref[-1])),
                                 rms_err=float(np.sqrt(np.mean(np.sum((pts - ref) ** 2, 1)))),
                                 tip_spread=spread)
    res["p0"] = p0
    rb = res["rows"]["breadth_first"]["tip_err"]
    res["ratio"] = res["rows"]["adaptive"]["tip_err"] / max(rb, 1e-300)
    res["ratio_U_all"] = res["rows"]["adaptive_U_all"]["tip_err"] / max(rb, 1e-300)
    log(f"fig. 6: tip error breadth-first {rb:.4f} m, adaptive "
        f"{res['rows']['adaptive']['tip_err']:.4f} m (ratio {res['ratio']:.2f}), adaptive "
        f"with whole-body update region {res['rows']['adaptive_U_all']['tip_err']:.4f} m")
    return res


def plot_fig6(res, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [("full", f"(b) all {res['n']} joints active"),
             ("breadth_first", f"(c) {res['k']} joints, breadth-first"),
             ("adaptive", f"(d) {res['k']} joints, adaptive (N_U = {res['k']})"),
             ("adaptive_U_all", f"{res['k']} joints, adaptive (N_U = all)")]
    a = res["scene"]["anchor"]
    ref = res["rows"]["full"]["points"]
    fig, axes = plt.subplots(1, len(names), figsize=(3.4 * len(names), 3.8), sharey=True)
    for ax, (key, title) in zip(axes, names):
        r = res["rows"][key]
        p = r["points"]
        ax.plot(res["p0"][:, 1], res["p0"][:, 2], ":", color="0.7", lw=1)
        if key != "full":
            ax.plot(ref[:, 1], ref[:, 2], "-", color="0.6", lw=1)
        ax.plot(p[:, 1], p[:, 2], "b-", lw=1.5)
        j = np.asarray(r["joints"], dtype=int)
        if j.size < len(p) - 1:
            ax.plot(p[j, 1], p[j, 2], "ro", ms=4)
        ax.plot([p[-1, 1], a[1]], [p[-1, 2], a[2]], "g--", lw=1)
        ax.plot(a[1], a[2], "gs", ms=5)
        ax.set_aspect("equal", adjustable="datalim")
        err = "" if key == "full" else f"\ntip error {r['tip_err'] * 100:.1f} cm"
        ax.set_title(title + err, fontsize=9)
        ax.set_xlabel("y [m]")
    axes[0].set_ylabel("z [m]")
    fig.suptitle(f"pendulum-{res['n']} with a spring to a world point: equilibrium "
                 f"(red: active joints; grey: full model; dotted: start)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return Path(path)


# ------------------------------------------------------------------------- (d) crowd

def crowd_forces(model, characters, n_push=10, magnitude=400.0, seed=0):
    """``n_push`` world point forces (``magnitude`` N, horizontal, away from a camera at the
    grid's -y side) on the torsos (body 2 of each humanoid: ``89 c + 2``) of characters
    chosen at random (seeded)."""
    from . import PointForce

    per = model.nb // characters
    rng = np.random.default_rng(seed)
    chosen = np.sort(rng.choice(characters, size=min(n_push, characters), replace=False))
    return [PointForce(int(per * c + 2), (0.0, magnitude, 0.0)) for c in chosen]


def bench_crowd(characters=200, steps=60, *, fraction=0.1, n_push=10, log=print):
    """RGL Fig. 1: ``crowd(characters)`` pushed by ``n_push`` forces; adaptive with
    ``max_active = max_update = fraction * nb`` vs full DCA and ABA steps."""
    from . import DCA, models

    t0 = time.perf_counter()
    model, q0 = models.crowd(characters, return_configuration=True)
    build = time.perf_counter() - t0
    qd0 = np.zeros(model.nv)
    budget = max(1, int(fraction * model.nb))
    ref_steps = max(3, min(steps, 20))
    dca = DCA(model)
    _, _, wd = reference_run(model, q0, qd0, crowd_forces(model, characters, n_push),
                             ref_steps, "dca", dca=dca)
    _, _, wa = reference_run(model, q0, qd0, crowd_forces(model, characters, n_push),
                             ref_steps, "aba")
    del dca
    t0 = time.perf_counter()
    sim = _adaptive(model, q0, budget, crowd_forces(model, characters, n_push))
    setup = time.perf_counter() - t0
    tr = sim.run(steps, record_every=steps)
    c = split_times(tr.wall)
    res = dict(characters=characters, nb=model.nb, dof=model.nv, budget=budget,
               steps=steps, n_push=n_push, build_s=build, setup_s=setup,
               dca=float(np.median(wd)), aba=float(np.median(wa)), active=int(tr.active[-1]),
               update_region=int(tr.update_region[-1]), rigidified=int(tr.rigidified[-1]),
               **c)
    res["speedup_dca"] = res["dca"] / res["mean"]
    res["hybrid_speedup_dca"] = res["dca"] / res["hybrid"]
    res["speedup_aba"] = res["aba"] / res["mean"]
    log(f"crowd({characters}): DCA {res['dca'] * 1e3:.1f} ms/step, adaptive hybrid "
        f"{res['hybrid'] * 1e3:.1f}, update {res['update'] * 1e3:.1f}, mean "
        f"{res['mean'] * 1e3:.1f} ms/step (x{res['speedup_dca']:.2f})")
    return res


# ------------------------------------------------------------------------- report

def _ms(x):
    return "n/a" if x is None or not np.isfinite(x) else f"{x * 1e3:.3f}"


def format_report(res) -> str:
    lines = []
    m = res.get("machine")
    if m:
        lines.append(f"machine: {m.get('cpu')} ({m.get('cores')} cores), Python "
                     f"{m.get('python')}, numpy {m.get('numpy')}, numba {m.get('numba')}, "
                     f"commit {m.get('commit')}, {m.get('date')}, load {m.get('load_start')}")
        lines.append("")
    t1 = res["table1"]
    n = t1["n"]
    lines.append(f"### Table 1: pendulum-{n}, update every {t1['update_every']} steps, "
                 f"N_U = N_A, {t1['steps']} steps per cell (ms per step)")
    lines.append("")
    lines.append("| N_F | N_A | hybrid step | region update | mean (amortized) | full DCA step "
                 "| full ABA step | speed-up vs DCA (mean) | vs DCA (hybrid only) | vs ABA "
                 "(mean) | RGL Table 1 |")
    lines.append("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for row in t1["rows"]:
        paper = PAPER_TABLE1.get(row["nf"]) if n == 300 else None
        for i, c in enumerate(row["cells"]):
            p = "" if paper is None or i >= len(paper) else f"{paper[i]:.2f}"
            lines.append(f"| {row['nf']} | {c['na']} | {_ms(c['hybrid'])} | "
                         f"{_ms(c['update'])} | {_ms(c['mean'])} | {_ms(row['dca'])} | "
                         f"{_ms(row['aba'])} | {c['speedup_dca']:.2f} | "
                         f"{c['hybrid_speedup_dca']:.2f} | {c['speedup_aba']:.2f} | {p} |")
    errs = [c["err_full"] for r in t1["rows"] for c in r["cells"] if "err_full" in c]
    if errs:
        lines.append("")
        lines.append(f"N_A = {n} (every joint active) vs the full-DCA run with the same "
                     f"forces, final q: max abs(dq) = {max(errs):.1e} rad (the adaptive "
                     f"simulator evaluates the forces at the previous step's poses; without "
                     f"forces see Fig. 5)")
    f5 = res.get("fig5")
    if f5:
        lines.append("")
        lines.append(f"### Fig. 5: pendulum-{f5['n']} under gravity, {f5['steps']} steps "
                     f"(full DCA {_ms(f5['dca'])} ms/step)")
        lines.append("")
        lines.append("| N_A | hybrid step | region update | mean ms/step | final tip distance "
                     "to the full model [m] | final max abs(q - q_DCA) [rad] | kinetic energy at "
                     "the end [J] |")
        lines.append("|---:|---:|---:|---:|---:|---:|---:|")
        for r in f5["rows"]:
            lines.append(f"| {r['na']} | {_ms(r['hybrid'])} | {_ms(r['update'])} | "
                         f"{_ms(r['mean'])} | {r['tip_err']:.3f} | {r['q_err']:.1e} | "
                         f"{r['kinetic'][-1]:.3f} |")
    f6 = res.get("fig6")
    if f6:
        lines.append("")
        lines.append(f"### Fig. 6: pendulum-{f6['n']} with a spring, {f6['steps']} steps of "
                     f"{f6['dt']:g} s, equilibrium = mean of the last quarter")
        lines.append("")
        lines.append("| run | active joints (end) | tip error [m] | RMS joint-position error "
                     "[m] | tip wobble (std) [m] |")
        lines.append("|---|---|---:|---:|---:|")
        for key, label in (("full", f"all {f6['n']} joints"),
                           ("breadth_first", f"{f6['k']} breadth-first (fixed)"),
                           ("adaptive", f"{f6['k']} adaptive, N_U = {f6['k']}"),
                           ("adaptive_U_all", f"{f6['k']} adaptive, N_U = all")):
            r = f6["rows"][key]
            j = "all" if key == "full" else ", ".join(map(str, r["joints"]))
            lines.append(f"| {label} | {j} | {r['tip_err']:.4f} | {r['rms_err']:.4f} | "
                         f"{r['tip_spread']:.4f} |")
    cr = res.get("crowd")
    if cr:
        lines.append("")
        lines.append(f"### Crowd: crowd({cr['characters']}) = {cr['nb']} bodies, {cr['dof']} "
                     f"DOF, {cr['n_push']} push forces, budget N_A = N_U = {cr['budget']} "
                     f"joints, {cr['steps']} steps (ms per step)")
        lines.append("")
        lines.append("| hybrid step | region update | mean (amortized) | full DCA step | full "
                     "ABA step | speed-up vs DCA (mean) | vs DCA (hybrid only) | rigidified at "
                     "last update |")
        lines.append("|---:|---:|---:|---:|---:|---:|---:|---:|")
        lines.append(f"| {_ms(cr['hybrid'])} | {_ms(cr['update'])} | {_ms(cr['mean'])} | "
                     f"{_ms(cr['dca'])} | {_ms(cr['aba'])} | {cr['speedup_dca']:.2f} | "
                     f"{cr['hybrid_speedup_dca']:.2f} | {cr['rigidified']} |")
    lines.append("")
    lines.extend(_targets(res))
    if res.get("total_s") is not None:
        lines.append(f"total {res['total_s']:.0f} s; peak RSS "
                     f"{res.get('peak_rss_bytes', 0) / 1e9:.2f} GB")
    return "\n".join(lines)


def _targets(res):
    out = []
    t1 = res["table1"]
    row = next((r for r in t1["rows"] if r["nf"] == 1), None)
    if row is not None:
        cells = {c["na"]: c for c in row["cells"]}
        for na, key in ((1, "na1"), (50, "na50")):
            if na in cells:
                s = cells[na]["speedup_dca"]
                out.append(f"target pendulum-{t1['n']}, N_F = 1, N_A = {na}: >= "
                           f"{TARGETS[key]:g}x the full DCA: x{s:.2f} (hybrid steps alone "
                           f"x{cells[na]['hybrid_speedup_dca']:.2f}) "
                           f"{'met' if s >= TARGETS[key] else 'NOT met'}")
    cr = res.get("crowd")
    if cr:
        s = cr["speedup_dca"]
        out.append(f"target crowd({cr['characters']}) at 10%: >= {TARGETS['crowd']:g}x the "
                   f"full DCA: x{s:.2f} {'met' if s >= TARGETS['crowd'] else 'NOT met'}")
    f6 = res.get("fig6")
    if f6:
        r = f6["ratio"]
        out.append(f"target Fig. 6: adaptive / breadth-first tip error <= 1/3: {r:.2f} "
                   f"{'met' if r <= TARGETS['fig6'] else 'NOT met'}")
    return out


def bench_adaptive(quick=False, out="docs", *, log=print) -> dict:
    """Run (a)-(d) and print the report (Markdown tables); write ``adaptive-pendulum.png``
    and ``adaptive-spring.png`` into ``out``.

    quick : bool - pendulum-60 (N_A scaled to 1..60, N_F in {1, 5}, 60 steps), Fig. 5 on
        pendulum-60, Fig. 6 on pendulum-20 for 4,000 steps, crowd(3): seconds.
    Returns dict(table1, fig5, fig6, crowd, machine, peak_rss_bytes, total_s, figures,
    report)."""
    from .bench import machine_info, peak_rss_bytes

    t0 = time.perf_counter()
    outdir = Path(out)
    outdir.mkdir(parents=True, exist_ok=True)
    res = dict(machine=machine_info())
    _warm_up()
    if quick:
        res["table1"] = bench_table1(60, 60, na_values=NA_QUICK, nf_values=NF_QUICK, log=log)
        res["fig5"] = bench_fig5(60, 600, na_values=NA_FIG5_QUICK, log=log)
        res["fig6"] = bench_fig6(20, 4000, k=3, log=log)
        res["crowd"] = bench_crowd(3, 41, n_push=2, log=log)
    else:
        res["table1"] = bench_table1(log=log)
        res["fig5"] = bench_fig5(log=log)
        res["fig6"] = bench_fig6(log=log)
        res["crowd"] = bench_crowd(log=log)
    res["figures"] = [plot_fig5(res["fig5"], outdir / "adaptive-pendulum.png"),
                      plot_fig6(res["fig6"], outdir / "adaptive-spring.png")]
    res["peak_rss_bytes"] = peak_rss_bytes()
    res["total_s"] = time.perf_counter() - t0
    res["report"] = format_report(res)
    log(res["report"])
    log("wrote " + ", ".join(str(p) for p in res["figures"]))
    return res


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        prog="articulated bench adaptive",
        description="Redon, Galoppo & Lin (2005) Sec. 7 benchmarks with our adaptive "
                    "dynamics next to our full DCA and ABA: pendulum Table 1, Fig. 5, spring "
                    "Fig. 6, crowd Fig. 1 (see docs/adaptive.md).")
    p.add_argument("--quick", action="store_true", help="small models, few steps (seconds)")
    p.add_argument("--out", default="docs", help="folder for the PNG figures (default docs)")
    a = p.parse_args(argv)
    bench_adaptive(a.quick, a.out)
    return 0


if __name__ == "__main__":  # pragma: no cover
    import sys

    sys.exit(main(sys.argv[1:]))
