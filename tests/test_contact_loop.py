"""The compiled stepping loop of the full model with contacts and limits
(simulation/contact_loop.py) against the Python step of the ContactStepper, which a
do-nothing Python force selects: same states, same statistics, same contact list."""

import numpy as np
import pytest

import articulated as art

H = 1e-3
EXACT = ("n", "limits", "impacts", "sticking", "sliding", "sweeps", "fallback")
CLOSE = ("max_depth", "approach_speed", "ke_before", "ke_after", "energy_removed")


class _PythonForce:
    """A user's force in Python (no compiled form): every force of the simulator is then
    evaluated in Python, called from the compiled loop (simulation/hooks.py)."""

    def apply(self, model, t, q, qd, tau, f_ext, kin=None):
        pass


def _cube_mesh(edge):
    V = 0.5 * edge * np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)],
                              dtype=float)
    return art.Mesh(vertices=V)


def _chain():
    """A 12-capsule chain dropped flat from 5 cm onto a plane, self-collision on, with the
    energy bound; the first steps turn fast enough for substeps."""
    m, q0 = art.models.capsule_chain(12, height=0.05, bend=0.4, return_configuration=True)
    return m, dict(contacts=m.collision, q0=q0, contact_options=dict(energy_bound=True)), []


def _limits():
    """pendulum-8 from horizontal with joint limits +-0.3 rad and joint damping, no shapes."""
    b = art.ModelBuilder()
    parent = None
    for i in range(8):
        parent = b.add_body(f"l{i}", parent, "revolute", axis=(0, 1, 0), mass=0.2,
                            inertia=np.eye(3) * 1e-3, com=(0.05, 0, 0),
                            origin_xyz=(0.1, 0, 0) if i else (0, 0, 0), limits=(-0.3, 0.3))
    m = b.build()
    return m, dict(limits=True), [art.JointDamping(0.01)]


def _meshes():
    """A mesh cube (its hull's corners on the floor, compiled) pulled by a spring, and a
    sphere (not against the cube: that pair needs coal): compiled pairs and mesh-plane
    pairs in one detector."""
    b = art.ModelBuilder()
    b.add_body("cube", None, "free", mass=1.0, inertia=np.eye(3) * 0.01)
    b.add_body("ball", None, "free", mass=0.5, inertia=np.eye(3) * 0.002)
    m = b.build()
    geom = art.CollisionModel(m)
    geom.add("cube", _cube_mesh(0.2), mu=0.6)
    geom.add("ball", art.Sphere(radius=0.05), mu=0.6, e=0.5)
    geom.add_static(art.Plane(normal=(0, 0, 1)))
    geom.exclude("cube", "ball")
    q0 = m.neutral()
    q0[:3] = (0.0, 0.0, 0.13)
    q0[7:10] = (0.5, 0.0, 0.3)
    spring = art.Spring("cube", (0.1, 0, 0), (0.6, 0.0, 0.2), 30.0, damping=1.0)
    return m, dict(contacts=geom, q0=q0), [spring]


@pytest.mark.parametrize("scene", [_chain, _limits, _meshes])
def test_python_forces_in_the_contact_loop_equal_their_compiled_forms(scene):
    m, kw, forces = scene()
    fast = art.Simulator(m, H, forces=forces, **kw)
    slow = art.Simulator(m, H, forces=forces + [_PythonForce()], **kw)
    assert fast._compiled()[3] is not None and fast._compiled()[2].hook == -1
    assert slow._compiled()[2].hook >= 0
    a = fast.run(600, record_every=3)
    b = slow.run(600, record_every=3)
    np.testing.assert_allclose(a.q, b.q, rtol=0, atol=1e-12)
    np.testing.assert_allclose(a.qd, b.qd, rtol=0, atol=1e-10)
    np.testing.assert_allclose(a.kinetic, b.kinetic, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(a.potential, b.potential, rtol=1e-12, atol=1e-12)
    assert len(a.contacts) == len(b.contacts) == 600
    for name in EXACT:
        np.testing.assert_array_equal(a.contacts[name], b.contacts[name], err_msg=name)
    for name in CLOSE:
        np.testing.assert_allclose(a.contacts[name], b.contacts[name], rtol=1e-9, atol=1e-12,
                                   err_msg=name)
    assert (a.contacts["n"] + a.contacts["limits"] > 0).mean() > 0.3   # something touched
    la, lb = fast.contact_list(), slow.contact_list()
    assert len(la) == len(lb)
    for x, y in zip(la, lb):
        assert x["bodies"] == y["bodies"]
        np.testing.assert_allclose(x["impulse"], y["impulse"], rtol=0, atol=1e-12)
    # a second run goes on from where the first ended, in both
    np.testing.assert_allclose(fast.run(50).q, slow.run(50).q, rtol=0, atol=1e-12)


def test_the_chain_scene_uses_substeps_and_the_bound():
    """The chain scene of the test above exercises the compiled loop's substeps and energy
    bound: the drop's first impacts take energy out, and a fast step splits."""
    m, kw, forces = _chain()
    tr = art.Simulator(m, H, forces=forces, **kw).run(600)
    assert tr.contacts["energy_removed"].max() > 0.0
    assert tr.contacts["impacts"].sum() > 0
    # the substeps' statistics: times summed, so a split step's detection time is there
    assert (tr.contacts["detect_time"] >= 0).all()


def test_a_coal_mesh_pair_is_detected_from_inside_the_compiled_step():
    """A sphere against a mesh needs coal: the detection stage calls it, and the ball comes
    to rest on the cube's top face."""
    b = art.ModelBuilder()
    b.add_body("cube", None, "free", mass=1.0, inertia=np.eye(3) * 0.01)
    b.add_body("ball", None, "free", mass=0.5, inertia=np.eye(3) * 0.002)
    m = b.build()
    geom = art.CollisionModel(m)
    geom.add("cube", _cube_mesh(0.2))
    geom.add("ball", art.Sphere(radius=0.05))
    geom.add_static(art.Plane(normal=(0, 0, 1)))
    q0 = m.neutral()
    q0[:3] = (0.0, 0.0, 0.1)
    q0[7:10] = (0.0, 0.0, 0.3)
    sim = art.Simulator(m, H, contacts=geom, q0=q0)
    assert sim._compiled()[3].det.hook >= 0
    tr = sim.run(400)
    assert tr.q[-1, 9] > 0.2 + 0.05 - 2e-3          # the ball rests on the cube's top face


def test_a_non_finite_python_force_with_contacts_names_the_joint():
    """A Python force gone NaN inside the contact loop: the run stops before the step with
    the force's joint named, the records kept, and advice a contact simulator accepts."""
    m, kw, _ = _limits()

    def tau(t, q, qd):
        return np.full(m.nv, np.nan) if t > 0.0505 else np.zeros(m.nv)

    sim = art.Simulator(m, H, forces=[art.JointTorque(tau)], **kw)
    with pytest.raises(art.SimulationDiverged, match=r"tau\[0\]") as info:
        sim.run(100)
    e = info.value
    assert e.joint == m.joint_name[0]
    assert e.step == len(e.trajectory) == 52 and sim.t == pytest.approx(0.051)
    assert np.isfinite(e.trajectory.q).all() and np.array_equal(sim.q, e.trajectory.q[-1])
    # the advice names what a simulator with contacts and limits accepts
    assert "energy_bound" in str(e) and "another integrator" not in str(e)
