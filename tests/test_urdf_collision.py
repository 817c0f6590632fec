"""URDF joint limits and collision geometry (load_urdf(..., collision=True)), and the mesh
narrow phase through coal: limits against Pinocchio, shape poses against yourdfpy's forward
kinematics, mesh contacts against coal called directly and against the compiled Box path."""

from __future__ import annotations

import math
import warnings
import re
import sys

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import articulated as art
from articulated.algorithms.collision import Detector
from articulated.algorithms.collision_mesh import MESH_FEATURES, MESH_PLANE_GIVE
from articulated.bench.common import robots_dir
from articulated.geometry import SHAPE_BOX, SHAPE_CYLINDER, SHAPE_MESH, SHAPE_SPHERE
from articulated.io.urdf import load_urdf

from test_urdf import ROBOTS

INERTIAL = ("<inertial><mass value='1'/><inertia ixx='0.01' iyy='0.01' izz='0.01' ixy='0' "
            "ixz='0' iyz='0'/></inertial>")


def _write(tmp_path, body, name="r.urdf"):
    path = tmp_path / name
    path.write_text(f"<?xml version='1.0'?><robot name='r'>{body}</robot>")
    return path


def _free_pair():
    b = art.ModelBuilder()
    b.add_body("a", None, "free", mass=1.0, inertia=np.eye(3) * 0.01)
    b.add_body("b", None, "free", mass=1.0, inertia=np.eye(3) * 0.01)
    return b.build()


def _cube_mesh(edge=0.2):
    V = 0.5 * edge * np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)],
                              dtype=float)
    F = np.array([[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1],
                  [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3]])
    return art.Mesh(vertices=V, faces=F)


def _poses(R, p):
    """Detector inputs for world rotations R (nb, 3, 3) and origins p (nb, 3)."""
    return np.transpose(np.asarray(R), (0, 2, 1)).copy(), np.asarray(p, dtype=float)


# ------------------------------------------------------------------------- joint limits

@pytest.fixture(scope="module")
def pin():
    import pinocchio  # the test extra

    return pinocchio


@pytest.fixture(scope="module")
def robots():
    d = robots_dir()
    if d is None:
        pytest.skip("example-robot-data is not installed")
    return d


def _pin_limits(pin, model, pm):
    """(ours, Pinocchio's) (lower, upper) of every 1-coordinate joint, by joint name;
    continuous joints (Pinocchio: (cos, sin), nq 2) must be unlimited here."""
    ours, theirs = [], []
    for i in range(model.nb):
        if model.joint_name[i] == "root_joint":
            continue
        J = pm.joints[pm.getJointId(model.joint_name[i])]
        if J.nq == 2:
            assert not model.jnt_limited[i]
            assert tuple(model.jnt_range[i]) == (-math.inf, math.inf)
            continue
        assert J.nq == 1
        ours.append(model.jnt_range[i])
        theirs.append((pm.lowerPositionLimit[J.idx_q], pm.upperPositionLimit[J.idx_q]))
    return np.array(ours).reshape(-1, 2), np.array(theirs).reshape(-1, 2)


@pytest.mark.parametrize("name, sub", [(n, s) for n, s, _ in ROBOTS])
def test_limits_equal_pinocchio_on_robots(pin, robots, name, sub):
    path = robots / sub
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # equal limits (tested below)
        m = load_urdf(path, floating_base=True, massless_body_mass=1e-6)
    ours, theirs = _pin_limits(pin, m, pin.buildModelFromUrdf(str(path)))
    assert len(ours) > 0 or name == "double_pendulum"
    equal = theirs[:, 0] == theirs[:, 1]  # MuJoCo's rule: no limit
    np.testing.assert_array_equal(ours[~equal], theirs[~equal])
    assert np.isfinite(ours[~equal]).all() and np.isinf(ours[equal]).all()


def test_limit_rules_follow_pinocchio(pin, tmp_path):
    """Missing lower/upper -> 0 (URDF default), lower == upper unlimited with a warning
    (MuJoCo's rule; Pinocchio keeps them), continuous unlimited
    whatever its <limit> says; a revolute joint without <limit> (which Pinocchio refuses)
    is unlimited."""
    lim = "<limit effort='1' velocity='1' {}/>"
    joints = [("j_zero", "revolute", lim.format("lower='0' upper='0'")),
              ("j_equal", "revolute", lim.format("lower='0.3' upper='0.3'")),
              ("j_cont", "continuous", lim.format("lower='-1' upper='1'")),
              ("j_pris_none", "prismatic", lim.format("")),
              ("j_low_only", "revolute", lim.format("lower='-0.5'")),
              ("j_up_only", "prismatic", lim.format("upper='0.25'")),
              ("j_ok", "prismatic", lim.format("lower='-0.5' upper='0.25'"))]
    links = "<link name='l0'/>" + "".join(f"<link name='l{k + 1}'>{INERTIAL}</link>"
                                         for k in range(len(joints)))
    body = links + "".join(
        f"<joint name='{n}' type='{t}'><parent link='l{k}'/><child link='l{k + 1}'/>{x}</joint>"
        for k, (n, t, x) in enumerate(joints))
    path = _write(tmp_path, body)
    with pytest.warns(UserWarning, match="without limits") as w:
        m = load_urdf(path)
    assert sorted(str(x.message).split("'")[1] for x in w) == ["j_equal", "j_pris_none",
                                                               "j_zero"]
    inf = (-math.inf, math.inf)
    expect = {"j_zero": inf, "j_equal": inf, "j_cont": inf, "j_pris_none": inf,
              "j_low_only": (-0.5, 0), "j_up_only": (0, 0.25), "j_ok": (-0.5, 0.25)}
    for n, lu in expect.items():
        assert tuple(m.jnt_range[m.joint_id(n)]) == lu, n
    assert list(m.jnt_limited) == [False, False, False, False, True, True, True]
    ours, theirs = _pin_limits(pin, m, pin.buildModelFromUrdf(str(path)))
    np.testing.assert_array_equal(ours[-3:], theirs[-3:])
    assert (theirs[:3, 0] == theirs[:3, 1]).all()
    # no <limit> on a revolute joint: unlimited (MuJoCo's choice; urdfdom rejects the file)
    path2 = _write(tmp_path, f"<link name='a'/><link name='b'>{INERTIAL}</link><joint "
                             f"name='free_spin' type='revolute'><parent link='a'/>"
                             f"<child link='b'/></joint>", "nolimit.urdf")
    m2 = load_urdf(path2)
    assert not m2.jnt_limited[0] and tuple(m2.jnt_range[0]) == (-math.inf, math.inf)


@pytest.mark.parametrize("attrs, match", [
    ("lower='nan' upper='1'", r"joint 'hinge': <limit> lower='nan': not finite"),
    ("lower='-inf' upper='1'", r"joint 'hinge': <limit> lower='-inf': not finite"),
    ("lower='0.5' upper='-0.5'", r"joint 'hinge': <limit> lower 0.5 > upper -0.5"),
])
def test_bad_limits_name_the_joint(tmp_path, attrs, match):
    path = _write(tmp_path, f"<link name='a'/><link name='b'>{INERTIAL}</link><joint "
                            f"name='hinge' type='revolute'><parent link='a'/><child link='b'/>"
                            f"<limit effort='1' velocity='1' {attrs}/></joint>")
    with pytest.raises(ValueError, match=match) as e:
        load_urdf(path)
    assert str(path) in str(e.value)


def test_mixed_joints_limits():
    m = load_urdf(_data_dir() / "mixed_joints.urdf")
    np.testing.assert_array_equal(m.jnt_range, [[-1, 1], [-np.inf, np.inf], [-0.1, 0.1],
                                                [-np.inf, np.inf], [-1, 1]])
    m.check_limits(m.neutral())
    q = m.neutral()
    q[m.jnt_qadr[m.joint_id("slider")]] = 0.2
    with pytest.raises(ValueError, match="slider"):
        m.check_limits(q)


def _data_dir():
    from pathlib import Path

    return Path(__file__).parent / "data"


# ------------------------------------------------------------ collision geometry of a URDF

HAND = """
<link name="world_link"><collision><origin xyz="0.3 0 -0.05" rpy="0 0 0.4"/>
  <geometry><box size="2 1.5 0.1"/></geometry></collision></link>
<joint name="pedestal_mount" type="fixed"><origin xyz="0.1 -0.2 0.0" rpy="0.1 0 0.3"/>
  <parent link="world_link"/><child link="pedestal"/></joint>
<link name="pedestal"><collision name="pedestal_cyl"><origin xyz="0 0 0.1" rpy="0.2 0.1 0"/>
  <geometry><cylinder radius="0.05" length="0.2"/></geometry></collision></link>
<joint name="shoulder" type="revolute"><origin xyz="0 0 0.2" rpy="0.3 -0.2 0.5"/>
  <parent link="pedestal"/><child link="arm"/><axis xyz="0 0 1"/>
  <limit lower="-2" upper="2" effort="1" velocity="1"/></joint>
<link name="arm">INERTIAL
  <collision><origin xyz="0 0 0.15" rpy="0 0 0"/><geometry><cylinder radius="0.04" length="0.3"/></geometry></collision>
</link>
<joint name="tool_mount" type="fixed"><origin xyz="0.02 0.03 0.3" rpy="0.5 -0.4 0.2"/>
  <parent link="arm"/><child link="tool"/></joint>
<link name="tool">
  <collision><origin xyz="0.01 0 0.02" rpy="0.3 0.2 0.1"/><geometry><sphere radius="0.03"/></geometry></collision>
  <collision><origin xyz="0 0.05 0" rpy="-0.3 0.6 1.1"/>
    <geometry><mesh filename="meshes/part.stl" scale="0.5 1 2"/></geometry></collision>
</link>
<joint name="slide" type="prismatic"><origin xyz="0.1 0 0.05" rpy="0 0.7 0"/>
  <parent link="tool"/><child link="finger"/><axis xyz="1 0 0"/>
  <limit lower="-0.1" upper="0.1" effort="1" velocity="1"/></joint>
<link name="finger">INERTIAL
  <collision><geometry><box size="0.02 0.04 0.06"/></geometry></collision>
</link>
""".replace("INERTIAL", INERTIAL)


@pytest.fixture
def hand_urdf(tmp_path):
    import trimesh
    (tmp_path / "meshes").mkdir()
    mesh = trimesh.creation.icosphere(subdivisions=1, radius=0.04)
    mesh.vertices += [0.01, -0.02, 0.005]
    mesh.export(tmp_path / "meshes" / "part.stl")
    return _write(tmp_path, HAND, "hand.urdf"), mesh


def test_collision_shapes_land_where_yourdfpy_puts_them(hand_urdf):
    """World pose of every <collision> = yourdfpy's link pose (its own forward kinematics)
    times the element's <origin>, at random joint values, to 1e-12; fixed links merged,
    the world-welded links static, sizes as in the file."""
    import yourdfpy

    path, part = hand_urdf
    m = load_urdf(path, collision=True, mu=0.7, e=0.2)
    geom = m.collision
    A = geom.arrays()
    assert A["name"] == ["world_link/collision_0", "pedestal_cyl", "arm/collision_0",
                         "tool/collision_0", "tool/collision_1", "finger/collision_0"]
    np.testing.assert_array_equal(A["body"], [-1, -1, m.body_id("arm"), m.body_id("arm"),
                                              m.body_id("arm"), m.body_id("finger")])
    np.testing.assert_array_equal(A["kind"], [SHAPE_BOX, SHAPE_CYLINDER, SHAPE_CYLINDER,
                                              SHAPE_SPHERE, SHAPE_MESH, SHAPE_BOX])
    np.testing.assert_allclose(A["size"][0], [1.0, 0.75, 0.05])
    np.testing.assert_allclose(A["size"][2], [0.04, 0.15, 0.0])
    np.testing.assert_allclose(A["size"][5], [0.01, 0.02, 0.03])
    assert (A["mu"] == 0.7).all() and (A["e"] == 0.2).all()
    mesh = A["mesh"][4]
    # STL stores float32 and repeats vertices per face: compare the sets of vertices
    got = np.unique(np.round(mesh.scaled_vertices(), 6), axis=0)
    np.testing.assert_allclose(got, np.unique(np.round(part.vertices * [0.5, 1, 2], 6), axis=0),
                               atol=2e-6)
    assert A["rb"][4] == pytest.approx(np.linalg.norm(part.vertices * [0.5, 1, 2], axis=1).max(),
                                       rel=1e-6)

    ref = yourdfpy.URDF.load(str(path), build_scene_graph=True, load_meshes=False)
    elements = [(ln, c) for ln in ref.robot.links for c in ln.collisions]
    rng = np.random.default_rng(4)
    for _ in range(3):
        cfg = {"shoulder": rng.uniform(-2, 2), "slide": rng.uniform(-0.1, 0.1)}
        ref.update_cfg(cfg)
        q = m.neutral()
        for jn, val in cfg.items():
            q[m.jnt_qadr[m.joint_id(jn)]] = val
        Rb, pb = art.forward_kinematics(m, q)
        for g, (ln, c) in enumerate(elements):
            T = ref.get_transform(ln.name) @ (np.eye(4) if c.origin is None else c.origin)
            b = A["body"][g]
            Rw, pw = ((A["R"][g], A["pos"][g]) if b < 0 else
                      (Rb[b] @ A["R"][g], pb[b] + Rb[b] @ A["pos"][g]))
            np.testing.assert_allclose(Rw, T[:3, :3], rtol=0, atol=1e-12)
            np.testing.assert_allclose(pw, T[:3, 3], rtol=0, atol=1e-12)
    # without collision=True nothing is read (the mesh could be missing)
    assert load_urdf(path).collision is None


def test_with_limits_carries_the_collision_model_over(hand_urdf):
    """``Model.with_limits`` on a model loaded with ``collision=True``: the copy's
    ``collision`` is bound to the copy (a simulator accepts it) with the same shapes, and
    shapes added to it do not reach the original."""
    path, _ = hand_urdf
    m = load_urdf(path, collision=True)
    m2 = m.with_limits(-0.3, 0.3)
    assert m2.collision.model is m2 and m.collision.model is m
    assert m2.collision.arrays()["name"] == m.collision.arrays()["name"]
    # the world-welded box and cylinder have no narrow phase against the arm's cylinder:
    # filter them out (set_filter), so the copy's geometry builds a detector
    statics = [i for i, b in enumerate(m2.collision.arrays()["body"]) if b < 0]
    n_pairs = len(m.collision.arrays()["pairs"])
    m2.collision.set_filter(statics, group=0)
    m.collision._arrays = None  # rebuilt from its own shapes: the copy's filter is not there
    assert len(m2.collision.arrays()["pairs"]) < len(m.collision.arrays()["pairs"]) == n_pairs
    sim = art.Simulator(m2, 1e-3, contacts=m2.collision, limits=True,
                        contact_options=dict(allow_initial_penetration=True))
    tr = sim.run(50)
    assert np.isfinite(tr.q).all() and np.abs(tr.q[:, m2.jnt_qadr[m2.jnt_limited]]).max() <= 0.3 + 1e-6
    m2.collision.add_static(art.Plane(normal=(0, 0, 1), pos=(0, 0, -5)))
    assert len(m2.collision) == len(m.collision) + 1


@pytest.mark.parametrize("floating_base", [False, True])
def test_solo12_loads_every_collision_element(robots, floating_base):
    path = robots / "solo_description/robots/solo12.urdf"
    m = load_urdf(path, floating_base=floating_base, collision=True)
    n_file = len(re.findall(r"<collision\b", path.read_text()))
    A = m.collision.arrays()
    assert n_file == 17 and len(m.collision) == n_file
    assert (A["kind"] == SHAPE_MESH).all()
    assert int((A["body"] < 0).sum()) == (0 if floating_base else 1)  # base_link static
    # one Mesh per file: base, 4 hips, upper and lower legs left and right, the foot
    assert len({id(x) for x in A["mesh"]}) == 10
    # a step of detection on a floor: feet in contact, keys increasing
    geom = m.collision
    geom.add_static(art.Plane(normal=(0, 0, 1)))
    det = Detector(geom)
    q = m.neutral()
    if floating_base:
        q[2] = 0.3
    R, p = art.forward_kinematics(m, q)
    n = det.detect(*_poses(R, p), np.zeros((m.nb, 6)), 1e-3)
    assert n > 0 and (np.diff(det.out.key[:n]) > 0).all()
    assert np.isfinite(det.out.dist[:n]).all()


# ------------------------------------------------------------------ mesh narrow phase

def _random_mesh(rng, n=40):
    V = rng.normal(size=(n, 3)) * [0.05, 0.08, 0.06]
    return art.Mesh(vertices=V)


@pytest.mark.parametrize("kb", ["sphere", "capsule", "box", "cylinder", "mesh"])
def test_mesh_pairs_equal_coal(kb):
    """Distance, normal and point of mesh pairs = coal.distance on the same convex hull at
    the same world poses (random poses, overlapping and apart), to 1e-9; the normal points
    from b to a."""
    import coal

    rng = np.random.default_rng(11)
    m = _free_pair()
    checked = 0
    for trial in range(40):
        M = _random_mesh(rng)
        other = {"sphere": art.Sphere(radius=0.05), "capsule": art.Capsule(radius=0.03, length=0.1),
                 "box": art.Box(size=(0.06, 0.08, 0.1)),
                 "cylinder": art.Cylinder(radius=0.04, length=0.1),
                 "mesh": _random_mesh(rng)}[kb]
        geom = art.CollisionModel(m)
        geom.add("a", M)
        geom.add("b", other, pos=(0.01, -0.02, 0.03), R=Rotation.from_rotvec([0.3, 0, 0.2]).as_matrix())
        det = Detector(geom)
        Rw = Rotation.random(2, random_state=rng.integers(1 << 30)).as_matrix()
        pw = rng.uniform(-0.15, 0.15, size=(2, 3))
        n = det.detect(*_poses(Rw, pw), np.zeros((2, 6)), 1e-3, extra=1.0)
        assert n >= 1
        A = geom.arrays()
        ia, ib = (int(x) for x in A["pairs"][0])
        # coal on the same shapes: o1 = shape a, o2 = shape b at their world poses
        gR, gp = det.poses.gR, det.poses.gp
        geo = det.mesh.geo
        req = coal.DistanceRequest()
        req.gjk_tolerance = req.epa_tolerance = 1e-12
        req.gjk_max_iterations = req.epa_max_iterations = 1000
        res = coal.DistanceResult()
        d = coal.distance(geo[ia], coal.Transform3s(gR[ia], gp[ia]), geo[ib],
                          coal.Transform3s(gR[ib], gp[ib]), req, res)
        # the deepest point: feature 0, or 1 + e at a capsule's end e (its ends come in key
        # order around it)
        i0 = int(np.argmin(det.out.dist[:n]))
        assert (np.diff(det.out.key[:n]) > 0).all()
        assert det.out.key[i0] in (0, 1, 2) and tuple(det.out.geom[i0]) == (ia, ib)
        assert abs(det.out.dist[i0] - d) <= 1e-9
        np.testing.assert_allclose(det.out.normal[i0], -np.asarray(res.normal), atol=1e-9)
        np.testing.assert_allclose(det.out.point[i0], 0.5 * (res.getNearestPoint1()
                                                             + res.getNearestPoint2()), atol=1e-9)
        checked += d < 0
    assert 5 <= checked <= 35  # both overlapping and separated poses were drawn


@pytest.mark.parametrize("ka", ["sphere", "capsule"])
def test_mesh_cube_against_ball_and_capsule_equals_compiled_box(ka):
    """An independent oracle: sphere/capsule against a mesh cube (coal's GJK) = the
    compiled sphere/capsule-box narrow phase (bisection on the sign of the exact box
    distance's derivative along the capsule's segment), separated poses, to 1e-9 in
    distance, normal and point. (A golden-section search on the values, before, placed a
    capsule's flat minimum only to about sqrt(eps): points and normals near an edge moved
    by ~3e-8, and this test allowed 1e-7 for capsules.)"""
    rng = np.random.default_rng(5)
    m = _free_pair()
    shape = art.Sphere(radius=0.05) if ka == "sphere" else art.Capsule(radius=0.03, length=0.12)
    done = 0
    for trial in range(60):
        Rw = Rotation.random(2, random_state=rng.integers(1 << 30)).as_matrix()
        pw = np.array([[0.0, 0.0, 0.0], rng.normal(size=3) * 0.15])
        out = []
        for b_shape in (_cube_mesh(0.2), art.Box(size=(0.2, 0.2, 0.2))):
            geom = art.CollisionModel(m)
            geom.add("b", shape)
            geom.add("a", b_shape)
            det = Detector(geom)
            n = det.detect(*_poses(Rw, pw), np.zeros((2, 6)), 1e-3, extra=1.0)
            out.append(np.array(sorted((det.out.key[i] % 16, det.out.dist[i], *det.out.normal[i],
                                        *det.out.point[i]) for i in range(n))).reshape(-1, 8))
        mesh_c, box_c = out
        if not len(box_c) or box_c[:, 1].min() < 1e-6:  # EPA depth vs exact: apart only
            continue
        assert mesh_c.shape == box_c.shape
        np.testing.assert_allclose(mesh_c[:, :2], box_c[:, :2], rtol=0, atol=1e-9)
        np.testing.assert_allclose(mesh_c[:, 2:], box_c[:, 2:], rtol=0, atol=1e-9)
        done += 1
    assert done > 20


def test_mesh_cube_on_plane_equals_compiled_box():
    """A mesh cube against a plane gives the compiled Box-plane contacts (corners below the
    reach: depth, normal, point) to 1e-9, resting, tilted and penetrating."""
    rng = np.random.default_rng(2)
    b = art.ModelBuilder()
    b.add_body("a", None, "free", mass=1.0, inertia=np.eye(3) * 0.01)
    m = b.build()
    for trial in range(30):
        R = (np.eye(3) if trial < 3 else
             Rotation.random(random_state=rng.integers(1 << 30)).as_matrix())
        p = np.array([0.0, 0.0, 0.1 + (0.0 if trial < 3 else rng.uniform(-0.15, 0.1))])
        nrm = (0, 0, 1) if trial % 2 == 0 else tuple(rng.normal(size=3))
        res = []
        for shape in (_cube_mesh(0.2), art.Box(size=(0.2, 0.2, 0.2))):
            geom = art.CollisionModel(m)
            geom.add("a", shape)
            geom.add_static(art.Plane(normal=nrm, pos=(0, 0, 0.01)))
            det = Detector(geom)
            n = det.detect(*_poses(R[None], p[None]), np.zeros((1, 6)), 1e-3, extra=0.02)
            res.append(sorted(tuple(det.out.point[i]) + (det.out.dist[i], *det.out.normal[i])
                              for i in range(n)))
        assert len(res[0]) == len(res[1])
        if res[1]:
            np.testing.assert_allclose(np.array(res[0]), np.array(res[1]), rtol=0, atol=1e-9)
    # flat on the floor: four contacts at zero depth
    geom = art.CollisionModel(m)
    geom.add("a", _cube_mesh(0.2))
    geom.add_static(art.Plane(normal=(0, 0, 1)))
    det = Detector(geom)
    n = det.detect(*_poses(np.eye(3)[None], [[0, 0, 0.1]]), np.zeros((1, 6)), 1e-3, extra=1e-6)
    assert n == 4 and np.abs(det.out.dist[:4]).max() < 1e-15
    assert (np.diff(det.out.key[:4]) > 0).all()


def test_many_hull_vertices_on_a_plane_are_spread():
    """A mesh whose bowl-shaped bottom puts 400 hull vertices within reach of the plane:
    16 contacts, the deepest (the bowl's centre) among them, spread over the bowl (to 2 cm
    of its rim, along x and y); no vertex within reach deeper by more than
    MESH_PLANE_GIVE than the contact nearest to it; keys increasing."""
    g = np.linspace(-0.1, 0.1, 21)
    bottom = np.array([[x, y, -0.05 + 0.05 * (x * x + y * y)] for x in g for y in g])
    V = np.vstack([bottom, [[0.0, 0.0, 0.1]]])
    b = art.ModelBuilder()
    b.add_body("a", None, "free", mass=1.0, inertia=np.eye(3) * 0.01)
    m = b.build()
    geom = art.CollisionModel(m)
    geom.add("a", art.Mesh(vertices=V))
    geom.add_static(art.Plane(normal=(0, 0, 1)))
    det = Detector(geom)
    n = det.detect(*_poses(np.eye(3)[None], [[0, 0, 0.049]]), np.zeros((1, 6)), 1e-3, extra=0.01)
    assert len(det.mesh.hull[0]) == 21 * 21 + 1
    assert n == MESH_FEATURES
    assert det.out.dist[:n].min() == pytest.approx(-0.001, abs=1e-15)
    assert tuple(np.round(det.out.point[np.argmin(det.out.dist[:n]), :2], 12)) == (0, 0)
    P = det.out.point[:n, :2]
    assert (P.min(axis=0) <= -0.079).all() and (P.max(axis=0) >= 0.079).all()
    # every vertex has a contact within 10 cm (twice the spread, 4.8 cm: its cell) no
    # shallower than the vertex plus MESH_PLANE_GIVE
    near = bottom[(bottom[:, 2] + 0.049) < 0.011]           # within reach (0.01 + 1 mm)
    close = np.linalg.norm(near[:, None, :2] - P[None], axis=2) <= 0.1
    vertex_dist = near[:, 2] + 0.049
    as_deep = det.out.dist[:n][None, :] <= vertex_dist[:, None] + MESH_PLANE_GIVE + 1e-12
    assert (close & as_deep).any(axis=1).all()
    assert (np.diff(det.out.key[:n]) > 0).all()


def test_a_deeper_vertex_of_a_cell_is_its_contact():
    """Hull vertices within reach of the floor: A (the deepest, 0.1 mm up), B (0.3 m away,
    3 mm up) and C (1 cm from B, 0.2 mm up). The farthest-point choice takes A, then B,
    and C lies within the spread of B: B gives way to C, deeper by more than
    MESH_PLANE_GIVE (a rotating link would bring C through the floor within the step
    while B stays above it): the contacts are A and C."""
    V = np.array([[0.0, 0.0, 0.0001], [0.3, 0.0, 0.003], [0.29, 0.0, 0.0002],
                  [0.0, 0.05, 0.05], [0.3, 0.05, 0.05], [0.15, -0.05, 0.08]])
    b = art.ModelBuilder()
    b.add_body("a", None, "free", mass=1.0, inertia=np.eye(3) * 0.01)
    geom = art.CollisionModel(b.build())
    geom.add("a", art.Mesh(vertices=V))
    geom.add_static(art.Plane(normal=(0, 0, 1)))
    det = Detector(geom)
    n = det.detect(*_poses(np.eye(3)[None], [[0, 0, 0]]), np.zeros((1, 6)), 1e-3, extra=0.005)
    assert n == 2
    assert np.allclose(sorted(det.out.dist[:n]), [0.0001, 0.0002], atol=1e-15)
    assert np.allclose(sorted(det.out.point[:n, 0]), [0.0, 0.29], atol=1e-15)


def test_a_rounded_hull_on_a_plane_is_one_contact():
    """An icosphere of radius 2 cm resting on the floor with 0.1 mm of reach: its hull
    vertices within reach lie within 2 mm of the lowest one (less than
    ``MESH_PLANE_SPREAD`` times the bounding radius), so they are one contact, the lowest
    vertex; a long mesh lying on its side (a 0.3 m bar with rounded ends, 1 mm of reach)
    keeps one contact at each end; a flat-bottomed mesh (a cube) keeps its four corners."""
    import trimesh

    b = art.ModelBuilder()
    b.add_body("a", None, "free", mass=1.0, inertia=np.eye(3) * 0.01)
    m = b.build()
    ball = trimesh.creation.icosphere(subdivisions=4, radius=0.02)
    bar = trimesh.creation.capsule(height=0.3, radius=0.02, count=[16, 16])
    R_bar = Rotation.from_euler("y", 90, degrees=True).as_matrix()   # lying along x
    for V, R, z, reach, expect in ((ball.vertices, np.eye(3), 0.02, 1e-4, 1),
                                   (bar.vertices, R_bar, 0.02, 1e-3, 2)):
        geom = art.CollisionModel(m)
        geom.add("a", art.Mesh(vertices=V))
        geom.add_static(art.Plane(normal=(0, 0, 1)))
        det = Detector(geom)
        n = det.detect(*_poses(R[None], [[0, 0, z]]), np.zeros((1, 6)), 1e-3, extra=reach)
        below = (R @ np.asarray(V).T).T[:, 2] + z < reach
        assert below.sum() > expect                       # more vertices within reach
        assert n == expect
        assert det.out.dist[:n].min() == pytest.approx((R @ np.asarray(V).T).T[:, 2].min() + z,
                                                       abs=1e-15)
        if expect == 2:   # one contact at each end of the bar
            assert abs(det.out.point[0, 0] - det.out.point[1, 0]) > 0.25
        assert (np.diff(det.out.key[:n]) > 0).all() and det.out.key[0] // MESH_FEATURES == 0
    geom = art.CollisionModel(m)
    geom.add("a", _cube_mesh(0.2))
    geom.add_static(art.Plane(normal=(0, 0, 1)))
    det = Detector(geom)
    n = det.detect(*_poses(np.eye(3)[None], [[0, 0, 0.1]]), np.zeros((1, 6)), 1e-3, extra=1e-3)
    assert n == 4


def test_contacts_survive_the_buffer_growing():
    """A detector with room for one contact grows its buffer (compiled pairs, the compiled
    mesh-plane pairs and coal's mesh pairs all at once) and returns the same contacts,
    keys and points as one with room for 64, every time."""
    m = _free_pair()
    R = np.stack([np.eye(3)] * 2)
    p = np.array([[0.0, 0.0, 0.099], [0.3, 0.0, 0.04]])
    outs = []
    for cap in (1, 64):
        geom = art.CollisionModel(m)
        geom.add("a", _cube_mesh(0.2))
        geom.add("b", art.Sphere(radius=0.05))
        geom.add("b", _cube_mesh(0.05), pos=(-0.18, 0.0, 0.06))   # overlaps a's cube
        geom.add_static(art.Plane(normal=(0, 0, 1)))
        det = Detector(geom, capacity=cap)
        n = det.detect(*_poses(R, p), np.zeros((2, 6)), 1e-3, extra=0.02)
        outs.append((n, det.out.key[:n].copy(), det.out.point[:n].copy(),
                     det.out.geom[:n].copy()))
    (n1, k1, x1, g1), (n2, k2, x2, g2) = outs
    assert n1 == n2 and n1 >= 6
    assert (np.diff(k1) > 0).all()
    np.testing.assert_array_equal(k1, k2)
    np.testing.assert_array_equal(g1, g2)
    np.testing.assert_array_equal(x1, x2)
    pairs = {tuple(sorted(g)) for g in g1.tolist()}
    assert {(0, 3), (1, 3), (0, 2)} <= pairs   # cube-plane, sphere-plane, the cubes (coal)


def test_mesh_contacts_follow_the_compiled_ones():
    """Primitive pairs keep their contacts and keys when meshes are added; the mesh
    contacts come after them with larger keys (warm starting merges by key)."""
    m = _free_pair()
    R = np.stack([np.eye(3)] * 2)
    p = np.array([[0.0, 0.0, 0.04], [0.3, 0.0, 0.05]])

    def run(with_mesh):
        geom = art.CollisionModel(m)
        geom.add("a", art.Sphere(radius=0.05))
        if with_mesh:
            geom.add("b", _cube_mesh(0.1))
        geom.add("b", art.Capsule(radius=0.02, length=0.1))
        geom.add_static(art.Plane(normal=(0, 0, 1)))
        det = Detector(geom)
        n = det.detect(*_poses(R, p), np.zeros((2, 6)), 1e-3, extra=0.3)
        return det, n

    d0, n0 = run(False)
    d1, n1 = run(True)
    assert n1 > n0
    k = d1.out.key[:n1]
    assert (np.diff(k) > 0).all()
    np.testing.assert_array_equal(d1.out.dist[:n0], d0.out.dist[:n0])
    np.testing.assert_array_equal(d1.out.key[:n0], d0.out.key[:n0])
    assert (d1.out.geom[n0:n1] == 1).any(axis=1).all()  # the rest involve the mesh


def test_mesh_cube_comes_to_rest_on_the_floor():
    """The whole pipeline: a 0.2 m mesh cube dropped from 5 cm settles on four corners at
    z = 0.1 m with no velocity left, like the compiled Box."""
    b = art.ModelBuilder()
    b.add_body("body", None, "free", mass=1.0, inertia=np.eye(3) * (2 * 0.2 ** 2 / 12))
    m = b.build()
    geom = art.CollisionModel(m)
    geom.add("body", _cube_mesh(0.2), mu=0.5)
    geom.add_static(art.Plane(normal=(0, 0, 1)), mu=0.5)
    q0 = m.neutral()
    q0[2] = 0.15
    sim = art.Simulator(m, 1e-3, contacts=geom, q0=q0)
    tr = sim.run(400)
    assert abs(tr.q[-1, 2] - 0.1) <= 1e-4
    assert np.abs(tr.qd[-1]).max() <= 1e-3
    assert tr.contacts["n"][-1] == 4


# ---------------------------------------------------------------------------- bad input

def _one_link(geometry, origin="<origin xyz='0 0 0' rpy='0 0 0'/>"):
    return (f"<link name='a'/><link name='blade'>{INERTIAL}<collision>{origin}"
            f"<geometry>{geometry}</geometry></collision></link><joint name='j' "
            f"type='revolute'><parent link='a'/><child link='blade'/><limit lower='-1' "
            f"upper='1' effort='1' velocity='1'/></joint>")


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # yourdfpy's rpy of inf
@pytest.mark.parametrize("geometry, origin, match", [
    ("<mesh filename='meshes/nowhere.stl'/>", None, r"mesh file not found: .*nowhere.stl"),
    ("<box size='0.1 -0.2 0.3'/>", None, r"Box: size must be finite and > 0, got -0.2"),
    ("<sphere radius='-1'/>", None, r"Sphere: radius must be finite and > 0"),
    ("<cylinder radius='0.1' length='0'/>", None, r"Cylinder: length must be finite and > 0"),
])
def test_bad_collision_input_names_the_link(tmp_path, geometry, origin, match):
    body = _one_link(geometry) if origin is None else _one_link(geometry, origin)
    path = _write(tmp_path, body)
    load_urdf(path)  # collision=False never reads the geometry
    with pytest.raises(ValueError, match=r"link 'blade': <collision> 'blade/collision_0': " + match):
        load_urdf(path, collision=True)


@pytest.mark.parametrize("origin, match", [
    ("<origin xyz='0 nan 0'/>", r"<origin> xyz='0 nan 0': not finite"),
    ("<origin rpy='0 0 inf'/>", r"<origin> rpy='0 0 inf': not finite"),
])
def test_non_finite_collision_origin_names_the_link(tmp_path, origin, match):
    """Every number of the file is checked before it is read, used or not."""
    path = _write(tmp_path, _one_link("<sphere radius='0.1'/>", origin))
    for collision in (False, True):
        with pytest.raises(ValueError, match=r"link 'blade': <collision>" + match):
            load_urdf(path, collision=collision)


def test_bad_mesh_and_material_input(tmp_path):
    with pytest.raises(ValueError, match="lie in one plane"):
        art.Mesh(vertices=[[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]]).bounding_radius()
    with pytest.raises(ValueError, match="not finite"):
        art.Mesh(vertices=[[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, np.nan]]).params()
    with pytest.raises(ValueError, match="scale must be finite and non-zero"):
        _cube_mesh().__class__(vertices=np.eye(3).tolist() + [[0, 0, 0]], scale=(1, 0, 1)).params()
    (tmp_path / "junk.stl").write_text("this is not a mesh")
    with pytest.raises(ValueError, match="junk.stl"):
        art.Mesh.from_file(tmp_path / "junk.stl")
    path = _write(tmp_path, _one_link("<sphere radius='0.1'/>"))
    with pytest.raises(ValueError, match="friction coefficient mu"):
        load_urdf(path, collision=True, mu=-0.1)


def test_mesh_without_coal_names_the_extra(monkeypatch):
    m = _free_pair()
    geom = art.CollisionModel(m)
    geom.add("a", _cube_mesh())
    geom.add("b", art.Sphere(radius=0.1))
    monkeypatch.setitem(sys.modules, "coal", None)
    with pytest.raises(ImportError, match=r"articulated\[mesh\]"):
        Detector(geom)
    # models without a mesh never import it
    geom2 = art.CollisionModel(m)
    geom2.add("a", art.Sphere(radius=0.1))
    geom2.add("b", art.Sphere(radius=0.1))
    Detector(geom2)


def test_solo12_stands_on_its_meshes_like_mujoco(robots):
    """Issue 19 (e), 5 s: example-robot-data's solo12 from its URDF with its collision meshes
    (coal), dropped 6 cm onto a plane and held by a PD controller, stands with its base
    within 5 mm of MuJoCo's (the same model through ``to_mujoco``, the same PD torques) at
    1 s, and within 5 mm of MuJoCo's with no-slip iterations at 5 s (MuJoCo's defaults let
    the feet creep: its base sinks about 6 mm from 1 s to 5 s, measured); feet at most 1 mm
    deep over the whole run, the landing included (measured: 0.001 mm; 1.2 mm at the
    landing before an exact impact row's pull in the position projection was bounded,
    docs/guide/contact.md; MuJoCo: 7.7 mm); the standing robot does not creep (base within 0.5 mm
    from 1 s to 5 s) and its sweeps converge (a rounded foot is one contact,
    ``MESH_PLANE_SPREAD``: before, a dozen hull vertices per foot kept every step at the
    50-sweep cap and the base rose 2.5 mm)."""
    pytest.importorskip("mujoco")
    from articulated.bench.contact import run_solo12

    r = run_solo12(robots, 5000)
    assert 4 <= r["ours_n"][-1] <= 8 and r["mj_n"] >= 4        # four feet on the floor
    assert 0.2 < r["ours_z"][-1] < 0.3 and 0.2 < r["mj_z"][-1] < 0.3
    assert abs(r["ours_z"][999] - r["mj_z"][999]) <= 5e-3
    assert abs(r["ours_z"][-1] - r["mjns_z"][-1]) <= 5e-3
    assert abs(r["ours_z"][-1] - r["ours_z"][999]) < 5e-4
    assert r["ours_depth"].max() <= 1e-3
    assert np.abs(np.diff(r["ours_z"][-100:])).max() < 1e-5  # at rest
    sw = r["ours_sweeps"][1000:]
    assert np.median(sw) <= 10 and (sw >= 50).mean() < 0.05


def test_a_collision_mesh_far_from_its_visual_is_warned(hand_urdf, tmp_path):
    """alex_nub_hands' nubs: ``<collision><origin xyz="0 1.57 0"/>`` (a rotation written as
    a translation) beside a ``<visual>`` of the same mesh at the link origin. The loader
    simulates it as written and warns naming the link, the mesh and the distance; a
    collision mesh where its visual is raises no warning."""
    body = ("<link name='a'>{i}</link><joint name='j' type='revolute'><parent link='a'/>"
            "<child link='nub'/><axis xyz='0 0 1'/><limit lower='-1' upper='1' effort='1' "
            "velocity='1'/></joint><link name='nub'>{i}<visual><origin xyz='0 0 0' rpy='0 1.57 "
            "0'/><geometry><mesh filename='meshes/part.stl'/></geometry></visual><collision>"
            "<origin xyz='{o}' rpy='0 0 0'/><geometry><mesh filename='meshes/part.stl'/>"
            "</geometry></collision></link>")
    far = _write(tmp_path, body.format(i=INERTIAL, o="0 1.57 0"), "far.urdf")
    with pytest.warns(UserWarning, match=r"link 'nub': <collision> 'nub/collision_0': the "
                                         r"mesh 'part.stl' lies 1.57 m from the link's <visual>"):
        m = load_urdf(far, collision=True)
    np.testing.assert_allclose(m.collision.arrays()["pos"][0], [0, 1.57, 0])  # as written
    near = _write(tmp_path, body.format(i=INERTIAL, o="0 0 0"), "near.urdf")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_urdf(near, collision=True)
