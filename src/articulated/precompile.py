"""Compile the package's kernels ahead of use, in parallel processes, and profile the compile.

numba compiles a kernel at its first call and keeps the machine code in its on-disk cache
(:mod:`articulated._numba_cache`). :func:`precompile` warms that cache by running a small
workload of each *subsystem* (a few steps of a tiny model through the public API, so the
kernels are compiled for the argument types that real use passes) in up to ``jobs`` worker
processes: numba compiles under a process-wide lock, so only processes compile in parallel.
:func:`profile` runs each subsystem in a fresh process on an empty cache of its own and
reports, from numba's ``"numba:compile"`` events, every kernel's own compile time (its
callees' left out) and the versions compiled. ``articulated compile`` is the command line
of both.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor, as_completed

import numpy as np


def _dynamics():
    """The public dynamics functions on a random tree with every joint type and on a
    pendulum (ABA, modified ABA, CRBA, RNEA, kinematics, Jacobians, a batch)."""
    from . import models
    from .algorithms.aba import aba, aba_modified
    from .algorithms.crba import crba, crba_forward_dynamics
    from .algorithms.forward_dynamics import forward_dynamics
    from .algorithms.kinematics import body_velocities, energy, forward_kinematics, jacobian
    from .algorithms.rnea import gravity_torques, rnea

    for model in (models.random_tree(8, seed=1), models.pendulum(4)):
        q = model.random_configuration(np.random.default_rng(0))
        qd = np.full(model.nv, 0.1)
        tau = np.zeros(model.nv)
        qdd = aba(model, q, qd, tau)
        aba_modified(model, q, qd, tau)
        aba(model, np.tile(q, (2, 1)), np.tile(qd, (2, 1)), np.tile(tau, (2, 1)))
        rnea(model, q, qd, qdd)
        gravity_torques(model, q)
        crba(model, q)
        crba_forward_dynamics(model, q, qd, tau)
        for method in ("aba", "crba", "dca"):
            forward_dynamics(model, q, qd, tau, method=method)
        forward_kinematics(model, q)
        body_velocities(model, q, qd)
        energy(model, q, qd)
        jacobian(model, q, model.nb - 1)


def _simulation():
    """The simulator of the full model (ABA, DCA) with each fixed-step integrator and the
    built-in forces."""
    from . import models
    from .simulation import JointDamping, PDController, Simulator, Spring

    model = models.pendulum(4)
    q0 = model.neutral()
    q0[0] = 0.5
    forces = [Spring(model.nb - 1, (0, 0, 0), anchor=(0.2, 0, -0.3), stiffness=0.5),
              JointDamping(0.01), PDController(1.0, 0.1, model.neutral())]
    for integrator in ("rk4", "euler", "semi_implicit_euler"):
        for method in ("aba", "dca"):
            Simulator(model, 1e-3, integrator=integrator, method=method, q0=q0,
                      forces=forces).run(3)
        Simulator(model, 1e-3, integrator=integrator, q0=q0).run(3)


def _adaptive():
    """Adaptive dynamics (hybrid bodies, region updates) as the benchmarks and the demo run
    it."""
    from .bench.adaptive_runs import warm_up

    warm_up()


def _quasistatics():
    """Full and error-bounded adaptive quasi-statics on a small molecule."""
    from . import models
    from .simulation import PointForce, Simulator

    mol = models.molecule(40, gravity=(0.0, 0.0, 0.0))
    q0 = mol.random_configuration(np.random.default_rng(0))
    for method in ("quasistatic", "quasistatic-adaptive"):
        Simulator(mol, 1e-3, method=method, eps_max=2.0 ** -19, q0=q0,
                  forces=[PointForce(7, (0.0, 0.0, 1.0))]).run(3)


def _contact():
    """Contact and joint limits on the full model, with and without the energy bound, in
    the compiled loop and with a Python force."""
    from .bench.contact import warm_up

    warm_up(("full",))


def _adaptive_contact():
    """Contact on adaptive dynamics' hybrid body, as :func:`_contact`."""
    from .bench.contact import warm_up

    warm_up(("adaptive",))


def _loops():
    """Closed loops by sequential regularization (SRM) on a four-bar linkage."""
    from . import models
    from .simulation import Simulator

    Simulator(models.four_bar(), 0.005, integrator="rk2", method="srm").run(3)


SUBSYSTEMS = {"adaptive-contact": _adaptive_contact, "contact": _contact, "adaptive": _adaptive,
              "simulation": _simulation, "quasistatics": _quasistatics, "dynamics": _dynamics,
              "loops": _loops}
"""Name -> workload, most compile time first (so that a pool starts the longest first)."""


def cold_kernels():
    """The package's cached kernels (every module of ``algorithms`` and ``simulation``
    imported) that numba's cache does not hold for the current source: what a first run
    compiles (:func:`articulated._numba_cache.cold_kernels`)."""
    import importlib
    import pkgutil

    from . import algorithms, simulation
    from ._numba_cache import cold_kernels as cold

    for package in (algorithms, simulation):
        for info in pkgutil.iter_modules(package.__path__):
            importlib.import_module(f"{package.__name__}.{info.name}")
    return cold()


def _kernel_name(dispatcher):
    f = getattr(dispatcher, "py_func", None)
    return f"{f.__module__}.{f.__qualname__}" if f is not None else str(dispatcher)


def _run(name, record):
    """Run the workload ``name`` in this process; returns ``(name, seconds, events)`` with
    ``events`` a list of ``(kernel, own seconds, cached)`` per compile of a package function
    when ``record``, else the number of the package's cached kernels compiled."""
    from numba.core import event

    from ._numba_cache import _in_package

    stack, rows = [], []

    class Listener(event.Listener):
        def on_start(self, ev):
            stack.append([time.perf_counter(), 0.0])

        def on_end(self, ev):
            t0, children = stack.pop()
            dt = time.perf_counter() - t0
            if stack:
                stack[-1][1] += dt
            disp = (ev.data or {}).get("dispatcher")
            code = getattr(getattr(disp, "py_func", None), "__code__", None)
            if code is not None and _in_package(code.co_filename):
                cached = hasattr(getattr(disp, "_cache", None), "_cache_file")
                rows.append((_kernel_name(disp), dt - children, cached))

    t0 = time.perf_counter()
    with event.install_listener("numba:compile", Listener()):
        SUBSYSTEMS[name]()
    seconds = time.perf_counter() - t0
    return name, seconds, rows if record else sum(1 for r in rows if r[2])


def _pool(jobs):
    return ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn"))


def precompile(subsystems=None, jobs=None, progress=None):
    """Compile (or load from the cache) the kernels of ``subsystems`` (names of
    :data:`SUBSYSTEMS`, default all) in ``jobs`` worker processes (default: the CPUs this
    process may use, at most one per subsystem). ``progress(name, seconds, kernels)`` is
    called as each subsystem finishes. Returns ``(kernels compiled, wall seconds)``.

    Raises ``ValueError`` for an unknown subsystem name.
    """
    names = _names(subsystems)
    jobs = _jobs(jobs, len(names))
    t0 = time.perf_counter()
    compiled = 0
    if jobs == 1:
        results = (_run(n, False) for n in names)
    else:
        pool = _pool(jobs)
        results = (f.result() for f in as_completed([pool.submit(_run, n, False) for n in names]))
    try:
        for name, seconds, kernels in results:
            compiled += kernels
            if progress is not None:
                progress(name, seconds, kernels)
    finally:
        if jobs > 1:
            pool.shutdown()
    return compiled, time.perf_counter() - t0


def _names(subsystems):
    names = list(SUBSYSTEMS) if not subsystems else list(subsystems)
    bad = [n for n in names if n not in SUBSYSTEMS]
    if bad:
        raise ValueError(f"unknown subsystem {bad[0]!r}; choose from {', '.join(SUBSYSTEMS)}")
    return [n for n in SUBSYSTEMS if n in names]


def cpus() -> int:
    """The CPUs this process may run on (its affinity where the OS tells it)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def _jobs(jobs, n):
    if jobs is None:
        jobs = cpus()
    if int(jobs) < 1:
        raise ValueError(f"jobs must be >= 1, got {jobs}")
    return max(1, min(int(jobs), n))


def _profile_one(name, cache_dir):
    """:func:`_run` of ``name`` in a fresh process whose numba cache is ``cache_dir``."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    code = ("import pickle, sys; from articulated.precompile import _run; "
            f"sys.stdout.buffer.write(pickle.dumps(_run({name!r}, True)))")
    out = subprocess.run([sys.executable, "-W", "ignore", "-c", code], env=env,
                         capture_output=True, check=True)
    return pickle.loads(out.stdout)


def profile(subsystems=None):
    """Compile each subsystem from an empty cache, in a fresh process of its own (one at a
    time, so the timings do not share the CPUs).

    Returns ``{name: dict(seconds=wall s of the workload, compile=s inside numba's compiles,
    cache_mb=MB written to the cache, versions=package functions' compiles, kernels={kernel:
    (own s, versions)})}``.
    """
    out = {}
    for name in _names(subsystems):
        cache_dir = tempfile.mkdtemp(prefix="articulated-profile-")
        try:
            _, seconds, rows = _profile_one(name, cache_dir)
            size = sum(os.path.getsize(os.path.join(d, f))
                       for d, _, files in os.walk(cache_dir) for f in files)
        finally:
            shutil.rmtree(cache_dir, ignore_errors=True)
        kernels = defaultdict(lambda: [0.0, 0])
        for kernel, own, _ in rows:
            kernels[kernel][0] += own
            kernels[kernel][1] += 1
        out[name] = dict(seconds=seconds, compile=sum(r[1] for r in rows), cache_mb=size / 1e6,
                         versions=len(rows), kernels={k: tuple(v) for k, v in kernels.items()})
    return out
