"""RGL Fig. 1 for ``articulated bench adaptive``: a crowd of free-falling humanoids, some
pushed, with per-character joint budgets decreasing with the distance to a camera,
against the full DCA (Redon, Galoppo & Lin 2005, Fig. 1); see
:mod:`articulated.bench.adaptive` (d).
"""

from __future__ import annotations

import time

import numpy as np

from .adaptive_runs import DT, UPDATE_EVERY, adaptive_simulator, reference_run, split_times
from .common import new_figure, save_figure

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
    from .. import PointForce

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
    from ..algorithms.kinematics import forward_kinematics

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
    from ..algorithms.kinematics import body_velocities, forward_kinematics

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
    from .. import DCA, models

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
    sim = adaptive_simulator(model, q0, budgets, forces(), n_update=crowd_update(budgets))
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
    from matplotlib.cm import ScalarMappable
    from matplotlib.collections import LineCollection
    from matplotlib.colors import Normalize

    b, tree, parent = res["budgets"], res["tree"], res["parent"]
    cam, pm, pushed = res["camera"], res["pushed_mask"], res["pushed"]
    cmap = matplotlib.colormaps["viridis"]
    norm = Normalize(b.min(), max(b.max(), b.min() + 1))
    ccol = cmap(norm(b))
    col = ccol[tree]
    roots = parent < 0
    child = np.flatnonzero(~roots)
    ps, pe, pr = res["p_start"], res["p_end"], res["p_ref"]
    fig, _ = new_figure((16, 10.5), 0)
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
    fig.colorbar(ScalarMappable(norm=norm, cmap=cmap), ax=ax,
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
    return save_figure(fig, path, dpi=90)

