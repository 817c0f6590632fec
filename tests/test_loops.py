"""Closed loops: loop-joint rows, the SRM solver and the reference KKT solver (issue 7).

Oracles: a NumPy evaluation of g_L from world poses (model.loop_residual_np), finite
differences of g_L, the power identity lambda . G qd = sum f_i . v_i, an independent 1-DOF
Lagrangian of the four-bar (closed-form loop closure, scipy solve_ivp), and the dense KKT
solver with Baumgarte stabilization.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import articulated as art
from articulated.algorithms import loops
from articulated.builder import ModelBuilder
from articulated.model import loop_residual_np
from articulated.configuration import integrate
from articulated.simulation.integrators import rk4_step
from articulated.simulation.srm import KKTSolver, SRMSolver

warnings.filterwarnings("ignore", category=Warning, module="numba")


def _rot(rng):
    u = rng.normal(size=4)
    w, x, y, z = u / np.linalg.norm(u)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


@pytest.fixture(scope="module")
def random_loop_model():
    """A random tree with every joint type plus 8 loop joints of every kind (some on the
    world)."""
    rng = np.random.default_rng(1)
    m0 = art.models.random_tree(8, seed=3, joint_types=("revolute", "prismatic", "spherical", "free"))
    kinds = ["point", "spherical", "revolute", "weld"]
    lj = []
    for k in range(8):
        a, b = rng.choice(np.arange(-1, m0.nb), 2, replace=False)
        kind = kinds[k % 4]
        lj.append(dict(name=f"l{k}", body_a=int(a), body_b=int(b), kind=kind, Ea=_rot(rng),
                       ra=rng.normal(size=3), Eb=_rot(rng), rb=rng.normal(size=3),
                       axis=rng.normal(size=3) if kind in ("point", "revolute") else None))
    m = art.Model(body_name=m0.body_name, joint_name=m0.joint_name, body_parent=m0.body_parent,
                  jnt_type=m0.jnt_type, jnt_axis=m0.jnt_axis, jnt_Xtree_E=m0.jnt_Xtree_E,
                  jnt_Xtree_r=m0.jnt_Xtree_r, body_mass=m0.body_mass, body_com=m0.body_com,
                  body_I_com=m0.body_I_com, gravity=m0.gravity, loop_joints=lj)
    q = m.random_configuration(rng)
    qd = rng.normal(size=m.nv)
    return m, q, qd, rng


# ------------------------------------------------------------------ loop rows

def test_loop_residual_matches_numpy(random_loop_model):
    m, q, qd, _ = random_loop_model
    assert m.nloops == 8 and m.nc == 2 * (2 + 3 + 5 + 6)
    g = loops.loop_residual(m, q)
    R, p = art.forward_kinematics(m, q)
    ref = []
    for l in range(m.nloops):
        a, b = m.loop_body_a[l], m.loop_body_b[l]
        Ra, pa = (R[a], p[a]) if a >= 0 else (np.eye(3), np.zeros(3))
        Rb, pb = (R[b], p[b]) if b >= 0 else (np.eye(3), np.zeros(3))
        ref.append(loop_residual_np(m.loop_kind[l], Ra, pa, Rb, pb, m.loop_Ea[l], m.loop_ra[l],
                                    m.loop_Eb[l], m.loop_rb[l], m.loop_axis[l], m.loop_T[l]))
    np.testing.assert_allclose(g, np.concatenate(ref), atol=1e-12)


def test_loop_velocity_is_derivative_of_residual(random_loop_model):
    m, q, qd, _ = random_loop_model
    d = 1e-6
    fd = (loops.loop_residual(m, integrate(m, q, qd, d))
          - loops.loop_residual(m, integrate(m, q, qd, -d))) / (2 * d)
    Gv = loops.loop_velocity(m, q, qd)
    np.testing.assert_allclose(Gv, fd, atol=1e-8 * max(1.0, np.abs(Gv).max()))
    G = loops.loop_jacobian(m, q)
    np.testing.assert_allclose(G @ qd, Gv, atol=1e-12)


def test_loop_forces_are_transpose(random_loop_model):
    """lambda . (G qd) equals the power of the body forces -J^T lambda ... with sign +:
    sum_bodies (J^T lambda) . v = lambda . G qd."""
    m, q, qd, rng = random_loop_model
    lam = rng.normal(size=m.nc)
    Ja, Jb = loops.loop_blocks(m, q)
    v = art.body_velocities(m, q, qd)
    f = np.zeros((m.nb, 6))
    for l in range(m.nloops):
        sl = slice(m.loop_cadr[l], m.loop_cadr[l] + m.loop_nc[l])
        for J, b in ((Ja, m.loop_body_a[l]), (Jb, m.loop_body_b[l])):
            if b >= 0:
                f[b] += J[sl].T @ lam[sl]
    assert np.sum(f * v) == pytest.approx(lam @ loops.loop_velocity(m, q, qd), rel=1e-12)
    # and G^T lambda equals the generalized force of those body forces (RNEA, no gravity)
    tau = art.rnea(m, q, np.zeros(m.nv), np.zeros(m.nv), -f, gravity=False)
    np.testing.assert_allclose(tau, loops.loop_jacobian(m, q).T @ lam, atol=1e-10)


def test_Gdot_qd_is_second_derivative(random_loop_model):
    m, q, qd, _ = random_loop_model
    d = 1e-4
    g2 = (loops.loop_residual(m, integrate(m, q, qd, d)) - 2 * loops.loop_residual(m, q)
          + loops.loop_residual(m, integrate(m, q, qd, -d))) / d ** 2
    gd = loops.loop_Gdot_qd(m, q, qd)
    np.testing.assert_allclose(gd, g2, atol=1e-5 * max(1.0, np.abs(gd).max()))


# ------------------------------------------------------------------ bad loops

def _two_links():
    b = ModelBuilder()
    I = np.diag([1e-4, 0.1, 0.1])
    b.add_body("l1", None, "revolute", axis=(0, 1, 0), mass=1, com=(0.5, 0, 0), inertia=I)
    b.add_body("l2", "l1", "revolute", axis=(0, 1, 0), origin_xyz=(1, 0, 0), mass=1,
               com=(0.5, 0, 0), inertia=I)
    return b


@pytest.mark.parametrize("args, kw, match", [
    (("l1", (0, 0, 0), "l1", (1, 0, 0), "point"), dict(axis=(0, 1, 0)), "connects body 'l1' to itself"),
    ((None, (0, 0, 0), None, (1, 0, 0), "spherical"), {}, "connects the world to itself"),
    (("l1", (0, 0, 0), "l2", (1, 0, 0), "hinge"), {}, "unknown kind 'hinge'"),
    (("l1", (0, 0, 0), "l2", (1, 0, 0), "revolute"), {}, "needs an axis"),
    (("l1", (0, 0, 0), "l2", (1, 0, 0), "revolute"), dict(axis=(0, 0, 0)), "axis must be non-zero"),
    (("l1", (0, 0, 0), "l2", (1, 0, 0), "weld"), dict(axis=(0, 1, 0)), "takes no axis"),
    (("l1", (0, 0, np.nan), "l2", (1, 0, 0), "spherical"), {}, "not finite"),
])
def test_bad_loop_joint_raises_at_add(args, kw, match):
    with pytest.raises(ValueError, match=match):
        _two_links().add_loop_joint(*args, **kw)


def test_bad_loop_joint_raises_at_build():
    b = _two_links()
    b.add_loop_joint("l2", (1, 0, 0), "ghost", (0, 0, 0), "spherical")
    with pytest.raises(ValueError, match="unknown body_b 'ghost'"):
        b.build()
    # a revolute loop joint on the tree joint l1-l2 (same point, same axis): a duplicate
    b = _two_links()
    b.add_loop_joint("l1", (1, 0, 0), "l2", (0, 0, 0), "revolute", axis=(0, 1, 0), name="dup")
    with pytest.raises(ValueError, match="'dup' duplicates tree joint 'l2_joint'"):
        b.build()
    # l1's tip and l2's base coincide for every angle: a point loop there duplicates too
    b = _two_links()
    b.add_loop_joint("l2", (0, 0, 0), "l1", (1, 0, 0), "point", axis=(0, 1, 0), name="dup2")
    with pytest.raises(ValueError, match="duplicates tree joint"):
        b.build()
    # points that stay 1 m apart whatever the angle: can never close
    b = _two_links()
    b.add_loop_joint("l1", (0, 0, 0), "l2", (0, 0, 0), "spherical", name="far")
    with pytest.raises(ValueError, match="'far' .* can never close"):
        b.build()
    # a loop joint that does constrain the tree joint is fine (l2 tip pinned to the world)
    b = _two_links()
    b.add_loop_joint("l2", (1, 0, 0), None, (2, 0, 0), "point", axis=(0, 1, 0))
    m = b.build()
    assert (m.nloops, m.nc) == (1, 2)
    with pytest.raises(ValueError, match="defined twice"):
        b.add_loop_joint("l2", (1, 0, 0), None, (2, 0, 0), "point", axis=(0, 1, 0), name="loop0")


def test_models_without_loops_unchanged():
    m = art.models.pendulum(5)
    assert (m.nloops, m.nc) == (0, 0)
    assert loops.loop_residual(m, m.neutral()).shape == (0,)
    s = SRMSolver(m, 0.01, integrator="rk4", iterations=1)
    q1, qd1 = s.step(m.neutral() + 0.3, np.zeros(m.nv))
    q2, qd2 = rk4_step(m, lambda t, q, qd: art.aba(m, q, qd, np.zeros(m.nv)), 0.0,
                       m.neutral() + 0.3, np.zeros(m.nv), 0.01)
    np.testing.assert_allclose(q1, q2, atol=1e-14)
    np.testing.assert_allclose(qd1, qd2, atol=1e-13)


# ------------------------------------------------------------------ models

@pytest.mark.parametrize("make, dof", [
    (lambda: art.models.square_chain(5), 6),
    (lambda: art.models.square_chain(3, loop_kind="revolute"), 4),
    (lambda: art.models.square_net(3, 4), 3),
    (lambda: art.models.four_bar(), 1),
    (lambda: art.models.four_bar(loop_kind="point"), 1),
    (lambda: art.models.strandbeest_leg(), 1),
])
def test_models_are_closed_at_q0(make, dof):
    m = make()
    q = m.neutral()
    assert np.abs(loops.loop_residual(m, q)).max() < 1e-12
    G = loops.loop_jacobian(m, q)
    assert m.nv - np.linalg.matrix_rank(G, tol=1e-9) == dof


def test_strandbeest_published_geometry():
    """Jansen's link lengths hold at every crank angle and the foot path has its flat
    ground segment (Jansen's units: lowest point about -91.8, stride about 68)."""
    L = art.models.JANSEN
    foot = []
    for th in np.linspace(0, 2 * np.pi, 37):
        P = art.models.strandbeest_points(th, scale=1.0)
        for (u, v), k in [(("O", "B"), "m"), (("B", "C"), "j"), (("Z", "C"), "b"),
                          (("Z", "D"), "d"), (("C", "D"), "e"), (("B", "E"), "k"),
                          (("Z", "E"), "c"), (("D", "F"), "f"), (("E", "F"), "g"),
                          (("F", "G"), "h"), (("E", "G"), "i")]:
            assert np.linalg.norm(P[u] - P[v]) == pytest.approx(L[k], abs=1e-9)
        foot.append(P["G"][[0, 2]])
    foot = np.array(foot)
    assert foot[:, 1].min() == pytest.approx(-91.8, abs=0.2)
    assert 60 < np.ptp(foot[:, 0]) < 75
    assert np.sum(foot[:, 1] < foot[:, 1].min() + 1.0) >= 10  # a flat stretch


# ------------------------------------------------------------------ four-bar vs 1-DOF

def _four_bar_1dof(theta0, T, a=1.0, b=3.5, c=3.0, d=4.0, rho=1.0, g=9.81, r_ratio=1e-3):
    """Crank angle theta(t) of the four-bar from rest, by its one-DOF Lagrangian:
    M(theta) theta'' + M'(theta) theta'^2 / 2 + V'(theta) = 0, with the loop closure solved
    in closed form (circle intersection, branch fixed at theta0) and dX/dtheta by complex-step
    differentiation. Independent of the library."""
    O4 = np.array([d, 0.0])

    def branch_sign():
        A = a * np.array([np.cos(theta0), np.sin(theta0)])
        Bs = _B(theta0, 1), _B(theta0, -1)
        return 1 if Bs[0][1] >= Bs[1][1] else -1

    def _B(th, sgn):
        A = a * np.array([np.cos(th), np.sin(th)])
        dv = O4 - A
        D = np.sqrt(dv[0] ** 2 + dv[1] ** 2)
        al = (b * b - c * c + D * D) / (2 * D)
        hh = np.sqrt(b * b - al * al)
        u = dv / D
        w = np.array([-u[1], u[0]])
        return A + al * u + sgn * hh * w

    sgn = branch_sign()

    def points(th):
        A = a * np.array([np.cos(th), np.sin(th)])
        B = _B(th, sgn)
        # COMs of crank, coupler, rocker and their direction vectors
        cs = [A / 2, (A + B) / 2, (O4 + B) / 2]
        us = [A, B - A, B - O4]
        return cs, us

    Ls = np.array([a, b, c])
    ms = rho * Ls
    Is = ms * (Ls ** 2 + 3 * (r_ratio * Ls) ** 2) / 12.0

    def MV(th):
        hc = 1e-30
        cs, us = points(th + 1j * hc)
        dc = [np.imag(x) / hc for x in cs]
        # angular rate of a direction u: (u_x u_z' - u_z u_x') / |u|^2
        da = [(np.real(u[0]) * np.imag(u[1]) - np.real(u[1]) * np.imag(u[0])) / hc
              / (np.real(u[0]) ** 2 + np.real(u[1]) ** 2) for u in us]
        cs_r = [np.real(x) for x in cs]
        M = sum(m * (v @ v) for m, v in zip(ms, dc)) + sum(I * w * w for I, w in zip(Is, da))
        V = sum(m * g * x[1] for m, x in zip(ms, cs_r))
        return M, V

    def rhs(t, y):
        th, om = y
        e = 1e-5
        M, _ = MV(th)
        Mp = (MV(th + e)[0] - MV(th - e)[0]) / (2 * e)
        Vp = (MV(th + e)[1] - MV(th - e)[1]) / (2 * e)
        return [om, -(0.5 * Mp * om * om + Vp) / M]

    return solve_ivp(rhs, (0, T), [theta0, 0.0], method="DOP853", rtol=1e-11, atol=1e-12,
                     dense_output=True)


def test_four_bar_matches_one_dof_lagrangian():
    theta0, T = 0.5, 2.0
    sol = _four_bar_1dof(theta0, T)
    ts = np.linspace(0.25, T, 8)
    ref = sol.sol(ts)[0]
    m = art.models.four_bar(theta0, loop_kind="point")
    # the reference solver agrees to RK4 accuracy (checks the oracle and G, G-dot)
    k = KKTSolver(m, beta=20.0)
    t, Q, _, _ = k.run(m.neutral(), np.zeros(m.nv), 0.005, int(T / 0.005), record_every=50)
    np.testing.assert_allclose(theta0 - Q[1:, 0], ref, atol=2e-6)
    # SRM (constant multipliers over a step: second order at convergence, measured
    # docs/results/closed-loops.md), default S = 3 iterations: small error shrinking with h
    for integ in ("rk2", "rk4"):
        errs = []
        for h in (0.01, 0.005, 0.0025):
            s = SRMSolver(m, h, integrator=integ)
            t, Q, _, drift = s.run(m.neutral(), np.zeros(m.nv), int(round(T / h)),
                                   record_every=int(round(0.25 / h)))
            errs.append(np.abs(theta0 - Q[1:, 0] - ref).max())
            assert drift.max() < 5e-3
        assert errs[2] < 5e-4, (integ, errs)
        assert errs[2] < errs[0] / 4, (integ, errs)
    # converged iterations: the fixed point is second order in h
    errs = []
    for h in (0.005, 0.0025):
        s = SRMSolver(m, h, integrator="rk4", iterations=30)
        t, Q, _, _ = s.run(m.neutral(), np.zeros(m.nv), int(round(T / h)),
                           record_every=int(round(0.25 / h)))
        errs.append(np.abs(theta0 - Q[1:, 0] - ref).max())
    assert 1.8 < np.log2(errs[0] / errs[1]) < 2.3, errs


# ------------------------------------------------------------------ SRM vs reference

@pytest.mark.parametrize("make, T", [(lambda: art.models.square_chain(4), 0.4),
                                     (lambda: art.models.square_net(2, 3), 1.0)])
def test_srm_matches_reference(make, T):
    """Before the square chain's first singular configuration (four links in line, about
    t = 0.5 s; Ascher & Lin avoid it too), SRM agrees with the KKT/Baumgarte reference to
    within the drift bound."""
    m = make()
    href = 0.002
    _, Qr, _, dr = KKTSolver(m, beta=20.0).run(m.neutral(), np.zeros(m.nv), href,
                                                int(round(T / href)), record_every=10 ** 9)
    assert dr.max() < 1e-8
    for h, tol in ((0.005, 3e-4), (0.0025, 8e-5)):
        s = SRMSolver(m, h, integrator="rk2", iterations=3)
        _, Q, _, drift = s.run(m.neutral(), np.zeros(m.nv), int(round(T / h)),
                               record_every=10 ** 9)
        assert np.abs(Q[-1] - Qr[-1]).max() < tol
        assert drift.max() < tol


def test_drift_bounded_over_10s_and_shrinks():
    """Loop drift of the veil over 10 s stays small and shrinks with the step and with
    the number of iterations."""
    m = art.models.square_net(2, 3)
    res = {}
    for h, S in ((0.01, 2), (0.01, 3), (0.005, 3)):
        s = SRMSolver(m, h, integrator="rk2", iterations=S)
        _, _, _, drift = s.run(m.neutral(), np.zeros(m.nv), int(round(10 / h)),
                               record_every=10 ** 9)
        assert np.isfinite(drift).all()
        res[h, S] = drift.max()
    assert res[0.01, 3] < 1e-3
    assert res[0.01, 3] < res[0.01, 2]
    assert res[0.005, 3] < 0.5 * res[0.01, 3]
    # the four-bar (one loop) over 10 s
    m = art.models.four_bar(loop_kind="revolute")
    _, _, _, drift = SRMSolver(m, 0.005, integrator="rk4").run(
        m.neutral(), np.zeros(m.nv), 2000, record_every=10 ** 9)
    assert drift.max() < 1e-3


def test_strandbeest_60s_no_drift_growth():
    from articulated.algorithms.loops import consistent_velocity

    m = art.models.strandbeest_leg()
    qd = np.zeros(m.nv)
    qd[0] = 2 * np.pi
    qd = consistent_velocity(m, m.neutral(), qd)
    qd *= 2 * np.pi / qd[0]
    assert np.abs(loops.loop_velocity(m, m.neutral(), qd)).max() < 1e-12
    h = 0.002
    s = SRMSolver(m, h, integrator="rk2")
    _, Q, QD, drift = s.run(m.neutral(), qd, int(60 / h), record_every=int(1 / h))
    assert np.isfinite(Q).all() and np.isfinite(QD).all()
    n10 = int(10 / h)
    assert drift.max() < 2e-2  # [m], links of 0.4-0.66 m
    assert drift[-n10:].max() <= drift[:n10].max()
    assert (QD[:, 0] > 0).all()  # the crank keeps turning


def test_iterations_do_not_grow_with_n():
    """The SRM residual contracts per iteration by the same factor for every chain length,
    and the iterations needed (Ascher & Lin, Table 4.1) do not grow with n."""
    from articulated.bench.loops import drift_run, iterations_needed

    ratios, needed = [], []
    for n in (4, 32, 256):
        m = art.models.square_chain(n)
        s = SRMSolver(m, 0.005, integrator="rk2", iterations=4)
        s.run(m.neutral(), np.zeros(m.nv), 40, record_every=10 ** 9)
        ratios.append(s.z_hist[-1] / s.z_hist[0])
        if n < 256:
            d = {S: drift_run(m, 0.005, 0.4, S)[0] for S in (2, 3, 4, 6)}
            needed.append(iterations_needed(d))
    assert max(ratios) < 0.35
    assert max(ratios) < 3 * min(ratios)
    assert max(needed) <= 3, needed


def test_simulator_method_srm():
    m = art.models.four_bar(loop_kind="point")
    sim = art.Simulator(m, 0.005, integrator="rk2", method="srm", srm=dict(iterations=3))
    traj = sim.run(100, record_every=100)
    s = SRMSolver(m, 0.005, integrator="rk2", iterations=3)
    _, Q, _, _ = s.run(m.neutral(), np.zeros(m.nv), 100, record_every=100)
    np.testing.assert_allclose(traj.q[-1], Q[-1], atol=1e-12)
    assert abs(traj.total[-1] - traj.total[0]) < 1e-2 * abs(traj.total[0])
    with pytest.raises(ValueError, match="unknown SRM integrator"):
        art.Simulator(m, 0.01, integrator="rk45", method="srm")
    with pytest.raises(ValueError, match="eps must be"):
        SRMSolver(m, 0.01, eps=-1.0)


def test_bench_loops_quick(tmp_path):
    """`articulated bench loops --quick` runs and writes its tables and figures."""
    from articulated.cli import main

    assert main(["bench", "loops", "--quick", "--out", str(tmp_path)]) == 0
    text = (tmp_path / "closed-loops-results-quick.md").read_text()
    assert "Table 4.1" in text and "Table 4.3" in text and "Fitted log-log slope" in text
    for name in ("closed-loops-cost.png", "closed-loops-chain.png",
                 "closed-loops-strandbeest.png"):
        assert (tmp_path / name).stat().st_size > 10_000


def test_srm_3d_quaternion_loops_match_reference():
    """A 3D tree with spherical and free joints closed by a spherical and a revolute loop:
    SRM (RK4) agrees with the KKT reference over a short horizon."""
    b = ModelBuilder()
    I = np.diag([0.02, 0.1, 0.1])
    b.add_body("a", None, "spherical", mass=1.0, com=(0.5, 0, 0), inertia=I)
    b.add_body("b", "a", "revolute", axis=(0, 0, 1), origin_xyz=(1, 0, 0), mass=1.0,
               com=(0.5, 0, 0), inertia=I)
    b.add_body("c", None, "spherical", origin_xyz=(1.5, 0.5, 0.0), mass=1.0, com=(0.0, -0.25, 0),
               inertia=I)
    b.add_body("d", None, "free", origin_xyz=(1.0, -1.0, 0.0), mass=0.5, com=(0, 0, 0),
               inertia=0.5 * I)
    # b's tip (2, 0, 0) meets c's end: c spans (1.5, 0.5, 0) -> (2, 0, 0)
    b.add_loop_joint("b", (1, 0, 0), "c", (0.5, -0.5, 0.0), "spherical")
    # the free body d hinged to a's middle point (0.5, 0, 0), axis z
    b.add_loop_joint("a", (0.5, 0, 0), "d", (-0.5, 1.0, 0.0), "revolute", axis=(0, 0, 1))
    m = b.build()
    q = m.neutral()
    assert np.abs(loops.loop_residual(m, q)).max() < 1e-12
    rng = np.random.default_rng(0)
    qd = loops.consistent_velocity(m, q, rng.normal(size=m.nv))
    T, href = 0.3, 0.002
    _, Qr, QDr, dr = KKTSolver(m, beta=20.0).run(q, qd, href, int(round(T / href)),
                                                 record_every=10 ** 9)
    assert dr.max() < 1e-6
    s = SRMSolver(m, 0.0025, integrator="rk4")
    _, Q, QD, drift = s.run(q, qd, int(round(T / 0.0025)), record_every=10 ** 9)
    assert drift.max() < 1e-3
    R1, p1 = art.forward_kinematics(m, Q[-1])
    R2, p2 = art.forward_kinematics(m, Qr[-1])
    assert np.abs(p1 - p2).max() < 2e-3 and np.abs(R1 - R2).max() < 2e-3


def test_srm_kernel_allocates_nothing():
    """NRT allocation statistics stay unchanged across SRM steps (the whole step is one
    kernel over preallocated arrays; subprocess: NUMBA_NRT_STATS must be set before numba
    is imported)."""
    import os
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent("""
        import warnings; warnings.filterwarnings("ignore")
        import numpy as np
        from numba.core.runtime import rtsys
        import articulated as art
        from articulated.simulation.srm import SRMSolver

        for model in (art.models.square_chain(6), art.models.square_net(2, 2),
                      art.models.four_bar()):
            for integ in ("rk2", "rk4", "euler"):
                s = SRMSolver(model, 0.005, integrator=integ)
                q, qd = model.neutral(), np.zeros(model.nv)
                q, qd = s.step(q, qd)  # compile
                before = rtsys.get_allocation_stats()
                for _ in range(5):
                    q, qd = s.step(q, qd)
                after = rtsys.get_allocation_stats()
                assert after.alloc == before.alloc and after.free == before.free, (before, after)
        print("OK")
    """)
    env = dict(os.environ, NUMBA_NRT_STATS="1")
    res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=600)
    assert res.returncode == 0 and "OK" in res.stdout, res.stdout + res.stderr[-3000:]
