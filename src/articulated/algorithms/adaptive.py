"""Adaptive dynamics of articulated bodies (Redon, Galoppo & Lin 2005).

Adaptive dynamics of articulated bodies (Redon, Galoppo & Lin 2005, RGL): hybrid bodies,
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

from ..model import model_floats_size
from ._inputs import check_f_ext
from .bundles import (N_AJOINTS, N_ANODES, N_FRONT, REGION_STAMP, STAT_BAD, Coefficients,
                      CompositeInertias, DCAInputs, HybridArgs, HybridState, Kinematics,
                      PassiveTensors, PoseCache, ReducedCache, ReducedTree, RegionArgs,
                      RegionBuffers, RegionPrep, RegionScratch, RegionState, RegionTopology,
                      VelocityMetric)
from .engine import DCAEngine
from .handles import _dca_kinematics
from .hybrid import (generalized_momentum, hybrid_frames, hybrid_step, leaf_tensors,
                     prepare_region, velocity_metric, velocity_traversal)
from .passive import K
from .reduced import reduced_step
from .region import ERR_FULL, region_update


class AdaptiveDynamics(DCAEngine):
    """Hybrid-body forward dynamics and the adaptive active-region update (RGL Sec. 4-5).

    Parameters
    ----------
    model : Model
    assembly : "balanced" | "serial" | sequence of joints | AssemblyTree
    weights : (nb, 6, 6) or callable, optional
        SPD acceleration-metric weights ``A_i`` (identity); a callable ``weights(q) -> (nb,
        6, 6)`` gives configuration-dependent weights (RGL Sec. 5.2: ``A_i`` may depend on
        ``q_i``), evaluated at every :meth:`region_update` (a rigidified joint's weight must
        depend on its own ``q_i`` only: its passive node's tensors keep the weight it had
        when it was rigidified).
    velocity_weights : (nb, 6, 6) or callable, optional
        SPD velocity-metric weights ``V_i`` (identity), likewise.

    Notes
    -----
    Attributes (after :meth:`set_state`): ``q``, ``qd``, ``tau``, ``f_ext`` (the state),
    ``active`` (nb,) bool (the active region; all True = fully articulated), and everything
    of :class:`~articulated.algorithms.engine.DCAEngine` (coefficients with
    the velocity terms of RGL eqs. 2-3).

    Memory: O(n) (the hybrid and the fully articulated coefficient sets and the
    linear-coefficient tensors of :mod:`articulated.algorithms.passive`).
    """

    def __init__(self, model, assembly="balanced", *, weights=None, velocity_weights=None):
        self._weight_fns = (weights if callable(weights) else None,
                            velocity_weights if callable(velocity_weights) else None)
        q0 = model.neutral()
        super().__init__(model, assembly, weights=weights(q0) if callable(weights) else weights)
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
        m, t = self.model, self.tree
        nb, z = m.nb, np.zeros
        zl = np.zeros_like
        self._F = Coefficients(self.Phi.copy(), zl(self.bh), self.Psi.copy(), zl(self.ph),
                               zl(self.eta), self.W.copy(), self.P.copy(), self.D.copy(),
                               zl(self.beta), zl(self.gamma), zl(self.R))
        self._all_active = np.ones(nb, dtype=np.bool_)
        self._Bt = z((t.n_slots, 6, K))
        self._Pt = z((t.n_slots, 6, K))
        self._G = z((t.n_nodes, K, K))
        self._betaT = z((nb, 6, K))
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
        # reference frames of the tensors (RGL Sec. 6.2 leaves the frame free): at first
        # every node's own principal-handle frame, ids unique (negative); ids >= 0 are
        # given by tensorize_nodes
        self._ref_E = np.zeros((t.n_nodes, 3, 3))
        self._ref_E[:] = np.eye(3)
        self._ref_r = z((t.n_nodes, 3))
        self._ref_id = -1 - np.arange(t.n_nodes, dtype=np.int64)
        self._nref = np.zeros(1, dtype=np.int64)
        leaves = np.flatnonzero(t.node_body >= 0).astype(np.int64)
        self._leaf_scratch = (z((nb, 6)), z((nb, 6)), z((max(int(t.max_handles), 1), 6)),
                              z((0, 6)), self._Xr, self._xq, z((1, 6, 6)))
        leaf_tensors(leaves, self._model_bundle(), self._leaf_scratch, self._passive_tensors())
        self._bk = self._region_buffers()
        self._Ic = np.zeros((t.n_nodes, 21))          # composite inertias of rigid nodes
        self._Ic_epoch = np.full(t.n_nodes, -1, dtype=np.int64)
        self._Vw = np.zeros((nb, 6))       # rows written before they are read
        self._hargs = self._rargs = self._redargs = None
        self._split = np.zeros(1, dtype=np.bool_)   # RegionScratch.split (the simulator's)
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
        """Set the state and the active region and recompute every node's coefficients.

        With the velocity terms; O(n).

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
        _dca_kinematics(*self._kinematics_args())
        self._bk.counts[REGION_STAMP] += 1   # every frame may have moved: rebuild the reduced tree
        self._bk.epoch[:] += 1            # and every node's coefficients: caches are stale
        self._update(self._all, self.tree.n_nodes, metric)

    def forward_dynamics(self, q, qd, tau=None, f_ext=None, active=None) -> np.ndarray:
        """Return the joint accelerations of the hybrid body (RGL Sec. 4.3).

        Exact for the body whose rigidified joints are welded, zero on rigidified joints.

        Returns qdd (nv,) float64 [rad/s^2 | m/s^2]. Raises as :meth:`set_state`.
        With ``active=None`` this is the full forward dynamics (equal to ABA's).
        """
        self.set_state(q, qd, tau, f_ext, active)
        return self.solve(0.0, "absolute_linkage").qdd

    # --------------------------------------------------------------- RGL Sec. 5
    def acceleration_update_region(self, eps_acc: float = 0.0, max_nodes: int | None = None):
        """Select the acceleration-update region by the acceleration metric (RGL Sec. 5.3.1).

        Convert to the fully articulated state and run the partial back-substitution by
        priority of the acceleration metric; stop when the remaining metric ``sum A(C)``
        over the queue is at most ``eps_acc`` (the paper's threshold on the acceleration
        metric value, not its square root) or after ``max_nodes`` joints.

        Returns the joints of the acceleration update region (int64 array, the order of
        processing). Leaves the solver in the fully articulated state.
        """
        self.active[:] = True
        self._refresh()
        eps = math.sqrt(max(float(eps_acc), 0.0))
        res = self.solve(eps, "absolute_linkage", max_nodes, copy=False)
        return res.joints.copy()

    def velocity_metric(self) -> np.ndarray:
        """Return the velocity metric (n_nodes,) of every node (RGL Sec. 5.2).

        ``V(C) = sum_{i in C} qd_i^T V_i qd_i``, computed bottom-up as in RGL Sec. 5.4.1.
        """
        t, ma = self.tree, self.ma
        V = np.zeros(t.n_nodes)
        velocity_metric(self._all, t.n_nodes, t.node_A, t.node_B, t.node_joint, ma.vadr, ma.jnv,
                         self.Vw, self.qd, V)
        return V

    def new_active_region(self, eps_vel: float = 0.0, max_active=None):
        """Select the new active region by the velocity metric (RGL Sec. 5.4.1).

        The joints visited by a top-down traversal by priority of the velocity metric,
        stopped when the metric left in the queue is at most ``eps_vel`` (> 0) or after
        ``max_active`` joints; a (nb,) bool mask (a subtree containing the root). With
        neither criterion the current active region is kept.

        ``max_active`` is one budget N_A for the whole model (int) or one budget per tree of
        the model (sequence of ints, the trees in the order of their root bodies, i.e. of
        ``np.flatnonzero(model.body_parent < 0)``): RGL Fig. 1 gives each character of a
        crowd its own joint budget. With per-tree budgets ``eps_vel`` applies to each tree's
        queue separately. Raises ValueError for a budget sequence of the wrong length.
        """
        t = self.tree
        keep, budgets, per_tree = self._velocity_budgets(eps_vel, max_active)
        if keep:
            return self.active.copy()       # no criterion: keep the whole (transient) region
        V = self.velocity_metric()
        new = np.zeros(self.model.nb, dtype=np.bool_)
        for k in range(budgets.size):
            roots = t.roots[k:k + 1] if per_tree else t.roots
            velocity_traversal(roots, V, t.node_A, t.node_B, t.node_joint, float(eps_vel),
                                int(budgets[k]), new, self._hk, self._hn)
        return new

    # --------------------------------------------------------------- RGL Sec. 5.1 + 6
    def region_update(self, q, qd, tau, f_ext, h, *, eps_acc=0.0, max_update=None, eps_vel=0.0,
                      max_active=None, bodies=None, impulse_columns=2):
        """Run the active-region update of RGL Sec. 5.1 from the current hybrid state.

        The update touches only the active region, its rigid front, the force-update region
        and the nodes the acceleration queue visits (RGL Sec. 6; passive nodes through their
        linear-coefficient tensors, :mod:`articulated.algorithms.passive`), in one compiled
        kernel (:func:`articulated.algorithms.region.region_update_kernel`):

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
           that became passive, the new region's bookkeeping.

        Requires :meth:`prepare_region` after the last change of the active region made
        outside this method.

        Parameters
        ----------
        q, qd, tau : (nq,), (nv,), (nv,) float64
            The state; ``q`` differs from the last update's only on active joints, ``qd``
            is zero on rigidified joints.
        f_ext : (nb, 6) float64
            External forces, body coordinates [N m; N].
        h : float
            Time step [s].
        bodies : sequence of int, optional
            The bodies with external forces (None: scanned from ``f_ext``).

        Returns
        -------
        qd_new : (nv,) float64
            New joint velocities.
        U : ndarray of int
            Joints of the acceleration update region.
        rigidified : ndarray of int
            Joints rigidified by this update. The solver is left in the new hybrid state
            (``self.active``).

        Raises
        ------
        ValueError
            For a non-finite acceleration (naming the joint) or a budget sequence of the
            wrong length.
        """
        self.q[:] = q
        self.qd[:] = qd
        self.tau[:] = tau
        self.f_ext[:] = f_ext
        self._evaluate_weights(self.q)
        if bodies is None:
            bodies = np.flatnonzero(np.any(self.f_ext != 0.0, axis=1))
        res = self._region_kernel(h, self._region_criteria(eps_acc, max_update, eps_vel,
                                                           max_active, impulse_columns),
                                  np.asarray(bodies, dtype=np.int64))
        nU, nrig = res[0], res[1]
        buf = self._rargs.buf
        return self.qd.copy(), buf.U[:nU].copy(), buf.rigid[:nrig].copy()

    def _region_criteria(self, eps_acc, max_update, eps_vel, max_active, columns):
        """The scalar arguments of :func:`region_update_kernel` after ``h``: ``(eps,
        budget_u, eps_vel, keep_region, budgets, per_tree, columns)``."""
        keep, budgets, per_tree = self._velocity_budgets(eps_vel, max_active)
        return (math.sqrt(max(float(eps_acc), 0.0)), -1 if max_update is None else int(max_update),
                float(eps_vel), keep, budgets, per_tree, int(columns))

    def _region_kernel(self, h, criteria, bodies):
        """Run :func:`~articulated.algorithms.region.region_update` with ``criteria``
        (:meth:`_region_criteria`); raises ValueError naming the joint of a non-finite
        acceleration. Returns the kernel's counts."""
        args = self._region_args(criteria[6])
        res = region_update(float(h), criteria, bodies, self.hybrid_args(),
                            self._reduced_args(), args)
        nU, nrig, nreg, n_eval, nt, err, joint = res
        if err:
            what = "fully articulated" if err == ERR_FULL else "hybrid-body"
            raise ValueError(f"the {what} acceleration is not finite at joint "
                             f"{self.model.joint_name[joint]!r}")
        self.passive_stats = dict(updated=int(nreg), evaluated=int(n_eval), tensorized=int(nt))
        return res

    def _velocity_budgets(self, eps_vel, max_active):
        """``(keep_region, budgets (int64), per_tree)`` of the velocity traversal
        (:meth:`new_active_region`)."""
        roots = self.tree.roots
        keep = eps_vel <= 0.0 and max_active is None
        if max_active is None or np.ndim(max_active) == 0:
            b = -1 if max_active is None else int(max_active)
            return keep, np.array([b], dtype=np.int64), False
        budgets = np.asarray(max_active, dtype=np.int64)
        if budgets.shape != roots.shape:
            raise ValueError(f"max_active per tree needs {roots.size} budgets (one per "
                             f"tree of the model), got shape {budgets.shape}")
        return keep, budgets, True

    def _passive_tensors(self):
        """The :class:`~articulated.algorithms.bundles.PassiveTensors` of this solver's
        passive nodes (lazy evaluation on, RGL Sec. 6.2)."""
        return PassiveTensors(True, self._fresh, self._fresh_list, self._nfresh,
                              self._vnode, self._mv, self._Bt, self._Pt, self._G,
                              self._betaT, self._ref_E, self._ref_r, self._ref_id, self._nref)

    def _region_args(self, columns):
        """The :class:`~articulated.algorithms.bundles.RegionArgs` of
        :func:`region_update_kernel` (built once; the K^R buffers sized for ``columns``
        rigidified joints)."""
        m, t, ma, d = self.model, self.tree, self.ma, self.dca
        nd = min(6 * max(int(columns), 1), max(m.nv, 1))
        if getattr(self, "_rargs", None) is not None and self._rargs.buf.Kb.shape[1] >= nd:
            return self._rargs
        nn, nb, nv = t.n_nodes, m.nb, m.nv
        i64 = lambda n: np.zeros(n, dtype=np.int64)
        F = self._F
        comp = CompositeInertias(t.node_A, t.node_B, t.node_joint, t.node_body, t.node_hoff,
                                 self.node_pslot, d.handle_x, d.H_E, d.H_r, self.Tup_E,
                                 self.Tup_r, m.body_mass, m.body_h, m.body_Ibar, self._Ic,
                                 self._Ic_epoch, i64(nn), np.zeros((1, 3, 3)), np.zeros((1, 3)))
        prep = RegionPrep(t.node_joint, t.node_parent, t.node_hoff, t.handle_joint, t.handle_side,
                          m.body_parent, t.node_nh, self.Tp_E, self.Tp_r, comp)
        # the frames are those of the hybrid step's kinematics at the same configuration
        fupd = self._node_args(True, F, self._all_active, frames=False)
        fsolve = self._solve_args(F, self._all_active, self._passive_tensors())
        tens = (self._MX, self._M, self._S, self._Gs, self._leaf_scratch)
        topo = RegionTopology(m.dof_body.astype(np.int64), t.node_of_joint.astype(np.int64),
                              t.leaf_of_body, t.roots, t.node_parent, t.node_joint, t.node_A,
                              t.node_B, ma.vadr, ma.jnv)
        nodes_bool = lambda n: np.zeros(n, dtype=np.bool_)
        buf = RegionScratch(self._mark, self._dirty, i64(nn), i64(max(nn, nv)), self._region,
                            self._in_region, self._fresh, self._fresh_list, self._nfresh,
                            i64(nb), i64(nb), nodes_bool(nb), nodes_bool(nb), np.zeros(nn),
                            np.zeros((3, nd, nd)), np.zeros(nd), np.zeros(nv), np.zeros(nv),
                            i64(nv), i64(nn), np.zeros(nv), self._split)
        st = RegionState(self.q, self.qd, self.tau, self.f_ext, self._qdd, self.active,
                         self._tau_T, self._gravity, self.c, self.c_al, self._stats,
                         self._ncomp, self._computed, self._Vw)
        self._rargs = RegionArgs(self._bk, prep, fupd, fsolve, tens,
                                 VelocityMetric(self.Vw, self._hk, self._hn), topo, buf, st)
        return self._rargs

    def _kinematics_args(self):
        """The bundles ``(model, inputs, kinematics)`` of
        :func:`articulated.algorithms.handles._dca_kinematics` for this solver's state (every
        body's transforms, velocities and velocity products; the solver's own gravity)."""
        return (self.dca.kernel_model._replace(gravity=self._gravity),
                DCAInputs(self.q, self.qd, self.tau, self.f_ext, False),
                Kinematics(self.Xup_E, self.Xup_r, self.XJ_E, self.XJ_r, self.v, self.c,
                           self.c_al, self.b_world))

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
        (:func:`generalized_momentum`; kinematics refreshed for every body)."""
        m, ma = self.model, self.ma
        _dca_kinematics(*self._kinematics_args())
        p = np.empty(m.nv)
        generalized_momentum(ma.parent, ma.vadr, ma.jnv, ma.S, self.Xup_E, self.Xup_r, ma.mass,
                              ma.h, ma.Ibar, self.v, np.empty((m.nb, 6)), p)
        return p

    # --------------------------------------------------------------- hybrid steps
    @property
    def _n_computed(self):
        """Joints the last back-substitution computed (kept in a one-element array that the
        compiled kernels update)."""
        return int(self._ncomp[0])

    @_n_computed.setter
    def _n_computed(self, n):
        if "_ncomp" not in vars(self):
            self._ncomp = np.zeros(1, dtype=np.int64)
        self._ncomp[0] = n

    def _region_buffers(self):
        """The :class:`~articulated.algorithms.bundles.RegionBuffers` ``bk`` of
        :mod:`articulated.algorithms.hybrid`, allocated once."""
        nn, nb = self.tree.n_nodes, self.model.nb
        z = lambda *shape: np.zeros(shape, dtype=np.int64)
        return RegionBuffers(np.zeros(nn, dtype=np.bool_), z(nn), z(nn), z(nn), z(nb), z(nb),
                             z(nn), z(nn), np.zeros((nn, 6)), np.zeros((nn, 6, 6)), z(4),
                             z(nn), np.full(nn, -1, dtype=np.int64))

    # views of the current region (counts from the last bookkeeping)
    _anodes = property(lambda self: self._bk.anodes[:self._bk.counts[N_ANODES]])
    _front = property(lambda self: self._bk.front[:self._bk.counts[N_FRONT]])
    _front_body = property(lambda self: self._bk.front_body[:self._bk.counts[N_FRONT]])
    _ajoints = property(lambda self: self._bk.ajoints[:self._bk.counts[N_AJOINTS]])
    _near = property(lambda self: self._bk.near)
    _f0 = property(lambda self: self._bk.f0[:self._bk.counts[N_FRONT]])

    def prepare_region(self) -> None:
        """Prepare the bookkeeping of the current active region (RGL Sec. 4.1).

        What :meth:`hybrid_accelerations` needs: the active nodes, the rigid front (rigid
        nodes whose parent is active, leaves included), the body carrying each front node's
        handle 0, the nearest active joint on every body's path, the front node holding
        every leaf, and the rigid-front inertias. O(n) integer pass; run after the active
        region changes (the coefficients must be those of the current hybrid body, e.g.
        after :meth:`set_state`).
        """
        self._bk.epoch[:] += 1            # coefficients may have changed: caches are stale
        prepare_region(self.active, self._region_args(2).prep, self._bk)

    def hybrid_args(self):
        """Return the bundle of arguments of the hybrid-step kernels (built once).

        A :class:`~articulated.algorithms.bundles.HybridArgs` (built once; full buffers, the
        region's lists and counts are in ``self._bk``): the
        :class:`~articulated.algorithms.bundles.PoseCache`, the node update and
        back-substitution bundles of the hybrid coefficient set and the
        :class:`~articulated.algorithms.bundles.HybridState`; the kernels take them by
        reference (:func:`articulated._byref.byref_each`). Shared by
        :meth:`hybrid_accelerations`,
        :func:`articulated.algorithms.region.region_update_kernel` and the compiled step
        loop of :class:`articulated.simulation.adaptive.AdaptiveSimulator`.
        """
        if self._hargs is None:
            ma, t, d = self.ma, self.tree, self.dca
            Xr, xq = self._Xr, self._xq
            bk = self._bk
            near, front_of, front_index, front_body = (bk.near, bk.front_of, bk.front_index,
                                                       bk.front_body)
            f0, I0 = bk.f0, bk.I0
            nn, nb = t.n_nodes, self.model.nb
            pose = PoseCache(t.leaf_of_body, t.node_parent, self.node_pslot, t.node_hoff,
                             d.handle_x, d.H_E, d.H_r, self.Tup_E, self.Tup_r, front_of,
                             np.zeros((nn, 3, 3)), np.zeros((nn, 3)), np.zeros((nb, 3, 3)),
                             np.zeros((nb, 3)), np.full(nb, -1, dtype=np.int64),
                             np.zeros(nb, dtype=np.int64), bk.epoch, Xr, xq)
            state = HybridState(ma.parent, ma.S, self.qd, near, self._Vw, self.c, front_of,
                                front_index, front_body, f0, I0)
            self._hargs = HybridArgs(pose, self._node_args(False, frames=False),
                                     self._solve_args(), state)
        return self._hargs

    def _reduced_args(self):
        """The :class:`~articulated.algorithms.bundles.ReducedTree` of
        :mod:`articulated.algorithms.reduced` (built once)."""
        if self._redargs is None:
            m, ma = self.model, self.ma
            nb, nv, nn = m.nb, m.nv, self.tree.n_nodes
            self._redargs = ReducedTree(
                np.zeros(7 * nb, dtype=np.int64), np.zeros(model_floats_size(nb, nv)),
                np.zeros_like(m.data(np.float64).buf), np.full(nb, -1, dtype=np.int64),
                np.full(1, -1, dtype=np.int64), ma.parent, ma.jtype, ma.qadr, ma.vadr,
                ma.jnv, m.jnt_nq.astype(np.int64), m.body_subtree_end.astype(np.int64),
                ma.axis, ma.Xtree_E, ma.Xtree_r, ma.S, self._gravity, self.q, self.qd,
                self.tau, self._qdd, np.zeros(m.nq), np.zeros(nv), np.zeros(nv),
                np.zeros((nb, 6)), np.zeros((4, 3, 3)), np.zeros((4, 3)), self._Vw,
                ReducedCache(np.full(nn, -1, dtype=np.int64), np.zeros((nn, 13)),
                             np.zeros((nn, 3, 3)), np.zeros((nn, 3)),
                             np.full(nb, -1, dtype=np.int64), np.full(nb, -1, dtype=np.int64),
                             np.zeros((nb, 3, 3)), np.zeros((nb, 3))))
        return self._redargs

    def sync_frames(self, q) -> None:
        """Set a configuration that differs from the current one only on active joints.

        Brings the principal joint transforms and hierarchical frames of the active nodes up
        to date (O(N_A)), so that :meth:`body_pose` is exact at ``q`` (forces in world
        coordinates are evaluated between steps). Requires :meth:`prepare_region`.
        """
        self.q[:] = q
        hybrid_frames(self._bk, self.hybrid_args())

    def hybrid_accelerations(self, q, qd, tau, f_ext=None, bodies=None, *,
                             method: str = "reduced") -> np.ndarray:
        """Compute forward dynamics of the hybrid body (RGL Sec. 4.3) near the last update.

        The state differs from the one of the last update only on active joints. First the
        frames and principal transforms of the active nodes and the world velocities of the
        active joints' bodies (the hierarchical frames that poses and forces are read from);
        then

        * ``method="reduced"`` (default, what the simulator's steps use): ABA on the
          reduced tree of the hybrid body, one rigid body per rigid-front node
          (:mod:`articulated.algorithms.reduced`; rebuilt after a region change);
        * ``method="dca"``: RGL's multilevel algorithm: rigid-front biases from each front
          node's rigid inertia and velocity, active-node coefficients (no metric), exact
          back-substitution over the active region.

        Both are exact and agree to rounding. Cost O(N_A log n + N_F log n) for N_F bodies
        with external forces (``bodies``: their indices, or None to scan ``f_ext``).

        Returns the solver's qdd buffer (nv,) (zero on rigidified joints; valid until the
        next call). Raises ValueError for an unknown method or naming the joint of a
        non-finite acceleration. Requires :meth:`prepare_region` after the last
        active-region change.
        """
        if method not in ("reduced", "dca"):
            raise ValueError(f"unknown method {method!r}; expected 'reduced' or 'dca'")
        args = self.hybrid_args()
        self.q[:] = q
        self.qd[:] = qd
        self.tau[:] = 0.0 if tau is None else tau
        if f_ext is None:
            idx = np.zeros(0, dtype=np.int64)
            f_ext = self.f_ext
        else:
            f_ext = np.ascontiguousarray(f_ext, dtype=np.float64)
            idx = (np.flatnonzero(np.any(f_ext != 0.0, axis=1)) if bodies is None
                   else np.asarray(bodies, dtype=np.int64))
        if method == "dca":
            self._n_computed = hybrid_step(self._bk, idx.size, idx, f_ext, args, self._n_computed,
                                           self._stats, True)
        else:
            reduced_step(self._bk, idx.size, idx, f_ext, args, self._reduced_args(), self._stats)
            self._qdd[~self.active[self.model.dof_body]] = 0.0
        if self._stats[STAT_BAD] >= 0:
            raise ValueError(f"the hybrid-body acceleration is not finite at joint "
                             f"{self.model.joint_name[int(self._stats[STAT_BAD])]!r}")
        return self._qdd

    def impulse_response(self, joints, impulses) -> np.ndarray:
        """Return the velocity change ``M_T^-1 G^T Q`` of the hybrid body for joint impulses.

        ``Q`` [N m s | N s] are impulses on ``joints`` (the hybrid body's own inverse
        inertia; used for the rigidification impulses). Linear in Q: computed as the
        difference of two exact hybrid solves with the joint forces changed along the
        joints' paths only.
        """
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
        """Return the velocity change of the rigidification impulses, in O(n).

        One solve instead of O(d_R) solves: impulses act on the rigidified joints only, so
        the generalized momentum ``p = M qd`` of the kept joints is unchanged and the new
        velocities are ``qd'_K = M_KK^-1 p_K`` (the same M-orthogonal projection as RGL Sec.
        5.4.2). ``p`` from the body momenta (:func:`generalized_momentum`), ``M_KK^-1 p_K``
        by one hybrid solve (active = ``keep``) at rest without gravity or external forces.
        Returns ``dqd`` (nv,) for the solver's current ``q``, ``qd``; leaves the solver's
        coefficients in that auxiliary state (call :meth:`set_state` next).
        """
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
        """Compute the rigidification impulses of RGL Sec. 5.4.2.

        Joint impulses on the joints ``rigidify`` (their dofs ``R``) that
        cancel their velocities on the current (transient) hybrid body: ``K^R Q^R = -qd^R``,
        ``K^R`` from unit test impulses. Returns the velocity change ``dqd`` (nv,) (zero
        outside the active region; ``qd + dqd`` is zero on ``R``). Kinetic energy does not
        increase: ``dqd`` is the M-orthogonal projection removing the R-components.
        """
        m = self.model
        rigidify = [int(j) for j in rigidify if m.jnt_nv[j] > 0]
        if not rigidify:
            return np.zeros(m.nv)
        dofs = np.concatenate([np.arange(m.jnt_vadr[j],
                                         m.jnt_vadr[j] + m.jnt_nv[j]) for j in rigidify])
        K = np.empty((dofs.size, dofs.size))
        for c in range(dofs.size):
            e = np.zeros(dofs.size)
            e[c] = 1.0
            K[:, c] = self.impulse_response(rigidify, e)[dofs]
        K = 0.5 * (K + K.T)
        Q = np.linalg.solve(K, -self.qd[dofs])
        return self.impulse_response(rigidify, Q)
