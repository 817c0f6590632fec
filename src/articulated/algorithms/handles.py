"""Handle frames, leaves and hierarchical frames of the DCA engine.

Sources: Redon, Galoppo & Lin (2005) (RGL), eq. 3 (leaf coefficients); Redon & Lin (2005)
(RL), Sec. 5.1 (hierarchical reference frames).

Handle frames
-------------
Each handle has its own frame, rigidly attached to the body it sits on (:func:`handle_frames`):

* handle ``(J, 1)`` on child body J: the body-J frame turned by a constant rotation ``R_J``;
* handle ``(J, 0)`` on the parent body ``p``: the joint frame of J *before* the joint
  motion (the placement ``X_tree[J]`` in body p) turned by the same ``R_J``.

``R_J`` turns a revolute or prismatic axis onto z (identity for the other joint types), so
that in these *aligned* frames the motion subspace is a set of coordinate axes: ``S = e_2``
(angular z) for a revolute joint, ``e_5`` for a prismatic one, the angular axes for a
spherical joint, all six for a free joint, none for a fixed joint. Every handle quantity
(``a_k``, ``f_k``, ``b_k``, the rows and columns of ``Phi_kl``) is expressed in its handle's
frame. The only configuration-dependent transform a node uses is its **principal joint
transform** ``X_J(q_J)`` from the frame of ``(J, 0)`` to that of ``(J, 1)``
(:func:`principal_joint_transform`), a function of q_J alone: a rotation about z
(revolute), a translation along z (prismatic), or general. So the leaf coefficients ``Phi``
are constant (computed once per model, :func:`_leaf_phi_kernel`), and a change of q_J
changes only the coefficients of J's node and its ancestors, which is what the lazy updates
of RL Sec. 5.2 need. Leaves are rigid bodies (RGL eq. 3): ``Phi_kl = X_k I^-1 X_l^T``,
``b_k = X_k I^-1 (f_ext - v x* I v)`` (:func:`_leaf_bias`).

Hierarchical frames (RL Sec. 5.1)
---------------------------------
The solvers that keep every node's coefficients also keep, for every node N, the transform
``Tp[s]`` from the frame of each of its handles (slot s) to the frame of N's *principal
handle* (the one N's parent consumes), from which every handle cross-transform follows in
O(1) (``T_kl = Tp_k^-1 Tp_l``), and the *principal-handle transform* ``Tup[N]`` from N's
principal-handle frame to its parent's (to the world for the child of a root node)
(:func:`_node_frames`, :func:`_leaf_frames`). World poses of a body are the product of the
``Tup`` on its path: O(tree height), never O(n) (:func:`_world_pose`). Like every node
coefficient they depend only on the principal joint transforms inside the subassembly.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..config import inline, JIT, KERNEL
from ..model import JOINT_FREE, JOINT_PRISMATIC, JOINT_REVOLUTE, JOINT_SPHERICAL, Model
from ..spatial import (get_vec6, xform_copy_at, xform_get, xform_inv, xform_inv_at,
                       xform_motion_at, xform_mul, xform_mul_at, xform_rows_at, xform_set)
from .blocks import _child_blocks, _child_slot, _children, _oidx, _symv
from .kinematics import joint_xup, velocity_step


@inline
def principal_joint_transform(i, jtype, qadr, Xtree_rot, axis, Xtree_E, Xtree_r, q, Xup_E, Xup_r,
                              XJ_E, XJ_r):
    """Joint i's ``Xup = X_J X_tree`` (into Xup_E, Xup_r; returned as ``(E, r)`` tuples) and
    its principal joint transform in the aligned handle frames, ``R X_J(q_i) R^T`` (compact,
    into XJ_E, XJ_r; ``R = H_E[2 i + 1]``, :func:`handle_frames`): a rotation about z for a
    revolute joint, a translation along z for a prismatic one, ``X_J`` itself otherwise.
    A function of ``q_i`` alone (RL Sec. 5.1)."""
    E, r = joint_xup(i, jtype, qadr, Xtree_rot, axis, Xtree_E, Xtree_r, q, Xup_E, Xup_r)
    t = jtype[i]
    if t == JOINT_REVOLUTE:
        # X_J = rot(q a); R a = e_z, so R X_J R^T = rot(q e_z): (c, s) from E_J
        ej00 = ej01 = ej02 = ej10 = ej11 = ej12 = ej20 = ej21 = ej22 = 0 * Xup_E[i, 0, 0]
        for b in range(3):
            x0 = Xtree_E[i, 0, b]
            x1 = Xtree_E[i, 1, b]
            x2 = Xtree_E[i, 2, b]
            # E_J = Xup_E Xtree_E^T (column b of Xtree_E^T is row b of Xtree_E): use
            # E_J[a, c] = sum_b Xup_E[a, b] Xtree_E[c, b]
            ej00 += Xup_E[i, 0, b] * x0
            ej01 += Xup_E[i, 0, b] * x1
            ej02 += Xup_E[i, 0, b] * x2
            ej10 += Xup_E[i, 1, b] * x0
            ej11 += Xup_E[i, 1, b] * x1
            ej12 += Xup_E[i, 1, b] * x2
            ej20 += Xup_E[i, 2, b] * x0
            ej21 += Xup_E[i, 2, b] * x1
            ej22 += Xup_E[i, 2, b] * x2
        cq = (ej00 + ej11 + ej22 - 1) / 2
        sq = ((ej12 - ej21) * axis[i, 0] + (ej20 - ej02) * axis[i, 1]
              + (ej01 - ej10) * axis[i, 2]) / 2
        XJ_E[i, 0, 0] = cq
        XJ_E[i, 0, 1] = sq
        XJ_E[i, 0, 2] = 0
        XJ_E[i, 1, 0] = -sq
        XJ_E[i, 1, 1] = cq
        XJ_E[i, 1, 2] = 0
        XJ_E[i, 2, 0] = 0
        XJ_E[i, 2, 1] = 0
        XJ_E[i, 2, 2] = 1
        XJ_r[i, 0] = 0
        XJ_r[i, 1] = 0
        XJ_r[i, 2] = 0
    elif t == JOINT_PRISMATIC:
        for a in range(3):
            for b in range(3):
                XJ_E[i, a, b] = 1 if a == b else 0
        XJ_r[i, 0] = 0
        XJ_r[i, 1] = 0
        XJ_r[i, 2] = q[qadr[i]]
    else:
        # R = 1: X_J = Xup X_tree^-1, E_J = E E_tree^T, r_J = E_tree (r - r_tree)
        for a in range(3):
            for b in range(3):
                XJ_E[i, a, b] = (Xup_E[i, a, 0] * Xtree_E[i, b, 0]
                                 + Xup_E[i, a, 1] * Xtree_E[i, b, 1]
                                 + Xup_E[i, a, 2] * Xtree_E[i, b, 2])
        d0 = Xup_r[i, 0] - Xtree_r[i, 0]
        d1 = Xup_r[i, 1] - Xtree_r[i, 1]
        d2 = Xup_r[i, 2] - Xtree_r[i, 2]
        for a in range(3):
            XJ_r[i, a] = Xtree_E[i, a, 0] * d0 + Xtree_E[i, a, 1] * d1 + Xtree_E[i, a, 2] * d2
    return E, r


@njit(**KERNEL)
def _dca_kinematics(m, inp, kin):
    """Position and velocity pass (body order): ``Xup = X_J X_tree`` and the body
    velocities ``v`` and ``c = v x S qd`` (RBDA eq. 7.34, via the shared kinematics
    helpers), the principal joint transforms in aligned handle frames ``R X_J R^T`` (compact
    in XJ_E, XJ_r; ``R = H_E[2 J + 1]``), ``c`` in the aligned frame of (J, 1) (c_al) and,
    for a root joint, the acceleration ``R Xup a_0`` of the world handle (b_world)."""
    parent, jtype, qadr, vadr, jnv = m.parent, m.jtype, m.qadr, m.vadr, m.jnv
    Xtree_rot, axis, Xtree_E, Xtree_r, S = m.Xtree_rot, m.axis, m.Xtree_E, m.Xtree_r, m.S
    H_E, H_r, gravity = m.H_E, m.H_r, m.gravity
    q, qd, quasi_static = inp.q, inp.qd, inp.quasi_static
    Xup_E, Xup_r, XJ_E, XJ_r, v, c = kin.Xup_E, kin.Xup_r, kin.XJ_E, kin.XJ_r, kin.v, kin.c
    c_al, b_world = kin.c_al, kin.b_world
    z0 = gravity[0] * 0
    for i in range(parent.shape[0]):
        E, r = principal_joint_transform(i, jtype, qadr, Xtree_rot, axis, Xtree_E, Xtree_r, q,
                                         Xup_E, Xup_r, XJ_E, XJ_r)
        hb = 2 * i + 1
        if parent[i] < 0:
            x0 = xform_motion_at(Xup_E, Xup_r, i,
                                 (z0, z0, z0, -gravity[0], -gravity[1], -gravity[2]))
            x = xform_motion_at(H_E, H_r, hb, x0)
            for a in range(6):
                b_world[i, a] = x[a]
        if not quasi_static:
            velocity_step(i, parent, vadr, jnv, S, qd, E, r, v, c)
            x = xform_motion_at(H_E, H_r, hb, get_vec6(c, i))
            for a in range(6):
                c_al[i, a] = x[a]


@njit(**KERNEL)
def _leaf_phi_kernel(
    # handle frames
    H_E, H_r, Iinv,
    # assembly tree and storage layout
    node_body, node_nh, node_hoff, node_doff, node_ooff, handle_x,
    # scratch
    Xk,
    # out
    Pd_out, Po_out,
):
    """Constant leaf coefficients ``Phi_kl = X_k I^-1 X_l^T`` (RGL eq. 3) of every leaf:
    diagonal blocks to ``Pd_out[node_doff + k]``, off-diagonal ones (k < l) to
    ``Po_out[node_ooff + oidx(k, l)]``. ``X_k = (H_E[x], H_r[x])`` with ``x = handle_x[slot]``
    carries body coordinates into the frame of handle k (:func:`handle_frames`).
    Xk: (3, 6, 6) scratch."""
    for i in range(node_body.shape[0]):
        b = node_body[i]
        if b < 0:
            continue
        nh = node_nh[i]
        o = node_hoff[i]
        for k in range(nh):
            xform_rows_at(H_E, H_r, handle_x[o + k], Iinv, b, Xk, 0)     # Xk[0] = X_k I^-1
            for a in range(6):
                for c in range(6):
                    Xk[1, a, c] = Xk[0, c, a]             # Xk[1] = I^-1 X_k^T
            for l in range(k, nh):
                # Phi_kl = X_k I^-1 X_l^T = (X_l (X_k I^-1)^T)^T
                xform_rows_at(H_E, H_r, handle_x[o + l], Xk, 1, Xk, 2)
                if l == k:
                    bo = node_doff[i] + k
                    for a in range(6):
                        for c in range(6):
                            Pd_out[bo, a, c] = (Xk[2, a, c] + Xk[2, c, a]) / 2
                else:
                    bo = node_ooff[i] + _oidx(nh, k, l)
                    for a in range(6):
                        for c in range(6):
                            Po_out[bo, a, c] = Xk[2, c, a]


@inline
def _leaf_bias(b, i, tree, v, f_ext, quasi_static, z, bh, bo):
    """Leaf node i of body b (RGL eq. 3): ``z = I^-1 (f_ext - v x* I v)``, ``b_k = X_k z``
    into ``bh[bo + k]``. ``tree``: a :class:`~articulated.algorithms.bundles.NodeModel`
    (the bodies' inertias, handle frames and the tree's handle layout)."""
    _leaf_bias_at(b, tree.node_nh[i], tree.node_hoff[i], tree, v, f_ext, quasi_static, z, bh,
                  bo)


@inline
def _body_bias(m, h0, h1, h2, Ib, b, v, f_ext, quasi_static):
    """``f_ext - v x* I v`` (a 6-tuple) of body b (RGL eq. 3) with mass m [kg], first moment
    ``(h0, h1, h2)`` [kg m] and rotational inertia ``Ib`` (a row-major 9-tuple) [kg m^2]
    about its origin, body coordinates; without the velocity term if quasi_static."""
    z0 = m * 0
    if f_ext.shape[0] > 0:
        y0, y1, y2 = f_ext[b, 0], f_ext[b, 1], f_ext[b, 2]
        y3, y4, y5 = f_ext[b, 3], f_ext[b, 4], f_ext[b, 5]
    else:
        y0 = y1 = y2 = y3 = y4 = y5 = z0
    if not quasi_static:
        w0, w1, w2, l0, l1, l2 = v[b, 0], v[b, 1], v[b, 2], v[b, 3], v[b, 4], v[b, 5]
        p0 = Ib[0] * w0 + Ib[1] * w1 + Ib[2] * w2 + h1 * l2 - h2 * l1
        p1 = Ib[3] * w0 + Ib[4] * w1 + Ib[5] * w2 + h2 * l0 - h0 * l2
        p2 = Ib[6] * w0 + Ib[7] * w1 + Ib[8] * w2 + h0 * l1 - h1 * l0
        p3 = m * l0 - (h1 * w2 - h2 * w1)
        p4 = m * l1 - (h2 * w0 - h0 * w2)
        p5 = m * l2 - (h0 * w1 - h1 * w0)
        # y -= v x* (I v)
        y0 -= w1 * p2 - w2 * p1 + l1 * p5 - l2 * p4
        y1 -= w2 * p0 - w0 * p2 + l2 * p3 - l0 * p5
        y2 -= w0 * p1 - w1 * p0 + l0 * p4 - l1 * p3
        y3 -= w1 * p5 - w2 * p4
        y4 -= w2 * p3 - w0 * p5
        y5 -= w0 * p4 - w1 * p3
    return y0, y1, y2, y3, y4, y5


@inline
def _leaf_bias_at(b, nh, ho, tree, v, f_ext, quasi_static, z, bh, bo):
    """:func:`_leaf_bias` of a leaf with ``nh`` handles in the slots from ``ho``."""
    mass, h, Ibar, Iinv = tree.mass, tree.h, tree.Ibar, tree.Iinv
    H_E, H_r, handle_x = tree.H_E, tree.H_r, tree.handle_x
    y = _body_bias(mass[b], h[b, 0], h[b, 1], h[b, 2],
                   (Ibar[b, 0, 0], Ibar[b, 0, 1], Ibar[b, 0, 2], Ibar[b, 1, 0], Ibar[b, 1, 1],
                    Ibar[b, 1, 2], Ibar[b, 2, 0], Ibar[b, 2, 1], Ibar[b, 2, 2]),
                   b, v, f_ext, quasi_static)
    zz = _symv(Iinv, b, y[0], y[1], y[2], y[3], y[4], y[5])
    for k in range(6):
        z[b, k] = zz[k]
    for k in range(nh):
        x = xform_motion_at(H_E, H_r, handle_x[ho + k], zz)
        for a in range(6):
            bh[bo + k, a] = x[a]


def handle_frames(model: Model):
    """The aligned handle frames of every joint (see the module docstring).

    Returns ``(H_E, H_r, perm, nfree)``. ``(H_E[2 J + 1], H_r[2 J + 1]) = (R_J, 0)`` carries
    body-J coordinates into the frame of handle ``(J, 1)``; ``(H_E[2 J], H_r[2 J]) =
    (R_J E_tree[J], r_tree[J])`` carries parent-body coordinates into the frame of
    ``(J, 0)`` (compact motion transforms, float64 (2 nb, 3, 3) and (2 nb, 3)). ``R_J`` turns
    a revolute or prismatic axis onto z (identity otherwise), so that in the aligned frames
    the motion subspace is spanned by the coordinates ``perm[J, nfree[J]:]`` (revolute:
    angular z; prismatic: linear z; spherical: angular; free: all; fixed: none), dof r of
    the joint being coordinate ``perm[J, nfree[J] + r]``; ``perm[J, :nfree[J]]`` are the
    constrained coordinates. int64 (nb, 6) and (nb,).
    """
    nb = model.nb
    t = np.asarray(model.jnt_type)
    R = np.tile(np.eye(3), (nb, 1, 1))
    perm = np.tile(np.arange(6, dtype=np.int64), (nb, 1))
    nfree = np.full(nb, 6, dtype=np.int64)
    rev, pri = t == JOINT_REVOLUTE, t == JOINT_PRISMATIC
    one = np.flatnonzero(rev | pri)
    if one.size:                       # all 1-dof joints at once, row by row as np.cross
        S = model.dof_S[model.jnt_vadr[one]]
        a = np.where(rev[one, None], S[:, :3], S[:, 3:])
        a = a / np.linalg.norm(a, axis=1)[:, None]
        e = np.zeros((one.size, 3))
        e[np.arange(one.size), np.argmin(np.abs(a), axis=1)] = 1.0
        u = np.cross(a, e)
        u /= np.linalg.norm(u, axis=1)[:, None]
        R[one] = np.stack([u, np.cross(a, u), a], axis=1)
        nfree[one] = 5
    perm[rev] = (0, 1, 3, 4, 5, 2)
    perm[t == JOINT_SPHERICAL] = (3, 4, 5, 0, 1, 2)
    nfree[t == JOINT_SPHERICAL] = 3
    nfree[t == JOINT_FREE] = 0
    H_E = np.empty((2 * nb, 3, 3))
    H_r = np.zeros((2 * nb, 3))
    H_E[1::2] = R
    H_E[0::2] = np.einsum("jab,jbc->jac", R, model.jnt_Xtree_E)
    H_r[0::2] = model.jnt_Xtree_r
    return H_E, H_r, perm, nfree


@inline
def _node_frames(i, tree, fr):
    """Hierarchical frames of an internal node i (RL Sec. 5.1): ``Tup`` of both
    children (their principal-handle frames -> C's principal-handle frame, via the frame of
    (J, 1)) and ``Tp`` of each handle, ``Tp^C_k = Tup_child Tp_child`` (the handle's
    frame -> its child's principal-handle frame -> C's; the identity for C's principal
    handle), from the principal joint transform ``XJ``. ``tree``: a
    :class:`~articulated.algorithms.bundles.NodeModel`, ``fr`` the
    :class:`~articulated.algorithms.bundles.NodeFrames` written. The transforms are kept in
    registers."""
    J = tree.node_joint[i]
    A, B, ca, cb, nAo = _children(i, tree)
    nhA, hA, oA, nhB, hB, oB = _child_blocks(i, tree)
    nC = tree.node_nh[i]
    hC = tree.node_hoff[i]
    XJ_E, XJ_r, Tp_E, Tp_r, Tup_E, Tup_r = fr.XJ_E, fr.XJ_r, fr.Tp_E, fr.Tp_r, fr.Tup_E, fr.Tup_r
    if nC == 0:
        # a root node (no handles): Tup of its child = (world -> (J, 0) -> (J, 1))^-1
        X0 = xform_mul(xform_get(XJ_E, XJ_r, J), xform_get(tree.H_E, tree.H_r, 2 * J))
        xform_set(Tup_E, Tup_r, B, xform_inv(X0))
        return
    p = tree.node_pslot[i]
    fromA, kk = _child_slot(p, nAo, ca, cb)
    if fromA:
        Y = xform_inv(xform_mul(xform_get(XJ_E, XJ_r, J), xform_get(Tp_E, Tp_r, hA + kk)))
    else:
        Y = xform_inv(xform_get(Tp_E, Tp_r, hB + kk))
    # Y: (J, 1) -> principal handle of C
    xform_set(Tup_E, Tup_r, B, Y)
    if A >= 0:
        YA = xform_mul(Y, xform_get(XJ_E, XJ_r, J))
        xform_set(Tup_E, Tup_r, A, YA)
    else:
        YA = Y
    for k in range(nC):
        if k == p:
            xform_set(Tp_E, Tp_r, hC + k, (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0,
                                           0.0))
        else:
            fromA, kk = _child_slot(k, nAo, ca, cb)
            if fromA:
                xform_set(Tp_E, Tp_r, hC + k, xform_mul(YA, xform_get(Tp_E, Tp_r, hA + kk)))
            else:
                xform_set(Tp_E, Tp_r, hC + k, xform_mul(Y, xform_get(Tp_E, Tp_r, hB + kk)))


@njit(**KERNEL)
def _world_pose(b, leaf_of_body, node_parent, node_pslot, node_hoff, handle_x, H_E, H_r, Tup_E,
                Tup_r, Xr, xq):
    """Transform ``world X body`` of body b into (Xr, xq)[0] by the product of the
    principal-handle transforms on the leaf's path (RL Sec. 5.1); O(tree height)."""
    i = leaf_of_body[b]
    s = node_hoff[i] + node_pslot[i]
    xform_copy_at(H_E, H_r, handle_x[s], Xr, xq, 0)                   # body -> principal handle
    while node_pslot[i] >= 0:
        xform_mul_at(Tup_E, Tup_r, i, Xr, xq, 0, Xr, xq, 1)
        xform_copy_at(Xr, xq, 1, Xr, xq, 0)
        i = node_parent[i]


@njit(**JIT)
def _leaf_frames(leaves, node_hoff, node_nh, node_pslot, handle_x, H_E, H_r, Tp_E, Tp_r):
    """Leaf cross-transforms: handle k -> principal handle p of the same body,
    ``H_p o H_k^-1`` (constant)."""
    Xr = np.empty((1, 3, 3))
    xq = np.empty((1, 3))
    for t in range(leaves.shape[0]):
        i = leaves[t]
        o = node_hoff[i]
        p = node_pslot[i]
        hp = handle_x[o + p]
        for k in range(node_nh[i]):
            xform_inv_at(H_E, H_r, handle_x[o + k], Xr, xq, 0)
            xform_mul_at(H_E, H_r, hp, Xr, xq, 0, Tp_E, Tp_r, o + k)
