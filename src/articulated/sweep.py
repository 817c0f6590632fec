"""Ensembles and parameter sweeps on Dask distributed.

Ensembles and parameter sweeps on Dask distributed: one simulation per grid point, on a
local cluster or on a cluster's scheduler, results in one store a user can reopen.

Why Dask (and not Ray): Dask distributed runs the same code on a ``LocalCluster`` of worker
processes and on any cluster reachable through a scheduler address
(``dask scheduler`` / ``dask worker tcp://host:8786`` on other machines, or dask-jobqueue,
dask-kubernetes), ships Python callables with cloudpickle, reschedules the tasks of a
worker that dies, and needs no service of its own beyond ``pip install dask[distributed]``;
its futures API is all a sweep of independent runs needs. Ray would serve too, but brings
its own object store and runtime for what here is a map over independent tasks.

Each task calls ``make_sim(**point)`` on the worker, so the model is built there from the
picklable factory and its parameters: no numba object crosses the wire. Compiled kernels
come from numba's on-disk cache, which :func:`sweep` warms once in the calling process
before any task starts (every worker then loads them instead of compiling them again).

The store (a folder)::

    store/index.csv          one row per run: run, status, wall_s, steps, t_end, error,
                             then one column per parameter (JSON values)
    store/run-<id>.npz       the run's trajectory (``Trajectory.save``); for a run that
                             diverged, what it recorded before (``SimulationDiverged``)

``<id>`` is a hash of the run's parameters, so a sweep re-run with the same store skips
every run already complete (status ``ok`` or ``diverged``, file present) and runs the rest
(new points, and runs that raised: an error may be transient). Runs write their files
atomically (a temporary file, then a rename), so a sweep stopped mid-run leaves no
half-written trajectory.
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import inspect
import itertools
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

STATUSES = ("ok", "diverged", "error")
"""Status of a run: finished; stopped by ``SimulationDiverged`` (its partial trajectory
kept); raised another exception (recorded with its message, no trajectory)."""

INDEX = "index.csv"
_FIXED = ("run", "status", "wall_s", "steps", "t_end", "error")


def grid_points(grid) -> list[dict]:
    """Return the runs (points) of ``grid``.

    The runs of ``grid``: a mapping ``name -> sequence of values`` (their Cartesian product,
    in order, the last name varying fastest) or a sequence of mappings (the points
    themselves). ValueError for an empty grid, an empty value list, or a point that is not a
    mapping with string keys.
    """
    if isinstance(grid, dict):
        if not grid:
            raise ValueError("the grid is empty: give at least one parameter with values")
        names = list(grid)
        values = []
        for name in names:
            v = grid[name]
            if isinstance(v, (str, bytes)) or not hasattr(v, "__iter__"):
                raise ValueError(f"grid parameter {name!r}: expected a sequence of values, "
                                 f"got {v!r}")
            v = list(v)
            if not v:
                raise ValueError(f"grid parameter {name!r} has no values")
            values.append(v)
        points = [dict(zip(names, combo)) for combo in itertools.product(*values)]
    else:
        points = [p for p in grid]
        if not points:
            raise ValueError("the grid is empty: give at least one point")
    for k, p in enumerate(points):
        if not isinstance(p, dict) or not all(isinstance(n, str) for n in p):
            raise ValueError(f"grid point {k}: expected a dict of parameter name -> value, "
                             f"got {p!r}")
    return points


def run_id(point: dict) -> str:
    """Return the store name of the run of ``point``.

    12 hex digits of the SHA-1 of its parameters as sorted JSON (``repr`` for values JSON
    cannot write).
    """
    text = json.dumps(point, sort_keys=True, default=repr)
    return "run-" + hashlib.sha1(text.encode()).hexdigest()[:12]


def check_factory(make_sim, points) -> None:
    """Check ``make_sim`` and the points before any work is scheduled.

    Raises ValueError when ``make_sim`` is not callable or not picklable (cloudpickle, as
    Dask ships it), or for a point whose parameters ``make_sim`` does not take (named).
    """
    if not callable(make_sim):
        raise ValueError(f"make_sim must be callable (parameters -> Simulator), got "
                         f"{make_sim!r}")
    import cloudpickle

    try:
        cloudpickle.dumps(make_sim)
    except Exception as e:  # noqa: BLE001 - any pickling failure is the user's factory
        raise ValueError(f"make_sim cannot be pickled to send it to the workers "
                         f"({type(e).__name__}: {e}); build the model inside the factory "
                         f"from picklable parameters (a scene name, a URDF path)") from None
    try:
        sig = inspect.signature(make_sim)
    except (TypeError, ValueError):
        return
    for p in points:
        try:
            sig.bind(**p)
        except TypeError as e:
            unknown = sorted(set(p) - set(sig.parameters))
            what = f"unknown parameter {unknown[0]!r}" if unknown else str(e)
            raise ValueError(f"grid point {p}: {what} (make_sim takes "
                             f"{list(sig.parameters)})") from None


def run_one(make_sim, point, steps, record_every, store):
    """Run one task and return the run's index row (dict).

    The task is ``make_sim(**point).run(steps, record_every)``, its trajectory saved to
    ``store/<run_id>.npz``. A run that diverges keeps the trajectory it recorded; a run that
    raises is recorded with its error.
    """
    from .simulation import SimulationDiverged

    name = run_id(point)
    row = {"run": name, "status": "ok", "wall_s": 0.0, "steps": 0, "t_end": 0.0, "error": ""}
    t0 = time.perf_counter()
    traj = None
    try:
        sim = make_sim(**point)
        traj = sim.run(steps, record_every=record_every)
        row["steps"] = int(steps)
    except SimulationDiverged as e:
        row["status"] = "diverged"
        row["error"] = str(e).splitlines()[0]
        row["steps"] = int(e.step or 1) - 1
        traj = e.trajectory
    except Exception as e:  # noqa: BLE001 - recorded, the sweep goes on
        row["status"] = "error"
        row["error"] = f"{type(e).__name__}: {e}".splitlines()[0]
    row["wall_s"] = time.perf_counter() - t0
    if traj is not None and len(traj):
        row["t_end"] = float(traj.t[-1])
        _save_atomic(traj, Path(store) / f"{name}.npz")
    return row


def _save_atomic(traj, path: Path) -> None:
    tmp = path.with_name(path.stem + ".tmp.npz")
    traj.save(tmp)
    os.replace(tmp, path)


@dataclass
class SweepResult:
    """What :func:`sweep` returns.

    ``store`` (Path), ``rows`` (list of dict, one per grid point, in grid order: the index
    rows with ``params``), ``ran`` (run ids executed by this call; the others were complete
    in the store).
    """

    store: Path
    rows: list = field(default_factory=list)
    ran: list = field(default_factory=list)

    def trajectory(self, k: int):
        """Return the trajectory of run ``k`` (grid order), loaded from the store.

        ValueError for a run that left none (an error).
        """
        from .simulation import Trajectory

        row = self.rows[k]
        path = self.store / f"{row['run']}.npz"
        if not path.exists():
            raise ValueError(f"run {k} ({row['run']}, {row['status']}) has no trajectory: "
                             f"{row['error']}")
        return Trajectory.load(path)

    def counts(self) -> dict:
        """``{status: number of runs}``."""
        return {s: sum(r["status"] == s for r in self.rows) for s in STATUSES}


def read_index(store) -> dict:
    """Return ``run id -> row`` of ``store/index.csv`` (empty when there is none).

    Parameter values are decoded from JSON into ``row["params"]``.
    """
    path = Path(store) / INDEX
    if not path.exists():
        return {}
    out = {}
    with open(path, newline="") as fh:
        for r in csv.DictReader(fh):
            params = {k[len("param:"):]: json.loads(v) for k, v in r.items()
                      if k.startswith("param:") and v != ""}   # "": not a parameter of it
            row = {k: r[k] for k in _FIXED}
            row["wall_s"] = float(row["wall_s"])
            row["steps"] = int(row["steps"])
            row["t_end"] = float(row["t_end"])
            row["params"] = params
            out[row["run"]] = row
    return out


def write_index(store, rows) -> Path:
    """Write ``rows`` to ``store/index.csv`` atomically and return the path.

    Rows are dicts with the fixed columns and ``params``.
    """
    path = Path(store) / INDEX
    names = sorted({n for r in rows for n in r["params"]})
    tmp = path.with_name(INDEX + ".tmp")
    with open(tmp, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(list(_FIXED) + [f"param:{n}" for n in names])
        for r in rows:
            w.writerow([r[k] for k in _FIXED]
                       + [json.dumps(r["params"][n], default=repr) if n in r["params"] else ""
                          for n in names])
    os.replace(tmp, path)
    return path


def sweep(make_sim, grid, *, steps: int, record_every: int = 1, client=None, store,
          warm: bool = True, progress: bool = False) -> SweepResult:
    """Run one simulation per grid point on Dask distributed and keep every result.

    Parameters
    ----------
    make_sim : callable ``(**point) -> Simulator``
        Builds the simulator of one run from its parameters, on the worker (so it must be
        picklable by cloudpickle: a module-level function or class instance; build models
        inside it from picklable arguments).
    grid : dict ``name -> values`` (Cartesian product) or list of dicts (the points)
    steps : int >= 1
        Steps of every run (``Simulator.run(steps, record_every)``).
    record_every : int >= 1
        Recording interval.
    client : distributed.Client, str or None
        A client, a scheduler address (``"tcp://host:8786"``), or None for a
        ``LocalCluster`` with one single-threaded worker process per core (closed at the
        end).
    store : str or Path
        The result folder (created): ``index.csv`` and one ``.npz`` per run; a store that
        already holds complete runs of the grid resumes (those are skipped).
    warm : bool
        Build and step the first point once in this process first, so that every kernel it
        needs is compiled into numba's on-disk cache before the workers start.
    progress : bool
        Show a progress bar (rich) while runs complete.

    Returns
    -------
    SweepResult
        ``rows`` (one per point, grid order: ``run``, ``status``, ``wall_s`` [s], ``steps``,
        ``t_end`` [s], ``error``, ``params``), ``ran``, ``trajectory(k)``.

    Raises
    ------
    ValueError
        Before any work is scheduled: an empty or malformed grid, a parameter the factory
        does not take, a factory that cannot be pickled, steps or record_every < 1.

    Notes
    -----
    A run that diverges or raises does not stop the sweep: its row says so. Tasks of a
    worker that dies are run again on the others (Dask reschedules them; the scheduler's
    ``allowed-failures`` bounds how often).
    """
    if int(steps) != steps or steps < 1:
        raise ValueError(f"steps must be an integer >= 1, got {steps!r}")
    if int(record_every) != record_every or record_every < 1:
        raise ValueError(f"record_every must be an integer >= 1, got {record_every!r}")
    points = grid_points(grid)
    check_factory(make_sim, points)
    store = Path(store)
    store.mkdir(parents=True, exist_ok=True)
    done = read_index(store)
    ids = [run_id(p) for p in points]
    if len(set(ids)) != len(ids):
        raise ValueError("the grid repeats a point (two runs with the same parameters)")
    rows = {}
    todo = []
    for p, name in zip(points, ids):
        old = done.get(name)
        if (old is not None and old["status"] in ("ok", "diverged")
                and (store / f"{name}.npz").exists()):
            rows[name] = old
        else:
            todo.append((p, name))
    if todo and warm:
        _warm(make_sim, todo[0][0])
    if todo:
        from distributed import as_completed

        with dask_client(client) as client:
            futures = {client.submit(run_one, make_sim, p, int(steps), int(record_every),
                                     str(store.resolve()), key=f"articulated-{name}",
                                     pure=False): (p, name) for p, name in todo}
            bar = _progress(len(futures)) if progress else None
            for fut in as_completed(futures):
                p, name = futures[fut]
                row = fut.result()
                row["params"] = p
                rows[name] = row
                write_index(store, [rows[n] if n in rows else done[n]
                                    for n in _ordered(ids, rows, done)])
                if bar is not None:
                    bar.advance(row)
            if bar is not None:
                bar.close()
    for name in ids:
        rows[name].setdefault("params", points[ids.index(name)])
    write_index(store, [rows[n] for n in ids] + [done[n] for n in done if n not in rows])
    return SweepResult(store=store, rows=[rows[n] for n in ids], ran=[n for _, n in todo])


@contextlib.contextmanager
def dask_client(client=None, *, workers=None):
    """Return the Dask client of a sweep, as a context manager.

    The Dask client of a sweep, as a context manager: ``client`` itself (a
    ``distributed.Client``, left open), a new client of the scheduler at ``client`` (a str
    such as ``"tcp://host:8786"``), or, for None, a new ``LocalCluster`` of ``workers``
    (default: one per core) single-threaded worker processes and its client. What it opened
    is closed on exit (the client, then its cluster).
    """
    from distributed import Client, LocalCluster

    own = []
    if client is None:
        cluster = LocalCluster(n_workers=workers or os.cpu_count() or 1, threads_per_worker=1,
                               processes=True, dashboard_address=None)
        client = Client(cluster)
        own = [client, cluster]
    elif isinstance(client, str):
        client = Client(client)
        own = [client]
    try:
        yield client
    finally:
        for c in own:
            c.close()


def map_cells(fn, cells, *, client=None, common=(), warm=None) -> list:
    """Return ``[fn(*common, *cell) for cell in cells]``, here or on Dask workers.

    ``[fn(*common, *cell) for cell in cells]``: the cells of a benchmark table, in this
    process one after another (``client`` None) or on the workers of a Dask client /
    scheduler address (``client``, as :func:`dask_client`), one cell per worker at a time.

    Parameters
    ----------
    fn : callable
        A module-level function (cloudpickle ships it); its result must pickle.
    cells : sequence of tuples
        The varying arguments of each cell.
    client : distributed.Client, str or None
        Where to run; None: here, serially.
    common : tuple
        Arguments shared by every cell (e.g. the model), sent to every worker once
        (``Client.scatter(broadcast=True)``).
    warm : callable or None
        Run once on every worker (once here when serial) before any cell, e.g. to load every
        numba kernel from the on-disk cache so no timed cell pays for it.

    Returns
    -------
    list
        The cells' results, in the order of ``cells``.

    Raises
    ------
    ValueError
        Before any cell runs, when a worker has more than one thread: two timed cells on one
        worker would share its process and compete for the cores, so start workers with
        ``dask worker ADDRESS --nthreads 1`` (and no more workers per machine than it has
        cores). Whatever a cell raises (re-raised here).
    """
    cells = [tuple(c) for c in cells]
    if client is None:
        if warm is not None:
            warm()
        return [fn(*common, *c) for c in cells]
    with dask_client(client) as client:
        threads = client.nthreads()
        many = {w: n for w, n in threads.items() if n > 1}
        if many:
            raise ValueError(f"Dask workers with more than one thread {many}: timed cells "
                             f"would compete for cores; start the workers with "
                             f"'dask worker ADDRESS --nthreads 1'")
        if warm is not None:
            client.gather([client.submit(warm, workers=[w], allow_other_workers=False,
                                         pure=False) for w in threads])
        shared = client.scatter(list(common), broadcast=True) if common else []
        futures = [client.submit(fn, *shared, *c, pure=False) for c in cells]
        return client.gather(futures)


def _ordered(ids, rows, done):
    """Run ids with a row so far: the grid's in order, then older runs of the store."""
    return [n for n in ids if n in rows or n in done] + [n for n in done if n not in ids]


def _warm(make_sim, point):
    """Compile (or load) the kernels of ``make_sim(**point)`` in this process: one step."""
    try:
        make_sim(**point).run(1)
    except Exception:  # noqa: BLE001 - the run itself will report it
        pass


class _progress:
    """A rich progress bar over the runs of a sweep (counts of each status)."""

    def __init__(self, total):
        from rich.progress import Progress

        self.p = Progress()
        self.p.start()
        self.task = self.p.add_task("sweep", total=total)
        self.counts = dict.fromkeys(STATUSES, 0)

    def advance(self, row):
        self.counts[row["status"]] += 1
        self.p.update(self.task, advance=1, description="sweep " + ", ".join(
            f"{k} {v}" for k, v in self.counts.items()))

    def close(self):
        self.p.stop()


class SceneSimulation:
    """A picklable ``make_sim`` for the built-in scenes of :mod:`articulated.models`.

    ``SceneSimulation("pendulum", n=30, dt=1e-3)(**point)`` builds
    ``articulated.models.pendulum(**model_kwargs)`` and ``Simulator(model, **rest)``: the
    fixed keywords and the point's parameters are merged (the point's win) and split by the
    scene function's signature (``n``, ``seed``, ``gravity``, ... go to the scene; ``dt``
    (default 1e-3 s), ``method``, ``integrator``, ``max_active``, ... to
    :func:`articulated.Simulator`). Two more parameters set the start: ``perturb`` [rad or
    m] (default 0: the scene's own neutral configuration) moves every coordinate by
    ``perturb * N(0, 1)`` (``articulated.integrate``) with the generator of seed
    ``start_seed`` (default 0).

    Parameters
    ----------
    scene : str
        Name of a scene of :data:`articulated.models.SCENES`.
    **fixed
        Keywords for the scene and the simulator, fixed for every point.

    Raises
    ------
    ValueError
        For an unknown scene, on construction.
    """

    def __init__(self, scene: str, **fixed):
        from . import models

        fn = getattr(models, scene, None)
        if not callable(fn) or scene.startswith("_"):
            names = sorted(n for n in getattr(models, "__all__", ()) if callable(
                getattr(models, n, None)))
            raise ValueError(f"unknown scene {scene!r}; expected one of {names}")
        self.scene = scene
        self.fixed = dict(fixed)

    @property
    def parameters(self):
        """The names the scene function takes (the rest go to the simulator)."""
        from . import models

        return tuple(inspect.signature(getattr(models, self.scene)).parameters)

    def __call__(self, **params):
        import numpy as np

        from . import models
        from .configuration import integrate
        from .model import Model
        from .simulation import Simulator

        kw = {**self.fixed, **params}
        scene_kw = {k: kw.pop(k) for k in list(kw) if k in self.parameters}
        perturb = float(kw.pop("perturb", 0.0))
        seed = int(kw.pop("start_seed", 0))
        dt = kw.pop("dt", 1e-3)
        model = getattr(models, self.scene)(**scene_kw)
        if not isinstance(model, Model):                  # e.g. crowd(..., True) tuples
            raise ValueError(f"scene {self.scene!r} with {scene_kw} does not return a Model")
        if perturb and "q0" not in kw:
            v = perturb * np.random.default_rng(seed).standard_normal(model.nv)
            kw["q0"] = integrate(model, model.neutral(), v, 1.0)
        return Simulator(model, dt, **kw)

    def __repr__(self):
        return f"SceneSimulation({self.scene!r}, **{self.fixed!r})"
