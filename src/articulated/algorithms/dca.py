"""Featherstone's divide-and-conquer algorithm (DCA) in handle form.

Featherstone's divide-and-conquer algorithm (DCA) in handle form: forward dynamics and
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

from ..config import inline, KERNEL
from ..spatial import get_vec6, xform_force_T_at, xform_motion
from .blocks import (_bmv, _child_slot, _chol_at, _chol5_perm_at, _chol_solve_at, _copy_block,
                     _ctv_at, _fwd_rows_at, _hand_down, _off, _oidx, _outer_acc, _outer_sym,
                     _pair5_at, _pair5_sym_at, _solve5_at, _symv, _xj_congruence_add,
                     _xj_motion, _xj_rows, _xj_rows_T, _zrows5_at)
from .bundles import DCAData, DCAInputs, DCAModel, DCAScratch, Kinematics
from .handles import _body_bias, _dca_kinematics


# ---- packed node records
# columns of the int record ``node_rec`` (nn, N_NR) of every node, in post-order
NR_PERM = 0
"""Columns 0..5: ``perm[J]``, the aligned coordinates of the node's joint, free ones first."""
NR_J = 6
"""The node's principal joint J (-1: a leaf)."""
NR_BODY = 7
"""The body of a leaf (-1: an internal node)."""
NR_NH = 8
"""The node's handle count."""
NR_HOFF = 9
"""The node's first handle slot."""
NR_OOFF = 10
"""The node's first off-diagonal block in ``Po``."""
NR_DOFF = 11
"""A leaf's first diagonal block in ``Pd``."""
NR_A = 12
"""Child A (-1: the world of a root node)."""
NR_CA = 13
"""The handle of A that J consumes."""
NR_CB = 14
"""The handle of B that J consumes."""
NR_NHA = 15
"""A's handle count (0 for the world)."""
NR_OOA = 16
"""A's first off-diagonal block."""
NR_HA = 17
"""A's first handle slot."""
NR_NHB = 18
"""B's handle count."""
NR_OOB = 19
"""B's first off-diagonal block."""
NR_HB = 20
"""B's first handle slot."""
NR_JT = 21
"""J's joint type."""
NR_NF = 22
"""J's free (constrained) coordinate count ``nfree[J]``."""
NR_NV = 23
"""J's dof count."""
NR_VA = 24
"""J's first dof."""
N_NR = 25
"""Width of ``node_rec``."""
# columns of the float record ``rec`` (n_internal, N_REC + 6 dmax) of every internal node,
# by its rank in post-order
REC_BETA = 0
"""``beta`` (RGL eq. 2), aligned frame of (J, 1)."""
REC_GAMMA = 6
"""``gamma`` (RGL eq. 2)."""
REC_FAL = 12
"""The joint force ``f`` across J (RGL eq. 5), aligned frame of (J, 1)."""
REC_LD = 18
"""The inverse diagonal of the factor of ``K_FF`` (``1 / D`` for 5 free coordinates)."""
REC_L = 24
"""The strictly lower triangle of the factor of ``K_FF``, row by row (15 entries)."""
REC_KJ = 39
"""The joint rows ``Kj`` of K, dof r at ``REC_KJ + 6 r``."""
N_REC = 39
"""Width of ``rec`` without the joint rows."""
# columns of the constant float record ``leaf_rec`` (n_leaves, LEAF_X + 12 hmax) of every
# leaf, by its rank among the leaves in post-order
LEAF_IINV = 0
"""Columns 0..20: the inverse spatial inertia ``I^-1``, upper triangle row by row."""
LEAF_M = 21
"""The body's mass [kg]."""
LEAF_H = 22
"""Columns 22..24: its first moment ``h`` [kg m], body coordinates."""
LEAF_IBAR = 25
"""Columns 25..33: its rotational inertia about the body origin, row-major [kg m^2]."""
LEAF_X = 34
"""From here, per handle k: the compact transform ``(E, r)`` (12 numbers, E row-major)
from body coordinates to the handle's frame."""


@inline
def _leaf_bias_rec(LR, lk, b, nh, v, f_ext, quasi_static, z, bh, bo):
    """The leaf biases of :func:`~articulated.algorithms.handles._leaf_bias` (RGL eq. 3:
    ``z = I^-1 (f_ext - v x* I v)``, ``b_k = X_k z`` into ``bh[bo + k]``) from the leaf's
    record ``LR[lk]`` (columns ``LEAF_*``)."""
    y = _body_bias(LR[lk, LEAF_M], LR[lk, LEAF_H], LR[lk, LEAF_H + 1], LR[lk, LEAF_H + 2],
                   (LR[lk, LEAF_IBAR], LR[lk, LEAF_IBAR + 1], LR[lk, LEAF_IBAR + 2],
                    LR[lk, LEAF_IBAR + 3], LR[lk, LEAF_IBAR + 4], LR[lk, LEAF_IBAR + 5],
                    LR[lk, LEAF_IBAR + 6], LR[lk, LEAF_IBAR + 7], LR[lk, LEAF_IBAR + 8]),
                   b, v, f_ext, quasi_static)
    zz = _symv(LR, lk, y[0], y[1], y[2], y[3], y[4], y[5])     # LEAF_IINV = 0
    for k in range(6):
        z[b, k] = zz[k]
    for k in range(nh):
        o = LEAF_X + 12 * k
        x = xform_motion((LR[lk, o], LR[lk, o + 1], LR[lk, o + 2], LR[lk, o + 3],
                          LR[lk, o + 4], LR[lk, o + 5], LR[lk, o + 6], LR[lk, o + 7],
                          LR[lk, o + 8]), (LR[lk, o + 9], LR[lk, o + 10], LR[lk, o + 11]), zz)
        for a in range(6):
            bh[bo + k, a] = x[a]


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

    Storage: every node's indices in one record ``node_rec[i]`` (columns ``NR_*``), every
    internal node's coefficients (beta, gamma, the factor of ``K_FF``, ``Kj``) in one
    record ``rec[r]`` (columns ``REC_*``; r its rank among the internal nodes in
    post-order), so that this pass and the back-substitution stream both.
    Off-diagonal blocks of every node in ``Po`` (kept: the back-substitution needs
    them; leaf ones are constant). Diagonal blocks and biases are needed only by the
    parent, so internal nodes keep them on a stack of pending subassemblies (post-order
    is a stack discipline: a node's children are the top two entries): entry e has its
    biases at ``Bst[e hmax + k]`` and its diagonal blocks at ``Pd[st_base[e] + k]``, which
    is the constant leaf storage for a leaf and ``n_leaf_diag + e hmax`` for an internal
    node. Scratch: Z (hmax + 2, 6, 6) (0: K, 1: C_k, 2..: Z_k), Ds (6, 6). A block
    ``C_k = Phi^B_{1k}`` stored untransposed is read in place, and the principal joint
    transform is applied in its revolute / prismatic closed form (:func:`_xj_motion`).
    """
    nr, LR, n_leaf_diag, hmax = m.node_rec, m.leaf_rec, m.n_leaf_diag, m.hmax
    XJ_E, XJ_r, v, c_al, b_world = d.kin.XJ_E, d.kin.XJ_r, d.kin.v, d.kin.c_al, d.kin.b_world
    tau, f_ext, quasi_static = inp.tau, inp.f_ext, inp.quasi_static
    Z, Ds, st_base = sc.Z, sc.Ds, sc.st_base
    z, Pd, Po, Bst, R = d.z, d.Pd, d.Po, d.Bst, d.rec
    z0 = R[0, 0] * 0
    sp = 0
    rk = 0
    lk = 0
    for i in range(nr.shape[0]):
        J = nr[i, NR_J]
        if J < 0:
            _leaf_bias_rec(LR, lk, nr[i, NR_BODY], nr[i, NR_NH], v, f_ext, quasi_static, z,
                           Bst, sp * hmax)
            lk += 1
            st_base[sp] = nr[i, NR_DOFF]
            sp += 1
            continue
        r = rk
        rk += 1
        A = nr[i, NR_A]
        ca = nr[i, NR_CA]
        cb = nr[i, NR_CB]
        nhA = nr[i, NR_NHA]
        ooA = nr[i, NR_OOA]
        nhB = nr[i, NR_NHB]
        ooB = nr[i, NR_OOB]
        eB = sp - 1
        dB = st_base[eB]
        bB = eB * hmax
        if A >= 0:
            eA = sp - 2
            dA = st_base[eA]
            bA = eA * hmax
            nAo = nhA - 1                      # C's handles that come from A
            eC = eA
        else:
            eA = -1
            dA = 0
            bA = 0
            nAo = 0
            eC = eB
        nC = nr[i, NR_NH]
        dC = n_leaf_diag + eC * hmax
        bC = eC * hmax
        jt = nr[i, NR_JT]
        nf = nr[i, NR_NF]
        d = nr[i, NR_NV]
        va = nr[i, NR_VA]
        # ---- K = X Phi_2^A X^T + Phi_1^B (symmetric), in Z[0]
        if A >= 0:
            _xj_congruence_add(jt, XJ_E, XJ_r, J, Pd, dA + ca, Pd, dB + cb, Z, 0)
        else:
            for a in range(6):
                for b in range(6):
                    Z[0, a, b] = Pd[dB + cb, a, b]
        for t in range(d):
            pr = nr[i, nf + t]
            for a in range(6):
                R[r, REC_KJ + 6 * t + a] = Z[0, pr, a]
        # ---- factor of K_FF
        if nf == 5:
            _chol5_perm_at(Z, 0, nr, i, R, r, REC_L, R, r, REC_LD)
        elif nf > 0:
            for a in range(nf):
                pa = nr[i, a]
                for b in range(a + 1):
                    Z[1, a, b] = Z[0, pa, nr[i, b]]
            _chol_at(Z, 1, nf, R, r, REC_L, R, r, REC_LD)
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
            R[r, REC_BETA + k] = t
        # ---- gamma_F = K_FF^-1 (beta_F - K_FJ Q), gamma_J = Q
        for t in range(d):
            R[r, REC_GAMMA + nr[i, nf + t]] = tau[va + t]
        if nf == 5:
            pj = nr[i, 5]
            qj = tau[va]
            p0, p1, p2, p3, p4 = nr[i, 0], nr[i, 1], nr[i, 2], nr[i, 3], nr[i, 4]
            g = _solve5_at(R, r, REC_L, R, r, REC_LD,
                           R[r, REC_BETA + p0] - Z[0, p0, pj] * qj,
                           R[r, REC_BETA + p1] - Z[0, p1, pj] * qj,
                           R[r, REC_BETA + p2] - Z[0, p2, pj] * qj,
                           R[r, REC_BETA + p3] - Z[0, p3, pj] * qj,
                           R[r, REC_BETA + p4] - Z[0, p4, pj] * qj)
            R[r, REC_GAMMA + p0] = g[0]
            R[r, REC_GAMMA + p1] = g[1]
            R[r, REC_GAMMA + p2] = g[2]
            R[r, REC_GAMMA + p3] = g[3]
            R[r, REC_GAMMA + p4] = g[4]
        elif nf > 0:
            for a in range(nf):
                pa = nr[i, a]
                s = R[r, REC_BETA + pa]
                for t in range(d):
                    s -= Z[0, pa, nr[i, nf + t]] * tau[va + t]
                Ds[0, a] = s
            _chol_solve_at(R, r, REC_L, R, r, REC_LD, nf, Ds, 0)
            for a in range(nf):
                R[r, REC_GAMMA + nr[i, a]] = Ds[0, a]
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
            t = _ctv_at(Ck, ck, R, r, REC_GAMMA)
            dst = bC + k
            for a in range(6):
                Bst[dst, a] = Bst[src, a] - sg * t[a]
            if nf == 5:
                _zrows5_at(R, r, REC_L, nr, i, Ck, ck, Z, 2 + k)
            elif nf > 0:
                zk = 2 + k
                for a in range(nf):
                    pa = nr[i, a]
                    for b in range(6):
                        Z[zk, a, b] = Ck[ck, pa, b]
                _fwd_rows_at(R, r, REC_L, R, r, REC_LD, nf, Z, zk)
        # ---- Phi^C_kl = [same child] Phi_kl - s_k s_l Z_k Z_l^T: diagonal blocks to the
        # stack entry eC (in increasing k: they overwrite only A's blocks already used),
        # off-diagonal ones to Po
        oC = nr[i, NR_OOFF]
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
                _pair5_sym_at(Z, 2 + k, R, r, REC_LD, Pd, dsrc, Pd, dC + k)
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
                    _pair5_at(Z, 2 + k, 2 + l, (R, r, REC_LD), Po, ob, tr, same,
                              -1 if same else 1, Po, bo)
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
    (the rows of ``K f = x + S qdd``). f in the aligned frame of (J, 1) goes to the node's
    record (``REC_FAL``), in body-J coordinates to ``f_out``."""
    H_E, nr = m.H_E, m.node_rec
    XJ_E, XJ_r = d.kin.XJ_E, d.kin.XJ_r
    Po, R, fh = d.Po, d.rec, d.fh
    f_out, qdd_out = d.f, d.qdd
    tau = inp.tau
    Ds = sc.Ds
    rk = R.shape[0]
    for i in range(nr.shape[0] - 1, -1, -1):
        J = nr[i, NR_J]
        if J < 0:
            continue
        rk -= 1
        r = rk
        A = nr[i, NR_A]
        ca = nr[i, NR_CA]
        cb = nr[i, NR_CB]
        nhA = nr[i, NR_NHA]
        ooA = nr[i, NR_OOA]
        nhB = nr[i, NR_NHB]
        ooB = nr[i, NR_OOB]
        nAo = nhA - 1 if A >= 0 else 0
        nC = nr[i, NR_NH]
        ho = nr[i, NR_HOFF]
        jt = nr[i, NR_JT]
        # x = beta + sum_k s_k G_k^T f_k = beta + X sum_{k in A} Phi^A_{2k} f_k
        #                                        - sum_{k in B} Phi^B_{1k} f_k
        x0, x1, x2 = R[r, REC_BETA], R[r, REC_BETA + 1], R[r, REC_BETA + 2]
        x3, x4, x5 = R[r, REC_BETA + 3], R[r, REC_BETA + 4], R[r, REC_BETA + 5]
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
            t = _xj_motion(jt, XJ_E, XJ_r, J, (a0, a1, a2, a3, a4, a5))
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
        d = nr[i, NR_NV]
        va = nr[i, NR_VA]
        nf = nr[i, NR_NF]
        for t in range(d):
            R[r, REC_FAL + nr[i, nf + t]] = tau[va + t]
        if nf == 5:
            qj = tau[va]
            p0, p1, p2, p3, p4 = nr[i, 0], nr[i, 1], nr[i, 2], nr[i, 3], nr[i, 4]
            g = _solve5_at(R, r, REC_L, R, r, REC_LD,
                           Ds[1, p0] - R[r, REC_KJ + p0] * qj,
                           Ds[1, p1] - R[r, REC_KJ + p1] * qj,
                           Ds[1, p2] - R[r, REC_KJ + p2] * qj,
                           Ds[1, p3] - R[r, REC_KJ + p3] * qj,
                           Ds[1, p4] - R[r, REC_KJ + p4] * qj)
            R[r, REC_FAL + p0] = g[0]
            R[r, REC_FAL + p1] = g[1]
            R[r, REC_FAL + p2] = g[2]
            R[r, REC_FAL + p3] = g[3]
            R[r, REC_FAL + p4] = g[4]
        elif nf > 0:
            for a in range(nf):
                pa = nr[i, a]
                s = Ds[1, pa]
                for t in range(d):
                    s -= R[r, REC_KJ + 6 * t + pa] * tau[va + t]
                Ds[0, a] = s
            _chol_solve_at(R, r, REC_L, R, r, REC_LD, nf, Ds, 0)
            for a in range(nf):
                R[r, REC_FAL + nr[i, a]] = Ds[0, a]
        for t in range(d):
            s = -Ds[1, nr[i, nf + t]]
            for a in range(6):
                s += R[r, REC_KJ + 6 * t + a] * R[r, REC_FAL + a]
            qdd_out[va + t] = s
        # f in body-J coordinates: R^T f_al
        hb = 2 * J + 1
        f = (R[r, REC_FAL], R[r, REC_FAL + 1], R[r, REC_FAL + 2], R[r, REC_FAL + 3],
             R[r, REC_FAL + 4], R[r, REC_FAL + 5])
        for a in range(3):
            f_out[J, a] = H_E[hb, 0, a] * f[0] + H_E[hb, 1, a] * f[1] + H_E[hb, 2, a] * f[2]
            f_out[J, 3 + a] = (H_E[hb, 0, a] * f[3] + H_E[hb, 1, a] * f[4]
                               + H_E[hb, 2, a] * f[5])
        # forces on the children's handles: f on B's (J, 1), -X_J^T f on A's (J, 0)
        _hand_down(fh, ho, nAo, f, (jt, XJ_E, XJ_r), J, (A, ca, nr[i, NR_HA], nhA),
                   (cb, nr[i, NR_HB], nhB))


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
    """Run :func:`dca_kernel` for callers in Python; return whether every qdd is finite.

    The same bundles as plain tuples (their fields in order, ``d[0]`` the
    :class:`~articulated.algorithms.bundles.Kinematics`), rebuilt as named tuples inside:
    numba types a plain tuple of arrays at a call from Python faster than a named tuple
    (whose fields are typed one by one in Python). The caller reports a non-finite
    acceleration.
    """
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
