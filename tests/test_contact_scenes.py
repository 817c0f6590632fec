"""The contact scenes of issue 19 (Gayle, Lin & Manocha 2006, Figs. 5-6): the thread pulled
through walls, the snake on a bridge, the capsule-chain drop, and the moving-anchor spring
that pulls the thread. Small sizes of the benchmark scenes (``articulated bench contact``)."""

import math

import numpy as np
import pytest

import articulated as art
from articulated.bench.contact import run_sampled, snake_gait, thread_pull
from articulated.simulation.forces import force_from_spec

H = 1e-3


def _pile60():
    """The pile's chain at 60 links (2 cm, radius 2 mm, 20 g, joints bent by <= 0.05 rad)
    standing on its last capsule 5 cm above the plane: ``(model, q0)``."""
    return art.models.capsule_chain(60, link_length=0.02, radius=0.002, mass=0.02,
                                    upright=True, bend=0.05, height=0.05,
                                    return_configuration=True)


def _energies(m, tr):
    """Total energy [J] of every record of ``tr``."""
    return np.array([sum(art.energy(m, q, qd)) for q, qd in zip(tr.q, tr.qd)])


def test_moving_anchor_spring_matches_the_damped_oscillator():
    # A free body (1 kg, no gravity) on a spring-damper whose anchor moves at constant v:
    # y = x - a(t) obeys m y'' + c y' + k y = 0 (a'' = 0), closed form (underdamped), when
    # the motion stays on one line (the damper acts along the spring only): y0 and v
    # along the same direction e.
    b = art.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    b.add_body("ball", None, "free", mass=1.0, inertia=np.eye(3) * 0.01)
    model = b.build()
    e = np.array([2.0, -1.0, 2.0]) / 3.0
    k, c, v = 40.0, 1.5, -0.3 * e
    spring = art.Spring("ball", (0, 0, 0), (0.0, 0.0, 0.0), k, damping=c, anchor_velocity=v)
    assert spring.compiled(model) is not None and not spring.conserves_energy   # compiled
    assert spring.potential(model, model.neutral()) == 0.0
    again = force_from_spec(spring.spec())
    assert np.array_equal(again.anchor_velocity, v)
    q0 = model.neutral()
    q0[:3] = 0.1 * e
    sim = art.Simulator(model, H, q0=q0, forces=[spring])          # RK4
    tr = sim.run(1500)
    w0, z = math.sqrt(k), c / (2 * math.sqrt(k))
    wd = w0 * math.sqrt(1 - z * z)
    y0, yd0 = q0[:3], -v
    t = tr.t[:, None]
    y = np.exp(-z * w0 * t) * (y0 * np.cos(wd * t) + (yd0 + z * w0 * y0) / wd * np.sin(wd * t))
    assert np.abs(tr.q[:, :3] - (y + v * t)).max() < 1e-8
    # a fixed anchor is unchanged: conservative, compiled, same repr as before
    fixed = art.Spring("ball", (0, 0, 0), (0, 0, 0), k)
    assert fixed.conserves_energy and fixed.compiled(model) is not None
    assert "anchor_velocity" not in repr(fixed)


class _PythonForce:
    """A user's force in Python (no compiled form): the simulators' Python paths."""

    def apply(self, model, t, q, qd, tau, f_ext, kin=None):
        pass


def test_compiled_moving_anchor_equals_the_python_path():
    # A damped spring whose anchor moves (scene (b)'s pull) on the tip of pendulum-20, with
    # joint damping: the compiled loops (full model RK4 and semi-implicit Euler: the RK4
    # stages at t + dt/2 and t + dt; adaptive N_A = 5) give the Python paths' states (a
    # do-nothing Python force sends a simulator there), and the spring moves the chain.
    m = art.models.pendulum(20)
    q0 = np.r_[0.3, np.zeros(m.nq - 1)]
    spring = art.Spring(19, (0, 0, -0.05), (0.5, 0.0, -1.0), 30.0, damping=0.5,
                        anchor_velocity=(0.0, 1.5, 0.5))
    forces = [spring, art.JointDamping(0.01)]
    for kw, steps, tol in ((dict(integrator="rk4"), 400, 1e-12),
                           (dict(integrator="semi_implicit_euler"), 400, 1e-12),
                           (dict(method="adaptive", max_active=5, update_every=10), 400,
                            1e-10)):
        a = art.Simulator(m, H, q0=q0, forces=forces, **kw)
        b = art.Simulator(m, H, q0=q0, forces=forces + [_PythonForce()], **kw)
        ta, tb = a.run(steps), b.run(steps)
        assert np.abs(ta.q - tb.q).max() <= tol and np.abs(ta.qd - tb.qd).max() <= tol * 100
        fixed = art.Simulator(m, H, q0=q0, forces=[art.Spring(19, (0, 0, -0.05),
                                                              (0.5, 0.0, -1.0), 30.0,
                                                              damping=0.5)], **kw)
        assert np.abs(fixed.run(steps).q[-1] - ta.q[-1]).max() > 1e-2, kw


def test_chain_points_are_the_forward_kinematics():
    # the scenes' numpy placement (chain_points) against the compiled kinematics
    m, q0 = art.models.snake_bridge(41, return_configuration=True)
    rng = np.random.default_rng(3)
    q = q0.copy()
    q[7:] = rng.uniform(-1.5, 1.5, m.nv - 6)
    _, p = art.forward_kinematics(m, q)
    P = art.models.chain_points(m, q)
    assert np.abs(P[:-1] - p).max() < 1e-12


def test_scenes_rebuild_from_their_description():
    for m in (art.models.thread(30), art.models.snake_bridge(41), art.models.capsule_chain(8),
              art.models.hanging_rope(12)):
        again = art.models.build_model(m.description)
        assert again.nv == m.nv and len(again.collision._rows) == len(m.collision._rows)
        assert np.array_equal(again.collision.arrays()["pos"], m.collision.arrays()["pos"])


def test_bad_scene_sizes_raise():
    with pytest.raises(ValueError, match="hole"):
        art.models.thread(10, hole=0.006)
    with pytest.raises(ValueError, match="touches the beam"):
        art.models.snake_bridge(41, amplitude0=2.0)
    with pytest.raises(ValueError, match="corner"):
        art.models.snake_bridge(41, corner=0.0)
    with pytest.raises(ValueError, match="no gap between links"):
        art.models.hanging_rope(10, radius=0.005)
    with pytest.raises(ValueError, match="reaches the hanging point"):
        art.models.hanging_rope(10, height=0.3, cylinder_radius=0.2)


def test_hanging_rope_geometry():
    """The rope hangs straight along +x from (0, 0, height): its links' origins 1 cm apart,
    3 dofs a link; the capsules of links i and i + 2 are 2 mm apart (their cores 1 cm, radius
    4 mm), neighbours are not tested; the cylinder's top is 2 radii up at x = 0.6 m."""
    from articulated.algorithms.collision import Detector
    m, q0 = art.models.hanging_rope(6, return_configuration=True)
    assert m.nv == 18 and m.nq == 24
    _, p = art.forward_kinematics(m, q0)
    assert np.allclose(p, np.c_[0.01 * np.arange(6), np.zeros(6), np.full(6, 2.0)])
    R, _ = art.forward_kinematics(m, q0)
    det = Detector(m.collision)
    v = np.zeros((m.nb, 6))
    v[:, 5] = -3.0      # falling at 3 m/s: 3 mm of reach per shape in 1 ms
    n = det.detect(np.ascontiguousarray(np.transpose(R, (0, 2, 1))), p, v, 1e-3)
    pairs = {tuple(sorted(b)) for b in det.out.body[:n].tolist()}
    assert pairs == {(i, i + 2) for i in range(4)}
    assert np.allclose(det.out.dist[:n], 0.002)


@pytest.mark.parametrize("method", ["aba", "adaptive"])
def test_thread_goes_through_the_first_hole(method):
    # 40 links, 0.6 s at 0.5 m/s: the head (body 0's origin) starts 5 cm before wall 0
    # and must pass its hole, whose centre is 12 mm off the axis (a thread on the axis
    # rubs one edge by 1 mm): contacts, no depth beyond 1 mm, the head inside the hole.
    m, q0, qd0 = art.models.thread(40, return_configuration=True)
    kw = dict(method="adaptive", max_active=10, update_every=10) if method == "adaptive" else {}
    r = run_sampled(m, m.collision, q0, 600, 60, qd0=qd0, forces=thread_pull(m, q0), **kw)
    assert r["depth"] <= 1e-3
    assert (r["c"]["n"] > 0).sum() > 50
    x0, a, tw = 0.25, 0.015, 0.03                     # wall 0: x, half hole, thickness
    assert r["q"][-1, 0] > x0 + 0.5 * tw + 0.1       # the head is 10 cm past wall 0
    inside = np.abs(r["q"][:, 0] - x0) < 0.5 * tw     # samples with the head in the wall
    assert inside.any()
    yz = r["q"][inside, 1:3] - (0.0, 0.012)           # from the hole's centre
    assert np.abs(yz).max() < a
    # the head follows the moving anchor (spring 200 N/m) to within 2 cm
    assert np.abs(r["q"][:, 0] - (q0[0] + art.models.THREAD_SPEED * r["t"])).max() < 0.02


def test_snake_wraps_the_beam():
    # 41 links: the gait tightens the coil onto the beam in 1 s; then >= 30 % of the links
    # press on it, nothing sinks more than 1 mm, the snake stays on the beam (its base
    # within 0.1 m of the beam's axis at z = 0.5 m).
    m, q0 = art.models.snake_bridge(41, return_configuration=True)
    r = run_sampled(m, m.collision, q0, 1400, 7, forces=[snake_gait(m)])
    assert r["depth"] <= 1e-3
    assert np.hypot(r["q"][:, 1], r["q"][:, 2] - 0.5).max() < 0.1
    assert r["frac"][-3:].min() >= 0.3


def test_snake_adaptive_with_every_joint_active_is_the_full_model():
    # the scene under both pipelines: adaptive dynamics with every joint active follows
    # the full model's step (contacts, PD gait) over 0.2 s
    m, q0 = art.models.snake_bridge(41, return_configuration=True)
    full = art.Simulator(m, H, contacts=m.collision, q0=q0, forces=[snake_gait(m)]).run(200)
    ad = art.Simulator(m, H, contacts=m.collision, q0=q0, forces=[snake_gait(m)],
                       method="adaptive", max_active=m.nv, update_every=10).run(200)
    assert full.contacts["n"].sum() > 100
    assert np.abs(ad.q[-1] - full.q[-1]).max() < 1e-8


def test_snake_adaptive_runs():
    # N_A = 10 of 40 hinges for 0.6 s (the coil closing): finite, on the beam, depth <= 1 mm
    m, q0 = art.models.snake_bridge(41, return_configuration=True)
    r = run_sampled(m, m.collision, q0, 600, 6, forces=[snake_gait(m)], method="adaptive",
                    max_active=10, update_every=10)
    assert r["depth"] <= 1e-3 and r["c"]["n"].sum() > 0
    assert np.hypot(r["q"][:, 1], r["q"][:, 2] - 0.5).max() < 0.1


@pytest.mark.parametrize("method", ["aba", "adaptive"])
def test_chain_drop_never_gains_energy(method):
    # 12 capsules dropped flat 5 cm onto the plane: free fall under semi-implicit Euler
    # loses m g^2 h^2 / 2 per step, impacts remove energy, friction holds: the total
    # energy (art.energy at every step) never rises above its start.
    m, q0 = art.models.capsule_chain(12, height=0.06, return_configuration=True)
    kw = dict(method="adaptive", max_active=6, update_every=10) if method == "adaptive" else {}
    tr = art.Simulator(m, H, contacts=m.collision, q0=q0, **kw).run(500)
    E = _energies(m, tr)
    assert E.max() <= E[0] + 1e-9 * abs(E[0])
    assert tr.contacts["max_depth"].max() <= 1e-3
    assert abs(tr.q[-1, 2] - 0.01) < 1e-3                  # capsule 0 lies on the plane


@pytest.mark.parametrize("method", ["aba", "adaptive"])
def test_chain_at_rest_converges_from_the_warm_start(method):
    """30 capsules dropped flat from 3 cm come to rest on both ends of every capsule; each
    step starts from the impulses of the step before (each contact found by its key), so
    at rest the first sweep meets ``tol``. While the lower end of a capsule lying flat
    took the key of the capsule's deepest point (it changes from step to step), the warm
    start missed and chain-300 needed 9-12 sweeps a step (docs/results/contact-checks.md)."""
    m, q0 = art.models.capsule_chain(30, height=0.03, return_configuration=True)
    kw = dict(method="adaptive", max_active=10, update_every=10) if method == "adaptive" else {}
    tr = art.Simulator(m, H, contacts=m.collision, q0=q0, **kw).run(1500)
    c = tr.contacts
    rest = slice(1000, 1500)
    assert np.median(c["n"][rest]) == 60                   # both ends of every capsule
    assert np.median(c["sweeps"][rest]) <= 2
    assert abs(tr.q[-1, 2] - 0.01) < 1e-4                  # capsule 0 lies on the plane


def test_upright_chain_hangs_from_its_root_and_its_impact_never_gains_energy():
    # The pile's chain (60 links of 2 cm, radius 2 mm, 20 g, joints bent by <= 0.05 rad)
    # standing on its last capsule 5 cm above the plane, the free base on top: the lowest
    # point is at 5 cm, the tip strikes at step 100, and the total energy never rises above
    # its start through the impact and 50 steps after (rooted at the striking end instead,
    # the same drop gains 0.46 J in the impact step and 3.5 J by step 150).
    from articulated.models.contact_scenes import chain_points

    m, q0 = _pile60()
    P = chain_points(m, q0)
    assert abs(P[:, 2].min() - 0.05) < 1e-12 and np.argmin(P[:, 2]) == 60
    assert P[0, 2] > 1.15                                    # the root 1.2 m up, on top
    tr = art.Simulator(m, H, contacts=m.collision, q0=q0).run(150)
    assert np.argmax(tr.contacts["n"] > 0) == 100
    E = _energies(m, tr)
    E0 = sum(art.energy(m, q0, np.zeros(m.nv)))
    assert E.max() <= E0 + 1e-9 * E0
    assert E[-1] < E0 - 0.3                                  # the impact removed energy


def test_bench_scenes_quick(tmp_path):
    # smoke test of `articulated bench contact --quick --only b,c`: both tables written
    from articulated.bench.contact import main

    assert main(["--quick", "--only", "b,c", "--out", str(tmp_path)]) == 0
    text = (tmp_path / "contact-results-bc-quick.md").read_text()
    assert "## (b) thread-45" in text and "## (c) snake-39" in text
    assert text.count("| full (ABA) |") == 2


def test_pile_runs_under_the_energy_bound():
    # The pile at 60 links (2 cm, radius 2 mm, 20 g, joints bent by <= 0.05 rad, dropped
    # 5 cm on its tip), 1 s at 1 ms, full model, with the energy bound: the pile comes to
    # rest no deeper than 1 mm, and the total energy never rises above its start (by
    # construction: the bound's W is 0 here, no applied force). The bound has little to
    # take out of the 7.54 J: 0.147 J with the default RK4 substeps (at most 0.1 rad),
    # 0.030 J with max_rotation = 0.025 (substeps of at most 0.05 rad; RK4's error falls
    # with the substep's turn): the substeps take their impulses at their start and move
    # by RK4 (contact_loop._finish); when they added impulses computed at a substep's
    # start to its end velocities, the bound took 3.8 J out of this run.
    m, q0 = _pile60()
    E0 = sum(art.energy(m, q0, np.zeros(m.nv)))
    removed = {}
    for theta in (0.05, 0.025):
        tr = art.Simulator(m, H, contacts=m.collision, q0=q0,
                           contact_options=dict(energy_bound=True, max_rotation=theta)).run(1000)
        E = _energies(m, tr)
        c = tr.contacts
        assert E.max() <= E0 * (1 + 1e-9)
        assert c["max_depth"].max() <= 1e-3
        assert art.energy(m, tr.q[-1], tr.qd[-1])[0] < 1e-3 and c["n"][-1] >= 30
        removed[theta] = c["energy_removed"].sum()
    assert removed[0.05] < 0.2 and removed[0.025] < 0.05
