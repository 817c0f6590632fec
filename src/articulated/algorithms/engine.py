"""The DCA engine: a divide-and-conquer articulated body with kept coefficients.

The DCA engine: a divide-and-conquer articulated body whose node coefficients are kept
between calls, updated lazily and solved partially.

:class:`DCAEngine` owns the DCA of a model (:class:`articulated.algorithms.dca_solver.DCA`),
every node's coefficients (RL eqs. 1-2 and 9), the hierarchical frames (RL Sec. 5.1), the
scratch of the kernels, and the named bundles the kernels take
(:mod:`articulated.algorithms.bundles`), built here and nowhere else. Error-bounded
quasi-statics (:class:`articulated.algorithms.quasistatics.AdaptiveQuasiStatics`) and
adaptive dynamics (:class:`articulated.algorithms.adaptive.AdaptiveDynamics`) are both
engines; the kernels are in :mod:`~articulated.algorithms.node_update`,
:mod:`~articulated.algorithms.back_substitution`, :mod:`~articulated.algorithms.metric`,
:mod:`~articulated.algorithms.handles`, :mod:`~articulated.algorithms.blocks` and
:mod:`~articulated.algorithms.heap`.

Sources: Redon & Lin (2005) (RL), Sec. 3-5; Redon, Galoppo & Lin (2005) (RGL), Sec. 4-6.
"""

from __future__ import annotations

import math

import numpy as np

from ..assembly import build_assembly
from ..model import Model
from ..spatial import xform_dense
from ._inputs import check_f_ext
from .back_substitution import partial_back_substitution
from .bundles import (N_STATS, STAT_BAD, STAT_BOUND, STAT_N, STAT_TOTAL, Coefficients, NodeArgs,
                      NodeFrames, NodeInputs, NodeModel, PassiveTensors, Scratch, SolveArgs,
                      SolveBuffers)
from .dca_solver import DCA
from .handles import _leaf_frames, _world_pose
from .metric import ERROR_MEASURES
from .node_update import _dirty_nodes, update_nodes
from .passive import K


class DCAEngine:
    """A DCA on a balanced assembly tree with every node's coefficients kept between calls
    (RL Sec. 3-5): full and lazy coefficient updates, total-acceleration equations,
    partial back-substitution under an error bound or a joint budget, hierarchical frames.
    The base of :class:`~articulated.algorithms.quasistatics.AdaptiveQuasiStatics` (velocities
    zero at every instant) and :class:`~articulated.algorithms.adaptive.AdaptiveDynamics`
    (hybrid bodies).

    Parameters
    ----------
    model : Model (float64)
    assembly : "balanced" | "serial" | sequence of joints | AssemblyTree
    weights : (nb, 6, 6) or None
        SPD joint weights ``A_i`` of the acceleration metric (RGL Sec. 5.2), the ``d_i x
        d_i`` upper-left block used; identity if None.

    Raises
    ------
    ValueError
        For invalid weights (shape, non-finite, not symmetric positive definite,
        naming the joint).

    Notes
    -----
    Memory O(n) with a bounded handle count.
    """

    def __init__(self, model: Model, assembly="balanced", *, weights=None):
        if not isinstance(model, Model):
            raise TypeError(f"model must be an articulated.Model, got {type(model).__name__}")
        self.model = model
        dca = self.dca = DCA(model, assembly if not isinstance(assembly, str)
                             else build_assembly(model, assembly))
        t = self.tree = dca.tree
        nb, nv = model.nb, model.nv
        self.ma = dca.ma
        self.Aw = self._weights(weights)
        self.n_slots = t.n_slots
        n_off = dca.Po.shape[0]
        self.Phi = np.zeros((t.n_slots + n_off, 6, 6))
        self.Psi = np.zeros((t.n_slots + n_off, 6, 6))
        # constant leaf blocks from the DCA's leaf pass (same off-diagonal layout)
        leaf = np.flatnonzero(t.node_body >= 0)
        nh = t.node_nh[leaf]
        k = np.arange(int(nh.sum())) - np.repeat(np.cumsum(nh) - nh, nh)   # slot in its leaf
        self.Phi[np.repeat(t.node_hoff[leaf], nh) + k] = dca.Pd[np.repeat(dca.node_doff[leaf],
                                                                            nh) + k]
        self.Phi[t.n_slots:] = dca.Po
        self.bh = np.zeros((t.n_slots, 6))
        self.ph = np.zeros((t.n_slots, 6))
        self.eta = np.zeros(t.n_nodes)
        z = np.zeros
        self.W, self.P, self.D = z((nb, 6, 6)), z((nb, 6, 6)), z((nb, 6, 6))
        self.beta, self.gamma, self.R = z((nb, 6)), z((nb, 6)), z((nb, 6))
        self.XJ_E, self.XJ_r = z((nb, 3, 3)), z((nb, 3))
        self.Xup_E, self.Xup_r = z((nb, 3, 3)), z((nb, 3))
        self.b_world, self.z = z((nb, 6)), z((nb, 6))
        # principal slot of every node (the handle its parent consumes)
        pslot = np.full(t.n_nodes, -1, dtype=np.int64)
        internal = np.flatnonzero(t.node_joint >= 0)
        hasA = internal[t.node_A[internal] >= 0]
        pslot[t.node_A[hasA]] = t.node_ca[hasA]
        pslot[t.node_B[internal]] = t.node_cb[internal]
        self.node_pslot = pslot
        # leaf frames: Tp = H_p o H_k^-1 (both fixed to the body)
        self.Tp_E = z((t.n_slots, 3, 3))
        self.Tp_r = z((t.n_slots, 3))
        self.Tup_E = np.tile(np.eye(3), (t.n_nodes, 1, 1))
        self.Tup_r = z((t.n_nodes, 3))
        _leaf_frames(leaf, t.node_hoff, t.node_nh, pslot, dca.handle_x, dca.H_E, dca.H_r,
                     self.Tp_E, self.Tp_r)
        self.q = model.neutral()
        self.tau = z(nv)
        self.f_ext = z((nb, 6))
        hmax = max(int(t.max_handles), 1)
        self._T = z((12 + 4 * hmax, 6, 6))
        self._V6 = z((8, 6))
        self._Xr = z((3, 3, 3))
        self._xq = z((3, 3))
        self.active = np.ones(nb, dtype=np.bool_)
        self._gravity = np.array(self.ma.gravity, dtype=np.float64)   # own copy
        self._quasi_static = True
        self.v = z((nb, 6))
        self.c_al = z((nb, 6))
        self._hk = z(t.n_nodes)
        self._hn = np.zeros(t.n_nodes, dtype=np.int64)
        self._xv = z((2, 6))
        self._fv = z((1, 6))
        self.fh = z((t.n_slots, 6))
        self._qdd = z(nv)
        self._computed = np.zeros(nb, dtype=np.int64)
        self._n_computed = 0
        self._stats = z(N_STATS)
        self._mark = np.zeros(t.n_nodes, dtype=np.bool_)
        self._dirty = np.zeros(t.n_nodes, dtype=np.int64)
        self._seeds = np.zeros(t.n_nodes, dtype=np.int64)
        self._all = np.arange(t.n_nodes, dtype=np.int64)
        self.n_updated = 0
        self._update(self._all, t.n_nodes)

    # ----------------------------------------------------------------- set-up helpers
    def _weights(self, weights):
        model = self.model
        nb = model.nb
        Aw = np.tile(np.eye(6), (nb, 1, 1))
        if weights is None:
            return Aw
        w = np.asarray(weights, dtype=np.float64)
        if w.shape != (nb, 6, 6):
            raise ValueError(f"weights must have shape ({nb}, 6, 6), got {w.shape}")
        for j in range(nb):
            d = int(model.jnt_nv[j])
            if d == 0:
                continue
            blk = w[j, :d, :d]
            if (not np.isfinite(blk).all() or not np.allclose(blk, blk.T)
                    or np.linalg.eigvalsh(blk).min() <= 0):
                raise ValueError(f"weights of joint {model.joint_name[j]!r} must be a finite "
                                 f"symmetric positive definite {d}x{d} block")
            Aw[j, :d, :d] = blk
        return Aw

    def _coefficients(self):
        """The node coefficients of the current state (a
        :class:`~articulated.algorithms.bundles.Coefficients`)."""
        return Coefficients(self.Phi, self.bh, self.Psi, self.ph, self.eta, self.W, self.P, self.D,
                            self.beta, self.gamma, self.R)

    def _model_bundle(self):
        """The :class:`~articulated.algorithms.bundles.NodeModel` of this solver (built
        once)."""
        if getattr(self, "_nm", None) is None:
            ma, t, d = self.ma, self.tree, self.dca
            self._nm = NodeModel(
                ma.jtype, ma.qadr, ma.vadr, ma.jnv, ma.Xtree_rot, ma.axis, ma.Xtree_E,
                ma.Xtree_r, ma.mass, ma.h, ma.Ibar, self._gravity, d.Iinv, d.H_E, d.H_r, d.perm,
                d.nfree, t.roots, t.node_parent, t.node_A, t.node_B, t.node_joint, t.node_body,
                t.node_nh, t.node_hoff, d.node_ooff, t.node_ca, t.node_cb, self.node_pslot,
                d.handle_x, self.n_slots)
        return self._nm

    def _inputs(self, active=None):
        """The :class:`~articulated.algorithms.bundles.NodeInputs` of the current state with
        the ``active`` mask (default ``self.active``)."""
        return NodeInputs(self.q, self.tau, self.f_ext, self.Aw,
                          self.active if active is None else active, self._quasi_static,
                          self.v, self.c_al)

    def _frames(self):
        """The :class:`~articulated.algorithms.bundles.NodeFrames` of this solver."""
        return NodeFrames(self.Xup_E, self.Xup_r, self.XJ_E, self.XJ_r, self.b_world, self.z,
                          self.Tp_E, self.Tp_r, self.Tup_E, self.Tup_r)

    def _passive(self):
        """The :class:`~articulated.algorithms.bundles.PassiveTensors` of the lazy
        evaluation (none here, ``lazy`` False:
        :class:`~articulated.algorithms.adaptive.AdaptiveDynamics` has passive nodes)."""
        if getattr(self, "_no_passive", None) is None:
            z = np.zeros
            self._no_passive = PassiveTensors(
                False, z(1, np.bool_), z(1, np.int64), z(1, np.int64), z((1, 6)), z(K),
                z((1, 6, K)), z((1, 6, K)), z((1, K, K)), z((1, 6, K)), z((1, 3, 3)),
                z((1, 3)), z(1, np.int64), z(1, np.int64))
        return self._no_passive

    def _node_args(self, metric=True, coefficients=None, active=None, frames=True):
        """The :class:`~articulated.algorithms.bundles.NodeArgs` of :func:`_update_nodes`
        for this solver with ``coefficients`` (default :meth:`_coefficients`) and the
        ``active`` mask (default ``self.active``); without ``frames`` the nodes' principal
        joint transforms and hierarchical frames are not recomputed. The bundles of the
        defaults are built once per solver (every array they hold is allocated once, in
        ``__init__``) so that a step costs no Python object construction."""
        default = coefficients is None and active is None
        # keyed on the mode too: AdaptiveDynamics leaves quasi-static mode after the
        # engine's __init__ has built (and cached) its first bundles
        key = ("node", bool(metric), bool(frames), self._quasi_static)
        cache = self.__dict__.setdefault("_bundle_cache", {})
        if default and key in cache:
            return cache[key]
        args = NodeArgs(self._model_bundle(), self._inputs(active), self._frames(),
                        self._coefficients() if coefficients is None else coefficients,
                        Scratch(self._T, self._V6, self._Xr, self._xq), bool(metric),
                        bool(frames))
        if default:
            cache[key] = args
        return args

    def _solve_args(self, coefficients=None, active=None, passive=None):
        """The :class:`~articulated.algorithms.bundles.SolveArgs` of
        :func:`_partial_back_substitution` for this solver (arguments as
        :meth:`_node_args`; ``passive`` default :meth:`_passive`, no lazy evaluation);
        built once for the defaults."""
        default = coefficients is None and active is None and passive is None
        key = ("solve", self._quasi_static)
        cache = self.__dict__.setdefault("_bundle_cache", {})
        if default and key in cache:
            return cache[key]
        u = self._node_args(True, coefficients, active)
        args = SolveArgs(u.model, u.inputs, u.frames, u.coef, u.scratch,
                         SolveBuffers(self._hk, self._hn, self._xv, self._fv, self.fh,
                                      self._qdd, self._computed, self._stats),
                         self._passive() if passive is None else passive)
        if default:
            cache[key] = args
        return args

    def _update(self, nodes, n, metric=True, moved=True):
        """Recompute ``nodes[:n]`` (post-order); ``moved``: whether a joint below them may
        have moved since their last update (False: new forces only)."""
        update_nodes(nodes, n, self._node_args(metric))
        self.n_updated = int(n)

    # ----------------------------------------------------------------- public API
    def set_state(self, q, tau=None, f_ext=None) -> None:
        """Set the configuration, joint forces and external forces and recompute every
        node (the full main pass plus total-acceleration equations, O(n)).

        q : (nq,) float64; tau : (nv,) float64 [N m | N] or None (zero); f_ext : (nb, 6)
        float64 or None - spatial force on each body about its origin in body coordinates
        [N m; N]. Raises ValueError for wrong shapes, non-finite entries (naming the joint
        or body), non-unit quaternions.
        """
        m = self.model
        self.q[:] = m.check_configuration(q)
        self.tau[:] = 0.0 if tau is None else m.check_vector(tau, "tau", m.nv)
        self.f_ext[:] = 0.0 if f_ext is None else check_f_ext(m, f_ext, np.float64)
        self._update(self._all, self.tree.n_nodes)

    def update(self, q=None, *, joints=(), bodies=(), f_ext=None, tau=None, tau_joints=(),
               metric: bool = True) -> int:
        """Update the coefficients lazily: only what changed and its ancestors (RL Sec. 5.2).

        Only the nodes of the ``joints`` whose position changed, the leaves of the
        ``bodies`` whose external force changed, the nodes of the ``tau_joints`` whose
        active force changed, and their ancestors are recomputed, level by level (each
        node once): O(N_U log(N / N_U)).

        Parameters
        ----------
        q : (nq,) float64, optional
            The new configuration (differs from the current one only at ``joints``; not
            checked, which would cost O(n)).
        joints, bodies, tau_joints : sequences of int
            What changed.
        f_ext : (nb, 6) float64, optional
            New external forces (only rows ``bodies`` read).
        tau : (nv,) float64, optional
            New joint forces (only ``tau_joints`` read).
        metric : bool
            Also update the total-acceleration coefficients (default).

        Returns
        -------
        int
            The number of nodes recomputed.
        """
        t = self.tree
        if q is not None:
            self.q[:] = q
        if f_ext is not None:
            b = np.asarray(bodies, dtype=np.int64)
            self.f_ext[b] = np.asarray(f_ext)[b]
        if tau is not None:
            tau = np.asarray(tau, dtype=np.float64)
            for j in tau_joints:
                va, d = self.model.jnt_vadr[j], self.model.jnt_nv[j]
                self.tau[va:va + d] = tau[va:va + d]
        seeds = np.concatenate([t.node_of_joint[np.asarray(joints, dtype=np.int64)],
                                t.node_of_joint[np.asarray(tau_joints, dtype=np.int64)],
                                t.leaf_of_body[np.asarray(bodies, dtype=np.int64)]])
        n = _dirty_nodes(t.node_parent, seeds.astype(np.int64), seeds.size, self._mark,
                         self._dirty, self._mark)
        self._update(self._dirty, n, metric, q is not None or len(joints) > 0)
        return n

    def total_acceleration(self) -> float:
        """``A`` of the whole system: ``sum_i qdd_i^T A_i qdd_i`` (RL Def. 3, eq. 8 at the
        root nodes), from the coefficients alone."""
        return float(max(self.eta[self.tree.roots].sum(), 0.0))

    def solve(self, eps_max: float = 0.0, error: str = "relative_joint",
              max_joints: int | None = None, *, copy: bool = True):
        """Approximate joint accelerations within ``eps_max`` (RL Sec. 4.3).

        Parameters
        ----------
        eps_max : float >= 0
            Error bound in the chosen measure (0: exact, every joint whose subassembly has a
            nonzero total acceleration is computed).
        error : one of :data:`ERROR_MEASURES`
            RL Definition 2 (norms in the metric of the weights: ``||qdd_i|| = sqrt(qdd_i^T
            A_i qdd_i)``).
        max_joints : int, optional
            Stop after this many joints (joint budget); the returned bound then says how
            good the result is.
        copy : bool
            False returns views of the solver's buffers (valid until the next call) and
            keeps the call O(N_E); True (default) copies ``qdd``, O(n).

        Returns
        -------
        QuasiStaticResult with ``qdd`` (nv,) float64 (exact on ``joints``, zero elsewhere)
        [rad/s^2 | m/s^2], ``joints`` (N_E,) int64 in computation order, ``bound`` (the
        certified error in the chosen measure), ``total`` (``A`` of the system).

        Raises
        ------
        ValueError
            For a negative or non-finite eps_max, an unknown measure or a
            negative budget.
        """
        if not (isinstance(eps_max, (int, float,
                                     np.floating)) and math.isfinite(eps_max) and eps_max >= 0):
            raise ValueError(f"eps_max must be a finite number >= 0, got {eps_max!r}")
        if error not in ERROR_MEASURES:
            raise ValueError(f"unknown error measure {error!r}; expected one of "
                             f"{ERROR_MEASURES}")
        budget = -1 if max_joints is None else int(max_joints)
        if max_joints is not None and budget < 0:
            raise ValueError(f"max_joints must be >= 0, got {max_joints!r}")
        qdd = self._qdd
        partial_back_substitution(float(eps_max), ERROR_MEASURES.index(error), budget,
                                  self._n_computed, self._solve_args())
        n = self._n_computed = int(self._stats[STAT_N])
        joints = self._computed[:n]
        if self._stats[STAT_BAD] >= 0:
            j = int(self._stats[STAT_BAD])
            raise ValueError(f"the adaptive quasi-statics result is not finite at joint "
                             f"{self.model.joint_name[j]!r}: a node inverse inertia is "
                             f"singular")
        if copy:
            qdd, joints = qdd.copy(), joints.copy()
        return QuasiStaticResult(qdd=qdd, joints=joints,
                                 bound=float(self._stats[STAT_BOUND]),
                                 total=float(self._stats[STAT_TOTAL]),
                                 error=error, eps_max=float(eps_max))

    def _solve_exact(self):
        """Exact back-substitution over the active nodes without the metric coefficients
        (RGL Sec. 4.3); internal buffer, O(N_active)."""
        partial_back_substitution(-1.0, 0, -1, self._n_computed, self._solve_args())
        self._n_computed = int(self._stats[STAT_N])
        if self._stats[STAT_BAD] >= 0:
            j = int(self._stats[STAT_BAD])
            raise ValueError(f"the hybrid-body acceleration is not finite at joint "
                             f"{self.model.joint_name[j]!r}: a node inverse inertia is "
                             f"singular")
        return self._qdd

    def body_pose(self, body):
        """World pose of a body from the principal-handle transforms on its assembly-tree
        path (RL Sec. 5.1), O(tree height).

        Returns ``(R, p)``: R (3, 3) float64 maps body to world coordinates (columns are the
        body axes), p (3,) float64 the body origin in world coordinates [m] (as
        :func:`articulated.forward_kinematics`)."""
        b = self.model.body_id(body)
        t, d = self.tree, self.dca
        _world_pose(b, t.leaf_of_body, t.node_parent, self.node_pslot, t.node_hoff, d.handle_x,
                    d.H_E, d.H_r, self.Tup_E, self.Tup_r, self._Xr, self._xq)
        # (E, r) = world X body: E rotates body into world coordinates, r is the world
        # origin in body coordinates
        E, r = self._Xr[0].copy(), self._xq[0].copy()
        return E, -(E @ r)

    def cross_transform(self, node: int, k: int, l: int) -> np.ndarray:
        """(6, 6) motion transform from the frame of handle l to that of handle k of a node
        (RL Sec. 5.1 "handles cross-transforms"), ``Tp_k^-1 Tp_l``."""
        t = self.tree
        nh = int(t.node_nh[node])
        if not (0 <= k < nh and 0 <= l < nh):
            raise ValueError(f"node {node} has {nh} handles; got k={k}, l={l}")
        o = int(t.node_hoff[node])
        Ek, rk = self.Tp_E[o + k], self.Tp_r[o + k]
        return xform_dense(Ek.T, -(Ek @ rk)) @ xform_dense(self.Tp_E[o + l], self.Tp_r[o + l])

    def nbytes(self) -> int:
        """Bytes held by the solver's arrays (including its DCA)."""
        own = sum(a.nbytes for a in vars(self).values() if isinstance(a, np.ndarray))
        return own + self.dca.nbytes()


class QuasiStaticResult:
    """Result of :meth:`AdaptiveQuasiStatics.solve`.

    Attributes
    ----------
    qdd : (nv,) float64
        Joint accelerations [rad/s^2 | m/s^2]: exact on ``joints``, zero elsewhere.
    joints : (N_E,) int64
        The joints computed, in computation order.
    bound : float
        The certified error in the measure ``error`` (RL Def. 2).
    total : float
        The total acceleration metric ``A`` of the system (RL Lemma 1, eq. 8).
    error : str
        The error measure.
    eps_max : float
        The requested error bound.
    """

    __slots__ = ("qdd", "joints", "bound", "total", "error", "eps_max")

    def __init__(self, qdd, joints, bound, total, error, eps_max):
        self.qdd, self.joints, self.bound = qdd, joints, bound
        self.total, self.error, self.eps_max = total, error, eps_max

    def __repr__(self):
        return (f"QuasiStaticResult(joints={self.joints.size}, bound={self.bound:.3g}, "
                f"error={self.error!r}, eps_max={self.eps_max:.3g})")
