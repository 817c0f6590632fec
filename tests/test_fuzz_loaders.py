"""Fuzzing the model loaders (issue 22): mutations of real URDFs (example-robot-data, else
the hand-written ones of tests/data) and of dm_control's MJCF models (tests/data/mjcf).

Every mutated input must either load into a valid model (finite arrays, masses > 0,
physical inertias, ordered limits; ABA at the neutral state finite or a ValueError) or
raise ValueError with a message; never another exception, never more than 2 s of CPU time
(process time, so that other processes on a shared machine do not count), and the whole
run raises the process's peak memory by less than 500 MB.

Profiles: the default run tries FUZZ_EXAMPLES inputs per loader (a few seconds); set
``ARTICULATED_FUZZ=long`` for the long profile (``ARTICULATED_FUZZ_EXAMPLES`` inputs per
loader, default 5000) and ``ARTICULATED_FUZZ_REPORT=FILE.md`` to write the table of
mutations and outcomes recorded in docs/results/reliability.md::

    ARTICULATED_FUZZ=long ARTICULATED_FUZZ_REPORT=fuzz.md python -m pytest -q tests/test_fuzz_loaders.py
"""

from __future__ import annotations

import collections
import copy
import os
import re
import resource
import shutil
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from articulated import aba
from articulated.bench.common import robots_dir
from articulated.builder import check_inertia
from articulated.io.urdf import load_urdf

LONG = os.environ.get("ARTICULATED_FUZZ") == "long"
FUZZ_EXAMPLES = int(os.environ.get("ARTICULATED_FUZZ_EXAMPLES", 5000)) if LONG else 60
TIME_LIMIT = 2.0  # s per input
DATA = Path(__file__).parent / "data"
URDF_SEEDS = ["ur_description/urdf/ur5_robot.urdf", "solo_description/robots/solo12.urdf",
              "double_pendulum_description/urdf/double_pendulum_continuous.urdf",
              "panda_description/urdf/panda.urdf", "romeo_description/urdf/romeo_small.urdf",
              "human_description/robots/human.urdf"]
MJCF_SEEDS = ["acrobot", "cartpole", "hopper", "humanoid"]

SPECIAL = ["nan", "NaN", "inf", "-inf", "1e308", "-1e308", "1e999", "0", "-0", "-1", "1e-300",
           "", " ", "abc", "0x10", "1,2,3", "1 2 3 4 5 6 7", "1e20 1e20 1e20", "+5"]
KINDS = ["delete_element", "duplicate_element", "delete_attribute", "special_value",
         "swap_numbers", "negate_number", "random_bytes", "deep_nesting", "retype",
         "relink", "truncate"]

OUTCOMES = collections.defaultdict(collections.Counter)  # kind -> outcome -> count
EXAMPLES = {}                                              # (kind, outcome) -> message
TOTALS = collections.Counter()                             # loader -> inputs tried
RSS0 = []                                                  # peak RSS after warm-up [KiB]
MAX_GROWTH = 500 * 1024                                     # KiB


def _seed_files():
    root = robots_dir()
    if root is not None:
        files = [root / s for s in URDF_SEEDS if (root / s).is_file()]
        if files:
            return files
    return sorted(DATA.glob("*.urdf"))


def _peak_rss():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


@pytest.fixture(scope="module")
def warm():
    """Imports, ABA compiled, MuJoCo loaded: outside the time and memory measures."""
    check_model(load_urdf(_seed_files()[0]))
    try:
        from articulated.io.mjcf import load_mjcf
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            check_model(load_mjcf(DATA / "mjcf" / "acrobot.xml"))
    except ImportError:
        pass
    RSS0.append(_peak_rss())


@pytest.fixture(scope="module")
def urdf_seeds(warm):
    from lxml import etree
    return [(f.name, etree.fromstring(f.read_bytes(),
                                      etree.XMLParser(remove_comments=True,
                                                      remove_blank_text=True)))
            for f in _seed_files() if f.name != "malformed.urdf"]


# ------------------------------------------------------------------ mutations

mutation = st.tuples(st.sampled_from(KINDS), st.integers(0, 10 ** 6), st.integers(0, 10 ** 6),
                     st.sampled_from(SPECIAL), st.binary(min_size=1, max_size=64),
                     st.integers(1, 3000))


def mutate(root, muts):
    """Apply ``muts`` (from the ``mutation`` strategy) to a copy of the lxml tree ``root``;
    returns the bytes of the mutated document and the kinds applied."""
    from lxml import etree

    root = copy.deepcopy(root)
    raw_ops = []
    for kind, a, b, special, blob, depth in muts:
        els = list(root.iter())
        el = els[a % len(els)]
        numeric = [(e, k) for e in els for k, v in e.attrib.items()
                   if re.fullmatch(r"[-+0-9.eE ]+", v or "")]
        if kind == "delete_element" and el is not root:
            el.getparent().remove(el)
        elif kind == "duplicate_element" and el is not root:
            el.addnext(copy.deepcopy(el))
        elif kind == "delete_attribute" and el.attrib:
            del el.attrib[sorted(el.attrib)[b % len(el.attrib)]]
        elif kind == "special_value" and numeric:
            e, k = numeric[b % len(numeric)]
            vals = e.get(k).split() or ["0"]
            vals[a % len(vals)] = special
            e.set(k, " ".join(vals))
        elif kind == "swap_numbers" and len(numeric) > 1:
            (e1, k1), (e2, k2) = numeric[a % len(numeric)], numeric[b % len(numeric)]
            v1, v2 = e1.get(k1), e2.get(k2)
            e1.set(k1, v2)
            e2.set(k2, v1)
        elif kind == "negate_number" and numeric:
            e, k = numeric[b % len(numeric)]
            e.set(k, " ".join(("-" + x).replace("--", "") for x in e.get(k).split()))
        elif kind == "deep_nesting":
            inner = outer = etree.Element("link", name=f"deep{a}")
            for _ in range(depth):
                inner = etree.SubElement(inner, "visual" if depth % 2 else "link")
            root.append(outer)
        elif kind == "retype":
            joints = [e for e in els if e.tag in ("joint", "body", "geom")]
            if joints:
                e = joints[a % len(joints)]
                e.set("type", ["revolute", "continuous", "prismatic", "fixed", "floating",
                               "planar", "spherical", "hinge", "slide", "ball", "free",
                               "mesh", "plane", "ellipsoid", "bogus", ""][b % 16])
        elif kind == "relink":
            refs = [(e, k) for e in els for k in ("link", "body1", "body2", "joint1")
                    if e.get(k) is not None]
            names = [e.get("name") for e in els if e.get("name")]
            if refs and names:
                e, k = refs[a % len(refs)]
                e.set(k, names[b % len(names)])
        elif kind in ("random_bytes", "truncate"):
            raw_ops.append((kind, a, blob))
    data = etree.tostring(root)
    for kind, a, blob in raw_ops:
        i = a % max(len(data), 1)
        data = data[:i] + blob + data[i + len(blob):] if kind == "random_bytes" else data[:i]
    return data, [m[0] for m in muts]


def _record(kinds, outcome, message):
    """Count ``outcome`` under each mutation kind of the input; keep the first message of
    an input mutated by that kind alone."""
    for k in set(kinds):
        OUTCOMES[k][outcome] += 1
        if len(set(kinds)) == 1 or (k, outcome) not in EXAMPLES:
            if len(set(kinds)) == 1 and EXAMPLES.get((k, outcome), (0, ""))[0] == 1:
                continue
            EXAMPLES[k, outcome] = (len(set(kinds)), message)


def _classify(msg):
    """A short class of a ValueError message (for the report's table)."""
    m = re.sub(r"^\S+\.(urdf|xml): ", "", msg)
    for pat, label in [(r"has no (name|type|<parent|<child|<geometry|filename)",
                        "missing element/attribute (names link/joint)"),
                       (r"not finite", "non-finite number (names element)"),
                       (r"not a number|expected \d", "bad number (names element)"),
                       (r"not well-formed|malformed", "malformed XML/URDF"),
                       (r"MuJoCo cannot load", "MuJoCo's compiler error (names element)"),
                       (r"inertia|principal moments", "unphysical inertia (names body)"),
                       (r"mass", "bad/zero mass (names link/body)"),
                       (r"root link|cycle|not connected|child of two|unknown .* link",
                        "bad tree (names link)"),
                       (r"limit", "bad limit (names joint)"),
                       (r"defined twice|used twice", "duplicate name"),
                       (r"unsupported|not supported", "unsupported element"),
                       (r"axis", "bad axis (names joint)"),
                       (r"no moving joint|has no joint|no <link>", "nothing to simulate"),
                       (r"has no (name|type|<parent|<child|<geometry|filename)",
                        "missing element/attribute (names link/joint)")]:
        if re.search(pat, m):
            return label
    return "other: " + m[:60]


def check_model(model):
    """The loaded model is valid: finite arrays, masses > 0, physical inertias, ordered
    limits; ABA at the neutral state is finite or raises ValueError (never a silent NaN)."""
    for name in ("body_mass", "body_com", "body_I_com", "jnt_axis", "jnt_Xtree_E",
                 "jnt_Xtree_r", "gravity"):
        assert np.isfinite(getattr(model, name)).all(), name
    assert (model.body_mass > 0).all()
    for i in range(model.nb):
        check_inertia(model.body_I_com[i], model.body_name[i])
    assert not (model.jnt_range[:, 0] > model.jnt_range[:, 1]).any()
    try:
        qdd = aba(model, model.neutral(), np.zeros(model.nv), np.zeros(model.nv))
    except ValueError as e:
        assert str(e)
        return "loaded; aba raised ValueError", str(e)
    assert np.isfinite(qdd).all(), "aba returned a non-finite qdd silently"
    return "loaded", ""


def run_one(load, path, kinds):
    """Load ``path``; record the outcome; fail on anything but a model or a ValueError, or
    on a load slower than TIME_LIMIT (the model's check, which compiles ABA on first use,
    is not timed)."""
    TOTALS["mjcf" if kinds[0].startswith("mjcf:") else "urdf"] += 1
    t0 = time.process_time()  # CPU time: other processes on a shared machine do not count
    model = None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = load(path)
    except ValueError as e:
        msg = str(e)
        assert msg, "ValueError without a message"
        _record(kinds, "ValueError: " + _classify(msg), msg)
    except Exception as e:  # pragma: no cover - what the fuzzer is looking for
        raise AssertionError(f"{type(e).__name__} (not ValueError) for mutations {kinds}: "
                             f"{e}") from e
    elapsed = time.process_time() - t0
    assert elapsed < TIME_LIMIT, f"{elapsed:.2f} s for mutations {kinds}"
    if model is not None:
        _record(kinds, *check_model(model))


# ------------------------------------------------------------------- URDF

@settings(max_examples=FUZZ_EXAMPLES, deadline=None, derandomize=not LONG,
          suppress_health_check=list(HealthCheck))
@given(seed=st.integers(0, 100), muts=st.lists(mutation, min_size=1, max_size=4),
       floating=st.booleans(), repair=st.sampled_from([None, "inertia"]))
def test_fuzz_urdf(urdf_seeds, tmp_path_factory, seed, muts, floating, repair):
    name, root = urdf_seeds[seed % len(urdf_seeds)]
    data, kinds = mutate(root, muts)
    path = tmp_path_factory.mktemp("urdf") / name
    path.write_bytes(data)
    run_one(lambda p: load_urdf(p, floating_base=floating, repair=repair), path, kinds)
    shutil.rmtree(path.parent, ignore_errors=True)


# ------------------------------------------------------------------- MJCF

@pytest.fixture(scope="module")
def mjcf_seeds(tmp_path_factory, warm):
    pytest.importorskip("mujoco")
    from lxml import etree
    d = tmp_path_factory.mktemp("mjcf")
    shutil.copytree(DATA / "mjcf" / "common", d / "common")
    return d, [(n, etree.fromstring((DATA / "mjcf" / f"{n}.xml").read_bytes(),
                                    etree.XMLParser(remove_comments=True)))
               for n in MJCF_SEEDS]


@settings(max_examples=FUZZ_EXAMPLES, deadline=None, derandomize=not LONG,
          suppress_health_check=list(HealthCheck))
@given(seed=st.integers(0, 100), muts=st.lists(mutation, min_size=1, max_size=4))
def test_fuzz_mjcf(mjcf_seeds, seed, muts):
    from articulated.io.mjcf import load_mjcf

    d, seeds = mjcf_seeds
    name, root = seeds[seed % len(seeds)]
    data, kinds = mutate(root, muts)
    path = d / f"fuzz_{name}.xml"
    path.write_bytes(data)
    run_one(load_mjcf, path, ["mjcf:" + k for k in kinds])


def test_fuzz_report():
    """The fuzzed loads raised the process's peak memory by less than 500 MB; writes the
    outcome table when ARTICULATED_FUZZ_REPORT names a file (run last)."""
    growth = _peak_rss() - RSS0[0] if RSS0 else 0
    assert growth < MAX_GROWTH, f"peak RSS grew by {growth / 1024:.0f} MiB"
    out = os.environ.get("ARTICULATED_FUZZ_REPORT")
    if not out:
        return
    lines = [f"Inputs tried: {dict(TOTALS)}; peak RSS growth {growth / 1024:.0f} MiB", "",
             "| loader: mutation | inputs | outcomes (count) | a message it got alone |",
             "|---|---:|---|---|"]
    for kind in sorted(OUTCOMES, key=lambda k: (k.startswith("mjcf:"), k)):
        counts = OUTCOMES[kind]
        outs = "; ".join(f"{o.replace('ValueError: ', '')} {n}" for o, n in counts.most_common())
        alone = [m for (k, o), (a, m) in EXAMPLES.items() if k == kind and a == 1 and m]
        msg = re.sub(r"/\S+/", "", alone[0] if alone else "")[:100]
        msg = msg.replace("|", "\\|").replace("\n", " ")
        lab = kind if kind.startswith("mjcf:") else "urdf:" + kind
        lines.append(f"| {lab} | {sum(counts.values())} | {outs} | {msg} |")
    Path(out).write_text("\n".join(lines) + "\n")
