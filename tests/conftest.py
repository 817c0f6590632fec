import numpy as np
import pytest


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
