"""RGL Fig. 6 for ``articulated bench adaptive``: a pendulum tied by a damped spring to a
world point, run to equilibrium with all joints, a fixed breadth-first active region and
adaptive regions (Redon, Galoppo & Lin 2005, Sec. 7.1, Fig. 6); see
:mod:`articulated.bench.adaptive` (c).
"""

from __future__ import annotations

from collections import deque

import numpy as np

from .adaptive_runs import DT, UPDATE_EVERY, adaptive_simulator, chain_points
from .common import new_figure, save_figure

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
    from .. import JointDamping, Spring

    L = abs(float(model.jnt_Xtree_r[1, 2]))
    link = scene.get("link", -1) % model.nb
    return [Spring(link, (0.0, 0.0, -L), scene["anchor"], scene["stiffness"],
                   damping=scene["damping"]),
            JointDamping(scene["joint_damping"])]


def _fixed_region_run(model, forces, steps, active, dt=DT, record_every=100):
    """Semi-implicit Euler with :meth:`AdaptiveDynamics.forward_dynamics` on a fixed active
    set (``None``: all joints, the full model). Returns (q, recorded q list)."""
    from .. import AdaptiveDynamics, integrate
    from ..simulation.forces import StateKinematics

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
    from .. import crba

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

    from ..algorithms.kinematics import energy

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
    from .. import models

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
    from .. import models

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
        sim = adaptive_simulator(model, model.neutral(), k, _spring_forces(model, scene),
                                 n_update=mu, weights=w, velocity_weights=w,
                                 update_every=opt.get("update_every", UPDATE_EVERY))
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
    """RGL Fig. 6 picture of :func:`bench_fig6`: the equilibrium chain of every run (active
    joints in red) over the full model's; returns the path of the PNG."""
    k = res["k"]
    names = [("full", f"(b) all {res['n']} joints active"),
             ("breadth_first", f"(c) {k} joints, breadth-first")]
    for i, (key, label) in enumerate(res.get("labels", {}).items()):
        names.append((key, f"{'(d) ' if i == 0 else ''}{k} adaptive: {label}"))
    a = res["scene"]["anchor"]
    ref = res["rows"]["full"]["points"]
    cols = min(3, len(names))
    rows = -(-len(names) // cols)
    fig, axes = new_figure((3.6 * cols, 3.7 * rows), rows, cols, squeeze=False)
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
    return save_figure(fig, path, dpi=100)

