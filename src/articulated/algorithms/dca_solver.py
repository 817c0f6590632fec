"""The full DCA as a solver object and as functions.

The full DCA as a solver object and as functions: :class:`DCA` (model arrays, assembly
tree, handle frames and buffers built once; forward dynamics and quasi-statics per call),
:func:`dca` and :func:`quasi_statics`. The kernels and the equations they implement (RGL
eqs. 1-5, RL eqs. 1-7) are in :mod:`articulated.algorithms.dca`.
"""

from __future__ import annotations

import weakref

import numpy as np

from ..assembly import AssemblyTree, build_assembly
from ..model import Model
from ..spatial import xform_dense
from ._inputs import as_configuration, as_vector, check_dtype, check_f_ext, report_dca_nonfinite
from .bundles import DCAData, DCAModel, DCAScratch, Kinematics
from .dca import (LEAF_H, LEAF_IBAR, LEAF_IINV, LEAF_M, LEAF_X, N_NR, N_REC, NR_A, NR_BODY, NR_CA, NR_CB, NR_DOFF, NR_HA, NR_HB, NR_HOFF,
                  NR_J, NR_JT, NR_NF, NR_NH, NR_NHA, NR_NHB, NR_NV, NR_OOA, NR_OOB, NR_OOFF,
                  NR_PERM, NR_VA, REC_BETA, REC_FAL, REC_GAMMA, REC_KJ, REC_L, REC_LD,
                  dca_body_acc, dca_call)
from .handles import _leaf_phi_kernel, handle_frames


class _DCAModelArrays:
    """The Model's arrays the DCA kernels take, in one dtype (built from the Model's public
    attributes only)."""

    def __init__(self, model: Model, dt):
        f = lambda a: np.ascontiguousarray(a, dtype=dt)
        self.parent = model.body_parent
        self.jtype = model.jnt_type
        self.qadr = model.jnt_qadr
        self.vadr = model.jnt_vadr
        self.jnv = model.jnt_nv
        nb = model.nb
        self.Xtree_rot = (np.abs(model.jnt_Xtree_E - np.eye(3)).reshape(nb, 9)
                          .max(axis=1, initial=0.0) > 0).astype(np.int64)
        self.axis = f(model.jnt_axis)
        self.Xtree_E = f(model.jnt_Xtree_E)
        self.Xtree_r = f(model.jnt_Xtree_r)
        self.mass = f(model.body_mass)
        self.h = f(model.body_h)
        self.Ibar = f(model.body_Ibar)
        self.S = f(model.dof_S)
        self.gravity = f(model.gravity)


def _node_records(model: Model, tree: AssemblyTree, perm, nfree, node_doff, node_ooff):
    """(nn, N_NR) int64 records of the nodes (columns ``NR_*`` of
    :mod:`articulated.algorithms.dca`): each node's indices with its children's and its
    joint's, so that a pass reads one record per node."""
    t = tree
    nr = np.zeros((t.n_nodes, N_NR), dtype=np.int64)
    nr[:, NR_J] = t.node_joint
    nr[:, NR_BODY] = t.node_body
    nr[:, NR_NH] = t.node_nh
    nr[:, NR_HOFF] = t.node_hoff
    nr[:, NR_OOFF] = node_ooff
    nr[:, NR_DOFF] = node_doff
    i = np.flatnonzero(t.node_joint >= 0)
    J, A, B = t.node_joint[i], t.node_A[i], t.node_B[i]
    nr[i, NR_PERM:NR_PERM + 6] = perm[J]
    nr[i, NR_A] = A
    nr[i, NR_CA] = t.node_ca[i]
    nr[i, NR_CB] = t.node_cb[i]
    a = A >= 0
    nr[i[a], NR_NHA] = t.node_nh[A[a]]
    nr[i[a], NR_OOA] = node_ooff[A[a]]
    nr[i[a], NR_HA] = t.node_hoff[A[a]]
    nr[i, NR_NHB] = t.node_nh[B]
    nr[i, NR_OOB] = node_ooff[B]
    nr[i, NR_HB] = t.node_hoff[B]
    nr[i, NR_JT] = model.jnt_type[J]
    nr[i, NR_NF] = nfree[J]
    nr[i, NR_NV] = model.jnt_nv[J]
    nr[i, NR_VA] = model.jnt_vadr[J]
    return nr


def _leaf_records(tree: AssemblyTree, Iinv, mass, h, Ibar, H_E, H_r, handle_x, dt):
    """(n_leaves, LEAF_X + 12 hmax) records of the leaves in post-order (columns ``LEAF_*``
    of :mod:`articulated.algorithms.dca`): ``I^-1``, mass, first moment, rotational inertia
    and the transform to each handle's frame."""
    t = tree
    leaves = np.flatnonzero(t.node_body >= 0)
    nh = t.node_nh[leaves]
    LR = np.zeros((leaves.size, LEAF_X + 12 * int(nh.max(initial=0))), dtype=dt)
    b = t.node_body[leaves]
    LR[:, LEAF_IINV:LEAF_IINV + 21] = Iinv[b]
    LR[:, LEAF_M] = mass[b]
    LR[:, LEAF_H:LEAF_H + 3] = h[b]
    LR[:, LEAF_IBAR:LEAF_IBAR + 9] = np.reshape(Ibar[b], (leaves.size, 9))
    for k in range(int(nh.max(initial=0))):
        r = np.flatnonzero(nh > k)
        x = handle_x[t.node_hoff[leaves[r]] + k]
        o = LEAF_X + 12 * k
        LR[r, o:o + 9] = np.reshape(H_E[x], (r.size, 9))
        LR[r, o + 9:o + 12] = H_r[x]
    return LR


def _stack_depth(tree: AssemblyTree) -> int:
    """Largest number of pending subassemblies during a post-order traversal (the stack
    of :func:`_dca_main_pass`); at most the tree height + 2."""
    leaf = tree.node_joint < 0
    step = np.where(leaf, 1, np.where(tree.node_A >= 0, -2, -1) + (tree.node_nh > 0))
    best = int(np.cumsum(step).max(initial=0))
    return max(best, 1)


class DCA:
    """Featherstone's divide-and-conquer algorithm on a fixed assembly tree.

    Its coefficients are kept between calls, for the adaptive algorithms built on it.

    Parameters
    ----------
    model : Model
        The articulated body (float64).
    assembly : {"balanced", "serial"}, sequence of joints, or AssemblyTree
        The assembly tree or how to build it (:func:`articulated.assembly.build_assembly`).
    dtype : float64 or float32
        Arithmetic precision.
    max_handles : int, optional
        Handle cap of the balanced construction.

    Attributes
    ----------
    model : Model
        The model.
    tree : AssemblyTree
        The assembly tree.
    H_E, H_r : (2 nb, 3, 3), (2 nb, 3)
        The handle frames (:func:`handle_frames`): transform of handle ``(J, s)`` at index
        ``2 J + s``. Arrays are of ``dtype`` unless noted; coefficients are valid after a
        call.
    perm, nfree : (nb, 6), (nb,) int64
        Free / joint coordinates of each joint in its aligned frame.
    Iinv : (nb, 21)
        Inverse spatial inertia ``I^-1`` of each body, body coordinates, the upper
        triangle row by row.
    Po : (n_off, 6, 6)
        Off-diagonal ``Phi_kl`` (k < l) of every node, node ``i`` from ``node_ooff[i]``
        (row-major over the strict upper block triangle); rows in handle k's frame,
        columns in handle l's. Leaf blocks are constant, internal ones rewritten by each
        call. Diagonal blocks and biases of internal nodes are only needed by the parent
        and live on a small stack, ``Pd[n_leaf_diag:]`` and ``Bst``; the leaves' constant
        diagonal blocks are ``Pd[node_doff[i] + k]``.
    node_rec : (nn, N_NR) int64
        Every node's indices, its children's and its joint's in one record (columns
        ``NR_*`` of :mod:`articulated.algorithms.dca`).
    rec : (nb, N_REC + 6 dmax)
        The coefficients of every internal node in one record, by the node's rank among
        the internal nodes in post-order (``rank_joint[r]`` its joint, ``joint_rank[J]``
        the inverse; columns ``REC_*``): ``beta``, ``gamma``, the joint force ``f_al``,
        the factor ``Ld, L`` of ``K_FF`` and the joint rows ``Kj``. The passes stream it;
        the by-joint arrays below are properties that copy out of it.
    L, Ld : (nb, 15), (nb, 6)
        Factor of the free block ``K_FF`` of ``K = V^-1 = X_J Phi_2^A X_J^T + Phi_1^B``
        of each joint's node: for five free coordinates (revolute, prismatic) ``L D L^T``
        with unit ``L`` and ``1 / D`` in Ld; otherwise Cholesky ``L L^T`` with the inverse
        diagonal in Ld; L holds the strictly lower triangle row by row (entry (i, j) at
        ``i (i - 1) / 2 + j``).
    Kj : (nv, 6)
        The joint rows of K (``K[perm[J, nfree + r], :]`` for dof r).
    beta, gamma : (nb, 6)
        ``beta``, ``gamma`` of each joint's node (RGL eq. 2), aligned frame of ``(J, 1)``;
        :meth:`node_K`, :meth:`node_VW` give K, V, W.
    XJ_E, XJ_r : (nb, 3, 3), (nb, 3)
        Principal joint transforms ``R X_J(q_J) R^T`` (compact, aligned frames).
    Xup_E, Xup_r, v, c, z : arrays
        Parent-to-body transforms, body velocities, ``v x S qd``, leaf biases
        ``I^-1 (f_ext - v x* I v)`` (body coordinates).
    fh : (n_slots, 6)
        Forces on every handle from the back-substitution, handle frames.
    f : (nb, 6)
        Joint constraint forces: the spatial force transmitted across joint i to body i,
        body-i coordinates [N m; N] (what RNEA leaves in ``Data.f``); ``f_al`` is the same
        in the aligned frame of ``(J, 1)``.
    qdd : (nv,)
        Joint accelerations of the last call.

    Raises
    ------
    TypeError
        Not a Model, or an unsupported dtype.
    ValueError
        A bad assembly order, or a model with armature (:attr:`Model.dof_armature`).

    Notes
    -----
    Memory O(n) for a bounded handle count (:meth:`nbytes`).

    References
    ----------
    Redon, Galoppo & Lin (2005), Sec. 3; Redon & Lin (2005), Sec. 3.1, 5.1.
    """

    def __init__(self, model: Model, assembly="balanced", *, dtype=np.float64,
                 max_handles: int | None = None):
        if not isinstance(model, Model):
            raise TypeError(f"model must be an articulated.Model, got {type(model).__name__}")
        model.require_no_armature("the DCA (and every adaptive method built on it)")
        dt = self.dtype = check_dtype(dtype)
        self.model = model
        if isinstance(assembly, AssemblyTree):
            if assembly.nb != model.nb:
                raise ValueError(f"the assembly tree has {assembly.nb} bodies, the model "
                                 f"{model.nb}")
            tree = assembly
        else:
            tree = build_assembly(model, assembly, max_handles=max_handles)
        self.tree = tree
        nb, nv = model.nb, model.nv
        z = lambda *s: np.zeros(s, dtype=dt)
        Iinv64 = np.linalg.inv(model.body_I)
        Iinv64 = 0.5 * (Iinv64 + np.transpose(Iinv64, (0, 2, 1)))
        self.ma = _DCAModelArrays(model, dt)
        iu = np.triu_indices(6)
        self.Iinv = np.ascontiguousarray(Iinv64[:, iu[0], iu[1]], dtype=dt)
        H_E, H_r, perm, nfree = handle_frames(model)
        self.H_E = np.ascontiguousarray(H_E, dtype=dt)
        self.H_r = np.ascontiguousarray(H_r, dtype=dt)
        self.perm = perm
        self.nfree = nfree
        self.handle_x = np.ascontiguousarray(2 * tree.handle_joint + tree.handle_side)
        # storage layout: constant leaf diagonal blocks, then the stack of pending
        # subassemblies' diagonal blocks; off-diagonal blocks of every node
        nh = tree.node_nh
        leaf = tree.node_body >= 0
        doff = np.full(tree.n_nodes, -1, dtype=np.int64)
        doff[leaf] = np.concatenate([[0], np.cumsum(nh[leaf])[:-1]]) if leaf.any() else []
        self.n_leaf_diag = int(nh[leaf].sum())
        noff = nh * (nh - 1) // 2
        self.node_doff = doff
        self.node_ooff = np.concatenate([[0], np.cumsum(noff)[:-1]]).astype(np.int64)
        self.hmax = int(max(tree.max_handles, 1))
        depth = _stack_depth(tree)
        self.stack_depth = depth
        Pd64 = np.zeros((self.n_leaf_diag + depth * self.hmax, 6, 6))
        Po64 = np.zeros((int(noff.sum()), 6, 6))
        _leaf_phi_kernel(H_E, H_r, Iinv64, tree.node_body, nh, tree.node_hoff, self.node_doff,
                         self.node_ooff, self.handle_x, np.zeros((3, 6, 6)), Pd64, Po64)
        self.Pd = np.ascontiguousarray(Pd64, dtype=dt)
        self.Po = np.ascontiguousarray(Po64, dtype=dt)
        self.Bst = z(depth * self.hmax, 6)
        self._st_base = np.zeros(depth, dtype=np.int64)
        self.fh = z(tree.n_slots, 6)
        # packed records: node indices by node, coefficients by rank of the internal node
        self.node_rec = _node_records(model, tree, perm, nfree, self.node_doff,
                                      self.node_ooff)
        self.rank_joint = tree.node_joint[tree.node_joint >= 0].astype(np.int64)
        self.joint_rank = np.empty(nb, dtype=np.int64)
        self.joint_rank[self.rank_joint] = np.arange(nb)
        self.leaf_rec = _leaf_records(tree, self.Iinv, model.body_mass, model.body_h,
                                      model.body_Ibar, self.H_E, self.H_r, self.handle_x, dt)
        dmax = int(model.jnt_nv.max(initial=0))
        self.rec = z(nb, N_REC + 6 * dmax)
        self.Xup_E = z(nb, 3, 3)
        self.Xup_r = z(nb, 3)
        self.XJ_E = z(nb, 3, 3)
        self.XJ_r = z(nb, 3)
        self.v = z(nb, 6)
        self.c = z(nb, 6)
        self.c_al = z(nb, 6)
        self.b_world = z(nb, 6)
        self.z = z(nb, 6)
        self.f = z(nb, 6)
        self.a = z(nb, 6)
        self.qdd = z(nv)
        self.f_none = z(0, 6)
        self._qd_zero = z(nv)
        self._Z = z(self.hmax + 2, 6, 6)
        self._Ds = z(6, 6)
        # the kernel's bundles (articulated.algorithms.bundles), built once
        ma, t = self.ma, tree
        self.kernel_model = DCAModel(
            ma.parent, ma.jtype, ma.qadr, ma.vadr, ma.jnv, ma.Xtree_rot, ma.axis, ma.Xtree_E,
            ma.Xtree_r, ma.mass, ma.h, ma.Ibar, ma.S, ma.gravity, self.Iinv, self.H_E, self.H_r,
            self.perm, self.nfree, t.node_A, t.node_B, t.node_joint, t.node_body, t.node_nh,
            t.node_hoff, t.node_ca, t.node_cb, self.handle_x, self.node_doff, self.node_ooff,
            self.n_leaf_diag, self.hmax, self.node_rec, self.leaf_rec)
        self.kernel_scratch = DCAScratch(self._Z, self._Ds, self._st_base)
        self.kernel_data = DCAData(
            Kinematics(self.Xup_E, self.Xup_r, self.XJ_E, self.XJ_r, self.v, self.c, self.c_al,
                       self.b_world),
            self.z, self.Pd, self.Po, self.Bst, self.rec, self.fh, self.f, self.qdd)
        # the same as plain tuples, for the call from Python (dca_call)
        self._call_args = (tuple(self.kernel_model), tuple(self.kernel_scratch),
                           (tuple(self.kernel_data.kin),) + tuple(self.kernel_data)[1:])

    def _by_joint(self, c0, width):
        """Columns ``c0 .. c0 + width`` of the node records, by joint (a copy)."""
        return self.rec[self.joint_rank, c0:c0 + width].copy()

    @property
    def beta(self) -> np.ndarray:
        """(nb, 6) ``beta`` of each joint's node (RGL eq. 2), aligned frame of ``(J, 1)``."""
        return self._by_joint(REC_BETA, 6)

    @property
    def gamma(self) -> np.ndarray:
        """(nb, 6) ``gamma`` of each joint's node (RGL eq. 2), aligned frame of ``(J, 1)``."""
        return self._by_joint(REC_GAMMA, 6)

    @property
    def f_al(self) -> np.ndarray:
        """Joint constraint forces (nb, 6) of the last call, aligned frame of ``(J, 1)``."""
        return self._by_joint(REC_FAL, 6)

    @property
    def L(self) -> np.ndarray:
        """(nb, 15) strictly lower triangle of the factor of each joint's ``K_FF``."""
        return self._by_joint(REC_L, 15)

    @property
    def Ld(self) -> np.ndarray:
        """(nb, 6) inverse diagonal of the factor of each joint's ``K_FF``."""
        return self._by_joint(REC_LD, 6)

    @property
    def Kj(self) -> np.ndarray:
        """Joint rows (nv, 6) of each joint's K: ``K[perm[J, nfree + r], :]`` for dof r."""
        out = np.zeros((self.model.nv, 6), dtype=self.dtype)
        for j in range(self.model.nb):
            va, d, r = self.model.jnt_vadr[j], self.model.jnt_nv[j], self.joint_rank[j]
            out[va:va + d] = self.rec[r, REC_KJ:REC_KJ + 6 * d].reshape(d, 6)
        return out

    def nbytes(self) -> int:
        """Bytes held by the DCA's arrays (coefficients and workspace, not the model)."""
        return sum(a.nbytes for a in vars(self).values() if isinstance(a, np.ndarray))

    def _run(self, q, qd, tau, f_ext, quasi_static):
        model, dt = self.model, self.dtype
        q = as_configuration(model, q, dt)
        qd = self._qd_zero if quasi_static else as_vector(model, qd, "qd", model.nv, dt)
        tau = as_vector(model, tau, "tau", model.nv, dt)
        f = self.f_none if f_ext is None else check_f_ext(model, f_ext, dt)
        m, sc, d = self._call_args
        if not dca_call(m, (q, qd, tau, f, bool(quasi_static)), sc, d):
            report_dca_nonfinite(model, self.qdd, dt, q=q, qd=None if quasi_static else qd,
                                 tau=tau, f_ext=f)
        return self.qdd.copy()

    def forward_dynamics(self, q, qd, tau, f_ext=None) -> np.ndarray:
        """Joint accelerations ``qdd = M^-1 (tau - C(q, qd) + J^T f_ext)`` by the DCA.

        Parameters
        ----------
        q : (nq,) float64
            Configuration (unit quaternions for spherical/free joints).
        qd : (nv,) float64
            Joint velocities [rad/s | m/s] (body-frame rates for quaternion joints, not
            dq/dt).
        tau : (nv,) float64
            Applied joint forces ``Q`` [N m | N].
        f_ext : (nb, 6) float64, optional
            External spatial force on each body, ``[n; f]`` about the body origin in body
            coordinates [N m; N] (as :func:`articulated.aba`).

        Returns
        -------
        qdd : (nv,) ndarray of ``dtype``
            Joint accelerations [rad/s^2 | m/s^2]. After the call :attr:`f` holds the joint
            constraint forces and the coefficients are up to date.

        Raises
        ------
        ValueError, TypeError
            ValueError (wrong shapes, non-finite input naming the joint or body, non-unit
            quaternions, a singular handle inertia naming the joint), TypeError
            (non-numeric).

        Notes
        -----
        Complexity O(n) with a bounded handle count; allocation-free kernels. Source: RGL
        Sec. 3.1-3.2, eqs. 1-5.
        """
        return self._run(q, qd, tau, f_ext, False)

    def quasi_statics(self, q, tau, f_ext=None) -> np.ndarray:
        """Joint accelerations with all velocities zero (forward quasi-statics).

        Same as :meth:`forward_dynamics` with ``qd = 0`` but without the velocity pass and
        the velocity-product terms (RL Sec. 3.1, eqs. 3, 6, 7). Gravity is included (folded
        into the root bias). Returns ``qdd`` (nv,) [rad/s^2 | m/s^2]; :attr:`f` holds the
        joint constraint forces.
        """
        return self._run(q, None, tau, f_ext, True)

    def body_accelerations(self) -> np.ndarray:
        """Return the spatial accelerations (nb, 6) of the bodies from the last call.

        Body coordinates, including the fictitious base acceleration ``-g`` (equal to ABA's
        ``Data.a``).
        """
        dca_body_acc(self.kernel_model, self.kernel_data, self.a)
        return self.a.copy()

    def handle_frame(self, joint, side: int = 1) -> np.ndarray:
        """Return the (6, 6) motion transform from body coordinates to a handle's frame.

        Handle ``(joint, side)``: from body-J coordinates for side 1, from the parent body's
        coordinates for side 0 (the placement ``X_tree[J]`` followed by the alignment
        rotation ``R_J``). Forces transform with its inverse transpose.
        """
        j = self.model.joint_id(joint)
        if side not in (0, 1):
            raise ValueError(f"side must be 0 or 1, got {side!r}")
        E, r = self.H_E[2 * j + side], self.H_r[2 * j + side]
        return xform_dense(np.asarray(E, dtype=np.float64), np.asarray(r, dtype=np.float64))

    def node_VW(self, joint) -> tuple[np.ndarray, np.ndarray]:
        """Return ``(V, W)`` (6, 6) of a joint's node from the last call (RGL eq. 2).

        In the aligned frame of handle ``(J, 1)`` (:meth:`handle_frame`; ``T V T^T`` in the
        frame of ``T``): ``V = (X_J Phi_2^A X_J^T + Phi_1^B)^-1``, ``W = V - V S (S^T V
        S)^-1 S^T V``. Formed from the stored ``K = V^-1`` (plain NumPy; for inspection and
        tests, not for hot loops).
        """
        j = self.model.joint_id(joint)
        K = self.node_K(j)
        V = np.linalg.inv(K)
        nf = int(self.nfree[j])
        F = self.perm[j, :nf]
        W = np.zeros((6, 6))
        if nf:
            W[np.ix_(F, F)] = np.linalg.inv(K[np.ix_(F, F)])
        return V, W

    def node_K(self, joint) -> np.ndarray:
        """Return ``K = V^-1`` (6, 6) of a joint's node from the last call.

        ``K = X_J Phi_2^A X_J^T + Phi_1^B`` in the aligned frame of ``(J, 1)``, rebuilt from
        the stored factor ``L`` of ``K_FF`` and the joint rows ``Kj`` (plain NumPy).
        """
        j = self.model.joint_id(joint)
        nf = int(self.nfree[j])
        d = int(self.model.jnt_nv[j])
        F, Jc = self.perm[j, :nf], self.perm[j, nf:]
        row = np.asarray(self.rec[self.joint_rank[j]], dtype=np.float64)   # O(1), no copy-out
        K = np.zeros((6, 6))
        Lf = np.zeros((6, 6))
        Lf[np.tril_indices(6, -1)[0], np.tril_indices(6, -1)[1]] = row[REC_L:REC_L + 15]
        dinv = row[REC_LD:REC_LD + 6]
        if nf == 5:   # square-root-free factor L D L^T (unit L, 1 / D in Ld)
            Lf = Lf[:5, :5] + np.eye(5)
            K[np.ix_(F, F)] = Lf @ np.diag(1 / dinv[:5]) @ Lf.T
        else:         # Cholesky L L^T, the inverse diagonal in Ld
            Lf = Lf[:nf, :nf] + np.diag(1 / dinv[:nf])
            K[np.ix_(F, F)] = Lf @ Lf.T
        rows = row[REC_KJ:REC_KJ + 6 * d].reshape(d, 6)
        K[Jc, :] = rows
        K[:, Jc] = rows.T
        return K

    def joint_forces(self) -> np.ndarray:
        """Return the joint constraint forces (nb, 6) of the last call (RGL eq. 5).

        The spatial force ``[n; f]`` transmitted across joint i to body i, body-i
        coordinates [N m; N].
        """
        return self.f.copy()


_SOLVERS: "weakref.WeakKeyDictionary[Model, dict]" = weakref.WeakKeyDictionary()
"""The cached :class:`DCA` solvers of each model, by assembly and dtype (:func:`dca_solver`)."""


def dca_solver(model: Model, assembly: str = "balanced", dtype=np.float64) -> DCA:
    """The cached :class:`DCA` of a model for a named assembly kind and dtype (built on
    first use; the cache does not keep the model alive)."""
    if not isinstance(model, Model):
        raise TypeError(f"model must be an articulated.Model, got {type(model).__name__}")
    key = (assembly, check_dtype(dtype))
    cache = _SOLVERS.setdefault(model, {})
    s = cache.get(key)
    if s is None:
        s = cache[key] = DCA(model, assembly, dtype=dtype)
    return s


def dca(model: Model, q, qd, tau, f_ext=None, *, assembly="balanced", dtype=np.float64):
    """Forward dynamics by Featherstone's divide-and-conquer algorithm.

    Parameters
    ----------
    model : Model
    q, qd, tau, f_ext : as :meth:`DCA.forward_dynamics` (and :func:`articulated.aba`)
    assembly : {"balanced", "serial"} or AssemblyTree or sequence of joints
        A named kind uses a cached :class:`DCA` per model (:func:`dca_solver`); anything
        else builds a new one (keep a :class:`DCA` object instead).
    dtype : float64 or float32

    Returns
    -------
    qdd : (nv,) ndarray of ``dtype`` [rad/s^2 | m/s^2]

    Notes
    -----
    Raises as :meth:`DCA.forward_dynamics`. Source: RGL Sec. 3.1-3.2, eqs. 1-5.
    """
    s = (dca_solver(model, assembly, dtype) if isinstance(assembly, str) else DCA(model, assembly,
                                                                                  dtype=dtype))
    return s.forward_dynamics(q, qd, tau, f_ext)


def quasi_statics(model: Model, q, tau, f_ext=None, *, assembly="balanced", dtype=np.float64):
    """Compute forward quasi-statics by the DCA: joint accelerations with all velocities zero.

    Parameters
    ----------
    model : Model
        The articulated body.
    q : (nq,) float64
        Configuration.
    tau : (nv,) float64
        Joint forces [N m | N].
    f_ext : (nb, 6) float64, optional
        External spatial forces ``[n; f]`` about each body origin, body coordinates
        [N m; N].
    assembly : {"balanced", "serial"} or AssemblyTree or sequence of joints
        As :func:`dca`.
    dtype : float64 or float32
        Arithmetic precision.

    Returns
    -------
    qdd : (nv,) ndarray of ``dtype``
        Joint accelerations [rad/s^2 | m/s^2]; gravity is included.

    Raises
    ------
    ValueError, TypeError
        As :meth:`DCA.forward_dynamics`.

    References
    ----------
    Redon & Lin 2005 (RL), Sec. 3.1, eqs. 1-7.
    """
    s = (dca_solver(model, assembly, dtype) if isinstance(assembly, str) else DCA(model, assembly,
                                                                                  dtype=dtype))
    return s.quasi_statics(q, tau, f_ext)
