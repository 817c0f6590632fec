"""Composite-rigid-body algorithm (joint-space inertia matrix) and the sparse
``L^T D L`` factorization that solves ``M qdd = tau - C`` with it (RBDA sec. 6.2, 6.5).

The factorization exploits branch-induced sparsity (``dof_parent`` is Featherstone's
``lambda``): cost O(sum over dofs of depth^2), O(n^3) only for a serial chain.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..config import JIT
from ..model import Model
from ..spatial import congruence_add, force_apply_T_add
from ._inputs import as_f_ext, as_state, check_dtype, check_output
from .kinematics import joint_xup
from .rnea import rnea_into


@njit(**JIT)
def _crba_kernel(
    # model
    parent, jtype, qadr, vadr, jnv, axis, Xtree_E, Xtree_r, I, S,
    # inputs
    q,
    # data
    Xup_E, Xup_r, Ic, F, T, EJ,
    # output
    M_out,
):
    nb = parent.shape[0]
    for i in range(nb):
        joint_xup(i, jtype, qadr, axis, Xtree_E, Xtree_r, q, EJ, Xup_E, Xup_r)
        for k in range(6):
            for l in range(6):
                Ic[i, k, l] = I[i, k, l]
    for i in range(nb - 1, -1, -1):
        p = parent[i]
        if p >= 0:
            congruence_add(Xup_E[i], Xup_r[i], Ic[i], Ic[p])  # RBDA eq. 6.13
        va = vadr[i]
        n = jnv[i]
        if n == 0:
            continue
        # F = Ic_i S_i (one row of F per dof), M_ii = S_i^T F
        for r in range(n):
            for k in range(6):
                s = Ic[i, k, 0] * S[va + r, 0]
                for l in range(1, 6):
                    s += Ic[i, k, l] * S[va + r, l]
                F[va + r, k] = s
        for r in range(n):
            for cc in range(r + 1):
                s = S[va + cc, 0] * F[va + r, 0]
                for k in range(1, 6):
                    s += S[va + cc, k] * F[va + r, k]
                M_out[va + cc, va + r] = s
                M_out[va + r, va + cc] = s
        # walk to the root: F = Xup_j^T F, M_ij = F^T S_j
        j = i
        while parent[j] >= 0:
            for r in range(n):
                for k in range(6):
                    T[0, k] = F[va + r, k]
                    F[va + r, k] = 0
                force_apply_T_add(Xup_E[j], Xup_r[j], T[0], F[va + r])
            j = parent[j]
            vj = vadr[j]
            for r in range(n):
                for cc in range(jnv[j]):
                    s = S[vj + cc, 0] * F[va + r, 0]
                    for k in range(1, 6):
                        s += S[vj + cc, k] * F[va + r, k]
                    M_out[va + r, vj + cc] = s
                    M_out[vj + cc, va + r] = s


@njit(**JIT)
def ltdl_factor(H, lam):
    """In-place ``H = L^T D L`` on the branch-induced sparsity pattern (RBDA Table 6.3).

    On return the strictly lower ancestor entries hold L (unit diagonal implied) and the
    diagonal holds D. Entries outside the pattern are not touched.
    """
    n = H.shape[0]
    for k in range(n - 1, -1, -1):
        i = lam[k]
        while i != -1:
            a = H[k, i] / H[k, k]
            j = i
            while j != -1:
                H[i, j] -= a * H[k, j]
                j = lam[j]
            H[k, i] = a
            i = lam[i]


@njit(**JIT)
def ltdl_solve(H, lam, x):
    """Solve ``(L^T D L) x = b`` in place (x holds b on entry), RBDA Table 6.4 style."""
    n = H.shape[0]
    for i in range(n - 1, -1, -1):
        j = lam[i]
        while j != -1:
            x[j] -= H[i, j] * x[i]
            j = lam[j]
    for i in range(n):
        x[i] = x[i] / H[i, i]
    for i in range(n):
        j = lam[i]
        while j != -1:
            x[i] -= H[i, j] * x[j]
            j = lam[j]


def crba_into(model, d, ma, q):
    """Fill ``d.M`` with M(q) (both triangles of the ancestor pattern; the rest is zero)."""
    M = d.M
    M[...] = 0
    _crba_kernel(ma.parent, ma.jtype, ma.qadr, ma.vadr, ma.jnv, ma.axis, ma.Xtree_E, ma.Xtree_r,
                 ma.I, ma.S, q, d.Xup_E, d.Xup_r, d.IA, d.U, d.T, d.EJ, M)
    return M


def crba(model: Model, q, *, dtype=np.float64, data=None) -> np.ndarray:
    """Joint-space inertia matrix by the composite-rigid-body algorithm.

    Parameters
    ----------
    q : (nq,) float64 - configuration

    Returns
    -------
    M : (nv, nv) ndarray of ``dtype`` - symmetric positive definite joint-space inertia
        [kg m^2 | kg | kg m]; ``T = 1/2 qd^T M qd``.

    Memory O(nv^2) (dense result); time O(nv * depth). Raises as :func:`articulated.aba`.
    Source: Featherstone, RBDA 2008, Table 6.2; Ascher, Pai & Cloutier 1997, sec. 2 (the
    CRB method as one elimination of their eq. 4).
    """
    dt = check_dtype(dtype)
    d = data if data is not None else model.data(dt)
    q = model.check_configuration(q, dt)
    M = crba_into(model, d, model.arrays(dt), q)
    check_output(model, M, d, q=q)
    return M.copy()


def crba_forward_dynamics(model: Model, q, qd, tau, f_ext=None, *, dtype=np.float64, data=None):
    """``qdd = M^-1 (tau - C)`` with M from CRBA, C from RNEA and the sparse ``L^T D L``
    factorization (RBDA sec. 6.5). Same arguments and errors as :func:`articulated.aba`."""
    dt = check_dtype(dtype)
    d = data if data is not None else model.data(dt)
    ma = model.arrays(dt)
    q, qd = as_state(model, q, qd, dt)
    tau = model.check_vector(tau, "tau", model.nv, dt)
    f = as_f_ext(model, f_ext, d)
    d.qdd[:] = 0
    rnea_into(model, d, ma, q, qd, d.qdd, f)
    M = crba_into(model, d, ma, q)
    ltdl_factor(M, model.dof_parent)
    x = tau - d.tau
    ltdl_solve(M, model.dof_parent, x)
    check_output(model, x, d, q=q, qd=qd, tau=tau, f_ext=f)
    return x
