"""The 89-body humanoid and crowds of humanoids."""

from __future__ import annotations

import numpy as np

from ..builder import ModelBuilder
from ..model import JOINT_TYPES, Model
from .description import scene
from ._common import GRAVITY, _box_inertia, _count, _positive, _rod_inertia


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


@scene
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
    name_prefix : str
        Prepended to every body and joint name (e.g. ``"c7_"`` in a crowd).
    floating_base : bool
        Free joint (True, nq = 97, nv = 95) or fixed pelvis (nq = 90, nv = 89).
    total_mass : float > 0
        [kg].
    gravity : (3,) float
        [m/s^2].

    Returns
    -------
    Model with nb = 89, bodies named ``{prefix}pelvis``, ``{prefix}l_hand``, ... in
    depth-first order (pelvis, spine, chest, neck, head, left arm, right arm, left leg,
    right leg).

    Raises
    ------
    ValueError
        For total_mass <= 0 or a non-string prefix.
    """
    if not isinstance(name_prefix, str):
        raise ValueError(f"name_prefix must be a string, got {name_prefix!r}")
    total_mass = _positive(total_mass, "total_mass")
    return _humanoid_builder(name_prefix, bool(floating_base), total_mass, gravity).build()


@scene
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
    k : int >= 1
        Number of characters.
    spacing : float > 0
        Grid spacing in x and y [m]; used for the returned configuration.
    return_configuration : bool
        Also return the standing grid configuration.
    total_mass : float > 0
        Mass of each character [kg].
    gravity : (3,) float
        [m/s^2].

    Returns
    -------
    model : Model with nb = 89 k, nv = 95 k, nq = 97 k
    q0 : (97 k,) float64, only if ``return_configuration``
        See :func:`crowd_configuration`.

    Raises
    ------
    ValueError
        For k < 1, spacing <= 0 or total_mass <= 0.
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
                  body_I_com=tile(t.body_I_com), gravity=t.gravity,
                  jnt_range=tile(t.jnt_range))
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
    model_or_k : Model or int
        A model (e.g. :func:`crowd` or :func:`humanoid`) or the number k of characters of
        ``crowd(k)``.
    spacing : float > 0
        Grid spacing [m].
    height : float
        Z of each root origin [m].

    Returns
    -------
    q : (nq,) float64

    Raises
    ------
    ValueError
        If the model has no free-floating root, or for a bad k or spacing.

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


