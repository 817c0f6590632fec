"""Loop-closing constraints: residual ``g_L(q)``, Jacobian ``G_L(q)`` and ``G_L-dot qd``.

A model with closed loops is its spanning tree (reduced coordinates ``q``, exact tree
constraints) plus loop joints (:meth:`articulated.ModelBuilder.add_loop_joint`), each
adding rows ``g_L(q) = 0`` between a frame A on body a and a frame B on body b
(:data:`articulated.model.LOOP_KINDS`). Ascher & Lin 1999, sec. 3 (eq. 3.1: "a tree-
structured system plus a set of loop-closing constraints").

How the rows are computed (O(n + loops), no dense ``nc x nv`` matrix)
---------------------------------------------------------------------
One forward pass gives the world pose ``(oE_i, op_i)`` and spatial velocity ``v_i``
(body coordinates) of every body. Each loop row is then a function of the two bodies only:
``g_L`` from their poses, and ``G_L qd = J_a v_a + J_b v_b`` with per-loop blocks
``J_a, J_b`` (``nc_k x 6``) that map the body spatial velocities ``[w; v_O]`` (body
coordinates) to ``d g_L / dt``. ``G_L = J_a Phi_a + J_b Phi_b`` (``Phi_i``: the body
Jacobian of the tree) is never formed: ``G_L qd`` uses the tree's velocity pass, and
``G_L^T lambda`` is applied as the spatial forces ``-J_a^T lambda`` on body a and
``-J_b^T lambda`` on body b (``[n_O; f]`` about each body origin, body coordinates: the
``f_ext`` convention of :func:`articulated.aba`), which the O(n) ABA carries to the joints.
With ``R_A = R_a E_a`` (frame A axes in world coordinates), ``g_p = R_A^T (p_B - p_A)``,
``Q = R_A^T R_b``, ``R_rel = R_A^T R_B``, ``Omega = R_A^T (w_B - w_A)``::

    d g_p / dt = Q (v_Ob + w_b x r_b) - E_a^T (v_Oa + w_a x r_a) + g_p x (E_a^T w_a)
    J_b^p = [-Q r_b^, Q],  J_a^p = [E_a^T r_a^ + g_p^ E_a^T, -E_a^T]
    revolute rows  t_k . R_rel n:      d/dt = (m x t_k) . Omega,  m = R_rel n
    weld rows  vee(R_rel - R_rel^T)/2: d/dt = (tr(R_rel) 1 - R_rel) Omega / 2

(``x^`` the cross-product matrix). These are the exact derivatives, so ``G_L`` is the
Jacobian of ``g_L``; on the constraint manifold (``g_p = 0``) the two spatial forces are
equal and opposite at the joint. ``G_L-dot qd`` (for the reference KKT solver) is the
derivative of ``G_L(q(t)) qd`` along ``q(t) = q (+) qd t`` by a central difference of two
O(n) evaluations (:func:`loop_Gdot_qd`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..config import inline, KERNEL
from ..data import data_arrays
from ..model import LOOP_POINT, LOOP_REVOLUTE, LOOP_SPHERICAL, Model, model_arrays
from ..spatial import get_vec6, spd_inverse
from ._inputs import as_state
from .kinematics import joint_xup, velocity_step, world_pose_step

_LOOP_F = 33
"""Floats per loop in the packed loop array: Ea (9, row-major), ra (3), Eb (9), rb (3),
n (3), t1 (3), t2 (3)."""


class LoopArrays:
    """The loop joints of a :class:`Model` packed for kernels (cached by :func:`loop_arrays`).

    Attributes
    ----------
    ints : (4, nloops) int64
        Rows body_a, body_b (-1: world), kind, cadr (first row in g_L).
    floats : (nloops, 33) float64
        Ea (9, row-major), ra (3), Eb (9), rb (3), n, t1, t2.
    Iinv_a, Iinv_b : (nloops, 6, 6) float64
        Inverse spatial inertia of body a / b about its origin in body coordinates (zero
        for the world): the block-diagonal mass the scaling ``W`` of the SRM update uses
        (:func:`loop_scaling`).
    """

    def __init__(self, model: Model):
        nl = model.nloops
        self.nloops, self.nc = nl, model.nc
        self.ints = np.ascontiguousarray(np.stack([
            model.loop_body_a, model.loop_body_b, model.loop_kind, model.loop_cadr]).reshape(4, nl),
            dtype=np.int64)
        f = np.zeros((nl, _LOOP_F))
        f[:, 0:9] = model.loop_Ea.reshape(nl, 9)
        f[:, 9:12] = model.loop_ra
        f[:, 12:21] = model.loop_Eb.reshape(nl, 9)
        f[:, 21:24] = model.loop_rb
        f[:, 24:27] = model.loop_axis
        f[:, 27:30] = model.loop_T[:, 0]
        f[:, 30:33] = model.loop_T[:, 1]
        self.floats = f
        Iinv = np.zeros((model.nb + 1, 6, 6))
        used = np.unique(np.concatenate([model.loop_body_a, model.loop_body_b]))
        for b in used[used >= 0]:
            Iinv[b] = np.linalg.inv(model.body_I[b])
        self.Iinv_a = np.ascontiguousarray(Iinv[model.loop_body_a])  # -1 -> the zero row
        self.Iinv_b = np.ascontiguousarray(Iinv[model.loop_body_b])


def loop_arrays(model: Model) -> LoopArrays:
    """The model's :class:`LoopArrays` (built on first use, cached on the model)."""
    la = getattr(model, "_loop_arrays", None)
    if la is None:
        la = model._loop_arrays = LoopArrays(model)
    return la


# ------------------------------------------------------------------------- kernels

@inline
def poses_velocities(model_i, model_f, q, qd, data_f, with_v):
    """Forward pass: ``Xup``, world poses ``oE, op`` and (``with_v``) body velocities ``v, c``
    into the Data buffer. O(nb)."""
    mv = model_arrays(model_i, model_f)
    parent, jtype, qadr, vadr, jnv = mv.parent, mv.jtype, mv.qadr, mv.vadr, mv.jnv
    Xtree_rot, axis, Xtree_E, Xtree_r, S = mv.Xtree_rot, mv.axis, mv.Xtree_E, mv.Xtree_r, mv.S
    nb = parent.shape[0]
    dv = data_arrays(data_f, nb, S.shape[0])
    Xup_E, Xup_r, v, c, oE, op = dv.Xup_E, dv.Xup_r, dv.v, dv.c, dv.oE, dv.op
    for i in range(nb):
        E, r = joint_xup(i, jtype, qadr, Xtree_rot, axis, Xtree_E, Xtree_r, q, Xup_E, Xup_r)
        world_pose_step(i, parent, E, r, oE, op)
        if with_v:
            velocity_step(i, parent, vadr, jnv, S, qd, E, r, v, c)


@inline
def _body_frame(b, oE, op, M, k):
    """M[k] = oE_b (world -> body rotation), returns the origin; identity/zero for the world."""
    for r in range(3):
        for s in range(3):
            if b >= 0:
                M[k, r, s] = oE[b, 3 * r + s]
            else:
                M[k, r, s] = 1.0 if r == s else 0.0
    if b >= 0:
        return op[b, 0], op[b, 1], op[b, 2]
    return 0.0, 0.0, 0.0


@inline
def loop_rows(l, loop_i, loop_f, oE, op, v, with_v, out, M, x):
    """Rows ``cadr .. cadr + nc_l`` of ``g_L`` (``g_out``), ``G_L qd`` (``Gv_out``, if
    ``with_v``) and the blocks ``J_a, J_b`` (``Ja_out``, ``Jb_out`` (nc, 6)) of loop l, from
    the world poses ``oE`` (nb, 9), ``op`` (nb, 3) and body velocities ``v`` (nb, 6);
    ``out = (g_out, Gv_out, Ja_out, Jb_out)``. ``M`` (8, 3, 3) and ``x`` (8, 3) are
    scratch. See the module docstring for the formulas."""
    g_out, Gv_out, Ja_out, Jb_out = out
    a = loop_i[0, l]
    b = loop_i[1, l]
    kind = loop_i[2, l]
    c0 = loop_i[3, l]
    F = loop_f[l]
    # M0 = oE_a, M1 = oE_b
    pa0, pa1, pa2 = _body_frame(a, oE, op, M, 0)
    pb0, pb1, pb2 = _body_frame(b, oE, op, M, 1)
    # M2 = PA = Ea^T oE_a (world -> frame A);  M3 = Q = PA oE_b^T;  M4 = R_rel = Q Eb
    for r in range(3):
        for s in range(3):
            t = 0.0
            for k in range(3):
                t += F[3 * k + r] * M[0, k, s]
            M[2, r, s] = t
    for r in range(3):
        for s in range(3):
            t = 0.0
            for k in range(3):
                t += M[2, r, k] * M[1, s, k]
            M[3, r, s] = t
    for r in range(3):
        for s in range(3):
            t = 0.0
            for k in range(3):
                t += M[3, r, k] * F[12 + 3 * k + s]
            M[4, r, s] = t
    # world points: pA = op_a + oE_a^T ra, pB = op_b + oE_b^T rb; x0 = pB - pA
    for r in range(3):
        pa = (pa0, pa1, pa2)[r]
        pb = (pb0, pb1, pb2)[r]
        for k in range(3):
            pa += M[0, k, r] * F[9 + k]
            pb += M[1, k, r] * F[21 + k]
        x[0, r] = pb - pa
    # x1 = g_p = PA (pB - pA)
    for r in range(3):
        x[1, r] = M[2, r, 0] * x[0, 0] + M[2, r, 1] * x[0, 1] + M[2, r, 2] * x[0, 2]
    ra0, ra1, ra2 = F[9], F[10], F[11]
    rb0, rb1, rb2 = F[21], F[22], F[23]
    g0, g1, g2 = x[1, 0], x[1, 1], x[1, 2]
    # position blocks: M5 = Ja_ang = Ea^T ra^ + g_p^ Ea^T; M6 = Jb_ang = -Q rb^
    # (Ea^T)[r, k] = F[3k + r]
    for r in range(3):
        e0, e1, e2 = F[r], F[3 + r], F[6 + r]  # row r of Ea^T
        # row r of Ea^T ra^: (e x ... ) : (Ea^T ra^)[r, s] = sum_k e_k ra^[k, s]
        M[5, r, 0] = e1 * ra2 - e2 * ra1
        M[5, r, 1] = e2 * ra0 - e0 * ra2
        M[5, r, 2] = e0 * ra1 - e1 * ra0
        q0, q1, q2 = M[3, r, 0], M[3, r, 1], M[3, r, 2]
        M[6, r, 0] = -(q1 * rb2 - q2 * rb1)
        M[6, r, 1] = -(q2 * rb0 - q0 * rb2)
        M[6, r, 2] = -(q0 * rb1 - q1 * rb0)
    # + g_p^ Ea^T: (g^ Ea^T)[r, s] = sum_k g^[r, k] Ea^T[k, s]
    for s in range(3):
        c_0, c_1, c_2 = F[3 * s], F[3 * s + 1], F[3 * s + 2]  # column s of Ea^T
        M[5, 0, s] += g1 * c_2 - g2 * c_1
        M[5, 1, s] += g2 * c_0 - g0 * c_2
        M[5, 2, s] += g0 * c_1 - g1 * c_0
    # body velocities
    wa0 = wa1 = wa2 = ua0 = ua1 = ua2 = 0.0
    wb0 = wb1 = wb2 = ub0 = ub1 = ub2 = 0.0
    if with_v:
        if a >= 0:
            wa0, wa1, wa2, ua0, ua1, ua2 = get_vec6(v, a)
        if b >= 0:
            wb0, wb1, wb2, ub0, ub1, ub2 = get_vec6(v, b)
    # position rows: row r of (Ja^p, Jb^p) = (M5[r], -Ea^T[r]), (M6[r], Q[r])
    # x2 = d g_p/dt
    for r in range(3):
        x[2, r] = (M[5, r, 0] * wa0 + M[5, r, 1] * wa1 + M[5, r, 2] * wa2
                   - F[r] * ua0 - F[3 + r] * ua1 - F[6 + r] * ua2
                   + M[6, r, 0] * wb0 + M[6, r, 1] * wb1 + M[6, r, 2] * wb2
                   + M[3, r, 0] * ub0 + M[3, r, 1] * ub1 + M[3, r, 2] * ub2)
    if kind == LOOP_POINT:
        for k in range(2):
            o = 27 + 3 * k
            t0, t1, t2 = F[o], F[o + 1], F[o + 2]
            row = c0 + k
            g_out[row] = t0 * g0 + t1 * g1 + t2 * g2
            if with_v:
                Gv_out[row] = t0 * x[2, 0] + t1 * x[2, 1] + t2 * x[2, 2]
            for s in range(3):
                Ja_out[row, s] = t0 * M[5, 0, s] + t1 * M[5, 1, s] + t2 * M[5, 2, s]
                Ja_out[row, 3 + s] = -(t0 * F[3 * s] + t1 * F[3 * s + 1] + t2 * F[3 * s + 2])
                Jb_out[row, s] = t0 * M[6, 0, s] + t1 * M[6, 1, s] + t2 * M[6, 2, s]
                Jb_out[row, 3 + s] = t0 * M[3, 0, s] + t1 * M[3, 1, s] + t2 * M[3, 2, s]
        return
    for r in range(3):
        row = c0 + r
        g_out[row] = x[1, r]
        if with_v:
            Gv_out[row] = x[2, r]
        for s in range(3):
            Ja_out[row, s] = M[5, r, s]
            Ja_out[row, 3 + s] = -F[3 * s + r]
            Jb_out[row, s] = M[6, r, s]
            Jb_out[row, 3 + s] = M[3, r, s]
    if kind == LOOP_SPHERICAL:
        return
    # rotation rows: coefficient rows c (3) on Omega = Q w_b - Ea^T w_a:
    # Ja = [-c^T Ea^T, 0], Jb = [c^T Q, 0]; M7 holds the rows c (2 or 3 of them)
    nrot = 2 if kind == LOOP_REVOLUTE else 3
    if kind == LOOP_REVOLUTE:
        n0, n1, n2 = F[24], F[25], F[26]
        m0 = M[4, 0, 0] * n0 + M[4, 0, 1] * n1 + M[4, 0, 2] * n2
        m1 = M[4, 1, 0] * n0 + M[4, 1, 1] * n1 + M[4, 1, 2] * n2
        m2 = M[4, 2, 0] * n0 + M[4, 2, 1] * n1 + M[4, 2, 2] * n2
        for k in range(2):
            o = 27 + 3 * k
            t0, t1, t2 = F[o], F[o + 1], F[o + 2]
            x[3 + k, 0] = t0 * m0 + t1 * m1 + t2 * m2  # g
            M[7, k, 0] = m1 * t2 - m2 * t1
            M[7, k, 1] = m2 * t0 - m0 * t2
            M[7, k, 2] = m0 * t1 - m1 * t0
    else:
        R = M[4]
        x[3, 0] = 0.5 * (R[2, 1] - R[1, 2])
        x[4, 0] = 0.5 * (R[0, 2] - R[2, 0])
        x[5, 0] = 0.5 * (R[1, 0] - R[0, 1])
        tr = R[0, 0] + R[1, 1] + R[2, 2]
        for r in range(3):
            for s in range(3):
                M[7, r, s] = 0.5 * ((tr if r == s else 0.0) - R[r, s])
    # Omega
    Om0 = Om1 = Om2 = 0.0
    if with_v:
        o0 = (M[3, 0, 0] * wb0 + M[3, 0, 1] * wb1 + M[3, 0, 2] * wb2
              - F[0] * wa0 - F[3] * wa1 - F[6] * wa2)
        o1 = (M[3, 1, 0] * wb0 + M[3, 1, 1] * wb1 + M[3, 1, 2] * wb2
              - F[1] * wa0 - F[4] * wa1 - F[7] * wa2)
        o2 = (M[3, 2, 0] * wb0 + M[3, 2, 1] * wb1 + M[3, 2, 2] * wb2
              - F[2] * wa0 - F[5] * wa1 - F[8] * wa2)
        Om0, Om1, Om2 = o0, o1, o2
    for k in range(nrot):
        row = c0 + 3 + k
        cx, cy, cz = M[7, k, 0], M[7, k, 1], M[7, k, 2]
        g_out[row] = x[3 + k, 0]
        if with_v:
            Gv_out[row] = cx * Om0 + cy * Om1 + cz * Om2
        for s in range(3):
            # c^T Ea^T [s] = sum_k c_k Ea^T[k, s] = sum_k c_k F[3 s + k]
            Ja_out[row, s] = -(cx * F[3 * s] + cy * F[3 * s + 1] + cz * F[3 * s + 2])
            Jb_out[row, s] = cx * M[3, 0, s] + cy * M[3, 1, s] + cz * M[3, 2, s]
            Ja_out[row, 3 + s] = 0.0
            Jb_out[row, 3 + s] = 0.0


@inline
def all_loop_rows(loop_i, loop_f, oE, op, v, with_v, g_out, Gv_out, Ja_out, Jb_out, M, x):
    """:func:`loop_rows` for every loop. O(loops)."""
    out = (g_out, Gv_out, Ja_out, Jb_out)
    for l in range(loop_i.shape[1]):
        loop_rows(l, loop_i, loop_f, oE, op, v, with_v, out, M, x)


@inline
def add_loop_forces(loop_i, lam, scale, Ja, Jb, f_out):
    """``f_out[a] -= scale J_a^T lambda``, ``f_out[b] -= scale J_b^T lambda`` for every loop:
    the loop forces ``-G_L^T lambda`` as spatial forces on the bodies (body coordinates,
    about the body origins; the ``f_ext`` convention). O(nc)."""
    for l in range(loop_i.shape[1]):
        a = loop_i[0, l]
        b = loop_i[1, l]
        c0 = loop_i[3, l]
        c1 = loop_i[3, l + 1] if l + 1 < loop_i.shape[1] else lam.shape[0]
        for row in range(c0, c1):
            s = scale * lam[row]
            if a >= 0:
                for k in range(6):
                    f_out[a, k] -= s * Ja[row, k]
            if b >= 0:
                for k in range(6):
                    f_out[b, k] -= s * Jb[row, k]


@inline
def loop_scaling(loop_i, Iinv_a, Iinv_b, Ja, Jb, nc, W_out, K, T2, Y):
    """Per-loop blocks ``W_l = (J_a Ia^-1 J_a^T + J_b Ib^-1 J_b^T)^-1`` (``nc_l x nc_l``, in
    ``W_out[l]`` (nloops, 6, 6)): the inverse of the loop's effective mobility if its two
    bodies were free (the block-diagonal ``D M^-1 D^T`` of Ascher & Lin 1999, Lemma 3.1).
    Never singular for bodies of positive mass (the rows of ``J`` are independent for every
    kind), whatever the rank of ``G_L``. ``K``, ``T2`` (6, 6), ``Y`` (6, 6) are scratch."""
    nl = loop_i.shape[1]
    for l in range(nl):
        c0 = loop_i[3, l]
        c1 = loop_i[3, l + 1] if l + 1 < nl else nc
        m = c1 - c0
        for r in range(m):
            for s in range(m):
                K[r, s] = 0.0
        for side in range(2):
            J = Ja if side == 0 else Jb
            Ii = Iinv_a[l] if side == 0 else Iinv_b[l]
            # Y = Ii J^T (6 x m)
            for k in range(6):
                for s in range(m):
                    t = 0.0
                    for j in range(6):
                        t += Ii[k, j] * J[c0 + s, j]
                    Y[k, s] = t
            for r in range(m):
                for s in range(m):
                    t = 0.0
                    for k in range(6):
                        t += J[c0 + r, k] * Y[k, s]
                    K[r, s] += t
        tr = 0.0
        for r in range(m):
            tr += K[r, r]
        for r in range(m):
            K[r, r] += 1e-12 * tr + 1e-300
        spd_inverse(K, m, W_out[l], T2)


@njit(**KERNEL)
def _loop_state_kernel(model_i, model_f, loop_i, loop_f, q, qd, with_v, data_f, out, M, x):
    """Forward pass + every loop row: g_L, G_L qd (if with_v), J_a, J_b into ``out = (g_out,
    Gv_out, Ja_out, Jb_out)`` (:func:`loop_rows`)."""
    g_out, Gv_out, Ja_out, Jb_out = out
    nb = model_i.shape[1]
    nv = qd.shape[0]
    poses_velocities(model_i, model_f, q, qd, data_f, with_v)
    dv = data_arrays(data_f, nb, nv)
    v, oE, op = dv.v, dv.oE, dv.op
    all_loop_rows(loop_i, loop_f, oE, op, v, with_v, g_out, Gv_out, Ja_out, Jb_out, M, x)


# ----------------------------------------------------------------------- public API

class LoopWork:
    """Scratch arrays of the loop kernels for one model (allocated once).

    g, Gv (nc,); Ja, Jb (nc, 6); W (nloops, 6, 6); M (8, 3, 3); x (8, 3); K, T2, Y (6, 6).
    """

    def __init__(self, model: Model):
        nc, nl = model.nc, model.nloops
        self.g = np.zeros(nc)
        self.Gv = np.zeros(nc)
        self.Ja = np.zeros((nc, 6))
        self.Jb = np.zeros((nc, 6))
        self.W = np.zeros((max(nl, 1), 6, 6))
        self.M = np.zeros((8, 3, 3))
        self.x = np.zeros((8, 3))
        self.K = np.zeros((6, 6))
        self.T2 = np.zeros((6, 6))
        self.Y = np.zeros((6, 6))


def _work(model):
    w = getattr(model, "_loop_work", None)
    if w is None:
        w = model._loop_work = LoopWork(model)
    return w


def _eval(model, q, qd, with_v):
    la = loop_arrays(model)
    w = _work(model)
    d = model.data()
    q, qd = as_state(model, q, qd if qd is not None else np.zeros(model.nv), np.float64)
    _loop_state_kernel(d.model_i, d.model_f, la.ints, la.floats, q, qd, with_v, d.buf,
                       (w.g, w.Gv, w.Ja, w.Jb), w.M, w.x)
    return w


def loop_residual(model: Model, q) -> np.ndarray:
    """Loop-closure residual ``g_L(q)``.

    Parameters
    ----------
    model : Model
        With loop joints (``model.nc`` rows; an empty array without).
    q : (nq,) float64
        Configuration.

    Returns
    -------
    g : (nc,) float64
        The rows of :data:`articulated.model.LOOP_KINDS`, loop by loop
        (``model.loop_cadr``): positions [m] in loop-frame-A coordinates, orientations [1]
        (sines of angles).

    Raises
    ------
    ValueError
        For a wrong shape or non-unit quaternions.

    Notes
    -----
    O(nb + nc). Source: Ascher & Lin 1999, eq. 3.1 (loop-closing constraints).
    """
    return _eval(model, q, None, False).g.copy()


def loop_velocity(model: Model, q, qd) -> np.ndarray:
    """``G_L(q) qd = d g_L / dt`` (nc,) float64 [m/s | 1/s], without forming ``G_L``.

    One O(nb) velocity pass plus O(1) per loop (module docstring). Raises as
    :func:`loop_residual`.
    """
    return _eval(model, q, qd, True).Gv.copy()


def loop_blocks(model: Model, q):
    """Per-loop Jacobian blocks w.r.t. the two bodies' spatial velocities.

    Returns
    -------
    Ja, Jb : (nc, 6) float64
        Row r maps ``v_a`` / ``v_b`` (``[w; v_O]`` in body coordinates, as
        :func:`articulated.body_velocities`) to ``d g_L[r] / dt``; the loop force of
        multiplier ``lambda`` is ``-Ja[r]^T lambda_r`` on body a and ``-Jb[r]^T lambda_r``
        on body b (``f_ext`` convention). Zero rows for the world.
    """
    w = _eval(model, q, None, False)
    return w.Ja.copy(), w.Jb.copy()


def loop_jacobian(model: Model, q) -> np.ndarray:
    """Dense ``G_L(q) = d g_L / dq`` (nc, nv) float64 (w.r.t. ``qd``: ``G_L qd = dg/dt``).

    For small systems and tests (the reference solver): O(nc nv) memory; the SRM solver
    never forms it. Built from :func:`loop_blocks` and the tree's body Jacobians.
    """
    from .kinematics import jacobian

    Ja, Jb = loop_blocks(model, q)
    G = np.zeros((model.nc, model.nv))
    d = model.data()
    for l in range(model.nloops):
        c0 = model.loop_cadr[l]
        c1 = c0 + model.loop_nc[l]
        for J, b in ((Ja, model.loop_body_a[l]), (Jb, model.loop_body_b[l])):
            if b < 0:
                continue
            Jw = jacobian(model, q, int(b), data=d)  # world [w; v_O]
            oE = d.oE[b]
            Phi = np.vstack([oE @ Jw[:3], oE @ Jw[3:]])  # body coordinates
            G[c0:c1] += J[c0:c1] @ Phi
    return G


def loop_Gdot_qd(model: Model, q, qd, delta: float | None = None) -> np.ndarray:
    """The velocity-product term ``(d G_L / dt) qd`` (nc,) float64 [m/s^2 | 1/s^2].

    ``d/dt [G_L(q(t)) qd]`` at t = 0 along ``q(t) = q (+) qd t`` (constant qd), by a central
    difference of two :func:`loop_velocity` evaluations (O(nb + nc) each) with step
    ``delta`` (default ``1e-4 / max(1, |qd|_inf)`` s; truncation error O(delta^2)).
    Used with ``G_L qdd`` in the acceleration-level constraint
    ``G_L qdd + G_L-dot qd = 0`` of the reference solver.
    """
    from ..configuration import integrate

    qd = np.asarray(qd, dtype=np.float64)
    if delta is None:
        delta = 1e-4 / max(1.0, float(np.abs(qd).max(initial=0.0)))
    qp = integrate(model, q, qd, delta)
    qm = integrate(model, q, qd, -delta)
    return (loop_velocity(model, qp, qd) - loop_velocity(model, qm, qd)) / (2.0 * delta)


def consistent_velocity(model: Model, q, qd) -> np.ndarray:
    """Project joint velocities onto the loop constraints: ``G_L(q) qd = 0``.

    The projection in the kinetic-energy metric (the velocity closest to ``qd`` in
    ``(qd' - qd)^T H (qd' - qd)``): ``qd' = qd - H^-1 G^T (G H^-1 G^T)^+ G qd``. Dense,
    O(nv^3): for setting up small models (e.g. a crank speed of the Strandbeest leg).

    Returns (nv,) float64. Raises as :func:`loop_residual`.
    """
    from .crba import crba

    qd = np.asarray(qd, dtype=np.float64)
    if model.nc == 0:
        return qd.copy()
    G = loop_jacobian(model, q)
    H = crba(model, q).copy()
    HiGT = np.linalg.solve(H, G.T)
    y = np.linalg.lstsq(G @ HiGT, G @ qd, rcond=1e-10)[0]
    return qd - HiGT @ y
