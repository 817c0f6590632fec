"""Scene generators: deterministic models for tests, benchmarks and the papers' examples."""

from __future__ import annotations

import numpy as np

from .model import JOINT_TYPES, Model, ModelBuilder
from .spatial import rot_x, rot_y, rot_z


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


def _depth_first(parent):
    """Depth-first pre-order of a tree given by ``parent`` (root 0, ``parent[i] < i``).

    Returns ``order`` (new index -> old index) and the parent array in the new numbering,
    in which subtrees are contiguous (the order every Model has).
    """
    parent = np.asarray(parent, dtype=np.int64)
    n = parent.shape[0]
    children = [[] for _ in range(n)]
    for i in range(1, n):
        children[parent[i]].append(i)
    order, stack = [], [0]
    while stack:
        k = stack.pop()
        order.append(k)
        stack.extend(reversed(children[k]))
    order = np.array(order, dtype=np.int64)
    new = np.empty(n, dtype=np.int64)
    new[order] = np.arange(n)
    par = np.where(parent[order] >= 0, new[np.maximum(parent[order], 0)], -1)
    return order, par


def random_tree(n: int, seed=0, *, joint_types=("revolute", "prismatic", "spherical", "free", "fixed"),
                floating_base: bool = False, branching: float = 0.5) -> Model:
    """A random kinematic tree for cross-checks (RBD.jl ``randmech``, Pinocchio
    ``humanoidRandom`` habit): random parents, joint types, placements, axes and inertias.

    Parameters
    ----------
    n : int - number of bodies (>= 1)
    seed : int - RNG seed; the model is a deterministic function of (n, seed, options)
    joint_types : sequence of str - joint types drawn uniformly for the non-root bodies
    floating_base : bool - the root body gets a free joint (otherwise a revolute one)
    branching : float in [0, 1] - 0 gives a serial chain, 1 a uniformly random tree
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


# ============================================================================ scene generators
#
# Large scenes build their arrays vectorized and call the Model constructor directly (it
# validates every body at once); ModelBuilder.add_body checks one body at a time and is
# used only for the 89-body humanoid template.

GRAVITY = (0.0, 0.0, -9.81)
"""Default gravitational acceleration of every scene [m/s^2] (DESIGN.md conventions)."""


def _count(value, name: str, minimum: int) -> int:
    """An integer argument >= ``minimum``; ValueError otherwise (bools and floats rejected)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    value = int(value)
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return value


def _positive(value, name: str) -> float:
    """A finite float > 0; ValueError otherwise."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    if not np.isfinite(v) or v <= 0.0:
        raise ValueError(f"{name} must be finite and > 0, got {value!r}")
    return v


def _box_inertia(m, a, b, c):
    """(n, 3, 3) rotational inertias about the COM of uniform boxes with edge lengths a, b, c
    along the body x, y, z axes [m] and masses m [kg] (arrays broadcast to (n,))."""
    m, a, b, c = np.broadcast_arrays(*(np.asarray(x, dtype=np.float64) for x in (m, a, b, c)))
    I = np.zeros(m.shape + (3, 3))
    I[..., 0, 0] = m / 12.0 * (b * b + c * c)
    I[..., 1, 1] = m / 12.0 * (a * a + c * c)
    I[..., 2, 2] = m / 12.0 * (a * a + b * b)
    return I


def _rod_inertia(m, vec, radius):
    """(3, 3) inertia about the COM of a solid cylinder of mass m [kg], radius [m] and axis
    ``vec`` (its length is the cylinder length [m]); a solid sphere if ``vec`` is zero."""
    vec = np.asarray(vec, dtype=np.float64)
    L = float(np.linalg.norm(vec))
    if L == 0.0:
        return 0.4 * m * radius * radius * np.eye(3)
    u = vec / L
    uu = np.outer(u, u)
    r2 = radius * radius
    return m * (3 * r2 + L * L) / 12.0 * (np.eye(3) - uu) + 0.5 * m * r2 * uu


def _unit_axes(idx, n):
    """(n, 3) unit vectors along the coordinate axes ``idx`` (0 = x, 1 = y, 2 = z)."""
    a = np.zeros((n, 3))
    a[np.arange(n), idx] = 1.0
    return a


def _chain_model(names, parent, jtype, axis, E, r, mass, com, I_com, gravity):
    return Model(body_name=names, joint_name=[f"{s}_joint" for s in names], body_parent=parent,
                 jnt_type=jtype, jnt_axis=axis, jnt_Xtree_E=E, jnt_Xtree_r=r, body_mass=mass,
                 body_com=com, body_I_com=I_com, gravity=np.asarray(gravity, dtype=np.float64))


# ---------------------------------------------------------------------------- pendulum

def pendulum(n: int = 300, link_length: float = 0.1, mass: float = 0.1, seed=None, *,
             width: float | None = None, gravity=GRAVITY) -> Model:
    """A serial pendulum of ``n`` thin box links hanging from a fixed world point.

    The benchmark of Redon, Galoppo & Lin (2005), "Adaptive dynamics of articulated bodies",
    Sec. 7.1, Fig. 5 and Table 1 (300 links), also used for the 50-link spring example
    (Fig. 6). Joint ``i`` (revolute) connects link ``i`` to link ``i-1`` (link 0 to the world at
    the origin); the axes alternate x (even i) and y (odd i) so the motion is 3D. At ``q = 0``
    the pendulum hangs straight down along -z (an equilibrium under the default gravity).

    Parameters
    ----------
    n : int >= 1 - number of links (= bodies = revolute joints = DOF)
    link_length : float > 0 - nominal link length L [m]; joint i+1 sits at (0, 0, -L_i) in
        link i's frame, the COM at (0, 0, -L_i/2)
    mass : float > 0 - nominal link mass [kg]
    seed : None or int - ``None``: all links identical. An int draws every link length and
        mass independently, uniform in [0.5, 1.5] times the nominal values (a deterministic
        non-uniform pendulum for tests)
    width : float > 0, optional - square cross-section edge of the box links [m];
        default ``link_length / 10``
    gravity : (3,) float - [m/s^2]

    Returns
    -------
    Model with nb = nq = nv = n; bodies ``link0 .. link{n-1}`` (joints ``link{i}_joint``),
    a chain in depth-first order (``body_parent[i] = i - 1``).

    Raises
    ------
    ValueError - n < 1 or a non-positive length, mass or width.

    Vectorized (no per-body Python validation): 10^6 links build in about 5-10 s, almost all
    of it in the Model constructor.
    """
    n = _count(n, "n", 1)
    L0 = _positive(link_length, "link_length")
    m0 = _positive(mass, "mass")
    w = L0 / 10.0 if width is None else _positive(width, "width")
    if seed is None:
        L = np.full(n, L0)
        m = np.full(n, m0)
    else:
        rng = np.random.default_rng(seed)
        L = L0 * rng.uniform(0.5, 1.5, n)
        m = m0 * rng.uniform(0.5, 1.5, n)
    parent = np.arange(-1, n - 1, dtype=np.int64)
    r = np.zeros((n, 3))
    r[1:, 2] = -L[:-1]
    com = np.zeros((n, 3))
    com[:, 2] = -0.5 * L
    E = np.broadcast_to(np.eye(3), (n, 3, 3))
    axis = _unit_axes(np.arange(n) % 2, n)
    return _chain_model([f"link{i}" for i in range(n)], parent,
                        np.full(n, JOINT_TYPES["revolute"]), axis, E, r, m, com,
                        _box_inertia(m, w, w, L), gravity)


# ---------------------------------------------------------------------------- bicycle chain

BICYCLE_PITCH = 0.0127
"""Pitch of a bicycle chain, 1/2 inch [m] (ISO 606 08B / ANSI 40)."""


def bicycle_chain(n: int = 30, *, pitch: float = BICYCLE_PITCH, gravity=GRAVITY) -> Model:
    """A planar open bicycle chain of ``n`` links, the first one jointed to the world.

    The first benchmark of Redon & Lin (2005), "An efficient, error-bounded approximation
    algorithm for simulating quasi-statics of complex linkages", Sec. 6.1 and Fig. 1
    (30 links, constant force on the last link).

    Every joint is revolute about z (a pin), so the chain moves in the x-y plane; at ``q = 0``
    it lies straight along +x with pins at ``x = i * pitch``. Links alternate like a real
    chain: even links are *inner* links (two narrow plates plus two rollers, 2.8 g), odd links
    *outer* links (two wider pin plates plus two pins, 2.2 g). Each link is modelled as a
    uniform box of length 1.35 pitch (plates overhang the pins), height 7.5 mm (y) and
    width 5.6 mm / 7.8 mm (z) centred between its two pins.

    Note that with the default gravity (0, 0, -9.81) gravity is normal to the plane of motion
    (a chain lying on a table: it does no work); pass e.g. ``gravity=(0, -9.81, 0)`` for a
    chain hanging in its plane.

    Parameters
    ----------
    n : int >= 1 - number of links (= DOF)
    pitch : float > 0 - pin-to-pin distance [m]
    gravity : (3,) float - [m/s^2]

    Returns
    -------
    Model with nb = nq = nv = n, bodies ``link0 ..`` (``body_parent[i] = i - 1``).

    Raises ValueError for n < 1 or pitch <= 0.
    """
    n = _count(n, "n", 1)
    p = _positive(pitch, "pitch")
    inner = np.arange(n) % 2 == 0
    m = np.where(inner, 2.8e-3, 2.2e-3)
    depth = np.where(inner, 5.6e-3, 7.8e-3)
    r = np.zeros((n, 3))
    r[1:, 0] = p
    com = np.zeros((n, 3))
    com[:, 0] = 0.5 * p
    return _chain_model([f"link{i}" for i in range(n)], np.arange(-1, n - 1),
                        np.full(n, JOINT_TYPES["revolute"]), _unit_axes(np.full(n, 2), n),
                        np.broadcast_to(np.eye(3), (n, 3, 3)), r, m, com,
                        _box_inertia(m, 1.35 * p, 7.5e-3, depth), gravity)


# ---------------------------------------------------------------------------- millipede

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
    legs : int >= 0 - number of legs, at most ``spine``
    leg_links : int >= 1 - links per leg
    spine : int >= 1 - spine links
    segment_length, segment_mass : float > 0 - spine link length [m] and mass [kg]
    leg_link_length, leg_link_mass : float > 0 - leg link length [m] and mass [kg]
    gravity : (3,) float - [m/s^2]

    Returns
    -------
    Model with nb = legs * leg_links + spine bodies, one fixed joint (body 0) and
    nb - 1 revolute joints (nq = nv = nb - 1): 13,000 bodies and 12,999 DOF at the defaults.

    Raises
    ------
    ValueError - a non-integer or too small count, ``legs > spine``, or a non-positive size.
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
    n : int >= 1 - number of atoms (= bodies = revolute joints = DOF)
    seed : int - RNG seed; the model is a deterministic function of all arguments
    bond_length : float > 0 - [m] (the C-C bond is 1.5 angstrom; the scene uses SI-sized
        numbers, 0.15 m by default)
    atom_mass : float > 0 - [kg]; atom_radius : float > 0 - [m] (inertia 0.4 m r^2)
    axes : {"bond", "random"} - ``"bond"``: each joint is a torsion about its bond (the joint
        frame sits on the atom, x along the bond; the atom itself stays put and its
        subtree turns); ``"random"``: a random unit axis through the atom
    branching : float in [0, 1] - probability of starting a side branch
    gravity : (3,) float - [m/s^2]

    Returns
    -------
    Model with nb = nq = nv = n, bodies ``atom0 ..`` in depth-first order, every joint
    revolute, at most 3 children per body.

    Raises ValueError on a bad count, size, ``axes`` or ``branching``. Builds 50,000 atoms in
    well under a second (one Python loop for the random topology, the rest vectorized).
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


# ---------------------------------------------------------------------------- humanoid

HUMANOID_BODIES = 89
"""Bodies per humanoid character (Redon, Galoppo & Lin 2005, Fig. 1: 17,800 / 200)."""
HUMANOID_DOF = 95
"""Velocity DOF per floating humanoid character (19,000 / 200), free joint included."""
HUMANOID_PELVIS_HEIGHT = 0.975
"""Height of the pelvis origin above the soles when the humanoid stands at ``q = 0`` [m]:
hip 0.05 + thigh 0.43 + shank 0.42 + ankle-to-sole 0.075."""


def _humanoid_builder(prefix: str, floating_base: bool, total_mass: float, gravity):
    """The humanoid as a ModelBuilder (89 bodies), masses before scaling to total_mass."""
    specs = []   # (name, parent, joint, axis, origin, mass, com, inertia)

    def add(name, parent, joint, axis, origin, mass, vec=(0, 0, 0), radius=0.03, com=None,
            inertia=None):
        vec = np.asarray(vec, dtype=np.float64)
        c = 0.5 * vec if com is None else np.asarray(com, dtype=np.float64)
        I = _rod_inertia(mass, vec, radius) if inertia is None else inertia
        specs.append((name, parent, joint, axis, origin, mass, c, I))
        return name

    X, Y, Z = (1, 0, 0), (0, 1, 0), (0, 0, 1)
    O = (0, 0, 0)
    add("pelvis", None, "free" if floating_base else "fixed", Z,
        O if floating_base else (0, 0, HUMANOID_PELVIS_HEIGHT), 10.0, com=(0, 0, 0.02),
        inertia=_box_inertia(10.0, 0.20, 0.32, 0.20))
    # spine: 5 lumbar + 12 thoracic slices of the trunk, axes cycling flexion/lateral/twist
    parent, z = "pelvis", 0.06
    vertebrae = [f"L{i}" for i in range(5, 0, -1)] + [f"T{i}" for i in range(12, 0, -1)]
    for k, name in enumerate(vertebrae):
        h, mass = (0.032, 1.6) if name[0] == "L" else (0.02, 0.8)
        parent = add(name, parent, "revolute", (Y, X, Z)[k % 3], (0, 0, z), mass, (0, 0, h), 0.12)
        z = h
    # rib cage and shoulder girdle, welded to T1 (origin at the top of T1)
    chest = add("chest", "T1", "fixed", Z, (0, 0, z), 7.2, com=(0.03, 0, -0.12),
                inertia=_box_inertia(7.2, 0.22, 0.34, 0.30))
    parent, z = chest, 0.0
    for k, name in enumerate(("neck1", "neck2", "neck3")):
        parent = add(name, parent, "revolute", (Y, X, Z)[k], (0, 0, z), 0.4, (0, 0, 0.035), 0.05)
        z = 0.035
    add("head", parent, "spherical", Z, (0, 0, z), 4.5, com=(0.02, 0, 0.10),
        inertia=_box_inertia(4.5, 0.20, 0.16, 0.23))
    for side, s in (("l", 1.0), ("r", -1.0)):
        a = add(f"{side}_clavicle", chest, "revolute", X, (0, s * 0.02, 0), 0.3,
                (0, s * 0.16, 0), 0.015)
        a = add(f"{side}_shoulder1", a, "revolute", Y, (0, s * 0.16, 0), 0.1)
        a = add(f"{side}_shoulder2", a, "revolute", X, O, 0.1)
        a = add(f"{side}_upper_arm", a, "revolute", Z, O, 1.9, (0, 0, -0.29), 0.045)
        a = add(f"{side}_forearm", a, "revolute", Y, (0, 0, -0.29), 1.1, (0, 0, -0.26), 0.035)
        a = add(f"{side}_wrist", a, "revolute", X, (0, 0, -0.26), 0.05, radius=0.02)
        hand = add(f"{side}_hand", a, "revolute", Y, O, 0.3, (0, 0, -0.09), 0.03)
        # palm faces the thigh (-s y); fingers hang along -z and curl about x
        thumb_dir = np.array([0.7071, -s * 0.3, -0.7071])
        thumb_dir /= np.linalg.norm(thumb_dir)
        a = hand
        for j, ln in enumerate((0.04, 0.032, 0.025)):
            org = (0.03, -s * 0.01, -0.025) if j == 0 else tuple(prev)
            ax = Y if j == 0 else X
            a = add(f"{side}_thumb{j + 1}", a, "revolute", ax, org, (0.012, 0.007, 0.005)[j],
                    thumb_dir * ln, 0.01)
            prev = thumb_dir * ln
        for f, (fname, x0, scale) in enumerate((("index", 0.03, 1.0), ("middle", 0.01, 1.08),
                                                ("ring", -0.01, 1.0), ("little", -0.03, 0.8))):
            a, org = hand, (x0, 0, -0.09)
            for j, ln in enumerate((0.045, 0.027, 0.02)):
                ln *= scale
                a = add(f"{side}_{fname}{j + 1}", a, "revolute", X, org,
                        (0.012, 0.007, 0.005)[j], (0, 0, -ln), 0.009)
                org = (0, 0, -ln)
    for side, s in (("l", 1.0), ("r", -1.0)):
        a = add(f"{side}_hip1", "pelvis", "revolute", Y, (0, s * 0.09, -0.05), 0.2, radius=0.05)
        a = add(f"{side}_hip2", a, "revolute", X, O, 0.2, radius=0.05)
        a = add(f"{side}_thigh", a, "revolute", Z, O, 7.0, (0, 0, -0.43), 0.07)
        a = add(f"{side}_shank", a, "revolute", Y, (0, 0, -0.43), 3.2, (0, 0, -0.42), 0.05)
        a = add(f"{side}_talus", a, "revolute", Y, (0, 0, -0.42), 0.1, radius=0.025)
        foot = add(f"{side}_foot", a, "revolute", X, O, 0.8, com=(0.05, 0, -0.045),
                   inertia=_box_inertia(0.8, 0.20, 0.09, 0.06))
        # toes 1 (big, medial) .. 5 (little, lateral) at the front of the foot
        for t, (y, ln, mt) in enumerate(((-0.03, 0.05, 0.04), (-0.012, 0.035, 0.02),
                                         (0.003, 0.032, 0.02), (0.018, 0.028, 0.02),
                                         (0.032, 0.024, 0.02))):
            add(f"{side}_toe{t + 1}", foot, "revolute", Y, (0.15, s * y, -0.06), mt,
                (ln, 0, 0), 0.012 if t else 0.015)

    scale = total_mass / sum(sp[5] for sp in specs)
    b = ModelBuilder(gravity=gravity)
    for name, par, joint, axis, origin, mass, c, I in specs:
        b.add_body(prefix + name, None if par is None else prefix + par, joint, axis=axis,
                   origin_xyz=origin, mass=mass * scale, com=c, inertia=np.asarray(I) * scale)
    return b


def humanoid(name_prefix: str = "", floating_base: bool = True, *, total_mass: float = 70.0,
             gravity=GRAVITY) -> Model:
    """One humanoid character: 89 bodies and 95 DOF, standing upright along +z.

    The character of Redon, Galoppo & Lin (2005), "Adaptive dynamics of articulated bodies",
    Fig. 1: "200 human characters, represented by 17,800 rigid bodies and 19,000 degrees of
    freedom", i.e. 89 bodies and 95 DOF each. The paper does not list the skeleton; this one
    has (x forward, y left, z up; every body frame parallel to the pelvis frame at ``q = 0``):

    ========================  ======  ===========================================  ====
    part                      bodies  joints                                        DOF
    ========================  ======  ===========================================  ====
    pelvis                    1       free (``floating_base``) or fixed             6
    spine L5..L1, T12..T1     17      revolute, axes cycling y, x, z                17
    chest (rib cage)          1       fixed to T1                                   0
    neck1..3, head            4       3 revolute (y, x, z) + spherical head         6
    each arm (x2)             22      clavicle, shoulder1-2, upper_arm, forearm,     22
                                      wrist, hand; thumb and 4 fingers x 3
                                      phalanges (all revolute)
    each leg (x2)             11      hip1-2, thigh, shank, talus, foot, 5 toes      11
                                      (all revolute)
    total                     89                                                    95
    ========================  ======  ===========================================  ====

    Multi-DOF anatomical joints (shoulder, hip, wrist, ankle) are chains of revolute joints
    through small intermediate bodies (0.05-0.2 kg). Segment masses follow the usual
    anthropometric fractions (trunk ~50 %, thigh 10 %, shank 4.6 %, ...) and are scaled so the
    total is ``total_mass``; segments are cylinders or boxes with their analytic inertias.
    Standing height about 1.76 m (shoulders at 1.44 m); with the arms hanging down the palms
    face the thighs.

    The free joint's placement is the world origin, so ``model.neutral()`` puts the pelvis
    origin at the origin (feet below the ground); use :func:`crowd_configuration` (with
    ``k = 1`` or the model) for a configuration standing on the ground plane z = 0, the
    pelvis at :data:`HUMANOID_PELVIS_HEIGHT`. With ``floating_base=False`` the pelvis is
    welded to the world at that height (nq = 90, nv = 89).

    Parameters
    ----------
    name_prefix : str - prepended to every body and joint name (e.g. ``"c7_"`` in a crowd)
    floating_base : bool - free joint (True, nq = 97, nv = 95) or fixed pelvis (nq = 90, nv = 89)
    total_mass : float > 0 - [kg]
    gravity : (3,) float - [m/s^2]

    Returns
    -------
    Model with nb = 89, bodies named ``{prefix}pelvis``, ``{prefix}l_hand``, ... in
    depth-first order (pelvis, spine, chest, neck, head, left arm, right arm, left leg,
    right leg).

    Raises ValueError for total_mass <= 0 or a non-string prefix.
    """
    if not isinstance(name_prefix, str):
        raise ValueError(f"name_prefix must be a string, got {name_prefix!r}")
    total_mass = _positive(total_mass, "total_mass")
    return _humanoid_builder(name_prefix, bool(floating_base), total_mass, gravity).build()


def crowd(k: int = 200, spacing: float = 1.0, *, return_configuration: bool = False,
          total_mass: float = 70.0, gravity=GRAVITY):
    """``k`` free-floating humanoids in one model (a forest), standing on a grid.

    The scene of Redon, Galoppo & Lin (2005), "Adaptive dynamics of articulated bodies",
    Fig. 1: 200 human characters = 17,800 rigid bodies and 19,000 DOF.

    Character c (``c = 0 .. k-1``) is a copy of :func:`humanoid` with name prefix ``"c{c}_"``
    occupying bodies ``89 c .. 89 c + 88``; its pelvis has parent -1 and a free joint placed
    at the world origin. Since the characters' positions live in ``q`` (the free joints),
    the grid placement is a configuration: :func:`crowd_configuration` ``(model, spacing)``
    (also returned here when ``return_configuration=True``).

    Parameters
    ----------
    k : int >= 1 - number of characters
    spacing : float > 0 - grid spacing in x and y [m]; used for the returned configuration
    return_configuration : bool - also return the standing grid configuration
    total_mass : float > 0 - mass of each character [kg]
    gravity : (3,) float - [m/s^2]

    Returns
    -------
    model : Model with nb = 89 k, nv = 95 k, nq = 97 k
    q0 : (97 k,) float64, only if ``return_configuration`` - see :func:`crowd_configuration`

    Raises ValueError for k < 1, spacing <= 0 or total_mass <= 0.
    """
    k = _count(k, "k", 1)
    spacing = _positive(spacing, "spacing")
    t = humanoid("", True, total_mass=total_mass, gravity=gravity)
    nb = t.nb
    off = (np.arange(k) * nb)[:, None]
    parent = np.where(t.body_parent[None, :] >= 0, t.body_parent[None, :] + off, -1).ravel()
    tile = lambda a: np.tile(a, (k,) + (1,) * (a.ndim - 1))
    model = Model(body_name=[f"c{c}_{s}" for c in range(k) for s in t.body_name],
                  joint_name=[f"c{c}_{s}" for c in range(k) for s in t.joint_name],
                  body_parent=parent, jnt_type=tile(t.jnt_type), jnt_axis=tile(t.jnt_axis),
                  jnt_Xtree_E=tile(t.jnt_Xtree_E), jnt_Xtree_r=tile(t.jnt_Xtree_r),
                  body_mass=tile(t.body_mass), body_com=tile(t.body_com),
                  body_I_com=tile(t.body_I_com), gravity=t.gravity)
    if return_configuration:
        return model, crowd_configuration(model, spacing)
    return model


def crowd_configuration(model_or_k, spacing: float = 1.0, *,
                        height: float = HUMANOID_PELVIS_HEIGHT) -> np.ndarray:
    """Configuration that stands the free-floating characters of a forest on a grid.

    Every root body (``body_parent == -1``) with a free joint, taken in body order
    ``c = 0, 1, ..``, gets position ``(x_c, y_c, height)`` and the identity quaternion; all
    other coordinates are neutral (zero angles, identity quaternions). The grid has
    ``ncols = ceil(sqrt(k))`` columns: ``x_c = (c % ncols - (ncols - 1) / 2) spacing``,
    ``y_c = (c // ncols - (nrows - 1) / 2) spacing``, centred on the origin. With the default
    ``height`` the humanoids' soles touch the ground plane z = 0.

    Parameters
    ----------
    model_or_k : Model or int - a model (e.g. :func:`crowd` or :func:`humanoid`) or the
        number k of characters of ``crowd(k)``
    spacing : float > 0 - grid spacing [m]
    height : float - z of each root origin [m]

    Returns
    -------
    q : (nq,) float64

    Raises ValueError if the model has no free-floating root, or for a bad k or spacing.

    Source: the crowd of Redon, Galoppo & Lin (2005), Fig. 1.
    """
    spacing = _positive(spacing, "spacing")
    height = float(height)
    if isinstance(model_or_k, Model):
        model = model_or_k
        q = model.neutral()
        roots = np.flatnonzero((model.body_parent == -1) & (model.jnt_type == JOINT_TYPES["free"]))
        if roots.size == 0:
            raise ValueError("crowd_configuration: the model has no root body with a free joint")
        qadr = model.jnt_qadr[roots]
    else:
        k = _count(model_or_k, "k", 1)
        t = humanoid("", True)
        q = np.tile(t.neutral(), k)
        qadr = np.arange(k) * t.nq + t.jnt_qadr[0]
    k = qadr.size
    ncols = int(np.ceil(np.sqrt(k)))
    nrows = int(np.ceil(k / ncols))
    c = np.arange(k)
    q[qadr] = (c % ncols - (ncols - 1) / 2.0) * spacing
    q[qadr + 1] = (c // ncols - (nrows - 1) / 2.0) * spacing
    q[qadr + 2] = height
    q[qadr + 3] = 1.0
    q[qadr + 4] = q[qadr + 5] = q[qadr + 6] = 0.0
    return q


# ---------------------------------------------------------------------------- two-link arm

def two_link_arm(l1: float = 2.0, m1: float = 10.0, l2: float = 0.02, m2: float = 0.1,
                 width: float = 0.02, *, gravity=GRAVITY) -> Model:
    """The ill-conditioned two-link arm of Ascher, Pai & Cloutier (1997), "Forward dynamics,
    elimination methods, and formulation stiffness in robot simulation", Example 1
    (Fig. 1, Table 1; eq. 9 for its joint-space inertia).

    The paper numbers links from the tip (Jain 1991): link 1 is the distal link (length
    ``l1``, mass ``m1``), link 2 the proximal one (``l2``, ``m2``), jointed to the world.
    Ill-conditioning comes from ``l1, m1 >> l2, m2``; the defaults are the paper's
    (l1 = 2.0 m, m1 = 10.0 kg, l2 = 0.02 m, m2 = 0.1 kg, width 0.02 m).

    Our bodies are numbered from the base: body 0 = ``"link2"`` (proximal), body 1 =
    ``"link1"`` (distal), so **q[0] is the base joint (the paper's q_2) and q[1] the tip joint
    (the paper's q_1)**. Both joints are revolute about y (parallel); the base joint is at the
    world origin and the tip joint at (l2, 0, 0) in link 2's frame. Each link is a uniform box
    of length l along its x axis with a width x width square cross-section, COM at
    (l/2, 0, 0). At q = 0 the arm lies along +x (tip at (l1 + l2, 0, 0)), so the default gravity
    (0, 0, -9.81) is orthogonal to the arm, as in the paper.

    Parameters
    ----------
    l1, m1 : float > 0 - distal link length [m] and mass [kg]
    l2, m2 : float > 0 - proximal link length [m] and mass [kg]
    width : float > 0 - cross-section edge of both links [m]
    gravity : (3,) float - [m/s^2]

    Returns
    -------
    Model with nb = nq = nv = 2; joints ``joint2`` (base) and ``joint1`` (tip).

    Raises ValueError for a non-positive length, mass or width.
    """
    l1, m1 = _positive(l1, "l1"), _positive(m1, "m1")
    l2, m2 = _positive(l2, "l2"), _positive(m2, "m2")
    w = _positive(width, "width")
    L = np.array([l2, l1])
    m = np.array([m2, m1])
    com = np.zeros((2, 3))
    com[:, 0] = 0.5 * L
    r = np.zeros((2, 3))
    r[1, 0] = l2
    return Model(body_name=["link2", "link1"], joint_name=["joint2", "joint1"],
                 body_parent=[-1, 0], jnt_type=[JOINT_TYPES["revolute"]] * 2,
                 jnt_axis=[[0.0, 1.0, 0.0]] * 2, jnt_Xtree_E=np.array([np.eye(3)] * 2),
                 jnt_Xtree_r=r, body_mass=m, body_com=com,
                 body_I_com=_box_inertia(m, L, w, w), gravity=np.asarray(gravity, dtype=np.float64))


def prismatic_pair(m1: float = 1e9, m2: float = 1.0, axis=(0.0, 0.0, 1.0), *,
                   length_per_mass: float = 1.0, width: float = 0.1,
                   gravity=(0.0, 0.0, 0.0)) -> Model:
    """Two collinear prismatic joints: Examples 2 and 3 of Ascher, Pai & Cloutier (1997),
    "Forward dynamics, elimination methods, and formulation stiffness in robot
    simulation" (sec. 3-4, Table 2).

    Links are numbered from the tip as in the paper: link 1 is the heavy distal link
    (mass ``m1``), link 2 the light proximal one (``m2``), jointed to the world. Both joints
    slide along the same unit ``axis`` (joint matrices ``H_1 = H_2 = (0, 0, 0, axis)``,
    angular part first); the tip joint sits at the origin of link 2 (``Phi_21 = I``, the
    paper's approximation of a short base link). The paper's case (1) is
    ``axis = (0, 0, 1)``, ``H = (0,0,0,0,0,1)``; case (2) is ``axis = (0, 1, 1) / sqrt(2)``,
    ``H = (0,0,0,0,1,1)/sqrt(2)``: coordinates not aligned with the direction of motion.
    "The lengths of the links are proportional to their masses": each link is a uniform
    box of length ``l_k = length_per_mass * m_k`` along its x axis (``width`` x ``width``
    cross-section), COM at ``(l_k / 2, 0, 0)``. No gravity by default (the paper's
    ``a_k = b_k = 0`` at rest); the paper's forces are ``tau_1 = 981``, ``tau_2 = 9.81``.

    In exact arithmetic the base joint's articulated pivot is ``D_2 = m2`` for every ``m1``
    and, at rest without gravity, the accelerations are ``qdd_2 = (tau_2 - tau_1) / m2``
    (base) and ``qdd_1 = tau_1 / m1 - qdd_2`` (tip, relative): 971.19 m/s^2 + 981 / m1 for
    the paper's forces.

    Our bodies are numbered from the base: body 0 = ``"link2"``, body 1 = ``"link1"``, so
    **q[0] is the base joint (the paper's q_2) and q[1] the tip joint (the paper's q_1)**,
    as in :func:`two_link_arm`.

    Parameters
    ----------
    m1, m2 : float > 0 - tip and base link masses [kg] (the paper: m1 in 1e6 .. 1e9, m2 = 1)
    axis : (3,) float - joint direction, normalized here (need not be unit) [-]
    length_per_mass : float > 0 - link length per unit mass [m/kg] (the paper gives none;
        lengths do not enter the joint-space pivots of linear joints)
    width : float > 0 - cross-section edge of both links [m]
    gravity : (3,) float - [m/s^2]

    Returns
    -------
    Model with nb = nq = nv = 2; joints ``joint2`` (base) and ``joint1`` (tip).

    Raises ValueError for a non-positive mass, length scale or width, or a zero axis.
    """
    m1, m2 = _positive(m1, "m1"), _positive(m2, "m2")
    c, w = _positive(length_per_mass, "length_per_mass"), _positive(width, "width")
    a = np.asarray(axis, dtype=np.float64)
    if a.shape != (3,) or not np.all(np.isfinite(a)) or not np.linalg.norm(a) > 0.0:
        raise ValueError(f"axis must be a finite non-zero 3-vector, got {axis!r}")
    a = a / np.linalg.norm(a)
    m = np.array([m2, m1])
    L = c * m
    com = np.zeros((2, 3))
    com[:, 0] = 0.5 * L
    return Model(body_name=["link2", "link1"], joint_name=["joint2", "joint1"],
                 body_parent=[-1, 0], jnt_type=[JOINT_TYPES["prismatic"]] * 2,
                 jnt_axis=[a, a], jnt_Xtree_E=np.array([np.eye(3)] * 2),
                 jnt_Xtree_r=np.zeros((2, 3)), body_mass=m, body_com=com,
                 body_I_com=_box_inertia(m, L, w, w), gravity=np.asarray(gravity, dtype=np.float64))


# ---------------------------------------------------------------------- closed loops
# Planar linkages with loop joints (Ascher & Lin 1999, sec. 4). All move in the x-z plane
# (joints revolute about +y, so a positive joint angle turns +x towards -z; gravity -z); each link is a body whose frame sits at one
# end ("P0") with its x axis along the link, so that q = 0 is the assembled configuration
# given by the world points the linkage is built from.

def _planar_R(d):
    """Rotation (body -> world) whose x axis points along d = (dx, 0, dz) (about y)."""
    d = np.asarray(d, dtype=np.float64)
    return rot_y(np.arctan2(-d[2], d[0]))


def _rods_body(P0, P1, extra, density, radius_ratio):
    """Mass, COM and inertia (body coordinates; frame at P0, x along P1 - P0) of a rigid
    body made of thin uniform rods: P0-P1 plus ``extra`` rods given as pairs of world points."""
    R = _planar_R(np.asarray(P1) - np.asarray(P0))
    rods = [(np.asarray(P0, float), np.asarray(P1, float))] + [(np.asarray(a, float), np.asarray(b, float))
                                                                for a, b in extra]
    ms, cs, Is = [], [], []
    for a, b in rods:
        L = float(np.linalg.norm(b - a))
        m = density * L
        vec = R.T @ (b - a)
        ms.append(m)
        cs.append(R.T @ (0.5 * (a + b) - P0))
        Is.append(_rod_inertia(m, vec, radius_ratio * L))
    M = float(sum(ms))
    c = sum(m * x for m, x in zip(ms, cs)) / M
    I = np.zeros((3, 3))
    for m, x, Ii in zip(ms, cs, Is):
        d = x - c
        I += Ii + m * (d @ d * np.eye(3) - np.outer(d, d))
    return R, M, c, I


def _planar_linkage(links, tree, loops, *, gravity, density, radius_ratio=1e-3,
                    loop_kind="point", extra_inertia=None):
    """Build a planar linkage.

    links : dict name -> (P0, P1, extra rods) in world coordinates (3-vectors, y = 0)
    tree : list of (name, parent name or None, ) in an order with parents first; the
        joint sits at the link's P0 (on the parent, or on the world)
    loops : list of (name_a, name_b, point): a loop joint at the world point
    """
    b = ModelBuilder(gravity=gravity)
    frames = {}
    for name, parent in tree:
        P0, P1, extra = links[name]
        R, m, c, I = _rods_body(P0, P1, extra, density, radius_ratio)
        if extra_inertia and name in extra_inertia:
            I = I + np.asarray(extra_inertia[name])
        frames[name] = (R, np.asarray(P0, float))
        if parent is None:
            Rp, pp = np.eye(3), np.zeros(3)
        else:
            Rp, pp = frames[parent]
        b.add_body(name, parent, "revolute", axis=(0.0, 1.0, 0.0),
                   origin_xyz=Rp.T @ (np.asarray(P0, float) - pp), origin_R=Rp.T @ R,
                   mass=m, com=c, inertia=I)
    for k, (na, nb_, X) in enumerate(loops):
        Ra, pa = frames[na]
        Rb, pb = frames[nb_]
        X = np.asarray(X, float)
        b.add_loop_joint(na, Ra.T @ (X - pa), nb_, Rb.T @ (X - pb), loop_kind,
                         axis=(0.0, 1.0, 0.0) if loop_kind in ("point", "revolute") else None,
                         name=f"loop_{na}_{nb_}")
    return b.build()


def _xz(x, z):
    return np.array([x, 0.0, z], dtype=np.float64)


def square_chain(n: int = 16, *, link_length: float = 1.0, link_mass: float = 1.0,
                 loop_kind: str = "point", gravity=GRAVITY) -> Model:
    """The falling chain of unit squares of Ascher & Lin (1999), Example 4.1 (Fig. 4.1).

    A planar ladder of ``n`` squares in the x-z plane: top joints ``T_i = (i L, 0, 0)``,
    bottom joints ``B_i = (i L, 0, -L)``, i = 0..n; links (uniform thin rods of length L and
    mass m) ``rung{i}`` (T_i -> B_i, i = 0..n), ``top{i}`` (T_i -> T_{i+1}) and ``bot{i}``
    (B_i -> B_{i+1}), i = 0..n-1: 3n + 1 bodies. Joint 0 (T_0) is pinned to the world, the
    chain starts at rest as a horizontal ladder and falls under gravity.

    Spanning tree: ``rung0`` on the world at T_0; ``top0`` and ``bot0`` on ``rung0``;
    ``top{i}`` and ``rung{i}`` on ``top{i-1}`` at T_i; ``bot{i}`` on ``bot{i-1}`` at B_i.
    One loop joint per square closes the bottom of ``rung{i}`` on the end of ``bot{i-1}``
    at B_i (kind ``"point"``: 2 rows, the paper's 2D loop closure; or ``"revolute"``: 5
    rows, 3 of them redundant in the plane). n loops, ``nv = 3n + 1``, n + 1 degrees of
    freedom. q = 0 is the initial (closed) configuration.

    Raises ValueError for n < 1 or a non-positive length or mass.
    """
    n = _count(n, "n", 1)
    L = _positive(link_length, "link_length")
    m = _positive(link_mass, "link_mass")
    T = [_xz(i * L, 0.0) for i in range(n + 1)]
    B = [_xz(i * L, -L) for i in range(n + 1)]
    links, tree, loops = {}, [], []
    links["rung0"] = (T[0], B[0], [])
    tree.append(("rung0", None))
    links["top0"] = (T[0], T[1], [])
    links["bot0"] = (B[0], B[1], [])
    tree += [("top0", "rung0"), ("bot0", "rung0")]
    for i in range(1, n + 1):
        links[f"rung{i}"] = (T[i], B[i], [])
        tree.append((f"rung{i}", f"top{i - 1}"))
        if i < n:
            links[f"top{i}"] = (T[i], T[i + 1], [])
            links[f"bot{i}"] = (B[i], B[i + 1], [])
            tree += [(f"top{i}", f"top{i - 1}"), (f"bot{i}", f"bot{i - 1}")]
        loops.append((f"rung{i}", f"bot{i - 1}", B[i]))
    return _planar_linkage(links, tree, loops, gravity=gravity, density=m / L, loop_kind=loop_kind)


def square_net(rows: int = 4, cols: int = 4, *, breeze: float = 2.0, link_length: float = 1.0,
               link_mass: float = 1.0, loop_kind: str = "point", gravity=GRAVITY) -> Model:
    """The square net ("veil") of Ascher & Lin (1999), Example 4.2 (Fig. 4.3): a planar net of
    ``rows x cols`` unit squares hanging in the x-z plane from its top joints, which are
    pinned to the world, moved by a breeze.

    Joints ``P(r, c) = (c L, 0, -r L)``, r = 0..rows, c = 0..cols; the top row (r = 0) is
    pinned. Links (thin uniform rods, length L, mass m): ``v{r}_{c}`` = P(r, c) -> P(r+1, c)
    and, below the pinned row, ``h{r}_{c}`` = P(r, c) -> P(r, c+1) (r >= 1; the top row's
    horizontal links are held by two pins and are part of the world). Spanning tree: each
    column of ``v`` links hangs from its pin; ``h{r}_{c}`` hangs on ``v{r-1}_{c}`` at P(r, c);
    one loop joint per square closes ``h{r}_{c}`` on ``v{r-1}_{c+1}`` at P(r, c+1).
    rows x cols loops, rows (cols + 1) + rows cols bodies, ``rows`` degrees of freedom
    (each row of squares shears as a whole).

    The breeze is a uniform horizontal force of ``breeze`` [N/kg] along +x on every link
    (a steady, mass-proportional wind), folded into the model's gravity
    ``(breeze, 0, -9.81)``: the net, released at rest hanging vertically, swings to the
    right (up to about ``2 atan(breeze / g)``) and back. q = 0 is that initial configuration.

    Raises ValueError for rows or cols < 1, or a non-positive length or mass.
    """
    rows = _count(rows, "rows", 1)
    cols = _count(cols, "cols", 1)
    L = _positive(link_length, "link_length")
    m = _positive(link_mass, "link_mass")
    g = np.asarray(gravity, dtype=np.float64) + np.array([float(breeze), 0.0, 0.0])
    P = {(r, c): _xz(c * L, -r * L) for r in range(rows + 1) for c in range(cols + 1)}
    links, tree, loops = {}, [], []
    for c in range(cols + 1):
        for r in range(rows):
            links[f"v{r}_{c}"] = (P[r, c], P[r + 1, c], [])
            tree.append((f"v{r}_{c}", None if r == 0 else f"v{r - 1}_{c}"))
            if c < cols:
                links[f"h{r + 1}_{c}"] = (P[r + 1, c], P[r + 1, c + 1], [])
                tree.append((f"h{r + 1}_{c}", f"v{r}_{c}"))
    # loop joints need both bodies: add after the tree (builder resolves by name)
    for c in range(cols):
        for r in range(1, rows + 1):
            loops.append((f"h{r}_{c}", f"v{r - 1}_{c + 1}", P[r, c + 1]))
    return _planar_linkage(links, tree, loops, gravity=g, density=m / L, loop_kind=loop_kind)


def _circle_intersection(P, r1, Q, r2, pick):
    """Intersection of the circles (P, r1), (Q, r2) in the x-z plane; ``pick(X1, X2)``
    chooses one. ValueError if they do not meet."""
    P = np.asarray(P, float)
    Q = np.asarray(Q, float)
    d = Q - P
    D = float(np.linalg.norm(d))
    if D > r1 + r2 or D < abs(r1 - r2) or D == 0:
        raise ValueError(f"the linkage cannot be assembled: circles of radii {r1}, {r2} at "
                         f"distance {D:.6g} do not intersect")
    a = (r1 * r1 - r2 * r2 + D * D) / (2 * D)
    hgt = np.sqrt(max(r1 * r1 - a * a, 0.0))
    u = d / D
    w = np.array([-u[2], 0.0, u[0]])  # u rotated by +90 degrees in the x-z plane
    X0 = P + a * u
    return pick(X0 + hgt * w, X0 - hgt * w)


FOUR_BAR = dict(crank=1.0, coupler=3.5, rocker=3.0, ground=4.0)
"""Default link lengths [m] of :func:`four_bar` (Grashof crank-rocker: s + l <= p + q)."""


def four_bar(theta0: float = 0.5, *, crank: float = 1.0, coupler: float = 3.5,
             rocker: float = 3.0, ground: float = 4.0, density: float = 1.0,
             loop_kind: str = "revolute", gravity=GRAVITY) -> Model:
    """A planar four-bar crank-rocker with one loop joint.

    Ground pivots ``O2 = (0, 0, 0)`` (crank) and ``O4 = (ground, 0, 0)`` (rocker) in the x-z
    plane; crank ``O2 -> A``, coupler ``A -> B``, rocker ``O4 -> B`` (thin uniform rods of
    ``density`` [kg/m]). At the crank angle ``theta0`` [rad] (from +x towards +z)
    ``A = crank (cos theta0, 0, sin theta0)`` and B is the loop-closure point above the line
    A-O4 (the open assembly). Spanning tree: ``crank`` on the world at O2, ``coupler`` on
    the crank at A, ``rocker`` on the world at O4; the loop joint ``loop_coupler_rocker``
    joins coupler and rocker at B (``loop_kind`` "revolute", 5 rows, or "point", 2 rows).
    One degree of freedom; the crank angle is ``theta0 - q[0]`` (every joint turns about
    +y, which turns +x towards -z). With the defaults
    (1, 3.5, 3, 4: ``s + l = 5 <= p + q = 6.5``, shortest link the crank) the crank turns
    fully and the rocker oscillates (Grashof crank-rocker). q = 0 is the assembled pose.

    Raises ValueError for non-positive lengths or a linkage that cannot be assembled at theta0.
    """
    a = _positive(crank, "crank")
    b = _positive(coupler, "coupler")
    c = _positive(rocker, "rocker")
    d = _positive(ground, "ground")
    O2, O4 = _xz(0.0, 0.0), _xz(d, 0.0)
    A = _xz(a * np.cos(theta0), a * np.sin(theta0))
    B = _circle_intersection(A, b, O4, c, lambda X1, X2: X1 if X1[2] >= X2[2] else X2)
    links = {"crank": (O2, A, []), "coupler": (A, B, []), "rocker": (O4, B, [])}
    tree = [("crank", None), ("coupler", "crank"), ("rocker", None)]
    return _planar_linkage(links, tree, [("coupler", "rocker", B)], gravity=gravity,
                           density=_positive(density, "density"), loop_kind=loop_kind)


JANSEN = dict(a=38.0, b=41.5, c=39.3, d=40.1, e=55.8, f=39.4, g=36.7, h=65.7, i=49.0, j=50.0,
              k=61.9, l=7.8, m=15.0)
"""Theo Jansen's published link lengths ("holy numbers", in his units; Jansen, *The Great
Pretender*, 2007; Wikipedia "Jansen's linkage"): a, l the offsets of the fixed pivot from
the crank axle, m the crank, j, k the crank links, b-d-e and g-h-i the two rigid triangles,
c and f the remaining links."""


def strandbeest_points(theta: float = 0.0, scale: float = 0.01):
    """Joint positions (x-z plane, [m]) of a Jansen leg at crank angle ``theta`` [rad].

    Returns a dict: ``O`` crank axle (origin), ``Z`` fixed pivot ``(-a, -l)``, ``B`` crank
    pin, ``C`` (j meets b), ``D`` (third vertex of triangle b-d-e), ``E`` (k meets c), ``F``
    (f meets g), ``G`` the foot (third vertex of triangle g-h-i); lengths of
    :data:`JANSEN` times ``scale`` (|Z-C| = b, |Z-D| = d, |C-D| = e; |E-F| = g, |F-G| = h,
    |E-G| = i). ValueError if it cannot be assembled.
    """
    L = {k: v * scale for k, v in JANSEN.items()}
    O = _xz(0.0, 0.0)
    Z = _xz(-L["a"], -L["l"])
    B = _xz(L["m"] * np.cos(theta), L["m"] * np.sin(theta))
    up = lambda X1, X2: X1 if X1[2] >= X2[2] else X2  # noqa: E731
    down = lambda X1, X2: X1 if X1[2] < X2[2] else X2  # noqa: E731
    left = lambda X1, X2: X1 if X1[0] <= X2[0] else X2  # noqa: E731
    C = _circle_intersection(B, L["j"], Z, L["b"], up)
    D = _circle_intersection(Z, L["d"], C, L["e"], left)
    E = _circle_intersection(B, L["k"], Z, L["c"], down)
    F = _circle_intersection(D, L["f"], E, L["g"], left)
    G = _circle_intersection(F, L["h"], E, L["i"], down)
    return dict(O=O, Z=Z, B=B, C=C, D=D, E=E, F=F, G=G)


def strandbeest_leg(theta0: float = 0.0, *, scale: float = 0.01, density: float = 1.0,
                    flywheel_inertia: float = 5.0, loop_kind: str = "point",
                    gravity=GRAVITY) -> Model:
    """One leg of Theo Jansen's Strandbeest (Jansen's linkage), driven by its crank.

    Built from :func:`strandbeest_points` at crank angle ``theta0`` with the published link
    lengths :data:`JANSEN` times ``scale`` (default: Jansen's units read as cm). Bodies
    (thin uniform rods of ``density`` [kg/m]; the two triangles rigid): ``crank`` (O -> B,
    on the world at O, with an extra ``flywheel_inertia`` [kg m^2] about its axle: the
    crank's drive), ``link_j`` (B -> C) and ``link_k`` (B -> E) on the crank at B,
    ``tri_bde`` (Z -> C, with D) and ``link_c`` (Z -> E) on the world at the fixed pivot Z,
    ``link_f`` (D -> F) on the triangle at D, ``foot`` (E -> F, with the foot point G) on
    ``link_c`` at E. Three loop joints close C (``link_j``-``tri_bde``), E
    (``link_k``-``link_c``) and F (``link_f``-``foot``): 7 bodies, 1 degree of freedom.
    The leg frame is fixed to the world; give the crank a speed (consistent joint
    velocities: :func:`articulated.algorithms.loops.consistent_velocity`) and the foot
    traces Jansen's walking curve. The foot point G is at ``model.strandbeest_foot`` (body,
    point in body coordinates). q = 0 is the assembled pose at ``theta0``.

    Raises ValueError for non-positive parameters.
    """
    s = _positive(scale, "scale")
    P = strandbeest_points(theta0, s)
    links = {
        "crank": (P["O"], P["B"], []),
        "link_j": (P["B"], P["C"], []),
        "link_k": (P["B"], P["E"], []),
        "tri_bde": (P["Z"], P["C"], [(P["C"], P["D"]), (P["Z"], P["D"])]),
        "link_c": (P["Z"], P["E"], []),
        "link_f": (P["D"], P["F"], []),
        "foot": (P["E"], P["F"], [(P["F"], P["G"]), (P["E"], P["G"])]),
    }
    tree = [("crank", None), ("link_j", "crank"), ("link_k", "crank"), ("tri_bde", None),
            ("link_c", None), ("link_f", "tri_bde"), ("foot", "link_c")]
    loops = [("link_j", "tri_bde", P["C"]), ("link_k", "link_c", P["E"]),
             ("link_f", "foot", P["F"])]
    fw = np.diag([0.5, 1.0, 0.5]) * float(flywheel_inertia)  # a disk about the axle (y)
    if flywheel_inertia < 0:
        raise ValueError(f"flywheel_inertia must be >= 0, got {flywheel_inertia}")
    model = _planar_linkage(links, tree, loops, gravity=gravity,
                            density=_positive(density, "density"), loop_kind=loop_kind,
                            extra_inertia={"crank": fw})
    Rf = _planar_R(P["F"] - P["E"])
    model.strandbeest_foot = ("foot", Rf.T @ (P["G"] - P["E"]))
    return model
