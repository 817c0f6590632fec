"""Numba's on-disk cache, keyed on the modules a kernel is built from.

Numba stamps a cached kernel with a hash of the one file that defines it, but a kernel's
machine code also holds every kernel and helper it calls, from other modules. An edit to
``node_update._update_nodes`` would leave the cached ``simulation.adaptive._adaptive_steps``,
which contains it, in use; and since the stamp is a content hash (numba >= 0.61), such a
stale entry survives reinstalls, e.g. a user's ``pip install -U`` into a site-packages
whose ``__pycache__`` still holds the previous version's files. The locators here stamp a
kernel of ``articulated`` with one hash of the source of its own module and of every module
of the package that module imports at module level, directly or through others
(:func:`module_stamp`): a kernel can only call what its module's globals reach (no kernel
of the package is defined inside a function, where a closure could see a function's own
imports), so an edited callee always changes its callers' stamps, while an edit of a module
that no kernel module imports (the command line, benchmarks, viewer, loaders) recompiles
nothing. They are put first in numba's locator list by :func:`install` (called from
:mod:`articulated.config`, before any kernel is defined); functions outside the package
keep numba's own locators.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import os
import pickle

from numba.core import caching as _caching

PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def _digest(root, paths):
    digest = hashlib.sha256()
    for path in sorted(paths):
        digest.update(os.path.relpath(path, root).replace(os.sep, "/").encode())
        digest.update(b"\0")
        with open(path, "rb") as fh:
            digest.update(fh.read())
        digest.update(b"\0")
    return digest.hexdigest()


def module_stamp(py_file: str, root: str = PACKAGE_DIR) -> str:
    """SHA-256 (hex str) of the source of the module ``py_file`` (a path under ``root``)
    and of every module under ``root`` it imports, transitively (:func:`module_closure`):
    the source stamp of the cached kernels defined in ``py_file``."""
    return _module_stamp(os.path.abspath(py_file), os.path.abspath(root))


@functools.lru_cache(maxsize=None)
def _module_stamp(py_file, root):
    return _digest(root, _closure(py_file, root))


def module_closure(py_file: str, root: str = PACKAGE_DIR) -> frozenset:
    """The paths of ``py_file`` and of every module under ``root`` that it imports at
    module level, directly or through other modules of ``root`` (absolute and relative
    imports; those inside functions are left out: they bind no global a kernel can
    reach)."""
    return _closure(os.path.abspath(py_file), os.path.abspath(root))


@functools.lru_cache(maxsize=None)
def _closure(py_file, root):
    # this module stamps the kernels but holds no code of theirs: an edit here recompiles
    # nothing (it is left out of every closure, and not followed)
    stamper = os.path.join(root, os.path.basename(__file__))
    seen, todo = {stamper}, [py_file]
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        todo.extend(_imports(path, root))
    return frozenset(seen - {stamper})


def _module_level(tree):
    """The nodes of ``tree`` outside function bodies."""
    todo = [tree]
    while todo:
        node = todo.pop()
        yield node
        todo.extend(c for c in ast.iter_child_nodes(node)
                    if not isinstance(c, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))


def _module_path(name, root):
    """The file of module ``name`` (dotted, under the package at ``root``), or None."""
    parts = name.split(".")
    if parts[0] != os.path.basename(root):
        return None
    base = os.path.join(root, *parts[1:])
    for path in (base + ".py", os.path.join(base, "__init__.py")):
        if os.path.isfile(path):
            return path
    return None


@functools.lru_cache(maxsize=None)
def _imports(path, root):
    """The modules under ``root`` that the file ``path`` imports at module level (paths;
    an import inside a class body, ``if`` or ``try`` counts, one inside a function does
    not). ``from P import x`` counts the module ``P.x`` when it exists, else ``P`` itself
    (``x`` is a name that ``P`` defines or re-exports)."""
    with open(path, "rb") as fh:
        tree = ast.parse(fh.read(), filename=path)
    # the package holding the file (for __init__.py: its own), which relative imports start at
    package = os.path.relpath(path, os.path.dirname(root)).replace(os.sep, "/").split("/")[:-1]
    out = set()
    for node in _module_level(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = package[:len(package) - node.level + 1]
                base = ".".join(anchor + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            names = []
            for a in node.names:
                sub = _module_path(f"{base}.{a.name}", root)
                names.append(f"{base}.{a.name}" if sub else base)
        else:
            continue
        for name in names:
            found = _module_path(name, root)
            if found is not None:
                out.add(found)
    out.discard(path)
    return frozenset(out)


def _in_package(py_file) -> bool:
    try:
        path = os.path.abspath(py_file)
    except (TypeError, ValueError):
        return False
    return os.path.commonpath([path, PACKAGE_DIR]) == PACKAGE_DIR


def _locator(base):
    """``base`` (a numba source-file locator) restricted to this package, with the stamp
    of :func:`module_stamp`."""

    class PackageLocator(base):
        def get_source_stamp(self):
            return module_stamp(self._py_file)

        @classmethod
        def from_function(cls, py_func, py_file):
            if not _in_package(py_file):
                return None
            return super().from_function(py_func, py_file)

    PackageLocator.__name__ = PackageLocator.__qualname__ = "Package" + base.__name__.lstrip("_")
    return PackageLocator


def _numba(name):
    """A class of numba's caching module under its name in numba >= 0.61 or the older
    underscored one."""
    return getattr(_caching, name, None) or getattr(_caching, "_" + name)


LOCATORS = tuple(_locator(_numba(n)) for n in
                 ("UserProvidedCacheLocator", "InTreeCacheLocator", "UserWideCacheLocator"))
"""The package's locators, in numba's order: ``NUMBA_CACHE_DIR`` when set, the package's
``__pycache__`` when writable, else the user-wide cache directory."""


def _tolerant(load_index):
    """``IndexDataCacheFile._load_index`` that reads an index it cannot unpickle as empty
    (obsolete), as numba already reads an index of another numba version. The index holds
    the pickled signatures of the cached versions; a bundle (named tuple) renamed or
    removed since the index was written makes unpickling raise (AttributeError), which
    numba would pass on to the first call of the kernel: a stale ``__pycache__`` left by an
    earlier version of the package must cost a compile, not an error."""
    @functools.wraps(load_index)
    def _load_index(self):
        try:
            return load_index(self)
        except (AttributeError, ImportError, EOFError, IndexError, TypeError, ValueError,
                pickle.UnpicklingError):
            return {}
    _load_index.tolerant = True
    return _load_index


def install() -> None:
    """Put :data:`LOCATORS` first in numba's cache-locator list and make the index loader
    tolerant of unreadable indexes (:func:`_tolerant`; numba's class, so for every cached
    function of the process: an index that cannot be read is obsolete for any of them);
    idempotent."""
    impl = _numba("CacheImpl")
    current = [c for c in impl._locator_classes if c not in LOCATORS]
    impl._locator_classes = list(LOCATORS) + current
    index = _numba("IndexDataCacheFile")
    if not getattr(index._load_index, "tolerant", False):
        index._load_index = _tolerant(index._load_index)


def is_cached(dispatcher) -> bool:
    """Whether numba's on-disk cache holds machine code of ``dispatcher`` (a numba
    ``Dispatcher`` with ``cache=True``) stamped with the current source of the modules it
    is built from: False means its first call compiles it (seconds)."""
    cache_file = getattr(getattr(dispatcher, "_cache", None), "_cache_file", None)
    if cache_file is None:                 # cache=False: compiled on every first call
        return False
    try:
        return bool(cache_file._load_index())
    except Exception:  # noqa: BLE001 - an unreadable index is a cold cache
        return False


def package_kernels() -> list:
    """The numba dispatchers with on-disk caching defined at module level in the modules of
    this package imported so far (no import is made)."""
    import sys

    from numba.core.dispatcher import Dispatcher

    name = __name__.rpartition(".")[0]
    seen, out = set(), []
    for mod_name, mod in list(sys.modules.items()):
        if mod is None or not (mod_name == name or mod_name.startswith(name + ".")):
            continue
        for obj in list(vars(mod).values()):
            if (isinstance(obj, Dispatcher) and id(obj) not in seen
                    and getattr(obj, "_cache", None) is not None
                    and hasattr(obj._cache, "_cache_file")
                    and _in_package(getattr(obj.py_func, "__code__", None)
                                    and obj.py_func.__code__.co_filename)):
                seen.add(id(obj))
                out.append(obj)
    return out


def cold_kernels() -> list:
    """The :func:`package_kernels` that :func:`is_cached` finds not cached: what a first run
    (after an install, an upgrade or any edit of the package) compiles."""
    return [d for d in package_kernels() if not is_cached(d)]
