"""Serial chains: the pendulum, the bicycle chain, the two-link arm and the prismatic pair."""

from __future__ import annotations

import numpy as np

from ..model import JOINT_TYPES, Model
from .description import scene
from ._common import GRAVITY, _box_inertia, _chain_model, _count, _positive, _unit_axes


# ---------------------------------------------------------------------------- pendulum

@scene
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
    n : int >= 1
        Number of links (= bodies = revolute joints = DOF).
    link_length : float > 0
        Nominal link length L [m]; joint i+1 sits at (0, 0, -L_i) in link i's frame, the COM
        at (0, 0, -L_i/2).
    mass : float > 0
        Nominal link mass [kg].
    seed : None or int
        ``None``: all links identical. An int draws every link length and mass
        independently, uniform in [0.5, 1.5] times the nominal values (a deterministic
        non-uniform pendulum for tests).
    width : float > 0, optional
        Square cross-section edge of the box links [m]; default ``link_length / 10``.
    gravity : (3,) float
        [m/s^2].

    Returns
    -------
    Model with nb = nq = nv = n; bodies ``link0 .. link{n-1}`` (joints ``link{i}_joint``),
    a chain in depth-first order (``body_parent[i] = i - 1``).

    Raises
    ------
    ValueError
        N < 1 or a non-positive length, mass or width.

    Notes
    -----
    Vectorized (no per-body Python validation): building a long chain spends almost all of
    its time in the Model constructor.
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


@scene
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
    n : int >= 1
        Number of links (= DOF).
    pitch : float > 0
        Pin-to-pin distance [m].
    gravity : (3,) float
        [m/s^2].

    Returns
    -------
    Model with nb = nq = nv = n, bodies ``link0 ..`` (``body_parent[i] = i - 1``).

    Raises
    ------
    ValueError
        For n < 1 or pitch <= 0.
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

# ---------------------------------------------------------------------------- two-link arm

@scene
def two_link_arm(l1: float = 2.0, m1: float = 10.0, l2: float = 0.02, m2: float = 0.1,
                 width: float = 0.02, *, gravity=GRAVITY) -> Model:
    """Build the ill-conditioned two-link arm of Ascher, Pai & Cloutier (1997), Example 1.

    From "Forward dynamics, elimination methods, and formulation stiffness in robot
    simulation" (Fig. 1, Table 1; eq. 9 for its joint-space inertia).

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
    l1, m1 : float > 0
        Distal link length [m] and mass [kg].
    l2, m2 : float > 0
        Proximal link length [m] and mass [kg].
    width : float > 0
        Cross-section edge of both links [m].
    gravity : (3,) float
        [m/s^2].

    Returns
    -------
    Model with nb = nq = nv = 2; joints ``joint2`` (base) and ``joint1`` (tip).

    Raises
    ------
    ValueError
        For a non-positive length, mass or width.
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


@scene
def prismatic_pair(m1: float = 1e9, m2: float = 1.0, axis=(0.0, 0.0, 1.0), *,
                   length_per_mass: float = 1.0, width: float = 0.1,
                   gravity=(0.0, 0.0, 0.0)) -> Model:
    """Build two collinear prismatic joints (Ascher, Pai & Cloutier 1997, Examples 2 and 3).

    From "Forward dynamics, elimination methods, and formulation stiffness in robot
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
    m1, m2 : float > 0
        Tip and base link masses [kg] (the paper: m1 in 1e6 .. 1e9, m2 = 1).
    axis : (3,) float
        Joint direction, normalized here (need not be unit) [-].
    length_per_mass : float > 0
        Link length per unit mass [m/kg] (the paper gives none; lengths do not enter the
        joint-space pivots of linear joints).
    width : float > 0
        Cross-section edge of both links [m].
    gravity : (3,) float
        [m/s^2].

    Returns
    -------
    Model with nb = nq = nv = 2; joints ``joint2`` (base) and ``joint1`` (tip).

    Raises
    ------
    ValueError
        For a non-positive mass, length scale or width, or a zero axis.
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
