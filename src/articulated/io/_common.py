"""What the loaders share: reading a file under a size cap, the description that rebuilds a
model (path, SHA-256, keyword arguments), finiteness checks that name the element, and the
combination of rigidly attached inertias."""

from __future__ import annotations

import hashlib
import os

import numpy as np

MAX_FILE_BYTES = 64 * 2 ** 20
"""Default size cap of a model file [bytes] (64 MiB; the largest URDF of
example-robot-data is 0.3 MB). Loaders take ``max_bytes=`` to raise or lift it."""


def read_capped(path: str, max_bytes, what: str) -> bytes:
    """The bytes of ``path``; ValueError naming the file if it is larger than ``max_bytes``
    (None: no cap), FileNotFoundError if it does not exist."""
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{what} file not found: {path}")
    size = os.path.getsize(path)
    check_size(size, max_bytes, path)
    with open(path, "rb") as f:
        return f.read()


def check_size(size: int, max_bytes, where: str) -> None:
    """ValueError if ``size`` [bytes] exceeds ``max_bytes`` (None: no cap)."""
    if max_bytes is not None and size > max_bytes:
        raise ValueError(f"{where}: {size} bytes exceeds the size cap max_bytes={max_bytes} "
                         f"(pass a larger max_bytes, or None, to load it)")


def describe(kind: str, path, raw: bytes, kwargs: dict) -> dict:
    """``model.description`` of a loaded file: ``{kind: path, "sha256": hex, "kwargs":
    kwargs}`` (JSON-serialisable; see :class:`articulated.model.Model`)."""
    return {kind: None if path is None else os.path.abspath(path),
            "sha256": hashlib.sha256(raw).hexdigest(), "kwargs": kwargs}


def finite(x, what: str) -> np.ndarray:
    """``x`` as a float64 array; ValueError naming ``what`` if it has a NaN or inf."""
    a = np.asarray(x, dtype=np.float64)
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{what} is not finite: {a.tolist()}")
    return a


def combine_inertias(parts):
    """Combine rigidly attached ``(m, c (3,), I_com (3, 3))`` triples given in one frame:
    masses add, the COM is the mass-weighted mean, inertias move to it by the parallel-axis
    theorem (RBDA eq. 2.63). Returns ``(m, c, I_com)``; zero mass gives ``c = 0``."""
    m = sum(p[0] for p in parts)
    if m <= 0.0:
        return 0.0, np.zeros(3), sum((p[2] for p in parts), np.zeros((3, 3)))
    c = sum(p[0] * p[1] for p in parts) / m
    I = np.zeros((3, 3))
    for mk, ck, Ik in parts:
        d = ck - c
        I += Ik + mk * (d @ d * np.eye(3) - np.outer(d, d))
    return m, c, 0.5 * (I + I.T)
