"""Partial back-substitution of the DCA engine (RL Sec. 4.3).

Partial back-substitution of the DCA engine (RL Sec. 4.3): joint accelerations (RL eq.
4) and constraint forces (eq. 5) from the root down, in the order of a priority queue by
total acceleration (RL eq. 8), until the certified error of an RL Def. 2 measure is within
a bound or a joint budget is spent; with every active node and no metric, the exact
back-substitution of the multilevel forward dynamics of hybrid bodies (RGL Sec. 4.3).
Passive children met on the way get their coefficients from their linear-coefficient
tensors first (RGL Sec. 6.2, :mod:`articulated.algorithms.passive`).
"""

from __future__ import annotations

import math

from numba import njit

from .._byref import byref, deref
from ..config import inline, KERNEL
from ..spatial import get_vec6, xform_inv_at, xform_motion_at
from .blocks import _blk, _child_blocks, _child_slot, _children, _hand_down
from .bundles import STAT_BAD, STAT_BOUND, STAT_EPS2, STAT_MAXNORM, STAT_N, STAT_TOTAL
from .heap import _heap_pop, _heap_push
from .metric import _bound, _total_acc
from .passive import evaluate_fresh


@inline
def _lazy_evaluate(c, i, tree, fr, co, sc, lz):
    """Passive child c of node i: twist ``vnode[c] = Tup_c^-1 vnode[i]`` and the fully
    articulated coefficients from its tensors that the back-substitution reads (not its
    handle biases: its parent i is already solved); marks it fresh (bundles of
    :mod:`articulated.algorithms.bundles`)."""
    xform_inv_at(fr.Tup_E, fr.Tup_r, c, sc.Xr, sc.xq, 2)
    vn = lz.vnode
    v = xform_motion_at(sc.Xr, sc.xq, 2, get_vec6(vn, i))
    evaluate_fresh(c, v, tree, co, lz, False)


@njit(**KERNEL)
def _partial_back_substitution(eps_max, measure, budget, prev_n, args):
    """Partial back-substitution (RL Sec. 4.3) with a priority queue by total acceleration.

    Pops the node with the largest ``A(C)``, computes its joint acceleration (RL eq. 4) and
    the constraint force (eq. 5), hands the forces to its children, pushes the internal
    children with their ``A`` (eq. 8), and stops when the certified error of the chosen
    measure is at most ``eps_max``, when ``budget >= 0`` joints have been computed, or when
    the queue is empty (exact). ``eps_max < 0`` is the exact mode of the multilevel
    forward dynamics (RGL Sec. 4.3): every active node, no metric coefficients read.
    ``qdd`` must be zero on entry; it is exact on the computed
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
    pointer to a :class:`~articulated.algorithms.bundles.SolveArgs`
    (:func:`partial_back_substitution` takes the bundle itself)."""
    bundle = deref(args)
    tree, inp, fr, co, sc = (bundle.model, bundle.inputs, bundle.frames, bundle.coef,
                             bundle.scratch)
    sb, lz = bundle.solve, bundle.passive
    hk, hn, xv, fv, fh, qdd = sb.hk, sb.hn, sb.xv, sb.fv, sb.fh, sb.qdd
    for t in range(prev_n):
        J = sb.computed[t]
        for rr in range(tree.jnv[J]):
            qdd[tree.vadr[J] + rr] = 0.0
    n = 0
    A_total = 0.0
    nstale = 0                              # stale nodes (A = inf) in the queue
    for t in range(tree.roots.shape[0]):
        r = tree.roots[t]
        a = co.eta[r] if eps_max >= 0.0 else 0.0
        if a < 0.0:
            a = 0.0
        if math.isinf(a):
            nstale += 1
        else:
            A_total += a
        n = _heap_push(hk, hn, n, a, r)
    stale_root = nstale > 0
    eps2 = A_total
    A_done = 0.0                            # sum of the computed joints' norms^2
    ncomp = 0
    maxnorm = 0.0
    bound = 0.0
    bad = -1
    while True:
        if stale_root:
            # the total from what is computed and what is queued (RL eq. 8 summed)
            A_total = A_done + eps2
        if n == 0:
            eps2 = 0.0
            bound = 0.0
            break
        if eps_max < 0.0:                   # exact mode: every active node, no metric
            bound = 0.0
        elif nstale > 0:                    # a stale node is computed before any stop
            bound = math.inf
        else:
            bound = _bound(measure, eps2, A_total, hk[0], maxnorm)
            if bound <= eps_max and measure <= 1:
                # the running eps_c^2 carries the round-off of its updates (relative to
                # A_total): before stopping on it, sum the queue exactly
                eps2 = 0.0
                for t in range(n):
                    eps2 += hk[t]
                if stale_root:
                    A_total = A_done + eps2
                bound = _bound(measure, eps2, A_total, hk[0], maxnorm)
            if bound <= eps_max:
                break
        if budget >= 0 and ncomp >= budget:
            break
        i = hn[0]
        A_C = hk[0]
        n = _heap_pop(hk, hn, n)
        if math.isinf(A_C):
            nstale -= 1
            A_C = 0.0
        J = tree.node_joint[i]
        A, B, ca, cb, nAo = _children(i, tree)
        nhA, hA, oA, nhB, hB, oB = _child_blocks(i, tree)
        nC = tree.node_nh[i]
        ho = tree.node_hoff[i]
        # x = beta + sum_k C_k f_k
        #   = beta + X sum_{k in A} Phi^A_{2k} f_k - sum_{k in B} Phi^B_{1k} f_k
        for a in range(6):
            xv[0, a] = 0.0
            xv[1, a] = co.beta[J, a]
        for k in range(nAo):
            _, kk = _child_slot(k, nAo, ca, cb)
            row, tr = _blk(hA, oA, tree.n_slots, nhA, ca, kk)
            for a in range(6):
                s = 0.0
                for c in range(6):
                    s += (co.Phi[row, c, a] if tr else co.Phi[row, a, c]) * fh[ho + k, c]
                xv[0, a] += s
        if nAo > 0:
            x = xform_motion_at(fr.XJ_E, fr.XJ_r, J, get_vec6(xv, 0))
            for a in range(6):
                xv[1, a] += x[a]
        for k in range(nAo, nC):
            _, kk = _child_slot(k, nAo, ca, cb)
            row, tr = _blk(hB, oB, tree.n_slots, nhB, cb, kk)
            for a in range(6):
                s = 0.0
                for c in range(6):
                    s += (co.Phi[row, c, a] if tr else co.Phi[row, a, c]) * fh[ho + k, c]
                xv[1, a] -= s
        d = tree.jnv[J] if inp.active[J] else 0
        va = tree.vadr[J]
        # f = W x + P Q; qdd = D Q - P^T x
        for a in range(6):
            s = 0.0
            for c in range(6):
                s += co.W[J, a, c] * xv[1, c]
            for rr in range(d):
                s += co.P[J, a, rr] * inp.tau[va + rr]
            fv[0, a] = s
        nrm = 0.0
        for rr in range(d):
            s = 0.0
            for ss in range(d):
                s += co.D[J, rr, ss] * inp.tau[va + ss]
            for c in range(6):
                s -= co.P[J, c, rr] * xv[1, c]
            qdd[va + rr] = s
        for rr in range(d):
            for ss in range(d):
                nrm += qdd[va + rr] * inp.Aw[J, rr, ss] * qdd[va + ss]
        if not math.isfinite(nrm):
            if bad < 0:
                bad = J
            nrm = 0.0
        A_done += max(nrm, 0.0)
        nrm = math.sqrt(max(nrm, 0.0))
        if nrm > maxnorm:
            maxnorm = nrm
        sb.computed[ncomp] = J
        ncomp += 1
        # forces on the children's handles (RL eq. 5)
        _hand_down(fh, ho, nAo, get_vec6(fv, 0), (tree.jtype[J], fr.XJ_E, fr.XJ_r), J,
                   (A, ca, hA, nhA), (cb, hB, nhB))
        A_children = 0.0
        for ch in (A, B):
            if ch >= 0 and tree.node_joint[ch] >= 0 and inp.active[tree.node_joint[ch]]:
                if lz.lazy and not lz.fresh[ch]:
                    _lazy_evaluate(ch, i, tree, fr, co, sc, lz)
                a_ch = 0.0 if eps_max < 0.0 else _total_acc(ch, tree, co, fh)
                if a_ch < 0.0:
                    a_ch = 0.0
                if math.isinf(a_ch):
                    nstale += 1
                else:
                    A_children += a_ch
                n = _heap_push(hk, hn, n, a_ch, ch)
        # eps_c^2 <- eps_c^2 + A(A) + A(B) - A(C) (RL Sec. 4.3)
        eps2 += A_children - A_C
        if eps2 < 0.0:
            eps2 = 0.0
    sb.stats[STAT_N] = ncomp
    sb.stats[STAT_BOUND] = bound
    sb.stats[STAT_TOTAL] = A_total
    sb.stats[STAT_EPS2] = eps2
    sb.stats[STAT_MAXNORM] = maxnorm
    sb.stats[STAT_BAD] = bad


@njit(**KERNEL)
def partial_back_substitution(eps_max, measure, budget, prev_n, args):
    """:func:`_partial_back_substitution` with its bundle ``args`` (for callers in
    Python)."""
    _partial_back_substitution(eps_max, measure, budget, prev_n, byref(args))
