"""What only Python computes, called from inside the compiled step.

What only Python computes, called from inside the compiled step: a user's own applied
forces (a :class:`~articulated.simulation.forces.Force` without a compiled form) and the
mesh pairs that go through coal.

A simulator registers an object with :func:`register` and passes the integer it returns
(its *hook*) in its bundles; the compiled stages call it through numba's object mode
(:func:`python_forces`, :func:`python_potential`, :func:`python_contacts`), so a step is
one compiled pipeline whatever its forces and shapes, and only these calls run in Python
(about a microsecond each besides the Python work itself). A hook of -1 means none: the
stages then skip the call. An exception raised by the Python code propagates out of the
compiled loop unchanged.

The object registered for forces has ``forces(t, q, qd, tau, f_ext)`` (writes the applied
forces at the state into ``tau`` (nv,) and ``f_ext`` (nb, 6), both cleared first) and
``potential(q)`` (their potential energy [J]); the one registered for contacts is a
callable ``(out, k, npl, nn) -> int`` (see :func:`python_contacts`); the one for an adaptive
simulator's metric weights a callable without arguments (:func:`python_weights`).
"""

from __future__ import annotations

import itertools
import math
import warnings
import weakref

from numba import njit, objmode

from ..config import JIT

warnings.filterwarnings("ignore", message="Code running in object mode won't allow parallel")

_HOOKS: dict = {}
_IDS = itertools.count()

HOOK_JIT = dict(JIT, nogil=False)
"""Flags of the calling stages: :data:`~articulated.config.JIT` holding the GIL (object
mode needs it)."""


def register(obj, owner) -> int:
    """Register ``obj`` for the compiled stages; returns its hook (an int >= 0), released
    when ``owner`` is garbage-collected (``obj`` must not refer to ``owner`` strongly)."""
    hook = next(_IDS)
    _HOOKS[hook] = obj
    weakref.finalize(owner, _HOOKS.pop, hook, None)
    return hook


def _forces(hook, t, q, qd, tau, f_ext):
    _HOOKS[hook].forces(t, q, qd, tau, f_ext)


def _potential(hook, q):
    return float(_HOOKS[hook].potential(q))


def _weights(hook):
    _HOOKS[hook]()


def _contacts(hook, out, k, npl, nn):
    return int(_HOOKS[hook](out, k, npl, nn))


@njit(**HOOK_JIT)
def python_forces(fa, t, q, qd, tau, f_ext):
    """The Python forces of the ``ForceArrays`` ``fa`` (its ``hook``) at time ``t`` [s] and
    ``q`` (nq,), ``qd`` (nv,) into ``tau`` (nv,) [N m | N] and ``f_ext`` (nb, 6) (body
    coordinates; both whole arrays). Returns False when an entry is not finite."""
    hq, hqd = fa.hq, fa.hqd
    for k in range(hq.shape[0]):        # (object mode boxes a view as its base array)
        hq[k] = q[k]
    for k in range(hqd.shape[0]):
        hqd[k] = qd[k]
    hook = fa.hook
    with objmode():
        _forces(hook, t, hq, hqd, tau, f_ext)
    for k in range(tau.shape[0]):
        if not math.isfinite(tau[k]):
            return False
    for b in range(f_ext.shape[0]):
        for a in range(6):
            if not math.isfinite(f_ext[b, a]):
                return False
    return True


@njit(**HOOK_JIT)
def python_potential(fa, q):
    """The potential energy [J] of the Python forces of the ``ForceArrays`` ``fa`` at ``q``
    (nq,)."""
    hq = fa.hq
    for k in range(hq.shape[0]):
        hq[k] = q[k]
    hook = fa.hook
    with objmode(V="float64"):
        V = _potential(hook, hq)
    return V


@njit(**HOOK_JIT)
def python_weights(hook):
    """The configuration-dependent metric weights of an adaptive simulator (``hook``, a
    callable that writes them into its solver's weights at the solver's ``q``), before an
    active-region update."""
    with objmode():
        _weights(hook)


@njit(**HOOK_JIT)
def python_contacts(hook, out, k, npl, nn):
    """The contacts of the mesh pairs that need coal (the near pairs ``npl .. nn - 1`` of
    the detector's :class:`~articulated.algorithms.collision_mesh.MeshPairs`, at the
    placements of its last broad phase) written into the contact buffer ``out`` from
    index ``k`` on (a whole buffer, not a view), when they fit. Returns the index after them (more than the buffer
    holds: nothing was written; grow it and call again)."""
    with objmode(k1="int64"):
        k1 = _contacts(hook, out, k, npl, nn)
    return k1
