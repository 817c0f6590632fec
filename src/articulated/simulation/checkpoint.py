"""Long runs that lose nothing: checkpoints, resume, and Ctrl-C.

``sim.run(steps, record_every, checkpoint="run.npz", checkpoint_every=N)`` (the dynamics
and adaptive simulators) writes, before the first step, every ``N`` steps, at the end and
when the run is interrupted, one ``.npz`` file holding

* the trajectory recorded so far, in the layout of
  :meth:`~articulated.simulation.trajectory.Trajectory.save` (so
  ``Trajectory.load("run.npz")`` opens a checkpoint too);
* ``checkpoint``: a JSON entry with the simulator's settings (method, integrator, ``dt``,
  tolerances, active-region budgets ...), its applied forces as
  :meth:`~articulated.simulation.forces.Force.spec` wrote them, and the run's bookkeeping
  (steps in all, steps done, ``record_every``, ``checkpoint_every``, evaluations, wall
  time, the energy watch);
* ``state.*``: the state (``q``, ``qd``, ``t``) and whatever else the next step depends
  on: SRM's warm-start multipliers; for adaptive dynamics every array of the solver (the
  active region, the hybrid and fully articulated coefficients, the passive nodes'
  tensors, the caches), so that the continuation repeats the same floating-point
  operations.

Each write goes to a temporary file in the same folder, flushed to disk, then renamed over
the checkpoint (``os.replace``: atomic), so a killed process leaves the previous
checkpoint whole. A write that fails (read-only folder, full disk) raises
:class:`CheckpointError` carrying the trajectory so far; the simulator keeps its state. The
first write happens before any step, so a bad path fails at once.

:func:`articulated.simulation.factory.resume` (also reachable as
``articulated.Simulator.resume(path)``) rebuilds the simulator and finishes the run; the
result is bit-identical to the run that was never interrupted (the compiled loops run in
stretches between checkpoints, and a stretch boundary changes no operation). What it
needs:

* the model: rebuilt from the description the file carries (scene generators,
  :attr:`articulated.Model.description`), or passed as ``model=``;
* the forces: the built-in ones (:class:`~articulated.simulation.forces.PointForce`,
  :class:`~articulated.simulation.forces.Spring`, constant
  :class:`~articulated.simulation.forces.JointTorque`,
  :class:`~articulated.simulation.forces.PDController` with constant references,
  :class:`~articulated.simulation.forces.JointDamping`) are rebuilt from their
  parameters; a user's own Python force (or one with a callable argument) cannot be
  written, and ``forces=`` must then give the whole list again.

Not checkpointed (``ValueError`` when asked): quasi-statics, ``rk45`` (the adaptive
solver's step-size history is not kept), contacts and joint limits (the impulse solver's
warm start), callable metric weights and custom assembly trees of adaptive dynamics.

Ctrl-C (SIGINT) during any ``run`` of these simulators (with or without a checkpoint)
ends the run after the current stretch of steps (at most about 0.2 s) with the
trajectory so far returned (``traj.interrupted`` is True, an :class:`RunInterrupted`
warning says where it stopped) and, with a checkpoint, saved for ``Simulator.resume``. A second
Ctrl-C raises KeyboardInterrupt at once.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import warnings
from pathlib import Path

import numpy as np

from ..models.description import jsonable

FORMAT = 1
"""Version of the ``checkpoint`` entry."""


class CheckpointError(OSError):
    """A checkpoint could not be written.

    ``path``: the checkpoint; ``trajectory``: the
    :class:`~articulated.simulation.trajectory.Trajectory` recorded so far (the simulator
    holds the state the run stopped at).
    """

    def __init__(self, message, *, path=None, trajectory=None):
        super().__init__(message)
        self.path = path
        self.trajectory = trajectory


class RunInterrupted(UserWarning):
    """A run ended early on Ctrl-C; the trajectory so far was returned (and saved)."""


class RunStop:
    """Context of a run: Ctrl-C (SIGINT) sets :attr:`requested` instead of raising, so the
    run can stop between two steps or stretches with its records whole; a second Ctrl-C
    raises KeyboardInterrupt. Only in the main thread (elsewhere SIGINT is not delivered)."""

    def __init__(self):
        self.requested = False
        self._old = None

    def _handler(self, signum, frame):
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            try:
                self._old = signal.signal(signal.SIGINT, self._handler)
            except (ValueError, TypeError):
                self._old = None
        return self

    def __exit__(self, *exc):
        if self._old is not None:
            signal.signal(signal.SIGINT, self._old)
            self._old = None
        return False


def interrupted(traj, step, steps, path=None):
    """Mark ``traj`` as the result of an interrupted run and warn (:class:`RunInterrupted`)."""
    traj.interrupted = True
    where = (f"; saved to {str(path)!r}: articulated.Simulator.resume({str(path)!r}) "
             f"continues it" if path is not None else "")
    warnings.warn(f"run interrupted (Ctrl-C) after step {step} of {steps} "
                  f"(t = {traj.t[-1]:.6g} s at the last record): the {len(traj)} records so "
                  f"far are returned{where}", RunInterrupted, stacklevel=4)
    return traj


def write_atomic(path, arrays: dict) -> None:
    """Write ``arrays`` as an ``.npz`` to ``path`` atomically: a temporary file in the same
    folder, flushed and synced, then ``os.replace``. The temporary file is removed when
    anything fails (the exception propagates)."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as fh:
            np.savez(fh, **arrays)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            tmp.unlink()
        except OSError:
            pass
        raise


def _count(x, what):
    if isinstance(x, bool) or not isinstance(x, (int, np.integer)) or x < 1:
        raise ValueError(f"{what} must be an integer >= 1, got {x!r}")
    return int(x)


class Checkpointer:
    """The checkpoints of one run of ``sim`` (see the module docstring).

    Parameters
    ----------
    sim : DynamicsSimulator or AdaptiveSimulator
    path : str or os.PathLike
        The checkpoint file (``.npz`` appended when missing).
    every : int >= 1 or None
        Steps between checkpoints (None: only at the start, the end and on Ctrl-C).
    steps, record_every : the run's

    Raises
    ------
    ValueError
        When ``sim``'s settings cannot be checkpointed (see the module docstring)
        or ``every`` is not a positive integer.
    """

    def __init__(self, sim, path, every, steps, record_every):
        self.path = Path(path)
        if self.path.suffix != ".npz":
            self.path = self.path.with_name(self.path.name + ".npz")
        self.every = None if every is None else _count(every, "checkpoint_every")
        self.steps = int(steps)
        self.record_every = int(record_every)
        self.settings = sim.checkpoint_settings()      # ValueError: not checkpointable
        self.forces = [f.spec() if callable(getattr(f, "spec", None)) else None
                       for f in sim.forces]
        self.force_names = [repr(f) for f in sim.forces]

    def next(self, k: int) -> int:
        """The step of the next checkpoint after step ``k`` (the run's end at most)."""
        if self.every is None:
            return self.steps
        return min(self.steps, (k // self.every + 1) * self.every)

    def due(self, k: int) -> bool:
        return k == self.steps or (self.every is not None and k % self.every == 0)

    def write(self, sim, traj, k, nfev, watch=None) -> None:
        """Write the checkpoint after step ``k`` of the run: ``traj`` the records so far,
        the state and ``sim.checkpoint_state()``. Raises :class:`CheckpointError` (with
        ``traj``) when the file cannot be written."""
        meta, state = sim.checkpoint_state()
        info = dict(format=FORMAT, settings=self.settings, forces=self.forces,
                    force_names=self.force_names,
                    run=dict(steps=self.steps, done=int(k), record_every=self.record_every,
                             checkpoint_every=self.every, nfev=int(nfev),
                             wall_time=float(traj.wall_time)),
                    watch=None if watch is None else watch.state(), state=meta)
        arrays = dict(traj.arrays(), meta=np.str_(json.dumps(traj._meta())),
                      checkpoint=np.str_(json.dumps(jsonable(info))),
                      **{f"state.{k_}": v for k_, v in state.items()})
        try:
            write_atomic(self.path, arrays)
        except OSError as e:
            raise CheckpointError(
                f"cannot write the checkpoint {str(self.path)!r} ({e.strerror or e}): the run "
                f"stopped after step {k} of {self.steps} (t = {sim.t:.6g} s); the "
                f"{len(traj)} records so far are in this exception's .trajectory and the "
                f"simulator holds the state: run it again with a writable checkpoint path",
                path=self.path, trajectory=traj) from e


_SCALARS = (bool, int, float, str, type(None))


def _walk(obj, path, arrays, scalars, seen, skip):
    """Collect the writable arrays (``path -> array``, the first path that reaches each)
    and the Python scalars of the package's objects, dicts, lists and named tuples reachable
    from ``obj``, leaving out the attributes named in ``skip`` and every Model."""
    from ..model import Model

    if isinstance(obj, np.ndarray):
        if id(obj) not in seen and obj.flags.writeable:
            seen.add(id(obj))
            arrays[path] = obj
        return
    if id(obj) in seen or isinstance(obj, Model):
        return
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):      # bundles: constant scalars
        seen.add(id(obj))
        for f in obj._fields:
            _walk(getattr(obj, f), f"{path}.{f}", arrays, scalars, seen, skip)
        return
    if isinstance(obj, (list, tuple)):
        seen.add(id(obj))
        for i, v in enumerate(obj):
            _walk(v, f"{path}.{i}", arrays, scalars, seen, skip)
        return
    if isinstance(obj, dict):
        items = obj.items()
    elif (type(obj).__module__ or "").startswith("articulated") and hasattr(obj, "__dict__"):
        items = vars(obj).items()
    else:
        return
    seen.add(id(obj))
    for k, v in items:
        if k in skip:
            continue
        if isinstance(v, _SCALARS):
            if isinstance(k, str):                   # cache keys (tuples) hold no scalars
                scalars[f"{path}.{k}"] = v
        else:
            _walk(v, f"{path}.{k if isinstance(k, str) else repr(k)}", arrays, scalars,
                  seen, skip)


def object_state(obj, skip=()):
    """``(scalars, arrays)``: every writable array and Python scalar that ``obj`` (a
    simulator and its solver) reaches, by attribute path (see :func:`_walk`): all that the
    next step of a numerical solver can read, so that :func:`set_object_state` on a fresh
    solver of the same settings makes it continue bit for bit."""
    arrays, scalars = {}, {}
    _walk(obj, "", arrays, scalars, set(), set(skip))
    return scalars, arrays


def set_object_state(obj, scalars, arrays, skip=()) -> None:
    """Copy what :func:`object_state` wrote into ``obj``, a fresh object of the same
    settings (arrays in place, so every bundle that shares them sees the values). Raises
    ValueError when the two objects are not laid out alike."""
    mine_s, mine = object_state(obj, skip)
    if set(mine) != set(arrays) or set(mine_s) != set(scalars):
        diff = sorted(set(mine) ^ set(arrays) | set(mine_s) ^ set(scalars))
        raise ValueError(f"the checkpoint's solver state does not fit this simulator "
                         f"(settings or version differ): {diff[:5]}")
    for k, v in arrays.items():
        if mine[k].shape != v.shape:
            raise ValueError(f"the checkpoint's {k} has shape {v.shape}, this simulator's "
                             f"{mine[k].shape}")
        mine[k][...] = v
    for k, v in scalars.items():
        *parts, last = k.split(".")[1:]
        o = obj
        for p in parts:
            o = o[p] if isinstance(o, dict) else (o[int(p)] if isinstance(o, list)
                                                  else getattr(o, p))
        if isinstance(o, dict):
            o[last] = v
        else:
            setattr(o, last, v)


class Resume:
    """What a run continues from: ``done`` steps, the ``trajectory`` so far, its ``nfev``
    and wall time."""

    def __init__(self, done, trajectory, nfev, wall_time):
        self.done = int(done)
        self.trajectory = trajectory
        self.nfev = int(nfev)
        self.wall_time = float(wall_time)


def read(path):
    """``(info, trajectory, state arrays)`` of a checkpoint file. ValueError when it is not
    one."""
    from .trajectory import Trajectory

    traj = Trajectory.load(path)
    with np.load(path, allow_pickle=False) as z:
        if "checkpoint" not in z.files:
            raise ValueError(f"{path}: a trajectory file, not a checkpoint (no 'checkpoint' "
                             f"entry): write one with run(..., checkpoint=path)")
        info = json.loads(str(z["checkpoint"]))
        state = {k[len("state."):]: z[k] for k in z.files if k.startswith("state.")}
    if int(info.get("format", 0)) > FORMAT:
        raise ValueError(f"{path}: checkpoint format {info['format']} is newer than this "
                         f"version of articulated reads ({FORMAT})")
    return info, traj, state
