"""Joint limits by impulses (Gayle, Lin & Manocha 2006, IV.B, after Kokkevis 2004): against
the closed-form single-limit impulse with M from CRBA, and on a pendulum of 200 links."""

import numpy as np
import pytest

import articulated as art

H = 1e-3


def _qd_star(m, q, qd):
    """The unconstrained velocity qd + h ABA(q, qd) of a step (no forces)."""
    return qd + H * art.aba(m, q, qd, np.zeros(m.nv))


@pytest.mark.parametrize("e", [0.0, 0.5, 1.0])
def test_single_limit_impulse_is_kokkevis_closed_form(e):
    """One limit hit within the step: qd+ = qd* + M^-1 e_k j with j = -(1 + e) qd*_k /
    (M^-1)_kk (Kokkevis), M from CRBA, to 1e-9; the limited joint's speed becomes
    -e qd*_k (exactly zero for e = 0, to 1e-12)."""
    m = art.models.pendulum(4, seed=1).with_limits(-0.2, 0.2, joints=[2])
    k = 2
    q0 = np.array([0.3, -0.2, 0.199, 0.1])
    qd0 = np.array([0.5, -1.0, 4.0, 2.0])
    sim = art.Simulator(m, H, limits=True, q0=q0, qd0=qd0, contact_options=dict(limit_e=e))
    sim.step()
    qs = _qd_star(m, q0, qd0)
    Minv = np.linalg.inv(art.crba(m, q0))
    j = -(1.0 + e) * qs[k] / Minv[k, k]
    expect = qs + Minv[:, k] * j
    assert qs[k] > 3.9  # the limit is reached inside the step (gap 1e-3 < h qd*)
    assert np.abs(sim.qd - expect).max() <= 1e-9 * np.abs(expect).max()
    assert abs(sim.qd[k] + e * qs[k]) <= 1e-12 * qs[k]
    assert sim.q[k] <= 0.2 + 1e-12
    c = sim.run(1).contacts
    assert c["limits"][0] <= 1


def test_pendulum_200_never_crosses_its_limits_and_impulses_push_away():
    """Pendulum-200 falling from horizontal with limits +-0.3 rad on every joint but the
    root: over 2 s no joint passes its limit by more than 1e-6 rad; the impulses of a step
    never add kinetic energy (relative 1e-12); the joint impulses M (qd+ - qd*) (CRBA) act
    only on the joints at a limit, each pushing away from it (several limits at once).
    The impulses are those of a run without the energy bound (its scaling of qd+ is no
    impulse); with it, the run reaches a state at 1.958 s whose step, with 5
    limit rows, left a joint 3.6e-4 rad past its limit before the sweeps' shortfall was
    cut back to the limit (contact.py: _clamp_limits)."""
    n = 200
    m = art.models.pendulum(n).with_limits(-0.3, 0.3, joints=range(1, n))
    q0 = np.zeros(n)
    q0[0] = np.pi / 2
    bounded = art.Simulator(m, H, limits=True, q0=q0,
                            contact_options=dict(energy_bound=True)).run(2000)
    assert np.abs(bounded.q[:, 1:]).max() <= 0.3 + 1e-6
    tr = art.Simulator(m, H, limits=True, q0=q0).run(2000)
    c = tr.contacts
    assert np.abs(tr.q[:, 1:]).max() <= 0.3 + 1e-6
    k = c["limits"] > 0
    assert k.sum() >= 50 and c["limits"].max() >= 3
    gain = (c["ke_after"] - c["ke_before"])[k] / c["ke_before"][k]
    assert gain.max() <= 1e-12
    pushing = []
    for i in np.flatnonzero(c["limits"] >= 3)[:8]:
        q, qd = tr.q[i - 1], tr.qd[i - 1]  # the step from record i-1 to record i
        M = art.crba(m, q)
        qs = _qd_star(m, q, qd)
        p = M @ (tr.qd[i] - qs)
        # tolerance: 1e-9 of the impulses, and the rounding of qd+ - qd* (1e-12 of M qd*)
        tol = 1e-9 * np.abs(p).max() + 1e-12 * np.abs(M @ qs).max()
        reach = 2 * H * max(np.abs(qd).max(), np.abs(tr.qd[i]).max())  # a step's motion
        near = np.abs(np.abs(q) - 0.3) <= reach
        near[0] = False
        assert np.abs(p[~near]).max() <= tol
        assert (p[near] * np.sign(q[near]) <= tol).all()  # away from the limit
        pushing.append(int((np.abs(p[near]) > 1e3 * tol).sum()))
    assert len(pushing) == 8 and max(pushing) >= 2  # several limits push at once


def test_limits_bad_input_names_the_joint():
    b = art.ModelBuilder()
    with pytest.raises(ValueError, match="'a'.*lower <= upper"):
        b.add_body("a", None, "revolute", limits=(0.5, -0.5))
    with pytest.raises(ValueError, match="'s'.*revolute and prismatic"):
        b.add_body("s", None, "spherical", limits=(-1, 1))
    with pytest.raises(ValueError, match="'a'.*limits must be"):
        b.add_body("a", None, "revolute", limits=(1.0,))
    b.add_body("a", None, "revolute", limits=(-0.5, None))
    m = b.build()
    assert m.jnt_range.tolist() == [[-0.5, np.inf]] and m.jnt_limited.tolist() == [True]
    with pytest.raises(ValueError, match="'a_joint'.*outside its limits"):
        art.Simulator(m, H, limits=True, q0=np.array([-0.6]))
    with pytest.raises(ValueError, match="limit_e"):
        art.Simulator(m, H, limits=True, contact_options=dict(limit_e=1.5))
    with pytest.raises(ValueError, match="no joint of the model has limits"):
        art.Simulator(art.models.pendulum(3), H, limits=True)
    with pytest.raises(ValueError, match="'link0_joint': lower limit 1.0 > upper"):
        art.models.pendulum(3).with_limits(1.0, 0.0)
    with pytest.raises(ValueError, match="semi_implicit_euler"):
        art.Simulator(m, H, integrator="rk4", limits=True)
