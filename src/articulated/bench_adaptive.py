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
    active-region updates (RGL Sec. 5.1, every 20th step), the mean over all steps but the
    first (the amortized cost, RGL's "average running time"; the first step converts the
    fully articulated start and builds the tensors of every passive node once, O(n): set-up,
    reported separately) and the speed-up of that mean over a full DCA step and a full ABA
    step with the same forces.
(b) :func:`bench_fig5` - RGL Fig. 5: the 300-link pendulum under gravity alone from the same
    initial state with ``N_A`` = 300, 100, 50, 20, 1: snapshots of the chain (plot
    ``adaptive-pendulum.png``) and the tip's distance to the full model's tip.
(c) :func:`bench_fig6` - RGL Fig. 6: a 50-link pendulum whose last link is tied by a damped
    spring to a world point, with joint damping, run to equilibrium: all 50 joints active
    (the full model), 5 joints chosen breadth-first in the assembly tree and kept fixed,
    5 joints chosen adaptively (``max_active=5``) with the settings of
    :data:`FIG6_VARIANTS`: identity metric weights with ``max_update=5`` as RGL and with the
    whole body as update region, and with per-joint SPD weights from the mass each joint
    carries (:func:`subtree_mass_weights`) or from its joint-space inertia
    (:func:`joint_inertia_weights`). The equilibrium tip position of each (mean over the last
    quarter of the run) against the full model's (plot ``adaptive-spring.png``); and, by
    potential minimisation, the static equilibrium of every possible fixed 5-joint active
    region with straight rigid segments (:func:`static_equilibria`: what the choice of the
    joints alone can achieve).
(d) :func:`bench_crowd` - RGL Fig. 1: ``crowd(200)`` (17,800 bodies, 19,000 DOF), free
    falling humanoids (no ground), 10 of them pushed at the lower back by 400 N along +y
    (away from the camera) for the whole run; per-character joint budgets inversely
    proportional to the distance to a camera point (:func:`distance_budgets`, each >= 1,
    10% of the joints in all, ``max_update`` a tenth of that total, :data:`CROWD_UPDATE`;
    and again with 10% of the degrees of freedom, :func:`crowd_budget_total`),
    300 steps against a full-DCA run of the same scene (its median step is the reference;
    per character: distance of pelvis, centre of mass and farthest body to the full-DCA run
    at the end, linear momentum against the exact impulse) and full ABA steps (plot
    ``adaptive-crowd.png``).

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
    """Median hybrid-step and region-update times [s] and the mean over the steps of a
    ``wall`` array from :meth:`AdaptiveSimulator.run` (region updates at step indices that
    are multiples of ``update_every``). The very first step of a run (``first_step == 0``:
    the conversion from the fully articulated start, which builds the tensors of every
    passive node once, O(n)) is set-up, like the solver's construction: it is left out of
    the update median and of the mean when other steps exist, and returned as ``first``."""
    k = first_step + np.arange(wall.size)
    upd = k % update_every == 0
    steady = k > 0 if wall.size > 1 else np.ones(wall.size, dtype=bool)
    u = wall[upd & steady] if np.any(upd & steady) else wall[upd]
    return dict(hybrid=float(np.median(wall[~upd])) if np.any(~upd) else float("nan"),
                update=float(np.median(u)) if u.size else float("nan"),
                mean=float(wall[steady].mean()), updates=int(upd.sum()),
                first=float(wall[0]) if first_step == 0 else float("nan"))


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
              update_every=UPDATE_EVERY, **kw):
    from . import Simulator

    mu = n_active if n_update == "same" else n_update
    return Simulator(model, dt, method="adaptive", max_active=n_active, max_update=mu,
                     update_every=update_every, q0=q0, qd0=qd0, forces=list(forces), **kw)


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
    link = scene.get("link", -1) % model.nb
    return [Spring(link, (0.0, 0.0, -L), scene["anchor"], scene["stiffness"],
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


def subtree_mass_weights(model):
    """(nb, 6, 6) metric weights ``m_i^sub 1``: each joint weighted by the mass it carries
    (its body and all bodies below it), so that a joint moving more of the body counts
    more. Constant, hence a valid RGL Sec. 5.2 weight (SPD, at most a function of q_i)."""
    m = model.body_mass.astype(np.float64).copy()
    for b in range(model.nb - 1, -1, -1):               # children after parents
        if model.body_parent[b] >= 0:
            m[model.body_parent[b]] += m[b]
    return np.eye(6)[None] * m[:, None, None]


def joint_inertia_weights(model, q=None):
    """(nb, 6, 6) metric weights ``M_ii``: the diagonal block of the joint-space inertia
    matrix (CRBA) of each joint at the fixed configuration ``q`` (neutral), i.e. the
    inertia of everything below the joint about it: ``qd_i^T M_ii qd_i`` is twice the
    kinetic energy of a motion of joint i alone. Constant, hence a valid RGL weight."""
    from . import crba

    M = crba(model, model.neutral() if q is None else q)
    W = np.tile(np.eye(6), (model.nb, 1, 1))
    for j in range(model.nb):
        a, d = int(model.jnt_vadr[j]), int(model.jnt_nv[j])
        if d:
            W[j, :d, :d] = M[a:a + d, a:a + d]
    return W


FIG6_VARIANTS = (
    ("adaptive", "identity weights, N_U = k (RGL)", dict(n_update="k")),
    ("adaptive_U_all", "identity weights, N_U = all", dict(n_update=None)),
    ("adaptive_mass", "subtree-mass weights, N_U = k", dict(n_update="k", weights="mass")),
    ("adaptive_inertia", "joint-inertia weights M_ii, N_U = k",
     dict(n_update="k", weights="inertia")),
)
"""Fig. 6 adaptive runs: key, label, settings (``weights``: the same SPD weights for the
acceleration and the velocity metric, :func:`subtree_mass_weights` or
:func:`joint_inertia_weights`; identity where absent). Update every 20 steps in all."""


def _root_subtrees(tree, k):
    """Every set of ``k`` joints forming a subtree of the assembly tree that contains its
    root (the possible active regions of ``k`` joints, RGL Sec. 4.1), as sorted lists."""
    def kids(i):
        return [int(c) for c in (tree.node_A[i], tree.node_B[i])
                if c >= 0 and tree.node_joint[c] >= 0]

    out = set()

    def grow(nodes, frontier):
        if len(nodes) == k:
            out.add(frozenset(nodes))
            return
        for c in frontier:
            grow(nodes | {c}, (frontier - {c}) | set(kids(c)))

    for r in tree.roots:
        if tree.node_joint[r] >= 0:
            grow(frozenset({int(r)}), frozenset(kids(int(r))))
    return sorted(sorted(int(tree.node_joint[i]) for i in S) for S in out)


def static_equilibria(model, forces, tree, k):
    """Static equilibria (minimum of gravity + spring potential, scipy BFGS) of the full
    model and of every ``k``-joint hybrid body whose active joints form a subtree containing
    the root and whose rigidified joints stay straight (neutral): the best any fixed choice
    of ``k`` joints can do when rigidified joints keep their initial angles. Joints with one
    coordinate (the pendulum). Also the equilibrium with every joint that some ``k``-joint
    region contains free at once (``union``): what a run that keeps moving its region could
    reach by relaxing each region in turn and freezing its joints bent (block coordinate
    descent), since no other joint can ever move. Returns dict(full=points, sets=[dict(joints,
    points, tip_err, rms_err)] sorted by tip error (distances to the full model's static
    equilibrium), union=dict(joints, points, tip_err, rms_err))."""
    from scipy.optimize import minimize

    from .algorithms.kinematics import energy

    zero = np.zeros(model.nv)
    cons = [f for f in forces if getattr(f, "conservative", False)]

    def potential(q):
        return energy(model, q, zero)[1] + sum(f.potential(model, q) for f in cons)

    def equilibrium(coords):
        q0 = model.neutral()

        def V(x):
            q = q0.copy()
            q[coords] = x
            return potential(q)

        x = minimize(V, q0[coords], method="BFGS", options=dict(gtol=1e-9)).x
        q = q0.copy()
        q[coords] = x
        return chain_points(model, q)

    full = equilibrium(np.arange(model.nq))

    def row(joints):
        p = equilibrium(model.jnt_qadr[joints])
        return dict(joints=joints, points=p, tip_err=float(np.linalg.norm(p[-1] - full[-1])),
                    rms_err=float(np.sqrt(np.mean(np.sum((p - full) ** 2, 1)))))

    subsets = _root_subtrees(tree, k)
    sets = sorted((row(joints) for joints in subsets), key=lambda r: r["tip_err"])
    union = row(sorted(set().union(*map(set, subsets))))
    return dict(full=full, sets=sets, union=union)


FIG6_LINKS = (6, 12, 18, 24, 30, 36, 42, 49)
"""Attachment links of the Fig. 6 sweep (:func:`bench_fig6_sweep`): RGL attach "one of the
links" without saying which; 49 is the tip (the scene of :func:`bench_fig6`)."""


def spring_scene(model, link, scene=SPRING):
    """:data:`SPRING` with the spring on ``link`` and the anchor 3 m to the side (+y) and
    2 m above the link's end hanging straight down (for the tip of pendulum-50: the
    anchor (0, 3, -3) of :data:`SPRING`)."""
    L = abs(float(model.jnt_Xtree_r[1, 2]))
    return dict(scene, link=int(link), anchor=(0.0, 3.0, -(int(link) + 1) * L + 2.0))


def bench_fig6_sweep(n=50, steps=20_000, *, k=5, links=FIG6_LINKS, log=print):
    """RGL Fig. 6 over the attachment link: for each link of ``links`` the spring scene of
    :func:`spring_scene` run to equilibrium with all joints, ``k`` breadth-first joints and
    ``k`` adaptive joints with RGL's settings (identity weights, N_U = k, f = 1/20): the
    tip and RMS equilibrium errors against the full model and their ratios to the
    breadth-first ones. Returns dict(n, steps, k, rows=[dict(link, anchor, bfs_tip,
    bfs_rms, tip, rms, ratio, rms_ratio, joints)])."""
    from . import models

    model = models.pendulum(n)
    rows = []
    for link in links:
        sc = spring_scene(model, link)
        r = bench_fig6(n, steps, k=k, scene=sc, variants=FIG6_VARIANTS[:1], static=False,
                       log=lambda *a: None)
        a, b = r["rows"]["adaptive"], r["rows"]["breadth_first"]
        rows.append(dict(link=int(link), anchor=sc["anchor"], bfs_tip=b["tip_err"],
                         bfs_rms=b["rms_err"], tip=a["tip_err"], rms=a["rms_err"],
                         ratio=a["ratio"], rms_ratio=a["rms_ratio"], joints=a["joints"]))
        log(f"fig. 6 sweep, spring on link {link}: tip error breadth-first "
            f"{b['tip_err']:.4f} m, adaptive {a['tip_err']:.4f} m (x{a['ratio']:.2f})")
    return dict(n=n, steps=steps, k=k, rows=rows)


def bench_fig6(n=50, steps=20_000, *, k=5, scene=SPRING, variants=FIG6_VARIANTS, static=True,
               log=print):
    """RGL Fig. 6: equilibrium of ``pendulum(n)`` with the spring scene :data:`SPRING`:
    full model, ``k`` breadth-first joints (fixed), ``k`` adaptive joints with each of
    :data:`FIG6_VARIANTS` (metric weights, update-region size). Equilibrium = mean chain
    over the last quarter of the run; error = distance of the tip (and RMS over all joint
    positions) to the full model's. Also :func:`static_equilibria`: the static equilibrium
    of every possible fixed ``k``-joint active region with straight rigid segments."""
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
    weights = dict(mass=subtree_mass_weights, inertia=joint_inertia_weights)
    labels = {}
    for name, label, opt in variants:
        mu = k if opt.get("n_update", "k") == "k" else opt["n_update"]
        w = weights[opt["weights"]](model) if opt.get("weights") else None
        sim = _adaptive(model, model.neutral(), k, _spring_forces(model, scene), n_update=mu,
                        update_every=opt.get("update_every", UPDATE_EVERY), weights=w,
                        velocity_weights=w)
        rec = []
        for _ in range(steps // record):
            sim.run(record, record_every=record)
            rec.append(sim.q.copy())
        runs[name] = (rec, [int(j) for j in np.flatnonzero(sim.active)])
        labels[name] = label
    tail = lambda rec: rec[len(rec) - max(1, len(rec) // 4):]
    res = dict(n=n, steps=steps, dt=DT, k=k, scene=dict(scene), rows={}, labels=labels)
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
    rb = res["rows"]["breadth_first"]
    for name in labels:
        r = res["rows"][name]
        r["ratio"] = r["tip_err"] / max(rb["tip_err"], 1e-300)
        r["rms_ratio"] = r["rms_err"] / max(rb["rms_err"], 1e-300)
    if "adaptive" in labels:
        res["ratio"] = res["rows"]["adaptive"]["ratio"]
    if "adaptive_U_all" in labels:
        res["ratio_U_all"] = res["rows"]["adaptive_U_all"]["ratio"]
    msg = f"fig. 6: tip error breadth-first {rb['tip_err']:.4f} m; " + ", ".join(
        f"{name} {res['rows'][name]['tip_err']:.4f} m (x{res['rows'][name]['ratio']:.2f})"
        for name in labels)
    if static:
        st = static_equilibria(model, _spring_forces(model, scene), ad.tree, k)
        sb = next(r for r in st["sets"] if r["joints"] == sorted(bfs))
        st["bfs"] = sb
        st["best_ratio"] = st["sets"][0]["tip_err"] / max(sb["tip_err"], 1e-300)
        st["bfs_rank"] = 1 + [r["joints"] for r in st["sets"]].index(sorted(bfs))
        st["union_ratio"] = st["union"]["tip_err"] / max(sb["tip_err"], 1e-300)
        res["static"] = st
        msg += (f"; static: best of {len(st['sets'])} fixed {k}-joint regions "
                f"{st['sets'][0]['joints']} x{st['best_ratio']:.2f} of breadth-first, "
                f"the {len(st['union']['joints'])} joints they use x{st['union_ratio']:.3f}")
    log(msg)
    return res


def plot_fig6(res, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    k = res["k"]
    names = [("full", f"(b) all {res['n']} joints active"),
             ("breadth_first", f"(c) {k} joints, breadth-first")]
    for i, (key, label) in enumerate(res.get("labels", {}).items()):
        names.append((key, f"{'(d) ' if i == 0 else ''}{k} adaptive: {label}"))
    a = res["scene"]["anchor"]
    ref = res["rows"]["full"]["points"]
    cols = min(3, len(names))
    rows = -(-len(names) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.6 * cols, 3.7 * rows), squeeze=False)
    axes = axes.ravel()
    for ax in axes[len(names):]:
        ax.axis("off")
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
        err = "" if key == "full" else (f"\ntip error {r['tip_err'] * 100:.2f} cm, RMS "
                                        f"{r['rms_err'] * 100:.1f} cm")
        ax.set_title(title + err, fontsize=8)
        ax.set_xlabel("y [m]")
        ax.set_ylabel("z [m]")
    fig.suptitle(f"pendulum-{res['n']} with a spring to a world point: equilibrium "
                 f"(red: active joints; grey: full model; dotted: start)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return Path(path)


# ------------------------------------------------------------------------- (d) crowd

CROWD_PUSH_N = 400.0
"""Magnitude [N] of each crowd push (world +y, away from the camera), for the whole run."""
CROWD_UPDATE = 0.1
"""Budget of the crowd's acceleration update region, as a fraction of the total joint
budget: RGL Sec. 7.1 advise ``N_U`` smaller than ``N_A``, small when ``N_A`` is large (the
active joints' accelerations are recomputed anyway), so that few joints are rigidified per
update. (Table 1 keeps RGL's own ``N_U = N_A``.)"""
CAMERA = dict(back=3.0, height=1.6)
"""Crowd camera: ``back`` grid spacings in front of the front row (the -y side of the grid,
the forces push along +y, away from it, as in RGL Fig. 1), centred in x, at ``height`` m."""


def crowd_update(budgets):
    """``max_update`` of a crowd run: :data:`CROWD_UPDATE` of the total budget (>= 1)."""
    return max(1, int(CROWD_UPDATE * int(np.sum(budgets))))


def crowd_forces(model, characters, n_push=10, magnitude=None, seed=0):
    """``n_push`` world point forces (``magnitude`` N, horizontal, away from a camera at the
    grid's -y side) on the torsos (body 2 of each humanoid: ``89 c + 2``) of characters
    chosen at random (seeded)."""
    from . import PointForce

    magnitude = CROWD_PUSH_N if magnitude is None else float(magnitude)
    return [PointForce(int(model.nb // characters * c + 2), (0.0, magnitude, 0.0))
            for c in pushed_characters(characters, n_push, seed)]


def pushed_characters(characters, n_push=10, seed=0):
    """The characters :func:`crowd_forces` pushes (sorted)."""
    rng = np.random.default_rng(seed)
    return np.sort(rng.choice(characters, size=min(n_push, characters), replace=False))


def tree_of_bodies(model):
    """(nb,) index of the tree (character) of every body, the trees numbered in the order of
    their root bodies ``np.flatnonzero(model.body_parent < 0)`` (the order of per-tree
    budgets ``max_active``)."""
    parent = model.body_parent
    tree = np.zeros(model.nb, dtype=np.int64)
    roots = parent < 0
    tree[roots] = np.arange(int(roots.sum()))
    for b in np.flatnonzero(~roots):                       # parents come first (pre-order)
        tree[b] = tree[parent[b]]
    return tree


def camera_point(model, q0, back=CAMERA["back"], height=CAMERA["height"], spacing=1.0):
    """The crowd camera :data:`CAMERA`: ``back * spacing`` in front of the front row
    (smallest root y), at the root bodies' mean x, ``height`` m up."""
    from .algorithms.kinematics import forward_kinematics

    p = forward_kinematics(model, q0)[1][model.body_parent < 0]
    return np.array([p[:, 0].mean(), p[:, 1].min() - back * spacing, height])


def distance_budgets(distance, total, sizes):
    """Per-character joint budgets decreasing with the distance to the camera (RGL Fig. 1):
    ``b_c ~ s / d_c`` (inverse distance: the projected size of a character, so the budget
    per unit of screen size is about the same for all), each clipped to ``[1, sizes[c]]``
    (at least the root joint, at most every joint of the character), the scale ``s`` chosen
    so the budgets total ``total`` joints; rounded by largest remainders. Returns (n,)
    int64 with ``sum == clip(total, n, sum(sizes))``."""
    d = np.asarray(distance, dtype=np.float64)
    sizes = np.asarray(sizes, dtype=np.int64)
    if d.ndim != 1 or d.shape != sizes.shape or np.any(d <= 0) or np.any(sizes < 1):
        raise ValueError("distance_budgets: need positive distances and sizes of one shape")
    total = int(np.clip(total, d.size, sizes.sum()))
    f = lambda s: np.clip(s / d, 1.0, sizes)
    lo, hi = 0.0, float((sizes * d).max())
    for _ in range(200):                                   # sum f(s) = total, f monotone
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if f(mid).sum() < total else (lo, mid)
    x = f(hi)
    b = np.minimum(np.floor(x + 1e-9).astype(np.int64), sizes)
    frac = np.where(b < sizes, x - b, -np.inf)
    for c in np.argsort(-frac, kind="stable"):             # largest remainders first
        if b.sum() >= total:
            break
        if b[c] < sizes[c]:
            b[c] += 1
    while b.sum() > total:                                 # round-off: take from the largest
        c = int(np.argmax(np.where(b > 1, b - x, -np.inf)))
        b[c] -= 1
    return b


def _crowd_frame(model, q, tree, n, qd=None):
    """Body positions (nb, 3), per-character root position and centre of mass (n, 3), and
    with ``qd`` per-character linear momentum (n, 3) [kg m/s]."""
    from .algorithms.kinematics import body_velocities, forward_kinematics

    R, p = forward_kinematics(model, q)
    c = p + np.einsum("bij,bj->bi", R, model.body_com)
    m = model.body_mass
    per = lambda x: np.stack([np.bincount(tree, x[:, k], n) for k in range(3)], 1)
    com = per(m[:, None] * c) / np.bincount(tree, m, n)[:, None]
    if qd is None:
        return p, p[model.body_parent < 0], com
    v = body_velocities(model, q, qd)                     # [w; v_O], body coordinates
    vc = np.einsum("bij,bj->bi", R, v[:, 3:] + np.cross(v[:, :3], model.body_com))
    return p, p[model.body_parent < 0], com, per(m[:, None] * vc)


def crowd_budget_total(model, fraction, unit="joints"):
    """Total joint budget of a crowd run: ``fraction`` of the joints (``unit="joints"``), or
    (``unit="dof"``) as many joints as make ``fraction`` of the degrees of freedom when
    every character's root joint (a free joint: 6 DOF) is active and the other active joints
    have the mean DOF of the non-root joints (a humanoid of ``crowd``: 88 joints, 89 DOF).
    ``max_active`` counts joints (RGL's N_A); the run reports the active DOF it got."""
    if unit == "joints":
        return max(1, int(fraction * model.nb))
    if unit != "dof":
        raise ValueError(f"unit must be 'joints' or 'dof', got {unit!r}")
    roots = model.body_parent < 0
    n_roots = int(roots.sum())
    root_dof = int(model.jnt_nv[roots].sum())
    mean_dof = (model.nv - root_dof) / max(model.nb - n_roots, 1)
    return n_roots + max(0, int((fraction * model.nv - root_dof) / mean_dof))


def bench_crowd(characters=200, steps=300, *, fraction=0.1, unit="joints", n_push=10,
                log=print):
    """RGL Fig. 1: ``crowd(characters)`` (free-floating humanoids, no ground) pushed by
    ``n_push`` forces, adaptive with per-character budgets :func:`distance_budgets` (inverse
    distance to :func:`camera_point`, totalling ``fraction`` of the joints, each >= 1) and
    ``max_update`` = :func:`crowd_update` of that total, against a full-DCA run of the same
    scene (same forces, same steps; its median step is the reference) and full ABA steps. Per character: the
    budget, the most active joints at any region update, and at the end the distance of the
    root (pelvis) and of the centre of mass to the full-DCA run's and the largest body
    position difference."""
    from . import DCA, models

    t0 = time.perf_counter()
    model, q0 = models.crowd(characters, return_configuration=True)
    build = time.perf_counter() - t0
    qd0 = np.zeros(model.nv)
    tree = tree_of_bodies(model)
    sizes = np.bincount(tree, minlength=characters)
    cam = camera_point(model, q0)
    p_start, root0, _ = _crowd_frame(model, q0, tree, characters)
    dist = np.linalg.norm(root0 - cam, axis=1)
    total = crowd_budget_total(model, fraction, unit)
    budgets = distance_budgets(dist, total, sizes)
    pushed = pushed_characters(characters, n_push)
    forces = lambda: crowd_forces(model, characters, n_push)
    dca = DCA(model)
    q_dca, qd_dca, wd = reference_run(model, q0, qd0, forces(), steps, "dca", dca=dca)
    del dca
    _, _, wa = reference_run(model, q0, qd0, forces(), max(3, min(steps, 20)), "aba")
    t0 = time.perf_counter()
    sim = _adaptive(model, q0, budgets, forces(), n_update=crowd_update(budgets))
    setup = time.perf_counter() - t0
    walls, most = [], np.zeros(characters, dtype=np.int64)
    most_dof = 0
    done = 0
    while done < steps:                  # chunks of update_every steps: one update each
        k = min(UPDATE_EVERY, steps - done)
        tr = sim.run(k, record_every=k)
        walls.append(tr.wall)
        done += k
        most = np.maximum(most, np.bincount(tree[sim.active], minlength=characters))
        most_dof = max(most_dof, int(model.jnt_nv[sim.active].sum()))
    wall = np.concatenate(walls)
    p_end, root_end, com_end, mom_end = _crowd_frame(model, sim.q, tree, characters, sim.qd)
    p_ref, root_ref, com_ref, mom_ref = _crowd_frame(model, q_dca, tree, characters, qd_dca)
    body_err = np.linalg.norm(p_end - p_ref, axis=1)
    # exact linear momentum of each character (from rest): the impulse of gravity and of
    # its push; joint forces and rigidification impulses are internal
    mass = np.bincount(tree, model.body_mass, characters)
    mom_exact = np.outer(mass, model.gravity) * (steps * DT)
    mom_exact[pushed, 1] += CROWD_PUSH_N * steps * DT
    mom_scale = np.maximum(np.linalg.norm(mom_exact, axis=1), 1e-300)
    c = split_times(wall)
    res = dict(characters=characters, nb=model.nb, dof=model.nv, budget=int(budgets.sum()),
               max_update=crowd_update(budgets), unit=unit, most_dof=most_dof,
               fraction=fraction, steps=steps, dt=DT, n_push=n_push, build_s=build,
               setup_s=setup, dca=float(np.median(wd)), aba=float(np.median(wa)),
               active=int(sim.active.sum()), update_region=int(sim.last["update_region"]),
               rigidified=int(sim.last["rigidified"]), camera=cam, distance=dist,
               budgets=budgets, sizes=sizes, most_active=most, pushed=pushed,
               parent=model.body_parent.copy(), tree=tree,
               p_start=p_start, p_end=p_end, p_ref=p_ref,
               root_err=np.linalg.norm(root_end - root_ref, axis=1),
               com_err=np.linalg.norm(com_end - com_ref, axis=1),
               momentum_err=np.linalg.norm(mom_end - mom_exact, axis=1) / mom_scale,
               momentum_err_dca=np.linalg.norm(mom_ref - mom_exact, axis=1) / mom_scale,
               body_err=np.array([body_err[tree == k].max() for k in range(characters)]),
               root_moved=np.linalg.norm(root_ref - root0, axis=1),
               finite=bool(np.isfinite(sim.q).all() and np.isfinite(sim.qd).all()), **c)
    res["speedup_dca"] = res["dca"] / res["mean"]
    res["hybrid_speedup_dca"] = res["dca"] / res["hybrid"]
    res["speedup_aba"] = res["aba"] / res["mean"]
    pm = np.zeros(characters, dtype=np.bool_)
    pm[pushed] = True
    res["pushed_mask"] = pm
    log(f"crowd({characters}), {fraction:.0%} of the {unit}: budgets {budgets.min()}.."
        f"{budgets.max()} (total {budgets.sum()} joints, at most {most_dof} DOF active), DCA {res['dca'] * 1e3:.1f} ms/step, adaptive hybrid "
        f"{res['hybrid'] * 1e3:.1f}, update {res['update'] * 1e3:.1f}, mean "
        f"{res['mean'] * 1e3:.1f} ms/step (x{res['speedup_dca']:.2f}); pelvis drift vs DCA "
        f"pushed max {res['root_err'][pm].max() if pm.any() else 0:.3g} m, others max "
        f"{res['root_err'][~pm].max() if (~pm).any() else 0:.3g} m")
    return res


def _perspective(points, eye, target):
    """Pinhole projection of (..., 3) world points for an eye at ``eye`` looking at
    ``target`` (z up): (..., 2) image coordinates."""
    f = np.asarray(target, float) - eye
    f /= np.linalg.norm(f)
    r = np.cross(f, (0.0, 0.0, 1.0))
    r /= np.linalg.norm(r)
    u = np.cross(r, f)
    rel = points - eye
    return np.stack([rel @ r, rel @ u], -1) / np.maximum(rel @ f, 1e-6)[..., None]


def plot_crowd(res, path):
    """RGL Fig. 1 picture of :func:`bench_crowd`: (a) top view of every body at the start
    (grey) and the end (adaptive coloured by the character's budget over the full DCA's end
    in black), camera and pushes marked; (b) the adaptive end state in perspective from
    behind and above the camera (stick figures coloured by budget); (c) side view of the
    pushed characters: start, full DCA end, adaptive end; (d) per character the distance of
    the pelvis, of the centre of mass and of the farthest body to the full-DCA run's at the
    end, against the distance to the camera."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.collections import LineCollection

    b, tree, parent = res["budgets"], res["tree"], res["parent"]
    cam, pm, pushed = res["camera"], res["pushed_mask"], res["pushed"]
    cmap = plt.get_cmap("viridis")
    norm = matplotlib.colors.Normalize(b.min(), max(b.max(), b.min() + 1))
    ccol = cmap(norm(b))
    col = ccol[tree]
    roots = parent < 0
    child = np.flatnonzero(~roots)
    ps, pe, pr = res["p_start"], res["p_end"], res["p_ref"]
    fig = plt.figure(figsize=(16, 10.5))
    gs = fig.add_gridspec(2, 3, height_ratios=(1.5, 1.0), width_ratios=(1.0, 1.25, 1.0))
    ax_top, ax_view, ax_err = (fig.add_subplot(gs[0, i]) for i in range(3))
    ax_side = fig.add_subplot(gs[1, :])

    ax = ax_top
    ax.scatter(ps[:, 0], ps[:, 1], s=1, c="0.8", lw=0)
    ax.scatter(pr[:, 0], pr[:, 1], s=4, c="k", lw=0)
    ax.scatter(pe[:, 0], pe[:, 1], s=1.5, c=col, lw=0)
    r0 = ps[roots][pushed]
    ax.quiver(r0[:, 0], r0[:, 1], np.zeros(len(r0)), np.full(len(r0), 0.5), color="r",
              angles="xy", scale_units="xy", scale=1.0, width=0.004, zorder=3)
    ax.plot(cam[0], cam[1], "r*", ms=14)
    ax.annotate("camera", (cam[0], cam[1]), textcoords="offset points", xytext=(8, -4),
                color="r")
    ax.set_aspect("equal")
    ax.set_xlabel("x [m]")
    ax.set_ylabel("y [m]")
    ax.set_title(f"(a) top view: bodies at the start (grey) and at t = "
                 f"{res['steps'] * res['dt']:g} s\n(adaptive coloured by budget over the "
                 f"full DCA in black; red arrows: pushed characters)", fontsize=9)

    ax = ax_view                                           # painter's order: far first
    centre = pe[roots].mean(0)
    eye = cam + np.array([0.0, -0.5 * (centre[1] - cam[1]), 0.8 * (centre[1] - cam[1])])
    rank = np.empty(b.size, dtype=np.int64)
    rank[np.argsort(-res["distance"])] = np.arange(b.size)
    seg = child[np.argsort(rank[tree[child]], kind="stable")]
    uv = _perspective(pe, eye, (centre[0], centre[1], 0.0))
    ax.add_collection(LineCollection(np.stack([uv[parent[seg]], uv[seg]], 1),
                                     colors=col[seg], linewidths=0.8))
    ax.set_xlim(uv[:, 0].min() - 0.02, uv[:, 0].max() + 0.02)
    ax.set_ylim(uv[:, 1].min() - 0.02, uv[:, 1].max() + 0.02)
    ax.set_aspect("equal")
    ax.set_xticks([])
    ax.set_yticks([])
    ax.set_title("(b) the adaptive end state seen from behind and above the camera\n"
                 "(stick figures coloured by budget)", fontsize=9)
    fig.colorbar(matplotlib.cm.ScalarMappable(norm=norm, cmap=cmap), ax=ax,
                 label="joint budget of the character", shrink=0.7)

    ax = ax_side
    order = pushed[np.argsort(res["distance"][pushed])]
    for i, k in enumerate(order):
        m = child[tree[child] == k]
        y0 = ps[roots][k, 1]
        for p, kw in ((ps, dict(colors="0.75", linewidths=1.0)),
                      (pr, dict(colors="k", linewidths=0.8)),
                      (pe, dict(colors=[ccol[k]], linewidths=1.4))):
            xy = np.stack([p[:, 1] - y0 + 1.6 * i, p[:, 2]], 1)
            ax.add_collection(LineCollection(np.stack([xy[parent[m]], xy[m]], 1), **kw))
        ax.annotate(f"#{k}: N_A = {b[k]}, {res['root_err'][k] * 100:.0f} cm",
                    (1.6 * i, ps[:, 2].max() + 0.08), ha="center", fontsize=8)
    if order.size:
        ax.set_xlim(-0.9, 1.6 * (order.size - 1) + 1.1)
    zs = np.concatenate([ps[:, 2], pe[:, 2], pr[:, 2]])
    ax.set_ylim(zs.min() - 0.1, zs.max() + 0.3)
    ax.set_aspect("equal")
    ax.set_xlabel("y - y_start [m], characters side by side (+1.6 m each), nearest first")
    ax.set_ylabel("z [m]")
    ax.set_title("(c) pushed characters from the side: start (grey), full DCA end "
                 "(black), adaptive end (colour); label: character, budget, pelvis "
                 "distance to the full DCA", fontsize=9)

    ax = ax_err
    floor = 1e-12
    d = res["distance"]
    for mask, mk, lab in ((~pm, "o", "not pushed"), (pm, "s", "pushed")):
        if mask.any():
            ax.scatter(d[mask], np.maximum(res["root_err"][mask], floor), marker=mk, s=22,
                       c=ccol[mask], edgecolors="k", linewidths=0.4, label=f"pelvis, {lab}",
                       zorder=3)
    ax.scatter(d, np.maximum(res["body_err"], floor), marker="^", s=14, c="none",
               edgecolors="tab:red", linewidths=0.6, label="farthest body")
    ax.scatter(d, np.maximum(res["com_err"], floor), marker="x", s=12, c="0.4",
               label="centre of mass")
    ax.set_yscale("log")
    ax.set_xlabel("distance of the character to the camera [m]")
    ax.set_ylabel("distance to the full-DCA run at the end [m]")
    ax.set_title(f"(d) distance to the full-DCA run after {res['steps']} steps\n(values "
                 f"below {floor:g} drawn at {floor:g})", fontsize=9)
    ax.legend(fontsize=8, loc="center right")
    fig.suptitle(f"crowd({res['characters']}): {res['nb']} bodies, {res['dof']} DOF, free "
                 f"fall, {res['n_push']} characters pushed by {CROWD_PUSH_N:g} N along +y; "
                 f"adaptive budgets ~ 1/distance to the camera, {res['budget']} joints in all "
                 f"({res['budget'] / res['nb']:.0%})\nmean {res['mean'] * 1e3:.1f} ms/step "
                 f"(hybrid step {res['hybrid'] * 1e3:.1f}, region update "
                 f"{res['update'] * 1e3:.0f}) vs full DCA {res['dca'] * 1e3:.1f} ms/step",
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return Path(path)


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
    firsts = [c["first"] for r in t1["rows"] for c in r["cells"] if c["na"] < n]
    if firsts:
        lines.append("")
        lines.append(f"Set-up (the first step of each run, left out of the means: conversion "
                     f"from the fully articulated start, tensors of every passive node): "
                     f"{min(firsts) * 1e3:.1f}-{max(firsts) * 1e3:.1f} ms.")
    errs = [c["err_full"] for r in t1["rows"] for c in r["cells"] if "err_full" in c]
    if errs:
        lines.append("")
        lines.append(f"N_A = {n} (every joint active) vs the full-DCA run with the same "
                     f"forces, final q: max abs(dq) = {max(errs):.1e} rad.")
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
                     "[m] | tip wobble (std) [m] | tip / breadth-first | RMS / breadth-first |")
        lines.append("|---|---|---:|---:|---:|---:|---:|")
        keys = [("full", f"all {f6['n']} joints"),
                ("breadth_first", f"{f6['k']} breadth-first (fixed)")]
        keys += [(key, f"{f6['k']} adaptive, {label}") for key, label in f6["labels"].items()]
        for key, label in keys:
            r = f6["rows"][key]
            j = "all" if key == "full" else ", ".join(map(str, r["joints"]))
            rat = (f"{r['ratio']:.2f} | {r['rms_ratio']:.2f}" if "ratio" in r else " | ")
            lines.append(f"| {label} | {j} | {r['tip_err']:.4f} | {r['rms_err']:.4f} | "
                         f"{r['tip_spread']:.4f} | {rat} |")
        st = f6.get("static")
        if st:
            lines.append("")
            lines.append(f"Static equilibria (potential minimum) of every fixed {f6['k']}-joint "
                         f"active region (a subtree of the assembly tree containing the root; "
                         f"rigidified joints straight), errors against the full model's static "
                         f"equilibrium; breadth-first is number {st['bfs_rank']} of "
                         f"{len(st['sets'])}, the best is x{st['best_ratio']:.2f} of it:")
            lines.append("")
            lines.append("| active joints | tip error [m] | RMS joint-position error [m] |")
            lines.append("|---|---:|---:|")
            for r in st["sets"]:
                mark = " (breadth-first)" if r is st["bfs"] else ""
                lines.append(f"| {', '.join(map(str, r['joints']))}{mark} | "
                             f"{r['tip_err']:.4f} | {r['rms_err']:.4f} |")
            u = st["union"]
            lines.append("")
            lines.append(f"The {len(u['joints'])} joints these regions use ("
                         f"{', '.join(map(str, u['joints']))}), all free at once (what a run "
                         f"that keeps moving its region could reach by relaxing one region "
                         f"after another): tip error {u['tip_err']:.5f} m, "
                         f"x{st['union_ratio']:.3f} of breadth-first; RMS "
                         f"{u['rms_err']:.4f} m.")
    sw = res.get("fig6_sweep")
    if sw:
        lines.append(f"### Fig. 6 over the attachment link: pendulum-{sw['n']}, spring on "
                     f"link i, anchor 3 m to the side and 2 m above the link's hanging end, "
                     f"{sw['steps']} steps, {sw['k']} joints, RGL settings (identity "
                     f"weights, N_U = {sw['k']})")
        lines.append("")
        lines.append("| spring on link | anchor [m] | breadth-first tip error [m] | adaptive "
                     "tip error [m] | tip / breadth-first | RMS / breadth-first | adaptive "
                     "joints (end) |")
        lines.append("|---:|---|---:|---:|---:|---:|---|")
        for r in sw["rows"]:
            lines.append(f"| {r['link']} | ({r['anchor'][0]:g}, {r['anchor'][1]:g}, "
                         f"{r['anchor'][2]:g}) | {r['bfs_tip']:.4f} | {r['tip']:.4f} | "
                         f"{r['ratio']:.2f} | {r['rms_ratio']:.2f} | "
                         f"{', '.join(map(str, r['joints']))} |")
        lines.append("")
    cr = res.get("crowd")
    if cr:
        lines.append("")
        b = cr["budgets"]
        lines.append(f"### Crowd: crowd({cr['characters']}) = {cr['nb']} bodies, {cr['dof']} "
                     f"DOF, {cr['n_push']} push forces, per-character budgets ~ 1/distance "
                     f"to the camera ({b.min()}..{b.max()} joints, N_A = {cr['budget']} in "
                     f"all, update region N_U = {cr['max_update']}), {cr['steps']} steps (ms "
                     f"per step)")
        lines.append("")
        lines.append("| budget | joints (N_A) | most active DOF | hybrid step | region update "
                     "| mean (amortized) | full DCA step | full ABA step | speed-up vs DCA "
                     "(mean) | vs DCA (hybrid only) | rigidified at last update |")
        lines.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for r in (cr, res.get("crowd_dof")):
            if r is None:
                continue
            lines.append(f"| {r['fraction']:.0%} of the {r['unit']} | {r['budget']} | "
                         f"{r['most_dof']} ({r['most_dof'] / r['dof']:.1%}) | "
                         f"{_ms(r['hybrid'])} | {_ms(r['update'])} | {_ms(r['mean'])} | "
                         f"{_ms(r['dca'])} | {_ms(r['aba'])} | {r['speedup_dca']:.2f} | "
                         f"{r['hybrid_speedup_dca']:.2f} | {r['rigidified']} |")
        pm = cr["pushed_mask"]
        lines.append("")
        lines.append(f"Every character's active joints <= its budget at every region update: "
                     f"{bool(np.all(cr['most_active'] <= b))}. The {int((~pm).sum())} "
                     f"characters not pushed (free fall): pelvis at most "
                     f"{cr['root_err'][~pm].max() if (~pm).any() else 0:.1e} m from the "
                     f"full-DCA run's. Pushed characters at the end (distances to the full-DCA "
                     f"run; momentum error relative to the exact impulse (m g + F) t, "
                     f"adaptive / full DCA):")
        lines.append("")
        lines.append("| character | distance to camera [m] | budget | pelvis [m] | centre of "
                     "mass [m] | farthest body [m] | pelvis moved (full DCA) [m] | momentum "
                     "error adaptive / DCA |")
        lines.append("|---:|---:|---:|---:|---:|---:|---:|---:|")
        for k in cr["pushed"][np.argsort(cr["distance"][cr["pushed"]])]:
            lines.append(f"| {k} | {cr['distance'][k]:.1f} | {b[k]} | "
                         f"{cr['root_err'][k]:.3f} | {cr['com_err'][k]:.4f} | "
                         f"{cr['body_err'][k]:.3f} | {cr['root_moved'][k]:.3f} | "
                         f"{cr['momentum_err'][k]:.1e} / {cr['momentum_err_dca'][k]:.1e} |")
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
    for cr in (res.get("crowd"), res.get("crowd_dof")):
        if not cr:
            continue
        s = cr["speedup_dca"]
        out.append(f"target crowd({cr['characters']}) at {cr['fraction']:.0%} of the "
                   f"{cr['unit']}: >= {TARGETS['crowd']:g}x the full DCA: x{s:.2f} "
                   f"{'met' if s >= TARGETS['crowd'] else 'NOT met'}")
    f6 = res.get("fig6")
    if f6:
        r = f6["ratio"]
        best = min((f6["rows"][key]["ratio"], key) for key in f6["labels"])
        st = f6.get("static")
        out.append(f"target Fig. 6: adaptive / breadth-first tip error <= 1/3: {r:.2f} "
                   f"{'met' if r <= TARGETS['fig6'] else 'NOT met'} (RGL settings; best "
                   f"variant {best[1]}: {best[0]:.2f}"
                   + (f"; best fixed {f6['k']}-joint region with straight rigid segments, "
                      f"static: {st['best_ratio']:.2f}" if st else "") + ")")
    sw = res.get("fig6_sweep")
    if sw:
        met = [r for r in sw["rows"] if r["ratio"] <= TARGETS["fig6"]]
        out.append(f"target Fig. 6 over the attachment link (RGL settings): met for "
                   f"{len(met)} of {len(sw['rows'])} links (" + ", ".join(
                       f"link {r['link']}: {r['ratio']:.2f}" for r in sw["rows"]) + ")")
    return out


def bench_adaptive(quick=False, out="docs", *, log=print) -> dict:
    """Run (a)-(d) and print the report (Markdown tables); write ``adaptive-pendulum.png``,
    ``adaptive-spring.png`` and ``adaptive-crowd.png`` into ``out``.

    quick : bool - pendulum-60 (N_A scaled to 1..60, N_F in {1, 5}, 60 steps), Fig. 5 on
        pendulum-60, Fig. 6 on pendulum-20 for 4,000 steps (3 joints), crowd(4) for 100
        steps with 2 pushes: seconds.
    Returns dict(table1, fig5, fig6, fig6_sweep, crowd, crowd_dof, machine, peak_rss_bytes,
    total_s, figures, report)."""
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
        res["fig6_sweep"] = bench_fig6_sweep(20, 4000, k=3, links=(5, 10, 19), log=log)
        res["crowd"] = bench_crowd(4, 100, n_push=2, log=log)
        res["crowd_dof"] = bench_crowd(4, 100, unit="dof", n_push=2, log=log)
    else:
        res["table1"] = bench_table1(log=log)
        res["fig5"] = bench_fig5(log=log)
        res["fig6"] = bench_fig6(log=log)
        res["fig6_sweep"] = bench_fig6_sweep(log=log)
        res["crowd"] = bench_crowd(log=log)
        res["crowd_dof"] = bench_crowd(unit="dof", log=log)
    res["figures"] = [plot_fig5(res["fig5"], outdir / "adaptive-pendulum.png"),
                      plot_fig6(res["fig6"], outdir / "adaptive-spring.png"),
                      plot_crowd(res["crowd"], outdir / "adaptive-crowd.png")]
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
