"""Linear-coefficient tensors of passive nodes (RGL Sec. 6.2).

Linear-coefficient tensors of passive nodes (Redon, Galoppo & Lin 2005, RGL Sec. 6.2,
Theorems 3-4, eq. 9): the fully articulated coefficients of a rigidified subassembly as
functions of its rigid velocity, so that converting a hybrid body to the fully articulated
state costs O(1) per passive node instead of O(size of its subtree).

A *passive* node (RGL Sec. 4.1) has every joint of its subassembly rigidified, so its
internal configuration is constant and the subassembly moves as one rigid body with twist
``v`` (a spatial velocity, [rad/s; m/s], in the frame of the node's principal handle, RL
Sec. 5.1). Its articulated-body coefficients of the fully articulated state (RGL eq. 2,
RL eq. 9) then split as follows:

* ``Phi``, ``Psi``, ``W``, ``P``, ``D`` depend on the internal configuration and the joint
  weights only: constant, cached once when the node becomes passive;
* the bias accelerations ``b_k`` (RGL eq. 3: leaves ``I^-1 (-v_b x* I v_b)``, with
  ``v_b = X_b v`` for a constant ``X_b``; the joint velocity products vanish), the node
  quantities ``beta``, ``gamma``, ``R`` and the metric coefficients ``p_k`` are linear in
  the leaves' velocity-product forces, hence *quadratic* in ``v`` plus a constant (the
  joint forces ``tau`` held on the internal joints);
* the metric constant ``eta`` (RL eq. 9: quadratic in ``gamma`` and ``R``) is *quartic*
  in ``v``.

RGL store these as rank-3 tensors (``B_1``, ``B_2``, ``P_1``, ``P_2``) and a rank-4 tensor
``E``. We store the same maps over the monomial vector

    m(v) = [1, w_j w_l (j <= l), w_j u_l, u_j u_l (j <= l)]   (K = 22 entries)

for ``v = [w; u]`` (the 21 products ``v_j v_l``, j <= l, grouped by class, :data:`LO`),
as ``b_k = Bt[k] m(v)`` (6 x K per handle slot; ``Bt`` for the biases, ``Pt`` for ``p``),
``beta = betaT[J] m(v)`` (6 x K per joint; the joint's ``gamma`` and ``R``, formed on the
way, are not kept: a node update computes its own) and ``eta =
m(v)^T G m(v)`` (K x K per node: the rank-4 tensor ``E`` as a Gram form over the quadratic
monomials, which is what the recurrence of eq. 9 produces). A child's twist is a constant
motion transform ``X`` of its parent's, and ``m(X v) = M(X) m(v)`` with the K x K monomial
map ``M`` (:func:`_monomial_map`), so a node's tensors follow from its children's by RL
eq. 9 applied column by column (:func:`tensorize_node`), in O(1) per node, when the node
becomes passive (RGL: "updated only when a node becomes rigid"). External forces are not
in the tensors: nodes with applied forces on their bodies or joints are recomputed
exactly (RGL's force-update region).

Reference frames. The twist ``v`` may be expressed in any frame fixed to the rigid
subassembly: each node's tensors are functions of ``m(v_ref)``, ``v_ref = X_ref v`` for a
constant transform ``(ref_E, ref_r)`` from its principal-handle frame. The nodes that
become passive in one region update share the frame of their topmost one
(:func:`~articulated.algorithms.hybrid.tensorize_nodes`), so between them ``M`` is the
identity and eq. 9 needs only the 6 x 6 by 6 x K products: about 15,000 multiply-adds per
node (1-DOF joint, two handles) instead of about 75,000 with the two K x K congruences
``M^T G M`` and the 6 x K by K x K products. The topmost one takes the frame of its first
internal child tensorized in an earlier update, if any; only another such child is
mapped.
"""

from __future__ import annotations

from numba import njit

from .._byref import deref
from ..config import inline, KERNEL
from ..spatial import xform_motion_at
from .blocks import _child_blocks, _child_slot, _children

K = 22
"""Length of the monomial vector ``m(v)``: 1 and the 21 products ``v_j v_l``, j <= l."""

LO = (1, 7, 16)
"""First index of each class of monomials in ``m(v)`` for a twist ``v = [w; u]``:
angular-angular ``w_j w_l`` (1-6), angular-linear ``w_j u_l`` (7-15), linear-linear
``u_j u_l`` (16-21). A motion transform maps angular velocity to angular velocity only (its
upper-right 3 x 3 block is zero), so its monomial map (:func:`_monomial_map`) has
``M[r, c] = 0`` unless r's class is c's or a later one."""


@inline
def _midx(j, l):
    """Index of the monomial ``v_j v_l`` (j <= l) in ``m(v)``, grouped by class
    (:data:`LO`)."""
    if l < 3:
        return 1 + 3 * j - (j * (j - 1)) // 2 + (l - j)
    if j < 3:
        return 7 + 3 * j + (l - 3)
    jj = j - 3
    return 16 + 3 * jj - (jj * (jj - 1)) // 2 + (l - j)


@inline
def monomials(v, m):
    """m[:] = m(v) for a twist ``v`` (6 floats)."""
    m[0] = 1.0
    for j in range(6):
        for l in range(j, 6):
            m[_midx(j, l)] = v[j] * v[l]


@inline
def _monomial_map(X, t, M, o):
    """M[o] = the K x K map with ``m(X v) = M m(v)`` for the dense 6 x 6 matrix X[t]."""
    for r in range(K):
        for c in range(K):
            M[o, r, c] = 0.0
    M[o, 0, 0] = 1.0
    for a in range(6):
        for b in range(a, 6):
            r = _midx(a, b)
            for j in range(6):
                xa = X[t, a, j]
                xb = X[t, b, j]
                M[o, r, _midx(j, j)] = xa * xb
                for l in range(j + 1, 6):
                    M[o, r, _midx(j, l)] = xa * X[t, b, l] + X[t, a, l] * xb


@inline
def _right(Bsrc, s, M, o, out, t, scale, same):
    """out[t] = scale * Bsrc[s] M[o] (6 x K times K x K); M's first row and column are e_0.
    With ``same`` (the source shares the frame of its tensors with out's, M = identity)
    out[t] = scale * Bsrc[s]."""
    if same:
        for a in range(6):
            for c in range(K):
                out[t, a, c] = scale * Bsrc[s, a, c]
        return
    for a in range(6):
        out[t, a, 0] = scale * Bsrc[s, a, 0]
        for c in range(1, K):
            x = 0.0
            for k in range(1, K):
                x += Bsrc[s, a, k] * M[o, k, c]
            out[t, a, c] = scale * x


@inline
def _left(T, i, ta, S, s, out, t, sg):
    """out[t] += sg op(T[i]) S[s] (6 x 6 times 6 x K): :func:`_left_rows` of all six
    rows."""
    _left_rows(T, i, ta, S, s, out, t, sg, 6)


@inline
def _left_rows(T, i, ta, S, s, out, t, sg, nr):
    """The first ``nr`` rows of out[t] += sg op(T[i]) S[s] (6 x 6 times 6 x K): one loop
    over the K columns per row of op(T[i]), with the row's six entries in registers (LLVM
    vectorizes it)."""
    for a in range(nr):
        if ta:
            x0, x1, x2 = T[i, 0, a], T[i, 1, a], T[i, 2, a]
            x3, x4, x5 = T[i, 3, a], T[i, 4, a], T[i, 5, a]
        else:
            x0, x1, x2 = T[i, a, 0], T[i, a, 1], T[i, a, 2]
            x3, x4, x5 = T[i, a, 3], T[i, a, 4], T[i, a, 5]
        for c in range(K):
            out[t, a, c] += sg * (x0 * S[s, 0, c] + x1 * S[s, 1, c] + x2 * S[s, 2, c]
                                  + x3 * S[s, 3, c] + x4 * S[s, 4, c] + x5 * S[s, 5, c])


@inline
def _child_gram_add(G, child, same, M, o, Gs):
    """``Gs[0] +=`` the Gram tensor of ``child`` in the node's frame: ``G[child]`` as it is
    when the child shares the frame (``same``), else mapped, ``M[o]^T G[child] M[o]``
    (:func:`_gram_add`; ``Gs[1]`` scratch)."""
    if same:
        for r in range(K):
            for c in range(K):
                Gs[0, r, c] += G[child, r, c]
    else:
        _gram_add(G, child, M, o, Gs[0], Gs[1])


@inline
def _gram_add(G, src, M, o, out, tmp):
    """out += M[o]^T G[src] M[o] (K x K); tmp (K, K) scratch. The second product skips the
    zero rows of M's columns (:data:`LO`; exact zeros, so the same sums), in one loop per
    class with constant bounds, which LLVM unrolls and vectorizes over c (bounds that vary
    with the column are slower)."""
    for r in range(K):
        for c in range(K):
            x = 0.0
            for k in range(K):
                x += G[src, r, k] * M[o, k, c]
            tmp[r, c] = x
    for c in range(K):
        out[0, c] += tmp[0, c]
    for r in range(1, 7):
        for c in range(K):
            x = 0.0
            for k in range(1, K):
                x += M[o, k, r] * tmp[k, c]
            out[r, c] += x
    for r in range(7, 16):
        for c in range(K):
            x = 0.0
            for k in range(7, K):
                x += M[o, k, r] * tmp[k, c]
            out[r, c] += x
    for r in range(16, K):
        for c in range(K):
            x = 0.0
            for k in range(16, K):
                x += M[o, k, r] * tmp[k, c]
            out[r, c] += x


@njit(**KERNEL)
def tensorize_node(i, args, lz, tens, sameA, sameB):
    """Tensors of the passive internal, non-root node i (joint J, children A and B, the
    ``d`` dofs of J in the fully articulated state) by RL eqs. 2 and 9 column by column
    (module docstring), into ``Bt, Pt, G, betaT`` of the
    :class:`~articulated.algorithms.bundles.PassiveTensors` ``lz``.

    ``args``: a :func:`~articulated._byref.byref` pointer to the
    :class:`~articulated.algorithms.bundles.NodeArgs` of the fully articulated coefficient
    set (the tree, the joint forces ``tau`` and weights ``Aw``, the scratch ``T``). Must
    run right after :func:`~articulated.algorithms.node_update._tensor_scratch`, whose
    scratch ``T`` holds X (T1), W (T2), P (T3), D (T4), Y' (T5) and per handle k of C: C_k
    (T[12+4k]) and Q_k (T[14+4k]). ``tens = (MX, M, S, Gs)``: ``MX`` (2, 6, 6) the dense
    motion transforms from the reference frame of i's tensors to those of A's and B's
    (read unless ``sameA``, ``sameB``: the child's tensors are in i's reference frame, the
    map is the identity), scratch M (2, K, K), S (8, 6, K), Gs (2, K, K). The children's
    tensors must be up to date."""
    bundle = deref(args)
    tree, inp, T = bundle.model, bundle.inputs, bundle.scratch.T
    tau, Aw = inp.tau, inp.Aw
    MX, M, S, Gs = tens
    Bt, Pt, G, betaT = lz.Bt, lz.Pt, lz.G, lz.betaT
    J = tree.node_joint[i]
    d = tree.jnv[J]
    va = tree.vadr[J]
    A, B, ca, cb, nAo = _children(i, tree)
    _nhA, hA, _oA, _nhB, hB, _oB = _child_blocks(i, tree)
    nC = tree.node_nh[i]
    hC = tree.node_hoff[i]
    psiA = tree.node_joint[A] >= 0
    psiB = tree.node_joint[B] >= 0
    if not sameA:
        _monomial_map(MX, 0, M, 0)                              # m(v_A) = M_A m(v)
    if not sameB:
        _monomial_map(MX, 1, M, 1)                              # m(v_B) = M_B m(v)
    # beta = X b^A_2 - b^B_1 (S2); S0 = b^A_2, S2 = -b^B_1 in C's monomials
    _right(Bt, hA + ca, M, 0, S, 0, 1.0, sameA)
    _right(Bt, hB + cb, M, 1, S, 2, -1.0, sameB)
    _left(T, 1, False, S, 0, S, 2, 1.0)
    # gamma = W beta + P Q (S3), R = D Q - P^T beta (S4); Q = tau in the constant column
    for a in range(6):
        for c in range(K):
            S[3, a, c] = 0.0
            S[4, a, c] = 0.0
    _left(T, 2, False, S, 2, S, 3, 1.0)
    _left_rows(T, 3, True, S, 2, S, 4, -1.0, d)                 # the d rows of -P^T beta
    for rr in range(d):
        for a in range(6):
            S[3, a, 0] += T[3, a, rr] * tau[va + rr]
        for ss in range(d):
            S[4, rr, 0] += T[4, rr, ss] * tau[va + ss]
    for a in range(6):
        for c in range(K):
            betaT[J, a, c] = S[2, a, c]
    # w = p^B_1 - X p^A_2 (S5), Y' gamma (S6), A_J R (S7)
    for a in range(6):
        for c in range(K):
            S[5, a, c] = 0.0
            S[6, a, c] = 0.0
            S[7, a, c] = 0.0
    if psiB:
        _right(Pt, hB + cb, M, 1, S, 5, 1.0, sameB)
    if psiA:
        _right(Pt, hA + ca, M, 0, S, 0, 1.0, sameA)
        _left(T, 1, False, S, 0, S, 5, -1.0)
    _left(T, 5, False, S, 3, S, 6, 1.0)
    for rr in range(d):
        for c in range(K):
            x = 0.0
            for ss in range(d):
                x += Aw[J, rr, ss] * S[4, ss, c]
            S[7, rr, c] = x
    # G = M_A^T G_A M_A + M_B^T G_B M_B + sym(gamma^T (Y' gamma + w) + R^T A_J R): the
    # symmetric part of gamma^T Y' gamma + gamma^T w is gamma^T Y' gamma + sym(gamma^T w)
    for a in range(6):
        for c in range(K):
            S[0, a, c] = S[6, a, c] + S[5, a, c]
    for r in range(K):
        g0, g1, g2 = S[3, 0, r], S[3, 1, r], S[3, 2, r]
        g3, g4, g5 = S[3, 3, r], S[3, 4, r], S[3, 5, r]
        for c in range(K):
            Gs[0, r, c] = (g0 * S[0, 0, c] + g1 * S[0, 1, c] + g2 * S[0, 2, c]
                           + g3 * S[0, 3, c] + g4 * S[0, 4, c] + g5 * S[0, 5, c])
    for rr in range(d):
        for r in range(K):
            g = S[4, rr, r]
            for c in range(K):
                Gs[0, r, c] += g * S[7, rr, c]
    if psiA:
        _child_gram_add(G, A, sameA, M, 0, Gs)
    if psiB:
        _child_gram_add(G, B, sameB, M, 1, Gs)
    for r in range(K):
        for c in range(K):
            G[i, r, c] = 0.5 * (Gs[0, r, c] + Gs[0, c, r])
    # z = W (w + 2 Y' gamma) - 2 P A_J R (S1; S0 = w + 2 Y' gamma)
    for a in range(6):
        for c in range(K):
            S[0, a, c] = S[5, a, c] + 2.0 * S[6, a, c]
            S[1, a, c] = 0.0
    _left(T, 2, False, S, 0, S, 1, 1.0)
    for a in range(6):
        for c in range(K):
            x = 0.0
            for rr in range(d):
                x += T[3, a, rr] * S[7, rr, c]
            S[1, a, c] -= 2.0 * x
    # per handle k: b^C_k = b_k - C_k^T gamma; p^C_k = p_k + 2 Q_k gamma + C_k^T z
    for k in range(nC):
        ck = 12 + 4 * k
        fromA, kk = _child_slot(k, nAo, ca, cb)
        if fromA:
            src = hA + kk
            o = 0
            hasQ = psiA
            same = sameA
        else:
            src = hB + kk
            o = 1
            hasQ = psiB
            same = sameB
        _right(Bt, src, M, o, S, 0, 1.0, same)
        _left(T, ck, True, S, 3, S, 0, -1.0)
        for a in range(6):
            for c in range(K):
                Bt[hC + k, a, c] = S[0, a, c]
        if hasQ:
            _right(Pt, src, M, o, S, 0, 1.0, same)
            _left(T, ck + 2, False, S, 3, S, 0, 2.0)
        else:
            for a in range(6):
                for c in range(K):
                    S[0, a, c] = 0.0
        _left(T, ck, True, S, 1, S, 0, 1.0)
        for a in range(6):
            for c in range(K):
                Pt[hC + k, a, c] = S[0, a, c]


@inline
def _rows6(A, s, mv, out, t):
    """out[t, :] = A[s] m (6 x K times the monomials ``mv``): the six sums accumulate side
    by side, each in the order of ``c`` (the same roundings as one sum per row, without
    waiting on one chain of K additions)."""
    y0 = y1 = y2 = y3 = y4 = y5 = 0.0
    for c in range(K):
        m = mv[c]
        y0 += A[s, 0, c] * m
        y1 += A[s, 1, c] * m
        y2 += A[s, 2, c] * m
        y3 += A[s, 3, c] * m
        y4 += A[s, 4, c] * m
        y5 += A[s, 5, c] * m
    out[t, 0] = y0
    out[t, 1] = y1
    out[t, 2] = y2
    out[t, 3] = y3
    out[t, 4] = y4
    out[t, 5] = y5


@inline
def evaluate_node(i, tree, v, lz, co, biases):
    """Fully articulated coefficients of the passive node i (joint J, -1 for a leaf; ``nh``
    handles from slot ``ho``; ``tree`` a :class:`~articulated.algorithms.bundles.NodeModel`)
    at the rigid twist ``v`` (6 floats, principal-handle frame; moved to the reference frame
    of the node's tensors, module docstring) from the tensors ``Bt, Pt,
    G, betaT`` of the :class:`~articulated.algorithms.bundles.PassiveTensors` ``lz`` into
    the :class:`~articulated.algorithms.bundles.Coefficients` ``co``: with ``biases`` the
    ``bh`` of its slots (read by its parent's node update), and always the ``ph`` of its
    slots, ``eta[i]`` and ``beta`` of J (read by the back-substitution and its metric).
    ``lz.mv`` (K,) scratch. The joint's ``gamma`` and ``R`` have no tensors: a node update
    computes its own joint's ``gamma``, ``R`` before reading them."""
    J, nh, ho = tree.node_joint[i], tree.node_nh[i], tree.node_hoff[i]
    mv, Bt, Pt, G, betaT = lz.mv, lz.Bt, lz.Pt, lz.G, lz.betaT
    bh, ph, eta, beta = co.bh, co.ph, co.eta, co.beta
    monomials(xform_motion_at(lz.ref_E, lz.ref_r, i, v), mv)     # the reference-frame twist
    leaf = J < 0                  # p = 0 and eta = 0 (RL Lemma 1): Pt, G zero
    for k in range(nh):
        s = ho + k
        if leaf:
            for a in range(6):
                ph[s, a] = 0.0
        else:
            _rows6(Pt, s, mv, ph, s)
        if biases:
            _rows6(Bt, s, mv, bh, s)
    e = 0.0
    if not leaf:
        for r in range(0, K, 2):      # two rows at a time: two independent sums
            x0 = 0.0
            x1 = 0.0
            for c in range(K):
                x0 += G[i, r, c] * mv[c]
                x1 += G[i, r + 1, c] * mv[c]
            e += mv[r] * x0
            e += mv[r + 1] * x1
    eta[i] = e
    if J >= 0:
        _rows6(betaT, J, mv, beta, J)


@inline
def evaluate_fresh(c, v, tree, co, lz, biases):
    """:func:`evaluate_node` for node c at twist ``v`` (a 6-tuple), kept in
    ``lz.vnode[c]``, and mark c fresh (appended to ``lz.fresh_list[lz.nfresh[0]]``); the
    handle biases only with ``biases``.
    Bundles of :mod:`articulated.algorithms.bundles`: ``tree`` a ``NodeModel``, ``co`` the
    ``Coefficients`` written, ``lz`` the ``PassiveTensors`` read."""
    for a in range(6):
        lz.vnode[c, a] = v[a]
    evaluate_node(c, tree, v, lz, co, biases)
    lz.fresh[c] = True
    lz.fresh_list[lz.nfresh[0]] = c
    lz.nfresh[0] += 1
