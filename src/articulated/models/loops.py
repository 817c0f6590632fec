"""Closed loops: planar linkages with loop joints.

Closed loops: planar linkages with loop joints (square chain, square net, four-bar,
Jansen's strandbeest leg)."""

from __future__ import annotations

import numpy as np

from ..builder import ModelBuilder
from ..model import Model
from ..spatial import rot_y
from .description import scene
from ._common import GRAVITY, _count, _positive, _rod_inertia


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


@scene
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


@scene
def square_net(rows: int = 4, cols: int = 4, *, breeze: float = 2.0, link_length: float = 1.0,
               link_mass: float = 1.0, loop_kind: str = "point", gravity=GRAVITY) -> Model:
    """Build the square net ("veil") of Ascher & Lin (1999), Example 4.2 (Fig. 4.3).

    A planar net of ``rows x cols`` unit squares hanging in the x-z plane from its top
    joints, which are pinned to the world, moved by a breeze.

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


@scene
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
    :data:`JANSEN` times ``scale`` (``|Z-C| = b``, ``|Z-D| = d``, ``|C-D| = e``;
    ``|E-F| = g``, ``|F-G| = h``, ``|E-G| = i``). ValueError if it cannot be assembled.
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


@scene
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
