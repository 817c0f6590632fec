"""The documentation site: it builds with warnings as errors, every public name is in the
API reference, and the code of the Getting started page runs as written."""

import importlib
import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import articulated as art

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The HTML site built by ``python -m sphinx -W --keep-going -b html docs OUT`` (the
    command of the README); returns OUT. Fails with Sphinx's warnings if there are any."""
    out = tmp_path_factory.mktemp("html")
    doctrees = tmp_path_factory.mktemp("doctrees")
    r = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b",
                        "html", "-d", str(doctrees), str(DOCS), str(out)],
                       capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert r.returncode == 0, f"sphinx-build failed:\n{r.stderr[-6000:]}"
    return out


def test_site_builds_without_warnings(site):
    for page in ("index.html", "getting-started.html", "api/index.html"):
        assert (site / page).is_file(), page


def test_every_public_name_is_in_the_api_reference(site):
    """``articulated.__all__`` against the built ``objects.inv`` (Sphinx's own reader)."""
    from sphinx.util.inventory import InventoryFile

    with open(site / "objects.inv", "rb") as f:
        inv = InventoryFile.load(f, "", lambda base, uri: uri)
    documented = {name for entries in inv.data.values() for name in entries} if hasattr(
        inv, "data") else {name for entries in inv.values() for name in entries}
    missing = sorted(n for n in art.__all__ if f"articulated.{n}" not in documented)
    assert not missing, f"public names missing from the API reference: {missing}"
    for module in ("articulated.models", "articulated.simulation", "articulated.geometry",
                   "articulated.viewer", "articulated.io.urdf", "articulated.io.mjcf",
                   "articulated.io.structure"):
        assert module in documented, module
    for sub in ("models", "simulation", "viewer"):
        mod = importlib.import_module(f"articulated.{sub}")
        missing = sorted(n for n in mod.__all__
                         if f"articulated.{sub}.{n}" not in documented
                         and f"articulated.{n}" not in documented)
        assert not missing, f"articulated.{sub}: missing {missing}"


def python_blocks(page):
    """The ```` ```python ```` blocks of a Markdown page, in order."""
    return re.findall(r"^```python\n(.*?)^```", page.read_text(), re.M | re.S)


GETTING_STARTED = python_blocks(DOCS / "getting-started.md")


def _needs(code):
    """What a block needs beyond the test extra: a reason to skip, or None."""
    if "example-robot-data" in code or "solo12" in code:
        if importlib.util.find_spec("coal") is None:
            return "coal (mesh extra) not installed"
        import sysconfig

        robots = (Path(sysconfig.get_paths()["purelib"])
                  / "cmeel.prefix/share/example-robot-data/robots")
        if not robots.is_dir():
            return "example-robot-data (robots extra) not installed"
    if "load_structure" in code and importlib.util.find_spec("gemmi") is None:
        return "gemmi (molecules extra) not installed"
    return None


def test_getting_started_has_its_sections():
    assert len(GETTING_STARTED) == 4


@pytest.mark.parametrize("code", GETTING_STARTED,
                         ids=["pendulum", "robot", "adaptive", "protein"][:len(GETTING_STARTED)])
def test_getting_started_runs(code, tmp_path, monkeypatch, capsys):
    """Each Python block of docs/getting-started.md runs as written, in a fresh namespace,
    in a folder holding the PDB file the protein block reads."""
    reason = _needs(code)
    if reason:
        pytest.skip(reason)
    shutil.copy(DATA / "4E43.pdb.gz", tmp_path / "4E43.pdb.gz")
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "getting-started.md", "exec"), {"__name__": "__docs__"})
    assert capsys.readouterr().out
