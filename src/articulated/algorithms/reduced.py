"""The hybrid body as a reduced tree, solved by the articulated-body algorithm.

RGL Sec. 4.1-4.2 (Redon, Galoppo & Lin 2005): a hybrid body whose rigidified joints have
zero velocity moves as an articulated body whose bodies are its rigid pieces. The rigid
pieces are exactly the rigid-front nodes of the active region (each is a connected rigid
subassembly, and two of them meet only at an active joint), so with N_A active joints the
hybrid body is a tree of N_A moving rigid bodies (plus the pieces welded to the world)
connected by the N_A active joints. Its forward dynamics are those of RGL Sec. 4.3, and any
exact O(N_A) algorithm computes them; between active-region updates we use
Featherstone's ABA (RBDA Table 7.1, :func:`articulated.algorithms.aba.aba_kernel`) on this
reduced tree, which costs about a quarter of the multilevel DCA update of the active nodes
(:func:`articulated.algorithms.hybrid.hybrid_dynamics`), because an ABA joint is cheaper
than a DCA node. The active-region update (:mod:`articulated.algorithms.region`) solves its
transient and new hybrid bodies on their reduced trees too (:func:`reduced_dynamics`,
:func:`reduced_momentum`) and keeps the DCA's fully articulated coefficients for the
acceleration metric, which needs them.

The reduced tree (built once per active region, O(N_A), :func:`_reduce`; what depends on
one rigid node only is cached until the node is rigidified again):

* reduced body k is the rigid piece entered by the k-th active joint J = ``ajoints[k]``
  (joints in increasing order, so the reduced bodies are in depth-first order); its frame
  is body J's frame;
* its parent is the piece containing J's parent body p, entered by ``Jp = near[p]`` (the
  world when there is none: a piece welded to the world);
* its joint placement is ``Xtree_J o (p X Jp)``, the model's placement of J composed with
  the constant transform from Jp's frame to p's (the world's when the piece is welded);
* its inertia is the front node's rigid inertia ``I0`` (handle-0 frame, the composite
  inertia of :func:`~articulated.algorithms.hybrid._front_inertias`, which equals
  ``(Phi_00)^-1`` but is summed, not inverted) moved to J's frame,
  ``(h0 X J)^T I0 (h0 X J)``.

External forces on a body b act on the piece of ``near[b]``; joint forces on rigidified
joints are internal to a rigid piece and do nothing. Between region updates the reduced
tree's own kinematics (:func:`reduced_kinematics`) also give the poses and velocities of
the bodies that carry forces.
"""

from __future__ import annotations

import math

from numba import njit

from .._byref import byref, byref_each, deref
from .._views import rows
from ..config import inline, KERNEL
from ..data import data_arrays
from ..model import _MODEL_BODY, model_arrays
from ..spatial import (add6, congruence, dot6, get_mat3, get_vec3, get_vec6, inertia_times,
                       set_vec6, sym6_from_dense, xform_copy_at, xform_force_T, xform_force_T_at,
                       xform_inv_at, xform_motion_at, xform_mul_at)
from .aba import aba_kernel
from .bundles import N_AJOINTS, REGION_STAMP, STAT_BAD
from .hybrid import cached_pose, hybrid_kinematics
from .kinematics import joint_xup, velocity_step, world_pose_step


@inline
def _pose_to(b, pose, Xs, xs, slot):
    """``world X body`` of body b (:func:`~articulated.algorithms.hybrid.cached_pose`)
    into (Xs, xs)[slot]."""
    cached_pose(b, pose)
    xform_copy_at(pose.Xr, pose.xq, 0, Xs, xs, slot)


@njit(**KERNEL)
def _reduce(bkp, pose, rp):
    """Build the reduced tree of the current hybrid body (module docstring) into the
    packed model buffers ``red_i``, ``red_f`` (the layout of
    :func:`articulated.model.model_arrays` for N_A bodies) and ``ridx`` (reduced index of
    each active joint). What depends only on a rigid piece is cached (``cache``) and
    recomputed only when the piece's node changed (its ``epoch``, counted by the region
    update's rigidification): the piece's inertia and transform to its principal handle
    (:func:`_piece`) by node, and the transform ``p X Jp`` of a joint's placement by
    joint. Needs the hierarchical frames of the current configuration
    (:func:`~articulated.algorithms.hybrid.hybrid_kinematics`) where the cache misses."""
    bk = deref(bkp)
    front_body, ajoints, near, front_of, front_index, I0, counts, epoch = \
        bk.front_body, bk.ajoints, bk.near, bk.front_of, bk.front_index, bk.I0, bk.counts, bk.epoch
    red = deref(rp)
    red_i, red_f, ridx, rstamp, parent = red.red_i, red.red_f, red.ridx, red.rstamp, red.parent
    jtype, vadr, jnv, nq, subtree_end = red.jtype, red.vadr, red.jnv, red.nq, red.subtree_end
    axis, Xtree_E, Xtree_r, S, gravity = red.axis, red.Xtree_E, red.Xtree_r, red.S, red.gravity
    Xs, xs, cache = red.Xs, red.xs, red.cache
    leaf_of_body = pose.leaf_of_body
    na = counts[N_AJOINTS]
    rstamp[0] = counts[REGION_STAMP]
    if na == 0:
        return
    mi = rows(red_i, 7, na)
    for k in range(na):
        ridx[ajoints[k]] = k
    oq = 0
    ov = 0
    for k in range(na):
        J = ajoints[k]
        p = parent[J]
        Jp = near[p] if p >= 0 else -1
        mi[0, k] = ridx[Jp] if Jp >= 0 else -1
        mi[1, k] = jtype[J]
        mi[2, k] = oq
        mi[3, k] = ov
        mi[4, k] = jnv[J]
        mi[6, k] = 1
        oq += nq[J]
        ov += jnv[J]
    for k in range(na - 1, -1, -1):         # subtree ends, children first
        end = subtree_end[ajoints[k]]
        l = k + 1
        while l < na and ajoints[l] < end:
            l = mi[5, l]
        mi[5, k] = l
    mv = model_arrays(mi, red_f)
    rvadr, raxis, rXE, rXr, rmass, rh = mv.vadr, mv.axis, mv.Xtree_E, mv.Xtree_r, mv.mass, mv.h
    rIbar, rS, rg = mv.Ibar, mv.S, mv.gravity
    for a in range(3):
        rg[a] = gravity[a]
    pc_epoch, pc_I, pc_E, pc_r = cache.pc_epoch, cache.pc_I, cache.pc_E, cache.pc_r
    K_node, K_epoch, K_E, K_r = cache.K_node, cache.K_epoch, cache.K_E, cache.K_r
    for k in range(na):
        J = ajoints[k]
        for a in range(3):
            raxis[k, a] = axis[J, a]
        for d in range(jnv[J]):
            for a in range(6):
                rS[rvadr[k] + d, a] = S[vadr[J] + d, a]
        R = front_of[leaf_of_body[J]]
        if pc_epoch[R] != epoch[R]:
            _piece(J, R, pose, I0, front_body, front_index, Xs, xs, pc_I, pc_E, pc_r)
            pc_epoch[R] = epoch[R]
        rmass[k] = pc_I[R, 0]
        for a in range(3):
            rh[k, a] = pc_I[R, 1 + a]
        for a in range(9):
            rIbar[k, a] = pc_I[R, 4 + a]
        # joint placement Xtree_J o (p X Jp)
        p = parent[J]
        if p >= 0:
            Rp = front_of[leaf_of_body[p]]
            if K_node[J] != Rp or K_epoch[J] != epoch[Rp]:
                _pose_to(p, pose, Xs, xs, 1)
                xform_inv_at(Xs, xs, 1, Xs, xs, 2)                   # p X w
                Jp = near[p]
                if Jp >= 0:
                    _pose_to(Jp, pose, Xs, xs, 1)             # w X Jp
                    xform_mul_at(Xs, xs, 2, Xs, xs, 1, K_E, K_r, J)  # p X Jp
                else:
                    xform_copy_at(Xs, xs, 2, K_E, K_r, J)            # welded: p X w
                K_node[J] = Rp
                K_epoch[J] = epoch[Rp]
            xform_mul_at(Xtree_E, Xtree_r, J, K_E, K_r, J, Xs, xs, 1)
        else:
            xform_copy_at(Xtree_E, Xtree_r, J, Xs, xs, 1)
        for a in range(3):
            rXr[k, a] = xs[1, a]
            for c in range(3):
                rXE[k, 3 * a + c] = Xs[1, a, c]


@inline
def _piece(J, R, pose, I0, front_body, front_index, Xs, xs, pc_I, pc_E, pc_r):
    """The data of the piece of front node R entered by joint J that stays valid while R
    stays rigid: its inertia in J's frame, ``(h0 X J)^T I0[R] (h0 X J)``, as ``pc_I[R] =
    (m, h, Ibar)`` (RBDA eq. 2.63), and ``pc[R] = J X (principal handle of R)``."""
    node_hoff, handle_x, H_E, H_r = pose.node_hoff, pose.handle_x, pose.H_E, pose.H_r
    P_E, P_r = pose.P_E, pose.P_r
    _pose_to(J, pose, Xs, xs, 0)                              # w X J
    _pose_to(front_body[front_index[R]], pose, Xs, xs, 2)     # w X b0
    xform_inv_at(Xs, xs, 2, Xs, xs, 3)
    xform_mul_at(Xs, xs, 3, Xs, xs, 0, Xs, xs, 2)                    # b0 X J
    xform_mul_at(H_E, H_r, handle_x[node_hoff[R]], Xs, xs, 2, Xs, xs, 3)   # h0 X J
    M = congruence((Xs[3, 0, 0], Xs[3, 0, 1], Xs[3, 0, 2], Xs[3, 1, 0], Xs[3, 1, 1],
                    Xs[3, 1, 2], Xs[3, 2, 0], Xs[3, 2, 1], Xs[3, 2, 2]),
                   (xs[3, 0], xs[3, 1], xs[3, 2]), sym6_from_dense(I0[R]))
    # compact form (m, h, Ibar) of [[Ibar, h^], [h^T, m 1]]
    pc_I[R, 0] = (M[15] + M[18] + M[20]) / 3.0
    pc_I[R, 1] = 0.5 * (M[13] - M[11])
    pc_I[R, 2] = 0.5 * (M[8] - M[12])
    pc_I[R, 3] = 0.5 * (M[9] - M[7])
    pc_I[R, 4] = M[0]
    pc_I[R, 5] = M[1]
    pc_I[R, 6] = M[2]
    pc_I[R, 7] = M[1]
    pc_I[R, 8] = M[3]
    pc_I[R, 9] = M[4]
    pc_I[R, 10] = M[2]
    pc_I[R, 11] = M[4]
    pc_I[R, 12] = M[5]
    xform_inv_at(Xs, xs, 0, Xs, xs, 1)
    xform_mul_at(Xs, xs, 1, P_E, P_r, R, pc_E, pc_r, R)              # J X principal handle


@inline
def _gather(na, ajoints, mi, rp):
    """Copy q, qd of the active joints into the reduced tree's vectors (``mi``: the
    reduced model's int rows (7, na))."""
    red = deref(rp)
    qadr, vadr, jnv, nq, q, qd, rq, rqd = (red.qadr, red.vadr, red.jnv, red.nq, red.q, red.qd,
                                           red.rq, red.rqd)
    for k in range(na):
        J = ajoints[k]
        for d in range(nq[J]):
            rq[mi[2, k] + d] = q[qadr[J] + d]
        for d in range(jnv[J]):
            rqd[mi[3, k] + d] = qd[vadr[J] + d]


@inline
def _forward_pass(na, ajoints, mi, rp, poses):
    """Gather the state (:func:`_gather`), then the joint transforms and velocities of the
    reduced tree (RBDA eq. 7.34) into its workspace, and with ``poses`` its world poses
    (RBDA Table 2.5). Returns the workspace views ``(Xup_E, Xup_r, v, f, oE, op)``
    (inlined in numba's IR: the views stay valid in the caller)."""
    red = deref(rp)
    red_f, red_d, rq, rqd = red.red_f, red.red_d, red.rq, red.rqd
    _gather(na, ajoints, mi, rp)
    mv = model_arrays(mi, red_f)
    rparent, rjtype, rqadr, rvadr, rjnv = mv.parent, mv.jtype, mv.qadr, mv.vadr, mv.jnv
    rXrot, raxis, rXE, rXr, rS = mv.Xtree_rot, mv.axis, mv.Xtree_E, mv.Xtree_r, mv.S
    nvr = rvadr[na - 1] + rjnv[na - 1]
    dv = data_arrays(red_d, na, nvr)
    Xup_E, Xup_r, v, c, f, oE, op = dv.Xup_E, dv.Xup_r, dv.v, dv.c, dv.f, dv.oE, dv.op
    for k in range(na):
        E, r = joint_xup(k, rjtype, rqadr, rXrot, raxis, rXE, rXr, rq, Xup_E, Xup_r)
        velocity_step(k, rparent, rvadr, rjnv, rS, rqd, E, r, v, c)
        if poses:
            world_pose_step(k, rparent, E, r, oE, op)
    return Xup_E, Xup_r, v, f, oE, op


@njit(**KERNEL)
def reduced_kinematics(bkp, posep, rp, nbodies, bodies):
    """Between region updates, instead of
    :func:`~articulated.algorithms.hybrid.hybrid_kinematics`: joint transforms,
    velocities and world poses of the reduced tree (RBDA eq. 7.34, Table 2.5) at the
    solver's ``q``, ``qd``, and for the pieces that carry ``bodies[:nbodies]`` the world
    frame ``P`` of their front node's principal handle and the world velocity ``Vw`` of
    their joint, which is what :func:`~articulated.algorithms.hybrid.cached_pose` and
    the compiled forces read. Needs the reduced tree of the current region."""
    bk = deref(bkp)
    ajoints, near, front_of, counts = bk.ajoints, bk.near, bk.front_of, bk.counts
    pose = deref(posep)
    red = deref(rp)
    red_i, ridx, Xs, xs, Vw, cache = red.red_i, red.ridx, red.Xs, red.xs, red.Vw, red.cache
    na = counts[N_AJOINTS]
    if na == 0:
        return
    mi = rows(red_i, 7, na)
    _, _, v, _, oE, op = _forward_pass(na, ajoints, mi, rp, True)
    leaf_of_body, P_E, P_r = pose.leaf_of_body, pose.P_E, pose.P_r
    for t in range(nbodies):
        b = bodies[t]
        J = near[b]
        if J < 0:
            continue                  # welded to the world: P does not move
        k = ridx[J]
        # w X k = inverse of k X w = (oE_k, op_k)
        for a in range(3):
            for cc in range(3):
                Xs[0, a, cc] = oE[k, 3 * cc + a]
            xs[0, a] = -(oE[k, 3 * a] * op[k, 0] + oE[k, 3 * a + 1] * op[k, 1]
                         + oE[k, 3 * a + 2] * op[k, 2])
        R = front_of[leaf_of_body[b]]
        xform_mul_at(Xs, xs, 0, cache[2], cache[3], R, P_E, P_r, R)
        w = xform_motion_at(Xs, xs, 0, get_vec6(v, k))
        for a in range(6):
            Vw[J, a] = w[a]


@njit(**KERNEL)
def reduced_dynamics(bkp, nbodies, bodies, f_ext, posep, rp, stats, kinematics):
    """Accelerations of the active joints by ABA on the reduced tree (module docstring)
    into the solver's ``qdd`` (active dofs only), after
    :func:`~articulated.algorithms.hybrid.hybrid_kinematics` at the solver's ``q``,
    ``qd``; external forces of ``bodies[:nbodies]`` (rows of ``f_ext``, body coordinates).
    The reduced tree is rebuilt when the active region changed (``counts[REGION_STAMP]``).
    Without ``kinematics`` the reduced tree's state, transforms and velocities are those
    that :func:`reduced_kinematics` or an earlier solve with ``kinematics`` left at the
    same ``q, qd`` (ABA's pass 1 is skipped); the tree must then be current. The joint
    torques are read from the solver's ``tau`` at every call. ``stats[STAT_BAD]``: -1, or
    the joint of the first non-finite acceleration."""
    bk = deref(bkp)
    ajoints, near, counts = bk.ajoints, bk.near, bk.counts
    pose = deref(posep)
    red = deref(rp)
    red_i, red_f, red_d, ridx, rstamp = red.red_i, red.red_f, red.red_d, red.ridx, red.rstamp
    vadr, jnv, nq, gravity, qdd, rq = red.vadr, red.jnv, red.nq, red.gravity, red.qdd, red.rq
    rqd, rtau, rf, Xs, xs, cache = red.rqd, red.rtau, red.rf, red.Xs, red.xs, red.cache
    stats[STAT_BAD] = -1
    if rstamp[0] != counts[REGION_STAMP]:
        _reduce(bkp, pose, rp)
    na = counts[N_AJOINTS]
    if na == 0:
        return
    mi = rows(red_i, 7, na)
    if kinematics:
        _gather(na, ajoints, mi, rp)
    rqadr = mi[2]
    rvadr = mi[3]
    for k in range(na):               # the torques of this step's forces
        J = ajoints[k]
        for d in range(jnv[J]):
            rtau[rvadr[k] + d] = red.tau[vadr[J] + d]
    last = ajoints[na - 1]
    nqr = rqadr[na - 1] + nq[last]
    nvr = rvadr[na - 1] + jnv[last]
    og = _MODEL_BODY * na + 6 * nvr   # gravity's slot in model_arrays(mi, red_f)
    for a in range(3):
        red_f[og + a] = gravity[a]    # per call: a region update solves without gravity
    for a in range(nvr):              # no armature (the adaptive methods refuse it)
        red_f[og + 3 + a] = 0.0
    for k in range(na):
        for a in range(6):
            rf[k, a] = 0.0
    front_of, leaf_of_body, C_E, C_r = bk.front_of, pose.leaf_of_body, pose.C_E, pose.C_r
    for t in range(nbodies):
        b = bodies[t]
        if (f_ext[b, 0] == 0.0 and f_ext[b, 1] == 0.0 and f_ext[b, 2] == 0.0
                and f_ext[b, 3] == 0.0 and f_ext[b, 4] == 0.0 and f_ext[b, 5] == 0.0):
            continue
        J = near[b]
        if J < 0:
            continue                  # welded to the world
        # J X b = (J X principal handle of b's piece) (principal handle X b), both constant
        # while the piece is rigid (_piece; cached_pose brings C[b] up to date)
        R = front_of[leaf_of_body[b]]
        cached_pose(b, pose)
        xform_mul_at(cache[2], cache[3], R, C_E, C_r, b, Xs, xs, 2)
        xform_inv_at(Xs, xs, 2, Xs, xs, 3)                           # b X J
        y = xform_force_T_at(Xs, xs, 3, get_vec6(f_ext, b))               # (b X J)^T f_b
        k = ridx[J]
        for a in range(6):
            rf[k, a] += y[a]
    aba_kernel(mi, red_f, rq[:nqr], rqd[:nvr], rtau[:nvr], rf[:na], False, red_d, kinematics)
    rqdd = data_arrays(red_d, na, nvr).qdd
    for k in range(na):
        J = ajoints[k]
        for d in range(jnv[J]):
            x = rqdd[rvadr[k] + d]
            qdd[vadr[J] + d] = x
            if stats[STAT_BAD] < 0 and not math.isfinite(x):
                stats[STAT_BAD] = J


@njit(**KERNEL)
def reduced_momentum(bkp, rp, keep, p):
    """Generalized momentum ``p = M qd`` on the dofs of the active joints in ``keep`` (nb,)
    bool, in O(N_A) on the reduced tree of the current hybrid body (built, at the solver's
    ``q``): piece velocities at the solver's ``qd`` (RBDA eq. 7.34), composite momenta
    ``h_k = I_k v_k + sum over the child pieces of Xup^T h_c`` and ``p_J = S_J^T h_k``
    (RBDA Sec. 7.1). Every body below an active joint belongs to a piece of its reduced
    subtree, so ``h_k`` is the momentum of the joint's whole subtree, as in
    :func:`~articulated.algorithms.hybrid.generalized_momentum` (O(n))."""
    bk = deref(bkp)
    ajoints, counts = bk.ajoints, bk.counts
    red = deref(rp)
    red_i, red_f, vadr, jnv = red.red_i, red.red_f, red.vadr, red.jnv
    na = counts[N_AJOINTS]
    if na == 0:
        return
    mi = rows(red_i, 7, na)
    Xup_E, Xup_r, v, f, _, _ = _forward_pass(na, ajoints, mi, rp, False)
    mv = model_arrays(mi, red_f)
    rparent, rvadr, rmass, rh, rIbar, rS = mv.parent, mv.vadr, mv.mass, mv.h, mv.Ibar, mv.S
    for k in range(na):
        x = inertia_times(rmass[k], get_vec3(rh, k), get_mat3(rIbar, k), get_vec6(v, k))
        set_vec6(f, k, x)
    for k in range(na - 1, -1, -1):
        J = ajoints[k]
        if keep[J]:
            for d in range(jnv[J]):
                p[vadr[J] + d] = dot6(get_vec6(rS, rvadr[k] + d), get_vec6(f, k))
        kp = rparent[k]
        if kp >= 0:
            y = xform_force_T(get_mat3(Xup_E, k), get_vec3(Xup_r, k), get_vec6(f, k))
            set_vec6(f, kp, add6(get_vec6(f, kp), y))


@inline
def reduced_kinetic(bkp, rp):
    """Kinetic energy [J] of the hybrid body, ``T = 1/2 sum_k v_k . I_k v_k`` over the
    pieces of its reduced tree (built and current) moving at the velocities ``v_k`` that
    :func:`reduced_kinematics` left in its workspace (RBDA eq. 7.34): O(N_A). It equals
    the whole body's ``1/2 qd^T M qd`` because the rigidified joints have zero velocity,
    so every body moves with its piece and a piece's inertia is the sum of its bodies'
    (pieces welded to the world are at rest)."""
    bk = deref(bkp)
    red = deref(rp)
    na = bk.counts[N_AJOINTS]
    if na == 0:
        return 0.0
    mi = rows(red.red_i, 7, na)
    mv = model_arrays(mi, red.red_f)
    v = data_arrays(red.red_d, na, mv.vadr[na - 1] + mv.jnv[na - 1]).v
    T = 0.0
    for k in range(na):
        vk = get_vec6(v, k)
        Iv = inertia_times(mv.mass[k], get_vec3(mv.h, k), get_mat3(mv.Ibar, k), vk)
        for a in range(6):
            T += 0.5 * vk[a] * Iv[a]
    return T


@njit(**KERNEL)
def reduced_step(bk, nbodies, bodies, f_ext, args, red, stats):
    """:func:`~articulated.algorithms.hybrid.hybrid_kinematics` and
    :func:`reduced_dynamics` with the hybrid-step bundle ``args`` and the reduced
    tree's buffers ``red`` (for callers in Python)."""
    hp = byref_each(args)
    bkp = byref(bk)
    hybrid_kinematics(bkp, hp)
    reduced_dynamics(bkp, nbodies, bodies, f_ext, hp.pose, byref(red), stats, True)
