"""Featherstone's divide-and-conquer algorithm (DCA) in handle form: forward dynamics and
quasi-statics over an assembly tree (:mod:`articulated.assembly`).

Sources: Redon, Galoppo & Lin (2005), "Adaptive dynamics of articulated bodies" (RGL),
Sec. 3.1-3.2, eqs. 1-5 (dynamics with velocity terms); Redon & Lin (2005), "An efficient,
error-bounded approximation algorithm for simulating quasi-statics of complex linkages"
(RL), Sec. 3.1, eqs. 1-7 (quasi-statics, fixed-base root) and Sec. 5.1 (hierarchical frames);
after Featherstone (1999), "A divide-and-conquer articulated-body algorithm for parallel
O(log(n)) calculation of rigid-body dynamics", parts 1-2.

Handle equations
----------------
Every node C of the assembly tree has handles ``H_1 .. H_m`` (the joints through which C
connects to the rest) and the articulated-body equation (RGL eq. 1)
``a_k = sum_l Phi_kl f_l + b_k``: the spatial acceleration ``a_k`` of handle k is affine in
the spatial forces ``f_l`` applied *to C* at its handles. A node joins A (parent side of
its principal joint J) and B (child side) through A's handle ``H_2^A = (J, 0)`` and B's
handle ``H_1^B = (J, 1)``; with the joint relation ``a_1^B - X_J a_2^A = S qdd + S-dot qd``
and ``S^T f = Q`` the coefficients of C follow from A's and B's (RGL eq. 2):

    V = (X_J Phi_2^A X_J^T + Phi_1^B)^-1        beta  = X_J b_2^A - b_1^B + c_J
    W = V - V S (S^T V S)^-1 S^T V              gamma = W beta + V S (S^T V S)^-1 Q

    Phi^C_kl = [k, l same child] Phi_kl - s_k s_l G_k W G_l^T
    b^C_k    = b_k - s_k G_k gamma

with ``G_k = Phi^A_{k,2} X_J^T`` and ``s_k = +1`` for a handle of A, ``G_k = Phi^B_{k,1}``
and ``s_k = -1`` for a handle of B (this is RGL eq. 2 block by block: ``Phi_11^C = Phi_1^A -
Phi_12^A W Phi_21^A``, ``Phi_12^C = Phi_12^A W Phi_12^B``, ``Phi_2^C = Phi_2^B -
Phi_21^B W Phi_12^B``, ``b_1^C = b_1^A - Phi_12^A gamma``, ``b_2^C = b_2^B + Phi_21^B gamma``).
``c_J = v_J x (S qd)`` is the velocity-product (``S-dot q-dot``) term of the joint: ``S`` is
constant in body coordinates, so the relative acceleration of B's handle with respect to A's
handle frame is ``S qdd + v_J x S qd`` (RBDA eq. 7.34). Leaves are rigid bodies (RGL eq. 3):
``Phi_kl = X_k I^-1 X_l^T``, ``b_k = X_k I^-1 (f_ext - v x* I v)``.

The back-substitution pass receives the forces ``f_k`` at C's handles from C's parent and
computes (RGL eqs. 4-5)

    x   = sum_k s_k G_k^T f_k + beta = Phi_21^A f_1^A - Phi_12^B f_2^B + beta
    qdd = (S^T V S)^-1 (Q - S^T V x)                                   (eq. 4)
    f   = V (x + S qdd) = W x + V S (S^T V S)^-1 Q      (= f_1^B = -X_J f_2^A, eq. 5)

so ``f`` is the spatial force transmitted across J to its child body, which is what RNEA
leaves in ``Data.f``. A root node relates a component to the world: its A is the world
(``Phi^A = 0``) whose handle accelerates with ``-g`` (gravity folded into the root bias,
RGL Sec. 3.2 / RL eq. 6-7 with ``b_1^B - a_g``), so a fixed base (any root joint type,
``fixed`` included) and a floating base (a ``free`` root joint) are the same formulas; for a
free joint (``S = 1_6``) ``W = 0``, ``gamma = Q`` and ``qdd = (V^-1) Q - x`` exactly. A
``fixed`` joint (``d_J = 0``) is a weld: ``W = V``, ``gamma = W beta``.

Frames (hierarchical reference frames, RL Sec. 5.1)
---------------------------------------------------
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
transform** ``X_J(q_J)`` from the frame of ``(J, 0)`` to that of ``(J, 1)``, a function of
q_J alone: a rotation about z (revolute), a translation along z (prismatic), or general.
So the leaf coefficients ``Phi`` are constant (computed once per model), and a change of
q_J changes only the coefficients of J's node and its ancestors, which is what the lazy
updates of RL Sec. 5.2 need. The handle cross-transforms and principal-handle transforms
of RL Sec. 5.1 are not needed by the full DCA; the solvers that keep every node's
coefficients maintain them (:class:`articulated.algorithms.quasistatics.AdaptiveQuasiStatics`:
``Tp``, ``Tup``, ``body_pose``, ``cross_transform``).

Block elimination in the aligned frame
--------------------------------------
With the coordinates split into the constrained ones F and the joint ones (``S = [0; 1]``)
and ``K = V^-1 = X_J Phi_2^A X_J^T + Phi_1^B``, the block-inverse identities give
``W = [K_FF^-1, 0; 0, 0]`` and ``V S (S^T V S)^-1 = [-K_FF^-1 K_FJ; 1]``. So a node needs
only a factor of ``K_FF`` (5 x 5 for 1-dof joints, no square roots) and the joint rows of
K: ``G_k W G_l^T = Z_k D^-1 Z_l^T`` with ``Z_k = G_k[:, F] L^-T``; ``gamma_F =
K_FF^-1 (beta_F - K_FJ Q)``, ``gamma_J = Q``; back-substitution ``f_J = Q``,
``f_F = K_FF^-1 (x_F - K_FJ Q)``, ``qdd = K_JF f_F + K_JJ Q - x_J`` (the rows of
``K f = x + S qdd``, equivalent to eqs. 4-5). This is exact algebra on RGL eqs. 2, 4, 5,
not an approximation; it avoids forming V, W and ``(S^T V S)^-1``.

Units: SI; accelerations [rad/s^2, m/s^2], forces [N m, N], ``Phi`` [1/(kg m^2), 1/(kg m),
1/kg].

Gravity: like :func:`articulated.aba`, the base accelerates with ``-g``, so the body
accelerations of :meth:`DCA.body_accelerations` include ``-g`` (they equal ABA's
``Data.a``); joint accelerations and forces are the physical ones.
"""

from __future__ import annotations

import math
import weakref

import numpy as np
from numba import njit

from ..assembly import AssemblyTree, build_assembly
from ..config import INLINE, KERNEL
from ..model import JOINT_FREE, JOINT_PRISMATIC, JOINT_REVOLUTE, JOINT_SPHERICAL, Model
from ._inputs import check_dtype, check_f_ext
from .kinematics import joint_xup, velocity_step

KERNEL_JIT = KERNEL
"""Flags of the DCA kernels: :data:`articulated.config.KERNEL` (reference counting off; the
kernels allocate nothing, and without it numba keeps reference counts of the arrays passed
to inlined helpers called in branches, atomic updates costing more than a node's arithmetic)."""


# --------------------------------------------------------------------------- small helpers
#
# The helpers take whole arrays plus indices and read elements (``P[b, i, j]``), never
# slices: a slice inside a kernel loop is an array view whose reference count numba may
# maintain with atomic calls, which would cost more than the arithmetic of a node.

@njit(**INLINE)
def _bidx(nh, k, l):
    """Block index of (k, l), k <= l, in the upper triangle of an nh x nh block matrix."""
    return k * nh - (k * (k - 1)) // 2 + (l - k)


@njit(**INLINE)
def _oidx(nh, k, l):
    """Index of the off-diagonal block (k, l), k < l, among the ``nh (nh - 1) / 2`` of a node
    (row-major over the strict upper triangle)."""
    return k * nh - (k * (k + 1)) // 2 + (l - k - 1)


@njit(**INLINE)
def _off(oo, nh, k, l):
    """(index, transposed) of the off-diagonal block ``Phi_kl`` (k != l) of the node whose
    off-diagonal blocks start at ``oo``."""
    if k < l:
        return oo + _oidx(nh, k, l), False
    return oo + _oidx(nh, l, k), True


@njit(**INLINE)
def _copy_block(M, m, tr, out, o):
    """out[o] = M[m] (or its transpose)."""
    if tr:
        for a in range(6):
            for c in range(6):
                out[o, a, c] = M[m, c, a]
    else:
        for a in range(6):
            for c in range(6):
                out[o, a, c] = M[m, a, c]


@njit(**INLINE)
def _xmotion(E, r, J, v0, v1, v2, v3, v4, v5):
    """``X v`` (a 6-tuple) for the compact motion transform ``X = (E[J], r[J])``:
    ``[E w; E (v_O - r x w)]`` (RBDA eq. 2.24)."""
    r0 = r[J, 0]
    r1 = r[J, 1]
    r2 = r[J, 2]
    l0 = v3 - (r1 * v2 - r2 * v1)
    l1 = v4 - (r2 * v0 - r0 * v2)
    l2 = v5 - (r0 * v1 - r1 * v0)
    e00, e01, e02 = E[J, 0, 0], E[J, 0, 1], E[J, 0, 2]
    e10, e11, e12 = E[J, 1, 0], E[J, 1, 1], E[J, 1, 2]
    e20, e21, e22 = E[J, 2, 0], E[J, 2, 1], E[J, 2, 2]
    return (e00 * v0 + e01 * v1 + e02 * v2,
            e10 * v0 + e11 * v1 + e12 * v2,
            e20 * v0 + e21 * v1 + e22 * v2,
            e00 * l0 + e01 * l1 + e02 * l2,
            e10 * l0 + e11 * l1 + e12 * l2,
            e20 * l0 + e21 * l1 + e22 * l2)


@njit(**INLINE)
def _xforce_T(E, r, J, f0, f1, f2, f3, f4, f5):
    """``X^T f`` (a 6-tuple) for ``X = (E[J], r[J])``: a force given in the frame X maps
    to, expressed in the frame it maps from: ``[E^T n + r x E^T f; E^T f]`` (RBDA eq. 2.25)."""
    n0 = E[J, 0, 0] * f0 + E[J, 1, 0] * f1 + E[J, 2, 0] * f2
    n1 = E[J, 0, 1] * f0 + E[J, 1, 1] * f1 + E[J, 2, 1] * f2
    n2 = E[J, 0, 2] * f0 + E[J, 1, 2] * f1 + E[J, 2, 2] * f2
    g0 = E[J, 0, 0] * f3 + E[J, 1, 0] * f4 + E[J, 2, 0] * f5
    g1 = E[J, 0, 1] * f3 + E[J, 1, 1] * f4 + E[J, 2, 1] * f5
    g2 = E[J, 0, 2] * f3 + E[J, 1, 2] * f4 + E[J, 2, 2] * f5
    r0 = r[J, 0]
    r1 = r[J, 1]
    r2 = r[J, 2]
    return (n0 + r1 * g2 - r2 * g1, n1 + r2 * g0 - r0 * g2, n2 + r0 * g1 - r1 * g0,
            g0, g1, g2)


@njit(**INLINE)
def _xrows(E, r, J, M, m, out, o):
    """out[o] = X M[m] for ``X = (E[J], r[J])`` and (6, 6) blocks, by row operations
    (``[E M_top; E (M_bot - r^ M_top)]``); out[o] must not alias M[m]."""
    r0 = r[J, 0]
    r1 = r[J, 1]
    r2 = r[J, 2]
    e00, e01, e02 = E[J, 0, 0], E[J, 0, 1], E[J, 0, 2]
    e10, e11, e12 = E[J, 1, 0], E[J, 1, 1], E[J, 1, 2]
    e20, e21, e22 = E[J, 2, 0], E[J, 2, 1], E[J, 2, 2]
    for n in range(6):
        m0 = M[m, 0, n]
        m1 = M[m, 1, n]
        m2 = M[m, 2, n]
        l0 = M[m, 3, n] - (r1 * m2 - r2 * m1)
        l1 = M[m, 4, n] - (r2 * m0 - r0 * m2)
        l2 = M[m, 5, n] - (r0 * m1 - r1 * m0)
        out[o, 0, n] = e00 * m0 + e01 * m1 + e02 * m2
        out[o, 1, n] = e10 * m0 + e11 * m1 + e12 * m2
        out[o, 2, n] = e20 * m0 + e21 * m1 + e22 * m2
        out[o, 3, n] = e00 * l0 + e01 * l1 + e02 * l2
        out[o, 4, n] = e10 * l0 + e11 * l1 + e12 * l2
        out[o, 5, n] = e20 * l0 + e21 * l1 + e22 * l2


@njit(**INLINE)
def _xj_rows(jt, E, r, J, M, m, out, o):
    """out[o] = X M[m] for a principal joint transform ``X = (E[J], r[J])`` in aligned
    handle frames: a rotation about z (revolute: ``E = [[c, s, 0], [-s, c, 0], [0, 0, 1]]``),
    a translation along z (prismatic: ``r = (0, 0, q)``), else general."""
    if jt == JOINT_REVOLUTE:
        c = E[J, 0, 0]
        s = E[J, 0, 1]
        for n in range(6):
            m0 = M[m, 0, n]
            m1 = M[m, 1, n]
            m3 = M[m, 3, n]
            m4 = M[m, 4, n]
            out[o, 0, n] = c * m0 + s * m1
            out[o, 1, n] = c * m1 - s * m0
            out[o, 2, n] = M[m, 2, n]
            out[o, 3, n] = c * m3 + s * m4
            out[o, 4, n] = c * m4 - s * m3
            out[o, 5, n] = M[m, 5, n]
    elif jt == JOINT_PRISMATIC:
        qz = r[J, 2]
        for n in range(6):
            m0 = M[m, 0, n]
            m1 = M[m, 1, n]
            out[o, 0, n] = m0
            out[o, 1, n] = m1
            out[o, 2, n] = M[m, 2, n]
            out[o, 3, n] = M[m, 3, n] + qz * m1
            out[o, 4, n] = M[m, 4, n] - qz * m0
            out[o, 5, n] = M[m, 5, n]
    else:
        _xrows(E, r, J, M, m, out, o)


@njit(**INLINE)
def _xj_cols(jt, E, r, J, M, m):
    """M[m] <- M[m] X^T in place (column operations), X as in :func:`_xj_rows`."""
    if jt == JOINT_REVOLUTE:
        c = E[J, 0, 0]
        s = E[J, 0, 1]
        for a in range(6):
            m0 = M[m, a, 0]
            m1 = M[m, a, 1]
            m3 = M[m, a, 3]
            m4 = M[m, a, 4]
            M[m, a, 0] = c * m0 + s * m1
            M[m, a, 1] = c * m1 - s * m0
            M[m, a, 3] = c * m3 + s * m4
            M[m, a, 4] = c * m4 - s * m3
    elif jt == JOINT_PRISMATIC:
        qz = r[J, 2]
        for a in range(6):
            M[m, a, 3] += qz * M[m, a, 1]
            M[m, a, 4] -= qz * M[m, a, 0]
    else:
        for a in range(6):
            y = _xmotion(E, r, J, M[m, a, 0], M[m, a, 1], M[m, a, 2], M[m, a, 3],
                         M[m, a, 4], M[m, a, 5])
            for b in range(6):
                M[m, a, b] = y[b]


@njit(**INLINE)
def _ctv(C, c, x, ix):
    """``C[c]^T x[ix]`` (a 6-tuple) for (6, 6) blocks C and rows x[ix] of a 2-d array."""
    a = x[ix, 0]
    s0 = a * C[c, 0, 0]
    s1 = a * C[c, 0, 1]
    s2 = a * C[c, 0, 2]
    s3 = a * C[c, 0, 3]
    s4 = a * C[c, 0, 4]
    s5 = a * C[c, 0, 5]
    for t in range(1, 6):
        a = x[ix, t]
        s0 += a * C[c, t, 0]
        s1 += a * C[c, t, 1]
        s2 += a * C[c, t, 2]
        s3 += a * C[c, t, 3]
        s4 += a * C[c, t, 4]
        s5 += a * C[c, t, 5]
    return s0, s1, s2, s3, s4, s5


@njit(**INLINE)
def _cv(C, c, x0, x1, x2, x3, x4, x5):
    """``C[c] x`` (a 6-tuple) for a (6, 6) block and a 6-vector given as scalars."""
    return (C[c, 0, 0] * x0 + C[c, 0, 1] * x1 + C[c, 0, 2] * x2 + C[c, 0, 3] * x3
            + C[c, 0, 4] * x4 + C[c, 0, 5] * x5,
            C[c, 1, 0] * x0 + C[c, 1, 1] * x1 + C[c, 1, 2] * x2 + C[c, 1, 3] * x3
            + C[c, 1, 4] * x4 + C[c, 1, 5] * x5,
            C[c, 2, 0] * x0 + C[c, 2, 1] * x1 + C[c, 2, 2] * x2 + C[c, 2, 3] * x3
            + C[c, 2, 4] * x4 + C[c, 2, 5] * x5,
            C[c, 3, 0] * x0 + C[c, 3, 1] * x1 + C[c, 3, 2] * x2 + C[c, 3, 3] * x3
            + C[c, 3, 4] * x4 + C[c, 3, 5] * x5,
            C[c, 4, 0] * x0 + C[c, 4, 1] * x1 + C[c, 4, 2] * x2 + C[c, 4, 3] * x3
            + C[c, 4, 4] * x4 + C[c, 4, 5] * x5,
            C[c, 5, 0] * x0 + C[c, 5, 1] * x1 + C[c, 5, 2] * x2 + C[c, 5, 3] * x3
            + C[c, 5, 4] * x4 + C[c, 5, 5] * x5)


@njit(**INLINE)
def _symv(S, b, x0, x1, x2, x3, x4, x5):
    """``S_b x`` (a 6-tuple) for a symmetric (6, 6) matrix packed as its upper triangle
    row by row in ``S[b]`` (21 entries; generated code)."""
    y0 = (S[b, 0] * x0 + S[b, 1] * x1 + S[b, 2] * x2
          + S[b, 3] * x3 + S[b, 4] * x4 + S[b, 5] * x5)
    y1 = (S[b, 1] * x0 + S[b, 6] * x1 + S[b, 7] * x2
          + S[b, 8] * x3 + S[b, 9] * x4 + S[b, 10] * x5)
    y2 = (S[b, 2] * x0 + S[b, 7] * x1 + S[b, 11] * x2
          + S[b, 12] * x3 + S[b, 13] * x4 + S[b, 14] * x5)
    y3 = (S[b, 3] * x0 + S[b, 8] * x1 + S[b, 12] * x2
          + S[b, 15] * x3 + S[b, 16] * x4 + S[b, 17] * x5)
    y4 = (S[b, 4] * x0 + S[b, 9] * x1 + S[b, 13] * x2
          + S[b, 16] * x3 + S[b, 18] * x4 + S[b, 19] * x5)
    y5 = (S[b, 5] * x0 + S[b, 10] * x1 + S[b, 14] * x2
          + S[b, 17] * x3 + S[b, 19] * x4 + S[b, 20] * x5)
    return y0, y1, y2, y3, y4, y5


@njit(**INLINE)
def _bmv(P, b, tr, x, ix):
    """``P[b] x[ix]`` (or ``P[b]^T x[ix]`` if tr), a 6-tuple."""
    if tr:
        y = _ctv(P, b, x, ix)
    else:
        y = _cv(P, b, x[ix, 0], x[ix, 1], x[ix, 2], x[ix, 3], x[ix, 4], x[ix, 5])
    return y


@njit(**INLINE)
def _outer_acc(Z, a, b, n, out, o, sg):
    """out[o] += sg sum_{t < n} Z[a, t, :]^T Z[b, t, :] for (6, 6) blocks (row sums kept in
    registers)."""
    for m in range(6):
        s0 = s1 = s2 = s3 = s4 = s5 = 0 * Z[a, 0, 0]
        for t in range(n):
            x = Z[a, t, m]
            s0 += x * Z[b, t, 0]
            s1 += x * Z[b, t, 1]
            s2 += x * Z[b, t, 2]
            s3 += x * Z[b, t, 3]
            s4 += x * Z[b, t, 4]
            s5 += x * Z[b, t, 5]
        out[o, m, 0] += sg * s0
        out[o, m, 1] += sg * s1
        out[o, m, 2] += sg * s2
        out[o, m, 3] += sg * s3
        out[o, m, 4] += sg * s4
        out[o, m, 5] += sg * s5


@njit(**INLINE)
def _outer_sym(Z, a, n, out, o):
    """out[o] -= sum_{t < n} Z[a, t, :]^T Z[a, t, :] (symmetric: the upper triangle is
    computed and mirrored, so the result is exactly symmetric)."""
    for m in range(6):
        for c in range(m, 6):
            s = 0 * Z[a, 0, 0]
            for t in range(n):
                s += Z[a, t, m] * Z[a, t, c]
            v = out[o, m, c] - s
            out[o, m, c] = v
            out[o, c, m] = v


@njit(**INLINE)
def _fwd_rows(L, Ld, J, n, C, c):
    """Rows 0..n-1 of C[c] <- L_J^-1 (rows 0..n-1 of C[c]) (forward substitution, L_J lower
    triangular n x n with inverse diagonal Ld[J])."""
    for a in range(n):
        c0 = C[c, a, 0]
        c1 = C[c, a, 1]
        c2 = C[c, a, 2]
        c3 = C[c, a, 3]
        c4 = C[c, a, 4]
        c5 = C[c, a, 5]
        for j in range(a):
            l = L[J, (a * (a - 1)) // 2 + j]
            c0 -= l * C[c, j, 0]
            c1 -= l * C[c, j, 1]
            c2 -= l * C[c, j, 2]
            c3 -= l * C[c, j, 3]
            c4 -= l * C[c, j, 4]
            c5 -= l * C[c, j, 5]
        da = Ld[J, a]
        C[c, a, 0] = c0 * da
        C[c, a, 1] = c1 * da
        C[c, a, 2] = c2 * da
        C[c, a, 3] = c3 * da
        C[c, a, 4] = c4 * da
        C[c, a, 5] = c5 * da


@njit(**INLINE)
def _chol_solve(L, Ld, J, n, y, iy):
    """y[iy, :n] <- (L_J L_J^T)^-1 y[iy, :n] (forward then back substitution)."""
    for a in range(n):
        s = y[iy, a]
        for j in range(a):
            s -= L[J, (a * (a - 1)) // 2 + j] * y[iy, j]
        y[iy, a] = s * Ld[J, a]
    for a in range(n - 1, -1, -1):
        s = y[iy, a]
        for j in range(a + 1, n):
            s -= L[J, (j * (j - 1)) // 2 + a] * y[iy, j]
        y[iy, a] = s * Ld[J, a]


@njit(**INLINE)
def _chol(K, k, n, L, Ld, J):
    """Cholesky factor ``K[k][:n, :n] = L_J L_J^T`` (lower triangle of K read; L[J] gets the
    lower triangle, Ld[J] the inverse diagonal). A non-positive pivot gives NaN, which the
    public wrappers report (naming the joint). (No early return: an inlined helper that
    returns from a branch makes numba keep reference counts of its array arguments.)"""
    if n == 6:
        _chol6(K, k, L, Ld, J)
    else:
        for j in range(n):
            s = K[k, j, j]
            for m in range(j):
                s -= L[J, (j * (j - 1)) // 2 + m] * L[J, (j * (j - 1)) // 2 + m]
            ljj = math.sqrt(s) if s > 0 else math.nan
            d = 1 / ljj
            Ld[J, j] = d
            for a in range(j + 1, n):
                t = K[k, a, j]
                for m in range(j):
                    t -= L[J, (a * (a - 1)) // 2 + m] * L[J, (j * (j - 1)) // 2 + m]
                L[J, (a * (a - 1)) // 2 + j] = t * d


@njit(**INLINE)
def _chol6(K, k, L, Ld, J):
    """:func:`_chol` for n = 6, unrolled (generated code)."""
    s = K[k, 0, 0]
    l00 = math.sqrt(s) if s > 0 else math.nan
    d0 = 1 / l00
    l10 = (K[k, 1, 0]) * d0
    l20 = (K[k, 2, 0]) * d0
    l30 = (K[k, 3, 0]) * d0
    l40 = (K[k, 4, 0]) * d0
    l50 = (K[k, 5, 0]) * d0
    s = K[k, 1, 1] - (l10 * l10)
    l11 = math.sqrt(s) if s > 0 else math.nan
    d1 = 1 / l11
    l21 = (K[k, 2, 1] - (l20 * l10)) * d1
    l31 = (K[k, 3, 1] - (l30 * l10)) * d1
    l41 = (K[k, 4, 1] - (l40 * l10)) * d1
    l51 = (K[k, 5, 1] - (l50 * l10)) * d1
    s = K[k, 2, 2] - (l20 * l20 + l21 * l21)
    l22 = math.sqrt(s) if s > 0 else math.nan
    d2 = 1 / l22
    l32 = (K[k, 3, 2] - (l30 * l20 + l31 * l21)) * d2
    l42 = (K[k, 4, 2] - (l40 * l20 + l41 * l21)) * d2
    l52 = (K[k, 5, 2] - (l50 * l20 + l51 * l21)) * d2
    s = K[k, 3, 3] - (l30 * l30 + l31 * l31 + l32 * l32)
    l33 = math.sqrt(s) if s > 0 else math.nan
    d3 = 1 / l33
    l43 = (K[k, 4, 3] - (l40 * l30 + l41 * l31 + l42 * l32)) * d3
    l53 = (K[k, 5, 3] - (l50 * l30 + l51 * l31 + l52 * l32)) * d3
    s = K[k, 4, 4] - (l40 * l40 + l41 * l41 + l42 * l42 + l43 * l43)
    l44 = math.sqrt(s) if s > 0 else math.nan
    d4 = 1 / l44
    l54 = (K[k, 5, 4] - (l50 * l40 + l51 * l41 + l52 * l42 + l53 * l43)) * d4
    s = K[k, 5, 5] - (l50 * l50 + l51 * l51 + l52 * l52 + l53 * l53 + l54 * l54)
    l55 = math.sqrt(s) if s > 0 else math.nan
    d5 = 1 / l55
    L[J, 0] = l10
    L[J, 1] = l20
    L[J, 2] = l21
    L[J, 3] = l30
    L[J, 4] = l31
    L[J, 5] = l32
    L[J, 6] = l40
    L[J, 7] = l41
    L[J, 8] = l42
    L[J, 9] = l43
    L[J, 10] = l50
    L[J, 11] = l51
    L[J, 12] = l52
    L[J, 13] = l53
    L[J, 14] = l54
    Ld[J, 0] = d0
    Ld[J, 1] = d1
    Ld[J, 2] = d2
    Ld[J, 3] = d3
    Ld[J, 4] = d4
    Ld[J, 5] = d5


@njit(**INLINE)
def _chol5_perm(K, k, perm, J, L, Ld):
    """Square-root-free Cholesky ``K[k][F, F] = L D L^T`` of the free block
    (``F = perm[J, :5]``): the unit lower factor into L[J] (below the diagonal), ``1 / D``
    into Ld[J]; unrolled (generated code). A non-positive pivot gives NaN."""
    p0 = perm[J, 0]
    p1 = perm[J, 1]
    p2 = perm[J, 2]
    p3 = perm[J, 3]
    p4 = perm[J, 4]
    s = K[k, p0, p0]
    e0 = 1 / s if s > 0 else math.nan
    u10 = K[k, p1, p0]
    l10 = u10 * e0
    u20 = K[k, p2, p0]
    l20 = u20 * e0
    u30 = K[k, p3, p0]
    l30 = u30 * e0
    u40 = K[k, p4, p0]
    l40 = u40 * e0
    s = K[k, p1, p1] - (l10 * u10)
    e1 = 1 / s if s > 0 else math.nan
    u21 = K[k, p2, p1] - (u20 * l10)
    l21 = u21 * e1
    u31 = K[k, p3, p1] - (u30 * l10)
    l31 = u31 * e1
    u41 = K[k, p4, p1] - (u40 * l10)
    l41 = u41 * e1
    s = K[k, p2, p2] - (l20 * u20 + l21 * u21)
    e2 = 1 / s if s > 0 else math.nan
    u32 = K[k, p3, p2] - (u30 * l20 + u31 * l21)
    l32 = u32 * e2
    u42 = K[k, p4, p2] - (u40 * l20 + u41 * l21)
    l42 = u42 * e2
    s = K[k, p3, p3] - (l30 * u30 + l31 * u31 + l32 * u32)
    e3 = 1 / s if s > 0 else math.nan
    u43 = K[k, p4, p3] - (u40 * l30 + u41 * l31 + u42 * l32)
    l43 = u43 * e3
    s = K[k, p4, p4] - (l40 * u40 + l41 * u41 + l42 * u42 + l43 * u43)
    e4 = 1 / s if s > 0 else math.nan
    L[J, 0] = l10
    L[J, 1] = l20
    L[J, 2] = l21
    L[J, 3] = l30
    L[J, 4] = l31
    L[J, 5] = l32
    L[J, 6] = l40
    L[J, 7] = l41
    L[J, 8] = l42
    L[J, 9] = l43
    Ld[J, 0] = e0
    Ld[J, 1] = e1
    Ld[J, 2] = e2
    Ld[J, 3] = e3
    Ld[J, 4] = e4


@njit(**INLINE)
def _solve5(L, Ld, J, y0, y1, y2, y3, y4):
    """``(L D L^T)^-1 y`` (a 5-tuple) for the factor of :func:`_chol5_perm`."""
    w0 = y0
    w1 = y1 - L[J, 0] * w0
    w2 = y2 - L[J, 1] * w0 - L[J, 2] * w1
    w3 = y3 - L[J, 3] * w0 - L[J, 4] * w1 - L[J, 5] * w2
    w4 = y4 - L[J, 6] * w0 - L[J, 7] * w1 - L[J, 8] * w2 - L[J, 9] * w3
    x4 = w4 * Ld[J, 4]
    x3 = w3 * Ld[J, 3] - L[J, 9] * x4
    x2 = w2 * Ld[J, 2] - L[J, 5] * x3 - L[J, 8] * x4
    x1 = w1 * Ld[J, 1] - L[J, 2] * x2 - L[J, 4] * x3 - L[J, 7] * x4
    x0 = w0 * Ld[J, 0] - L[J, 0] * x1 - L[J, 1] * x2 - L[J, 3] * x3 - L[J, 6] * x4
    return x0, x1, x2, x3, x4


@njit(**INLINE)
def _zrows5(L, Ld, J, perm, C, c, Z, zk):
    """``Z[zk][:5] = L_J^-1 C[c][F, :]`` (``F = perm[J, :5]``, L unit lower triangular):
    forward substitution on rows, unrolled (generated code)."""
    p0 = perm[J, 0]
    p1 = perm[J, 1]
    p2 = perm[J, 2]
    p3 = perm[J, 3]
    p4 = perm[J, 4]
    l10 = L[J, 0]
    l20 = L[J, 1]
    l21 = L[J, 2]
    l30 = L[J, 3]
    l31 = L[J, 4]
    l32 = L[J, 5]
    l40 = L[J, 6]
    l41 = L[J, 7]
    l42 = L[J, 8]
    l43 = L[J, 9]
    for n in range(6):
        z0 = C[c, p0, n]
        Z[zk, 0, n] = z0
        z1 = C[c, p1, n] - l10 * z0
        Z[zk, 1, n] = z1
        z2 = C[c, p2, n] - l20 * z0 - l21 * z1
        Z[zk, 2, n] = z2
        z3 = C[c, p3, n] - l30 * z0 - l31 * z1 - l32 * z2
        Z[zk, 3, n] = z3
        z4 = C[c, p4, n] - l40 * z0 - l41 * z1 - l42 * z2 - l43 * z3
        Z[zk, 4, n] = z4


@njit(**INLINE)
def _pair5(Z, a, b, Ld, J, P, src, tr, has_base, sg, out, o):
    """``out[o] = base + sg Z[a][:5]^T D^-1 Z[b][:5]`` (a block of RGL eq. 2; ``1 / D`` in
    Ld[J]) with base ``P[src]`` (transposed if tr) or zero."""
    e0 = Ld[J, 0]
    e1 = Ld[J, 1]
    e2 = Ld[J, 2]
    e3 = Ld[J, 3]
    e4 = Ld[J, 4]
    for m in range(6):
        a0 = Z[a, 0, m] * e0
        a1 = Z[a, 1, m] * e1
        a2 = Z[a, 2, m] * e2
        a3 = Z[a, 3, m] * e3
        a4 = Z[a, 4, m] * e4
        for n in range(6):
            out[o, m, n] = sg * (a0 * Z[b, 0, n] + a1 * Z[b, 1, n] + a2 * Z[b, 2, n]
                                 + a3 * Z[b, 3, n] + a4 * Z[b, 4, n])
    if has_base:
        if tr:
            for m in range(6):
                for n in range(6):
                    out[o, m, n] += P[src, n, m]
        else:
            for m in range(6):
                for n in range(6):
                    out[o, m, n] += P[src, m, n]


@njit(**INLINE)
def _pair5_sym(Z, a, Ld, J, P, src, out, o):
    """``out[o] = P[src] - Z[a][:5]^T D^-1 Z[a][:5]`` for a symmetric base (diagonal
    blocks): the upper triangle is computed and mirrored (exactly symmetric); out[o] may
    be P[src]."""
    e0 = Ld[J, 0]
    e1 = Ld[J, 1]
    e2 = Ld[J, 2]
    e3 = Ld[J, 3]
    e4 = Ld[J, 4]
    for m in range(6):
        a0 = Z[a, 0, m] * e0
        a1 = Z[a, 1, m] * e1
        a2 = Z[a, 2, m] * e2
        a3 = Z[a, 3, m] * e3
        a4 = Z[a, 4, m] * e4
        for n in range(m, 6):
            v = P[src, m, n] - (a0 * Z[a, 0, n] + a1 * Z[a, 1, n] + a2 * Z[a, 2, n]
                                + a3 * Z[a, 3, n] + a4 * Z[a, 4, n])
            out[o, m, n] = v
            out[o, n, m] = v


# --------------------------------------------------------------------------- kernels

@njit(**KERNEL_JIT)
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
            _xrows(H_E, H_r, handle_x[o + k], Iinv, b, Xk, 0)     # Xk[0] = X_k I^-1
            for a in range(6):
                for c in range(6):
                    Xk[1, a, c] = Xk[0, c, a]             # Xk[1] = I^-1 X_k^T
            for l in range(k, nh):
                # Phi_kl = X_k I^-1 X_l^T = (X_l (X_k I^-1)^T)^T
                _xrows(H_E, H_r, handle_x[o + l], Xk, 1, Xk, 2)
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


@njit(**INLINE)
def principal_joint_transform(i, jtype, qadr, Xtree_rot, axis, Xtree_E, Xtree_r, q, Xup_E,
                              Xup_r, XJ_E, XJ_r):
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


@njit(**KERNEL_JIT)
def _dca_kinematics(
    # model
    parent, jtype, qadr, vadr, jnv, Xtree_rot, axis, Xtree_E, Xtree_r, S,
    # handle frames
    H_E, H_r, gravity,
    # inputs
    q, qd, quasi_static,
    # data out
    Xup_E, Xup_r, XJ_E, XJ_r, v, c, c_al, b_world,
):
    """Position and velocity pass (body order): ``Xup = X_J X_tree`` and the body
    velocities ``v`` and ``c = v x S qd`` (RBDA eq. 7.34, via the shared kinematics
    helpers), the principal joint transforms in aligned handle frames ``R X_J R^T`` (compact
    in XJ_E, XJ_r; ``R = H_E[2 J + 1]``), ``c`` in the aligned frame of (J, 1) (c_al) and,
    for a root joint, the acceleration ``R Xup a_0`` of the world handle (b_world)."""
    z0 = gravity[0] * 0
    for i in range(parent.shape[0]):
        E, r = principal_joint_transform(i, jtype, qadr, Xtree_rot, axis, Xtree_E, Xtree_r, q,
                                         Xup_E, Xup_r, XJ_E, XJ_r)
        hb = 2 * i + 1
        if parent[i] < 0:
            x0 = _xmotion(Xup_E, Xup_r, i, z0, z0, z0, -gravity[0], -gravity[1], -gravity[2])
            x = _xmotion(H_E, H_r, hb, x0[0], x0[1], x0[2], x0[3], x0[4], x0[5])
            for a in range(6):
                b_world[i, a] = x[a]
        if not quasi_static:
            velocity_step(i, parent, vadr, jnv, S, qd, E, r, v, c)
            x = _xmotion(H_E, H_r, hb, c[i, 0], c[i, 1], c[i, 2], c[i, 3], c[i, 4], c[i, 5])
            for a in range(6):
                c_al[i, a] = x[a]


@njit(**INLINE)
def _leaf_bias(b, i, mass, h, Ibar, Iinv, H_E, H_r, node_nh, node_hoff, handle_x, v, f_ext,
               quasi_static, z, bh, bo):
    """Leaf of body b (RGL eq. 3): ``z = I^-1 (f_ext - v x* I v)``, ``b_k = X_k z`` into
    ``bh[bo + k]``."""
    z0 = mass[b] * 0
    if f_ext.shape[0] > 0:
        y0, y1, y2 = f_ext[b, 0], f_ext[b, 1], f_ext[b, 2]
        y3, y4, y5 = f_ext[b, 3], f_ext[b, 4], f_ext[b, 5]
    else:
        y0 = y1 = y2 = y3 = y4 = y5 = z0
    if not quasi_static:
        w0, w1, w2, l0, l1, l2 = v[b, 0], v[b, 1], v[b, 2], v[b, 3], v[b, 4], v[b, 5]
        h0, h1, h2 = h[b, 0], h[b, 1], h[b, 2]
        m = mass[b]
        p0 = Ibar[b, 0, 0] * w0 + Ibar[b, 0, 1] * w1 + Ibar[b, 0, 2] * w2 + h1 * l2 - h2 * l1
        p1 = Ibar[b, 1, 0] * w0 + Ibar[b, 1, 1] * w1 + Ibar[b, 1, 2] * w2 + h2 * l0 - h0 * l2
        p2 = Ibar[b, 2, 0] * w0 + Ibar[b, 2, 1] * w1 + Ibar[b, 2, 2] * w2 + h0 * l1 - h1 * l0
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
    zz = _symv(Iinv, b, y0, y1, y2, y3, y4, y5)
    for k in range(6):
        z[b, k] = zz[k]
    ho = node_hoff[i]
    for k in range(node_nh[i]):
        x = _xmotion(H_E, H_r, handle_x[ho + k], zz[0], zz[1], zz[2], zz[3], zz[4], zz[5])
        for a in range(6):
            bh[bo + k, a] = x[a]


@njit(**KERNEL_JIT)
def _dca_main_pass(
    # model
    jtype, jnv, vadr, mass, h, Ibar, gravity, Iinv,
    # handle frames
    H_E, H_r, perm, nfree,
    # assembly tree and storage layout
    node_A, node_B, node_joint, node_body, node_nh, node_hoff, node_ca, node_cb, handle_x,
    node_doff, node_ooff, n_leaf_diag, hmax,
    # data in
    XJ_E, XJ_r, v, c_al, b_world,
    # inputs
    tau, f_ext, quasi_static,
    # scratch
    Z, Ds, st_base,
    # data out
    z, Pd, Po, Bst, Kj, L, Ld, beta, gamma,
):
    """Main pass (bottom-up, post-order): leaf biases (RGL eq. 3) and node coefficients
    (RGL eq. 2) in aligned handle frames.

    In the aligned frame of joint J the motion subspace is ``S = [0; 1_d]`` after the
    permutation ``perm[J]`` (free coordinates F first, joint coordinates after), so with
    ``K = V^-1 = X_J Phi_2^A X_J^T + Phi_1^B`` the block-inverse identities give
    ``W = [K_FF^-1, 0; 0, 0]`` and ``V S (S^T V S)^-1 = [-K_FF^-1 K_FJ; 1]``: only the
    Cholesky factor ``L`` of ``K_FF`` and the joint rows ``Kj`` of K are needed (no V, no
    ``S^T V S``), ``G_k W G_l^T = Z_k Z_l^T`` with ``Z_k = G_k[:, F] L^-T``, and
    ``gamma_F = K_FF^-1 (beta_F - K_FJ Q)``, ``gamma_J = Q``.

    Storage: off-diagonal blocks of every node in ``Po`` (kept: the back-substitution needs
    them; leaf ones are constant). Diagonal blocks and biases are needed only by the
    parent, so internal nodes keep them on a stack of pending subassemblies (post-order
    is a stack discipline: a node's children are the top two entries): entry e has its
    biases at ``Bst[e hmax + k]`` and its diagonal blocks at ``Pd[st_base[e] + k]``, which
    is the constant leaf storage for a leaf and ``n_leaf_diag + e hmax`` for an internal
    node. Scratch: Z (hmax + 2, 6, 6) (0: K, 1: C_k, 2..: Z_k), Ds (6, 6).
    """
    z0 = gravity[0] * 0
    sp = 0
    for i in range(node_A.shape[0]):
        J = node_joint[i]
        if J < 0:
            _leaf_bias(node_body[i], i, mass, h, Ibar, Iinv, H_E, H_r, node_nh, node_hoff,
                       handle_x, v, f_ext, quasi_static, z, Bst, sp * hmax)
            st_base[sp] = node_doff[i]
            sp += 1
            continue
        A = node_A[i]
        B = node_B[i]
        ca = node_ca[i]
        cb = node_cb[i]
        nhB = node_nh[B]
        ooB = node_ooff[B]
        eB = sp - 1
        dB = st_base[eB]
        bB = eB * hmax
        if A >= 0:
            nhA = node_nh[A]
            ooA = node_ooff[A]
            eA = sp - 2
            dA = st_base[eA]
            bA = eA * hmax
            nAo = nhA - 1                      # C's handles that come from A
            eC = eA
        else:
            nhA = 0
            ooA = 0
            eA = -1
            dA = 0
            bA = 0
            nAo = 0
            eC = eB
        nC = node_nh[i]
        dC = n_leaf_diag + eC * hmax
        bC = eC * hmax
        jt = jtype[J]
        nf = nfree[J]
        d = jnv[J]
        va = vadr[J]
        # ---- K = X Phi_2^A X^T + Phi_1^B (symmetric), in Z[0]
        if A >= 0:
            _xj_rows(jt, XJ_E, XJ_r, J, Pd, dA + ca, Z, 0)
            _xj_cols(jt, XJ_E, XJ_r, J, Z, 0)
            for a in range(6):
                for b in range(6):
                    Z[0, a, b] += Pd[dB + cb, a, b]
        else:
            for a in range(6):
                for b in range(6):
                    Z[0, a, b] = Pd[dB + cb, a, b]
        for r in range(d):
            pr = perm[J, nf + r]
            for a in range(6):
                Kj[va + r, a] = Z[0, pr, a]
        # ---- Cholesky of K_FF
        if nf == 5:
            _chol5_perm(Z, 0, perm, J, L, Ld)
        elif nf > 0:
            for a in range(nf):
                pa = perm[J, a]
                for b in range(a + 1):
                    Z[1, a, b] = Z[0, pa, perm[J, b]]
            _chol(Z, 1, nf, L, Ld, J)
        # ---- beta = X b_2^A - b_1^B + c_J (A = world: its handle accelerates with a_0)
        s1 = bB + cb
        if A >= 0:
            s2 = bA + ca
            x = _xmotion(XJ_E, XJ_r, J, Bst[s2, 0], Bst[s2, 1], Bst[s2, 2], Bst[s2, 3],
                         Bst[s2, 4], Bst[s2, 5])
        else:
            x = (b_world[J, 0], b_world[J, 1], b_world[J, 2], b_world[J, 3], b_world[J, 4],
                 b_world[J, 5])
        for k in range(6):
            t = x[k] - Bst[s1, k]
            if not quasi_static:
                t += c_al[J, k]
            beta[J, k] = t
        # ---- gamma_F = K_FF^-1 (beta_F - K_FJ Q), gamma_J = Q
        for r in range(d):
            gamma[J, perm[J, nf + r]] = tau[va + r]
        if nf == 5:
            pj = perm[J, 5]
            qj = tau[va]
            p0, p1, p2, p3, p4 = perm[J, 0], perm[J, 1], perm[J, 2], perm[J, 3], perm[J, 4]
            g = _solve5(L, Ld, J, beta[J, p0] - Z[0, p0, pj] * qj,
                        beta[J, p1] - Z[0, p1, pj] * qj, beta[J, p2] - Z[0, p2, pj] * qj,
                        beta[J, p3] - Z[0, p3, pj] * qj, beta[J, p4] - Z[0, p4, pj] * qj)
            gamma[J, p0] = g[0]
            gamma[J, p1] = g[1]
            gamma[J, p2] = g[2]
            gamma[J, p3] = g[3]
            gamma[J, p4] = g[4]
        elif nf > 0:
            for a in range(nf):
                pa = perm[J, a]
                s = beta[J, pa]
                for r in range(d):
                    s -= Z[0, pa, perm[J, nf + r]] * tau[va + r]
                Ds[0, a] = s
            _chol_solve(L, Ld, J, nf, Ds, 0)
            for a in range(nf):
                gamma[J, perm[J, a]] = Ds[0, a]
        if nC == 0:
            sp = eC
            continue
        # ---- for each handle k of C, with C_k = G_k^T (in Z[1]):
        # b^C_k = b_k - s_k C_k^T gamma and Z_k^T = L^-1 C_k[F, :] (in Z[2 + k])
        for k in range(nC):
            if k < nAo:
                kk = k + 1 if k >= ca else k
                src = bA + kk
                ob, tr = _off(ooA, nhA, ca, kk)
                if tr:
                    for a in range(6):
                        for b in range(6):
                            Z[0, a, b] = Po[ob, b, a]
                    _xj_rows(jt, XJ_E, XJ_r, J, Z, 0, Z, 1)    # C_k = X Phi^A_{2,k}
                else:
                    _xj_rows(jt, XJ_E, XJ_r, J, Po, ob, Z, 1)
                sg = 1
            else:
                kk = k - nAo
                kk = kk + 1 if kk >= cb else kk
                src = bB + kk
                ob, tr = _off(ooB, nhB, cb, kk)
                _copy_block(Po, ob, tr, Z, 1)                  # C_k = Phi^B_{1,k}
                sg = -1
            t = _ctv(Z, 1, gamma, J)
            dst = bC + k
            for m in range(6):
                Bst[dst, m] = Bst[src, m] - sg * t[m]
            if nf == 5:
                _zrows5(L, Ld, J, perm, Z, 1, Z, 2 + k)
            elif nf > 0:
                zk = 2 + k
                for a in range(nf):
                    pa = perm[J, a]
                    for m in range(6):
                        Z[zk, a, m] = Z[1, pa, m]
                _fwd_rows(L, Ld, J, nf, Z, zk)
        # ---- Phi^C_kl = [same child] Phi_kl - s_k s_l Z_k Z_l^T: diagonal blocks to the
        # stack entry eC (in increasing k: they overwrite only A's blocks already used),
        # off-diagonal ones to Po
        oC = node_ooff[i]
        for k in range(nC):
            fromA_k = k < nAo
            if fromA_k:
                kk = k + 1 if k >= ca else k
                dsrc = dA + kk
                oox = ooA
                nhx = nhA
            else:
                kk = k - nAo
                kk = kk + 1 if kk >= cb else kk
                dsrc = dB + kk
                oox = ooB
                nhx = nhB
            # diagonal block (k, k)
            if nf == 5:
                _pair5_sym(Z, 2 + k, Ld, J, Pd, dsrc, Pd, dC + k)
            else:
                _copy_block(Pd, dsrc, False, Pd, dC + k)
                if nf > 0:
                    _outer_sym(Z, 2 + k, nf, Pd, dC + k)
            for l in range(k + 1, nC):
                fromA_l = l < nAo
                bo = oC + _oidx(nC, k, l)
                same = fromA_k == fromA_l
                if same:
                    if fromA_l:
                        ll = l + 1 if l >= ca else l
                    else:
                        ll = l - nAo
                        ll = ll + 1 if ll >= cb else ll
                    ob, tr = _off(oox, nhx, kk, ll)
                else:
                    ob = 0
                    tr = False
                if nf == 5:
                    _pair5(Z, 2 + k, 2 + l, Ld, J, Po, ob, tr, same, -1 if same else 1, Po, bo)
                else:
                    if same:
                        _copy_block(Po, ob, tr, Po, bo)
                    else:
                        for a in range(6):
                            for b in range(6):
                                Po[bo, a, b] = z0
                    if nf > 0:
                        _outer_acc(Z, 2 + k, 2 + l, nf, Po, bo, -1 if same else 1)
        st_base[eC] = dC
        sp = eC + 1


@njit(**KERNEL_JIT)
def _dca_back_pass(
    # model
    jnv, vadr,
    # handle frames
    H_E, perm, nfree,
    # assembly tree
    node_A, node_B, node_joint, node_nh, node_hoff, node_ooff, node_ca, node_cb,
    # data in
    XJ_E, XJ_r, Po, Kj, L, Ld, beta,
    # inputs
    tau,
    # scratch
    Ds,
    # data out
    fh, f_al, f_out, qdd_out,
):
    """Back-substitution pass (top-down, reverse post-order): joint accelerations (RGL
    eq. 4) and joint constraint forces (RGL eq. 5); the forces on every node's handles go
    to ``fh`` for its children. In the aligned frame (see :func:`_dca_main_pass`):
    ``f_J = Q``, ``f_F = K_FF^-1 (x_F - K_FJ Q)`` and ``qdd = K_JF f_F + K_JJ Q - x_J``
    (the rows of ``K f = x + S qdd``). ``f_al``: f in the aligned frame of (J, 1);
    ``f_out``: in body-J coordinates."""
    for i in range(node_A.shape[0] - 1, -1, -1):
        J = node_joint[i]
        if J < 0:
            continue
        A = node_A[i]
        B = node_B[i]
        ca = node_ca[i]
        cb = node_cb[i]
        nhB = node_nh[B]
        ooB = node_ooff[B]
        if A >= 0:
            nhA = node_nh[A]
            ooA = node_ooff[A]
            nAo = nhA - 1
        else:
            nhA = 0
            ooA = 0
            nAo = 0
        nC = node_nh[i]
        ho = node_hoff[i]
        # x = beta + sum_k s_k G_k^T f_k = beta + X sum_{k in A} Phi^A_{2k} f_k
        #                                        - sum_{k in B} Phi^B_{1k} f_k
        x0, x1, x2 = beta[J, 0], beta[J, 1], beta[J, 2]
        x3, x4, x5 = beta[J, 3], beta[J, 4], beta[J, 5]
        if nAo > 0:
            a0 = a1 = a2 = a3 = a4 = a5 = 0 * x0
            for k in range(nAo):
                kk = k + 1 if k >= ca else k
                ob, tr = _off(ooA, nhA, ca, kk)
                y = _bmv(Po, ob, tr, fh, ho + k)
                a0 += y[0]
                a1 += y[1]
                a2 += y[2]
                a3 += y[3]
                a4 += y[4]
                a5 += y[5]
            t = _xmotion(XJ_E, XJ_r, J, a0, a1, a2, a3, a4, a5)
            x0 += t[0]
            x1 += t[1]
            x2 += t[2]
            x3 += t[3]
            x4 += t[4]
            x5 += t[5]
        for k in range(nAo, nC):
            kk = k - nAo
            kk = kk + 1 if kk >= cb else kk
            ob, tr = _off(ooB, nhB, cb, kk)
            y = _bmv(Po, ob, tr, fh, ho + k)
            x0 -= y[0]
            x1 -= y[1]
            x2 -= y[2]
            x3 -= y[3]
            x4 -= y[4]
            x5 -= y[5]
        Ds[1, 0] = x0
        Ds[1, 1] = x1
        Ds[1, 2] = x2
        Ds[1, 3] = x3
        Ds[1, 4] = x4
        Ds[1, 5] = x5
        # f_J = Q, f_F = K_FF^-1 (x_F - K_FJ Q) (eq. 5); qdd = K_JF f_F + K_JJ Q - x_J (eq. 4)
        d = jnv[J]
        va = vadr[J]
        nf = nfree[J]
        for r in range(d):
            f_al[J, perm[J, nf + r]] = tau[va + r]
        if nf == 5:
            qj = tau[va]
            p0, p1, p2, p3, p4 = perm[J, 0], perm[J, 1], perm[J, 2], perm[J, 3], perm[J, 4]
            g = _solve5(L, Ld, J, Ds[1, p0] - Kj[va, p0] * qj,
                        Ds[1, p1] - Kj[va, p1] * qj, Ds[1, p2] - Kj[va, p2] * qj,
                        Ds[1, p3] - Kj[va, p3] * qj, Ds[1, p4] - Kj[va, p4] * qj)
            f_al[J, p0] = g[0]
            f_al[J, p1] = g[1]
            f_al[J, p2] = g[2]
            f_al[J, p3] = g[3]
            f_al[J, p4] = g[4]
        elif nf > 0:
            for a in range(nf):
                pa = perm[J, a]
                s = Ds[1, pa]
                for r in range(d):
                    s -= Kj[va + r, pa] * tau[va + r]
                Ds[0, a] = s
            _chol_solve(L, Ld, J, nf, Ds, 0)
            for a in range(nf):
                f_al[J, perm[J, a]] = Ds[0, a]
        for r in range(d):
            s = -Ds[1, perm[J, nf + r]]
            for a in range(6):
                s += Kj[va + r, a] * f_al[J, a]
            qdd_out[va + r] = s
        # f in body-J coordinates: R^T f_al
        hb = 2 * J + 1
        for a in range(3):
            f_out[J, a] = (H_E[hb, 0, a] * f_al[J, 0] + H_E[hb, 1, a] * f_al[J, 1]
                           + H_E[hb, 2, a] * f_al[J, 2])
            f_out[J, 3 + a] = (H_E[hb, 0, a] * f_al[J, 3] + H_E[hb, 1, a] * f_al[J, 4]
                               + H_E[hb, 2, a] * f_al[J, 5])
        # forces on the children's handles: f on B's (J, 1), -X_J^T f on A's (J, 0)
        hB = node_hoff[B]
        for kk in range(nhB):
            dst = hB + kk
            if kk == cb:
                for m in range(6):
                    fh[dst, m] = f_al[J, m]
            else:
                src = ho + nAo + (kk - 1 if kk > cb else kk)
                for m in range(6):
                    fh[dst, m] = fh[src, m]
        if A >= 0:
            hA = node_hoff[A]
            fa = _xforce_T(XJ_E, XJ_r, J, f_al[J, 0], f_al[J, 1], f_al[J, 2], f_al[J, 3],
                           f_al[J, 4], f_al[J, 5])
            for kk in range(nhA):
                dst = hA + kk
                if kk == ca:
                    for m in range(6):
                        fh[dst, m] = -fa[m]
                else:
                    src = ho + (kk - 1 if kk > ca else kk)
                    for m in range(6):
                        fh[dst, m] = fh[src, m]


@njit(**KERNEL_JIT)
def _dca_body_acc(node_body, node_nh, node_hoff, handle_x, H_E, H_r, Iinv, z, fh, a_out):
    """Body accelerations from the leaves' handle forces: ``a = I^-1 sum_k X_k^T f_k + z``
    (body coordinates; includes the base acceleration ``-g`` like ABA's ``Data.a``)."""
    for i in range(node_body.shape[0]):
        b = node_body[i]
        if b < 0:
            continue
        y0 = y1 = y2 = y3 = y4 = y5 = 0 * z[b, 0]
        o = node_hoff[i]
        for k in range(node_nh[i]):
            s = o + k
            g = _xforce_T(H_E, H_r, handle_x[s], fh[s, 0], fh[s, 1], fh[s, 2], fh[s, 3],
                          fh[s, 4], fh[s, 5])
            y0 += g[0]
            y1 += g[1]
            y2 += g[2]
            y3 += g[3]
            y4 += g[4]
            y5 += g[5]
        t = _symv(Iinv, b, y0, y1, y2, y3, y4, y5)
        for k in range(6):
            a_out[b, k] = z[b, k] + t[k]


@njit(**KERNEL_JIT)
def _dca_kernel(
    # model
    parent, jtype, qadr, vadr, jnv, Xtree_rot, axis, Xtree_E, Xtree_r, mass, h, Ibar, S,
    gravity, Iinv,
    # handle frames
    H_E, H_r, perm, nfree,
    # assembly tree and storage layout
    node_A, node_B, node_joint, node_body, node_nh, node_hoff, node_ca, node_cb, handle_x,
    node_doff, node_ooff, n_leaf_diag, hmax,
    # inputs
    q, qd, tau, f_ext, quasi_static,
    # scratch
    Z, Ds, st_base,
    # data
    Xup_E, Xup_r, XJ_E, XJ_r, v, c, c_al, b_world, z, Pd, Po, Bst, Kj, L, Ld, beta, gamma,
    fh, f_al,
    # outputs
    f_out, qdd_out,
):
    """One DCA forward-dynamics evaluation: kinematics, main pass, back-substitution."""
    _dca_kinematics(parent, jtype, qadr, vadr, jnv, Xtree_rot, axis, Xtree_E, Xtree_r, S,
                    H_E, H_r, gravity, q, qd, quasi_static, Xup_E, Xup_r, XJ_E, XJ_r, v, c,
                    c_al, b_world)
    _dca_main_pass(jtype, jnv, vadr, mass, h, Ibar, gravity, Iinv, H_E, H_r, perm, nfree,
                   node_A, node_B, node_joint, node_body, node_nh, node_hoff, node_ca, node_cb,
                   handle_x, node_doff, node_ooff, n_leaf_diag, hmax, XJ_E, XJ_r, v, c_al,
                   b_world, tau, f_ext, quasi_static, Z, Ds, st_base, z, Pd, Po, Bst, Kj, L,
                   Ld, beta, gamma)
    _dca_back_pass(jnv, vadr, H_E, perm, nfree, node_A, node_B, node_joint, node_nh,
                   node_hoff, node_ooff, node_ca, node_cb, XJ_E, XJ_r, Po, Kj, L, Ld, beta,
                   tau, Ds, fh, f_al, f_out, qdd_out)


class _DCAModelArrays:
    """The Model's arrays the DCA kernels take, in one dtype (built from the Model's public
    attributes only)."""

    def __init__(self, model: Model, dt):
        f = lambda a: np.ascontiguousarray(a, dtype=dt)
        self.parent = model.body_parent
        self.jtype = model.jnt_type
        self.qadr = model.jnt_qadr
        self.vadr = model.jnt_vadr
        self.jnv = model.jnt_nv
        nb = model.nb
        self.Xtree_rot = (np.abs(model.jnt_Xtree_E - np.eye(3)).reshape(nb, 9)
                          .max(axis=1, initial=0.0) > 0).astype(np.int64)
        self.axis = f(model.jnt_axis)
        self.Xtree_E = f(model.jnt_Xtree_E)
        self.Xtree_r = f(model.jnt_Xtree_r)
        self.mass = f(model.body_mass)
        self.h = f(model.body_h)
        self.Ibar = f(model.body_Ibar)
        self.S = f(model.dof_S)
        self.gravity = f(model.gravity)


def _as_vector(model, x, name, size, dt):
    if (type(x) is np.ndarray and x.dtype == dt and x.shape == (size,)
            and x.flags.c_contiguous):
        return x
    return model.check_vector(x, name, size, dt)


def _as_configuration(model, q, dt):
    if model.quat_qadr.size:
        return model.check_configuration(q, dt)
    return _as_vector(model, q, "q", model.nq, dt)


def _report_nonfinite(model, out, dt, **inputs):
    """ValueError naming the joint or body behind a non-finite result: a non-finite input
    first, else a singular handle inertia ``Phi_2^A + Phi_1^B`` or ``S^T V S``."""
    model.diagnose_nonfinite(**inputs)
    bad = np.flatnonzero(~np.isfinite(out))
    j = int(model.dof_body[bad[0]]) if bad.size else 0
    raise ValueError(
        f"the DCA result is not finite at joint {model.joint_name[j]!r}: the inverse inertia "
        f"Phi_2^A + Phi_1^B or S^T V S of its node (or of an ancestor node) is singular, or the "
        f"model is too ill-conditioned for {np.dtype(dt)}")


def _stack_depth(tree: AssemblyTree) -> int:
    """Largest number of pending subassemblies during a post-order traversal (the stack
    of :func:`_dca_main_pass`); at most the tree height + 2."""
    sp = best = 0
    for i in range(tree.n_nodes):
        if tree.node_joint[i] < 0:
            sp += 1
        else:
            sp -= 2 if tree.node_A[i] >= 0 else 1
            if tree.node_nh[i] > 0:
                sp += 1
        best = max(best, sp)
    return max(best, 1)


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
    R = np.tile(np.eye(3), (nb, 1, 1))
    perm = np.tile(np.arange(6, dtype=np.int64), (nb, 1))
    nfree = np.full(nb, 6, dtype=np.int64)
    for j in range(nb):
        t = model.jnt_type[j]
        va = model.jnt_vadr[j]
        if t in (JOINT_REVOLUTE, JOINT_PRISMATIC):
            a = model.dof_S[va, :3] if t == JOINT_REVOLUTE else model.dof_S[va, 3:]
            a = a / np.linalg.norm(a)
            e = np.zeros(3)
            e[int(np.argmin(np.abs(a)))] = 1.0
            u = np.cross(a, e)
            u /= np.linalg.norm(u)
            R[j] = np.array([u, np.cross(a, u), a])
            nfree[j] = 5
            if t == JOINT_REVOLUTE:
                perm[j] = (0, 1, 3, 4, 5, 2)
        elif t == JOINT_SPHERICAL:
            perm[j] = (3, 4, 5, 0, 1, 2)
            nfree[j] = 3
        elif t == JOINT_FREE:
            nfree[j] = 0
    H_E = np.empty((2 * nb, 3, 3))
    H_r = np.zeros((2 * nb, 3))
    H_E[1::2] = R
    H_E[0::2] = np.einsum("jab,jbc->jac", R, model.jnt_Xtree_E)
    H_r[0::2] = model.jnt_Xtree_r
    return H_E, H_r, perm, nfree


class DCA:
    """Featherstone's divide-and-conquer algorithm on a fixed assembly tree, with its
    coefficients kept between calls (for the adaptive algorithms built on it).

    Parameters
    ----------
    model : Model
    assembly : {"balanced", "serial"}, sequence of joints, or AssemblyTree
        the assembly tree or how to build it (:func:`articulated.assembly.build_assembly`)
    dtype : float64 or float32 - arithmetic precision
    max_handles : int, optional - handle cap of the balanced construction

    Attributes (arrays of ``dtype`` unless noted; coefficients valid after a call)
    ----------
    model : Model; tree : AssemblyTree
    H_E, H_r : (2 nb, 3, 3), (2 nb, 3) - the handle frames (:func:`handle_frames`):
        transform of handle ``(J, s)`` at index ``2 J + s``; perm (nb, 6), nfree (nb,) int64
        - free / joint coordinates of each joint in its aligned frame
    Iinv : (nb, 21) - inverse spatial inertia ``I^-1`` of each body, body coordinates, the
        upper triangle row by row
    Po : (n_off, 6, 6) - off-diagonal ``Phi_kl`` (k < l) of every node, node ``i`` from
        ``node_ooff[i]`` (row-major over the strict upper block triangle); rows in handle
        k's frame, columns in handle l's. Leaf blocks are constant, internal ones rewritten
        by each call. (Diagonal blocks and biases of internal nodes are only needed by the
        parent and live on a small stack, ``Pd[n_leaf_diag:]`` and ``Bst``; the leaves'
        constant diagonal blocks are ``Pd[node_doff[i] + k]``.)
    L, Ld : (nb, 15), (nb, 6) - factor of the free block ``K_FF`` of
        ``K = V^-1 = X_J Phi_2^A X_J^T + Phi_1^B`` of each joint's node: for five free
        coordinates (revolute, prismatic) ``L D L^T`` with unit ``L`` and ``1 / D`` in Ld;
        otherwise Cholesky ``L L^T`` with the inverse diagonal in Ld; L holds the strictly
        lower triangle row by row (entry (i, j) at ``i (i - 1) / 2 + j``)
    Kj : (nv, 6) - the joint rows of K (``K[perm[J, nfree + r], :]`` for dof r)
    beta, gamma : (nb, 6) - ``beta``, ``gamma`` of each joint's node (RGL eq. 2), aligned
        frame of ``(J, 1)``; :meth:`node_K`, :meth:`node_VW` give K, V, W
    XJ_E, XJ_r : (nb, 3, 3), (nb, 3) - principal joint transforms ``R X_J(q_J) R^T``
        (compact, aligned frames)
    Xup_E, Xup_r, v, c, z - parent-to-body transforms, body velocities, ``v x S qd``,
        leaf biases ``I^-1 (f_ext - v x* I v)`` (body coordinates)
    fh : (n_slots, 6) - forces on every handle from the back-substitution, handle frames
    f : (nb, 6) - joint constraint forces: the spatial force transmitted across joint i to
        body i, body-i coordinates [N m; N] (what RNEA leaves in ``Data.f``); ``f_al``:
        the same in the aligned frame of ``(J, 1)``
    qdd : (nv,) - joint accelerations of the last call

    Raises
    ------
    TypeError - not a Model, unsupported dtype. ValueError - a bad assembly order.
    NotImplementedError - a 6-dof joint whose motion subspace is not the identity.

    Memory O(n) for a bounded handle count (:meth:`nbytes`). Source: Redon, Galoppo & Lin
    (2005), Sec. 3; Redon & Lin (2005), Sec. 3.1, 5.1.
    """

    def __init__(self, model: Model, assembly="balanced", *, dtype=np.float64,
                 max_handles: int | None = None):
        if not isinstance(model, Model):
            raise TypeError(f"model must be an articulated.Model, got {type(model).__name__}")
        dt = self.dtype = check_dtype(dtype)
        self.model = model
        if isinstance(assembly, AssemblyTree):
            if assembly.nb != model.nb:
                raise ValueError(f"the assembly tree has {assembly.nb} bodies, the model "
                                 f"{model.nb}")
            tree = assembly
        else:
            tree = build_assembly(model, assembly, max_handles=max_handles)
        self.tree = tree
        for j in np.flatnonzero(model.jnt_nv == 6):
            va = model.jnt_vadr[j]
            if not np.array_equal(model.dof_S[va:va + 6], np.eye(6)):
                raise NotImplementedError(f"joint {model.joint_name[j]!r}: 6-dof joints need "
                                          f"S = 1_6 (a free joint)")
        nb, nv = model.nb, model.nv
        z = lambda *s: np.zeros(s, dtype=dt)
        Iinv64 = np.linalg.inv(model.body_I)
        Iinv64 = 0.5 * (Iinv64 + np.transpose(Iinv64, (0, 2, 1)))
        self.ma = _DCAModelArrays(model, dt)
        iu = np.triu_indices(6)
        self.Iinv = np.ascontiguousarray(Iinv64[:, iu[0], iu[1]], dtype=dt)
        H_E, H_r, perm, nfree = handle_frames(model)
        self.H_E = np.ascontiguousarray(H_E, dtype=dt)
        self.H_r = np.ascontiguousarray(H_r, dtype=dt)
        self.perm = perm
        self.nfree = nfree
        self.handle_x = np.ascontiguousarray(2 * tree.handle_joint + tree.handle_side)
        # storage layout: constant leaf diagonal blocks, then the stack of pending
        # subassemblies' diagonal blocks; off-diagonal blocks of every node
        nh = tree.node_nh
        leaf = tree.node_body >= 0
        doff = np.full(tree.n_nodes, -1, dtype=np.int64)
        doff[leaf] = np.concatenate([[0], np.cumsum(nh[leaf])[:-1]]) if leaf.any() else []
        self.n_leaf_diag = int(nh[leaf].sum())
        noff = nh * (nh - 1) // 2
        self.node_doff = doff
        self.node_ooff = np.concatenate([[0], np.cumsum(noff)[:-1]]).astype(np.int64)
        self.hmax = int(max(tree.max_handles, 1))
        depth = _stack_depth(tree)
        self.stack_depth = depth
        Pd64 = np.zeros((self.n_leaf_diag + depth * self.hmax, 6, 6))
        Po64 = np.zeros((int(noff.sum()), 6, 6))
        _leaf_phi_kernel(H_E, H_r, Iinv64, tree.node_body, nh, tree.node_hoff, self.node_doff,
                         self.node_ooff, self.handle_x, np.zeros((3, 6, 6)), Pd64, Po64)
        self.Pd = np.ascontiguousarray(Pd64, dtype=dt)
        self.Po = np.ascontiguousarray(Po64, dtype=dt)
        self.Bst = z(depth * self.hmax, 6)
        self._st_base = np.zeros(depth, dtype=np.int64)
        self.fh = z(tree.n_slots, 6)
        self.Kj = z(nv, 6)
        self.L = z(nb, 15)
        self.Ld = z(nb, 6)
        self.beta = z(nb, 6)
        self.gamma = z(nb, 6)
        self.Xup_E = z(nb, 3, 3)
        self.Xup_r = z(nb, 3)
        self.XJ_E = z(nb, 3, 3)
        self.XJ_r = z(nb, 3)
        self.v = z(nb, 6)
        self.c = z(nb, 6)
        self.c_al = z(nb, 6)
        self.b_world = z(nb, 6)
        self.z = z(nb, 6)
        self.f = z(nb, 6)
        self.f_al = z(nb, 6)
        self.a = z(nb, 6)
        self.qdd = z(nv)
        self.f_none = z(0, 6)
        self._qd_zero = z(nv)
        self._Z = z(self.hmax + 2, 6, 6)
        self._Ds = z(6, 6)

    def nbytes(self) -> int:
        """Bytes held by the DCA's arrays (coefficients and workspace, not the model)."""
        return sum(a.nbytes for a in vars(self).values() if isinstance(a, np.ndarray))

    def _run(self, q, qd, tau, f_ext, quasi_static):
        model, dt = self.model, self.dtype
        q = _as_configuration(model, q, dt)
        qd = self._qd_zero if quasi_static else _as_vector(model, qd, "qd", model.nv, dt)
        tau = _as_vector(model, tau, "tau", model.nv, dt)
        f = self.f_none if f_ext is None else check_f_ext(model, f_ext, dt)
        ma, t = self.ma, self.tree
        _dca_kernel(ma.parent, ma.jtype, ma.qadr, ma.vadr, ma.jnv, ma.Xtree_rot, ma.axis,
                    ma.Xtree_E, ma.Xtree_r, ma.mass, ma.h, ma.Ibar, ma.S, ma.gravity, self.Iinv,
                    self.H_E, self.H_r, self.perm, self.nfree,
                    t.node_A, t.node_B, t.node_joint, t.node_body, t.node_nh, t.node_hoff,
                    t.node_ca, t.node_cb, self.handle_x, self.node_doff, self.node_ooff,
                    self.n_leaf_diag, self.hmax,
                    q, qd, tau, f, bool(quasi_static), self._Z, self._Ds, self._st_base,
                    self.Xup_E, self.Xup_r, self.XJ_E, self.XJ_r, self.v, self.c, self.c_al,
                    self.b_world, self.z, self.Pd, self.Po, self.Bst, self.Kj, self.L, self.Ld,
                    self.beta, self.gamma, self.fh, self.f_al, self.f, self.qdd)
        if not np.isfinite(self.qdd).all():
            _report_nonfinite(model, self.qdd, dt, q=q, qd=None if quasi_static else qd,
                              tau=tau, f_ext=f)
        return self.qdd.copy()

    def forward_dynamics(self, q, qd, tau, f_ext=None) -> np.ndarray:
        """Joint accelerations ``qdd = M^-1 (tau - C(q, qd) + J^T f_ext)`` by the DCA.

        Parameters
        ----------
        q : (nq,) float64 - configuration (unit quaternions for spherical/free joints)
        qd : (nv,) float64 - joint velocities [rad/s | m/s] (body-frame rates for quaternion
            joints, not dq/dt)
        tau : (nv,) float64 - applied joint forces ``Q`` [N m | N]
        f_ext : (nb, 6) float64, optional - external spatial force on each body, ``[n; f]``
            about the body origin in body coordinates [N m; N] (as :func:`articulated.aba`)

        Returns
        -------
        qdd : (nv,) ndarray of ``dtype`` [rad/s^2 | m/s^2]. After the call :attr:`f` holds
        the joint constraint forces and the coefficients are up to date.

        Raises ValueError (wrong shapes, non-finite input naming the joint or body, non-unit
        quaternions, a singular handle inertia naming the joint), TypeError (non-numeric).
        Complexity O(n) with a bounded handle count; allocation-free kernels.
        Source: RGL Sec. 3.1-3.2, eqs. 1-5.
        """
        return self._run(q, qd, tau, f_ext, False)

    def quasi_statics(self, q, tau, f_ext=None) -> np.ndarray:
        """Joint accelerations with all velocities zero (forward quasi-statics).

        Same as :meth:`forward_dynamics` with ``qd = 0`` but without the velocity pass and
        the velocity-product terms (RL Sec. 3.1, eqs. 3, 6, 7). Gravity is included (folded
        into the root bias). Returns ``qdd`` (nv,) [rad/s^2 | m/s^2]; :attr:`f` holds the
        joint constraint forces.
        """
        return self._run(q, None, tau, f_ext, True)

    def body_accelerations(self) -> np.ndarray:
        """(nb, 6) spatial accelerations of the bodies from the last call, body coordinates,
        including the fictitious base acceleration ``-g`` (equal to ABA's ``Data.a``)."""
        t = self.tree
        _dca_body_acc(t.node_body, t.node_nh, t.node_hoff, self.handle_x, self.H_E, self.H_r,
                      self.Iinv, self.z, self.fh, self.a)
        return self.a.copy()

    def handle_frame(self, joint, side: int = 1) -> np.ndarray:
        """(6, 6) motion transform from body coordinates to the frame of handle
        ``(joint, side)``: from body-J coordinates for side 1, from the parent body's
        coordinates for side 0 (the placement ``X_tree[J]`` followed by the alignment
        rotation ``R_J``). Forces transform with its inverse transpose."""
        j = self.model.joint_id(joint)
        if side not in (0, 1):
            raise ValueError(f"side must be 0 or 1, got {side!r}")
        E, r = self.H_E[2 * j + side], self.H_r[2 * j + side]
        E = np.asarray(E, dtype=np.float64)
        rx = np.array([[0.0, -r[2], r[1]], [r[2], 0.0, -r[0]], [-r[1], r[0], 0.0]])
        X = np.zeros((6, 6))
        X[:3, :3] = E
        X[3:, 3:] = E
        X[3:, :3] = -E @ rx
        return X

    def node_VW(self, joint) -> tuple[np.ndarray, np.ndarray]:
        """``(V, W)`` (6, 6) of a joint's node from the last call (RGL eq. 2), in the
        aligned frame of handle ``(J, 1)`` (:meth:`handle_frame`; ``T V T^T`` in the
        frame of ``T``): ``V = (X_J Phi_2^A X_J^T + Phi_1^B)^-1``,
        ``W = V - V S (S^T V S)^-1 S^T V``. Formed from the stored ``K = V^-1`` (plain
        NumPy; for inspection and tests, not for hot loops)."""
        j = self.model.joint_id(joint)
        K = self.node_K(j)
        V = np.linalg.inv(K)
        nf = int(self.nfree[j])
        F = self.perm[j, :nf]
        W = np.zeros((6, 6))
        if nf:
            W[np.ix_(F, F)] = np.linalg.inv(K[np.ix_(F, F)])
        return V, W

    def node_K(self, joint) -> np.ndarray:
        """``K = V^-1 = X_J Phi_2^A X_J^T + Phi_1^B`` (6, 6) of a joint's node from the
        last call, aligned frame of ``(J, 1)``, rebuilt from the stored factor ``L`` of
        ``K_FF`` and the joint rows ``Kj`` (plain NumPy)."""
        j = self.model.joint_id(joint)
        nf = int(self.nfree[j])
        va, d = int(self.model.jnt_vadr[j]), int(self.model.jnt_nv[j])
        F, Jc = self.perm[j, :nf], self.perm[j, nf:]
        K = np.zeros((6, 6))
        Lf = np.zeros((6, 6))
        Lf[np.tril_indices(6, -1)[0], np.tril_indices(6, -1)[1]] = self.L[j]
        dinv = np.asarray(self.Ld[j], dtype=np.float64)
        if nf == 5:   # square-root-free factor L D L^T (unit L, 1 / D in Ld)
            Lf = Lf[:5, :5] + np.eye(5)
            K[np.ix_(F, F)] = Lf @ np.diag(1 / dinv[:5]) @ Lf.T
        else:         # Cholesky L L^T, the inverse diagonal in Ld
            Lf = Lf[:nf, :nf] + np.diag(1 / dinv[:nf])
            K[np.ix_(F, F)] = Lf @ Lf.T
        rows = np.asarray(self.Kj[va:va + d], dtype=np.float64)
        K[Jc, :] = rows
        K[:, Jc] = rows.T
        return K

    def joint_forces(self) -> np.ndarray:
        """(nb, 6) joint constraint forces of the last call: the spatial force ``[n; f]``
        transmitted across joint i to body i, body-i coordinates [N m; N] (RGL eq. 5)."""
        return self.f.copy()


_SOLVERS: "weakref.WeakKeyDictionary[Model, dict]" = weakref.WeakKeyDictionary()


def dca_solver(model: Model, assembly: str = "balanced", dtype=np.float64) -> DCA:
    """The cached :class:`DCA` of a model for a named assembly kind and dtype (built on
    first use; the cache does not keep the model alive)."""
    if not isinstance(model, Model):
        raise TypeError(f"model must be an articulated.Model, got {type(model).__name__}")
    key = (assembly, check_dtype(dtype))
    cache = _SOLVERS.setdefault(model, {})
    s = cache.get(key)
    if s is None:
        s = cache[key] = DCA(model, assembly, dtype=dtype)
    return s


def dca(model: Model, q, qd, tau, f_ext=None, *, assembly="balanced", dtype=np.float64):
    """Forward dynamics by Featherstone's divide-and-conquer algorithm.

    Parameters
    ----------
    model : Model
    q, qd, tau, f_ext : as :meth:`DCA.forward_dynamics` (and :func:`articulated.aba`)
    assembly : {"balanced", "serial"} or AssemblyTree or sequence of joints - a named kind
        uses a cached :class:`DCA` per model (:func:`dca_solver`); anything else builds a
        new one (keep a :class:`DCA` object instead)
    dtype : float64 or float32

    Returns
    -------
    qdd : (nv,) ndarray of ``dtype`` [rad/s^2 | m/s^2]

    Raises as :meth:`DCA.forward_dynamics`. Source: RGL Sec. 3.1-3.2, eqs. 1-5.
    """
    s = (dca_solver(model, assembly, dtype) if isinstance(assembly, str)
         else DCA(model, assembly, dtype=dtype))
    return s.forward_dynamics(q, qd, tau, f_ext)


def quasi_statics(model: Model, q, tau, f_ext=None, *, assembly="balanced", dtype=np.float64):
    """Forward quasi-statics by the DCA: joint accelerations with all velocities zero
    (RL Sec. 3.1, eqs. 1-7). Parameters and result as :func:`dca` without ``qd``."""
    s = (dca_solver(model, assembly, dtype) if isinstance(assembly, str)
         else DCA(model, assembly, dtype=dtype))
    return s.quasi_statics(q, tau, f_ext)
