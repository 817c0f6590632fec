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

Status: the multilevel step between active-region updates costs O(N_A log n)
(:meth:`AdaptiveDynamics.hybrid_accelerations`: active nodes only, world velocities from the
hierarchical frames, rigid-front biases from each front node's rigid inertia and velocity,
RGL Sec. 4.3 and 6.2). The active-region update is still O(n): it recomputes every node
(the linear-coefficient tensors of Theorems 3-4 and cached rigid-node coefficients, which
would make it sub-linear, are not implemented).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..config import KERNEL
from ._inputs import check_f_ext
from .dca import _dca_kinematics, _xmotion, principal_joint_transform
from .kinematics import joint_motion
from ..spatial import get_mat3, get_vec3, inertia_times, spd_inverse, xform_force_T
from .quasistatics import (AdaptiveQuasiStatics, _blk, _node_frames, _tinv, _tmul,
                           _world_pose)


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


@njit(**KERNEL)
def _front_biases(front, n, front_body, near, f0, Vw, H_E, H_r, leaf_of_body, node_parent,
                  node_pslot, node_nh, node_hoff, node_ooff, handle_x, n_slots, Tup_E, Tup_r,
                  Phi, T, Xr, xq, bh):
    """Bias accelerations of the rigid-front nodes (RGL Sec. 6.2: eq. 3 with the node's
    rigid inertia and velocity): a rigid node moves as one rigid body, so with ``I_0 =
    (Phi_00)^-1`` and ``v_0`` the velocity of its handle-0 frame, ``b_k = Phi_k0 (f_0 - v_0
    x* I_0 v_0)``. ``f0[u]``: external force on the node in the handle-0 frame."""
    for u in range(n):
        R = front[u]
        b = front_body[u]
        ho = node_hoff[R]
        nh = node_nh[R]
        k = near[b]
        if k >= 0:
            _world_pose(b, leaf_of_body, node_parent, node_pslot, node_hoff, handle_x, H_E,
                        H_r, Tup_E, Tup_r, Xr, xq)
            _tinv(Xr, xq, 0, Xr, xq, 1)                        # b X w
            vb = _xmotion(Xr, xq, 1, Vw[k, 0], Vw[k, 1], Vw[k, 2], Vw[k, 3], Vw[k, 4],
                          Vw[k, 5])
            v = _xmotion(H_E, H_r, handle_x[ho], vb[0], vb[1], vb[2], vb[3], vb[4], vb[5])
        else:
            v = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
        row, tr = _blk(ho, node_ooff[R], n_slots, nh, 0, 0)
        for a in range(6):
            for c in range(6):
                T[0, a, c] = Phi[row, a, c]
        spd_inverse(T[0], 6, T[1], T[2])                                # I_0
        p0 = p1 = p2 = p3 = p4 = p5 = 0.0
        for c in range(6):
            p0 += T[1, 0, c] * v[c]
            p1 += T[1, 1, c] * v[c]
            p2 += T[1, 2, c] * v[c]
            p3 += T[1, 3, c] * v[c]
            p4 += T[1, 4, c] * v[c]
            p5 += T[1, 5, c] * v[c]
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


class AdaptiveDynamics(AdaptiveQuasiStatics):
    """Hybrid-body forward dynamics and the adaptive active-region update (RGL Sec. 4-5).

    Parameters
    ----------
    model : Model
    assembly : "balanced" | "serial" | sequence of joints | AssemblyTree
    weights : (nb, 6, 6), optional - SPD acceleration-metric weights ``A_i`` (identity)
    velocity_weights : (nb, 6, 6), optional - SPD velocity-metric weights ``V_i`` (identity)

    Attributes (after :meth:`set_state`): ``q``, ``qd``, ``tau``, ``f_ext`` (the state),
    ``active`` (nb,) bool (the active region; all True = fully articulated), and everything
    of :class:`~articulated.algorithms.quasistatics.AdaptiveQuasiStatics` (coefficients with
    the velocity terms of RGL eqs. 2-3).
    """

    def __init__(self, model, assembly="balanced", *, weights=None, velocity_weights=None):
        super().__init__(model, assembly, weights=weights)
        self.Vw = self._weights(velocity_weights)
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

    def new_active_region(self, eps_vel: float = 0.0, max_active: int | None = None):
        """RGL Sec. 5.4.1: the joints visited by a top-down traversal by priority of the
        velocity metric, stopped when the metric left in the queue is at most ``eps_vel``
        (> 0) or after ``max_active`` joints; a (nb,) bool mask (a subtree containing the
        root). With neither criterion the current active region is kept."""
        import heapq

        t = self.tree
        V = self.velocity_metric()
        new = np.zeros(self.model.nb, dtype=np.bool_)
        heap = [(-V[r], int(r)) for r in t.roots]
        heapq.heapify(heap)
        left = float(sum(V[t.roots]))
        count = 0
        if eps_vel <= 0.0 and max_active is None:
            return self.active.copy()       # no criterion: keep the whole (transient) region
        while heap:
            if max_active is not None and count >= max_active:
                break                       # the budget is spent
            if eps_vel > 0.0 and left <= eps_vel:
                left = -sum(v for v, _ in heap)   # exact, free of the running round-off
                if left <= eps_vel:
                    break
            negv, i = heapq.heappop(heap)
            left += negv
            new[t.node_joint[i]] = True
            count += 1
            for ch in (t.node_A[i], t.node_B[i]):
                if ch >= 0 and t.node_joint[ch] >= 0:
                    heapq.heappush(heap, (-V[ch], int(ch)))
                    left += V[ch]
        return new

    # --------------------------------------------------------------- hybrid steps
    def prepare_region(self) -> None:
        """Bookkeeping of the current active region for :meth:`hybrid_accelerations`
        (RGL Sec. 4.1): the active nodes, the rigid front (rigid nodes whose parent is
        active, leaves included), the body carrying each front node's handle 0, the nearest
        active joint on every body's path, and the front node holding every leaf. O(n); run
        after the active region changes (the coefficients must be those of the current
        hybrid body, e.g. after :meth:`set_state`)."""
        t, m = self.tree, self.model
        jn = np.maximum(t.node_joint, 0)
        node_active = (t.node_joint >= 0) & self.active[jn]
        self._anodes = np.flatnonzero(node_active).astype(np.int64)
        par = t.node_parent
        front = ~node_active & (par >= 0) & node_active[np.maximum(par, 0)]
        self._front = np.flatnonzero(front).astype(np.int64)
        hs = t.node_hoff[self._front]
        hj, side = t.handle_joint[hs], t.handle_side[hs]
        self._front_body = np.where(side == 1, hj, m.body_parent[hj]).astype(np.int64)
        self._ajoints = np.flatnonzero(self.active).astype(np.int64)
        self._near = np.empty(m.nb, dtype=np.int64)
        _nearest_active(m.body_parent, self.active, self._near)
        front_of = np.full(t.n_nodes, -1, dtype=np.int64)
        _front_of_nodes(par, front, front_of)
        self._front_of = front_of
        self._front_index = np.full(t.n_nodes, -1, dtype=np.int64)
        self._front_index[self._front] = np.arange(self._front.size)
        self._f0 = np.zeros((self._front.size, 6))
        self._Vw = np.zeros((m.nb, 6))

    def sync_frames(self, q) -> None:
        """Set the configuration, which differs from the current one only on active joints,
        and bring the principal joint transforms and hierarchical frames of the active nodes
        up to date (O(N_A)), so that :meth:`body_pose` is exact at ``q`` (forces in world
        coordinates are evaluated between steps). Requires :meth:`prepare_region`."""
        ma, t, d = self.ma, self.tree, self.dca
        self.q[:] = q
        _frames_pass(self._anodes, self._anodes.size, ma.jtype, ma.qadr, ma.Xtree_rot,
                     ma.axis, ma.Xtree_E, ma.Xtree_r, self.q, d.H_E, d.H_r, t.node_A,
                     t.node_B, t.node_joint, t.node_nh, t.node_hoff, t.node_ca, t.node_cb,
                     self.node_pslot, self.Xup_E, self.Xup_r, self.XJ_E, self.XJ_r,
                     self.Tp_E, self.Tp_r, self.Tup_E, self.Tup_r, self._Xr, self._xq)

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
        ma, t, d = self.ma, self.tree, self.dca
        self.sync_frames(q)
        self.qd[:] = qd
        self.tau[:] = 0.0 if tau is None else tau
        na = self._anodes.size
        _active_velocities(self._ajoints, self._ajoints.size, ma.parent, self._near, ma.vadr,
                           ma.jnv, ma.S, self.qd, d.H_E, d.H_r, t.leaf_of_body,
                           t.node_parent, self.node_pslot, t.node_hoff, d.handle_x,
                           self.Tup_E, self.Tup_r, self._Xr, self._xq, self._Vw, self.c,
                           self.c_al)
        self._f0[:] = 0.0
        if f_ext is not None:
            f_ext = np.ascontiguousarray(f_ext, dtype=np.float64)
            idx = (np.flatnonzero(np.any(f_ext != 0.0, axis=1)) if bodies is None
                   else np.asarray(bodies, dtype=np.int64))
            _forces_on_front(idx, idx.size, f_ext, self._front_of, self._front_index,
                             self._front_body, t.leaf_of_body, t.node_parent,
                             self.node_pslot, t.node_hoff, d.handle_x, d.H_E, d.H_r,
                             self.Tup_E, self.Tup_r, self._Xr, self._xq, self._f0)
        _front_biases(self._front, self._front.size, self._front_body, self._near, self._f0,
                      self._Vw, d.H_E, d.H_r, t.leaf_of_body, t.node_parent, self.node_pslot,
                      t.node_nh, t.node_hoff, d.node_ooff, d.handle_x, self.n_slots,
                      self.Tup_E, self.Tup_r, self.Phi, self._T, self._Xr, self._xq, self.bh)
        self._update(self._anodes, na, metric=False)
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
        m, ma, d = self.model, self.ma, self.dca
        _dca_kinematics(ma.parent, ma.jtype, ma.qadr, ma.vadr, ma.jnv, ma.Xtree_rot, ma.axis,
                        ma.Xtree_E, ma.Xtree_r, ma.S, d.H_E, d.H_r, self._gravity, self.q,
                        self.qd, False, self.Xup_E, self.Xup_r, self.XJ_E, self.XJ_r, self.v,
                        self.c, self.c_al, self.b_world)
        p = np.empty(m.nv)
        _generalized_momentum(ma.parent, ma.vadr, ma.jnv, ma.S, self.Xup_E, self.Xup_r,
                              ma.mass, ma.h, ma.Ibar, self.v, np.empty((m.nb, 6)), p)
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
def _front_of_nodes(node_parent, front, front_of):
    """front_of[i] = the rigid-front node containing node i (itself if in the front, -1
    inside the active region); reverse post-order visits parents first."""
    for i in range(node_parent.shape[0] - 1, -1, -1):
        if front[i]:
            front_of[i] = i
        elif node_parent[i] >= 0:
            front_of[i] = front_of[node_parent[i]]


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
