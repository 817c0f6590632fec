"""Scene generators of articulated.models: counts from the papers, determinism, depth-first
order, geometry, and forward dynamics (ABA vs CRBA, ABA vs RNEA) on every scene."""

import time

import numpy as np
import pytest

import articulated as A
from articulated import models as M
from articulated.model import (JOINT_FIXED, JOINT_FREE, JOINT_REVOLUTE, JOINT_SPHERICAL)

TETRA_COS = -1.0 / 3.0   # cos(109.47 deg)


# ---------------------------------------------------------------------------- fixtures

@pytest.fixture(scope="module")
def millipede_default():
    return M.millipede()


@pytest.fixture(scope="module")
def molecule_default():
    t = time.perf_counter()
    m = M.molecule(50_000, seed=0)
    return m, time.perf_counter() - t


@pytest.fixture(scope="module")
def crowd_default():
    return M.crowd(200)


def _joint_counts(model):
    return {t: int((model.jnt_type == t).sum()) for t in np.unique(model.jnt_type)}


def _children_count(model):
    p = model.body_parent
    return np.bincount(p[p >= 0], minlength=model.nb)


def _assert_dfs(model):
    """parent[i] < i and every subtree is the contiguous range i .. i + size(i) - 1."""
    p = model.body_parent
    nb = model.nb
    assert p[0] == -1
    assert np.all(p < np.arange(nb))
    size = np.ones(nb, dtype=np.int64)
    for i in range(nb - 1, 0, -1):
        if p[i] >= 0:
            size[p[i]] += size[i]
    end = np.arange(nb) + size
    np.testing.assert_array_equal(model.body_subtree_end, end)
    # every child lies inside its parent's range (together with the sizes: contiguity)
    c = np.flatnonzero(p >= 0)
    assert np.all((c > p[c]) & (end[c] <= end[p[c]]))


def _random_state(model, seed):
    rng = np.random.default_rng(seed)
    q = model.random_configuration(rng)
    qd = rng.normal(size=model.nv)
    tau = rng.normal(size=model.nv)
    return q, qd, tau


def _rel(a, b):
    return np.linalg.norm(a - b) / np.linalg.norm(b)


# ---------------------------------------------------------------------------- counts

def test_pendulum_counts_and_axes():
    m = M.pendulum()
    assert (m.nb, m.nq, m.nv) == (300, 300, 300)       # Redon et al. 2005 Sec. 7.1
    assert _joint_counts(m) == {JOINT_REVOLUTE: 300}
    np.testing.assert_array_equal(m.body_parent, np.arange(-1, 299))
    np.testing.assert_array_equal(m.jnt_axis[0::2], np.tile([1.0, 0, 0], (150, 1)))
    np.testing.assert_array_equal(m.jnt_axis[1::2], np.tile([0, 1.0, 0], (150, 1)))
    assert m.total_mass == pytest.approx(300 * 0.1)
    # hangs from the origin along -z: bottom tip at -n L
    p = A.point_position(m, m.neutral(), m.nb - 1, (0, 0, -0.1))
    np.testing.assert_allclose(p, [0, 0, -30.0], atol=1e-12)


def test_pendulum_seed_and_width():
    a = M.pendulum(50, seed=7)
    b = M.pendulum(50, seed=7)
    c = M.pendulum(50, seed=8)
    np.testing.assert_array_equal(a.body_mass, b.body_mass)
    np.testing.assert_array_equal(a.jnt_Xtree_r, b.jnt_Xtree_r)
    assert not np.array_equal(a.body_mass, c.body_mass)
    assert np.all((a.body_mass >= 0.05) & (a.body_mass <= 0.15))
    u = M.pendulum(50)
    assert np.all(u.body_mass == 0.1)
    L, w = 0.1, 0.01   # thin box 0.01 x 0.01 x 0.1
    np.testing.assert_allclose(np.diagonal(u.body_I_com[3]),
                               0.1 / 12 * np.array([L * L + w * w, L * L + w * w, 2 * w * w]))
    with pytest.raises(ValueError, match="n must be >= 1"):
        M.pendulum(0)
    with pytest.raises(ValueError, match="link_length"):
        M.pendulum(3, link_length=-1.0)


def test_bicycle_chain_counts_and_geometry():
    m = M.bicycle_chain()
    assert (m.nb, m.nq, m.nv) == (30, 30, 30)          # Redon & Lin 2005 Sec. 6.1
    assert _joint_counts(m) == {JOINT_REVOLUTE: 30}
    np.testing.assert_array_equal(m.jnt_axis, np.tile([0, 0, 1.0], (30, 1)))
    # inner and outer links alternate
    assert m.body_mass[0] != m.body_mass[1] and m.body_mass[0] == m.body_mass[2]
    # straight along +x at q = 0; the far pin of the last link at 30 pitches
    p = A.point_position(m, m.neutral(), 29, (M.BICYCLE_PITCH, 0, 0))
    np.testing.assert_allclose(p, [30 * 0.0127, 0, 0], atol=1e-12)
    # planar: a random configuration keeps every body in the plane z = 0
    _, pos = A.forward_kinematics(m, m.random_configuration(1))
    assert np.abs(pos[:, 2]).max() == 0.0


def test_millipede_paper_counts(millipede_default):
    m = millipede_default                              # Redon & Lin 2005 Sec. 6.2
    assert m.nb == 13_000
    assert m.nv == m.nq == 12_999
    assert _joint_counts(m) == {JOINT_FIXED: 1, JOINT_REVOLUTE: 12_999}
    assert m.jnt_type[0] == JOINT_FIXED and m.body_parent[0] == -1
    names = np.array(m.body_name)
    spine = np.flatnonzero(np.char.startswith(names.astype(str), "spine"))
    assert spine.size == 3000
    leg_roots = np.array([m.body_id(f"leg{k}_0") for k in range(1000)])
    attach = np.array([int(names[m.body_parent[i]][5:]) for i in leg_roots])
    np.testing.assert_array_equal(attach, np.arange(1000) * 3 + 1)   # every 3rd spine link
    # alternating sides: leg roots at y = +/- 0.2 segment_length in the spine link frame
    np.testing.assert_allclose(m.jnt_Xtree_r[leg_roots, 1],
                               np.where(np.arange(1000) % 2 == 0, 0.004, -0.004))
    # each leg is a chain of 10 links hanging from its spine link
    np.testing.assert_array_equal(m.body_subtree_end[leg_roots] - leg_roots, 10)
    assert _children_count(m)[spine].max() == 2
    assert m.total_mass == pytest.approx(3000 * 0.02 + 10_000 * 0.004)


def test_millipede_small_topology():
    m = M.millipede(legs=4, leg_links=3, spine=10)
    assert m.nb == 22 and m.nv == 21
    # stride 2, legs on spine links 1, 3, 5, 7; each leg right after its spine link
    expect = ["spine0", "spine1", "leg0_0", "leg0_1", "leg0_2", "spine2", "spine3", "leg1_0"]
    assert m.body_name[:8] == expect
    assert m.body_parent[m.body_id("leg1_0")] == m.body_id("spine3")
    assert m.body_parent[m.body_id("spine4")] == m.body_id("spine3")
    assert m.body_parent[m.body_id("leg3_2")] == m.body_id("leg3_1")
    # leg 0 points to +y and 30 degrees down, leg 1 to -y
    q = m.neutral()
    for k, sgn in ((0, 1.0), (1, -1.0)):
        root = m.body_id(f"leg{k}_0")
        d = A.point_position(m, q, root, (0.01, 0, 0)) - A.point_position(m, q, root)
        np.testing.assert_allclose(d, 0.01 * np.array([0, sgn * np.cos(np.pi / 6),
                                                       -np.sin(np.pi / 6)]), atol=1e-15)
    legless = M.millipede(legs=0, leg_links=5, spine=7)
    assert legless.nb == 7 and legless.nv == 6


@pytest.mark.parametrize("kwargs", [dict(legs=11, spine=10), dict(leg_links=0), dict(spine=0),
                                    dict(legs=-1), dict(legs=2.5), dict(spine=True),
                                    dict(segment_length=0.0), dict(leg_link_mass=-1.0)])
def test_millipede_rejects_bad_arguments(kwargs):
    with pytest.raises(ValueError):
        M.millipede(**kwargs)


def test_molecule_paper_counts(molecule_default):
    m, seconds = molecule_default                      # Redon & Lin 2005 Sec. 6.3
    assert seconds < 5.0
    assert m.nb == m.nq == m.nv == 50_000
    assert _joint_counts(m) == {JOINT_REVOLUTE: 50_000}
    nch = _children_count(m)
    assert nch.max() == 3                              # bounded valence, and it is reached
    assert (nch == 0).sum() > 1000                     # branched, not a chain
    assert m.body_parent[0] == -1 and (m.body_parent == -1).sum() == 1
    np.testing.assert_allclose(np.linalg.norm(m.jnt_Xtree_r[1:], axis=1), 0.15, rtol=1e-12)
    assert np.all(m.body_mass == 1.0)
    np.testing.assert_allclose(m.body_I_com[5], 0.4 * 0.05 ** 2 * np.eye(3))


def test_molecule_bond_angles_tetrahedral():
    m = M.molecule(3000, seed=5)
    _, pos = A.forward_kinematics(m, m.random_configuration(3))
    p = m.body_parent
    # every pair of bonds at an atom makes the tetrahedral angle, in any configuration
    cosines = []
    for a in range(1, m.nb, 7):
        nbrs = [p[a]] + list(np.flatnonzero(p == a))
        u = pos[nbrs] - pos[a]
        u /= np.linalg.norm(u, axis=1)[:, None]
        g = u @ u.T
        cosines.extend(g[np.triu_indices(len(nbrs), 1)])
    assert len(cosines) > 500
    np.testing.assert_allclose(cosines, TETRA_COS, atol=1e-12)
    # torsion axes: turning atom a's bond joint moves only the atoms below a, keeps a in
    # place and keeps the distances from a
    a = int(np.flatnonzero(_children_count(m) == 3)[5])
    end = m.body_subtree_end[a]
    q = m.neutral()
    q2 = q.copy()
    q2[a] = 1.0
    _, p1 = A.forward_kinematics(m, q)
    _, p2 = A.forward_kinematics(m, q2)
    outside = np.r_[0:a + 1, end:m.nb]
    np.testing.assert_allclose(p2[outside], p1[outside], atol=1e-12)
    assert np.abs(p2[a + 1:end] - p1[a + 1:end]).max() > 0.05
    np.testing.assert_allclose(np.linalg.norm(p2[a + 1:end] - p2[a], axis=1),
                               np.linalg.norm(p1[a + 1:end] - p1[a], axis=1), atol=1e-12)


def test_molecule_random_axes_and_arguments():
    m = M.molecule(500, seed=1, axes="random")
    np.testing.assert_allclose(np.linalg.norm(m.jnt_axis, axis=1), 1.0)
    assert np.abs(m.jnt_axis[:, 1]).max() > 0.5
    for kw in (dict(axes="nope"), dict(branching=1.5), dict(bond_length=0.0)):
        with pytest.raises(ValueError):
            M.molecule(10, **kw)
    with pytest.raises(ValueError):
        M.molecule(0)


def test_humanoid_counts_and_mass():
    m = M.humanoid()                                   # Redon et al. 2005 Fig. 1
    assert m.nb == M.HUMANOID_BODIES == 89
    assert m.nv == M.HUMANOID_DOF == 95
    assert m.nq == 97
    assert _joint_counts(m) == {JOINT_FIXED: 1, JOINT_REVOLUTE: 86, JOINT_SPHERICAL: 1,
                                JOINT_FREE: 1}
    assert m.jnt_type[0] == JOINT_FREE and m.body_name[0] == "pelvis"
    assert m.total_mass == pytest.approx(70.0, rel=1e-12)
    mass = dict(zip(m.body_name, m.body_mass))
    assert 5.0 < mass["l_thigh"] < 9.0 and mass["l_thigh"] == mass["r_thigh"]
    assert 3.0 < mass["head"] < 6.0
    assert sum(v for k, v in mass.items() if k.startswith("l_")) == pytest.approx(
        sum(v for k, v in mass.items() if k.startswith("r_")))
    assert sum(k.startswith("l_") and k[2:-1] in ("thumb", "index", "middle", "ring", "little")
               for k in m.body_name) == 15
    fixed = M.humanoid("x_", floating_base=False)
    assert (fixed.nb, fixed.nq, fixed.nv) == (89, 90, 89)
    assert all(n.startswith("x_") for n in fixed.body_name + fixed.joint_name)
    with pytest.raises(ValueError):
        M.humanoid(total_mass=0.0)


def test_humanoid_stands_upright():
    m = M.humanoid()
    q = M.crowd_configuration(m)
    np.testing.assert_allclose(q[:7], [0, 0, M.HUMANOID_PELVIS_HEIGHT, 1, 0, 0, 0])
    _, pos = A.forward_kinematics(m, q)
    sole = A.point_position(m, q, "l_foot", (0.05, 0, -0.075))
    assert sole[2] == pytest.approx(0.0, abs=1e-12)
    head = pos[m.body_id("head")]
    assert 1.45 < head[2] < 1.7 and abs(head[0]) < 1e-12 and abs(head[1]) < 1e-12
    assert pos[m.body_id("l_hand"), 1] > 0.1 and pos[m.body_id("r_hand"), 1] < -0.1
    assert pos[:, 2].min() > -1e-12                    # nothing under the ground
    # fixed-base version stands at the same place with neutral q
    f = M.humanoid(floating_base=False)
    _, pf = A.forward_kinematics(f, f.neutral())
    np.testing.assert_allclose(pf, pos, atol=1e-12)


def test_crowd_paper_counts(crowd_default):
    m = crowd_default                                  # Redon et al. 2005 Fig. 1
    assert m.nb == 17_800 and m.nv == 19_000 and m.nq == 19_400
    roots = np.flatnonzero(m.body_parent == -1)
    np.testing.assert_array_equal(roots, np.arange(200) * 89)
    assert np.all(m.jnt_type[roots] == JOINT_FREE)
    assert len(set(m.body_name)) == 17_800 and m.body_name[89] == "c1_pelvis"
    assert m.total_mass == pytest.approx(200 * 70.0)


def test_crowd_configuration_grid():
    m, q = M.crowd(5, spacing=2.0, return_configuration=True)
    np.testing.assert_array_equal(q, M.crowd_configuration(m, 2.0))
    np.testing.assert_array_equal(q, M.crowd_configuration(5, 2.0))
    _, pos = A.forward_kinematics(m, q)
    pelvis = pos[np.arange(5) * 89]
    # 3 columns x 2 rows centred on the origin
    np.testing.assert_allclose(pelvis, [[-2, -1, 0.975], [0, -1, 0.975], [2, -1, 0.975],
                                        [-2, 1, 0.975], [0, 1, 0.975]], atol=1e-12)
    # every character has the same posture relative to its pelvis
    rel = pos.reshape(5, 89, 3) - pelvis[:, None, :]
    np.testing.assert_allclose(rel, np.broadcast_to(rel[0], rel.shape), atol=1e-12)
    with pytest.raises(ValueError):
        M.crowd_configuration(M.pendulum(3))
    with pytest.raises(ValueError):
        M.crowd(0)


def test_two_link_arm_geometry_and_inertia():
    l1, m1, l2, m2, w = 2.0, 10.0, 0.02, 0.1, 0.02    # Ascher, Pai & Cloutier 1997, Example 1
    m = M.two_link_arm()
    assert (m.nb, m.nq, m.nv) == (2, 2, 2)
    assert m.body_name == ["link2", "link1"] and m.joint_name == ["joint2", "joint1"]
    np.testing.assert_array_equal(m.body_mass, [m2, m1])
    np.testing.assert_allclose(A.point_position(m, np.zeros(2), 1, (l1, 0, 0)), [l1 + l2, 0, 0])
    # axes along y: q[0] = pi/2 swings the whole arm down to -z
    np.testing.assert_allclose(A.point_position(m, [np.pi / 2, 0.0], 1, (l1, 0, 0)),
                               [0, 0, -(l1 + l2)], atol=1e-12)
    np.testing.assert_allclose(A.point_position(m, [0.0, np.pi / 2], 1, (l1, 0, 0)),
                               [l2, 0, -l1], atol=1e-12)
    # joint-space inertia of two uniform boxes (planar two-link formula)
    for qt in (0.0, 0.7, 2.5):
        M_ = A.crba(m, [0.3, qt])
        I1 = m1 * (l1 * l1 + w * w) / 12
        I2 = m2 * (l2 * l2 + w * w) / 12
        Mtip = I1 + m1 * l1 * l1 / 4
        Moff = Mtip + m1 * l1 * l2 / 2 * np.cos(qt)
        Mbase = I2 + m2 * l2 * l2 / 4 + Mtip + m1 * (l2 * l2 + l1 * l2 * np.cos(qt))
        np.testing.assert_allclose(M_, [[Mbase, Moff], [Moff, Mtip]], rtol=1e-12)
    # gravity orthogonal to the arm at q = 0: it turns the arm down, i.e. positive about +y
    # (see q[0] = pi/2 above), with moment (m x_com) g; the holding torques are minus that
    g = A.gravity_torques(m, np.zeros(2))
    np.testing.assert_allclose(g, -9.81 * np.array([m2 * l2 / 2 + m1 * (l2 + l1 / 2),
                                                    m1 * l1 / 2]), rtol=1e-12)
    with pytest.raises(ValueError, match="l1"):
        M.two_link_arm(l1=0.0)


# ---------------------------------------------------------------------------- properties

SMALL = {
    "pendulum30": lambda: M.pendulum(30),
    "pendulum30_seeded": lambda: M.pendulum(30, seed=2),
    "bicycle_chain": lambda: M.bicycle_chain(),
    "humanoid": lambda: M.humanoid(),
    "humanoid_fixed": lambda: M.humanoid("h_", floating_base=False),
    "two_link_arm": lambda: M.two_link_arm(),
    "millipede_small": lambda: M.millipede(legs=5, leg_links=4, spine=12),
    "molecule_small": lambda: M.molecule(60, seed=4),
    "molecule_random_axes": lambda: M.molecule(60, seed=4, axes="random"),
    "crowd3": lambda: M.crowd(3),
}


@pytest.mark.parametrize("name", list(SMALL))
def test_small_scenes_aba_matches_crba(name):
    m = SMALL[name]()
    _assert_dfs(m)
    for seed in (0, 1):
        q, qd, tau = _random_state(m, seed)
        a = A.aba(m, q, qd, tau)
        c = A.forward_dynamics(m, q, qd, tau, method="crba")
        assert np.all(np.isfinite(a))
        assert np.linalg.norm(a) > 0
        assert _rel(a, c) < 1e-9, (name, _rel(a, c))


@pytest.mark.parametrize("name", ["millipede", "molecule", "crowd"])
def test_large_scenes_dfs_and_aba(name, millipede_default, molecule_default, crowd_default):
    m = {"millipede": millipede_default, "molecule": molecule_default[0],
         "crowd": crowd_default}[name]
    _assert_dfs(m)
    q, qd, tau = _random_state(m, 3)
    a = A.aba(m, q, qd, tau)
    assert np.all(np.isfinite(a))
    # inverse dynamics of the ABA accelerations gives back tau
    t = A.rnea(m, q, qd, a)
    assert _rel(t, tau) < 1e-8, (name, _rel(t, tau))


def test_determinism():
    for make in (lambda s: M.molecule(2000, seed=s), lambda s: M.pendulum(40, seed=s)):
        a, b, c = make(11), make(11), make(12)
        for k in ("body_parent", "jnt_axis", "jnt_Xtree_E", "jnt_Xtree_r", "body_mass",
                  "body_com", "body_I_com"):
            np.testing.assert_array_equal(getattr(a, k), getattr(b, k))
        assert a.body_name == b.body_name
        assert not (np.array_equal(a.body_parent, c.body_parent)
                    and np.array_equal(a.jnt_Xtree_E, c.jnt_Xtree_E)
                    and np.array_equal(a.body_mass, c.body_mass))
    # different molecule seeds give different topologies
    assert not np.array_equal(M.molecule(2000, seed=11).body_parent,
                              M.molecule(2000, seed=12).body_parent)
    for make in (M.bicycle_chain, M.humanoid, M.two_link_arm,
                 lambda: M.millipede(legs=7, leg_links=2, spine=20), lambda: M.crowd(2)):
        a, b = make(), make()
        np.testing.assert_array_equal(a.body_I, b.body_I)
        np.testing.assert_array_equal(a.jnt_Xtree_r, b.jnt_Xtree_r)
        assert a.body_name == b.body_name
