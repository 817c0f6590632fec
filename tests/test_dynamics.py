"""Cross-checks of RNEA, CRBA, ABA and modified ABA: against Pinocchio (an independent
implementation) and against each other (identities), on seeded random trees with every
joint type, fixed and floating base, 1-100 bodies against Pinocchio."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import articulated as art
from articulated.models import random_tree

from conftest import random_state, rel_err

pin_interop = pytest.importorskip("pinocchio", reason="Pinocchio (PyPI 'pin', test extra) is the oracle")
from articulated.interop import to_pinocchio  # noqa: E402

TOL = 1e-9


# n <= 100 bodies (nv of about 200-300): Pinocchio's Data holds nv^3 tensors (its second-order
# derivatives), about 32 nv^3 bytes: 1 GB at nv = 312, 4 GB at nv = 498 (a 200-body random
# tree), which made this test the peak (9.1 GB) of the default run (issue 21: under 4 GB)
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(1, 100), seed=st.integers(0, 2**31 - 1), floating=st.booleans(),
       branching=st.floats(0.0, 1.0))
def test_against_pinocchio(n, seed, floating, branching):
    model = random_tree(n, seed, floating_base=floating, branching=branching)
    pm = to_pinocchio(model)
    rng = np.random.default_rng(seed)
    q, qd, tau, f_ext = random_state(model, rng)
    qdd_pin = pm.aba(q, qd, tau, f_ext)
    M = art.crba(model, q)
    # Random long chains with prismatic/free joints reach cond(M) ~ 1e9. There the forward
    # error of *Pinocchio's* ABA grows to ~1e-5 (measured: its own RNEA residual at its qdd is
    # 1e-5 while ours is 5e-12), so Pinocchio's qdd is an oracle only for well-conditioned
    # trees. What holds for every tree: Pinocchio's RNEA evaluated at our qdd gives back tau,
    # i.e. a normwise backward error ||tau - rnea(qdd)|| / (||M|| ||qdd|| + ||tau||) at
    # rounding level (we hold it to 1e-12).
    cond = np.linalg.cond(M)
    for method in ("aba", "aba_modified", "crba"):
        qdd = art.forward_dynamics(model, q, qd, tau, f_ext, method=method)
        resid = np.abs(pm.rnea(q, qd, qdd, f_ext) - tau).max()
        scale = np.abs(M).sum(axis=1).max() * np.abs(qdd).max() + np.abs(tau).max()
        assert resid / scale < 1e-12, method
        if cond < 1e5:
            assert rel_err(qdd, qdd_pin) < TOL, method
    qdd = rng.normal(size=model.nv)
    assert rel_err(art.rnea(model, q, qd, qdd, f_ext), pm.rnea(q, qd, qdd, f_ext)) < TOL
    assert rel_err(M, pm.crba(q)) < TOL


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("floating", [False, True])
def test_identities(seed, floating):
    model = random_tree(40, seed, floating_base=floating)
    rng = np.random.default_rng(seed)
    q, qd, tau, f_ext = random_state(model, rng)
    qdd = art.aba(model, q, qd, tau, f_ext)
    # rnea(aba(tau)) == tau
    assert rel_err(art.rnea(model, q, qd, qdd, f_ext), tau) < TOL
    M = art.crba(model, q)
    # CRBA symmetric positive definite
    assert np.abs(M - M.T).max() == 0.0
    assert np.linalg.eigvalsh(M).min() > 0
    # M qdd = tau - C
    C = art.bias_forces(model, q, qd, f_ext)
    assert rel_err(M @ qdd, tau - C) < TOL
    # CRBA column j = rnea(e_j) - rnea(0) with qd = 0, no gravity
    j = rng.integers(model.nv)
    e = np.zeros(model.nv)
    e[j] = 1.0
    col = art.rnea(model, q, np.zeros(model.nv), e, gravity=False)
    assert rel_err(col, M[:, j]) < TOL
    # kinetic energy 1/2 qd^T M qd
    T, V = art.energy(model, q, qd)
    assert abs(T - 0.5 * qd @ M @ qd) < TOL * max(1.0, T)
    # the Jacobian's rows map qd to body velocities
    b = rng.integers(model.nb)
    J = art.jacobian(model, q, b)
    R, p = art.forward_kinematics(model, q)
    v = art.body_velocities(model, q, qd)[b]
    w_world = R[b] @ v[:3]
    vO_world = R[b] @ v[3:]
    assert rel_err(J @ qd, np.concatenate([w_world, vO_world])) < TOL


def test_gravity_torque_is_potential_gradient():
    model = random_tree(25, 3, joint_types=("revolute", "prismatic", "fixed"))
    rng = np.random.default_rng(3)
    q = model.random_configuration(rng)
    g = art.gravity_torques(model, q)
    h = 1e-6
    for j in range(model.nv):
        dq = np.zeros(model.nq)
        dq[j] = h  # 1-dof joints only: q and qd indices coincide
        Vp = art.energy(model, q + dq, np.zeros(model.nv))[1]
        Vm = art.energy(model, q - dq, np.zeros(model.nv))[1]
        assert abs((Vp - Vm) / (2 * h) - g[j]) < 1e-6 * max(1.0, abs(g[j]))


def test_mdot_minus_2c_skew_symmetric():
    """qd^T (Mdot - 2C) qd = 0 with C qd = bias without gravity (power balance)."""
    model = random_tree(15, 7, joint_types=("revolute", "prismatic"))
    rng = np.random.default_rng(7)
    q = model.random_configuration(rng)
    qd = rng.normal(size=model.nv)
    h = 1e-6
    Mdot = (art.crba(model, q + h * qd) - art.crba(model, q - h * qd)) / (2 * h)
    Cqd = art.rnea(model, q, qd, np.zeros(model.nv), gravity=False)
    assert abs(qd @ Mdot @ qd - 2 * qd @ Cqd) < 1e-6 * max(1.0, abs(qd @ Mdot @ qd))


@pytest.mark.parametrize("method", ["aba", "aba_modified", "crba"])
def test_float32_agrees_with_float64(method):
    model = random_tree(30, 11, joint_types=("revolute", "prismatic", "spherical", "free"))
    rng = np.random.default_rng(11)
    q, qd, tau, f_ext = random_state(model, rng)
    a64 = art.forward_dynamics(model, q, qd, tau, f_ext, method=method)
    a32 = art.forward_dynamics(model, q, qd, tau, f_ext, method=method, dtype=np.float32)
    assert a32.dtype == np.float32
    assert rel_err(a32, a64) < 1e-3
    assert rel_err(a32, a64) > 1e-12  # really computed in single precision


def test_crba_float32():
    model = random_tree(20, 2)
    q = model.random_configuration(np.random.default_rng(2))
    M32 = art.crba(model, q, dtype=np.float32)
    assert M32.dtype == np.float32
    assert rel_err(M32, art.crba(model, q)) < 1e-5


def test_modified_aba_equals_aba_float64():
    """Both equal the CRBA solution to rounding. ABA takes a free joint's projection in
    closed form (S = 1: Ia = 0, pa = tau), the modified ABA forms ``IA - U D^-1 U^T`` from
    its separately accumulated pivot: on these 60-body trees they differ by up to 1.5e-12
    relative, each within 3.3e-12 of CRBA (ABA the closer one)."""
    for seed in range(10):
        model = random_tree(60, seed, floating_base=seed % 2 == 1, branching=1.0)
        rng = np.random.default_rng(seed)
        q, qd, tau, f_ext = random_state(model, rng)
        a = art.aba(model, q, qd, tau, f_ext)
        x = art.crba_forward_dynamics(model, q, qd, tau, f_ext)
        assert rel_err(art.aba_modified(model, q, qd, tau, f_ext), a) < 5e-12
        assert rel_err(a, x) < 5e-12
        assert rel_err(art.aba_modified(model, q, qd, tau, f_ext), x) < 5e-12


def test_body_force_point_and_frames():
    """A world force at a world point equals the same force given in body coordinates."""
    model = random_tree(10, 5)
    rng = np.random.default_rng(5)
    q = model.random_configuration(rng)
    R, p = art.forward_kinematics(model, q)
    b = 7
    pt_body = np.array([0.1, -0.2, 0.3])
    F_world = np.array([1.0, 2.0, -3.0])
    w1 = art.body_force(model, q, b, F_world, pt_body, frame="world")
    w2 = art.body_force(model, q, b, R[b].T @ F_world, pt_body, frame="body")
    assert rel_err(w1, w2) < 1e-14
    # generalized force = J^T F at the point
    f_ext = np.zeros((model.nb, 6))
    f_ext[b] = w1
    tau_f = -art.rnea(model, q, np.zeros(model.nv), np.zeros(model.nv), f_ext, gravity=False)
    J = art.jacobian(model, q, b, pt_body)
    assert rel_err(tau_f, J[3:].T @ F_world) < TOL


def test_forward_dynamics_pendulum_closed_form():
    """Single rod pendulum about y: qdd = -m g l_c sin(q) / (I_c + m l_c^2)."""
    b = art.ModelBuilder()
    m, lc, Ic = 2.0, 0.5, 0.1
    b.add_body("rod", None, "revolute", axis=(0, 1, 0), mass=m, com=(0, 0, -lc),
               inertia=np.diag([Ic, Ic, 0.01]))
    model = b.build()
    q = np.array([0.3])
    expected = -m * 9.81 * lc * np.sin(0.3) / (Ic + m * lc * lc)
    for method in ("aba", "aba_modified", "crba"):
        assert abs(art.forward_dynamics(model, q, [0.0], [0.0], method=method)[0] - expected) < 1e-12
