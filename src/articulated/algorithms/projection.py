"""Position projection of the contact response.

Position projection of the contact response (GLM ref. [4]) and the runaway check of a
step's displacement.

**Drift** (Cline & Pai 2003, post-stabilization, GLM ref. [4]): after the position update,
a contact whose predicted gap ``d + h v_n`` is negative is pushed out by ``dq = W_n lambda``
with ``lambda >= 0`` from the normal rows ``K_nn`` (sequential, as the impulses); no
velocity bias is added. An impact inside the step is placed where it would be after
rebounding, pulled there if need be, but by no more than it would take on its own
(:func:`project_positions`).
"""

from __future__ import annotations

import math

from numba import njit

from ..config import inline, JIT, KERNEL
from .contact_rows import _block_speeds, _block_update, _gather, _row_speed, _spread

@inline
def _project_row(rows, c, g, lam):
    """One projection visit of row c at predicted gap error ``g`` [m]: its new multiplier
    ``lam[c, 0]``, at least its bound ``lam[c, 1]`` (zero, or below zero for an exact
    impact row: :func:`project_positions`); returns the change ``d lambda``."""
    new = max(lam[c, 0] - g / rows.K[c, 0, 0], lam[c, 1])
    dl = new - lam[c, 0]
    lam[c, 0] = new
    return dl

@inline
def _project_block(rows, blk, g, qd, h, lam, dq):
    """The projection visits of block group g's contacts on the pair's 6 x 6 block (as
    :func:`_visit_block`); returns the largest ``|d lambda| K_nn`` [m]."""
    s = blk.slot[g]
    V = blk.V[0]
    F = blk.V[1]
    change = 0.0
    _gather(blk.JT6[s], qd, blk.span[s], h, V, False)
    _gather(blk.JT6[s], dq, blk.span[s], 1.0, V, True)
    F[:] = 0.0
    for i in range(blk.first[g], blk.first[g + 1]):
        c = blk.order[i]
        if rows.K[c, 0, 0] <= 0.0:
            continue
        gap = rows.dist[c] - rows.gap[c]
        for k in range(6):
            gap += blk.G[c, 0, k] * V[k]
        dl = _project_row(rows, c, gap, lam)
        if dl == 0.0:
            continue
        _block_update(blk.G[c], blk.KG[c], dl, 0.0, 0.0, F, V)
        change = max(change, abs(dl) * rows.K[c, 0, 0])
    _spread(blk.W6[s], F, dq)
    return change

@inline
def _project_one(rows, c, qd, h, lam, dq):
    """The projection visit of row c on its own (O(nv)); returns ``|d lambda| K_nn``."""
    nv = qd.shape[0]
    if rows.K[c, 0, 0] <= 0.0:
        return 0.0
    g = rows.dist[c] - rows.gap[c]
    for k in range(rows.span[c]):
        g += rows.JT[c, 0, k] * (h * qd[k] + dq[k])
    dl = _project_row(rows, c, g, lam)
    if dl != 0.0:
        for k in range(nv):
            dq[k] += rows.W[c, 0, k] * dl
    return abs(dl) * rows.K[c, 0, 0]

@inline
def _release_unstruck(rows, nr):
    """An impact inside the step (``impact == 2``: placed exactly where it would be after
    rebounding) that took no normal impulse in the solve did not happen: another row's
    impulse turned it away before it closed its gap. Its projection row becomes a plain
    unilateral one aiming at gap 0 (``impact = 1``), so that the projection never pulls
    a separating contact back onto its surface (two such rows of one capsule on a
    cylinder, the exact one 3.9 mm away, left the other 1.4 mm deep)."""
    for c in range(nr):
        if rows.impact[c] == 2 and rows.P[c, 0] <= 0.0:
            rows.impact[c] = 1
            rows.gap[c] = 0.0

@inline
def _clamp_limits(lim, q, v):
    """The step's displacement ``v`` (nv,) cut back to the joint limits ``lim`` where the
    sweeps or the projection, stopped at their caps, left a limit row short of its bound;
    the velocities are left alone (the next step's limit row takes the approach)."""
    for l in range(lim.dof.shape[0]):
        k = lim.dof[l]
        x = q[lim.qadr[l]]
        if x + v[k] < lim.lo[l]:
            v[k] = lim.lo[l] - x
        elif x + v[k] > lim.hi[l]:
            v[k] = lim.hi[l] - x

MAX_STEP_DISPLACEMENT = math.pi

"""Largest displacement of one dof in one step [rad or m] that a contact step may give
(:func:`runaway_dof`): beyond it the impulses or the position projection diverged, and the
simulators stop with an error naming the joint rather than go on from nonsense."""

@njit(**JIT)
def runaway_dof(v):
    """The first dof whose step displacement ``v[k]`` is beyond
    :data:`MAX_STEP_DISPLACEMENT` or not finite, -1 if none."""
    for k in range(v.shape[0]):
        if not abs(v[k]) <= MAX_STEP_DISPLACEMENT:
            return k
    return -1

@njit(**KERNEL)
def project_positions(rows, nc, qd, h, sweeps, lam, dq, blk, tol):
    """Post-stabilization (Cline & Pai 2003): ``dq`` (nv,) with ``J_n dq >= gap* - (d + h
    v_n)`` for every row (its gap after the step predicted from the new ``qd``, against
    the aimed ``rows.gap``), by sequential projection on the normal rows in the groups of
    :func:`_sweeps` (``blk``, always in their order), ``lambda >= 0``, until no visit moves
    its row by more than ``tol`` [m], or ``sweeps`` times. ``lam`` (nc, 2) scratch: the
    multipliers and their lower bounds.

    An impact inside the step (``impact == 2``) aims at ``=``: it is placed where it would
    be after closing its gap and rebounding, so its row may also pull, but by no more than
    it would on its own (``lambda >= -(d + h v_n - gap*) / K_nn``). Without that bound two
    nearly parallel rows of one pair can ask for opposite things (one pulls, the other
    pushes, and the sweeps end with the piece deep inside or with large multipliers that
    turn it). Returns the largest predicted depth before the projection [m]."""
    nv = qd.shape[0]
    for k in range(nv):
        dq[k] = 0.0
    worst = 0.0
    needed = False
    _block_speeds(blk, qd, blk.Vg[0])
    for c in range(nc):
        vn = _row_speed(rows, blk, c, 0, qd, blk.Vg[0])
        g = rows.dist[c] + h * vn
        worst = min(worst, g)
        lam[c, 0] = 0.0
        lam[c, 1] = 0.0
        if rows.impact[c] == 2:
            needed = True
            if rows.K[c, 0, 0] > 0.0:
                lam[c, 1] = -max(g - rows.gap[c], 0.0) / rows.K[c, 0, 0]
        elif g < rows.gap[c]:
            needed = True
    if not needed:
        return 0.0
    ng, ncon = blk.count[0], blk.count[1]
    for s in range(sweeps):
        change = 0.0
        for g in range(ng):
            if blk.slot[g] >= 0:
                change = max(change, _project_block(rows, blk, g, qd, h, lam, dq))
                continue
            for i in range(blk.first[g], blk.first[g + 1]):
                change = max(change, _project_one(rows, blk.order[i], qd, h, lam, dq))
        for c in range(ncon, nc):
            change = max(change, _project_one(rows, c, qd, h, lam, dq))
        if change <= tol:
            break
    return -worst
