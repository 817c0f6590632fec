"""Compiled kernels of the hybrid body (Redon, Galoppo & Lin 2005).

Compiled kernels of the hybrid body (Redon, Galoppo & Lin 2005, RGL Sec. 4.3, 5.4 and
6): the multilevel forward dynamics of the active region (frames, world velocities,
rigid-front biases and external forces on the rigid front), the region bookkeeping, the
velocity metric and its traversal, the generalized momentum, and the conversion of passive
nodes to and from their linear-coefficient tensors. Used by
:class:`articulated.algorithms.adaptive.AdaptiveDynamics` and by the compiled active-region
update of :mod:`articulated.algorithms.region`.
"""

from __future__ import annotations

from numba import njit

from .._byref import byref, byref_each, deref
from ..config import inline, KERNEL
from ..spatial import (congruence, get_mat3, get_sym6, get_vec3, get_vec6, inertia_times,
                       rigid_inertia, set_sym6, sym6_add, sym6_to_dense, xform_copy_at,
                       xform_dense_at, xform_force_T, xform_get, xform_inv, xform_inv_at,
                       xform_motion_at, xform_mul, xform_mul_at, xform_set)
from .back_substitution import _partial_back_substitution
from .blocks import _blk
from .bundles import N_AJOINTS, N_ANODES, N_FRONT, REGION_STAMP, STAT_N
from .handles import _leaf_bias, _node_frames, _world_pose, principal_joint_transform
from .heap import _heap_pop, _heap_push
from .kinematics import joint_motion
from .node_update import _tensor_scratch, _update_nodes
from .passive import K, _midx, evaluate_fresh, tensorize_node

# ------------------------------------------------------------------ hybrid-step kernels

@njit(**KERNEL)
def _frames_pass(nodes, n, args):
    """Principal joint transforms and hierarchical frames (RL Sec. 5.1) of the internal
    nodes ``nodes[:n]`` (post-order) only: what moves when only their joints move.

    ``args``: a :func:`~articulated._byref.byref` pointer to the
    :class:`~articulated.algorithms.bundles.NodeArgs` of the hybrid coefficient set."""
    bundle = deref(args)
    tree, inp, fr = bundle.model, bundle.inputs, bundle.frames
    for u in range(n):
        i = nodes[u]
        J = tree.node_joint[i]
        principal_joint_transform(J, tree.jtype, tree.qadr, tree.Xtree_rot, tree.axis,
                                  tree.Xtree_E, tree.Xtree_r, inp.q, fr.Xup_E,
                                  fr.Xup_r, fr.XJ_E, fr.XJ_r)
        _node_frames(i, tree, fr)


@inline
def cached_pose(b, pose):
    """``world X body`` of body b into ``(pose.Xr, pose.xq)[0]`` (RL Sec. 5.1; ``pose``: a
    :class:`~articulated.algorithms.bundles.PoseCache`): the world frame ``P`` of b's
    rigid-front node R (:func:`_world_frames`, every step) times the transform ``C[b]``
    from b to R's principal handle, which is constant while R's subtree does not move:
    walked again only when b's front node or that node's ``epoch`` changed (a node
    rigidified again after its joints moved; :func:`_rigidify
    <articulated.algorithms.region._rigidify>`), so a pose costs O(1) instead of O(tree
    height). A body in a tree without active joints walks the whole path."""
    i = pose.leaf_of_body[b]
    R = pose.front_of[i]
    Xr, xq, C_E, C_r, Tup_E, Tup_r = pose.Xr, pose.xq, pose.C_E, pose.C_r, pose.Tup_E, pose.Tup_r
    if R < 0:
        _world_pose(b, pose.leaf_of_body, pose.node_parent, pose.node_pslot, pose.node_hoff,
                    pose.handle_x, pose.H_E, pose.H_r, Tup_E, Tup_r, Xr, xq)
        return
    if pose.C_node[b] != R or pose.C_epoch[b] != pose.epoch[R]:
        xform_copy_at(pose.H_E, pose.H_r, pose.handle_x[pose.node_hoff[i] + pose.node_pslot[i]],
                      C_E, C_r, b)
        while i != R:
            xform_mul_at(Tup_E, Tup_r, i, C_E, C_r, b, Xr, xq, 1)
            xform_copy_at(Xr, xq, 1, C_E, C_r, b)
            i = pose.node_parent[i]
        pose.C_node[b] = R
        pose.C_epoch[b] = pose.epoch[R]
    xform_mul_at(pose.P_E, pose.P_r, R, C_E, C_r, b, Xr, xq, 0)


@njit(**KERNEL)
def _world_frames(anodes, na, front, nf, node_parent, node_pslot, Tup_E, Tup_r, P_E, P_r):
    """World frames ``P[i] = P[parent] Tup[i]`` (identity at the roots) of the principal
    handles of the active nodes (top-down) and of the rigid-front nodes, O(N_A) per step:
    the part of every world pose that the active joints move."""
    for u in range(na - 1, -1, -1):
        i = anodes[u]
        if node_pslot[i] < 0:
            for a in range(3):
                P_r[i, a] = 0.0
                for c in range(3):
                    P_E[i, a, c] = 1.0 if a == c else 0.0
        else:
            xform_mul_at(P_E, P_r, node_parent[i], Tup_E, Tup_r, i, P_E, P_r, i)
    for u in range(nf):
        i = front[u]
        xform_mul_at(P_E, P_r, node_parent[i], Tup_E, Tup_r, i, P_E, P_r, i)


@njit(**KERNEL)
def _active_velocities(joints, n, hp):
    """World spatial velocities (about the world origin) of the child bodies of the active
    joints ``joints[:n]`` (increasing, so parents first), ``Vw[J] = Vw[near[parent J]] +
    X_{w<-J} S qd_J`` (rigidified joints add nothing), and the velocity products
    ``c = v_J x S qd_J`` (body coordinates; aligned in c_al). World poses from the
    hierarchical frames (:func:`cached_pose` with ``pose``).

    ``hp``: the :class:`~articulated.algorithms.bundles.HybridArgs` (pointers)."""
    bundle = deref(hp.update)
    tree, inp = bundle.model, bundle.inputs
    Xr, xq = bundle.scratch.Xr, bundle.scratch.xq
    hs, pose = deref(hp.state), deref(hp.pose)
    for u in range(n):
        J = joints[u]
        cached_pose(J, pose)                                  # (Xr, xq)[0] = w X J
        m = joint_motion(J, tree.vadr, tree.jnv, hs.S, hs.qd)
        w = xform_motion_at(Xr, xq, 0, m)
        p = hs.parent[J]
        k = hs.near[p] if p >= 0 else -1
        for a in range(6):
            hs.Vw[J, a] = w[a] + (hs.Vw[k, a] if k >= 0 else 0.0)
        xform_inv_at(Xr, xq, 0, Xr, xq, 1)                            # J X w
        v = xform_motion_at(Xr, xq, 1, get_vec6(hs.Vw, J))
        # c = v x (S qd) (RBDA eq. 7.34)
        hs.c[J, 0] = v[1] * m[2] - v[2] * m[1]
        hs.c[J, 1] = v[2] * m[0] - v[0] * m[2]
        hs.c[J, 2] = v[0] * m[1] - v[1] * m[0]
        hs.c[J, 3] = v[1] * m[5] - v[2] * m[4] + v[4] * m[2] - v[5] * m[1]
        hs.c[J, 4] = v[2] * m[3] - v[0] * m[5] + v[5] * m[0] - v[3] * m[2]
        hs.c[J, 5] = v[0] * m[4] - v[1] * m[3] + v[3] * m[1] - v[4] * m[0]
        x = xform_motion_at(tree.H_E, tree.H_r, 2 * J + 1, get_vec6(hs.c, J))
        for a in range(6):
            inp.c_al[J, a] = x[a]


@inline
def _front_velocity(b, ho, near, Vw, H_E, H_r, handle_x, Xr, xq, pose):
    """Spatial velocity (a 6-tuple) of a rigid node's handle-0 frame (slot ``ho``, fixed to
    body b): the world velocity of the nearest active joint on b's path, ``Vw[near[b]]``
    (zero if none), moved into the handle frame through the hierarchical frames."""
    k = near[b]
    if k < 0:
        return (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    cached_pose(b, pose)
    xform_inv_at(Xr, xq, 0, Xr, xq, 1)                                # b X w
    vb = xform_motion_at(Xr, xq, 1, get_vec6(Vw, k))
    return xform_motion_at(H_E, H_r, handle_x[ho], vb)


@inline
def _composite_inertia(R, epoch, comp):
    """Composite rigid-body inertia ``Ic[R]`` (packed 21-tuple layout of
    :func:`articulated.spatial.congruence`) of the rigid node R in its principal-handle
    frame: the sum of its bodies' inertias (RBDA Sec. 6.2, eq. 6.17), summed up the
    assembly tree, ``Ic[i] = sum over children C of (C X i)^T Ic[C] (C X i)`` with ``i X C =
    Tup[C]``, and for a leaf the body's inertia (RBDA eq. 2.63) moved to its principal
    handle. A rigid node's subtree is rigid, so its children's sums are kept: only the
    nodes whose ``Ic_epoch`` differs from their ``epoch`` (those rigidified since) are summed
    again, in post-order from an explicit stack. No inversion: unlike ``(Phi_00)^-1`` it
    keeps full precision for long rigid pieces, whose 6x6 inertia is badly conditioned.

    ``comp``: a :class:`~articulated.algorithms.bundles.CompositeInertias`."""
    node_A, node_B, node_joint = comp.node_A, comp.node_B, comp.node_joint
    node_body, node_hoff, node_pslot = comp.node_body, comp.node_hoff, comp.node_pslot
    handle_x, H_E, H_r, Tup_E, Tup_r = comp.handle_x, comp.H_E, comp.H_r, comp.Tup_E, comp.Tup_r
    mass, h, Ibar, Ic, Ic_epoch = comp.mass, comp.h, comp.Ibar, comp.Ic, comp.Ic_epoch
    stack, Xr, xq = comp.stack, comp.Xr, comp.xq
    if Ic_epoch[R] == epoch[R]:
        return
    top = 0
    stack[0] = R
    while top >= 0:
        i = stack[top]
        if node_joint[i] < 0:                       # leaf: body X principal handle
            b = node_body[i]
            xform_inv_at(H_E, H_r, handle_x[node_hoff[i] + node_pslot[i]], Xr, xq, 0)
            M = congruence(get_mat3(Xr, 0), get_vec3(xq, 0), rigid_inertia(mass[b], get_vec3(h, b),
                                                                           get_mat3(Ibar, b)))
        else:
            A = node_A[i]
            B = node_B[i]
            pushed = False
            if A >= 0 and Ic_epoch[A] != epoch[A]:
                top += 1
                stack[top] = A
                pushed = True
            if Ic_epoch[B] != epoch[B]:
                top += 1
                stack[top] = B
                pushed = True
            if pushed:
                continue
            xform_inv_at(Tup_E, Tup_r, B, Xr, xq, 0)        # B X i
            M = congruence(get_mat3(Xr, 0), get_vec3(xq, 0), get_sym6(Ic, B))
            if A >= 0:
                xform_inv_at(Tup_E, Tup_r, A, Xr, xq, 0)    # A X i
                M = sym6_add(M, congruence(get_mat3(Xr, 0), get_vec3(xq, 0), get_sym6(Ic, A)))
        set_sym6(Ic, i, M)
        Ic_epoch[i] = epoch[i]
        top -= 1


@njit(**KERNEL)
def _front_inertias(front, n, node_hoff, node_nh, Tp_E, Tp_r, I0, epoch, I0_epoch, comp):
    """``I0[R]``: the spatial inertia of each rigid-front node ``R = front[u]`` in its
    handle-0 frame, the congruence of its composite inertia (:func:`_composite_inertia`)
    with ``Tp[handle 0]`` (handle 0 -> principal handle). It is the inverse of the node's
    ``Phi_00`` (RGL eq. 6: a rigid node's handle-0 coefficient is its inverse inertia), but
    summed instead of inverted. It is constant while the node stays rigid, so it is formed
    only where ``I0_epoch[R]`` differs from ``epoch[R]`` (which counts the recomputations
    of the node's rigid-state coefficients). A node without handles (a root welded to the
    world) keeps its inertia in its principal (world) frame."""
    for u in range(n):
        R = front[u]
        if I0_epoch[R] == epoch[R]:
            continue
        _composite_inertia(R, epoch, comp)
        M = get_sym6(comp[14], R)
        if node_nh[R] > 0:
            ho = node_hoff[R]
            M = congruence(get_mat3(Tp_E, ho), get_vec3(Tp_r, ho), M)
        sym6_to_dense(M, I0[R])
        I0_epoch[R] = epoch[R]


@njit(**KERNEL)
def _front_biases(front, n, hp):
    """Bias accelerations of the rigid-front nodes (RGL Sec. 6.2: eq. 3 with the node's
    rigid inertia and velocity): a rigid node moves as one rigid body, so with ``I_0 =
    (Phi_00)^-1`` (``I0[R]``, :func:`_front_inertias`) and ``v_0`` the velocity of its
    handle-0 frame, ``b_k = Phi_k0 (f_0 - v_0 x* I_0 v_0)``. ``f0[u]``: external force on
    the node in the handle-0 frame.

    ``hp``: the :class:`~articulated.algorithms.bundles.HybridArgs` (pointers)."""
    bundle = deref(hp.update)
    tree, co = bundle.model, bundle.coef
    Xr, xq = bundle.scratch.Xr, bundle.scratch.xq
    hs, pose = deref(hp.state), deref(hp.pose)
    for u in range(n):
        R = front[u]
        ho = tree.node_hoff[R]
        nh = tree.node_nh[R]
        v = _front_velocity(hs.front_body[u], ho, hs.near, hs.Vw, tree.H_E, tree.H_r,
                            tree.handle_x, Xr, xq, pose)
        p0 = p1 = p2 = p3 = p4 = p5 = 0.0
        for c in range(6):
            p0 += hs.I0[R, 0, c] * v[c]
            p1 += hs.I0[R, 1, c] * v[c]
            p2 += hs.I0[R, 2, c] * v[c]
            p3 += hs.I0[R, 3, c] * v[c]
            p4 += hs.I0[R, 4, c] * v[c]
            p5 += hs.I0[R, 5, c] * v[c]
        # y = f0 - v x* (I_0 v)
        y0 = hs.f0[u, 0] - (v[1] * p2 - v[2] * p1 + v[4] * p5 - v[5] * p4)
        y1 = hs.f0[u, 1] - (v[2] * p0 - v[0] * p2 + v[5] * p3 - v[3] * p5)
        y2 = hs.f0[u, 2] - (v[0] * p1 - v[1] * p0 + v[3] * p4 - v[4] * p3)
        y3 = hs.f0[u, 3] - (v[1] * p5 - v[2] * p4)
        y4 = hs.f0[u, 4] - (v[2] * p3 - v[0] * p5)
        y5 = hs.f0[u, 5] - (v[0] * p4 - v[1] * p3)
        for kk in range(nh):
            row, tr = _blk(ho, tree.node_ooff[R], tree.n_slots, nh, kk, 0)
            for a in range(6):
                if tr:
                    s = (co.Phi[row, 0, a] * y0 + co.Phi[row, 1, a] * y1 + co.Phi[row, 2, a] * y2
                         + co.Phi[row, 3, a] * y3 + co.Phi[row, 4, a] * y4 + co.Phi[row, 5,
                                                                                    a] * y5)
                else:
                    s = (co.Phi[row, a, 0] * y0 + co.Phi[row, a, 1] * y1 + co.Phi[row, a, 2] * y2
                         + co.Phi[row, a, 3] * y3 + co.Phi[row, a, 4] * y4 + co.Phi[row, a,
                                                                                    5] * y5)
                co.bh[ho + kk, a] = s


# ------------------------------------------------------------- passive nodes (RGL Sec. 6.2)

@njit(**KERNEL)
def leaf_tensors(leaves, tree, scratch, lz):
    """Linear-coefficient tensors of the leaves ``leaves`` (RGL eq. 3 with the velocity of a
    body moving with the twist ``v`` of its principal handle: ``b_k = X_k I^-1 (-v_b x* I
    v_b)``, ``v_b = X_b v``) as functions of the twist in each leaf's reference frame
    (``ref_E, ref_r`` of the :class:`~articulated.algorithms.bundles.PassiveTensors`
    ``lz``): the quadratic coefficients by polarization; ``p = 0``, ``eta = 0`` (RL Lemma
    1). External forces are not included (module :mod:`.passive`). ``tree``: the
    :class:`~articulated.algorithms.bundles.NodeModel`; ``scratch = (vs, zs, bs, nof, Xr,
    xq, X6)``: vs, zs (nb, 6), bs (hmax, 6), nof (0, 6), a transform slot Xr (>= 1, 3, 3),
    xq (>= 1, 3), X6 (1, 6, 6). Writes the leaves' slots of ``lz.Bt`` (ns, 6, K); their
    ``lz.Pt`` slots and ``lz.G`` rows are zero as allocated and never read."""
    for u in range(leaves.shape[0]):
        _leaf_tensor(leaves[u], tree, scratch, lz)


@njit(**KERNEL)
def _leaf_tensor(i, tree, scratch, lz):
    """:func:`leaf_tensors` of the leaf i."""
    vs, zs, bs, nof, Xr, xq, X6 = scratch
    Bt = lz.Bt
    b = tree.node_body[i]
    ho = tree.node_hoff[i]
    nh = tree.node_nh[i]
    # body <- principal handle <- reference frame
    xform_set(Xr, xq, 0, xform_mul(
        xform_inv(xform_get(tree.H_E, tree.H_r, tree.handle_x[ho + tree.node_pslot[i]])),
        xform_inv(xform_get(lz.ref_E, lz.ref_r, i))))
    xform_dense_at(Xr, xq, 0, X6, 0)
    # a leaf's Pt and G (p = 0, eta = 0, RL Lemma 1) are never read: left as allocated
    # (untouched memory of a large model is never paged in)
    for k in range(nh):
        for a in range(6):
            Bt[ho + k, a, 0] = 0.0
    for j in range(6):
        for l in range(j, 6):
            for a in range(6):
                vs[b, a] = X6[0, a, j] + (X6[0, a, l] if l != j else 0.0)
            _leaf_bias(b, i, tree, vs, nof, False, zs, bs, 0)
            m = _midx(j, l)
            for k in range(nh):
                for a in range(6):
                    Bt[ho + k, a, m] = bs[k, a]
    for j in range(6):
        for l in range(j + 1, 6):
            m = _midx(j, l)
            for k in range(nh):
                for a in range(6):
                    Bt[ho + k, a, m] -= Bt[ho + k, a, _midx(j, j)] + Bt[ho + k, a, _midx(l, l)]


@njit(**KERNEL)
def tensorize_nodes(nodes, n, uargs, lz, tens):
    """Nodes becoming passive (post-order; internal, non-root): each node's dense blocks
    (:func:`~articulated.algorithms.node_update._tensor_scratch`, into ``T``, from the
    fully articulated coefficients the region update has just computed at the current
    configuration) and its tensors (:func:`articulated.algorithms.passive.tensorize_node`)
    into the :class:`~articulated.algorithms.bundles.PassiveTensors` ``lz``.

    Reference frames: a node whose parent is also in ``nodes`` shares its parent's (the
    parent's frame carried down by the constant ``Tup``), the others get a new one: the
    frame of their first internal child tensorized in an earlier update (:func:`_old_child`,
    whose tensors then need no map), else their principal-handle frame. A child in its
    parent's frame needs no monomial map (the K x K products of
    :func:`~articulated.algorithms.passive.tensorize_node`); leaf children are
    re-tensorized in their parent's frame (:func:`leaf_tensors`, cheaper than the map),
    other children keep theirs and are mapped. ``uargs``: the arguments of
    :func:`_update_nodes` for the fully articulated coefficient set; ``tens = (MX, M, S,
    Gs, lsc)``: scratch MX (2, 6, 6), M (2, K, K), S (8, 6, K), Gs (2, K, K) and the
    scratch ``lsc`` of :func:`leaf_tensors`."""
    tree, fr, sc = uargs.model, uargs.frames, uargs.scratch
    up = byref(uargs)
    MX, M, S, Gs, lsc = tens
    ref_E, ref_r, ref_id = lz.ref_E, lz.ref_r, lz.ref_id
    id0 = lz.nref[0]
    batch = -2 - ref_id.shape[0]                    # below every id (they start at -1 - i)
    for u in range(n):
        ref_id[nodes[u]] = batch
    for u in range(n - 1, -1, -1):                  # parents first
        i = nodes[u]
        p = tree.node_parent[i]
        if p >= 0 and ref_id[p] >= id0:             # p is in this batch
            ref_id[i] = ref_id[p]
            xform_set(ref_E, ref_r, i, xform_mul(xform_get(ref_E, ref_r, p),
                                                 xform_get(fr.Tup_E, fr.Tup_r, i)))
            continue
        ref_id[i] = lz.nref[0]
        lz.nref[0] += 1
        ch = _old_child(i, tree, ref_id, batch)
        if ch >= 0:                                 # ref_i v_i = ref_ch v_ch
            xform_set(ref_E, ref_r, i, xform_mul(xform_get(ref_E, ref_r, ch),
                                                 xform_inv(xform_get(fr.Tup_E, fr.Tup_r, ch))))
        else:
            xform_set(ref_E, ref_r, i, (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0,
                                        0.0, 0.0, 0.0))
    for u in range(n):
        i = nodes[u]
        _tensor_scratch(i, up)
        p = tree.node_parent[i]
        adopted = -1
        if p < 0 or ref_id[p] != ref_id[i]:         # a new frame: its adopted child's
            adopted = _old_child(i, tree, ref_id, ref_id[i])
        A = tree.node_A[i]
        B = tree.node_B[i]
        sameA = A == adopted or _child_frame(i, A, 0, tree, fr, sc, lz, MX, lsc)
        sameB = B == adopted or _child_frame(i, B, 1, tree, fr, sc, lz, MX, lsc)
        tensorize_node(i, up, lz, (MX, M, S, Gs), sameA, sameB)


@inline
def _old_child(i, tree, ref_id, batch):
    """The first internal child of the node i whose reference id is not ``batch`` (the
    mark of the nodes tensorized with i), i.e. one whose tensors an earlier update built
    in a frame of its own; -1 when there is none."""
    A = tree.node_A[i]
    if tree.node_joint[A] >= 0 and ref_id[A] != batch:
        return A
    B = tree.node_B[i]
    if tree.node_joint[B] >= 0 and ref_id[B] != batch:
        return B
    return -1


@inline
def _child_frame(i, ch, side, tree, fr, sc, lz, MX, lsc):
    """Child ``ch`` of the node i being tensorized (:func:`tensorize_nodes`): a leaf is
    re-tensorized in i's reference frame (:func:`_leaf_tensor`); another child with a
    frame of its own gets the dense map ``MX[side]`` of twists from i's reference frame
    to ch's. Returns True when ch's tensors are in i's frame (no map)."""
    ref_E, ref_r, ref_id = lz.ref_E, lz.ref_r, lz.ref_id
    if tree.node_joint[ch] < 0:
        ref_id[ch] = ref_id[i]
        xform_set(ref_E, ref_r, ch, xform_mul(xform_get(ref_E, ref_r, i),
                                              xform_get(fr.Tup_E, fr.Tup_r, ch)))
        _leaf_tensor(ch, tree, lsc, lz)
        return True
    if ref_id[ch] == ref_id[i]:
        return True
    # v_ch = ref_ch Tup_ch^-1 ref_i^-1 v_i (reference twists)
    xform_set(sc.Xr, sc.xq, 0, xform_mul(
        xform_get(ref_E, ref_r, ch),
        xform_mul(xform_inv(xform_get(fr.Tup_E, fr.Tup_r, ch)),
                  xform_inv(xform_get(ref_E, ref_r, i)))))
    xform_dense_at(sc.Xr, sc.xq, 0, MX, side)
    return False


@njit(**KERNEL)
def passive_front(front, nfront, front_body, near, Vw, region, nreg, in_region, node_active,
                   solve, pose):
    """Conversion of the hybrid body to the fully articulated state around the active region
    (RGL Sec. 6): the rigid twists ``vnode`` of the rigid-front nodes (principal-handle
    frame) and of the passive nodes of ``region`` (the force-update region and passive root
    nodes, recomputed exactly), the body velocities ``v`` of the region's leaves, and the
    fully articulated coefficients, from their tensors, of every front node and every child
    of a passive region node outside the region. Every region node and every evaluated node
    is marked fresh (listed in ``fresh_list``). ``solve``: a pointer to the
    :class:`~articulated.algorithms.bundles.SolveArgs` of the fully articulated coefficient
    set (its passive tensors included); ``pose``: a
    :class:`~articulated.algorithms.bundles.PoseCache`."""
    bundle = deref(solve)
    tree, inp, fr, co, sc, lz = (bundle.model, bundle.inputs, bundle.frames, bundle.coef,
                                 bundle.scratch, bundle.passive)
    vnode = lz.vnode
    for u in range(nfront):
        Rn = front[u]
        ho = tree.node_hoff[Rn]
        w = _front_velocity(front_body[u], ho, near, Vw, tree.H_E, tree.H_r, tree.handle_x, sc.Xr,
                            sc.xq, pose)
        x = xform_motion_at(fr.Tp_E, fr.Tp_r, ho, w)
        for a in range(6):
            vnode[Rn, a] = x[a]
        if not in_region[Rn]:
            evaluate_fresh(Rn, x, tree, co, lz, True)
    for u in range(nreg - 1, -1, -1):                 # parents first
        i = region[u]
        lz.fresh[i] = True
        lz.fresh_list[lz.nfresh[0]] = i
        lz.nfresh[0] += 1
        if node_active[i]:
            continue
        p = tree.node_parent[i]
        if p < 0:
            for a in range(6):
                vnode[i, a] = 0.0                     # a rigid root joint: welded to the world
        elif not node_active[p]:
            xform_inv_at(fr.Tup_E, fr.Tup_r, i, sc.Xr, sc.xq, 2)
            x = xform_motion_at(sc.Xr, sc.xq, 2, get_vec6(vnode, p))
            for a in range(6):
                vnode[i, a] = x[a]
        if tree.node_joint[i] < 0:
            b = tree.node_body[i]
            xform_inv_at(tree.H_E, tree.H_r, tree.handle_x[tree.node_hoff[i] + tree.node_pslot[i]],
                         sc.Xr, sc.xq, 2)
            x = xform_motion_at(sc.Xr, sc.xq, 2, get_vec6(vnode, i))
            for a in range(6):
                inp.v[b, a] = x[a]
            continue
        for ch in (tree.node_A[i], tree.node_B[i]):
            if ch >= 0 and not in_region[ch]:
                xform_inv_at(fr.Tup_E, fr.Tup_r, ch, sc.Xr, sc.xq, 2)
                x = xform_motion_at(sc.Xr, sc.xq, 2, get_vec6(vnode, i))
                evaluate_fresh(ch, x, tree, co, lz, True)


@njit(**KERNEL)
def generalized_momentum(parent, vadr, jnv, S, Xup_E, Xup_r, mass, h, Ibar, v, hc, p):
    """``p = M qd`` in O(n) from the body velocities: composite momenta ``h_i = I_i v_i +
    sum_children Xup_c^T h_c`` (body coordinates) and ``p_i = S_i^T h_i`` (RBDA Sec. 7.1,
    the momentum form of the CRBA). ``hc`` (nb, 6) scratch."""
    nb = parent.shape[0]
    for i in range(nb):
        x = inertia_times(mass[i], get_vec3(h, i), get_mat3(Ibar, i), (v[i, 0], v[i, 1], v[i, 2],
                                                                       v[i, 3], v[i, 4], v[i, 5]))
        for a in range(6):
            hc[i, a] = x[a]
    for i in range(nb - 1, -1, -1):
        for r in range(jnv[i]):
            s = 0.0
            for a in range(6):
                s += S[vadr[i] + r, a] * hc[i, a]
            p[vadr[i] + r] = s
        pa = parent[i]
        if pa >= 0:
            y = xform_force_T(get_mat3(Xup_E, i), get_vec3(Xup_r, i),
                              (hc[i, 0], hc[i, 1], hc[i, 2], hc[i, 3], hc[i, 4], hc[i, 5]))
            for a in range(6):
                hc[pa, a] += y[a]


@njit(**KERNEL)
def _forces_on_front(bodies, n, f_ext, hp):
    """Add the external forces of ``bodies[:n]`` (body coordinates) to their rigid-front
    node's handle-0 frame: ``f0[u] += X*_{h0<-b} f_b`` with ``h0 X b = H_h0 (b0 X w)
    (w X b)`` from the hierarchical frames (O(log n) per body).

    ``hp``: the :class:`~articulated.algorithms.bundles.HybridArgs` (pointers)."""
    bundle = deref(hp.update)
    tree = bundle.model
    Xr, xq = bundle.scratch.Xr, bundle.scratch.xq
    hs, pose = deref(hp.state), deref(hp.pose)
    for t in range(n):
        b = bodies[t]
        if (f_ext[b, 0] == 0.0 and f_ext[b, 1] == 0.0 and f_ext[b, 2] == 0.0
                and f_ext[b, 3] == 0.0 and f_ext[b, 4] == 0.0 and f_ext[b, 5] == 0.0):
            continue
        R = hs.front_of[pose.leaf_of_body[b]]
        if R < 0:
            continue                   # no active joint in b's tree: welded to the world
        u = hs.front_index[R]
        b0 = hs.front_body[u]
        cached_pose(b0, pose)
        xform_inv_at(Xr, xq, 0, Xr, xq, 2)                            # b0 X w
        cached_pose(b, pose)                                  # w X b in slot 0
        xform_mul_at(Xr, xq, 2, Xr, xq, 0, Xr, xq, 1)                 # b0 X b
        xform_mul_at(tree.H_E, tree.H_r, tree.handle_x[tree.node_hoff[R]], Xr, xq, 1, Xr, xq,
                     0)   # h0 X b
        # f_h = X* f = [E (n - r x f); E f]
        fx, fy, fz = f_ext[b, 3], f_ext[b, 4], f_ext[b, 5]
        n0 = f_ext[b, 0] - (xq[0, 1] * fz - xq[0, 2] * fy)
        n1 = f_ext[b, 1] - (xq[0, 2] * fx - xq[0, 0] * fz)
        n2 = f_ext[b, 2] - (xq[0, 0] * fy - xq[0, 1] * fx)
        for a in range(3):
            hs.f0[u, a] += Xr[0, a, 0] * n0 + Xr[0, a, 1] * n1 + Xr[0, a, 2] * n2
            hs.f0[u, 3 + a] += Xr[0, a, 0] * fx + Xr[0, a, 1] * fy + Xr[0, a, 2] * fz


@njit(**KERNEL)
def velocity_traversal(roots, V, node_A, node_B, node_joint, eps_vel, budget, new, hk, hn):
    """Top-down traversal of the trees below ``roots`` by priority of the velocity metric
    ``V`` (RGL Sec. 5.4.1) with an array heap (``hk``, ``hn``: (n_nodes,) scratch): marks
    ``new[J]`` for every joint visited; stops after ``budget`` joints (< 0: no budget) or
    when the metric left in the queue is at most ``eps_vel`` (> 0; the queue sum is
    recomputed exactly before stopping)."""
    m = 0
    left = 0.0
    for r in roots:
        m = _heap_push(hk, hn, m, V[r], r)
        left += V[r]
    count = 0
    while m > 0:
        if budget >= 0 and count >= budget:
            break
        if eps_vel > 0.0 and left <= eps_vel:
            left = 0.0
            for k in range(m):
                left += hk[k]
            if left <= eps_vel:
                break
        key = hk[0]
        i = hn[0]
        m = _heap_pop(hk, hn, m)
        left -= key
        new[node_joint[i]] = True
        count += 1
        for ch in (node_A[i], node_B[i]):
            if ch >= 0 and node_joint[ch] >= 0:
                m = _heap_push(hk, hn, m, V[ch], ch)
                left += V[ch]


@njit(**KERNEL)
def velocity_metric(nodes, n, node_A, node_B, node_joint, vadr, jnv, Vw, qd, V):
    """``V(C) = qd_J^T V_J qd_J + V(A) + V(B)`` of the internal nodes ``nodes[:n]``
    (post-order), bottom-up (RGL Sec. 5.4.1); ``V`` must hold the children's values (zero
    for leaves and for nodes whose joints all have zero velocity)."""
    for u in range(n):
        i = nodes[u]
        J = node_joint[i]
        if J < 0:
            V[i] = 0.0
            continue
        s = 0.0
        va = vadr[J]
        for r in range(jnv[J]):
            for c in range(jnv[J]):
                s += qd[va + r] * Vw[J, r, c] * qd[va + c]
        s += V[node_B[i]]
        if node_A[i] >= 0:
            s += V[node_A[i]]
        V[i] = s


@njit(**KERNEL)
def _region_bookkeeping(active, prep, bk):
    """The bookkeeping of an active region (RGL Sec. 4.1) in one O(n) integer pass, from the
    tree arrays of the :class:`~articulated.algorithms.bundles.RegionPrep` ``prep`` into the
    :class:`~articulated.algorithms.bundles.RegionBuffers` ``bk``: ``node_active``, the
    active nodes ``anodes`` (post-order), the rigid front ``front`` (rigid nodes whose parent
    is active, leaves included) with ``front_index`` (-1 off the front), the body carrying
    each front node's handle 0 ``front_body``, the active joints ``ajoints``, the nearest
    active joint on every body's path ``near`` and the front node containing every node
    ``front_of`` (itself on the front, -1 inside the active region or in a tree without
    active joints). Returns the counts ``(na, nf, nj)``."""
    node_joint, node_parent, node_hoff = prep.node_joint, prep.node_parent, prep.node_hoff
    handle_joint, handle_side, body_parent = prep.handle_joint, prep.handle_side, prep.body_parent
    node_active, anodes, front, front_body = bk.node_active, bk.anodes, bk.front, bk.front_body
    ajoints, near, front_of, front_index = bk.ajoints, bk.near, bk.front_of, bk.front_index
    nn = node_joint.shape[0]
    na = 0
    for i in range(nn):
        J = node_joint[i]
        a = J >= 0 and active[J]
        node_active[i] = a
        if a:
            anodes[na] = i
            na += 1
    nf = 0
    for i in range(nn):
        front_index[i] = -1
        p = node_parent[i]
        if not node_active[i] and p >= 0 and node_active[p]:
            front_index[i] = nf
            front[nf] = i
            s = node_hoff[i]
            hj = handle_joint[s]
            front_body[nf] = hj if handle_side[s] == 1 else body_parent[hj]
            nf += 1
    nj = 0
    for b in range(active.shape[0]):
        if active[b]:
            ajoints[nj] = b
            nj += 1
    _nearest_active(body_parent, active, near)
    for i in range(nn - 1, -1, -1):                   # reverse post-order: parents first
        if front_index[i] >= 0:
            front_of[i] = i
        elif node_parent[i] >= 0:
            front_of[i] = front_of[node_parent[i]]
        else:
            front_of[i] = -1
    return na, nf, nj


@njit(**KERNEL)
def _nearest_active(parent, active, near):
    """near[b] = the nearest active joint on body b's path to the root (b's own joint
    included), -1 if none; bodies in depth-first order (parents first)."""
    for b in range(parent.shape[0]):
        if active[b]:
            near[b] = b
        elif parent[b] >= 0:
            near[b] = near[parent[b]]
        else:
            near[b] = -1


# ------------------------------------------------------- composite steps (RGL Sec. 4.1, 4.3)
# ``bk``: the :class:`~articulated.algorithms.bundles.RegionBuffers`, allocated once per
# solver; ``args``: the :class:`~articulated.algorithms.bundles.HybridArgs` of
# :meth:`AdaptiveDynamics.hybrid_args` (full buffers; the region's lists and counts come from
# ``bk``); ``hp``: the same bundle of pointers (:func:`~articulated._byref.byref_each`, made
# once by the calling kernel), ``bkp``: a pointer to ``bk`` (:func:`~articulated._byref.byref`).

@njit(**KERNEL)
def prepare_region(active, prep, bk):
    """Bookkeeping of the active region ``active`` (:func:`_region_bookkeeping`; ``prep``: a
    :class:`~articulated.algorithms.bundles.RegionPrep`) into the buffers ``bk`` and the
    rigid-front inertias (:func:`_front_inertias`); O(n) integer
    pass, O(N_front) inertias plus one composite sum per node rigidified since its last
    sum (O(n) once after :meth:`AdaptiveDynamics.prepare_region`, which marks all stale)."""
    node_hoff, node_nh, Tp_E, Tp_r, comp = (prep.node_hoff, prep.node_nh, prep.Tp_E,
                                            prep.Tp_r, prep.comp)
    front, I0, counts, epoch, I0_epoch = bk.front, bk.I0, bk.counts, bk.epoch, bk.I0_epoch
    na, nf, nj = _region_bookkeeping(active, prep, bk)
    counts[N_ANODES] = na
    counts[N_FRONT] = nf
    counts[N_AJOINTS] = nj
    counts[REGION_STAMP] += 1                     # new region: the reduced tree is stale
    _front_inertias(front, nf, node_hoff, node_nh, Tp_E, Tp_r, I0, epoch, I0_epoch, comp)


@njit(**KERNEL)
def hybrid_kinematics(bkp, hp):
    """Frames and principal transforms of the active nodes and world velocities of the
    active joints' bodies at the solver's ``q``, ``qd`` (O(N_A log n))."""
    bk = deref(bkp)
    _frames_pass(bk.anodes, bk.counts[N_ANODES], hp.update)
    world_frames(bkp, hp)
    _active_velocities(bk.ajoints, bk.counts[N_AJOINTS], hp)


@njit(**KERNEL)
def world_frames(bkp, hp):
    """The world frames ``P`` of the active and rigid-front nodes of the current region
    (:func:`_world_frames`) from their hierarchical frames as they are: what a new region
    of the same configuration needs (the frames of a node depend only on the joints of its
    subtree, and a joint that joins the region has not moved since it was rigidified)."""
    bk = deref(bkp)
    pose = deref(hp.pose)
    _world_frames(bk.anodes, bk.counts[N_ANODES], bk.front, bk.counts[N_FRONT],
                  pose.node_parent, pose.node_pslot, pose.Tup_E, pose.Tup_r, pose.P_E,
                  pose.P_r)


@njit(**KERNEL)
def hybrid_dynamics(bkp, nbodies, bodies, f_ext, hp, prev_n, stats):
    """The rest of the multilevel forward dynamics (RGL Sec. 4.3) after
    :func:`hybrid_kinematics`: external forces of ``bodies[:nbodies]`` on the rigid front,
    rigid-front biases, active-node coefficients (no metric; their frames are those of
    :func:`hybrid_kinematics`) and the exact back-substitution over the active region into
    the solver's qdd. Returns the number of joints computed
    (the next ``prev_n``); ``stats[STAT_BAD] >= 0`` names a joint whose acceleration is not
    finite."""
    bk = deref(bkp)
    front, f0, counts = bk.front, bk.f0, bk.counts
    anodes = bk.anodes
    for u in range(counts[N_FRONT]):
        for a in range(6):
            f0[u, a] = 0.0
    _forces_on_front(bodies, nbodies, f_ext, hp)
    _front_biases(front, counts[N_FRONT], hp)
    _update_nodes(anodes, counts[N_ANODES], hp.update)
    _partial_back_substitution(-1.0, 0, -1, prev_n, hp.solve)
    return int(stats[STAT_N])


@njit(**KERNEL)
def hybrid_frames(bk, args):
    """:func:`_frames_pass` over the active nodes with the bundle ``args`` (for
    callers in Python)."""
    _frames_pass(bk.anodes, bk.counts[N_ANODES], byref(args.update))


@njit(**KERNEL)
def hybrid_step(bk, nbodies, bodies, f_ext, args, prev_n, stats, dynamics):
    """:func:`hybrid_kinematics`, and with ``dynamics`` :func:`hybrid_dynamics`, with the
    bundle ``args`` (for callers in Python). Returns the number of joints computed
    (``prev_n`` without ``dynamics``)."""
    hp = byref_each(args)
    bkp = byref(bk)
    hybrid_kinematics(bkp, hp)
    if not dynamics:
        return prev_n
    return hybrid_dynamics(bkp, nbodies, bodies, f_ext, hp, prev_n, stats)
