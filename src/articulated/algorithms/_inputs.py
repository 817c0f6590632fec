"""Argument checks shared by the public wrappers (shapes, dtypes, finiteness).

Kept cheap on the hot path: an argument that already is a contiguous array of the right
dtype and shape passes with a few attribute reads; shapes and dtypes of anything else are
checked up front; finiteness of inputs is checked once on the *output* (a NaN or inf input
always reaches it; the kernels report it) and only then diagnosed entry by entry, so that
the error names the joint or body.
"""

from __future__ import annotations

import numpy as np

_F64 = np.dtype(np.float64)
_F32 = np.dtype(np.float32)
_DTYPES = (_F64, _F32)


def check_dtype(dtype):
    """``np.dtype(dtype)``; TypeError unless float64 or float32."""
    if dtype is _F64 or dtype is np.float64:
        return _F64
    dt = np.dtype(dtype)
    if dt not in _DTYPES:
        raise TypeError(f"dtype must be float64 or float32, got {dt}")
    return dt


def as_vector(model, x, name, size, dtype):
    """x as a contiguous (size,) array of ``dtype`` (``model.check_vector`` unless it
    already is one)."""
    if (type(x) is np.ndarray and x.dtype is dtype and x.shape == (size,)
            and x.strides == (dtype.itemsize,)):
        return x
    return model.check_vector(x, name, size, dtype)


def as_configuration(model, q, dtype=np.float64):
    """q as a contiguous array of ``dtype``; ValueError on shape, quaternion norm
    (``model.check_configuration`` unless there are no quaternions and q already is one)."""
    dtype = check_dtype(dtype)
    if model.quat_qadr.size:
        return model.check_configuration(q, dtype)
    return as_vector(model, q, "q", model.nq, dtype)


def as_state(model, q, qd, dtype=np.float64):
    """(q, qd) as contiguous arrays of ``dtype``; ValueError on shape, quaternion norm."""
    dtype = check_dtype(dtype)
    if model.quat_qadr.size:
        q = model.check_configuration(q, dtype)
    else:
        q = as_vector(model, q, "q", model.nq, dtype)
    return q, as_vector(model, qd, "qd", model.nv, dtype)


def as_f_ext(model, f_ext, data):
    """``f_ext`` (nb, 6) in body coordinates, or the data's empty (0, 6) array (no external
    forces) when None."""
    if f_ext is None:
        return data.f_none
    return check_f_ext(model, f_ext, data.dtype)


def check_f_ext(model, f_ext, dtype):
    """``f_ext`` as a contiguous (nb, 6) array of ``dtype``; TypeError for a non-numeric
    array, ValueError for a wrong shape."""
    f = np.asarray(f_ext)
    if f.dtype.kind not in "fiu":
        raise TypeError(f"f_ext must be a real numeric array, got dtype {f.dtype}")
    if f.shape != (model.nb, 6):
        raise ValueError(f"f_ext must have shape ({model.nb}, 6) (one spatial force per body, "
                         f"body coordinates), got {f.shape}")
    return np.ascontiguousarray(f, dtype=dtype)


def _nonfinite_joint(model, out, **inputs):
    """The joint behind the first non-finite entry of ``out`` (nv,); a ValueError naming a
    non-finite input first (``model.diagnose_nonfinite``)."""
    model.diagnose_nonfinite(**inputs)
    bad = np.flatnonzero(~np.isfinite(out))
    return int(model.dof_body[bad[0]]) if model.nv and bad.size else 0


def report_nonfinite(model, out, data, **inputs):
    """Raise a ValueError naming the joint (or body) behind a non-finite result ``out``:
    first a non-finite input, else a singular articulated inertia."""
    j = _nonfinite_joint(model, out, **inputs)
    raise ValueError(
        f"the result is not finite at joint {model.joint_name[j]!r}: its articulated inertia "
        f"D = S^T IA S is singular or the model is too ill-conditioned for {data.dtype}")


def report_dca_nonfinite(model, out, dtype, **inputs):
    """Raise a ValueError naming the joint behind a non-finite DCA result ``out``: a
    non-finite input first, else a singular handle inertia ``Phi_2^A + Phi_1^B`` or
    ``S^T V S``."""
    j = _nonfinite_joint(model, out, **inputs)
    raise ValueError(
        f"the DCA result is not finite at joint {model.joint_name[j]!r}: the inverse inertia "
        f"Phi_2^A + Phi_1^B or S^T V S of its node (or of an ancestor node) is singular, or the "
        f"model is too ill-conditioned for {np.dtype(dtype)}")


def check_output(model, out, data, **inputs):
    """Raise a ValueError naming the joint if ``out`` is not finite."""
    if np.isfinite(out).all():
        return
    report_nonfinite(model, out, data, **inputs)

