"""Argument tuples passed to compiled kernels by reference.

Numba's calling convention flattens every argument into scalars: an array becomes its
meminfo, parent, size, itemsize, data pointer, shape and strides (7 + 2 ndim words), and a
tuple of arrays all of its arrays' words. The kernels of the adaptive solver take tuples of
20-60 arrays (``hybrid_args``, ``_region_args``), so a call to a kernel that does little
work, such as the update of the one active node of a hybrid step, spends most of its time
pushing and reading the words; one pointer replaces them.

:func:`byref` stores a tuple once in a stack slot of the calling kernel and returns a pointer
to it, :func:`deref` loads it back in the callee; a kernel that takes ``args`` as a pointer
unpacks it with ``a, b, c = deref(args)`` and LLVM loads only the words it uses.
:func:`byref_each` makes one pointer per element of a tuple of tuples. A pointer is valid
while the kernel that made it runs, so a kernel makes its pointers before its loop and passes
them down; Python never sees them (kernels called from Python take the tuples and make the
pointers themselves).
"""

from __future__ import annotations

from numba import types
from numba.core import cgutils
from numba.extending import intrinsic


def _stash(context, builder, ty, value):
    """Store ``value`` (numba type ``ty``) in its data representation (booleans as bytes,
    what a ``CPointer(ty)`` points to) in a new stack slot of the current function."""
    slot = cgutils.alloca_once(builder, context.get_data_type(ty))
    context.pack_value(builder, ty, value, slot)
    return slot


@intrinsic
def byref(typingctx, tup):
    """Pointer (``CPointer(typeof(tup))``) to a copy of ``tup`` in a stack slot of the
    calling kernel (valid until that kernel returns)."""
    def codegen(context, builder, sig, args):
        return _stash(context, builder, sig.args[0], args[0])
    return types.CPointer(tup)(tup), codegen


@intrinsic
def byref_each(typingctx, tup):
    """Tuple of pointers, :func:`byref` of each element of the tuple ``tup`` (a named tuple
    of the same class for a named tuple, so that the pointers are read by field name)."""
    if not isinstance(tup, types.BaseTuple):
        return None
    ptrs = [types.CPointer(t) for t in tup.types]
    # a named tuple (a bundle of articulated.algorithms.bundles) keeps its field names
    if isinstance(tup, types.BaseNamedTuple):
        cls = tup.instance_class
        ret = (types.NamedUniTuple(ptrs[0], len(ptrs), cls) if len(set(ptrs)) == 1
               else types.NamedTuple(ptrs, cls))
    else:
        ret = types.Tuple(ptrs)

    def codegen(context, builder, sig, args):
        out = cgutils.get_null_value(context.get_value_type(sig.return_type))
        for i, ty in enumerate(sig.args[0].types):
            slot = _stash(context, builder, ty, builder.extract_value(args[0], i))
            out = builder.insert_value(out, slot, i)
        return out
    return ret(tup), codegen


@intrinsic
def deref(typingctx, ptr):
    """The value a :func:`byref` pointer points to."""
    if not isinstance(ptr, types.CPointer):
        return None

    def codegen(context, builder, sig, args):
        return context.unpack_value(builder, sig.return_type, args[0])
    return ptr.dtype(ptr), codegen
