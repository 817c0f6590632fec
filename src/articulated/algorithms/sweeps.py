"""Sequential impulses over the contact and limit rows (GLM IV.A step 5).

Sequential impulses (GLM IV.A step 5, Fig. 3, VI): visits of the contact and limit rows
with Coulomb friction and restitution until the contact velocities settle, warm-started
from the last step's impulses.

**Collision integration** (step 5). Each contact holds its accumulated impulse ``P =
(P_n, P_t1, P_t2)``. A visit (:func:`_visit`) first solves the normal row for the target
normal speed ``v*_n`` and clamps ``P_n >= 0``, then the tangential pair for zero slip
(the 2 x 2 block ``K_tt``) and keeps it if ``|P_t| <= mu P_n`` (sticking: inside Coulomb's
cone; at convergence, for a single contact, Mirtich's test ``k_x^2 + k_y^2 <= mu^2 k_z^2``).
Otherwise the contact slides: ``|P_t| = mu P_n`` against its slip velocity (maximal
dissipation) when it slips faster than ``slip_speed``, else along the sticking impulse
(its radial projection on the cone). The tangential rows carry a small constraint-force
mixing (``FRICTION_CFM``): a body resting on several contacts has many tangential impulse
distributions that hold it, and without it Gauss-Seidel keeps internal friction forces
that use up the cones (a box on a slope just below ``atan mu`` creeps). Restitution by
Poisson's hypothesis: impacts (approach faster than ``rest_speed``) are first compressed
to zero normal speed, then receive ``e`` times their compression impulse, then the sweeps
run again to stop what that made approach; for a single frictionless or sticking impact
this is Stronge's energetic restitution (``W_r = -e^2 W_c``) and the normal speed becomes
``-e v_n^-``. Known limit: where friction couples strongly into the normal (``K_nt``) the
slip turns during an impact and these sweeps can add kinetic energy.
Resting contacts are micro-collisions with ``e = 0``. Speculative contacts at gap
``d > 0`` may approach at ``d / h``.

**Many contacts** (GLM Fig. 3, VI): sequential impulses, warm-started from the last step's
impulses of the same contacts (:func:`warm_start`), until no visit changes its contact's
velocity by more than ``tol`` [m/s], or ``sweeps`` times. A visit on its own is O(nv) (one
dot product with ``J^T``, one update by ``W``). Contacts on one body pair (in adaptive
dynamics: on one rigid piece) are grouped (:class:`Blocks`); a group of at least
:data:`BLOCK_MIN` is solved on the pair's 6 x 6 block, as GLM VI suggests: its rows come from
six test impulses instead of three per contact, and a sweep reads and updates ``qd`` once
per group (O(nv)) with O(1) per contact (:func:`_visit_block`), the same Gauss-Seidel
iterate. A sweep costs O(groups nv + contacts).
"""

from __future__ import annotations

import math

from numba import njit

from ..config import inline, KERNEL
from .contact_rows import FRICTION_CFM, _block_speeds, _block_update, _gather, _row_impulse, _row_speed, _spread, _spread_blocks

@inline
def _visit_row(rows, c, v0, v1, v2, slip, monotone):
    """One Gauss-Seidel visit of row c: the normal row, then the tangential pair, each on
    its accumulated impulse and projected (``P_n >= 0``; ``|P_t| <= mu P_n``), from the
    row's velocity ``(v0, v1, v2)`` (normal, tangents) before the visit. Updates
    ``rows.P[c]``; returns the change ``(d0, d1, d2, state)`` with state 0 separating, 1
    sticking, 2 sliding (the caller applies it: :func:`_visit`, :func:`_visit_block`).

    With ``monotone`` the visit ends with an exact line search of its energy on the segment
    to that candidate: the sweeps then never increase ``E(P) = T(qd(P)) - sum target_c
    P_n,c + 1/2 sum r_c |P_t,c|^2`` (``T`` the kinetic energy, ``r`` the friction rows'
    mixing), since a visit changes ``E`` by ``g.dP + 1/2 dP^T (K + R) dP`` (``g`` its
    gradient), so sweeps from zero impulses never raise the kinetic energy (``target <=
    0``). Coulomb's friction (against the slip after the normal impulse) is not the
    minimizer of ``E`` over the cone (that would make sliding contacts lift off at
    ``v_n = mu |v_t|``), which is why this is the fallback of :func:`solve_impulses`,
    not the default."""
    K = rows.K
    mu = rows.mu[c]
    target = rows.target[c]
    Pn, Pt1, Pt2 = rows.P[c, 0], rows.P[c, 1], rows.P[c, 2]
    # normal row: reach the target normal speed, never pull
    n_new = Pn + (target - v0) * rows.Ki[c, 0] if rows.Ki[c, 0] > 0.0 else 0.0
    if n_new < 0.0:
        n_new = 0.0
    dn = n_new - Pn
    w1 = v1 + K[c, 1, 0] * dn
    w2 = v2 + K[c, 2, 0] * dn
    # tangential pair: the sticking impulse (zero slip) if inside the cone, else slide
    t1 = 0.0
    t2 = 0.0
    state = 0 if n_new == 0.0 else 1
    lim = mu * n_new
    r1 = FRICTION_CFM * K[c, 1, 1]
    r2 = FRICTION_CFM * K[c, 2, 2]
    if lim > 0.0:
        # the pair's rows with constraint-force mixing: (K_tt + r D) P_t = K_tt P_t - v_t,
        # D = diag K_tt; it picks the smallest tangential impulses among the many that hold
        # a body with several contacts (no internal friction forces that would use up the
        # cones), at a slip of r D P_t (~1e-3 of the velocity the impulse removes)
        i11, i12, i22 = rows.Ki[c, 1], rows.Ki[c, 2], rows.Ki[c, 3]  # (_inverses)
        if i11 > 0.0:
            b1 = w1 + r1 * Pt1
            b2 = w2 + r2 * Pt2
            t1 = Pt1 - (i11 * b1 + i12 * b2)
            t2 = Pt2 - (i12 * b1 + i22 * b2)
        tt = math.sqrt(t1 * t1 + t2 * t2)
        if tt > lim:
            vt = math.sqrt(w1 * w1 + w2 * w2)
            if vt > slip:  # sliding: against the slip (maximal dissipation)
                t1 = -lim * w1 / vt
                t2 = -lim * w2 / vt
            else:  # at the cone's edge: radial projection of the sticking impulse
                t1 *= lim / tt
                t2 *= lim / tt
            state = 2
    d0 = dn
    d1 = t1 - Pt1
    d2 = t2 - Pt2
    if monotone:
        d0, d1, d2, state = _line_search(K, c, (v0 - target, v1, v2), (Pn, Pt1, Pt2),
                                         (d0, d1, d2), (r1, r2), lim, n_new, state)
    rows.P[c, 0] = Pn + d0
    rows.P[c, 1] = Pt1 + d1
    rows.P[c, 2] = Pt2 + d2
    return d0, d1, d2, state

@inline
def _dv(K, c, d0, d1, d2):
    """``|K_c dP|^2``: how much (squared) a change ``dP`` of row c's impulse changes its own
    velocity."""
    x = K[c, 0, 0] * d0 + K[c, 0, 1] * d1 + K[c, 0, 2] * d2
    y = K[c, 1, 0] * d0 + K[c, 1, 1] * d1 + K[c, 1, 2] * d2
    z = K[c, 2, 0] * d0 + K[c, 2, 1] * d1 + K[c, 2, 2] * d2
    return x * x + y * y + z * z

@inline
def _visit(rows, c, qd, slip, monotone):
    """:func:`_visit_row` of row c on its own: its velocity from ``J qd``, the change
    ``W dP`` applied to ``qd`` (O(nv)). Returns ``(|K dP|^2, state)`` (the change of the
    row's own velocity, squared [m^2/s^2 or rad^2/s^2])."""
    nv = qd.shape[0]
    v0 = 0.0
    v1 = 0.0
    v2 = 0.0
    for k in range(rows.span[c]):
        v0 += rows.JT[c, 0, k] * qd[k]
        v1 += rows.JT[c, 1, k] * qd[k]
        v2 += rows.JT[c, 2, k] * qd[k]
    d0, d1, d2, state = _visit_row(rows, c, v0, v1, v2, slip, monotone)
    for k in range(nv):
        qd[k] += rows.W[c, 0, k] * d0 + rows.W[c, 1, k] * d1 + rows.W[c, 2, k] * d2
    return _dv(rows.K, c, d0, d1, d2), state

@inline
def _visit_block(rows, blk, g, qd, slip, monotone, states):
    """:func:`_visit_row` of every contact of block group g in turn on the pair's 6 x 6
    block: the pair's velocity ``V = (J^T E_k) . qd`` (6,) once, each contact's velocity
    ``G_c V``, its change ``G_c^T dP`` kept in ``V += K6 G_c^T dP``, and ``qd += W6^T F`` once
    with the group's total ``F``: O(nv) per group instead of per contact, the same
    Gauss-Seidel iterate. Returns the largest ``|K dP|^2`` of its contacts [m^2/s^2]."""
    s = blk.slot[g]
    V = blk.V[0]
    F = blk.V[1]
    change = 0.0
    _gather(blk.JT6[s], qd, blk.span[s], 1.0, V, False)
    F[:] = 0.0
    for i in range(blk.first[g], blk.first[g + 1]):
        c = blk.order[i]
        G = blk.G[c]
        v0 = 0.0
        v1 = 0.0
        v2 = 0.0
        for k in range(6):
            v0 += G[0, k] * V[k]
            v1 += G[1, k] * V[k]
            v2 += G[2, k] * V[k]
        d0, d1, d2, st = _visit_row(rows, c, v0, v1, v2, slip, monotone)
        states[c] = st
        _block_update(G, blk.KG[c], d0, d1, d2, F, V)
        change = max(change, _dv(rows.K, c, d0, d1, d2))
    _spread(blk.W6[s], F, qd)
    return change

@inline
def _line_search(K, c, gv, P, d, r, lim, n_new, state):
    """The step of :func:`_visit` toward its candidate ``P + d`` shortened to the minimum
    of its energy change on the segment, or replaced by the normal step alone (the
    tangential impulse scaled into the new cone) where that lowers the energy more. Row c
    (``K`` its 3 x 3 blocks) with the 3-tuples ``gv = (g0, v1, v2)`` (the normal velocity
    minus its target, the tangential velocities), ``P = (Pn, Pt1, Pt2)`` the accumulated
    impulse and ``d = (d0, d1, d2)`` the candidate step, ``r = (r1, r2)`` the tangential
    constraint-force mixing, ``lim`` the new cone's radius, ``n_new`` the new normal
    impulse. Returns ``(d0, d1, d2, state)``."""
    g0, v1, v2 = gv
    _Pn, Pt1, Pt2 = P
    d0, d1, d2 = d
    r1, r2 = r
    g1 = v1 + r1 * Pt1
    g2 = v2 + r2 * Pt2
    slope = g0 * d0 + g1 * d1 + g2 * d2
    Kd0 = K[c, 0, 0] * d0 + K[c, 0, 1] * d1 + K[c, 0, 2] * d2
    Kd1 = K[c, 1, 0] * d0 + (K[c, 1, 1] + r1) * d1 + K[c, 1, 2] * d2
    Kd2 = K[c, 2, 0] * d0 + K[c, 2, 1] * d1 + (K[c, 2, 2] + r2) * d2
    curv = d0 * Kd0 + d1 * Kd1 + d2 * Kd2
    step = 1.0
    if slope >= 0.0:
        step = 0.0
    elif curv > 0.0 and -slope < curv:
        step = -slope / curv
    if step < 1.0:  # the candidate overshoots: a normal step alone may do better
        e1 = d0 * g0 + 0.5 * d0 * d0 * K[c, 0, 0]  # energy change of the normal step
        tt = math.sqrt(Pt1 * Pt1 + Pt2 * Pt2)
        sc = min(1.0, lim / tt) if tt > 0.0 else 1.0  # keep P_t in the new cone
        f1 = Pt1 * (sc - 1.0)
        f2 = Pt2 * (sc - 1.0)
        en = (e1 + g1 * f1 + g2 * f2 + d0 * (K[c, 1, 0] * f1 + K[c, 2, 0] * f2)
              + 0.5 * (f1 * (K[c, 1, 1] + r1) * f1 + 2.0 * f1 * K[c, 1, 2] * f2
                       + f2 * (K[c, 2, 2] + r2) * f2))
        ec = step * slope + 0.5 * step * step * curv
        if en < ec and en <= 0.0:
            step = 1.0
            d1 = f1
            d2 = f2
            state = 0 if n_new == 0.0 else 2
        else:
            d0 *= step
            d1 *= step
            d2 *= step
    return d0, d1, d2, state

@njit(**KERNEL)
def _sweeps(rows, nc, qd, tol, sweeps, slip, states, monotone, blk):
    """Gauss-Seidel sweeps over rows ``0..nc-1`` toward their ``rows.target`` normal
    speeds, on the accumulators ``rows.P``: the contacts group by group (``blk``; a block
    group on its 6 x 6 block, :func:`_visit_block`), then the rows after them (limits),
    until no visit of a sweep changes its row's velocity by more than ``tol`` [m/s], or
    ``sweeps`` times. The groups go in their order on even sweeps and in reverse on odd
    ones (the contacts inside a group and the rows after them always in their order): a
    chain of 300 capsules resting on a plane, 600 contacts in 60 blocks, converged to
    ``tol`` in 8 sweeps instead of 13. Returns the sweeps run and the residual: the largest
    change of a row's velocity by a visit of the last sweep [m/s]."""
    done = 0
    change = 0.0
    ng, ncon = blk.count[0], blk.count[1]
    for s in range(sweeps):
        change = 0.0
        for t in range(ng):
            g = t if s % 2 == 0 else ng - 1 - t
            if blk.slot[g] >= 0:
                change = max(change, _visit_block(rows, blk, g, qd, slip, monotone, states))
                continue
            if blk.pair[g, 0] == blk.pair[g, 1]:
                # inside one body: rows of zeros (contact_rows), no impulse, not visited
                for i in range(blk.first[g], blk.first[g + 1]):
                    c = blk.order[i]
                    states[c] = 0
                    for d in range(3):
                        rows.P[c, d] = 0.0
                continue
            for i in range(blk.first[g], blk.first[g + 1]):
                c = blk.order[i]
                dv, st = _visit(rows, c, qd, slip, monotone)
                states[c] = st
                change = max(change, dv)
        for c in range(ncon, nc):
            dv, st = _visit(rows, c, qd, slip, monotone)
            states[c] = st
            change = max(change, dv)
        done = s + 1
        if change <= tol * tol:  # (squared changes: _dv)
            break
    return done, math.sqrt(change)

@inline
def _work(rows, nc, P, qa, qb, blk):
    """``sum_c P_c . J_c (qa + qb) / 2``: the kinetic energy gained from ``qa`` to ``qb``
    when ``qb - qa = sum_c W_c P_c`` (since ``M W_c = J_c^T``); and ``sum |P_c . J_c qa|``."""
    s = 0.0
    a = 0.0
    _block_speeds(blk, qa, blk.Vg[0])
    _block_speeds(blk, qb, blk.Vg[1])
    for c in range(nc):
        for d in range(3):
            x = _row_speed(rows, blk, c, d, qa, blk.Vg[0])
            y = _row_speed(rows, blk, c, d, qb, blk.Vg[1])
            s += 0.5 * P[c, d] * (x + y)
            a += abs(P[c, d] * x)
    return s, a

@njit(**KERNEL)
def _solve(rows, nc, qd, qd0, work, tol, sweeps, slip, states, monotone, blk):
    """One solve from the current accumulators (see :func:`solve_impulses`); returns the
    sweeps run and the last sweep's residual [m/s]."""
    done, res = _sweeps(rows, nc, qd, tol, sweeps, slip, states, monotone, blk)
    nv = qd.shape[0]
    # restitution kick k_c = e_c P_c of the impacts; its energy change is s a + s^2 b / 2
    kicks = 0
    for k in range(nv):
        work[k] = 0.0
    for c in range(nc):
        e = rows.e[c] if rows.impact[c] != 0 else 0.0
        for d in range(3):
            rows.Pc[c, d] = e * rows.P[c, d]
        if e > 0.0:
            kicks += 1
            _row_impulse(rows, blk, c, rows.Pc[c, 0], rows.Pc[c, 1], rows.Pc[c, 2], work)
    _spread_blocks(blk, work)
    s = 0.0
    if kicks:
        # the energy the compression removed (T(qd0) - T(qd)) bounds what the kick may add
        gain, _ = _work(rows, nc, rows.P, qd0, qd, blk)
        a, _ = _work(rows, nc, rows.Pc, qd, qd, blk)
        b, _ = _work(rows, nc, rows.Pc, work, work, blk)  # kick^T J M^-1 J^T kick
        s = kick_scale(-gain, a, b)
        for k in range(nv):
            qd[k] += s * work[k]
    for c in range(nc):
        for d in range(3):
            rows.Pc[c, d] = rows.P[c, d] + s * rows.Pc[c, d]
            rows.P[c, d] = 0.0
    if kicks:
        d2, res = _sweeps(rows, nc, qd, tol, sweeps, slip, states, monotone, blk)
        done += d2
    for c in range(nc):
        for d in range(3):
            rows.P[c, d] += rows.Pc[c, d]
    return done, res

@inline
def kick_scale(D, a, b):
    """The scale ``s`` in [0, 1] of a restitution kick (Poisson's hypothesis) whose
    kinetic energy change ``s a + s^2 b / 2`` [J] may not pass ``D`` [J], the energy the
    compression removed: 1 where the whole kick fits, else the root (0 if none)."""
    s = 1.0
    if a + 0.5 * b > D:
        disc = a * a + 2.0 * b * D
        s = 0.0
        if b > 0.0 and disc >= 0.0:
            s = min(1.0, max(0.0, (-a + math.sqrt(disc)) / b))
    return s

@njit(**KERNEL)
def solve_impulses(rows, nc, qd, qd0, work, tol, sweeps, slip, states, blk):
    """Sequential impulses over rows ``0..nc-1``, ``qd`` (nv,) updated in place from the
    accumulators ``rows.P`` (zero, or warm-started: then ``qd = qd0 + sum W_c P_c``):

    1. compression: sweeps (:func:`_sweeps`: contact by contact in the groups of ``blk``
       (:class:`Blocks`, from :func:`contact_rows`), a block on its 6 x 6 block, then the
       rows after the contacts) until no visit changes its row's velocity by more than
       ``tol`` [m/s], or ``sweeps`` times; impacts aim at zero normal speed;
    2. restitution (Poisson's hypothesis): each impact gets ``e`` times its compression
       impulse (normal and friction, so it stays in the cone) on top, scaled down if needed
       so that the kinetic energy stays below its value before the compression; then the
       compression sweeps run again from fresh accumulators to stop what that made approach.

    For one frictionless or sticking impact this is Stronge's energetic restitution
    (``W_r = -e^2 W_c``, normal speed ``-e v_n^-``) and the scaling is not needed.

    Energy: the kinetic energy an impulse adds is exactly ``sum_c P_c . J_c (qd0 + qd) / 2``
    (since ``M W_c = J_c^T``). Coulomb's visits are not guaranteed to lower it (where
    friction couples into the normal and the slip turns during an impact, GS can feed
    energy in); a solve that ends with more kinetic energy than ``qd0`` had is discarded
    and repeated from zero impulses with the energy-monotone visits, so the impulses of a
    step never add kinetic energy. A contact outside its cone slides against its slip
    velocity when that exceeds ``slip`` [m/s]. ``qd0`` (nv,) the velocity before any
    impulse, ``work`` (nv,) scratch; ``states`` (nc,) receives each row's state (0
    separating, 1 sticking, 2 sliding). Returns ``(sweeps run, fallback, residual)`` with
    fallback 1 when the monotone solve was needed and the residual of :func:`_sweeps` [m/s]."""
    done, res = _solve(rows, nc, qd, qd0, work, tol, sweeps, slip, states, False, blk)
    gain, scale = _work(rows, nc, rows.P, qd0, qd, blk)
    if gain <= 1e-13 * scale:
        return done, 0, res
    for k in range(qd.shape[0]):
        qd[k] = qd0[k]
    for c in range(nc):
        for d in range(3):
            rows.P[c, d] = 0.0
    d2, res = _solve(rows, nc, qd, qd0, work, tol, sweeps, slip, states, True, blk)
    return done + d2, 1, res

@njit(**KERNEL)
def warm_start(rows, nc, prev_key, prev_P, n_prev, qd, mu_scale, blk):
    """Start rows ``0..nc-1`` from the impulses of the last step (:func:`warm_impulses`);
    ``qd`` receives ``W P``. Returns the number warm-started. ``blk``: the step's
    :class:`Blocks`. (Warm starting: the Gauss-Seidel sweeps then go on converging from
    step to step, which resting stacks and sticking on slopes need.)"""
    hits = warm_impulses(rows, nc, prev_key, prev_P, n_prev, mu_scale)
    for c in range(nc):
        if rows.P[c, 0] > 0.0:
            _row_impulse(rows, blk, c, rows.P[c, 0], rows.P[c, 1], rows.P[c, 2], qd)
    _spread_blocks(blk, qd)
    return hits

@njit(**KERNEL)
def warm_impulses(rows, nc, prev_key, prev_P, n_prev, mu_scale):
    """``rows.P`` of rows ``0..nc-1`` from the impulses of the last step: a row whose key
    (same pair and feature, or same limit) was there takes that world impulse ``prev_P``
    (n_prev, 3), expressed in its new frame, projected on its friction cone and scaled by
    ``mu_scale``; the others keep theirs (zero). Both key lists are increasing: a merge,
    O(nc + n_prev). Returns the number warm-started."""
    j = 0
    hits = 0
    for c in range(nc):
        key = rows.key[c]
        while j < n_prev and prev_key[j] < key:
            j += 1
        if j >= n_prev or prev_key[j] != key:
            continue
        Pn = (rows.frame[c, 0, 0] * prev_P[j, 0] + rows.frame[c, 0, 1] * prev_P[j, 1]
              + rows.frame[c, 0, 2] * prev_P[j, 2])
        if Pn <= 0.0:
            continue
        t1 = (rows.frame[c, 1, 0] * prev_P[j, 0] + rows.frame[c, 1, 1] * prev_P[j, 1]
              + rows.frame[c, 1, 2] * prev_P[j, 2])
        t2 = (rows.frame[c, 2, 0] * prev_P[j, 0] + rows.frame[c, 2, 1] * prev_P[j, 1]
              + rows.frame[c, 2, 2] * prev_P[j, 2])
        tt = math.sqrt(t1 * t1 + t2 * t2)
        lim = rows.mu[c] * Pn
        if tt > lim:
            t1 = t1 * lim / tt
            t2 = t2 * lim / tt
        rows.P[c, 0] = Pn * mu_scale
        rows.P[c, 1] = t1 * mu_scale
        rows.P[c, 2] = t2 * mu_scale
        hits += 1
    return hits

@njit(**KERNEL)
def save_impulses(rows, nc, prev_key, prev_P):
    """Keep the keys and world impulses ``F^T P`` of rows ``0..nc-1`` for
    :func:`warm_start` of the next step."""
    for c in range(nc):
        prev_key[c] = rows.key[c]
        for k in range(3):
            prev_P[c, k] = (rows.frame[c, 0, k] * rows.P[c, 0] + rows.frame[c, 1, k] * rows.P[c, 1]
                            + rows.frame[c, 2, k] * rows.P[c, 2])
