"""The contact response of one step (GLM IV.A, IV.B).

The contact response of one step (GLM IV.A, IV.B): :func:`respond_kernel` composes the
stages, rows (:mod:`~articulated.algorithms.contact_rows`), warm start and sweeps
(:mod:`~articulated.algorithms.sweeps`), position projection
(:mod:`~articulated.algorithms.projection`), over buffers that grow with the contacts
(:data:`Response`), by sequential impulses or, on many rows, by the matrix-free accelerated
projected gradient (:mod:`~articulated.algorithms.apgd`); the statistics it records (``STAT_*``); the energy bound's scale
(:func:`energy_scale`); and :func:`collision_matrix`, the public form of a contact's
``K``.
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np
from numba import njit

from ..config import inline, JIT, KERNEL
from .apgd import apgd_impulses, apgd_project, delassus_buffers, delassus_rows
from .impulse import Factor, ImpulseModel, impulse_scratch
from .contact_rows import block_buffers, contact_buffers, contact_rows, limit_rows, move_rows
from .speculative import gather_active, partition, speculative_buffers, wake
from .sweeps import save_impulses, solve_impulses, warm_impulses, warm_start
from .projection import _clamp_limits, _release_unstruck, project_positions

Response = namedtuple("Response", ("rows", "blocks", "states", "lam", "prev_key", "prev_P",
                                   "n_prev", "dq", "work", "present", "spec", "dl"))

Response.__doc__ = """The growing buffers of :func:`respond_kernel` (capacity ``cap`` rows):
``rows`` :class:`ContactRows`, ``blocks`` :class:`Blocks`, ``states`` (cap,) int64 (the
sweeps' contact states), ``lam`` (cap, 2) projection multipliers and their bounds,
``prev_key`` (cap,) int64 and ``prev_P`` (cap, 3) the last step's keys and world impulses
(warm start), ``n_prev`` (1,) int64 their number, ``dq`` and ``work`` (nv,) scratch,
``present`` (2 nl,) int64 the limit rows already added this step, ``spec``
:class:`~articulated.algorithms.speculative.Speculative` the active and dormant
contacts, ``dl`` :class:`~articulated.algorithms.apgd.Delassus` the buffers of the
matrix-free solve."""

ResponseOptions = namedtuple("ResponseOptions", (
    "h", "tol", "sweeps", "rest_speed", "slip_speed", "warm_start", "project",
    "project_sweeps", "limit_e", "key0", "energy_bound", "dormant", "iterations", "apgd_work"))

ResponseOptions.__doc__ = """The scalars of :func:`respond_kernel`: step ``h`` [s], ``tol``
[m/s], ``sweeps``, ``rest_speed`` and ``slip_speed`` [m/s], ``warm_start`` and ``project``
(bool), ``project_sweeps``, ``limit_e`` (restitution of the limits), ``key0`` (the first
limit key), ``energy_bound`` (bool; applied by the steppers after the response, not by
:func:`respond_kernel`) and ``dormant`` (bool: speculative contacts the step does not close
get no row, :mod:`~articulated.algorithms.speculative`), ``iterations`` (most iterations of
a matrix-free solve) and ``apgd_work`` (a step whose active contacts times dofs reach this
is solved matrix-free, :mod:`~articulated.algorithms.apgd`; the others by sequential
impulses); see :class:`articulated.simulation.contact.ContactStepper`."""

@inline
def options_at(o, h):
    """The :class:`ResponseOptions` ``o`` for a (sub)step of ``h`` [s] (``o`` itself when
    ``h`` is its step)."""
    if h == o.h:
        return o
    return ResponseOptions(h, o.tol, o.sweeps, o.rest_speed, o.slip_speed, o.warm_start,
                           o.project, o.project_sweeps, o.limit_e, o.key0, o.energy_bound,
                           o.dormant, o.iterations, o.apgd_work)

NSTATS = 16
"""Length of a step's statistics vector."""

STAT_N, STAT_LIMITS, STAT_IMPACTS, STAT_STICKING, STAT_SLIDING, STAT_SWEEPS, STAT_FALLBACK, \
    STAT_DEPTH, STAT_APPROACH, STAT_KE_BEFORE, STAT_KE_AFTER, STAT_DETECT, STAT_RESPONSE, \
    STAT_ENERGY, STAT_RESIDUAL, STAT_SOLVER = range(NSTATS)
"""Slots of a step's statistics vector (:data:`NSTATS`,) float64, in the order of
:data:`articulated.simulation.contact.CONTACT_STATS`."""

WAKE_ROUNDS = 8

"""Most times a step's dormant contacts wake and the step is solved again
(:func:`respond_kernel`); the last solve leaves any still closed to the next step, which
finds them touching."""

BOUND_SLACK = 1e-12

"""Relative slack of the energy bound (contact option ``energy_bound``): an excess below
``BOUND_SLACK (|E| + |W| + T)`` is rounding and left alone."""

@njit(**JIT)
def energy_scale(E, W, T1, V1):
    """The energy bound of a (sub)step (contact option ``energy_bound``): the factor ``s``
    in [0, 1] by which ``qd+`` is scaled so that the total energy at its end, ``T1 + V1``
    [J], is at most its start ``E`` plus the applied forces' work ``W`` [J]: ``s =
    sqrt((T1 - excess) / T1)`` (at least 0) with ``excess = T1 + V1 - E - W``, the
    projection onto the energy level in the mass-matrix metric (Hairer, Lubich & Wanner,
    Geometric Numerical Integration, IV.4); 1 where there is no excess beyond
    :data:`BOUND_SLACK`. The energy taken out is ``T1 (1 - s^2)``."""
    excess = T1 + V1 - (E + W)
    if excess > BOUND_SLACK * (abs(E) + abs(W) + T1) and T1 > 0.0:
        return math.sqrt(max(T1 - excess, 0.0) / T1)
    return 1.0

@njit(**JIT)
def response_buffers(cap, nb, nv, nlim):
    """Zeroed :class:`Response` for ``cap`` rows of a tree with ``nb`` bodies, ``nv`` dofs
    and ``nlim`` limited joints."""
    return Response(contact_buffers(cap, nv), block_buffers(cap, nb, nv),
                    np.zeros(cap, np.int64), np.zeros((cap, 2)), np.zeros(cap, np.int64),
                    np.zeros((cap, 3)), np.zeros(1, np.int64), np.zeros(nv), np.zeros(nv),
                    np.zeros(2 * nlim, np.int64), speculative_buffers(cap, nb),
                    delassus_buffers(cap, nb, nv))

@njit(**JIT)
def grow_response(old, cap, nb):
    """A :class:`Response` like ``old`` with room for ``cap`` rows (``nb`` bodies of the
    tree), keeping the last step's impulses (for the warm start) and its contacts'
    buffers ``spec``."""
    nv = old.dq.shape[0]
    nlim = old.present.shape[0] // 2
    rb = Response(contact_buffers(cap, nv), block_buffers(cap, nb, nv),
                  np.zeros(cap, np.int64), np.zeros((cap, 2)), np.zeros(cap, np.int64),
                  np.zeros((cap, 3)), np.zeros(1, np.int64), np.zeros(nv), np.zeros(nv),
                  np.zeros(2 * nlim, np.int64), old.spec, delassus_buffers(cap, nb, nv))
    n = min(old.n_prev[0], cap)
    rb.n_prev[0] = n
    for c in range(n):
        rb.prev_key[c] = old.prev_key[c]
        for k in range(3):
            rb.prev_P[c, k] = old.prev_P[c, k]
    return rb

@njit(**KERNEL)
def respond_kernel(im, fac, sc, con, n, q, qs, lim, opt, rb, res):
    """The impulses of one step (GLM IV.A-B, VI): contact rows of the active contacts among
    the ``n`` of ``con`` (:class:`~articulated.algorithms.collision.Contacts`, bodies
    numbered as in ``im``; the others dormant, :mod:`~articulated.algorithms.speculative`),
    the rows of the limits ``lim`` that the step could reach, warm start, sequential
    impulses (:func:`solve_impulses`) and post-stabilization (:func:`project_positions`),
    or, where the active contacts times ``nv'`` reach ``opt.apgd_work``, their matrix-free forms
    (:func:`~articulated.algorithms.apgd.apgd_impulses`,
    :func:`~articulated.algorithms.apgd.apgd_project`); the
    limits that the impulses or the projection made reachable (they move every joint) and
    the dormant contacts they would close join, and the step is solved again (at most
    once per limited joint and :data:`WAKE_ROUNDS` times for the contacts).

    ``q`` (nq,) the model's configuration (limit positions); ``qs`` (nv',) the
    unconstrained velocities ``qd + h qdd`` in the dof space of ``im``/``fac`` (the whole
    model's or a hybrid body's reduced tree). Writes into ``res`` = ``(qd1, v, st)``:
    ``qd1`` (nv',) the velocities after the impulses, ``v`` (nv',) the step's displacement
    ``h qd1 + dq``, and the slots :data:`STAT_LIMITS` .. :data:`STAT_APPROACH`,
    :data:`STAT_RESIDUAL` (the last solve's residual [m/s]) and :data:`STAT_SOLVER` (1:
    matrix-free) of ``st`` (16,). ``rb`` (:class:`Response`) must hold ``n`` contacts (``rb.spec``) and the rows of
    the active contacts and ``2 nl`` more; row ``r < rb.spec.count[0]`` is contact
    ``rb.spec.cidx[r]``, the limits follow. Returns the number of rows solved (0: no
    impulse), or minus the rows needed when ``rb`` holds fewer (nothing done; see
    :func:`respond`). Dormant contacts wake only while there is room for their rows."""
    qd1, v, st = res
    h = opt.h
    nvr = qs.shape[0]
    rows = rb.rows
    blk = rb.blocks
    sp = rb.spec
    dq = rb.dq[:nvr]
    for k in range(nvr):
        dq[k] = 0.0
        qd1[k] = qs[k]
        v[k] = qs[k] * h
    blk.count[0] = 0
    blk.count[1] = 0
    na = 0
    dl = rb.dl
    if n:
        na = partition(im, fac, con, n, qs, h, rb.prev_key, rb.prev_P, rb.n_prev[0],
                       opt.dormant, sp)
        if na + 2 * lim.dof.shape[0] > rows.P.shape[0]:
            return -(na + 2 * lim.dof.shape[0])
    free = na * nvr >= opt.apgd_work   # matrix-free
    if na:
        if free:
            delassus_rows(im, fac, sp.act, na, qs, h, opt.rest_speed, rows, dl)
        else:
            contact_rows(im, fac, sc, sp.act, na, qs, h, opt.rest_speed, rows, blk)
    nlim = lim.dof.shape[0]
    nl = 0
    if nlim:
        for k in range(2 * nlim):
            rb.present[k] = 0
        nl = limit_rows(im, fac, sc, lim, q, qs, v, opt, rows, na, rb.present)
    nr = na + nl
    for k in range(STAT_LIMITS, STAT_APPROACH + 1):
        st[k] = 0.0
    st[STAT_RESIDUAL] = 0.0
    st[STAT_SOLVER] = free
    if nr:
        resid = 0.0
        sweeps = 0
        fallback = 0
        n_prev = rb.n_prev[0]
        rounds = nlim + 1 + WAKE_ROUNDS
        for it in range(rounds):
            for k in range(nvr):
                qd1[k] = qs[k]
            for c in range(nr):
                for d in range(3):
                    rows.P[c, d] = 0.0
            if free:
                if opt.warm_start and n_prev:
                    warm_impulses(rows, nr, rb.prev_key, rb.prev_P, n_prev, 1.0)
                s1, resid = apgd_impulses(im, fac, dl, rows, nr, qs, qd1, opt.tol,
                                        opt.iterations, rb.states)
            else:
                if opt.warm_start and n_prev:
                    warm_start(rows, nr, rb.prev_key, rb.prev_P, n_prev, qd1, 1.0, blk)
                s1, f1, resid = solve_impulses(rows, nr, qd1, qs, rb.work[:nvr], opt.tol,
                                             opt.sweeps, opt.slip_speed, rb.states, blk)
                fallback |= f1
            sweeps += s1
            _release_unstruck(rows, nr)
            if opt.project and free:
                apgd_project(im, fac, dl, rows, nr, qd1, h, opt.tol * h, opt.iterations, dq)
            elif opt.project:
                project_positions(rows, nr, qd1, h, opt.project_sweeps, rb.lam, dq, blk,
                                  opt.tol * h)
            for k in range(nvr):
                v[k] = qd1[k] * h + dq[k]
            more = 0
            if nlim:
                more = limit_rows(im, fac, sc, lim, q, qs, v, opt, rows, nr, rb.present)
                nl += more
                nr += more
            woke = 0
            if na < n and it < rounds - 1:
                woke = wake(im, fac, con, n, v, opt.tol * h, rows.P.shape[0] - nr, sp)
            if woke:  # rebuild the contact rows, warm-started from this solve
                save_impulses(rows, nr, rb.prev_key, rb.prev_P)
                n_prev = nr
                na1 = gather_active(con, n, sp.flag, sp.act, sp.cidx)
                move_rows(rows, na, na1, nr - na)
                if free:
                    delassus_rows(im, fac, sp.act, na1, qs, h, opt.rest_speed, rows, dl)
                else:
                    contact_rows(im, fac, sc, sp.act, na1, qs, h, opt.rest_speed, rows, blk)
                nr += na1 - na
                na = na1
            elif not more:
                break
        if nlim:
            _clamp_limits(lim, q, v)
        save_impulses(rows, nr, rb.prev_key, rb.prev_P)
        sticking = 0
        sliding = 0
        for c in range(na):
            sticking += rb.states[c] == 1
            sliding += rb.states[c] == 2
        impacts = 0
        for c in range(nr):
            impacts += rows.impact[c] > 0
        st[STAT_LIMITS] = nl
        st[STAT_IMPACTS] = impacts
        st[STAT_STICKING] = sticking
        st[STAT_SLIDING] = sliding
        st[STAT_SWEEPS] = sweeps
        st[STAT_FALLBACK] = fallback
        st[STAT_RESIDUAL] = resid
    depth = 0.0
    approach = 0.0
    for c in range(n):
        depth = max(depth, -con.dist[c])
        approach = max(approach, -sp.vn[c])
    st[STAT_DEPTH] = depth
    st[STAT_APPROACH] = approach
    sp.count[0] = na
    sp.count[1] = n - na
    rb.n_prev[0] = nr
    return nr

@njit(**JIT)
def respond(im, fac, sc, con, n, q, qs, lim, opt, rb, res):
    """:func:`respond_kernel` with the buffers ``rb`` grown as needed (room for the ``n``
    contacts, for the rows of the active ones and of the limits). Returns ``(rows solved,
    rb)``."""
    nb = rb.spec.tw.shape[0]
    if n > rb.spec.flag.shape[0]:
        rb = Response(rb.rows, rb.blocks, rb.states, rb.lam, rb.prev_key, rb.prev_P,
                      rb.n_prev, rb.dq, rb.work, rb.present, speculative_buffers(2 * n, nb),
                      rb.dl)
    nr = respond_kernel(im, fac, sc, con, n, q, qs, lim, opt, rb, res)
    if nr < 0:
        rb = grow_response(rb, -2 * nr, nb)
        nr = respond_kernel(im, fac, sc, con, n, q, qs, lim, opt, rb, res)
    return nr, rb

def collision_matrix(model, q, body, point, normal, other=None):
    """Compute the collision matrix K of one contact (Mirtich 1996; GLM IV.A step 4).

    By three test impulses on the articulated factorization at ``q`` (all joints active).

    Parameters
    ----------
    model : Model
    q : (nq,) float64
        Configuration.
    body : str or int
        Body a (the normal points from b to a).
    point : (3,) float
        Contact point, world coordinates [m].
    normal : (3,) float
        Contact normal, world coordinates (normalized here).
    other : str, int or None
        Body b (None: a static obstacle).

    Returns
    -------
    K : (3, 3) float64
        Change of the relative contact velocity (of a's point minus b's) per unit impulse
        [m/s per N s], in the contact frame ``(n, t1, t2)``: ``K = F (J_a - J_b) M^-1 (J_a -
        J_b)^T F^T``.
    J : (3, nv) float64
        ``F (J_a - J_b)``: rows of the contact Jacobian in that frame.
    F : (3, 3) float64
        Rows ``n, t1, t2`` of the contact frame (world).

    Raises
    ------
    ValueError
        For an unknown body, ``other == body``, or a non-finite or zero
        point/normal.
    """
    from ..algorithms.kinematics import _world_poses_kernel
    from .aba import aba_kernel
    from .collision import Contacts

    a = model.body_id(body)
    b = -1 if other is None else model.body_id(other)
    if a == b:
        raise ValueError(f"body {model.body_name[a]!r}: a contact needs two different bodies")
    x = np.asarray(point, dtype=np.float64)
    n = np.asarray(normal, dtype=np.float64)
    if x.shape != (3,) or n.shape != (3,) or not (np.isfinite(x).all() and np.isfinite(n).all()) \
            or np.linalg.norm(n) == 0.0:
        raise ValueError("point and normal must be finite (3,) vectors, the normal non-zero")
    q = model.check_configuration(q)
    d = model.data()
    z = np.zeros(model.nv)
    aba_kernel(d.model_i, d.model_f, q, z, z, np.zeros((0, 6)), False, d.buf, True)
    _world_poses_kernel(d.model_i, d.model_f, q, d.buf)
    con = Contacts(np.zeros((1, 2), np.int64), np.array([[a, b]], np.int64), x[None].copy(),
                   (n / np.linalg.norm(n))[None].copy(), np.zeros(1), np.zeros(1), np.zeros(1),
                   np.zeros(1, np.int64))
    ma = model.arrays()
    nb, nv = model.nb, model.nv
    rows = contact_buffers(1, nv)
    sc = impulse_scratch(nb, nv)
    contact_rows(ImpulseModel(ma.parent, ma.vadr, ma.jnv, ma.S),
                 Factor(d.Xup_E, d.Xup_r, d.UDinv, d.Dinv, d.oE, d.op), sc, con, 1, z, 1.0, 0.0,
                 rows, block_buffers(1, nb, nv))
    return rows.K[0].copy(), rows.JT[0].copy(), rows.frame[0].copy()
