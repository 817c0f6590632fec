import numpy as np
import pytest


def rel_err(x, y):
    """Max-abs error relative to the reference's scale (at least 1)."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    return float(np.abs(x - y).max() / max(1.0, float(np.abs(y).max())))


@pytest.fixture
def rng():
    return np.random.default_rng(12345)
