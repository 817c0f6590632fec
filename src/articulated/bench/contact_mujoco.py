"""MuJoCo beside the GLM contact scenes: ``articulated bench contact-mujoco``.

The scenes of :mod:`articulated.bench.contact` (Gayle, Lin & Manocha 2006, "GLM"), each run
by us and by MuJoCo in one process:

* **(a)** :func:`~articulated.bench.contact.pendulum_cylinders` (GLM Fig. 4), no drive;
* **(b)** :func:`articulated.models.thread` pulled through five walls by
  :func:`~articulated.bench.contact.thread_pull` (GLM Fig. 5);
* **(c)** :func:`articulated.models.snake_bridge` driven by
  :func:`~articulated.bench.contact.snake_gait` (GLM Fig. 6);
* **the pile**: :func:`articulated.models.capsule_chain` of 2 cm links dropped on its tip
  (our two pipelines with the contact option ``energy_bound``, without which they diverge,
  and the full model without it).

Ours: the full model (ABA) and adaptive dynamics (``N_A`` active joints, region update
every 10 steps), on (b) and (c) also adaptive with ``energy_bound``, as ``articulated bench
contact`` runs them. MuJoCo: ``mj_step`` on the
model :func:`articulated.interop.to_mujoco` builds from the same model and shapes (masses,
inertias, shapes, friction, filters), the same dt and start, MuJoCo's default solver
(Newton, pyramidal cones, Euler), once with MuJoCo's default contact softness and once
with the stiffest it advises (:data:`MUJOCO_RUNS`). The drive (:class:`MujocoDrive`):
before every ``mj_step`` our forces are evaluated at MuJoCo's state and written to
``qfrc_applied``; viscous joint damping and the PD controller's ``kd`` become MuJoCo's
``dof_damping`` (its Euler integrator takes them implicitly), as
:mod:`articulated.bench.robots` does.

Each run is cut into :data:`SAMPLES` equal parts; the time per step is the median over the
parts of a part's wall time over its steps (ours: ``Simulator.run``, its records included;
MuJoCo: the ``mj_step`` calls alone). Reported: time per step, contacts per step (ours:
the contacts within the speculative reach; MuJoCo: ``ncon``, with its default margin 0 the
touching ones), the largest penetration depth, the total energy ``T + V`` at the end
(:func:`articulated.energy`, on MuJoCo's state converted), and the scene's outcome.
"""

from __future__ import annotations

import time
import warnings
from types import SimpleNamespace

import numpy as np

import articulated as art

from ..model import JOINT_FREE, JOINT_PRISMATIC, JOINT_REVOLUTE
from . import contact as glm
from .common import MarkdownReport, bench_main, markdown_table, new_figure

HELP = ("MuJoCo beside the contact scenes of Gayle, Lin & Manocha 2006: pendulum through "
        "cylinders, thread through walls, snake on a beam, the pile")
"""One line for ``articulated bench --help``."""

H = glm.H
"""Time step of every run [s]."""

SAMPLES = 50
"""Parts of every run: the time per step is the median of the parts' times."""

MUJOCO_RUNS = (("MuJoCo mj_step (defaults)", None),
               ("MuJoCo mj_step, solref = (2 dt, 1)", (2 * H, 1.0)))
"""MuJoCo's runs of every scene: ``(label, solref of every geom)``; None keeps MuJoCo's
default (0.02, 1), a contact time constant of 20 ms; the second is the stiffest MuJoCo
advises (a time constant of two steps)."""

SCENES = ("a", "b", "c", "pile")
"""The scenes of the module docstring, in the order they run."""

SIZES = {"a": ((200, 20), 1500, 40), "b": (295, 3000, 60), "c": (glm.SNAKE_N, 2500, 70),
         "pile": (300, 3000, 60)}
"""scene -> (size, steps, N_A) of the full benchmark (size: links, or (links, cylinders))."""

QUICK = {"a": ((50, 8), 300, 10), "b": (40, 600, 10), "c": (40, 600, 10),
         "pile": (60, 1000, 20)}
"""The same with ``--quick``."""


# ============================================================================ scenes

def build_scene(name, quick=False):
    """Scene ``name`` (one of :data:`SCENES`) at the sizes of :data:`SIZES` (:data:`QUICK`).

    Returns a namespace: ``name``, ``title``, ``model``, ``geom``, ``q0`` (nq,), ``qd0``
    (nv,), ``forces`` (a function returning fresh force objects), ``steps``, ``na``
    (N_A of the adaptive run), ``ours`` (list of ``(label, Simulator keywords)``) and
    ``info`` (scene constants the outcome needs). Raises ValueError for an unknown name.
    """
    if name not in SCENES:
        raise ValueError(f"unknown scene {name!r}; expected one of {SCENES}")
    size, steps, na = (QUICK if quick else SIZES)[name]
    adaptive = dict(method="adaptive", max_active=na, update_every=10)
    bound = dict(contact_options=dict(energy_bound=True))
    ours = [("ours, full model (ABA)", {}), (f"ours, adaptive N_A = {na}", adaptive)]
    if name in ("b", "c"):      # as articulated bench contact runs them
        ours.append((f"ours, adaptive N_A = {na}, energy_bound", dict(adaptive, **bound)))
    info = {}
    if name == "a":
        n, k = size
        m, geom, q0 = glm.pendulum_cylinders(n, k)
        qd0, forces = np.zeros(m.nv), (lambda: [])
        title = f"(a) pendulum-{n} through {k} cylinders"
    elif name == "b":
        m, q0, qd0 = art.models.thread(size, return_configuration=True)
        geom = m.collision
        forces = lambda: glm.thread_pull(m, q0)   # noqa: E731 (fresh forces per run)
        kw = m.description["kwargs"]
        info = dict(walls=kw.get("walls", 5), gap=kw.get("gap", 0.25),
                    offset=kw.get("offset", 0.012), hole=kw.get("hole", 0.03),
                    thickness=kw.get("wall_thickness", 0.03))
        title = f"(b) thread-{m.nv} pulled through {info['walls']} walls"
    elif name == "c":
        m, q0 = art.models.snake_bridge(size, return_configuration=True)
        geom, qd0 = m.collision, np.zeros(m.nv)
        forces = lambda: [glm.snake_gait(m)]   # noqa: E731
        info = dict(height=m.description["kwargs"].get("height", 0.5))
        title = f"(c) snake-{size - 1} on a beam"
    else:
        m, q0 = art.models.capsule_chain(size, link_length=0.02, radius=0.002, mass=0.02,
                                         upright=True, bend=0.05, height=0.05,
                                         return_configuration=True)
        geom, qd0, forces = m.collision, np.zeros(m.nv), (lambda: [])
        ours = [("ours, full model (ABA), energy_bound", bound),
                (f"ours, adaptive N_A = {na}, energy_bound", dict(adaptive, **bound)),
                ("ours, full model (ABA), no bound (default)", {})]
        title = f"the pile: capsule chain-{size} (2 cm links) dropped on its tip"
    return SimpleNamespace(name=name, title=title, model=m, geom=geom, q0=q0, qd0=qd0,
                           forces=forces, steps=steps, na=na, ours=ours, info=info)


# ============================================================================ MuJoCo

class MujocoDrive:
    """Our applied forces as MuJoCo's ``qfrc_applied`` and ``dof_damping``.

    Parameters
    ----------
    model : Model
    mj : mujoco.MjModel
        Made by :func:`articulated.interop.to_mujoco` from ``model``; its ``dof_damping``
        is set here.
    conv : MujocoConverters
        Its converters.
    forces : list
        Our force objects (:mod:`articulated.simulation.forces`):
        :class:`~articulated.PDController` becomes ``kp (q_ref(t) - q)`` in
        ``qfrc_applied`` and ``kd`` in ``dof_damping`` (its ``qd_ref`` must be zero);
        :class:`~articulated.JointDamping` goes to ``dof_damping`` (zero on free joints);
        any other force is evaluated by its ``apply`` at MuJoCo's state, its body forces
        taken to joint space by RNEA (``-rnea(q, 0, 0, f_ext)`` without gravity, i.e.
        ``J^T f_ext``).

    Raises
    ------
    ValueError
        For a PD reference rate that is not zero or joint damping on a free joint.
    """

    def __init__(self, model, mj, conv, forces):
        import mujoco

        self.model, self.mj, self.conv = model, mj, conv
        self.pd, self.explicit = [], []
        self._z = np.zeros(model.nv)
        one_dof = np.isin(model.jnt_type, (JOINT_REVOLUTE, JOINT_PRISMATIC))
        joint = {int(model.jnt_vadr[j]): model.joint_name[j] for j in np.flatnonzero(one_dof)}
        for f in forces:
            f.bind(model)
            if isinstance(f, art.PDController):
                if callable(f.qd_ref) or np.any(f.qd_ref):
                    raise ValueError("MujocoDrive: a PDController with a reference rate")
                _, iv = f._idx(model)
                ids = [mujoco.mj_name2id(mj, mujoco.mjtObj.mjOBJ_JOINT, joint[int(v)])
                       for v in iv]
                mq, mv = mj.jnt_qposadr[ids], mj.jnt_dofadr[ids]
                mj.dof_damping[mv] += np.broadcast_to(f.kd, mv.shape)
                self.pd.append((mq, mv, np.broadcast_to(f.kp, mv.shape).copy(), f.q_ref))
            elif isinstance(f, art.JointDamping):
                b = np.broadcast_to(f.b, (model.nv,)).astype(np.float64)
                free = model.jnt_vadr[model.jnt_type == JOINT_FREE]
                if any(b[v:v + 6].any() for v in free):
                    raise ValueError("MujocoDrive: JointDamping on a free joint")
                mj.dof_damping[:] += conv.qfrc(model.neutral(), b)
            else:
                self.explicit.append(f)

    def qfrc(self, t, qpos, qvel) -> np.ndarray:
        """Return MuJoCo's ``qfrc_applied`` (mj nv,) at time ``t`` [s] and its state."""
        out = np.zeros(self.mj.nv)
        if self.explicit:
            model, conv = self.model, self.conv
            q = conv.q_back(qpos)
            qd = conv.qvel_back(q, qvel)
            tau = np.zeros(model.nv)
            f_ext = np.zeros((model.nb, 6))
            for f in self.explicit:
                f.apply(model, t, q, qd, tau, f_ext)
            if f_ext.any():
                tau -= art.rnea(model, q, self._z, self._z, f_ext, gravity=False)
            out += conv.qfrc(q, tau)
        for mq, mv, kp, ref in self.pd:
            r = np.asarray(ref(t), dtype=np.float64) if callable(ref) else ref
            out[mv] += kp * (r - qpos[mq])
        return out


def mujoco_scene(scene, solref=None):
    """MuJoCo's model of ``scene`` (:func:`build_scene`): ``(mj, conv, drive)``, the
    ``mujoco.MjModel`` of :func:`articulated.interop.to_mujoco` with ``timestep = H``
    (and every geom's ``solref`` set to ``solref`` when given), its converters and its
    :class:`MujocoDrive`."""
    from ..interop import to_mujoco

    mj, conv = to_mujoco(scene.model, scene.geom)
    mj.opt.timestep = H
    if solref is not None:
        mj.geom_solref[:] = solref
    return mj, conv, MujocoDrive(scene.model, mj, conv, scene.forces())


def _pressing(mj, d, nb):
    """Bodies (nb,) bool of ours with a contact of MuJoCo's last step whose normal force
    is positive (``mj_contactForce``)."""
    import mujoco

    on = np.zeros(nb, bool)
    f6 = np.zeros(6)
    for i in range(d.ncon):
        mujoco.mj_contactForce(mj, d, i, f6)
        if f6[0] > 0.0:
            c = d.contact[i]
            for g in (c.geom1, c.geom2):
                b = int(mj.geom_bodyid[g]) - 1      # MuJoCo body i + 1 is our body i
                if 0 <= b < nb:
                    on[b] = True
    return on


def run_mujoco(scene, samples=SAMPLES, solref=None):
    """``mj_step`` on ``scene`` (:func:`build_scene`, :func:`mujoco_scene` with
    ``solref``) for its steps, in ``samples`` parts, stopping at MuJoCo's first
    bad-acceleration warning (it then resets the state) or a non-finite state.

    Returns a dict: ``t`` (k + 1,) [s], ``q`` (k + 1, nq), ``qd`` (k + 1, nv) (ours,
    converted; the start first), ``touch`` (k + 1, nb) bool (bodies pressing on
    something), ``part`` (k,) the mean time of ``mj_step`` over each part [s], ``loop``
    (k,) the same with the drive's evaluation (:meth:`MujocoDrive.qfrc`), per step
    ``ncon`` and ``depth`` (the largest penetration [m]), ``diverged`` (None, or the time
    [s] of the step that went bad).
    """
    import mujoco

    from ..interop import from_mujoco_state, to_mujoco_state

    m = scene.model
    mj, conv, drive = mujoco_scene(scene, solref)
    d = mujoco.MjData(mj)
    d.qpos[:], d.qvel[:] = to_mujoco_state(m, mj, scene.q0, scene.qd0)
    part = scene.steps // samples
    bad = int(mujoco.mjtWarning.mjWARN_BADQACC)
    T, Q, QD = [0.0], [np.array(scene.q0, float)], [np.array(scene.qd0, float)]
    touch, parts, ncon, depth = [np.zeros(m.nb, bool)], [], [], []
    diverged, t = None, 0.0
    loops = []
    for _ in range(samples):
        wall, start = 0.0, time.perf_counter()
        for _ in range(part):
            d.qfrc_applied[:] = drive.qfrc(d.time, d.qpos, d.qvel)
            t0 = time.perf_counter()
            mujoco.mj_step(mj, d)
            wall += time.perf_counter() - t0
            t += H
            if d.warning[bad].number or not np.isfinite(d.qpos).all():
                diverged = t
                break
            ncon.append(d.ncon)
            depth.append(max(0.0, -float(d.contact.dist[:d.ncon].min())) if d.ncon else 0.0)
        if diverged is not None:
            break
        parts.append(wall / part)
        loops.append((time.perf_counter() - start) / part)
        q, qd = from_mujoco_state(m, mj, d.qpos, d.qvel)
        T.append(t)
        Q.append(q)
        QD.append(qd)
        touch.append(_pressing(mj, d, m.nb))
    return dict(t=np.array(T), q=np.array(Q), qd=np.array(QD), touch=np.array(touch),
                part=np.array(parts), loop=np.array(loops), ncon=np.array(ncon, float),
                depth=np.array(depth), diverged=diverged)


# ============================================================================ ours

def run_ours(scene, samples=SAMPLES, **kw):
    """Our simulator (``articulated.Simulator(model, H, contacts=geom, ...)`` with the
    keywords ``kw`` and fresh ``scene.forces()``) on ``scene`` for its steps, in
    ``samples`` parts; the same dict as :func:`run_mujoco` (``ncon``: the contacts each
    step handled), ``part`` the wall time of ``Simulator.run`` over each part [s/step]
    (kernels compiled beforehand: :func:`articulated.bench.contact.warm_up`)."""
    m = scene.model
    sim = art.Simulator(m, H, contacts=scene.geom, q0=scene.q0, qd0=scene.qd0,
                        forces=scene.forces(), **kw)
    part = scene.steps // samples
    T, Q, QD = [0.0], [np.array(scene.q0, float)], [np.array(scene.qd0, float)]
    touch, parts, ncon, depth = [np.zeros(m.nb, bool)], [], [], []
    diverged = None
    for _ in range(samples):
        t0 = time.perf_counter()
        try:
            tr = sim.run(part)
        except art.SimulationDiverged as e:
            diverged = float(e.trajectory.t[-1])
            c = e.trajectory.contacts
            ncon.append(c["n"])
            depth.append(c["max_depth"])
            break
        parts.append((time.perf_counter() - t0) / part)
        c = tr.contacts
        ncon.append(c["n"])
        depth.append(c["max_depth"])
        on = np.zeros(m.nb, bool)
        for x in sim.contact_list():
            if x["impulse"] @ x["normal"] > 0.0:
                for b in x["bodies"]:
                    if b is not None:
                        on[m.body_id(b)] = True
        T.append(float(tr.t[-1]))
        Q.append(tr.q[-1].copy())
        QD.append(tr.qd[-1].copy())
        touch.append(on)
    return dict(t=np.array(T), q=np.array(Q), qd=np.array(QD), touch=np.array(touch),
                part=np.array(parts), ncon=np.concatenate(ncon).astype(float),
                depth=np.concatenate(depth), diverged=diverged)


# ============================================================================ outcomes

def energies(model, r):
    """Total energy ``T + V`` [J] (:func:`articulated.energy`) of every sample of a run."""
    return np.array([sum(art.energy(model, q, qd)) for q, qd in zip(r["q"], r["qd"])])


def thread_outcome(scene, q):
    """Scene (b) at configuration ``q``: ``(head x [m], fraction of the thread's joint
    points past the last wall, crossings of a wall plane outside its hole)``; a crossing
    outside a hole means the thread went through a wall."""
    from ..models.contact_scenes import chain_points

    info = scene.info
    P = chain_points(scene.model, q)
    a, off = 0.5 * info["hole"], info["offset"]
    centres = [(0.0, off), (off, 0.0), (0.0, -off), (-off, 0.0)]
    outside = 0
    for k in range(info["walls"]):
        x = info["gap"] * (k + 1)
        yc, zc = centres[k % 4]
        s = (P[:-1, 0] - x) * (P[1:, 0] - x) < 0.0
        for p0, p1 in zip(P[:-1][s], P[1:][s]):
            c = p0 + (x - p0[0]) / (p1[0] - p0[0]) * (p1 - p0)
            outside += int(abs(c[1] - yc) > a or abs(c[2] - zc) > a)
    last = info["gap"] * info["walls"] + 0.5 * info["thickness"]
    return float(P[0, 0]), float(np.mean(P[:, 0] > last)), outside


def body_com(model, q):
    """World centre of mass (3,) [m] of ``model`` at ``q``."""
    R, p = art.forward_kinematics(model, q)
    c = p + np.einsum("bij,bj->bi", R, model.body_com)
    return model.body_mass @ c / model.body_mass.sum()


def tip(model, q):
    """World position (3,) [m] of the far end of a pendulum's last link (its next joint's
    placement)."""
    R, p = art.forward_kinematics(model, q)
    return p[-1] + R[-1] @ model.jnt_Xtree_r[-1]


def outcome(scene, r):
    """The scene's outcome columns of run ``r`` (its last sample): a list of strings
    matching :func:`outcome_headers`."""
    m, q = scene.model, r["q"][-1]
    if scene.name == "a":
        x = tip(m, q)
        return [f"({x[0]:.3f}, {x[2]:.3f})"]
    if scene.name == "b":
        head, past, out = thread_outcome(scene, q)
        return [f"{head:.3f}", f"{past * 100:.1f} %", f"{out}"]
    if scene.name == "c":
        half = r["touch"][1:].mean(axis=1)
        half = half[len(half) // 2:]
        c0, c1 = body_com(m, r["q"][0]), body_com(m, q)
        off = np.hypot(c1[1], c1[2] - scene.info["height"])
        return [f"{half.mean() * 100:.0f} % (last {half[-1] * 100:.0f} %)" if len(half) else "-",
                f"{(c1[0] - c0[0]) * 1e3:+.1f}", f"{off * 1e3:.1f}"]
    return [f"{body_com(m, q)[2] * 1e3:.1f}"]


def outcome_headers(name):
    """Column names of :func:`outcome` for scene ``name``."""
    return {"a": ["tip (x, z) at the end [m]"],
            "b": ["head x at the end [m]", "thread past the last wall", "crossings outside a hole"],
            "c": ["links pressing on the beam (2nd half)", "COM moved along the beam [mm]",
                  "COM off the beam axis at the end [mm]"],
            "pile": ["COM height at the end [mm]"]}[name]


# ============================================================================ report

def measure(name, quick=False, samples=SAMPLES):
    """Scene ``name`` (:func:`build_scene`): our runs and MuJoCo's, each after a short
    untimed run of the same kind. Returns ``(scene, [(label, run dict)])``
    (:func:`run_ours`, then :func:`run_mujoco` for each of :data:`MUJOCO_RUNS`)."""
    scene = build_scene(name, quick)
    warm = SimpleNamespace(**{**vars(scene), "steps": 20})
    runs = []
    for label, kw in scene.ours:
        run_ours(warm, 2, **kw)
        runs.append((label, run_ours(scene, samples, **kw)))
    run_mujoco(warm, 2)
    for label, solref in MUJOCO_RUNS:
        runs.append((label, run_mujoco(scene, samples, solref)))
    return scene, runs


def _row(scene, label, r, E0):
    """A table row of one run."""
    ran = (f"ran {scene.steps * H:g} s" if r["diverged"] is None else
           f"diverged at t = {r['diverged']:.3f} s")
    if len(r["part"]) == 0:
        return [label, ran, "-", "-", "-", "-", "-"] + ["-"] * len(outcome_headers(scene.name))
    E = energies(scene.model, r)
    return [label, ran, f"{np.median(r['part']) * 1e3:.3f}", f"{r['ncon'].mean():.1f}",
            f"{r['depth'].max() * 1e3:.3f}", f"{E0:.4g} / {E.max():.4g} / {E[-1]:.4g}",
            f"{len(r['part'])}"] + outcome(scene, r)


def _ratio(a, b):
    """``"Rx"``: the median time per step of run ``a`` over run ``b``'s, over the parts both
    ran (named when one stopped early)."""
    k = min(len(a["part"]), len(b["part"]))
    cut = "" if k == SAMPLES else f" (first {k} parts)"
    return f"{np.median(a['part'][:k]) / np.median(b['part'][:k]):.2f}x{cut}"


def report_scene(emit, scene, runs):
    """Emit the table of one scene (:func:`measure`) and the ratios of the step times."""
    E0 = sum(art.energy(scene.model, scene.q0, scene.qd0))
    emit(f"## {scene.title}, {scene.steps} steps")
    emit("")
    emit(markdown_table(["run", "outcome", "step [ms], median", "contacts/step",
                         "max depth [mm]", "energy start / max / end [J]", "parts timed"]
                        + outcome_headers(scene.name),
                        [_row(scene, label, r, E0) for label, r in runs]))
    emit("")
    ours = [(label, r) for label, r in runs if label.startswith("ours") and len(r["part"])]
    for label_mj, mj in runs[len(runs) - len(MUJOCO_RUNS):]:
        if len(mj["part"]) == 0:
            continue
        emit(f"{label_mj}, its step / ours: " + ", ".join(
            f"{label.removeprefix('ours, ')} {_ratio(mj, r)}" for label, r in ours)
             + f" (`mj_step` alone; with the drive evaluated before it, as our times "
               f"include ours: {np.median(mj['loop']) * 1e3:.3f} ms per step).")
        emit("")


def _style(label):
    """``(legend label, colour, line style)`` of a run's line in :func:`figure`."""
    if label.startswith("MuJoCo"):
        return (("MuJoCo, solref (2 dt, 1)", "C3", "--") if "solref" in label else
                ("MuJoCo, defaults", "C2", "--"))
    name, colour = (("ours, adaptive (N_A of the table)", "C1") if "adaptive" in label else
                    ("ours, full model", "C0"))
    if "energy_bound" in label:
        return name + ", energy bound", colour, "-."
    return name, colour, "-"


def figure(results, path):
    """Largest depth [mm] and time per step [ms] of every part, ours (full and adaptive)
    against MuJoCo, one column per scene of ``results`` (``[(scene, runs)]``); saved to
    ``path``."""
    fig, ax = new_figure((3.6 * len(results), 6.6), 2, len(results), squeeze=False)
    lines = {}
    for j, (scene, runs) in enumerate(results):
        for label, r in runs:
            k = len(r["part"])
            if k == 0:
                continue
            name, colour, ls = _style(label)
            part = scene.steps // SAMPLES
            t = H * part * np.arange(1, k + 1)
            dep = r["depth"][:k * part].reshape(k, part).max(axis=1)
            lines[name] = ax[0, j].plot(t, np.maximum(dep * 1e3, 1e-4), color=colour,
                                        linestyle=ls)[0]
            ax[1, j].plot(t, r["part"] * 1e3, color=colour, linestyle=ls)
        ax[0, j].set_title(f"{scene.title.split(':')[0]}\n{scene.model.nv} DOF, dt = {H:g} s",
                           fontsize=10)
        ax[0, j].set(xlabel="t [s]", ylabel="largest depth in a part [mm] (1e-4: none)",
                     yscale="log", ylim=(5e-5, None))
        ax[1, j].set(xlabel="t [s]", ylabel="time per step [ms]", yscale="log")
    fig.legend(list(lines.values()), list(lines), loc="lower center", ncol=len(lines),
               fontsize=8)
    fig.tight_layout(rect=(0, 0.05, 1, 1))     # room for the legend below
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)


def add_arguments(parser):
    """Declare the options of ``articulated bench contact-mujoco [--quick] [--only S ...]
    [--out DIR]``."""
    parser.description = ("the contact scenes of Gayle, Lin & Manocha 2006, ours (full "
                          "model, adaptive) beside MuJoCo's mj_step on the same model")
    parser.add_argument("--quick", action="store_true", help="small sizes only (smoke test)")
    parser.add_argument("--only", nargs="+", choices=SCENES, default=list(SCENES),
                        metavar="SCENE", help=f"run only these scenes ({', '.join(SCENES)})")
    parser.add_argument("--out", default="docs", metavar="DIR",
                        help="folder for contact-mujoco-results.md and contact-mujoco.png "
                             "(default docs)")


def main(argv=None) -> int:
    """``python -m articulated.bench.contact_mujoco [--quick] [--only S ...] [--out DIR]``."""
    return bench_main("contact-mujoco", add_arguments, run, argv)


def run(args) -> int:
    """Run the scenes of ``args.only``; print the Markdown, write it to
    ``OUT/contact-mujoco-results[-quick].md`` and the figure ``contact-mujoco[-quick].png``;
    returns 0."""
    warnings.filterwarnings("ignore", module="numba")
    quick = args.quick
    report = MarkdownReport("MuJoCo beside the GLM scenes", args.out, "contact-mujoco", quick,
                            f"; dt = {H} s")
    glm.warm_up()
    results = []
    for name in args.only:
        results.append(measure(name, quick))
        report_scene(report.emit, *results[-1])
    tail = "-quick" if quick else ""
    png = f"contact-mujoco{tail}.png"
    figure(results, report.out / png)
    report.emit(f"![depth and time per step]({png})")
    path = report.write(f"contact-mujoco-results{tail}.md")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
