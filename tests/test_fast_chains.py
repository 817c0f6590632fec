"""Chains whose links turn at hundreds of rad/s with contacts on: the substeps of a step
that turns bodies fast move by RK4, and post-stabilization adds no kinetic energy
(:mod:`articulated.simulation.contact_loop`)."""

import numpy as np

import articulated as art


def _energies(m, tr):
    return np.array([sum(art.energy(m, q, qd)) for q, qd in zip(tr.q, tr.qd)])


def test_a_spinning_chain_keeps_its_energy_in_substeps():
    """A free chain of 20 capsules without gravity, its hinges at up to 200 rad/s (bodies
    at up to about 360 rad/s), 0.3 s at dt = 1 ms (every step moved by RK4 for
    ``max_rotation``): its energy stays within 1e-3 of the start with the default options
    (RK4 substeps of at most 0.1 rad; measured 3.9e-4) and within 1e-4 with
    ``max_rotation = 0.025`` (substeps of at most 0.05 rad; RK4's energy error falls as
    the fourth power of the substep's turn). Semi-implicit Euler substeps multiplied it
    by 10."""
    m, q0 = art.models.capsule_chain(20, link_length=0.05, radius=0.005, mass=0.05,
                                     height=10.0, gravity=(0.0, 0.0, 0.0),
                                     return_configuration=True)
    qd0 = np.zeros(m.nv)
    qd0[6:] = 200.0 * np.cos(np.arange(m.nv - 6))
    E0 = sum(art.energy(m, q0, qd0))
    drift = {}
    for theta in (0.05, 0.025):
        tr = art.Simulator(m, 1e-3, contacts=m.collision, q0=q0, qd0=qd0,
                           contact_options=dict(max_rotation=theta)).run(300)
        drift[theta] = np.abs(_energies(m, tr) / E0 - 1.0).max()
        assert np.abs(tr.qd).max() > 150.0
    assert drift[0.05] < 1e-3
    assert drift[0.025] < 1e-4
    assert drift[0.025] < 0.25 * drift[0.05]


def test_the_pile_runs_without_the_energy_bound():
    """The pile scene at 100 links (2 cm, 20 g, standing on its tip, dropped from 5 cm)
    with the default contact options: it whips (joints at hundreds of rad/s), lands and
    piles for 1 s without diverging (it diverged at 0.68 s), its energy never above the
    start, less than 1 mm deep."""
    m, q0 = art.models.capsule_chain(100, link_length=0.02, radius=0.002, mass=0.02,
                                     upright=True, bend=0.05, height=0.05,
                                     return_configuration=True)
    E0 = sum(art.energy(m, q0, np.zeros(m.nv)))
    tr = art.Simulator(m, 1e-3, contacts=m.collision, q0=q0).run(1000)
    E = _energies(m, tr)
    assert E.max() <= E0 * (1.0 + 1e-9)
    assert E[-1] < 0.5 * E0
    assert np.abs(tr.qd).max() > 100.0
    assert tr.contacts["max_depth"].max() < 1e-3


def test_a_whipping_pile_gains_no_energy_in_either_pipeline():
    """The 300-link pile (2 cm, 20 g, standing on its tip, dropped from 5 cm) with the
    default contact options, 0.7 s, the full model and adaptive N_A = 60: the energy never
    rises above its start. Its links turn at up to about 170 rad/s as it folds, and the
    joint-space inertia changes so fast that the same joint velocities are worth 171 J at
    the start of a substep and 105 J at its end: impulses computed at a substep's start but
    added to its end velocities raised the energy by 43 J (full) and 131 J (adaptive) in
    one step (``_finish``, ``hybrid_contact_substep``)."""
    m, q0 = art.models.capsule_chain(300, link_length=0.02, radius=0.002, mass=0.02,
                                     upright=True, bend=0.05, height=0.05,
                                     return_configuration=True)
    E0 = sum(art.energy(m, q0, np.zeros(m.nv)))
    for kw in ({}, dict(method="adaptive", max_active=60, update_every=10)):
        tr = art.Simulator(m, 1e-3, contacts=m.collision, q0=q0, **kw).run(700)
        E = _energies(m, tr)
        assert E.max() <= E0 * (1.0 + 1e-3), kw
        assert tr.contacts["impacts"].sum() > 10
        assert np.abs(tr.qd).max() > 100.0
