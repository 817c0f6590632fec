"""Model construction and validation: every bad input named in the design raises a
ValueError (or TypeError) that names the body or joint."""

import numpy as np
import pytest

import articulated as art
from articulated.models import random_tree

I3 = np.diag([0.1, 0.1, 0.05])


def builder_with(**overrides):
    b = art.ModelBuilder()
    kw = dict(joint="revolute", mass=1.0, com=(0, 0, 0), inertia=I3)
    kw.update(overrides)
    b.add_body("base", None, **kw)
    return b


def test_builder_orders_bodies_depth_first():
    b = art.ModelBuilder()
    # added out of order: children before parents
    b.add_body("c", "b", mass=1.0, inertia=I3)
    b.add_body("b", "a", mass=1.0, inertia=I3)
    b.add_body("d", "a", joint="prismatic", mass=1.0, inertia=I3)
    b.add_body("a", None, joint="free", mass=1.0, inertia=I3)
    m = b.build()
    assert m.body_name == ["a", "b", "c", "d"]
    assert list(m.body_parent) == [-1, 0, 1, 0]
    assert list(m.body_subtree_end) == [4, 3, 3, 4]
    assert (m.nq, m.nv) == (7 + 1 + 1 + 1, 6 + 1 + 1 + 1)
    assert list(m.jnt_qadr) == [0, 7, 8, 9]
    assert list(m.jnt_vadr) == [0, 6, 7, 8]
    assert m.joint_names == ["a_joint", "b_joint", "c_joint", "d_joint"]
    q = m.neutral()
    assert list(q[3:7]) == [1.0, 0.0, 0.0, 0.0]  # identity quaternion, scalar first


@pytest.mark.parametrize("kw, match", [
    (dict(mass=0.0), "body 'base': mass must be finite and > 0"),
    (dict(mass=-1.0), "body 'base': mass"),
    (dict(mass=float("nan")), "body 'base': mass"),
    (dict(inertia=np.diag([1.0, 1.0, -1.0])), "body 'base': inertia is not positive definite"),
    (dict(inertia=np.diag([1.0, 1.0, 3.0])), "body 'base': .*triangle inequality"),
    (dict(inertia=np.array([[1.0, 0.5, 0], [0, 1.0, 0], [0, 0, 1.0]])), "body 'base': inertia is not symmetric"),
    (dict(inertia=np.eye(2)), r"body 'base': inertia must have shape \(3, 3\)"),
    (dict(inertia=np.diag([1.0, np.inf, 1.0])), "body 'base': inertia is not finite"),
    (dict(com=(0, 0)), r"body 'base': com must have shape \(3,\)"),
    (dict(com=(0, np.nan, 0)), "body 'base': com is not finite"),
    (dict(axis=(0, 0, 0)), "body 'base': joint axis must be non-zero"),
    (dict(joint="planar"), "body 'base': unknown joint type 'planar'"),
    (dict(origin_R=np.diag([1.0, 1.0, -1.0])), "body 'base': origin_R is not a proper rotation"),
])
def test_bad_body_values(kw, match):
    with pytest.raises(ValueError, match=match):
        builder_with(**kw)


def test_unknown_parent_and_cycle_and_duplicates():
    b = builder_with()
    b.add_body("x", "nope", mass=1.0, inertia=I3)
    with pytest.raises(ValueError, match="body 'x': unknown parent body 'nope'"):
        b.build()
    b = builder_with()
    b.add_body("p", "q", mass=1.0, inertia=I3)
    b.add_body("q", "p", mass=1.0, inertia=I3)
    with pytest.raises(ValueError, match=r"bodies \['p', 'q'\] form a cycle"):
        b.build()
    with pytest.raises(ValueError, match="body 's' is its own parent"):
        builder_with().add_body("s", "s")
    with pytest.raises(ValueError, match="body 'base' is defined twice"):
        builder_with().add_body("base", None)
    with pytest.raises(ValueError, match="the model has no bodies"):
        art.ModelBuilder().build()


def test_model_constructor_validates_arrays():
    good = random_tree(3, 0)
    kw = dict(body_name=good.body_name, joint_name=good.joint_name, body_parent=good.body_parent,
              jnt_type=good.jnt_type, jnt_axis=good.jnt_axis, jnt_Xtree_E=good.jnt_Xtree_E,
              jnt_Xtree_r=good.jnt_Xtree_r, body_mass=good.body_mass, body_com=good.body_com,
              body_I_com=good.body_I_com, gravity=good.gravity)
    bad = dict(kw, body_parent=np.array([-1, 2, 0]))
    with pytest.raises(ValueError, match="body 'body1': parent index 2 must be -1 or smaller than 1"):
        art.Model(**bad)
    bad = dict(kw, body_mass=np.array([1.0, 0.0, 1.0]))
    with pytest.raises(ValueError, match="body 'body1': mass must be > 0"):
        art.Model(**bad)
    bad = dict(kw, jnt_axis=np.array([[1.0, 0, 0], [2.0, 0, 0], [1.0, 0, 0]]))
    with pytest.raises(ValueError, match="axis is not a unit vector"):
        art.Model(**dict(bad, jnt_type=np.array([1, 1, 1])))
    bad = dict(kw, body_com=np.zeros((3, 2)))
    with pytest.raises(ValueError, match=r"Model.body_com must have shape \(3, 3\)"):
        art.Model(**bad)


@pytest.fixture(scope="module")
def tree():
    return random_tree(12, 4, floating_base=True)


def test_bad_state_shapes_and_dtypes(tree):
    q, qd = tree.neutral(), np.zeros(tree.nv)
    with pytest.raises(ValueError, match=rf"q must have shape \({tree.nq},\)"):
        art.aba(tree, q[:-1], qd, qd)
    with pytest.raises(ValueError, match=rf"tau must have shape \({tree.nv},\)"):
        art.aba(tree, q, qd, np.zeros(tree.nv + 1))
    with pytest.raises(TypeError, match="qd must be a real numeric array"):
        art.aba(tree, q, np.array(["a"] * tree.nv), qd)
    with pytest.raises(ValueError, match=rf"f_ext must have shape \({tree.nb}, 6\)"):
        art.aba(tree, q, qd, qd, np.zeros((tree.nb, 3)))
    with pytest.raises(TypeError, match="dtype must be float64 or float32"):
        art.aba(tree, q, qd, qd, dtype=np.int32)
    with pytest.raises(ValueError, match="unknown forward-dynamics method 'lu'"):
        art.forward_dynamics(tree, q, qd, qd, method="lu")


def test_non_finite_inputs_name_the_joint(tree):
    q, qd, tau = tree.neutral(), np.zeros(tree.nv), np.zeros(tree.nv)
    j = 5
    bad = tau.copy()
    bad[tree.jnt_vadr[j]] = np.nan if tree.jnt_nv[j] else 0.0
    k = int(np.flatnonzero(np.isnan(bad))[0]) if np.isnan(bad).any() else tree.nv - 1
    bad[k] = np.nan
    name = tree.joint_name[tree.dof_body[k]]
    for fn in (lambda: art.aba(tree, q, qd, bad), lambda: art.forward_dynamics(tree, q, qd, bad, method="crba"),
               lambda: art.rnea(tree, q, qd, bad)):
        with pytest.raises(ValueError, match=f"joint '{name}'"):
            fn()
    f = np.zeros((tree.nb, 6))
    f[7, 2] = np.inf
    with pytest.raises(ValueError, match=f"body '{tree.body_name[7]}'"):
        art.aba(tree, q, qd, tau, f)
    qbad = q.copy()
    qbad[0] = np.inf  # free-joint position of the root
    with pytest.raises(ValueError, match=f"joint '{tree.joint_name[0]}'"):
        art.aba(tree, qbad, qd, tau)


def test_non_unit_quaternion_rejected(tree):
    q = tree.neutral()
    q[3:7] = [1.0, 0.1, 0.0, 0.0]
    with pytest.raises(ValueError, match=f"joint '{tree.joint_name[0]}': quaternion .* not 1"):
        art.aba(tree, q, np.zeros(tree.nv), np.zeros(tree.nv))


def test_singular_pivot_is_reported_and_modified_aba_survives():
    """Ascher, Pai & Cloutier (1997), Example 3 case (2): collinear prismatic joints along
    H = (0,0,0,0,1,1)/sqrt(2), m2 = 1 (base), m1 = 1e9 (tip), tau = (9.81, 981), single
    precision. Plain ABA and CRBA lose D_2 entirely (D_2 = 0: a clear error naming the
    joint, not a NaN); the modified ABA (their eq. 11) keeps it and gives the paper's
    relative tip acceleration 971.19 (their Table 2)."""
    ax = np.array([0.0, 1.0, 1.0]) / np.sqrt(2.0)
    b = art.ModelBuilder(gravity=(0, 0, 0))
    b.add_body("link2", None, "prismatic", axis=ax, mass=1.0, inertia=np.eye(3))
    b.add_body("link1", "link2", "prismatic", axis=ax, mass=1e9, inertia=1e9 * np.eye(3))
    m = b.build()
    q, qd, tau = m.neutral(), np.zeros(2), np.array([9.81, 981.0])
    for method in ("aba", "crba"):
        with pytest.raises(ValueError, match="joint 'link2_joint'.*singular"):
            art.forward_dynamics(m, q, qd, tau, method=method, dtype=np.float32)
    qdd = art.forward_dynamics(m, q, qd, tau, method="aba_modified", dtype=np.float32)
    assert abs(qdd[1] - 971.19) < 0.01


def test_model_names_and_lookup(tree):
    assert tree.body_id("body3") == 3
    assert tree.joint_id("joint3") == 3
    with pytest.raises(ValueError, match="no body named 'zz'"):
        tree.body_id("zz")
    with pytest.raises(ValueError, match="body index 99 out of range"):
        tree.body_id(99)
