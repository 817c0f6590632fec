"""The package's numba cache is keyed on the modules a kernel is built from: a kernel's
cached machine code (which holds its callees from other modules) never outlives an edit of
any of them, and an edit of a module that no kernel module imports recompiles nothing."""
import importlib.util
import os
import shutil
import sys
import types

import pytest
from numba.core.dispatcher import Dispatcher

import articulated
from articulated import _numba_cache
from articulated.algorithms.region import region_update_kernel
from articulated.simulation.adaptive import _adaptive_steps

KERNEL_MODULES = ("algorithms/aba.py", "algorithms/region.py", "algorithms/sweeps.py",
                  "simulation/stepping.py", "simulation/contact_loop.py",
                  "simulation/adaptive.py", "simulation/adaptive_contact.py")


def _stamps(root):
    _numba_cache._module_stamp.cache_clear()
    _numba_cache._closure.cache_clear()
    _numba_cache._imports.cache_clear()
    return {m: _numba_cache.module_stamp(str(root / m), str(root)) for m in KERNEL_MODULES}


def _edit(path):
    path.write_text(path.read_text() + '\n"""edited"""\n')


@pytest.fixture
def package(tmp_path):
    root = tmp_path / "articulated"
    shutil.copytree(_numba_cache.PACKAGE_DIR, root, ignore=shutil.ignore_patterns("__pycache__"))
    yield root
    _stamps(root)       # clear the caches of the copy


def test_stamps_of_a_copy_equal_the_installed_ones(package):
    s0 = _stamps(package)
    _numba_cache._module_stamp.cache_clear()
    here = {m: _numba_cache.module_stamp(os.path.join(_numba_cache.PACKAGE_DIR, m))
            for m in KERNEL_MODULES}
    assert s0 == here
    assert len(set(s0.values())) == len(s0)            # each module its own stamp
    (package / "algorithms" / "__pycache__").mkdir(exist_ok=True)
    (package / "algorithms" / "__pycache__" / "x.nbi").write_bytes(b"cache")
    assert _stamps(package) == s0                      # cache files are not sources


@pytest.mark.parametrize("edited", ["bench/contact.py", "cli.py", "viewer/scene.py",
                                    "io/urdf.py", "sweep.py", "models/chains.py",
                                    "simulation/simulator.py", "__init__.py",
                                    "_numba_cache.py", "precompile.py"])
def test_an_edit_outside_the_kernels_modules_recompiles_no_kernel(package, edited):
    s0 = _stamps(package)
    _edit(package / edited)
    assert _stamps(package) == s0


@pytest.mark.parametrize("edited, callers, others", [
    ("spatial.py", set(KERNEL_MODULES) - {"algorithms/sweeps.py"}, {"algorithms/sweeps.py"}),
    ("algorithms/node_update.py", {"algorithms/region.py", "simulation/adaptive.py",
                                   "simulation/adaptive_contact.py", "simulation/stepping.py"},
     {"algorithms/aba.py", "algorithms/sweeps.py"}),
    ("algorithms/sweeps.py", {"algorithms/sweeps.py", "simulation/contact_loop.py",
                               "simulation/adaptive.py", "simulation/adaptive_contact.py"},
     {"algorithms/aba.py", "algorithms/region.py", "simulation/stepping.py"}),
    ("config.py", set(KERNEL_MODULES), set()),
])
def test_an_edited_callee_changes_the_stamp_of_every_caller(package, edited, callers, others):
    """``callers``: modules whose kernels contain code of ``edited``; ``others``: modules
    whose kernels do not (nor import it)."""
    s0 = _stamps(package)
    _edit(package / edited)
    s1 = _stamps(package)
    changed = {m for m in KERNEL_MODULES if s1[m] != s0[m]}
    assert callers <= changed
    assert not others & changed


def _package_functions(code, glob):
    """The package's functions and modules that the code object ``code`` (and the code
    nested in it) names through its module's globals ``glob``, as (name, object)."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= {n for n, _ in _package_functions(const, glob)}
    out = []
    for n in sorted(names):
        obj = glob.get(n)
        if isinstance(obj, Dispatcher):
            obj = obj.py_func
        if isinstance(obj, (types.FunctionType, types.ModuleType)):
            f = getattr(obj, "__file__", None) or obj.__code__.co_filename
            if f and _numba_cache._in_package(f):
                out.append((n, obj))
    return out


def test_every_function_a_kernel_calls_is_in_its_modules_closure():
    """A kernel's code (and its helpers', recursively) calls only functions defined in the
    modules that the stamp of the kernel's module covers."""
    import articulated.simulation.adaptive_contact  # noqa: F401 (every kernel module)
    import articulated.simulation.srm  # noqa: F401

    kernels = _numba_cache.package_kernels()
    assert len(kernels) > 100
    checked = 0
    for kernel in kernels:
        home = os.path.abspath(kernel.py_func.__code__.co_filename)
        closure = _numba_cache.module_closure(home)
        todo, seen = [kernel.py_func], set()
        while todo:
            fn = todo.pop()
            if id(fn) in seen:
                continue
            seen.add(id(fn))
            for name, obj in _package_functions(fn.__code__, fn.__globals__):
                f = os.path.abspath(getattr(obj, "__file__", None) or obj.__code__.co_filename)
                assert f in closure, (kernel.py_func.__qualname__, name, f)
                checked += 1
                if isinstance(obj, types.FunctionType):
                    todo.append(obj)
    assert checked > 1000


def test_kernels_use_the_module_stamp():
    for kernel in (region_update_kernel, _adaptive_steps):
        loc = kernel._cache._impl.locator
        assert isinstance(loc, _numba_cache.LOCATORS), type(loc)
        assert loc.get_source_stamp() == _numba_cache.module_stamp(
            kernel.py_func.__code__.co_filename)


def test_functions_outside_the_package_keep_numba_locators(tmp_path):
    src = tmp_path / "outside_module.py"
    src.write_text("from numba import njit\n\n@njit(cache=True)\ndef f(x):\n    return x + 1\n")
    spec = importlib.util.spec_from_file_location("outside_module", src)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    loc = mod.f._cache._impl.locator
    assert not isinstance(loc, _numba_cache.LOCATORS)
    assert mod.f(1) == 2
    assert articulated.__file__.startswith(_numba_cache.PACKAGE_DIR)


def test_an_index_that_cannot_be_unpickled_reads_as_empty(tmp_path):
    """An index written when a bundle (named tuple) of a kernel's signature had another
    name: numba would raise AttributeError at the kernel's first call; the package's
    loader reads it as an obsolete index (a compile), and a good index still loads."""
    import pickle

    from numba.core import caching

    import articulated  # noqa: F401 (installs the tolerant loader)

    index_cls = getattr(caching, "IndexDataCacheFile", None) or caching._IndexDataCacheFile
    assert getattr(index_cls._load_index, "tolerant", False)
    mod = types.ModuleType("_gone_bundles")
    exec("from collections import namedtuple\nOld = namedtuple('Old', 'a')", mod.__dict__)
    sys.modules["_gone_bundles"] = mod
    try:
        old = mod.Old(1)
        f = index_cls(str(tmp_path), "kernel-1.py311", "stamp")
        f._save_index({("sig", old): "kernel-1.py311.1.nbc"})
        assert f._load_index() == {("sig", old): "kernel-1.py311.1.nbc"}  # still readable
        del mod.Old                                   # renamed: AttributeError in numba
        assert f._load_index() == {}                  # obsolete, no error
    finally:
        del sys.modules["_gone_bundles"]
    assert f._load_index() == {}                      # the module is gone too
