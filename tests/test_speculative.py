"""Dormant speculative contacts (articulated.algorithms.speculative) and the rope scene."""

import numpy as np
import pytest

import articulated as art
from articulated.algorithms.impulse import Factor, ImpulseModel
from articulated.algorithms.kinematics import _world_poses_kernel
from articulated.algorithms.speculative import body_twists

H = 1e-3


def test_body_twists_equal_the_body_velocities_in_world_coordinates():
    """The world twists of body_twists (omega, velocity of the body origin) equal
    art.body_velocities (body coordinates) rotated into the world, on a random tree with
    free, spherical, revolute and prismatic joints (to 1e-12)."""
    m = art.models.random_tree(12, seed=3, floating_base=True,
                               joint_types=("revolute", "prismatic", "spherical"))
    rng = np.random.default_rng(3)
    q = m.random_configuration(rng)
    qd = rng.normal(size=m.nv)
    d = m.data()
    _world_poses_kernel(d.model_i, d.model_f, q, d.buf)
    ma = m.arrays()
    tw = np.full((m.nb, 6), np.nan)
    body_twists(ImpulseModel(ma.parent, ma.vadr, ma.jnv, ma.S),
                Factor(d.Xup_E, d.Xup_r, d.UDinv, d.Dinv, d.oE, d.op), qd, tw)
    v = art.body_velocities(m, q, qd)
    R, _ = art.forward_kinematics(m, q)          # body-to-world rotations
    ref = np.concatenate([np.einsum("bij,bj->bi", R, v[:, :3]),
                          np.einsum("bij,bj->bi", R, v[:, 3:])], axis=1)
    assert np.abs(tw - ref).max() <= 1e-12 * max(1.0, np.abs(ref).max())


SCENE = dict(height=0.3, cylinder_radius=0.05, cylinder_x=0.3)
"""150 links (1.5 m) hung 0.3 m above the floor, a cylinder of 5 cm at x = 0.3 m: the
rope falls onto both at 0.2 s, fast enough (1-2 m/s) that the pairs of links i and i + 2
(2 mm apart) come within the speculative reach before."""


def _rope(**options):
    """The rope of :data:`SCENE`, 400 steps, solved by sequential impulses: the runs compare
    dormant rows against a row for every contact, under one solver (with a row for every
    contact, ``"auto"`` would solve the landing matrix-free)."""
    m, q0 = art.models.hanging_rope(150, return_configuration=True, **SCENE)
    return art.Simulator(m, H, contacts=m.collision, q0=q0,
                         contact_options=dict(options, solver="sequential")).run(400)


@pytest.fixture(scope="module")
def ropes():
    return _rope(), _rope(dormant=False)


def test_dormant_speculative_rows_cost_no_sweeps_and_change_nothing(ropes):
    """In flight, the pairs of links i and i + 2 are inside the speculative reach but do
    not close: with dormant rows (the default) they take no sweep, with rows for every
    contact they take one per step; the trajectories are equal until the rope lands, and
    the impulses never add kinetic energy in either."""
    lazy, full = ropes
    cl, cf = lazy.contacts, full.contacts
    land = np.flatnonzero(cl["impacts"] > 0)[0]
    assert land == np.flatnonzero(cf["impacts"] > 0)[0] > 150
    spec = cl["n"][:land] > 0
    assert spec.sum() > 50 and (cf["n"][:land] == cl["n"][:land]).all()
    assert (cl["sweeps"][:land] == 0).all() and (cf["sweeps"][:land][spec] >= 1).all()
    assert np.array_equal(lazy.q[land], full.q[land])
    for c in (cl, cf):
        k = c["n"] > 0
        assert ((c["ke_after"] - c["ke_before"])[k] / c["ke_before"][k]).max() <= 1e-12


def test_a_step_with_dormant_rows_equals_the_step_with_every_row(ropes):
    """From states of the landing (contacts with and without impulses, some dormant), one
    step with dormant rows and one with a row for every contact, both from zero impulses
    and solved to 1e-9 m/s in the same number of sweeps of sequential impulses (one solver
    for both: with a row for every contact, ``"auto"`` would pick the matrix-free one), give
    the same velocities (to 1e-6 of the largest); Coulomb friction leaves the impulses of a
    step with many contacts non-unique, and sweeps that end elsewhere (in another number
    of sweeps, or with other contacts sliding or sticking) may end at another solution."""
    lazy, _ = ropes
    m = art.models.hanging_rope(150, **SCENE)
    compared = 0
    for k in (207, 215, 240, 270, 300, 330, 360):
        out = []
        for dormant in (True, False):
            sim = art.Simulator(m, H, contacts=m.collision, q0=lazy.q[k], qd0=lazy.qd[k],
                                contact_options=dict(dormant=dormant, tol=1e-9, sweeps=500,
                                                     solver="sequential"))
            c = sim.run(1).contacts[0]
            out.append((sim.qd.copy(), c, sim._contact.rb.spec.count.copy()))
        (a, ca, (na, nd)), (b, cb, _) = out
        if (max(ca["sweeps"], cb["sweeps"]) >= 500 or ca["sweeps"] != cb["sweeps"]
                or ca["sliding"] != cb["sliding"] or ca["sticking"] != cb["sticking"]
                or not (na > 0 and nd > 0)):
            continue    # friction leaves the impulses of a contact-rich step non-unique
        assert np.abs(a - b).max() <= 1e-6 * np.abs(b).max()
        compared += 1
    assert compared >= 3


def test_the_rope_lands_on_the_cylinder_and_floor_without_sinking(ropes):
    """Both runs land (impacts), never sink by more than 1 mm, end with less energy than
    they started with and agree on where the rope's far end lies (to 2 mm: the landing is
    chaotic, and the two runs' steps differ within the solver's tolerance)."""
    lazy, full = ropes
    m = art.models.hanging_rope(150, **SCENE)
    E0 = sum(art.energy(m, lazy.q[0], lazy.qd[0]))
    for tr in (lazy, full):
        c = tr.contacts
        assert c["impacts"].sum() > 1000 and c["max_depth"].max() <= 1e-3
        assert sum(art.energy(m, tr.q[-1], tr.qd[-1])) < 0.5 * E0
    ends = [art.forward_kinematics(m, tr.q[-1])[1][-1] for tr in (lazy, full)]
    assert np.abs(ends[0] - ends[1]).max() <= 2e-3
