"""Articulated-body algorithm (ABA) and the modified ABA of Ascher, Pai & Cloutier.

ABA: Featherstone, RBDA Table 7.1 (eqs. 7.34-7.47), three passes, O(n).
Modified ABA: Ascher, Pai & Cloutier 1997, eq. 11: the joint-space pivot
``D_k = H_k M_k H_k^* + H_k M~_k H_k^*`` is accumulated from the body inertia and each
child's transformed *projected* inertia ``M~ = X^T Mbar X`` separately, instead of being read
off the summed articulated inertia ``M^_k = M_k + M~_k``; this avoids the cancellation that
ruins ``D_k`` when a light body carries heavy ones (their Example 2/3, Table 2).
In their chain notation ``M^`` is our ``IA``, ``Mbar`` is ``Ia = IA - U D^-1 U^T`` and
``H^*`` is ``S``; the tree form sums ``M~`` over the children.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..config import INLINE, JIT
from ..model import Model
from ..spatial import (congruence_add, crf_add, force_apply_T_add, inertia_apply, motion_apply,
                       spd_inverse)
from ._inputs import as_f_ext, as_state, check_dtype, check_output
from .kinematics import joint_xup, velocity_step


@njit(**INLINE)
def _project_1dof(IA, pA, c, S, tau, U, Dinv, u, va, pa_out):
    """One-dof joint of ABA pass 2 in registers: ``U = IA S``, ``D = S^T U``,
    ``u = tau - S^T pA``; then, in place, ``Ia = IA - U U^T / D`` and
    ``pa = pA + Ia c + U u / D`` (RBDA eqs. 7.39-7.44)."""
    s0 = S[0]
    s1 = S[1]
    s2 = S[2]
    s3 = S[3]
    s4 = S[4]
    s5 = S[5]
    u0 = IA[0, 0] * s0 + IA[0, 1] * s1 + IA[0, 2] * s2 + IA[0, 3] * s3 + IA[0, 4] * s4 + IA[0, 5] * s5
    u1 = IA[1, 0] * s0 + IA[1, 1] * s1 + IA[1, 2] * s2 + IA[1, 3] * s3 + IA[1, 4] * s4 + IA[1, 5] * s5
    u2 = IA[2, 0] * s0 + IA[2, 1] * s1 + IA[2, 2] * s2 + IA[2, 3] * s3 + IA[2, 4] * s4 + IA[2, 5] * s5
    u3 = IA[3, 0] * s0 + IA[3, 1] * s1 + IA[3, 2] * s2 + IA[3, 3] * s3 + IA[3, 4] * s4 + IA[3, 5] * s5
    u4 = IA[4, 0] * s0 + IA[4, 1] * s1 + IA[4, 2] * s2 + IA[4, 3] * s3 + IA[4, 4] * s4 + IA[4, 5] * s5
    u5 = IA[5, 0] * s0 + IA[5, 1] * s1 + IA[5, 2] * s2 + IA[5, 3] * s3 + IA[5, 4] * s4 + IA[5, 5] * s5
    U[0] = u0
    U[1] = u1
    U[2] = u2
    U[3] = u3
    U[4] = u4
    U[5] = u5
    d = s0 * u0 + s1 * u1 + s2 * u2 + s3 * u3 + s4 * u4 + s5 * u5
    Dinv[0] = 1 / d
    dinv = Dinv[0]
    uu = tau - (s0 * pA[0] + s1 * pA[1] + s2 * pA[2] + s3 * pA[3] + s4 * pA[4] + s5 * pA[5])
    u[va] = uu
    ud = uu * dinv
    for k in range(6):
        t = U[k] * dinv
        for l in range(k, 6):
            IA[k, l] -= t * U[l]
    for k in range(1, 6):
        for l in range(k):
            IA[k, l] = IA[l, k]
    c0 = c[0]
    c1 = c[1]
    c2 = c[2]
    c3 = c[3]
    c4 = c[4]
    c5 = c[5]
    for k in range(6):
        pa_out[k] = (pA[k] + IA[k, 0] * c0 + IA[k, 1] * c1 + IA[k, 2] * c2 + IA[k, 3] * c3
                     + IA[k, 4] * c4 + IA[k, 5] * c5 + U[k] * ud)


@njit(**INLINE)
def _project_ndof(IA, pA, c, S, tau, va, n, U, D, Dinv, u, T, w, pa_out, modified):
    """Multi-dof (or zero-dof) joint of ABA pass 2: as :func:`_project_1dof` with ``D``
    an (n, n) block inverted by Cholesky. With ``modified`` the block ``D`` was
    accumulated separately (Ascher-Pai-Cloutier eq. 11) and is used as is."""
    for r in range(n):
        for k in range(6):
            s = IA[k, 0] * S[va + r, 0]
            for l in range(1, 6):
                s += IA[k, l] * S[va + r, l]
            U[va + r, k] = s
        u_r = tau[va + r]
        for k in range(6):
            u_r -= S[va + r, k] * pA[k]
        u[va + r] = u_r
    if not modified:
        for r in range(n):
            for cc in range(n):
                s = S[va + r, 0] * U[va + cc, 0]
                for k in range(1, 6):
                    s += S[va + r, k] * U[va + cc, k]
                D[va + r, cc] = s
    if n > 0:
        spd_inverse(D[va:va + n], n, Dinv[va:va + n], T)
    for r in range(n):
        s = Dinv[va + r, 0] * u[va]
        for cc in range(1, n):
            s += Dinv[va + r, cc] * u[va + cc]
        w[r] = s
    for r in range(n):
        for cc in range(n):
            dinv = Dinv[va + r, cc]
            for k in range(6):
                t = U[va + r, k] * dinv
                for l in range(6):
                    IA[k, l] -= t * U[va + cc, l]
    for k in range(6):
        s = pA[k]
        for l in range(6):
            s += IA[k, l] * c[l]
        for r in range(n):
            s += U[va + r, k] * w[r]
        pa_out[k] = s


@njit(**JIT)
def _aba_kernel(
    # model
    parent, jtype, qadr, vadr, jnv, axis, Xtree_E, Xtree_r, mass, h, Ibar, I, S, gravity,
    # inputs
    q, qd, tau, f_ext, modified,
    # data (workspace)
    Xup_E, Xup_r, v, c, a, IA, pA, U, Dinv, D, u, T, T2, EJ, tmp,
    # output
    qdd_out,
):
    nb = parent.shape[0]
    vJ = tmp[0]
    Iv = tmp[1]
    pa = tmp[2]
    w = tmp[3]
    # pass 1 (root to leaves): transforms, velocities, v x* I v - f_ext (RBDA eq. 7.34-7.37)
    for i in range(nb):
        joint_xup(i, jtype, qadr, axis, Xtree_E, Xtree_r, q, EJ, Xup_E, Xup_r)
        velocity_step(i, parent, vadr, jnv, S, qd, Xup_E, Xup_r, v, vJ, c)
        inertia_apply(mass[i], h[i], Ibar[i], v[i], Iv)
        for k in range(6):
            pA[i, k] = -f_ext[i, k]
        crf_add(v[i], Iv, pA[i])
        for k in range(6):
            for l in range(6):
                IA[i, k, l] = I[i, k, l]
        if modified:
            # D_i starts as S^T I_i S (eq. 11: H M H^*); children add S^T M~ S below
            va = vadr[i]
            for r in range(jnv[i]):
                inertia_apply(mass[i], h[i], Ibar[i], S[va + r], Iv)
                for cc in range(jnv[i]):
                    s = S[va + cc, 0] * Iv[0]
                    for k in range(1, 6):
                        s += S[va + cc, k] * Iv[k]
                    D[va + cc, r] = s
    # pass 2 (leaves to root): articulated inertias and bias forces (RBDA eq. 7.38-7.44)
    for i in range(nb - 1, -1, -1):
        va = vadr[i]
        n = jnv[i]
        p = parent[i]
        IAi = IA[i]
        if n == 1 and not modified:
            _project_1dof(IAi, pA[i], c[i], S[va], tau[va], U[va], Dinv[va], u, va, pa)
        else:
            _project_ndof(IAi, pA[i], c[i], S, tau, va, n, U, D, Dinv, u, T, w, pa, modified)
        if p < 0:
            continue
        if modified:
            for k in range(6):
                for l in range(6):
                    T2[k, l] = 0
            congruence_add(Xup_E[i], Xup_r[i], IAi, T2)
            for k in range(6):
                for l in range(6):
                    IA[p, k, l] += T2[k, l]
            vp = vadr[p]
            for r in range(jnv[p]):
                for k in range(6):
                    s = T2[k, 0] * S[vp + r, 0]
                    for l in range(1, 6):
                        s += T2[k, l] * S[vp + r, l]
                    Iv[k] = s
                for cc in range(jnv[p]):
                    s = S[vp + cc, 0] * Iv[0]
                    for k in range(1, 6):
                        s += S[vp + cc, k] * Iv[k]
                    D[vp + cc, r] += s
        else:
            congruence_add(Xup_E[i], Xup_r[i], IAi, IA[p])
        force_apply_T_add(Xup_E[i], Xup_r[i], pa, pA[p])
    # pass 3 (root to leaves): accelerations (RBDA eq. 7.45-7.47); a_0 = -g
    for k in range(3):
        w[k] = 0
        w[3 + k] = -gravity[k]
    for i in range(nb):
        p = parent[i]
        ai = a[i]
        if p >= 0:
            motion_apply(Xup_E[i], Xup_r[i], a[p], ai)
        else:
            motion_apply(Xup_E[i], Xup_r[i], w, ai)
        for k in range(6):
            ai[k] += c[i, k]
        va = vadr[i]
        n = jnv[i]
        for r in range(n):
            s = u[va + r]
            for k in range(6):
                s -= U[va + r, k] * ai[k]
            vJ[r] = s
        for r in range(n):
            s = Dinv[va + r, 0] * vJ[0]
            for cc in range(1, n):
                s += Dinv[va + r, cc] * vJ[cc]
            qdd_out[va + r] = s
        for r in range(n):
            qr = qdd_out[va + r]
            for k in range(6):
                ai[k] += S[va + r, k] * qr


def aba(model: Model, q, qd, tau, f_ext=None, *, modified: bool = False, dtype=np.float64,
        data=None) -> np.ndarray:
    """Forward dynamics by the articulated-body algorithm: ``qdd = M(q)^-1 (tau - C(q, qd))``.

    Parameters
    ----------
    model : Model
    q : (nq,) float64 - configuration (unit quaternions for spherical/free joints)
    qd : (nv,) float64 - joint velocities [rad/s | m/s] (body-frame rates for quaternion
        joints; not dq/dt)
    tau : (nv,) float64 - joint forces [N m | N]
    f_ext : (nb, 6) float64, optional - external spatial force on each body, ``[n; f]``
        about the body origin in body coordinates [N m; N]
        (see :func:`articulated.body_force`)
    modified : bool - use the modified ABA of Ascher, Pai & Cloutier (1997), eq. 11
    dtype : float64 or float32 - arithmetic precision of the whole computation

    Returns
    -------
    qdd : (nv,) ndarray of ``dtype`` - joint accelerations [rad/s^2 | m/s^2]

    Raises
    ------
    ValueError - wrong shapes, a non-finite input (names the joint or body), a non-unit
        quaternion, or a singular articulated inertia (names the joint).
    TypeError - non-numeric arrays or an unsupported dtype.

    Complexity O(nb) time, no allocation beyond the returned copy.
    Source: Featherstone, RBDA 2008, Table 7.1; modified form: Ascher, Pai & Cloutier 1997,
    eq. 11.
    """
    dt = check_dtype(dtype)
    d = data if data is not None else model.data(dt)
    ma = model.arrays(dt)
    q, qd = as_state(model, q, qd, dt)
    tau = model.check_vector(tau, "tau", model.nv, dt)
    f = as_f_ext(model, f_ext, d)
    _aba_kernel(ma.parent, ma.jtype, ma.qadr, ma.vadr, ma.jnv, ma.axis, ma.Xtree_E, ma.Xtree_r,
                ma.mass, ma.h, ma.Ibar, ma.I, ma.S, ma.gravity,
                q, qd, tau, f, bool(modified),
                d.Xup_E, d.Xup_r, d.v, d.c, d.a, d.IA, d.pA, d.U, d.Dinv, d.D, d.u, d.T, d.T2,
                d.EJ, d.tmp, d.qdd)
    check_output(model, d.qdd, d, q=q, qd=qd, tau=tau, f_ext=f)
    return d.qdd.copy()


def aba_modified(model: Model, q, qd, tau, f_ext=None, *, dtype=np.float64, data=None):
    """The modified ABA (Ascher, Pai & Cloutier 1997, eq. 11); see :func:`aba`."""
    return aba(model, q, qd, tau, f_ext, modified=True, dtype=dtype, data=data)
