"""Error-bounded adaptive quasi-statics (Redon & Lin 2005): the DCA with every node's
coefficients kept, total-acceleration equations, partial back-substitution under an error
bound or a joint budget, and lazy O(N_U log(N / N_U)) coefficient updates.

Source: Redon & Lin (2005), "An efficient, error-bounded approximation algorithm for
simulating quasi-statics of complex linkages" (RL): Sec. 3.1 (DCA, eqs. 1-7), Sec. 4
(Definitions 1-3, Lemma 1, eqs. 8-9, partial back-substitution 4.3), Sec. 5 (hierarchical
frames 5.1, simplified update 5.2). The joint weights ``A_i`` are the acceleration metric of
Redon, Galoppo & Lin (2005), "Adaptive dynamics of articulated bodies" (RGL), Sec. 5.2
(eqs. 7-8); identity weights reproduce RL.

Notation and frames are those of :mod:`articulated.algorithms.dca` (aligned handle frames,
principal joint transform ``X = X_J(q_J)`` from the frame of handle ``(J, 0)`` to that of
``(J, 1)``, node handles: A's other handles, then B's). Per node C with joint J and handle
forces ``f_k`` (forces applied *to C* at its handles), with ``C_k = X Phi^A_{2k}`` for a
handle of A and ``C_k = -Phi^B_{1k}`` for a handle of B (so ``x = beta + sum_k C_k f_k`` in
RL eq. 4):

    f    = W x + P Q                 (RL eq. 5, force across J on B's handle (J, 1))
    qdd  = D Q - P^T x               (RL eq. 4; P = V S (S^T V S)^-1, D = (S^T V S)^-1)
    Phi^C_kl = [k, l same child] Phi_kl - C_k^T W C_l,   b^C_k = b_k - C_k^T gamma   (eq. 2)

Total-acceleration equation (RL Lemma 1, eq. 8): ``A(C) = sum_kl f_k^T Psi_kl f_l +
sum_k f_k^T p_k + eta`` with ``A(C) = sum_{joints i in C} qdd_i^T A_i qdd_i``. Substituting
the affine maps ``f_2^A = -X^T f`` and ``f_1^B = f`` of the proof of Lemma 1 gives (RL eq. 9
in handle form; ``Q_k = -Psi^A_{k2} X^T`` for a handle of A, ``Q_k = Psi^B_{k1}`` for one of
B, ``Y' = X Psi^A_2 X^T + Psi^B_1``, ``Y = W Y' W + P A_J P^T``, ``R = D Q - P^T beta``):

    Psi^C_kl = [same child] Psi_kl + Q_k W C_l + (Q_l W C_k)^T + C_k^T Y C_l
    p^C_k    = [own child] p_k + 2 Q_k gamma + C_k^T z,
               z = W (p^B_1 - X p^A_2 + 2 Y' gamma) - 2 P A_J R
    eta^C    = eta^A + eta^B + gamma^T Y' gamma + gamma^T (p^B_1 - X p^A_2) + R^T A_J R

Leaves have ``Psi = 0, p = 0, eta = 0``; a root node has no A (the world), which zeroes A's
terms; it has no handles, so ``A(root) = eta``. With ``A_J = 1`` these are RL eq. 9
(``Y = N + W (Psi_2^A + Psi_1^B) W``, ``N = U^T U``, ``U = P^T``).

Hierarchical frames (RL Sec. 5.1)
---------------------------------
Besides the principal joint transforms ``X`` the solver keeps, for every node N, the
transform ``Tp[s]`` from the frame of each of its handles (slot s) to the frame of N's
*principal handle* (the one N's parent consumes), from which every handle
cross-transform follows in O(1) (``T_kl = Tp_k^-1 Tp_l``), and the *principal-handle
transform* ``Tup[N]`` from N's principal-handle frame to its parent's (to the world for the
child of a root node). World poses of a body are the product of the ``Tup`` on its path:
O(tree height), never O(n) (:meth:`AdaptiveQuasiStatics.body_pose`). Like every node
coefficient they depend only on the principal joint transforms inside the subassembly.

Units: SI. ``A(C)`` is a squared joint acceleration in the metric of the weights (identity
weights: [rad^2/s^4] for revolute joints, [m^2/s^4] for prismatic ones); ``Psi``, ``p`` and
``eta`` carry the units that make eq. 8 consistent with handle forces in [N m; N].
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..assembly import build_assembly
from .._byref import byref, deref
from ..config import INLINE, JIT, KERNEL
from ..model import Model
from ._inputs import check_f_ext
from .passive import K, evaluate_fresh
from .dca import (DCA, _chol, _chol5_perm, _copy_block, _ctv, _fwd_rows, _leaf_bias, _oidx,
                  _outer_acc, _outer_sym, _pair5, _pair5_sym, _solve5, _xforce_T, _xj_cols,
                  _xj_rows, _xmotion, _zrows5, principal_joint_transform)

ERROR_MEASURES = ("absolute_linkage", "relative_linkage", "absolute_joint", "relative_joint")
"""The acceleration error measures of RL Definition 2, in the order of their codes 0-3."""


# --------------------------------------------------------------------------- block storage
#
# Phi and Psi of every node: diagonal block (k, k) at row ``hoff + k`` (one per handle
# slot), off-diagonal block (k, l), k < l, at ``n_slots + ooff + _oidx(nh, k, l)``.

@njit(**INLINE)
def _blk(hoff, ooff, n_slots, nh, k, l):
    """(row, transposed) of block (k, l) of a node in the Phi/Psi storage."""
    if k == l:
        return hoff + k, False
    if k < l:
        return n_slots + ooff + _oidx(nh, k, l), False
    return n_slots + ooff + _oidx(nh, l, k), True


@njit(**INLINE)
def _xdense(E, r, J, T, t):
    """T[t] = the dense 6x6 motion transform ``[[E, 0], [-E r^, E]]`` of (E[J], r[J])."""
    for a in range(6):
        for b in range(6):
            T[t, a, b] = 0.0
    for a in range(3):
        for b in range(3):
            e = E[J, a, b]
            T[t, a, b] = e
            T[t, 3 + a, 3 + b] = e
    # -E r^ : column b of r^ is r x e_b
    for a in range(3):
        T[t, 3 + a, 0] = -(E[J, a, 1] * r[J, 2] - E[J, a, 2] * r[J, 1])
        T[t, 3 + a, 1] = -(E[J, a, 2] * r[J, 0] - E[J, a, 0] * r[J, 2])
        T[t, 3 + a, 2] = -(E[J, a, 0] * r[J, 1] - E[J, a, 1] * r[J, 0])


# ---------------------------------------------------------------- compact transforms
# (E, r) as in spatial.py: E rotates A coordinates into B coordinates, r is B's origin in A.

@njit(**INLINE)
def _tmul(E2, r2, i2, E1, r1, i1, Eo, ro, io):
    """(Eo, ro)[io] = (E2, r2)[i2] o (E1, r1)[i1] (apply 1 first); io may alias neither."""
    for a in range(3):
        for b in range(3):
            Eo[io, a, b] = E2[i2, a, 0] * E1[i1, 0, b] + E2[i2, a, 1] * E1[i1, 1, b] \
                + E2[i2, a, 2] * E1[i1, 2, b]
    for a in range(3):
        ro[io, a] = r1[i1, a] + E1[i1, 0, a] * r2[i2, 0] + E1[i1, 1, a] * r2[i2, 1] \
            + E1[i1, 2, a] * r2[i2, 2]


@njit(**INLINE)
def _tinv(E, r, i, Eo, ro, io):
    """(Eo, ro)[io] = inverse of (E, r)[i]: ``(E^T, -E r)``."""
    for a in range(3):
        for b in range(3):
            Eo[io, a, b] = E[i, b, a]
    for a in range(3):
        ro[io, a] = -(E[i, a, 0] * r[i, 0] + E[i, a, 1] * r[i, 1] + E[i, a, 2] * r[i, 2])


@njit(**INLINE)
def _tcopy(E, r, i, Eo, ro, io):
    for a in range(3):
        ro[io, a] = r[i, a]
        for b in range(3):
            Eo[io, a, b] = E[i, a, b]


@njit(**INLINE)
def _children(i, node_A, node_B, node_ca, node_cb, node_nh, node_hoff, node_ooff):
    """Layout of internal node i's children: ``(A, B, ca, cb, nhA, hA, oA, nAo, nhB, hB,
    oB)`` - the children, their connecting slots, handle counts, first handle slot and first
    off-diagonal block, and ``nAo`` = the node's handles coming from A (zeros for a root
    node, whose A is the world)."""
    A = node_A[i]
    B = node_B[i]
    if A >= 0:
        nhA = node_nh[A]
        return (A, B, node_ca[i], node_cb[i], nhA, node_hoff[A], node_ooff[A], nhA - 1,
                node_nh[B], node_hoff[B], node_ooff[B])
    return (A, B, node_ca[i], node_cb[i], 0, 0, 0, 0, node_nh[B], node_hoff[B],
            node_ooff[B])


# --------------------------------------------------------------------------- kernels

@njit(**INLINE)
def _chol_inverse(L, Ld, J, n, T, t, w):
    """``T[t][:n, :n] = (L L^T)^-1`` for the Cholesky factor in (L[J], Ld[J]) of
    :func:`~articulated.algorithms.dca._chol` (strict lower triangle packed row by row,
    ``1 / diag(L)`` in Ld): ``M^T M`` with ``M = L^-1`` (in T[w]); the upper triangle is
    computed and mirrored, so the result is exactly symmetric."""
    for c in range(n):
        T[w, c, c] = Ld[J, c]
        for a in range(c + 1, n):
            s = 0.0
            for j in range(c, a):
                s -= L[J, (a * (a - 1)) // 2 + j] * T[w, j, c]
            T[w, a, c] = s * Ld[J, a]
    for a in range(n):
        for c in range(a, n):
            s = 0.0
            for m in range(c, n):
                s += T[w, m, a] * T[w, m, c]
            T[t, a, c] = s
            T[t, c, a] = s


@njit(**INLINE)
def _ldl5_inverse(L, Ld, J, T, t):
    """``T[t][:5, :5] = K_FF^-1 = (L D L^T)^-1`` for the factor in (L[J], Ld[J]) of
    :func:`~articulated.algorithms.dca._chol5_perm`: ``K_FF^-1 = M^T D^-1 M`` with
    ``M = L^-1`` (unit lower triangular); exactly symmetric (generated code)."""
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
    e0 = Ld[J, 0]
    e1 = Ld[J, 1]
    e2 = Ld[J, 2]
    e3 = Ld[J, 3]
    e4 = Ld[J, 4]
    m10 = -l10
    m20 = -(l20 + l21 * m10)
    m21 = -l21
    m30 = -(l30 + l31 * m10 + l32 * m20)
    m31 = -(l31 + l32 * m21)
    m32 = -l32
    m40 = -(l40 + l41 * m10 + l42 * m20 + l43 * m30)
    m41 = -(l41 + l42 * m21 + l43 * m31)
    m42 = -(l42 + l43 * m32)
    m43 = -l43
    w00 = e0 + e1 * m10 * m10 + e2 * m20 * m20 + e3 * m30 * m30 + e4 * m40 * m40
    w01 = m10 * e1 + m20 * m21 * e2 + m30 * m31 * e3 + m40 * m41 * e4
    w02 = m20 * e2 + m30 * m32 * e3 + m40 * m42 * e4
    w03 = m30 * e3 + m40 * m43 * e4
    w04 = m40 * e4
    w11 = e1 + e2 * m21 * m21 + e3 * m31 * m31 + e4 * m41 * m41
    w12 = m21 * e2 + m31 * m32 * e3 + m41 * m42 * e4
    w13 = m31 * e3 + m41 * m43 * e4
    w14 = m41 * e4
    w22 = e2 + e3 * m32 * m32 + e4 * m42 * m42
    w23 = m32 * e3 + m42 * m43 * e4
    w24 = m42 * e4
    w33 = e3 + e4 * m43 * m43
    w34 = m43 * e4
    w44 = e4
    T[t, 0, 0] = w00
    T[t, 0, 1] = w01
    T[t, 0, 2] = w02
    T[t, 0, 3] = w03
    T[t, 0, 4] = w04
    T[t, 1, 0] = w01
    T[t, 1, 1] = w11
    T[t, 1, 2] = w12
    T[t, 1, 3] = w13
    T[t, 1, 4] = w14
    T[t, 2, 0] = w02
    T[t, 2, 1] = w12
    T[t, 2, 2] = w22
    T[t, 2, 3] = w23
    T[t, 2, 4] = w24
    T[t, 3, 0] = w03
    T[t, 3, 1] = w13
    T[t, 3, 2] = w23
    T[t, 3, 3] = w33
    T[t, 3, 4] = w34
    T[t, 4, 0] = w04
    T[t, 4, 1] = w14
    T[t, 4, 2] = w24
    T[t, 4, 3] = w34
    T[t, 4, 4] = w44


@njit(**INLINE)
def _joint_coefficients(J, nf, d, perm, T, L, Ld, V6, W, P, D, gamma, R):
    """Joint J's coefficients of RL eqs. 4-5 from ``K = V^-1`` (T[0]) and the Cholesky
    factor ``K_FF = L L^T`` in (L[0], Ld[0]) (:func:`~articulated.algorithms.dca._chol`),
    with ``S = [0; 1_d]`` after the permutation ``perm[J]`` (free coordinates F first):
    ``W = [K_FF^-1, 0; 0, 0]``, ``P = V S (S^T V S)^-1 = [-K_FF^-1 K_FJ; 1]``,
    ``D = (S^T V S)^-1 = K_JJ - K_JF K_FF^-1 K_FJ``, ``gamma = W beta + P Q`` and
    ``R = D Q - P^T beta`` (beta in V6[0], Q in V6[1, :d]; gamma also into V6[2], R into
    V6[3]); ``K_FF^-1`` also into T[8] (F coordinates; T[9] scratch)."""
    _chol_inverse(L, Ld, 0, nf, T, 8, 9)
    for a in range(6):
        for c in range(6):
            W[J, a, c] = 0.0
    for a in range(6):
        for c in range(6):
            P[J, a, c] = 0.0
    for a in range(6):
        for c in range(6):
            D[J, a, c] = 0.0
    for a in range(nf):
        pa = perm[J, a]
        for c in range(nf):
            W[J, pa, perm[J, c]] = T[8, a, c]
    for rr in range(d):
        jr = perm[J, nf + rr]
        P[J, jr, rr] = 1.0
        for a in range(nf):
            s = 0.0
            for c in range(nf):
                s += T[8, a, c] * T[0, perm[J, c], jr]
            P[J, perm[J, a], rr] = -s
    for rr in range(d):
        jr = perm[J, nf + rr]
        for ss in range(d):
            s = T[0, jr, perm[J, nf + ss]]
            for a in range(nf):
                s += T[0, jr, perm[J, a]] * P[J, perm[J, a], ss]
            D[J, rr, ss] = s
    _gamma_R(J, d, W, P, D, V6, gamma, R)


@njit(**INLINE)
def _gamma_R(J, d, W, P, D, V6, gamma, R):
    """``gamma = W beta + P Q`` and ``R = D Q - P^T beta`` (RL eqs. 4-5) of joint J from its
    W, P, D (beta in V6[0], Q in V6[1, :d]) into ``gamma[J]``, V6[2] and ``R[J]``, V6[3]."""
    for a in range(6):
        s = 0.0
        for c in range(6):
            s += W[J, a, c] * V6[0, c]
        for rr in range(d):
            s += P[J, a, rr] * V6[1, rr]
        gamma[J, a] = s
        V6[2, a] = s
    for rr in range(6):
        s = 0.0
        if rr < d:
            for ss in range(d):
                s += D[J, rr, ss] * V6[1, ss]
            for c in range(6):
                s -= P[J, c, rr] * V6[0, c]
        R[J, rr] = s
        V6[3, rr] = s


@njit(**INLINE)
def _joint_coefficients5(J, perm, T, L, Ld, V6, W, P, D, gamma, R):
    """:func:`_joint_coefficients` for ``|F| = 5, d = 1`` (revolute and prismatic joints)
    and the factor ``K_FF = L D L^T`` of :func:`~articulated.algorithms.dca._chol5_perm`,
    with ``x = K_FF^-1 K_FJ = -P_F`` and ``gamma_F = K_FF^-1 (beta_F - K_FJ Q)`` solved in
    registers (:func:`~articulated.algorithms.dca._solve5`)."""
    _ldl5_inverse(L, Ld, 0, T, 8)
    for a in range(6):
        for c in range(6):
            W[J, a, c] = 0.0
    for a in range(5):
        pa = perm[J, a]
        for c in range(5):
            W[J, pa, perm[J, c]] = T[8, a, c]
    p0 = perm[J, 0]
    p1 = perm[J, 1]
    p2 = perm[J, 2]
    p3 = perm[J, 3]
    p4 = perm[J, 4]
    pj = perm[J, 5]
    k0 = T[0, p0, pj]
    k1 = T[0, p1, pj]
    k2 = T[0, p2, pj]
    k3 = T[0, p3, pj]
    k4 = T[0, p4, pj]
    x = _solve5(L, Ld, 0, k0, k1, k2, k3, k4)
    dd = T[0, pj, pj] - (k0 * x[0] + k1 * x[1] + k2 * x[2] + k3 * x[3] + k4 * x[4])
    qj = V6[1, 0]
    b0 = V6[0, p0]
    b1 = V6[0, p1]
    b2 = V6[0, p2]
    b3 = V6[0, p3]
    b4 = V6[0, p4]
    g = _solve5(L, Ld, 0, b0 - k0 * qj, b1 - k1 * qj, b2 - k2 * qj, b3 - k3 * qj,
                b4 - k4 * qj)
    rj = dd * qj - (V6[0, pj] - (x[0] * b0 + x[1] * b1 + x[2] * b2 + x[3] * b3
                                 + x[4] * b4))
    for a in range(6):
        for c in range(6):
            P[J, a, c] = 0.0
    for a in range(6):
        for c in range(6):
            D[J, a, c] = 0.0
    P[J, p0, 0] = -x[0]
    P[J, p1, 0] = -x[1]
    P[J, p2, 0] = -x[2]
    P[J, p3, 0] = -x[3]
    P[J, p4, 0] = -x[4]
    P[J, pj, 0] = 1.0
    D[J, 0, 0] = dd
    V6[2, p0] = g[0]
    V6[2, p1] = g[1]
    V6[2, p2] = g[2]
    V6[2, p3] = g[3]
    V6[2, p4] = g[4]
    V6[2, pj] = qj
    for a in range(6):
        gamma[J, a] = V6[2, a]
        R[J, a] = 0.0
        V6[3, a] = 0.0
    R[J, 0] = rj
    V6[3, 0] = rj


@njit(**INLINE)
def _rows_mul(M, m, n, nt, X, x, xr, out, o, r, sg, acc):
    """``out[o][r + a, :] (+)= sg sum_{t < nt} M[m][a, t] X[x][xr + t, :]`` for ``a < n``
    (``+=`` if acc), the row sums kept in registers."""
    for a in range(n):
        s0 = s1 = s2 = s3 = s4 = s5 = 0.0
        for t in range(nt):
            w = M[m, a, t]
            s0 += w * X[x, xr + t, 0]
            s1 += w * X[x, xr + t, 1]
            s2 += w * X[x, xr + t, 2]
            s3 += w * X[x, xr + t, 3]
            s4 += w * X[x, xr + t, 4]
            s5 += w * X[x, xr + t, 5]
        if acc:
            out[o, r + a, 0] += sg * s0
            out[o, r + a, 1] += sg * s1
            out[o, r + a, 2] += sg * s2
            out[o, r + a, 3] += sg * s3
            out[o, r + a, 4] += sg * s4
            out[o, r + a, 5] += sg * s5
        else:
            out[o, r + a, 0] = sg * s0
            out[o, r + a, 1] = sg * s1
            out[o, r + a, 2] = sg * s2
            out[o, r + a, 3] = sg * s3
            out[o, r + a, 4] = sg * s4
            out[o, r + a, 5] = sg * s5


@njit(**INLINE)
def _handle_Ct(k, nAo, ca, cb, hA, oA, nhA, hB, oB, nhB, n_slots, jt, XJ_E, XJ_r, J, Phi, T,
               t):
    """Handle k of the node C of joint J (children A, B; RL eq. 2): ``C_k = s_k Ct_k`` with
    ``Ct_k = X Phi^A_{2k}`` and ``s_k = 1`` for a handle of A, ``Ct_k = Phi^B_{1k}`` and
    ``s_k = -1`` for one of B. Writes Ct_k into T[t] (T[9] scratch); returns
    ``(s_k, slot of the handle in its child)``."""
    if k < nAo:
        kk = k + 1 if k >= ca else k
        row, tr = _blk(hA, oA, n_slots, nhA, ca, kk)
        if tr:
            _copy_block(Phi, row, tr, T, 9)
            _xj_rows(jt, XJ_E, XJ_r, J, T, 9, T, t)
        else:
            _xj_rows(jt, XJ_E, XJ_r, J, Phi, row, T, t)
        return 1.0, hA + kk
    kk = k - nAo
    kk = kk + 1 if kk >= cb else kk
    row, tr = _blk(hB, oB, n_slots, nhB, cb, kk)
    _copy_block(Phi, row, tr, T, t)
    return -1.0, hB + kk


@njit(**INLINE)
def _handle_QT(k, nAo, ca, cb, hA, oA, nhA, hB, oB, nhB, n_slots, jt, XJ_E, XJ_r, J, Psi, T,
               t):
    """``Q_k^T`` of handle k of the node C of joint J (RL eq. 9) into T[t]:
    ``-X Psi^A_{2k}`` for a handle of A, ``Psi^B_{1k}`` for one of B (T[9] scratch): the
    blocks of :func:`_handle_Ct` with Psi for Phi and the opposite sign."""
    sg, _src = _handle_Ct(k, nAo, ca, cb, hA, oA, nhA, hB, oB, nhB, n_slots, jt, XJ_E, XJ_r,
                          J, Psi, T, t)
    if sg > 0.0:
        for a in range(6):
            for c in range(6):
                T[t, a, c] = -T[t, a, c]


@njit(**INLINE)
def _y_prime(psiA, psiB, ca, cb, hA, oA, nhA, hB, oB, nhB, n_slots, jt, XJ_E, XJ_r, J, Psi, T,
             t):
    """``Y' = X Psi^A_2 X^T + Psi^B_1`` of the node of joint J (RL eq. 9) into T[t]; a leaf
    child contributes nothing (RL Lemma 1). T[9] scratch."""
    if psiB:
        row, tr = _blk(hB, oB, n_slots, nhB, cb, cb)
        _copy_block(Psi, row, tr, T, t)
    else:
        for a in range(6):
            for c in range(6):
                T[t, a, c] = 0.0
    if psiA:
        row, tr = _blk(hA, oA, n_slots, nhA, ca, ca)
        _xj_rows(jt, XJ_E, XJ_r, J, Psi, row, T, 9)
        _xj_cols(jt, XJ_E, XJ_r, J, T, 9)
        for a in range(6):
            for c in range(6):
                T[t, a, c] += T[9, a, c]


@njit(**INLINE)
def _root_bias(J, Xup_E, Xup_r, H_E, H_r, gravity, b_world):
    """Root node of joint J: the world's handle accelerates with ``a_0 = -g``, in the
    joint's handle (J, 1) frame, into ``b_world[J]``."""
    x0 = _xmotion(Xup_E, Xup_r, J, 0.0, 0.0, 0.0, -gravity[0], -gravity[1], -gravity[2])
    x = _xmotion(H_E, H_r, 2 * J + 1, x0[0], x0[1], x0[2], x0[3], x0[4], x0[5])
    for a in range(6):
        b_world[J, a] = x[a]


@njit(**INLINE)
def _node_beta(J, A, B, ca, cb, hA, hB, XJ_E, XJ_r, bh, b_world, c_al, quasi_static, beta,
               V6):
    """``beta = X b^A_2 - b^B_1`` of the node of joint J (root: ``b_world - b^B_1``), plus
    the joint's velocity product ``c_al`` unless ``quasi_static`` (RGL eq. 2; RL eq. 2),
    into ``beta[J]`` and V6[0]."""
    for a in range(6):
        V6[0, a] = -bh[hB + cb, a]
    if A >= 0:
        x = _xmotion(XJ_E, XJ_r, J, bh[hA + ca, 0], bh[hA + ca, 1], bh[hA + ca, 2],
                     bh[hA + ca, 3], bh[hA + ca, 4], bh[hA + ca, 5])
    else:
        x = (b_world[J, 0], b_world[J, 1], b_world[J, 2], b_world[J, 3], b_world[J, 4],
             b_world[J, 5])
    for a in range(6):
        V6[0, a] += x[a]
        if not quasi_static:
            V6[0, a] += c_al[J, a]
        beta[J, a] = V6[0, a]


@njit(**INLINE)
def _metric_bias(i, J, A, B, ca, cb, hA, hB, d, XJ_E, XJ_r, ph, eta, Aw, W, P, T, V6):
    """The velocity-dependent terms of RL eq. 9 at node i (joint J, d free dofs): ``w =
    p^B_1 - X p^A_2`` (V6[4]), ``eta^C = eta^A + eta^B + gamma^T (Y' gamma + w) + R^T A_J
    R`` (into ``eta[i]``) and ``z = W (w + 2 Y' gamma) - 2 P A_J R`` (V6[5]), from Y' (T5),
    gamma (V6[2]) and R (V6[3]); V6[6], V6[7] scratch."""
    for a in range(6):
        V6[4, a] = ph[hB + cb, a]
    if A >= 0:
        x = _xmotion(XJ_E, XJ_r, J, ph[hA + ca, 0], ph[hA + ca, 1], ph[hA + ca, 2],
                     ph[hA + ca, 3], ph[hA + ca, 4], ph[hA + ca, 5])
        for a in range(6):
            V6[4, a] -= x[a]
    et = 0.0
    if A >= 0:
        et += eta[A]
    et += eta[B]
    for a in range(6):
        s = 0.0
        for c in range(6):
            s += T[5, a, c] * V6[2, c]
        V6[6, a] = V6[4, a] + 2.0 * s                      # w + 2 Y' gamma
        et += V6[2, a] * (s + V6[4, a])
    for rr in range(d):
        t = 0.0
        for ss in range(d):
            t += Aw[J, rr, ss] * V6[3, ss]
        V6[7, rr] = t                                      # A_J R
        et += V6[3, rr] * t
    eta[i] = et
    for a in range(6):
        s = 0.0
        for c in range(6):
            s += W[J, a, c] * V6[6, c]
        for rr in range(d):
            s -= 2.0 * P[J, a, rr] * V6[7, rr]
        V6[5, a] = s


@njit(**INLINE)
def _handle_b(T, ct, sg, src, dst, J, gamma, bh):
    """``b^C = b - C^T gamma`` (RL eq. 2) for handle ``dst`` of a node from its handle
    ``src`` in a child, ``C = sg Ct`` (Ct in T[ct], gamma in ``gamma[J]``)."""
    t6 = _ctv(T, ct, gamma, J)
    for a in range(6):
        bh[dst, a] = bh[src, a] - sg * t6[a]


@njit(**INLINE)
def _handle_p(T, ct, qt, hasQ, sg, src, dst, V6, ph):
    """``p^C = p + 2 Q gamma + C^T z`` (RL eq. 9) for handle ``dst`` of a node from its
    handle ``src`` in a child, ``C = sg Ct`` (Ct in T[ct]) and, when ``hasQ``, ``Q^T`` in
    T[qt] (gamma in V6[2], z in V6[5])."""
    t6 = _ctv(T, ct, V6, 5)
    for c in range(6):
        s = 0.0
        if hasQ:
            for a in range(6):
                s += T[qt, a, c] * V6[2, a]
        ph[dst, c] = ph[src, c] + 2.0 * s + sg * t6[c]


@njit(**KERNEL)
def _update_nodes(nodes, n_upd, args):
    """Recompute the coefficients of ``nodes[:n_upd]`` (node indices in increasing order,
    i.e. post-order: children before parents): leaf biases (RGL eq. 3 with zero velocity),
    the principal joint transform and root bias, the DCA coefficients (RL eq. 2), the
    total-acceleration coefficients (RL eq. 9, weights ``Aw``) and the hierarchical frames
    (RL Sec. 5.1). Everything a node needs from its children must be up to date.
    ``active[J] == 0`` rigidifies joint J (S = 0; RGL Sec. 4.2, eq. 6). Unless
    ``quasi_static``, the leaf biases include ``-v x* I v`` (body velocities ``v``) and
    ``beta`` the velocity product ``c_al`` of the joint (RGL eqs. 2-3). Without ``metric``
    the total-acceleration coefficients (Psi, p, eta) are left alone (the multilevel
    forward dynamics of RGL Sec. 4.3 needs only Phi and b). Without ``frames`` the
    principal joint transforms and the hierarchical frames are taken as they are (the
    hybrid step computes them first, :func:`articulated.algorithms.hybrid._frames_pass`).

    As in :func:`~articulated.algorithms.dca._dca_main_pass`, with ``S = [0; 1_d]`` after
    the permutation ``perm[J]`` (free coordinates F first), ``W = [K_FF^-1, 0; 0, 0]``
    and ``P = [-K_FF^-1 K_FJ; 1]`` need only the Cholesky factor ``L`` of ``K_FF``
    (``L D L^T`` for ``|F| = 5``): ``C_k^T W C_l = Z_k^T Z_l`` with ``Z_k = L^-1 C_k[F, :]``
    (D-weighted for ``L D L^T``) gives the blocks of RL eq. 2, and ``W_FF = K_FF^-1`` (an
    output) follows from L. With ``G_k = K_FF^-1 C_k[F, :]`` (``W C_k`` on the rows F) and
    ``U_k = P^T C_k`` the blocks of RL eq. 9 are
    ``Psi^C_kl = [same] Psi_kl + Q_k[:, F] G_l + [G_k; U_k]^T [Q_l[:, F]^T + Y'_FF G_l;
    A_J U_l]`` (``C_k^T Y C_l = G_k^T Y' G_l + U_k^T A_J U_l``, ``C_k^T W Q_l^T =
    G_k^T Q_l[:, F]^T``), so neither ``Y`` nor any dense ``W C_k`` is formed.

    Scratch: T (12 + 4 hmax, 6, 6), V6 (8, 6), Xr (3, 3, 3) and xq (3, 3). ``args``: a
    :func:`~articulated._byref.byref` pointer to the tuple of the arguments unpacked below
    (:func:`update_nodes` takes the tuple itself)."""
    (
        # model
        jtype, qadr, vadr, jnv, Xtree_rot, axis, Xtree_E, Xtree_r, mass, h, Ibar, gravity, Iinv,
        # handle frames
        H_E, H_r, perm, nfree,
        # tree
        node_A, node_B, node_joint, node_body, node_nh, node_hoff, node_ooff, node_ca, node_cb,
        node_pslot, handle_x, n_slots,
        # inputs
        q, tau, f_ext, Aw, active, quasi_static, v, c_al, metric, frames,
        # scratch
        T, V6, Xr, xq,
        # state (in/out)
        Xup_E, Xup_r, XJ_E, XJ_r, b_world, z, Phi, bh, Psi, ph, eta,
        W, P, D, beta, gamma, R, Tp_E, Tp_r, Tup_E, Tup_r,
    ) = deref(args)
    # the factor of K_FF: strict lower triangle of L in T[10] (flattened), 1 / diag in T[11]
    Lf = T[10].reshape(1, 36)
    Ldf = T[11].reshape(1, 36)
    for u in range(n_upd):
        i = nodes[u]
        J = node_joint[i]
        if J < 0:
            b = node_body[i]
            _leaf_bias(b, i, mass, h, Ibar, Iinv, H_E, H_r, node_nh, node_hoff, handle_x,
                       v, f_ext, quasi_static, z, bh, node_hoff[i])
            continue
        A, B, ca, cb, nhA, hA, oA, nAo, nhB, hB, oB = _children(
            i, node_A, node_B, node_ca, node_cb, node_nh, node_hoff, node_ooff)
        # a leaf child has Psi = 0, p = 0, eta = 0 (RL Lemma 1): its terms are skipped
        psiA = A >= 0 and node_joint[A] >= 0
        psiB = node_joint[B] >= 0
        nC = node_nh[i]
        hC = node_hoff[i]
        oC = node_ooff[i]
        # an inactive (rigidified) joint has S = 0 (RGL Sec. 4.2): d = 0, all six
        # coordinates constrained, W = V, and the node's coefficients are the rigid-state
        # ones of RGL eq. 6
        if active[J]:
            d = jnv[J]
            nf = nfree[J]
        else:
            d = 0
            nf = 6
        va = vadr[J]
        if frames:
            principal_joint_transform(J, jtype, qadr, Xtree_rot, axis, Xtree_E, Xtree_r, q,
                                      Xup_E, Xup_r, XJ_E, XJ_r)
        # ---- K = X Phi^A_2 X^T + Phi^B_1 (T0)
        row, tr = _blk(hB, oB, n_slots, nhB, cb, cb)
        _copy_block(Phi, row, tr, T, 0)
        jt = jtype[J]
        if A >= 0:
            row, tr = _blk(hA, oA, n_slots, nhA, ca, ca)          # a diagonal block
            _xj_rows(jt, XJ_E, XJ_r, J, Phi, row, T, 9)
            _xj_cols(jt, XJ_E, XJ_r, J, T, 9)                     # X Phi^A_2 X^T
            for a in range(6):
                for c in range(6):
                    T[0, a, c] += T[9, a, c]
        else:
            _root_bias(J, Xup_E, Xup_r, H_E, H_r, gravity, b_world)
        for a in range(6):
            for c in range(a):
                s = 0.5 * (T[0, a, c] + T[0, c, a])
                T[0, a, c] = s
                T[0, c, a] = s
        # ---- beta (V6[0]), Q (V6[1])
        _node_beta(J, A, B, ca, cb, hA, hB, XJ_E, XJ_r, bh, b_world, c_al, quasi_static,
                   beta, V6)
        for a in range(6):
            V6[1, a] = 0.0                                     # Q in S coordinates
        for rr in range(d):
            V6[1, rr] = tau[va + rr]
        # ---- Cholesky factor of K_FF (Lf, Ldf); W, P, D, gamma (V6[2]) and R (V6[3])
        pJ = perm[J:J + 1]
        if nf == 5:
            _chol5_perm(T, 0, pJ, 0, Lf, Ldf)
            _joint_coefficients5(J, perm, T, Lf, Ldf, V6, W, P, D, gamma, R)
        else:
            if nf > 0:
                for a in range(nf):
                    pa = perm[J, a]
                    for c in range(a + 1):
                        T[1, a, c] = T[0, pa, perm[J, c]]
                _chol(T, 1, nf, Lf, Ldf, 0)
            if nf == 6:
                # rigidified or fixed joint (d = 0): unrolled
                _joint_coefficients(J, 6, 0, perm, T, Lf, Ldf, V6, W, P, D, gamma, R)
            else:
                _joint_coefficients(J, nf, d, perm, T, Lf, Ldf, V6, W, P, D, gamma, R)
        hasY = metric and (psiA or psiB)
        if metric:
            # ---- Y' = X Psi^A_2 X^T + Psi^B_1 (T5), Y'_FF (T2, F coordinates), P_F^T (T4)
            _y_prime(psiA, psiB, ca, cb, hA, oA, nhA, hB, oB, nhB, n_slots, jt, XJ_E, XJ_r,
                     J, Psi, T, 5)
            if hasY:
                for a in range(nf):
                    pa = perm[J, a]
                    for c in range(nf):
                        T[2, a, c] = T[5, pa, perm[J, c]]
            for rr in range(d):                            # P_F^T (T4)
                for a in range(nf):
                    T[4, rr, a] = P[J, perm[J, a], rr]
            _metric_bias(i, J, A, B, ca, cb, hA, hB, d, XJ_E, XJ_r, ph, eta, Aw, W, P, T, V6)
        if nC == 0:
            # a root node (no handles): Tup of its child = (world -> (J, 0) -> (J, 1))^-1
            if frames:
                _tmul(XJ_E, XJ_r, J, H_E, H_r, 2 * J, Xr, xq, 0)
                _tinv(Xr, xq, 0, Tup_E, Tup_r, B)
            continue
        # ---- per handle k of C, with C_k = s_k Ct_k (Ct_k in T7; s_k = 1 for a handle of
        # A, -1 for one of B): b^C_k = b_k - C_k^T gamma and Z_k = L^-1 Ct_k[F, :]
        # (T[12 + 4k]); with the metric also Q_k^T with its rows in F-first order
        # (T[13 + 4k]), [G_k; U_k] (T[14 + 4k]) and [Q_k[:, F]^T + Y'_FF G_k; A_J U_k]
        # (T[15 + 4k]), and p^C_k = p_k + 2 Q_k gamma + C_k^T z
        for k in range(nC):
            ck = 12 + 4 * k
            sg, src = _handle_Ct(k, nAo, ca, cb, hA, oA, nhA, hB, oB, nhB, n_slots, jt,
                                 XJ_E, XJ_r, J, Phi, T, 7)
            hasQ = psiA if k < nAo else psiB
            dst = hC + k
            _handle_b(T, 7, sg, src, dst, J, gamma, bh)
            if nf == 5:
                _zrows5(Lf, Ldf, 0, pJ, T, 7, T, ck)
            elif nf > 0:
                for a in range(nf):
                    pa = perm[J, a]
                    for c in range(6):
                        T[ck, a, c] = T[7, pa, c]
                if nf == 6:                                # rigidified: unrolled
                    _fwd_rows(Lf, Ldf, 0, 6, T, ck)
                else:
                    _fwd_rows(Lf, Ldf, 0, nf, T, ck)
            if not metric:
                continue
            if hasQ:
                _handle_QT(k, nAo, ca, cb, hA, oA, nhA, hB, oB, nhB, n_slots, jt, XJ_E,
                           XJ_r, J, Psi, T, 3)
                for a in range(6):                         # rows in F-first order
                    pa = perm[J, a]
                    for c in range(6):
                        T[ck + 1, a, c] = T[3, pa, c]
            # G_k = K_FF^-1 C_k[F, :] and U_k = P^T C_k = s_k (Ct_k[J, :] + P_F^T Ct_k[F, :])
            # (Ct_k[F, :] gathered in T1)
            for a in range(nf):
                pa = perm[J, a]
                for c in range(6):
                    T[1, a, c] = T[7, pa, c]
            _rows_mul(T, 8, nf, nf, T, 1, 0, T, ck + 2, 0, sg, False)
            for rr in range(d):
                jr = perm[J, nf + rr]
                for c in range(6):
                    T[ck + 2, nf + rr, c] = sg * T[7, jr, c]
            _rows_mul(T, 4, d, nf, T, 1, 0, T, ck + 2, nf, sg, True)
            # [Q_k[:, F]^T + Y'_FF G_k; A_J U_k]
            for a in range(nf):
                for c in range(6):
                    T[ck + 3, a, c] = T[ck + 1, a, c] if hasQ else 0.0
            if hasY:
                _rows_mul(T, 2, nf, nf, T, ck + 2, 0, T, ck + 3, 0, 1.0, True)
            _rows_mul(Aw, J, d, d, T, ck + 2, nf, T, ck + 3, nf, 1.0, False)
            _handle_p(T, 7, 3, hasQ, sg, src, dst, V6, ph)
        # ---- blocks (k, l), k <= l: Phi^C_kl = [same] Phi_kl - s_k s_l Z_k^T Z_l
        # (D^-1-weighted for |F| = 5) and, with the metric, Psi^C_kl as above
        for k in range(nC):
            ck = 12 + 4 * k
            fromA_k = k < nAo
            if fromA_k:
                kk = k + 1 if k >= ca else k
            else:
                kk = k - nAo
                kk = kk + 1 if kk >= cb else kk
            for l in range(k, nC):
                cl = 12 + 4 * l
                fromA_l = l < nAo
                dst, _t = _blk(hC, oC, n_slots, nC, k, l)
                same = fromA_k == fromA_l
                if same:
                    if fromA_l:
                        ll = l + 1 if l >= ca else l
                        row, tr = _blk(hA, oA, n_slots, nhA, kk, ll)
                    else:
                        ll = l - nAo
                        ll = ll + 1 if ll >= cb else ll
                        row, tr = _blk(hB, oB, n_slots, nhB, kk, ll)
                else:
                    row = 0
                    tr = False
                sg = -1.0 if same else 1.0
                if nf == 5:
                    if k == l:
                        _pair5_sym(T, ck, Ldf, 0, Phi, row, Phi, dst)
                    else:
                        _pair5(T, ck, cl, Ldf, 0, Phi, row, tr, same, sg, Phi, dst)
                else:
                    if same:
                        _copy_block(Phi, row, tr, Phi, dst)
                    else:
                        for a in range(6):
                            for c in range(6):
                                Phi[dst, a, c] = 0.0
                    if nf == 6:                            # rigidified: unrolled
                        if k == l:
                            _outer_sym(T, ck, 6, Phi, dst)
                        else:
                            _outer_acc(T, ck, cl, 6, Phi, dst, sg)
                    elif nf > 0:
                        if k == l:
                            _outer_sym(T, ck, nf, Phi, dst)
                        else:
                            _outer_acc(T, ck, cl, nf, Phi, dst, sg)
                if not metric:
                    continue
                if same and (psiA if fromA_l else psiB):
                    _copy_block(Psi, row, tr, Psi, dst)
                else:
                    for a in range(6):
                        for c in range(6):
                            Psi[dst, a, c] = 0.0
                if psiA if fromA_k else psiB:
                    _outer_acc(T, ck + 1, cl + 2, nf, Psi, dst, 1.0)    # Q_k[:, F] G_l
                _outer_acc(T, ck + 2, cl + 3, 6, Psi, dst, 1.0)
                if k == l:
                    for a in range(6):
                        for c in range(a):
                            s = 0.5 * (Psi[dst, a, c] + Psi[dst, c, a])
                            Psi[dst, a, c] = s
                            Psi[dst, c, a] = s
        if frames:
            _node_frames(i, J, B, A, nC, nAo, ca, cb, hA, hB, hC, node_pslot, XJ_E, XJ_r,
                         Tp_E, Tp_r, Tup_E, Tup_r, Xr, xq)


@njit(**KERNEL)
def _update_biases(nodes, n_upd, args):
    """The linear coefficients (b; with ``metric`` also p and eta) of the passive nodes
    ``nodes[:n_upd]`` (post-order), same arguments as :func:`_update_nodes`: no joint of a
    passive node's subtree has moved since the node's last full update (when it became
    passive, RGL Sec. 6), so its inverse inertias Phi, Psi, its joint's W, P, D and its
    frames are still those of that update, and only the terms that depend on forces and
    velocities are recomputed (the force-update region of RGL Sec. 6): leaf biases (RGL
    eq. 3), ``beta``, ``gamma``, ``R`` (RL eqs. 4-5; ``active[J]`` as in
    :func:`_update_nodes`) and the handles' b, p, eta (RL eqs. 2 and 9). Its children
    must be up to date."""
    (
        jtype, qadr, vadr, jnv, Xtree_rot, axis, Xtree_E, Xtree_r, mass, h, Ibar, gravity, Iinv,
        H_E, H_r, perm, nfree,
        node_A, node_B, node_joint, node_body, node_nh, node_hoff, node_ooff, node_ca, node_cb,
        node_pslot, handle_x, n_slots,
        q, tau, f_ext, Aw, active, quasi_static, v, c_al, metric, frames,
        T, V6, Xr, xq,
        Xup_E, Xup_r, XJ_E, XJ_r, b_world, z, Phi, bh, Psi, ph, eta,
        W, P, D, beta, gamma, R, Tp_E, Tp_r, Tup_E, Tup_r,
    ) = deref(args)
    for u in range(n_upd):
        i = nodes[u]
        J = node_joint[i]
        if J < 0:
            _leaf_bias(node_body[i], i, mass, h, Ibar, Iinv, H_E, H_r, node_nh, node_hoff,
                       handle_x, v, f_ext, quasi_static, z, bh, node_hoff[i])
            continue
        A, B, ca, cb, nhA, hA, oA, nAo, nhB, hB, oB = _children(
            i, node_A, node_B, node_ca, node_cb, node_nh, node_hoff, node_ooff)
        psiA = A >= 0 and node_joint[A] >= 0
        psiB = node_joint[B] >= 0
        jt = jtype[J]
        d = jnv[J] if active[J] else 0
        if A < 0:
            _root_bias(J, Xup_E, Xup_r, H_E, H_r, gravity, b_world)
        _node_beta(J, A, B, ca, cb, hA, hB, XJ_E, XJ_r, bh, b_world, c_al, quasi_static,
                   beta, V6)
        for a in range(6):
            V6[1, a] = 0.0
        for rr in range(d):
            V6[1, rr] = tau[vadr[J] + rr]
        _gamma_R(J, d, W, P, D, V6, gamma, R)
        if metric:
            _y_prime(psiA, psiB, ca, cb, hA, oA, nhA, hB, oB, nhB, n_slots, jt, XJ_E, XJ_r,
                     J, Psi, T, 5)
            _metric_bias(i, J, A, B, ca, cb, hA, hB, d, XJ_E, XJ_r, ph, eta, Aw, W, P, T, V6)
        hC = node_hoff[i]
        for k in range(node_nh[i]):
            sg, src = _handle_Ct(k, nAo, ca, cb, hA, oA, nhA, hB, oB, nhB, n_slots, jt,
                                 XJ_E, XJ_r, J, Phi, T, 7)
            hasQ = metric and (psiA if k < nAo else psiB)
            if hasQ:
                _handle_QT(k, nAo, ca, cb, hA, oA, nhA, hB, oB, nhB, n_slots, jt, XJ_E,
                           XJ_r, J, Psi, T, 3)
            _handle_b(T, 7, sg, src, hC + k, J, gamma, bh)
            if metric:
                _handle_p(T, 7, 3, hasQ, sg, src, hC + k, V6, ph)


@njit(**KERNEL)
def _tensor_scratch(i, args):
    """The dense blocks of the internal, non-root node i that
    :func:`~articulated.algorithms.passive.tensorize_node` reads, right after the node's
    :func:`_update_nodes` (same arguments, ``nodes`` replaced by i): X (T1), W (T2), P (T3),
    D (T4), Y' (T5) and per handle k: ``C_k`` (T[12 + 4k]) and ``Q_k`` (T[14 + 4k]) of RL
    eqs. 2 and 9. :func:`_update_nodes` itself forms none of them densely."""
    (
        jtype, qadr, vadr, jnv, Xtree_rot, axis, Xtree_E, Xtree_r, mass, h, Ibar, gravity, Iinv,
        H_E, H_r, perm, nfree,
        node_A, node_B, node_joint, node_body, node_nh, node_hoff, node_ooff, node_ca, node_cb,
        node_pslot, handle_x, n_slots,
        q, tau, f_ext, Aw, active, quasi_static, v, c_al, metric, frames,
        T, V6, Xr, xq,
        Xup_E, Xup_r, XJ_E, XJ_r, b_world, z, Phi, bh, Psi, ph, eta,
        W, P, D, beta, gamma, R, Tp_E, Tp_r, Tup_E, Tup_r,
    ) = deref(args)
    J = node_joint[i]
    A, B, ca, cb, nhA, hA, oA, nAo, nhB, hB, oB = _children(
        i, node_A, node_B, node_ca, node_cb, node_nh, node_hoff, node_ooff)
    psiA = A >= 0 and node_joint[A] >= 0
    psiB = node_joint[B] >= 0
    jt = jtype[J]
    _xdense(XJ_E, XJ_r, J, T, 1)
    for a in range(6):
        for c in range(6):
            T[2, a, c] = W[J, a, c]
            T[3, a, c] = P[J, a, c]
            T[4, a, c] = D[J, a, c]
    _y_prime(psiA, psiB, ca, cb, hA, oA, nhA, hB, oB, nhB, n_slots, jt, XJ_E, XJ_r, J, Psi, T,
             5)
    for k in range(node_nh[i]):
        ck = 12 + 4 * k
        sg, _src = _handle_Ct(k, nAo, ca, cb, hA, oA, nhA, hB, oB, nhB, n_slots, jt, XJ_E,
                              XJ_r, J, Phi, T, ck)
        for a in range(6):
            for c in range(6):
                T[ck, a, c] *= sg
        if psiA if k < nAo else psiB:
            _handle_QT(k, nAo, ca, cb, hA, oA, nhA, hB, oB, nhB, n_slots, jt, XJ_E, XJ_r, J,
                       Psi, T, ck + 1)
            for a in range(6):
                for c in range(6):
                    T[ck + 2, a, c] = T[ck + 1, c, a]


@njit(**INLINE)
def _node_frames(i, J, B, A, nC, nAo, ca, cb, hA, hB, hC, node_pslot, XJ_E, XJ_r, Tp_E, Tp_r,
                 Tup_E, Tup_r, Xr, xq):
    """Hierarchical frames of a non-root internal node (RL Sec. 5.1): ``Tup`` of both
    children (their principal-handle frames -> C's principal-handle frame, via the frame of
    (J, 1)) and ``Tp`` of each handle, ``Tp^C_k = Tup_child Tp_child`` (the handle's
    frame -> its child's principal-handle frame -> C's; the identity for C's principal
    handle). The transforms are kept in registers (Xr, xq: unused)."""
    p = node_pslot[i]
    if p < nAo:
        kk = p + 1 if p >= ca else p
        Y = _tinv_t(_tmul_t(_tget(XJ_E, XJ_r, J), _tget(Tp_E, Tp_r, hA + kk)))
    else:
        kk = p - nAo
        kk = kk + 1 if kk >= cb else kk
        Y = _tinv_t(_tget(Tp_E, Tp_r, hB + kk))
    # Y: (J, 1) -> principal handle of C
    _tset(Tup_E, Tup_r, B, Y)
    if A >= 0:
        YA = _tmul_t(Y, _tget(XJ_E, XJ_r, J))
        _tset(Tup_E, Tup_r, A, YA)
    else:
        YA = Y
    for k in range(nC):
        if k == p:
            _tset(Tp_E, Tp_r, hC + k, (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0,
                                       0.0))
        elif k < nAo:
            kk = k + 1 if k >= ca else k
            _tset(Tp_E, Tp_r, hC + k, _tmul_t(YA, _tget(Tp_E, Tp_r, hA + kk)))
        else:
            kk = k - nAo
            kk = kk + 1 if kk >= cb else kk
            _tset(Tp_E, Tp_r, hC + k, _tmul_t(Y, _tget(Tp_E, Tp_r, hB + kk)))


@njit(**INLINE)
def _tget(E, r, i):
    """(E, r)[i] as a 12-tuple: E row by row, then r."""
    return (E[i, 0, 0], E[i, 0, 1], E[i, 0, 2], E[i, 1, 0], E[i, 1, 1], E[i, 1, 2],
            E[i, 2, 0], E[i, 2, 1], E[i, 2, 2], r[i, 0], r[i, 1], r[i, 2])


@njit(**INLINE)
def _tset(E, r, i, t):
    """(E, r)[i] = the 12-tuple t (:func:`_tget`)."""
    E[i, 0, 0], E[i, 0, 1], E[i, 0, 2] = t[0], t[1], t[2]
    E[i, 1, 0], E[i, 1, 1], E[i, 1, 2] = t[3], t[4], t[5]
    E[i, 2, 0], E[i, 2, 1], E[i, 2, 2] = t[6], t[7], t[8]
    r[i, 0], r[i, 1], r[i, 2] = t[9], t[10], t[11]


@njit(**INLINE)
def _tmul_t(a, b):
    """``a o b`` (apply b first) for 12-tuple transforms, as :func:`_tmul`."""
    return (a[0] * b[0] + a[1] * b[3] + a[2] * b[6],
            a[0] * b[1] + a[1] * b[4] + a[2] * b[7],
            a[0] * b[2] + a[1] * b[5] + a[2] * b[8],
            a[3] * b[0] + a[4] * b[3] + a[5] * b[6],
            a[3] * b[1] + a[4] * b[4] + a[5] * b[7],
            a[3] * b[2] + a[4] * b[5] + a[5] * b[8],
            a[6] * b[0] + a[7] * b[3] + a[8] * b[6],
            a[6] * b[1] + a[7] * b[4] + a[8] * b[7],
            a[6] * b[2] + a[7] * b[5] + a[8] * b[8],
            b[9] + b[0] * a[9] + b[3] * a[10] + b[6] * a[11],
            b[10] + b[1] * a[9] + b[4] * a[10] + b[7] * a[11],
            b[11] + b[2] * a[9] + b[5] * a[10] + b[8] * a[11])


@njit(**INLINE)
def _tinv_t(a):
    """Inverse of a 12-tuple transform, as :func:`_tinv`: ``(E^T, -E r)``."""
    return (a[0], a[3], a[6], a[1], a[4], a[7], a[2], a[5], a[8],
            -(a[0] * a[9] + a[1] * a[10] + a[2] * a[11]),
            -(a[3] * a[9] + a[4] * a[10] + a[5] * a[11]),
            -(a[6] * a[9] + a[7] * a[10] + a[8] * a[11]))


@njit(**INLINE)
def _total_acc(i, node_nh, node_hoff, node_ooff, n_slots, Psi, ph, eta, fh):
    """A(C) of node i for the handle forces in ``fh`` (RL eq. 8)."""
    nh = node_nh[i]
    ho = node_hoff[i]
    oo = node_ooff[i]
    s = eta[i]
    for k in range(nh):
        for a in range(6):
            s += fh[ho + k, a] * ph[ho + k, a]
        for l in range(k, nh):
            row, tr = _blk(ho, oo, n_slots, nh, k, l)
            t = 0.0
            for a in range(6):
                fa = fh[ho + k, a]
                for c in range(6):
                    m = Psi[row, c, a] if tr else Psi[row, a, c]
                    t += fa * m * fh[ho + l, c]
            s += t if k == l else 2.0 * t
    return s


@njit(**INLINE)
def _heap_push(hk, hn, n, key, node):
    j = n
    hk[j] = key
    hn[j] = node
    while j > 0:
        p = (j - 1) // 2
        if hk[p] >= hk[j]:
            break
        hk[p], hk[j] = hk[j], hk[p]
        hn[p], hn[j] = hn[j], hn[p]
        j = p
    return n + 1


@njit(**INLINE)
def _heap_pop(hk, hn, n):
    """Remove the top (largest key) of a heap of size n; returns the new size."""
    n -= 1
    hk[0] = hk[n]
    hn[0] = hn[n]
    j = 0
    while True:
        l = 2 * j + 1
        if l >= n:
            break
        m = l
        if l + 1 < n and hk[l + 1] > hk[l]:
            m = l + 1
        if hk[j] >= hk[m]:
            break
        hk[m], hk[j] = hk[j], hk[m]
        hn[m], hn[j] = hn[j], hn[m]
        j = m
    return n


@njit(**INLINE)
def _bound(measure, eps2, A_total, top, maxnorm):
    """Certified error of stopping now (RL Sec. 4.3): ``eps2`` is the sum of the total
    accelerations in the queue, ``top`` the largest of them, ``maxnorm`` the largest
    computed joint-acceleration norm (a lower bound of the maximum over all joints)."""
    if measure == 0:
        return math.sqrt(max(eps2, 0.0))
    if measure == 1:
        if A_total <= 0.0:
            return 0.0
        return math.sqrt(max(eps2, 0.0) / A_total)
    if measure == 2:
        return math.sqrt(max(top, 0.0))
    if top <= 0.0:
        return 0.0
    if maxnorm <= 0.0:
        return math.inf
    return math.sqrt(top) / maxnorm


@njit(**INLINE)
def _lazy_evaluate(c, i, node_joint, node_nh, node_hoff, fresh, fresh_list, nfresh, vnode,
                   Tup_E, Tup_r, Xr, xq, mv, Bt, Pt, G, betaT, gammaT, RT, bh, ph, eta, beta,
                   gamma, R):
    """Passive child c of node i: twist ``vnode[c] = Tup_c^-1 vnode[i]`` and its fully
    articulated coefficients from its tensors; marks it fresh."""
    _tinv(Tup_E, Tup_r, c, Xr, xq, 2)
    v = _xmotion(Xr, xq, 2, vnode[i, 0], vnode[i, 1], vnode[i, 2], vnode[i, 3], vnode[i, 4],
                 vnode[i, 5])
    evaluate_fresh(c, v, node_joint, node_nh, node_hoff, vnode, mv, Bt, Pt, G, betaT, gammaT,
                   RT, bh, ph, eta, beta, gamma, R, fresh, fresh_list, nfresh)


@njit(**KERNEL)
def _partial_back_substitution(eps_max, measure, budget, prev_n, args):
    """Partial back-substitution (RL Sec. 4.3) with a priority queue by total acceleration.

    Pops the node with the largest ``A(C)``, computes its joint acceleration (RL eq. 4) and
    the constraint force (eq. 5), hands the forces to its children, pushes the internal
    children with their ``A`` (eq. 8), and stops when the certified error of the chosen
    measure is at most ``eps_max``, when ``budget >= 0`` joints have been computed, or when
    the queue is empty (exact). ``eps_max < 0`` is the exact mode of the multilevel
    forward dynamics (RGL Sec. 4.3): every active node, no metric coefficients read. ``qdd`` must be zero on entry; it is exact on the computed
    joints (``computed[:n]``, joint indices) and zero elsewhere: on entry ``qdd`` is zero
    except on the ``prev_n`` joints of the previous call, ``computed[:prev_n]``, which are
    cleared first (so a call costs O(N_E), not O(n)).
    ``stats`` out: [n computed, bound, A_total, eps_c^2 left, max computed norm, first
    joint with a non-finite acceleration or -1].

    With ``lazy`` the coefficients of a child that is not ``fresh`` (a passive node of the
    fully articulated state, RGL Sec. 6.2) are evaluated from its linear-coefficient
    tensors (:mod:`articulated.algorithms.passive`) at its rigid twist ``vnode`` (its
    parent's twist moved by ``Tup^-1``) before it is pushed; it is then marked fresh and
    listed in ``fresh_list[nfresh[0]]``. ``args``: a :func:`~articulated._byref.byref`
    pointer to the tuple of the arguments unpacked below (:func:`partial_back_substitution`
    takes the tuple itself)."""
    (
        # model
        jnv, vadr, Aw, active,
        # tree
        roots, node_A, node_B, node_joint, node_nh, node_hoff, node_ooff, node_ca, node_cb,
        n_slots,
        # coefficients
        XJ_E, XJ_r, Phi, Psi, ph, eta, W, P, D, beta, gamma,
        # inputs
        tau,
        # scratch
        hk, hn, xv, fv,
        # out
        fh, qdd, computed, stats,
        # lazy evaluation of passive nodes (RGL Sec. 6.2; lazy False: none)
        lazy, fresh, fresh_list, nfresh, vnode, Tup_E, Tup_r, Xr, xq, mv, Bt, Pt, G, betaT,
        gammaT, RT, bh, gamma_, R,
    ) = deref(args)
    for t in range(prev_n):
        J = computed[t]
        for rr in range(jnv[J]):
            qdd[vadr[J] + rr] = 0.0
    n = 0
    A_total = 0.0
    for t in range(roots.shape[0]):
        r = roots[t]
        a = eta[r] if eps_max >= 0.0 else 0.0
        if a < 0.0:
            a = 0.0
        A_total += a
        n = _heap_push(hk, hn, n, a, r)
    eps2 = A_total
    ncomp = 0
    maxnorm = 0.0
    bound = 0.0
    bad = -1
    while True:
        if n == 0:
            eps2 = 0.0
            bound = 0.0
            break
        if eps_max < 0.0:                   # exact mode: every active node, no metric
            bound = 0.0
        else:
            bound = _bound(measure, eps2, A_total, hk[0], maxnorm)
            if bound <= eps_max and measure <= 1:
                # the running eps_c^2 carries the round-off of its updates (relative to
                # A_total): before stopping on it, sum the queue exactly
                eps2 = 0.0
                for t in range(n):
                    eps2 += hk[t]
                bound = _bound(measure, eps2, A_total, hk[0], maxnorm)
            if bound <= eps_max:
                break
        if budget >= 0 and ncomp >= budget:
            break
        i = hn[0]
        A_C = hk[0]
        n = _heap_pop(hk, hn, n)
        J = node_joint[i]
        A, B, ca, cb, nhA, hA, oA, nAo, nhB, hB, oB = _children(
            i, node_A, node_B, node_ca, node_cb, node_nh, node_hoff, node_ooff)
        nC = node_nh[i]
        ho = node_hoff[i]
        # x = beta + sum_k C_k f_k = beta + X sum_{k in A} Phi^A_{2k} f_k - sum_{k in B} Phi^B_{1k} f_k
        for a in range(6):
            xv[0, a] = 0.0
            xv[1, a] = beta[J, a]
        for k in range(nAo):
            kk = k + 1 if k >= ca else k
            row, tr = _blk(hA, oA, n_slots, nhA, ca, kk)
            for a in range(6):
                s = 0.0
                for c in range(6):
                    s += (Phi[row, c, a] if tr else Phi[row, a, c]) * fh[ho + k, c]
                xv[0, a] += s
        if nAo > 0:
            x = _xmotion(XJ_E, XJ_r, J, xv[0, 0], xv[0, 1], xv[0, 2], xv[0, 3], xv[0, 4],
                         xv[0, 5])
            for a in range(6):
                xv[1, a] += x[a]
        for k in range(nAo, nC):
            kk = k - nAo
            kk = kk + 1 if kk >= cb else kk
            row, tr = _blk(hB, oB, n_slots, nhB, cb, kk)
            for a in range(6):
                s = 0.0
                for c in range(6):
                    s += (Phi[row, c, a] if tr else Phi[row, a, c]) * fh[ho + k, c]
                xv[1, a] -= s
        d = jnv[J] if active[J] else 0
        va = vadr[J]
        # f = W x + P Q; qdd = D Q - P^T x
        for a in range(6):
            s = 0.0
            for c in range(6):
                s += W[J, a, c] * xv[1, c]
            for rr in range(d):
                s += P[J, a, rr] * tau[va + rr]
            fv[0, a] = s
        nrm = 0.0
        for rr in range(d):
            s = 0.0
            for ss in range(d):
                s += D[J, rr, ss] * tau[va + ss]
            for c in range(6):
                s -= P[J, c, rr] * xv[1, c]
            qdd[va + rr] = s
        for rr in range(d):
            for ss in range(d):
                nrm += qdd[va + rr] * Aw[J, rr, ss] * qdd[va + ss]
        if not math.isfinite(nrm):
            if bad < 0:
                bad = J
            nrm = 0.0
        nrm = math.sqrt(max(nrm, 0.0))
        if nrm > maxnorm:
            maxnorm = nrm
        computed[ncomp] = J
        ncomp += 1
        # forces on the children's handles: f on B's (J, 1), -X^T f on A's (J, 0)
        for kk in range(nhB):
            dst = hB + kk
            if kk == cb:
                for a in range(6):
                    fh[dst, a] = fv[0, a]
            else:
                src = ho + nAo + (kk - 1 if kk > cb else kk)
                for a in range(6):
                    fh[dst, a] = fh[src, a]
        A_children = 0.0
        if A >= 0:
            g = _xforce_T(XJ_E, XJ_r, J, fv[0, 0], fv[0, 1], fv[0, 2], fv[0, 3], fv[0, 4],
                          fv[0, 5])
            for kk in range(nhA):
                dst = hA + kk
                if kk == ca:
                    for a in range(6):
                        fh[dst, a] = -g[a]
                else:
                    src = ho + (kk - 1 if kk > ca else kk)
                    for a in range(6):
                        fh[dst, a] = fh[src, a]
            if node_joint[A] >= 0 and active[node_joint[A]]:
                if lazy and not fresh[A]:
                    _lazy_evaluate(A, i, node_joint, node_nh, node_hoff, fresh, fresh_list,
                                   nfresh, vnode, Tup_E, Tup_r, Xr, xq, mv, Bt, Pt, G,
                                   betaT, gammaT, RT, bh, ph, eta, beta, gamma_, R)
                aA = 0.0 if eps_max < 0.0 else _total_acc(A, node_nh, node_hoff, node_ooff,
                                                          n_slots, Psi, ph, eta, fh)
                if aA < 0.0:
                    aA = 0.0
                A_children += aA
                n = _heap_push(hk, hn, n, aA, A)
        if node_joint[B] >= 0 and active[node_joint[B]]:
            if lazy and not fresh[B]:
                _lazy_evaluate(B, i, node_joint, node_nh, node_hoff, fresh, fresh_list,
                               nfresh, vnode, Tup_E, Tup_r, Xr, xq, mv, Bt, Pt, G, betaT,
                               gammaT, RT, bh, ph, eta, beta, gamma_, R)
            aB = 0.0 if eps_max < 0.0 else _total_acc(B, node_nh, node_hoff, node_ooff,
                                                      n_slots, Psi, ph, eta, fh)
            if aB < 0.0:
                aB = 0.0
            A_children += aB
            n = _heap_push(hk, hn, n, aB, B)
        # eps_c^2 <- eps_c^2 + A(A) + A(B) - A(C) (RL Sec. 4.3)
        eps2 += A_children - A_C
        if eps2 < 0.0:
            eps2 = 0.0
    stats[0] = ncomp
    stats[1] = bound
    stats[2] = A_total
    stats[3] = eps2
    stats[4] = maxnorm
    stats[5] = bad



@njit(**KERNEL)
def update_nodes(nodes, n_upd, args):
    """:func:`_update_nodes` with its argument tuple ``args`` (for callers in Python)."""
    _update_nodes(nodes, n_upd, byref(args))


@njit(**KERNEL)
def partial_back_substitution(eps_max, measure, budget, prev_n, args):
    """:func:`_partial_back_substitution` with its argument tuple ``args`` (for callers in
    Python)."""
    _partial_back_substitution(eps_max, measure, budget, prev_n, byref(args))

@njit(**KERNEL)
def _heapsort(a, n):
    """Sort ``a[:n]`` increasingly in place (heapsort: O(n log n), no allocation)."""
    for start in range(n // 2 - 1, -1, -1):
        _sift(a, start, n)
    for end in range(n - 1, 0, -1):
        t = a[0]
        a[0] = a[end]
        a[end] = t
        _sift(a, 0, end)


@njit(**KERNEL)
def _sift(a, i, n):
    while True:
        c = 2 * i + 1
        if c >= n:
            return
        if c + 1 < n and a[c + 1] > a[c]:
            c += 1
        if a[i] >= a[c]:
            return
        t = a[i]
        a[i] = a[c]
        a[c] = t
        i = c


@njit(**KERNEL)
def _dirty_nodes(node_parent, seeds, n_seeds, mark, out, stop):
    """Post-order list of the seeds and all their ancestors (each once): walk up from each
    seed until a marked node or a node with ``stop`` set (not listed). ``mark`` must be all
    False on entry and is left all False. Returns the count; ``out[:count]`` sorted
    increasingly (post-order) by :func:`_heapsort`. Cost O(N_U log(N / N_U)) on a balanced
    tree (RL Sec. 5.2). Compiled without NRT, so the region kernels can call it."""
    m = 0
    for t in range(n_seeds):
        i = seeds[t]
        while i >= 0 and not mark[i] and not stop[i]:
            mark[i] = True
            out[m] = i
            m += 1
            i = node_parent[i]
    _heapsort(out, m)
    for t in range(m):
        mark[out[t]] = False
    return m


@njit(**KERNEL)
def _world_pose(b, leaf_of_body, node_parent, node_pslot, node_hoff, handle_x, H_E, H_r,
                Tup_E, Tup_r, Xr, xq):
    """Transform ``world X body`` of body b into (Xr, xq)[0] by the product of the
    principal-handle transforms on the leaf's path (RL Sec. 5.1); O(tree height)."""
    i = leaf_of_body[b]
    s = node_hoff[i] + node_pslot[i]
    _tcopy(H_E, H_r, handle_x[s], Xr, xq, 0)                   # body -> principal handle
    while node_pslot[i] >= 0:
        _tmul(Tup_E, Tup_r, i, Xr, xq, 0, Xr, xq, 1)
        _tcopy(Xr, xq, 1, Xr, xq, 0)
        i = node_parent[i]


class AdaptiveQuasiStatics:
    """Error-bounded adaptive forward quasi-statics (Redon & Lin 2005) on a balanced
    assembly tree, with every node's coefficients kept between calls.

    Usage::

        s = AdaptiveQuasiStatics(model)            # full main pass at q = neutral
        s.set_state(q, tau, f_ext)                 # full update, O(n)
        res = s.solve(eps_max=2**-19, error="relative_joint")     # O(N_E)
        res.qdd, res.joints, res.bound
        s.update(q_new, joints=res.joints, bodies=[...], f_ext=..., tau=...)   # lazy

    Parameters
    ----------
    model : Model (float64)
    assembly : "balanced" | "serial" | sequence of joints | AssemblyTree
    weights : (nb, 6, 6) or None - SPD joint weights ``A_i`` of the acceleration metric
        (RGL Sec. 5.2), the ``d_i x d_i`` upper-left block used; identity if None

    Raises ValueError for invalid weights (shape, non-finite, not symmetric positive
    definite, naming the joint). Memory O(n) with a bounded handle count.
    """

    def __init__(self, model: Model, assembly="balanced", *, weights=None):
        if not isinstance(model, Model):
            raise TypeError(f"model must be an articulated.Model, got {type(model).__name__}")
        self.model = model
        dca = self.dca = DCA(model, assembly if not isinstance(assembly, str)
                             else build_assembly(model, assembly))
        t = self.tree = dca.tree
        nb, nv = model.nb, model.nv
        self.ma = dca.ma
        self.Aw = self._weights(weights)
        self.n_slots = t.n_slots
        n_off = dca.Po.shape[0]
        self.Phi = np.zeros((t.n_slots + n_off, 6, 6))
        self.Psi = np.zeros((t.n_slots + n_off, 6, 6))
        # constant leaf blocks from the DCA's leaf pass (same off-diagonal layout)
        leaf = np.flatnonzero(t.node_body >= 0)
        for i in leaf:
            o, nh = t.node_hoff[i], t.node_nh[i]
            self.Phi[o:o + nh] = dca.Pd[dca.node_doff[i]:dca.node_doff[i] + nh]
        self.Phi[t.n_slots:] = dca.Po
        self.bh = np.zeros((t.n_slots, 6))
        self.ph = np.zeros((t.n_slots, 6))
        self.eta = np.zeros(t.n_nodes)
        z = np.zeros
        self.W, self.P, self.D = z((nb, 6, 6)), z((nb, 6, 6)), z((nb, 6, 6))
        self.beta, self.gamma, self.R = z((nb, 6)), z((nb, 6)), z((nb, 6))
        self.XJ_E, self.XJ_r = z((nb, 3, 3)), z((nb, 3))
        self.Xup_E, self.Xup_r = z((nb, 3, 3)), z((nb, 3))
        self.b_world, self.z = z((nb, 6)), z((nb, 6))
        # principal slot of every node (the handle its parent consumes)
        pslot = np.full(t.n_nodes, -1, dtype=np.int64)
        internal = np.flatnonzero(t.node_joint >= 0)
        hasA = internal[t.node_A[internal] >= 0]
        pslot[t.node_A[hasA]] = t.node_ca[hasA]
        pslot[t.node_B[internal]] = t.node_cb[internal]
        self.node_pslot = pslot
        # leaf frames: Tp = H_p o H_k^-1 (both fixed to the body)
        self.Tp_E = z((t.n_slots, 3, 3))
        self.Tp_r = z((t.n_slots, 3))
        self.Tup_E = np.tile(np.eye(3), (t.n_nodes, 1, 1))
        self.Tup_r = z((t.n_nodes, 3))
        _leaf_frames(leaf, t.node_hoff, t.node_nh, pslot, dca.handle_x, dca.H_E, dca.H_r,
                     self.Tp_E, self.Tp_r)
        self.q = model.neutral()
        self.tau = z(nv)
        self.f_ext = z((nb, 6))
        hmax = max(int(t.max_handles), 1)
        self._T = z((12 + 4 * hmax, 6, 6))
        self._V6 = z((8, 6))
        self._Xr = z((3, 3, 3))
        self._xq = z((3, 3))
        self.active = np.ones(nb, dtype=np.bool_)
        self._gravity = np.array(self.ma.gravity, dtype=np.float64)   # own copy
        self._quasi_static = True
        self.v = z((nb, 6))
        self.c_al = z((nb, 6))
        self._hk = z(t.n_nodes)
        self._hn = np.zeros(t.n_nodes, dtype=np.int64)
        self._xv = z((2, 6))
        self._fv = z((1, 6))
        self.fh = z((t.n_slots, 6))
        self._qdd = z(nv)
        self._computed = np.zeros(nb, dtype=np.int64)
        self._n_computed = 0
        self._stats = z(6)
        self._mark = np.zeros(t.n_nodes, dtype=np.bool_)
        self._dirty = np.zeros(t.n_nodes, dtype=np.int64)
        self._seeds = np.zeros(t.n_nodes, dtype=np.int64)
        self._all = np.arange(t.n_nodes, dtype=np.int64)
        self.n_updated = 0
        self._update(self._all, t.n_nodes)

    # ----------------------------------------------------------------- set-up helpers
    def _weights(self, weights):
        model = self.model
        nb = model.nb
        Aw = np.tile(np.eye(6), (nb, 1, 1))
        if weights is None:
            return Aw
        w = np.asarray(weights, dtype=np.float64)
        if w.shape != (nb, 6, 6):
            raise ValueError(f"weights must have shape ({nb}, 6, 6), got {w.shape}")
        for j in range(nb):
            d = int(model.jnt_nv[j])
            if d == 0:
                continue
            blk = w[j, :d, :d]
            if (not np.isfinite(blk).all() or not np.allclose(blk, blk.T)
                    or np.linalg.eigvalsh(blk).min() <= 0):
                raise ValueError(f"weights of joint {model.joint_name[j]!r} must be a finite "
                                 f"symmetric positive definite {d}x{d} block")
            Aw[j, :d, :d] = blk
        return Aw

    def _coefficients(self):
        """The coefficient arrays of the current state, in :func:`_update_nodes` order."""
        return (self.Phi, self.bh, self.Psi, self.ph, self.eta, self.W, self.P, self.D,
                self.beta, self.gamma, self.R)

    def _node_args(self, metric=True, coefficients=None, active=None, frames=True):
        """Arguments of :func:`_update_nodes` after ``(nodes, n)``: the model, tree and
        frames of this solver with ``coefficients`` (default :meth:`_coefficients`) and the
        ``active`` mask (default ``self.active``); without ``frames`` the nodes' principal
        joint transforms and hierarchical frames are not recomputed."""
        ma, t, d = self.ma, self.tree, self.dca
        Phi, bh, Psi, ph, eta, W, P, D, beta, gamma, R = (
            self._coefficients() if coefficients is None else coefficients)
        return (ma.jtype, ma.qadr, ma.vadr, ma.jnv, ma.Xtree_rot, ma.axis,
                ma.Xtree_E, ma.Xtree_r, ma.mass, ma.h, ma.Ibar, self._gravity, d.Iinv,
                d.H_E, d.H_r, d.perm, d.nfree,
                t.node_A, t.node_B, t.node_joint, t.node_body, t.node_nh, t.node_hoff,
                d.node_ooff, t.node_ca, t.node_cb, self.node_pslot, d.handle_x,
                self.n_slots, self.q, self.tau, self.f_ext, self.Aw,
                self.active if active is None else active,
                self._quasi_static, self.v, self.c_al, bool(metric), bool(frames),
                self._T, self._V6, self._Xr, self._xq,
                self.Xup_E, self.Xup_r, self.XJ_E, self.XJ_r, self.b_world, self.z,
                Phi, bh, Psi, ph, eta, W, P, D, beta, gamma, R, self.Tp_E, self.Tp_r,
                self.Tup_E, self.Tup_r)

    def _lazy_args(self, lazy):
        """The lazy-evaluation arguments of :func:`_partial_back_substitution` (none here:
        :class:`~articulated.algorithms.adaptive.AdaptiveDynamics` has passive nodes)."""
        if not hasattr(self, "_no_lazy"):
            z = np.zeros
            self._no_lazy = (False, z(1, np.bool_), z(1, np.int64), z(1, np.int64),
                             z((1, 6)), self.Tup_E, self.Tup_r, self._Xr, self._xq, z(K),
                             z((1, 6, K)), z((1, 6, K)), z((1, K, K)), z((1, 6, K)),
                             z((1, 6, K)), z((1, 6, K)), self.bh, self.gamma, self.R)
        return self._no_lazy

    def _update(self, nodes, n, metric=True):
        update_nodes(nodes, n, self._node_args(metric))
        self.n_updated = int(n)

    # ----------------------------------------------------------------- public API
    def set_state(self, q, tau=None, f_ext=None) -> None:
        """Set the configuration, joint forces and external forces and recompute every
        node (the full main pass plus total-acceleration equations, O(n)).

        q : (nq,) float64; tau : (nv,) float64 [N m | N] or None (zero); f_ext : (nb, 6)
        float64 or None - spatial force on each body about its origin in body coordinates
        [N m; N]. Raises ValueError for wrong shapes, non-finite entries (naming the joint
        or body), non-unit quaternions.
        """
        m = self.model
        self.q[:] = m.check_configuration(q)
        self.tau[:] = 0.0 if tau is None else m.check_vector(tau, "tau", m.nv)
        self.f_ext[:] = 0.0 if f_ext is None else check_f_ext(m, f_ext, np.float64)
        self._update(self._all, self.tree.n_nodes)

    def update(self, q=None, *, joints=(), bodies=(), f_ext=None, tau=None,
               tau_joints=(), metric: bool = True) -> int:
        """Lazy coefficient update (RL Sec. 5.2): only the nodes of the ``joints`` whose
        position changed, the leaves of the ``bodies`` whose external force changed, the
        nodes of the ``tau_joints`` whose active force changed, and their ancestors are
        recomputed, level by level (each node once): O(N_U log(N / N_U)).

        q : (nq,) float64, optional - the new configuration (differs from the current one
            only at ``joints``; not checked, which would cost O(n))
        joints, bodies, tau_joints : sequences of int - what changed
        f_ext : (nb, 6) float64, optional - new external forces (only rows ``bodies`` read)
        tau : (nv,) float64, optional - new joint forces (only ``tau_joints`` read)
        metric : bool - also update the total-acceleration coefficients (default)

        Returns the number of nodes recomputed.
        """
        t = self.tree
        if q is not None:
            self.q[:] = q
        if f_ext is not None:
            b = np.asarray(bodies, dtype=np.int64)
            self.f_ext[b] = np.asarray(f_ext)[b]
        if tau is not None:
            tau = np.asarray(tau, dtype=np.float64)
            for j in tau_joints:
                va, d = self.model.jnt_vadr[j], self.model.jnt_nv[j]
                self.tau[va:va + d] = tau[va:va + d]
        seeds = np.concatenate([t.node_of_joint[np.asarray(joints, dtype=np.int64)],
                                t.node_of_joint[np.asarray(tau_joints, dtype=np.int64)],
                                t.leaf_of_body[np.asarray(bodies, dtype=np.int64)]])
        n = _dirty_nodes(t.node_parent, seeds.astype(np.int64), seeds.size, self._mark,
                         self._dirty, self._mark)
        self._update(self._dirty, n, metric)
        return n

    def total_acceleration(self) -> float:
        """``A`` of the whole system: ``sum_i qdd_i^T A_i qdd_i`` (RL Def. 3, eq. 8 at the
        root nodes), from the coefficients alone."""
        return float(max(self.eta[self.tree.roots].sum(), 0.0))

    def solve(self, eps_max: float = 0.0, error: str = "relative_joint",
              max_joints: int | None = None, *, copy: bool = True):
        """Approximate joint accelerations within ``eps_max`` (RL Sec. 4.3).

        Parameters
        ----------
        eps_max : float >= 0 - error bound in the chosen measure (0: exact, every joint
            whose subassembly has a nonzero total acceleration is computed)
        error : one of :data:`ERROR_MEASURES` - RL Definition 2 (norms in the metric of the
            weights: ``||qdd_i|| = sqrt(qdd_i^T A_i qdd_i)``)
        max_joints : int, optional - stop after this many joints (joint budget); the
            returned bound then says how good the result is
        copy : bool - False returns views of the solver's buffers (valid until the next
            call) and keeps the call O(N_E); True (default) copies ``qdd``, O(n)

        Returns
        -------
        QuasiStaticResult with ``qdd`` (nv,) float64 (exact on ``joints``, zero elsewhere)
        [rad/s^2 | m/s^2], ``joints`` (N_E,) int64 in computation order, ``bound`` (the
        certified error in the chosen measure), ``total`` (``A`` of the system).

        Raises ValueError for a negative or non-finite eps_max, an unknown measure or a
        negative budget.
        """
        if not (isinstance(eps_max, (int, float, np.floating)) and math.isfinite(eps_max)
                and eps_max >= 0):
            raise ValueError(f"eps_max must be a finite number >= 0, got {eps_max!r}")
        if error not in ERROR_MEASURES:
            raise ValueError(f"unknown error measure {error!r}; expected one of "
                             f"{ERROR_MEASURES}")
        budget = -1 if max_joints is None else int(max_joints)
        if max_joints is not None and budget < 0:
            raise ValueError(f"max_joints must be >= 0, got {max_joints!r}")
        t, d = self.tree, self.dca
        qdd = self._qdd
        partial_back_substitution(
            float(eps_max), ERROR_MEASURES.index(error), budget, self._n_computed,
            (self.ma.jnv, self.ma.vadr, self.Aw, self.active, t.roots, t.node_A, t.node_B,
             t.node_joint, t.node_nh, t.node_hoff, d.node_ooff, t.node_ca, t.node_cb,
             self.n_slots, self.XJ_E, self.XJ_r, self.Phi, self.Psi, self.ph, self.eta,
             self.W, self.P, self.D, self.beta, self.gamma, self.tau, self._hk, self._hn,
             self._xv, self._fv, self.fh, qdd, self._computed, self._stats,
             *self._lazy_args(False)))
        n = self._n_computed = int(self._stats[0])
        joints = self._computed[:n]
        if self._stats[5] >= 0:
            j = int(self._stats[5])
            raise ValueError(f"the adaptive quasi-statics result is not finite at joint "
                             f"{self.model.joint_name[j]!r}: a node inverse inertia is "
                             f"singular")
        if copy:
            qdd, joints = qdd.copy(), joints.copy()
        return QuasiStaticResult(qdd=qdd, joints=joints,
                                 bound=float(self._stats[1]), total=float(self._stats[2]),
                                 error=error, eps_max=float(eps_max))

    def _solve_tail(self):
        """Arguments of :func:`_partial_back_substitution` after ``(eps_max, measure,
        budget, prev_n)`` for the current state (exact mode, no lazy evaluation)."""
        t, d = self.tree, self.dca
        return (self.ma.jnv, self.ma.vadr, self.Aw, self.active, t.roots, t.node_A, t.node_B,
                t.node_joint, t.node_nh, t.node_hoff, d.node_ooff, t.node_ca, t.node_cb,
                self.n_slots, self.XJ_E, self.XJ_r, self.Phi, self.Psi, self.ph, self.eta,
                self.W, self.P, self.D, self.beta, self.gamma, self.tau, self._hk, self._hn,
                self._xv, self._fv, self.fh, self._qdd, self._computed,
                self._stats) + self._lazy_args(False)

    def _solve_exact(self):
        """Exact back-substitution over the active nodes without the metric coefficients
        (RGL Sec. 4.3); internal buffer, O(N_active)."""
        partial_back_substitution(-1.0, 0, -1, self._n_computed, self._solve_tail())
        self._n_computed = int(self._stats[0])
        if self._stats[5] >= 0:
            j = int(self._stats[5])
            raise ValueError(f"the hybrid-body acceleration is not finite at joint "
                             f"{self.model.joint_name[j]!r}: a node inverse inertia is "
                             f"singular")
        return self._qdd

    def body_pose(self, body):
        """World pose of a body from the principal-handle transforms on its assembly-tree
        path (RL Sec. 5.1), O(tree height).

        Returns ``(R, p)``: R (3, 3) float64 maps body to world coordinates (columns are the
        body axes), p (3,) float64 the body origin in world coordinates [m] (as
        :func:`articulated.forward_kinematics`)."""
        b = self.model.body_id(body)
        t, d = self.tree, self.dca
        _world_pose(b, t.leaf_of_body, t.node_parent, self.node_pslot, t.node_hoff,
                    d.handle_x, d.H_E, d.H_r, self.Tup_E, self.Tup_r, self._Xr, self._xq)
        # (E, r) = world X body: E rotates body into world coordinates, r is the world
        # origin in body coordinates
        E, r = self._Xr[0].copy(), self._xq[0].copy()
        return E, -(E @ r)

    def cross_transform(self, node: int, k: int, l: int) -> np.ndarray:
        """(6, 6) motion transform from the frame of handle l to that of handle k of a node
        (RL Sec. 5.1 "handles cross-transforms"), ``Tp_k^-1 Tp_l``."""
        t = self.tree
        nh = int(t.node_nh[node])
        if not (0 <= k < nh and 0 <= l < nh):
            raise ValueError(f"node {node} has {nh} handles; got k={k}, l={l}")
        o = int(t.node_hoff[node])
        return (_inv_dense(self.Tp_E[o + k], self.Tp_r[o + k])
                @ _dense(self.Tp_E[o + l], self.Tp_r[o + l]))

    def nbytes(self) -> int:
        """Bytes held by the solver's arrays (including its DCA)."""
        own = sum(a.nbytes for a in vars(self).values() if isinstance(a, np.ndarray))
        return own + self.dca.nbytes()


def _dense(E, r):
    rx = np.array([[0.0, -r[2], r[1]], [r[2], 0.0, -r[0]], [-r[1], r[0], 0.0]])
    X = np.zeros((6, 6))
    X[:3, :3] = E
    X[3:, 3:] = E
    X[3:, :3] = -E @ rx
    return X


def _inv_dense(E, r):
    return _dense(E.T, -(E @ r))


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
            _tinv(H_E, H_r, handle_x[o + k], Xr, xq, 0)
            _tmul(H_E, H_r, hp, Xr, xq, 0, Tp_E, Tp_r, o + k)


class QuasiStaticResult:
    """Result of :meth:`AdaptiveQuasiStatics.solve`: ``qdd`` (nv,), ``joints`` (computed,
    in order), ``bound`` (certified error), ``total`` (``A`` of the system), ``error``,
    ``eps_max``."""

    __slots__ = ("qdd", "joints", "bound", "total", "error", "eps_max")

    def __init__(self, qdd, joints, bound, total, error, eps_max):
        self.qdd, self.joints, self.bound = qdd, joints, bound
        self.total, self.error, self.eps_max = total, error, eps_max

    def __repr__(self):
        return (f"QuasiStaticResult(joints={self.joints.size}, bound={self.bound:.3g}, "
                f"error={self.error!r}, eps_max={self.eps_max:.3g})")
