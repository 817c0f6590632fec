"""Block storage and block linear algebra of the DCA engine.

Block storage and block linear algebra of the DCA engine: the handle blocks of ``Phi``
and ``Psi``, the factor of ``K_FF`` and the products that RL eq. 2 and eq. 9 need.

Storage (every solver of the DCA family): node C's handles occupy the slots
``hoff .. hoff + nh - 1``; its diagonal block (k, k) is row ``hoff + k`` of ``Phi`` (and of
``Psi``), its off-diagonal block (k, l), k < l, row ``n_slots + ooff + _oidx(nh, k, l)``
(:func:`_blk`); (l, k) is the transpose.

Elimination in the aligned frame (:mod:`articulated.algorithms.dca`, "Block elimination"):
with the coordinates split into the constrained ones F and the joint ones (``S = [0; 1]``)
and ``K = V^-1 = X_J Phi_2^A X_J^T + Phi_1^B``, ``W = [K_FF^-1, 0; 0, 0]`` and
``V S (S^T V S)^-1 = [-K_FF^-1 K_FJ; 1]``, so a node needs a factor of ``K_FF`` only:
``L D L^T`` without square roots for the 5 x 5 ``K_FF`` of a 1-dof joint
(:func:`_chol5_perm`), Cholesky otherwise (:func:`_chol`, :func:`_chol6`), and the blocks
``G_k W G_l^T = Z_k D^-1 Z_l^T`` with ``Z_k = G_k[:, F] L^-T`` (:func:`_zrows5`,
:func:`_pair5`, :func:`_outer_acc`).

The helpers take whole arrays plus indices and read elements (``P[b, i, j]``), never
slices: a slice inside a kernel loop is an array view whose reference count numba may
maintain with atomic calls, which would cost more than the arithmetic of a node. They are
LLVM-inlined into the kernels (:data:`articulated.config.INLINE`).
"""

from __future__ import annotations

import math


from ..config import inline
from ..model import JOINT_PRISMATIC, JOINT_REVOLUTE
from ..spatial import xform_force_T_at, xform_motion_at, xform_rows_at


@inline
def _bidx(nh, k, l):
    """Block index of (k, l), k <= l, in the upper triangle of an nh x nh block matrix."""
    return k * nh - (k * (k - 1)) // 2 + (l - k)


@inline
def _oidx(nh, k, l):
    """Index of the off-diagonal block (k, l), k < l, among the ``nh (nh - 1) / 2`` of a node
    (row-major over the strict upper triangle)."""
    return k * nh - (k * (k + 1)) // 2 + (l - k - 1)


@inline
def _off(oo, nh, k, l):
    """(index, transposed) of the off-diagonal block ``Phi_kl`` (k != l) of the node whose
    off-diagonal blocks start at ``oo``."""
    if k < l:
        return oo + _oidx(nh, k, l), False
    return oo + _oidx(nh, l, k), True


@inline
def _blk(hoff, ooff, n_slots, nh, k, l):
    """(row, transposed) of block (k, l) of a node in the Phi/Psi storage."""
    if k == l:
        return hoff + k, False
    if k < l:
        return n_slots + ooff + _oidx(nh, k, l), False
    return n_slots + ooff + _oidx(nh, l, k), True


@inline
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


@inline
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
        xform_rows_at(E, r, J, M, m, out, o)


@inline
def _xj_motion(jt, E, r, J, v):
    """``X v`` (a 6-tuple) for a motion 6-vector v and the principal joint transform
    ``X = (E[J], r[J])`` of :func:`_xj_rows`: 12 operations for a revolute joint (a rotation
    about z), 4 for a prismatic one (a translation along z), the general transform
    otherwise; equal to :func:`~articulated.spatial.xform_motion_at`."""
    if jt == JOINT_REVOLUTE:
        c = E[J, 0, 0]
        s = E[J, 0, 1]
        return (c * v[0] + s * v[1], c * v[1] - s * v[0], v[2], c * v[3] + s * v[4],
                c * v[4] - s * v[3], v[5])
    if jt == JOINT_PRISMATIC:
        qz = r[J, 2]
        return v[0], v[1], v[2], v[3] + qz * v[1], v[4] - qz * v[0], v[5]
    return xform_motion_at(E, r, J, v)


@inline
def _xj_force_T(jt, E, r, J, f):
    """``X^T f`` (a 6-tuple) for a force 6-vector f and the principal joint transform of
    :func:`_xj_motion`; equal to :func:`~articulated.spatial.xform_force_T_at`."""
    if jt == JOINT_REVOLUTE:
        c = E[J, 0, 0]
        s = E[J, 0, 1]
        return (c * f[0] - s * f[1], s * f[0] + c * f[1], f[2], c * f[3] - s * f[4],
                s * f[3] + c * f[4], f[5])
    if jt == JOINT_PRISMATIC:
        qz = r[J, 2]
        return f[0] - qz * f[4], f[1] + qz * f[3], f[2], f[3], f[4], f[5]
    return xform_force_T_at(E, r, J, f)


@inline
def _xj_rows_T(jt, E, r, J, M, m, out, o):
    """out[o] = X M[m]^T (X as in :func:`_xj_rows`), without copying the transpose."""
    for n in range(6):
        y = _xj_motion(jt, E, r, J, (M[m, n, 0], M[m, n, 1], M[m, n, 2], M[m, n, 3],
                                     M[m, n, 4], M[m, n, 5]))
        for a in range(6):
            out[o, a, n] = y[a]


@inline
def _xj_cols_add(jt, E, r, J, M, m, P, p):
    """M[m] <- M[m] X^T + P[p] in place (X as in :func:`_xj_rows`; row a of ``M X^T`` is
    ``X`` applied to row a of M)."""
    for a in range(6):
        y = _xj_motion(jt, E, r, J, (M[m, a, 0], M[m, a, 1], M[m, a, 2], M[m, a, 3],
                                     M[m, a, 4], M[m, a, 5]))
        for b in range(6):
            M[m, a, b] = y[b] + P[p, a, b]


@inline
def _sym_set(out, o, a, b, v):
    """out[o][a, b] = out[o][b, a] = v."""
    out[o, a, b] = v
    out[o, b, a] = v


@inline
def _xj_congruence_add(jt, E, r, J, P, p, Q, q, out, o):
    """``out[o] = X P[p] X^T + Q[q]`` for symmetric P[p], Q[q] and the principal joint
    transform X of :func:`_xj_rows`: the matrix ``K = V^-1`` of RGL eq. 2 (exactly
    symmetric: the lower triangle is computed and mirrored). Revolute and prismatic
    joints (1 dof, a rotation about z or a translation along z) in closed form on the
    lower triangle (100 and 55 operations against 180 and 84 for the two passes of
    :func:`_xj_rows` and :func:`_xj_cols_add`), those two passes otherwise."""
    if jt == JOINT_REVOLUTE:
        c = E[J, 0, 0]
        s = E[J, 0, 1]
        cc = c * c
        ss = s * s
        cs = c * s
        tcs = cs + cs
        cms = cc - ss
        # rows and columns (0, 1) and (3, 4) turn with R = [[c, s], [-s, c]]; 2 and 5 stay
        for g in range(0, 6, 3):
            a0 = P[p, g, g]
            a1 = P[p, g + 1, g + 1]
            b = P[p, g + 1, g]
            _sym_set(out, o, g, g, cc * a0 + ss * a1 + tcs * b + Q[q, g, g])
            _sym_set(out, o, g + 1, g + 1, ss * a0 + cc * a1 - tcs * b + Q[q, g + 1, g + 1])
            _sym_set(out, o, g + 1, g, cs * (a1 - a0) + cms * b + Q[q, g + 1, g])
            for j in range(2, 6, 3):
                v0 = P[p, j, g]
                v1 = P[p, j, g + 1]
                _sym_set(out, o, j, g, c * v0 + s * v1 + Q[q, j, g])
                _sym_set(out, o, j, g + 1, c * v1 - s * v0 + Q[q, j, g + 1])
        m00 = P[p, 3, 0]
        m01 = P[p, 3, 1]
        m10 = P[p, 4, 0]
        m11 = P[p, 4, 1]
        t1 = m01 + m10
        t2 = m11 - m00
        _sym_set(out, o, 3, 0, cc * m00 + cs * t1 + ss * m11 + Q[q, 3, 0])
        _sym_set(out, o, 3, 1, cs * t2 + cc * m01 - ss * m10 + Q[q, 3, 1])
        _sym_set(out, o, 4, 0, cs * t2 - ss * m01 + cc * m10 + Q[q, 4, 0])
        _sym_set(out, o, 4, 1, ss * m00 - cs * t1 + cc * m11 + Q[q, 4, 1])
        _sym_set(out, o, 2, 2, P[p, 2, 2] + Q[q, 2, 2])
        _sym_set(out, o, 5, 2, P[p, 5, 2] + Q[q, 5, 2])
        _sym_set(out, o, 5, 5, P[p, 5, 5] + Q[q, 5, 5])
    elif jt == JOINT_PRISMATIC:
        # X v = (v0, v1, v2, v3 + z v1, v4 - z v0, v5): rows and columns 3, 4 change
        z = r[J, 2]
        for a in range(3):
            for b in range(a + 1):
                _sym_set(out, o, a, b, P[p, a, b] + Q[q, a, b])
        for b in range(3):
            _sym_set(out, o, 3, b, P[p, 3, b] + z * P[p, 1, b] + Q[q, 3, b])
            _sym_set(out, o, 4, b, P[p, 4, b] - z * P[p, 0, b] + Q[q, 4, b])
        y31 = P[p, 3, 1] + z * P[p, 1, 1]
        y40 = P[p, 4, 0] - z * P[p, 0, 0]
        y41 = P[p, 4, 1] - z * P[p, 1, 0]
        _sym_set(out, o, 3, 3, P[p, 3, 3] + z * P[p, 3, 1] + z * y31 + Q[q, 3, 3])
        _sym_set(out, o, 4, 3, P[p, 4, 3] - z * P[p, 3, 0] + z * y41 + Q[q, 4, 3])
        _sym_set(out, o, 4, 4, P[p, 4, 4] - z * P[p, 4, 0] - z * y40 + Q[q, 4, 4])
        _sym_set(out, o, 5, 3, P[p, 5, 3] + z * P[p, 5, 1] + Q[q, 5, 3])
        _sym_set(out, o, 5, 4, P[p, 5, 4] - z * P[p, 5, 0] + Q[q, 5, 4])
        for b in range(3):
            _sym_set(out, o, 5, b, P[p, 5, b] + Q[q, 5, b])
        _sym_set(out, o, 5, 5, P[p, 5, 5] + Q[q, 5, 5])
    else:
        _xj_rows(jt, E, r, J, P, p, out, o)
        _xj_cols_add(jt, E, r, J, out, o, Q, q)
        for a in range(6):
            for b in range(a):
                _sym_set(out, o, a, b, 0.5 * (out[o, a, b] + out[o, b, a]))


@inline
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
            y = xform_motion_at(E, r, J, (M[m, a, 0], M[m, a, 1], M[m, a, 2], M[m, a, 3],
                                          M[m, a, 4], M[m, a, 5]))
            for b in range(6):
                M[m, a, b] = y[b]


@inline
def _ctv_at(C, c, x, ix, xo):
    """``C[c]^T x`` (a 6-tuple) for (6, 6) blocks C and ``x = x[ix, xo:xo + 6]`` of a 2-d
    array."""
    a = x[ix, xo]
    s0 = a * C[c, 0, 0]
    s1 = a * C[c, 0, 1]
    s2 = a * C[c, 0, 2]
    s3 = a * C[c, 0, 3]
    s4 = a * C[c, 0, 4]
    s5 = a * C[c, 0, 5]
    for t in range(1, 6):
        a = x[ix, xo + t]
        s0 += a * C[c, t, 0]
        s1 += a * C[c, t, 1]
        s2 += a * C[c, t, 2]
        s3 += a * C[c, t, 3]
        s4 += a * C[c, t, 4]
        s5 += a * C[c, t, 5]
    return s0, s1, s2, s3, s4, s5


@inline
def _ctv(C, c, x, ix):
    """``C[c]^T x[ix]`` (a 6-tuple) for (6, 6) blocks C and rows x[ix] of a 2-d array."""
    return _ctv_at(C, c, x, ix, 0)


@inline
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


@inline
def _symv(S, b, x0, x1, x2, x3, x4, x5):
    """``S_b x`` (a 6-tuple) for a symmetric (6, 6) matrix packed as its upper triangle
    row by row in ``S[b]`` (21 entries; generated code)."""
    y0 = (S[b, 0] * x0 + S[b, 1] * x1 + S[b, 2] * x2 + S[b, 3] * x3 + S[b, 4] * x4 + S[b, 5] * x5)
    y1 = (S[b, 1] * x0 + S[b, 6] * x1 + S[b, 7] * x2 + S[b, 8] * x3 + S[b, 9] * x4 + S[b, 10] * x5)
    y2 = (S[b, 2] * x0 + S[b, 7] * x1 + S[b, 11] * x2 + S[b, 12] * x3 + S[b, 13] * x4 + S[b,
                                                                                          14] * x5)
    y3 = (S[b, 3] * x0 + S[b, 8] * x1 + S[b, 12] * x2 + S[b, 15] * x3 + S[b, 16] * x4 + S[b,
                                                                                          17] * x5)
    y4 = (S[b, 4] * x0 + S[b, 9] * x1 + S[b, 13] * x2 + S[b, 16] * x3 + S[b, 18] * x4 + S[b,
                                                                                          19] * x5)
    y5 = (S[b, 5] * x0 + S[b, 10] * x1 + S[b, 14] * x2
          + S[b, 17] * x3 + S[b, 19] * x4 + S[b, 20] * x5)
    return y0, y1, y2, y3, y4, y5


@inline
def _bmv(P, b, tr, x, ix):
    """``P[b] x[ix]`` (or ``P[b]^T x[ix]`` if tr), a 6-tuple."""
    if tr:
        y = _ctv(P, b, x, ix)
    else:
        y = _cv(P, b, x[ix, 0], x[ix, 1], x[ix, 2], x[ix, 3], x[ix, 4], x[ix, 5])
    return y


@inline
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


@inline
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


@inline
def _fwd_rows_at(L, lr, lo, Ld, dr, dlo, n, C, c):
    """:func:`_fwd_rows` with its factor at any row and column offset (``L[lr, lo + t]``,
    ``Ld[dr, dlo + t]``), e.g. in the node records of the full DCA
    (:mod:`articulated.algorithms.dca`)."""
    for a in range(n):
        c0 = C[c, a, 0]
        c1 = C[c, a, 1]
        c2 = C[c, a, 2]
        c3 = C[c, a, 3]
        c4 = C[c, a, 4]
        c5 = C[c, a, 5]
        for j in range(a):
            l = L[lr, lo + (a * (a - 1)) // 2 + j]
            c0 -= l * C[c, j, 0]
            c1 -= l * C[c, j, 1]
            c2 -= l * C[c, j, 2]
            c3 -= l * C[c, j, 3]
            c4 -= l * C[c, j, 4]
            c5 -= l * C[c, j, 5]
        da = Ld[dr, dlo + a]
        C[c, a, 0] = c0 * da
        C[c, a, 1] = c1 * da
        C[c, a, 2] = c2 * da
        C[c, a, 3] = c3 * da
        C[c, a, 4] = c4 * da
        C[c, a, 5] = c5 * da


@inline
def _fwd_rows(L, Ld, J, n, C, c):
    """Rows 0..n-1 of C[c] <- L_J^-1 (rows 0..n-1 of C[c]) (forward substitution, L_J lower
    triangular n x n with inverse diagonal Ld[J])."""
    _fwd_rows_at(L, J, 0, Ld, J, 0, n, C, c)


@inline
def _chol_solve_at(L, lr, lo, Ld, dr, dlo, n, y, iy):
    """:func:`_chol_solve` with its factor at any row and column offset
    (``L[lr, lo + t]``, ``Ld[dr, dlo + t]``), e.g. in the node records of the full DCA
    (:mod:`articulated.algorithms.dca`)."""
    for a in range(n):
        s = y[iy, a]
        for j in range(a):
            s -= L[lr, lo + (a * (a - 1)) // 2 + j] * y[iy, j]
        y[iy, a] = s * Ld[dr, dlo + a]
    for a in range(n - 1, -1, -1):
        s = y[iy, a]
        for j in range(a + 1, n):
            s -= L[lr, lo + (j * (j - 1)) // 2 + a] * y[iy, j]
        y[iy, a] = s * Ld[dr, dlo + a]


@inline
def _chol_solve(L, Ld, J, n, y, iy):
    """y[iy, :n] <- (L_J L_J^T)^-1 y[iy, :n] (forward then back substitution)."""
    _chol_solve_at(L, J, 0, Ld, J, 0, n, y, iy)


@inline
def _chol_at(K, k, n, L, lr, lo, Ld, dr, dlo):
    """:func:`_chol` with its factor at any row and column offset (``L[lr, lo + t]``,
    ``Ld[dr, dlo + t]``), e.g. in the node records of the full DCA
    (:mod:`articulated.algorithms.dca`)."""
    if n == 6:
        _chol6_at(K, k, L, lr, lo, Ld, dr, dlo)
    else:
        for j in range(n):
            s = K[k, j, j]
            for m in range(j):
                s -= L[lr, lo + (j * (j - 1)) // 2 + m] * L[lr, lo + (j * (j - 1)) // 2 + m]
            ljj = math.sqrt(s) if s > 0 else math.nan
            d = 1 / ljj
            Ld[dr, dlo + j] = d
            for a in range(j + 1, n):
                t = K[k, a, j]
                for m in range(j):
                    t -= L[lr, lo + (a * (a - 1)) // 2 + m] * L[lr, lo + (j * (j - 1)) // 2 + m]
                L[lr, lo + (a * (a - 1)) // 2 + j] = t * d


@inline
def _chol(K, k, n, L, Ld, J):
    """Cholesky factor ``K[k][:n, :n] = L_J L_J^T`` (lower triangle of K read; L[J] gets the
    lower triangle, Ld[J] the inverse diagonal). A non-positive pivot gives NaN, which the
    public wrappers report (naming the joint). (No early return: an inlined helper that
    returns from a branch makes numba keep reference counts of its array arguments.)"""
    _chol_at(K, k, n, L, J, 0, Ld, J, 0)


@inline
def _chol6_at(K, k, L, lr, lo, Ld, dr, dlo):
    """:func:`_chol6` with its factor at any row and column offset (``L[lr, lo + t]``,
    ``Ld[dr, dlo + t]``), e.g. in the node records of the full DCA
    (:mod:`articulated.algorithms.dca`)."""
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
    L[lr, lo + 0] = l10
    L[lr, lo + 1] = l20
    L[lr, lo + 2] = l21
    L[lr, lo + 3] = l30
    L[lr, lo + 4] = l31
    L[lr, lo + 5] = l32
    L[lr, lo + 6] = l40
    L[lr, lo + 7] = l41
    L[lr, lo + 8] = l42
    L[lr, lo + 9] = l43
    L[lr, lo + 10] = l50
    L[lr, lo + 11] = l51
    L[lr, lo + 12] = l52
    L[lr, lo + 13] = l53
    L[lr, lo + 14] = l54
    Ld[dr, dlo + 0] = d0
    Ld[dr, dlo + 1] = d1
    Ld[dr, dlo + 2] = d2
    Ld[dr, dlo + 3] = d3
    Ld[dr, dlo + 4] = d4
    Ld[dr, dlo + 5] = d5


@inline
def _chol6(K, k, L, Ld, J):
    """:func:`_chol` for n = 6, unrolled (generated code)."""
    _chol6_at(K, k, L, J, 0, Ld, J, 0)


@inline
def _chol5_perm_at(K, k, perm, pj, L, lr, lo, Ld, dr, dlo):
    """:func:`_chol5_perm` with its factor at any row and column offset
    (``L[lr, lo + t]``, ``Ld[dr, dlo + t]``, ``perm[pj]``), e.g. in the node records of the
    full DCA (:mod:`articulated.algorithms.dca`)."""
    p0 = perm[pj, 0]
    p1 = perm[pj, 1]
    p2 = perm[pj, 2]
    p3 = perm[pj, 3]
    p4 = perm[pj, 4]
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
    L[lr, lo + 0] = l10
    L[lr, lo + 1] = l20
    L[lr, lo + 2] = l21
    L[lr, lo + 3] = l30
    L[lr, lo + 4] = l31
    L[lr, lo + 5] = l32
    L[lr, lo + 6] = l40
    L[lr, lo + 7] = l41
    L[lr, lo + 8] = l42
    L[lr, lo + 9] = l43
    Ld[dr, dlo + 0] = e0
    Ld[dr, dlo + 1] = e1
    Ld[dr, dlo + 2] = e2
    Ld[dr, dlo + 3] = e3
    Ld[dr, dlo + 4] = e4


@inline
def _chol5_perm(K, k, perm, J, L, Ld):
    """Square-root-free Cholesky ``K[k][F, F] = L D L^T`` of the free block
    (``F = perm[J, :5]``): the unit lower factor into L[J] (below the diagonal), ``1 / D``
    into Ld[J]; unrolled (generated code). A non-positive pivot gives NaN."""
    _chol5_perm_at(K, k, perm, J, L, J, 0, Ld, J, 0)


@inline
def _solve5_at(L, lr, lo, Ld, dr, dlo, y0, y1, y2, y3, y4):
    """:func:`_solve5` with its factor at any row and column offset (``L[lr, lo + t]``,
    ``Ld[dr, dlo + t]``), e.g. in the node records of the full DCA
    (:mod:`articulated.algorithms.dca`)."""
    w0 = y0
    w1 = y1 - L[lr, lo + 0] * w0
    w2 = y2 - L[lr, lo + 1] * w0 - L[lr, lo + 2] * w1
    w3 = y3 - L[lr, lo + 3] * w0 - L[lr, lo + 4] * w1 - L[lr, lo + 5] * w2
    w4 = y4 - L[lr, lo + 6] * w0 - L[lr, lo + 7] * w1 - L[lr, lo + 8] * w2 - L[lr, lo + 9] * w3
    x4 = w4 * Ld[dr, dlo + 4]
    x3 = w3 * Ld[dr, dlo + 3] - L[lr, lo + 9] * x4
    x2 = w2 * Ld[dr, dlo + 2] - L[lr, lo + 5] * x3 - L[lr, lo + 8] * x4
    x1 = w1 * Ld[dr, dlo + 1] - L[lr, lo + 2] * x2 - L[lr, lo + 4] * x3 - L[lr, lo + 7] * x4
    x0 = w0 * Ld[dr, dlo + 0] - L[lr, lo + 0] * x1 - L[lr, lo + 1] * x2 - L[lr, lo + 3] * x3 - L[lr, lo + 6] * x4
    return x0, x1, x2, x3, x4


@inline
def _solve5(L, Ld, J, y0, y1, y2, y3, y4):
    """``(L D L^T)^-1 y`` (a 5-tuple) for the factor of :func:`_chol5_perm`."""
    return _solve5_at(L, J, 0, Ld, J, 0, y0, y1, y2, y3, y4)


@inline
def _zrows5_at(L, lr, lo, perm, pj, C, c, Z, zk):
    """:func:`_zrows5` with its factor at any row and column offset (``L[lr, lo + t]``,
    ``perm[pj]``), e.g. in the node records of the full DCA
    (:mod:`articulated.algorithms.dca`)."""
    p0 = perm[pj, 0]
    p1 = perm[pj, 1]
    p2 = perm[pj, 2]
    p3 = perm[pj, 3]
    p4 = perm[pj, 4]
    l10 = L[lr, lo + 0]
    l20 = L[lr, lo + 1]
    l21 = L[lr, lo + 2]
    l30 = L[lr, lo + 3]
    l31 = L[lr, lo + 4]
    l32 = L[lr, lo + 5]
    l40 = L[lr, lo + 6]
    l41 = L[lr, lo + 7]
    l42 = L[lr, lo + 8]
    l43 = L[lr, lo + 9]
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


@inline
def _zrows5(L, Ld, J, perm, C, c, Z, zk):
    """``Z[zk][:5] = L_J^-1 C[c][F, :]`` (``F = perm[J, :5]``, L unit lower triangular):
    forward substitution on rows, unrolled (generated code)."""
    _zrows5_at(L, J, 0, perm, J, C, c, Z, zk)


@inline
def _d_scaled(Z, a, m, e):
    """Column m of the rows ``Z[a][:5]`` scaled by ``1 / D`` (the 5-tuple e): a 5-tuple."""
    return (Z[a, 0, m] * e[0], Z[a, 1, m] * e[1], Z[a, 2, m] * e[2], Z[a, 3, m] * e[3],
            Z[a, 4, m] * e[4])


@inline
def _pair5_at(Z, a, b, fac, P, src, tr, has_base, sg, out, o):
    """:func:`_pair5` with its factor at any row and column offset: ``fac = (Ld, dr, dlo)``,
    ``1 / D`` in ``Ld[dr, dlo + t]``, e.g. in the node records of the full DCA
    (:mod:`articulated.algorithms.dca`)."""
    Ld, dr, dlo = fac
    # the sign folded into 1 / D (exact): 5 multiplications instead of 36
    e = (sg * Ld[dr, dlo + 0], sg * Ld[dr, dlo + 1], sg * Ld[dr, dlo + 2],
         sg * Ld[dr, dlo + 3], sg * Ld[dr, dlo + 4])
    for m in range(6):
        a0, a1, a2, a3, a4 = _d_scaled(Z, a, m, e)
        for n in range(6):
            out[o, m, n] = (a0 * Z[b, 0, n] + a1 * Z[b, 1, n] + a2 * Z[b, 2, n]
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


@inline
def _pair5(Z, a, b, Ld, J, P, src, tr, has_base, sg, out, o):
    """``out[o] = base + sg Z[a][:5]^T D^-1 Z[b][:5]`` (a block of RGL eq. 2; ``1 / D`` in
    Ld[J]) with base ``P[src]`` (transposed if tr) or zero."""
    _pair5_at(Z, a, b, (Ld, J, 0), P, src, tr, has_base, sg, out, o)


@inline
def _pair5_sym_at(Z, a, Ld, dr, dlo, P, src, out, o):
    """:func:`_pair5_sym` with its factor at any row and column offset
    (``Ld[dr, dlo + t]``), e.g. in the node records of the full DCA
    (:mod:`articulated.algorithms.dca`)."""
    e = (Ld[dr, dlo + 0], Ld[dr, dlo + 1], Ld[dr, dlo + 2], Ld[dr, dlo + 3], Ld[dr, dlo + 4])
    for m in range(6):
        a0, a1, a2, a3, a4 = _d_scaled(Z, a, m, e)
        for n in range(m, 6):
            v = P[src, m, n] - (a0 * Z[a, 0, n] + a1 * Z[a, 1, n] + a2 * Z[a, 2, n]
                                + a3 * Z[a, 3, n] + a4 * Z[a, 4, n])
            out[o, m, n] = v
            out[o, n, m] = v


@inline
def _pair5_sym(Z, a, Ld, J, P, src, out, o):
    """``out[o] = P[src] - Z[a][:5]^T D^-1 Z[a][:5]`` for a symmetric base (diagonal
    blocks): the upper triangle is computed and mirrored (exactly symmetric); out[o] may
    be P[src]."""
    _pair5_sym_at(Z, a, Ld, J, 0, P, src, out, o)


@inline
def _chol_inverse(L, Ld, J, n, T, t, w):
    """``T[t][:n, :n] = (L L^T)^-1`` for the Cholesky factor in (L[J], Ld[J]) of
    :func:`~articulated.algorithms.blocks._chol` (strict lower triangle packed row by row,
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


@inline
def _ldl5_inverse(L, Ld, J, T, t):
    """``T[t][:5, :5] = K_FF^-1 = (L D L^T)^-1`` for the factor in (L[J], Ld[J]) of
    :func:`~articulated.algorithms.blocks._chol5_perm`: ``K_FF^-1 = M^T D^-1 M`` with
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


@inline
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


@inline
def _child_slot(k, nAo, ca, cb):
    """Handle k of a node as ``(from_A, kk)``: whether it comes from child A (the node's
    first ``nAo`` handles) or from B, and its index among that child's handles. A node's
    handles are A's without ``ca`` (the handle its joint consumes), then B's without
    ``cb`` (the handle-index remap of RL Sec. 3.1 / RGL eq. 2)."""
    if k < nAo:
        return True, (k + 1 if k >= ca else k)
    kk = k - nAo
    return False, (kk + 1 if kk >= cb else kk)


@inline
def _node_slot(kk, c):
    """Inverse of :func:`_child_slot` within one child: the index among the node's handles
    from that child of the child's handle ``kk != c`` (``c``: the consumed handle)."""
    return kk - 1 if kk > c else kk


@inline
def _hand_down(fh, ho, nAo, f, X, J, sideA, sideB):
    """Handle forces of node C's children from C's (slots ``ho ..``, A's first; ``nAo``
    from A) and the force ``f`` (a 6-vector) across C's joint J (RL eq. 5): B's handle
    (J, 1) gets f, A's handle (J, 0) gets ``-X_J^T f`` (``X = (jt, E, r)``: J's joint type
    and the principal joint transforms, :func:`_xj_force_T`), every other handle its force
    at C. ``sideA = (A, ca, hA, nhA)``, ``sideB = (cb, hB, nhB)``: child A (-1: the world),
    the handle the joint consumes in each child, its first slot and handle count."""
    A, ca, hA, nhA = sideA
    cb, hB, nhB = sideB
    for kk in range(nhB):
        dst = hB + kk
        if kk == cb:
            for a in range(6):
                fh[dst, a] = f[a]
        else:
            src = ho + nAo + _node_slot(kk, cb)
            for a in range(6):
                fh[dst, a] = fh[src, a]
    if A < 0:
        return
    g = _xj_force_T(X[0], X[1], X[2], J, f)
    for kk in range(nhA):
        dst = hA + kk
        if kk == ca:
            for a in range(6):
                fh[dst, a] = -g[a]
        else:
            src = ho + _node_slot(kk, ca)
            for a in range(6):
                fh[dst, a] = fh[src, a]


@inline
def _children(i, tree):
    """Children of internal node i (``tree``: a
    :class:`~articulated.algorithms.bundles.NodeModel`): ``(A, B, ca, cb, nAo)`` - the
    children (A = -1 for a root node, whose A is the world), the slots of their handles that
    the node's joint consumes, and ``nAo``, the node's handles coming from A."""
    A = tree.node_A[i]
    nAo = tree.node_nh[A] - 1 if A >= 0 else 0
    return A, tree.node_B[i], tree.node_ca[i], tree.node_cb[i], nAo


@inline
def _child_blocks(i, tree):
    """Storage of internal node i's children: ``(nhA, hA, oA, nhB, hB, oB)`` - each child's
    handle count, first handle slot and first off-diagonal block (zeros for the world A of
    a root node)."""
    A = tree.node_A[i]
    B = tree.node_B[i]
    if A >= 0:
        return (tree.node_nh[A], tree.node_hoff[A], tree.node_ooff[A], tree.node_nh[B],
                tree.node_hoff[B], tree.node_ooff[B])
    return 0, 0, 0, tree.node_nh[B], tree.node_hoff[B], tree.node_ooff[B]


@inline
def _handle_Ct(k, lay, X, J, Phi, T, t):
    """Handle k of the node C of joint J (children A, B in the
    :class:`~articulated.algorithms.bundles.ChildLayout` ``lay``; RL eq. 2): ``C_k = s_k
    Ct_k`` with ``Ct_k = X Phi^A_{2k}`` and ``s_k = 1`` for a handle of A, ``Ct_k =
    Phi^B_{1k}`` and ``s_k = -1`` for one of B (``X = (jt, XJ_E, XJ_r)`` as in
    :func:`_hand_down`). Writes Ct_k into T[t] (T[9] scratch); returns ``(s_k, slot of the
    handle in its child)``."""
    jt, XJ_E, XJ_r = X
    fromA, kk = _child_slot(k, lay.nAo, lay.ca, lay.cb)
    if fromA:
        row, tr = _blk(lay.hA, lay.oA, lay.n_slots, lay.nhA, lay.ca, kk)
        if tr:
            _copy_block(Phi, row, tr, T, 9)
            _xj_rows(jt, XJ_E, XJ_r, J, T, 9, T, t)
        else:
            _xj_rows(jt, XJ_E, XJ_r, J, Phi, row, T, t)
        return 1.0, lay.hA + kk
    row, tr = _blk(lay.hB, lay.oB, lay.n_slots, lay.nhB, lay.cb, kk)
    _copy_block(Phi, row, tr, T, t)
    return -1.0, lay.hB + kk
