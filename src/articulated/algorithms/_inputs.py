"""Argument checks shared by the public wrappers (shapes, dtypes, finiteness).

Kept cheap on the hot path: an argument that already is a contiguous array of the right
dtype and shape passes with a few attribute reads; shapes and dtypes of anything else are
checked up front; finiteness of inputs is checked once on the *output* (a NaN or inf input
always reaches it; the kernels report it) and only then diagnosed entry by entry, so that
the error names the joint or body.
"""

from __future__ import annotations

import numpy as np
from numba import typeof

from ..config import inline
from ..model import (JOINT_FIXED, JOINT_FREE, JOINT_SPHERICAL, QUAT_TOL, QUAT_TOL_F32,
                     first_bad_quaternion, quaternion_tol, unit_quaternion)

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


_ND = np.ndarray


class EntryPoints(dict):
    """The compiled entry point of one checked kernel, per dtype (``{dtype: entry point}``).

    The public functions' hot path calls it directly, without numba's dispatcher
    (:func:`hot_entry`). A call through the dispatcher types every argument to pick the
    compiled version; the entry point of that version only unboxes them. The hot path may
    skip the typing because it has checked in Python what decides the version
    (:func:`hot_entry`: ndarray, dtype, ndim) and the kernel checks the rest (shapes,
    C-contiguity: :func:`vector_ok`), so that every call it makes is one the dispatcher
    would send to this same version.

    ``sample(d)`` gives the kernel's arguments for the workspace ``d`` with every input a
    contiguous array of ``d``'s dtype: their numba types are the hot path's signature."""

    def __init__(self, kernel, sample):
        super().__init__()
        self.kernel = kernel
        self.sample = sample
        self.f64 = None  # self[float64] once compiled: read without hashing the dtype

    def compile(self, d):
        """The entry point for ``d``'s dtype, compiled or loaded from numba's on-disk cache
        once (``Dispatcher.compile``, the version a dispatcher call would use); the Python
        function itself where numba's JIT is off (``NUMBA_DISABLE_JIT=1``)."""
        k = self.kernel
        ep = self[d.dtype] = (k.compile(tuple(typeof(a) for a in self.sample(d)))
                              if hasattr(k, "compile") else k)
        if d.dtype is _F64:
            self.f64 = ep
        return ep


def hot_entry(entry, d, a, b=None, c=None, f_ext=None, out=None, out_ndim=1):
    """The entry point (:class:`EntryPoints`) a one-state call can go straight to, or None
    (then the public function takes its converting path): a workspace ``d``; ``a`` and,
    where not None, ``b``, ``c`` 1-D ndarrays of the workspace's dtype; ``f_ext`` None or a
    2-D one; ``out`` None or a writable one with ``out_ndim`` dimensions. O(1) attribute
    reads; the kernel checks shapes and contiguity (:func:`vector_ok`, :func:`matrix_ok`)."""
    if d is None or type(a) is not _ND:
        return None
    dt = d.dtype
    if a.dtype is not dt or a.ndim != 1:
        return None
    if b is not None and not (type(b) is _ND and b.dtype is dt and b.ndim == 1):
        return None
    if c is not None and not (type(c) is _ND and c.dtype is dt and c.ndim == 1):
        return None
    if f_ext is not None and not (type(f_ext) is _ND and f_ext.dtype is dt
                                  and f_ext.ndim == 2):
        return None
    if out is not None and not (type(out) is _ND and out.dtype is dt and out.ndim == out_ndim
                                and out.flags.writeable):
        return None
    ep = entry.f64 if dt is _F64 else entry.get(dt)  # a dtype's hash is not cached
    return ep if ep is not None else entry.compile(d)


@inline
def vector_ok(x, n):
    """True if the 1-D array ``x`` has ``n`` entries, contiguous (what a hot call's kernel
    checks before reading an argument that Python did not convert)."""
    return x.shape[0] == n and (n <= 1 or x.strides[0] == x.itemsize)


@inline
def matrix_ok(x, n, m):
    """True if the 2-D array ``x`` is (n, m), C-contiguous (:func:`vector_ok` for
    matrices; the strides of an empty array do not matter, NumPy may give it zeros)."""
    it = x.itemsize
    return (x.shape[0] == n and x.shape[1] == m
            and (n == 0 or m == 0 or ((m <= 1 or x.strides[1] == it)
                                      and (n <= 1 or x.strides[0] == m * it))))


@inline
def configuration_status(mv, q):
    """0 if ``q`` is a contiguous (nq,) configuration of the model ``mv``
    (:func:`articulated.model.model_arrays`) whose quaternions have unit norm to the
    tolerance of its dtype (:func:`articulated.model.quaternion_tol`, the rule of
    :meth:`Model.check_configuration`); 1 for a wrong shape or layout, 2 for a quaternion."""
    nb = mv.parent.shape[0]
    nq = 0
    if nb > 0:
        t = mv.jtype[nb - 1]
        nq = mv.qadr[nb - 1] + (7 if t == JOINT_FREE else 4 if t == JOINT_SPHERICAL
                                else 0 if t == JOINT_FIXED else 1)
    if not vector_ok(q, nq):
        return 1
    tol = QUAT_TOL_F32 if q.itemsize == 4 else QUAT_TOL
    for i in range(nb):
        t = mv.jtype[i]
        if ((t == JOINT_FREE or t == JOINT_SPHERICAL)
                and not unit_quaternion(q, mv.qadr[i] + (3 if t == JOINT_FREE else 0), tol)):
            return 2
    return 0


@inline
def state_status(mv, q, qd, x, f_ext, out):
    """The checks of a checked kernel, compiled: :func:`configuration_status` of ``q``, and
    1 unless ``qd``, ``x``, ``out`` are contiguous with the model's nv entries and ``f_ext``
    is a contiguous (nb, 6) or (0, 6) (none); else 0."""
    nb = mv.parent.shape[0]
    nv = mv.S.shape[0]
    if (not vector_ok(qd, nv) or not vector_ok(x, nv) or not vector_ok(out, nv)
            or not (matrix_ok(f_ext, nb, 6) or matrix_ok(f_ext, 0, 6))):
        return 1
    return configuration_status(mv, q)


def workspace(model, dtype, data):
    """``(dtype, data)``: the checked dtype and the workspace to use (``data``, or the
    model's cached one of that dtype)."""
    dt = check_dtype(dtype)
    if data is not None:
        return dt, data
    d = model._data.get(dt)
    return dt, (d if d is not None else model.data(dt))


def check_quaternions(model, q):
    """ValueError naming the joint unless every quaternion of the contiguous ``q`` (nq,)
    or (B, nq) is of unit norm (:meth:`Model.check_configuration`'s rule), at the cost of
    one compiled call."""
    qa = model.quat_qadr
    if not qa.size:
        return
    tol = quaternion_tol(q.dtype)
    if q.ndim == 1:
        if first_bad_quaternion(q, qa, tol) >= 0:
            model.check_configuration(q, q.dtype)
        return
    idx = (np.arange(q.shape[0], dtype=np.int64)[:, None] * q.shape[1] + qa).ravel()
    k = first_bad_quaternion(q.reshape(-1), idx, tol)
    if k >= 0:
        b = k // qa.size
        try:
            model.check_configuration(q[b], q.dtype)
        except ValueError as e:
            raise ValueError(f"state {b} of the batch: {e}") from None


def as_configuration(model, q, dtype=np.float64):
    """q as a contiguous array of ``dtype``; ValueError on shape, quaternion norm."""
    dtype = check_dtype(dtype)
    q = as_vector(model, q, "q", model.nq, dtype)
    check_quaternions(model, q)
    return q


def as_state(model, q, qd, dtype=np.float64):
    """(q, qd) as contiguous arrays of ``dtype``; ValueError on shape, quaternion norm."""
    q = as_configuration(model, q, dtype)
    return q, as_vector(model, qd, "qd", model.nv, q.dtype)


def is_batch(x) -> bool:
    """True for a 2-D array-like: a batch of states, one per row."""
    return x.ndim == 2 if type(x) is np.ndarray else np.ndim(x) == 2


def as_batch(model, x, name, size, dtype, B=None):
    """x as a contiguous (B, size) array of ``dtype``; ValueError naming ``name`` on a wrong
    shape (B: the batch size of the first argument; None takes x's)."""
    a = np.asarray(x)
    if a.dtype.kind not in "fiu":
        raise TypeError(f"{name} must be a real numeric array, got dtype {a.dtype}")
    if a.ndim != 2 or a.shape[1] != size or (B is not None and a.shape[0] != B):
        want = f"({'B' if B is None else B}, {size})"
        raise ValueError(f"{name} must have shape {want} (one state per row), got {a.shape}")
    return np.ascontiguousarray(a, dtype=dtype)


def deliver(x, out):
    """The result ``x`` of a public function: a copy, or written into ``out``
    (:func:`as_output`) and ``out`` returned."""
    if out is None:
        return x.copy()
    out = as_output(out, x.shape, x.dtype)
    out[...] = x
    return out


def as_output(out, shape, dtype, name="out"):
    """``out`` if it is a writable contiguous array of ``shape`` and ``dtype``, else a
    ValueError; a new array when ``out`` is None."""
    if out is None:
        return np.empty(shape, dtype=dtype)
    if (type(out) is not np.ndarray or out.dtype != dtype or out.shape != shape
            or not out.flags.c_contiguous or not out.flags.writeable):
        raise ValueError(f"{name} must be a writable C-contiguous {np.dtype(dtype)} array of "
                         f"shape {shape}, got "
                         f"{getattr(out, 'dtype', type(out).__name__)} {np.shape(out)}")
    return out


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

