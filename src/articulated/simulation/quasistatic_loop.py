"""The compiled stepping loop of adaptive quasi-statics (Redon & Lin 2005, RL).

:func:`quasistatic_steps` runs a stretch of steps of
:class:`~articulated.simulation.quasistatic.QuasiStaticSimulator` (``method=
"quasistatic-adaptive"``) in one numba call when every applied force is a body force with
a compiled form (:class:`~articulated.PointForce`, :class:`~articulated.Spring`; the
bodies' velocities are zero, a spring's damper sees its anchor's velocity): per step the forces
(:func:`~articulated.simulation.forces.body_force_row`, from each body's world pose by the
hierarchical frames, RL Sec. 5.1, O(log n)), the lazy update of the force bodies' leaves
and their ancestors (RL Sec. 5.2; their linear coefficients only, since no joint has moved
since the last step's update),
the error-bounded partial back-substitution (RL Sec. 4.3), ``q (+)= h^2 qdd`` on the
computed joints and the lazy update of their nodes: the step of the simulator's Python
path without its per-call overhead (the unboxing of the solver's bundles at each kernel
call, and the forces' Python).

The total-acceleration coefficients (RL eq. 9) of the nodes a step recomputes are
refreshed every ``metric_every`` steps (:func:`metric_due`); in between, those nodes'
metric is marked stale (:func:`~articulated.algorithms.metric.mark_stale`) and the
back-substitution computes their joints before it may stop, so the certified bound of
every step is RL's.

Bundle: :data:`QSLoop`, built once per simulator by :func:`qs_loop_bundle`.
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np
from numba import njit

from .._byref import byref
from ..algorithms.back_substitution import _partial_back_substitution
from ..algorithms.bundles import STAT_BAD, STAT_BOUND, STAT_N
from ..algorithms.handles import _world_pose
from ..algorithms.metric import mark_stale
from ..algorithms.node_update import _dirty_nodes, _update_biases, _update_nodes
from ..algorithms.quasistatics import any_stale
from ..config import KERNEL
from ..configuration import integrate_joints_inplace
from .cycles import _cycles
from .forces import body_force_row, compile_forces

OK, BAD_NODE, NON_FINITE, BAD_FORCE = 0, 1, 2, 3
"""Codes of :func:`quasistatic_steps`: done; a node inverse inertia is singular (the joint
in ``QSLoop.bad[0]``); the configuration of a computed joint became non-finite (the
joint in ``QSLoop.bad[0]``); an applied force is not finite."""

METRIC_EVERY = 10
"""Default refresh period of the metric in steps (``QuasiStaticSimulator(metric_every=)``)."""

QSLoop = namedtuple("QSLoop", (
    "node_parent", "leaf_of_body", "node_of_joint", "mark", "dirty", "seeds", "computed",
    "stats", "qdd", "q", "f_ext", "jtype", "qadr", "vadr", "jnq", "node_pslot", "node_hoff",
    "handle_x", "H_E", "H_r", "Tup_E", "Tup_r", "Xr", "xq", "kind", "body", "params",
    "bad", "node_joint", "eta", "step", "metric_every"))
QSLoop.__doc__ = """What :func:`quasistatic_steps` reads besides the solver's bundles: the
assembly tree's ``node_parent``, ``leaf_of_body``, ``node_of_joint``; the solver's
lazy-update scratch ``mark``, ``dirty``, ``seeds``, its solve outputs ``computed``,
``stats``, ``qdd`` and its state ``q``, ``f_ext``; the joints' ``jtype``, ``qadr``,
``vadr``, ``jnq``; the hierarchical frames of
:func:`~articulated.algorithms.handles._world_pose` (``node_pslot`` .. ``xq``); the body
forces ``kind``, ``body`` (k,) int64 and ``params`` (k, 12) of
:class:`~articulated.simulation.forces.ForceArrays`; ``bad`` (1,) int64 the joint of an
error code; the tree's ``node_joint`` and the solver's ``eta`` (stale marks); ``step``
(1,) int64 the simulator's step counter and ``metric_every`` (1,) int64 the refresh
period of the metric (:func:`metric_due`)."""


@njit(**KERNEL)
def metric_due(step, every, budget):
    """Whether the node updates of step ``step`` compute the total-acceleration
    coefficients: ``(before the solve, after it)``. Every ``every`` steps (with a joint
    budget, every step: a budget stops on the queue's order, which stale nodes would
    override), so that the solve of a step ``k`` with ``k % every == 0`` sees no stale
    node and is RL's exactly."""
    if budget >= 0 or every <= 1:
        return True, True
    return step % every == 0, (step + 1) % every == 0


@njit(**KERNEL)
def quasistatic_steps(lp, upd, upd0, sol, nsteps, t0, h, eps, measure, budget, n_prev, out):
    """``nsteps`` adaptive quasi-static steps (the module docstring) with the solver's
    :class:`~articulated.algorithms.bundles.NodeArgs` ``upd`` (``upd0``: the same without
    the metric) and
    :class:`~articulated.algorithms.bundles.SolveArgs` ``sol``, from time ``t0`` [s] with
    step ``h`` [s], the error bound ``eps`` in the measure ``measure`` (index in
    :data:`~articulated.algorithms.metric.ERROR_MEASURES`), the joint budget ``budget``
    (-1: none) and ``n_prev`` the joints computed by the solver's last solve. Per step s,
    ``out[s] = (joints computed, certified bound, nodes updated, cycles)`` (:func:`~articulated
    .simulation.cycles._cycles`). Returns ``(steps done, code, joints of the last solve)``;
    on an error code the step is not counted and ``lp.bad[0]`` names the joint."""
    up = byref(upd)
    up0 = byref(upd0)
    sp = byref(sol)
    nf = lp.body.shape[0]
    f_ext = lp.f_ext
    h2 = h * h
    tk = t0                             # the time of step s
    zero6 = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    for s in range(nsteps):
        c0 = _cycles()
        for k in range(nf):
            b = lp.body[k]
            for a in range(6):
                f_ext[b, a] = 0.0
        for k in range(nf):
            b = lp.body[k]
            # world X body: Xr[0] rotates body into world, xq[0] is the world origin in
            # body coordinates (the body origin in world: -Xr[0] xq[0])
            _world_pose(b, lp.leaf_of_body, lp.node_parent, lp.node_pslot, lp.node_hoff,
                        lp.handle_x, lp.H_E, lp.H_r, lp.Tup_E, lp.Tup_r, lp.Xr, lp.xq)
            E, r = lp.Xr[0], lp.xq[0]
            R = (E[0, 0], E[0, 1], E[0, 2], E[1, 0], E[1, 1], E[1, 2], E[2, 0], E[2, 1],
                 E[2, 2])
            p = (-(E[0, 0] * r[0] + E[0, 1] * r[1] + E[0, 2] * r[2]),
                 -(E[1, 0] * r[0] + E[1, 1] * r[1] + E[1, 2] * r[2]),
                 -(E[2, 0] * r[0] + E[2, 1] * r[1] + E[2, 2] * r[2]))
            # body velocities zero (a spring's damper still sees its anchor's velocity)
            if not body_force_row(k, lp.kind, lp.params, R, p, zero6, True, f_ext, b, tk):
                return s, BAD_FORCE, n_prev
            lp.seeds[k] = lp.leaf_of_body[b]
        m1, m2 = metric_due(lp.step[0], lp.metric_every[0], budget)
        n1 = _dirty_nodes(lp.node_parent, lp.seeds, nf, lp.mark, lp.dirty, lp.mark)
        # no joint has moved since the last update: the force path's linear coefficients
        # alone (AdaptiveQuasiStatics.update), unless the metric is due on a stale node
        if m1 and any_stale(lp.dirty, n1, lp.node_joint, lp.eta):
            _update_nodes(lp.dirty, n1, up)
        else:
            _update_biases(lp.dirty, n1, up if m1 else up0)
        if not m1:
            mark_stale(lp.dirty, n1, lp.node_joint, lp.eta)
        _partial_back_substitution(eps, measure, budget, n_prev, sp)
        n = int(lp.stats[STAT_N])
        n_prev = n
        if lp.stats[STAT_BAD] >= 0:
            lp.bad[0] = int(lp.stats[STAT_BAD])
            return s, BAD_NODE, n_prev
        integrate_joints_inplace(lp.computed, n, lp.jtype, lp.qadr, lp.vadr, lp.q, lp.qdd, h2)
        for t in range(n):
            j = lp.computed[t]
            for a in range(lp.jnq[j]):
                if not math.isfinite(lp.q[lp.qadr[j] + a]):
                    lp.bad[0] = j
                    return s, NON_FINITE, n_prev
            lp.seeds[t] = lp.node_of_joint[j]
        n2 = _dirty_nodes(lp.node_parent, lp.seeds, n, lp.mark, lp.dirty, lp.mark)
        _update_nodes(lp.dirty, n2, up if m2 else up0)
        if not m2:
            mark_stale(lp.dirty, n2, lp.node_joint, lp.eta)
        lp.step[0] += 1
        out[s, 0] = n
        out[s, 1] = lp.stats[STAT_BOUND]
        out[s, 2] = n1 + n2
        out[s, 3] = _cycles() - c0
        tk += h
    return nsteps, OK, n_prev


def body_forces(model, forces):
    """The :class:`~articulated.simulation.forces.ForceArrays` of ``forces`` when they are
    body forces with a compiled form only (no joint forces, no Python force), else None
    (then the simulator steps in Python)."""
    fa = compile_forces(model, forces)
    if fa is None or fa.joint or fa.body.shape[0] == 0:
        return None
    return fa


def qs_loop_bundle(model, solver, fa, step, metric_every):
    """The :data:`QSLoop` of an :class:`~articulated.algorithms.quasistatics.
    AdaptiveQuasiStatics` ``solver`` of ``model`` with the body forces ``fa`` of
    :func:`body_forces`, the step counter ``step`` (1,) int64 and the refresh period
    ``metric_every`` of the metric."""
    t, d = solver.tree, solver.dca
    return QSLoop(
        node_parent=t.node_parent, leaf_of_body=t.leaf_of_body, node_of_joint=t.node_of_joint,
        mark=solver._mark, dirty=solver._dirty, seeds=solver._seeds, computed=solver._computed,
        stats=solver._stats, qdd=solver._qdd, q=solver.q, f_ext=solver.f_ext,
        jtype=model.jnt_type, qadr=model.jnt_qadr, vadr=model.jnt_vadr, jnq=model.jnt_nq,
        node_pslot=solver.node_pslot, node_hoff=t.node_hoff, handle_x=d.handle_x, H_E=d.H_E,
        H_r=d.H_r, Tup_E=solver.Tup_E, Tup_r=solver.Tup_r, Xr=solver._Xr, xq=solver._xq,
        kind=fa.kind, body=fa.body, params=fa.params, bad=np.zeros(1, np.int64),
        node_joint=t.node_joint, eta=solver.eta, step=step,
        metric_every=np.array([metric_every], np.int64))
