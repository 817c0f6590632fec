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

import math
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from numba import njit

from ..config import inline, KERNEL
from ..data import Data, data_arrays
from ..model import JOINT_FREE, JOINT_PRISMATIC, JOINT_REVOLUTE, Model, model_arrays
from ..spatial import (add6, congruence, cross_force, dot6, get_mat3, get_sym6, get_vec3, get_vec6,
                       inertia_times, rigid_inertia, scale6, set_sym6, set_vec6, spd_inverse, sub6,
                       sym6_add, sym6_apply, sym6_apply_half, sym6_from_dense, sym6_rank1_sub,
                       sym6_to_dense, xform_force_T, xform_motion)
from ._inputs import (EntryPoints, as_batch, as_configuration, as_f_ext, as_output, as_state,
                      as_vector, check_dtype, check_f_ext, check_quaternions, deliver,
                      hot_entry, is_batch, report_nonfinite, state_status, workspace)
from .kinematics import base_acceleration, joint_motion, joint_xup, pop_children, velocity_step

_empty = np.empty


@inline
def _project_1dof(IA, pA, c, a, angular, tau, one, arm):
    """Pass 2 at a one-dof joint, all in registers: ``U = IA S``, ``D = S^T U + arm``
    (``arm`` the dof's armature: ``M + diag(armature)`` has the pivots ``D + arm``),
    ``u = tau - S^T pA``, ``Ia = IA - U U^T / D``, ``pa = pA + Ia c + U u / D`` (RBDA
    eqs. 7.39-7.44), with ``S = [a; 0]`` (revolute, ``angular``) or ``[0; a]`` (prismatic).
    ``IA`` is a packed symmetric 21-tuple, ``pA``, ``c`` are 6-tuples, ``a`` a 3-tuple,
    ``one`` is 1 in the working dtype. Returns ``(Ia, pa, U / D, u / D, 1 / D)``."""
    U = sym6_apply_half(IA, a, angular)
    if angular:
        D = a[0] * U[0] + a[1] * U[1] + a[2] * U[2] + arm
        u = tau - (a[0] * pA[0] + a[1] * pA[1] + a[2] * pA[2])
    else:
        D = a[0] * U[3] + a[1] * U[4] + a[2] * U[5] + arm
        u = tau - (a[0] * pA[3] + a[1] * pA[4] + a[2] * pA[5])
    IAc = sym6_apply(IA, c)  # Ia c = IA c - U (U^T c) / D: independent of D, so it overlaps
    Dinv = one / D
    UDinv = scale6(U, Dinv)
    Dinv_u = u * Dinv
    Ia = sym6_rank1_sub(IA, U, UDinv)
    pa = add6(add6(pA, IAc), scale6(U, Dinv_u - dot6(UDinv, c)))
    return Ia, pa, UDinv, Dinv_u, Dinv


@inline
def _project_ndof(IA, pA, c, S, tau, va, n, jw, scratch, modified, arm):
    """Pass 2 at a joint with ``n`` dofs (0 for a fixed joint): as :func:`_project_1dof`
    with ``D`` an (n, n) block inverted by Cholesky, on the dense scratch ``T``
    (``scratch = (T, T2)``). With ``modified`` the block ``D`` was accumulated separately
    (Ascher-Pai-Cloutier eq. 11). The dofs' armature ``arm[va + r]`` is added to the
    diagonal of ``D`` in both cases. Returns ``(Ia, pa)`` and writes the
    joint's rows of ``jw = (U, D, Dinv, u, UDinv, Dinv_u)`` (the workspace of
    :func:`aba_passes`)."""
    U, D, Dinv, u, UDinv, Dinv_u = jw
    T, T2 = scratch
    sym6_to_dense(IA, T)
    for r in range(n):
        for k in range(6):
            s = T[k, 0] * S[va + r, 0]
            for l in range(1, 6):
                s += T[k, l] * S[va + r, l]
            U[va + r, k] = s
        u[va + r] = tau[va + r] - dot6(get_vec6(S, va + r), pA)
    if not modified:
        for r in range(n):
            for cc in range(n):
                D[va + r, cc] = dot6(get_vec6(S, va + r), get_vec6(U, va + cc))
    for r in range(n):
        D[va + r, r] += arm[va + r]
    if n > 0:
        spd_inverse(D[va:va + n], n, Dinv[va:va + n], T2)
    for r in range(n):
        s = Dinv[va + r, 0] * u[va]
        for cc in range(1, n):
            s += Dinv[va + r, cc] * u[va + cc]
        Dinv_u[va + r] = s
        for k in range(6):
            s = U[va, k] * Dinv[va, r]
            for cc in range(1, n):
                s += U[va + cc, k] * Dinv[va + cc, r]
            UDinv[va + r, k] = s
    # Ia = IA - U D^-1 U^T, pa = pA + Ia c + U D^-1 u
    for r in range(n):
        for k in range(6):
            t = UDinv[va + r, k]
            for l in range(6):
                T[k, l] -= t * U[va + r, l]
    Ia = sym6_from_dense(T)
    pa = add6(pA, sym6_apply(Ia, c))
    for r in range(n):
        pa = add6(pa, scale6(get_vec6(U, va + r), Dinv_u[va + r]))
    return Ia, pa


@inline
def _project_free(IA, pA, tau, va, U, D, Dinv, u, UDinv, Dinv_u, T2):
    """Pass 2 at a free joint, whose motion subspace is ``S = 1_6`` in body coordinates:
    ``U = IA S = IA``, ``D = S^T U = IA``, ``u = tau - pA``, ``U D^-1 = 1``, hence
    ``Ia = IA - U D^-1 U^T = 0`` and ``pa = pA + Ia c + U D^-1 u = tau`` (RBDA eqs.
    7.39-7.44 with ``S = 1``). Only ``D^-1`` (Cholesky) and ``D^-1 u`` are computed; ``D``
    and ``D^-1`` are those of :func:`_project_ndof` bit for bit. Writes ``U, D, Dinv, u,
    UDinv, Dinv_u`` of the joint (rows ``va .. va+5``); returns ``(Ia, pa)``."""
    sym6_to_dense(IA, D[va:va + 6])
    z = pA[0] - pA[0]
    one = z + 1
    for r in range(6):
        for k in range(6):
            U[va + r, k] = D[va + r, k]
            UDinv[va + r, k] = one if r == k else z
        u[va + r] = tau[va + r] - pA[r]
    spd_inverse(D[va:va + 6], 6, Dinv[va:va + 6], T2)
    for r in range(6):
        s = Dinv[va + r, 0] * u[va]
        for cc in range(1, 6):
            s += Dinv[va + r, cc] * u[va + cc]
        Dinv_u[va + r] = s
    Ia = (z, z, z, z, z, z, z, z, z, z, z, z, z, z, z, z, z, z, z, z, z)
    pa = (tau[va], tau[va + 1], tau[va + 2], tau[va + 3], tau[va + 4], tau[va + 5])
    return Ia, pa


@inline
def _add_pivot(M, S, va, n, D):
    """``D_i += S_i^T M S_i`` for the (n, n) pivot block of joint i (the modified ABA
    accumulates ``D_i`` term by term, Ascher-Pai-Cloutier eq. 11)."""
    for r in range(n):
        MS = sym6_apply(M, get_vec6(S, va + r))
        for cc in range(n):
            D[va + cc, r] += dot6(get_vec6(S, va + cc), MS)


@njit(**KERNEL)
def aba_kernel(
    # model (packed, see ModelArrays)
    model_i, model_f,
    # inputs
    q, qd, tau, f_ext, modified,
    # data (packed, see Data): writes Xup, v, c, Ia_stack, pa_stack, UDinv, Dinv_u, Dinv,
    # a and the output qdd (U, D, u too at multi-dof joints and in the modified ABA)
    data_f,
    # pass 1 (False: Xup, v, c in data_f are already those of q, qd)
    kinematics,
):
    """Forward dynamics into ``qdd``; returns False if ``qdd`` is not finite.

    ``f_ext`` is (nb, 6), or (0, 6) for no external forces.
    """
    return aba_passes(model_i, model_f, q, qd, tau, f_ext, modified, data_f, kinematics,
                      False)[0]


@inline
def aba_passes(model_i, model_f, q, qd, tau, f_ext, modified, data_f, kinematics, kinetic):
    """:func:`aba_kernel`'s three passes; returns ``(finite, T)``, with ``kinetic`` the
    kinetic energy ``T = 1/2 sum v_i . I_i v_i`` [J] of the state (pass 2 forms ``I_i v_i``
    for the bias force; the compiled stepping loop records it from here), else 0."""
    mv = model_arrays(model_i, model_f)
    parent, jtype, qadr, vadr, jnv = mv.parent, mv.jtype, mv.qadr, mv.vadr, mv.jnv
    subtree_end, Xtree_rot, axis, Xtree_E = mv.subtree_end, mv.Xtree_rot, mv.axis, mv.Xtree_E
    Xtree_r, mass, h, Ibar, S, gravity = mv.Xtree_r, mv.mass, mv.h, mv.Ibar, mv.S, mv.gravity
    arm = mv.armature
    nb = parent.shape[0]
    dv = data_arrays(data_f, nb, S.shape[0])
    Xup_E, Xup_r, v, c, a, stack = dv.Xup_E, dv.Xup_r, dv.v, dv.c, dv.a, dv.stack
    Ia_stack, pa_stack, UDinv, Dinv_u, u = dv.Ia_stack, dv.pa_stack, dv.UDinv, dv.Dinv_u, dv.u
    U, D, Dinv, qdd, T, T2 = dv.U, dv.D, dv.Dinv, dv.qdd, dv.T, dv.T2
    has_f_ext = f_ext.shape[0] > 0
    one = S.dtype.type(1)
    T_kin = 0.0
    # pass 1 (root to leaves): transforms and velocities (RBDA eq. 7.34-7.35)
    if kinematics:
        for i in range(nb):
            E, r = joint_xup(i, jtype, qadr, Xtree_rot, axis, Xtree_E, Xtree_r, q, Xup_E,
                             Xup_r)
            velocity_step(i, parent, vadr, jnv, S, qd, E, r, v, c)
    # pass 2 (leaves to root): articulated inertias and bias forces (RBDA eq. 7.36-7.44).
    # IA_i = I_i + sum over the children j of Xup_j^T Ia_j Xup_j (pA_i likewise) is formed in
    # registers from the children's rows of the stack (pop_children); each body pushes its
    # own term.
    stack[nb, :] = 0
    top = 0
    for i in range(nb - 1, -1, -1):
        va = vadr[i]
        n = jnv[i]
        m = mass[i]
        hi = get_vec3(h, i)
        Ii = get_mat3(Ibar, i)
        vi = get_vec6(v, i)
        I = rigid_inertia(m, hi, Ii)
        Iv = inertia_times(m, hi, Ii, vi)
        if kinetic:
            for k in range(6):
                T_kin += 0.5 * vi[k] * Iv[k]
            for d in range(n):       # the rotors: 1/2 qd^T diag(armature) qd
                T_kin += 0.5 * arm[va + d] * qd[va + d] * qd[va + d]
        pAi = cross_force(vi, Iv)  # v x* I v - f_ext
        if has_f_ext:
            pAi = sub6(pAi, get_vec6(f_ext, i))
        if modified:
            # D_i = S^T I_i S + sum over the children of S^T (Xup^T Ia Xup) S, term by term
            for r in range(n):
                for cc in range(n):
                    D[va + r, cc] = 0
            _add_pivot(I, S, va, n, D)
            k = top
            j = i + 1
            while j < subtree_end[i]:
                k -= 1
                _add_pivot(get_sym6(Ia_stack, k), S, va, n, D)
                j = subtree_end[j]
        row, top = pop_children(i, subtree_end, stack, top)
        IA = sym6_add(I, get_sym6(Ia_stack, row))
        pAi = add6(pAi, get_vec6(pa_stack, row))
        t = jtype[i]
        if (t == JOINT_REVOLUTE or t == JOINT_PRISMATIC) and not modified:
            Ia, pa, UDinv_i, Dinv_u_i, Dinv_i = _project_1dof(
                IA, pAi, get_vec6(c, i), get_vec3(axis, i), t == JOINT_REVOLUTE, tau[va], one,
                arm[va])
            set_vec6(UDinv, va, UDinv_i)
            Dinv_u[va] = Dinv_u_i
            Dinv[va, 0] = Dinv_i  # kept for impulse responses (algorithms/contact.py)
        elif t == JOINT_FREE and not modified:   # no armature (Model refuses it there)
            Ia, pa = _project_free(IA, pAi, tau, va, U, D, Dinv, u, UDinv, Dinv_u, T2)
        else:
            Ia, pa = _project_ndof(IA, pAi, get_vec6(c, i), S, tau, va, n,
                                   (U, D, Dinv, u, UDinv, Dinv_u), (T, T2), modified, arm)
        if parent[i] >= 0:
            E = get_mat3(Xup_E, i)
            r = get_vec3(Xup_r, i)
            set_sym6(Ia_stack, top, congruence(E, r, Ia))
            set_vec6(pa_stack, top, xform_force_T(E, r, pa))
            top += 1
    # pass 3 (root to leaves): accelerations (RBDA eq. 7.45-7.47); a_0 = -g;
    # qdd = D^-1 (u - U^T a') = D^-1 u - (U D^-1)^T a'
    a0 = base_acceleration(gravity, True)
    finite = True
    for i in range(nb):
        p = parent[i]
        E = get_mat3(Xup_E, i)
        r = get_vec3(Xup_r, i)
        if p >= 0:
            ai = add6(xform_motion(E, r, get_vec6(a, p)), get_vec6(c, i))
        else:
            ai = add6(xform_motion(E, r, a0), get_vec6(c, i))
        va = vadr[i]
        if jtype[i] == JOINT_FREE and not modified:  # U D^-1 = 1 (_project_free)
            for d in range(6):
                x = Dinv_u[va + d] - ai[d]
                qdd[va + d] = x
                if not math.isfinite(x):
                    finite = False
        else:
            for d in range(jnv[i]):
                x = Dinv_u[va + d] - dot6(get_vec6(UDinv, va + d), ai)
                qdd[va + d] = x
                if not math.isfinite(x):
                    finite = False
        set_vec6(a, i, add6(ai, joint_motion(i, vadr, jnv, S, qdd)))
    return finite, T_kin


@njit(**KERNEL)
def aba_checked_kernel(model_i, model_f, q, qd, tau, f_ext, modified, data_f, qdd_out):
    """The public :func:`aba`'s one compiled call: :func:`~articulated.algorithms._inputs.
    state_status` (shapes, layout, quaternions), then :func:`aba_kernel`, its ``qdd``
    copied into ``qdd_out`` (nv,) (the workspace's own ``qdd`` for none). Returns 0 (done),
    1 (a wrong shape or layout), 2 (a non-unit quaternion) or 3 (a non-finite result); the
    caller converts or diagnoses 1-3 in Python."""
    mv = model_arrays(model_i, model_f)
    status = state_status(mv, q, qd, tau, f_ext, qdd_out)
    if status != 0:
        return status
    if not aba_kernel(model_i, model_f, q, qd, tau, f_ext, modified, data_f, True):
        return 3
    nv = mv.S.shape[0]
    qdd = data_arrays(data_f, mv.parent.shape[0], nv).qdd
    for k in range(nv):
        qdd_out[k] = qdd[k]
    return 0


_ABA_ENTRY = EntryPoints(aba_checked_kernel, lambda d: (
    d.model_i, d.model_f, d.qdd, d.qdd, d.qdd, d.f_none, False, d.buf, d.qdd))


@njit(**KERNEL)
def aba_batch_kernel(
    # model (packed, see ModelArrays)
    model_i, model_f,
    # inputs: B states (B, nq), (B, nv), (B, nv); external forces (B, nb, 6), (1, nb, 6)
    # shared by every state, or (1, 0, 6) for none
    Q, QD, TAU, F, modified,
    # data (packed, see Data): the workspace, overwritten state after state
    data_f,
    # output (B, nv)
    qdd_out,
):
    """:func:`aba_kernel` on each of ``B`` states in turn, its ``qdd`` copied into
    ``qdd_out[b]``; returns the first state whose result is not finite, or -1."""
    nv = qdd_out.shape[1]
    nb = model_arrays(model_i, model_f).parent.shape[0]
    qdd = data_arrays(data_f, nb, nv).qdd
    shared = F.shape[0] == 1
    bad = -1
    for b in range(Q.shape[0]):
        ok = aba_kernel(model_i, model_f, Q[b], QD[b], TAU[b], F[0] if shared else F[b],
                        modified, data_f, True)
        for k in range(nv):
            qdd_out[b, k] = qdd[k]
        if not ok and bad < 0:
            bad = b
    return bad


def aba(model: Model, q, qd, tau, f_ext=None, *, modified: bool = False, dtype=np.float64,
        data=None, out=None, threads=None) -> np.ndarray:
    """Compute forward dynamics by the articulated-body algorithm (ABA).

    ``qdd = M(q)^-1 (tau - C(q, qd))`` for one state or a batch of ``B`` states (a leading
    batch dimension).

    Parameters
    ----------
    model : Model
    q : (nq,) or (B, nq) float64
        Configuration (unit quaternions for spherical/free joints); a 2-D ``q`` makes a
        batch of B states, one per row.
    qd : (nv,) or (B, nv) float64
        Joint velocities [rad/s | m/s] (body-frame rates for quaternion joints; not dq/dt).
    tau : (nv,) or (B, nv) float64
        Joint forces [N m | N].
    f_ext : (nb, 6) float64, optional
        External spatial force on each body, ``[n; f]`` about the body origin in body
        coordinates [N m; N] (see :func:`articulated.body_force`); for a batch (B, nb, 6),
        or (nb, 6) shared by every state.
    modified : bool
        Use the modified ABA of Ascher, Pai & Cloutier (1997), eq. 11.
    dtype : float64 or float32
        Arithmetic precision of the whole computation.
    data : Data, optional
        The workspace (default: the model's cached one of ``dtype``).
    out : (nv,) or (B, nv) array of ``dtype``, optional
        Written and returned instead of a new array (C-contiguous, writable).
    threads : int, optional
        Batch only: worker threads, each on its own workspace and its own contiguous share
        of the states (the kernel releases the GIL; the calling thread takes the first
        share, a pool kept between calls the others); default: one per 256 states, at most
        one per core this process may use. The result does not depend on it, bit for bit.

    Returns
    -------
    qdd : (nv,) or (B, nv) ndarray of ``dtype``
        Joint accelerations [rad/s^2 | m/s^2].

    Raises
    ------
    ValueError
        Wrong shapes (of ``out`` too), a non-finite input (names the joint or body, and the
        state of a batch), a non-unit quaternion, or a singular articulated inertia (names
        the joint).
    TypeError
        Non-numeric arrays or an unsupported dtype.

    Notes
    -----
    Complexity O(nb) time per state; no allocation beyond the result (none with ``out``).
    The per-call checks are O(1) array attribute reads plus one compiled quaternion check.
    Source: Featherstone, RBDA 2008, Table 7.1; modified form: Ascher, Pai & Cloutier 1997,
    eq. 11.
    """
    d = data if data is not None else model._data.get(dtype)
    ep = hot_entry(_ABA_ENTRY, d, q, qd, tau, f_ext, out)
    if ep is not None:
        # one compiled call checks shapes, layout and quaternions, runs ABA and writes the
        # result into r (a new array costs less than a copy of the workspace's afterwards)
        r = _empty(d.nv, d.dtype) if out is None else out
        if ep(d.model_i, d.model_f, q, qd, tau, d.f_none if f_ext is None else f_ext,
              modified, d.buf, r) == 0:
            return r
    dt, d = workspace(model, dtype, data)
    if is_batch(q):
        return _aba_batch(model, q, qd, tau, f_ext, bool(modified), dt, d, out, threads)
    q, qd = as_state(model, q, qd, dt)
    tau = as_vector(model, tau, "tau", model.nv, dt)
    f = as_f_ext(model, f_ext, d)
    if not aba_kernel(d.model_i, d.model_f, q, qd, tau, f, bool(modified), d.buf, True):
        report_nonfinite(model, d.qdd, d, q=q, qd=qd, tau=tau, f_ext=f)
    return deliver(d.qdd, out)


def _aba_batch(model, Q, QD, TAU, f_ext, modified, dt, d, out, threads):
    """:func:`aba` on a batch: checks, then :func:`aba_batch_kernel` on ``threads`` shares
    of the states (workspaces ``d`` and the model's per-thread ones)."""
    Q = as_batch(model, Q, "q", model.nq, dt)
    B = Q.shape[0]
    QD = as_batch(model, QD, "qd", model.nv, dt, B)
    TAU = as_batch(model, TAU, "tau", model.nv, dt, B)
    check_quaternions(model, Q)
    if f_ext is None:
        F = d.f_none[None]
    elif np.ndim(f_ext) == 2:
        F = check_f_ext(model, f_ext, dt)[None]
    else:
        F = np.asarray(f_ext)
        if F.shape != (B, model.nb, 6):
            raise ValueError(f"f_ext must have shape ({model.nb}, 6) or ({B}, {model.nb}, 6) "
                             f"(one spatial force per body, body coordinates), got {F.shape}")
        F = np.ascontiguousarray(F, dtype=dt)
    out = as_output(out, (B, model.nv), dt)
    n = threads if threads is not None else max(1, min(_cores(), B // 256))
    if int(n) != n or n < 1:
        raise ValueError(f"threads must be a positive integer, got {threads!r}")
    n = min(int(n), max(B, 1))
    cuts = np.linspace(0, B, n + 1).astype(np.int64)
    spaces = [d] + [batch_workspace(model, dt, k) for k in range(1, n)]

    def share(k):
        lo, hi = cuts[k], cuts[k + 1]
        Fk = F if F.shape[0] == 1 else F[lo:hi]
        w = spaces[k]
        bad = aba_batch_kernel(w.model_i, w.model_f, Q[lo:hi], QD[lo:hi], TAU[lo:hi], Fk,
                               modified, w.buf, out[lo:hi])
        return -1 if bad < 0 else lo + bad

    others = [_pool(n - 1).submit(share, k) for k in range(1, n)]
    bads = [share(0)] + [f.result() for f in others]
    bad = min((b for b in bads if b >= 0), default=-1)
    if bad >= 0:
        try:
            report_nonfinite(model, out[bad], d, q=Q[bad], qd=QD[bad], tau=TAU[bad],
                             f_ext=F[0] if F.shape[0] == 1 else F[bad])
        except ValueError as e:
            raise ValueError(f"state {bad} of the batch: {e}") from None
    return out


def _cores():
    """The number of cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


_POOL = [None]


def _pool(n):
    """A thread pool of at least ``n`` workers, kept between batched calls so that a call
    does not start its threads anew (a smaller one left behind is not shut down: a call
    on another thread may still be submitting to it)."""
    pool = _POOL[0]
    if pool is None or pool._max_workers < n:
        pool = _POOL[0] = ThreadPoolExecutor(n, thread_name_prefix="articulated-aba")
    return pool


def batch_workspace(model, dtype, k):
    """The k-th extra workspace (k >= 1) of ``model`` for batched calls' worker threads
    (cached on the model beside :meth:`Model.data`)."""
    key = (np.dtype(dtype), "thread", k)
    w = model._data.get(key)
    if w is None:
        w = model._data[key] = Data(model, dtype)
    return w


def aba_modified(model: Model, q, qd, tau, f_ext=None, *, dtype=np.float64, data=None,
                 out=None, threads=None):
    """Compute forward dynamics by the modified ABA (Ascher, Pai & Cloutier 1997, eq. 11).

    Same as ``aba(..., modified=True)``: parameters, result and errors as :func:`aba`.

    Returns
    -------
    qdd : (nv,) or (B, nv) ndarray of ``dtype``
        Joint accelerations [rad/s^2 | m/s^2].

    References
    ----------
    Ascher, Pai & Cloutier 1997, eq. 11.
    """
    return aba(model, q, qd, tau, f_ext, modified=True, dtype=dtype, data=data, out=out,
               threads=threads)


@njit(**KERNEL)
def _pivots_kernel(
    # model (packed, see ModelArrays)
    model_i, model_f,
    # inputs: configuration, the modified-ABA flag, zero joint forces (nv,)
    q, modified, tau0,
    # data (packed, see Data): writes Xup, Ia_stack, U, D, Dinv, u, UDinv, Dinv_u; the
    # output is D (the pivot of every joint, for every joint type)
    data_f,
):
    """Passes 1 and 2 of :func:`aba_kernel`, inertias only: the pivots ``D`` of every
    joint into ``data.D``, formed by exactly the same operations (the same inlined helpers
    in the same order) as the ABA / modified ABA forward dynamics, so that they are the
    pivots those computations divide by, bit for bit. Velocities do not enter ``IA`` or
    ``D``; the bias terms are left zero."""
    mv = model_arrays(model_i, model_f)
    parent, jtype, qadr, vadr, jnv = mv.parent, mv.jtype, mv.qadr, mv.vadr, mv.jnv
    subtree_end, Xtree_rot, axis, Xtree_E = mv.subtree_end, mv.Xtree_rot, mv.axis, mv.Xtree_E
    Xtree_r, mass, h, Ibar, S, arm = mv.Xtree_r, mv.mass, mv.h, mv.Ibar, mv.S, mv.armature
    nb = parent.shape[0]
    dv = data_arrays(data_f, nb, S.shape[0])
    Xup_E, Xup_r, stack, Ia_stack = dv.Xup_E, dv.Xup_r, dv.stack, dv.Ia_stack
    pa_stack, UDinv, Dinv_u, u, U, D = dv.pa_stack, dv.UDinv, dv.Dinv_u, dv.u, dv.U, dv.D
    Dinv, T, T2 = dv.Dinv, dv.T, dv.T2
    one = S.dtype.type(1)
    z = S.dtype.type(0)
    zero6 = (z, z, z, z, z, z)
    for i in range(nb):
        joint_xup(i, jtype, qadr, Xtree_rot, axis, Xtree_E, Xtree_r, q, Xup_E, Xup_r)
    stack[nb, :] = 0
    top = 0
    for i in range(nb - 1, -1, -1):
        va = vadr[i]
        n = jnv[i]
        I = rigid_inertia(mass[i], get_vec3(h, i), get_mat3(Ibar, i))
        if modified:  # Ascher-Pai-Cloutier eq. 11, as in aba_kernel
            for r in range(n):
                for cc in range(n):
                    D[va + r, cc] = 0
            _add_pivot(I, S, va, n, D)
            k = top
            j = i + 1
            while j < subtree_end[i]:
                k -= 1
                _add_pivot(get_sym6(Ia_stack, k), S, va, n, D)
                j = subtree_end[j]
        row, top = pop_children(i, subtree_end, stack, top)
        IA = sym6_add(I, get_sym6(Ia_stack, row))
        t = jtype[i]
        if (t == JOINT_REVOLUTE or t == JOINT_PRISMATIC) and not modified:
            ai = get_vec3(axis, i)
            angular = t == JOINT_REVOLUTE
            # D = S^T IA S as in _project_1dof
            Ui = sym6_apply_half(IA, ai, angular)
            if angular:
                D[va, 0] = ai[0] * Ui[0] + ai[1] * Ui[1] + ai[2] * Ui[2] + arm[va]
            else:
                D[va, 0] = ai[0] * Ui[3] + ai[1] * Ui[4] + ai[2] * Ui[5] + arm[va]
            Ia, pa, UDinv_i, Dinv_u_i, Dinv_i = _project_1dof(IA, zero6, zero6, ai, angular, z,
                                                              one, arm[va])
        else:
            Ia, pa = _project_ndof(IA, zero6, zero6, S, tau0, va, n,
                                   (U, D, Dinv, u, UDinv, Dinv_u), (T, T2), modified, arm)
        if parent[i] >= 0:
            set_sym6(Ia_stack, top, congruence(get_mat3(Xup_E, i), get_vec3(Xup_r, i), Ia))
            set_vec6(pa_stack, top, zero6)
            top += 1


PIVOT_METHODS = ("aba", "aba_modified", "crba")


def articulated_pivots(model: Model, q, *, method: str = "aba", dtype=np.float64,
                       data=None) -> list:
    """Return the articulated pivots of each joint, as a forward-dynamics method forms them.

    The pivots are ``D_k = H_k M^_k H_k^*`` (Ascher, Pai & Cloutier 1997, sec. 2-4).

    Both CRBA and ABA are block Gaussian eliminations of the same sparse system (their
    eq. 4) and have the same pivots in exact arithmetic: the joint-space articulated
    inertia ``D_k = S_k^T IA_k S_k`` of joint k with everything below it (RBDA eq. 7.40's
    ``D``). In floating point they differ, which is the subject of the paper: CRBA forms
    ``M`` first and loses the light bodies' contribution in ``M_2 + Phi M_1 Phi^*``
    (their eq. 9), ABA loses it in ``M^_k = M_k + M~_k`` when the coordinates are not
    aligned with the joint axes, and the modified ABA (their eq. 11) keeps it. Use this to
    see how well conditioned a forward-dynamics computation is at ``q``: a pivot far from
    its float64 value (or <= 0) means the accelerations of that joint are unreliable.

    Parameters
    ----------
    model : Model
    q : (nq,) float64
        Configuration (the pivots do not depend on velocities or forces).
    method : {"aba", "aba_modified", "crba"}
        ``"aba"``, ``"aba_modified"``: the pivots :func:`aba` (``modified=False/True``)
        divides by, computed by the same operations (bit-identical). ``"crba"``: the
        pivots of the sparse ``L^T D L`` factorization of ``M`` from :func:`crba`
        (RBDA Table 6.3, as in :func:`articulated.crba_forward_dynamics`), gathered per
        joint as ``L_kk^T diag(D_kk) L_kk`` over the joint's own dofs (for a 1-dof joint
        simply the diagonal entry of ``D``).
    dtype : float64 or float32
        Arithmetic precision of the whole computation.
    data : Data, optional
        Workspace of this dtype (its D, U, ... are overwritten).

    Returns
    -------
    D : list of nb ndarrays of ``dtype``, shape (n_k, n_k) with n_k the joint's dofs
        ((0, 0) for a fixed joint) [kg m^2 | kg | kg m]. Our bodies are numbered from the
        base, the paper's from the tip: for a 2-link chain the paper's ``D_2`` (base joint)
        is ``D[0][0, 0]``.

    Raises
    ------
    ValueError
        Unknown method, wrong shape of ``q``, non-unit quaternion.
    TypeError
        Unsupported dtype.

    Notes
    -----
    A singular pivot is returned as is (0, negative or non-finite), not raised.
    Source: Ascher, Pai & Cloutier 1997, eqs. 7, 9, 11 and Table 2; Featherstone, RBDA 2008,
    Tables 6.3 and 7.1.
    """
    if method not in PIVOT_METHODS:
        raise ValueError(f"unknown method {method!r}; expected one of {PIVOT_METHODS}")
    dt = check_dtype(dtype)
    d = data if data is not None else model.data(dt)
    q = as_configuration(model, q, dt)
    if method == "crba":
        from .crba import crba_into, ltdl_factor

        M = np.zeros((model.nv, model.nv), dtype=dt)
        crba_into(d, q, M)
        ltdl_factor(M, model.dof_parent)
        out = []
        for i in range(model.nb):
            va, n = int(model.jnt_vadr[i]), int(model.jnt_nv[i])
            L = np.tril(M[va:va + n, va:va + n], -1) + np.eye(n, dtype=dt)
            out.append((L.T * np.diag(M)[va:va + n]) @ L)
        return out
    _pivots_kernel(d.model_i, d.model_f, q, method == "aba_modified",
                   np.zeros(model.nv, dtype=dt), d.buf)
    return [d.D[int(model.jnt_vadr[i]):int(model.jnt_vadr[i]) + int(model.jnt_nv[i]),
                :int(model.jnt_nv[i])].copy() for i in range(model.nb)]
