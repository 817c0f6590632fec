"""Adaptive dynamics with hybrid bodies (Redon, Galoppo & Lin 2005; issue 5, first part):
hybrid-body forward dynamics against the constrained dynamics from CRBA/RNEA, the Fig. 4
example, rigidification impulses, the adaptive simulator against full dynamics."""

import numpy as np
import pytest

import articulated as art
from articulated import models
from articulated.algorithms.adaptive import AdaptiveDynamics
from articulated.algorithms.rnea import bias_forces


def _state(m, seed):
    rng = np.random.default_rng(seed)
    return (m.random_configuration(rng), rng.normal(size=m.nv), rng.normal(size=m.nv),
            rng.normal(size=(m.nb, 6)))


TREES = [
    ("chain", lambda: models.random_tree(30, 1, branching=0.0)),
    ("tree", lambda: models.random_tree(30, 2, branching=0.6)),
    ("floating", lambda: models.random_tree(30, 3, floating_base=True)),
]


@pytest.mark.parametrize("name,make", TREES, ids=[t[0] for t in TREES])
def test_fully_articulated_equals_aba(name, make):
    """All joints active: the multilevel algorithm is the DCA with velocity terms."""
    m = make()
    s = AdaptiveDynamics(m)
    for seed in range(3):
        q, qd, tau, f = _state(m, seed)
        qdd = s.forward_dynamics(q, qd, tau, f)
        ref = art.aba(m, q, qd, tau, f)
        assert np.abs(qdd - ref).max() <= 1e-9 * np.abs(ref).max()


@pytest.mark.parametrize("name,make", TREES, ids=[t[0] for t in TREES])
@pytest.mark.parametrize("n_active", [1, 5, 15])
def test_hybrid_body_equals_constrained_dynamics(name, make, n_active):
    """RGL Sec. 4: a hybrid body moves like the body with its rigidified joints welded:
    qdd_a = M_aa^-1 (tau - C(q, qd))_a with zero velocity on rigidified joints, computed
    independently with CRBA and RNEA."""
    m = make()
    s = AdaptiveDynamics(m)
    q, qd, tau, f = _state(m, n_active)
    region = s.acceleration_update_region(max_nodes=n_active)       # a valid active subtree
    act = np.zeros(m.nb, dtype=bool)
    act[region] = True
    a = act[m.dof_body]
    qd[~a] = 0.0
    qdd = s.forward_dynamics(q, qd, tau, f, active=act)
    M = art.crba(m, q)
    C = bias_forces(m, q, qd, f)
    ref = np.linalg.solve(M[np.ix_(a, a)], (tau - C)[a])
    assert np.abs(qdd[a] - ref).max() <= 1e-9 * max(1.0, np.abs(ref).max())
    assert np.all(qdd[~a] == 0.0)


def _fig4_chain():
    """RGL Fig. 4: five links of mass m = 1 on prismatic joints along x (link 1 welded to
    the world), the serial assembly puts J1 at the top."""
    b = art.ModelBuilder(gravity=(0, 0, 0))
    b.add_body("l1", None, "fixed", mass=1.0, inertia=np.eye(3))
    for k in range(2, 6):
        b.add_body(f"l{k}", f"l{k - 1}", "prismatic", axis=(1, 0, 0), mass=1.0,
                   inertia=np.eye(3))
    return b.build()


def test_fig4_acceleration_recomputation_gives_f_over_4m():
    """RGL Sec. 5.3.2, Fig. 4: force f on link 2; exactly only J1, J2 accelerate (+f/m,
    -f/m); with J2..J4 rigidified, links 2-5 move together with a = f / (4 m)."""
    m = _fig4_chain()
    s = AdaptiveDynamics(m, "serial")
    F = np.zeros((m.nb, 6))
    F[1, 3] = 2.0
    full = s.forward_dynamics(m.neutral(), np.zeros(m.nv), None, F)
    assert full == pytest.approx([2.0, -2.0, 0.0, 0.0], abs=1e-12)
    region = s.acceleration_update_region(max_nodes=2)             # root (fixed) and J1
    assert set(region.tolist()) == {0, 1}
    act = np.zeros(m.nb, dtype=bool)
    act[region] = True
    qdd = s.forward_dynamics(m.neutral(), np.zeros(m.nv), None, F, active=act)
    assert qdd == pytest.approx([2.0 / 4.0, 0.0, 0.0, 0.0], abs=1e-12)


@pytest.mark.parametrize("seed", range(8))
def test_rigidification_impulses_cancel_velocities_and_never_add_energy(seed):
    """RGL Sec. 5.4.2: the impulses zero the rigidified joints' velocities and are the
    M-orthogonal projection onto the remaining joints: kinetic energy never increases, and
    the result equals the projection computed from CRBA."""
    m = models.random_tree(25, 10 + seed, branching=0.5, floating_base=seed % 2 == 1)
    s = AdaptiveDynamics(m)
    q, qd, tau, f = _state(m, seed)
    s.set_state(q, qd, tau, f)
    keep = np.zeros(m.nb, dtype=bool)
    keep[s.acceleration_update_region(max_nodes=6 + seed)] = True
    s.set_state(q, qd, tau, f)                         # transient = fully articulated
    rigid = np.flatnonzero(~keep & (m.jnt_nv > 0))
    dqd = s.rigidification_impulses(rigid)
    new = qd + dqd
    R = ~keep[m.dof_body]
    assert np.abs(new[R]).max(initial=0) <= 1e-9 * np.abs(qd).max()
    M = art.crba(m, q)
    T0, T1 = 0.5 * qd @ M @ qd, 0.5 * new @ M @ new
    assert T1 <= T0 * (1 + 1e-12)
    # the M-orthogonal projection: minimise |v - qd|_M subject to v_R = 0
    a = ~R
    proj = np.zeros(m.nv)
    proj[a] = qd[a] + np.linalg.solve(M[np.ix_(a, a)], M[np.ix_(a, R)] @ qd[R])
    assert np.abs(new[a] - proj[a]).max() <= 1e-8 * np.abs(qd).max()


def test_invalid_active_region_is_rejected():
    m = _fig4_chain()
    s = AdaptiveDynamics(m)                             # balanced tree: J1 is not on top
    act = np.zeros(m.nb, dtype=bool)
    act[[0, 1]] = True
    top = int(s.tree.node_joint[s.tree.node_B[s.tree.roots[0]]])
    assert top != 1                                     # the balanced tree splits the chain
    with pytest.raises(ValueError, match="must form a subtree"):
        s.forward_dynamics(m.neutral(), np.zeros(m.nv), active=act)
    with pytest.raises(ValueError, match="rigidified but has a nonzero velocity"):
        act = np.zeros(m.nb, dtype=bool)
        act[[0, top]] = True
        qd = np.ones(m.nv)
        s.set_state(m.neutral(), qd, active=act)


def test_adaptive_simulator_all_active_equals_full_dynamics():
    """N_A = all joints: every step equals semi-implicit Euler with ABA."""
    m = models.pendulum(40)
    q0 = m.neutral()
    q0[0] = 1.2
    sim = art.Simulator(m, 1e-3, method="adaptive", q0=q0, update_every=7)
    q, qd = q0.copy(), np.zeros(m.nv)
    for _ in range(60):
        sim.step()
        qd = qd + 1e-3 * art.aba(m, q, qd, np.zeros(m.nv))
        q = art.integrate(m, q, qd, 1e-3)
        assert np.abs(sim.q - q).max() <= 1e-9
        assert np.abs(sim.qd - qd).max() <= 1e-9 * max(1.0, np.abs(qd).max())


def test_adaptive_simulator_respects_the_budget_and_never_gains_energy():
    """With a joint budget the active region never exceeds N_A, and in a conservative
    system without gravity or forces the rigidification only removes kinetic energy
    (RGL Sec. 7.3), up to the integrator's own error."""
    m = models.pendulum(30, gravity=(0.0, 0.0, 0.0))
    rng = np.random.default_rng(4)
    qd0 = 0.5 * rng.normal(size=m.nv)
    sim = art.Simulator(m, 5e-4, method="adaptive", qd0=qd0, max_active=8, update_every=5)
    traj = sim.run(100, record_every=5)
    assert traj.active[1:].max() <= 8
    assert np.all(np.diff(traj.kinetic) <= 1e-3 * traj.kinetic[0])
    assert traj.kinetic[-1] < traj.kinetic[0]


@pytest.mark.parametrize("seed", range(4))
def test_momentum_projection_equals_rigidification_impulses(seed):
    """The O(n) momentum projection and RGL's K^R test-impulse construction give the same
    velocity change (both the M-orthogonal projection)."""
    m = models.random_tree(25, 30 + seed, branching=0.5, floating_base=seed % 2 == 0)
    s = AdaptiveDynamics(m)
    q, qd, tau, f = _state(m, seed)
    s.set_state(q, qd, tau, f)
    keep = np.zeros(m.nb, dtype=bool)
    keep[s.acceleration_update_region(max_nodes=5 + seed)] = True
    s.set_state(q, qd, tau, f)
    a = s.rigidification_impulses(np.flatnonzero(~keep & (m.jnt_nv > 0)))
    b = s.momentum_projection(keep)
    # both are M-orthogonal projections; random trees have cond(M) up to ~1e8, so the two
    # routes agree to round-off times the conditioning
    assert np.abs(a - b).max() <= 1e-7 * np.abs(qd).max()


def _constrained(m, q, qd, tau, f, act):
    """qdd of the active dofs with the rigidified joints welded, from CRBA and RNEA."""
    a = act[m.dof_body]
    M = art.crba(m, q)
    C = bias_forces(m, q, qd, f)
    return np.linalg.solve(M[np.ix_(a, a)], (tau - C)[a])


def test_reduced_tree_keeps_precision_on_long_rigid_pieces():
    """A long rigid piece has a badly conditioned 6x6 inertia (a 150-link rod: rotational
    inertias 1e5 across, ~1e-2 along): inverting the node's Phi_00 lost 3e-9 relative on
    pendulum-300 at N_A = 1-2. The reduced tree sums composite inertias instead, to 1e-12
    against CRBA/RNEA, also after region updates have rigidified and re-activated nodes
    (the cached sums of the nodes that stayed rigid are reused)."""
    m = models.pendulum(300)
    s = AdaptiveDynamics(m)
    q, qd, tau, f = _state(m, 3)
    for n_active in (1, 2, 5):
        s.set_state(q, qd, tau, f)
        act = np.zeros(m.nb, dtype=bool)
        act[s.acceleration_update_region(max_nodes=n_active)] = True
        qd_h = np.where(act[m.dof_body], qd, 0.0)
        s.set_state(q, qd_h, tau, f, active=act)
        s.prepare_region()
        qdd = s.hybrid_accelerations(q, qd_h, tau, f)
        exact = _constrained(m, q, qd_h, tau, f, act)
        assert np.abs(qdd[act[m.dof_body]] - exact).max() <= 1e-12 * np.abs(exact).max()
    # region updates: nodes rigidified at new angles are summed again, the rest reused
    from articulated.configuration import integrate

    s.set_state(q, qd, tau, f)
    s.prepare_region()
    h = 1e-3
    regions = set()
    for NU, NA in [(6, 3), (4, 4), (8, 2), (3, 5), (6, 3)]:
        qd, _, _ = s.region_update(q, qd, tau, f, h, max_update=NU, max_active=NA)
        regions.add(tuple(np.flatnonzero(s.active)))
        for _ in range(5):
            qdd = s.hybrid_accelerations(q, qd, tau, f)
            exact = _constrained(m, q, qd, tau, f, s.active)
            assert np.abs(qdd[s.active[m.dof_body]] - exact).max() <= \
                1e-12 * np.abs(exact).max()
            qd = qd + h * qdd
            q = integrate(m, q, qd, h)
    assert len(regions) >= 3                    # the region moved


@pytest.mark.parametrize("name,make", TREES + [("pendulum", lambda: models.pendulum(60))],
                         ids=[t[0] for t in TREES] + ["pendulum"])
def test_sublinear_hybrid_step_equals_full_recompute(name, make):
    """The O(N_A log n) multilevel step (active-node frames and coefficients, world
    velocities from the hierarchical frames, rigid-front biases from each front node's
    rigid inertia, RGL Sec. 4.3 / 6.2) and the ABA on the reduced tree (one rigid body per
    rigid-front node) equal a full recomputation of the hybrid body and the constrained
    dynamics from CRBA and RNEA, also after the active joints moved and with external
    forces inside rigid nodes."""
    m = make()
    s = AdaptiveDynamics(m)
    q, qd, tau, f = _state(m, 9)
    f[np.random.default_rng(1).choice(m.nb, m.nb - 3, replace=False)] = 0.0
    s.set_state(q, qd, tau, f)
    act = np.zeros(m.nb, dtype=bool)
    act[s.acceleration_update_region(max_nodes=12)] = True
    qd[~act[m.dof_body]] = 0.0
    s.set_state(q, qd, tau, f, active=act)
    s.prepare_region()
    a = act[m.dof_body]
    for step in range(3):
        fast = s.hybrid_accelerations(q, qd, tau, f, method="dca").copy()
        reduced = s.hybrid_accelerations(q, qd, tau, f).copy()
        ref = AdaptiveDynamics(m).forward_dynamics(q, qd, tau, f, active=act)
        assert np.abs(fast - ref).max() <= 1e-9 * np.abs(ref).max()
        assert np.abs(reduced - ref).max() <= 1e-9 * np.abs(ref).max()
        assert np.all(reduced[~a] == 0.0)
        # and the constrained dynamics computed independently from CRBA and RNEA
        M = art.crba(m, q)
        C = bias_forces(m, q, qd, f)
        exact = np.linalg.solve(M[np.ix_(a, a)], (tau - C)[a])
        assert np.abs(reduced[a] - exact).max() <= 1e-9 * np.abs(exact).max()
        qd = qd + 0.01 * fast
        q = art.integrate(m, q, qd, 0.01)
    with pytest.raises(ValueError, match="unknown method"):
        s.hybrid_accelerations(q, qd, tau, f, method="aba")


def test_adaptive_simulator_with_world_forces_equals_full_dynamics():
    """N_A = all with a world-frame point force: the forces see this step's poses (from
    the hierarchical frames), so every step equals semi-implicit Euler with ABA and the
    force evaluated at the same state."""
    m = models.pendulum(20)
    q0 = m.neutral()
    q0[0] = 0.7
    force = art.PointForce(m.nb - 1, [0.0, 0.3, 0.5])
    sim = art.Simulator(m, 1e-3, method="adaptive", q0=q0, update_every=5,
                        forces=[art.PointForce(m.nb - 1, [0.0, 0.3, 0.5])])
    q, qd = q0.copy(), np.zeros(m.nv)
    for _ in range(30):
        sim.step()
        tau, f = np.zeros(m.nv), np.zeros((m.nb, 6))
        force.apply(m, 0.0, q, qd, tau, f)
        qd = qd + 1e-3 * art.aba(m, q, qd, tau, f)
        q = art.integrate(m, q, qd, 1e-3)
        assert np.abs(sim.qd - qd).max() <= 1e-9 * max(1.0, np.abs(qd).max())


@pytest.mark.parametrize("seed", range(3))
def test_acceleration_update_region_bound_holds_against_exact_accelerations(seed):
    """RGL Sec. 5.3.1: the joints left out of the acceleration update region have a total
    acceleration metric sum qdd_i^T A_i qdd_i of at most eps_acc, measured on the exact
    accelerations (ABA); tighter thresholds give larger regions."""
    m = models.random_tree(40, 50 + seed, branching=0.4, floating_base=seed == 1)
    s = AdaptiveDynamics(m)
    q, qd, tau, f = _state(m, seed)
    s.set_state(q, qd, tau, f)
    ref = art.aba(m, q, qd, tau, f)
    total = ref @ ref
    sizes = []
    for frac in (0.5, 1e-2, 1e-4, 1e-8):
        U = s.acceleration_update_region(frac * total)
        out = ~np.isin(m.dof_body, U)
        assert ref[out] @ ref[out] <= frac * total * (1 + 1e-9) + 1e-12 * total
        sizes.append(U.size)
    assert sizes == sorted(sizes) and sizes[-1] > sizes[0]


def _reference_region_update(s, q, qd, tau, f, h, active, max_update, max_active):
    """RGL Sec. 5.1 with the O(n) public steps: full recompute in the fully articulated
    state, update region, exact transient solve, new region; the rigidification impulses
    as the M-orthogonal projection they equal (RGL Sec. 5.4.2), from CRBA (independent of
    both impulse paths and better conditioned than assembling K^R). Also returns the
    transient hybrid body's accelerations under the same projection (which the step of
    an update takes off again when it is split into substeps)."""
    m = s.model
    s.set_state(q, qd, tau, f)
    U = s.acceleration_update_region(0.0, max_update)
    transient = active.copy()
    transient[U] = True
    s.active[:] = transient
    s._refresh(metric=False)
    qddT = s._solve_exact()
    qd1 = qd + h * qddT
    s.qd[:] = qd1
    new = s.new_active_region(0.0, max_active)
    rigid = np.flatnonzero(transient & ~new)
    if rigid.size and np.any(qd1[~new[m.dof_body]] != 0.0):
        M = art.crba(m, q)
        keep = new[m.dof_body]
        Mkk = M[np.ix_(keep, keep)]
        qd1, a = np.zeros(m.nv), qddT
        qd1[keep] = np.linalg.solve(Mkk, (M @ (qd + h * a))[keep])
        qddT = np.zeros(m.nv)
        qddT[keep] = np.linalg.solve(Mkk, (M @ a)[keep])
    return qd1, U, new, qddT


def _check_local_updates(s, q, qd, tau_of, f, budgets, columns=16, weights=None):
    """Region updates of the solver ``s`` (local, RGL Sec. 6) next to the O(n) reference
    of :func:`_reference_region_update`, five hybrid steps between updates (the active
    joints move, the region moves): the same A(root) of the fully articulated state (1e-9),
    update region and new active region, the same velocities and projected transient
    accelerations (1e-9), and the first hybrid step after each update equal to the
    constrained dynamics from CRBA and RNEA (1e-9). ``tau_of(k, qd)`` gives the joint
    forces of update k; ``weights(q)`` the reference's metric weights."""
    from articulated.configuration import integrate

    m, h = s.model, 1e-3
    ref = AdaptiveDynamics(m)
    s.set_state(q, qd, tau_of(0, qd), f)
    s.prepare_region()
    active = np.ones(m.nb, dtype=bool)
    for k, (NU, NA) in enumerate(budgets):
        tau = tau_of(k, qd)
        if weights is not None:
            ref.Aw[:] = weights(q)
        qd_r, U_r, new_r, qddT_r = _reference_region_update(ref, q, qd, tau, f, h, active,
                                                            NU, NA)
        A_r = ref.eta[ref.tree.roots].copy()     # A of the fully articulated body (eq. 8)
        qd_f, U_f, _ = s.region_update(q, qd, tau, f, h, max_update=NU, max_active=NA,
                                       impulse_columns=columns)
        A_f = s._F[4][s.tree.roots]
        assert np.abs(A_f - A_r).max() <= 1e-9 * np.abs(A_r).max()
        assert np.array_equal(U_f, U_r), (k, U_f, U_r)
        assert np.array_equal(s.active, new_r)
        assert np.abs(qd_f - qd_r).max() <= 1e-9 * max(1.0, np.abs(qd_r).max())
        # the transient accelerations under the rigidification's projection (when the
        # caller may split an update's step: RegionScratch.split): a step split into
        # substeps starts from qd_f - h qddT = the projection of qd
        if s._split[0]:
            kd = new_r[m.dof_body]
            qddT_f = s._rargs.buf.qddT[kd]
            assert np.abs(qddT_f - qddT_r[kd]).max() <= \
                1e-9 * max(1.0, np.abs(qddT_r).max()), k
        active, qd = s.active.copy(), qd_f
        for step in range(5):
            qdd = s.hybrid_accelerations(q, qd, tau, f)
            if step == 0:      # the new hybrid body, front joints the traversal took included
                exact = _constrained(m, q, qd, tau, f, active)
                assert np.abs(qdd[active[m.dof_body]] - exact).max() <= \
                    1e-9 * max(1.0, np.abs(exact).max()), k
            qd = qd + h * qdd
            q = integrate(m, q, qd, h)


REGION_TREES = TREES + [("humanoid", lambda: models.humanoid())]


@pytest.mark.parametrize("columns", [0, 16])
@pytest.mark.parametrize("name,make", REGION_TREES, ids=[t[0] for t in REGION_TREES])
def test_local_region_update_equals_full_recompute(name, make, columns):
    """RGL Sec. 6: the active-region update that touches only the active region, its
    front, the force-update region and the queue's nodes (passive nodes through their
    linear-coefficient tensors) picks the same update region and new active region and
    gives the same velocities as the O(n) recompute, update after update, while the
    active region moves; forces on bodies and joints inside the rigid region included."""
    m = make()
    rng = np.random.default_rng(7)
    q, qd, tau, f = _state(m, 3)
    tau[rng.random(m.nv) < 0.7] = 0.0                 # joint forces on some joints only
    f[rng.random(m.nb) < 0.7] = 0.0                   # body forces on some bodies only
    s = AdaptiveDynamics(m)
    s._split[0] = True                 # as with contact substeps: qddT projected, checked
    _check_local_updates(s, q, qd, lambda k, qd: tau, f,
                         [(6, 3), (4, 4), (8, 2), (3, 5), (6, 3)], columns=columns)


def test_region_update_work_does_not_grow_with_n():
    """The nodes a region update recomputes or evaluates depend on N_A and the update
    region, not on n: the same budgets on a 4x longer pendulum (a force on the last link,
    so the region moves and joints get rigidified) touch at most a few more nodes per
    update (tree height), while the O(n) recompute touches all of them."""
    from articulated.simulation import PointForce

    work = []
    for n in (100, 400):
        m = models.pendulum(n)
        sim = art.Simulator(m, 1e-3, method="adaptive", max_active=4, max_update=8,
                            q0=np.r_[1.0, np.full(n - 1, 0.02)], update_every=5,
                            forces=[PointForce(n - 1, (0.0, 5.0, 0.0))])
        touched, rigidified = [], 0
        for k in range(60):
            sim.step()
            if k % 5 == 0 and k > 0:
                st = sim.solver.passive_stats
                touched.append(st["updated"] + st["evaluated"] + st["tensorized"])
                rigidified += sim.last["rigidified"]
        assert rigidified > 0                          # the region did move
        work.append(max(touched))
    assert work[0] <= 40
    assert work[1] <= work[0] + 12


def test_per_character_budgets():
    """RGL Fig. 1: one joint budget per character (tree of the model); each character's
    active region stays within its own budget, a zero budget freezes the character (its
    root joint rigidified: welded to the world, forces on it have no effect), and a budget
    list of the wrong length is rejected."""
    m = models.crowd(4)
    roots = np.flatnonzero(m.body_parent < 0)
    ends = list(roots[1:]) + [m.nb]
    q0 = models.crowd_configuration(m)
    budgets = [10, 5, 2, 0]
    from articulated.simulation import PointForce, Spring

    forces = [PointForce(int(roots[3]), (0.0, 50.0, 0.0)),      # on the frozen character
              Spring(int(roots[3]) + 5, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), 10.0, 0.0, 1.0),
              PointForce(int(roots[0]), (0.0, 50.0, 0.0))]
    sim = art.Simulator(m, 1e-3, method="adaptive", max_active=budgets, max_update=40, q0=q0,
                        update_every=10, forces=forces)
    for k in range(31):
        sim.step()
        counts = [int(sim.active[a:b].sum()) for a, b in zip(roots, ends)]
        if k >= 1:
            assert counts == budgets          # falling characters use their whole budget
    frozen = slice(m.jnt_qadr[roots[3]], m.nq)
    assert np.array_equal(sim.q[frozen], q0[frozen])
    # the forces on the frozen character act on nothing else
    alone = art.Simulator(m, 1e-3, method="adaptive", max_active=budgets, max_update=40,
                          q0=q0, update_every=10, forces=forces[2:])
    for k in range(31):
        alone.step()
    assert np.abs(alone.q - sim.q).max() <= 1e-12
    assert np.linalg.norm(sim.q[:7] - q0[:7]) > 1e-4          # the others fall
    with pytest.raises(ValueError, match="one per tree"):
        art.Simulator(m, 1e-3, method="adaptive", max_active=[1, 2, 3])


def _adaptive_reference(m, q0, forces, steps, h, update_every, **criteria):
    """The adaptive simulator's scheme written with the algorithm API: forces through
    ``Force.apply`` at each step's state (poses by forward kinematics), an
    :meth:`AdaptiveDynamics.region_update` every ``update_every`` steps and
    :meth:`AdaptiveDynamics.hybrid_accelerations` between, ``qd += h qdd`` and
    ``q = integrate(q, qd, h)`` (``qd`` is zero outside the active region). Returns the
    states and ``(active, update_region, rigidified)`` after every step (index 0: start)."""
    s = AdaptiveDynamics(m)
    q, qd = q0.copy(), np.zeros(m.nv)
    s.set_state(q, qd)
    s.prepare_region()
    bodies = np.unique(np.concatenate([f.support(m)[0] for f in forces]).astype(np.int64))
    out = [(q.copy(), qd.copy(), (m.nb, 0, 0))]
    last = out[0][2]
    for k in range(steps):
        s.sync_frames(q)
        tau, f_ext = np.zeros(m.nv), np.zeros((m.nb, 6))
        for force in forces:
            force.apply(m, k * h, q, qd, tau, f_ext)
        if k % update_every == 0:
            qd, U, rigid = s.region_update(q, qd, tau, f_ext, h, bodies=bodies,
                                           impulse_columns=2, **criteria)
            last = (int(s.active.sum()), U.size, rigid.size)
        else:
            qd = qd + h * s.hybrid_accelerations(q, qd, tau, f_ext, bodies)
        q = art.integrate(m, q, qd, h)
        out.append((q.copy(), qd.copy(), last))
    return out


def test_compiled_step_loop_follows_the_algorithm_api():
    """The compiled loop of adaptive steps (world- and body-frame point forces and a damped
    spring evaluated from the hierarchical frames inside the loop, region updates included)
    gives the trajectory of the same scheme written with the algorithm API
    (:func:`_adaptive_reference`), records included; and a force without a compiled form
    has none (the simulator then steps in Python)."""
    from articulated.simulation import JointTorque, PointForce, Spring

    m = models.pendulum(40)
    q0 = np.r_[1.1, np.linspace(-0.2, 0.2, m.nq - 1)]
    forces = [PointForce(39, (0.0, 0.5, 0.1)),
              PointForce(20, (0.1, 0.0, 0.0), point=(0.0, 0.0, -0.05), frame="body"),
              Spring(30, (0.0, 0.0, -0.05), (0.5, 1.0, -2.0), 20.0, 0.1, 0.5)]
    sim = art.Simulator(m, 1e-3, method="adaptive", max_active=6, max_update=8, q0=q0,
                        forces=forces, update_every=7)
    assert sim._compiled is not None
    ta = sim.run(50, record_every=3)
    ref = _adaptive_reference(m, q0, forces, 50, 1e-3, 7, max_active=6, max_update=8)
    tb = [ref[k] for k in range(0, 51, 3)]
    qb = np.array([r[0] for r in tb])
    qdb = np.array([r[1] for r in tb])
    assert len(ta) == len(tb) == 17
    assert np.abs(ta.t - 1e-3 * np.arange(0, 51, 3)).max() <= 1e-12
    assert np.abs(ta.q - qb).max() <= 1e-10
    assert np.abs(ta.qd - qdb).max() <= 1e-9 * np.abs(qdb).max()
    assert np.abs(ta.q[-1] - q0).max() > 1e-3                  # it moved
    for i, name in enumerate(("active", "update_region", "rigidified")):
        assert np.array_equal(getattr(ta, name), [r[2][i] for r in tb]), name
    assert ta.rigidified.sum() > 0 and ta.update_region.max() == 8
    assert ta.wall.shape == (50,) and np.all(ta.wall > 0) and np.all(np.isfinite(ta.wall))
    c = art.Simulator(m, 1e-3, method="adaptive", max_active=6,
                      forces=[JointTorque(np.full(m.nv, 0.1)), _PythonForce()])
    assert c._compiled.hook >= 0    # a Python force: called from the compiled loop


class _PythonForce:
    """A user's force in Python (no compiled form)."""

    def apply(self, model, t, q, qd, tau, f_ext, kin=None):
        tau[0] += 0.0


def test_compiled_joint_forces_equal_their_python_forms():
    """Joint forces in the compiled adaptive loop (``JointTorque``, ``JointDamping``,
    ``PDController`` with constant references, evaluated at every step on every dof, since
    the active-region update reads the rigidified joints' too) and a world point force
    give, over 300 steps with region updates (N_A = 6 of 40), the states of the same
    forces evaluated by their Python ``apply`` (a do-nothing Python force sends every
    force through the hook, with body poses from the solver's frames) to 1e-10; the joint
    forces change the motion."""
    from articulated.simulation import JointDamping, JointTorque, PDController, PointForce

    m = models.pendulum(40)
    q0 = np.r_[1.1, np.linspace(-0.2, 0.2, m.nq - 1)]
    forces = [JointTorque(np.linspace(-0.05, 0.05, m.nv)), JointDamping(0.02),
              PDController(0.5, 0.01, 0.1, joints=range(5, 15)),
              PointForce(39, (0.0, 0.5, 0.1))]
    kw = dict(method="adaptive", max_active=6, max_update=8, q0=q0, update_every=7)
    a = art.Simulator(m, 1e-3, forces=forces, **kw)
    assert a._compiled.hook < 0 and a._compiled.joint
    a.run(300)
    b = art.Simulator(m, 1e-3, forces=forces + [_PythonForce()], **kw)
    assert b._compiled.hook >= 0
    b.run(300)
    assert np.abs(a.q - b.q).max() <= 1e-10 and np.abs(a.qd - b.qd).max() <= 1e-10
    c = art.Simulator(m, 1e-3, forces=forces[3:], **kw)
    c.run(300)
    assert np.abs(c.q - a.q).max() > 1e-3


def test_compiled_records_follow_the_run_not_the_global_step_count():
    """Records are taken every ``record_every`` steps of each run, also when the simulator
    has already stepped: a second run records the states that one uninterrupted run
    reaches at those steps (it used to count from the simulator's first step and could
    write past its record buffer)."""
    from articulated.simulation import PointForce

    m = models.pendulum(20)
    q0 = np.r_[1.0, np.zeros(m.nq - 1)]

    def make():
        return art.Simulator(m, 1e-3, method="adaptive", max_active=4, update_every=5,
                             q0=q0, forces=[PointForce(19, (0.0, 0.3, 0.0))])

    for first, steps, every in ((1, 9, 10), (3, 10, 4), (7, 12, 5)):
        a = make()
        a.run(first)
        ta = a.run(steps, record_every=every)
        tb = make().run(first + steps, record_every=1)        # a record after every step
        at = first + every * np.arange(steps // every + 1)      # the run's steps 0, every, ...
        assert len(ta) == 1 + steps // every
        assert np.abs(ta.t - tb.t[at]).max() <= 1e-12
        assert np.abs(ta.q - tb.q[at]).max() <= 1e-10


def test_run_records_are_the_states_of_single_steps():
    """``run`` writes its records from inside the compiled loop into arrays preallocated
    for the run: each record is bit for bit the state that as many single ``step`` calls
    reach (the same operations), with the region sizes of ``sim.last`` after that step,
    also when the run starts on a simulator that has already stepped."""
    from articulated.simulation import PointForce

    m = models.pendulum(25)
    q0 = np.r_[1.0, np.linspace(-0.1, 0.1, m.nq - 1)]

    def make():
        return art.Simulator(m, 1e-3, method="adaptive", max_active=3, update_every=4,
                             q0=q0, forces=[PointForce(24, (0.0, 0.4, 0.0))])

    a = make()
    a.run(3)
    tr = a.run(30, record_every=2)
    b = make()
    states = []
    for k in range(33):
        b.step()
        states.append((b.q.copy(), b.qd.copy(), [b.last[n] for n in
                                                 ("active", "update_region", "rigidified")]))
    want = [states[2]] + [states[2 + k] for k in range(2, 31, 2)]
    assert len(tr) == 16 and tr.kinetic.shape == (16,) and tr.active.dtype == np.int64
    for j, (q, qd, sizes) in enumerate(want):
        assert np.array_equal(tr.q[j], q) and np.array_equal(tr.qd[j], qd), j
        assert [tr.active[j], tr.update_region[j], tr.rigidified[j]] == sizes, j
    assert np.abs(tr.t - (3 + np.r_[0, 2:31:2]) * 1e-3).max() <= 1e-15
    assert tr.rigidified.max() > 0 and np.abs(tr.q[-1] - q0).max() > 1e-3


def test_compiled_run_divergence_keeps_records():
    """A diverging compiled run (a stiff spring blows the chain up) stops with
    SimulationDiverged naming the step, and keeps the states recorded before it."""
    from articulated.simulation import Spring
    from articulated.simulation.trajectory import SimulationDiverged

    m = models.pendulum(12)
    sim = art.Simulator(m, 0.05, method="adaptive", max_active=4, update_every=3,
                        forces=[Spring(11, (0.0, 0.0, 0.0), (0.0, 3.0, 0.0), 1e9)])
    assert sim._compiled is not None
    with pytest.raises(SimulationDiverged, match="not finite") as info:
        sim.run(500, record_every=1)
    tr = info.value.trajectory
    step = info.value.step
    assert 1 < step < 500 and len(tr) == step             # records up to the failing step
    assert np.isfinite(tr.q).all() and np.isfinite(tr.kinetic).all()
    assert tr.wall.shape == (step - 1,)


def test_configuration_dependent_weights():
    """RGL Sec. 5.2: metric weights may depend on q_i. A callable is evaluated at every
    region update; the local update then equals the O(n) reference run with the weights
    of that configuration (the rigidified joints' weights depend on their own q_i only)."""
    m = models.random_tree(25, 4, branching=0.5)

    def weights(q):
        w = np.tile(np.eye(6), (m.nb, 1, 1))
        a = 1.0 + 4.0 * np.sin(q[m.jnt_qadr]) ** 2            # A_i = (1 + 4 sin^2 q_i) 1
        return w * a[:, None, None]

    q, qd, tau, f = _state(m, 5)
    h = 1e-3
    _check_local_updates(AdaptiveDynamics(m, weights=weights), q, qd, lambda k, qd: tau, f,
                         [(6, 3), (5, 4), (7, 2)], weights=weights)
    with pytest.raises(ValueError, match="finite"):
        bad = AdaptiveDynamics(m, weights=lambda q: np.full((m.nb, 6, 6), np.nan)
                               if q[0] > 0.123 else np.tile(np.eye(6), (m.nb, 1, 1)))
        bad.set_state(q, qd, tau, f)
        bad.prepare_region()
        qq = q.copy()
        qq[0] = 0.5
        bad.region_update(qq, qd, tau, f, h, max_update=3, max_active=3)


def test_local_region_update_with_changing_joint_forces():
    """Joint forces that change between updates on rigidified joints (e.g. damping, which
    drops to zero once a joint is rigidified): the joints whose force differs from the one
    in their passive node's tensors are recomputed exactly and re-tensorized, so the local
    update still equals the O(n) recompute."""
    m = models.random_tree(30, 2, branching=0.6)
    q, qd, tau0, f = _state(m, 11)
    f[2:] = 0.0                          # body forces on two bodies only: tensors are used
    _check_local_updates(AdaptiveDynamics(m), q, qd,
                         lambda k, qd: tau0 * np.cos(k) - 0.3 * qd,   # varies; damping-like
                         f, [(6, 3), (5, 4), (7, 2), (4, 4)])

def test_monomial_map_and_gram_congruence_of_a_motion_transform():
    """The passive tensors' monomial map of a motion transform X satisfies m(X v) = M m(v)
    (grouped monomial order; M block lower triangular), and ``_gram_add``, which skips M's
    zero blocks, equals the dense congruence M^T G M computed by NumPy."""
    from articulated.algorithms.passive import K, LO, _gram_add, _monomial_map, monomials
    from articulated.spatial import xform_dense

    rng = np.random.default_rng(3)
    q, _ = np.linalg.qr(rng.standard_normal((3, 3)))
    X = np.empty((1, 6, 6))
    X[0] = xform_dense(q, rng.standard_normal(3))
    M = np.empty((1, K, K))
    _monomial_map(X, 0, M, 0)
    v = rng.standard_normal(6)
    m_v, m_xv = np.empty(K), np.empty(K)
    monomials(v, m_v)
    monomials(X[0] @ v, m_xv)
    assert np.abs(M[0] @ m_v - m_xv).max() <= 1e-12 * np.abs(m_xv).max()
    bounds = (0,) + LO + (K,)
    for g in range(1, 4):                           # class of the rows of column block g
        for h in range(g + 1, 4):
            assert not M[0, bounds[g]:bounds[g + 1], bounds[h]:bounds[h + 1]].any()
    G = rng.standard_normal((1, K, K))
    G[0] = G[0] + G[0].T
    out = rng.standard_normal((K, K))
    want = out + M[0].T @ G[0] @ M[0]
    _gram_add(G, 0, M, 0, out, np.empty((K, K)))
    assert np.abs(out - want).max() <= 1e-12 * np.abs(want).max()


def test_piecewise_linear_reference_compiled_equals_the_python_path():
    """A ``PDController`` whose references are ``PiecewiseLinear`` (a moving gait on 10
    joints: q_ref and qd_ref sampled every 7 ms) has a compiled form: the full model's
    compiled loop (semi-implicit Euler and RK4, whose stage times fall between samples)
    and the compiled adaptive loop give the states of the same controller driven through a
    plain Python callable (the Python paths) to 1e-10 over 400 steps (measured: bit for
    bit);
    the reference interpolates its samples (values at and between samples against the
    closed form of the sampled lines) and holds the ends; bad samples are ValueErrors."""
    from articulated.simulation import PDController, PiecewiseLinear

    ts = np.arange(0.0, 0.5, 0.007)
    Q = 0.3 * np.sin(3.0 * ts[:, None] + np.arange(10)[None, :])
    Qd = 0.9 * np.cos(3.0 * ts[:, None] + np.arange(10)[None, :])
    ref, dref = PiecewiseLinear(ts, Q), PiecewiseLinear(ts, Qd)
    assert np.array_equal(ref(ts[4]), Q[4]) and np.array_equal(ref(-1.0), Q[0])
    assert np.array_equal(ref(9.0), Q[-1])
    assert np.allclose(ref(ts[4] + 0.25 * 0.007), 0.75 * Q[4] + 0.25 * Q[5], rtol=0,
                       atol=1e-15)
    for bad in ((ts[::-1], Q), (ts, Q[:-1]), (ts, np.full_like(Q, np.nan))):
        with pytest.raises(ValueError, match="PiecewiseLinear"):
            PiecewiseLinear(*bad)
    m = models.pendulum(40)
    q0 = np.r_[1.1, np.linspace(-0.2, 0.2, m.nq - 1)]

    def forces(compiled):
        q_ref = ref if compiled else (lambda t: ref(t))
        qd_ref = dref if compiled else (lambda t: dref(t))
        return [PDController(0.5, 0.01, q_ref, qd_ref=qd_ref, joints=range(5, 15))]

    for kw in (dict(integrator="semi_implicit_euler"), dict(integrator="rk4"),
               dict(method="adaptive", max_active=6, max_update=8, update_every=7)):
        a = art.Simulator(m, 1e-3, forces=forces(True), q0=q0, **kw)
        b = art.Simulator(m, 1e-3, forces=forces(False), q0=q0, **kw)
        for sim, compiled in ((a, True), (b, False)):   # Python forces through the hook
            fa = sim._compiled()[2] if callable(sim._compiled) else sim._compiled
            assert (fa.hook == -1) == compiled
        ta, tb = a.run(400), b.run(400)
        assert np.abs(ta.q - tb.q).max() <= 1e-10 and np.abs(ta.qd - tb.qd).max() <= 1e-10
    c = art.Simulator(m, 1e-3, q0=q0, method="adaptive", max_active=6, max_update=8,
                      update_every=7)
    assert np.abs(c.run(400).q[-1] - ta.q[-1]).max() > 1e-3       # the controller acts


@pytest.mark.parametrize("name,make", TREES, ids=[t[0] for t in TREES])
def test_passive_tensors_of_one_batch_share_a_frame_and_equal_mapped_tensors(name, make):
    """RGL Theorems 3-4 leave the frame of a passive node's tensors free. The nodes that
    become passive in one region update (a fresh simulator's first step: nearly all of
    them) share their reference frame with their parent, so no child needs the K x K
    monomial map; the coefficients they give at any rigid twist equal those of tensors
    built node by node (the construction of RGL eq. 9), each node in the frame of its
    first internal child, whose tensors it then reads unmapped, with the other internal
    child mapped: 1e-12 of the largest value for b, eta, beta, 1e-10 for the metric's p
    (round-off of the K x K maps on the chain: 1.2e-12 on an AMD EPYC, 1.4e-11 on an
    Intel Xeon, whose machine code numba compiles for that CPU)."""
    from articulated.algorithms.bundles import Coefficients
    from articulated.algorithms.hybrid import tensorize_nodes
    from articulated.algorithms.passive import evaluate_node
    from articulated.spatial import xform_dense

    m = make()
    q, qd, _, _ = _state(m, 5)
    sim = art.Simulator(m, 1e-3, method="adaptive", max_active=2, q0=q, qd0=qd)
    sim.step()
    s, t = sim.solver, sim.solver.tree
    batch = np.flatnonzero((t.node_joint >= 0) & (t.node_parent >= 0)
                           & ~s.active[np.maximum(t.node_joint, 0)])
    assert s.passive_stats["tensorized"] == batch.size > 0.6 * m.nb
    in_batch = np.zeros(t.n_nodes, dtype=bool)
    in_batch[batch] = True
    for i in batch:                      # a node tensorized with its parent shares its frame
        p = t.node_parent[i]
        assert (s._ref_id[i] == s._ref_id[p]) == bool(in_batch[p])
    for i in np.flatnonzero(t.node_joint < 0):     # leaves of the batch are in its frames
        p = t.node_parent[i]
        if in_batch[p]:
            assert s._ref_id[i] == s._ref_id[p]
    nodes = np.r_[batch, np.flatnonzero(t.node_joint < 0)]
    rng = np.random.default_rng(1)
    twists = rng.normal(size=(nodes.size, 6))
    tree, lz = s._model_bundle(), s._passive_tensors()

    def evaluate():
        co = Coefficients(*(np.zeros_like(x) for x in s._F))
        for i, v in zip(nodes, twists):
            evaluate_node(i, tree, v, lz, co, True)
        return co.bh.copy(), co.ph.copy(), co.eta.copy(), co.beta.copy()

    shared = evaluate()
    ra = s._rargs
    for i in batch:                      # node by node: a new frame each, an old child's
        tensorize_nodes(np.array([i]), 1, ra.update, ra.solve.passive, ra.tens)
    assert len(set(s._ref_id[batch])) == batch.size
    # the frame of a node with an internal child is that child's: both tensors give the
    # same reference twist for the same motion of the rigid pair
    inner = [i for i in batch if t.node_joint[t.node_A[i]] >= 0]
    assert len(inner) > 0.3 * batch.size
    E, r = s._ref_E, s._ref_r
    for i in inner:
        A = t.node_A[i]
        X_i = xform_dense(E[i], r[i])
        X_A = xform_dense(E[A], r[A]) @ np.linalg.inv(xform_dense(s.Tup_E[A], s.Tup_r[A]))
        assert np.abs(X_i - X_A).max() <= 1e-12 * max(1.0, np.abs(X_A).max())
    mapped = evaluate()
    for a, b, tol in zip(shared, mapped, (1e-12, 1e-10, 1e-12, 1e-12)):
        assert np.abs(a - b).max() <= tol * max(1.0, np.abs(b).max())


@pytest.mark.parametrize("name,make", REGION_TREES, ids=[t[0] for t in REGION_TREES])
def test_rigidified_joints_that_did_not_move_keep_their_nodes(name, make):
    """A region update recomputes the rigid-state coefficients (RGL eq. 6) and frames only
    of the nodes of rigidified joints that were active before it; a joint that joined from
    the update region and is rigidified again keeps its node and the caches keyed by its
    epoch. Over region updates with hybrid steps between them (the region moves, joints
    of the update region are rigidified again), the configuration-dependent coefficients
    (Phi, W, P, D) and frames equal those after recomputing every rigidified joint's node
    (the full rebuild) bit for bit, and the hybrid accelerations (reduced tree and RGL's
    multilevel solve) with the kept nodes and caches equal those after the full rebuild
    with every cache dropped (every node's epoch advanced) to 1e-12. The velocity terms
    of a rigid node's biases are not compared: the front's are computed again at every
    step (rigid-front biases), the others are not read."""
    from articulated.algorithms.node_update import update_nodes
    from articulated.configuration import integrate

    m, h = make(), 1e-3
    q, qd, tau, f = _state(m, 11)
    f[np.random.default_rng(2).random(m.nb) < 0.8] = 0.0
    s = AdaptiveDynamics(m)
    s.set_state(q, qd, tau, f)
    s.prepare_region()
    upd = s.hybrid_args().update
    fixed = (upd.coef.Phi, upd.coef.W, upd.coef.P, upd.coef.D, *upd.frames[:4], *upd.frames[6:])
    kept = 0
    for k, (NU, NA) in enumerate([(6, 3), (8, 4), (8, 2), (6, 5), (9, 3), (7, 4)] * 2):
        qd, _, rigid = s.region_update(q, qd, tau, f, h, max_update=NU, max_active=NA)
        kept += int((~s._rargs.buf.moved[rigid]).sum())
        qdd = {meth: s.hybrid_accelerations(q, qd, tau, f, method=meth).copy()
               for meth in ("reduced", "dca")}
        before = [a.copy() for a in fixed]
        nodes = np.sort(s.tree.node_of_joint[rigid]).astype(np.int64)
        update_nodes(nodes, len(nodes), upd)            # the full rebuild of the rigidified
        for a, b in zip(before, fixed):
            assert np.array_equal(a, b), k
        s._bk.epoch[:] += 1                             # every cache dropped
        for meth, x in qdd.items():
            y = s.hybrid_accelerations(q, qd, tau, f, method=meth)
            assert np.abs(x - y).max() <= 1e-12 * max(1.0, np.abs(y).max()), (k, meth)
        for _ in range(5):
            qd = qd + h * s.hybrid_accelerations(q, qd, tau, f)
            q = integrate(m, q, qd, h)
    assert kept >= 10


def test_a_run_cut_into_stretches_gives_the_same_trajectory():
    """An adaptive run with a time-dependent Python force (the snake's PD gait) is the same
    bit for bit whether taken as one ``run``, as several, or step by step: the simulator's
    time advances as the compiled loop's does (``t += dt``), so each stretch starts at the
    time the last one reached (before, ``t0 + k dt`` restarted it 1 ulp off, and the
    gait's torques, then the chaotic trajectory, followed)."""
    from articulated.bench.contact import snake_gait

    m, q0 = models.snake_bridge(21, return_configuration=True)

    def make():
        return art.Simulator(m, 1e-3, q0=q0, forces=[snake_gait(m)], method="adaptive",
                             max_active=6, update_every=10)

    a = make()
    a.run(120)
    b = make()
    for n in (37, 50, 33):
        b.run(n)
    c = make()
    for _ in range(120):
        c.step()
    assert a.t == b.t == c.t
    assert np.array_equal(a.q, b.q) and np.array_equal(a.qd, b.qd)
    assert np.array_equal(a.q, c.q) and np.array_equal(a.qd, c.qd)
    assert np.abs(np.asarray(a.q) - q0).max() > 1e-3      # the gait moved it


def test_a_python_joint_controller_reads_no_body_pose():
    """A PD controller with a Python reference declares its joints and no body
    (``support``), so the adaptive loop keeps no body pose up to date for it (the
    reduced tree's O(n) pass per step for a force of unknown reach); the trajectory, with
    the snake's contacts, is the same bit for bit as with the same controller behind a
    force that declares nothing."""
    from articulated.bench.contact import snake_gait

    m, q0 = models.snake_bridge(21, return_configuration=True)
    g = snake_gait(m)
    assert g.support(m) == ([], list(range(1, m.nb)))

    class Opaque(art.Force):
        def apply(self, model, t, q, qd, tau, f_ext, kin=None):
            g.apply(model, t, q, qd, tau, f_ext, kin)

    def run(force):
        s = art.Simulator(m, 1e-3, q0=q0, forces=[force], contacts=m.collision,
                          method="adaptive", max_active=6, update_every=10)
        s.run(150)
        return s

    a, b = run(g), run(Opaque())
    assert a._ubody.size == 0 and b._ubody.size == m.nb
    assert np.array_equal(a.q, b.q) and np.array_equal(a.qd, b.qd)
    assert np.abs(np.asarray(a.q) - q0).max() > 1e-3      # the gait moved it
