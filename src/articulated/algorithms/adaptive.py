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

Status: every step recomputes the coefficients of all nodes (O(n) per step, like the DCA):
the sub-linear coefficient updates of RGL Sec. 6 (rigid-node biases from the passive front,
relative velocities, the linear-coefficient tensors of Theorems 3-4) are not implemented
yet, so the cost does not yet scale with N_A.
"""

from __future__ import annotations

import math

import numpy as np

from ._inputs import check_f_ext
from .dca import _dca_kinematics
from .quasistatics import AdaptiveQuasiStatics


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

    def _refresh(self):
        """Kinematics (transforms, body velocities, velocity products) and every node."""
        ma, d = self.ma, self.dca
        _dca_kinematics(ma.parent, ma.jtype, ma.qadr, ma.vadr, ma.jnv, ma.Xtree_rot, ma.axis,
                        ma.Xtree_E, ma.Xtree_r, ma.S, d.H_E, d.H_r, ma.gravity, self.q,
                        self.qd, False, self.Xup_E, self.Xup_r, self.XJ_E, self.XJ_r, self.v,
                        self.c, self.c_al, self.b_world)
        self._update(self._all, self.tree.n_nodes)

    def forward_dynamics(self, q, qd, tau=None, f_ext=None, active=None) -> np.ndarray:
        """Joint accelerations of the hybrid body (RGL Sec. 4.3): exact for the body whose
        rigidified joints are welded, zero on rigidified joints.

        Returns qdd (nv,) float64 [rad/s^2 | m/s^2]. Raises as :meth:`set_state`.
        With ``active=None`` this is the full forward dynamics (equal to ABA's)."""
        self.set_state(q, qd, tau, f_ext, active)
        return self.solve(0.0, "absolute_linkage").qdd

    def _hybrid_qdd(self):
        """Exact accelerations of the current hybrid body (internal buffer, O(N_active))."""
        return self.solve(0.0, "absolute_linkage", copy=False).qdd

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
        m, t = self.model, self.tree
        per_joint = np.zeros(m.nb)
        for j in np.flatnonzero(m.jnt_nv > 0):
            va, d = m.jnt_vadr[j], m.jnt_nv[j]
            x = self.qd[va:va + d]
            per_joint[j] = x @ self.Vw[j, :d, :d] @ x
        V = np.zeros(t.n_nodes)
        for i in range(t.n_nodes):          # post-order: children first
            J = t.node_joint[i]
            if J >= 0:
                V[i] = per_joint[J] + V[t.node_B[i]] + (V[t.node_A[i]] if t.node_A[i] >= 0
                                                        else 0.0)
        return V

    def new_active_region(self, eps_vel: float = 0.0, max_active: int | None = None):
        """RGL Sec. 5.4.1: the joints visited by a top-down traversal by priority of the
        velocity metric, stopped when the metric left in the queue is at most ``eps_vel``,
        after ``max_active`` joints, or when no joint left in the queue moves; a (nb,) bool
        mask (a subtree containing the root)."""
        import heapq

        t = self.tree
        V = self.velocity_metric()
        new = np.zeros(self.model.nb, dtype=np.bool_)
        heap = [(-V[r], int(r)) for r in t.roots]
        heapq.heapify(heap)
        left = float(sum(V[t.roots]))
        count = 0
        while heap:
            if -heap[0][0] <= 0.0 or (max_active is not None and count >= max_active):
                break                       # nothing left moves, or the budget is spent
            if left <= eps_vel:
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

    def impulse_response(self, joints, impulses) -> np.ndarray:
        """Velocity change ``M_T^-1 G^T Q`` of the current hybrid body for joint impulses
        ``Q`` [N m s | N s] on ``joints`` (the hybrid body's own inverse inertia; used for
        the rigidification impulses). Linear in Q: computed as the difference of two exact
        hybrid solves with the joint forces changed along the joints' paths only."""
        m = self.model
        base = self._hybrid_qdd().copy()
        dofs = np.concatenate([np.arange(m.jnt_vadr[j], m.jnt_vadr[j] + m.jnt_nv[j])
                               for j in joints]) if len(joints) else np.zeros(0, np.int64)
        tau0 = self.tau.copy()
        tau1 = tau0.copy()
        tau1[dofs] += impulses
        self.update(tau=tau1, tau_joints=joints)
        out = self._hybrid_qdd().copy() - base
        self.update(tau=tau0, tau_joints=joints)
        return out

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
