"""Argument checks shared by the public wrappers (shapes, dtypes, finiteness).

Kept cheap on the hot path: shapes and dtypes are checked up front; finiteness of inputs is
checked once on the *output* (a NaN or inf input always reaches it) and only then diagnosed
entry by entry, so that the error names the joint or body.
"""

from __future__ import annotations

import numpy as np

_DTYPES = (np.dtype(np.float64), np.dtype(np.float32))


def check_dtype(dtype):
    dt = np.dtype(dtype)
    if dt not in _DTYPES:
        raise TypeError(f"dtype must be float64 or float32, got {dt}")
    return dt


def as_state(model, q, qd, dtype=np.float64):
    """(q, qd) as contiguous arrays of ``dtype``; ValueError on shape, quaternion norm."""
    q = model.check_configuration(q, dtype)
    qd = model.check_vector(qd, "qd", model.nv, dtype)
    return q, qd


def as_f_ext(model, f_ext, data):
    """``f_ext`` (nb, 6) in body coordinates, or the data's zero array when None."""
    if f_ext is None:
        return data.f_zero
    f = np.asarray(f_ext)
    if f.dtype.kind not in "fiu":
        raise TypeError(f"f_ext must be a real numeric array, got dtype {f.dtype}")
    if f.shape != (model.nb, 6):
        raise ValueError(f"f_ext must have shape ({model.nb}, 6) (one spatial force per body, "
                         f"body coordinates), got {f.shape}")
    return np.ascontiguousarray(f, dtype=data.dtype)


def check_output(model, out, data, **inputs):
    """Raise a ValueError naming the joint if ``out`` is not finite."""
    if np.isfinite(out).all():
        return
    model.diagnose_nonfinite(**inputs)
    bad = np.flatnonzero(~np.isfinite(out))
    j = int(model.dof_body[bad[0]]) if model.nv else 0
    raise ValueError(
        f"the result is not finite at joint {model.joint_name[j]!r}: its articulated inertia "
        f"D = S^T IA S is singular or the model is too ill-conditioned for {data.dtype}")
