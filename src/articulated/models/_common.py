"""What the scene generators share: default gravity, argument checks, inertias of simple
shapes, the depth-first renumbering of a tree and the Model of a vectorized chain."""

from __future__ import annotations

import numpy as np

from ..model import Model


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
