"""The node update of the DCA engine.

The node update of the DCA engine: every node's coefficients from its children's (RL
eq. 2, RGL eq. 2, RGL eq. 6 for rigid joints) together with the total-acceleration
coefficients (RL eq. 9, :mod:`articulated.algorithms.metric`) and the hierarchical frames
(RL Sec. 5.1), for any list of nodes in post-order; the lazy update lists (RL Sec. 5.2).

Sources: Redon & Lin (2005), "An efficient, error-bounded approximation algorithm for
simulating quasi-statics of complex linkages" (RL), Sec. 3.1, 4-5; Redon, Galoppo & Lin
(2005), "Adaptive dynamics of articulated bodies" (RGL), Sec. 3-4, 6.

Notation and frames are those of :mod:`articulated.algorithms.dca` (aligned handle frames,
principal joint transform ``X = X_J(q_J)`` from the frame of handle ``(J, 0)`` to that of
``(J, 1)``, node handles: A's other handles, then B's). Per node C with joint J and handle
forces ``f_k`` (forces applied *to C* at its handles), with ``C_k = X Phi^A_{2k}`` for a
handle of A and ``C_k = -Phi^B_{1k}`` for a handle of B (so ``x = beta + sum_k C_k f_k`` in
RL eq. 4):

    f    = W x + P Q                 (RL eq. 5, force across J on B's handle (J, 1))
    qdd  = D Q - P^T x               (RL eq. 4; P = V S (S^T V S)^-1, D = (S^T V S)^-1)
    Phi^C_kl = [k, l same child] Phi_kl - C_k^T W C_l,   b^C_k = b_k - C_k^T gamma   (eq. 2)

:func:`_update_nodes` computes these from the factor of ``K_FF``
(:mod:`articulated.algorithms.blocks`) and never forms V, W or ``(S^T V S)^-1`` densely;
its docstring gives the block forms. The kernels take the named bundles of
:mod:`articulated.algorithms.bundles` by reference.
"""

from __future__ import annotations

from numba import njit

from .._byref import byref, deref
from ..config import inline, KERNEL
from ..spatial import get_vec6, xform_dense_at, xform_motion_at
from .blocks import (_blk, _child_blocks, _child_slot, _children, _chol, _chol5_perm,
                     _chol_inverse, _copy_block, _ctv, _fwd_rows, _handle_Ct, _ldl5_inverse,
                     _outer_acc, _outer_sym, _pair5, _pair5_sym, _rows_mul, _solve5,
                     _xj_congruence_add, _xj_motion, _xj_rows, _xj_rows_T, _zrows5)
from .handles import _leaf_bias, _node_frames, principal_joint_transform
from .bundles import ChildLayout
from .heap import _heapsort
from .metric import (_handle_p, _handle_QT, _handle_QT_rows, _metric_bias, _psi_diag,
                     _single_joint_metric, _y_prime)


@inline
def _joint_coefficients(J, nf, d, perm, T, L, Ld, V6, co):
    """Joint J's coefficients of RL eqs. 4-5 from ``K = V^-1`` (T[0]) and the Cholesky
    factor ``K_FF = L L^T`` in (L[0], Ld[0]) (:func:`~articulated.algorithms.blocks._chol`),
    with ``S = [0; 1_d]`` after the permutation ``perm[J]`` (free coordinates F first):
    ``W = [K_FF^-1, 0; 0, 0]``, ``P = V S (S^T V S)^-1 = [-K_FF^-1 K_FJ; 1]``,
    ``D = (S^T V S)^-1 = K_JJ - K_JF K_FF^-1 K_FJ``, ``gamma = W beta + P Q`` and
    ``R = D Q - P^T beta`` (beta in V6[0], Q in V6[1, :d]; gamma also into V6[2], R into
    V6[3]); ``K_FF^-1`` also into T[8] (F coordinates; T[9] scratch). Writes ``W, P, D,
    gamma, R`` of the :class:`~articulated.algorithms.bundles.Coefficients` ``co``."""
    W, P, D = co.W, co.P, co.D
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
    _gamma_R(J, d, W, P, D, V6, co.gamma, co.R)


@inline
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


@inline
def _joint_coefficients5(J, perm, T, L, Ld, V6, W, P, D, gamma, R):
    """:func:`_joint_coefficients` for ``|F| = 5, d = 1`` (revolute and prismatic joints)
    and the factor ``K_FF = L D L^T`` of :func:`~articulated.algorithms.blocks._chol5_perm`,
    with ``x = K_FF^-1 K_FJ = -P_F`` and ``gamma_F = K_FF^-1 (beta_F - K_FJ Q)`` solved in
    registers (:func:`~articulated.algorithms.blocks._solve5`)."""
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
    g = _solve5(L, Ld, 0, b0 - k0 * qj, b1 - k1 * qj, b2 - k2 * qj, b3 - k3 * qj, b4 - k4 * qj)
    rj = dd * qj - (V6[0, pj] - (x[0] * b0 + x[1] * b1 + x[2] * b2 + x[3] * b3 + x[4] * b4))
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


@inline
def _root_bias(J, Xup_E, Xup_r, H_E, H_r, gravity, b_world):
    """Root node of joint J: the world's handle accelerates with ``a_0 = -g``, in the
    joint's handle (J, 1) frame, into ``b_world[J]``."""
    x0 = xform_motion_at(Xup_E, Xup_r, J, (0.0, 0.0, 0.0, -gravity[0], -gravity[1], -gravity[2]))
    x = xform_motion_at(H_E, H_r, 2 * J + 1, x0)
    for a in range(6):
        b_world[J, a] = x[a]


@inline
def _node_beta(jt, J, lay, fr, inp, co, V6):
    """``beta = X b^A_2 - b^B_1`` of the node of joint J (type jt; root: ``b_world -
    b^B_1``), plus the joint's velocity product ``c_al`` unless ``quasi_static`` (RGL eq. 2;
    RL eq. 2), into ``co.beta[J]`` and V6[0]. Bundles: ``lay`` the node's
    :class:`~articulated.algorithms.bundles.ChildLayout`, ``fr`` the ``NodeFrames`` (``XJ``,
    ``b_world``), ``inp`` the ``NodeInputs`` (``c_al``, ``quasi_static``), ``co`` the
    ``Coefficients`` (reads ``bh``, writes ``beta``)."""
    A, ca, cb, hA, hB = lay.A, lay.ca, lay.cb, lay.hA, lay.hB
    XJ_E, XJ_r, b_world, bh = fr.XJ_E, fr.XJ_r, fr.b_world, co.bh
    c_al, quasi_static, beta = inp.c_al, inp.quasi_static, co.beta
    for a in range(6):
        V6[0, a] = -bh[hB + cb, a]
    if A >= 0:
        x = _xj_motion(jt, XJ_E, XJ_r, J, get_vec6(bh, hA + ca))
    else:
        x = (b_world[J, 0], b_world[J, 1], b_world[J, 2], b_world[J, 3], b_world[J, 4], b_world[J,
                                                                                                5])
    for a in range(6):
        V6[0, a] += x[a]
        if not quasi_static:
            V6[0, a] += c_al[J, a]
        beta[J, a] = V6[0, a]


@inline
def _handle_b(T, ct, sg, src, dst, J, gamma, bh):
    """``b^C = b - C^T gamma`` (RL eq. 2) for handle ``dst`` of a node from its handle
    ``src`` in a child, ``C = sg Ct`` (Ct in T[ct], gamma in ``gamma[J]``)."""
    t6 = _ctv(T, ct, gamma, J)
    for a in range(6):
        bh[dst, a] = bh[src, a] - sg * t6[a]


@inline
def _handle_C(k, lay, X, J, Phi, T, t):
    """Handle k of the node C of joint J (RL eq. 2), as
    :func:`~articulated.algorithms.blocks._handle_Ct` (same ``lay``, ``X``) but without
    copies where none is
    needed: ``Ct_k = X Phi^A_{2k}`` into T[t] (a transposed block read in place,
    :func:`~articulated.algorithms.blocks._xj_rows_T`), ``Ct_k = Phi^B_{1k}`` read in place
    from ``Phi`` unless stored transposed (then copied into T[t]). Returns ``(s_k, slot of
    the handle in its child, in_place, index)``: Ct_k is ``Phi[index]`` if ``in_place``,
    else ``T[index]``."""
    jt, XJ_E, XJ_r = X
    fromA, kk = _child_slot(k, lay.nAo, lay.ca, lay.cb)
    if fromA:
        row, tr = _blk(lay.hA, lay.oA, lay.n_slots, lay.nhA, lay.ca, kk)
        if tr:
            _xj_rows_T(jt, XJ_E, XJ_r, J, Phi, row, T, t)
        else:
            _xj_rows(jt, XJ_E, XJ_r, J, Phi, row, T, t)
        return 1.0, lay.hA + kk, False, t
    row, tr = _blk(lay.hB, lay.oB, lay.n_slots, lay.nhB, lay.cb, kk)
    if tr:
        _copy_block(Phi, row, tr, T, t)
        return -1.0, lay.hB + kk, False, t
    return -1.0, lay.hB + kk, True, row


@inline
def _g_rows5(L, Ld, J, Z, z, sg, out, o):
    """``out[o][:5] = sg K_FF^-1 Ct[F, :] = sg L^-T D^-1 Z[z][:5]`` from the rows
    ``Z = L^-1 Ct[F, :]`` of :func:`~articulated.algorithms.blocks._zrows5` (factor of
    :func:`~articulated.algorithms.blocks._chol5_perm`): back substitution, as in
    :func:`~articulated.algorithms.blocks._solve5`."""
    e0 = Ld[J, 0]
    e1 = Ld[J, 1]
    e2 = Ld[J, 2]
    e3 = Ld[J, 3]
    e4 = Ld[J, 4]
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
        x4 = Z[z, 4, n] * e4
        x3 = Z[z, 3, n] * e3 - l43 * x4
        x2 = Z[z, 2, n] * e2 - l32 * x3 - l42 * x4
        x1 = Z[z, 1, n] * e1 - l21 * x2 - l31 * x3 - l41 * x4
        x0 = Z[z, 0, n] * e0 - l10 * x1 - l20 * x2 - l30 * x3 - l40 * x4
        out[o, 0, n] = sg * x0
        out[o, 1, n] = sg * x1
        out[o, 2, n] = sg * x2
        out[o, 3, n] = sg * x3
        out[o, 4, n] = sg * x4


@inline
def _leaf(i, tree, inp, fr, co):
    """The biases of leaf node i (RGL eq. 3 with the body's velocity unless quasi-static;
    :func:`~articulated.algorithms.handles._leaf_bias`) from the bundles."""
    _leaf_bias(tree.node_body[i], i, tree, inp.v, inp.f_ext, inp.quasi_static, fr.z, co.bh,
               tree.node_hoff[i])


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
    G_k^T Q_l[:, F]^T``), so neither ``Y`` nor any dense ``W C_k`` is formed. A node
    neither of whose children has a joint (two bodies: ``Psi = 0, p = 0, eta = 0``, RL
    Lemma 1) has ``Y' = 0`` and ``Q_k = 0``: it forms only ``U_k``, and its blocks are the
    rank-d ``Psi^C_kl = U_k^T A_J U_l``
    (:func:`~articulated.algorithms.metric._single_joint_metric`).

    Scratch: T (12 + 4 hmax, 6, 6), V6 (8, 6), Xr (3, 3, 3) and xq (3, 3). ``args``: a
    :func:`~articulated._byref.byref` pointer to a
    :class:`~articulated.algorithms.bundles.NodeArgs` (:func:`update_nodes` takes the bundle
    itself)."""
    bundle = deref(args)
    tree, inp, fr, co, sc = (bundle.model, bundle.inputs, bundle.frames, bundle.coef,
                             bundle.scratch)
    metric, frames = bundle.metric, bundle.update_frames
    T, V6 = sc.T, sc.V6
    # the factor of K_FF: strict lower triangle of L in T[10] (flattened), 1 / diag in T[11]
    Lf = T[10].reshape(1, 36)
    Ldf = T[11].reshape(1, 36)
    for u in range(n_upd):
        i = nodes[u]
        J = tree.node_joint[i]
        if J < 0:
            _leaf(i, tree, inp, fr, co)
            continue
        A, B, ca, cb, nAo = _children(i, tree)
        nhA, hA, oA, nhB, hB, oB = _child_blocks(i, tree)
        # a leaf child has Psi = 0, p = 0, eta = 0 (RL Lemma 1): its terms are skipped
        psiA = A >= 0 and tree.node_joint[A] >= 0
        psiB = tree.node_joint[B] >= 0
        nC = tree.node_nh[i]
        hC = tree.node_hoff[i]
        oC = tree.node_ooff[i]
        # an inactive (rigidified) joint has S = 0 (RGL Sec. 4.2): d = 0, all six
        # coordinates constrained, W = V, and the node's coefficients are the rigid-state
        # ones of RGL eq. 6
        if inp.active[J]:
            d = tree.jnv[J]
            nf = tree.nfree[J]
        else:
            d = 0
            nf = 6
        va = tree.vadr[J]
        if frames:
            principal_joint_transform(J, tree.jtype, tree.qadr, tree.Xtree_rot, tree.axis,
                                      tree.Xtree_E, tree.Xtree_r, inp.q,
                                      fr.Xup_E, fr.Xup_r, fr.XJ_E, fr.XJ_r)
        # ---- K = X Phi^A_2 X^T + Phi^B_1 (T0; diagonal blocks, read in place)
        rowB = hB + cb
        jt = tree.jtype[J]
        lay = ChildLayout(A, B, ca, cb, nAo, nhA, hA, oA, nhB, hB, oB, tree.n_slots)
        X = (jt, fr.XJ_E, fr.XJ_r)
        if A >= 0:
            _xj_congruence_add(jt, fr.XJ_E, fr.XJ_r, J, co.Phi, hA + ca, co.Phi, rowB, T, 0)
        else:
            _copy_block(co.Phi, rowB, False, T, 0)
            _root_bias(J, fr.Xup_E, fr.Xup_r, tree.H_E, tree.H_r, tree.gravity, fr.b_world)
        # ---- beta (V6[0]), Q (V6[1])
        _node_beta(jt, J, lay, fr, inp, co, V6)
        for a in range(6):
            V6[1, a] = 0.0                                     # Q in S coordinates
        for rr in range(d):
            V6[1, rr] = inp.tau[va + rr]
        # ---- Cholesky factor of K_FF (Lf, Ldf); W, P, D, gamma (V6[2]) and R (V6[3])
        pJ = tree.perm[J:J + 1]
        if nf == 5:
            _chol5_perm(T, 0, pJ, 0, Lf, Ldf)
            _joint_coefficients5(J, tree.perm, T, Lf, Ldf, V6, co.W, co.P, co.D, co.gamma, co.R)
        else:
            if nf > 0:
                for a in range(nf):
                    pa = tree.perm[J, a]
                    for c in range(a + 1):
                        T[1, a, c] = T[0, pa, tree.perm[J, c]]
                _chol(T, 1, nf, Lf, Ldf, 0)
            if nf == 6:
                # rigidified or fixed joint (d = 0): unrolled
                _joint_coefficients(J, 6, 0, tree.perm, T, Lf, Ldf, V6, co)
            else:
                _joint_coefficients(J, nf, d, tree.perm, T, Lf, Ldf, V6, co)
        # no child with a joint (both bodies): Y' = 0, Q_k = 0, and the metric is the
        # rank-d U_k^T A_J U_l of :func:`~articulated.algorithms.metric._single_joint_metric`
        hasY = metric and (psiA or psiB)
        if metric:
            # ---- Y' = X Psi^A_2 X^T + Psi^B_1 (T5), Y'_FF (T2, F coordinates), P_F^T (T4)
            if hasY:
                _y_prime(psiA, psiB, lay, X, J, co.Psi, T, 5)
                for a in range(nf):
                    pa = tree.perm[J, a]
                    for c in range(nf):
                        T[2, a, c] = T[5, pa, tree.perm[J, c]]
            for rr in range(d):                            # P_F^T (T4)
                for a in range(nf):
                    T[4, rr, a] = co.P[J, tree.perm[J, a], rr]
            _metric_bias(i, X, J, lay, d, hasY, co, inp.Aw, T, V6)
        if nC == 0:                                  # a root node: no handles
            continue
        # ---- per handle k of C, with C_k = s_k Ct_k (Ct_k in T7; s_k = 1 for a handle of
        # A, -1 for one of B): b^C_k = b_k - C_k^T gamma and Z_k = L^-1 Ct_k[F, :]
        # (T[12 + 4k]); with the metric also Q_k^T with its rows in F-first order
        # (T[13 + 4k]), [G_k; U_k] (T[14 + 4k]) and [Q_k[:, F]^T + Y'_FF G_k; A_J U_k]
        # (T[15 + 4k]), and p^C_k = p_k + 2 Q_k gamma + C_k^T z
        for k in range(nC):
            ck = 12 + 4 * k
            sg, src, inplace, ct = _handle_C(k, lay, X, J, co.Phi, T, 7)
            Ct = co.Phi if inplace else T
            hasQ = psiA if k < nAo else psiB
            dst = hC + k
            _handle_b(Ct, ct, sg, src, dst, J, co.gamma, co.bh)
            if nf == 5:
                _zrows5(Lf, Ldf, 0, pJ, Ct, ct, T, ck)
            elif nf > 0:
                for a in range(nf):
                    pa = tree.perm[J, a]
                    for c in range(6):
                        T[ck, a, c] = Ct[ct, pa, c]
                if nf == 6:                                # rigidified: unrolled
                    _fwd_rows(Lf, Ldf, 0, 6, T, ck)
                else:
                    _fwd_rows(Lf, Ldf, 0, nf, T, ck)
            if not metric:
                continue
            if not hasY:
                # U_k = s_k (Ct_k[J, :] + P_F^T Ct_k[F, :]) alone, in rows 0.. of T[ck + 2]
                for a in range(nf):
                    pa = tree.perm[J, a]
                    for c in range(6):
                        T[1, a, c] = Ct[ct, pa, c]
                for rr in range(d):
                    jr = tree.perm[J, nf + rr]
                    for c in range(6):
                        T[ck + 2, rr, c] = sg * Ct[ct, jr, c]
                _rows_mul(T, 4, d, nf, T, 1, 0, T, ck + 2, 0, sg, True)
                continue
            if hasQ:                                       # rows in F-first order
                _handle_QT_rows(k, lay, X, J, co.Psi, tree.perm, T, ck + 1, 3)
            # G_k = K_FF^-1 C_k[F, :] and U_k = P^T C_k = s_k (Ct_k[J, :] + P_F^T Ct_k[F, :])
            # (Ct_k[F, :] gathered in T1)
            for a in range(nf):
                pa = tree.perm[J, a]
                for c in range(6):
                    T[1, a, c] = Ct[ct, pa, c]
            if nf == 5:
                _g_rows5(Lf, Ldf, 0, T, ck, sg, T, ck + 2)
            else:
                _rows_mul(T, 8, nf, nf, T, 1, 0, T, ck + 2, 0, sg, False)
            for rr in range(d):
                jr = tree.perm[J, nf + rr]
                for c in range(6):
                    T[ck + 2, nf + rr, c] = sg * Ct[ct, jr, c]
            _rows_mul(T, 4, d, nf, T, 1, 0, T, ck + 2, nf, sg, True)
            # [Q_k[:, F]^T + Y'_FF G_k; A_J U_k]
            for a in range(nf):
                for c in range(6):
                    T[ck + 3, a, c] = T[ck + 1, a, c] if hasQ else 0.0
            if hasY:
                _rows_mul(T, 2, nf, nf, T, ck + 2, 0, T, ck + 3, 0, 1.0, True)
            _rows_mul(inp.Aw, J, d, d, T, ck + 2, nf, T, ck + 3, nf, 1.0, False)
            _handle_p(Ct, ct, T, ck + 1, tree.perm, J, hasQ, sg, src, dst, V6, co.ph)
        # ---- blocks (k, l), k <= l: Phi^C_kl = [same] Phi_kl - s_k s_l Z_k^T Z_l
        # (D^-1-weighted for |F| = 5) and, with the metric, Psi^C_kl as above
        for k in range(nC):
            ck = 12 + 4 * k
            fromA_k, kk = _child_slot(k, nAo, ca, cb)
            for l in range(k, nC):
                cl = 12 + 4 * l
                fromA_l = l < nAo
                dst, _t = _blk(hC, oC, tree.n_slots, nC, k, l)
                same = fromA_k == fromA_l
                if same:
                    _, ll = _child_slot(l, nAo, ca, cb)
                    if fromA_l:
                        row, tr = _blk(hA, oA, tree.n_slots, nhA, kk, ll)
                    else:
                        row, tr = _blk(hB, oB, tree.n_slots, nhB, kk, ll)
                else:
                    row = 0
                    tr = False
                sg = -1.0 if same else 1.0
                if nf == 5:
                    if k == l:
                        _pair5_sym(T, ck, Ldf, 0, co.Phi, row, co.Phi, dst)
                    else:
                        _pair5(T, ck, cl, Ldf, 0, co.Phi, row, tr, same, sg, co.Phi, dst)
                else:
                    if same:
                        _copy_block(co.Phi, row, tr, co.Phi, dst)
                    else:
                        for a in range(6):
                            for c in range(6):
                                co.Phi[dst, a, c] = 0.0
                    if nf == 6:                            # rigidified: unrolled
                        if k == l:
                            _outer_sym(T, ck, 6, co.Phi, dst)
                        else:
                            _outer_acc(T, ck, cl, 6, co.Phi, dst, sg)
                    elif nf > 0:
                        if k == l:
                            _outer_sym(T, ck, nf, co.Phi, dst)
                        else:
                            _outer_acc(T, ck, cl, nf, co.Phi, dst, sg)
                if not hasY:
                    continue
                if k == l:                                 # upper triangle, mirrored
                    _psi_diag(T, ck, psiA if fromA_k else psiB, nf, co.Psi, row, dst)
                    continue
                if same and (psiA if fromA_l else psiB):
                    _copy_block(co.Psi, row, tr, co.Psi, dst)
                else:
                    for a in range(6):
                        for c in range(6):
                            co.Psi[dst, a, c] = 0.0
                if psiA if fromA_k else psiB:
                    _outer_acc(T, ck + 1, cl + 2, nf, co.Psi, dst, 1.0)    # Q_k[:, F] G_l
                _outer_acc(T, ck + 2, cl + 3, 6, co.Psi, dst, 1.0)
        if metric and not hasY:
            _single_joint_metric(nC, hC, oC, tree.n_slots, J, d, inp.Aw, T, V6, co.Psi, co.ph)
    if frames:
        # the hierarchical frames in a pass of their own (post-order: children first):
        # inside the loop above they made each node's update markedly slower
        for u in range(n_upd):
            i = nodes[u]
            if tree.node_joint[i] >= 0:
                _node_frames(i, tree, fr)


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
    bundle = deref(args)
    tree, inp, fr, co, sc = (bundle.model, bundle.inputs, bundle.frames, bundle.coef,
                             bundle.scratch)
    metric = bundle.metric
    T, V6 = sc.T, sc.V6
    for u in range(n_upd):
        i = nodes[u]
        J = tree.node_joint[i]
        if J < 0:
            _leaf(i, tree, inp, fr, co)
            continue
        A, B, ca, cb, nAo = _children(i, tree)
        nhA, hA, oA, nhB, hB, oB = _child_blocks(i, tree)
        psiA = A >= 0 and tree.node_joint[A] >= 0
        psiB = tree.node_joint[B] >= 0
        jt = tree.jtype[J]
        lay = ChildLayout(A, B, ca, cb, nAo, nhA, hA, oA, nhB, hB, oB, tree.n_slots)
        X = (jt, fr.XJ_E, fr.XJ_r)
        d = tree.jnv[J] if inp.active[J] else 0
        if A < 0:
            _root_bias(J, fr.Xup_E, fr.Xup_r, tree.H_E, tree.H_r, tree.gravity, fr.b_world)
        _node_beta(jt, J, lay, fr, inp, co, V6)
        for a in range(6):
            V6[1, a] = 0.0
        for rr in range(d):
            V6[1, rr] = inp.tau[tree.vadr[J] + rr]
        _gamma_R(J, d, co.W, co.P, co.D, V6, co.gamma, co.R)
        if metric:
            hasY = psiA or psiB
            if hasY:
                _y_prime(psiA, psiB, lay, X, J, co.Psi, T, 5)
            _metric_bias(i, X, J, lay, d, hasY, co, inp.Aw, T, V6)
        hC = tree.node_hoff[i]
        for k in range(tree.node_nh[i]):
            sg, src, inplace, ct = _handle_C(k, lay, X, J, co.Phi, T, 7)
            Ct = co.Phi if inplace else T
            hasQ = metric and (psiA if k < nAo else psiB)
            if hasQ:
                _handle_QT_rows(k, lay, X, J, co.Psi, tree.perm, T, 3, 9)
            _handle_b(Ct, ct, sg, src, hC + k, J, co.gamma, co.bh)
            if metric:
                _handle_p(Ct, ct, T, 3, tree.perm, J, hasQ, sg, src, hC + k, V6, co.ph)


@njit(**KERNEL)
def _tensor_scratch(i, args):
    """The dense blocks of the internal, non-root node i that
    :func:`~articulated.algorithms.passive.tensorize_node` reads, right after the node's
    :func:`_update_nodes` (same arguments, ``nodes`` replaced by i): X (T1), W (T2), P (T3),
    D (T4), Y' (T5) and per handle k: ``C_k`` (T[12 + 4k]) and ``Q_k`` (T[14 + 4k]) of RL
    eqs. 2 and 9. :func:`_update_nodes` itself forms none of them densely."""
    bundle = deref(args)
    tree, fr, co, T = bundle.model, bundle.frames, bundle.coef, bundle.scratch.T
    J = tree.node_joint[i]
    A, B, ca, cb, nAo = _children(i, tree)
    nhA, hA, oA, nhB, hB, oB = _child_blocks(i, tree)
    psiA = A >= 0 and tree.node_joint[A] >= 0
    psiB = tree.node_joint[B] >= 0
    jt = tree.jtype[J]
    lay = ChildLayout(A, B, ca, cb, nAo, nhA, hA, oA, nhB, hB, oB, tree.n_slots)
    X = (jt, fr.XJ_E, fr.XJ_r)
    xform_dense_at(fr.XJ_E, fr.XJ_r, J, T, 1)
    for a in range(6):
        for c in range(6):
            T[2, a, c] = co.W[J, a, c]
            T[3, a, c] = co.P[J, a, c]
            T[4, a, c] = co.D[J, a, c]
    _y_prime(psiA, psiB, lay, X, J, co.Psi, T, 5)
    for k in range(tree.node_nh[i]):
        ck = 12 + 4 * k
        sg, _src = _handle_Ct(k, lay, X, J, co.Phi, T, ck)
        for a in range(6):
            for c in range(6):
                T[ck, a, c] *= sg
        if psiA if k < nAo else psiB:
            _handle_QT(k, lay, X, J, co.Psi, T, ck + 1)
            for a in range(6):
                for c in range(6):
                    T[ck + 2, a, c] = T[ck + 1, c, a]


@njit(**KERNEL)
def update_nodes(nodes, n_upd, args):
    """:func:`_update_nodes` with its bundle ``args`` (for callers in Python)."""
    _update_nodes(nodes, n_upd, byref(args))


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
