"""The compiled stepping loop (simulation/stepping.py) against the public Python
integrators (simulation/integrators.py) over forward_dynamics, Python forces called from the
compiled loop against their compiled forms, the fused energy pass, and the adaptive
simulator's defaults and O(N_A) records."""

from __future__ import annotations

import numpy as np
import pytest

import articulated as art
from articulated.algorithms.crba import crba
from articulated.algorithms.kinematics import energy, forward_kinematics
from articulated.model import (JOINT_FIXED, JOINT_FREE, JOINT_PRISMATIC, JOINT_REVOLUTE,
                               JOINT_SPHERICAL)
from articulated.models import pendulum, random_tree
from articulated.simulation import (Force, JointDamping, JointTorque, PDController, PointForce,
                                    SimulationDiverged, Simulator, Spring)


class PythonForce(Force):
    """A force without a compiled form (wraps one that has one): the compiled loop calls
    its ``apply`` and ``potential`` in Python (simulation/hooks.py)."""

    def __init__(self, inner):
        self.inner = inner
        self.conservative = inner.conservative

    def bind(self, model):
        self.inner.bind(model)
        return self

    def apply(self, model, t, q, qd, tau, f_ext, kin=None):
        self.inner.apply(model, t, q, qd, tau, f_ext, kin=kin)

    def potential(self, model, q, kin=None):
        return self.inner.potential(model, q, kin=kin)


def every_force(m):
    """One of each compiled force kind on model m (two PD joints: 1-dof ones)."""
    one_dof = [j for j in range(m.nb) if m.jnt_type[j] in (JOINT_REVOLUTE, JOINT_PRISMATIC)]
    return [PointForce(m.nb - 1, (1.0, -0.5, 2.0), (0.1, 0.0, 0.05)),
            PointForce(m.nb // 2, (0.3, 0.2, -0.1), (0.0, 0.1, 0.0), frame="body"),
            Spring(m.nb - 2, (0.0, 0.05, 0.1), (0.5, 0.5, 0.0), 4.0, 0.2, 0.3),
            JointDamping(0.05), JointTorque(np.linspace(-0.1, 0.1, m.nv)),
            PDController([3.0, 1.5], [0.2, 0.1], [0.1, -0.2], joints=one_dof[:2])]


def scene():
    m = random_tree(14, seed=3)
    rng = np.random.default_rng(5)
    q0 = m.random_configuration(rng)
    return m, q0, 0.3 * rng.standard_normal(m.nv)


def _reference_run(sim, steps, every):
    """``(t, q, qd, T, V)`` of ``steps`` steps of the public Python integrator of ``sim``
    (:data:`~articulated.simulation.integrators.STEPPERS`) over
    :func:`articulated.forward_dynamics`, the forces applied in Python, recorded as
    ``run(steps, every)`` records."""
    rows = [(sim.t, sim.q, sim.qd, *sim.energy())]
    for k in range(1, steps + 1):
        sim._step_fixed()
        if k % every == 0 or k == steps:
            rows.append((sim.t, sim.q, sim.qd, *sim.energy()))
    return [np.array(x) for x in zip(*rows)]


@pytest.mark.parametrize("method", ["aba", "aba_modified", "crba", "dca"])
@pytest.mark.parametrize("integrator", ["euler", "semi_implicit_euler", "rk4"])
def test_compiled_loop_equals_the_python_integrators(method, integrator):
    m, q0, qd0 = scene()
    assert set(m.jnt_type) >= {JOINT_REVOLUTE, JOINT_PRISMATIC, JOINT_SPHERICAL, JOINT_FREE,
                               JOINT_FIXED}
    fast = Simulator(m, 2e-3, integrator, method, forces=every_force(m), q0=q0, qd0=qd0)
    hooked = Simulator(m, 2e-3, integrator, method,
                       forces=[PythonForce(f) for f in every_force(m)], q0=q0, qd0=qd0)
    ref = Simulator(m, 2e-3, integrator, method, forces=every_force(m), q0=q0, qd0=qd0)
    assert fast._compiled()[2].hook == -1 and hooked._compiled()[2].hook >= 0
    a = fast.run(60, record_every=7)
    t, q, qd, T, V = _reference_run(ref, 60, 7)
    for b in (hooked.run(60, record_every=7), None):
        if b is not None:       # Python forces inside the compiled loop: the same run
            assert b.nfev == a.nfev
            t, q, qd, T, V = b.t, b.q, b.qd, b.kinetic, b.potential
        assert len(a) == len(t) == 10                   # t = 0, 7 dt, ..., 56 dt, 60 dt
        assert np.array_equal(a.t, t)
        assert np.abs(a.q - q).max() < 1e-11
        assert np.abs(a.qd - qd).max() < 1e-10
        assert np.abs(a.kinetic - T).max() < 1e-10 * (1 + np.abs(T).max())
        assert np.abs(a.potential - V).max() < 1e-10 * (1 + np.abs(V).max())
    assert a.nfev == 60 * (4 if integrator == "rk4" else 1)
    # the records are the states: energies recomputed independently (CRBA, world COMs)
    k = 5
    qk, qdk = a.q[k], a.qd[k]
    M = crba(m, qk)
    assert a.kinetic[k] == pytest.approx(0.5 * qdk @ M @ qdk, rel=1e-12, abs=1e-12)
    # step() takes the same path as run()
    fast.set_state(q=q0, qd=qd0, t=0.0)
    ref.set_state(q=q0, qd=qd0, t=0.0)
    fast.step()
    ref._step_fixed()
    assert np.abs(fast.q - ref.q).max() < 1e-13 and fast.t == ref.t


def test_single_steps_are_the_steps_of_a_run():
    """step() takes the compiled loop without a run's records: a loop of single steps
    ends where run(n) ends, bit for bit (compiled forces, Python forces through the hook,
    contacts with the contact statistics of the last step); a step that fails raises
    SimulationDiverged with the start's record and leaves the state as it was."""
    m, q0, qd0 = scene()
    for forces in (every_force(m), [PythonForce(f) for f in every_force(m)]):
        a = Simulator(m, 2e-3, "rk4", forces=forces, q0=q0, qd0=qd0)
        b = Simulator(m, 2e-3, "rk4", forces=forces, q0=q0, qd0=qd0)
        tr = a.run(25)
        for _ in range(25):
            b.step()
        assert np.array_equal(tr.q[-1], b.q) and np.array_equal(tr.qd[-1], b.qd)
        assert b.t == tr.t[-1] and b.nfev == a.nfev == 100
    c, q0c = art.models.capsule_chain(6, return_configuration=True)
    a = Simulator(c, 1e-3, contacts=c.collision, q0=q0c)
    b = Simulator(c, 1e-3, contacts=c.collision, q0=q0c)
    tr = a.run(300)
    assert tr.contacts["n"][-1] > 0                      # it lies on the plane
    for _ in range(300):
        b.step()
    assert np.array_equal(tr.q[-1], b.q) and np.array_equal(tr.qd[-1], b.qd)
    assert b._contact.last["n"] == tr.contacts["n"][-1]
    assert b._contact.last["sweeps"] == tr.contacts["sweeps"][-1]
    d = Simulator(pendulum(3), 0.01, "semi_implicit_euler", q0=[0.2, 0.0, 0.0],
                  forces=[JointTorque(np.full(3, 1e300))])
    err = None
    while err is None:
        q_before, qd_before, t_before = d.q.copy(), d.qd.copy(), d.t
        try:
            d.step()
        except SimulationDiverged as e:
            err = e
    e = err
    assert np.array_equal(d.q, q_before) and np.array_equal(d.qd, qd_before)
    assert d.t == t_before > 0.0 and e.joint is not None
    assert len(e.trajectory) == 1 and np.array_equal(e.trajectory.q[0], q_before)
    assert e.trajectory.t[0] == t_before and np.array_equal(e.trajectory.qd[0], qd_before)


def test_python_forces_run_in_the_compiled_loop_and_options_without_it_in_python():
    m = pendulum(4)
    callable_tau = JointTorque(lambda t, q, qd: np.zeros(4))
    callable_pd = PDController(1.0, 0.1, lambda t: np.zeros(4))
    for sim in (Simulator(m, 1e-3, forces=[callable_tau]),
                Simulator(m, 1e-3, forces=[callable_pd])):
        assert sim._compiled()[2].hook >= 0
    for sim in (Simulator(m, 1e-3, "rk45"), Simulator(m, 1e-3, dtype=np.float32)):
        assert sim._compiled() is None
    sim = Simulator(m, 1e-3, forces=[PointForce(3, (1, 0, 0))])
    assert sim._compiled()[2].hook == -1
    sim.add_force(callable_tau)                  # a Python force: all forces through the hook
    assert sim._compiled()[2].hook >= 0


def test_a_python_force_that_raises_stops_the_run_at_the_last_step():
    m = pendulum(4)

    def tau(t, q, qd):
        if t > 0.0105:
            raise RuntimeError("the user's force failed")
        return np.zeros(4)

    sim = Simulator(m, 1e-3, forces=[JointTorque(tau)], q0=[0.3, 0, 0, 0])
    with pytest.raises(RuntimeError, match="the user's force failed"):
        sim.run(50)
    # the state of the last step whose forces were evaluated (RK4: stages at t + dt)
    assert 0.0095 < sim.t < 0.0115 and np.isfinite(sim.q).all() and sim.q[0] != 0.3


def test_energy_is_kinetic_plus_gravity():
    """The fused energy pass against independent formulas: 1/2 qd^T M qd (CRBA) and
    -sum m g . c (forward kinematics)."""
    m, q, qd = scene()
    T, V = energy(m, q, qd)
    assert T == pytest.approx(0.5 * qd @ crba(m, q) @ qd, rel=1e-13)
    R, p = forward_kinematics(m, q)
    c = p + np.einsum("bij,bj->bi", R, m.body_com)
    assert V == pytest.approx(-np.sum(m.body_mass[:, None] * m.gravity * c), rel=1e-13, abs=1e-13)


def test_compiled_divergence_names_the_joint_and_keeps_the_records():
    m = pendulum(3)
    sim = Simulator(m, 0.01, "semi_implicit_euler", q0=[0.2, 0.0, 0.0],
                    forces=[JointTorque(np.full(3, 1e300))])
    assert sim._compiled() is not None
    with pytest.raises(SimulationDiverged, match="joint") as info:
        sim.run(50, record_every=1)
    e = info.value
    tr = e.trajectory
    assert len(tr) == e.step and e.step >= 1
    assert np.isfinite(tr.q).all() and np.isfinite(tr.qd).all() and np.isfinite(tr.total[0])
    assert np.array_equal(sim.q, tr.q[-1]) and np.array_equal(sim.qd, tr.qd[-1])
    assert sim.t == tr.t[-1]


def test_adaptive_default_update_budget_and_records():
    m = pendulum(60)
    force = PointForce(m.nb - 1, (0.0, 3.0, 0.0))
    sim = Simulator(m, 1e-3, method="adaptive", max_active=5, forces=[force])
    assert sim.max_update == 5                            # RGL Table 1: N_U = N_A
    assert Simulator(m, 1e-3, method="adaptive", max_active=[7]).max_update == 7
    assert Simulator(m, 1e-3, method="adaptive", max_active=5, eps_acc=1e-3).max_update is None
    tr = sim.run(90, record_every=1)                      # region updates every 20 steps
    assert len(tr.t) == 91 and tr.active[1:].max() <= 5
    # recorded kinetic energies (O(N_A) on the reduced tree) equal the whole body's
    T = np.array([energy(m, q, qd)[0] for q, qd in zip(tr.q, tr.qd)])
    assert np.abs(tr.kinetic - T).max() < 1e-12 * T.max() and T.max() > 1e-3
