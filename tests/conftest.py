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
