"""Adaptive dynamics of articulated bodies (Redon, Galoppo & Lin 2005, RGL): hybrid bodies,
motion metrics, the active-region update with joint-acceleration re-computation and
rigidification impulses.

Built on the persistent-coefficient DCA of :mod:`articulated.algorithms.quasistatics`
(every node's articulated-body coefficients, acceleration-metric coefficients (RGL
Theorems 1-2, eqs. 7-8, the same recurrences as Redon & Lin's total-acceleration equations)
and hierarchical frames), run here with velocities:

* **Hybrid bodies** (RGL Sec. 4): a joint is *active* (simulated) or *rigidified*; the
  active joints form a subtree of the assembly tree containing its root. A rigidified
  joint has ``S = 0`` (RGL Sec. 4.2), so the node formulas (RGL eq. 2) give the rigid-state
  coefficients of eq. 6 (``W = V``: a rigid node behaves like one rigid body) and the
  multilevel forward dynamics of Sec. 4.3 is the back-substitution restricted to the active
  region. A rigidified joint has zero velocity.
* **Acceleration update region** (Sec. 5.3.1): the fully articulated body's partial
  back-substitution by priority of the acceleration metric ``A(C)``, stopped by a threshold
  on the remaining metric or a node budget.
* **Joint-acceleration re-computation** (Sec. 5.3.2) on the *transient hybrid body* (the
  previous active region plus the update region), so that the accelerations are those of the
  partially rigidified body (RGL Fig. 4: ``a = f / (4 m)``).
* **Velocity update and new active region** (Sec. 5.4.1) by priority of the velocity metric
  ``V(C) = sum_i qd_i^T V_i qd_i``, threshold or budget ``N_A``.
* **Rigidification impulses** (Sec. 5.4.2): joint impulses ``Q^R`` with ``K^R Q^R =
  -qd^R``, ``K^R`` assembled column by column from unit test impulses on the transient
  hybrid body (Kokkevis et al. 1996); the resulting velocity change is the M-orthogonal
  projection onto the new active joints, so kinetic energy never increases.

Cost: the multilevel step between active-region updates is O(N_A log n)
(:meth:`AdaptiveDynamics.hybrid_accelerations`: active nodes only, world velocities from the
hierarchical frames, rigid-front biases from each front node's rigid inertia and velocity,
RGL Sec. 4.3 and 6.2). The active-region update (:meth:`AdaptiveDynamics.region_update`,
RGL Sec. 5.1 and 6) recomputes only the active region, the force-update region and the
nodes the acceleration queue reaches, and evaluates the rigid front and the queue's passive
nodes from their linear-coefficient tensors (RGL Theorems 3-4,
:mod:`articulated.algorithms.passive`); what remains O(n) in it are integer and vector
passes (the region bookkeeping of :meth:`AdaptiveDynamics.prepare_region`, the velocity
metric, and the momentum pass of the projection when more than two joints are rigidified),
no node coefficients. The first update from the fully articulated state builds the tensors
of every node that becomes passive (O(n), once).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..config import INLINE, JIT, KERNEL
from ._inputs import check_f_ext
from .dca import _dca_kinematics, _leaf_bias, _xmotion, principal_joint_transform
from .kinematics import joint_motion
from ..spatial import get_mat3, get_vec3, inertia_times, spd_inverse, xform_force_T
from .passive import K, _midx, evaluate_fresh, tensorize_node
from .quasistatics import (AdaptiveQuasiStatics, _blk, _children, _dirty_nodes, _heap_pop,
                           _heap_push, _node_frames, _partial_back_substitution, _tinv, _tmul,
                           _update_nodes, _world_pose, _xdense)


# ------------------------------------------------------------------ hybrid-step kernels

@njit(**KERNEL)
def _frames_pass(nodes, n, jtype, qadr, Xtree_rot, axis, Xtree_E, Xtree_r, q, H_E, H_r,
                 node_A, node_B, node_joint, node_nh, node_hoff, node_ca, node_cb, node_pslot,
                 Xup_E, Xup_r, XJ_E, XJ_r, Tp_E, Tp_r, Tup_E, Tup_r, Xr, xq):
    """Principal joint transforms and hierarchical frames (RL Sec. 5.1) of the internal
    nodes ``nodes[:n]`` (post-order) only: what moves when only their joints move."""
    for u in range(n):
        i = nodes[u]
        J = node_joint[i]
        principal_joint_transform(J, jtype, qadr, Xtree_rot, axis, Xtree_E, Xtree_r, q,
                                  Xup_E, Xup_r, XJ_E, XJ_r)
        A = node_A[i]
        B = node_B[i]
        nC = node_nh[i]
        if nC == 0:
            _tmul(XJ_E, XJ_r, J, H_E, H_r, 2 * J, Xr, xq, 0)
            _tinv(Xr, xq, 0, Tup_E, Tup_r, B)
            continue
        nAo = node_nh[A] - 1 if A >= 0 else 0
        hA = node_hoff[A] if A >= 0 else 0
        _node_frames(i, J, B, A, nC, nAo, node_ca[i], node_cb[i], hA, node_hoff[B],
                     node_hoff[i], node_pslot, XJ_E, XJ_r, Tp_E, Tp_r, Tup_E, Tup_r, Xr, xq)


@njit(**KERNEL)
def _active_velocities(joints, n, parent, near, vadr, jnv, S, qd, H_E, H_r, leaf_of_body,
                       node_parent, node_pslot, node_hoff, handle_x, Tup_E, Tup_r, Xr, xq,
                       Vw, c, c_al):
    """World spatial velocities (about the world origin) of the child bodies of the active
    joints ``joints[:n]`` (increasing, so parents first), ``Vw[J] = Vw[near[parent J]] +
    X_{w<-J} S qd_J`` (rigidified joints add nothing), and the velocity products
    ``c = v_J x S qd_J`` (body coordinates; aligned in c_al). World poses from the
    hierarchical frames, O(log n) each."""
    for u in range(n):
        J = joints[u]
        _world_pose(J, leaf_of_body, node_parent, node_pslot, node_hoff, handle_x, H_E, H_r,
                    Tup_E, Tup_r, Xr, xq)                      # (Xr, xq)[0] = w X J
        m = joint_motion(J, vadr, jnv, S, qd)
        w = _xmotion(Xr, xq, 0, m[0], m[1], m[2], m[3], m[4], m[5])
        p = parent[J]
        k = near[p] if p >= 0 else -1
        for a in range(6):
            Vw[J, a] = w[a] + (Vw[k, a] if k >= 0 else 0.0)
        _tinv(Xr, xq, 0, Xr, xq, 1)                            # J X w
        v = _xmotion(Xr, xq, 1, Vw[J, 0], Vw[J, 1], Vw[J, 2], Vw[J, 3], Vw[J, 4], Vw[J, 5])
        # c = v x (S qd) (RBDA eq. 7.34)
        c[J, 0] = v[1] * m[2] - v[2] * m[1]
        c[J, 1] = v[2] * m[0] - v[0] * m[2]
        c[J, 2] = v[0] * m[1] - v[1] * m[0]
        c[J, 3] = v[1] * m[5] - v[2] * m[4] + v[4] * m[2] - v[5] * m[1]
        c[J, 4] = v[2] * m[3] - v[0] * m[5] + v[5] * m[0] - v[3] * m[2]
        c[J, 5] = v[0] * m[4] - v[1] * m[3] + v[3] * m[1] - v[4] * m[0]
        x = _xmotion(H_E, H_r, 2 * J + 1, c[J, 0], c[J, 1], c[J, 2], c[J, 3], c[J, 4],
                     c[J, 5])
        for a in range(6):
            c_al[J, a] = x[a]


@njit(**INLINE)
def _front_velocity(b, ho, near, Vw, H_E, H_r, leaf_of_body, node_parent, node_pslot,
                    node_hoff, handle_x, Tup_E, Tup_r, Xr, xq):
    """Spatial velocity (a 6-tuple) of a rigid node's handle-0 frame (slot ``ho``, fixed to
    body b): the world velocity of the nearest active joint on b's path, ``Vw[near[b]]``
    (zero if none), moved into the handle frame through the hierarchical frames."""
    k = near[b]
    if k < 0:
        return (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    _world_pose(b, leaf_of_body, node_parent, node_pslot, node_hoff, handle_x, H_E, H_r,
                Tup_E, Tup_r, Xr, xq)
    _tinv(Xr, xq, 0, Xr, xq, 1)                                # b X w
    vb = _xmotion(Xr, xq, 1, Vw[k, 0], Vw[k, 1], Vw[k, 2], Vw[k, 3], Vw[k, 4], Vw[k, 5])
    return _xmotion(H_E, H_r, handle_x[ho], vb[0], vb[1], vb[2], vb[3], vb[4], vb[5])


@njit(**KERNEL)
def _front_inertias(front, n, node_hoff, Phi, T, I0):
    """``I0[u] = (Phi_00)^-1`` of the rigid-front node ``front[u]``: the spatial inertia of
    the rigid node in its handle-0 frame (constant while the node is rigid)."""
    for u in range(n):
        ho = node_hoff[front[u]]
        for a in range(6):
            for c in range(6):
                T[0, a, c] = Phi[ho, a, c]
        spd_inverse(T[0], 6, I0[u], T[1])


@njit(**KERNEL)
def _front_biases(front, n, front_body, near, f0, Vw, H_E, H_r, leaf_of_body, node_parent,
                  node_pslot, node_nh, node_hoff, node_ooff, handle_x, n_slots, Tup_E, Tup_r,
                  Phi, I0, Xr, xq, bh):
    """Bias accelerations of the rigid-front nodes (RGL Sec. 6.2: eq. 3 with the node's
    rigid inertia and velocity): a rigid node moves as one rigid body, so with ``I_0 =
    (Phi_00)^-1`` (``I0[u]``, :func:`_front_inertias`) and ``v_0`` the velocity of its
    handle-0 frame, ``b_k = Phi_k0 (f_0 - v_0 x* I_0 v_0)``. ``f0[u]``: external force on
    the node in the handle-0 frame."""
    for u in range(n):
        R = front[u]
        ho = node_hoff[R]
        nh = node_nh[R]
        v = _front_velocity(front_body[u], ho, near, Vw, H_E, H_r, leaf_of_body, node_parent,
                            node_pslot, node_hoff, handle_x, Tup_E, Tup_r, Xr, xq)
        p0 = p1 = p2 = p3 = p4 = p5 = 0.0
        for c in range(6):
            p0 += I0[u, 0, c] * v[c]
            p1 += I0[u, 1, c] * v[c]
            p2 += I0[u, 2, c] * v[c]
            p3 += I0[u, 3, c] * v[c]
            p4 += I0[u, 4, c] * v[c]
            p5 += I0[u, 5, c] * v[c]
        # y = f0 - v x* (I_0 v)
        y0 = f0[u, 0] - (v[1] * p2 - v[2] * p1 + v[4] * p5 - v[5] * p4)
        y1 = f0[u, 1] - (v[2] * p0 - v[0] * p2 + v[5] * p3 - v[3] * p5)
        y2 = f0[u, 2] - (v[0] * p1 - v[1] * p0 + v[3] * p4 - v[4] * p3)
        y3 = f0[u, 3] - (v[1] * p5 - v[2] * p4)
        y4 = f0[u, 4] - (v[2] * p3 - v[0] * p5)
        y5 = f0[u, 5] - (v[0] * p4 - v[1] * p3)
        for kk in range(nh):
            row, tr = _blk(ho, node_ooff[R], n_slots, nh, kk, 0)
            for a in range(6):
                if tr:
                    s = (Phi[row, 0, a] * y0 + Phi[row, 1, a] * y1 + Phi[row, 2, a] * y2
                         + Phi[row, 3, a] * y3 + Phi[row, 4, a] * y4 + Phi[row, 5, a] * y5)
                else:
                    s = (Phi[row, a, 0] * y0 + Phi[row, a, 1] * y1 + Phi[row, a, 2] * y2
                         + Phi[row, a, 3] * y3 + Phi[row, a, 4] * y4 + Phi[row, a, 5] * y5)
                bh[ho + kk, a] = s


# ------------------------------------------------------------- passive nodes (RGL Sec. 6.2)

@njit(**KERNEL)
def _leaf_tensors(leaves, node_body, node_nh, node_hoff, node_pslot, handle_x, H_E, H_r, mass,
                  h, Ibar, Iinv, vs, zs, bs, nof, Xr, xq, X6, Bt, Pt, G):
    """Linear-coefficient tensors of the leaves (RGL eq. 3 with the velocity of a body
    moving with the twist ``v`` of its principal handle: ``b_k = X_k I^-1 (-v_b x* I v_b)``,
    ``v_b = X_b v``): the quadratic coefficients by polarization; ``p = 0``, ``eta = 0``
    (RL Lemma 1). External forces are not included (module :mod:`.passive`). Scratch: vs,
    zs (nb, 6), bs (hmax, 6), nof (0, 6), X6 (1, 6, 6)."""
    for u in range(leaves.shape[0]):
        i = leaves[u]
        b = node_body[i]
        ho = node_hoff[i]
        nh = node_nh[i]
        _tinv(H_E, H_r, handle_x[ho + node_pslot[i]], Xr, xq, 0)   # body <- principal
        _xdense(Xr, xq, 0, X6, 0)
        for k in range(nh):
            for a in range(6):
                for c in range(K):
                    Bt[ho + k, a, c] = 0.0
                    Pt[ho + k, a, c] = 0.0
        for r in range(K):
            for c in range(K):
                G[i, r, c] = 0.0
        for j in range(6):
            for l in range(j, 6):
                for a in range(6):
                    vs[b, a] = X6[0, a, j] + (X6[0, a, l] if l != j else 0.0)
                _leaf_bias(b, i, mass, h, Ibar, Iinv, H_E, H_r, node_nh, node_hoff, handle_x,
                           vs, nof, False, zs, bs, 0)
                m = _midx(j, l)
                for k in range(nh):
                    for a in range(6):
                        Bt[ho + k, a, m] = bs[k, a]
        for j in range(6):
            for l in range(j + 1, 6):
                m = _midx(j, l)
                for k in range(nh):
                    for a in range(6):
                        Bt[ho + k, a, m] -= Bt[ho + k, a, _midx(j, j)] + Bt[ho + k, a,
                                                                            _midx(l, l)]


@njit(**KERNEL)
def _tensorize_nodes(nodes, n, uargs, tau, Aw, node_A, node_B, node_joint, node_nh, node_hoff,
                     node_ooff, node_ca, node_cb, vadr, jnv, Tup_E, Tup_r, Xr, xq, T, MX, M, S,
                     Gs, Bt, Pt, G, betaT, gammaT, RT):
    """Nodes becoming passive (post-order; internal, non-root): each node's fully
    articulated update (``uargs``: the arguments of :func:`_update_nodes` for the fully
    articulated coefficient set, which caches Phi, Psi, W, P, D) followed by its tensors
    (:func:`articulated.algorithms.passive.tensorize_node`)."""
    for u in range(n):
        i = nodes[u]
        _update_nodes(nodes[u:u + 1], 1, *uargs)
        J = node_joint[i]
        A, B, ca, cb, nhA, hA, oA, nAo, nhB, hB, oB = _children(
            i, node_A, node_B, node_ca, node_cb, node_nh, node_hoff, node_ooff)
        _tinv(Tup_E, Tup_r, A, Xr, xq, 0)
        _xdense(Xr, xq, 0, MX, 0)
        _tinv(Tup_E, Tup_r, B, Xr, xq, 0)
        _xdense(Xr, xq, 0, MX, 1)
        tensorize_node(i, J, jnv[J], vadr[J], A, B, ca, cb, hA, hB, nAo, node_nh[i],
                       node_hoff[i], node_joint[A] >= 0, node_joint[B] >= 0, tau, Aw, T, MX,
                       M, S, Gs, Bt, Pt, G, betaT, gammaT, RT)


@njit(**KERNEL)
def _passive_front(front, nfront, front_body, near, Vw, region, nreg, in_region, node_active,
                   H_E, H_r, leaf_of_body, node_parent, node_pslot, node_hoff, node_nh, node_A,
                   node_B, node_joint, node_body, handle_x, Tp_E, Tp_r, Tup_E, Tup_r, Xr, xq,
                   mv, vnode, v, Bt, Pt, G, betaT, gammaT, RT, bh, ph, eta, beta, gamma, R,
                   fresh, fresh_list, nfresh):
    """Conversion of the hybrid body to the fully articulated state around the active region
    (RGL Sec. 6): the rigid twists ``vnode`` of the rigid-front nodes (principal-handle
    frame) and of the passive nodes of ``region`` (the force-update region and passive root
    nodes, recomputed exactly), the body velocities ``v`` of the region's leaves, and the
    fully articulated coefficients, from their tensors, of every front node and every child
    of a passive region node outside the region. Every region node and every evaluated node
    is marked fresh (listed in ``fresh_list``)."""
    for u in range(nfront):
        Rn = front[u]
        ho = node_hoff[Rn]
        w = _front_velocity(front_body[u], ho, near, Vw, H_E, H_r, leaf_of_body, node_parent,
                            node_pslot, node_hoff, handle_x, Tup_E, Tup_r, Xr, xq)
        x = _xmotion(Tp_E, Tp_r, ho, w[0], w[1], w[2], w[3], w[4], w[5])
        for a in range(6):
            vnode[Rn, a] = x[a]
        if not in_region[Rn]:
            evaluate_fresh(Rn, x, node_joint, node_nh, node_hoff, vnode, mv, Bt, Pt, G, betaT,
                           gammaT, RT, bh, ph, eta, beta, gamma, R, fresh, fresh_list, nfresh)
    for u in range(nreg - 1, -1, -1):                 # parents first
        i = region[u]
        fresh[i] = True
        fresh_list[nfresh[0]] = i
        nfresh[0] += 1
        if node_active[i]:
            continue
        p = node_parent[i]
        if p < 0:
            for a in range(6):
                vnode[i, a] = 0.0                     # a rigid root joint: welded to the world
        elif not node_active[p]:
            _tinv(Tup_E, Tup_r, i, Xr, xq, 2)
            x = _xmotion(Xr, xq, 2, vnode[p, 0], vnode[p, 1], vnode[p, 2], vnode[p, 3],
                         vnode[p, 4], vnode[p, 5])
            for a in range(6):
                vnode[i, a] = x[a]
        if node_joint[i] < 0:
            b = node_body[i]
            _tinv(H_E, H_r, handle_x[node_hoff[i] + node_pslot[i]], Xr, xq, 2)
            x = _xmotion(Xr, xq, 2, vnode[i, 0], vnode[i, 1], vnode[i, 2], vnode[i, 3],
                         vnode[i, 4], vnode[i, 5])
            for a in range(6):
                v[b, a] = x[a]
            continue
        for ch in (node_A[i], node_B[i]):
            if ch >= 0 and not in_region[ch]:
                _tinv(Tup_E, Tup_r, ch, Xr, xq, 2)
                x = _xmotion(Xr, xq, 2, vnode[i, 0], vnode[i, 1], vnode[i, 2], vnode[i, 3],
                             vnode[i, 4], vnode[i, 5])
                evaluate_fresh(ch, x, node_joint, node_nh, node_hoff, vnode, mv, Bt, Pt, G,
                               betaT, gammaT, RT, bh, ph, eta, beta, gamma, R, fresh,
                               fresh_list, nfresh)


class AdaptiveDynamics(AdaptiveQuasiStatics):
    """Hybrid-body forward dynamics and the adaptive active-region update (RGL Sec. 4-5).

    Parameters
    ----------
    model : Model
    assembly : "balanced" | "serial" | sequence of joints | AssemblyTree
    weights : (nb, 6, 6) or callable, optional - SPD acceleration-metric weights ``A_i``
        (identity); a callable ``weights(q) -> (nb, 6, 6)`` gives configuration-dependent
        weights (RGL Sec. 5.2: ``A_i`` may depend on ``q_i``), evaluated at every
        :meth:`region_update` (a rigidified joint's weight must depend on its own ``q_i``
        only: its passive node's tensors keep the weight it had when it was rigidified)
    velocity_weights : (nb, 6, 6) or callable, optional - SPD velocity-metric weights
        ``V_i`` (identity), likewise

    Attributes (after :meth:`set_state`): ``q``, ``qd``, ``tau``, ``f_ext`` (the state),
    ``active`` (nb,) bool (the active region; all True = fully articulated), and everything
    of :class:`~articulated.algorithms.quasistatics.AdaptiveQuasiStatics` (coefficients with
    the velocity terms of RGL eqs. 2-3).

    Memory: O(n), about 25 kB per body (the hybrid and the fully articulated coefficient
    sets and the linear-coefficient tensors of :mod:`articulated.algorithms.passive`;
    crowd(200), 17,800 bodies: about 0.45 GB).
    """

    def __init__(self, model, assembly="balanced", *, weights=None, velocity_weights=None):
        self._weight_fns = (weights if callable(weights) else None,
                            velocity_weights if callable(velocity_weights) else None)
        q0 = model.neutral()
        super().__init__(model, assembly,
                         weights=weights(q0) if callable(weights) else weights)
        self.Vw = self._weights(velocity_weights(q0) if callable(velocity_weights)
                                else velocity_weights)
        self._quasi_static = False
        self.qd = np.zeros(model.nv)
        self.c = np.zeros((model.nb, 6))
        t = self.tree
        # joint of each node's parent (-1 for root nodes), for the subtree check
        self._parent_joint = np.full(model.nb, -1, dtype=np.int64)
        internal = np.flatnonzero(t.node_joint >= 0)
        par = t.node_parent[internal]
        has = par >= 0
        self._parent_joint[t.node_joint[internal[has]]] = t.node_joint[par[has]]
        self._init_passive()

    def _init_passive(self):
        """The fully articulated coefficient set ``_F`` (RGL Sec. 6: kept next to the hybrid
        one; passive nodes' Phi, Psi, W, P, D cached there) and the linear-coefficient tensors
        of :mod:`articulated.algorithms.passive` (leaves' at once: they are constant)."""
        m, t, d, ma = self.model, self.tree, self.dca, self.ma
        nb, z = m.nb, np.zeros
        zl = np.zeros_like
        self._F = (self.Phi.copy(), zl(self.bh), self.Psi.copy(), zl(self.ph), zl(self.eta),
                   self.W.copy(), self.P.copy(), self.D.copy(), zl(self.beta),
                   zl(self.gamma), zl(self.R))
        self._all_active = np.ones(nb, dtype=np.bool_)
        self._Bt = z((t.n_slots, 6, K))
        self._Pt = z((t.n_slots, 6, K))
        self._G = z((t.n_nodes, K, K))
        self._betaT, self._gammaT, self._RT = z((nb, 6, K)), z((nb, 6, K)), z((nb, 6, K))
        self._tau_T = z(m.nv)             # joint forces in the passive nodes' tensors
        self._vnode = z((t.n_nodes, 6))
        self._fresh = np.zeros(t.n_nodes, dtype=np.bool_)
        self._fresh_list = np.zeros(t.n_nodes, dtype=np.int64)
        self._nfresh = np.zeros(1, dtype=np.int64)
        self._mv = z(K)
        self._MX, self._M = z((2, 6, 6)), z((2, K, K))
        self._S, self._Gs = z((8, 6, K)), z((2, K, K))
        self._region = np.zeros(t.n_nodes, dtype=np.int64)
        self._in_region = np.zeros(t.n_nodes, dtype=np.bool_)
        leaves = np.flatnonzero(t.node_body >= 0).astype(np.int64)
        _leaf_tensors(leaves, t.node_body, t.node_nh, t.node_hoff, self.node_pslot,
                      d.handle_x, d.H_E, d.H_r, ma.mass, ma.h, ma.Ibar, d.Iinv, z((nb, 6)),
                      z((nb, 6)), z((max(int(t.max_handles), 1), 6)), z((0, 6)), self._Xr,
                      self._xq, z((1, 6, 6)), self._Bt, self._Pt, self._G)
        self.passive_stats = dict(updated=0, evaluated=0, tensorized=0)
        """Work of the last :meth:`region_update`: nodes recomputed exactly in the fully
        articulated state, nodes evaluated from their tensors, nodes tensorized."""

    # --------------------------------------------------------------- state and solves
    def _check_active(self, active):
        m = self.model
        if active is None:
            return np.ones(m.nb, dtype=np.bool_)
        a = np.asarray(active)
        if a.dtype != np.bool_:
            idx = np.asarray([m.joint_id(j) for j in np.atleast_1d(a)], dtype=np.int64)
            a = np.zeros(m.nb, dtype=np.bool_)
            a[idx] = True
        elif a.shape != (m.nb,):
            raise ValueError(f"active must be a ({m.nb},) bool mask or a list of joints, "
                             f"got shape {a.shape}")
        pj = self._parent_joint
        bad = np.flatnonzero(a & (pj >= 0) & ~a[np.maximum(pj, 0)])
        if bad.size:
            j = int(bad[0])
            raise ValueError(
                f"joint {m.joint_name[j]!r} is active but the principal joint "
                f"{m.joint_name[pj[j]]!r} of its parent node is not: the active joints must "
                f"form a subtree of the assembly tree containing its root (RGL Sec. 4.1)")
        return a.copy()

    def set_state(self, q, qd=None, tau=None, f_ext=None, active=None) -> None:
        """Set the state and the active region and recompute every node's coefficients
        (with the velocity terms; O(n)).

        q : (nq,), qd : (nv,) float64 (zero on rigidified joints), tau : (nv,) or None,
        f_ext : (nb, 6) or None (body coordinates, as :func:`articulated.aba`), active :
        (nb,) bool mask or list of joints, or None (fully articulated).

        Raises ValueError for bad shapes or values (naming the joint or body), an active set
        that is not a subtree of the assembly tree containing the root, or a rigidified
        joint with nonzero velocity.
        """
        m = self.model
        self.q[:] = m.check_configuration(q)
        self.qd[:] = 0.0 if qd is None else m.check_vector(qd, "qd", m.nv)
        self.tau[:] = 0.0 if tau is None else m.check_vector(tau, "tau", m.nv)
        self.f_ext[:] = 0.0 if f_ext is None else check_f_ext(m, f_ext, np.float64)
        a = self._check_active(active)
        dof_inactive = ~a[m.dof_body]
        if np.any(self.qd[dof_inactive] != 0):
            j = int(m.dof_body[np.flatnonzero(dof_inactive & (self.qd != 0))[0]])
            raise ValueError(f"joint {m.joint_name[j]!r} is rigidified but has a nonzero "
                             f"velocity (apply rigidification impulses first)")
        self.active[:] = a
        self._refresh()

    def _refresh(self, metric=True):
        """Kinematics (transforms, body velocities, velocity products) and every node (with
        the acceleration-metric coefficients unless ``metric`` is False)."""
        ma, d = self.ma, self.dca
        _dca_kinematics(ma.parent, ma.jtype, ma.qadr, ma.vadr, ma.jnv, ma.Xtree_rot, ma.axis,
                        ma.Xtree_E, ma.Xtree_r, ma.S, d.H_E, d.H_r, self._gravity, self.q,
                        self.qd, False, self.Xup_E, self.Xup_r, self.XJ_E, self.XJ_r, self.v,
                        self.c, self.c_al, self.b_world)
        self._update(self._all, self.tree.n_nodes, metric)

    def forward_dynamics(self, q, qd, tau=None, f_ext=None, active=None) -> np.ndarray:
        """Joint accelerations of the hybrid body (RGL Sec. 4.3): exact for the body whose
        rigidified joints are welded, zero on rigidified joints.

        Returns qdd (nv,) float64 [rad/s^2 | m/s^2]. Raises as :meth:`set_state`.
        With ``active=None`` this is the full forward dynamics (equal to ABA's)."""
        self.set_state(q, qd, tau, f_ext, active)
        return self.solve(0.0, "absolute_linkage").qdd

    # --------------------------------------------------------------- RGL Sec. 5
    def acceleration_update_region(self, eps_acc: float = 0.0, max_nodes: int | None = None):
        """RGL Sec. 5.3.1: convert to the fully articulated state and run the partial
        back-substitution by priority of the acceleration metric; stop when the remaining
        metric ``sum A(C)`` over the queue is at most ``eps_acc`` (the paper's threshold on
        the acceleration metric value, not its square root) or after ``max_nodes`` joints.

        Returns the joints of the acceleration update region (int64 array, the order of
        processing). Leaves the solver in the fully articulated state."""
        self.active[:] = True
        self._refresh()
        eps = math.sqrt(max(float(eps_acc), 0.0))
        res = self.solve(eps, "absolute_linkage", max_nodes, copy=False)
        return res.joints.copy()

    def velocity_metric(self) -> np.ndarray:
        """(n_nodes,) velocity metric ``V(C) = sum_{i in C} qd_i^T V_i qd_i`` of every node
        (RGL Sec. 5.2, computed bottom-up as in Sec. 5.4.1)."""
        m, t, ma = self.model, self.tree, self.ma
        V = np.zeros(t.n_nodes)
        _velocity_metric(t.node_A, t.node_B, t.node_joint, ma.vadr, ma.jnv, self.Vw, self.qd,
                         V)
        return V

    def new_active_region(self, eps_vel: float = 0.0, max_active=None):
        """RGL Sec. 5.4.1: the joints visited by a top-down traversal by priority of the
        velocity metric, stopped when the metric left in the queue is at most ``eps_vel``
        (> 0) or after ``max_active`` joints; a (nb,) bool mask (a subtree containing the
        root). With neither criterion the current active region is kept.

        ``max_active`` is one budget N_A for the whole model (int) or one budget per tree of
        the model (sequence of ints, the trees in the order of their root bodies, i.e. of
        ``np.flatnonzero(model.body_parent < 0)``): RGL Fig. 1 gives each character of a
        crowd its own joint budget. With per-tree budgets ``eps_vel`` applies to each tree's
        queue separately. Raises ValueError for a budget sequence of the wrong length."""
        t = self.tree
        if eps_vel <= 0.0 and max_active is None:
            return self.active.copy()       # no criterion: keep the whole (transient) region
        V = self.velocity_metric()
        new = np.zeros(self.model.nb, dtype=np.bool_)
        if max_active is None or np.ndim(max_active) == 0:
            budget = -1 if max_active is None else int(max_active)
            _velocity_traversal(t.roots, V, t.node_A, t.node_B, t.node_joint, float(eps_vel),
                                budget, new)
            return new
        budgets = np.asarray(max_active, dtype=np.int64)
        if budgets.shape != t.roots.shape:
            raise ValueError(f"max_active per tree needs {t.roots.size} budgets (one per "
                             f"tree of the model), got shape {budgets.shape}")
        for k in range(t.roots.size):
            _velocity_traversal(t.roots[k:k + 1], V, t.node_A, t.node_B, t.node_joint,
                                float(eps_vel), int(budgets[k]), new)
        return new

    # --------------------------------------------------------------- RGL Sec. 5.1 + 6
    def region_update(self, q, qd, tau, f_ext, h, *, eps_acc=0.0, max_update=None,
                      eps_vel=0.0, max_active=None, bodies=None, impulse_columns=2):
        """The active-region update of RGL Sec. 5.1 from the current hybrid state, touching
        only the active region, its rigid front, the force-update region and the nodes the
        acceleration queue visits (RGL Sec. 6; passive nodes through their linear-coefficient
        tensors, :mod:`articulated.algorithms.passive`):

        1. conversion to the fully articulated state: the front nodes' coefficients from
           their tensors at their rigid twists, the force-update region (passive nodes with
           external forces on their bodies, or whose joint forces differ from those in their
           tensors, and their passive ancestors) and the active nodes recomputed exactly;
        2. acceleration update region U: partial back-substitution by priority of the
           acceleration metric (threshold ``eps_acc`` on the metric value, or ``max_update``
           joints), passive nodes evaluated from their tensors as the queue reaches them;
        3. joint accelerations on the transient hybrid body (active region + U), velocity
           update ``qd + h qdd``;
        4. new active region (velocity metric: ``eps_vel`` or ``max_active``, see
           :meth:`new_active_region`) and rigidification impulses (RGL Sec. 5.4.2: K^R for
           at most ``impulse_columns`` joints, else the equal momentum projection);
        5. conversion to the new hybrid state: rigid coefficients and tensors of the nodes
           that became passive, :meth:`prepare_region`.

        q (nq,), qd (nv,) (zero on rigidified joints), tau (nv,), f_ext (nb, 6) body
        coordinates: the state (q differs from the last update's only on active joints);
        h: time step [s]; bodies: the bodies with external forces (None: scanned from
        ``f_ext``). Returns ``(qd_new (nv,), U (joints), rigidified
        (joints))``; the solver is left in the new hybrid state (``self.active``).
        Requires :meth:`prepare_region` after the last change of the active region."""
        m, t, ma, d = self.model, self.tree, self.ma, self.dca
        self.sync_frames(q)
        self.qd[:] = qd
        self.tau[:] = tau
        self.f_ext[:] = f_ext
        self._evaluate_weights(self.q)
        _active_velocities(self._ajoints, self._ajoints.size, ma.parent, self._near, ma.vadr,
                           ma.jnv, ma.S, self.qd, d.H_E, d.H_r, t.leaf_of_body,
                           t.node_parent, self.node_pslot, t.node_hoff, d.handle_x,
                           self.Tup_E, self.Tup_r, self._Xr, self._xq, self._Vw, self.c,
                           self.c_al)
        # ---- 1. fully articulated state: force-update region, front, active nodes
        if bodies is None:
            bodies = np.flatnonzero(np.any(self.f_ext != 0.0, axis=1))
        na = self._node_active
        # joints whose force differs from the one in their passive node's tensors: their
        # paths are recomputed exactly now and re-tensorized in step 5
        seeds = t.node_of_joint[np.unique(m.dof_body[self.tau != self._tau_T])]
        n_tau = _dirty_nodes(t.node_parent, seeds.astype(np.int64), seeds.size, self._mark,
                             self._dirty, na)
        stale = self._dirty[:n_tau].copy()
        seeds = t.leaf_of_body[np.asarray(bodies, dtype=np.int64)]     # f_ext: never in tensors
        npath = _dirty_nodes(t.node_parent, seeds.astype(np.int64), seeds.size, self._mark,
                             self._dirty, na)
        proots = t.roots[~na[t.roots]]
        region = np.union1d(np.union1d(np.union1d(self._dirty[:npath], stale), self._anodes),
                            proots)
        nreg = region.size
        self._region[:nreg] = region
        self._in_region[region] = True
        Phi, bh, Psi, ph, eta, W, P, D, beta, gamma, R = F = self._F
        self._nfresh[0] = 0
        try:
            _passive_front(self._front, self._front.size, self._front_body, self._near,
                           self._Vw, self._region, nreg, self._in_region, na, d.H_E, d.H_r,
                           t.leaf_of_body, t.node_parent, self.node_pslot, t.node_hoff,
                           t.node_nh, t.node_A, t.node_B, t.node_joint, t.node_body,
                           d.handle_x, self.Tp_E, self.Tp_r, self.Tup_E, self.Tup_r, self._Xr,
                           self._xq, self._mv, self._vnode, self.v, self._Bt, self._Pt,
                           self._G, self._betaT, self._gammaT, self._RT, bh, ph, eta, beta,
                           gamma, R, self._fresh, self._fresh_list, self._nfresh)
            _update_nodes(self._region, nreg, *self._node_args(True, F, self._all_active))
            # ---- 2. acceleration update region (lazy partial back-substitution)
            eps = math.sqrt(max(float(eps_acc), 0.0))
            budget = -1 if max_update is None else int(max_update)
            _partial_back_substitution(
                eps, 0, budget, self._n_computed, ma.jnv, ma.vadr, self.Aw,
                self._all_active, t.roots, t.node_A, t.node_B, t.node_joint, t.node_nh,
                t.node_hoff, d.node_ooff, t.node_ca, t.node_cb, self.n_slots, self.XJ_E,
                self.XJ_r, Phi, Psi, ph, eta, W, P, D, beta, gamma, self.tau, self._hk,
                self._hn, self._xv, self._fv, self.fh, self._qdd, self._computed, self._stats,
                True, self._fresh, self._fresh_list, self._nfresh, self._vnode, self.Tup_E,
                self.Tup_r, self._Xr, self._xq, self._mv, self._Bt, self._Pt, self._G,
                self._betaT, self._gammaT, self._RT, bh, gamma, R)
            self._n_computed = int(self._stats[0])
            U = self._computed[:self._n_computed].copy()
            n_eval = int(self._nfresh[0]) - nreg
        finally:
            self._fresh[self._fresh_list[:self._nfresh[0]]] = False
            self._in_region[region] = False
        if self._stats[5] >= 0:
            raise ValueError(f"the fully articulated acceleration is not finite at joint "
                             f"{m.joint_name[int(self._stats[5])]!r}")
        # ---- 3. transient hybrid body
        moved = self.active.copy()             # the joints that moved since the last update
        transient = self.active.copy()
        transient[U] = True
        grown = not np.array_equal(transient, self.active)
        if grown:
            self.active[:] = transient
            self.prepare_region()
        qdd = self.hybrid_accelerations(q, qd, tau, f_ext, bodies)
        qd1 = self.qd + h * qdd
        self.qd[:] = qd1
        # ---- 4. new active region, rigidification impulses
        new = self.new_active_region(eps_vel, max_active)
        rigid = np.flatnonzero(transient & ~new)
        if rigid.size and np.any(qd1[~new[m.dof_body]] != 0.0):
            if rigid.size <= impulse_columns:
                dqd = self.rigidification_impulses(rigid)
            else:
                dqd = self._momentum_projection_local(new)
            qd1 = qd1 + dqd
            qd1[~new[m.dof_body]] = 0.0
        # ---- 5. new hybrid state
        self.active[:] = new
        self.qd[:] = qd1
        self.c[rigid] = 0.0
        self.c_al[rigid] = 0.0
        nodes = np.sort(t.node_of_joint[rigid]).astype(np.int64)
        if nodes.size:
            self._update(nodes, nodes.size, metric=False)  # rigid-state coefficients (eq. 6)
        stale = stale[~new[np.maximum(t.node_joint[stale], 0)] & (t.node_joint[stale] >= 0)]
        # tensors change only where the configuration did (joints active before this
        # update) or where the joint forces did (stale); a node of the update region that
        # is rigidified again keeps its tensors
        nodes = np.union1d(np.sort(t.node_of_joint[rigid[moved[rigid]]]), stale).astype(
            np.int64)
        nodes = nodes[t.node_parent[nodes] >= 0]          # root nodes are never tensorized
        if nodes.size:
            dofs = np.isin(m.dof_body, t.node_joint[nodes])
            self._tau_T[dofs] = self.tau[dofs]
            _tensorize_nodes(nodes, nodes.size, self._node_args(True, F, self._all_active),
                             self.tau, self.Aw, t.node_A, t.node_B, t.node_joint, t.node_nh,
                             t.node_hoff, d.node_ooff, t.node_ca, t.node_cb, ma.vadr, ma.jnv,
                             self.Tup_E, self.Tup_r, self._Xr, self._xq, self._T, self._MX,
                             self._M, self._S, self._Gs, self._Bt, self._Pt, self._G,
                             self._betaT, self._gammaT, self._RT)
        self.prepare_region()
        self.passive_stats = dict(updated=int(nreg), evaluated=n_eval,
                                  tensorized=int(nodes.size))
        return qd1, U, rigid

    def _evaluate_weights(self, q):
        """Configuration-dependent metric weights (callables given at construction) at q,
        checked for shape and finiteness (symmetry and definiteness are checked on the
        first evaluation, at construction)."""
        for fn, W in zip(self._weight_fns, (self.Aw, self.Vw)):
            if fn is None:
                continue
            w = np.asarray(fn(q), dtype=np.float64)
            if w.shape != W.shape or not np.isfinite(w).all():
                raise ValueError(f"metric weights callable must return a finite {W.shape} "
                                 f"array, got shape {w.shape}")
            W[:] = w                # the kernels read the d_i x d_i blocks only

    def _momentum(self):
        """``p = M qd`` (nv,) at the solver's ``q``, ``qd`` in O(n) from the body momenta
        (:func:`_generalized_momentum`; kinematics refreshed for every body)."""
        m, ma, d = self.model, self.ma, self.dca
        _dca_kinematics(ma.parent, ma.jtype, ma.qadr, ma.vadr, ma.jnv, ma.Xtree_rot, ma.axis,
                        ma.Xtree_E, ma.Xtree_r, ma.S, d.H_E, d.H_r, self._gravity, self.q,
                        self.qd, False, self.Xup_E, self.Xup_r, self.XJ_E, self.XJ_r, self.v,
                        self.c, self.c_al, self.b_world)
        p = np.empty(m.nv)
        _generalized_momentum(ma.parent, ma.vadr, ma.jnv, ma.S, self.Xup_E, self.Xup_r,
                              ma.mass, ma.h, ma.Ibar, self.v, np.empty((m.nb, 6)), p)
        return p

    def _momentum_projection_local(self, keep):
        """:meth:`momentum_projection` on the current transient hybrid body without its
        O(n) coefficient pass: ``p = M qd`` from the body momenta (O(n) kinematics), then
        one hybrid solve at rest without gravity or external forces over the region
        ``keep`` (its rigid-front biases vanish at rest). Returns ``dqd`` (nv,)."""
        m = self.model
        p = self._momentum()
        qd_old = self.qd.copy()
        tau_old, f_old = self.tau.copy(), self.f_ext.copy()
        g = self._gravity.copy()
        rigid = np.sort(self.tree.node_of_joint[self.active & ~keep]).astype(np.int64)
        self.active[:] = keep
        if rigid.size:
            self._update(rigid, rigid.size, metric=False)    # rigid-state coefficients
        self.prepare_region()
        try:
            self._gravity[:] = 0.0
            new = self.hybrid_accelerations(self.q, np.zeros(m.nv), p).copy()
        finally:
            self._gravity[:] = g
            self.tau[:] = tau_old
            self.f_ext[:] = f_old
        self.qd[:] = qd_old
        return new - qd_old

    # --------------------------------------------------------------- hybrid steps
    def prepare_region(self) -> None:
        """Bookkeeping of the current active region for :meth:`hybrid_accelerations`
        (RGL Sec. 4.1): the active nodes, the rigid front (rigid nodes whose parent is
        active, leaves included), the body carrying each front node's handle 0, the nearest
        active joint on every body's path, and the front node holding every leaf. O(n); run
        after the active region changes (the coefficients must be those of the current
        hybrid body, e.g. after :meth:`set_state`)."""
        t, m = self.tree, self.model
        if getattr(self, "_bk", None) is None:          # buffers, allocated once
            nn, nb = t.n_nodes, m.nb
            z = lambda *shape: np.zeros(shape, dtype=np.int64)
            self._bk = dict(node_active=np.zeros(nn, dtype=np.bool_), anodes=z(nn),
                            front=z(nn), front_body=z(nn), ajoints=z(nb), near=z(nb),
                            front_of=z(nn), front_index=z(nn), f0=np.zeros((nn, 6)),
                            I0=np.zeros((nn, 6, 6)))
            self._Vw = np.zeros((nb, 6))       # rows written before they are read
        k = self._bk
        na, nf, nj = _region_bookkeeping(self.active, t.node_joint, t.node_parent,
                                         t.node_hoff, t.handle_joint, t.handle_side,
                                         m.body_parent, k["node_active"], k["anodes"],
                                         k["front"], k["front_body"], k["ajoints"], k["near"],
                                         k["front_of"], k["front_index"])
        self._node_active = k["node_active"]
        self._anodes = k["anodes"][:na]
        self._front = k["front"][:nf]
        self._front_body = k["front_body"][:nf]
        self._ajoints = k["ajoints"][:nj]
        self._near = k["near"]
        self._front_of = k["front_of"]
        self._front_index = k["front_index"]
        self._f0 = k["f0"][:nf]
        self._I0 = k["I0"][:nf]
        _front_inertias(self._front, nf, t.node_hoff, self.Phi, self._T, self._I0)
        self._hargs = None

    def hybrid_args(self):
        """Argument tuples of the hybrid-step kernels for the current active region (valid
        until the next :meth:`prepare_region`): ``(pose, frames, velocities, on_front,
        front_biases, update, solve)`` for ``_world_pose(b, *pose)``,
        ``_frames_pass(*frames)``, ``_active_velocities(*velocities)``,
        ``_forces_on_front(bodies, n, f_ext, *on_front)``, ``_front_biases(*front_biases)``,
        ``_update_nodes(*update)`` and ``_partial_back_substitution(-1.0, 0, -1, prev_n,
        *solve)``; shared by :meth:`hybrid_accelerations` and the compiled step loop of
        :class:`articulated.simulation.adaptive.AdaptiveSimulator`."""
        if self._hargs is None:
            ma, t, d = self.ma, self.tree, self.dca
            Xr, xq = self._Xr, self._xq
            pose = (t.leaf_of_body, t.node_parent, self.node_pslot, t.node_hoff, d.handle_x,
                    d.H_E, d.H_r, self.Tup_E, self.Tup_r, Xr, xq)
            frames = (self._anodes, self._anodes.size, ma.jtype, ma.qadr, ma.Xtree_rot,
                      ma.axis, ma.Xtree_E, ma.Xtree_r, self.q, d.H_E, d.H_r, t.node_A,
                      t.node_B, t.node_joint, t.node_nh, t.node_hoff, t.node_ca, t.node_cb,
                      self.node_pslot, self.Xup_E, self.Xup_r, self.XJ_E, self.XJ_r,
                      self.Tp_E, self.Tp_r, self.Tup_E, self.Tup_r, Xr, xq)
            vel = (self._ajoints, self._ajoints.size, ma.parent, self._near, ma.vadr, ma.jnv,
                   ma.S, self.qd, d.H_E, d.H_r, t.leaf_of_body, t.node_parent,
                   self.node_pslot, t.node_hoff, d.handle_x, self.Tup_E, self.Tup_r, Xr, xq,
                   self._Vw, self.c, self.c_al)
            on_front = (self._front_of, self._front_index, self._front_body,
                        t.leaf_of_body, t.node_parent, self.node_pslot, t.node_hoff,
                        d.handle_x, d.H_E, d.H_r, self.Tup_E, self.Tup_r, Xr, xq, self._f0)
            fb = (self._front, self._front.size, self._front_body, self._near, self._f0,
                  self._Vw, d.H_E, d.H_r, t.leaf_of_body, t.node_parent, self.node_pslot,
                  t.node_nh, t.node_hoff, d.node_ooff, d.handle_x, self.n_slots, self.Tup_E,
                  self.Tup_r, self.Phi, self._I0, Xr, xq, self.bh)
            upd = (self._anodes, self._anodes.size) + self._node_args(False)
            self._hargs = (pose, frames, vel, on_front, fb, upd, self._solve_tail())
        return self._hargs

    def sync_frames(self, q) -> None:
        """Set the configuration, which differs from the current one only on active joints,
        and bring the principal joint transforms and hierarchical frames of the active nodes
        up to date (O(N_A)), so that :meth:`body_pose` is exact at ``q`` (forces in world
        coordinates are evaluated between steps). Requires :meth:`prepare_region`."""
        self.q[:] = q
        _frames_pass(*self.hybrid_args()[1])

    def hybrid_accelerations(self, q, qd, tau, f_ext=None, bodies=None) -> np.ndarray:
        """Multilevel forward dynamics (RGL Sec. 4.3) at a state that differs from the one
        of the last update only on active joints: frames and principal transforms of the
        active nodes, world velocities of the active joints' bodies, rigid-front biases
        from each front node's rigid inertia and velocity, active-node coefficients (no
        metric), exact back-substitution over the active region. Cost O(N_A log n + N_F
        log n) for N_F bodies with external forces (``bodies``: their indices, or None to
        scan ``f_ext``).

        Returns the solver's qdd buffer (nv,) (zero on rigidified joints; valid until the
        next call). Requires :meth:`prepare_region` after the last active-region change."""
        pose, frames, vel, on_front, fb, upd, solve = self.hybrid_args()
        self.sync_frames(q)
        self.qd[:] = qd
        self.tau[:] = 0.0 if tau is None else tau
        _active_velocities(*vel)
        self._f0[:] = 0.0
        if f_ext is not None:
            f_ext = np.ascontiguousarray(f_ext, dtype=np.float64)
            idx = (np.flatnonzero(np.any(f_ext != 0.0, axis=1)) if bodies is None
                   else np.asarray(bodies, dtype=np.int64))
            _forces_on_front(idx, idx.size, f_ext, *on_front)
        _front_biases(*fb)
        _update_nodes(*upd)
        return self._solve_exact()

    def impulse_response(self, joints, impulses) -> np.ndarray:
        """Velocity change ``M_T^-1 G^T Q`` of the current hybrid body for joint impulses
        ``Q`` [N m s | N s] on ``joints`` (the hybrid body's own inverse inertia; used for
        the rigidification impulses). Linear in Q: computed as the difference of two exact
        hybrid solves with the joint forces changed along the joints' paths only."""
        m = self.model
        base = self._solve_exact().copy()
        dofs = np.concatenate([np.arange(m.jnt_vadr[j], m.jnt_vadr[j] + m.jnt_nv[j])
                               for j in joints]) if len(joints) else np.zeros(0, np.int64)
        tau0 = self.tau.copy()
        tau1 = tau0.copy()
        tau1[dofs] += impulses
        self.update(tau=tau1, tau_joints=joints, metric=False)
        out = self._solve_exact().copy() - base
        self.update(tau=tau0, tau_joints=joints, metric=False)
        return out

    def momentum_projection(self, keep) -> np.ndarray:
        """The velocity change of the rigidification impulses computed in O(n) instead of
        O(d_R) solves: impulses act on the rigidified joints only, so the generalized
        momentum ``p = M qd`` of the kept joints is unchanged and the new velocities are
        ``qd'_K = M_KK^-1 p_K`` (the same M-orthogonal projection as RGL Sec. 5.4.2). ``p``
        from the body momenta (:func:`_generalized_momentum`), ``M_KK^-1 p_K`` by one
        hybrid solve (active = ``keep``) at rest without gravity or external forces.
        Returns ``dqd`` (nv,) for the solver's current ``q``, ``qd``; leaves the solver's
        coefficients in that auxiliary state (call :meth:`set_state` next)."""
        m = self.model
        p = self._momentum()
        qd_old = self.qd.copy()
        g = self._gravity.copy()
        try:
            self._gravity[:] = 0.0
            self.qd[:] = 0.0
            self.tau[:] = p
            self.f_ext[:] = 0.0
            self.active[:] = self._check_active(keep)
            self._refresh(metric=False)
            new = self._solve_exact().copy()
        finally:
            self._gravity[:] = g
        return new - qd_old

    def rigidification_impulses(self, rigidify) -> np.ndarray:
        """RGL Sec. 5.4.2: joint impulses on the joints ``rigidify`` (their dofs ``R``) that
        cancel their velocities on the current (transient) hybrid body: ``K^R Q^R =
        -qd^R``, ``K^R`` from unit test impulses. Returns the velocity change ``dqd`` (nv,)
        (zero outside the active region; ``qd + dqd`` is zero on ``R``). Kinetic energy does
        not increase: ``dqd`` is the M-orthogonal projection removing the R-components."""
        m = self.model
        rigidify = [int(j) for j in rigidify if m.jnt_nv[j] > 0]
        if not rigidify:
            return np.zeros(m.nv)
        dofs = np.concatenate([np.arange(m.jnt_vadr[j], m.jnt_vadr[j] + m.jnt_nv[j])
                               for j in rigidify])
        K = np.empty((dofs.size, dofs.size))
        for c in range(dofs.size):
            e = np.zeros(dofs.size)
            e[c] = 1.0
            K[:, c] = self.impulse_response(rigidify, e)[dofs]
        K = 0.5 * (K + K.T)
        Q = np.linalg.solve(K, -self.qd[dofs])
        return self.impulse_response(rigidify, Q)


@njit(**KERNEL)
def _generalized_momentum(parent, vadr, jnv, S, Xup_E, Xup_r, mass, h, Ibar, v, hc, p):
    """``p = M qd`` in O(n) from the body velocities: composite momenta ``h_i = I_i v_i +
    sum_children Xup_c^T h_c`` (body coordinates) and ``p_i = S_i^T h_i`` (RBDA Sec. 7.1,
    the momentum form of the CRBA). ``hc`` (nb, 6) scratch."""
    nb = parent.shape[0]
    for i in range(nb):
        x = inertia_times(mass[i], get_vec3(h, i), get_mat3(Ibar, i),
                          (v[i, 0], v[i, 1], v[i, 2], v[i, 3], v[i, 4], v[i, 5]))
        for a in range(6):
            hc[i, a] = x[a]
    for i in range(nb - 1, -1, -1):
        for r in range(jnv[i]):
            s = 0.0
            for a in range(6):
                s += S[vadr[i] + r, a] * hc[i, a]
            p[vadr[i] + r] = s
        pa = parent[i]
        if pa >= 0:
            y = xform_force_T(get_mat3(Xup_E, i), get_vec3(Xup_r, i),
                              (hc[i, 0], hc[i, 1], hc[i, 2], hc[i, 3], hc[i, 4], hc[i, 5]))
            for a in range(6):
                hc[pa, a] += y[a]


@njit(**KERNEL)
def _forces_on_front(bodies, n, f_ext, front_of, front_index, front_body, leaf_of_body,
                     node_parent, node_pslot, node_hoff, handle_x, H_E, H_r, Tup_E, Tup_r, Xr,
                     xq, f0):
    """Add the external forces of ``bodies[:n]`` (body coordinates) to their rigid-front
    node's handle-0 frame: ``f0[u] += X*_{h0<-b} f_b`` with ``h0 X b = H_h0 (b0 X w)
    (w X b)`` from the hierarchical frames (O(log n) per body)."""
    for t in range(n):
        b = bodies[t]
        if (f_ext[b, 0] == 0.0 and f_ext[b, 1] == 0.0 and f_ext[b, 2] == 0.0
                and f_ext[b, 3] == 0.0 and f_ext[b, 4] == 0.0 and f_ext[b, 5] == 0.0):
            continue
        R = front_of[leaf_of_body[b]]
        if R < 0:
            continue                   # no active joint in b's tree: welded to the world
        u = front_index[R]
        b0 = front_body[u]
        _world_pose(b0, leaf_of_body, node_parent, node_pslot, node_hoff, handle_x, H_E,
                    H_r, Tup_E, Tup_r, Xr, xq)
        _tinv(Xr, xq, 0, Xr, xq, 2)                            # b0 X w
        _world_pose(b, leaf_of_body, node_parent, node_pslot, node_hoff, handle_x, H_E,
                    H_r, Tup_E, Tup_r, Xr, xq)                 # w X b in slot 0
        _tmul(Xr, xq, 2, Xr, xq, 0, Xr, xq, 1)                 # b0 X b
        _tmul(H_E, H_r, handle_x[node_hoff[R]], Xr, xq, 1, Xr, xq, 0)   # h0 X b
        # f_h = X* f = [E (n - r x f); E f]
        fx, fy, fz = f_ext[b, 3], f_ext[b, 4], f_ext[b, 5]
        n0 = f_ext[b, 0] - (xq[0, 1] * fz - xq[0, 2] * fy)
        n1 = f_ext[b, 1] - (xq[0, 2] * fx - xq[0, 0] * fz)
        n2 = f_ext[b, 2] - (xq[0, 0] * fy - xq[0, 1] * fx)
        for a in range(3):
            f0[u, a] += Xr[0, a, 0] * n0 + Xr[0, a, 1] * n1 + Xr[0, a, 2] * n2
            f0[u, 3 + a] += Xr[0, a, 0] * fx + Xr[0, a, 1] * fy + Xr[0, a, 2] * fz


@njit(**JIT)
def _velocity_traversal(roots, V, node_A, node_B, node_joint, eps_vel, budget, new):
    """Top-down traversal of the trees below ``roots`` by priority of the velocity metric
    ``V`` (RGL Sec. 5.4.1) with an array heap: marks ``new[J]`` for every joint visited;
    stops after ``budget`` joints (< 0: no budget) or when the metric left in the queue is
    at most ``eps_vel`` (> 0; the queue sum is recomputed exactly before stopping)."""
    n = node_joint.shape[0]
    hk = np.empty(n)
    hn = np.empty(n, dtype=np.int64)
    m = 0
    left = 0.0
    for r in roots:
        m = _heap_push(hk, hn, m, V[r], r)
        left += V[r]
    count = 0
    while m > 0:
        if budget >= 0 and count >= budget:
            break
        if eps_vel > 0.0 and left <= eps_vel:
            left = 0.0
            for k in range(m):
                left += hk[k]
            if left <= eps_vel:
                break
        key = hk[0]
        i = hn[0]
        m = _heap_pop(hk, hn, m)
        left -= key
        new[node_joint[i]] = True
        count += 1
        for ch in (node_A[i], node_B[i]):
            if ch >= 0 and node_joint[ch] >= 0:
                m = _heap_push(hk, hn, m, V[ch], ch)
                left += V[ch]


@njit(**KERNEL)
def _velocity_metric(node_A, node_B, node_joint, vadr, jnv, Vw, qd, V):
    """``V(C) = qd_J^T V_J qd_J + V(A) + V(B)`` bottom-up (RGL Sec. 5.4.1); leaves 0."""
    for i in range(node_joint.shape[0]):
        J = node_joint[i]
        if J < 0:
            V[i] = 0.0
            continue
        s = 0.0
        va = vadr[J]
        for r in range(jnv[J]):
            for c in range(jnv[J]):
                s += qd[va + r] * Vw[J, r, c] * qd[va + c]
        s += V[node_B[i]]
        if node_A[i] >= 0:
            s += V[node_A[i]]
        V[i] = s


@njit(**KERNEL)
def _region_bookkeeping(active, node_joint, node_parent, node_hoff, handle_joint, handle_side,
                        body_parent, node_active, anodes, front, front_body, ajoints, near,
                        front_of, front_index):
    """The bookkeeping of an active region (RGL Sec. 4.1) in one O(n) integer pass:
    ``node_active``, the active nodes ``anodes`` (post-order), the rigid front ``front``
    (rigid nodes whose parent is active, leaves included) with ``front_index`` (-1 off the
    front), the body carrying each front node's handle 0 ``front_body``, the active joints
    ``ajoints``, the nearest active joint on every body's path ``near`` and the front node
    containing every node ``front_of`` (itself on the front, -1 inside the active region or
    in a tree without active joints). Returns the counts ``(na, nf, nj)``."""
    nn = node_joint.shape[0]
    na = 0
    for i in range(nn):
        J = node_joint[i]
        a = J >= 0 and active[J]
        node_active[i] = a
        if a:
            anodes[na] = i
            na += 1
    nf = 0
    for i in range(nn):
        front_index[i] = -1
        p = node_parent[i]
        if not node_active[i] and p >= 0 and node_active[p]:
            front_index[i] = nf
            front[nf] = i
            s = node_hoff[i]
            hj = handle_joint[s]
            front_body[nf] = hj if handle_side[s] == 1 else body_parent[hj]
            nf += 1
    nj = 0
    for b in range(active.shape[0]):
        if active[b]:
            ajoints[nj] = b
            nj += 1
    _nearest_active(body_parent, active, near)
    for i in range(nn - 1, -1, -1):                   # reverse post-order: parents first
        if front_index[i] >= 0:
            front_of[i] = i
        elif node_parent[i] >= 0:
            front_of[i] = front_of[node_parent[i]]
        else:
            front_of[i] = -1
    return na, nf, nj


@njit(**KERNEL)
def _nearest_active(parent, active, near):
    """near[b] = the nearest active joint on body b's path to the root (b's own joint
    included), -1 if none; bodies in depth-first order (parents first)."""
    for b in range(parent.shape[0]):
        if active[b]:
            near[b] = b
        elif parent[b] >= 0:
            near[b] = near[parent[b]]
        else:
            near[b] = -1
