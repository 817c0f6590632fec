"""Look-ahead gaps: the gap of each detected contact at the end of the step.

The contact rows predict a contact's gap at the end of a step of ``h`` linearly, ``d + h
v_n`` (``d`` its gap at the start, ``v_n`` its normal speed), and the response keeps that
prediction ``>= 0``. The shapes move on curves: the position update turns every joint at a
constant rate, so a link swinging about a pivot, or sliding around a cylinder, strays from
the straight line by ``h^2 / 2`` times its acceleration (to second order); the surfaces'
curvature and the change of the closest features add their own terms. In a chain whipping
around obstacles this is tenths of a millimetre per step, more than the contacts'
tolerance.

:func:`ahead_gaps` measures it instead of bounding it: the narrow phase of each contact's
pair at the shapes' poses at the end of the step under the unconstrained motion, ``q (+) h
qs``, gives the contact's gap there, ``g+`` (the contact of the same key near the same
point: the same features of the same pair); the rows take ``g+ - h v_n`` for its gap, so
that their
linear prediction ``d + h (v_n + dv_n)`` becomes ``g+ + h dv_n``: exact where the impulses
change nothing, and first order in the velocity change ``dv_n`` they make (whose own
curvature the substep rule bounds: :func:`~articulated.simulation.contact.contacts_arc_change`).
A feature of the pair that is closest only at the end (a capsule turning from its end
point onto its side) constrains the pair's contacts too: each takes the least of its own
feature's gap and the new features' gaps; a feature out of reach at the end takes the
reach (a lower bound of its gap).

Conservative advancement and speculative contacts predict along the straight line; this is
the step's own motion evaluated once more, O(n) for the end poses and O(1) per contact.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from ..config import inline, JIT, KERNEL
from .collision import GeomPoses, contact_buffer, detect_kernel, place_pose

ShapeFrames = namedtuple("ShapeFrames", ("owner", "shift", "lR", "lp"))
ShapeFrames.__doc__ = """Where the shapes sit: shape g in frame ``owner[g] - shift`` (int64;
negative: static, or welded to the world) at the local pose ``lR[g]`` (3, 3), ``lp[g]``
(3,) [m]. The whole model: its bodies (``gm.body``, 0, ``gm.R``, ``gm.pos``); a hybrid body:
its rigid pieces."""

FrameMotion = namedtuple("FrameMotion", ("oE", "op", "v", "oE1", "op1"))
FrameMotion.__doc__ = """The frames' world poses at the step's start, ``oE`` (nf, 3, 3) (world
to frame) and ``op`` (nf, 3) [m], their twists ``v`` (nf, 6) ``[omega; v_O]`` (frame
coordinates), and their poses at its end ``oE1``, ``op1``."""

LookAhead = namedtuple("LookAhead", ("gR", "gp", "out", "cand"))
LookAhead.__doc__ = """Scratch of :func:`ahead_gaps` for ``ng`` shapes: their world poses at
the end of the step, ``gR`` (ng, 3, 3) and ``gp`` (ng, 3) [m], ``out`` a
:class:`~articulated.algorithms.collision.Contacts` of one pair's contacts there and
``cand`` (1,) int64 that pair."""

AHEAD_CAP = 32
"""Most contacts of one pair that the look-ahead matches (a box-box manifold has at most 8)."""


@njit(**JIT)
def lookahead_buffers(ng):
    """Zeroed :class:`LookAhead` for ``ng`` shapes."""
    return LookAhead(np.zeros((ng, 3, 3)), np.zeros((ng, 3)), contact_buffer(AHEAD_CAP),
                     np.zeros(1, np.int64))


@inline
def _place_end(poses, sf, fm, la, g):
    """Shape g's world pose at the end of the step into ``la``: from its frame's end pose
    (:data:`ShapeFrames` ``sf``, :data:`FrameMotion` ``fm``), or its pose now in
    ``poses`` where its frame is negative (static, or welded to the world)."""
    f = sf.owner[g] - sf.shift
    if f >= 0:
        place_pose(fm.oE1, f, fm.op1, g, sf.lR, sf.lp, la.gR, la.gp)
    else:
        for i in range(3):
            la.gp[g, i] = poses.gp[g, i]
            for j in range(3):
                la.gR[g, i, j] = poses.gR[g, i, j]


@inline
def _point_velocity(oE, op, v, f, x):
    """World velocity [m/s] of the world point ``x`` (3 floats) carried by frame f (world
    to frame rotation ``oE[f]``, origin ``op[f]``, twist ``v[f] = [omega; v_O]`` in frame
    coordinates)."""
    r0 = x[0] - op[f, 0]
    r1 = x[1] - op[f, 1]
    r2 = x[2] - op[f, 2]
    # the lever in frame coordinates
    l0 = oE[f, 0, 0] * r0 + oE[f, 0, 1] * r1 + oE[f, 0, 2] * r2
    l1 = oE[f, 1, 0] * r0 + oE[f, 1, 1] * r1 + oE[f, 1, 2] * r2
    l2 = oE[f, 2, 0] * r0 + oE[f, 2, 1] * r1 + oE[f, 2, 2] * r2
    u0 = v[f, 3] + v[f, 1] * l2 - v[f, 2] * l1
    u1 = v[f, 4] + v[f, 2] * l0 - v[f, 0] * l2
    u2 = v[f, 5] + v[f, 0] * l1 - v[f, 1] * l0
    return (oE[f, 0, 0] * u0 + oE[f, 1, 0] * u1 + oE[f, 2, 0] * u2,
            oE[f, 0, 1] * u0 + oE[f, 1, 1] * u1 + oE[f, 2, 1] * u2,
            oE[f, 0, 2] * u0 + oE[f, 1, 2] * u1 + oE[f, 2, 2] * u2)


@inline
def _same(out, j, con, k, reach):
    """Whether contact j of ``out`` (at the end) is contact k of ``con`` (at the start):
    the same key, its point within ``reach`` [m] of the start's."""
    if out.key[j] != con.key[k]:
        return False
    d0 = out.point[j, 0] - con.point[k, 0]
    d1 = out.point[j, 1] - con.point[k, 1]
    d2 = out.point[j, 2] - con.point[k, 2]
    return d0 * d0 + d1 * d1 + d2 * d2 <= reach * reach


@njit(**KERNEL)
def ahead_gaps(gm, poses, con, n, sf, fm, h, la, gap):
    """The look-ahead gap ``gap[c] = g+ - h v_n`` [m] (module docstring) of each contact
    ``c < n`` of ``con`` (the detector's output at the step's start; ``gap`` (>= n,)):
    ``g+`` its gap at the end of a step of ``h`` [s], from the narrow phase of its pair at
    the end poses of its shapes' frames, ``v_n`` its normal speed now. The shapes in their
    frames :data:`ShapeFrames` ``sf`` (a static shape: its pose in ``poses``, the
    detector's :class:`~articulated.algorithms.collision.GeomPoses`, whose margins give
    the reach), the frames' motion :data:`FrameMotion` ``fm``; scratch ``la``. A feature
    counts as the same at the end when its key is and its point lies within the pair's
    reach of where it was. Pairs outside the compiled narrow phase (meshes) keep their
    gaps. O(n)."""
    for c in range(n):
        gap[c] = con.dist[c]
    npairs = gm.pairs.shape[0]
    c = 0
    while c < n:
        pi = con.key[c] // 16
        c1 = c + 1
        while c1 < n and con.key[c1] // 16 == pi:
            c1 += 1
        if pi < npairs:
            a = gm.pairs[pi, 0]
            b = gm.pairs[pi, 1]
            _place_end(poses, sf, fm, la, a)
            _place_end(poses, sf, fm, la, b)
            reach = 2.0 * (poses.margin[a] + poses.margin[b])
            for k in range(c, c1):
                reach = max(reach, 2.0 * abs(con.dist[k]))
            # the detector's narrow phase on this pair alone (its compiled kernel)
            la.cand[0] = pi
            m = detect_kernel(gm, GeomPoses(la.gR, la.gp, poses.margin),
                              reach - poses.margin[a] - poses.margin[b], la.cand, 1, la.out)
            if m <= AHEAD_CAP:
                # the least gap at the end of the features that are new there (another
                # key, or the same key far from where it was: a box's faces renumbered)
                low = reach
                for j in range(m):
                    new = True
                    for k in range(c, c1):
                        new &= not _same(la.out, j, con, k, reach)
                    if new:
                        low = min(low, la.out.dist[j])
                for k in range(c, c1):
                    g1 = reach      # its own feature's gap, or that of a new feature
                    for j in range(m):
                        if _same(la.out, j, con, k, reach):
                            g1 = la.out.dist[j]
                    g1 = min(g1, low)
                    x = (con.point[k, 0], con.point[k, 1], con.point[k, 2])
                    vn = 0.0
                    for side in range(2):
                        f = sf.owner[con.geom[k, side]] - sf.shift
                        if f >= 0:
                            u = _point_velocity(fm.oE, fm.op, fm.v, f, x)
                            s = 1.0 if side == 0 else -1.0
                            vn += s * (con.normal[k, 0] * u[0] + con.normal[k, 1] * u[1]
                                       + con.normal[k, 2] * u[2])
                    gap[k] = g1 - h * vn
        c = c1
