"""Accelerated projected gradient on the contacts' Delassus operator, matrix-free.

The contact impulses of a step solve the cone complementarity problem (Anitescu &
Tasora 2010) as the convex quadratic program

    min f(P) = 1/2 P^T K P + P^T (J qd* - v*)   over P_c in the friction cone of each row,

``K = J M^-1 J^T`` the Delassus operator of the rows (3 per contact: normal, two tangents;
1 per joint limit), ``qd*`` the unconstrained velocities and ``v*`` the target speeds
(:func:`~articulated.algorithms.contact_rows._target`: restitution's compression,
speculative gaps). :func:`apgd` minimizes it by Nesterov's accelerated projected gradient
with adaptive step and restart (Mazhar, Heyn, Negrut et al. 2015, "Using Nesterov's method
to accelerate multibody dynamics with friction and contact", ACM TOG 34(3), Alg. 3; as
Project Chrono's ``ChSolverAPGD``).

**Matrix-free** (:func:`delassus_apply`). ``K x`` is never formed: ``J^T x`` is a spatial
impulse on each struck body (3 x 6 rows ``G`` per side, built in O(1) per contact by
:func:`delassus_rows`; no test impulses, no ``W = M^-1 J^T``), ``M^-1`` is one impulse pass
through the step's articulated factorization (ABA's passes 2-3 on impulses, RBDA Table 7.1,
as :func:`~articulated.algorithms.impulse.impulse_response` for one column but loaded on
every struck body at once), up and down the union of the struck bodies' paths to the root
only, and ``J`` reads the struck bodies' velocity changes. An iteration costs O(path + m)
against a Gauss-Seidel sweep's O(m nv), and the rows cost O(m) against O(m nv).

**Energy.** The iterate returned has ``f <= 0 = f(0)`` (the last one, or else the one with
the lowest ``f`` among the iterates and ``P = 0``). The kinetic energy an impulse ``P`` adds is ``f(P) + P . v*``; the targets are
``<= 0`` where the impulse is ``>= 0``, so a solve never adds kinetic energy.

**Residual** (:func:`_residual`). ``r = max_c |P_c - Pi_c(P_c - t g_c)| / t`` with ``g = K P
+ J qd* - v*`` the gradient and ``t = 1/L`` the step: zero exactly at a solution of the
problem, in velocity units [m/s] (a sticking contact's slip, a resting contact's normal
speed error); the solve stops at ``r <= tol``.

Friction is the cone complementarity model: a contact sliding at ``v_t`` separates at
``mu |v_t|`` (the convex relaxation of Coulomb's law; sequential impulses,
:mod:`~articulated.algorithms.sweeps`, slide without it).
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np
from numba import njit

from ..config import inline, JIT, KERNEL
from ..spatial import xform_force_T, xform_motion
from .contact_rows import _frame, _target
from .impulse import _body_impulse, _lever
from .sweeps import kick_scale

Delassus = namedtuple("Delassus", ("G", "body", "sgn", "f", "da", "w", "tau", "mark", "path",
                                   "b", "x", "xp", "y", "z", "Kx", "Kxp", "Ky", "Kz", "best",
                                   "Kbest", "lo", "stat", "Om", "T", "s", "xs"))

Delassus.__doc__ = """The buffers of the matrix-free solve (capacity ``cap`` rows, ``nb``
bodies, ``nv`` dofs). Per row: ``G`` (cap, 2, 3, 6) the spatial impulses ``[n; f]`` (body
coordinates, about the body origin [m; 1]) of a unit impulse along its directions ``n, t1,
t2`` on its two bodies (the second side's sign included), ``body`` (cap, 2) int64 those
bodies (-1: none; a joint limit: its body and -1), ``sgn`` (cap,) the joint impulse of a
limit row per unit ``P_n`` (0 for a contact). Pass scratch: ``f`` (nb, 6) the articulated
bias impulses, ``da`` (nb, 6) body velocity changes (body coordinates), ``w`` (nv,) the
joint velocity change, ``tau`` (nv,) the joint impulses (zero between uses), ``mark``
(nb,) int64, ``path`` (nb + 1,) int64 the bodies on the struck bodies' paths to the root in
increasing order (their count last). Iterates (cap, 3): ``b`` the linear term ``J qd* -
v*``, ``x, xp, y, z`` and their products ``Kx, Kxp, Ky, Kz`` with ``K``, ``best, Kbest``;
``lo`` (cap,) lower bounds of the normal impulses (the position projection's); ``stat``
(2,) the last solve's iterations and residual; the preconditioner (:func:`delassus_scales`):
``Om`` (nb, 6, 6) the bodies' inverse apparent inertias, ``T`` (2, 6, 6) scratch, ``s``
(cap,) each row's scale, ``xs`` (cap, 3) scratch."""


@njit(**JIT)
def delassus_buffers(cap, nb, nv):
    """Zeroed :class:`Delassus` for ``cap`` rows of a tree with ``nb`` bodies and ``nv``
    dofs."""
    return Delassus(np.zeros((cap, 2, 3, 6)), np.full((cap, 2), -1, np.int64), np.zeros(cap),
                    np.zeros((nb, 6)), np.zeros((nb, 6)), np.zeros(nv), np.zeros(nv),
                    np.zeros(nb, np.int64), np.zeros(nb + 1, np.int64),
                    np.zeros((cap, 3)), np.zeros((cap, 3)), np.zeros((cap, 3)),
                    np.zeros((cap, 3)), np.zeros((cap, 3)), np.zeros((cap, 3)),
                    np.zeros((cap, 3)), np.zeros((cap, 3)), np.zeros((cap, 3)),
                    np.zeros((cap, 3)), np.zeros((cap, 3)), np.zeros(cap), np.zeros(2),
                    np.zeros((nb, 6, 6)), np.zeros((2, 6, 6)), np.ones(cap), np.zeros((cap, 3)))


@inline
def _xf(fac, i):
    """Body i's transform from its parent ``(E, r)`` as a 9-tuple and a 3-tuple."""
    E = fac.Xup_E
    return ((E[i, 0, 0], E[i, 0, 1], E[i, 0, 2], E[i, 1, 0], E[i, 1, 1], E[i, 1, 2],
             E[i, 2, 0], E[i, 2, 1], E[i, 2, 2]), (fac.Xup_r[i, 0], fac.Xup_r[i, 1], fac.Xup_r[i, 2]))


@inline
def _down(im, fac, op, x, i, articulated):
    """Body i of the down pass: ``da_i = X_i da_parent + S_i x_i`` with, when
    ``articulated``, ``x_i -= (U D^-1)_i^T X_i da_parent`` first (RBDA Table 7.1 pass 3 on
    impulses; ``x`` (nv,) holds ``D^-1 u`` from the up pass)."""
    p = im.parent[i]
    a = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    if p >= 0:
        E, r = _xf(fac, i)
        a = xform_motion(E, r, (op.da[p, 0], op.da[p, 1], op.da[p, 2], op.da[p, 3],
                                op.da[p, 4], op.da[p, 5]))
    va = im.vadr[i]
    for d in range(im.jnv[i]):
        if articulated:
            U = fac.UDinv[va + d]
            x[va + d] -= (U[0] * a[0] + U[1] * a[1] + U[2] * a[2] + U[3] * a[3] + U[4] * a[4]
                          + U[5] * a[5])
    for k in range(6):
        s = a[k]
        for d in range(im.jnv[i]):
            s += im.S[va + d, k] * x[va + d]
        op.da[i, k] = s


@inline
def _read(op, c, d):
    """``J_c`` along direction d of the body velocity changes ``op.da`` and joint velocity
    change ``op.w``."""
    v = 0.0
    for side in range(2):
        i = op.body[c, side]
        if i >= 0 and op.sgn[c] == 0.0:
            for k in range(6):
                v += op.G[c, side, d, k] * op.da[i, k]
    return v


@inline
def _read_rows(im, op, nr, x, out):
    """``out = J`` (nr, 3) of rows ``0..nr-1`` from the body velocity changes ``op.da``
    and the joint velocities ``x`` (nv,) (a limit row reads its joint's)."""
    for c in range(nr):
        if op.sgn[c] != 0.0:
            out[c, 0] = op.sgn[c] * x[rows_dof(op, im, c)]
            out[c, 1] = 0.0
            out[c, 2] = 0.0
        else:
            for d in range(3):
                out[c, d] = _read(op, c, d)


@njit(**KERNEL)
def delassus_path(im, rows, nr, op):
    """The union of the paths to the root of the bodies of rows ``0..nr-1`` into
    ``op.path`` (increasing; count in ``op.path[nb]``), and each limit row's body and joint
    sign (``rows.dof >= 0``) into ``op.body``, ``op.sgn``. O(nb + nr)."""
    nb = im.parent.shape[0]
    for i in range(nb):
        op.mark[i] = 0
    for c in range(nr):
        k = rows.dof[c]
        if k >= 0:
            op.sgn[c] = rows.JT[c, 0, k]
            op.body[c, 1] = -1
            for i in range(nb):
                if im.vadr[i] <= k < im.vadr[i] + im.jnv[i]:
                    op.body[c, 0] = i
        else:
            op.sgn[c] = 0.0
        for side in range(2):
            i = op.body[c, side]
            while i >= 0 and op.mark[i] == 0:
                op.mark[i] = 1
                i = im.parent[i]
    n = 0
    for i in range(nb):
        if op.mark[i]:
            op.path[n] = i
            n += 1
    op.path[nb] = n


@njit(**KERNEL)
def delassus_apply(im, fac, op, nr, x, out, full):
    """``out = K x`` (nr, 3) for impulses ``x`` (nr, 3) on rows ``0..nr-1`` (``K = J M^-1
    J^T``), matrix-free (module docstring): ``op.w`` (nv,) receives ``M^-1 J^T x``, on the
    dofs of the path only, or on every dof when ``full``. Needs :func:`delassus_path`.
    O(path + nr), O(nb + nr) when ``full``."""
    nb = im.parent.shape[0]
    npath = op.path[nb]
    f, w, tau = op.f, op.w, op.tau
    for t in range(npath):
        i = op.path[t]
        for k in range(6):
            f[i, k] = 0.0
        for d in range(im.jnv[i]):
            w[im.vadr[i] + d] = 0.0
    if full:
        for k in range(w.shape[0]):
            w[k] = 0.0
    for c in range(nr):
        if op.sgn[c] != 0.0:
            tau[rows_dof(op, im, c)] += op.sgn[c] * x[c, 0]
            continue
        for side in range(2):
            i = op.body[c, side]
            if i >= 0:
                for k in range(6):
                    f[i, k] -= (op.G[c, side, 0, k] * x[c, 0] + op.G[c, side, 1, k] * x[c, 1]
                                + op.G[c, side, 2, k] * x[c, 2])
    # up (f holds pA = -J^T x): u = tau - S^T pA, pA_parent += X^T (pA + U D^-1 u)
    for t in range(npath - 1, -1, -1):
        i = op.path[t]
        va = im.vadr[i]
        n = im.jnv[i]
        pa = (f[i, 0], f[i, 1], f[i, 2], f[i, 3], f[i, 4], f[i, 5])
        for q in range(n):
            s = im.S[va + q]
            u = tau[va + q] - (s[0] * f[i, 0] + s[1] * f[i, 1] + s[2] * f[i, 2]
                               + s[3] * f[i, 3] + s[4] * f[i, 4] + s[5] * f[i, 5])
            tau[va + q] = 0.0
            U = fac.UDinv[va + q]
            pa = (pa[0] + U[0] * u, pa[1] + U[1] * u, pa[2] + U[2] * u, pa[3] + U[3] * u,
                  pa[4] + U[4] * u, pa[5] + U[5] * u)
            for e in range(n):
                w[va + e] += fac.Dinv[va + e, q] * u
        p = im.parent[i]
        if p >= 0:
            E, r = _xf(fac, i)
            g = xform_force_T(E, r, pa)
            for k in range(6):
                f[p, k] += g[k]
    if full:
        for i in range(nb):
            _down(im, fac, op, w, i, True)
    else:
        for t in range(npath):
            _down(im, fac, op, w, op.path[t], True)
    _read_rows(im, op, nr, w, out)


@inline
def rows_dof(op, im, c):
    """The dof of limit row c: the one of its body (limits are on 1-dof joints)."""
    return im.vadr[op.body[c, 0]]


@njit(**KERNEL)
def delassus_speeds(im, fac, op, nr, qd, out):
    """``out = J qd`` (nr, 3) of rows ``0..nr-1`` for joint velocities ``qd`` (nv,): the
    bodies' velocities by the down pass without articulated terms, over the path (needs
    :func:`delassus_path`). O(path + nr)."""
    nb = im.parent.shape[0]
    for t in range(op.path[nb]):
        _down(im, fac, op, qd, op.path[t], False)
    _read_rows(im, op, nr, qd, out)


@njit(**KERNEL)
def delassus_scales(im, fac, op, nr):
    """The Jacobi preconditioner of :func:`apgd`: ``op.s[c] = 1 / sqrt(k_c)`` for rows
    ``0..nr-1`` with ``k_c`` the normal entry of a contact's diagonal block of ``K``
    without the coupling of its two bodies, ``g_a Omega_a g_a^T + g_b Omega_b g_b^T``, or
    ``D^-1`` of a limit's joint. ``Omega_i`` (6 x 6, body coordinates) is the inverse
    apparent inertia of body i, ``J_i M^-1 J_i^T``, by the recursion ``Omega_i = A_i
    Omega_p A_i^T + S_i D_i^-1 S_i^T``, ``A_i = (1 - S_i (U_i D_i^-1)^T) X_i`` down the
    path (the down pass of an impulse on body i, RBDA Table 7.1). One scalar per row keeps
    its friction cone. O(path + nr)."""
    nb = im.parent.shape[0]
    Om, T = op.Om, op.T
    for t in range(op.path[nb]):
        i = op.path[t]
        p = im.parent[i]
        va = im.vadr[i]
        n = im.jnv[i]
        # T0 = X_i Omega_p X_i^T (columns, then rows, by the motion transform)
        E, r = _xf(fac, i)
        for k in range(6):
            if p >= 0:
                col = xform_motion(E, r, (Om[p, 0, k], Om[p, 1, k], Om[p, 2, k], Om[p, 3, k],
                                          Om[p, 4, k], Om[p, 5, k]))
            else:
                col = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
            for l in range(6):
                T[1, l, k] = col[l]
        for l in range(6):
            row = xform_motion(E, r, (T[1, l, 0], T[1, l, 1], T[1, l, 2], T[1, l, 3],
                                      T[1, l, 4], T[1, l, 5]))
            for k in range(6):
                T[0, l, k] = row[k]
        # A = 1 - S (U D^-1)^T on both sides, B = U D^-1: T1 = T0 - S (B^T T0), then
        # Omega = T1 - (T1 B) S^T + S D^-1 S^T (Y: the n x 6 products, rows of T[1])
        Y = T[1]
        for q in range(n):
            for k in range(6):
                y = 0.0
                for m in range(6):
                    y += fac.UDinv[va + q, m] * T[0, m, k]
                Y[q, k] = y
        for l in range(6):
            for k in range(6):
                v = T[0, l, k]
                for q in range(n):
                    v -= im.S[va + q, l] * Y[q, k]
                T[0, l, k] = v
        for l in range(6):
            for q in range(n):
                y = 0.0
                for m in range(6):
                    y += T[0, l, m] * fac.UDinv[va + q, m]
                Y[q, l] = y
        for l in range(6):
            for k in range(6):
                v = T[0, l, k]
                for q in range(n):
                    v -= Y[q, l] * im.S[va + q, k]
                    for e in range(n):
                        v += im.S[va + q, l] * fac.Dinv[va + q, e] * im.S[va + e, k]
                Om[i, l, k] = v
    for c in range(nr):
        k = 0.0
        if op.sgn[c] != 0.0:
            i = op.body[c, 0]
            k = fac.Dinv[im.vadr[i], 0]
        else:
            for side in range(2):
                i = op.body[c, side]
                if i >= 0:
                    g = op.G[c, side, 0]
                    for l in range(6):
                        y = 0.0
                        for m in range(6):
                            y += Om[i, l, m] * g[m]
                        k += g[l] * y
        op.s[c] = 1.0 / math.sqrt(k) if k > 0.0 else 1.0


@njit(**KERNEL)
def delassus_rows(im, fac, con, nc, qd, h, rest_speed, rows, op):
    """The rows of contacts ``0..nc-1`` (``con``) for :func:`apgd`: frame, ``op.G`` and
    ``op.body`` (two unit spatial impulses per direction, O(1) per contact: GLM IV.A step
    4 without the test impulses), normal speed under ``qd`` (nv,), target and impact state
    (:func:`~articulated.algorithms.contact_rows._target`, step ``h`` [s], ``rest_speed``
    [m/s]), friction, restitution, gap and key in ``rows``; ``rows.JT, W, K`` are not
    written (``rows.K[c, 0, 0]`` is, when the position projection needs it). A contact
    whose two bodies are one gets zero rows (no impulse)."""
    for c in range(nc):
        _frame(con.normal, c, rows.frame)
        a, b = con.body[c, 0], con.body[c, 1]
        op.body[c, 0] = a if a != b else -1     # inside one body: no row (contact_rows)
        op.body[c, 1] = b if a != b else -1
        op.sgn[c] = 0.0
        x = (con.point[c, 0], con.point[c, 1], con.point[c, 2])
        for side in range(2):
            i = op.body[c, side]
            if i < 0:
                continue
            r = _lever(fac.oE, fac.op, i, x)
            for d in range(3):
                u = (rows.frame[c, d, 0], rows.frame[c, d, 1], rows.frame[c, d, 2])
                _body_impulse(fac.oE, i, r, u, 1.0 if side == 0 else -1.0, op.G[c, side, d])
        rows.mu[c] = con.mu[c]
        rows.e[c] = con.e[c]
        rows.dist[c] = con.dist[c]
        rows.key[c] = con.key[c]
        rows.dof[c] = -1
        rows.span[c] = 0
    delassus_path(im, rows, nc, op)
    delassus_speeds(im, fac, op, nc, qd, op.b)
    for c in range(nc):
        _target(rows, c, op.b[c, 0], h, rest_speed)


@inline
def _project(op, rows, c, x0, x1, x2, normal):
    """``Pi_c`` of the impulse ``(x0, x1, x2)`` of row c: onto its friction cone ``|P_t| <=
    mu P_n`` (the closest point), or with ``normal`` onto ``P_n >= lo_c, P_t = 0``; zero
    for a row without bodies."""
    if op.body[c, 0] < 0 and op.body[c, 1] < 0:
        return 0.0, 0.0, 0.0
    if normal:
        return max(x0, op.lo[c]), 0.0, 0.0
    mu = rows.mu[c]
    if op.sgn[c] != 0.0 or mu <= 0.0:
        return max(x0, 0.0), 0.0, 0.0
    tt = math.sqrt(x1 * x1 + x2 * x2)
    if tt <= mu * x0:
        return x0, x1, x2
    if mu * tt <= -x0:
        return 0.0, 0.0, 0.0
    n = (x0 + mu * tt) / (1.0 + mu * mu)
    s = mu * n / tt
    return n, x1 * s, x2 * s


@inline
def _objective(op, nr, x, Kx):
    """``f(x) = 1/2 x . K x + x . b``."""
    s = 0.0
    for c in range(nr):
        for d in range(3):
            s += x[c, d] * (0.5 * Kx[c, d] + op.b[c, d])
    return s


@inline
def _residual(op, rows, nr, x, Kx, t, normal):
    """``max_c |x_c - Pi_c(x_c - t g_c)| / (t s_c)`` with ``g = K x + b`` in the scaled
    variables of :func:`apgd` (the module docstring's residual, with the step ``t s_c^2``
    of row c, in the rows' own units)."""
    r = 0.0
    for c in range(nr):
        g0 = Kx[c, 0] + op.b[c, 0]
        g1 = Kx[c, 1] + op.b[c, 1]
        g2 = Kx[c, 2] + op.b[c, 2]
        p0, p1, p2 = _project(op, rows, c, x[c, 0] - t * g0, x[c, 1] - t * g1,
                              x[c, 2] - t * g2, normal)
        d0, d1, d2 = x[c, 0] - p0, x[c, 1] - p1, x[c, 2] - p2
        r = max(r, math.sqrt(d0 * d0 + d1 * d1 + d2 * d2) / (t * op.s[c]))
    return r


@inline
def _scaled(im, fac, op, nr, x, out):
    """``out = S K S x`` (:func:`delassus_apply` on the path) with ``S = diag(op.s)``."""
    for c in range(nr):
        for d in range(3):
            op.xs[c, d] = op.s[c] * x[c, d]
    delassus_apply(im, fac, op, nr, op.xs, out, False)
    for c in range(nr):
        for d in range(3):
            out[c, d] *= op.s[c]


@inline
def _rescale(op, nr, a, e):
    """``x *= s^-e``, ``b *= s^e``, ``lo *= s^-e`` per row (``e = 1``: into the scaled
    variables of :func:`apgd`, -1: back)."""
    for c in range(nr):
        f = op.s[c] if e > 0 else 1.0 / op.s[c]
        op.lo[c] /= f
        for d in range(3):
            op.x[c, d] /= f
            op.b[c, d] *= f
            a[c, d] *= f


@inline
def _copy(src, dst, nr):
    for c in range(nr):
        for d in range(3):
            dst[c, d] = src[c, d]


@njit(**KERNEL)
def apgd(im, fac, op, rows, nr, tol, iters, normal):
    """Minimize ``f(P) = 1/2 P^T K P + P^T op.b`` over the cones of rows ``0..nr-1`` (or,
    with ``normal``, over ``P_n >= op.lo, P_t = 0``) from the start ``op.x`` (nr, 3)
    (projected first) by accelerated projected gradient with adaptive step and restart
    (Mazhar et al. 2015, Alg. 3), until the residual (:func:`_residual`) is at most ``tol``
    or ``iters`` iterations, on the variables scaled by ``op.s`` (:func:`delassus_scales`:
    ``x = S x^``, ``K^ = S K S``, ``b^ = S b``; one scalar per row keeps its cone). One
    product with ``K`` per iteration (:func:`delassus_apply`;
    the accelerated point's product is the combination of two iterates'), one more per
    step-size backtrack. Leaves in ``op.x`` the last iterate where ``f <= 0`` there, else
    the iterate of lowest ``f`` among the iterates and zero, in ``op.Kx`` its product;
    returns ``(iterations, its residual)``, the start counted as one iteration (its
    product and residual). Needs :func:`delassus_path` and
    :func:`delassus_scales`."""
    x, xp, y, z, Kx, Kxp, Ky, Kz, best, Kbest = (op.x, op.xp, op.y, op.z, op.Kx, op.Kxp,
                                                 op.Ky, op.Kz, op.best, op.Kbest)
    if nr == 0:
        return 0, 0.0
    _rescale(op, nr, Kz, 1)
    for c in range(nr):
        x[c, 0], x[c, 1], x[c, 2] = _project(op, rows, c, x[c, 0], x[c, 1], x[c, 2], normal)
        for d in range(3):
            z[c, d] = 1.0 if (d == 0 or not normal) else 0.0
            best[c, d] = 0.0
            Kbest[c, d] = 0.0
    # a first step size from K applied to ones (a lower bound of its largest eigenvalue)
    _scaled(im, fac, op, nr, z, Kz)
    zz = 0.0
    kk = 0.0
    for c in range(nr):
        for d in range(3):
            zz += z[c, d] * z[c, d]
            kk += Kz[c, d] * Kz[c, d]
    L = math.sqrt(kk / zz) if zz > 0.0 else 0.0
    if not L > 0.0:
        _rescale(op, nr, Kx, -1)
        return 0, 0.0
    _scaled(im, fac, op, nr, x, Kx)
    fbest = 0.0
    fx = _objective(op, nr, x, Kx)
    if fx < fbest:
        fbest = fx
        _copy(x, best, nr)
        _copy(Kx, Kbest, nr)
    _copy(x, y, nr)
    _copy(Kx, Ky, nr)
    _copy(x, xp, nr)
    _copy(Kx, Kxp, nr)
    theta = 1.0
    t = 1.0 / L
    res = _residual(op, rows, nr, x, Kx, t, normal)
    k = 0
    while k < iters and res > tol:
        k += 1
        for _ in range(60):
            # backtracking: the quadratic model at y with curvature L must bound f, i.e.
            # (z - y) . K (z - y) <= L |z - y|^2 (f is quadratic: exact, no cancellation)
            for c in range(nr):
                g0 = Ky[c, 0] + op.b[c, 0]
                g1 = Ky[c, 1] + op.b[c, 1]
                g2 = Ky[c, 2] + op.b[c, 2]
                z[c, 0], z[c, 1], z[c, 2] = _project(op, rows, c, y[c, 0] - t * g0,
                                                     y[c, 1] - t * g1, y[c, 2] - t * g2,
                                                     normal)
            _scaled(im, fac, op, nr, z, Kz)
            curv = 0.0
            dd2 = 0.0
            for c in range(nr):
                for d in range(3):
                    dd = z[c, d] - y[c, d]
                    curv += dd * (Kz[c, d] - Ky[c, d])
                    dd2 += dd * dd
            if curv <= L * dd2:
                break
            L *= 2.0
            t = 1.0 / L
        fz = _objective(op, nr, z, Kz)
        theta1 = 0.5 * (-theta * theta + theta * math.sqrt(theta * theta + 4.0))
        beta = theta * (1.0 - theta) / (theta * theta + theta1)
        # restart where the step went against the gradient (O'Donoghue & Candes 2015)
        slope = 0.0
        for c in range(nr):
            for d in range(3):
                slope += (Ky[c, d] + op.b[c, d]) * (z[c, d] - x[c, d])
        _copy(x, xp, nr)
        _copy(Kx, Kxp, nr)
        _copy(z, x, nr)
        _copy(Kz, Kx, nr)
        if slope > 0.0:
            beta = 0.0
            theta1 = 1.0
        for c in range(nr):
            for d in range(3):
                y[c, d] = x[c, d] + beta * (x[c, d] - xp[c, d])
                Ky[c, d] = Kx[c, d] + beta * (Kx[c, d] - Kxp[c, d])
        theta = theta1
        if fz < fbest:
            fbest = fz
            _copy(x, best, nr)
            _copy(Kx, Kbest, nr)
        res = _residual(op, rows, nr, x, Kx, t, normal)
        L *= 0.9
        t = 1.0 / L
    if _objective(op, nr, x, Kx) > 0.0:   # it would add energy: the best iterate instead
        _copy(best, x, nr)
        _copy(Kbest, Kx, nr)
        res = _residual(op, rows, nr, x, Kx, t, normal)
    _rescale(op, nr, Kx, -1)     # (Kx^ = S K x: back to K x)
    op.stat[0] = k + 1
    op.stat[1] = res
    return k + 1, res


@njit(**KERNEL)
def apgd_impulses(im, fac, op, rows, nr, qs, qd1, tol, iters, states):
    """The impulses ``rows.P`` of rows ``0..nr-1`` (in: the warm start, or zero) and
    ``qd1 = qs + M^-1 J^T P`` (nv,) for the unconstrained velocities ``qs`` (nv,), as
    :func:`~articulated.algorithms.sweeps.solve_impulses` with :func:`apgd` for the sweeps:

    1. compression: the targets ``rows.target`` (impacts aim at zero normal speed);
    2. restitution (Poisson's hypothesis): each impact gets ``e`` times its compression
       impulse on top, scaled so that the kinetic energy stays below its value before the
       compression (:func:`~articulated.algorithms.sweeps.kick_scale`); then the problem
       is solved again from zero impulses to stop what that made approach.

    Neither solve adds kinetic energy (module docstring). ``states`` (nr,) int64 receives
    each row's state (0 no impulse, 1 inside its cone, 2 on its edge: sliding). Returns
    ``(iterations, residual [m/s])`` (the residual of the last solve)."""
    delassus_path(im, rows, nr, op)
    delassus_scales(im, fac, op, nr)
    delassus_speeds(im, fac, op, nr, qs, op.b)
    x = op.x
    for c in range(nr):
        op.b[c, 0] -= rows.target[c]
        for d in range(3):
            x[c, d] = rows.P[c, d]
    done, res = apgd(im, fac, op, rows, nr, tol, iters, False)
    kicks = 0
    for c in range(nr):
        e = rows.e[c] if rows.impact[c] != 0 else 0.0
        kicks += e > 0.0
        for d in range(3):
            rows.Pc[c, d] = e * x[c, d]
    if kicks:
        # energy removed by the compression -(f(x) + x . v*); the kick's a and b
        D = 0.0
        a = 0.0
        for c in range(nr):
            D -= x[c, 0] * rows.target[c]
            for d in range(3):
                D -= x[c, d] * (0.5 * op.Kx[c, d] + op.b[c, d])
                a += rows.Pc[c, d] * (op.b[c, d] + op.Kx[c, d] + (rows.target[c] if d == 0 else 0.0))
        delassus_apply(im, fac, op, nr, rows.Pc, op.Kz, False)
        bk = 0.0
        for c in range(nr):
            for d in range(3):
                bk += rows.Pc[c, d] * op.Kz[c, d]
        s = kick_scale(D, a, bk)
        for c in range(nr):
            for d in range(3):
                op.b[c, d] += op.Kx[c, d] + s * op.Kz[c, d]
                rows.Pc[c, d] = x[c, d] + s * rows.Pc[c, d]
                x[c, d] = 0.0
        d2, res = apgd(im, fac, op, rows, nr, tol, iters, False)
        done += d2
        for c in range(nr):
            for d in range(3):
                x[c, d] += rows.Pc[c, d]
    for c in range(nr):
        for d in range(3):
            rows.P[c, d] = x[c, d]
        tt = math.sqrt(x[c, 1] * x[c, 1] + x[c, 2] * x[c, 2])
        states[c] = 0 if x[c, 0] <= 0.0 else (2 if tt >= (1.0 - 1e-9) * rows.mu[c] * x[c, 0]
                                              and tt > 0.0 else 1)
    delassus_apply(im, fac, op, nr, x, op.Kz, True)
    for k in range(qs.shape[0]):
        qd1[k] = qs[k] + op.w[k]
    return done, res


@njit(**KERNEL)
def apgd_project(im, fac, op, rows, nr, qd, h, tol, iters, dq):
    """Post-stabilization as :func:`~articulated.algorithms.projection.project_positions`
    (same rows, gaps and bounds), solved by :func:`apgd` on the normal rows: ``dq = M^-1
    J_n^T lambda`` (nv,) with ``lambda >= lo`` minimizing ``1/2 lambda^T K_nn lambda +
    lambda . (d + h v_n - gap*)`` (``v_n`` the rows' normal speeds under ``qd`` (nv,),
    ``h`` [s]), to the residual ``tol`` [m/s, here m]; an exact impact row's bound uses the
    preconditioner's ``K_nn`` (:func:`delassus_scales`: exact against the world, without
    the coupling of its two bodies otherwise). Needs the path and scales of
    :func:`apgd_impulses` for the same rows. Returns the largest predicted depth before
    the projection [m]."""
    delassus_speeds(im, fac, op, nr, qd, op.Kz)
    for k in range(dq.shape[0]):
        dq[k] = 0.0
    worst = 0.0
    needed = False
    for c in range(nr):
        g = rows.dist[c] + h * op.Kz[c, 0]
        worst = min(worst, g)
        op.lo[c] = 0.0
        op.b[c, 0] = g - rows.gap[c]
        op.b[c, 1] = 0.0
        op.b[c, 2] = 0.0
        needed |= rows.impact[c] == 2 or g < rows.gap[c]
    if not needed:
        return 0.0
    for c in range(nr):   # an exact impact row may pull, by no more than on its own
        for d in range(3):
            op.x[c, d] = 0.0
        if rows.impact[c] == 2 and op.b[c, 0] > 0.0:
            op.lo[c] = -op.b[c, 0] * op.s[c] * op.s[c]
    apgd(im, fac, op, rows, nr, tol, iters, True)
    delassus_apply(im, fac, op, nr, op.x, op.Kz, True)
    for k in range(dq.shape[0]):
        dq[k] = op.w[k]
    return -worst
