"""Scene generators: deterministic models for tests, benchmarks and the papers' examples."""

from __future__ import annotations

import numpy as np

from .model import JOINT_TYPES, Model
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
    # DFS renumbering so that subtrees are contiguous (random parents are already < i,
    # but the builder's depth-first order is what every model has)
    children = [[] for _ in range(n)]
    for i in range(1, n):
        children[parent[i]].append(i)
    order, stack = [], [0]
    while stack:
        k = stack.pop()
        order.append(k)
        stack.extend(reversed(children[k]))
    order = np.array(order)
    new = np.empty(n, dtype=np.int64)
    new[order] = np.arange(n)
    par = np.array([new[parent[k]] if parent[k] >= 0 else -1 for k in order])
    return Model(body_name=[f"body{k}" for k in range(n)],
                 joint_name=[f"joint{k}" for k in range(n)],
                 body_parent=par, jnt_type=jtype[order], jnt_axis=axis[order],
                 jnt_Xtree_E=E[order], jnt_Xtree_r=r[order], body_mass=mass[order],
                 body_com=com[order], body_I_com=I_com[order], gravity=np.array([0.0, 0.0, -9.81]))
