"""Branched trees: random trees, the millipede and the molecule.

Branched trees: seeded random trees with every joint type, the millipede and the
molecule."""

from __future__ import annotations

import numpy as np

from ..model import JOINT_TYPES, Model
from ..spatial import rot_y, rot_z
from .description import scene
from ._common import (GRAVITY, _box_inertia, _chain_model, _count, _depth_first, _positive,
                      _unit_axes)


def _random_rotation(rng):
    u = rng.normal(size=4)
    w, x, y, z = u / np.linalg.norm(u)
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def _random_inertia(rng, mass):
    """A physically valid random rotational inertia about the COM (random box, rotated)."""
    a, b, c = rng.uniform(0.05, 0.5, 3)
    d = mass / 12.0 * np.array([b * b + c * c, a * a + c * c, a * a + b * b])
    R = _random_rotation(rng)
    return R @ np.diag(d) @ R.T


@scene
def random_tree(n: int, seed=0, *, joint_types=("revolute", "prismatic", "spherical", "free", "fixed"),
                floating_base: bool = False, branching: float = 0.5) -> Model:
    """Build a random kinematic tree for cross-checks.

    Random parents, joint types, placements, axes and inertias (the habit of RBD.jl's
    ``randmech`` and Pinocchio's ``humanoidRandom``).

    Parameters
    ----------
    n : int
        Number of bodies (>= 1).
    seed : int
        RNG seed; the model is a deterministic function of (n, seed, options).
    joint_types : sequence of str
        Joint types drawn uniformly for the non-root bodies.
    floating_base : bool
        The root body gets a free joint (otherwise a revolute one).
    branching : float in [0, 1]
        0 gives a serial chain, 1 a uniformly random tree.
    """
    if n < 1:
        raise ValueError(f"random_tree needs n >= 1 bodies, got {n}")
    for t in joint_types:
        if t not in JOINT_TYPES:
            raise ValueError(f"unknown joint type {t!r}")
    rng = np.random.default_rng(seed)
    parent = np.empty(n, dtype=np.int64)
    jtype = np.empty(n, dtype=np.int64)
    for i in range(n):
        if i == 0:
            parent[i] = -1
            jtype[i] = JOINT_TYPES["free" if floating_base else "revolute"]
        else:
            parent[i] = rng.integers(0, i) if rng.random() < branching else i - 1
            jtype[i] = JOINT_TYPES[joint_types[rng.integers(len(joint_types))]]
    axis = rng.normal(size=(n, 3))
    axis /= np.linalg.norm(axis, axis=1)[:, None]
    E = np.array([_random_rotation(rng).T for _ in range(n)])
    r = rng.uniform(-1, 1, (n, 3))
    mass = rng.uniform(0.5, 5.0, n)
    com = rng.uniform(-0.5, 0.5, (n, 3))
    I_com = np.array([_random_inertia(rng, m) for m in mass])
    # random parents are already < i, but every model has the builder's depth-first order
    order, par = _depth_first(parent)
    return Model(body_name=[f"body{k}" for k in range(n)],
                 joint_name=[f"joint{k}" for k in range(n)],
                 body_parent=par, jnt_type=jtype[order], jnt_axis=axis[order],
                 jnt_Xtree_E=E[order], jnt_Xtree_r=r[order], body_mass=mass[order],
                 body_com=com[order], body_I_com=I_com[order], gravity=np.array([0.0, 0.0, -9.81]))




# ---------------------------------------------------------------------------- millipede

@scene
def millipede(legs: int = 1000, leg_links: int = 10, spine: int = 3000, *,
              segment_length: float = 0.02, segment_mass: float = 0.02,
              leg_link_length: float = 0.01, leg_link_mass: float = 0.004,
              gravity=GRAVITY) -> Model:
    """A millipede-like robot: a spine chain with legs, the root spine link welded to the world.

    The second benchmark of Redon & Lin (2005), "An efficient, error-bounded approximation
    algorithm for simulating quasi-statics of complex linkages", Sec. 6.2 and Fig. 4: 1,000
    legs of 10 links each and a spine of 3,000 links, "for a total of 13,000 links and 12,999
    joints".

    Layout (all at ``q = 0``):

    * spine: ``spine`` box links along +x (length ``segment_length``, cross-section
      0.4 x 0.25 of it); spine link 0 is attached to the world at the origin by a
      ``"fixed"`` joint; spine link s > 0 by a revolute joint at the front end of link s-1,
      about z (yaw) for odd s and y (pitch) for even s.
    * legs: leg k hangs from spine link ``k * stride + stride // 2`` with
      ``stride = spine // legs`` (evenly spread), on the left (+y) side for even k and the
      right (-y) side for odd k, pointing sideways and 30 degrees down. A leg is a revolute
      chain of ``leg_links`` box links (length ``leg_link_length``, square cross-section of a
      quarter of it): the first joint swings the leg fore-aft (axis z of the leg frame), the
      others bend it (axis y of the leg frame, horizontal and perpendicular to the leg).

    Body order is depth-first: each spine link is followed by its leg (if any), then by the
    rest of the spine. Names: ``spine{s}``, ``leg{k}_{j}`` (joints add ``_joint``).

    Parameters
    ----------
    legs : int >= 0
        Number of legs, at most ``spine``.
    leg_links : int >= 1
        Links per leg.
    spine : int >= 1
        Spine links.
    segment_length, segment_mass : float > 0
        Spine link length [m] and mass [kg].
    leg_link_length, leg_link_mass : float > 0
        Leg link length [m] and mass [kg].
    gravity : (3,) float
        [m/s^2].

    Returns
    -------
    Model with nb = legs * leg_links + spine bodies, one fixed joint (body 0) and
    nb
        1 revolute joints (nq = nv = nb - 1): 13,000 bodies and 12,999 DOF at the defaults.

    Raises
    ------
    ValueError
        A non-integer or too small count, ``legs > spine``, or a non-positive size.
    """
    legs = _count(legs, "legs", 0)
    leg_links = _count(leg_links, "leg_links", 1)
    spine = _count(spine, "spine", 1)
    if legs > spine:
        raise ValueError(f"millipede: legs ({legs}) must not exceed spine links ({spine}); "
                         f"at most one leg per spine link")
    ls = _positive(segment_length, "segment_length")
    ms = _positive(segment_mass, "segment_mass")
    ll = _positive(leg_link_length, "leg_link_length")
    ml = _positive(leg_link_mass, "leg_link_mass")
    nb = legs * leg_links + spine
    stride = spine // legs if legs else 1
    k = np.arange(legs)
    attach = k * stride + stride // 2                       # spine link of leg k (increasing)
    s = np.arange(spine)
    # body index of spine link s: s + leg_links * (number of legs attached before s)
    spine_idx = s + leg_links * np.searchsorted(attach, s, side="left")
    leg_start = spine_idx[attach] + 1                       # body index of leg k's first link
    j = np.arange(leg_links)
    leg_idx = (leg_start[:, None] + j[None, :]).ravel()     # (legs * leg_links,)

    parent = np.empty(nb, dtype=np.int64)
    jtype = np.full(nb, JOINT_TYPES["revolute"], dtype=np.int64)
    axis = np.zeros((nb, 3))
    E = np.empty((nb, 3, 3))
    r = np.zeros((nb, 3))
    mass = np.empty(nb)
    com = np.zeros((nb, 3))
    I_com = np.empty((nb, 3, 3))

    parent[spine_idx] = np.concatenate([[-1], spine_idx[:-1]])
    jtype[spine_idx[0]] = JOINT_TYPES["fixed"]
    axis[spine_idx] = _unit_axes(np.where(s % 2 == 1, 2, 1), spine)
    E[spine_idx] = np.eye(3)
    r[spine_idx[1:], 0] = ls
    mass[spine_idx] = ms
    com[spine_idx, 0] = 0.5 * ls
    I_com[spine_idx] = _box_inertia(ms, ls, 0.4 * ls, 0.25 * ls)

    if legs:
        side = np.where(k % 2 == 0, 1.0, -1.0)
        par = leg_idx - 1
        par[::leg_links] = spine_idx[attach]
        parent[leg_idx] = par
        ax = _unit_axes(np.where(np.tile(j, legs) == 0, 2, 1), legs * leg_links)
        axis[leg_idx] = ax
        # first leg joint: at the side of its spine link, frame turned to the side and
        # tilted 30 degrees down; R = rot_z(side pi/2) rot_y(pi/6) (joint axes in parent)
        E_leg = np.broadcast_to(np.eye(3), (legs, leg_links, 3, 3)).copy()
        R0 = np.array([rot_z(sd * np.pi / 2) @ rot_y(np.pi / 6) for sd in (1.0, -1.0)])
        E_leg[:, 0] = np.transpose(R0, (0, 2, 1))[np.where(side > 0, 0, 1)]
        E[leg_idx] = E_leg.reshape(-1, 3, 3)
        r_leg = np.zeros((legs, leg_links, 3))
        r_leg[:, 0, 0] = 0.5 * ls
        r_leg[:, 0, 1] = side * 0.2 * ls
        r_leg[:, 1:, 0] = ll
        r[leg_idx] = r_leg.reshape(-1, 3)
        mass[leg_idx] = ml
        com[leg_idx, 0] = 0.5 * ll
        I_com[leg_idx] = _box_inertia(ml, ll, 0.25 * ll, 0.25 * ll)

    names = np.empty(nb, dtype=object)
    names[spine_idx] = [f"spine{i}" for i in range(spine)]
    names[leg_idx] = [f"leg{a}_{b}" for a in range(legs) for b in range(leg_links)]
    return _chain_model(names.tolist(), parent, jtype, axis, E, r, mass, com, I_com, gravity)


# ---------------------------------------------------------------------------- molecule

TETRAHEDRAL_ANGLE = float(np.degrees(np.arccos(-1.0 / 3.0)))
"""Ideal sp3 bond angle, about 109.47 degrees."""


@scene
def molecule(n: int = 50_000, seed=0, *, bond_length: float = 0.15, atom_mass: float = 1.0,
             atom_radius: float = 0.05, axes: str = "bond", branching: float = 0.3,
             gravity=GRAVITY) -> Model:
    """A random molecule-like tree linkage of ``n`` atoms and ``n`` rotational DOF.

    The third benchmark of Redon & Lin (2005), "An efficient, error-bounded approximation
    algorithm for simulating quasi-statics of complex linkages", Sec. 6.3, Fig. 6, Fig. 7 and
    Table 1: "a randomly generated molecule-like linkage with 50,000 rotational degrees of
    freedom".

    Each body is an atom: a solid sphere (mass ``atom_mass``, radius ``atom_radius``) whose
    centre is the body origin. The root atom sits at the world origin on a revolute joint
    about world x. Every other atom is bonded to its parent at distance ``bond_length``;
    atoms have at most 3 children (valence <= 4, carbon-like) and the bonds around an atom
    follow the tetrahedral geometry: each child bond makes the angle
    :data:`TETRAHEDRAL_ANGLE` (~109.47 deg) with the bond to the parent, and the children of
    one atom are 120 deg apart around that bond (from a random per-atom phase). The body
    frame's x axis is its incoming bond. Topology: atom i's parent is atom i-1 (the backbone
    grows) with probability ``1 - branching``, otherwise a uniformly random atom that still
    has fewer than 3 children (a side branch).

    Parameters
    ----------
    n : int >= 1
        Number of atoms (= bodies = revolute joints = DOF).
    seed : int
        RNG seed; the model is a deterministic function of all arguments.
    bond_length : float > 0
        [m] (the C-C bond is 1.5 angstrom; the scene uses SI-sized numbers, 0.15 m by
        default).
    atom_mass : float > 0
        [kg]; atom_radius : float > 0 - [m] (inertia 0.4 m r^2).
    axes : {"bond", "random"}
        ``"bond"``: each joint is a torsion about its bond (the joint frame sits on the
        atom, x along the bond; the atom itself stays put and its subtree turns);
        ``"random"``: a random unit axis through the atom.
    branching : float in [0, 1]
        Probability of starting a side branch.
    gravity : (3,) float
        [m/s^2].

    Returns
    -------
    Model with nb = nq = nv = n, bodies ``atom0 ..`` in depth-first order, every joint
    revolute, at most 3 children per body.

    Raises
    ------
    ValueError
        On a bad count, size, ``axes`` or ``branching``.

    Notes
    -----
    One Python loop builds the random topology, the rest is vectorized.
    """
    n = _count(n, "n", 1)
    L = _positive(bond_length, "bond_length")
    m = _positive(atom_mass, "atom_mass")
    rad = _positive(atom_radius, "atom_radius")
    if axes not in ("bond", "random"):
        raise ValueError(f"axes must be 'bond' or 'random', got {axes!r}")
    branching = float(branching)
    if not 0.0 <= branching <= 1.0:
        raise ValueError(f"branching must be in [0, 1], got {branching}")
    rng = np.random.default_rng(seed)
    branch = (rng.random(n) < branching).tolist()
    pick = rng.random(n).tolist()
    phase = rng.uniform(0.0, 2.0 * np.pi, n)
    # random topology with at most 3 children per atom (swap-remove list of open atoms)
    parent = [-1] * n
    slot = [0] * n
    nchild = [0] * n
    open_atoms = [0]
    where = [-1] * n
    where[0] = 0
    for i in range(1, n):
        if branch[i] and open_atoms:
            p = open_atoms[int(pick[i] * len(open_atoms))]
        else:
            p = i - 1                      # the newest atom has no child yet
        parent[i] = p
        slot[i] = nchild[p]
        nchild[p] += 1
        if nchild[p] == 3:                 # full: swap-remove p from the open list
            k, last = where[p], open_atoms[-1]
            open_atoms[k] = last
            where[last] = k
            open_atoms.pop()
            where[p] = -1
        where[i] = len(open_atoms)
        open_atoms.append(i)
    order, par = _depth_first(parent)   # children in creation order

    # placement of joint i in its parent atom's frame (x = the parent's incoming bond):
    # R = rot_x(phi) rot_z(theta), theta = 180 - 109.47 deg, phi = phase[parent] + slot 120 deg
    theta = np.pi - np.radians(TETRAHEDRAL_ANGLE)
    phi = phase[np.maximum(parent, 0)] + 2.0 * np.pi / 3.0 * np.array(slot)
    ct, st = np.cos(theta), np.sin(theta)
    cp, sp = np.cos(phi), np.sin(phi)
    R = np.zeros((n, 3, 3))
    R[:, 0, 0], R[:, 0, 1] = ct, -st
    R[:, 1, 0], R[:, 1, 1], R[:, 1, 2] = cp * st, cp * ct, -sp
    R[:, 2, 0], R[:, 2, 1], R[:, 2, 2] = sp * st, sp * ct, cp
    R[0] = np.eye(3)
    r = L * R[:, :, 0]
    r[0] = 0.0
    if axes == "bond":
        axis = _unit_axes(np.zeros(n, dtype=np.int64), n)
    else:
        axis = rng.normal(size=(n, 3))
        axis /= np.linalg.norm(axis, axis=1)[:, None]
    E = np.transpose(R, (0, 2, 1))
    I_com = np.broadcast_to(0.4 * m * rad * rad * np.eye(3), (n, 3, 3))
    return _chain_model([f"atom{i}" for i in range(n)], par, np.full(n, JOINT_TYPES["revolute"]),
                        axis[order], E[order], r[order], np.full(n, m), np.zeros((n, 3)),
                        I_com, gravity)


