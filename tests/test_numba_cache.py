"""The package's numba cache is keyed on the source of the whole package, so a kernel's
cached machine code (which holds its callees from other modules) never outlives an edit or
an upgrade of any module."""
import importlib.util
import shutil

import articulated
from articulated import _numba_cache
from articulated.algorithms.region import region_update_kernel
from articulated.simulation.adaptive import _adaptive_steps


def test_package_stamp_covers_every_module(tmp_path):
    root = tmp_path / "pkg"
    shutil.copytree(_numba_cache.PACKAGE_DIR, root,
                    ignore=shutil.ignore_patterns("__pycache__"))
    s0 = _numba_cache.package_stamp(str(root))
    assert s0 == _numba_cache.package_stamp()          # same sources, same stamp
    (root / "algorithms" / "__pycache__").mkdir(exist_ok=True)
    (root / "algorithms" / "__pycache__" / "x.nbi").write_bytes(b"cache")
    _numba_cache._stamp.cache_clear()
    assert _numba_cache.package_stamp(str(root)) == s0  # cache files are not sources
    f = root / "algorithms" / "quasistatics.py"        # a callee of the region kernel
    f.write_text(f.read_text() + "\n# edited\n")
    _numba_cache._stamp.cache_clear()
    assert _numba_cache.package_stamp(str(root)) != s0


def test_kernels_use_the_package_stamp():
    for kernel in (region_update_kernel, _adaptive_steps):
        loc = kernel._cache._impl.locator
        assert isinstance(loc, _numba_cache.LOCATORS), type(loc)
        assert loc.get_source_stamp() == _numba_cache.package_stamp()


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
    import sys
    import types

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
