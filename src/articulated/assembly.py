"""Assembly trees of Featherstone's divide-and-conquer algorithm (DCA).

An assembly tree is a binary tree whose **leaves are bodies** and whose **internal nodes are
joints**: the node of joint ``J`` (its *principal joint*) joins two subassemblies, ``A`` on
the parent side of ``J`` (it contains ``body_parent[J]``) and ``B`` on the child side (it
contains body ``J``). A joint that attaches a body to the world (a *root joint*) makes a
*root node*: its ``A`` is the world (``node_A == -1``) and ``B`` the whole connected
component; a forest (e.g. a crowd) has one root node per component. Source: Redon, Galoppo &
Lin (2005), "Adaptive dynamics of articulated bodies", Sec. 3 and Fig. 2; Redon & Lin (2005),
"An efficient, error-bounded approximation algorithm for simulating quasi-statics of complex
linkages", Sec. 3.1 and Fig. 2.

Handles
-------
Every subassembly is a connected set of bodies; its *handles* are the joints through which
it connects to the rest of the system (Featherstone's handles, Redon & Lin 2005, Sec. 3.1).
A handle is identified by ``(joint, side)``: side 1 sits on the child body of the joint (body
``joint``), side 0 on its parent body. A leaf (body k) has the handle ``(k, 1)`` of its own
joint followed by ``(c, 0)`` for each child body c in body order. The node of joint J
consumes A's handle ``(J, 0)`` and B's handle ``(J, 1)`` (the *connecting* or *principal
handles* of A and B); its own handle list is **A's other handles in A's order, then B's
other handles in B's order**. So ``node_nh[C] = node_nh[A] + node_nh[B] - 2`` and the
handle of C at slot ``k`` is A's slot ``k + (k >= node_ca[C])`` if ``k < node_nh[A] - 1``,
else B's slot ``k' + (k' >= node_cb[C])`` with ``k' = k - (node_nh[A] - 1)``. Kernels use
this arithmetic instead of lookup tables. Root nodes have no handles.

Storage
-------
Flat arrays in **post-order** (children before their parent, each tree of the forest
contiguous), so bottom-up passes are forward loops and top-down passes backward loops; all
integer arrays are ``int64`` and usable from numba. Per-handle data (slot ``s``) lives at
``node_hoff[i] + k`` for handle k of node i. For algorithms that keep every inverse-inertia
block ``Phi`` of every node, ``node_poff`` lays out the upper triangle of each node's
``nh x nh`` block matrix, block ``(k, l)`` (``k <= l``) at
``node_poff[i] + k nh - k (k - 1) / 2 + (l - k)`` (see :func:`block_index`); the DCA itself
keeps only the off-diagonal blocks of internal nodes (:mod:`articulated.algorithms.dca`).

Construction
------------
``"balanced"`` (default) merges greedily, always the pair of adjacent subassemblies whose
union is lowest in the tree (ties: fewer handles, fewer bodies, lower joint index), with at
most ``max_handles`` handles per node (default ``max(3, largest body degree)``, which every
tree admits: a subassembly with one handle can always join its neighbour). On a chain this
is the perfect pairwise schedule (height ``ceil(log2 n) + 1`` including the root node); on
trees it behaves like Miller-Reif rake-and-compress contraction, so the height is
O(log n) for bounded degree; a body with d neighbours needs at least d - 1 levels whatever
the schedule, and its leaf has d handles. ``"serial"`` merges joints in decreasing index
order, the elimination order of the ABA (each subassembly is a body plus the full subtrees
of some of its children; height ``n`` for an n-body chain). A sequence of joints (indices or
names) gives a user order: every non-root joint once, each merge joining the two current
subassemblies that contain its bodies (root joints may be listed too, after all joints of
their component).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

import numpy as np
from numba import njit

from .config import JIT
from .model import Model

ASSEMBLY_KINDS = ("balanced", "serial")


def block_index(nh: int, k: int, l: int) -> int:
    """Return the index of block ``(k, l)``, ``k <= l``, among a node's upper blocks.

    A node with ``nh`` handles has ``nh (nh + 1) / 2`` upper-triangle blocks, stored
    row-major.
    """
    return k * nh - (k * (k - 1)) // 2 + (l - k)


def n_blocks(nh):
    """Number of stored ``Phi`` blocks of a node with ``nh`` handles: ``nh (nh + 1) / 2``."""
    return nh * (nh + 1) // 2


@dataclass
class AssemblyTree:
    """A DCA assembly tree as flat post-order arrays (see the module docstring).

    Attributes
    ----------
    kind : str
        ``"balanced"``, ``"serial"`` or ``"user"``.
    nb : int
        Bodies (= joints) of the model.
    n_nodes : int
        ``2 nb``: one leaf per body and one node per joint.
    node_A, node_B : (n_nodes,) int64
        Children: A on the parent side of the principal joint, B on the child side; ``-1``
        for leaves; ``node_A == -1`` with ``node_B >= 0`` marks a root node (A is the
        world).
    node_parent : (n_nodes,) int64
        Parent node, ``-1`` for root nodes.
    node_joint : (n_nodes,) int64
        Principal joint of an internal node, ``-1`` for leaves.
    node_body : (n_nodes,) int64
        Body of a leaf, ``-1`` for internal nodes.
    node_height : (n_nodes,) int64
        0 for leaves, ``1 + max(children)`` otherwise.
    node_size : (n_nodes,) int64
        Number of bodies in the subassembly.
    node_nh : (n_nodes,) int64
        Number of handles.
    node_hoff : (n_nodes,) int64
        Offset of the node's first handle slot.
    node_poff : (n_nodes,) int64
        Offset of the node's first ``Phi`` block in a storage of all ``nh (nh + 1) / 2``
        blocks per node.
    node_ca, node_cb : (n_nodes,) int64
        Slot (local index) of the connecting handle ``(J, 0)`` in A and ``(J, 1)`` in B;
        ``-1`` where absent (leaves; ``node_ca`` of root nodes).
    handle_joint, handle_side : (n_slots,) int64
        The handle at each slot.
    leaf_of_body : (nb,) int64
        Leaf node of each body.
    node_of_joint : (nb,) int64
        Internal node of each joint.
    roots : (n_roots,) int64
        Root nodes, one per connected component.
    n_slots : int
        Total handle slots; n_blocks : int - total ``Phi`` blocks.
    """

    kind: str
    nb: int
    n_nodes: int
    node_A: np.ndarray
    node_B: np.ndarray
    node_parent: np.ndarray
    node_joint: np.ndarray
    node_body: np.ndarray
    node_height: np.ndarray
    node_size: np.ndarray
    node_nh: np.ndarray
    node_hoff: np.ndarray
    node_poff: np.ndarray
    node_ca: np.ndarray
    node_cb: np.ndarray
    handle_joint: np.ndarray
    handle_side: np.ndarray
    leaf_of_body: np.ndarray
    node_of_joint: np.ndarray
    roots: np.ndarray
    n_slots: int
    n_blocks: int

    @property
    def height(self) -> int:
        """Edges on the longest path from a root node to a leaf (the root node counts)."""
        return int(self.node_height[self.roots].max()) if self.roots.size else 0

    @property
    def max_handles(self) -> int:
        """Largest number of handles of any node, leaves included."""
        return int(self.node_nh.max()) if self.n_nodes else 0

    @property
    def max_internal_handles(self) -> int:
        """Largest number of handles of an internal (joint) node."""
        internal = self.node_joint >= 0
        return int(self.node_nh[internal].max()) if internal.any() else 0

    def handles(self, node: int) -> list[tuple[int, int]]:
        """The handles ``(joint, side)`` of a node in slot order."""
        o, n = int(self.node_hoff[node]), int(self.node_nh[node])
        return [(int(self.handle_joint[s]), int(self.handle_side[s])) for s in range(o, o + n)]

    def stats(self) -> dict:
        """Return summary statistics of the tree.

        Kind, bodies, nodes, roots, height, max handles (all / internal nodes), mean handles
        per internal node, ``Phi`` blocks, and ``log2_nb``.
        """
        internal = self.node_joint >= 0
        return dict(kind=self.kind, nb=self.nb, nodes=self.n_nodes, roots=int(self.roots.size),
                    height=self.height, max_handles=self.max_handles,
                    max_internal_handles=self.max_internal_handles,
                    mean_handles=float(self.node_nh[internal].mean()) if internal.any() else 0.0,
                    phi_blocks=self.n_blocks, log2_nb=float(np.log2(max(self.nb, 1))))

    def check(self) -> None:
        """Verify the structural invariants (post-order, handle bookkeeping).

        Raises AssertionError on a violation. O(n_nodes + n_slots); used by the tests.
        """
        n = self.n_nodes
        seen_body = np.zeros(self.nb, dtype=bool)
        seen_joint = np.zeros(self.nb, dtype=bool)
        for i in range(n):
            A, B, J = self.node_A[i], self.node_B[i], self.node_joint[i]
            if J < 0:
                b = self.node_body[i]
                assert A == -1 and B == -1 and 0 <= b < self.nb and not seen_body[b]
                seen_body[b] = True
                assert self.node_height[i] == 0 and self.node_size[i] == 1
                assert self.leaf_of_body[b] == i
                continue
            assert not seen_joint[J]
            seen_joint[J] = True
            assert self.node_of_joint[J] == i
            assert 0 <= B < i and (A < i), "post-order: children precede their parent"
            assert self.node_parent[B] == i and (A < 0 or self.node_parent[A] == i)
            hb = self.handles(B)
            assert hb[self.node_cb[i]] == (J, 1)
            mine = self.handles(i)
            if A < 0:
                assert mine == [] and self.node_parent[i] == -1
                assert self.node_height[i] == self.node_height[B] + 1
                continue
            ha = self.handles(A)
            assert ha[self.node_ca[i]] == (J, 0)
            expect = [h for k, h in enumerate(ha) if k != self.node_ca[i]] + \
                     [h for k, h in enumerate(hb) if k != self.node_cb[i]]
            assert mine == expect
            assert self.node_height[i] == 1 + max(self.node_height[A], self.node_height[B])
            assert self.node_size[i] == self.node_size[A] + self.node_size[B]
        assert seen_body.all() and seen_joint.all()
        # each tree of the forest is contiguous and ends with its root
        start = 0
        for r in self.roots:
            assert self.node_parent[r] == -1
            assert r - start + 1 == 2 * self.node_size[r]
            start = r + 1
        assert start == n


# ------------------------------------------------------------------------------ construction

def _leaf_handles(parent, width):
    """The handles of each body's leaf: its own joint (side 1), then its children's (side 0)
    in body order. Returns ``(hj, hs, nh)``: joints and sides (nb, width) int64 (-1 and 0
    past the end), and the counts (nb,); ``width`` at least the largest count."""
    nb = parent.shape[0]
    child = np.flatnonzero(parent >= 0)
    nh = 1 + np.bincount(parent[child], minlength=nb).astype(np.int64)
    hj = np.full((nb, width), -1, dtype=np.int64)
    hs = np.zeros((nb, width), dtype=np.int64)
    hj[:, 0] = np.arange(nb)
    hs[:, 0] = 1
    by_parent = child[np.argsort(parent[child], kind="stable")]
    slot = 1 + np.arange(by_parent.size) - _offsets(nh - 1)[parent[by_parent]]
    hj[parent[by_parent], slot] = by_parent
    return hj, hs, nh


class _Builder:
    """Bookkeeping shared by every construction: regions (current subassemblies) with a
    union-find over bodies, and the node records in creation order."""

    def __init__(self, model: Model):
        self.model = model
        nb = model.nb
        self.parent = model.body_parent
        self.uf = list(range(nb))
        # node records, creation order: (A, B, joint, body, handles)
        self.A: list[int] = []
        self.B: list[int] = []
        self.joint: list[int] = []
        self.body: list[int] = []
        self.hlist: list[list] = []
        self.height: list[int] = []
        self.size: list[int] = []
        self.region_node = list(range(nb))   # region representative body -> node
        parent = np.asarray(model.body_parent, dtype=np.int64)
        deg = 1 + np.bincount(parent[parent >= 0], minlength=nb)
        hj, hs, nh = _leaf_handles(parent, int(deg.max(initial=1)))
        for k in range(nb):
            h = list(zip(hj[k, :nh[k]].tolist(), hs[k, :nh[k]].tolist()))
            self._add(-1, -1, -1, k, h, 0, 1)

    def _add(self, A, B, J, body, handles, height, size):
        self.A.append(A)
        self.B.append(B)
        self.joint.append(J)
        self.body.append(body)
        self.hlist.append(handles)
        self.height.append(height)
        self.size.append(size)
        return len(self.A) - 1

    def find(self, x):
        uf = self.uf
        root = x
        while uf[root] != root:
            root = uf[root]
        while uf[x] != root:
            uf[x], x = root, uf[x]
        return root

    def regions(self, J):
        """(node of A, node of B, representative of A, of B) for joint J."""
        ra, rb = self.find(int(self.parent[J])), self.find(J)
        return self.region_node[ra], self.region_node[rb], ra, rb

    def merged_handles(self, a, b, J):
        ha = [h for h in self.hlist[a] if h != (J, 0)]
        hb = [h for h in self.hlist[b] if h != (J, 1)]
        return ha + hb

    def merge(self, J):
        a, b, ra, rb = self.regions(J)
        if ra == rb:
            raise ValueError(f"joint {self.model.joint_name[J]!r} is assembled twice")
        h = self.merged_handles(a, b, J)
        node = self._add(a, b, J, -1, h, 1 + max(self.height[a], self.height[b]),
                         self.size[a] + self.size[b])
        self.uf[rb] = ra
        self.region_node[ra] = node
        return node

    def close_roots(self):
        """Add the root node of every component (A = the world)."""
        for r in np.flatnonzero(self.parent < 0):
            r = int(r)
            b = self.region_node[self.find(r)]
            h = self.hlist[b]
            if h != [(r, 1)]:
                open_ = [self.model.joint_name[j] for j, s in h if (j, s) != (r, 1)]
                raise ValueError(f"the assembly order leaves joints {open_[:5]} of the component "
                                 f"of root body {self.model.body_name[r]!r} unassembled")
            self._add(-1, b, r, -1, [], self.height[b] + 1, self.size[b])

    def finish(self, kind) -> AssemblyTree:
        """The :class:`AssemblyTree` of the records (:func:`_tree_from_records`)."""
        n = len(self.A)
        nh = np.array([len(h) for h in self.hlist], dtype=np.int64)
        flat = [h for lst in self.hlist for h in lst]
        rec = np.array([self.A, self.B, self.joint, self.body, self.height, self.size, nh],
                       dtype=np.int64).reshape(7, n).T.copy()
        hj = np.array([h[0] for h in flat], dtype=np.int64)
        hs = np.array([h[1] for h in flat], dtype=np.int64)
        return _tree_from_records(kind, self.model.nb, self.parent, rec,
                                  (_offsets(nh), hj, hs))


def _offsets(counts):
    """Start of each run of ``counts`` (int64) in a flat array: ``[0, cumsum[:-1]]``."""
    out = np.zeros(counts.size, dtype=np.int64)
    np.cumsum(counts[:-1], out=out[1:])
    return out


def _tree_from_records(kind, nb, parent, rec, handles) -> AssemblyTree:
    """The :class:`AssemblyTree` of node records in creation order: ``rec`` (n, 7) int64
    rows ``(A, B, joint, body, height, size, handle count)``, ``handles = (start, hj, hs)``
    the handles of node i at ``start[i]`` in the flat joint and side arrays. Post-order
    from each root node (root joints in body order), A's subtree before B's."""
    n = rec.shape[0]
    A, B, J = rec[:, 0], rec[:, 1], rec[:, 2]
    roots = np.flatnonzero((J >= 0) & (parent[np.maximum(J, 0)] < 0))
    order, ca, cb = _post_order(rec, roots, handles)
    new = np.empty(n, dtype=np.int64)
    new[order] = np.arange(n)
    node_A = np.where(A[order] >= 0, new[np.maximum(A[order], 0)], -1)
    node_B = np.where(B[order] >= 0, new[np.maximum(B[order], 0)], -1)
    node_parent = np.full(n, -1, dtype=np.int64)
    node_parent[node_A[node_A >= 0]] = np.flatnonzero(node_A >= 0)
    node_parent[node_B[node_B >= 0]] = np.flatnonzero(node_B >= 0)
    nh = rec[order, 6]
    hoff = _offsets(nh)
    nbk = nh * (nh + 1) // 2
    start, hj, hs = handles
    src = np.repeat(start[order] - hoff, nh) + np.arange(int(nh.sum()), dtype=np.int64)
    joint = J[order]
    body = rec[order, 3]
    leaf_of_body = np.empty(nb, dtype=np.int64)
    node_of_joint = np.empty(nb, dtype=np.int64)
    leaf_of_body[body[body >= 0]] = np.flatnonzero(body >= 0)
    node_of_joint[joint[joint >= 0]] = np.flatnonzero(joint >= 0)
    return AssemblyTree(
        kind=kind, nb=nb, n_nodes=n, node_A=node_A, node_B=node_B, node_parent=node_parent,
        node_joint=joint, node_body=body, node_height=rec[order, 4], node_size=rec[order, 5],
        node_nh=nh, node_hoff=hoff, node_poff=_offsets(nbk), node_ca=ca, node_cb=cb,
        handle_joint=hj[src], handle_side=hs[src], leaf_of_body=leaf_of_body,
        node_of_joint=node_of_joint, roots=np.sort(new[roots]), n_slots=int(nh.sum()),
        n_blocks=int(nbk.sum()))


@njit(**JIT)
def _post_order(rec, roots, handles):
    """The post-order of :func:`_tree_from_records` (``order[k]``: the record of node k)
    and, in that order, the slots of the connecting handles ``(J, 0)`` in A and ``(J, 1)``
    in B (-1 where there is none)."""
    start, hj, hs = handles
    n = rec.shape[0]
    order = np.empty(n, dtype=np.int64)
    stack = np.empty(n + 1, dtype=np.int64)
    done = np.empty(n + 1, dtype=np.bool_)
    k = 0
    for r in roots:
        stack[0] = r
        done[0] = False
        top = 1
        while top > 0:
            top -= 1
            i = stack[top]
            a, b = rec[i, 0], rec[i, 1]
            if done[top] or (a < 0 and b < 0):
                order[k] = i
                k += 1
                continue
            done[top] = True
            top += 1
            if b >= 0:
                stack[top] = b
                done[top] = False
                top += 1
            if a >= 0:
                stack[top] = a
                done[top] = False
                top += 1
    ca = np.full(n, -1, dtype=np.int64)
    cb = np.full(n, -1, dtype=np.int64)
    for u in range(n):
        i = order[u]
        J = rec[i, 2]
        if J < 0:
            continue
        for side in range(2):
            c = rec[i, side]                     # side 0: A's handle (J, 0); 1: B's (J, 1)
            if c < 0:
                continue
            for s in range(rec[c, 6]):
                if hj[start[c] + s] == J and hs[start[c] + s] == side:
                    if side == 0:
                        ca[u] = s
                    else:
                        cb[u] = s
                    break
    return order, ca, cb


def _balanced(model: Model, max_handles: int | None) -> AssemblyTree:
    """The ``"balanced"`` tree (module docstring): greedy lowest-height-first merging with a
    handle cap (:func:`_balanced_merges`), then one root node per component."""
    nb = model.nb
    parent = np.ascontiguousarray(model.body_parent, dtype=np.int64)
    deg = int(1 + np.bincount(parent[parent >= 0], minlength=nb).max(initial=0))
    cap = max(3, deg) if max_handles is None else max(int(max_handles), deg, 2)
    hj = np.full((2 * nb, cap), -1, dtype=np.int64)
    hs = np.zeros(hj.shape, dtype=np.int64)
    hj[:nb], hs[:nb], nh = _leaf_handles(parent, cap)
    rec = np.zeros((2 * nb, 7), dtype=np.int64)   # A, B, joint, body, height, size, nh
    rec[:nb, :3] = -1
    rec[:nb, 3] = np.arange(nb)
    rec[:nb, 5] = 1
    rec[:nb, 6] = nh
    rec[nb:, 3] = -1
    uf = np.arange(nb, dtype=np.int64)
    region_node = np.arange(nb, dtype=np.int64)
    n = _balanced_merges(parent, cap, rec, hj, hs, (uf, region_node))
    for r in np.flatnonzero(parent < 0):             # root nodes (A = the world)
        b = region_node[_find(uf, r)]
        left = [model.joint_name[hj[b, s]] for s in range(rec[b, 6])
                if (hj[b, s], hs[b, s]) != (r, 1)]
        if left:
            raise ValueError(f"the assembly order leaves joints {left[:5]} of the component "
                             f"of root body {model.body_name[r]!r} unassembled")
        rec[n] = (-1, b, r, -1, rec[b, 4] + 1, rec[b, 5], 0)
        n += 1
    w = hj.shape[1]
    return _tree_from_records("balanced", nb, parent, rec[:n],
                              (w * np.arange(n, dtype=np.int64), hj[:n].ravel(),
                               hs[:n].ravel()))


@njit(**JIT)
def _balanced_merges(parent, max_handles, rec, hj, hs, regions):
    """The merges of :func:`_balanced`: a heap of candidate joints keyed ``(height of the
    union, its handle count, its body count, joint)``, stale entries skipped when popped.
    ``rec`` (2 nb, 7) int64 node records ``(A, B, joint, body, height, size, handle
    count)``, ``hj, hs`` (2 nb, cap) their handles' joints and sides, the first nb rows the
    leaves;
    ``regions = (uf, region_node)`` (nb,) the union-find over bodies and each region's
    node. Returns the node count; the merges fill the rows from nb on, in creation
    order."""
    uf, region_node = regions
    nb = parent.shape[0]
    n = nb
    heap = [(0, 0, 0, 0, 0, 0)]
    heap.pop()
    for J in range(nb):
        if parent[J] >= 0:
            _push_merge(J, parent, max_handles, rec, regions, heap)
    while len(heap) > 0:
        _h, _nh, _size, J, a0, b0 = heapq.heappop(heap)
        ra = _find(uf, parent[J])
        rb = _find(uf, J)
        a = region_node[ra]
        b = region_node[rb]
        if ra == rb or a != a0 or b != b0:
            continue                    # stale: the entry of the current (a, b) is queued
        k = 0
        for s in range(rec[a, 6]):
            if hj[a, s] != J or hs[a, s] != 0:
                hj[n, k] = hj[a, s]
                hs[n, k] = hs[a, s]
                k += 1
        for s in range(rec[b, 6]):
            if hj[b, s] != J or hs[b, s] != 1:
                hj[n, k] = hj[b, s]
                hs[n, k] = hs[b, s]
                k += 1
        rec[n, 0] = a
        rec[n, 1] = b
        rec[n, 2] = J
        rec[n, 4] = 1 + max(rec[a, 4], rec[b, 4])
        rec[n, 5] = rec[a, 5] + rec[b, 5]
        rec[n, 6] = k
        uf[rb] = ra
        region_node[ra] = n
        for s in range(k):
            if parent[hj[n, s]] >= 0:
                _push_merge(hj[n, s], parent, max_handles, rec, regions, heap)
        n += 1
    return n


@njit(**JIT)
def _find(uf, x):
    """Representative of body x in the union-find ``uf``, with path compression."""
    root = x
    while uf[root] != root:
        root = uf[root]
    while uf[x] != root:
        nxt = uf[x]
        uf[x] = root
        x = nxt
    return root


@njit(**JIT)
def _push_merge(J, parent, max_handles, rec, regions, heap):
    """Queue the merge over joint J of the two current regions it joins, unless their union
    would have more than ``max_handles`` handles (it is queued again when either changes)."""
    uf, region_node = regions
    a = region_node[_find(uf, parent[J])]
    b = region_node[_find(uf, J)]
    nh = rec[a, 6] + rec[b, 6] - 2
    if nh > max_handles:
        return
    heapq.heappush(heap, (1 + max(rec[a, 4], rec[b, 4]), nh, rec[a, 5] + rec[b, 5], J, a, b))


def build_assembly(model: Model, order="balanced", *,
                   max_handles: int | None = None) -> AssemblyTree:
    """Build the DCA assembly tree of a model.

    Parameters
    ----------
    model : Model
    order : {"balanced", "serial"} or sequence of int | str
        ``"balanced"``: greedy lowest-height-first merging, height O(log n) on chains and
        bounded-degree trees. ``"serial"``: the ABA's elimination order (joints by
        decreasing index), height ``n`` on an n-body chain; for comparison. A sequence:
        the joints (indices or names) in the order they are assembled.
    max_handles : int, optional
        Handle cap of the balanced construction; default ``max(3, largest body degree)`` (a
        leaf's handle count is its body's degree, so smaller caps are raised to that).

    Returns
    -------
    AssemblyTree

    Raises
    ------
    ValueError
        An unknown kind, a user order that is not a permutation of the non-root joints
        (names the joint), or that assembles a root joint too early.
    TypeError
        ``order`` of the wrong type.

    Notes
    -----
    Complexity O(n log n) (balanced, compiled), O(n) otherwise (plain Python).
    Source: Featherstone's assembly trees as used by Redon, Galoppo & Lin (2005), Sec. 3,
    and Redon & Lin (2005), Sec. 3.1.
    """
    if not isinstance(model, Model):
        raise TypeError(f"model must be an articulated.Model, got {type(model).__name__}")
    if isinstance(order, str) and order == "balanced":
        return _balanced(model, max_handles)
    bld = _Builder(model)
    nb = model.nb
    parent = model.body_parent
    if isinstance(order, str):
        if order == "serial":
            for J in range(nb - 1, -1, -1):
                if parent[J] >= 0:
                    bld.merge(J)
        else:
            raise ValueError(f"unknown assembly order {order!r}; expected one of "
                             f"{ASSEMBLY_KINDS} or a sequence of joints")
        kind = order
    else:
        try:
            seq = list(order)
        except TypeError:
            raise TypeError(f"order must be 'balanced', 'serial' or a sequence of joints, "
                            f"got {order!r}") from None
        joints = [model.joint_id(j) if not isinstance(j, (int, np.integer)) else int(j)
                  for j in seq]
        for j in joints:
            model.joint_id(j)   # range check with a clear message
        nonroot = [j for j in joints if parent[j] >= 0]
        if len(set(joints)) != len(joints):
            dup = next(j for j in joints if joints.count(j) > 1)
            raise ValueError(f"joint {model.joint_name[dup]!r} appears twice in the assembly order")
        missing = sorted(set(np.flatnonzero(parent >= 0).tolist()) - set(nonroot))
        if missing:
            raise ValueError(f"the assembly order misses joints "
                             f"{[model.joint_name[j] for j in missing[:5]]}")
        done_roots = set()
        for j in joints:
            if parent[j] < 0:
                done_roots.add(j)
                continue
            root = j
            while parent[root] >= 0:
                root = int(parent[root])
            if root in done_roots:
                raise ValueError(f"root joint {model.joint_name[root]!r} comes before joint "
                                 f"{model.joint_name[j]!r} of its component in the assembly order")
            bld.merge(j)
        kind = "user"
    bld.close_roots()
    return bld.finish(kind)
