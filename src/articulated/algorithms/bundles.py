"""Named argument bundles of the DCA engine's kernels.

Named argument bundles of the DCA engine's kernels (the node update and the
back-substitution shared by quasi-statics, adaptive dynamics and the region update).

The kernels take their arrays grouped the way mujoco_warp groups kernel arguments: the
static model and assembly tree (:class:`NodeModel`), the inputs of the current state
(:class:`NodeInputs`), the state-dependent transforms (:class:`NodeFrames`), the node
coefficients the kernels write (:class:`Coefficients`), scratch (:class:`Scratch`), the
back-substitution's queue and outputs (:class:`SolveBuffers`) and the linear-coefficient
tensors of passive nodes (:class:`PassiveTensors`). A kernel reads every field by name
(``tree.node_A[i]``, ``co.Phi[row]``); the bundles are numba named tuples, built by one
method per bundle of :class:`articulated.algorithms.quasistatics.AdaptiveQuasiStatics`,
and passed to the kernels by reference (:func:`articulated._byref.byref`: one pointer per
call instead of ~60 arrays' words).

Shapes: ``nb`` bodies (= joints), ``nn`` assembly-tree nodes, ``ns`` handle slots
(``n_slots``: one per handle of every node), ``no`` off-diagonal handle blocks, ``hmax``
the largest handle count of a node, ``K`` (= :data:`articulated.algorithms.passive.K`)
the monomials of a passive tensor; all float arrays float64, index arrays int64.
"""

from __future__ import annotations

from collections import namedtuple

NodeModel = namedtuple("NodeModel", (
    # joints (Model arrays, by joint = body index)
    "jtype", "qadr", "vadr", "jnv", "Xtree_rot", "axis", "Xtree_E", "Xtree_r",
    # bodies
    "mass", "h", "Ibar", "gravity", "Iinv",
    # handle frames and aligned joint coordinates (articulated.algorithms.dca)
    "H_E", "H_r", "perm", "nfree",
    # assembly tree (articulated.assembly) and its handle layout
    "roots", "node_parent", "node_A", "node_B", "node_joint", "node_body", "node_nh",
    "node_hoff", "node_ooff", "node_ca", "node_cb", "node_pslot", "handle_x", "n_slots"))
NodeModel.__doc__ = """Static arrays of a model and its assembly tree, read by every node
kernel. Joints: ``jtype, qadr, vadr, jnv`` (nb,) int64; ``Xtree_rot`` (nb,) int64 (1: the
placement rotates), ``axis`` (nb, 3), ``Xtree_E`` (nb, 3, 3), ``Xtree_r`` (nb, 3) [m]
(placements). Bodies: ``mass`` (nb,) [kg], ``h`` (nb, 3) [kg m], ``Ibar`` (nb, 3, 3)
[kg m^2] about the body origin, ``gravity`` (3,) [m/s^2], ``Iinv`` (nb, 21) the inverse
spatial inertias (upper triangles, row by row). Handle frames: ``H_E`` (2 nb, 3, 3),
``H_r`` (2 nb, 3) (handle (J, s) at row 2 J + s,
:func:`~articulated.algorithms.handles.handle_frames`), ``perm`` (nb, 6) the aligned
coordinates with the free ones first, ``nfree`` (nb,) their count. Tree: ``roots``
(n_roots,), ``node_parent, node_A, node_B, node_joint, node_body, node_nh, node_hoff,
node_ooff, node_ca, node_cb, node_pslot`` (nn,), ``handle_x`` (ns,) the handle of each
slot, ``n_slots`` int."""

NodeInputs = namedtuple("NodeInputs", (
    "q", "tau", "f_ext", "Aw", "active", "quasi_static", "v", "c_al"))
NodeInputs.__doc__ = """Inputs of the current state: ``q`` (nq,), ``tau`` (nv,) [N m | N],
``f_ext`` (nb, 6) [N m; N] body coordinates, ``Aw`` (nb, 6, 6) metric weights ``A_i``
(RGL Sec. 5.2), ``active`` (nb,) bool (False: the joint is rigid, RGL eq. 6),
``quasi_static`` bool (no velocity terms), ``v`` (nb, 6) body velocities [rad/s; m/s] and
``c_al`` (nb, 6) joint velocity products ``v_J x S qd`` in the aligned frame of (J, 1)."""

NodeFrames = namedtuple("NodeFrames", (
    "Xup_E", "Xup_r", "XJ_E", "XJ_r", "b_world", "z", "Tp_E", "Tp_r", "Tup_E", "Tup_r"))
NodeFrames.__doc__ = """Configuration-dependent transforms and leaf biases: ``Xup`` (nb)
body-to-parent transforms, ``XJ`` (nb) principal joint transforms ``X_J(q_J)`` (frame of
(J, 0) -> frame of (J, 1)), ``b_world`` (nb, 6) root biases, ``z`` (nb, 6) leaf biases
``I^-1 (f_ext - v x* I v)``; hierarchical frames (RL Sec. 5.1): ``Tp`` (ns) handle frame ->
principal-handle frame of its node, ``Tup`` (nn) principal-handle frame -> parent's. Each
transform as ``(E (n, 3, 3), r (n, 3))`` (:mod:`articulated.spatial`)."""

Coefficients = namedtuple("Coefficients", (
    "Phi", "bh", "Psi", "ph", "eta", "W", "P", "D", "beta", "gamma", "R"))
Coefficients.__doc__ = """Node coefficients (RL eqs. 1-2 and 9, RGL eq. 2): ``Phi, Psi``
(ns + no, 6, 6) handle blocks (diagonal block (k, k) at row ``hoff + k``, off-diagonal
(k, l), k < l, at ``n_slots + ooff + oidx``); ``bh, ph`` (ns, 6) the handle biases ``b_k``
and ``p_k``; ``eta`` (nn,); by joint ``W, P, D`` (nb, 6, 6) (RL eqs. 4-5), ``beta, gamma``
(nb, 6) (RGL eq. 2) and ``R`` (nb, 6) ``= D Q - P^T beta`` (RL eq. 9)."""

Scratch = namedtuple("Scratch", ("T", "V6", "Xr", "xq"))
Scratch.__doc__ = """Scratch of the node kernels: ``T`` (12 + 4 hmax, 6, 6), ``V6`` (8, 6),
``Xr`` (3, 3, 3) and ``xq`` (3, 3) (three compact transforms)."""

SolveBuffers = namedtuple("SolveBuffers", (
    "hk", "hn", "xv", "fv", "fh", "qdd", "computed", "stats"))
SolveBuffers.__doc__ = """Back-substitution (RL Sec. 4.3): the priority queue ``hk`` (nn,)
keys and ``hn`` (nn,) nodes, scratch ``xv`` (2, 6) and ``fv`` (1, 6), outputs ``fh`` (ns, 6)
handle forces [N m; N], ``qdd`` (nv,), ``computed`` (nb,) joints in computation order and
``stats`` (6,) float64 indexed by the ``STAT_*`` constants of this module."""

PassiveTensors = namedtuple("PassiveTensors", (
    "lazy", "fresh", "fresh_list", "nfresh", "vnode", "mv", "Bt", "Pt", "G", "betaT",
    "ref_E", "ref_r", "ref_id", "nref"))
PassiveTensors.__doc__ = """Lazy evaluation of passive nodes (RGL Sec. 6.2,
:mod:`articulated.algorithms.passive`): ``lazy`` bool (False: no passive nodes), ``fresh``
(nn,) bool, ``fresh_list`` (nn,), ``nfresh`` (1,) int64, node twists ``vnode`` (nn, 6),
monomials ``mv`` (K,) and the tensors ``Bt, Pt`` (ns, 6, K), ``G`` (nn, K, K), ``betaT``
(nb, 6, K), functions of the monomials of the node's twist in the reference frame of its
tensors: ``(ref_E, ref_r)`` (nn, 3, 3), (nn, 3) the compact transform from the node's
principal-handle frame to it; nodes with equal ``ref_id`` (nn,) int64 share it; ``nref``
(1,) int64 the next free id."""

ChildLayout = namedtuple("ChildLayout", (
    "A", "B", "ca", "cb", "nAo", "nhA", "hA", "oA", "nhB", "hB", "oB", "n_slots"))
ChildLayout.__doc__ = """Where an internal node's children keep their handles (all int64):
the children ``A`` (-1 for a root node, whose A is the world) and ``B``, the slots ``ca,
cb`` of their handles that the node's joint consumes, ``nAo`` the node's handles coming from
A (:func:`~articulated.algorithms.blocks._children`), and per child its handle count
``nhA, nhB``, first handle slot ``hA, hB`` and first off-diagonal block ``oA, oB``
(:func:`~articulated.algorithms.blocks._child_blocks`), with the tree's ``n_slots``
(:class:`NodeModel`). Built in the node kernels, read by the helpers of
:mod:`articulated.algorithms.blocks` and :mod:`articulated.algorithms.metric`."""

NodeArgs = namedtuple("NodeArgs", (
    "model", "inputs", "frames", "coef", "scratch", "metric", "update_frames"))
NodeArgs.__doc__ = """Arguments of the node update (:func:`articulated.algorithms.node_update.
update_nodes`): the bundles above, ``metric`` bool (also the total-acceleration
coefficients Psi, p, eta) and ``update_frames`` bool (also the principal joint transforms
and hierarchical frames)."""

SolveArgs = namedtuple("SolveArgs", (
    "model", "inputs", "frames", "coef", "scratch", "solve", "passive"))
SolveArgs.__doc__ = """Arguments of the back-substitution
(:func:`articulated.algorithms.back_substitution.partial_back_substitution`)."""

# slots of SolveBuffers.stats
STAT_N = 0
"""Joints computed."""
STAT_BOUND = 1
"""Certified error bound of the result in the chosen measure (RL Sec. 4.3)."""
STAT_TOTAL = 2
"""Total acceleration ``A`` of the system (RL Def. 3)."""
STAT_EPS2 = 3
"""``eps_c^2``: the total acceleration left in the queue."""
STAT_MAXNORM = 4
"""Largest computed joint-acceleration norm."""
STAT_BAD = 5
"""First joint whose acceleration is not finite, or -1."""
N_STATS = 6

# ------------------------------------------------------------------ hybrid bodies
RegionBuffers = namedtuple("RegionBuffers", (
    "node_active", "anodes", "front", "front_body", "ajoints", "near", "front_of",
    "front_index", "f0", "I0", "counts", "epoch", "I0_epoch"))
RegionBuffers.__doc__ = """Bookkeeping of the active region of a hybrid body (RGL Sec. 4.1;
:func:`articulated.algorithms.hybrid.prepare_region`), allocated once per solver:
``node_active`` (nn,) bool; the lists ``anodes`` (nn,) active nodes (post-order),
``front`` (nn,) rigid-front nodes (rigid nodes whose parent is active, leaves included),
``front_body`` (nn,) the body carrying each front node's handle 0, ``ajoints`` (nb,)
active joints (increasing); by body ``near`` (nb,) the nearest active joint on its path
(-1: none); by node ``front_of`` (nn,) the front node holding it (-1: none) and
``front_index`` (nn,) its index in ``front``; per front node ``f0`` (nn, 6) external
forces on its handle 0 and ``I0`` (nn, 6, 6) rigid inertias; ``counts`` (4,) int64 indexed
by ``N_ANODES, N_FRONT, N_AJOINTS, REGION_STAMP`` (the list lengths and a counter of region
changes); ``epoch`` (nn,) counts the recomputations of each node's rigid-state
coefficients, ``I0_epoch`` (nn,) the epoch each ``I0`` was computed at (-1: never)."""

# slots of RegionBuffers.counts
N_ANODES = 0
"""Active nodes."""
N_FRONT = 1
"""Rigid-front nodes."""
N_AJOINTS = 2
"""Active joints."""
REGION_STAMP = 3
"""Counter of region changes (the reduced tree is rebuilt when it changed)."""

PoseCache = namedtuple("PoseCache", (
    "leaf_of_body", "node_parent", "node_pslot", "node_hoff", "handle_x", "H_E", "H_r",
    "Tup_E", "Tup_r", "front_of", "P_E", "P_r", "C_E", "C_r", "C_node", "C_epoch", "epoch",
    "Xr", "xq"))
PoseCache.__doc__ = """World poses of bodies from the hierarchical frames
(:func:`articulated.algorithms.hybrid.cached_pose`): the tree arrays ``leaf_of_body``
(nb,), ``node_parent, node_pslot, node_hoff`` (nn,), ``handle_x`` (ns,), the handle frames
``H_E, H_r`` and principal-handle transforms ``Tup_E, Tup_r``, ``front_of`` (nn,)
(:class:`RegionBuffers`), the world frames ``P_E`` (nn, 3, 3), ``P_r`` (nn, 3) of the
active and rigid-front nodes' principal handles, the cached transforms ``C_E`` (nb, 3, 3),
``C_r`` (nb, 3) of each body to its front node's principal handle, valid where
``C_node[b]`` (nb,) is that front node and ``C_epoch[b]`` (nb,) its ``epoch`` (nn,)
(:class:`RegionBuffers`: the node's subtree has not moved since), and the result slots
``Xr, xq``."""

HybridState = namedtuple("HybridState", (
    "parent", "S", "qd", "near", "Vw", "c", "front_of", "front_index", "front_body", "f0",
    "I0"))
HybridState.__doc__ = """Arrays of a hybrid body that the node bundles do not hold: the
model's ``parent`` (nb,) and motion subspaces ``S`` (nb, 6, 6), the joint velocities
``qd`` (nv,), ``Vw`` (nb, 6) world spatial velocities of the active joints' bodies
[rad/s; m/s] about the world origin, ``c`` (nb, 6) their velocity products (body
coordinates), and the :class:`RegionBuffers` arrays ``near``, ``front_of``,
``front_index``, ``front_body``, ``f0``, ``I0``."""

HybridArgs = namedtuple("HybridArgs", ("pose", "update", "solve", "state"))
HybridArgs.__doc__ = """Arguments of the hybrid-step kernels
(:meth:`articulated.algorithms.adaptive.AdaptiveDynamics.hybrid_args`): a
:class:`PoseCache`, the :class:`NodeArgs` / :class:`SolveArgs` of the active nodes' update
and back-substitution (hybrid coefficient set), and the :class:`HybridState`. Kernels take
it as a :class:`HybridArgs` of pointers (:func:`articulated._byref.byref_each`)."""

# ------------------------------------------------------------------ region update
CompositeInertias = namedtuple("CompositeInertias", (
    "node_A", "node_B", "node_joint", "node_body", "node_hoff", "node_pslot", "handle_x",
    "H_E", "H_r", "Tup_E", "Tup_r", "mass", "h", "Ibar", "Ic", "Ic_epoch", "stack", "Xr",
    "xq"))
CompositeInertias.__doc__ = """Composite inertias of rigid nodes
(:func:`articulated.algorithms.hybrid._composite_inertia`): the assembly tree, the handle
frames and principal-handle transforms, the bodies' inertias (``mass`` (nb,), ``h``
(nb, 3), ``Ibar`` (nb, 3, 3), body frame), the sums ``Ic`` (nn, 21) (packed layout of
:func:`articulated.spatial.congruence`) and their epochs ``Ic_epoch`` (nn,), an int
scratch ``stack`` (nn,) and a transform scratch ``Xr, xq`` (>= 1 slot)."""

RegionPrep = namedtuple("RegionPrep", (
    "node_joint", "node_parent", "node_hoff", "handle_joint", "handle_side", "body_parent",
    "node_nh", "Tp_E", "Tp_r", "comp"))
RegionPrep.__doc__ = """Arguments of the region bookkeeping
(:func:`articulated.algorithms.hybrid.prepare_region`): tree arrays, ``handle_joint,
handle_side`` (ns,) the joint and side of each handle slot, the model's ``body_parent``
(nb,), the handle frames ``Tp`` and the :class:`CompositeInertias`."""

RegionTopology = namedtuple("RegionTopology", (
    "dof_body", "node_of_joint", "leaf_of_body", "roots", "node_parent", "node_joint",
    "node_A", "node_B", "vadr", "jnv"))
RegionTopology.__doc__ = """Index arrays of the region update: ``dof_body`` (nv,) the body
of each dof, ``node_of_joint`` (nb,), ``leaf_of_body`` (nb,), ``roots``, and tree and joint
arrays as in :class:`NodeModel`."""

RegionState = namedtuple("RegionState", (
    "q", "qd", "tau", "f_ext", "qdd", "active", "tau_T", "gravity", "c", "c_al", "stats",
    "ncomp", "computed", "Vw"))
RegionState.__doc__ = """State of the hybrid body that the region update reads and writes:
``q, qd, tau, f_ext, qdd``, the hybrid ``active`` mask (nb,) bool, ``tau_T`` (nv,) the joint
forces in the passive tensors, ``gravity`` (3,) (zeroed during the momentum projection),
``c, c_al`` (nb, 6) velocity products, ``stats`` (:class:`SolveBuffers`), ``ncomp`` (1,)
joints computed by the last back-substitution, ``computed`` (nb,), ``Vw`` (nb, 6) world
velocities."""

RegionScratch = namedtuple("RegionScratch", (
    "mark", "dirty", "stale", "seeds", "region", "in_region", "fresh", "fresh_list", "nfresh",
    "U", "rigid", "new", "moved", "V", "Kb", "x", "base", "save", "dofs", "path", "qddT",
    "split"))
RegionScratch.__doc__ = """Buffers of the region update (RGL Sec. 5.1-5.4): node marks and
lists ``mark, dirty, stale, seeds, region, in_region, path`` (nn,), the fresh nodes
``fresh, fresh_list, nfresh`` (:class:`PassiveTensors`), the update region ``U`` (nb,),
the rigidified joints ``rigid`` (nb,), the new and moved masks ``new, moved`` (nb,) bool,
the velocity metric ``V`` (nn,), the rigidification system ``Kb`` (3, nd, nd), ``x`` (nd,),
``base, save`` (nv,) and ``dofs`` (nv,) for at most ``nd`` rigidified dofs; ``qddT`` (nv,)
the accelerations of the last update's transient hybrid body (step 3) on the joints active
after it (0 on those that joined without moving), which a substep of the update's step
reads; ``split`` (1,) bool: whether the caller may split an update's step into substeps
(an adaptive simulator with contacts and ``max_rotation`` or ``max_arc_error``), and so
whether step 4 takes ``qddT`` through the rigidification's projection too (one more solve
on the reduced tree, skipped where nothing reads it)."""

VelocityMetric = namedtuple("VelocityMetric", ("Vweights", "hk", "hn"))
VelocityMetric.__doc__ = """The velocity metric's weights ``V_i`` (nb, 6, 6) (RGL Sec. 5.2,
eq. 8) and the queue ``hk, hn`` (nn,) of its traversal (RGL Sec. 5.4.1)."""

RegionArgs = namedtuple("RegionArgs", (
    "bk", "prep", "update", "solve", "tens", "vmet", "topo", "buf", "st"))
RegionArgs.__doc__ = """Arguments of the active-region update
(:func:`articulated.algorithms.region.region_update_kernel`), built once per solver by
:meth:`articulated.algorithms.adaptive.AdaptiveDynamics._region_args`: the
:class:`RegionBuffers`, :class:`RegionPrep`, the :class:`NodeArgs` and :class:`SolveArgs`
of the fully articulated coefficient set, the tensorization scratch ``tens = (MX, M, S,
Gs, lsc)`` (:func:`articulated.algorithms.hybrid.tensorize_nodes`), :class:`VelocityMetric`, :class:`RegionTopology`, :class:`RegionScratch` and
:class:`RegionState`."""

# ------------------------------------------------------------------ reduced tree
ReducedCache = namedtuple("ReducedCache", (
    "pc_epoch", "pc_I", "pc_E", "pc_r", "K_node", "K_epoch", "K_E", "K_r"))
ReducedCache.__doc__ = """What the reduced tree caches per rigid piece and per joint
(:func:`articulated.algorithms.reduced._reduce`): by node the epoch ``pc_epoch`` (nn,),
inertia ``pc_I`` (nn, 13) (m, h, Ibar) and transform ``pc_E, pc_r`` to the principal
handle of a piece; by joint the node ``K_node``, epoch ``K_epoch`` (nb,) and transform
``K_E, K_r`` (``p X Jp``) of its placement."""

ReducedTree = namedtuple("ReducedTree", (
    "red_i", "red_f", "red_d", "ridx", "rstamp", "parent", "jtype", "qadr", "vadr", "jnv",
    "nq", "subtree_end", "axis", "Xtree_E", "Xtree_r", "S", "gravity", "q", "qd", "tau",
    "qdd", "rq", "rqd", "rtau", "rf", "Xs", "xs", "Vw", "cache"))
ReducedTree.__doc__ = """The reduced tree of a hybrid body
(:mod:`articulated.algorithms.reduced`): the packed model ``red_i`` (7 nb,) int64,
``red_f`` and workspace ``red_d`` of an ABA over at most nb bodies (layouts of
:func:`articulated.model.model_arrays` / :func:`~articulated.data.data_arrays`), the
reduced index ``ridx`` (nb,) of each joint, the region stamp ``rstamp`` (1,) of the last
build; the model arrays it reads (``parent, jtype, qadr, vadr, jnv, nq, subtree_end``
(nb,), ``axis, Xtree_E, Xtree_r, S``, ``gravity`` (3,)); the solver's state ``q, qd, tau,
qdd``; the gathered reduced state ``rq`` (nq,), ``rqd`` (nv,), the joint torques
``rtau`` (nv,) (copied at every solve) and forces ``rf`` (nb, 6); scratch transforms
``Xs`` (4, 3, 3), ``xs`` (4, 3); the world velocities ``Vw`` (nb, 6); and the
:class:`ReducedCache`."""

# ------------------------------------------------------------------ full DCA
DCAModel = namedtuple("DCAModel", (
    "parent", "jtype", "qadr", "vadr", "jnv", "Xtree_rot", "axis", "Xtree_E", "Xtree_r",
    "mass", "h", "Ibar", "S", "gravity", "Iinv", "H_E", "H_r", "perm", "nfree", "node_A",
    "node_B", "node_joint", "node_body", "node_nh", "node_hoff", "node_ca", "node_cb",
    "handle_x", "node_doff", "node_ooff", "n_leaf_diag", "hmax", "node_rec", "leaf_rec"))
DCAModel.__doc__ = """Static arrays of the full DCA (:class:`articulated.algorithms.dca_solver.
DCA`): the model arrays of :class:`NodeModel` plus ``parent`` (nb,) and the motion
subspaces ``S`` (nv, 6), the assembly tree, the storage layout of the leaf diagonal
blocks (``node_doff`` (nn,), ``n_leaf_diag``) and of the stack of pending subassemblies
(``hmax``, the largest handle count), and ``node_rec`` (nn, N_NR) int64: every node's
indices, its children's and its joint's in one record (columns ``NR_*`` of
:mod:`articulated.algorithms.dca`), which the passes read instead of the separate
arrays, and ``leaf_rec`` (n_leaves, LEAF_X + 12 hmax): every leaf's constant inertias and
handle transforms in one record (columns ``LEAF_*``), by rank among the leaves in
post-order."""

DCAInputs = namedtuple("DCAInputs", ("q", "qd", "tau", "f_ext", "quasi_static"))
DCAInputs.__doc__ = """Inputs of one DCA evaluation: ``q`` (nq,), ``qd`` (nv,), ``tau`` (nv,),
``f_ext`` (nb, 6) body coordinates, ``quasi_static`` bool (velocities zero, RL)."""

DCAScratch = namedtuple("DCAScratch", ("Z", "Ds", "st_base"))
DCAScratch.__doc__ = """Scratch of the DCA passes: ``Z`` (2 + hmax, 6, 6) block rows, ``Ds``
(stack, 6) back-substitution stack, ``st_base`` (stack,) the diagonal-block base of each
stack entry."""

Kinematics = namedtuple("Kinematics", (
    "Xup_E", "Xup_r", "XJ_E", "XJ_r", "v", "c", "c_al", "b_world"))
Kinematics.__doc__ = """Kinematics of the DCA family
(:func:`articulated.algorithms.handles._dca_kinematics`): body-to-parent transforms
``Xup``, principal joint transforms ``XJ`` in the aligned handle frames, body velocities
``v`` (nb, 6), velocity products ``c`` (nb, 6) (body coordinates) and ``c_al`` (aligned
frame of (J, 1)), and the root biases ``b_world`` (nb, 6)."""

DCAData = namedtuple("DCAData", (
    "kin", "z", "Pd", "Po", "Bst", "rec", "fh", "f", "qdd"))
DCAData.__doc__ = """State-dependent arrays of the full DCA: the :class:`Kinematics`, leaf
biases ``z`` (nb, 6), diagonal and off-diagonal handle blocks ``Pd, Po``, stacked biases
``Bst``, the internal nodes' records ``rec`` (n_internal, N_REC + 6 dmax) by rank in
post-order (columns ``REC_*`` of :mod:`articulated.algorithms.dca`: ``beta, gamma`` of
RGL eq. 2, the factor of ``K_FF``, the joint rows ``Kj`` of K and the joint force in the
aligned frame), handle forces ``fh``, the joint forces ``f`` (nb, 6) (body coordinates,
RGL eq. 5) and the accelerations ``qdd`` (nv,)."""
