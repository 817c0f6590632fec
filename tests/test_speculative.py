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


def _rope(**options):
    """150 links (1.5 m) hung 0.1 m above the floor, a cylinder of 3 cm at x = 0.2 m: it
    falls onto both within 0.15 s."""
    m, q0 = art.models.hanging_rope(150, height=0.1, cylinder_radius=0.03, cylinder_x=0.2,
                                    return_configuration=True)
    return art.Simulator(m, H, contacts=m.collision, q0=q0,
                         contact_options=options).run(250)


@pytest.fixture(scope="module")
def ropes():
    return _rope(), _rope(dormant=False)


def test_dormant_speculative_rows_cost_no_sweeps_and_change_nothing(ropes):
    """In flight, the pairs of links i and i + 2 (2 mm apart) are inside the speculative
    reach but do not close: with dormant rows (the default) they take no sweep, with rows
    for every contact they take one per step; the trajectories agree to 1e-9 rad until
    the rope lands, and the impulses never add kinetic energy in either."""
    lazy, full = ropes
    cl, cf = lazy.contacts, full.contacts
    flight = np.flatnonzero(cl["max_depth"] > 0)[0] - 5     # steps before anything touches
    spec = cl["n"][:flight] > 0
    assert spec.sum() > 50 and (cf["n"][:flight] == cl["n"][:flight]).all()
    assert (cl["sweeps"][:flight] == 0).all() and (cf["sweeps"][:flight][spec] >= 1).all()
    assert np.abs(lazy.q[flight] - full.q[flight]).max() <= 1e-9
    for c in (cl, cf):
        k = c["n"] > 0
        assert ((c["ke_after"] - c["ke_before"])[k] / c["ke_before"][k]).max() <= 1e-12


def test_the_rope_lands_on_the_cylinder_and_floor_without_sinking(ropes):
    """Both runs land (contacts with impulses: impacts), never sink by more than 1 mm,
    end with less energy than they started with and agree on where the rope lies (the
    far end's height to 1 mm)."""
    lazy, full = ropes
    m = art.models.hanging_rope(150, height=0.1, cylinder_radius=0.03, cylinder_x=0.2)
    E0 = sum(art.energy(m, lazy.q[0], lazy.qd[0]))
    for tr in (lazy, full):
        c = tr.contacts
        assert c["impacts"].sum() > 100 and c["max_depth"].max() <= 1e-3
        assert sum(art.energy(m, tr.q[-1], tr.qd[-1])) < E0
    ends = [art.forward_kinematics(m, tr.q[-1])[1][-1] for tr in (lazy, full)]
    assert abs(ends[0][2] - ends[1][2]) <= 1e-3
