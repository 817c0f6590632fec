"""Contact: collision geometry, detection, the collision matrix and impulse response
(Gayle, Lin & Manocha 2006), against closed forms, CRBA and coal."""

import math

import numpy as np
import pytest

import articulated as art
from articulated.algorithms.collision import Detector
from articulated.algorithms.contact import collision_matrix

from conftest import coal_shape, step_factor

G = 9.81


def _free_body(mass, inertia):
    b = art.ModelBuilder()
    b.add_body("body", parent=None, joint="free", mass=mass, inertia=inertia)
    return b.build()


def _ball(e, mu=0.0, r=0.1):
    m = _free_body(1.0, np.eye(3) * 0.4 * r * r)
    geom = art.CollisionModel(m)
    geom.add("body", art.Sphere(radius=r), e=e, mu=mu)
    geom.add_static(art.Plane(normal=(0, 0, 1)), e=e, mu=mu)
    return m, geom


# ------------------------------------------------------------------ closed forms
@pytest.mark.parametrize("e", [0.0, 0.5, 1.0])
def test_ball_drop_restitution_and_rebound(e):
    """A frictionless ball (r 0.1 m, 1 kg) dropped from 1 m: the normal speed after the
    impact is e v^- to 1e-9, it rebounds to e^2 h within 1 %, never sinks, and with e = 0
    it rests on the plane. The impulse law alone (without the energy bound, which for
    e = 1 takes out the energy that placing the ball at its time of impact adds: see
    test_energy_bound_keeps_the_elastic_ball_below_its_start)."""
    m, geom = _ball(e)
    q0 = m.neutral()
    q0[2] = 1.1
    sim = art.Simulator(m, 1e-3, contacts=geom, q0=q0)
    tr = sim.run(1300)
    c = tr.contacts
    first = int(np.flatnonzero(c["impacts"])[0])
    v_minus = -(tr.qd[first, 5] - G * 1e-3)  # qd* of the impact step (gravity added)
    v_plus = tr.qd[first + 1, 5]
    assert v_minus > 4.4
    assert abs(v_plus - e * v_minus) <= 1e-9 * v_minus
    assert tr.q[:, 2].min() >= 0.1 - 1e-9
    if e > 0:
        later = np.flatnonzero(c["impacts"])[1:]
        apex = tr.q[first:(later[0] if len(later) else None), 2].max() - 0.1
        assert abs(apex - e * e * 1.0) <= 0.01 * e * e
    else:
        assert abs(tr.q[-1, 2] - 0.1) <= 1e-4
        assert np.abs(tr.qd[-1]).max() <= 1e-9


def _box_on(normal, mu, qd0=None, theta=0.0):
    m = _free_body(1.0, np.eye(3) * (2 * 0.2 ** 2 / 12))
    geom = art.CollisionModel(m)
    geom.add("body", art.Box(size=(0.2, 0.2, 0.2)), mu=mu)
    geom.add_static(art.Plane(normal=normal), mu=mu)
    q0 = m.neutral()
    q0[3:7] = [math.cos(theta / 2), 0.0, -math.sin(theta / 2), 0.0]  # bottom face on the plane
    q0[0:3] = 0.1 * np.asarray(normal)
    return m, geom, q0


def test_box_slides_to_rest_after_v0_squared_over_2_mu_g():
    mu, v0 = 0.5, 2.0
    m, geom, q0 = _box_on((0, 0, 1), mu)
    qd0 = np.zeros(6)
    qd0[3] = v0
    sim = art.Simulator(m, 1e-3, contacts=geom, q0=q0, qd0=qd0)
    tr = sim.run(600)
    d = v0 ** 2 / (2 * mu * G)
    assert abs(tr.q[-1, 0] - d) <= 0.01 * d
    assert np.abs(tr.qd[-1]).max() <= 1e-4
    # every impulse inside Coulomb's cone
    sim2 = art.Simulator(m, 1e-3, contacts=geom, q0=q0, qd0=qd0)
    for _ in range(50):
        sim2.step()
        for c in sim2.contact_list():
            p = c["impulse"]
            pn = p @ c["normal"]
            pt = np.linalg.norm(p - pn * c["normal"])
            assert pn >= 0.0
            assert pt <= mu * pn * (1 + 1e-12)


def test_one_compiled_contact_loop_for_one_body_and_for_many():
    """The compiled contact loop has one version whatever the model's size: NumPy flags a
    view of a one-body workspace C-contiguous and that of a many-body one strided, so views
    made in Python would type (and compile) the loop once for each; the loop takes them
    from the workspace buffer instead."""
    from articulated.simulation.contact_loop import contact_steps

    m, geom, q0 = _box_on((0, 0, 1), 0.5)
    art.Simulator(m, 1e-3, contacts=geom, q0=q0).run(3)
    sim, _ = _thrown_tree(0)
    sim.run(3)
    sim.step()                  # a single step: records of no rows, the same version
    assert m.nb == 1 and sim.model.nb > 1
    assert len(contact_steps.signatures) == 1, contact_steps.signatures


@pytest.mark.parametrize("dtheta, sticks", [(-0.01, True), (0.01, False)])
def test_box_on_incline_sticks_iff_tan_theta_below_mu(dtheta, sticks):
    """A box on a slope 0.01 rad below atan(mu) stays (< 0.1 mm in 0.5 s); 0.01 rad above,
    it slides (the closed form: 13 mm in 0.5 s)."""
    mu = 0.4
    th = math.atan(mu) + dtheta
    n = (-math.sin(th), 0.0, math.cos(th))
    m, geom, q0 = _box_on(n, mu, theta=th)
    sim = art.Simulator(m, 1e-3, contacts=geom, q0=q0)
    tr = sim.run(500)
    moved = np.linalg.norm(tr.q[-1, :3] - q0[:3])
    if sticks:
        assert moved <= 1e-4
    else:
        assert moved >= 0.5 * 0.5 * G * (math.sin(th) - mu * math.cos(th)) * 0.5 ** 2
    assert tr.contacts["max_depth"].max() <= 1e-6


def _thrown_box(seed):
    """A box 0.2 x 0.3 x 0.4 m thrown spinning at a plane from 0.6 m, random mu in [0, 2] and
    e in [0, 1]: the scene where Poisson restitution with Coulomb sweeps gained energy."""
    rng = np.random.default_rng(seed)
    m = _free_body(1.0, np.diag([0.004, 0.006, 0.008]))
    geom = art.CollisionModel(m)
    geom.add("body", art.Box(size=(0.2, 0.3, 0.4)), mu=rng.uniform(0, 2), e=rng.uniform(0, 1))
    geom.add_static(art.Plane(normal=(0, 0, 1)), mu=1.0, e=rng.uniform(0, 1))
    q0 = m.neutral()
    q0[2] = 0.6
    qd0 = np.concatenate([rng.normal(scale=5.0, size=3), rng.normal(size=3)])
    return art.Simulator(m, 1e-3, contacts=geom, q0=q0, qd0=qd0), 1500


def _thrown_tree(seed):
    """A random 8-body tree (free base; revolute, prismatic and spherical joints, limits
    +-0.4 on the first two kinds) with a random sphere or capsule on every body (mu in
    [0, 2], e in [0, 1]) thrown at a plane; self-collision on."""
    m = art.models.random_tree(8, seed=seed, floating_base=True,
                               joint_types=("revolute", "prismatic", "spherical"))
    m = m.with_limits(-0.4, 0.4)
    rng = np.random.default_rng(seed)
    geom = art.CollisionModel(m)
    for b in range(m.nb):
        mat = dict(mu=rng.uniform(0, 2), e=rng.uniform(0, 1))
        if rng.random() < 0.5:
            geom.add(b, art.Sphere(radius=rng.uniform(0.03, 0.1)), **mat)
        else:
            geom.add(b, art.Capsule(radius=rng.uniform(0.02, 0.06), length=rng.uniform(0.05, 0.2)),
                     **mat)
    q0 = m.random_configuration(rng, scale=0.35)
    lim = m.jnt_qadr[m.jnt_limited]
    q0[lim] = np.clip(q0[lim], -0.35, 0.35)
    _, p = art.forward_kinematics(m, q0)
    geom.add_static(art.Plane(normal=(0, 0, 1), pos=(0, 0, p[:, 2].min() - 0.15)),
                    mu=rng.uniform(0, 2), e=rng.uniform(0, 1))
    qd0 = rng.normal(scale=1.0, size=m.nv)
    qd0[:3] = rng.normal(size=3)
    qd0[2] = -abs(qd0[2]) - 2.0
    return art.Simulator(m, 1e-3, contacts=geom, limits=True, q0=q0, qd0=qd0), 800


def test_impulses_never_add_kinetic_energy():
    """No step's contact and limit impulses raise the kinetic energy (relative 1e-12):
    thrown boxes (6 seeds) and random trees with limits and self-collision (5 seeds), mu
    in [0, 2], e in [0, 1]. Before the energy safeguard of solve_impulses the boxes gained
    up to 3x at frictional impacts."""
    impacts = limits = fallbacks = 0
    for make, seeds in ((_thrown_box, range(6)), (_thrown_tree, range(5))):
        for seed in seeds:
            sim, steps = make(seed)
            c = sim.run(steps).contacts
            k = (c["n"] + c["limits"]) > 0
            gain = (c["ke_after"] - c["ke_before"])[k] / c["ke_before"][k]
            assert gain.max() <= 1e-12, (make.__name__, seed)
            impacts += int(c["impacts"].sum())
            limits += int(c["limits"].sum())
            fallbacks += int(c["fallback"].sum())
    assert impacts > 500 and limits > 1000 and fallbacks >= 1


# ------------------------------------------------------------------ collision matrix
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_collision_matrix_equals_J_Minv_JT_from_crba(seed):
    """K from three test impulses on ABA's factorization = F (J_a - J_b) M^-1 (J_a -
    J_b)^T F^T with M from CRBA and J from jacobian(), random trees with every joint type
    (floating bases included), to 1e-9."""
    m = art.models.random_tree(14, seed=seed)
    rng = np.random.default_rng(seed)
    q = m.random_configuration(rng)
    M = art.crba(m, q)
    R, p = art.forward_kinematics(m, q)
    for a, b in [(9, 13), (13, None), (5, 0)]:
        x = rng.normal(size=3)
        n = rng.normal(size=3)
        K, J, F = collision_matrix(m, q, a, x, n, other=b)

        def Jp(body):
            return art.jacobian(m, q, body, R[body].T @ (x - p[body]))[3:]

        Jr = F @ (Jp(a) - (Jp(b) if b is not None else 0.0))
        Kr = Jr @ np.linalg.solve(M, Jr.T)
        assert np.abs(J - Jr).max() <= 1e-9 * max(1.0, np.abs(Jr).max())
        assert np.abs(K - Kr).max() <= 1e-9 * np.abs(Kr).max()
        assert np.allclose(F @ F.T, np.eye(3), atol=1e-14)
        assert np.allclose(F[0], n / np.linalg.norm(n), atol=1e-15)


def test_block_rows_and_sweeps_equal_per_contact():
    """Contacts grouped by body pair (GLM VI, on the pair's 6 x 6 block): the rows of a
    block's contacts (from six unit test impulses) = F (J_a - J_b) and K = J M^-1 J^T with M
    from CRBA (1e-9), for a self pair, a body against the world (either slot) and a lone
    contact; the normal speeds before the impulses = J_n qd (1e-9); and the block sweeps
    (with restitution kicks) and the next step's warm start give the same impulses and
    velocities as the same sweeps visiting each contact on its own (1e-10). A block
    contact's own rows J^T, W are not written (the passes use its block's): they are
    G_c JT6, G_c W6. Both ways of computing the rows meet the reference: test impulses
    per row and the rows by dofs (nv joint test impulses read out at the struck bodies);
    where the tables do not fit, the rows by dofs fall back to test impulses."""
    from articulated.algorithms.collision import Contacts
    from articulated.algorithms.contact import (BLOCK_MIN, block_buffers, contact_buffers,
                                                contact_rows, impulse_scratch, save_impulses,
                                                solve_impulses, warm_start)

    m = art.models.random_tree(14, seed=3)
    rng = np.random.default_rng(3)
    q = m.random_configuration(rng)
    qd = rng.normal(size=m.nv)
    pairs = [(9, 13)] * 3 + [(13, -1)] * 2 + [(5, 0)] + [(9, 13)] * 2 + [(-1, 13), (13, -1)]
    nc = len(pairs)
    body = np.array(pairs, np.int64)
    con = Contacts(np.zeros((nc, 2), np.int64), body, rng.normal(size=(nc, 3)),
                   rng.normal(size=(nc, 3)), rng.uniform(-1e-3, 1e-3, nc), np.full(nc, 0.7),
                   rng.uniform(0.0, 1.0, nc), np.arange(nc, dtype=np.int64))
    con.normal[:] /= np.linalg.norm(con.normal, axis=1)[:, None]
    im, fac = step_factor(m, q, qd)
    # the rows by test impulses per row (policy 1) and by dofs (policy 2: nv joint test
    # impulses read out at the struck bodies): both against the reference below
    by_rows = []
    for policy in (1, 2):
        sc = impulse_scratch(m.nb, m.nv)
        sc.policy[0] = policy
        rows = contact_buffers(nc, m.nv)
        blk = block_buffers(nc, m.nb, m.nv)
        contact_rows(im, fac, sc, con, nc, qd, 1e-3, 0.0, rows, blk)
        by_rows.append((rows, blk))
    rows, blk = by_rows[0]
    ng = int(blk.count[0])
    sizes = np.diff(blk.first[:ng + 1])
    assert sorted(sizes.tolist()) == [1, 1, 3, 5] and (blk.slot[:ng] >= 0).sum() == 2
    assert BLOCK_MIN == 3
    M = art.crba(m, q)
    R, p = art.forward_kinematics(m, q)

    def Jp(b, x):
        return art.jacobian(m, q, b, R[b].T @ (x - p[b]))[3:] if b >= 0 else 0.0

    # a block contact's rows are its block's: G_c JT6, G_c W6 (contact_rows writes no own)
    for r, bk in by_rows:
        JT, W = r.JT.copy(), r.W.copy()
        for c in range(nc):
            s = bk.slot[bk.gid[c]]
            if s >= 0:
                JT[c] = bk.G[c] @ bk.JT6[s]
                W[c] = bk.G[c] @ bk.W6[s]
        for c in range(nc):
            a, b = pairs[c]
            x = con.point[c]
            Jr = r.frame[c] @ (Jp(a, x) - Jp(b, x))
            Kr = Jr @ np.linalg.solve(M, Jr.T)
            assert np.abs(JT[c] - Jr).max() <= 1e-9 * np.abs(Jr).max(), c
            assert np.abs(r.K[c] - Kr).max() <= 1e-9 * np.abs(Kr).max(), c
            assert np.abs(W[c] - np.linalg.solve(M, Jr.T).T).max() <= 1e-9 * np.abs(Kr).max()
            assert abs(r.vn0[c] - Jr[0] @ qd) <= 1e-9 * np.abs(Jr).max() * np.abs(qd).max(), c
    # the test impulses propagated 1 or 5 at a time (a huge tree's scratch) instead of 32:
    # the same rows bit for bit (each impulse's arithmetic is its own)
    for columns in (1, 5):
        for policy, (r1, k1) in zip((1, 2), by_rows):
            r2, b2 = contact_buffers(nc, m.nv), block_buffers(nc, m.nb, m.nv)
            sc = impulse_scratch(m.nb, m.nv, columns)
            sc.policy[0] = policy
            contact_rows(im, fac, sc, con, nc, qd, 1e-3, 0.0, r2, b2)
            for A, B in ((r1.JT, r2.JT), (r1.W, r2.W), (r1.K, r2.K), (k1.JT6, b2.JT6),
                         (k1.W6, b2.W6)):
                assert np.array_equal(A, B), (columns, policy)
    # by dofs where the tables do not fit the scratch: by test impulses, bit for bit
    sc = impulse_scratch(m.nb, m.nv)
    sc = sc._replace(Tw=np.zeros(6 * m.nv), Tm=np.zeros(6 * m.nv))
    sc.policy[0] = 2
    r2, b2 = contact_buffers(nc, m.nv), block_buffers(nc, m.nb, m.nv)
    contact_rows(im, fac, sc, con, nc, qd, 1e-3, 0.0, r2, b2)
    r1, k1 = by_rows[0]
    for A, B in ((r1.W, r2.W), (r1.K, r2.K), (k1.W6, b2.W6)):
        assert np.array_equal(A, B)
    assert not np.array_equal(by_rows[1][0].W, r2.W)  # (rounding: the other path)
    # the rows by dofs read J^T and the motion table only below each row's span: buffers
    # full of NaN beyond it give the same rows bit for bit
    r0, k0 = by_rows[1]
    sc = impulse_scratch(m.nb, m.nv)
    sc.policy[0] = 2
    sc.Tm[:] = np.nan
    r3, b3 = contact_buffers(nc, m.nv), block_buffers(nc, m.nb, m.nv)
    r3.JT[:] = np.nan
    b3.JT6[:] = np.nan
    contact_rows(im, fac, sc, con, nc, qd, 1e-3, 0.0, r3, b3)
    for A, B in ((r0.W, r3.W), (r0.K, r3.K), (r0.vn0, r3.vn0), (r0.span, r3.span),
                 (k0.W6, b3.W6), (k0.K6, b3.K6), (k0.span, b3.span)):
        assert np.array_equal(A, B)
    for c in range(nc):
        s = b3.slot[b3.gid[c]]
        if s < 0:
            assert np.array_equal(r0.JT[c, :, :r3.span[c]], r3.JT[c, :, :r3.span[c]])
        else:
            assert np.array_equal(k0.JT6[s, :, :b3.span[s]], b3.JT6[s, :, :b3.span[s]])
    # the same sweeps, each contact on its own: the block groups made plain
    plain = blk._replace(slot=blk.slot.copy())
    plain.slot[:] = -1
    rows = rows._replace(JT=JT, W=W)
    assert (rows.impact[:nc] > 0).sum() >= 3  # restitution kicks through the blocks too
    out = []
    for bk in (blk, plain):
        r = rows._replace(P=np.zeros_like(rows.P))
        v = qd.copy()
        solve_impulses(r, nc, v, qd.copy(), np.zeros(m.nv), 1e-12, 7, 1e-3,
                       np.zeros(nc, np.int64), bk)
        # the next step's warm start from these impulses: qd + sum W_c P_c
        key, P = np.zeros(nc, np.int64), np.zeros((nc, 3))
        save_impulses(r, nc, key, P)
        w = qd.copy()
        assert warm_start(r, nc, key, P, nc, w, 1.0, bk) >= 5
        out.append((r.P.copy(), v, w))
    assert np.abs(out[0][1]).max() > 0 and np.abs(out[0][0]).max() > 0
    assert np.abs(out[0][0] - out[1][0]).max() <= 1e-10 * np.abs(out[0][0]).max()
    assert np.abs(out[0][1] - out[1][1]).max() <= 1e-10 * np.abs(out[0][1]).max()
    assert np.abs(out[0][2] - out[1][2]).max() <= 1e-10 * np.abs(out[0][2]).max()


# ------------------------------------------------------------------ narrow phase


@pytest.mark.parametrize("kb", ["box", "cylinder"])
def test_segment_search_finds_the_bisections_minimum(kb):
    """``narrow_phase._segment_min_sdf`` (regula falsi on the distance's derivative, the
    tangents' meeting point at a kink) against a plain bisection on the derivative's sign to
    the last bit, on random segments outside, across and inside a rotated box or
    cylinder: the distance it finds is the bisection's to 1e-15 m (never above it by more)
    and its point within 1e-7 m of the bisection's (both the same minimizer up to the
    rounding of a flat minimum); in 2,000 segments it needs fewer than a third of the
    bisection's evaluations of the distance."""
    from scipy.spatial.transform import Rotation

    from articulated.algorithms import narrow_phase as npz

    calls = [0]
    sdf = npz._sdf

    def counted(*a):
        calls[0] += 1
        return sdf(*a)

    def bisection(gm, gp, gR, b, p0, p1):
        d = np.subtract(p1, p0)
        if np.dot(counted(gm, gp, gR, b, p0)[1], d) >= 0.0:
            return 0.0
        if np.dot(counted(gm, gp, gR, b, p1)[1], d) <= 0.0:
            return 1.0
        lo, hi = 0.0, 1.0
        while lo < 0.5 * (lo + hi) < hi:
            mid = 0.5 * (lo + hi)
            g = np.dot(counted(gm, gp, gR, b, npz._lerp(p0, p1, mid))[1], d)
            if g == 0.0:
                return mid
            lo, hi = (mid, hi) if g < 0.0 else (lo, mid)
        return 0.5 * (lo + hi)

    rng = np.random.default_rng(3)
    R = Rotation.random(random_state=4).as_matrix()
    shape = (art.Box(size=(0.6, 0.2, 0.1), pos=(0.1, -0.2, 0.3), R=R) if kb == "box" else
             art.Cylinder(radius=0.1, length=0.4, pos=(0.1, -0.2, 0.3), R=R))
    geom = art.CollisionModel(_free_body(1.0, np.eye(3) * 0.01))
    geom.add_static(shape)
    det = Detector(geom)
    gm, gp, gR = det.gm, det.poses.gp, det.poses.gR
    b = int(np.flatnonzero(np.asarray(gm.body) < 0)[0])
    npz._sdf = counted
    try:
        ours = ref = 0
        for trial in range(2000):
            p0 = tuple(rng.normal(size=3) * 0.2 + gp[b])
            p1 = tuple(np.add(p0, rng.normal(size=3) * rng.choice([0.01, 0.05, 0.3])))
            calls[0] = 0
            s = npz._segment_min_sdf(gm, gp, gR, b, p0, p1)
            ours += calls[0]
            calls[0] = 0
            s_ref = bisection(gm, gp, gR, b, p0, p1)
            ref += calls[0]
            f = sdf(gm, gp, gR, b, npz._lerp(p0, p1, s))[0]
            f_ref = sdf(gm, gp, gR, b, npz._lerp(p0, p1, s_ref))[0]
            assert f <= f_ref + 1e-15, (trial, f, f_ref)
            assert abs(s - s_ref) * np.linalg.norm(np.subtract(p1, p0)) <= 1e-7, trial
    finally:
        npz._sdf = sdf
    assert ours < ref / 3, (ours, ref)


@pytest.mark.parametrize("kb", ["sphere", "capsule", "box", "cylinder"])
def test_narrow_phase_distance_equals_coal(kb):
    """Signed distance of sphere/capsule against every shape = coal's, on random poses
    (1e-9 where the shapes are apart), and against sphere, capsule and box the normal
    (coal's nearest points' direction) and the point (their midpoint) to 1e-9 too
    (measured 2.5e-15 to 6.4e-14; a cylinder's are not compared: GJK converges slowly on a
    curved support)."""
    import coal  # the test extra installs it (with pin)
    from scipy.spatial.transform import Rotation

    rng = np.random.default_rng(7)
    m = _free_body(1.0, np.eye(3) * 0.01)
    checked = 0
    worst = 0.0
    for ka in ("sphere", "capsule"):
        for trial in range(150):
            sa = (rng.uniform(0.05, 0.2), rng.uniform(0.0, 0.3), 0.0)
            sb = tuple(rng.uniform(0.05, 0.3, size=3))
            shapes = {"sphere": art.Sphere(radius=sa[0]),
                      "capsule": art.Capsule(radius=sa[0], length=2 * sa[1])}
            Ra = Rotation.random(random_state=rng.integers(1 << 30)).as_matrix()
            Rb = Rotation.random(random_state=rng.integers(1 << 30)).as_matrix()
            pa = rng.uniform(-0.6, 0.6, size=3)
            geom = art.CollisionModel(m)
            geom.add("body", shapes[ka], pos=pa, R=Ra)
            B = {"sphere": art.Sphere(radius=sb[0], pos=(0, 0, 0), R=Rb),
                 "capsule": art.Capsule(radius=sb[0], length=2 * sb[1], R=Rb),
                 "box": art.Box(size=tuple(2 * np.asarray(sb)), R=Rb),
                 "cylinder": art.Cylinder(radius=sb[0], length=2 * sb[1], R=Rb)}[kb]
            geom.add_static(B)
            det = Detector(geom)
            n = det.detect(np.eye(3)[None], np.zeros((1, 3)), np.zeros((1, 6)), 1e-3, extra=10.0)
            assert n >= 1 and (np.diff(det.out.key[:n]) > 0).all()
            i0 = int(np.argmin(det.out.dist[:n]))  # the deepest point (a capsule's ends
            d_ours = det.out.dist[i0]              # come in key order around it)
            req = coal.DistanceRequest()
            req.gjk_tolerance = 1e-13  # curved supports (cylinder): GJK to the last digits
            req.gjk_max_iterations = 1000
            res = coal.DistanceResult()
            ta = coal.Transform3s(Ra, pa)
            tb = coal.Transform3s(Rb, np.zeros(3))
            sb_full = {"sphere": (sb[0], 0, 0), "capsule": (sb[0], sb[1], 0), "box": sb,
                       "cylinder": (sb[0], sb[1], 0)}[kb]
            d_coal = coal.distance(coal_shape(coal, ka, sa), ta, coal_shape(coal, kb, sb_full),
                                   tb, req, res)
            if d_coal > 1e-6:
                assert abs(d_ours - d_coal) <= 1e-9 * max(1.0, abs(d_coal)), (ka, kb, trial)
                checked += 1
                if kb != "cylinder":  # GJK's points on a curved support: not to 1e-9
                    p1, p2 = res.getNearestPoint1(), res.getNearestPoint2()
                    n_ref = (p1 - p2) / np.linalg.norm(p1 - p2)   # static -> body shape
                    if det.out.geom[i0, 0] != 0:  # ours from b to a: the static shape is a
                        n_ref = -n_ref
                    worst = max(worst, np.abs(det.out.normal[i0] - n_ref).max(),
                                np.abs(det.out.point[i0] - 0.5 * (p1 + p2)).max())
            else:
                assert d_ours <= 1e-9
    assert checked > 100
    assert worst <= 1e-9


def test_capsule_ends_keep_their_keys_when_the_lower_end_changes():
    """A capsule (r 1 cm, 10 cm) lying on a plane rests on its two ends. Tilted by +-1e-7
    rad, the lower end changes, and each end keeps its key (feature 1 + e, whichever is
    the deepest point), so the warm start finds its impulse. When the lower end took the
    core's key instead, the capsule chain-300 at rest needed 9-12 sweeps a step, 1 since
    (docs/results/contact-checks.md)."""
    m = _free_body(0.1, np.eye(3) * 1e-4)
    geom = art.CollisionModel(m)
    geom.add("body", art.Capsule(radius=0.01, length=0.1))
    geom.add_static(art.Plane(normal=(0, 0, 1)))
    det = Detector(geom)
    ends = {}
    for tilt in (1e-7, -1e-7):
        a = 0.5 * math.pi + tilt      # the capsule's axis (body z) along world x, end 1 low
        R = np.array([[math.cos(a), 0.0, math.sin(a)], [0.0, 1.0, 0.0],
                      [-math.sin(a), 0.0, math.cos(a)]])
        axis = R[:, 2]
        assert (axis[2] < 0) == (tilt > 0)
        n = det.detect(R.T[None].copy(), np.array([[0.0, 0.0, 0.01]]), np.zeros((1, 6)),
                       1e-3, extra=1e-3)
        assert n == 2
        keys = det.out.key[:n]
        assert keys[1] > keys[0]
        # the end each contact sits at: the sign of its point along the axis
        side = {int(k): bool(det.out.point[i] @ axis > 0) for i, k in enumerate(keys)}
        assert sorted(side.values()) == [False, True]
        for k, s in side.items():
            assert ends.setdefault(k, s) == s
    assert len(ends) == 2
    # a capsule shorter than half its radius is one contact, under the core's key (feature
    # 0), whichever end is lower
    short = art.CollisionModel(m)
    short.add("body", art.Capsule(radius=0.01, length=0.004))
    short.add_static(art.Plane(normal=(0, 0, 1)))
    det = Detector(short)
    for tilt in (1e-7, -1e-7):
        a = 0.5 * math.pi + tilt
        R = np.array([[math.cos(a), 0.0, math.sin(a)], [0.0, 1.0, 0.0],
                      [-math.sin(a), 0.0, math.cos(a)]])
        n = det.detect(R.T[None].copy(), np.array([[0.0, 0.0, 0.01]]), np.zeros((1, 6)),
                       1e-3, extra=1e-3)
        assert n == 1 and det.out.key[0] % 16 == 0


def test_broad_phase_finds_every_pair_brute_force_does():
    """The sweep-and-prune broad phase: the same contacts as testing every allowed pair of
    shapes one by one (capsules and spheres on a random tree with self-collision, a static
    cylinder and a plane), over 6 configurations with one detector (its sort order carried
    from step to step), the keys increasing."""
    m = art.models.random_tree(20, seed=3, joint_types=("revolute",))
    rng = np.random.default_rng(3)
    geom = art.CollisionModel(m)
    shapes = []
    for i in range(m.nb):
        sh = art.Capsule(radius=0.05, length=0.2) if i % 3 else art.Sphere(radius=0.08)
        pos = rng.uniform(-0.1, 0.1, 3)
        geom.add(i, sh, pos=pos)
        shapes.append((i, sh, pos))
    statics = [(art.Cylinder(radius=0.1, length=1.0, pos=(0.2, 0.0, -0.3)), {}),
               (art.Plane(normal=(0, 0, 1), pos=(0, 0, -0.6)), {})]
    for sh, kw in statics:
        geom.add_static(sh, **kw)
    det = Detector(geom)
    pairs = geom.arrays()["pairs"]
    total = 0
    for _ in range(6):
        q = m.random_configuration(rng)
        R, p = art.forward_kinematics(m, q)
        oE = np.transpose(R, (0, 2, 1)).copy()
        n = det.detect(oE, p, np.zeros((m.nb, 6)), 1e-3, extra=0.3)
        assert (np.diff(det.out.key[:n]) > 0).all()
        found = {tuple(int(x) for x in det.out.geom[i]) for i in range(n)}
        brute = set()
        for a, b in pairs:
            one = art.CollisionModel(m)
            for g in (a, b):
                if g < len(shapes):
                    i, sh, pos = shapes[g]
                    one.add(i, sh, pos=pos)
                else:
                    one.add_static(statics[g - len(shapes)][0])
            if Detector(one).detect(oE, p, np.zeros((m.nb, 6)), 1e-3, extra=0.3):
                brute.add((int(a), int(b)))
        assert found == brute
        total += len(found)
    assert total > 20


def test_broad_phase_sweeps_the_axis_of_largest_spread():
    """A pendulum hanging along z is swept along z, the same one lying along x along x
    (switching from one to the other between steps of one detector); contacts against a
    plane under the hanging one found."""
    from articulated.algorithms.collision import broad_phase

    n = 40
    m = art.models.pendulum(n)
    geom = art.CollisionModel(m)
    for i in range(n):
        geom.add(i, art.Capsule(radius=0.01, length=0.08), pos=(0, 0, -0.05))
    q = np.zeros(n)
    _, p = art.forward_kinematics(m, q)
    bottom = p[-1, 2] - 0.05 - 0.04 - 0.01  # the lowest capsule's end, hanging
    geom.add_static(art.Plane(normal=(0, 0, 1), pos=(0, 0, bottom + 1e-4)))
    det = Detector(geom)
    for axis, q1 in ((2, 0.0), (0, -np.pi / 2), (2, 0.0)):
        q[1] = q1
        R, p = art.forward_kinematics(m, q)
        oE = np.transpose(R, (0, 2, 1)).copy()
        k = det.detect(oE, p, np.zeros((m.nb, 6)), 1e-3)
        assert int(det.broad.axis[0]) == axis
        # candidates: the plane's pairs plus the few neighbours within reach, not O(n^2)
        assert broad_phase(det.gm, det.poses, 0.0, det.broad) <= 3 * n
        if axis == 2:  # hanging: the lowest capsule touches the plane
            assert k >= 1 and (det.out.body[:k, 1] == -1).all()
            assert det.out.body[:k, 0].max() == n - 1


@pytest.mark.parametrize("npairs, k", [(40, 30), (200, 150), (3006, 3000), (3006, 700),
                                       (70000, 5000), (20_000_000, 4000)])
def test_candidate_sort_orders_every_count_and_range(npairs, k):
    """The broad phase's candidate sort (a radix sort on bytes, a heapsort below 64
    keys) against numpy's sort: one, two, three and four byte passes, odd and even, on
    shuffled keys and on the interleaved increasing runs that a sweep emits."""
    from articulated.algorithms.collision import sort_candidates

    rng = np.random.default_rng(k)
    keys = rng.choice(npairs, k, replace=False).astype(np.int64)
    runs = np.concatenate([np.sort(keys)[s::6] for s in range(6)])
    for a in (keys, runs):
        cand = np.concatenate([a, [-7, -7]])    # past k: left alone
        tmp = np.full(len(cand) + 256, -1, np.int64)
        sort_candidates(cand, k, tmp, npairs)
        assert np.array_equal(cand[:k], np.sort(a))
        assert cand[k:].tolist() == [-7, -7]

# ------------------------------------------------------------------ bad input
def test_bad_collision_input_names_the_culprit():
    m, geom = _ball(0.5)
    with pytest.raises(ValueError, match="nope"):
        geom.add("nope", art.Sphere(radius=0.1))
    with pytest.raises(ValueError, match="mu"):
        geom.add("body", art.Sphere(radius=0.1), mu=-1)
    with pytest.raises(ValueError, match="restitution"):
        geom.add("body", art.Sphere(radius=0.1), e=1.5)
    with pytest.raises(ValueError, match="radius"):
        geom.add("body", art.Sphere(radius=0.0))
    with pytest.raises(ValueError, match="Plane"):
        geom.add("body", art.Plane())
    with pytest.raises(ValueError, match="semi_implicit_euler"):
        art.Simulator(m, 1e-3, integrator="rk4", contacts=geom)
    with pytest.raises(ValueError, match="interpenetration .* body 'body'"):
        art.Simulator(m, 1e-3, contacts=geom)  # the ball starts in the floor
    with pytest.raises(ValueError, match="unknown contact option"):
        q0 = m.neutral()
        q0[2] = 1.0
        art.Simulator(m, 1e-3, contacts=geom, q0=q0, contact_options=dict(sweep=3))


def _spinning_rod(w):
    """A 1-kg rod (capsule 0.4 m + 2 x 1 cm, frictionless, e = 0) spinning at ``w``
    [rad/s] about a horizontal axis, its centre 0.25 m above a plane: its ends sweep a
    circle of 0.21 m, 4 cm above the plane, until it falls onto it."""
    b = art.ModelBuilder()
    b.add_body("rod", None, "free", mass=1.0, inertia=np.diag([0.4 ** 2 / 12] * 2 + [1e-4]))
    m = b.build()
    g = art.CollisionModel(m)
    g.add("rod", art.Capsule(radius=0.01, length=0.4), mu=0.0, e=0.0)
    g.add_static(art.Plane(normal=(0, 0, 1)), mu=0.0, e=0.0)
    q0 = m.neutral()
    q0[2] = 0.25
    qd0 = np.zeros(6)
    qd0[0] = w
    return m, g, q0, qd0


def _rk4_step(m, q, qd, h):
    """One step of the classical Runge-Kutta method on ``art.aba`` (no applied forces),
    its stages on the configuration manifold (``art.integrate``): the smooth motion of a
    substep (:func:`articulated.simulation.contact_loop._smooth_rk4`)."""
    tau = np.zeros(m.nv)
    a, v = art.aba(m, q, qd, tau), qd
    vbar, asum = qd.copy(), a.copy()
    for c, w in ((0.5, 2.0), (0.5, 2.0), (1.0, 1.0)):
        qs = art.integrate(m, q, v, c * h)
        v = qd + c * h * a
        a = art.aba(m, qs, v, tau)
        asum += w * a
        vbar += w * v
    vbar /= 6.0
    return art.integrate(m, q, vbar, h), qd + h * asum / 6.0


def test_fast_steps_move_by_rk4_in_steps_of_dt_over_k():
    # At 75 rad/s the rod turns 0.075 rad per 1-ms step, more than the default
    # max_rotation of 0.05: the step moves by RK4 in one step (RK4 substeps turn at most
    # twice max_rotation), at 150 rad/s (0.15 rad) in two substeps of 0.5 ms, at 250 rad/s
    # in three; with the forces constant (gravity) they are RK4 steps to round-off, up to
    # the first impulse. At 40 rad/s (0.04 rad) the step is semi-implicit Euler.
    for w, k in ((75.0, 1), (150.0, 2), (250.0, 3)):
        m, g, q0, qd0 = _spinning_rod(w)
        opt = dict(rest_speed=0.02, max_arc_error=None)
        a = art.Simulator(m, 1e-3, contacts=g, q0=q0, qd0=qd0, contact_options=opt)
        q, qd = np.array(q0, float), np.array(qd0, float)
        for _ in range(30):
            ta = a.run(1)
            for _ in range(k):
                q, qd = _rk4_step(m, q, qd, 1e-3 / k)
            assert a._contact.substeps == k
            assert ta.contacts["impacts"][-1] == 0
            assert np.abs(ta.q[-1] - q).max() < 1e-12
            assert np.abs(ta.qd[-1] - qd).max() < 1e-9 * w
    m, g, q0, qd0 = _spinning_rod(40.0)
    a = art.Simulator(m, 1e-3, contacts=g, q0=q0, qd0=qd0)
    ta = a.run(1)
    qs = qd0 + 1e-3 * art.aba(m, q0, qd0, np.zeros(m.nv))
    assert np.abs(ta.qd[-1] - qs).max() < 1e-12
    assert np.abs(ta.q[-1] - art.integrate(m, q0, qs, 1e-3)).max() < 1e-12


def _spinning_disk(w, tilt=0.01):
    """A free axisymmetric body (``I3 = 2 I1``, no gravity, a sphere 5 m above a plane)
    spinning at ``w`` [rad/s] about an axis ``tilt`` [rad] off its symmetry axis."""
    b = art.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    b.add_body("disk", None, "free", mass=1.0, inertia=np.diag([0.01, 0.01, 0.02]))
    m = b.build()
    g = art.CollisionModel(m)
    g.add("disk", art.Sphere(radius=0.05))
    g.add_static(art.Plane(normal=(0, 0, 1)))
    q0 = m.neutral()
    q0[2] = 5.0
    qd0 = np.zeros(6)
    qd0[0], qd0[2] = w * np.sin(tilt), w * np.cos(tilt)
    return m, g, q0, qd0


def test_rk4_substeps_split_where_the_stages_measure_stiffness():
    # The disk's angular velocity precesses in the body at Omega = (I3 - I1) / I1 w3 =
    # w3 (torque-free, Euler's equations): velocity-product terms with eigenvalues
    # +-i Omega, which the RK4 stages measure (h rho = 2 |a3 - a2| / |a2 - a1| = h Omega
    # for this rotation). With max_rotation = 0.6 rad, a 1-ms step turning 0.9 rad is one
    # RK4 step (0.9 <= 2 x 0.6; h rho = 0.9 <= RK4_STIFF = 1); one turning 1.15 rad is
    # one by the turn alone but h rho = 1.15: two substeps. Both stay RK4 steps of
    # dt / k (art.aba on the body: no contact within reach).
    for w, k in ((900.0, 1), (1150.0, 2)):
        m, g, q0, qd0 = _spinning_disk(w)
        sim = art.Simulator(m, 1e-3, contacts=g, q0=q0, qd0=qd0,
                            contact_options=dict(max_rotation=0.6, max_arc_error=None))
        q, qd = np.array(q0, float), np.array(qd0, float)
        for _ in range(5):
            tr = sim.run(1)
            for _ in range(k):
                q, qd = _rk4_step(m, q, qd, 1e-3 / k)
            assert sim._contact.substeps == k, w
            assert np.abs(tr.qd[-1] - qd).max() < 1e-9 * w
            assert np.abs(tr.q[-1] - q).max() < 1e-12


def test_spinning_rod_striking_the_plane_gains_no_energy_in_substeps():
    # At 150 rad/s (ends at 31.5 m/s, 0.15 rad per 1-ms step) the rod strikes the plane
    # again and again. Unsplit steps predict each end's gap along a straight line and
    # gain energy (measured: 232 J at the end from 152.5 J); split into steps of at most
    # 0.05 rad the total energy rises at most 0.16 J (0.1 %) above its start, and ends at
    # 116 J (the impacts with e = 0 remove energy).
    m, g, q0, qd0 = _spinning_rod(150.0)
    E0 = sum(art.energy(m, q0, qd0))

    def energies(**opt):
        tr = art.Simulator(m, 1e-3, contacts=g, q0=q0, qd0=qd0,
                           contact_options=dict(rest_speed=0.02, **opt)).run(300)
        assert tr.contacts["impacts"].sum() > 0
        return np.array([sum(art.energy(m, q, qd)) for q, qd in zip(tr.q, tr.qd)])

    E = energies()
    assert E.max() <= E0 + 0.2 and E[-1] < E0 - 20.0
    assert energies(max_rotation=None, max_arc_error=None).max() > E0 + 50.0
    assert energies(max_arc_error=None).max() <= E0 + 0.2


def test_stray_change_is_the_curvature_change_of_constant_rate_motion():
    # arc_change(v0, a0, v1, a1, b, c, R, n): s = n . (x1'' - x0'') of a body point along
    # the constant-rate paths q(t) = q (+) t qd0 and q (+) t qd1 (the position update's),
    # here by central second differences of art.integrate and art.point_position: random
    # trees with every joint type, a floating base, random directions n; with qd0 = 0 the
    # curvature itself. Within R of the point |s| + r bounds |n . (x1'' - x0'')| of every
    # point (sampled on the sphere).
    from articulated.algorithms.kinematics import (_velocities_kernel, _world_poses_kernel,
                                                   arc_change, steady_acceleration_step)
    from articulated.data import data_arrays

    rng = np.random.default_rng(3)
    dt = 1e-4
    for seed in range(4):
        m = art.models.random_tree(8, seed=seed, floating_base=seed % 2 == 1)
        q = m.random_configuration(rng)
        ma = m.arrays()
        motion = []
        for qd in (np.zeros(m.nv) if seed < 2 else rng.standard_normal(m.nv),
                   rng.standard_normal(m.nv)):
            d = m.data()
            _world_poses_kernel(d.model_i, d.model_f, q, d.buf)
            _velocities_kernel(d.model_i, d.model_f, q, qd, d.buf)
            dv = data_arrays(d.buf, m.nb, m.nv)
            ab = np.zeros((m.nb, 6))
            for b in range(m.nb):
                steady_acceleration_step(b, ma.parent, ma.vadr, ma.jnv, ma.S, qd, dv.Xup_E,
                                         dv.Xup_r, dv.v, ab)
            motion.append((qd, dv.v.copy(), ab))
        (qd0, v0, a0), (qd1, v1, a1) = motion
        R_all, _ = art.forward_kinematics(m, q)

        def acc(qd, b, x):                 # world frame
            qp, qm = art.integrate(m, q, qd, dt), art.integrate(m, q, qd, -dt)
            return (art.point_position(m, qp, b, x) - 2 * art.point_position(m, q, b, x)
                    + art.point_position(m, qm, b, x)) / dt ** 2

        for b in range(m.nb):
            c = rng.standard_normal(3) * 0.3
            for _ in range(3):
                n = rng.standard_normal(3)
                n /= np.linalg.norm(n)                  # body coordinates
                nw = R_all[b] @ n
                dy = acc(qd1, b, c) - acc(qd0, b, c)
                tol = 1e-5 * (1.0 + np.linalg.norm(dy))
                s, r0 = arc_change(v0, a0, v1, a1, b, tuple(c), 0.0, tuple(n))
                assert abs(s - nw @ dy) <= tol and r0 == 0.0
                R = 0.2
                s, r = arc_change(v0, a0, v1, a1, b, tuple(c), R, tuple(n))
                for _ in range(8):
                    u = rng.standard_normal(3)
                    x = c + R * u / np.linalg.norm(u)
                    assert abs(nw @ (acc(qd1, b, x) - acc(qd0, b, x))) <= (
                        (abs(s) + r) * (1 + 1e-5) + 1e-5)


def test_look_ahead_sees_a_spinning_end_leave_the_plane():
    # The rod spinning at w about a horizontal axis through its centre, upright, its lower
    # end 0.05 mm into the plane: the end moves along its circle, up and away, by about
    # 0.21 (h w)^2 / 2 in a step (0.6 mm at 75 rad/s), faster than gravity lowers the rod
    # (5 um), which the rows' straight line (horizontal there) does not see. With the
    # look-ahead the step needs neither substeps nor an impulse: the rod falls freely;
    # without it (max_arc_error=None) the contact holds it up.
    h = 1e-3
    for arc, pushed in ((1e-4, 0), (None, 1)):
        m, g, q0, qd0 = _spinning_rod(75.0)
        q0[2] = 0.21 - 5e-5
        sim = art.Simulator(m, h, contacts=g, q0=q0, qd0=qd0,
                            contact_options=dict(max_rotation=None, max_arc_error=arc))
        tr = sim.run(1)
        c = tr.contacts
        assert c["n"][0] == 1 and sim._contact.substeps == 1
        assert c["sticking"][0] + c["sliding"][0] == pushed
    free = qd0 + h * art.aba(m, q0, qd0, np.zeros(m.nv))
    sim = art.Simulator(m, h, contacts=g, q0=q0, qd0=qd0,
                        contact_options=dict(max_rotation=None))
    sim.run(1)
    assert np.abs(sim.qd - free).max() < 1e-12


def test_impulses_that_set_a_rod_spinning_split_its_step():
    # The rod lying along x, one end 1 mm above the plane and the other 5 mm, falling at
    # 3 m/s, strikes the plane with its lower end: the impulse sets it turning, which
    # changes how the struck end's ball strays from its straight line; a small
    # max_arc_error (1 um) takes the step again in substeps (max_rotation off), a large
    # one (1 cm) does not.
    m, g, q0, qd0 = _spinning_rod(0.0)
    tilt = 0.01
    a = 0.5 * (0.5 * math.pi + tilt)
    q0[3:7] = (math.cos(a), 0.0, math.sin(a), 0.0)      # the rod along x, end +x low
    q0[2] = 0.011 + 0.2 * math.sin(tilt)
    J = art.jacobian(m, q0, 0)[3:]          # the origin's world velocity per joint rate
    qd0[:] = 0.0
    qd0[3:] = np.linalg.solve(J[:, 3:], [0.0, 0.0, -3.0])
    subs = {}
    for arc in (1e-6, 1e-2):
        sim = art.Simulator(m, 1e-3, contacts=g, q0=q0, qd0=qd0,
                            contact_options=dict(max_rotation=None, max_arc_error=arc))
        for _ in range(5):
            sim.step()
            if sim._contact.last["impacts"]:
                break
        assert sim._contact.last["impacts"] == 1
        subs[arc] = sim._contact.substeps
    assert subs[1e-2] == 1 and subs[1e-6] > 1


def test_steps_after_a_split_start_in_its_substeps():
    # The struck rod of the test above: with max_arc_error 3 um its impact step is taken
    # again in k substeps; the steps after it (in flight, or on the plane with impulses
    # that ask for no more) start in k substeps for CARRY_STEPS steps, then in one fewer
    # for as many, and so on (contact.carry_substeps): a body pressed against something
    # that asks for substeps in every step does not try each whole first. With 1 um the
    # impact asks for more than CARRY_MAX, which the steps after it do not take.
    from articulated.simulation.contact import CARRY_MAX, CARRY_STEPS
    subs = {}
    for arc in (3e-6, 1e-6):
        m, g, q0, qd0 = _spinning_rod(0.0)
        tilt = 0.01
        a = 0.5 * (0.5 * math.pi + tilt)
        q0[3:7] = (math.cos(a), 0.0, math.sin(a), 0.0)
        q0[2] = 0.011 + 0.2 * math.sin(tilt)
        J = art.jacobian(m, q0, 0)[3:]
        qd0[:] = 0.0
        qd0[3:] = np.linalg.solve(J[:, 3:], [0.0, 0.0, -3.0])
        sim = art.Simulator(m, 1e-3, contacts=g, q0=q0, qd0=qd0,
                            contact_options=dict(max_rotation=None, max_arc_error=arc))
        subs[arc] = []
        for _ in range(1 + 3 * CARRY_STEPS):
            sim.step()
            subs[arc].append(sim._contact.substeps)
    s = subs[3e-6]
    k = s[0]
    assert 3 <= k <= CARRY_MAX
    assert s[1:1 + CARRY_STEPS] == [k] * CARRY_STEPS
    assert s[1 + CARRY_STEPS:1 + 2 * CARRY_STEPS] == [k - 1] * CARRY_STEPS
    assert s[1 + 2 * CARRY_STEPS:] == [max(k - 2, 1)] * CARRY_STEPS
    s = subs[1e-6]
    assert s[0] > CARRY_MAX
    assert s[-2 * CARRY_STEPS:] == [1] * (2 * CARRY_STEPS)


def test_carried_substeps_count_down_and_large_asks_are_not_carried():
    # carry_substeps by hand: 3 substeps asked for are kept CARRY_STEPS steps, then 2 as
    # many, then none; an ask above CARRY_MAX (a single impact's) is not carried, and a new
    # ask restarts the count.
    from articulated.simulation.contact import CARRY_MAX, CARRY_STEPS, carry_substeps
    nsub = np.array([1, 0, 0], np.int64)
    carry_substeps(nsub, 3, True)
    seen = []
    for _ in range(3 * CARRY_STEPS):
        seen.append(int(nsub[1]))
        carry_substeps(nsub, max(1, int(nsub[1])), False)
    assert seen == [3] * CARRY_STEPS + [2] * CARRY_STEPS + [0] * CARRY_STEPS
    carry_substeps(nsub, CARRY_MAX, True)
    assert nsub[1] == CARRY_MAX
    carry_substeps(nsub, CARRY_MAX + 1, True)
    assert nsub[1] == 0
    nsub[:] = (1, 2, 0)
    for _ in range(CARRY_STEPS - 1):
        carry_substeps(nsub, 2, False)
    carry_substeps(nsub, 3, True)
    assert (nsub[1], nsub[2]) == (3, 0)


def test_a_step_takes_at_most_max_substeps_in_all():
    # split_rest takes the rest of a step again in k times as many substeps, but never
    # past MAX_SUBSTEPS in all (a substep late in a split step asked for more, and the
    # step grew to 268 substeps at rest in the adaptive snake), and never in fewer.
    from articulated.simulation.contact import MAX_SUBSTEPS, split_rest
    assert split_rest(4, 1, 0.25, 3) == (10, 0.25 * 3 / 9)
    ns, h = split_rest(60, 50, 1e-3 / 60, 3)
    assert ns == MAX_SUBSTEPS and abs(h * (ns - 50) - 10 * 1e-3 / 60) <= 1e-18
    assert split_rest(MAX_SUBSTEPS, 40, 1e-5, 7) == (MAX_SUBSTEPS, 1e-5)
    ns, h = split_rest(10, 2, 1e-4, 100)
    assert ns == MAX_SUBSTEPS and abs(h * (ns - 2) - 8e-4) <= 1e-18


def test_bad_max_rotation_raises():
    m, g, q0, qd0 = _spinning_rod(1.0)
    for key in ("max_rotation", "max_arc_error"):
        for bad in (0.0, -0.1, float("nan")):
            with pytest.raises(ValueError, match=key):
                art.Simulator(m, 1e-3, contacts=g, q0=q0, contact_options={key: bad})


def test_power_of_applied_forces_is_Q_dot_x():
    # The applied forces' power (the energy bound's work W) against Q = tau + J^T f_ext
    # from RNEA at zero velocity and acceleration (rnea(q, 0, 0) - rnea(q, 0, 0, f_ext) =
    # J^T f_ext), random trees with every joint type and a free base.
    from articulated.algorithms.kinematics import _power_kernel
    for seed in range(4):
        m = art.models.random_tree(12, seed=seed, floating_base=True)
        rng = np.random.default_rng(seed)
        q = m.random_configuration(rng)
        x, tau = rng.normal(size=m.nv), rng.normal(size=m.nv)
        f = rng.normal(size=(m.nb, 6))
        z = np.zeros(m.nv)
        Q = tau + art.rnea(m, q, z, z) - art.rnea(m, q, z, z, f)
        d = m.data()
        P = _power_kernel(d.model_i, d.model_f, q, x, tau, f, d.buf)
        assert abs(P - Q @ x) <= 1e-10 * (1.0 + abs(Q @ x))
        P0 = _power_kernel(d.model_i, d.model_f, q, x, tau, np.zeros((0, 6)), d.buf)
        assert P0 == pytest.approx(tau @ x, rel=1e-14)


def test_energy_bound_is_the_projection_onto_energy_plus_work():
    # A free 6-link chain whipping far above a plane (no contact) under a joint torque and
    # body forces, one step from random states: without the bound semi-implicit Euler may
    # gain energy. With it the step is the same but for qd+ scaled by alpha, alpha^2 =
    # (E0 + W - V1) / T1 (T, V from art.energy; W = h Q . (qd + qd+) / 2 with Q from
    # RNEA), the excess recorded as energy_removed; a step that loses energy is untouched.
    class Load(art.Force):
        def __init__(self, tau, f):
            self.tau, self.f = tau, f

        def apply(self, model, t, q, qd, tau, f_ext, kin=None):
            tau += self.tau
            f_ext += self.f

    def step(q, qd, tau, f, **options):
        sim = art.Simulator(m, h, contacts=g, q0=q, qd0=qd, forces=[Load(tau, f)],
                            contact_options=dict(max_rotation=None, **options))
        tr = sim.run(1)
        return tr.q[-1], tr.qd[-1], tr.contacts[0]

    m = art.models.random_tree(6, seed=3, floating_base=True, joint_types=("revolute",))
    g = art.CollisionModel(m)
    g.add(0, art.Sphere(radius=0.05))
    g.add_static(art.Plane(normal=(0, 0, 1), pos=(0, 0, -1000.0)))
    h, z = 1e-3, np.zeros(m.nv)
    gained = lost = 0
    for seed in range(12):
        rng = np.random.default_rng(seed)
        q = m.random_configuration(rng)
        qd = rng.normal(scale=40.0, size=m.nv)
        tau, f = rng.normal(size=m.nv), rng.normal(size=(m.nb, 6))
        qa, qda, last = step(q, qd, tau, f, energy_bound=True)
        qb, qdb, _ = step(q, qd, tau, f)
        assert last["n"] == 0
        Q = tau + art.rnea(m, q, z, z) - art.rnea(m, q, z, z, f)
        E0 = sum(art.energy(m, q, qd))
        T1, V1 = art.energy(m, qb, qdb)
        W = h * Q @ (qd + qdb) / 2
        excess = T1 + V1 - E0 - W
        assert np.array_equal(qa, qb)
        if excess > 1e-9 * E0:
            gained += 1
            alpha = math.sqrt((T1 - excess) / T1)
            assert np.abs(qda - alpha * qdb).max() <= 1e-12 * np.abs(qdb).max()
            assert last["energy_removed"] == pytest.approx(excess, rel=1e-9)
            assert sum(art.energy(m, qa, qda)) == pytest.approx(E0 + W, rel=1e-12)
        elif excess < -1e-9 * E0:
            lost += 1
            assert np.array_equal(qda, qdb) and last["energy_removed"] == 0.0
    assert gained >= 3 and lost >= 1


def test_energy_bound_keeps_the_elastic_ball_below_its_start():
    # The ball of the restitution test with e = 1 and the energy bound: placing it
    # at its time of impact lifts it by up to |v| h (0.043 J at 4.4 m/s) while the
    # impulse keeps its speed, so without the bound each bounce gains energy (measured:
    # apex 1.0064 m after the first). The bound takes that out (recorded), the apex stays
    # within 1 % of the drop height and never above it, and the total energy never rises
    # above its start over five bounces.
    m, geom = _ball(1.0)
    q0 = m.neutral()
    q0[2] = 1.1
    tr = art.Simulator(m, 1e-3, contacts=geom, q0=q0,
                       contact_options=dict(energy_bound=True)).run(4500)
    c = tr.contacts
    hits = np.flatnonzero(c["impacts"])
    assert len(hits) >= 4
    E = np.array([sum(art.energy(m, q, qd)) for q, qd in zip(tr.q, tr.qd)])
    assert E.max() <= E[0] * (1 + 1e-12)
    assert c["energy_removed"][hits].min() > 0.0
    apex = tr.q[hits[0]:hits[1], 2].max() - 0.1
    assert 0.99 <= apex <= 1.0


def test_runaway_displacement_stops_the_step_naming_the_joint():
    # A contact step whose displacement moves a dof by more than pi (rad or m) or not
    # finitely has diverged (the adaptive pile's position projection moved joints by
    # 6.6e8 once): runaway_dof finds the first such dof, runaway_message names its joint
    # (the simulators' error).
    from articulated.algorithms.contact import MAX_STEP_DISPLACEMENT, runaway_dof
    from articulated.simulation.contact import runaway_message

    v = np.zeros(4)
    assert runaway_dof(v) == -1
    v[2] = MAX_STEP_DISPLACEMENT * (1 + 1e-12)
    assert runaway_dof(v) == 2
    v[2] = MAX_STEP_DISPLACEMENT
    assert runaway_dof(v) == -1
    v[2], v[1] = 0.0, math.nan
    assert runaway_dof(v) == 1
    v[1], v[3] = 0.0, -math.inf
    assert runaway_dof(v) == 3
    msg = runaway_message("knee")
    assert "'knee'" in msg and "more than pi" in msg


def test_a_contact_inside_one_body_takes_no_impulse_nor_projection():
    # GLM VI: contact pairs inside one rigid piece are skipped while it is rigid. In the
    # adaptive pipelines both bodies of such a pair are one body of the hybrid body's
    # reduced tree; rows from test impulses would be rounding there (K ~ 1e-27), and the
    # position projection's d / K moved a 60-link pile's joints by 439 rad in one step. A
    # contact whose two sides are one body gets rows of zeros: the response with such a
    # contact added (deep, on a moving body) is bit for bit the response without it, while
    # the other contact (the tip approaching a surface, 1 mm deep) takes an impulse and a
    # projection.
    from articulated.algorithms.aba import aba_kernel
    from articulated.algorithms.collision import Contacts
    from articulated.algorithms.impulse import Factor
    from articulated.algorithms.response import NSTATS, grow_response, respond_kernel
    from articulated.simulation.contact import ContactStepper
    m, h = art.models.pendulum(6), 1e-3
    rng = np.random.default_rng(5)
    q = rng.normal(scale=0.5, size=m.nv)
    qd = rng.normal(scale=2.0, size=m.nv)
    p = art.forward_kinematics(m, q)[1]

    def contacts(rows):
        k = len(rows)
        return Contacts(np.zeros((k, 2), np.int64), np.array([r[0] for r in rows], np.int64),
                        np.array([r[1] for r in rows]), np.array([r[2] for r in rows]),
                        np.array([r[3] for r in rows]), np.full(k, 0.5), np.zeros(k),
                        np.arange(k, dtype=np.int64))

    vel = (art.forward_kinematics(m, q + 1e-7 * qd)[1][5] - p[5]) / 1e-7
    floor = ((5, -1), p[5], -vel / np.linalg.norm(vel), -1e-3)   # the tip approaches
    inside = ((3, 3), p[3], (1.0, 0.0, 0.0), -2e-3)
    out = []
    for rows in ([floor], [floor, inside]):
        cs = ContactStepper(m, None, h, max_rotation=None)
        d = cs.data
        assert aba_kernel(d.model_i, d.model_f, q, qd, np.zeros(m.nv), np.zeros((0, 6)), False,
                          d.buf, True)
        qs = qd + h * d.qdd
        rb = grow_response(cs.rb, 4, m.nb)
        qd1, v = np.empty(m.nv), np.empty(m.nv)
        fac = Factor(d.Xup_E, d.Xup_r, d.UDinv, d.Dinv, d.oE, d.op)
        respond_kernel(cs.im, fac, cs.sc, contacts(rows), len(rows), q, qs, cs.limits,
                       cs.opt, rb, (qd1, v, np.zeros(NSTATS)))
        out.append((qd1, v, rb.rows.K[:len(rows)].copy(), rb.rows.P[:len(rows)].copy()))
    (qa, va, Ka, Pa), (qb, vb, Kb, Pb) = out
    assert np.array_equal(qa, qb) and np.array_equal(va, vb)
    assert np.array_equal(Ka[0], Kb[0]) and np.array_equal(Pa[0], Pb[0])
    assert (Kb[1] == 0.0).all() and (Pb[1] == 0.0).all()
    assert Pa[0, 0] > 0.0 and np.abs(va - h * qa).max() > 1e-5     # impulse, projection
