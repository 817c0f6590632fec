"""Collision detection on the hybrid body of adaptive dynamics.

Collision detection on the hybrid body of adaptive dynamics (Gayle, Lin & Manocha 2006,
"GLM", sec. IV intro and VI): the contacts of :mod:`articulated.algorithms.collision`, found
in O(N_A + shapes of the pieces near something) per step, instead of placing every shape
from every body's world pose.

While the active region stays, every rigid piece of the hybrid body (the bodies joined by
rigidified joints, one body of the reduced tree, :mod:`articulated.algorithms.reduced`)
moves as one rigid body. So, once per region (an epoch cache, like the reduced tree's
inertias; :func:`build_pieces`, O(shapes) integer passes, the shapes placed again only
where a body's piece frame changed, from :func:`piece_poses`):

* each shape's pose is kept in its piece's frame (``lR, lp``); the shapes of the bodies
  welded to the world (a rigidified root) keep their world pose in slot 0;
* each piece gets a bounding ball in its frame (centre ``c``: the mean of its shapes'
  origins; radius ``r``: the farthest shape's bounding ball).

Per step (:func:`detect_hybrid`), from the reduced tree's world poses and body twists only:

1. each piece's ball in the world, grown by the largest speculative margin of its shapes,
   ``h (|v_c| + |omega| r)`` with ``v_c`` the velocity of the ball's centre (a shape's
   own margin ``h (|v_g| + |omega| rb_g)`` is never larger, since
   ``|v_g| <= |v_c| + |omega| |p_g - c|`` and ``|p_g - c| + rb_g <= r``);
2. sweep and prune of the pieces' balls and the static shapes' balls (along the axis of
   largest spread of the piece centres; the order kept from step to step, so O(N_A + static
   shapes) when little moves), then each moving piece against the planes; the shapes of a
   piece whose ball meets another's (not both immobile: the welded bodies and the
   environment do not move) are placed in the world from the piece's pose
   (``gR = oE_p^T lR``, ``gp = op_p + oE_p^T lp``) with their own margins; two pieces
   are tested only if both have a shape that some shape on a body may touch (the pair
   filters: a chain without self-collision places only its pieces near obstacles);
3. the placed shapes and the static shapes go through the whole model's sweep and prune
   (:func:`~articulated.algorithms.collision.broad_phase`'s order and ball test; a shape
   not placed this step keeps its last lower end, so the kept order is still sorted by the
   stored ends and the sweep passes over it at a few ns); two shapes of one piece are never
   a candidate (they cannot move against each other: GLM's "pairs inside one rigid piece
   are skipped");
4. the candidates, sorted by pair index, go to the narrow phase
   :func:`~articulated.algorithms.collision.detect_kernel` unchanged, so the contacts and
   their keys are those of the whole model's detection (same pairs and margins, shape
   poses equal to rounding), without the pairs inside one piece.

Meshes are not handled here (their narrow phase reads every shape's pose, in Python):
a simulator with a mesh detects on the whole model.
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np
from numba import njit

from ..config import inline, JIT, KERNEL
from ..geometry import SHAPE_PLANE
from ..model import model_arrays
from .collision import (_pair_index, ball_candidate, contact_buffer, detect_kernel, grown,
                        insertion_sort, place_pose, point_speeds, sort_candidates, sweep_axis)
from .kinematics import joint_transform, world_pose_step

HybridShapes = namedtuple("HybridShapes", (
    "start", "shape", "slot", "lR", "lp", "c", "r", "ns", "wc", "wr", "placed", "order",
    "lo", "moving", "statics", "planes", "bodypair", "sc", "front", "redo"))
HybridShapes.__doc__ = """The shapes of a hybrid body by rigid piece (``nb`` bodies, ``ng``
shapes). Slot 0: the bodies welded to the world; slot ``p + 1``: piece (reduced body) ``p``.
``start`` (nb + 2,) int64 and ``shape`` (ng,) int64: the shapes of slot s are
``shape[start[s]:start[s + 1]]`` (increasing), ``slot`` (ng,) int64 the slot of each shape
(-1: static); ``lR`` (ng, 3, 3), ``lp`` (ng, 3) [m] each shape's pose in its piece's frame
(slot 0: world); ``c`` (nb + 1, 3) [m] and ``r`` (nb + 1,) [m] each slot's bounding ball in
its frame; ``ns`` (1,) int64 the slots in use (N_A + 1); per step ``wc`` (nb + 1, 3), ``wr``
(nb + 1,) the balls in the world with their margins and ``placed`` (nb + 1,) bool;
``order`` (nb + 1 + nst,) int64 and ``lo`` (nb + 1 + nst,) the sweep of the slots' and
static shapes' balls (kept sorted from step to step); ``moving`` (nb,) int64 the slots of
the moving pieces, 1..nb; ``statics`` and ``planes`` int64 the static shapes that are not
planes, and the planes; ``bodypair`` (ng,) bool whether a shape has an allowed pair with
a shape on a body, and ``sc`` (nb + 1,) bool whether a slot has such a shape (two slots
without one are never candidates: their balls are not tested); ``front`` (nb,) int64 the
frame each body's shapes are kept in since the last build (its piece's front body, -1 the
world, -2 none yet) and ``redo`` (nb,) bool the bodies whose shapes a build places again."""


def hybrid_shapes(gm, nb: int) -> HybridShapes:
    """Empty :class:`HybridShapes` for the shapes ``gm`` (a
    :class:`~articulated.algorithms.collision.GeomModel`) of a model of ``nb`` bodies."""
    ng = gm.body.shape[0]
    static = gm.body < 0
    plane = gm.kind == SHAPE_PLANE
    statics = np.flatnonzero(static & ~plane).astype(np.int64)
    ne = nb + 1 + len(statics)
    bodypair = np.zeros(ng, np.bool_)
    pairs = gm.pairs[(gm.body[gm.pairs[:, 0]] >= 0) & (gm.body[gm.pairs[:, 1]] >= 0)]
    bodypair[pairs.ravel()] = True
    return HybridShapes(np.zeros(nb + 2, np.int64), np.zeros(ng, np.int64),
                        np.full(ng, -1, np.int64), np.zeros((ng, 3, 3)), np.zeros((ng, 3)),
                        np.zeros((nb + 1, 3)), np.zeros(nb + 1), np.zeros(1, np.int64),
                        np.zeros((nb + 1, 3)), np.zeros(nb + 1), np.zeros(nb + 1, np.bool_),
                        np.arange(ne, dtype=np.int64), np.zeros(ne),
                        np.arange(1, nb + 1, dtype=np.int64), statics,
                        np.flatnonzero(plane).astype(np.int64), bodypair,
                        np.zeros(nb + 1, np.bool_), np.full(nb, -2, np.int64),
                        np.ones(nb, np.bool_))


@njit(**KERNEL)
def piece_poses(model_i, model_f, q, near, redo, fE, fp):
    """Each body's pose in its piece's frame at the configuration ``q`` (nq,), for the
    bodies ``redo`` (nb,) bool: ``fE`` (nb, 9) rotates piece to body coordinates, ``fp``
    (nb, 3) [m] is the body's origin in the piece's frame (``Xup`` composed from the
    piece's front body down, RBDA Table 2.5; the world's for the bodies welded to it,
    ``near[b] = -1``). ``near`` (nb,) int64: the nearest active joint on each body's path
    (the front body of its piece). ``redo`` is first closed upwards to the front bodies
    (a pose needs its parent's in the same piece). O(nb) integer pass plus
    O(bodies in ``redo``)."""
    mv = model_arrays(model_i, model_f)
    parent = mv.parent
    nb = parent.shape[0]
    for b in range(nb - 1, -1, -1):
        if redo[b] and near[b] != b and parent[b] >= 0:
            redo[parent[b]] = True
    for b in range(nb):
        if not redo[b]:
            continue
        if near[b] == b:            # a front body: the piece's frame is its own
            for k in range(9):
                fE[b, k] = 1.0 if k % 4 == 0 else 0.0
            for k in range(3):
                fp[b, k] = 0.0
            continue
        E, r = joint_transform(b, mv.jtype, mv.qadr, mv.Xtree_rot, mv.axis, mv.Xtree_E,
                               mv.Xtree_r, q)
        world_pose_step(b, parent, E, r, fE, fp)


@njit(**JIT)
def build_pieces(hs, gm, piece, front, npc, fE, fp):
    """Fill ``hs`` for a new active region (O(ng + nb)): ``piece`` (nb,) int64 the piece
    (reduced body) of each body, -1 welded to the world; ``front`` (>= npc,) int64 the body
    whose frame is each piece's (the child of its active joint); ``npc`` the pieces; the
    shapes of the bodies ``hs.redo`` placed again in their piece's frame (slot 0: the
    world) from the bodies' poses in it, ``fE`` (nb, 3, 3) (piece to body coordinates)
    and ``fp`` (nb, 3) [m] (:func:`piece_poses`), the others kept. The shapes of a front
    body keep their body-frame pose as it is (placed from the piece's pose they are then
    those of the whole model's detection, bit for bit, when the reduced tree's poses are
    the model's: every joint active)."""
    ns = npc + 1
    hs.ns[0] = ns
    for s in range(ns + 1):
        hs.start[s] = 0
    for g in range(gm.body.shape[0]):
        b = gm.body[g]
        if b >= 0:
            hs.start[piece[b] + 2] += 1
    for s in range(1, ns + 1):
        hs.start[s] += hs.start[s - 1]
    for g in range(gm.body.shape[0]):  # shapes by slot, increasing within one
        b = gm.body[g]
        if b < 0:
            continue
        s = piece[b] + 1
        hs.slot[g] = s
        k = hs.start[s]
        hs.shape[k] = g
        hs.start[s] = k + 1
        if not hs.redo[b]:
            continue
        if s > 0 and b == front[s - 1]:  # the piece's frame is the body's
            for i in range(3):
                for j in range(3):
                    hs.lR[g, i, j] = gm.R[g, i, j]
                hs.lp[g, i] = gm.pos[g, i]
            continue
        place_pose(fE, b, fp, g, gm.R, gm.pos, hs.lR, hs.lp)
    for s in range(ns, 0, -1):  # undo the shift of the fill
        hs.start[s] = hs.start[s - 1]
    hs.start[0] = 0
    for e in range(ns + hs.statics.shape[0]):  # a new sweep of the slots
        hs.order[e] = e
    for s in range(ns):
        lo, hi = hs.start[s], hs.start[s + 1]
        c0 = c1 = c2 = 0.0
        hs.sc[s] = False
        for k in range(lo, hi):
            g = hs.shape[k]
            hs.sc[s] = hs.sc[s] or hs.bodypair[g]
            c0 += hs.lp[g, 0]
            c1 += hs.lp[g, 1]
            c2 += hs.lp[g, 2]
        if hi > lo:
            c0 /= hi - lo
            c1 /= hi - lo
            c2 /= hi - lo
        r = 0.0
        for k in range(lo, hi):
            g = hs.shape[k]
            d0 = hs.lp[g, 0] - c0
            d1 = hs.lp[g, 1] - c1
            d2 = hs.lp[g, 2] - c2
            r = max(r, np.sqrt(d0 * d0 + d1 * d1 + d2 * d2) + gm.rb[g])
        hs.c[s, 0] = c0
        hs.c[s, 1] = c1
        hs.c[s, 2] = c2
        hs.r[s] = r


@inline
def _place(hs, gm, poses, s, roE, rop, vb, h):
    """World poses and margins of the shapes of slot s (once per step: ``hs.placed``), as
    :func:`~articulated.algorithms.collision.place_shapes` from the piece's pose."""
    if hs.placed[s]:
        return
    hs.placed[s] = True
    for k in range(hs.start[s], hs.start[s + 1]):
        g = hs.shape[k]
        if s == 0:
            for i in range(3):
                for j in range(3):
                    poses.gR[g, i, j] = hs.lR[g, i, j]
                poses.gp[g, i] = hs.lp[g, i]
            poses.margin[g] = 0.0
            continue
        p = s - 1
        place_pose(roE, p, rop, g, hs.lR, hs.lp, poses.gR, poses.gp)
        vx, w = point_speeds(vb, p, (hs.lp[g, 0], hs.lp[g, 1], hs.lp[g, 2]))
        poses.margin[g] = h * (vx + w * gm.rb[g])


@njit(**JIT)
def hybrid_broad_phase(hs, gm, poses, roE, rop, vb, h, extra, bp):
    """The candidate pairs of a step into ``bp.cand``, increasing (module docstring, steps
    1-3): piece poses ``roE`` (npc, 3, 3), ``rop`` (npc, 3), piece twists ``vb`` (npc, 6)
    ``[omega; v_O]`` in piece coordinates, step ``h`` [s], ``extra`` [m] added to every
    reach; ``bp`` the whole model's :class:`~articulated.algorithms.collision.Broad` (its
    shape order, kept from step to step, and sweep axis). Returns their number (may exceed
    the capacity of ``bp.cand``: then call again with more room)."""
    ns = hs.ns[0]
    nst = hs.statics.shape[0]
    gp = poses.gp
    half = 0.5 * extra
    # 1. the pieces' balls in the world, grown by their margins
    for s in range(ns):
        hs.placed[s] = False
        if s == 0:
            for i in range(3):
                hs.wc[0, i] = hs.c[0, i]
            hs.wr[0] = hs.r[0] + half
            continue
        p = s - 1
        for i in range(3):
            a = rop[p, i]
            for m in range(3):
                a += roE[p, m, i] * hs.c[s, m]
            hs.wc[s, i] = a
        vx, w = point_speeds(vb, p, (hs.c[s, 0], hs.c[s, 1], hs.c[s, 2]))
        hs.wr[s] = hs.r[s] + h * (vx + w * hs.r[s]) + half
    # the sweep axis: largest spread of the moving pieces' centres, as the whole model's
    ax = sweep_axis(hs.wc, hs.moving, ns - 1, bp.axis)
    # 2. pieces against pieces and static shapes: sweep and prune of their balls (entries
    # 0..ns-1 the slots, ns.. the static shapes; the order kept from step to step); the
    # pieces whose ball meets another's get their shapes placed
    ne = ns + nst
    order, lo = hs.order, hs.lo
    for e in range(ne):
        if e < ns:
            lo[e] = hs.wc[e, ax] - hs.wr[e] if hs.start[e + 1] > hs.start[e] else math.inf
        else:
            g = hs.statics[e - ns]
            lo[e] = gp[g, ax] - (gm.rb[g] + half)
    insertion_sort(order, lo, ne)
    for i in range(ne):
        e = order[i]
        if lo[e] == math.inf:  # the empty slots, last
            break
        if e < ns:
            ce = (hs.wc[e, 0], hs.wc[e, 1], hs.wc[e, 2])
            re = hs.wr[e]
        else:
            g = hs.statics[e - ns]
            ce = (gp[g, 0], gp[g, 1], gp[g, 2])
            re = gm.rb[g] + half
        end = ce[ax] + re
        for j in range(i + 1, ne):
            f = order[j]
            if lo[f] > end:
                break
            if f >= ns:
                if e >= ns or e == 0:  # the environment and the welded bodies do not move
                    continue
                g = hs.statics[f - ns]
                cf = (gp[g, 0], gp[g, 1], gp[g, 2])
                rf = gm.rb[g] + half
            else:
                if e >= ns and f == 0:
                    continue
                if e < ns and not (hs.sc[e] and hs.sc[f]):
                    continue                   # no allowed pair between the two pieces
                cf = (hs.wc[f, 0], hs.wc[f, 1], hs.wc[f, 2])
                rf = hs.wr[f]
            d0 = ce[0] - cf[0]
            d1 = ce[1] - cf[1]
            d2 = ce[2] - cf[2]
            if d0 * d0 + d1 * d1 + d2 * d2 > (re + rf) * (re + rf):
                continue
            if e < ns:
                _place(hs, gm, poses, e, roE, rop, vb, h)
            if f < ns:
                _place(hs, gm, poses, f, roE, rop, vb, h)
    # planes: each moving piece whose ball reaches below one, all its shapes
    k = 0
    cand = bp.cand
    for s in range(1, ns):
        lo_s, hi_s = hs.start[s], hs.start[s + 1]
        if hi_s == lo_s:
            continue
        for u in range(hs.planes.shape[0]):
            g = hs.planes[u]
            x = 0.0
            for i in range(3):
                x += poses.gR[g, i, 2] * (hs.wc[s, i] - gp[g, i])
            if x > hs.wr[s] + half:
                continue
            _place(hs, gm, poses, s, roE, rop, vb, h)
            for i in range(lo_s, hi_s):
                g2 = hs.shape[i]
                pi = _pair_index(gm, g2, g) if g2 < g else _pair_index(gm, g, g2)
                if pi >= 0:
                    if k < cand.shape[0]:
                        cand[k] = pi
                    k += 1
    # 3. the placed shapes and the static shapes: the whole model's sweep and prune (its
    # order kept from step to step; a shape not placed keeps its last lower end, so the
    # order stays sorted by the stored ends and the sweep passes over it), no pair inside
    # one piece, none between the welded bodies and the environment
    order, lo = bp.order, bp.lo
    nm = order.shape[0]
    for i in range(nm):
        g = order[i]
        sg = hs.slot[g]
        if sg < 0 or hs.placed[sg]:
            lo[g] = gp[g, ax] - (gm.rb[g] + poses.margin[g] + half)
    insertion_sort(order, lo, nm)
    for i in range(nm):
        a = order[i]
        sa = hs.slot[a]
        if sa >= 0 and not hs.placed[sa]:
            continue
        ra = gm.rb[a] + poses.margin[a] + half
        end = gp[a, ax] + ra
        for j in range(i + 1, nm):
            b = order[j]
            if lo[b] > end:
                break
            sb = hs.slot[b]
            if sb == sa or (sb >= 0 and not hs.placed[sb]) or (sa <= 0 and sb <= 0):
                continue
            k = ball_candidate(gm, gp, a, b, ra + gm.rb[b] + poses.margin[b] + half, cand, k)
    if k <= cand.shape[0]:
        sort_candidates(cand, k, bp.tmp, gm.pairs.shape[0])
    return k


@njit(**JIT)
def detect_hybrid(hs, gm, poses, broad, out, roE, rop, vb, h, extra):
    """The contacts of a hybrid body (module docstring): :func:`hybrid_broad_phase` and
    :func:`~articulated.algorithms.collision.detect_kernel`, growing the candidate and
    contact buffers when they are full (never dropping a contact), as
    :func:`~articulated.algorithms.collision.detect_primitives`. Returns ``(contacts,
    candidates, broad, out)`` with the buffers in use."""
    nc = hybrid_broad_phase(hs, gm, poses, roE, rop, vb, h, extra, broad)
    if nc > broad.cand.shape[0]:
        broad = grown(broad, nc)
        nc = hybrid_broad_phase(hs, gm, poses, roE, rop, vb, h, extra, broad)
    n = detect_kernel(gm, poses, extra, broad.cand, nc, out)
    if n > out.dist.shape[0]:
        out = contact_buffer(2 * n)
        n = detect_kernel(gm, poses, extra, broad.cand, nc, out)
    return n, nc, broad, out
