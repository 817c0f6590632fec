"""Total-acceleration equations of the DCA engine (RL Lemma 1, eqs. 8-9).

Total-acceleration equations of the DCA engine: the acceleration metric of Redon & Lin
(2005) (RL), Definitions 2-3, Lemma 1, eqs. 8-9, with the SPD joint weights ``A_i`` of
Redon, Galoppo & Lin (2005) (RGL), Sec. 5.2, eqs. 7-8 (identity weights reproduce RL).

Notation of :mod:`articulated.algorithms.node_update` (``C_k = X Phi^A_{2k}`` for a handle of
A, ``C_k = -Phi^B_{1k}`` for one of B). Total-acceleration equation (RL Lemma 1, eq. 8):
``A(C) = sum_kl f_k^T Psi_kl f_l + sum_k f_k^T p_k + eta`` with
``A(C) = sum_{joints i in C} qdd_i^T A_i qdd_i`` (:func:`_total_acc`). Substituting the
affine maps ``f_2^A = -X^T f`` and ``f_1^B = f`` of the proof of Lemma 1 gives (RL eq. 9
in handle form; ``Q_k = -Psi^A_{k2} X^T`` for a handle of A (:func:`_handle_QT`),
``Q_k = Psi^B_{k1}`` for one of B, ``Y' = X Psi^A_2 X^T + Psi^B_1`` (:func:`_y_prime`),
``Y = W Y' W + P A_J P^T``, ``R = D Q - P^T beta``)::

    Psi^C_kl = [same child] Psi_kl + Q_k W C_l + (Q_l W C_k)^T + C_k^T Y C_l
    p^C_k    = [own child] p_k + 2 Q_k gamma + C_k^T z,                  (_handle_p)
               z = W (p^B_1 - X p^A_2 + 2 Y' gamma) - 2 P A_J R
    eta^C    = eta^A + eta^B + gamma^T Y' gamma + gamma^T (p^B_1 - X p^A_2) + R^T A_J R
                                                                       (_metric_bias)

Leaves have ``Psi = 0, p = 0, eta = 0``; a root node has no A (the world), which zeroes A's
terms; it has no handles, so ``A(root) = eta``. With ``A_J = 1`` these are RL eq. 9
(``Y = N + W (Psi_2^A + Psi_1^B) W``, ``N = U^T U``, ``U = P^T``). The blocks ``Psi^C_kl``
are assembled in :func:`articulated.algorithms.node_update._update_nodes`, which forms
neither ``Y`` nor any dense ``W C_k``. The certified error of stopping the
back-substitution in each measure of RL Def. 2 is :func:`_bound`.

Units: SI. ``A(C)`` is a squared joint acceleration in the metric of the weights (identity
weights: [rad^2/s^4] for revolute joints, [m^2/s^4] for prismatic ones); ``Psi``, ``p`` and
``eta`` carry the units that make eq. 8 consistent with handle forces in [N m; N].
"""

from __future__ import annotations

import math

from numba import njit

from ..config import inline, KERNEL
from ..spatial import get_vec6
from .blocks import (_blk, _child_slot, _copy_block, _ctv, _handle_Ct, _xj_cols, _xj_cols_add,
                     _xj_motion, _xj_rows, _xj_rows_T)

ERROR_MEASURES = ("absolute_linkage", "relative_linkage", "absolute_joint", "relative_joint")
"""The acceleration error measures of RL Definition 2, in the order of their codes 0-3."""


@inline
def _y_prime(psiA, psiB, lay, X, J, Psi, T, t):
    """``Y' = X Psi^A_2 X^T + Psi^B_1`` of the node of joint J (RL eq. 9) into T[t]; a leaf
    child contributes nothing (RL Lemma 1). The diagonal blocks are read in place.
    ``lay``: the node's :class:`~articulated.algorithms.bundles.ChildLayout`; ``X = (jt,
    XJ_E, XJ_r)``: J's joint type and the principal joint transforms."""
    jt, XJ_E, XJ_r = X
    if psiA:
        _xj_rows(jt, XJ_E, XJ_r, J, Psi, lay.hA + lay.ca, T, t)
        if psiB:
            _xj_cols_add(jt, XJ_E, XJ_r, J, T, t, Psi, lay.hB + lay.cb)
        else:
            _xj_cols(jt, XJ_E, XJ_r, J, T, t)
    elif psiB:
        _copy_block(Psi, lay.hB + lay.cb, False, T, t)
    else:
        for a in range(6):
            for c in range(6):
                T[t, a, c] = 0.0


@inline
def _metric_bias(i, X, J, lay, d, hasY, co, Aw, T, V6):
    """The velocity-dependent terms of RL eq. 9 at node i (joint J, d free dofs; ``lay``,
    ``X`` as in :func:`_y_prime`): ``w = p^B_1 - X p^A_2`` (V6[4]), ``eta^C = eta^A +
    eta^B + gamma^T (Y' gamma + w) + R^T A_J R`` (into ``co.eta[i]``) and ``z = W (w + 2 Y'
    gamma) - 2 P A_J R`` (V6[5]), from Y' (T5), gamma (V6[2]) and R (V6[3]); V6[6], V6[7]
    scratch. Without ``hasY`` (no child has a joint: ``Psi, p, eta`` of both are zero, RL
    Lemma 1) ``w = 0``, ``Y' = 0`` (T5 not read), so ``eta^C = R^T A_J R`` and ``z = -2 P
    A_J R``. ``co``: the :class:`~articulated.algorithms.bundles.Coefficients` (reads
    ``ph, W, P``, writes ``eta``), ``Aw`` the weights (:class:`~articulated.algorithms.
    bundles.NodeInputs`)."""
    jt, XJ_E, XJ_r = X
    A, B, ca, cb, hA, hB = lay.A, lay.B, lay.ca, lay.cb, lay.hA, lay.hB
    ph, eta, W, P = co.ph, co.eta, co.W, co.P
    et = 0.0
    if hasY:
        for a in range(6):
            V6[4, a] = ph[hB + cb, a]
        if A >= 0:
            x = _xj_motion(jt, XJ_E, XJ_r, J, get_vec6(ph, hA + ca))
            for a in range(6):
                V6[4, a] -= x[a]
        if A >= 0:
            et += eta[A]
        et += eta[B]
        for a in range(6):
            s = 0.0
            for c in range(6):
                s += T[5, a, c] * V6[2, c]
            V6[6, a] = V6[4, a] + 2.0 * s                  # w + 2 Y' gamma
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
        if hasY:
            for c in range(6):
                s += W[J, a, c] * V6[6, c]
        for rr in range(d):
            s -= 2.0 * P[J, a, rr] * V6[7, rr]
        V6[5, a] = s


@inline
def _handle_QT(k, lay, X, J, Psi, T, t):
    """``Q_k^T`` of handle k of the node C of joint J (RL eq. 9) into T[t]:
    ``-X Psi^A_{2k}`` for a handle of A, ``Psi^B_{1k}`` for one of B (T[9] scratch): the
    blocks of :func:`_handle_Ct` (same ``lay``, ``X``) with Psi for Phi and the opposite
    sign."""
    sg, _src = _handle_Ct(k, lay, X, J, Psi, T, t)
    if sg > 0.0:
        for a in range(6):
            for c in range(6):
                T[t, a, c] = -T[t, a, c]


@inline
def _handle_QT_rows(k, lay, X, J, Psi, perm, T, t, w):
    """``Q_k^T`` of :func:`_handle_QT` with its rows in the F-first order ``perm[J]`` into
    T[t], the blocks read in place (a transposed one too); T[w] scratch."""
    jt, XJ_E, XJ_r = X
    fromA, kk = _child_slot(k, lay.nAo, lay.ca, lay.cb)
    if fromA:
        row, tr = _blk(lay.hA, lay.oA, lay.n_slots, lay.nhA, lay.ca, kk)
        if tr:
            _xj_rows_T(jt, XJ_E, XJ_r, J, Psi, row, T, w)
        else:
            _xj_rows(jt, XJ_E, XJ_r, J, Psi, row, T, w)
        for a in range(6):
            pa = perm[J, a]
            for c in range(6):
                T[t, a, c] = -T[w, pa, c]
    else:
        row, tr = _blk(lay.hB, lay.oB, lay.n_slots, lay.nhB, lay.cb, kk)
        if tr:
            for a in range(6):
                pa = perm[J, a]
                for c in range(6):
                    T[t, a, c] = Psi[row, c, pa]
        else:
            for a in range(6):
                pa = perm[J, a]
                for c in range(6):
                    T[t, a, c] = Psi[row, pa, c]


@inline
def _handle_p(C, ct, T, qt, perm, J, hasQ, sg, src, dst, V6, ph):
    """``p^C = p + 2 Q gamma + C^T z`` (RL eq. 9) for handle ``dst`` of a node from its
    handle ``src`` in a child, ``C = sg Ct`` (Ct in C[ct]) and, when ``hasQ``, ``Q^T`` in
    T[qt] with its rows in the F-first order ``perm[J]`` (:func:`_handle_QT_rows`; gamma in
    V6[2], z in V6[5])."""
    t6 = _ctv(C, ct, V6, 5)
    for c in range(6):
        s = 0.0
        if hasQ:
            for a in range(6):
                s += T[qt, a, c] * V6[2, perm[J, a]]
        ph[dst, c] = ph[src, c] + 2.0 * s + sg * t6[c]


@inline
def _psi_diag(T, ck, hasQ, nf, Psi, row, dst):
    """Diagonal block ``Psi^C_kk = Psi_kk + Q_k[:, F] G_k + [G_k; U_k]^T [Q_k[:, F]^T +
    Y'_FF G_k; A_J U_k]`` (RL eq. 9 in the form of
    :func:`articulated.algorithms.node_update._update_nodes`: ``Q_k^T`` rows in T[ck + 1],
    ``[G_k; U_k]`` in T[ck + 2], the right factor in T[ck + 3]) into ``Psi[dst]``, with the
    child's block ``Psi[row]`` when ``hasQ``: symmetric, so the upper triangle is computed
    and mirrored (exactly symmetric)."""
    for m in range(6):
        for n in range(m, 6):
            s = Psi[row, m, n] if hasQ else 0.0
            if hasQ:
                x = 0.0
                for t in range(nf):
                    x += T[ck + 1, t, m] * T[ck + 2, t, n]
                s += x
            x = 0.0
            for t in range(6):
                x += T[ck + 2, t, m] * T[ck + 3, t, n]
            s += x
            Psi[dst, m, n] = s
            Psi[dst, n, m] = s


@njit(**KERNEL)
def _single_joint_metric(nC, hC, oC, n_slots, J, d, Aw, T, V6, Psi, ph):
    """``Psi^C`` and ``p^C`` (RL eq. 9) of a node neither of whose children has a joint
    (both bodies: ``Psi = 0, p = 0, eta = 0``, RL Lemma 1), so ``Y' = 0`` and ``Q_k = 0``:
    ``Psi^C_kl = U_k^T A_J U_l`` (rank d) and ``p^C_k = C_k^T z = -2 U_k^T A_J R``, from
    the d rows of ``U_k = P^T C_k`` in T[14 + 4k], the weights ``Aw[J]`` and ``A_J R`` in
    V6[7] (:func:`_metric_bias`); ``A_J U_k`` into T[15 + 4k]. The node's ``nC`` handles
    start at slot ``hC``, its off-diagonal blocks at ``oC``
    (:func:`~articulated.algorithms.blocks._blk`). Called, not inlined: compiled once for
    every caller."""
    for k in range(nC):
        u = 14 + 4 * k
        for c in range(6):
            s = 0.0
            for rr in range(d):
                s += T[u, rr, c] * V6[7, rr]
            ph[hC + k, c] = -2.0 * s
        for rr in range(d):
            for c in range(6):
                s = 0.0
                for t in range(d):
                    s += Aw[J, rr, t] * T[u, t, c]
                T[u + 1, rr, c] = s
    for k in range(nC):
        u = 14 + 4 * k
        for l in range(k, nC):
            w = 15 + 4 * l
            dst, _t = _blk(hC, oC, n_slots, nC, k, l)
            for m in range(6):
                n0 = m if k == l else 0
                for n in range(n0, 6):
                    s = 0.0
                    for rr in range(d):
                        s += T[u, rr, m] * T[w, rr, n]
                    Psi[dst, m, n] = s
                    if k == l:
                        Psi[dst, n, m] = s


@inline
def _total_acc(i, tree, co, fh):
    """A(C) of node i for the handle forces in ``fh`` (RL eq. 8); ``inf`` for a node whose
    metric is stale (``eta = inf``, :func:`mark_stale`)."""
    if math.isinf(co.eta[i]):
        return math.inf
    nh = tree.node_nh[i]
    ho = tree.node_hoff[i]
    oo = tree.node_ooff[i]
    Psi, ph = co.Psi, co.ph
    s = co.eta[i]
    for k in range(nh):
        for a in range(6):
            s += fh[ho + k, a] * ph[ho + k, a]
        for l in range(k, nh):
            row, tr = _blk(ho, oo, tree.n_slots, nh, k, l)
            t = 0.0
            for a in range(6):
                fa = fh[ho + k, a]
                for c in range(6):
                    m = Psi[row, c, a] if tr else Psi[row, a, c]
                    t += fa * m * fh[ho + l, c]
            s += t if k == l else 2.0 * t
    return s


@inline
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


@njit(**KERNEL)
def mark_stale(nodes, n, node_joint, eta):
    """Mark the metric of the internal nodes among ``nodes[:n]`` stale (``eta = inf``):
    their DCA coefficients were updated without the total-acceleration coefficients (RL eq.
    9), so the partial back-substitution computes their joints before it may stop (their
    ``A(C)`` is unknown; the certified bound is kept). Leaves have no metric (RL Lemma 1)."""
    for u in range(n):
        i = nodes[u]
        if node_joint[i] >= 0:
            eta[i] = math.inf
