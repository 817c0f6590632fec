"""Featherstone's divide-and-conquer algorithm (articulated.algorithms.dca) against our ABA
and RNEA: joint accelerations, constraint (joint) forces, body accelerations and the
quasi-static mode, on random trees with every joint type (fixed and floating base, chains
and bushy trees, balanced and serial assembly) and on the seed scenes."""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import articulated as art
from articulated import models
from articulated.algorithms.dca_solver import DCA, dca, dca_solver, quasi_statics
from articulated.assembly import build_assembly
from articulated.models import random_tree

from conftest import random_state, rel_err

TOL = 1e-9


def backward_error(model, q, qd, qdd, tau, f_ext, M):
    """``||rnea(qdd) - tau|| / (||M|| ||qdd|| + ||tau||)`` (max norms), the test of
    tests/test_dynamics.py for ill-conditioned trees."""
    resid = np.abs(art.rnea(model, q, qd, qdd, f_ext) - tau).max()
    return resid / (np.abs(M).sum(axis=1).max() * np.abs(qdd).max() + np.abs(tau).max())


def check_against_aba(model, q, qd, tau, f_ext, solver):
    """qdd, joint forces and body accelerations of the DCA against ABA / RNEA."""
    qdd_aba = art.aba(model, q, qd, tau, f_ext)
    a_aba = model.data().a.copy()
    solver.qdd[:] = np.nan                  # a forgotten write would show up
    qdd = solver.forward_dynamics(q, qd, tau, f_ext)
    M = art.crba(model, q)
    cond = np.linalg.cond(M)
    # rounding level on random trees (measured <= 3e-14); welded (fixed-joint) chains with
    # long lever arms lose a few digits in the sums of inverse inertias of RGL eq. 2
    # (2e-11 on a 25-body weld), hence the margin
    assert backward_error(model, q, qd, qdd, tau, f_ext, M) < 1e-10
    if cond < 1e5:
        assert rel_err(qdd, qdd_aba) < TOL
    # constraint forces: the force across each joint, as RNEA leaves it in Data.f
    art.rnea(model, q, qd, qdd_aba, f_ext)
    f_rnea = model.data().f.copy()
    scale = max(1.0, np.abs(f_rnea).max())
    tol_f = TOL if cond < 1e5 else 1e-12 * cond
    assert np.abs(solver.joint_forces() - f_rnea).max() / scale < tol_f
    if cond < 1e5:
        assert rel_err(solver.body_accelerations(), a_aba) < TOL
    return qdd, qdd_aba


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(1, 200), seed=st.integers(0, 2**31 - 1), floating=st.booleans(),
       branching=st.floats(0.0, 1.0), kind=st.sampled_from(["balanced", "serial"]))
def test_random_trees_match_aba(n, seed, floating, branching, kind):
    model = random_tree(n, seed, floating_base=floating, branching=branching)
    rng = np.random.default_rng(seed)
    check_against_aba(model, *random_state(model, rng), DCA(model, kind))


@pytest.mark.parametrize("branching", [0.0, 0.3, 1.0])
@pytest.mark.parametrize("floating", [False, True])
@pytest.mark.parametrize("kind", ["balanced", "serial"])
def test_random_tree_sweep(branching, floating, kind):
    """Deterministic sweep: sizes 1..120, every joint type, several seeds."""
    for n in (1, 2, 3, 4, 7, 16, 33, 120):
        for seed in range(3):
            model = random_tree(n, seed, floating_base=floating, branching=branching)
            rng = np.random.default_rng(seed)
            check_against_aba(model, *random_state(model, rng), DCA(model, kind))


@pytest.mark.parametrize("joint", ["revolute", "prismatic", "spherical", "free", "fixed"])
def test_single_joint_type_chains_and_trees(joint):
    for branching in (0.0, 1.0):
        model = random_tree(25, 5, joint_types=(joint,), branching=branching)
        rng = np.random.default_rng(5)
        check_against_aba(model, *random_state(model, rng), DCA(model))


def test_one_dof_nodes_in_a_tree_with_every_joint_type():
    """A floating tree with revolute, prismatic, spherical, free and fixed joints: the
    nodes of the 1-dof joints take the 1-dof node update (K of RGL eq. 2 in closed form,
    the handle rows in registers), the others the general one; the DCA equals ABA to
    1e-12 in both assembly orders."""
    from articulated.model import (JOINT_FIXED, JOINT_FREE, JOINT_PRISMATIC, JOINT_REVOLUTE,
                                   JOINT_SPHERICAL)
    model = random_tree(60, 13, floating_base=True, branching=0.5)
    jt = np.asarray(model.jnt_type)
    counts = {t: int((jt == t).sum()) for t in (JOINT_REVOLUTE, JOINT_PRISMATIC,
                                                 JOINT_SPHERICAL, JOINT_FREE, JOINT_FIXED)}
    assert min(counts.values()) >= 1, counts
    one_dof = counts[JOINT_REVOLUTE] + counts[JOINT_PRISMATIC]
    rng = np.random.default_rng(13)
    q, qd, tau, f_ext = random_state(model, rng)
    ref = art.aba(model, q, qd, tau, f_ext)
    for kind in ("balanced", "serial"):
        s = DCA(model, kind)
        node_joint = np.asarray(s.tree.node_joint)
        joints = node_joint[node_joint >= 0]
        # every joint is one node's principal joint; only the free root joint has the
        # world as child A, so every 1-dof joint forms K = X Phi^A_2 X^T + Phi^B_1
        assert sorted(joints) == list(range(model.nb))
        inner = node_joint[(node_joint >= 0) & (np.asarray(s.tree.node_A) >= 0)]
        assert np.isin(jt[inner], (JOINT_REVOLUTE, JOINT_PRISMATIC)).sum() == one_dof
        assert rel_err(s.forward_dynamics(q, qd, tau, f_ext), ref) < 1e-12


@pytest.mark.parametrize("jtype", ["revolute", "prismatic", "general"])
def test_joint_congruence_equals_the_dense_product(jtype):
    """``K = X P X^T + Q`` of RGL eq. 2 from the closed forms of the 1-dof joints (a
    rotation about z, a translation along z) and the general transform, against the dense
    (6, 6) product (RBDA eq. 2.24); exactly symmetric."""
    from articulated.algorithms.blocks import _xj_congruence_add
    from articulated.model import JOINT_PRISMATIC, JOINT_REVOLUTE, JOINT_SPHERICAL
    from articulated.spatial import xform_dense

    rng = np.random.default_rng(4)
    G = rng.normal(size=(2, 6, 6))
    P = G @ G.transpose(0, 2, 1)
    c, s_ = math.cos(0.7), math.sin(0.7)
    if jtype == "revolute":
        t, E, r = JOINT_REVOLUTE, np.array([[c, s_, 0], [-s_, c, 0], [0, 0, 1.0]]), np.zeros(3)
    elif jtype == "prismatic":
        t, E, r = JOINT_PRISMATIC, np.eye(3), np.array([0, 0, 0.7])
    else:
        t, E, r = (JOINT_SPHERICAL, np.array([[c, 0, -s_], [0, 1.0, 0], [s_, 0, c]]),
                   np.array([0.3, -0.2, 0.5]))
    out = np.full((1, 6, 6), np.nan)
    _xj_congruence_add(t, E[None], r[None], 0, P, 0, P, 1, out, 0)
    X = xform_dense(E, r)
    assert np.abs(out[0] - (X @ P[0] @ X.T + P[1])).max() < 1e-13 * np.abs(P).max()
    assert np.array_equal(out[0], out[0].T)


SEEDS = {
    "pendulum-300": lambda: models.pendulum(300),
    "millipede": lambda: models.millipede(legs=10, leg_links=3, spine=30),
    "molecule-2000": lambda: models.molecule(2000),
    "humanoid": lambda: models.humanoid(),
    "humanoid-fixed": lambda: models.humanoid(floating_base=False),
    "crowd-3": lambda: models.crowd(3),
    "bicycle": lambda: models.bicycle_chain(30),
}


@pytest.mark.parametrize("name", list(SEEDS))
@pytest.mark.parametrize("kind", ["balanced", "serial"])
def test_seed_scenes_match_aba(name, kind):
    model = SEEDS[name]()
    rng = np.random.default_rng(1)
    q, qd, tau, f_ext = random_state(model, rng)
    qdd, qdd_aba = check_against_aba(model, q, qd, tau, f_ext, DCA(model, kind))
    # the seed scenes agree with ABA to 1e-9 even where ill-conditioned (pendulum cond 1e7)
    assert rel_err(qdd, qdd_aba) < TOL


@pytest.mark.parametrize("name", ["pendulum-300", "millipede", "humanoid", "crowd-3"])
def test_quasi_statics_equals_aba_at_rest(name):
    model = SEEDS[name]()
    rng = np.random.default_rng(2)
    q, _, tau, f_ext = random_state(model, rng)
    zero = np.zeros(model.nv)
    s = DCA(model)
    qdd = s.quasi_statics(q, tau, f_ext)
    assert rel_err(qdd, art.aba(model, q, zero, tau, f_ext)) < TOL
    assert rel_err(qdd, s.forward_dynamics(q, zero, tau, f_ext)) < 1e-12
    assert rel_err(quasi_statics(model, q, tau), art.aba(model, q, zero, tau)) < TOL
    # the quasi-static joint forces are RNEA's at rest
    art.rnea(model, q, zero, qdd, f_ext)
    s.quasi_statics(q, tau, f_ext)
    assert rel_err(s.joint_forces(), model.data().f) < 1e-8


def test_node_coefficients_satisfy_the_definitions():
    """V, W, beta, gamma of RGL eq. 2 from the stored factors: W S = 0, V^-1 = K, and
    gamma = W beta + V S (S^T V S)^-1 Q, all in the aligned frame of handle (J, 1)."""
    model = random_tree(30, 9, floating_base=False, branching=0.5,
                        joint_types=("revolute", "prismatic", "spherical", "fixed", "free"))
    rng = np.random.default_rng(9)
    q, qd, tau, f_ext = random_state(model, rng)
    s = DCA(model)
    s.forward_dynamics(q, qd, tau, f_ext)
    for j in range(model.nb):
        V, W = s.node_VW(j)
        va, d = model.jnt_vadr[j], model.jnt_nv[j]
        T = s.handle_frame(j, 1)                 # body-J coordinates -> handle frame
        Sj = T @ model.dof_S[va:va + d].T
        assert np.allclose(V, V.T, rtol=0, atol=1e-9 * np.abs(V).max())
        assert np.all(np.linalg.eigvalsh(V) > 0)
        if d:
            assert np.abs(W @ Sj).max() < 1e-9 * np.abs(V).max()
            g = W @ s.beta[j] + V @ Sj @ np.linalg.solve(Sj.T @ V @ Sj, tau[va:va + d])
            assert np.abs(W - (V - V @ Sj @ np.linalg.solve(Sj.T @ V @ Sj, Sj.T @ V))).max() \
                < 1e-9 * np.abs(V).max()
        else:
            assert np.allclose(W, V)
            g = V @ s.beta[j]
        assert rel_err(g, s.gamma[j]) < 1e-9
        # the joint force in the handle frame is f_al; in body coordinates f
        assert rel_err(T.T @ s.f_al[j], s.f[j]) < 1e-12


def test_api_forward_dynamics_and_simulator():
    model = models.pendulum(20, seed=3)
    rng = np.random.default_rng(3)
    q, qd, tau, f_ext = random_state(model, rng)
    ref = art.aba(model, q, qd, tau, f_ext)
    assert rel_err(art.forward_dynamics(model, q, qd, tau, f_ext, method="dca"), ref) < TOL
    assert rel_err(dca(model, q, qd, tau, f_ext), ref) < TOL
    assert rel_err(dca(model, q, qd, tau, f_ext, assembly="serial"), ref) < TOL
    assert rel_err(dca(model, q, qd, tau, f_ext, assembly=build_assembly(model)), ref) < TOL
    assert dca_solver(model) is dca_solver(model)
    # Simulator with the DCA follows the ABA trajectory
    runs = {}
    for method in ("aba", "dca"):
        sim = art.Simulator(model, 1e-3, integrator="rk4", method=method, q0=q, qd0=qd)
        runs[method] = sim.run(50).q[-1]
    assert rel_err(runs["dca"], runs["aba"]) < 1e-9


def test_float32():
    model = random_tree(30, 11, joint_types=("revolute", "prismatic", "spherical", "free"))
    rng = np.random.default_rng(11)
    q, qd, tau, f_ext = random_state(model, rng)
    a64 = art.forward_dynamics(model, q, qd, tau, f_ext, method="dca")
    a32 = art.forward_dynamics(model, q, qd, tau, f_ext, method="dca", dtype=np.float32)
    assert a32.dtype == np.float32
    assert rel_err(a32, a64) < 1e-3
    assert rel_err(a32, a64) > 1e-12


def test_coefficients_are_kept_between_calls():
    """The DCA object keeps its tree and coefficients; a second state overwrites them and
    a repeated state reproduces them bit for bit."""
    model = random_tree(40, 2, branching=0.5)
    rng = np.random.default_rng(2)
    s1 = random_state(model, rng)
    s2 = random_state(model, rng)
    s = DCA(model)
    tree = s.tree
    a = s.forward_dynamics(*s1)
    P1, g1 = s.Po.copy(), s.gamma.copy()
    s.forward_dynamics(*s2)
    assert s.tree is tree
    assert not np.array_equal(s.Po, P1)
    assert np.array_equal(s.forward_dynamics(*s1), a)
    assert np.array_equal(s.Po, P1) and np.array_equal(s.gamma, g1)


def test_kernels_do_not_allocate():
    """The kernels allocate nothing: the NRT allocation count of a call is the same for a
    5-body and a 300-body model (what remains is numba's wrapping of the argument arrays
    at the call boundary, one per array, independent of the size)."""
    import numba.core.runtime._nrt_python as _nrt
    from numba.core.runtime import rtsys

    counts = []
    for n in (5, 300):
        model = random_tree(n, 4, floating_base=True, branching=0.5)
        rng = np.random.default_rng(4)
        q, qd, tau, f_ext = random_state(model, rng)
        s = DCA(model)
        calls = (lambda: s.forward_dynamics(q, qd, tau, f_ext), lambda: s.quasi_statics(q, tau),
                 s.body_accelerations)
        for c in calls:
            c()
        was = _nrt.memsys_stats_enabled()
        _nrt.memsys_enable_stats()
        try:
            per_call = []
            for c in calls:
                before = rtsys.get_allocation_stats()
                c()
                c()
                after = rtsys.get_allocation_stats()
                per_call.append((after.alloc - before.alloc, after.mi_alloc - before.mi_alloc))
        finally:
            if not was:
                _nrt.memsys_disable_stats()
        counts.append(per_call)
    assert counts[0] == counts[1]


def test_errors_name_the_joint_or_body():
    model = random_tree(10, 1)
    rng = np.random.default_rng(1)
    q, qd, tau, f_ext = random_state(model, rng)
    s = DCA(model)
    with pytest.raises(ValueError, match="shape"):
        s.forward_dynamics(q, qd[:-1], tau)
    with pytest.raises(ValueError, match="shape"):
        s.forward_dynamics(q, qd, tau, f_ext[:-1])
    bad = tau.copy()
    bad[3] = np.nan
    with pytest.raises(ValueError, match=model.joint_name[model.dof_body[3]]):
        s.forward_dynamics(q, qd, bad)
    fb = f_ext.copy()
    fb[4, 2] = np.inf
    with pytest.raises(ValueError, match=model.body_name[4]):
        s.forward_dynamics(q, qd, tau, fb)
    with pytest.raises(TypeError):
        DCA("model")
    with pytest.raises(TypeError):
        DCA(model, dtype=np.int32)
    with pytest.raises(ValueError):
        DCA(model, build_assembly(random_tree(5, 1)))
    with pytest.raises(ValueError):
        art.forward_dynamics(model, q, qd, tau, method="dcx")


def test_gravity_and_external_force_only():
    """A free body in zero gravity under a pure force: a = f / m at the COM (closed form)."""
    b = art.ModelBuilder(gravity=(0.0, 0.0, 0.0))
    b.add_body("box", None, "free", mass=2.0, com=(0.0, 0.0, 0.0), inertia=np.diag([0.3, 0.5, 0.7]))
    model = b.build()
    q = model.neutral()
    f_ext = np.zeros((1, 6))
    f_ext[0, 3:] = (2.0, -4.0, 6.0)
    qdd = dca(model, q, np.zeros(6), np.zeros(6), f_ext)
    assert np.allclose(qdd, [0, 0, 0, 1.0, -2.0, 3.0], atol=1e-14)
    # and a pendulum under gravity matches its closed form (RBD.jl-style single rod)
    b = art.ModelBuilder()
    m, lc, Ic = 2.0, 0.5, 0.1
    b.add_body("rod", None, "revolute", axis=(0, 1, 0), mass=m, com=(0, 0, -lc),
               inertia=np.diag([Ic, Ic, 0.01]))
    rod = b.build()
    expected = -m * 9.81 * lc * np.sin(0.3) / (Ic + m * lc * lc)
    assert abs(dca(rod, [0.3], [0.0], [0.0])[0] - expected) < 1e-12


def test_bench_dca_quick_smoke(capsys):
    """The DCA benchmark runs (tiny scenes) and reports every column (STYLE.md: keep a tiny
    benchmark as a smoke test)."""
    from articulated.bench.dca import bench_dca

    res = bench_dca(quick=True, repeats=1)
    out = capsys.readouterr().out
    assert "DCA/ABA" in out and "max handles" in out
    assert len(res["timings"]) == 4 and len(res["trees"]) == 4
    for r in res["timings"]:
        assert r["balanced_err"] < 1e-9 and r["serial_err"] < 1e-9
        assert r["balanced_ns"] > 0 and math.isfinite(r["balanced_ratio"])


def test_one_compiled_dca_per_dtype_for_a_model_built_from_read_only_arrays():
    """``models.pendulum(1)`` is built from ``np.broadcast_to`` (read-only, and C-contiguous
    for one body): the Model copies its inputs, so the DCA kernel sees writable arrays and
    is compiled once per dtype, and editing the caller's array leaves the model alone."""
    from articulated.algorithms.dca import dca_call

    E = np.broadcast_to(np.eye(3), (1, 3, 3))
    b = art.ModelBuilder()
    b.add_body("link", parent=None, joint="revolute", axis=(0, 0, 1), mass=1.0,
               inertia=np.eye(3), com=(0.5, 0, 0))
    one = b.build()
    assert models.pendulum(1).jnt_Xtree_E.flags.writeable
    r = np.zeros((1, 3))
    m = art.Model(body_name=["a"], joint_name=["j"], body_parent=[-1], jnt_type=one.jnt_type,
                  jnt_axis=one.jnt_axis, jnt_Xtree_E=E, jnt_Xtree_r=r, body_mass=[1.0],
                  body_com=[[0.5, 0.0, 0.0]], body_I_com=E, gravity=(0, 0, -9.81))
    r[0, 0] = 1.0
    assert m.jnt_Xtree_E.flags.writeable and m.jnt_Xtree_r[0, 0] == 0.0
    for model in (m, models.pendulum(1), models.pendulum(4)):    # the entry from Python
        q = model.neutral() + 0.1
        a = art.forward_dynamics(model, q, np.zeros(model.nv), np.zeros(model.nv), method="dca")
        assert np.allclose(a, art.aba(model, q, np.zeros(model.nv), np.zeros(model.nv)),
                           rtol=1e-9, atol=1e-9)
    f64 = [s for s in dca_call.signatures if "float32" not in str(s)]
    assert len(f64) == 1, f64
