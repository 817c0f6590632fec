"""Simulation layer: manifold helpers, integrators (orders, invariants), forces, Simulator."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.linalg import expm

import articulated as art
from articulated.models import random_tree
from articulated.configuration import integrate, normalize, qdot
from articulated.simulation import (JointDamping, JointTorque, PDController, PointForce,
                                    SimulationDiverged, Simulator, Spring, Trajectory)


# ------------------------------------------------------------------------------ helpers

def chain(n, gravity=(0.0, 0.0, -9.81)):
    """n-link planar pendulum of 1 m links hanging along -z, revolute about y."""
    b = art.ModelBuilder(gravity=gravity)
    parent = None
    for i in range(n):
        b.add_body(f"l{i}", parent=parent, joint="revolute", axis=(0, 1, 0),
                   origin_xyz=(0, 0, -1.0) if i else (0, 0, 0), mass=1.0, com=(0, 0, -0.5),
                   inertia=np.diag([0.1, 0.1, 0.01]))
        parent = f"l{i}"
    return b.build()


def free_body(com=(0.1, -0.05, 0.2)):
    b = art.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    b.add_body("box", None, "free", mass=2.0, com=com, inertia=np.diag([0.3, 0.5, 0.7]))
    return b.build()


def quat_R(w, x, y, z):
    """Rotation matrix (body -> parent) of a unit quaternion, Hamilton, scalar first."""
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def skew(v):
    return np.array([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])


def drift(traj):
    return float(np.abs(traj.total - traj.total[0]).max())


def observed_order(errors):
    e = np.asarray(errors)
    return np.log2(e[:-1] / e[1:])


# ------------------------------------------------------------------- manifold helpers

def test_integrate_matches_qdot_central_difference():
    m = random_tree(8, seed=3, floating_base=True)
    rng = np.random.default_rng(0)
    for _ in range(3):
        q = m.random_configuration(rng)
        v = rng.normal(size=m.nv)
        h = 1e-5
        fd = (integrate(m, q, v, h) - integrate(m, q, v, -h)) / (2 * h)
        assert np.abs(fd - qdot(m, q, v)).max() < 1e-8
        assert np.abs(integrate(m, q, v, 0.0) - q).max() < 1e-15


def test_integrate_is_the_exponential_map():
    m = random_tree(8, seed=3, floating_base=True)
    rng = np.random.default_rng(1)
    q = m.random_configuration(rng)
    v = 3 * rng.normal(size=m.nv)
    # one-parameter subgroup: q (+) 2 v h == (q (+) v h) (+) v h for the exact exponential
    q2 = integrate(m, q, v, 0.2)
    q11 = integrate(m, integrate(m, q, v, 0.1), v, 0.1)
    assert np.abs(q2 - q11).max() < 1e-14
    # quaternions stay unit
    norms = np.linalg.norm(q2[m.quat_qadr[:, None] + np.arange(4)], axis=1)
    assert np.abs(norms - 1).max() < 1e-15
    # right multiplication by a body-frame rotation: R1 = R0 expm(omega dt ^)
    i = int(np.flatnonzero(m.jnt_type == art.model.JOINT_FREE)[0])
    a, b = m.jnt_qadr[i], m.jnt_vadr[i]
    dt = 0.3
    q1 = integrate(m, q, v, dt)
    R0, R1 = quat_R(*q[a + 3:a + 7]), quat_R(*q1[a + 3:a + 7])
    assert np.abs(R1 - R0 @ expm(skew(v[b:b + 3] * dt))).max() < 1e-13
    # free-joint position: SE(3) exponential of the body twist [omega; v_O]
    X = np.zeros((4, 4))
    X[:3, :3] = skew(v[b:b + 3])
    X[:3, 3] = v[b + 3:b + 6]
    T = expm(X * dt)
    assert np.abs(q1[a:a + 3] - (q[a:a + 3] + R0 @ T[:3, 3])).max() < 1e-13
    # 1-DOF joints: q + v dt
    for j in np.flatnonzero(np.isin(m.jnt_type, (art.model.JOINT_REVOLUTE, art.model.JOINT_PRISMATIC))):
        assert q1[m.jnt_qadr[j]] == pytest.approx(q[m.jnt_qadr[j]] + v[m.jnt_vadr[j]] * dt, abs=1e-15)


def test_normalize():
    m = random_tree(5, seed=2, floating_base=True)
    q = m.random_configuration(0)
    q[m.quat_qadr] *= 3.0
    q[m.quat_qadr + 1] *= 3.0
    q[m.quat_qadr + 2] *= 3.0
    q[m.quat_qadr + 3] *= 3.0
    qn = normalize(m, q)
    assert np.abs(np.linalg.norm(qn[m.quat_qadr[:, None] + np.arange(4)], axis=1) - 1).max() < 1e-15
    assert np.abs(qn - normalize(m, qn)).max() < 1e-15
    q[m.quat_qadr[0]:m.quat_qadr[0] + 4] = 0.0
    with pytest.raises(ValueError, match="cannot be normalized"):
        normalize(m, q)
    with pytest.raises(ValueError):
        integrate(m, q[:-1], np.zeros(m.nv), 0.1)


# ------------------------------------------------------------------ integrator orders

def _pendulum_drifts(integrator, dts, T=1.0):
    m = chain(3)
    q0 = np.array([1.0, -0.5, 0.8])
    return [drift(Simulator(m, dt, integrator=integrator, q0=q0).run(int(round(T / dt))))
            for dt in dts]


def test_rk4_energy_drift_is_fourth_order():
    d = _pendulum_drifts("rk4", [0.01, 0.005, 0.0025])
    order = observed_order(d)
    assert d[0] < 1e-4
    assert np.all((order > 3.5) & (order < 4.5)), (d, order)


@pytest.mark.parametrize("integrator", ["euler", "semi_implicit_euler"])
def test_euler_energy_drift_is_first_order(integrator):
    d = _pendulum_drifts(integrator, [0.004, 0.002, 0.001])
    order = observed_order(d)
    assert np.all((order > 0.8) & (order < 1.2)), (d, order)


def test_semi_implicit_euler_has_no_secular_energy_drift():
    m = chain(1)
    q0 = np.array([1.0])
    n = 4000
    d_sym = drift(Simulator(m, 0.005, "semi_implicit_euler", q0=q0).run(n, record_every=10))
    d_exp = drift(Simulator(m, 0.005, "euler", q0=q0).run(n, record_every=10))
    T0 = Simulator(m, 0.005, q0=q0).energy()
    scale = abs(T0[1])
    assert d_sym < 0.02 * scale
    assert d_exp > 10 * d_sym


# ----------------------------------------------------------------- free rigid body

def _momentum_world(m, q, qd):
    """Spatial momentum of a single free body in world coordinates: (angular about the
    world origin, linear)."""
    h = m.body_I[0] @ qd  # [n_O; l] about the body origin, body coordinates
    R = quat_R(*q[3:7])
    l_w = R @ h[3:]
    return R @ h[:3] + np.cross(q[:3], l_w), l_w


def test_free_body_spinning_invariants():
    m = free_body()
    qd0 = np.array([3.0, 0.5, -1.0, 0.2, 0.1, -0.3])  # not about a principal axis: tumbles
    q0 = m.neutral()
    q0[:3] = (0.3, -0.2, 0.1)
    sim = Simulator(m, 1e-3, "rk4", q0=q0, qd0=qd0)
    tr = sim.run(3000, record_every=50)
    norms = np.linalg.norm(tr.q[:, 3:7], axis=1)
    assert np.abs(norms - 1).max() < 1e-12
    L0, P0 = _momentum_world(m, tr.q[0], tr.qd[0])
    for q, qd in zip(tr.q, tr.qd):
        L, P = _momentum_world(m, q, qd)
        assert np.abs(L - L0).max() < 1e-9 * np.abs(L0).max()
        assert np.abs(P - P0).max() < 1e-9 * np.abs(P0).max()
    assert np.abs(tr.kinetic - tr.kinetic[0]).max() < 1e-9 * tr.kinetic[0]
    assert np.abs(tr.potential).max() == 0.0  # no gravity
    # the body really tumbles: the body-frame angular velocity changes a lot
    assert np.abs(tr.qd[:, :3] - qd0[:3]).max() > 0.5


@pytest.mark.parametrize("integrator", ["euler", "semi_implicit_euler", "rk45"])
def test_free_body_quaternion_stays_unit(integrator):
    m = free_body()
    sim = Simulator(m, 1e-3, integrator, qd0=np.array([3.0, 0.5, -1.0, 0.2, 0.1, -0.3]))
    tr = sim.run(2000, record_every=100)
    assert np.abs(np.linalg.norm(tr.q[:, 3:7], axis=1) - 1).max() < 1e-12
    assert abs(np.linalg.norm(sim.q[3:7]) - 1) < 1e-12


def test_rk4_is_fourth_order_on_a_tumbling_body():
    m = free_body()
    qd0 = np.array([3.0, 0.5, -1.0, 0.2, 0.1, -0.3])

    def final(dt, T=2.0):
        sim = Simulator(m, dt, "rk4", qd0=qd0)
        sim.run(int(round(T / dt)), record_every=1000000)
        return np.concatenate([sim.q, sim.qd])

    ref = final(2.5e-4)
    err = [np.abs(final(dt) - ref).max() for dt in (0.04, 0.02, 0.01)]
    order = observed_order(err)
    assert np.all((order > 3.5) & (order < 4.5)), (err, order)


# --------------------------------------------------------------------------- forces

def test_spring_potential_gradient_matches_force():
    m = chain(3)
    rng = np.random.default_rng(5)
    for rest in (0.0, 0.7):
        spring = Spring("l2", point=(0.1, 0.0, -0.9), anchor=(1.5, 0.3, -1.0),
                        stiffness=40.0, rest_length=rest)
        spring.bind(m)
        q = rng.uniform(-1, 1, m.nv)
        tau = np.zeros(m.nv)
        f_ext = np.zeros((m.nb, 6))
        spring.apply(m, 0.0, q, np.zeros(m.nv), tau, f_ext)
        assert np.all(tau == 0) and np.all(f_ext[:2] == 0)
        R, _ = art.forward_kinematics(m, q)
        F_w = R[2] @ f_ext[2, 3:]
        # the moment is that of F at the point (about the body origin, body coordinates)
        assert np.abs(f_ext[2, :3] - np.cross(spring.point, f_ext[2, 3:])).max() < 1e-12
        Q = art.jacobian(m, q, "l2", spring.point)[3:].T @ F_w  # generalized force
        h = 1e-6
        dV = np.array([(spring.potential(m, q + h * e) - spring.potential(m, q - h * e)) / (2 * h)
                       for e in np.eye(m.nv)])
        assert np.abs(dV + Q).max() < 1e-6 * max(1.0, np.abs(Q).max())


def test_spring_total_energy_conserved_rk4():
    m = chain(3)
    spring = Spring("l2", point=(0.0, 0.0, -1.0), anchor=(1.0, 0.0, -2.0), stiffness=30.0,
                    rest_length=0.5)
    drifts = []
    for dt in (2e-3, 1e-3):
        sim = Simulator(m, dt, "rk4", forces=[spring], q0=np.array([0.5, -0.3, 0.2]))
        tr = sim.run(int(round(1.0 / dt)))
        drifts.append(drift(tr))
    assert np.ptp(tr.potential) > 1.0  # the spring and gravity exchange energy with T
    # an inconsistent potential would leave an O(1) drift that does not shrink with dt
    assert drifts[1] < 2e-6 and drifts[0] / drifts[1] > 10.0, drifts
    # the spring's own potential is part of the recording
    V_grav = np.array([art.energy(m, q, qd)[1] for q, qd in zip(tr.q[:3], tr.qd[:3])])
    V_spring = np.array([spring.potential(m, q) for q in tr.q[:3]])
    assert np.abs(tr.potential[:3] - V_grav - V_spring).max() < 1e-12


def test_spring_damping_dissipates():
    m = chain(2)
    spring = Spring("l1", point=(0.0, 0.0, -1.0), anchor=(1.0, 0.0, -2.0), stiffness=30.0,
                    damping=2.0)
    tr = Simulator(m, 2e-3, "rk4", forces=[spring], q0=np.array([0.5, -0.3])).run(500, 10)
    assert np.all(np.diff(tr.total) <= 1e-9)
    assert tr.total[-1] < tr.total[0] - 0.1


def test_world_point_force_on_free_body():
    m = free_body(com=(0.0, 0.0, 0.0))
    F = np.array([1.0, -2.0, 4.0])
    sim = Simulator(m, 1e-2, "rk4", forces=[PointForce("box", F)])
    tr = sim.run(100)
    t = tr.t[-1]
    assert np.abs(sim.q[:3] - 0.5 * F / 2.0 * t ** 2).max() < 1e-12
    assert np.abs(sim.q[3:7] - (1, 0, 0, 0)).max() < 1e-12
    assert drift(tr) < 1e-10  # V = -F . x is recorded as potential


def test_point_force_moment_and_follower_force():
    m = free_body(com=(0.0, 0.0, 0.0))
    q = m.neutral()
    q[3:7] = np.array([1.0, 0.4, -0.2, 0.3]) / np.linalg.norm([1.0, 0.4, -0.2, 0.3])
    F = np.array([0.0, 0.0, 5.0])
    P = np.array([0.2, 0.0, 0.0])
    tau, f = np.zeros(m.nv), np.zeros((m.nb, 6))
    PointForce("box", F, point=P).apply(m, 0.0, q, np.zeros(6), tau, f)
    assert np.abs(f[0] - art.body_force(m, q, "box", F, P)).max() < 1e-14
    f2 = np.zeros((m.nb, 6))
    pf = PointForce(0, F, point=P, frame="body")
    pf.apply(m, 0.0, q, np.zeros(6), tau, f2)
    assert np.abs(f2[0] - np.r_[np.cross(P, F), F]).max() < 1e-15
    assert pf.potential(m, q) == 0.0 and not pf.conservative


def test_pd_controller_drives_joints_to_reference():
    m = chain(2, gravity=(0.0, 0.0, 0.0))
    pd = PDController(kp=[200.0, 100.0], kd=[40.0, 20.0], q_ref=[0.7, -0.4], joints=["l0_joint", "l1_joint"])
    sim = Simulator(m, 2e-3, "rk4", forces=[pd])
    sim.run(2500, record_every=100)
    assert np.abs(sim.q - [0.7, -0.4]).max() < 1e-4
    assert np.abs(sim.qd).max() < 1e-3
    # default joints: every 1-DOF joint; a time-varying reference is followed
    pd2 = PDController(kp=400.0, kd=40.0, q_ref=lambda t: np.full(2, 0.1 * t), qd_ref=lambda t: np.full(2, 0.1))
    sim2 = Simulator(m, 2e-3, "rk4", forces=[pd2])
    sim2.run(1500)
    assert np.abs(sim2.q - 0.1 * sim2.t).max() < 2e-3


def test_pd_controller_rejects_multi_dof_joint():
    m = random_tree(3, seed=0, floating_base=True)
    with pytest.raises(ValueError, match="1-DOF"):
        Simulator(m, 1e-3, forces=[PDController(1.0, 1.0, 0.0, joints=[0])])
    with pytest.raises(ValueError, match="entries"):
        Simulator(chain(2), 1e-3, forces=[PDController([1.0, 2.0, 3.0], 1.0, 0.0)])


def test_joint_torque_and_damping():
    m = chain(1, gravity=(0.0, 0.0, 0.0))
    Iyy = 0.1 + 1.0 * 0.5 ** 2
    sim = Simulator(m, 1e-2, "rk4", forces=[JointTorque([2.0])])
    sim.run(100)
    assert sim.qd[0] == pytest.approx(2.0 / Iyy * 1.0, rel=1e-12)
    sim = Simulator(m, 1e-2, "rk4", qd0=[1.0], forces=[JointDamping(0.35)])
    sim.run(100)
    assert sim.qd[0] == pytest.approx(np.exp(-0.35 / Iyy * 1.0), rel=1e-9)
    sim = Simulator(m, 1e-2, "rk4", forces=[JointTorque(lambda t, q, qd: np.array([np.sin(t)]))])
    sim.run(100)
    assert sim.qd[0] == pytest.approx((1 - np.cos(1.0)) / Iyy, rel=1e-9)
    with pytest.raises(ValueError):
        Simulator(m, 1e-2, forces=[JointTorque([1.0, 2.0])])


# ------------------------------------------------------------------------ simulator

def test_rk45_matches_rk4_and_reports_nfev():
    m = chain(3)
    q0 = np.array([1.0, -0.5, 0.8])
    tr45 = Simulator(m, 0.01, "rk45", q0=q0, rtol=1e-10, atol=1e-12).run(100, record_every=10)
    tr4 = Simulator(m, 0.001, "rk4", q0=q0).run(1000, record_every=100)
    assert tr45.nfev > 0 and tr4.nfev == 4000
    assert np.allclose(tr45.t, np.linspace(0, 1, 11), atol=1e-12)
    assert np.abs(tr45.q - tr4.q).max() < 1e-7
    assert np.abs(tr45.qd - tr4.qd).max() < 1e-6
    assert drift(tr45) < 1e-7


def test_rk45_state_advances_and_floating_base():
    m = random_tree(6, seed=4, floating_base=True)
    q0 = m.random_configuration(1)
    sim = Simulator(m, 0.01, "rk45", q0=q0, rtol=1e-9, atol=1e-11)
    tr = sim.run(30, record_every=7)
    assert np.allclose(tr.t, [0, 0.07, 0.14, 0.21, 0.28, 0.30])
    assert sim.t == pytest.approx(0.3)
    assert np.abs(sim.q - tr.q[-1]).max() == 0.0
    assert np.abs(np.linalg.norm(tr.q[:, m.quat_qadr[:, None] + np.arange(4)], axis=2) - 1).max() < 1e-12
    ref = Simulator(m, 0.001, "rk4", q0=q0).run(300, record_every=300)
    assert np.abs(ref.q[-1] - sim.q).max() < 1e-7
    assert abs(tr.total[-1] - tr.total[0]) < 1e-6 * max(1.0, abs(tr.total[0]))


@pytest.mark.parametrize("method", ["aba_modified", "crba"])
def test_methods_agree(method):
    m = random_tree(7, seed=9, floating_base=True)
    q0 = m.random_configuration(2)
    qd0 = np.random.default_rng(3).normal(size=m.nv)
    a = Simulator(m, 1e-3, "rk4", q0=q0, qd0=qd0).run(50, 10)
    b = Simulator(m, 1e-3, "rk4", method=method, q0=q0, qd0=qd0).run(50, 10)
    assert np.abs(a.q - b.q).max() < 1e-9 and np.abs(a.qd - b.qd).max() < 1e-8


def test_float32_dynamics():
    m = chain(3)
    tr = Simulator(m, 1e-3, "rk4", q0=[1.0, -0.5, 0.8], dtype=np.float32).run(200, 50)
    ref = Simulator(m, 1e-3, "rk4", q0=[1.0, -0.5, 0.8]).run(200, 50)
    assert tr.q.dtype == np.float64
    assert np.abs(tr.q - ref.q).max() < 1e-3


def test_recording_and_state_bookkeeping(tmp_path):
    m = chain(2)
    sim = Simulator(m, 0.01, "semi_implicit_euler", q0=[0.3, 0.1])
    tr = sim.run(25, record_every=10)
    assert np.allclose(tr.t, [0.0, 0.1, 0.2, 0.25])
    assert tr.q.shape == (4, 2) and tr.qd.shape == (4, 2) and len(tr) == 4
    assert tr.nfev == 25 and tr.wall_time > 0
    assert np.array_equal(tr.q[-1], sim.q) and sim.t == pytest.approx(0.25)
    T, V = art.energy(m, tr.q[2], tr.qd[2])
    assert tr.kinetic[2] == pytest.approx(T, abs=1e-14) and tr.potential[2] == pytest.approx(V, abs=1e-14)
    assert np.array_equal(tr.total, tr.kinetic + tr.potential)
    tr2 = sim.run(5)  # continues from the current state
    assert tr2.t[0] == pytest.approx(0.25) and np.array_equal(tr2.q[0], tr.q[-1])
    sim.step()
    assert sim.t == pytest.approx(0.31)
    path = tmp_path / "traj.npz"
    tr.save(path)
    back = Trajectory.load(path)
    for k in ("t", "q", "qd", "kinetic", "potential"):
        assert np.array_equal(getattr(back, k), getattr(tr, k))
    assert (back.nfev, back.integrator, back.method, back.dt) == (25, "semi_implicit_euler", "aba", 0.01)
    assert back.wall_time == tr.wall_time
    assert len(sim.run(0)) == 1


def test_no_output_when_not_a_terminal(capsys):
    m = chain(1)
    Simulator(m, 1e-3, "euler").run(3000, record_every=1000)
    out = capsys.readouterr()
    assert out.out == "" and out.err == ""


# ------------------------------------------------------------------------ divergence

def test_nan_force_raises_diverged_with_partial_trajectory():
    m = chain(3)

    def tau(t, q, qd):
        return np.full(3, np.nan) if t > 0.045 else np.zeros(3)

    sim = Simulator(m, 0.01, "euler", q0=[0.2, 0.0, 0.0], forces=[JointTorque(tau)])
    with pytest.raises(SimulationDiverged, match="tau") as info:
        sim.run(20)
    e = info.value
    assert isinstance(e, RuntimeError)
    assert e.step == 6 and e.joint == "l0_joint"
    assert len(e.trajectory) == 6  # t = 0 .. 0.05
    assert np.allclose(e.trajectory.t, np.arange(6) * 0.01)
    assert np.isfinite(e.trajectory.q).all() and np.isfinite(e.trajectory.total).all()
    assert sim.t == pytest.approx(0.05) and np.isfinite(sim.q).all()
    assert "t = 0.05" in str(e)


def test_huge_torque_diverges():
    m = chain(3)
    sim = Simulator(m, 0.01, "rk4", forces=[JointTorque(np.full(3, 1e300))])
    with pytest.raises(SimulationDiverged) as info:
        sim.run(50)
    tr = info.value.trajectory
    assert 1 <= len(tr) < 50
    assert np.isfinite(tr.q).all() and np.isfinite(sim.qd).all()
    with pytest.raises(SimulationDiverged):
        sim.step()


def test_rk45_divergence_keeps_records():
    m = chain(2)

    def tau(t, q, qd):
        return np.full(2, np.nan) if t > 0.25 else np.zeros(2)

    sim = Simulator(m, 0.01, "rk45", forces=[JointTorque(tau)], q0=[0.3, 0.0])
    with pytest.raises(SimulationDiverged) as info:
        sim.run(100, record_every=5)
    tr = info.value.trajectory
    assert 2 <= len(tr) <= 6
    assert tr.t[-1] <= 0.25 + 1e-12
    assert tr.nfev > 0


# ------------------------------------------------------------------------ bad inputs

def test_bad_inputs():
    m = chain(2)
    for dt in (0.0, -1e-3, np.nan, np.inf, "x"):
        with pytest.raises(ValueError, match="dt"):
            Simulator(m, dt)
    with pytest.raises(ValueError, match="integrator"):
        Simulator(m, 1e-3, integrator="leapfrog")
    with pytest.raises(ValueError, match="method"):
        Simulator(m, 1e-3, method="dca9")
    with pytest.raises(ValueError, match=r"shape \(2,\)"):
        Simulator(m, 1e-3, q0=np.zeros(3))
    with pytest.raises(ValueError, match=r"shape \(2,\)"):
        Simulator(m, 1e-3, qd0=np.zeros((2, 1)))
    with pytest.raises(ValueError, match="l1_joint"):
        Simulator(m, 1e-3, q0=[0.0, np.nan])
    with pytest.raises(ValueError, match="rtol"):
        Simulator(m, 1e-3, rtol=0.0)
    with pytest.raises(TypeError):
        Simulator(m, 1e-3, dtype=np.int32)
    with pytest.raises(TypeError):
        Simulator("model", 1e-3)
    with pytest.raises(TypeError):
        Simulator(m, 1e-3, forces=[object()])
    with pytest.raises(ValueError, match="no body"):
        Simulator(m, 1e-3, forces=[Spring("nope", (0, 0, 0), (0, 0, 0), 1.0)])
    with pytest.raises(ValueError):
        Spring("l0", (0, 0, 0), (0, 0, 0), stiffness=-1.0)
    with pytest.raises(ValueError):
        PointForce("l0", (1, 2), frame="world")
    with pytest.raises(ValueError):
        PointForce("l0", (1, 2, 3), frame="joint")
    fb = free_body()
    q = fb.neutral()
    q[3] = 2.0
    with pytest.raises(ValueError, match="norm"):
        Simulator(fb, 1e-3, q0=q)
    sim = Simulator(m, 1e-3)
    for steps, every in ((-1, 1), (10, 0), (2.5, 1)):
        with pytest.raises(ValueError):
            sim.run(steps, record_every=every)
