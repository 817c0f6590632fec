"""The forward-dynamics benchmark behind ``articulated bench fd``.

Times our ABA, RNEA and CRBA (through the public functions :func:`articulated.aba`,
:func:`articulated.rnea`, :func:`articulated.crba`) against Pinocchio (``pin.aba``,
``pin.rnea``, ``pin.crba``) and MuJoCo (``mj_forward``, ``mj_inverse``) on the seed scenes,
*in the same run*, and prints ns per DOF and the ratios peer time / our time (machines are
noisy; ratios measured side by side are what to compare across machines). Then a scaling
sweep of ABA on pendulum chains of 10^3 .. 10^6 DOF (ns/DOF and bytes/DOF), and a check that
every seed scene builds and takes a few simulation steps. The machine, library versions and
git commit are printed with the numbers (STYLE.md, Benchmarks).

Method: every function is called once first (JIT compilation or numba cache load, reported
separately), then timed as the median over ``repeats`` samples, each sample a batch of calls
long enough (about 20 ms) for the clock. Inputs are a random configuration, random
velocities and random torques / accelerations (seed 0), converted once to each peer's
conventions outside the timed region (see :mod:`articulated.interop`); each peer's result
is checked against ours before it is timed.

Limits of the peers, reported as "n/a (...)" instead of crashing:

* Pinocchio's ``createData()`` grows about cubically with the chain length (1.9 GB at 300
  links, 22 GB at 700): it runs under an address-space cap (:data:`PIN_MEMORY_CAP`) so that it
  fails with a MemoryError rather than waking the OOM killer.
* MuJoCo cannot nest bodies deeper than about 1,000 levels (XML parser depth limit).
* CRBA returns a dense nv x nv matrix: skipped above :data:`DENSE_LIMIT` bytes.
* Pinocchio's model building and MuJoCo's parser/compiler are quadratic in the body count:
  above :data:`PEER_MAX_BODIES` bodies they are not attempted unless ``--all-peers``.

Run ``articulated bench fd`` (or ``python -m articulated.bench.fd``); ``--quick`` for tiny
sizes (the smoke test in ``tests/test_bench.py``), ``--out FILE`` to also write the report
as Markdown (or JSON for a ``.json`` name).
"""

from __future__ import annotations

import gc
import json
import re
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from .common import (address_space_cap, at_least, bench_main, loadavg, machine_info,
                     markdown_table, meminfo, peak_rss_bytes, rss_bytes, time_call, time_calls)

DENSE_LIMIT = 1.0e9
"""Largest dense nv x nv float64 matrix [bytes] that the CRBA rows compute (~1 GB)."""

PIN_MEMORY_CAP = 4 * 2 ** 30
"""Most extra address space [bytes] Pinocchio's ``createData()`` may take (also at most half
of the available memory); beyond it the allocation fails with a MemoryError."""

METHODS = ("aba", "rnea", "crba", "pin.aba", "pin.rnea", "pin.crba", "mj_forward", "mj_inverse")
"""Timed functions: ours (public API), Pinocchio's, MuJoCo's."""

RATIOS = (("pin.aba", "aba"), ("pin.rnea", "rnea"), ("pin.crba", "crba"),
          ("mj_forward", "aba"), ("mj_inverse", "rnea"))
"""(peer, ours) pairs whose time ratio peer / ours is reported (> 1: we are faster)."""

SCALING_SIZES = (10 ** 3, 10 ** 4, 10 ** 5, 10 ** 6)
QUICK_SCALING_SIZES = (100, 1000)
PENDULUM_SIZES = (30, 300, 3000)

PEER_MAX_BODIES = 20_000
"""Above this many bodies the peers are not attempted unless asked (``all_peers``):
Pinocchio's model building and MuJoCo's XML parser and compiler grow quadratically with
the body count (on the 2-core reference machine: Pinocchio 128 s for the 50,000-atom
molecule before createData's MemoryError; MuJoCo 7 s to compile 8,000 atoms, minutes for
50,000)."""
QUICK_PENDULUM_SIZES = (8, 32)

_PIN_MEMORY_NOTE = "n/a (Pinocchio: MemoryError in createData)"


# ============================================================================ results

@dataclass
class SceneResult:
    """One row of the main table. ``seconds[m]`` is the median time of one call of method m
    (None when not run: see ``notes[m]``); ``agreement[m]`` the max relative difference of
    a peer's result from ours."""
    name: str
    nb: int
    nv: int
    build_s: float
    seconds: dict = field(default_factory=dict)
    notes: dict = field(default_factory=dict)
    agreement: dict = field(default_factory=dict)

    def ns_per_dof(self, method):
        s = self.seconds.get(method)
        return None if s is None else s / max(self.nv, 1) * 1e9

    def ratio(self, peer, ours):
        a, b = self.seconds.get(peer), self.seconds.get(ours)
        return None if a is None or b is None else a / b


@dataclass
class ScaleResult:
    """One row of the scaling sweep (ABA on a pendulum chain of n links)."""
    n: int
    build_s: float
    aba_s: float
    model_bytes: int
    data_bytes: int
    rss_bytes: int | None

    @property
    def ns_per_dof(self):
        return self.aba_s / self.n * 1e9

    @property
    def bytes_per_dof(self):
        return (self.model_bytes + self.data_bytes) / self.n


@dataclass
class SeedResult:
    """A seed scene built and stepped (explicit Euler, ``steps`` steps of 1e-4 s)."""
    name: str
    nb: int
    nv: int
    build_s: float
    step_s: float | None
    ok: bool
    note: str = ""


@dataclass
class BenchResult:
    """Everything :func:`bench_fd` measured (``asdict`` makes it JSON-ready)."""
    machine: dict
    scenes: list
    scaling: list
    seeds: list
    first_call_s: dict
    quick: bool
    elapsed_s: float = 0.0

    def scene(self, name) -> SceneResult:
        for s in self.scenes:
            if s.name == name:
                return s
        raise KeyError(name)

    def scaling_ratio(self):
        """ns/DOF at the largest chain over ns/DOF at the smallest (the target: <= 1.5)."""
        if len(self.scaling) < 2:
            return None
        return self.scaling[-1].ns_per_dof / self.scaling[0].ns_per_dof


def _pin_cap():
    avail = meminfo("MemAvailable")
    return PIN_MEMORY_CAP if avail is None else min(PIN_MEMORY_CAP, avail // 2)



# ============================================================================ timing

def _repeats_for(one_call_s, repeats):
    """Fewer samples for slow calls (keeps the full run within minutes)."""
    if one_call_s > 0.5:
        return min(repeats, 3)
    if one_call_s > 0.05:
        return min(repeats, 5)
    return repeats


def _rel(x, y):
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    return float(np.abs(x - y).max() / max(1.0, float(np.abs(y).max()))) if y.size else 0.0


def _short(e: BaseException, limit=140) -> str:
    """A one-line error message (MuJoCo's parser adds error ids and line numbers)."""
    s = " ".join(str(e).split()) or type(e).__name__
    s = re.sub(r"ErrorID=\d+ \(0x[0-9a-fA-F]+\) |Line number=\d+: ", "", s)
    return s if len(s) <= limit else s[:limit - 3] + "..."


# ============================================================================ peers

def _state(model, seed=0):
    rng = np.random.default_rng(seed)
    q = model.random_configuration(rng)
    qd = rng.normal(size=model.nv)
    tau = rng.normal(size=model.nv)
    qdd = rng.normal(size=model.nv)
    return q, qd, tau, qdd


def pinocchio_model(model):
    """``(PinocchioModel, None)``, or ``(None, "n/a (...)")`` when Pinocchio is missing or
    its ``createData()`` runs out of memory (under :func:`address_space_cap`)."""
    try:
        import pinocchio  # noqa: F401
    except ImportError:
        return None, "n/a (Pinocchio not installed: pip install pin)"
    from ..interop import to_pinocchio

    try:
        with address_space_cap(_pin_cap()):
            pm = to_pinocchio(model)
    except MemoryError:
        gc.collect()
        return None, _PIN_MEMORY_NOTE
    except Exception as e:  # any other refusal is reported, not fatal
        return None, f"n/a (Pinocchio: {_short(e)})"
    return pm, None


def mujoco_model(model):
    """``(mj_model, converters, None)``, or ``(None, None, "n/a (MuJoCo: <its error>)")``
    (e.g. bodies nested deeper than about 1,000 levels)."""
    try:
        import mujoco  # noqa: F401
    except ImportError:
        return None, None, "n/a (MuJoCo not installed: pip install mujoco)"
    from ..interop import to_mujoco

    try:
        mj, conv = to_mujoco(model)
    except Exception as e:  # MuJoCo raises ValueError with its compiler/parser message
        return None, None, f"n/a (MuJoCo: {_short(e)})"
    return mj, conv, None


# ============================================================================ one scene

def bench_scene(name, model, build_s=0.0, *, repeats=7, first_call=None, log=None,
                peers=True) -> SceneResult:
    """Time every method of :data:`METHODS` on ``model`` (see the module docstring); the
    peers only when ``peers`` (otherwise their cells say why not)."""
    import articulated as art

    res = SceneResult(name, int(model.nb), int(model.nv), float(build_s))
    q, qd, tau, qdd = _state(model)
    say = log or (lambda msg: None)

    def run(method, fn):
        t0 = time.perf_counter()
        fn()
        t1 = time.perf_counter() - t0
        if first_call is not None and method not in first_call:
            first_call[method] = t1
        res.seconds[method] = time_call(fn, _repeats_for(t1, repeats))

    # ours, through the public functions
    run("aba", lambda: art.aba(model, q, qd, tau))
    run("rnea", lambda: art.rnea(model, q, qd, qdd))
    dense = 8.0 * model.nv * model.nv
    if dense > DENSE_LIMIT:
        res.seconds["crba"] = None
        res.notes["crba"] = f"n/a (dense M: {dense / 1e9:.2g} GB)"
    else:
        run("crba", lambda: art.crba(model, q))
    say(f"{name}: ours done")
    ours_qdd = art.aba(model, q, qd, tau)
    ours_tau = art.rnea(model, q, qd, qdd)

    if not peers:
        note = (f"n/a (not attempted above {PEER_MAX_BODIES:,} bodies: the peers' model "
                f"building grows quadratically; --all-peers to try)")
        for m in METHODS[3:]:
            res.seconds[m] = None
            res.notes[m] = note
        return res

    # Pinocchio
    t0 = time.perf_counter()
    pm, note = pinocchio_model(model)
    say(f"{name}: Pinocchio model {time.perf_counter() - t0:.1f} s" + (f" ({note})" if note else ""))
    if pm is None:
        for m in ("pin.aba", "pin.rnea", "pin.crba"):
            res.seconds[m] = None
            res.notes[m] = note
    else:
        import pinocchio as pin

        pq, pv, ptau, pa = pm.q(q), pm.v(qd), pm.v(tau), pm.v(qdd)
        res.agreement["pin.aba"] = _rel(pm.v_back(pin.aba(pm.model, pm.data, pq, pv, ptau)), ours_qdd)
        res.agreement["pin.rnea"] = _rel(pm.v_back(pin.rnea(pm.model, pm.data, pq, pv, pa)), ours_tau)
        run("pin.aba", lambda: pin.aba(pm.model, pm.data, pq, pv, ptau))
        run("pin.rnea", lambda: pin.rnea(pm.model, pm.data, pq, pv, pa))
        if "crba" in res.notes:
            res.seconds["pin.crba"] = None
            res.notes["pin.crba"] = res.notes["crba"]
        else:
            run("pin.crba", lambda: pin.crba(pm.model, pm.data, pq))
        del pm
        gc.collect()

    # MuJoCo
    t0 = time.perf_counter()
    mj, conv, note = mujoco_model(model)
    say(f"{name}: MuJoCo model {time.perf_counter() - t0:.1f} s" + (f" ({note})" if note else ""))
    if mj is None:
        for m in ("mj_forward", "mj_inverse"):
            res.seconds[m] = None
            res.notes[m] = note
    else:
        import mujoco

        d = mujoco.MjData(mj)
        conv.set_state(d, q, qd, tau)
        mujoco.mj_forward(mj, d)
        res.agreement["mj_forward"] = _rel(conv.qacc_back(q, qd, d.qacc), ours_qdd)
        run("mj_forward", lambda: mujoco.mj_forward(mj, d))
        d2 = mujoco.MjData(mj)
        conv.set_state(d2, q, qd)
        d2.qacc[:] = conv.qacc(q, qd, qdd)
        mujoco.mj_inverse(mj, d2)
        res.agreement["mj_inverse"] = _rel(conv.qfrc_back(q, d2.qfrc_inverse), ours_tau)
        run("mj_inverse", lambda: mujoco.mj_inverse(mj, d2))
        del d, d2, mj
    say(f"{name}: peers done")
    return res


# ============================================================================ scaling, seeds

def model_nbytes(model) -> int:
    """Bytes of every numpy array held by ``model`` (its cached float64 arrays are the same
    objects and are counted once)."""
    seen, total = set(), 0
    objs = [vars(model)] + [vars(a) for a in getattr(model, "_arrays", {}).values()]
    for ns in objs:
        for a in ns.values():
            if isinstance(a, np.ndarray) and id(a) not in seen:
                seen.add(id(a))
                total += a.nbytes
    return total


def bench_scaling(sizes=SCALING_SIZES, *, repeats=7, log=None) -> list:
    """ABA ns/DOF and Model + Data bytes/DOF on pendulum chains of ``sizes`` links."""
    import articulated as art
    from .. import models

    out = []
    for n in sizes:
        gc.collect()
        rss0 = rss_bytes()
        t0 = time.perf_counter()
        model = models.pendulum(int(n))
        build = time.perf_counter() - t0
        q, qd, tau, _ = _state(model)
        t0 = time.perf_counter()
        art.aba(model, q, qd, tau)
        t1 = time.perf_counter() - t0
        rss1 = rss_bytes()
        s = time_call(lambda: art.aba(model, q, qd, tau), _repeats_for(t1, repeats))
        row = ScaleResult(int(n), build, s, model_nbytes(model), model.data().nbytes(),
                          None if rss0 is None or rss1 is None else rss1 - rss0)
        out.append(row)
        if log:
            log(f"scaling n={n}: build {build:.1f} s, ABA {s * 1e3:.3f} ms ({row.ns_per_dof:.0f} ns/DOF)")
        del model, q, qd, tau
    gc.collect()
    return out


def _seed_scenes(quick):
    from .. import models

    if quick:
        return [("pendulum-30", lambda: models.pendulum(30)),
                ("bicycle_chain-30", lambda: models.bicycle_chain(30)),
                ("millipede-small", lambda: models.millipede(legs=4, leg_links=3, spine=12)),
                ("molecule-300", lambda: models.molecule(300)),
                ("humanoid", lambda: models.humanoid()),
                ("crowd-2", lambda: models.crowd(2, return_configuration=True)),
                ("two_link_arm", lambda: models.two_link_arm())]
    return [("pendulum-300", lambda: models.pendulum(300)),
            ("bicycle_chain-30", lambda: models.bicycle_chain(30)),
            ("millipede", lambda: models.millipede()),
            ("molecule-50000", lambda: models.molecule(50_000)),
            ("humanoid", lambda: models.humanoid()),
            ("crowd-200", lambda: models.crowd(200, return_configuration=True)),
            ("two_link_arm", lambda: models.two_link_arm())]


def check_seed_scenes(quick=False, steps=3, log=None) -> list:
    """Build every seed scene and take ``steps`` explicit-Euler steps of 1e-4 s from a
    random configuration; the state must stay finite."""
    from ..simulation import Simulator

    out = []
    for name, make in _seed_scenes(quick):
        t0 = time.perf_counter()
        m = make()
        q0 = None
        if isinstance(m, tuple):
            m, q0 = m
        build = time.perf_counter() - t0
        if q0 is None:
            q0 = m.random_configuration(np.random.default_rng(0), 0.1)
        try:
            sim = Simulator(m, 1e-4, integrator="euler", q0=q0)
            sim.run(1, progress=False)  # warm-up (first-call compilation of the helpers)
            t0 = time.perf_counter()
            sim.run(steps, progress=False)
            dt = (time.perf_counter() - t0) / steps
            ok = bool(np.isfinite(sim.q).all() and np.isfinite(sim.qd).all())
            out.append(SeedResult(name, m.nb, m.nv, build, dt, ok, "" if ok else "non-finite state"))
        except Exception as e:  # reported in the table, not fatal
            out.append(SeedResult(name, m.nb, m.nv, build, None, False, _short(e)))
        if log:
            log(f"seed scene {name}: {'ok' if out[-1].ok else out[-1].note}")
        del m
    return out


# ============================================================================ driver

def _main_scenes(sizes, quick):
    from .. import models

    scenes = [(f"pendulum-{n}", (lambda n=n: models.pendulum(int(n)))) for n in sizes]
    if quick:
        scenes += [("millipede-small", lambda: models.millipede(legs=4, leg_links=3, spine=12)),
                   ("molecule-300", lambda: models.molecule(300))]
    else:
        scenes += [("millipede", lambda: models.millipede()),
                   ("molecule-5000", lambda: models.molecule(5_000)),
                   ("molecule-50000", lambda: models.molecule(50_000))]
    return scenes


def bench_fd(sizes=None, quick=False, out=None, *, scaling=None, repeats=None, seeds=True,
             all_peers=False, show=True, log=None) -> BenchResult:
    """Run the forward-dynamics benchmark, print its report and return the numbers.

    Parameters
    ----------
    sizes : sequence of int, optional
        Pendulum lengths of the main table (default 30, 300, 3000; quick: 8, 32); millipede
        and molecule rows follow (the 13,000-body millipede, molecules of 5,000 and 50,000
        atoms).
    quick : bool
        Tiny sizes only (smoke test, seconds once the kernels are compiled).
    out : str or Path, optional
        Also write the report: Markdown, or JSON for ``.json``.
    scaling : sequence of int, optional
        Pendulum lengths of the scaling sweep (default 10^3 .. 10^6; quick: 100, 1000).
    repeats : int, optional
        Timing samples per measurement (default 7; quick: 3).
    seeds : bool
        Also build and step every seed scene.
    all_peers : bool
        Also try the peers above :data:`PEER_MAX_BODIES` bodies (adds several minutes: the
        50,000-atom molecule).
    show : bool
        Print the report (``rich`` tables when available).
    log : callable(str), optional
        Progress messages (default: to stderr when ``show``).

    Returns
    -------
    BenchResult
    """
    t_start = time.perf_counter()
    if log is None:
        log = (lambda msg: print(f"[bench] {msg}", file=sys.stderr, flush=True)) if show else None
    sizes = tuple(sizes) if sizes is not None else (QUICK_PENDULUM_SIZES if quick else PENDULUM_SIZES)
    scaling = tuple(scaling) if scaling is not None else (QUICK_SCALING_SIZES if quick else SCALING_SIZES)
    repeats = int(repeats) if repeats is not None else (3 if quick else 7)
    machine = machine_info()
    first = {}
    scenes = []
    for name, make in _main_scenes(sizes, quick):
        gc.collect()
        t0 = time.perf_counter()
        model = make()
        build = time.perf_counter() - t0
        if log:
            log(f"{name}: built in {build:.2f} s (nv = {model.nv})")
        scenes.append(bench_scene(name, model, build, repeats=repeats, first_call=first, log=log,
                                  peers=all_peers or model.nb <= PEER_MAX_BODIES))
        del model
    scale = bench_scaling(scaling, repeats=repeats, log=log)
    seed_rows = check_seed_scenes(quick, log=log) if seeds else []
    machine["peak_rss_gb"] = round((peak_rss_bytes() or 0) / 1e9, 2)
    machine["load_end"] = loadavg()
    res = BenchResult(machine, scenes, scale, seed_rows, first, bool(quick),
                      time.perf_counter() - t_start)
    if show:
        print_report(res)
    if out is not None:
        write_report(res, out)
    return res


# ============================================================================ report

def _fmt_ns(x):
    if x is None:
        return "n/a"
    return f"{x:,.0f}" if x >= 100 else f"{x:.1f}"


def _fmt_ratio(x):
    return "-" if x is None else (f"{x:.1f}x" if x >= 10 else f"{x:.2f}x")


def _fmt_s(s):
    if s is None:
        return "n/a"
    if s >= 1:
        return f"{s:.2f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.2f} ms"
    return f"{s * 1e6:.1f} us"


def report_tables(res: BenchResult):
    """The report as a list of (title, headers, rows, footnotes) tables of strings."""
    notes = []

    def cell(sc, m):
        if sc.seconds.get(m) is not None:
            return _fmt_ns(sc.ns_per_dof(m))
        note = sc.notes.get(m, "not run")
        if note not in notes:
            notes.append(note)
        return f"n/a [{notes.index(note) + 1}]"

    heads = ["scene", "nb", "nv", "ABA / call"] + list(METHODS)
    rows = [[sc.name, f"{sc.nb:,}", f"{sc.nv:,}", _fmt_s(sc.seconds.get("aba"))]
            + [cell(sc, m) for m in METHODS] for sc in res.scenes]
    foot = [f"[{i + 1}] {n}" for i, n in enumerate(notes)]
    bad = [f"{sc.name} {m}: result differs from ours by {e:.1e} (relative)"
           for sc in res.scenes for m, e in sc.agreement.items() if not e <= 1e-6]
    foot += ["WARNING " + b for b in bad]
    if res.scenes and not bad and any(sc.agreement for sc in res.scenes):
        worst = max(e for sc in res.scenes for e in sc.agreement.values())
        foot.append(f"every peer result agrees with ours (max relative difference {worst:.1e})")
    if res.first_call_s:
        foot.append("first call (JIT compile or numba cache load, not in the table): "
                    + ", ".join(f"{k} {v:.2f} s" for k, v in res.first_call_s.items()
                                if k in ("aba", "rnea", "crba")))
    tables = [("Time per DOF [ns/DOF], median of one warm call", heads, rows, foot)]

    rh = ["scene", "nv"] + [f"{p} / {o}" for p, o in RATIOS]
    rr = [[sc.name, f"{sc.nv:,}"] + [_fmt_ratio(sc.ratio(p, o)) for p, o in RATIOS]
          for sc in res.scenes]
    tables.append(("Ratios peer time / our time (same run; > 1: we are faster)", rh, rr,
                   ["mj_forward does more than ABA (kinematics, CRB + sparse factorization, "
                    "sensors...); mj_inverse likewise vs RNEA"]))

    if res.scaling:
        sh = ["n = nv", "build", "ABA / call", "ns/DOF", "Model B/DOF", "Data B/DOF",
              "B/DOF", "RSS growth B/DOF"]
        sr = [[f"{r.n:,}", _fmt_s(r.build_s), _fmt_s(r.aba_s), f"{r.ns_per_dof:.1f}",
               f"{r.model_bytes / r.n:,.0f}", f"{r.data_bytes / r.n:,.0f}",
               f"{r.bytes_per_dof:,.0f}", "n/a" if r.rss_bytes is None else f"{r.rss_bytes / r.n:,.0f}"]
              for r in res.scaling]
        ratio = res.scaling_ratio()
        sf = []
        if ratio is not None:
            sf.append(f"ns/DOF at n = {res.scaling[-1].n:,} / ns/DOF at n = {res.scaling[0].n:,}: "
                      f"{ratio:.2f} (target <= 1.5)")
        sf.append("B/DOF = numpy arrays of the Model + model.data() (without the lazily allocated "
                  "dense M); RSS growth = resident memory after building and one ABA call")
        tables.append(("Scaling: ABA on pendulum chains", sh, sr, sf))

    if res.seeds:
        eh = ["seed scene", "nb", "nv", "build", "Euler step", "simulates"]
        er = [[s.name, f"{s.nb:,}", f"{s.nv:,}", _fmt_s(s.build_s), _fmt_s(s.step_s),
               "yes" if s.ok else f"NO ({s.note})"] for s in res.seeds]
        tables.append(("Every seed scene builds and simulates (1 + 3 explicit Euler steps of "
                       "1e-4 s from a random configuration)", eh, er, []))
    return tables


def _machine_lines(res):
    m = res.machine
    return [f"machine: {m.get('cpu')} ({m.get('cores')} cores, {m.get('memory_gb', '?')} GB), "
            f"{m.get('platform')}",
            f"versions: articulated {m.get('articulated')} (commit {m.get('commit')}), python "
            f"{m.get('python')}, numpy {m.get('numpy')}, numba {m.get('numba')}, pin "
            f"{m.get('pin')}, mujoco {m.get('mujoco')}",
            f"date: {m.get('date')}; total {res.elapsed_s:.0f} s; 1-min load average "
            f"{m.get('load_start')} at start, {m.get('load_end')} at end (this run adds about 1; "
            f"more means other processes competed for the {m.get('cores')} cores)",
            f"peak RSS {m.get('peak_rss_gb')} GB; Pinocchio createData capped at "
            f"{_pin_cap() / 2 ** 30:.1f} GB of address space"]


def _targets(res):
    """Lines reading the results against the project targets (pendulum-300 when present)."""
    lines = []
    try:
        sc = res.scene("pendulum-300")
    except KeyError:
        sc = None
    if sc is not None:
        ns = sc.ns_per_dof("aba")
        lines.append(f"ABA on pendulum-300: {ns:.0f} ns/DOF (target <= 150): "
                     f"{'met' if ns <= 150 else 'NOT met'}")
        r = sc.ratio("pin.aba", "aba")
        lines.append("pin.aba / ABA on pendulum-300: " + (
            f"{r:.2f}x (target >= 2x): {'met' if r >= 2 else 'NOT met'}" if r is not None
            else sc.notes.get("pin.aba", "n/a")))
    ratio = res.scaling_ratio()
    if ratio is not None and not res.quick:
        lines.append(f"ns/DOF at {res.scaling[-1].n:,} vs {res.scaling[0].n:,}: {ratio:.2f}x "
                     f"(target <= 1.5x): {'met' if ratio <= 1.5 else 'NOT met'}")
    if res.seeds:
        ok = all(s.ok for s in res.seeds)
        lines.append(f"every seed scene builds and simulates: {'met' if ok else 'NOT met'}")
    return lines


def format_markdown(res: BenchResult) -> str:
    """The report as Markdown (what ``--out report.md`` writes)."""
    out = ["```", *_machine_lines(res), "```", ""]
    for title, heads, rows, foot in report_tables(res):
        out += [f"**{title}**", "", markdown_table(heads, rows)]
        out += [""] + [f"- {f}" for f in foot] + ([""] if foot else [])
    t = _targets(res)
    if t:
        out += ["**Targets**", ""] + [f"- {x}" for x in t] + [""]
    return "\n".join(out)


def format_text(res: BenchResult) -> str:
    """The report as plain text (aligned columns)."""
    out = _machine_lines(res) + [""]
    for title, heads, rows, foot in report_tables(res):
        w = [max(len(str(x)) for x in col) for col in zip(heads, *rows)]
        out += [title, "  ".join(h.rjust(k) for h, k in zip(heads, w))]
        out += ["  ".join(c.rjust(k) for c, k in zip(r, w)) for r in rows]
        out += [f"  {f}" for f in foot] + [""]
    out += ["targets:"] + [f"  {x}" for x in _targets(res)]
    return "\n".join(out)


def print_report(res: BenchResult, console=None):
    """Print the report: ``rich`` tables when rich is installed, plain text otherwise."""
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:
        print(format_text(res))
        return
    from rich.markup import escape

    if console is None:
        console = Console()
        if not console.is_terminal:  # piped: no 80-column default, keep rows on one line
            console = Console(width=220)
    for line in _machine_lines(res):
        console.print(line, highlight=False, markup=False)
    for title, heads, rows, foot in report_tables(res):
        t = Table(title=escape(title), title_justify="left")
        for i, h in enumerate(heads):
            t.add_column(escape(h), justify="left" if i == 0 else "right", no_wrap=True)
        for r in rows:
            t.add_row(*(escape(c) for c in r))
        console.print(t)
        for f in foot:
            console.print("  " + f, highlight=False, markup=False)
    console.print("targets:")
    for x in _targets(res):
        console.print("  " + x, highlight=False, markup=False)


def write_report(res: BenchResult, path):
    """Write the report to ``path``: JSON for a ``.json`` name, Markdown otherwise."""
    path = Path(path)
    if path.suffix == ".json":
        path.write_text(json.dumps(asdict(res), indent=1, default=float))
    else:
        path.write_text(format_markdown(res) + "\n")


# ============================================================================ demo helper

def peer_timings(model, q0, repeats=200, qd=None, tau=None):
    """One forward-dynamics call on (model, q0), ours against the installed peers.

    Returns rows ``(name, seconds, note)``: first ``articulated.aba`` (public function), then
    ``pinocchio.aba`` and ``mujoco.mj_forward``; ``seconds`` is the median of ``repeats``
    timed warm calls, or None with the reason in ``note``. Used by ``articulated demo``.
    """
    import articulated as art

    q0 = np.asarray(q0, dtype=np.float64)
    qd = np.zeros(model.nv) if qd is None else np.asarray(qd, dtype=np.float64)
    tau = np.zeros(model.nv) if tau is None else np.asarray(tau, dtype=np.float64)
    repeats = max(1, int(repeats))

    med = lambda fn: time_calls(fn, repeats)

    rows = [("articulated.aba", med(lambda: art.aba(model, q0, qd, tau)), "")]
    pm, note = pinocchio_model(model)
    if pm is None:
        rows.append(("pinocchio.aba", None, note))
    else:
        import pinocchio as pin

        pq, pv, pt = pm.q(q0), pm.v(qd), pm.v(tau)
        rows.append(("pinocchio.aba", med(lambda: pin.aba(pm.model, pm.data, pq, pv, pt)), ""))
        del pm
        gc.collect()
    mj, conv, note = mujoco_model(model)
    if mj is None:
        rows.append(("mujoco.mj_forward", None, note))
    else:
        import mujoco

        d = mujoco.MjData(mj)
        conv.set_state(d, q0, qd, tau)
        rows.append(("mujoco.mj_forward", med(lambda: mujoco.mj_forward(mj, d)), ""))
    return rows


# ============================================================================ command line

HELP = "forward/inverse dynamics ns/DOF of ABA, RNEA, CRBA vs Pinocchio and MuJoCo, and scaling"
"""One line for ``articulated bench --help``."""


def add_arguments(parser):
    """Declare the options of ``articulated bench fd [--quick] [--out FILE] [--sizes N ...]
    [--scaling N ...] [--repeats K] [--no-seeds] [--all-peers]`` on ``parser``."""
    parser.description = "Forward-dynamics benchmark against Pinocchio and MuJoCo."
    p = parser
    p.add_argument("--quick", action="store_true", help="tiny sizes only (smoke test)")
    p.add_argument("--out", default=None, metavar="FILE",
                   help="also write the report (Markdown; JSON for .json)")
    p.add_argument("--sizes", type=at_least(1), nargs="+", default=None, metavar="N",
                   help="pendulum lengths of the main table (default 30 300 3000)")
    p.add_argument("--scaling", type=at_least(1), nargs="+", default=None, metavar="N",
                   help="pendulum lengths of the scaling sweep (default 1e3 1e4 1e5 1e6)")
    p.add_argument("--repeats", type=at_least(1), default=None, metavar="K",
                   help="timing samples (default 7)")
    p.add_argument("--no-seeds", action="store_true", help="skip the seed-scene check")
    p.add_argument("--all-peers", action="store_true",
                   help=f"also try Pinocchio and MuJoCo above {PEER_MAX_BODIES:,} bodies "
                        f"(several minutes more)")


def run(args) -> int:
    """Run :func:`bench_fd` with the options of :func:`add_arguments`; returns 0."""
    bench_fd(args.sizes, args.quick, args.out, scaling=args.scaling, repeats=args.repeats,
             seeds=not args.no_seeds, all_peers=args.all_peers)
    return 0


def main(argv=None) -> int:
    """``python -m articulated.bench.fd [options]``: as ``articulated bench fd``."""
    return bench_main("fd", add_arguments, run, argv)


if __name__ == "__main__":
    sys.exit(main())
