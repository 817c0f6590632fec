"""Recursive Newton-Euler algorithm (inverse dynamics), RBDA Table 5.1."""

from __future__ import annotations

import numpy as np
from numba import njit

from ..config import JIT
from ..model import Model
from ..spatial import crf_add, force_apply_T_add, inertia_apply, motion_apply
from ._inputs import as_f_ext, as_state, check_dtype, check_output
from .kinematics import joint_xup, velocity_step


@njit(**JIT)
def _rnea_kernel(
    # model
    parent, jtype, qadr, vadr, jnv, axis, Xtree_E, Xtree_r, mass, h, Ibar, S, gravity,
    # inputs
    q, qd, qdd, f_ext, use_gravity,
    # data
    Xup_E, Xup_r, v, c, a, f, EJ, tmp,
    # output
    tau_out,
):
    nb = parent.shape[0]
    vJ = tmp[0]
    Iv = tmp[1]
    ag = tmp[2]
    for k in range(3):
        ag[k] = 0
        ag[3 + k] = -gravity[k] if use_gravity else 0
    # forward pass: v_i, a_i, f_i = I a + v x* I v - f_ext (RBDA eqs. 5.7-5.9)
    for i in range(nb):
        joint_xup(i, jtype, qadr, axis, Xtree_E, Xtree_r, q, EJ, Xup_E, Xup_r)
        velocity_step(i, parent, vadr, jnv, S, qd, Xup_E, Xup_r, v, vJ, c)
        p = parent[i]
        ai = a[i]
        if p >= 0:
            motion_apply(Xup_E[i], Xup_r[i], a[p], ai)
        else:
            motion_apply(Xup_E[i], Xup_r[i], ag, ai)
        va = vadr[i]
        for k in range(6):
            s = c[i, k]
            for d in range(jnv[i]):
                s += S[va + d, k] * qdd[va + d]
            ai[k] += s
        inertia_apply(mass[i], h[i], Ibar[i], ai, f[i])
        inertia_apply(mass[i], h[i], Ibar[i], v[i], Iv)
        crf_add(v[i], Iv, f[i])
        for k in range(6):
            f[i, k] -= f_ext[i, k]
    # backward pass: tau_i = S_i^T f_i, f_parent += Xup^T f_i (RBDA eqs. 5.10-5.11)
    for i in range(nb - 1, -1, -1):
        va = vadr[i]
        for d in range(jnv[i]):
            s = S[va + d, 0] * f[i, 0]
            for k in range(1, 6):
                s += S[va + d, k] * f[i, k]
            tau_out[va + d] = s
        p = parent[i]
        if p >= 0:
            force_apply_T_add(Xup_E[i], Xup_r[i], f[i], f[p])


def rnea_into(model, d, ma, q, qd, qdd, f, gravity=True):
    """Run the RNEA kernel on validated arrays; the result is left in ``d.tau``."""
    _rnea_kernel(ma.parent, ma.jtype, ma.qadr, ma.vadr, ma.jnv, ma.axis, ma.Xtree_E, ma.Xtree_r,
                 ma.mass, ma.h, ma.Ibar, ma.S, ma.gravity, q, qd, qdd, f, bool(gravity),
                 d.Xup_E, d.Xup_r, d.v, d.c, d.a, d.f, d.EJ, d.tmp, d.tau)


def rnea(model: Model, q, qd, qdd, f_ext=None, *, gravity: bool = True, dtype=np.float64,
         data=None) -> np.ndarray:
    """Inverse dynamics: ``tau = M(q) qdd + C(q, qd) - J^T f_ext`` by the recursive
    Newton-Euler algorithm.

    Parameters
    ----------
    q : (nq,) float64 - configuration
    qd : (nv,) float64 - joint velocities [rad/s | m/s]
    qdd : (nv,) float64 - joint accelerations [rad/s^2 | m/s^2]
    f_ext : (nb, 6) float64, optional - external spatial forces, body coordinates
        (``[n; f]`` about each body origin) [N m; N]
    gravity : bool - include the model's gravity (as a base acceleration ``-g``)

    Returns
    -------
    tau : (nv,) ndarray of ``dtype`` - joint forces [N m | N]. After the call
    ``model.data().f`` (nb, 6) holds the spatial force each joint transmits to its body.

    Raises ValueError/TypeError as :func:`articulated.aba`. O(nb).
    Source: Featherstone, RBDA 2008, Table 5.1.
    """
    dt = check_dtype(dtype)
    d = data if data is not None else model.data(dt)
    ma = model.arrays(dt)
    q, qd = as_state(model, q, qd, dt)
    qdd = model.check_vector(qdd, "qdd", model.nv, dt)
    f = as_f_ext(model, f_ext, d)
    rnea_into(model, d, ma, q, qd, qdd, f, gravity)
    check_output(model, d.tau, d, q=q, qd=qd, qdd=qdd, f_ext=f)
    return d.tau.copy()


def bias_forces(model: Model, q, qd, f_ext=None, *, dtype=np.float64, data=None):
    """``C(q, qd) - J^T f_ext``: Coriolis, centrifugal, gravity and external terms (nv,)
    [N m | N], i.e. ``rnea(q, qd, 0)``."""
    return rnea(model, q, qd, np.zeros(model.nv), f_ext, dtype=dtype, data=data)


def gravity_torques(model: Model, q, *, dtype=np.float64, data=None):
    """Generalized gravity forces ``g(q) = rnea(q, 0, 0)`` (nv,) [N m | N] = dV/dq for
    1-DOF joints."""
    return rnea(model, q, np.zeros(model.nv), np.zeros(model.nv), dtype=dtype, data=data)
