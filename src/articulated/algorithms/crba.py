"""Composite-rigid-body algorithm and CRBA forward dynamics.

Composite-rigid-body algorithm (joint-space inertia matrix) and the sparse
``L^T D L`` factorization that solves ``M qdd = tau - C`` with it (RBDA sec. 6.2, 6.5).

The factorization exploits branch-induced sparsity (``dof_parent`` is Featherstone's
``lambda``): cost O(sum over dofs of depth^2), O(n^3) only for a serial chain.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..config import inline, KERNEL
from ..data import data_arrays
from ..model import Model, model_arrays
from ..spatial import (congruence, dot6, get_mat3, get_sym6, get_vec3, get_vec6, rigid_inertia,
                       set_sym6, set_vec6, sym6_add, sym6_apply, xform_force_T)
from ._inputs import (EntryPoints, as_configuration, as_f_ext, as_output, as_state, as_vector,
                      check_dtype, check_output, configuration_status, hot_entry, matrix_ok,
                      report_nonfinite, workspace)
from .kinematics import joint_xup, pop_children
from .rnea import rnea_into


@njit(**KERNEL)
def _crba_kernel(
    # model (packed, see ModelArrays)
    model_i, model_f,
    # inputs
    q,
    # data (packed, see Data): writes Xup, IC_stack (= Data.Ia_stack) and F
    data_f,
    # output (nv, nv), written completely (zero outside the branch-induced pattern)
    M_out,
):
    """Joint-space inertia into ``M_out``; returns False if it is not finite."""
    mv = model_arrays(model_i, model_f)
    parent, jtype, qadr, vadr, jnv = mv.parent, mv.jtype, mv.qadr, mv.vadr, mv.jnv
    subtree_end, Xtree_rot, axis, Xtree_E = mv.subtree_end, mv.Xtree_rot, mv.axis, mv.Xtree_E
    Xtree_r, mass, h, Ibar, S = mv.Xtree_r, mv.mass, mv.h, mv.Ibar, mv.S
    nb = parent.shape[0]
    nv = S.shape[0]
    dv = data_arrays(data_f, nb, nv)
    Xup_E, Xup_r, stack, F = dv.Xup_E, dv.Xup_r, dv.stack, dv.F
    IC_stack = dv.Ia_stack
    z = S.dtype.type(0)
    for i in range(nb):
        joint_xup(i, jtype, qadr, Xtree_rot, axis, Xtree_E, Xtree_r, q, Xup_E, Xup_r)
    stack[nb, :] = 0
    top = 0
    for i in range(nb - 1, -1, -1):
        # IC_i = I_i + sum over the children j of Xup_j^T IC_j Xup_j (RBDA eq. 6.13), the
        # children's terms popped off the stack (as in ABA pass 2)
        row, top = pop_children(i, subtree_end, stack, top)
        IC = sym6_add(rigid_inertia(mass[i], get_vec3(h, i), get_mat3(Ibar, i)),
                      get_sym6(IC_stack, row))
        if parent[i] >= 0:
            set_sym6(IC_stack, top, congruence(get_mat3(Xup_E, i), get_vec3(Xup_r, i), IC))
            top += 1
        # F_k = IC_b S_k for every dof k of a body b below i, carried from the child's frame
        # into frame i: the walk to the root of RBDA Table 6.2, taken one level at a time
        # for all the forces below i at once (they are independent: no dependency chain)
        j = i + 1
        while j < subtree_end[i]:  # the children of i
            E = get_mat3(Xup_E, j)
            r = get_vec3(Xup_r, j)
            for k in range(vadr[j], _dof_end(j, subtree_end, vadr, nv)):
                set_vec6(F, k, xform_force_T(E, r, get_vec6(F, k)))
            j = subtree_end[j]
        va = vadr[i]
        for r in range(jnv[i]):
            set_vec6(F, va + r, sym6_apply(IC, get_vec6(S, va + r)))
        # row va + r of M right of the diagonal: S_i^T F_k over the subtree of i, zero beyond
        end = _dof_end(i, subtree_end, vadr, nv)
        for r in range(jnv[i]):
            s = get_vec6(S, va + r)
            for k in range(va + r, end):
                M_out[va + r, k] = dot6(s, get_vec6(F, k))
            M_out[va + r, va + r] += mv.armature[va + r]   # M + diag(armature)
            for k in range(end, nv):
                M_out[va + r, k] = z
    return _mirror_upper(M_out)


@inline
def _dof_end(i, subtree_end, vadr, nv):
    """One past the last dof of the subtree of body i (its dofs are contiguous)."""
    e = subtree_end[i]
    return vadr[e] if e < subtree_end.shape[0] else nv


@inline
def _mirror_upper(M):
    """Copy the strict upper triangle of the square M onto its lower triangle, in cache
    blocks; returns False if M is not finite."""
    n = M.shape[0]
    B = 64
    bad = M[0, 0] - M[0, 0] if n else 0.0  # x - x is 0 for finite x, NaN otherwise
    for l0 in range(0, n, B):
        for k0 in range(0, l0 + 1, B):
            for l in range(l0, min(l0 + B, n)):
                for k in range(k0, min(k0 + B, l)):
                    x = M[k, l]
                    M[l, k] = x
                    bad += x - x
    for k in range(n):
        bad += M[k, k] - M[k, k]
    return bad == 0


@njit(**KERNEL)
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


@njit(**KERNEL)
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


@njit(**KERNEL)
def crba_checked_kernel(model_i, model_f, q, data_f, M_out):
    """The public :func:`crba`'s one compiled call: the checks of ``q`` (shape, layout,
    quaternions: :func:`~articulated.algorithms._inputs.configuration_status`) and of
    ``M_out`` (a C-contiguous (nv, nv)), then :func:`_crba_kernel`. Returns 0 (done), 1 (a
    wrong shape or layout), 2 (a non-unit quaternion) or 3 (a non-finite result)."""
    mv = model_arrays(model_i, model_f)
    nv = mv.S.shape[0]
    if not matrix_ok(M_out, nv, nv):
        return 1
    status = configuration_status(mv, q)
    if status != 0:
        return status
    if not _crba_kernel(model_i, model_f, q, data_f, M_out):
        return 3
    return 0


_CRBA_ENTRY = EntryPoints(crba_checked_kernel, lambda d: (
    d.model_i, d.model_f, d.qdd, d.buf, d.M))


def crba_into(d, q, M):
    """Fill ``M`` (nv, nv) with M(q) using the workspace ``d`` (both triangles; zero outside
    the branch-induced pattern). Returns False if it is not finite."""
    return _crba_kernel(d.model_i, d.model_f, q, d.buf, M)


def crba(model: Model, q, *, dtype=np.float64, data=None, out=None) -> np.ndarray:
    """Joint-space inertia matrix by the composite-rigid-body algorithm.

    Parameters
    ----------
    q : (nq,) float64
        Configuration.
    dtype, data : as :func:`articulated.aba`
    out : (nv, nv) array of ``dtype``, optional
        Written and returned instead of a new array (C-contiguous, writable).

    Returns
    -------
    M : (nv, nv) ndarray of ``dtype``
        Symmetric positive definite joint-space inertia [kg m^2 | kg | kg m]; ``T = 1/2 qd^T
        M qd``.

    Notes
    -----
    Memory O(nv^2) (dense result); time O(nv * depth). Raises as :func:`articulated.aba`.
    Source: Featherstone, RBDA 2008, Table 6.2; Ascher, Pai & Cloutier 1997, sec. 2 (the
    CRB method as one elimination of their eq. 4).
    """
    d = data if data is not None else model._data.get(dtype)
    ep = hot_entry(_CRBA_ENTRY, d, q, out=out, out_ndim=2)
    if ep is not None:
        M = np.empty((d.nv, d.nv), dtype=d.dtype) if out is None else out
        if ep(d.model_i, d.model_f, q, d.buf, M) == 0:
            return M
    dt, d = workspace(model, dtype, data)
    q = as_configuration(model, q, dt)
    M = as_output(out, (model.nv, model.nv), dt)
    if not crba_into(d, q, M):
        report_nonfinite(model, M.diagonal(), d, q=q)
    return M


def crba_forward_dynamics(model: Model, q, qd, tau, f_ext=None, *, dtype=np.float64, data=None):
    """Compute forward dynamics through the joint-space inertia matrix (CRBA).

    ``qdd = M^-1 (tau - C)`` with M from CRBA, C from RNEA and the sparse ``L^T D L``
    factorization (RBDA sec. 6.5). Same arguments and errors as :func:`articulated.aba`.

    Returns
    -------
    qdd : (nv,) ndarray of ``dtype``
        Joint accelerations [rad/s^2 | m/s^2].
    """
    dt = check_dtype(dtype)
    d = data if data is not None else model.data(dt)
    q, qd = as_state(model, q, qd, dt)
    tau = as_vector(model, tau, "tau", model.nv, dt)
    f = as_f_ext(model, f_ext, d)
    d.qdd[:] = 0
    rnea_into(d, q, qd, d.qdd, f)
    M = d.M
    crba_into(d, q, M)
    ltdl_factor(M, model.dof_parent)
    x = tau - d.tau
    ltdl_solve(M, model.dof_parent, x)
    check_output(model, x, d, q=q, qd=qd, tau=tau, f_ext=f)
    return x
