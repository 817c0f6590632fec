"""Dormant speculative contacts: rows only for the contacts a step can close.

Detection reports every pair within its speculative reach (the distance its shapes can
travel in a step, :mod:`~articulated.algorithms.collision`), so that nothing tunnels. A
contact at gap ``d > 0`` whose normal speed ``v_n`` under the step's unconstrained
velocity ``qd + h qdd`` does not close it (``d + h v_n >= 0``) and that held no impulse in
the last step is *dormant*: it gets no row (no test impulses, no ``K``, no visits of the
sweeps). After the sweeps and the position projection, each dormant contact's gap after the
step, ``d + n . (dx_a - dx_b)`` for the step's displacement ``h qd+ + dq`` (linear in the
joints), is checked; those it would close (by more than ``tol h``) wake: their rows are
built and the step is solved again, warm-started from the impulses just found. This is the
classic speculative contact (Catto, "Speculative contacts", GDC 2013; MuJoCo's ``margin``
likewise keeps a separated contact's force at zero while its constraint is slack): a
dormant row's impulse is zero in the solution, so leaving it out changes nothing but the
cost. Contacts inside one rigid piece (a hybrid body's) never move against each other and
stay dormant at any positive gap.

The normal speeds come from the bodies' world twists (:func:`body_twists`, O(nb) per
check), not from contact rows.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from ..config import inline, JIT, KERNEL
from .collision import contact_buffer

Speculative = namedtuple("Speculative", ("act", "cidx", "flag", "vn", "tw", "count"))

Speculative.__doc__ = """The active and dormant contacts of a step (capacity ``cap``):
``act`` :class:`~articulated.algorithms.collision.Contacts` the active ones, in the
detector's order, whose rows the response builds; ``cidx`` (cap,) int64 the detector's
index of each; ``flag`` (cap,) int64 per detected contact 1 active, 0 dormant; ``vn``
(cap,) its normal speed under the unconstrained velocity [m/s] (negative: approaching);
``tw`` (nb, 6) scratch of :func:`body_twists`; ``count`` (2,) int64 the active and
dormant contacts of the last (sub)step."""


@njit(**JIT)
def speculative_buffers(cap, nb):
    """Zeroed :class:`Speculative` for ``cap`` contacts of a tree with ``nb`` bodies."""
    return Speculative(contact_buffer(cap), np.zeros(cap, np.int64), np.zeros(cap, np.int64),
                       np.zeros(cap), np.zeros((nb, 6)), np.zeros(2, np.int64))


@njit(**KERNEL)
def body_twists(im, fac, x, tw):
    """World twists ``tw`` (nb, 6) ``[omega; v_O]`` [rad/s; m/s] (``v_O`` the velocity of
    the body's origin, world coordinates) of every body of the tree ``im`` (an
    :data:`~articulated.algorithms.impulse.ImpulseModel`, world poses ``fac.oE``,
    ``fac.op``) for joint velocities ``x`` (nv,): ``omega_i = omega_p + oE_i^T S_w x_i``,
    ``v_i = v_p + omega_p x (op_i - op_p) + oE_i^T S_v x_i`` (RBDA eq. 2.74 in world
    coordinates; ``S`` in body coordinates, about the body's origin). O(nb)."""
    for i in range(im.parent.shape[0]):
        p = im.parent[i]
        w0 = w1 = w2 = v0 = v1 = v2 = 0.0
        if p >= 0:
            w0, w1, w2 = tw[p, 0], tw[p, 1], tw[p, 2]
            r0 = fac.op[i, 0] - fac.op[p, 0]
            r1 = fac.op[i, 1] - fac.op[p, 1]
            r2 = fac.op[i, 2] - fac.op[p, 2]
            v0 = tw[p, 3] + w1 * r2 - w2 * r1
            v1 = tw[p, 4] + w2 * r0 - w0 * r2
            v2 = tw[p, 5] + w0 * r1 - w1 * r0
        a0 = a1 = a2 = b0 = b1 = b2 = 0.0  # S x_i in body coordinates
        for k in range(im.vadr[i], im.vadr[i] + im.jnv[i]):
            a0 += im.S[k, 0] * x[k]
            a1 += im.S[k, 1] * x[k]
            a2 += im.S[k, 2] * x[k]
            b0 += im.S[k, 3] * x[k]
            b1 += im.S[k, 4] * x[k]
            b2 += im.S[k, 5] * x[k]
        E = fac.oE
        tw[i, 0] = w0 + E[i, 0, 0] * a0 + E[i, 1, 0] * a1 + E[i, 2, 0] * a2
        tw[i, 1] = w1 + E[i, 0, 1] * a0 + E[i, 1, 1] * a1 + E[i, 2, 1] * a2
        tw[i, 2] = w2 + E[i, 0, 2] * a0 + E[i, 1, 2] * a1 + E[i, 2, 2] * a2
        tw[i, 3] = v0 + E[i, 0, 0] * b0 + E[i, 1, 0] * b1 + E[i, 2, 0] * b2
        tw[i, 4] = v1 + E[i, 0, 1] * b0 + E[i, 1, 1] * b1 + E[i, 2, 1] * b2
        tw[i, 5] = v2 + E[i, 0, 2] * b0 + E[i, 1, 2] * b1 + E[i, 2, 2] * b2


@inline
def _point_normal(tw, op, b, x, n):
    """``n . v(x)`` of body b's point ``x`` (world) moving with its world twist ``tw[b]``
    (0 for the world, ``b < 0``)."""
    if b < 0:
        return 0.0
    r0, r1, r2 = x[0] - op[b, 0], x[1] - op[b, 1], x[2] - op[b, 2]
    w0, w1, w2 = tw[b, 0], tw[b, 1], tw[b, 2]
    return (n[0] * (tw[b, 3] + w1 * r2 - w2 * r1) + n[1] * (tw[b, 4] + w2 * r0 - w0 * r2)
            + n[2] * (tw[b, 5] + w0 * r1 - w1 * r0))


@inline
def normal_speed(con, c, op, tw):
    """``n . (v_a - v_b)`` at contact c's point (``con``:
    :class:`~articulated.algorithms.collision.Contacts`) for the world twists ``tw``."""
    x = (con.point[c, 0], con.point[c, 1], con.point[c, 2])
    n = (con.normal[c, 0], con.normal[c, 1], con.normal[c, 2])
    return (_point_normal(tw, op, con.body[c, 0], x, n)
            - _point_normal(tw, op, con.body[c, 1], x, n))


@njit(**KERNEL)
def gather_active(con, n, flag, act, cidx):
    """Copy the contacts ``c < n`` of ``con`` with ``flag[c] != 0`` into ``act`` (in their
    order, so their keys still increase), their indices into ``cidx``; returns their
    number."""
    k = 0
    for c in range(n):
        if flag[c] == 0:
            continue
        for j in range(2):
            act.geom[k, j] = con.geom[c, j]
            act.body[k, j] = con.body[c, j]
        for j in range(3):
            act.point[k, j] = con.point[c, j]
            act.normal[k, j] = con.normal[c, j]
        act.dist[k] = con.dist[c]
        act.mu[k] = con.mu[c]
        act.e[k] = con.e[c]
        act.key[k] = con.key[c]
        cidx[k] = c
        k += 1
    return k


@njit(**KERNEL)
def partition(im, fac, con, n, qs, h, prev_key, prev_P, n_prev, dormant, sp):
    """Mark the contacts ``0..n-1`` of ``con`` active (``sp.flag[c] = 1``) or dormant (0)
    for a step of ``h`` [s] from the unconstrained velocities ``qs`` (nv,): active when
    touching (``d <= 0``), closing within the step (``d + h v_n < 0``) or held by an
    impulse in the last step (a key among ``prev_key[:n_prev]`` with a positive normal part
    of ``prev_P``; both key lists increase), or every one without ``dormant``. Normal speeds into ``sp.vn`` (n,); the active
    contacts gathered into ``sp.act`` and ``sp.cidx`` (:func:`gather_active`). Returns
    their number."""
    body_twists(im, fac, qs, sp.tw)
    j = 0
    for c in range(n):
        vn = normal_speed(con, c, fac.op, sp.tw)
        sp.vn[c] = vn
        d = con.dist[c]
        on = not dormant or d <= 0.0 or d + h * vn < 0.0
        key = con.key[c]
        while j < n_prev and prev_key[j] < key:
            j += 1
        if not on and j < n_prev and prev_key[j] == key:
            on = (con.normal[c, 0] * prev_P[j, 0] + con.normal[c, 1] * prev_P[j, 1]
                  + con.normal[c, 2] * prev_P[j, 2]) > 0.0
        sp.flag[c] = 1 if on else 0
    return gather_active(con, n, sp.flag, sp.act, sp.cidx)


@njit(**KERNEL)
def wake(im, fac, con, n, dx, slack, room, sp):
    """Wake the dormant contacts of ``con`` (``sp.flag[c] == 0``, ``c < n``) that the
    step's displacement ``dx`` (nv,) would close by more than ``slack`` [m]: ``d + n .
    (dx_a - dx_b) < -slack``, at most ``room`` of them. Returns the number woken (their
    ``sp.flag`` set to 1; gather them with :func:`gather_active`)."""
    body_twists(im, fac, dx, sp.tw)
    woke = 0
    for c in range(n):
        if woke < room and sp.flag[c] == 0 and (
                con.dist[c] + normal_speed(con, c, fac.op, sp.tw) < -slack):
            sp.flag[c] = 1
            woke += 1
    return woke
