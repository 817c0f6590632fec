"""One compiled version of a kernel per argument type, not per constant.

When a jitted function calls a kernel, numba types the call with the arguments' *literal*
types where it can: ``_update_nodes(nodes, 1, args)`` compiles a version of
``_update_nodes`` for ``Literal[int](1)``, and ``hybrid_dynamics(bkp, 0, ...)`` one for
``Literal[int](0)`` next to the ``int64`` version that Python callers get. Type inference
also calls the dispatcher while a loop counter initialized to ``0`` is still typed
``Literal[int](0)``, before it settles on ``int64``, and compiles that version too. Each
version is a full compile of the kernel and of everything it inlines, so such versions of
large kernels (``_update_nodes``, ``_update_biases``, ``_partial_back_substitution``,
``aba_kernel``) are a large share of a cold compile.

No kernel or helper of this package specializes on a constant argument (the tuples they
index are indexed with constants in their own bodies). :func:`install` therefore makes
numba type every call from jitted code to a function of this package with the arguments'
non-literal types (:func:`numba.core.types.unliteral`); the helpers with the flags
:data:`articulated.config.VIEWS` are inlined by numba before typing and never reach
it. Functions outside the package are untouched.
"""

from __future__ import annotations

from numba.core import types
from numba.core.dispatcher import Dispatcher

from ._numba_cache import _in_package

_MARK = "_articulated_unliteral"


def install() -> None:
    """Wrap :meth:`numba.core.dispatcher.Dispatcher.get_call_template` (the typing of a call
    to a jitted function from jitted code) so that calls to this package's kernels are typed
    with non-literal argument types (idempotent)."""
    original = Dispatcher.get_call_template
    if getattr(original, _MARK, False):
        return

    def get_call_template(self, args, kws):
        if _in_package(self.py_func.__code__.co_filename):
            args = tuple(types.unliteral(a) for a in args)
            kws = {k: types.unliteral(v) for k, v in kws.items()}
        return original(self, args, kws)

    setattr(get_call_template, _MARK, True)
    get_call_template.__doc__ = original.__doc__
    Dispatcher.get_call_template = get_call_template
