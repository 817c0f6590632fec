"""The look-ahead gaps (algorithms/lookahead.py): each contact's gap at the end of the step
under the unconstrained motion, against the detector run at that end configuration and
point velocities from ``art.jacobian``; and what it buys a chain swinging through
cylinders (the contacts' depth without substeps for the shapes' curved paths)."""

import numpy as np
import pytest

import articulated as art
from articulated.algorithms.collision import Detector
from articulated.algorithms.kinematics import _velocities_kernel, _world_poses_kernel
from articulated.algorithms.lookahead import (FrameMotion, ShapeFrames, ahead_gaps,
                                              lookahead_buffers)


def _scene(seed):
    """A random floating tree of 10 bodies, a capsule or a sphere on each, over a plane
    with a static cylinder and box, at a random configuration 5-25 cm above the plane
    with fast random joint rates."""
    m = art.models.random_tree(10, seed=seed, floating_base=True,
                               joint_types=("revolute", "prismatic", "spherical"))
    g = art.CollisionModel(m)
    rng = np.random.default_rng(seed)
    for b in range(m.nb):
        if b % 2:
            g.add(b, art.Sphere(radius=0.03))
        else:
            g.add(b, art.Capsule(radius=0.02, length=0.15))
    g.add_static(art.Plane(normal=(0, 0, 1)))
    g.add_static(art.Cylinder(radius=0.1, length=1.0, pos=(0.2, 0, 0.05),
                              R=np.array([[1.0, 0, 0], [0, 0, -1], [0, 1, 0]])))
    g.add_static(art.Box(size=(0.2, 0.2, 0.1), pos=(-0.2, 0.1, 0.02)))
    q = m.random_configuration(rng, scale=0.6)
    qd = rng.normal(scale=8.0, size=m.nv)
    return m, g, q, qd


def _poses(m, q, qd):
    """Copies of the bodies' world poses ``oE`` (world to body), ``op`` and velocities at
    ``(q, qd)`` (``m.data()`` is the model's one workspace)."""
    d = m.data()
    _world_poses_kernel(d.model_i, d.model_f, q, d.buf)
    _velocities_kernel(d.model_i, d.model_f, q, qd, d.buf)
    return d.oE.copy(), d.op.copy(), d.v.copy()


def _detect(m, det, q, qd, h, extra=0.0):
    oE, op, v = _poses(m, q, qd)
    return det.detect(oE, op, v, h, extra), (oE, op, v)


@pytest.mark.parametrize("seed", range(6))
def test_ahead_gap_is_the_gap_at_the_end_less_the_linear_motion(seed):
    """Where a contact's pair has the same features at both ends of the step, its
    look-ahead gap is its gap at ``q (+) h qd`` (the detector there) less ``h v_n`` (the
    normal speed from ``art.jacobian``), to 1e-12 m: so the rows' prediction ``d + h v_n``
    is the gap at the end."""
    h = 1e-3
    m, g, q, qd = _scene(seed)
    rows = 0
    for z in np.linspace(0.0, 0.4, 9):        # lower the tree onto the obstacles
        q1 = q.copy()
        q1[2] += z - 0.2
        det = Detector(g, 256)
        n, d = _detect(m, det, q1, qd, h)
        if n == 0:
            continue
        out = det.out
        dist0 = out.dist[:n].copy()
        keys = out.key[:n].copy()
        qe = art.integrate(m, q1, qd, h)
        oE1, op1, _ = _poses(m, qe, qd)
        gm = det.gm
        gap = np.full(n, np.nan)
        ahead_gaps(gm, det.poses, out, n, ShapeFrames(gm.body, 0, gm.R, gm.pos),
                   FrameMotion(*d, oE1, op1), h, lookahead_buffers(len(gm.body)), gap)
        assert np.array_equal(out.dist[:n], dist0)      # the detector's output is kept
        # the independent end: the detector at qe, with a reach that finds every feature
        end = Detector(g, 256)
        ne, _ = _detect(m, end, qe, qd, h, extra=0.05)
        at_end = {int(end.out.key[j]): float(end.out.dist[j]) for j in range(ne)}
        R, p = art.forward_kinematics(m, q1)
        for c in range(n):
            pair = keys[c] // 16
            start = {int(k) for k in keys if k // 16 == pair}
            ends = {k for k in at_end if k // 16 == pair}
            if start != ends or int(keys[c]) not in at_end:
                continue
            x, nrm = out.point[c], out.normal[c]
            v = 0.0
            for side, s in ((0, 1.0), (1, -1.0)):
                b = int(out.body[c, side])
                if b >= 0:
                    J = art.jacobian(m, q1, b, R[b].T @ (x - p[b]))[3:]
                    v += s * nrm @ (J @ qd)
            expect = at_end[int(keys[c])] - h * v
            assert abs(gap[c] - expect) <= 1e-12, (c, gap[c], expect, dist0[c])
            rows += 1
    assert rows >= 5


def test_ahead_gap_of_a_swinging_link_is_second_order():
    """A link swinging about a pivot at omega above a plane: its lowest point moves on a
    circle, so its gap at the end of the step exceeds the straight line's by about
    ``r omega^2 h^2 / 2`` (the centripetal stray): the look-ahead gap is the start's
    gap plus that (2 %)."""
    b = art.ModelBuilder()
    b.add_body("link", None, "revolute", axis=(0, 1, 0), mass=1.0,
               inertia=np.diag([1e-3] * 3))
    m = b.build()
    g = art.CollisionModel(m)
    r = 0.5
    g.add("link", art.Sphere(radius=0.01), pos=(0, 0, -r))
    g.add_static(art.Plane(normal=(0, 0, 1), pos=(0, 0, -r - 0.01 - 1e-4)))
    h, w = 1e-3, 40.0
    q, qd = np.zeros(1), np.array([w])
    det = Detector(g, 16)
    n, d = _detect(m, det, q, qd, h)
    assert n == 1
    dist0 = float(det.out.dist[0])
    oE1, op1, _ = _poses(m, art.integrate(m, q, qd, h), qd)
    gm = det.gm
    gap = np.zeros(1)
    ahead_gaps(gm, det.poses, det.out, n, ShapeFrames(gm.body, 0, gm.R, gm.pos),
               FrameMotion(*d, oE1, op1), h, lookahead_buffers(len(gm.body)), gap)
    stray = r * w * w * h * h / 2
    assert dist0 == pytest.approx(1e-4, abs=1e-12)
    assert gap[0] - dist0 == pytest.approx(stray, rel=0.02)


def test_a_chain_through_cylinders_stays_shallow_without_arc_substeps():
    """A 60-link pendulum falling through 8 cylinders (scene (a) of the contact bench,
    smaller), 700 steps: with the look-ahead (default ``max_arc_error``) its contacts
    are at most 0.2 mm deep; the rows' straight lines alone (``max_arc_error=None``) let
    them sink more than twice as deep."""
    from articulated.bench.contact import pendulum_cylinders

    depth = {}
    for key, opt in (("ahead", {}), ("straight", dict(max_arc_error=None))):
        m, geom, q0 = pendulum_cylinders(60, 8, seed=1)
        sim = art.Simulator(m, 1e-3, contacts=geom, q0=q0, contact_options=opt)
        tr = sim.run(700)
        assert tr.contacts["n"].sum() > 300
        depth[key] = float(tr.contacts["max_depth"].max())
    assert depth["ahead"] <= 2e-4
    assert depth["straight"] > 2 * depth["ahead"]
