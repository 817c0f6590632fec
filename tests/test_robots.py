"""articulated.robots and `articulated simulate --robot/--urdf --floor`: example-robot-data's
robots found by name, a floor with self-collision off by default or on with the touching
pairs excluded, SRDF poses held by PD, mirrored meshes loaded as the reflected hull."""

import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import articulated as art
from articulated.cli import main
from articulated.geometry import Mesh
from articulated.robots import FLOOR_GROUP, ROBOT_GROUP


@pytest.fixture(scope="module")
def erd():
    if art.robots.data_dir() is None:
        pytest.skip("example-robot-data is not installed (the robots extra)")


def test_path_finds_the_robots_by_name(erd):
    assert art.robots.path("solo12").name == "solo12.urdf"
    assert art.robots.path("anymal_c").parts[-3:] == ("anymal_c_simple_description", "urdf",
                                                      "anymal.urdf")
    assert art.robots.path("go1").name == "go1.urdf"            # by file stem
    assert art.robots.srdf_path("solo12").name == "solo.srdf"
    assert art.robots.srdf_path("ur3") is None
    names = art.robots.names()
    assert {"solo12", "anymal_b", "anymal_c", "talos", "a1", "ur5"} <= set(names)
    with pytest.raises(ValueError, match="unknown robot 'solo13'; example-robot-data has: .*solo12"):
        art.robots.path("solo13")


def test_floor_without_self_collision_pairs_only_the_floor(erd):
    m = art.robots.load("solo12", floating_base=True, collision=True)
    q0 = m.neutral()
    geom = art.robots.floor_contacts(m, q0)
    A = geom.arrays()
    floor = len(A["body"]) - 1
    assert A["body"][floor] == -1 and A["kind"][floor] == art.Plane.kind
    assert len(A["pairs"]) == floor                   # every robot shape against the floor
    assert (A["pairs"] == floor).any(axis=1).all()
    assert (A["group"][:floor] == ROBOT_GROUP).all() and A["mask"][floor] == ROBOT_GROUP
    assert A["group"][floor] == FLOOR_GROUP
    # the plane touches the lowest bounding sphere at q0
    R, p = art.forward_kinematics(m, q0)
    b = A["body"][:floor]
    c = p[b] + np.einsum("gij,gj->gi", R[b], A["pos"][:floor])
    assert A["pos"][floor][2] == pytest.approx((c[:, 2] - A["rb"][:floor]).min(), abs=1e-12)


def test_self_collision_excludes_the_pairs_touching_at_the_start(erd):
    """solo12's base hull overlaps its upper legs' at rest: without the exclusion the
    simulator refuses the start; with it the pairs that remain are apart at q0."""
    m = art.robots.load("solo12", floating_base=True, collision=True)
    q0 = art.robots.named_pose(m, art.robots.srdf_path("solo12"), "standing")
    geom = art.robots.floor_contacts(m, q0, self_collision=True,
                                     srdf=art.robots.srdf_path("solo12"))
    A = geom.arrays()
    floor = len(A["body"]) - 1
    pairs = {tuple(sorted((int(A["body"][a]), int(A["body"][b])))) for a, b in A["pairs"]
             if b != floor and a != floor}
    base, upper = m.body_id("base_link"), m.body_id("FL_UPPER_LEG")
    assert (base, upper) not in pairs                 # touching at q0: excluded
    assert len(pairs) > 0                             # the legs still see each other
    sim = art.Simulator(m, 1e-3, contacts=geom, q0=q0)     # check_initial passes
    tr = sim.run(20)
    assert np.isfinite(tr.q).all()


def test_named_pose_reads_the_srdf(erd):
    m = art.robots.load("solo12", floating_base=True)
    srdf = art.robots.srdf_path("solo12")
    q = art.robots.named_pose(m, srdf, "standing")
    state = next(g for g in ET.parse(srdf).getroot().iter("group_state")
                 if g.get("name") == "standing")
    n = 0
    for j in state.iter("joint"):
        v = [float(x) for x in j.get("value").split()]
        if j.get("name") in m.joint_name and len(v) == 1:
            jid = m.joint_name.index(j.get("name"))
            assert q[m.jnt_qadr[jid]] == v[0]
            n += 1
        elif len(v) == 7:                           # the free root: x y z qx qy qz qw
            assert q[:7].tolist() == v[:3] + [v[6]] + v[3:6]
    assert n == 12 and q[:7].tolist() == [0, 0, 0.235, 1, 0, 0, 0]
    with pytest.raises(ValueError, match="no group_state 'sitting'; it has standing, "
                                         "straight_standing"):
        art.robots.named_pose(m, srdf, "sitting")


def test_mirrored_mesh_is_the_reflected_hull():
    """A mesh at scale (1, -1, 1) collides as the mesh whose vertices are reflected by hand
    (same contacts against a plane tilted so the asymmetry matters), and its faces still
    wind outward (positive signed volume)."""
    pytest.importorskip("coal")
    V = np.array([[0, 0, 0], [0.1, 0, 0], [0, 0.2, 0], [0, 0, 0.1], [0.05, 0.15, 0.02]], float)
    F = np.array([[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 4], [1, 4, 3], [2, 3, 4]])
    mirrored = Mesh(vertices=V, faces=F, scale=(1.0, -1.0, 1.0))
    by_hand = Mesh(vertices=V * [1, -1, 1], faces=F[:, ::-1])
    np.testing.assert_array_equal(mirrored.scaled_vertices(), by_hand.scaled_vertices())
    Fm, Vm = mirrored.scaled_faces(), mirrored.scaled_vertices()
    vol = np.einsum("ij,ij->i", Vm[Fm[:, 0]], np.cross(Vm[Fm[:, 1]], Vm[Fm[:, 2]])).sum() / 6
    assert vol > 0
    with pytest.raises(ValueError, match="scale must be finite and non-zero"):
        Mesh(vertices=V, scale=(1.0, 0.0, 1.0)).scaled_vertices()
    out = []
    for mesh in (mirrored, by_hand):
        m = art.models.pendulum(1)
        geom = art.CollisionModel(m)
        geom.add(0, mesh)
        geom.add_static(art.Plane(normal=(0.3, 0.2, 1.0), pos=(0, 0, -0.95)))
        tr = art.Simulator(m, 1e-3, contacts=geom, q0=[0.3],
                           contact_options=dict(allow_initial_penetration=True)).run(200)
        out.append(tr.q[-1])
    np.testing.assert_array_equal(out[0], out[1])


@pytest.mark.parametrize("name", ["solo12", "anymal_b", "anymal_c", "talos"])
def test_simulate_robot_on_the_floor_runs_without_options(erd, name, tmp_path, capsys):
    """`articulated simulate --robot NAME --floating-base --floor`: the robot falls onto the
    floor from its perturbed start without an error (solo12's overlapping hulls, anymal's
    boxes, talos's mirrored meshes were each refused before), no deeper than 1 mm."""
    pytest.importorskip("coal")
    rc = main(["simulate", "--robot", name, "--floating-base", "--floor", "--steps", "300",
               "--record-every", "10", "--out", str(tmp_path)])
    out, err = capsys.readouterr()
    assert rc == 0, err
    assert "self-collision off (--self-collision turns it on)" in out
    m = re.search(r"contacts: (\d+) at the end, deepest penetration ([\d.]+) mm", out)
    assert m and int(m.group(1)) >= 1 and float(m.group(2)) <= 1.0


def test_hold_pose_keeps_solo12_standing(erd, tmp_path, capsys):
    """solo12 started in its SRDF 'standing' pose on the floor and held there by the PD of
    hold_pose: after 1 s its base rests between 0.2 and 0.3 m (its standing height) and
    the joints stay within 0.1 rad of the pose."""
    pytest.importorskip("coal")
    rc = main(["simulate", "--robot", "solo12", "--floating-base", "--floor", "--hold-pose",
               "standing", "--steps", "1000", "--record-every", "10", "--out", str(tmp_path)])
    out, err = capsys.readouterr()
    assert rc == 0, err
    assert "holding the pose 'standing' with a PD controller on 12 joints" in out
    data = np.load(tmp_path / "trajectory.npz")
    q = data["q"]
    m = art.robots.load("solo12", floating_base=True, collision=True)
    pose = art.robots.named_pose(m, art.robots.srdf_path("solo12"), "standing")
    floor = art.robots.floor_contacts(m, pose).arrays()["pos"][-1, 2]
    assert 0.2 < q[-1, 2] - floor < 0.3
    assert np.abs(q[-1, 7:] - pose[7:]).max() < 0.1
    assert np.abs(data["qd"][-1]).max() < 0.05        # at rest


def test_hold_pose_caps_light_joints_for_a_stable_step(erd):
    """hold_pose's default gains on talos: the legs keep the robot-scaled kp, the grippers
    (whose effective inertia is tiny) get less, and every mode of the held joints has
    kp dt^2 / I <= 1 (the stiffness of M^-1 Kp at most 1 / dt^2), the bound that keeps a
    semi-implicit Euler step of dt stable; dt=None leaves the gains uniform, with a mode
    beyond the limit (kp dt^2 / I > 4: talos' grippers diverged in 17 steps)."""
    m = art.robots.load("talos", floating_base=True)
    q = art.robots.named_pose(m, art.robots.srdf_path("talos"), "half_sitting")
    dt = 1e-3
    pd = art.robots.hold_pose(m, q, dt=dt)
    free = art.robots.hold_pose(m, q, dt=None)
    kp = dict(zip((m.joint_name[j] for j in pd.joints), pd.kp))
    assert kp["leg_left_4_joint"] == pytest.approx(free.kp[0])
    assert kp["gripper_left_joint"] < 0.2 * free.kp[0]
    v = m.jnt_vadr[pd.joints]
    Minv = np.linalg.inv(art.crba(m, q))[np.ix_(v, v)]
    assert np.abs(np.linalg.eigvals(Minv @ np.diag(pd.kp))).max() * dt ** 2 <= 1.0 + 1e-12
    assert np.abs(np.linalg.eigvals(Minv @ np.diag(np.broadcast_to(free.kp, v.shape)))
                  ).max() * dt ** 2 > 4.0       # beyond the undamped step's limit, 4
