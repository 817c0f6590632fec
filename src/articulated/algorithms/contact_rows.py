"""The rows of the contact response (GLM IV.A step 4, IV.B).

The rows of the contact response (GLM IV.A step 4, IV.B): each contact's frame, ``J^T``,
``W = M^-1 J^T`` and collision matrix ``K`` from test impulses
(:mod:`~articulated.algorithms.impulse`), the groups of contacts on one body pair solved
on 6 x 6 blocks, and the rows of the joint limits.

**Collision matrix** (GLM IV.A step 4). Three unit test impulses along the contact frame
``(n, t1, t2)`` (GLM Fig. 2, ``z = n``) give ``J^T`` (nv, 3) and ``W = M^-1 J^T`` (nv, 3);
``K = J W`` (3, 3) is the change of contact velocity per unit impulse.
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np
from numba import njit

from ..config import inline, JIT, KERNEL
from .impulse import DOF_RATIO, _body_impulse, _flush, _lever, _next, _tables, _transfer, impulse_response

FRICTION_CFM = 1e-3

"""Relative constraint-force mixing of the tangential rows (see :func:`_visit`)."""

ContactRows = namedtuple("ContactRows", ("JT", "W", "K", "Ki", "frame", "P", "target", "vn0",
                                         "gap", "impact", "Pc", "mu", "e", "dist", "key", "dof",
                                         "span"))

ContactRows.__doc__ = """The constraint rows of a step: contacts first, then joint limits
(capacity ``cap``). ``JT`` (cap, 3, nv) rows of the contact Jacobian in the contact frame,
``W`` (cap, 3, nv) ``M^-1 J^T`` (not written for a contact of a block: :class:`Blocks`),
``K`` (cap, 3, 3), ``Ki`` (cap, 4) the inverses a visit
uses (:func:`_inverses`), ``frame`` (cap, 3, 3) rows ``n, t1, t2``
(world; the identity for a limit), ``P`` (cap, 3) accumulated impulse [N s] (a limit: ``P_n``
[N m s or N s], the tangential parts zero), ``target`` (cap,) normal speed after the impulse
[m/s], ``vn0`` (cap,) normal speed before [m/s] (negative: approaching), ``gap`` (cap,) the
gap after the step that the position projection aims at [m], ``impact`` (cap,) int64: 1 an
impact, 2 an impact that closes a gap within the step (its ``gap`` is exact, see
:func:`contact_rows`), 0 resting; ``Pc`` (cap, 3) scratch (the compression and restitution
impulses); ``mu, e, dist`` (cap,) friction, restitution and signed gap [m] (a limit: rad or
m); ``key`` (cap,) int64 identity across steps (increasing); ``dof`` (cap,) int64 the
limited dof of a limit row, -1 for a contact; ``span`` (cap,) int64 the dofs before which
the row's ``JT`` may be non-zero (its bodies' paths to the root: the passes over ``JT`` stop
there, and the rows by dofs do not write it beyond: it may hold an earlier step's values).
(A joint limit is a frictionless unilateral row on one joint velocity, GLM IV.B; the same
sweeps solve both.)"""

@njit(**JIT)
def contact_buffers(cap, nv):
    """Zeroed :class:`ContactRows` for ``cap`` rows of a model with ``nv`` dofs."""
    return ContactRows(np.zeros((cap, 3, nv)), np.zeros((cap, 3, nv)), np.zeros((cap, 3, 3)),
                       np.zeros((cap, 4)), np.zeros((cap, 3, 3)), np.zeros((cap, 3)),
                       np.zeros(cap), np.zeros(cap), np.zeros(cap), np.zeros(cap, np.int64),
                       np.zeros((cap, 3)), np.zeros(cap), np.zeros(cap), np.zeros(cap),
                       np.zeros(cap, np.int64),
                       np.full(cap, -1, np.int64), np.zeros(cap, np.int64))

Limits = namedtuple("Limits", ("dof", "qadr", "body", "lo", "hi", "joint"))

Limits.__doc__ = """The limited joints of a model (``nl`` of them, all 1-dof, in increasing
joint order): ``dof``, ``qadr``, ``body``, ``joint`` (nl,) int64 their velocity index (in
the dof space of the tree the impulses run on: the model's, or a hybrid body's reduced
tree), position index in the model's ``q``, body (of that tree) and joint index (the
model's); ``lo, hi`` (nl,) float64 the range [rad or m] (``-inf``/``inf``: no limit)."""

def model_limits(model):
    """:class:`Limits` of ``model`` (every joint with ``jnt_limited``)."""
    j = np.flatnonzero(model.jnt_limited).astype(np.int64)
    return Limits(model.jnt_vadr[j].copy(), model.jnt_qadr[j].copy(), j.copy(),
                  model.jnt_range[j, 0].copy(), model.jnt_range[j, 1].copy(), j.copy())

BLOCK_MIN = 3

"""Contacts on one body pair from which they are a block: :func:`contact_rows` computes
their rows from the pair's six unit impulse responses and the sweeps solve them on the
pair's 6 x 6 block (fewer contacts: three test impulses each, visited one by one)."""

Blocks = namedtuple("Blocks", ("count", "gid", "first", "order", "pair", "slot", "G", "KG", "JT6",
                               "W6", "K6", "span", "mark", "V", "Vg", "Fg", "sorted"))

Blocks.__doc__ = """Contacts grouped by body pair (GLM IV.C: the contacts of one rigid piece
act on its node; VI: "contacts of one rigid piece may be solved together on its 6 x 6
block"). ``count`` (2,) int64: groups, contacts grouped; per contact ``gid`` (cap,) its
group and ``G`` (cap, 3, 6) its rows ``n, t1, t2`` as spatial impulses in the basis of its
group (body coordinates of the group's first body, about its origin, GLM Fig. 2) and ``KG``
(cap, 3, 6) ``G K6`` (what a unit impulse along each row does to the block's velocity); per group
``first`` (cap + 1,) and ``order`` (cap,) its contacts ``order[first[g]:first[g + 1]]`` in
detection order, ``pair`` (cap, 2) its bodies (-1: the world), ``slot`` (cap,) its block
(-1: fewer than :data:`BLOCK_MIN` contacts); per block ``JT6, W6`` (bcap, 6, nv) ``J^T E_k``
and ``M^-1 J^T E_k`` for the six unit impulses ``E_k`` of the basis, ``K6`` (bcap, 6, 6)
their ``J W^T`` (the pair's inverse apparent inertia), ``span`` (bcap,) int64 the dofs before
which ``JT6`` may be non-zero (the pair's paths to the root); scratch ``mark`` (nb,), ``V`` (2, 6),
``Vg`` (2, bcap, 6) the blocks' velocities ``(J^T E_k) . x`` and ``Fg`` (bcap, 6) their
collected impulses (zero between uses), ``sorted`` (cap,) int64 the groups by their deeper
body (the order their test impulses are propagated in). A block contact's own rows ``JT, W`` of
:class:`ContactRows` are not written: they are ``G_c JT6`` and ``G_c W6``, and every pass
works on the block's six instead (O(1) per contact, O(nv) per block)."""

@njit(**JIT)
def block_buffers(cap, nb, nv):
    """Zeroed :class:`Blocks` for ``cap`` contacts of a tree with ``nb`` bodies, ``nv``
    dofs."""
    bcap = cap // BLOCK_MIN + 1
    return Blocks(np.zeros(2, np.int64), np.zeros(cap, np.int64), np.zeros(cap + 1, np.int64),
                  np.zeros(cap, np.int64), np.zeros((cap, 2), np.int64),
                  np.zeros(cap, np.int64), np.zeros((cap, 3, 6)), np.zeros((cap, 3, 6)),
                  np.zeros((bcap, 6, nv)), np.zeros((bcap, 6, nv)), np.zeros((bcap, 6, 6)),
                  np.zeros(bcap, np.int64), np.zeros(nb, np.int64), np.zeros((2, 6)),
                  np.zeros((2, bcap, 6)),
                  np.zeros((bcap, 6)), np.zeros(cap, np.int64))

@inline
def _frame(normal, c, frame):
    """Rows n, t1, t2 of contact c's frame (GLM Fig. 2: z = n)."""
    n = (normal[c, 0], normal[c, 1], normal[c, 2])
    if abs(n[0]) < 0.9:
        t = (0.0, n[2], -n[1])
    else:
        t = (-n[2], 0.0, n[0])
    L = 1.0 / math.sqrt(t[0] * t[0] + t[1] * t[1] + t[2] * t[2])
    t = (t[0] * L, t[1] * L, t[2] * L)
    s = (n[1] * t[2] - n[2] * t[1], n[2] * t[0] - n[0] * t[2], n[0] * t[1] - n[1] * t[0])
    for k in range(3):
        frame[c, 0, k] = n[k]
        frame[c, 1, k] = t[k]
        frame[c, 2, k] = s[k]

@inline
def _inverses(rows, c):
    """Row c's ``Ki``: ``1 / K_nn`` and the inverse ``(i11, i12, i22)`` of its tangential
    pair with constraint-force mixing, ``K_tt + r D`` (see :func:`_visit_row`); zeros where
    they do not exist (a row of zeros); a visit uses them only where positive."""
    K = rows.K
    rows.Ki[c, 0] = 1.0 / K[c, 0, 0] if K[c, 0, 0] > 0.0 else 0.0
    a11 = K[c, 1, 1] + FRICTION_CFM * K[c, 1, 1]
    a22 = K[c, 2, 2] + FRICTION_CFM * K[c, 2, 2]
    a12 = K[c, 1, 2]
    det = a11 * a22 - a12 * a12
    if det > 0.0:
        rows.Ki[c, 1] = a22 / det
        rows.Ki[c, 2] = -a12 / det
        rows.Ki[c, 3] = a11 / det
    else:
        for k in range(1, 4):
            rows.Ki[c, k] = 0.0

@inline
def _target(rows, c, vn, h, rest_speed):
    """Target normal speed, gap aimed at and impact flag of row c (its ``dist`` and ``e``
    set), from its normal speed ``vn`` before the impulses (see :func:`contact_rows`)."""
    dist = rows.dist[c]
    rows.vn0[c] = vn
    rows.gap[c] = 0.0
    if vn < -rest_speed and dist + h * vn < 0.0:  # an impact within this step
        rows.target[c] = 0.0  # compression; restitution in solve_impulses
        rows.impact[c] = 1
        if dist > 0.0:  # it closes the gap at tau = dist / |vn|, then rebounds
            rows.gap[c] = rows.e[c] * (-h * vn - dist)
            rows.impact[c] = 2
    else:  # resting, or a speculative row: approach by at most the gap
        rows.target[c] = -max(dist, 0.0) / h
        rows.impact[c] = 0
    for d in range(3):
        rows.P[c, d] = 0.0

@inline
def _gram(A, B, n, out):
    """``out[i, j] = A[i, :n] . B[j, :n]``: ``K = J W^T`` of a row (3 x 3) or a block
    (6 x 6), ``A = J^T`` zero beyond ``n`` (its span); ``K = J M^-1 J^T`` is symmetric, so
    the upper triangle is computed and mirrored."""
    for i in range(out.shape[0]):
        for j in range(i, out.shape[1]):
            x = 0.0
            for k in range(n):
                x += A[i, k] * B[j, k]
            out[i, j] = x
            out[j, i] = x

@inline
def _gather(A, x, n, a, V, accumulate):
    """``V (+)= a A[:, :n] x[:n]`` (6,) for a block's rows ``A`` (6, nv), ``x`` (nv,) and
    ``A`` zero beyond column ``n``."""
    for k in range(6):
        y = 0.0
        for m in range(n):
            y += A[k, m] * x[m]
        V[k] = a * y + (V[k] if accumulate else 0.0)

@inline
def _spread(W, F, out):
    """``out += W^T F`` (nv,) for a block's rows ``W`` (6, nv) and ``F`` (6,)."""
    for m in range(out.shape[0]):
        y = 0.0
        for k in range(6):
            y += W[k, m] * F[k]
        out[m] += y

@inline
def _block_update(G, KG, d0, d1, d2, F, V):
    """One contact's impulse change ``dP = (d0, d1, d2)`` in its block: ``F += G^T dP``
    (the group's impulse) and ``V += (K6 G^T) dP`` (the pair's velocity; ``KG = G K6``,
    ``K6`` symmetric), with its rows ``G`` and ``KG`` (3, 6)."""
    for k in range(6):
        F[k] += G[0, k] * d0 + G[1, k] * d1 + G[2, k] * d2
        V[k] += KG[0, k] * d0 + KG[1, k] * d1 + KG[2, k] * d2

@inline
def _slot_of(blk, c):
    """The block of row c, -1 when it has its own rows ``JT, W`` (a contact of a small
    group, a contact inside one body, a limit)."""
    return blk.slot[blk.gid[c]] if c < blk.count[1] else -1

@inline
def _block_speeds(blk, x, out):
    """``out[s] = (J^T E_k) . x`` (6,) of every block s of the step, for ``x`` (nv,)."""
    for g in range(blk.count[0]):
        s = blk.slot[g]
        if s >= 0:
            _gather(blk.JT6[s], x, blk.span[s], 1.0, out[s], False)

@inline
def _row_speed(rows, blk, c, d, x, Vs):
    """``J_c x`` along row c's direction d (0 normal, 1-2 tangents), from its block's
    velocities ``Vs`` (:func:`_block_speeds` of ``x``) or its own ``JT``."""
    s = _slot_of(blk, c)
    v = 0.0
    if s >= 0:
        for k in range(6):
            v += blk.G[c, d, k] * Vs[s, k]
    else:
        for k in range(rows.span[c]):
            v += rows.JT[c, d, k] * x[k]
    return v

@inline
def _row_impulse(rows, blk, c, P0, P1, P2, x):
    """``x += W_c P`` for row c's impulse ``P`` (normal, tangents): at once for a row of
    its own, collected in its block's ``Fg`` otherwise (applied by
    :func:`_spread_blocks`)."""
    s = _slot_of(blk, c)
    if s >= 0:
        for k in range(6):
            blk.Fg[s, k] += blk.G[c, 0, k] * P0 + blk.G[c, 1, k] * P1 + blk.G[c, 2, k] * P2
    else:
        for k in range(x.shape[0]):
            x[k] += rows.W[c, 0, k] * P0 + rows.W[c, 1, k] * P1 + rows.W[c, 2, k] * P2

@inline
def _spread_blocks(blk, x):
    """``x += W6^T Fg`` for every block, emptying ``Fg`` (see :func:`_row_impulse`)."""
    for g in range(blk.count[0]):
        s = blk.slot[g]
        if s >= 0:
            _spread(blk.W6[s], blk.Fg[s], x)
            for k in range(6):
                blk.Fg[s, k] = 0.0

@inline
def _group(con, nc, blk):
    """Group contacts ``0..nc-1`` by body pair into ``blk`` (groups in the order of their
    first contact, contacts in detection order); returns the number of groups."""
    for c in range(nc):
        a, b = con.body[c, 0], con.body[c, 1]
        blk.mark[a if a >= 0 else b] = -1
    ng = 0
    blk.first[0] = 0
    for c in range(nc):
        a, b = con.body[c, 0], con.body[c, 1]
        key = a if a >= 0 else b
        g = blk.mark[key]  # the groups of this key, chained through slot
        while g >= 0 and (blk.pair[g, 0] != a or blk.pair[g, 1] != b):
            g = blk.slot[g]
        if g < 0:
            g = ng
            ng += 1
            blk.pair[g, 0] = a
            blk.pair[g, 1] = b
            blk.first[g + 1] = 0
            blk.slot[g] = blk.mark[key]
            blk.mark[key] = g
        blk.gid[c] = g
        blk.first[g + 1] += 1
    for g in range(ng):
        blk.first[g + 1] += blk.first[g]
        blk.slot[g] = blk.first[g]  # fill cursor
    for c in range(nc):
        g = blk.gid[c]
        blk.order[blk.slot[g]] = c
        blk.slot[g] += 1
    blk.count[0] = ng
    blk.count[1] = nc
    return ng

@njit(**KERNEL)
def contact_rows(im, fac, sc, con, nc, qd, h, rest_speed, rows, blk):
    """``J^T``, ``W``, ``K``, the frame, the targets and zero impulses of contacts
    ``0..nc-1`` (``con``: :class:`~articulated.algorithms.collision.Contacts`) at joint
    velocities ``qd`` (the unconstrained ``qd + h qdd``) and step ``h`` [s], and their
    groups by body pair in ``blk`` (:class:`Blocks`).

    A contact of a group with fewer than :data:`BLOCK_MIN` contacts gets its rows from three
    test impulses (GLM IV.A step 4: O(n) each). The rows of a block's contacts are
    combinations of the pair's six unit impulse responses (six test impulses for the
    whole group, then O(1) per contact): ``J^T u = sum_k g_k J^T E_k`` for the impulse
    ``g`` (6,) of the contact direction ``u`` in the basis, and ``K = G K6 G^T``. The test
    impulses of all groups go through :func:`impulse_response` side by side, as many at a
    time as the scratch ``sc`` has columns (:data:`IMPULSE_COLUMNS`); where they number
    more than :data:`DOF_RATIO` ``nv`` and the tables fit, the rows are read out of ``nv``
    joint test impulses instead (rows by dofs, module docstring; ``sc.policy`` may force
    either way).

    An impact (approach faster than ``rest_speed`` that closes the gap ``d`` within the
    step) is compressed to zero normal speed, then restituted (:func:`solve_impulses`:
    ``-e v_n^-`` for a single frictionless contact); when ``d > 0`` the
    contact happened at ``tau = d / |v_n^-|`` inside the step, and the position projection
    places it at the gap ``e (h |v_n^-| - d)`` it has after rebounding for ``h - tau`` (a
    time-of-impact correction: without it a ball would rebound from up to ``|v| h`` above
    the floor). Other contacts may approach by at most their gap: ``-max(d, 0) / h``.

    A contact whose two bodies are one (two bodies of one rigid piece of a hybrid body, or
    both welded to the world) gets rows of zeros: no joint moves one side against the
    other (GLM VI: "pairs inside one rigid piece are skipped while it is rigid"); it takes
    no impulse and no projection (its ``K`` from test impulses would be rounding, 1e-27,
    and the projection's ``d / K`` moved a 60-link pile's joints by 439 rad)."""
    nv = qd.shape[0]
    ng = _group(con, nc, blk)
    for c in range(nc):
        _frame(con.normal, c, rows.frame)
    # the groups by their deeper body (counting sort, parent[i] < i), so that the test
    # impulses propagated together have nearly the same path to the root
    cnt = blk.mark
    nbr = im.parent.shape[0]
    for i in range(nbr):
        cnt[i] = 0
        p = im.parent[i]
        sc.pspan[i] = max(im.vadr[i] + im.jnv[i], sc.pspan[p] if p >= 0 else 0)
    for g in range(ng):
        cnt[max(blk.pair[g, 0], blk.pair[g, 1])] += 1
    at = 0
    for i in range(nbr):
        k = cnt[i]
        cnt[i] = at
        at += k
    for g in range(ng):
        i = max(blk.pair[g, 0], blk.pair[g, 1])
        blk.sorted[cnt[i]] = g
        cnt[i] += 1
    # by dofs or by test impulses per row (DOF_RATIO): count the rows' test impulses and
    # give each struck body a place in the tables
    nimp = 0
    nt = 0
    for i in range(nbr):
        sc.slot[i] = -1
    for g in range(ng):
        a, b = blk.pair[g, 0], blk.pair[g, 1]
        if a == b:
            continue
        size = blk.first[g + 1] - blk.first[g]
        nimp += 6 if size >= BLOCK_MIN else 3 * size
        for i in (a, b):
            if i >= 0 and sc.slot[i] < 0:
                sc.slot[i] = nt
                nt += 1
    policy = sc.policy[0]
    by_dofs = (policy != 1 and nt > 0 and 6 * nt * nv <= sc.Tw.shape[0]
               and (policy == 2 or nimp > DOF_RATIO * nv))
    if by_dofs:
        _tables(im, fac, sc, nv, nt)
    # the test impulses, C at a time (or one by one, read out of the tables): six unit
    # impulses per block (on its first body, the opposite on its second, in the first
    # one's coordinates), three per contact of a small group (along its frame, at its point)
    m = 0
    nblock = 0
    for o in range(ng):
        g = blk.sorted[o]
        a, b = blk.pair[g, 0], blk.pair[g, 1]
        if blk.first[g + 1] - blk.first[g] >= BLOCK_MIN and a != b:
            blk.slot[g] = nblock
            key = a if a >= 0 else b
            for k in range(6):
                for i in range(6):
                    sc.fa[m, i] = 1.0 if i == k else 0.0
                if b >= 0:
                    _transfer(fac.oE, fac.op, key, b, sc.fa[m], -1.0, sc.fb[m])
                sc.ca[m] = a
                sc.cb[m] = b
                sc.dof[m] = -1
                sc.dst[m] = -(6 * nblock + k) - 1
                m = _next(im, fac, sc, m, nv, rows, blk, by_dofs)
            blk.span[nblock] = max(sc.pspan[a] if a >= 0 else 0, sc.pspan[b] if b >= 0 else 0)
            for k in range(6):
                blk.Fg[nblock, k] = 0.0
            nblock += 1
            continue
        blk.slot[g] = -1
        if a == b:
            continue
        for oc in range(blk.first[g], blk.first[g + 1]):
            c = blk.order[oc]
            x = (con.point[c, 0], con.point[c, 1], con.point[c, 2])
            ra = _lever(fac.oE, fac.op, a, x) if a >= 0 else x
            rb = _lever(fac.oE, fac.op, b, x) if b >= 0 else x
            for d in range(3):
                u = (rows.frame[c, d, 0], rows.frame[c, d, 1], rows.frame[c, d, 2])
                if a >= 0:
                    _body_impulse(fac.oE, a, ra, u, 1.0, sc.fa[m])
                if b >= 0:
                    _body_impulse(fac.oE, b, rb, u, -1.0, sc.fb[m])
                sc.ca[m] = a
                sc.cb[m] = b
                sc.dof[m] = -1
                sc.dst[m] = 3 * c + d
                m = _next(im, fac, sc, m, nv, rows, blk, by_dofs)
    if not by_dofs:
        _flush(im, fac, sc, m, nv, rows, blk)
    for g in range(ng):
        s = blk.slot[g]
        if s >= 0:
            _gram(blk.JT6[s], blk.W6[s], blk.span[s], blk.K6[s])
    Vs = blk.Vg[0]
    _block_speeds(blk, qd, Vs)
    for c in range(nc):
        ba = con.body[c, 0]
        bb = con.body[c, 1]
        s = blk.slot[blk.gid[c]]
        rows.span[c] = 0 if ba == bb else max(sc.pspan[ba] if ba >= 0 else 0,
                                              sc.pspan[bb] if bb >= 0 else 0)
        if ba == bb:
            for d in range(3):
                for k in range(nv):
                    rows.JT[c, d, k] = 0.0
                    rows.W[c, d, k] = 0.0
                for k in range(3):
                    rows.K[c, d, k] = 0.0
        elif s >= 0:  # its rows stay those of the block (Blocks): G_c JT6, G_c W6
            key = ba if ba >= 0 else bb
            x = (con.point[c, 0], con.point[c, 1], con.point[c, 2])
            r = _lever(fac.oE, fac.op, key, x)
            for d in range(3):
                u = (rows.frame[c, d, 0], rows.frame[c, d, 1], rows.frame[c, d, 2])
                _body_impulse(fac.oE, key, r, u, 1.0, blk.G[c, d])
            for d2 in range(3):
                T = blk.KG[c, d2]
                for k in range(6):
                    t = 0.0
                    for l in range(6):
                        t += blk.K6[s, k, l] * blk.G[c, d2, l]
                    T[k] = t
                for d1 in range(3):
                    t = 0.0
                    for k in range(6):
                        t += blk.G[c, d1, k] * T[k]
                    rows.K[c, d1, d2] = t
        else:
            _gram(rows.JT[c], rows.W[c], rows.span[c], rows.K[c])
        vn = _row_speed(rows, blk, c, 0, qd, Vs)
        rows.mu[c] = con.mu[c]
        rows.e[c] = con.e[c]
        rows.dist[c] = con.dist[c]
        rows.key[c] = con.key[c]
        rows.dof[c] = -1
        _inverses(rows, c)
        _target(rows, c, vn, h, rest_speed)

@njit(**KERNEL)
def move_rows(rows, src, dst, k):
    """Move rows ``src .. src+k-1`` to ``dst .. dst+k-1`` (``dst >= src``; rows of their
    own, not of a block: the limits after the contacts), every field."""
    for i in range(k - 1, -1, -1):
        a = src + i
        b = dst + i
        for d in range(3):
            for m in range(rows.JT.shape[2]):
                rows.JT[b, d, m] = rows.JT[a, d, m]
                rows.W[b, d, m] = rows.W[a, d, m]
            for m in range(3):
                rows.K[b, d, m] = rows.K[a, d, m]
                rows.frame[b, d, m] = rows.frame[a, d, m]
            rows.P[b, d] = rows.P[a, d]
            rows.Pc[b, d] = rows.Pc[a, d]
        for m in range(4):
            rows.Ki[b, m] = rows.Ki[a, m]
        rows.target[b] = rows.target[a]
        rows.vn0[b] = rows.vn0[a]
        rows.gap[b] = rows.gap[a]
        rows.impact[b] = rows.impact[a]
        rows.mu[b] = rows.mu[a]
        rows.e[b] = rows.e[a]
        rows.dist[b] = rows.dist[a]
        rows.key[b] = rows.key[a]
        rows.dof[b] = rows.dof[a]
        rows.span[b] = rows.span[a]

@njit(**KERNEL)
def limit_rows(im, fac, sc, lim, q, qd, dv, opt, rows, n0, present):
    """Append the rows of the joint limits that may be reached within the step (GLM IV.B,
    Kokkevis 2004) at rows ``n0, n0+1, ...``; returns the number appended.

    A limit ``lo <= q_k`` (``q_k <= hi``) is the unilateral row ``s qd_k`` with ``s = 1``
    (``-1``) and gap ``d = q_k - lo`` (``hi - q_k``) [rad or m]; its row impulse ``P >= 0``
    is the joint impulse ``s P`` and ``K = (M^-1)_kk`` (one test impulse on the hybrid
    body). It enters when
    ``min(d, d + s dv_k) <= 0`` for the predicted displacement ``dv`` (nv,) of the step
    (speculative: ``h qd*`` first; the caller calls again with the displacement after the
    impulses and the position projection, which move the other joints too) and is solved
    with the contacts; its target and impact state come from ``qd`` (nv,), the velocity
    before the impulses: a single impact with restitution ``e`` gets the joint impulse
    ``j = s P = -(1 + e) qd_k / (M^-1)_kk`` (Kokkevis). Keys: ``key0 + 2 joint + side``.
    ``present`` (2 nl,) int64 marks the rows already there (zero it for a new step).
    ``opt``: the :class:`~articulated.algorithms.response.ResponseOptions` of the step (its
    ``h`` [s], ``rest_speed`` [m/s], ``limit_e`` as ``e`` and ``key0``)."""
    h, rest_speed, e, key0 = opt.h, opt.rest_speed, opt.limit_e, opt.key0
    nv = qd.shape[0]
    n = n0
    for l in range(lim.dof.shape[0]):
        k = lim.dof[l]
        x = q[lim.qadr[l]]
        for side in range(2):
            s = 1.0 if side == 0 else -1.0
            d = x - lim.lo[l] if side == 0 else lim.hi[l] - x
            if present[2 * l + side] or not min(d, d + s * dv[k]) <= 0.0:
                continue  # (also skips the infinite sides)
            present[2 * l + side] = 1
            c = n
            n += 1
            for a in range(3):
                for b in range(3):
                    rows.frame[c, a, b] = 1.0 if a == b else 0.0
            for r in range(1, 3):
                for m in range(nv):
                    rows.JT[c, r, m] = 0.0
                    rows.W[c, r, m] = 0.0
            for m in range(6):
                sc.fa[0, m] = 0.0
            sc.ca[0] = lim.body[l]
            sc.cb[0] = -1
            sc.dof[0] = k
            sc.sgn[0] = s
            impulse_response(im, fac, sc, 1, nv)
            sc.dof[0] = -1
            for m in range(nv):
                rows.JT[c, 0, m] = sc.jt[m, 0]
                rows.W[c, 0, m] = sc.w[m, 0]
            rows.span[c] = k + 1
            _gram(rows.JT[c], rows.W[c], k + 1, rows.K[c])
            rows.mu[c] = 0.0
            rows.e[c] = e
            rows.dist[c] = d
            rows.key[c] = key0 + 2 * lim.joint[l] + side
            rows.dof[c] = k
            _inverses(rows, c)
            _target(rows, c, s * qd[k], h, rest_speed)
    return n - n0
