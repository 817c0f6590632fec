"""Featherstone's divide-and-conquer algorithm (DCA) in handle form: forward dynamics and
quasi-statics over an assembly tree (:mod:`articulated.assembly`).

Sources: Redon, Galoppo & Lin (2005), "Adaptive dynamics of articulated bodies" (RGL),
Sec. 3.1-3.2, eqs. 1-5 (dynamics with velocity terms); Redon & Lin (2005), "An efficient,
error-bounded approximation algorithm for simulating quasi-statics of complex linkages"
(RL), Sec. 3.1, eqs. 1-7 (quasi-statics, fixed-base root) and Sec. 5.1 (hierarchical frames);
after Featherstone (1999), "A divide-and-conquer articulated-body algorithm for parallel
O(log(n)) calculation of rigid-body dynamics", parts 1-2.

Handle equations
----------------
Every node C of the assembly tree has handles ``H_1 .. H_m`` (the joints through which C
connects to the rest) and the articulated-body equation (RGL eq. 1)
``a_k = sum_l Phi_kl f_l + b_k``: the spatial acceleration ``a_k`` of handle k is affine in
the spatial forces ``f_l`` applied *to C* at its handles. A node joins A (parent side of
its principal joint J) and B (child side) through A's handle ``H_2^A = (J, 0)`` and B's
handle ``H_1^B = (J, 1)``; with the joint relation ``a_1^B - X_J a_2^A = S qdd + S-dot qd``
and ``S^T f = Q`` the coefficients of C follow from A's and B's (RGL eq. 2):

    V = (X_J Phi_2^A X_J^T + Phi_1^B)^-1        beta  = X_J b_2^A - b_1^B + c_J
    W = V - V S (S^T V S)^-1 S^T V              gamma = W beta + V S (S^T V S)^-1 Q

    Phi^C_kl = [k, l same child] Phi_kl - s_k s_l G_k W G_l^T
    b^C_k    = b_k - s_k G_k gamma

with ``G_k = Phi^A_{k,2} X_J^T`` and ``s_k = +1`` for a handle of A, ``G_k = Phi^B_{k,1}``
and ``s_k = -1`` for a handle of B (this is RGL eq. 2 block by block: ``Phi_11^C = Phi_1^A -
Phi_12^A W Phi_21^A``, ``Phi_12^C = Phi_12^A W Phi_12^B``, ``Phi_2^C = Phi_2^B -
Phi_21^B W Phi_12^B``, ``b_1^C = b_1^A - Phi_12^A gamma``, ``b_2^C = b_2^B + Phi_21^B gamma``).
``c_J = v_J x (S qd)`` is the velocity-product (``S-dot q-dot``) term of the joint: ``S`` is
constant in body coordinates, so the relative acceleration of B's handle with respect to A's
handle frame is ``S qdd + v_J x S qd`` (RBDA eq. 7.34). Leaves are rigid bodies (RGL eq. 3):
``Phi_kl = X_k I^-1 X_l^T``, ``b_k = X_k I^-1 (f_ext - v x* I v)``.

The back-substitution pass receives the forces ``f_k`` at C's handles from C's parent and
computes (RGL eqs. 4-5)

    x   = sum_k s_k G_k^T f_k + beta = Phi_21^A f_1^A - Phi_12^B f_2^B + beta
    qdd = (S^T V S)^-1 (Q - S^T V x)                                   (eq. 4)
    f   = V (x + S qdd) = W x + V S (S^T V S)^-1 Q      (= f_1^B = -X_J f_2^A, eq. 5)

so ``f`` is the spatial force transmitted across J to its child body, which is what RNEA
leaves in ``Data.f``. A root node relates a component to the world: its A is the world
(``Phi^A = 0``) whose handle accelerates with ``-g`` (gravity folded into the root bias,
RGL Sec. 3.2 / RL eq. 6-7 with ``b_1^B - a_g``), so a fixed base (any root joint type,
``fixed`` included) and a floating base (a ``free`` root joint) are the same formulas; for a
free joint (``S = 1_6``) ``W = 0``, ``gamma = Q`` and ``qdd = (V^-1) Q - x`` exactly. A
``fixed`` joint (``d_J = 0``) is a weld: ``W = V``, ``gamma = W beta``.

Frames
------
Every handle quantity (``a_k``, ``f_k``, ``b_k``, the rows and columns of ``Phi_kl``) is
expressed in its handle's *aligned* frame (:mod:`articulated.algorithms.handles`), where the
motion subspace is a set of coordinate axes and the only configuration-dependent transform
a node uses is its principal joint transform ``X_J(q_J)``: the leaf coefficients ``Phi``
are constant, and a change of q_J changes only J's node and its ancestors (RL Sec. 5.2).

Block elimination in the aligned frame
--------------------------------------
With the coordinates split into the constrained ones F and the joint ones (``S = [0; 1]``)
and ``K = V^-1 = X_J Phi_2^A X_J^T + Phi_1^B``, the block-inverse identities give
``W = [K_FF^-1, 0; 0, 0]`` and ``V S (S^T V S)^-1 = [-K_FF^-1 K_FJ; 1]``. So a node needs
only a factor of ``K_FF`` (5 x 5 for 1-dof joints, no square roots) and the joint rows of
K: ``G_k W G_l^T = Z_k D^-1 Z_l^T`` with ``Z_k = G_k[:, F] L^-T``; ``gamma_F =
K_FF^-1 (beta_F - K_FJ Q)``, ``gamma_J = Q``; back-substitution ``f_J = Q``,
``f_F = K_FF^-1 (x_F - K_FJ Q)``, ``qdd = K_JF f_F + K_JJ Q - x_J`` (the rows of
``K f = x + S qdd``, equivalent to eqs. 4-5). This is exact algebra on RGL eqs. 2, 4, 5,
not an approximation; it avoids forming V, W and ``(S^T V S)^-1``.

Units: SI; accelerations [rad/s^2, m/s^2], forces [N m, N], ``Phi`` [1/(kg m^2), 1/(kg m),
1/kg].

Gravity: like :func:`articulated.aba`, the base accelerates with ``-g``, so the body
accelerations of :meth:`DCA.body_accelerations` include ``-g`` (they equal ABA's
``Data.a``); joint accelerations and forces are the physical ones.
"""

from __future__ import annotations

import math

from numba import njit

from ..config import KERNEL
from ..spatial import get_vec6, xform_force_T_at
from .blocks import (_bmv, _child_slot, _chol, _chol5_perm, _chol_solve, _copy_block, _ctv,
                     _fwd_rows, _hand_down, _off, _oidx, _outer_acc, _outer_sym, _pair5,
                     _pair5_sym, _solve5, _symv, _xj_cols_add, _xj_motion, _xj_rows,
                     _xj_rows_T, _zrows5)
from .bundles import DCAData, DCAInputs, DCAModel, DCAScratch, Kinematics
from .handles import _dca_kinematics, _leaf_bias


@njit(**KERNEL)
def _dca_main_pass(m, inp, sc, d):
    """Main pass (bottom-up, post-order): leaf biases (RGL eq. 3) and node coefficients
    (RGL eq. 2) in aligned handle frames.

    In the aligned frame of joint J the motion subspace is ``S = [0; 1_d]`` after the
    permutation ``perm[J]`` (free coordinates F first, joint coordinates after), so with
    ``K = V^-1 = X_J Phi_2^A X_J^T + Phi_1^B`` the block-inverse identities give
    ``W = [K_FF^-1, 0; 0, 0]`` and ``V S (S^T V S)^-1 = [-K_FF^-1 K_FJ; 1]``: only the
    Cholesky factor ``L`` of ``K_FF`` and the joint rows ``Kj`` of K are needed (no V, no
    ``S^T V S``), ``G_k W G_l^T = Z_k Z_l^T`` with ``Z_k = G_k[:, F] L^-T``, and
    ``gamma_F = K_FF^-1 (beta_F - K_FJ Q)``, ``gamma_J = Q``.

    Storage: off-diagonal blocks of every node in ``Po`` (kept: the back-substitution needs
    them; leaf ones are constant). Diagonal blocks and biases are needed only by the
    parent, so internal nodes keep them on a stack of pending subassemblies (post-order
    is a stack discipline: a node's children are the top two entries): entry e has its
    biases at ``Bst[e hmax + k]`` and its diagonal blocks at ``Pd[st_base[e] + k]``, which
    is the constant leaf storage for a leaf and ``n_leaf_diag + e hmax`` for an internal
    node. Scratch: Z (hmax + 2, 6, 6) (0: K, 1: C_k, 2..: Z_k), Ds (6, 6). A block
    ``C_k = Phi^B_{1k}`` stored untransposed is read in place, and the principal joint
    transform is applied in its revolute / prismatic closed form (:func:`_xj_motion`).
    Profile and operation counts: docs/dca.md, "Profile".
    """
    jtype, jnv, vadr, mass, h, Ibar = m.jtype, m.jnv, m.vadr, m.mass, m.h, m.Ibar
    gravity, Iinv, H_E, H_r, perm, nfree = m.gravity, m.Iinv, m.H_E, m.H_r, m.perm, m.nfree
    node_A, node_B, node_joint, node_body = m.node_A, m.node_B, m.node_joint, m.node_body
    node_nh, node_hoff, node_ca, node_cb = m.node_nh, m.node_hoff, m.node_ca, m.node_cb
    handle_x, node_doff, node_ooff = m.handle_x, m.node_doff, m.node_ooff
    n_leaf_diag, hmax = m.n_leaf_diag, m.hmax
    XJ_E, XJ_r, v, c_al, b_world = d.kin.XJ_E, d.kin.XJ_r, d.kin.v, d.kin.c_al, d.kin.b_world
    tau, f_ext, quasi_static = inp.tau, inp.f_ext, inp.quasi_static
    Z, Ds, st_base = sc.Z, sc.Ds, sc.st_base
    z, Pd, Po, Bst, Kj, L, Ld, beta = d.z, d.Pd, d.Po, d.Bst, d.Kj, d.L, d.Ld, d.beta
    gamma = d.gamma
    z0 = gravity[0] * 0
    sp = 0
    for i in range(node_A.shape[0]):
        J = node_joint[i]
        if J < 0:
            _leaf_bias(node_body[i], i, mass, h, Ibar, Iinv, H_E, H_r, node_nh, node_hoff,
                       handle_x, v, f_ext, quasi_static, z, Bst, sp * hmax)
            st_base[sp] = node_doff[i]
            sp += 1
            continue
        A = node_A[i]
        B = node_B[i]
        ca = node_ca[i]
        cb = node_cb[i]
        nhB = node_nh[B]
        ooB = node_ooff[B]
        eB = sp - 1
        dB = st_base[eB]
        bB = eB * hmax
        if A >= 0:
            nhA = node_nh[A]
            ooA = node_ooff[A]
            eA = sp - 2
            dA = st_base[eA]
            bA = eA * hmax
            nAo = nhA - 1                      # C's handles that come from A
            eC = eA
        else:
            nhA = 0
            ooA = 0
            eA = -1
            dA = 0
            bA = 0
            nAo = 0
            eC = eB
        nC = node_nh[i]
        dC = n_leaf_diag + eC * hmax
        bC = eC * hmax
        jt = jtype[J]
        nf = nfree[J]
        d = jnv[J]
        va = vadr[J]
        # ---- K = X Phi_2^A X^T + Phi_1^B (symmetric), in Z[0]
        if A >= 0:
            _xj_rows(jt, XJ_E, XJ_r, J, Pd, dA + ca, Z, 0)
            _xj_cols_add(jt, XJ_E, XJ_r, J, Z, 0, Pd, dB + cb)
        else:
            for a in range(6):
                for b in range(6):
                    Z[0, a, b] = Pd[dB + cb, a, b]
        for r in range(d):
            pr = perm[J, nf + r]
            for a in range(6):
                Kj[va + r, a] = Z[0, pr, a]
        # ---- Cholesky of K_FF
        if nf == 5:
            _chol5_perm(Z, 0, perm, J, L, Ld)
        elif nf > 0:
            for a in range(nf):
                pa = perm[J, a]
                for b in range(a + 1):
                    Z[1, a, b] = Z[0, pa, perm[J, b]]
            _chol(Z, 1, nf, L, Ld, J)
        # ---- beta = X b_2^A - b_1^B + c_J (A = world: its handle accelerates with a_0)
        s1 = bB + cb
        if A >= 0:
            s2 = bA + ca
            x = _xj_motion(jt, XJ_E, XJ_r, J, get_vec6(Bst, s2))
        else:
            x = (b_world[J, 0], b_world[J, 1], b_world[J, 2], b_world[J, 3], b_world[J, 4],
                 b_world[J, 5])
        for k in range(6):
            t = x[k] - Bst[s1, k]
            if not quasi_static:
                t += c_al[J, k]
            beta[J, k] = t
        # ---- gamma_F = K_FF^-1 (beta_F - K_FJ Q), gamma_J = Q
        for r in range(d):
            gamma[J, perm[J, nf + r]] = tau[va + r]
        if nf == 5:
            pj = perm[J, 5]
            qj = tau[va]
            p0, p1, p2, p3, p4 = perm[J, 0], perm[J, 1], perm[J, 2], perm[J, 3], perm[J, 4]
            g = _solve5(L, Ld, J, beta[J, p0] - Z[0, p0, pj] * qj,
                        beta[J, p1] - Z[0, p1, pj] * qj, beta[J, p2] - Z[0, p2, pj] * qj,
                        beta[J, p3] - Z[0, p3, pj] * qj, beta[J, p4] - Z[0, p4, pj] * qj)
            gamma[J, p0] = g[0]
            gamma[J, p1] = g[1]
            gamma[J, p2] = g[2]
            gamma[J, p3] = g[3]
            gamma[J, p4] = g[4]
        elif nf > 0:
            for a in range(nf):
                pa = perm[J, a]
                s = beta[J, pa]
                for r in range(d):
                    s -= Z[0, pa, perm[J, nf + r]] * tau[va + r]
                Ds[0, a] = s
            _chol_solve(L, Ld, J, nf, Ds, 0)
            for a in range(nf):
                gamma[J, perm[J, a]] = Ds[0, a]
        if nC == 0:
            sp = eC
            continue
        # ---- for each handle k of C, with C_k = G_k^T (in Z[1]):
        # b^C_k = b_k - s_k C_k^T gamma and Z_k^T = L^-1 C_k[F, :] (in Z[2 + k])
        for k in range(nC):
            fromA, kk = _child_slot(k, nAo, ca, cb)
            if fromA:
                src = bA + kk
                ob, tr = _off(ooA, nhA, ca, kk)
                if tr:
                    _xj_rows_T(jt, XJ_E, XJ_r, J, Po, ob, Z, 1)   # C_k = X Phi^A_{2,k}
                else:
                    _xj_rows(jt, XJ_E, XJ_r, J, Po, ob, Z, 1)
                Ck, ck = Z, 1
                sg = 1
            else:
                src = bB + kk
                ob, tr = _off(ooB, nhB, cb, kk)
                if tr:
                    _copy_block(Po, ob, tr, Z, 1)              # C_k = Phi^B_{1,k}
                    Ck, ck = Z, 1
                else:
                    Ck, ck = Po, ob                            # read in place
                sg = -1
            t = _ctv(Ck, ck, gamma, J)
            dst = bC + k
            for m in range(6):
                Bst[dst, m] = Bst[src, m] - sg * t[m]
            if nf == 5:
                _zrows5(L, Ld, J, perm, Ck, ck, Z, 2 + k)
            elif nf > 0:
                zk = 2 + k
                for a in range(nf):
                    pa = perm[J, a]
                    for m in range(6):
                        Z[zk, a, m] = Ck[ck, pa, m]
                _fwd_rows(L, Ld, J, nf, Z, zk)
        # ---- Phi^C_kl = [same child] Phi_kl - s_k s_l Z_k Z_l^T: diagonal blocks to the
        # stack entry eC (in increasing k: they overwrite only A's blocks already used),
        # off-diagonal ones to Po
        oC = node_ooff[i]
        for k in range(nC):
            fromA_k, kk = _child_slot(k, nAo, ca, cb)
            if fromA_k:
                dsrc = dA + kk
                oox = ooA
                nhx = nhA
            else:
                dsrc = dB + kk
                oox = ooB
                nhx = nhB
            # diagonal block (k, k)
            if nf == 5:
                _pair5_sym(Z, 2 + k, Ld, J, Pd, dsrc, Pd, dC + k)
            else:
                _copy_block(Pd, dsrc, False, Pd, dC + k)
                if nf > 0:
                    _outer_sym(Z, 2 + k, nf, Pd, dC + k)
            for l in range(k + 1, nC):
                fromA_l = l < nAo
                bo = oC + _oidx(nC, k, l)
                same = fromA_k == fromA_l
                if same:
                    _, ll = _child_slot(l, nAo, ca, cb)
                    ob, tr = _off(oox, nhx, kk, ll)
                else:
                    ob = 0
                    tr = False
                if nf == 5:
                    _pair5(Z, 2 + k, 2 + l, Ld, J, Po, ob, tr, same, -1 if same else 1, Po, bo)
                else:
                    if same:
                        _copy_block(Po, ob, tr, Po, bo)
                    else:
                        for a in range(6):
                            for b in range(6):
                                Po[bo, a, b] = z0
                    if nf > 0:
                        _outer_acc(Z, 2 + k, 2 + l, nf, Po, bo, -1 if same else 1)
        st_base[eC] = dC
        sp = eC + 1


@njit(**KERNEL)
def _dca_back_pass(m, inp, sc, d):
    """Back-substitution pass (top-down, reverse post-order): joint accelerations (RGL
    eq. 4) and joint constraint forces (RGL eq. 5); the forces on every node's handles go
    to ``fh`` for its children. In the aligned frame (see :func:`_dca_main_pass`):
    ``f_J = Q``, ``f_F = K_FF^-1 (x_F - K_FJ Q)`` and ``qdd = K_JF f_F + K_JJ Q - x_J``
    (the rows of ``K f = x + S qdd``). ``f_al``: f in the aligned frame of (J, 1);
    ``f_out``: in body-J coordinates."""
    jtype, jnv, vadr, H_E, perm, nfree = m.jtype, m.jnv, m.vadr, m.H_E, m.perm, m.nfree
    node_A = m.node_A
    node_B, node_joint, node_nh, node_hoff = m.node_B, m.node_joint, m.node_nh, m.node_hoff
    node_ooff, node_ca, node_cb = m.node_ooff, m.node_ca, m.node_cb
    XJ_E, XJ_r = d.kin.XJ_E, d.kin.XJ_r
    Po, Kj, L, Ld, beta, fh, f_al = d.Po, d.Kj, d.L, d.Ld, d.beta, d.fh, d.f_al
    f_out, qdd_out = d.f, d.qdd
    tau = inp.tau
    Ds = sc.Ds
    for i in range(node_A.shape[0] - 1, -1, -1):
        J = node_joint[i]
        if J < 0:
            continue
        A = node_A[i]
        B = node_B[i]
        ca = node_ca[i]
        cb = node_cb[i]
        nhB = node_nh[B]
        ooB = node_ooff[B]
        if A >= 0:
            nhA = node_nh[A]
            ooA = node_ooff[A]
            nAo = nhA - 1
        else:
            nhA = 0
            ooA = 0
            nAo = 0
        nC = node_nh[i]
        ho = node_hoff[i]
        # x = beta + sum_k s_k G_k^T f_k = beta + X sum_{k in A} Phi^A_{2k} f_k
        #                                        - sum_{k in B} Phi^B_{1k} f_k
        x0, x1, x2 = beta[J, 0], beta[J, 1], beta[J, 2]
        x3, x4, x5 = beta[J, 3], beta[J, 4], beta[J, 5]
        if nAo > 0:
            a0 = a1 = a2 = a3 = a4 = a5 = 0 * x0
            for k in range(nAo):
                _, kk = _child_slot(k, nAo, ca, cb)
                ob, tr = _off(ooA, nhA, ca, kk)
                y = _bmv(Po, ob, tr, fh, ho + k)
                a0 += y[0]
                a1 += y[1]
                a2 += y[2]
                a3 += y[3]
                a4 += y[4]
                a5 += y[5]
            t = _xj_motion(jtype[J], XJ_E, XJ_r, J, (a0, a1, a2, a3, a4, a5))
            x0 += t[0]
            x1 += t[1]
            x2 += t[2]
            x3 += t[3]
            x4 += t[4]
            x5 += t[5]
        for k in range(nAo, nC):
            _, kk = _child_slot(k, nAo, ca, cb)
            ob, tr = _off(ooB, nhB, cb, kk)
            y = _bmv(Po, ob, tr, fh, ho + k)
            x0 -= y[0]
            x1 -= y[1]
            x2 -= y[2]
            x3 -= y[3]
            x4 -= y[4]
            x5 -= y[5]
        Ds[1, 0] = x0
        Ds[1, 1] = x1
        Ds[1, 2] = x2
        Ds[1, 3] = x3
        Ds[1, 4] = x4
        Ds[1, 5] = x5
        # f_J = Q, f_F = K_FF^-1 (x_F - K_FJ Q) (eq. 5); qdd = K_JF f_F + K_JJ Q - x_J (eq. 4)
        d = jnv[J]
        va = vadr[J]
        nf = nfree[J]
        for r in range(d):
            f_al[J, perm[J, nf + r]] = tau[va + r]
        if nf == 5:
            qj = tau[va]
            p0, p1, p2, p3, p4 = perm[J, 0], perm[J, 1], perm[J, 2], perm[J, 3], perm[J, 4]
            g = _solve5(L, Ld, J, Ds[1, p0] - Kj[va, p0] * qj,
                        Ds[1, p1] - Kj[va, p1] * qj, Ds[1, p2] - Kj[va, p2] * qj,
                        Ds[1, p3] - Kj[va, p3] * qj, Ds[1, p4] - Kj[va, p4] * qj)
            f_al[J, p0] = g[0]
            f_al[J, p1] = g[1]
            f_al[J, p2] = g[2]
            f_al[J, p3] = g[3]
            f_al[J, p4] = g[4]
        elif nf > 0:
            for a in range(nf):
                pa = perm[J, a]
                s = Ds[1, pa]
                for r in range(d):
                    s -= Kj[va + r, pa] * tau[va + r]
                Ds[0, a] = s
            _chol_solve(L, Ld, J, nf, Ds, 0)
            for a in range(nf):
                f_al[J, perm[J, a]] = Ds[0, a]
        for r in range(d):
            s = -Ds[1, perm[J, nf + r]]
            for a in range(6):
                s += Kj[va + r, a] * f_al[J, a]
            qdd_out[va + r] = s
        # f in body-J coordinates: R^T f_al
        hb = 2 * J + 1
        for a in range(3):
            f_out[J, a] = (H_E[hb, 0, a] * f_al[J, 0] + H_E[hb, 1, a] * f_al[J, 1]
                           + H_E[hb, 2, a] * f_al[J, 2])
            f_out[J, 3 + a] = (H_E[hb, 0, a] * f_al[J, 3] + H_E[hb, 1, a] * f_al[J, 4]
                               + H_E[hb, 2, a] * f_al[J, 5])
        # forces on the children's handles: f on B's (J, 1), -X_J^T f on A's (J, 0)
        _hand_down(fh, ho, nAo, get_vec6(f_al, J), (jtype[J], XJ_E, XJ_r), J, A, ca, cb,
                   node_hoff[A] if A >= 0 else 0, nhA, node_hoff[B], nhB)

@njit(**KERNEL)
def dca_body_acc(m, d, a_out):
    """Body accelerations from the leaves' handle forces: ``a = I^-1 sum_k X_k^T f_k + z``
    (body coordinates; includes the base acceleration ``-g`` like ABA's ``Data.a``)."""
    node_body, node_nh, node_hoff, handle_x = m.node_body, m.node_nh, m.node_hoff, m.handle_x
    H_E, H_r, Iinv = m.H_E, m.H_r, m.Iinv
    z, fh = d.z, d.fh
    for i in range(node_body.shape[0]):
        b = node_body[i]
        if b < 0:
            continue
        y0 = y1 = y2 = y3 = y4 = y5 = 0 * z[b, 0]
        o = node_hoff[i]
        for k in range(node_nh[i]):
            s = o + k
            g = xform_force_T_at(H_E, H_r, handle_x[s], get_vec6(fh, s))
            y0 += g[0]
            y1 += g[1]
            y2 += g[2]
            y3 += g[3]
            y4 += g[4]
            y5 += g[5]
        t = _symv(Iinv, b, y0, y1, y2, y3, y4, y5)
        for k in range(6):
            a_out[b, k] = z[b, k] + t[k]


@njit(**KERNEL)
def dca_kernel(m, inp, sc, d):
    """One DCA forward-dynamics evaluation (bundles of :mod:`articulated.algorithms.bundles`:
    ``m`` a ``DCAModel``, ``inp`` ``DCAInputs``, ``sc`` ``DCAScratch``, ``d`` the ``DCAData``
    written; results in ``d.qdd`` and ``d.f``): kinematics, main pass (RGL eqs. 2-3),
    back-substitution (RGL eqs. 4-5)."""
    _dca_kinematics(m, inp, d.kin)
    _dca_main_pass(m, inp, sc, d)
    _dca_back_pass(m, inp, sc, d)


@njit(**KERNEL)
def dca_call(m, inp, sc, d):
    """:func:`dca_kernel` for callers in Python: the same bundles as plain tuples (their
    fields in order, ``d[0]`` the :class:`~articulated.algorithms.bundles.Kinematics`),
    rebuilt as named tuples inside. Numba types a plain tuple of arrays at a call from
    Python about 5 times faster than a named tuple (its fields are typed one by one in
    Python), which was about 10 us of every call (docs/dca.md, "Profile"). Returns whether
    every joint acceleration is finite (the caller reports a non-finite one)."""
    dca_kernel(DCAModel(*m), DCAInputs(*inp), DCAScratch(*sc),
               DCAData(Kinematics(*d[0]), *d[1:]))
    qdd = d[-1]
    ok = True
    for k in range(qdd.shape[0]):
        if not math.isfinite(qdd[k]):
            ok = False
    return ok


@njit(**KERNEL)
def dca_pass_loop(phase, n, m, inp, sc, d):
    """``n`` runs of one pass of :func:`dca_kernel` in one compiled call, for profiles that
    leave the call overhead out (``articulated bench dca``): phase 0 the kinematics, 1 the
    main pass, 2 the back-substitution."""
    for _ in range(n):
        if phase == 0:
            _dca_kinematics(m, inp, d.kin)
        elif phase == 1:
            _dca_main_pass(m, inp, sc, d)
        else:
            _dca_back_pass(m, inp, sc, d)
