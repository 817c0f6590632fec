import numpy as np
import pytest


def pytest_sessionstart(session):
    """On a cold numba cache (a fresh clone, as in CI) and more than one CPU, compile the
    kernels of every subsystem first, one worker process per CPU (``articulated compile``):
    the tests then load them from the cache instead of compiling them one after another.
    ``ARTICULATED_PRECOMPILE=0`` skips it (a run of a few tests compiles only theirs)."""
    import os

    from articulated.precompile import cold_kernels, cpus, precompile

    if cpus() < 2 or os.environ.get("ARTICULATED_PRECOMPILE") == "0":
        return
    if len(cold_kernels()) > 50:
        try:
            kernels, seconds = precompile()
        except Exception as e:  # noqa: BLE001 - tests/test_precompile.py reports it as a failure
            print(f"\n[conftest] articulated compile failed ({type(e).__name__}: {e}); the "
                  f"tests compile their kernels as they run")
            return
        print(f"\n[conftest] cold numba cache: compiled {kernels} kernels in {seconds:.0f} s "
              f"in {min(cpus(), 7)} worker processes")


def coal_shape(coal, kind, size):
    """coal's shape of one of ours given by half sizes (sphere: radius; capsule, cylinder:
    radius, half length; box: half extents): a Box of full edge lengths, a Cylinder or
    Capsule (radius, full length) along z, centred."""
    if kind == "sphere":
        return coal.Sphere(size[0])
    if kind == "capsule":
        return coal.Capsule(size[0], 2 * size[1])
    if kind == "box":
        return coal.Box(*(2 * np.asarray(size)))
    return coal.Cylinder(size[0], 2 * size[1])


def rel_err(x, y):
    """Max-abs error relative to the reference's scale (at least 1)."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    return float(np.abs(x - y).max() / max(1.0, float(np.abs(y).max())))


def random_state(model, rng):
    """A random (q, qd, tau, f_ext) for ``model``: unit quaternions, normal velocities,
    torques of scale 5 and body forces of scale 1."""
    q = model.random_configuration(rng)
    qd = rng.normal(size=model.nv)
    tau = rng.normal(size=model.nv) * 5
    f_ext = rng.normal(size=(model.nb, 6))
    return q, qd, tau, f_ext


def step_factor(model, q, qd):
    """The articulated factorization of a step at ``(q, qd)`` in a fresh workspace (ABA's
    passes and the world poses): ``(ImpulseModel, Factor)`` for the contact kernels."""
    from articulated.algorithms.aba import aba_kernel
    from articulated.algorithms.impulse import Factor, ImpulseModel
    from articulated.algorithms.kinematics import _world_poses_kernel

    d = model.data()
    aba_kernel(d.model_i, d.model_f, q, qd, np.zeros(model.nv), np.zeros((0, 6)), False, d.buf,
               True)
    _world_poses_kernel(d.model_i, d.model_f, q, d.buf)
    ma = model.arrays()
    return (ImpulseModel(ma.parent, ma.vadr, ma.jnv, ma.S),
            Factor(d.Xup_E, d.Xup_r, d.UDinv, d.Dinv, d.oE, d.op))


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


@pytest.fixture(scope="module")
def client():
    """A Dask LocalCluster of two single-threaded worker processes and its client (one per
    test module; skipped without Dask distributed, a test extra)."""
    distributed = pytest.importorskip("distributed", reason="Dask distributed (test extra)")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None)
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()
