"""Two-dimensional views of packed buffers without numba's general reshape.

The kernels take a model or a workspace as one packed float buffer and cut it into named
arrays (:func:`articulated.model.model_arrays`, :func:`articulated.data.data_arrays`).
Numba compiles ``a.reshape((m, n))`` into a call of its shape normaliser and of the C helper
``numba_attempt_nocopy_reshape`` at every reshape, about 50-100 cycles each: an ABA call
unpacks nine reshaped views, which cost about as much as the arithmetic of ABA on a
one-body tree (the reduced tree of a hybrid body with one active joint, stepped every time
step). :func:`rows` builds the (m, n) view of a contiguous buffer directly: its data
pointer, shape ``(m, n)`` and strides ``(n itemsize, itemsize)``.
"""

from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.core.imputils import impl_ret_borrowed
from numba.core import config as numba_config
from numba.extending import intrinsic
from numba.np.arrayobj import make_array, populate_array

from .config import JIT


@intrinsic
def _rows_view(typingctx, a, m, n):
    """The first ``m * n`` entries of the one-dimensional C-contiguous array ``a`` as a
    C-contiguous (m, n) view (no copy; ``a`` must hold at least ``m * n`` entries, not
    checked). Generated in place at the call site (an intrinsic, not a function call), so
    that kernels compiled without NRT can use it like a slice."""
    if not (isinstance(a, types.Array) and a.ndim == 1 and a.layout == "C"):
        return None
    retty = a.copy(ndim=2, layout="C")

    def codegen(context, builder, sig, args):
        aryty, mty, nty = sig.args
        ary = make_array(aryty)(context, builder, args[0])
        mm = context.cast(builder, args[1], mty, types.intp)
        nn = context.cast(builder, args[2], nty, types.intp)
        out = make_array(retty)(context, builder)
        populate_array(out, data=ary.data, shape=[mm, nn],
                       strides=[builder.mul(nn, ary.itemsize), ary.itemsize],
                       itemsize=ary.itemsize, meminfo=ary.meminfo, parent=ary.parent)
        return impl_ret_borrowed(context, builder, retty, out._getvalue())

    return retty(a, m, n), codegen


def _rows_python(a, m, n):
    """:func:`rows` without numba (``NUMBA_DISABLE_JIT=1``)."""
    return a[:m * n].reshape((m, n))


rows = _rows_python if numba_config.DISABLE_JIT else _rows_view
"""``rows(a, m, n)``: the first ``m * n`` entries of the one-dimensional C-contiguous
array ``a`` as a C-contiguous (m, n) view, no copy (:func:`_rows_view`). For compiled
code (with or without NRT; a view made in a kernel with NRT holds a reference to its
buffer); with ``NUMBA_DISABLE_JIT=1`` NumPy's reshape."""


def mat3_view(a, nb):
    """An (nb, 9) view as an (nb, 3, 3) view (NumPy; never a copy)."""
    m = a.reshape(nb, 3, 3)
    if nb and not np.shares_memory(m, a):
        raise AssertionError("packed 3x3 field is not viewable as (nb, 3, 3)")
    return m


@njit(**JIT)
def mat3_rows(a):
    """An (n, 9) array of row-major 3x3 matrices (any strides, e.g. a field of a packed
    buffer) as an (n, 3, 3) view, inside compiled code (never a copy)."""
    s0, s1 = a.strides
    return np.lib.stride_tricks.as_strided(a, shape=(a.shape[0], 3, 3),
                                           strides=(s0, 3 * s1, s1))
