"""The matrix-free accelerated projected gradient (algorithms/apgd.py): its Delassus
operator against J M^-1 J^T from CRBA, its solution against a dense reference solve of the
same cone complementarity problem, and the energy it may not add."""

import numpy as np
import pytest

import articulated as art
from conftest import step_factor


def _scene(seed, nc=10, n=14, world=0.5):
    """A random tree, configuration, velocity and ``nc`` random contacts (bodies, points,
    normals, gaps), the step's factorization, and the dense ``J`` (3 nc, nv) of the
    contacts in their frames with ``M`` from CRBA."""
    from articulated.algorithms.collision import Contacts
    from articulated.algorithms.contact_rows import _frame

    m = art.models.random_tree(n, seed=seed)
    rng = np.random.default_rng(seed)
    q = m.random_configuration(rng)
    qd = rng.normal(size=m.nv)
    pairs = []
    for _ in range(nc):
        a = int(rng.integers(0, m.nb))
        b = -1 if rng.uniform() < world else int(rng.integers(0, m.nb))
        pairs.append((a, b if b != a else -1))
    body = np.array(sorted(pairs), np.int64)
    con = Contacts(np.zeros((nc, 2), np.int64), body, rng.normal(size=(nc, 3)),
                   rng.normal(size=(nc, 3)), rng.uniform(-1e-3, 1e-3, nc),
                   rng.uniform(0.0, 1.0, nc), np.zeros(nc), np.arange(nc, dtype=np.int64))
    con.normal[:] /= np.linalg.norm(con.normal, axis=1)[:, None]
    M = art.crba(m, q)
    R, p = art.forward_kinematics(m, q)
    frame = np.zeros((nc, 3, 3))
    for c in range(nc):
        _frame(con.normal, c, frame)

    def Jp(b, x):
        return art.jacobian(m, q, b, R[b].T @ (x - p[b]))[3:] if b >= 0 else 0.0

    J = np.concatenate([frame[c] @ (Jp(body[c, 0], con.point[c]) - Jp(body[c, 1], con.point[c]))
                        for c in range(nc)])
    im, fac = step_factor(m, q, qd)
    return m, q, qd, con, im, fac, M, J


def _rows(m, con, im, fac, qd, h=1e-3):
    from articulated.algorithms.apgd import delassus_buffers, delassus_rows
    from articulated.algorithms.contact_rows import contact_buffers

    nc = con.body.shape[0]
    rows = contact_buffers(nc, m.nv)
    op = delassus_buffers(nc, m.nb, m.nv)
    delassus_rows(im, fac, con, nc, qd, h, 0.0, rows, op)
    return rows, op


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_delassus_operator_is_J_Minv_JT(seed):
    """``delassus_apply`` = J M^-1 J^T x and its ``w`` = M^-1 J^T x (full pass), and
    ``delassus_speeds`` = J qd, with J from ``art.jacobian`` and M from CRBA (1e-9), on a
    random tree with contacts against the world and between its bodies."""
    from articulated.algorithms.apgd import delassus_apply, delassus_scales, delassus_speeds

    m, q, qd, con, im, fac, M, J = _scene(seed)
    rows, op = _rows(m, con, im, fac, qd)
    nc = con.body.shape[0]
    rng = np.random.default_rng(seed + 10)
    x = rng.normal(size=(nc, 3))
    Kx = np.zeros((nc, 3))
    delassus_apply(im, fac, op, nc, x, Kx, True)
    K = J @ np.linalg.solve(M, J.T)
    assert np.abs(Kx.ravel() - K @ x.ravel()).max() <= 1e-9 * np.abs(K).max() * np.abs(x).max()
    w = np.linalg.solve(M, J.T @ x.ravel())
    assert np.abs(op.w - w).max() <= 1e-9 * np.abs(w).max()
    Kp = np.zeros((nc, 3))
    delassus_apply(im, fac, op, nc, x, Kp, False)   # the path only: the same rows
    assert np.abs(Kp - Kx).max() <= 1e-12 * np.abs(Kx).max()
    # the preconditioner: a contact against the world gets exactly 1 / sqrt(K_nn)
    delassus_scales(im, fac, op, nc)
    for c in range(nc):
        if con.body[c, 1] < 0:
            assert abs(op.s[c] ** -2 - K[3 * c, 3 * c]) <= 1e-9 * K[3 * c, 3 * c], c
    v = np.zeros((nc, 3))
    delassus_speeds(im, fac, op, nc, qd, v)
    assert np.abs(v.ravel() - J @ qd).max() <= 1e-9 * np.abs(J @ qd).max()
    assert np.abs(rows.vn0[:nc] - v[:, 0]).max() <= 1e-12 * np.abs(v).max()


def _cone(x, mu):
    n, t = x[0], x[1:]
    tt = np.linalg.norm(t)
    if tt <= mu * n:
        return x
    if mu * tt <= -n:
        return np.zeros(3)
    nn = (n + mu * tt) / (1 + mu * mu)
    return np.concatenate([[nn], t * mu * nn / tt])


def _reference(K, b, mu, iters=200000):
    """The dense reference: projected gradient with the fixed step 1 / lambda_max(K) on
    the cone complementarity problem, run until it stops moving."""
    nc = len(mu)
    t = 1.0 / np.linalg.eigvalsh(K).max()
    x = np.zeros(3 * nc)
    for _ in range(iters):
        y = x - t * (K @ x + b)
        y = np.concatenate([_cone(y[3 * c:3 * c + 3], mu[c]) for c in range(nc)])
        if np.abs(y - x).max() <= 1e-15 * max(np.abs(x).max(), 1e-30):
            break
        x = y
    return x


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_apgd_meets_a_dense_reference_and_adds_no_energy(seed):
    """``apgd_impulses`` (no restitution) on random small scenes: its residual is at most
    ``tol``; the contact velocities ``J qd+`` it gives are those of a dense reference
    solve of the same problem (projected gradient on K = J M^-1 J^T to a standstill) to
    ``10 tol`` [m/s] (the residual bounds the velocity error, K being well conditioned
    here); and the kinetic energy never increases (from zero and from a warm start)."""
    from articulated.algorithms.apgd import apgd_impulses

    m, q, qd, con, im, fac, M, J = _scene(seed, nc=8)
    rows, op = _rows(m, con, im, fac, qd)
    nc = con.body.shape[0]
    tol = 1e-8
    qd1 = np.zeros(m.nv)
    it, res = apgd_impulses(im, fac, op, rows, nc, qd, qd1, tol, 5000, np.zeros(nc, np.int64))
    assert res <= tol and 0 < it < 5000
    K = J @ np.linalg.solve(M, J.T)
    target = np.zeros(3 * nc)
    target[0::3] = rows.target[:nc]
    b = J @ qd - target
    x = _reference(K, b, rows.mu[:nc])
    v_ref = J @ (qd + np.linalg.solve(M, J.T @ x))
    assert np.abs(J @ qd1 - v_ref).max() <= 10 * tol
    assert np.abs(qd1 - qd - np.linalg.solve(M, J.T @ rows.P[:nc].ravel())).max() <= 1e-9
    T = lambda v: 0.5 * v @ M @ v
    assert T(qd1) <= T(qd) * (1 + 1e-12)
    # from a bad warm start (large impulses in the cones): still no energy added
    rows.P[:nc] = 0.0
    rows.P[:nc, 0] = 10.0
    apgd_impulses(im, fac, op, rows, nc, qd, qd1, tol, 3, np.zeros(nc, np.int64))
    assert T(qd1) <= T(qd) * (1 + 1e-12)


@pytest.mark.parametrize("method", ["aba", "adaptive"])
def test_pipelines_report_residuals_and_the_matrix_free_solve_adds_no_energy(method):
    """A capsule chain-40 dropped on its tip (a small pile: impacts, sliding, self-contact)
    with ``solver="apgd"`` on both pipelines: every step solved matrix-free (``solver`` 1),
    the impulses never add kinetic energy (``ke_after <= ke_before``), the solve reaches
    ``tol`` on at least 90 % of the steps with rows (residual reported), nothing sinks
    deeper than 1 mm; and with ``solver="sequential"`` the steps record solver 0 and a
    residual of their own."""
    m, q0 = art.models.capsule_chain(40, link_length=0.02, radius=0.002, mass=0.02,
                                     upright=True, bend=0.05, height=0.02,
                                     return_configuration=True)
    kw = dict(method="adaptive", max_active=20, update_every=10) if method == "adaptive" else {}
    tol = 1e-6
    sim = art.Simulator(m, 1e-3, contacts=m.collision, q0=q0,
                        contact_options=dict(solver="apgd", tol=tol, iterations=2000), **kw)
    c = sim.run(400).contacts
    solved = c["sweeps"] > 0
    assert solved.sum() >= 100
    assert (c["solver"][c["n"] > 0] == 1).all()
    ok = ~np.isnan(c["ke_before"])
    assert (c["ke_after"][ok] <= c["ke_before"][ok] * (1 + 1e-12) + 1e-15).all()
    assert (c["residual"][solved] <= tol).mean() >= 0.9
    assert c["max_depth"].max() <= 1e-3
    sim = art.Simulator(m, 1e-3, contacts=m.collision, q0=q0,
                        contact_options=dict(solver="sequential"), **kw)
    c = sim.run(100).contacts
    assert (c["solver"] == 0).all() and (c["residual"] >= 0).all()
    assert (c["residual"][c["sweeps"] == 0] == 0).all()


def test_auto_picks_by_contacts_times_dofs():
    """``solver="auto"``: matrix-free where the active contacts times nv reach
    ``APGD_WORK`` with the full model, sequential impulses on the hybrid body (unless
    ``"apgd"`` is asked for); the option is checked."""
    from articulated.simulation.contact import APGD_WORK, apgd_work

    assert apgd_work("auto") == APGD_WORK and apgd_work("apgd") == 0
    assert apgd_work("sequential") > 10 ** 15
    m, q0 = art.models.capsule_chain(5, return_configuration=True)
    with pytest.raises(ValueError, match="solver"):
        art.Simulator(m, 1e-3, contacts=m.collision, q0=q0, contact_options=dict(solver="pgs"))
    for solver, work in (("auto", apgd_work("sequential")), ("apgd", 0)):
        sim = art.Simulator(m, 1e-3, contacts=m.collision, q0=q0, method="adaptive",
                            max_active=2, contact_options=dict(solver=solver))
        assert sim._contact_loop().opt.apgd_work == work
