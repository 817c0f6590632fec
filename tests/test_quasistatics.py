"""Error-bounded adaptive quasi-statics (Redon & Lin 2005; issue 4): total-acceleration
equations, certified partial back-substitution, lazy updates, hierarchical frames, the
quasi-static simulator. References are independent: our ABA with qd = 0 (quasi-statics is
forward dynamics at rest), forward kinematics for poses, sums of squares for totals."""

import numpy as np
import pytest

import articulated as art
from articulated import models
from articulated.algorithms.metric import ERROR_MEASURES, _total_acc
from articulated.algorithms.quasistatics import AdaptiveQuasiStatics
from articulated.configuration import integrate_joints_inplace

THRESHOLDS = [2.0 ** -i for i in (1, 3, 7, 11, 15, 19)]


def _exact(model, q, tau, f):
    return art.aba(model, q, np.zeros(model.nv), tau, f)


def _joint_norms(model, qdd, Aw=None):
    out = np.zeros(model.nb)
    for j in range(model.nb):
        va, d = model.jnt_vadr[j], model.jnt_nv[j]
        x = qdd[va:va + d]
        A = np.eye(d) if Aw is None else Aw[j, :d, :d]
        out[j] = np.sqrt(x @ A @ x)
    return out


def _exact_error(model, measure, res, ref):
    """The error of ``res`` measured on the exact accelerations (RL Definition 2)."""
    diff = np.linalg.norm(res.qdd - ref)
    norms = _joint_norms(model, ref)
    missing = np.ones(model.nb, dtype=bool)
    missing[res.joints] = False
    if measure == "absolute_linkage":
        return diff
    if measure == "relative_linkage":
        return diff / np.linalg.norm(ref)
    if measure == "absolute_joint":
        return norms[missing].max(initial=0.0)
    return norms[missing].max(initial=0.0) / norms.max()


def _state(model, rng, pattern):
    q = model.random_configuration(rng)
    f = np.zeros((model.nb, 6))
    tau = np.zeros(model.nv)
    if pattern == 0:                                   # one force
        f[rng.integers(model.nb)] = 10 * rng.normal(size=6)
    elif pattern == 1:                                 # a few forces
        f[rng.choice(model.nb, 5)] = rng.normal(size=(5, 6))
    else:                                              # everything at once
        f = rng.normal(size=(model.nb, 6))
        tau = rng.normal(size=model.nv)
    return q, tau, f


TREES = [
    ("chain", lambda: models.random_tree(40, 1, branching=0.0)),
    ("tree", lambda: models.random_tree(40, 2, branching=0.6)),
    ("floating", lambda: models.random_tree(40, 3, floating_base=True)),
    ("floating_chain", lambda: models.random_tree(25, 4, floating_base=True, branching=0.1)),
]


def _full_solve(s, m, rng, pattern):
    """The exact accelerations (ABA, qd = 0) of force pattern ``pattern`` and the solver's
    ``eps_max = 0`` solve, checked equal to 1e-9: ``(ref, result)``."""
    q, tau, f = _state(m, rng, pattern)
    s.set_state(q, tau, f)
    ref = _exact(m, q, tau, f)
    res = s.solve(0.0, "absolute_linkage")
    assert np.abs(res.qdd - ref).max() <= 1e-9 * np.abs(ref).max()
    return ref, res


@pytest.mark.parametrize("assembly", ["balanced", "serial"])
@pytest.mark.parametrize("name,make", TREES, ids=[t[0] for t in TREES])
def test_full_solve_equals_aba(name, make, assembly):
    """eps_max = 0 computes every joint with a nonzero subassembly acceleration: the
    result is the exact quasi-statics (ABA with qd = 0), every joint type, gravity on."""
    m = make()
    s = AdaptiveQuasiStatics(m, assembly)
    rng = np.random.default_rng(0)
    for pattern in range(3):
        ref, res = _full_solve(s, m, rng, pattern)
        assert res.bound == 0.0
        # RL Def. 3 / eq. 8 at the root: the total acceleration from the coefficients alone
        assert s.total_acceleration() == pytest.approx(ref @ ref, rel=1e-9)


def test_total_acceleration_equation_at_every_node():
    """RL Lemma 1 (eq. 8) node by node: with the exact handle forces of a full
    back-substitution, each node's quadratic form gives the sum of squared accelerations
    of the joints inside its subassembly, with random SPD joint weights (RGL eq. 7)."""
    m = models.random_tree(30, 7, branching=0.5, floating_base=True)
    rng = np.random.default_rng(5)
    W = np.zeros((m.nb, 6, 6))
    for j in range(m.nb):
        G = rng.normal(size=(6, 6))
        W[j] = G @ G.T + 0.5 * np.eye(6)
    s = AdaptiveQuasiStatics(m, weights=W)
    q, tau, f = _state(m, rng, 2)
    s.set_state(q, tau, f)
    ref = _exact(m, q, tau, f)
    res = s.solve(0.0, "absolute_linkage")
    assert np.abs(res.qdd - ref).max() <= 1e-9 * np.abs(ref).max()
    sq = _joint_norms(m, ref, s.Aw) ** 2
    t = s.tree
    # joints inside each node's subassembly (post-order: children first)
    inside = [set() for _ in range(t.n_nodes)]
    for i in range(t.n_nodes):
        if t.node_joint[i] >= 0:
            inside[i] = {int(t.node_joint[i])} | inside[t.node_B[i]]
            if t.node_A[i] >= 0:
                inside[i] |= inside[t.node_A[i]]
    checked = 0
    for i in range(t.n_nodes):
        if t.node_joint[i] < 0:
            continue
        A = _total_acc(i, s._model_bundle(), s._coefficients(), s.fh)
        expect = sum(sq[j] for j in inside[i])
        assert A == pytest.approx(expect, rel=1e-8, abs=1e-10 * sq.sum())
        checked += 1
    assert checked == m.nb


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_total_acceleration_of_single_joint_nodes(seed):
    """RL Lemma 1 at the nodes whose children are both bodies (their blocks are the rank-d
    ``U_k^T A_J U_l``, RL eq. 9 with ``Psi = 0`` below): the quadratic form at the handle
    forces of a full back-substitution equals ``qdd_J^T A_J qdd_J`` of the node's one joint,
    with random SPD weights, every joint type, several force states."""
    m = models.random_tree(40, 11 + seed, branching=0.4, floating_base=seed == 1)
    rng = np.random.default_rng(seed)
    W = np.zeros((m.nb, 6, 6))
    for j in range(m.nb):
        G = rng.normal(size=(6, 6))
        W[j] = G @ G.T + 0.5 * np.eye(6)
    s = AdaptiveQuasiStatics(m, weights=W)
    t = s.tree
    single = [i for i in range(t.n_nodes) if t.node_joint[i] >= 0
              and (t.node_A[i] < 0 or t.node_joint[t.node_A[i]] < 0)
              and t.node_joint[t.node_B[i]] < 0]
    assert single
    for pattern in range(3):
        ref, res = _full_solve(s, m, rng, pattern)
        sq = _joint_norms(m, ref, s.Aw) ** 2
        for i in single:
            A = _total_acc(i, s._model_bundle(), s._coefficients(), s.fh)
            assert A == pytest.approx(sq[t.node_joint[i]], rel=1e-8, abs=1e-10 * sq.sum())


def _solved_and_moved(m, rng, eps):
    """A solver set to a few random forces and solved at ``eps`` (relative joint), and the
    configuration its computed joints reach when moved along their accelerations (the
    largest by 0.05): ``(solver, (q, tau, f), result, q2)``."""
    q, tau, f = _state(m, rng, 1)
    s = AdaptiveQuasiStatics(m)
    s.set_state(q, tau, f)
    res = s.solve(eps, "relative_joint")
    q2 = q.copy()
    integrate_joints_inplace(res.joints, res.joints.size, m.jnt_type, m.jnt_qadr,
                             m.jnt_vadr, q2, res.qdd / np.abs(res.qdd).max(), 0.05)
    return s, (q, tau, f), res, q2


@pytest.mark.parametrize("name,make", TREES, ids=[t[0] for t in TREES])
def test_stale_metric_keeps_the_certified_bound(name, make):
    """An update without the metric marks the recomputed nodes stale: the next solve
    computes every stale node's joint, its bound holds against the exact accelerations in
    every measure, its total acceleration equals the exact one, and an update with the
    metric of the same nodes restores RL's solve exactly."""
    m = make()
    rng = np.random.default_rng(5)
    s, (q, tau, f), res, q2 = _solved_and_moved(m, rng, 2.0 ** -7)
    moved = res.joints.copy()
    n = s.update(q2, joints=moved, metric=False)
    stale_nodes = s._dirty[:n]
    stale = [int(s.tree.node_joint[i]) for i in stale_nodes if s.tree.node_joint[i] >= 0]
    assert len(stale) >= moved.size and np.isinf(s.total_acceleration())
    fresh = AdaptiveQuasiStatics(m)
    fresh.set_state(q2, tau, f)
    ref = _exact(m, q2, tau, f)
    scale = np.linalg.norm(ref)
    for measure in ERROR_MEASURES:
        for eps in THRESHOLDS:
            r = s.solve(eps, measure)
            assert set(stale) <= set(r.joints.tolist())
            comp = np.isin(m.dof_body, r.joints)
            assert np.abs(r.qdd[comp] - ref[comp]).max(initial=0) <= 1e-9 * scale
            assert np.all(r.qdd[~comp] == 0) and r.bound <= eps
            tol = 1e-9 * (scale if measure.startswith("absolute") else 1.0)
            assert _exact_error(m, measure, r, ref) <= r.bound * (1 + 1e-9) + tol
            assert r.total == pytest.approx(fresh.total_acceleration(), rel=1e-9)
            assert r.joints.size >= fresh.solve(eps, measure).joints.size
    s.update(q2, joints=moved)
    for measure in ERROR_MEASURES:
        a, b = s.solve(2.0 ** -11, measure), fresh.solve(2.0 ** -11, measure)
        np.testing.assert_array_equal(a.joints, b.joints)
        assert a.bound == pytest.approx(b.bound, rel=1e-9, abs=1e-300)


def test_metric_refresh_period_of_the_simulator():
    """QuasiStaticSimulator(metric_every=k): every step's certified bound is within
    eps_max, the run stays with RL's (metric_every=1) to within the bound's effect, a step
    whose solve follows a refresh computes what RL's computes, and a joint budget ignores
    the period."""
    m = models.molecule(400, seed=1, gravity=(0, 0, 0))
    eps = 2.0 ** -11

    def run(every, **kw):
        sim = art.Simulator(m, 2e-2, method="quasistatic-adaptive", eps_max=eps,
                            metric_every=every,
                            forces=[art.PointForce(m.nb - 7, [0.0, 2.0, 1.0])], **kw)
        return sim, sim.run(40)

    (s1, t1), (s7, t7) = run(1), run(7)
    assert (t1.bound <= eps).all() and (t7.bound <= eps).all()
    assert np.abs(s7.q - m.neutral()).max() > 1e-3                  # it moved
    assert np.abs(s7.q - s1.q).max() <= 1e-3 * np.abs(s1.q - m.neutral()).max()
    assert t7.joints[0] == t1.joints[0]          # step 0: fresh metric everywhere
    assert t7.joints.sum() >= t1.joints.sum()
    (b1, tb1), (b7, tb7) = run(1, max_joints=30), run(7, max_joints=30)
    np.testing.assert_array_equal(tb1.joints, tb7.joints)
    np.testing.assert_array_equal(b1.q, b7.q)
    with pytest.raises(ValueError, match="metric_every"):
        art.Simulator(m, 1e-3, method="quasistatic-adaptive", metric_every=0)


@pytest.mark.parametrize("name,make", TREES + [
    ("molecule", lambda: models.molecule(400, gravity=(0, 0, 0))),
    ("millipede", lambda: models.millipede(legs=8, leg_links=4, spine=24, gravity=(0, 0, 0))),
], ids=[t[0] for t in TREES] + ["molecule", "millipede"])
def test_certified_bound_is_never_violated(name, make):
    """RL Sec. 4.3: for every measure of Definition 2, many thresholds and force
    patterns, the certified bound holds against the exact accelerations, is at most
    eps_max, and the computed joints are exact."""
    m = make()
    s = AdaptiveQuasiStatics(m)
    rng = np.random.default_rng(11)
    for pattern in range(3):
        q, tau, f = _state(m, rng, pattern)
        s.set_state(q, tau, f)
        ref = _exact(m, q, tau, f)
        scale = np.linalg.norm(ref)
        counts = []
        for measure in ERROR_MEASURES:
            for eps in THRESHOLDS:
                res = s.solve(eps, measure)
                comp = np.isin(m.dof_body, res.joints)
                assert np.abs(res.qdd[comp] - ref[comp]).max(initial=0) <= 1e-9 * scale
                assert np.all(res.qdd[~comp] == 0)
                assert res.bound <= eps
                tol = 1e-9 * (scale if measure.startswith("absolute") else 1.0)
                assert _exact_error(m, measure, res, ref) <= res.bound * (1 + 1e-9) + tol
                if measure == "relative_joint":
                    counts.append(res.joints.size)
        assert counts == sorted(counts)        # tighter bounds never compute fewer joints


def test_joint_budget():
    """max_joints stops after that many joints; the bound it reports still holds."""
    m = models.molecule(300, gravity=(0, 0, 0))
    s = AdaptiveQuasiStatics(m)
    rng = np.random.default_rng(2)
    q, tau, f = _state(m, rng, 1)
    s.set_state(q, tau, f)
    ref = _exact(m, q, tau, f)
    prev = np.inf
    for k in (0, 1, 5, 20, 80):
        res = s.solve(0.0, "relative_linkage", max_joints=k)
        assert res.joints.size == k
        err = _exact_error(m, "relative_linkage", res, ref)
        assert err <= res.bound * (1 + 1e-9) + 1e-12
        assert res.bound <= prev          # more joints, smaller certified error
        prev = res.bound
    # nothing computed: the relative linkage error is exactly 1; the relative joint error
    # has no computed joint to bound its denominator from below, so it is unbounded
    assert s.solve(0.0, "relative_linkage", max_joints=0).bound == pytest.approx(1.0)
    assert np.isinf(s.solve(0.0, "relative_joint", max_joints=0).bound)


def test_lazy_update_equals_full_recompute():
    """RL Sec. 5.2: updating only the paths of moved joints and changed forces leaves
    every coefficient and frame equal to a full recomputation, and recomputes
    O(N_U log(N / N_U)) nodes, far fewer than all."""
    m = models.pendulum(256)
    rng = np.random.default_rng(3)
    q = m.random_configuration(rng)
    f = np.zeros((m.nb, 6))
    f[200, 3:] = [0.0, 1.0, 2.0]
    tau = np.zeros(m.nv)
    s = AdaptiveQuasiStatics(m)
    s.set_state(q, tau, f)
    res = s.solve(2.0 ** -3, "relative_joint")
    q2 = q.copy()
    q2[m.jnt_qadr[res.joints]] += 1e-2 * res.qdd[m.jnt_vadr[res.joints]]
    f2 = f.copy()
    f2[17] = rng.normal(size=6)
    tau2 = tau.copy()
    tau2[99] = 0.5
    n = s.update(q2, joints=res.joints, bodies=[17], f_ext=f2, tau=tau2, tau_joints=[99])
    full = AdaptiveQuasiStatics(m)
    full.set_state(q2, tau2, f2)
    for name in ("Phi", "Psi", "bh", "ph", "eta", "W", "P", "D", "beta", "gamma", "R",
                 "XJ_E", "XJ_r", "Tp_E", "Tp_r", "Tup_E", "Tup_r"):
        a, b = getattr(s, name), getattr(full, name)
        assert np.allclose(a, b, rtol=1e-12, atol=1e-12 * max(1.0, np.abs(b).max())), name
    assert n < s.tree.n_nodes // 2
    depth = s.tree.height
    assert n <= (res.joints.size + 2) * (depth + 1)


COEFFICIENTS = ("Phi", "Psi", "bh", "ph", "eta", "W", "P", "D", "beta", "gamma", "R")


@pytest.mark.parametrize("name,make", TREES, ids=[t[0] for t in TREES])
def test_force_update_equals_full_recompute(name, make):
    """An update that moves no joint (new body forces and joint forces) recomputes only
    the linear coefficients of the force paths, and leaves every coefficient equal to a
    full recomputation; after an update without the metric (stale nodes) a force update
    with the metric recomputes the stale nodes whole and keeps them stale while a child
    is."""
    m = make()
    rng = np.random.default_rng(8)
    s, (q, tau, f), res, q2 = _solved_and_moved(m, rng, 2.0 ** -5)
    f2, tau2 = f.copy(), tau.copy()
    bodies = rng.choice(m.nb, 3, replace=False)
    f2[bodies] = rng.normal(size=(3, 6))
    j = int(m.dof_body[-1])
    tau2[m.jnt_vadr[j]] = 0.7
    full = AdaptiveQuasiStatics(m)
    full.set_state(q2, tau2, f2)
    for metric in (True, False):
        s.set_state(q, tau, f)
        s.update(q2, joints=res.joints, metric=metric)
        psi_before = s.Psi.copy()
        n = s.update(bodies=bodies, f_ext=f2, tau=tau2, tau_joints=[j])
        assert 0 < n < s.tree.n_nodes
        names = COEFFICIENTS if metric else ("Phi", "bh") + COEFFICIENTS[5:]
        for name in names:
            a, b = getattr(s, name), getattr(full, name)
            assert np.allclose(a, b, rtol=1e-12, atol=1e-12 * max(1.0, np.abs(b).max())), name
        if metric:                                       # the force path alone: Psi kept
            np.testing.assert_array_equal(s.Psi, psi_before)
        else:              # stale nodes on the path recomputed whole, still stale above
            assert not np.array_equal(s.Psi, psi_before)        # a stale child
            assert np.isinf(s.total_acceleration())
        eps = 2.0 ** -11 if metric else 0.0     # stale nodes elsewhere: more joints
        a, b = s.solve(eps, "relative_joint"), full.solve(eps, "relative_joint")
        np.testing.assert_array_equal(np.sort(a.joints), np.sort(b.joints))
        assert np.abs(a.qdd - b.qdd).max() <= 1e-9 * np.abs(b.qdd).max()


@pytest.mark.parametrize("name,make", TREES + [
    ("humanoid", lambda: models.humanoid(floating_base=True))], ids=[t[0] for t in TREES] + ["humanoid"])
def test_hierarchical_frames_give_world_poses(name, make):
    """RL Sec. 5.1: world poses from the principal-handle transforms on each leaf's path
    equal forward kinematics; cross-transforms compose (T_kl T_lm = T_km, T_kk = 1)."""
    m = make()
    rng = np.random.default_rng(8)
    q = m.random_configuration(rng)
    s = AdaptiveQuasiStatics(m)
    s.set_state(q)
    R, p = art.forward_kinematics(m, q)
    for b in range(m.nb):
        Rb, pb = s.body_pose(b)
        assert np.allclose(Rb, R[b], atol=1e-12)
        assert np.allclose(pb, p[b], atol=1e-12)
    t = s.tree
    for i in np.flatnonzero(t.node_nh >= 3)[:20]:
        T01, T12, T02 = (s.cross_transform(i, 0, 1), s.cross_transform(i, 1, 2),
                         s.cross_transform(i, 0, 2))
        assert np.allclose(T01 @ T12, T02, atol=1e-12)
        assert np.allclose(s.cross_transform(i, 1, 1), np.eye(6), atol=1e-12)


def test_invalid_arguments_raise_clear_errors():
    m = models.random_tree(6, 0)
    with pytest.raises(ValueError, match="weights of joint"):
        W = np.tile(np.eye(6), (m.nb, 1, 1))
        W[2] = -W[2]
        AdaptiveQuasiStatics(m, weights=W)
    s = AdaptiveQuasiStatics(m)
    with pytest.raises(ValueError, match="eps_max"):
        s.solve(-1.0)
    with pytest.raises(ValueError, match="eps_max"):
        s.solve(float("nan"))
    with pytest.raises(ValueError, match="unknown error measure"):
        s.solve(0.1, "l2")
    with pytest.raises(ValueError, match="max_joints"):
        s.solve(0.1, max_joints=-2)
    with pytest.raises(ValueError, match="shape"):
        s.set_state(np.zeros(3))


def test_quasistatic_simulator_matches_full_dca():
    """Simulator(method="quasistatic-adaptive", eps_max=0) follows the full-DCA
    quasi-static stepping; with eps_max > 0 only the computed joints move and the per-step
    statistics are recorded."""
    m = models.bicycle_chain(30, gravity=(0, 0, 0))
    force = lambda: art.PointForce(m.nb - 1, [0.0, 1.0, 0.3])
    a = art.Simulator(m, 1e-3, method="quasistatic-adaptive", eps_max=0.0, forces=[force()])
    d = art.Simulator(m, 1e-3, method="quasistatic", forces=[force()])
    assert isinstance(a, art.QuasiStaticSimulator)
    ta, td = a.run(300), d.run(300)
    assert np.abs(d.q - m.neutral()).max() > 0.5             # it really moved
    assert np.abs(a.q - d.q).max() < 1e-10
    assert np.all(td.joints == m.nb)
    # adaptive: fewer joints, each step's moved joints are exactly the computed ones
    s = art.Simulator(m, 1e-3, method="quasistatic-adaptive", eps_max=2.0 ** -5,
                      forces=[force()])
    q_prev = s.q.copy()
    for _ in range(20):
        st = s.step()
        moved = np.flatnonzero(s.q != q_prev)
        assert moved.size <= st["joints"] < m.nb
        assert st["bound"] <= 2.0 ** -5
        q_prev = s.q.copy()
    with pytest.raises(ValueError, match="unknown error measure"):
        art.Simulator(m, 1e-3, method="quasistatic-adaptive", error="max")


def test_compiled_steps_equal_the_python_steps():
    """With compiled body forces only (point forces in the world and body frames, two on
    one body, a spring to a moving anchor) the adaptive steps run in one compiled loop; the
    same simulator stepped in Python (the path of every other force) reaches the same
    configuration, joints, bounds and node counts, and records at the same times."""
    m = models.bicycle_chain(40, gravity=(0, 0, 0))
    forces = lambda: [art.PointForce(m.nb - 1, [0.0, 1.0, 0.3]),
                      art.PointForce(m.nb - 1, [0.2, 0.0, -0.4], point=[0.1, 0.0, 0.05]),
                      art.PointForce(17, [0.0, -0.5, 0.0], point=[0.0, 0.02, 0.0],
                                     frame="body"),
                      art.Spring(25, [0.0, 0.01, 0.0], [0.3, 0.2, 0.1], 2.0, damping=0.5,
                                 anchor_velocity=[0.0, 0.0, 1.0])]
    runs = []
    for compiled in (True, False):
        sim = art.Simulator(m, 1e-3, method="quasistatic-adaptive", eps_max=2.0 ** -9,
                            forces=forces())
        assert (sim._compiled_loop() is not None) is True
        if not compiled:
            sim._loop = False                # as for a force without a compiled form
        sim.step()
        runs.append((sim, sim.run(120, record_every=50)))
    (c, tc), (p, tp) = runs
    assert np.abs(p.q - m.neutral()).max() > 0.05                 # it moved
    np.testing.assert_allclose(c.q, p.q, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(tc.joints, tp.joints)
    np.testing.assert_array_equal(tc.nodes, tp.nodes)
    np.testing.assert_allclose(tc.bound, tp.bound, rtol=1e-9, atol=1e-300)
    assert tc.t.tolist() == tp.t.tolist() and len(tc.t) == 4       # 0, 50, 100, 120 steps
    assert 0 < tc.joints.min() and tc.joints.max() < m.nb and c.t == p.t
    assert (tc.wall > 0).all() and c.last["joints"] == tc.joints[-1]
    # a force without a compiled form steps in Python
    s = art.Simulator(m, 1e-3, method="quasistatic-adaptive", forces=[_FailingForce(3, 1.0)])
    assert s._compiled_loop() is None


class _FailingForce(art.Force):
    """A point force that turns non-finite after t_fail (to test divergence handling)."""

    def __init__(self, body, t_fail):
        self.body, self.t_fail = body, t_fail

    def support(self, model):
        return [self.body], []

    def apply(self, model, t, q, qd, tau, f_ext, kin=None):
        f_ext[self.body, 3] += np.nan if t >= self.t_fail else 1.0


@pytest.mark.parametrize("method", ["quasistatic-adaptive", "adaptive"])
def test_diverging_run_stops_with_clear_error_and_keeps_the_record(method):
    m = models.pendulum(12)
    sim = art.Simulator(m, 1e-3, method=method, forces=[_FailingForce(11, 0.0045)])
    with pytest.raises(art.SimulationDiverged, match="applied force is not finite") as e:
        sim.run(20, record_every=1)
    traj = e.value.trajectory
    assert e.value.step == 6                 # step k starts at t = (k - 1) dt
    assert len(traj.t) == 6 and np.isfinite(traj.q).all()   # t = 0 and after steps 1-5
