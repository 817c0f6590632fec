"""Contact benchmarks (Gayle, Lin & Manocha 2006, "GLM"): ``articulated bench contact``.

* **(a) pendulum through cylinders** (GLM Fig. 4): a pendulum of ``n`` links (capsules of
  radius 1 cm on its 0.1 m links) released from horizontal swings through ``k`` random
  vertical cylinders; the full model (every joint active, ABA) against adaptive dynamics
  with ``N_A`` active joints (region update every 10 steps), same contact pipeline:
  mean step (updates included), contact time (detection and response), contacts per
  step, largest depth, speed-ups.
* **MuJoCo comparison**: a free-base chain of ``n`` capsules (0.1 m, radius 1 cm, 0.1 kg,
  mu 0.5, self-collision on) dropped flat from 0.3 m onto a plane, ``mj_step`` (MuJoCo's
  default solver, same dt) against our full model and adaptive ``N_A``: time per step in
  flight and at rest, largest depth, kinetic energy at the end, and a picture.
* **(e) solo12** (example-robot-data's URDF, its collision meshes through coal, free base,
  robot-floor contacts only) dropped 6 cm onto a plane and held standing by a PD
  controller, against ``mj_step`` on the same model with the same PD torques, with
  MuJoCo's defaults and with its no-slip iterations.
* **(b) thread** (GLM Fig. 5): :func:`articulated.models.thread` pulled through the holes
  of 5 walls by a spring whose anchor moves (:func:`thread_pull`), full vs adaptive.
* **(c) snake on a bridge** (GLM Fig. 6): :func:`articulated.models.snake_bridge` wound
  around a box beam, PD-tracking a helical rolling gait (:func:`snake_gait`), full vs
  adaptive; the fraction of links pressing on the beam; an animation.
* **the rope** (:func:`articulated.models.hanging_rope`): 1,000 capsules of 1 cm on
  spherical joints (3,000 DOF, self-collision on), hung from a point, swinging over a
  cylinder onto the floor; time per step (mean, median), depth, contacts, sweeps, whether
  it ran its time, for the full model and adaptive dynamics.
* **(d) response time per contact** (GLM Fig. 7): the chain lying on the plane at rest,
  adaptive dynamics, against ``N_A`` (linear fit) and against the chain's length ``n`` at
  fixed ``N_A``; a picture.

Both are measured in one process, each run after a warm-up (compilation excluded); the
machine is shared, so the ratios matter more than the times. GLM gives no sizes, times or
hardware: the scenes are ours.
"""

from __future__ import annotations

import time
import warnings
from types import SimpleNamespace

import numpy as np

import articulated as art

from .common import (MarkdownReport, bench_main, markdown_table, new_figure, robots_dir,
                     save_figure)

HELP = ("contact (Gayle, Lin & Manocha 2006): pendulum through cylinders (full vs adaptive), "
        "a capsule chain dropped on a plane against MuJoCo, a thread through walls, a snake "
        "on a bridge")
"""One line for ``articulated bench --help``."""

H = 1e-3
"""Time step of every run [s]."""


def pendulum_cylinders(n=200, k=20, seed=0):
    """Scene (a): ``pendulum(n)`` with a capsule (radius 1 cm) on every link, released from
    horizontal (along +x, swinging about y), and ``k`` cylinders (radius 5-15 cm, across the
    swing plane) at random places of the quarter disk it sweeps. Returns ``(model, geom,
    q0)``."""
    m = art.models.pendulum(n)
    geom = art.CollisionModel(m)
    for i in range(n):
        geom.add(i, art.Capsule(radius=0.01, length=0.08), pos=(0, 0, -0.05), mu=0.5, e=0.0,
                 group=1, mask=2)
    rng = np.random.default_rng(seed)
    L = 0.1 * n
    for _ in range(k):
        r = rng.uniform(0.2, 0.95) * L
        th = rng.uniform(0.05, 1.4)  # below the horizontal, inside the swept quarter disk
        geom.add_static(art.Cylinder(radius=rng.uniform(0.05, 0.15), length=0.6,
                                     pos=(r * np.cos(th), rng.uniform(-0.05, 0.05), -r * np.sin(th)),
                                     R=np.array([[1.0, 0, 0], [0, 0, -1], [0, 1, 0]])),
                        mu=0.5, e=0.0, group=2, mask=1)
    q0 = np.zeros(n)
    q0[1] = -np.pi / 2  # joint 1 turns about y: links 1.. lie along +x, link 0 hangs
    return m, geom, q0


def capsule_chain(n=300):
    """The MuJoCo scene: :func:`articulated.models.capsule_chain` (a free-base chain of
    ``n`` capsules, 0.1 m, radius 1 cm, 0.1 kg, lying flat 0.3 m above a plane, mu 0.5,
    self-collision on). Returns ``(model, geom, q0)``."""
    m, q0 = art.models.capsule_chain(n, return_configuration=True)
    return m, m.collision, q0


def thread_pull(model, q0, speed=art.models.THREAD_SPEED, stiffness=200.0, damping=5.0,
                joint_damping=5e-4):
    """The forces of scene (b) (:func:`articulated.models.thread`): a spring (``stiffness``
    [N/m], ``damping`` [N s/m]) from the thread's head (the origin of body 0) to an anchor
    that starts there (``q0``) and moves along +x at ``speed`` [m/s], and viscous joint
    friction ``joint_damping`` [N m s/rad] on every hinge (it damps the bending waves of
    the free chain, which semi-implicit Euler does not survive on the whipping tail).
    Returns ``[Spring, JointDamping]``."""
    b = np.full(model.nv, float(joint_damping))
    b[:6] = 0.0
    return [art.Spring(0, (0.0, 0.0, 0.0), np.array(q0[:3], dtype=np.float64), stiffness,
                       damping=damping, anchor_velocity=(float(speed), 0.0, 0.0)),
            art.JointDamping(b)]


def snake_gait(model, omega=2.0, ramp=1.0, kp=5.0, kd=0.01):
    """The controller of scene (c) (:func:`articulated.models.snake_bridge`; its
    description gives the helices): PD tracking (``kp`` [N m/rad], ``kd`` [N m s/rad]) of
    the helical rolling gait (:func:`articulated.models.helical_gait`) on every hinge, its
    amplitude and wavenumber going linearly in ``ramp`` [s] from the start's loose helix
    to the tight one (the coil tightens onto the beam at a constant pitch; the phase is
    held at the middle link, so the ends wind about it), its phase advancing at
    ``omega`` [rad/s] (the snake rolls). Returns a :class:`~articulated.PDController`."""
    n = model.nb
    kw = model.description["kwargs"]
    a0, a, d = kw["amplitude0"], kw["amplitude"], kw["wavenumber"]
    d0 = art.models.matched_wavenumber(float(model.jnt_Xtree_r[1, 0]), a0, a, d)
    mid = 0.5 * n

    def q_ref(t):
        s = min(t / ramp, 1.0)
        dt = d0 + s * (d - d0)
        return art.models.helical_gait(n, a0 + s * (a - a0), dt, (d0 - dt) * mid + omega * t)

    return art.PDController(kp=kp, kd=kd, q_ref=q_ref, joints=list(range(1, n)))


def run_parts(sim, part, count, after=None):
    """``count`` runs of ``part`` steps of the simulator ``sim``, stopping at a divergence:
    ``(trajectories, walls, diverged)`` with ``walls`` the wall time [s] of each part that
    completed and ``diverged`` None or the time [s] the failing part reached;
    ``after(sim)`` (untimed) after each part that completed."""
    trs, walls = [], []
    for _ in range(count):
        t0 = time.perf_counter()
        try:
            trs.append(sim.run(part))
        except art.SimulationDiverged as e:
            return trs, walls, float(e.trajectory.t[-1])
        walls.append(time.perf_counter() - t0)
        if after is not None:
            after(sim)
    return trs, walls, None


def run_sampled(model, geom, q0, steps, samples, **kw):
    """:func:`run_ours` in ``samples`` equal parts, recording after each part the state and
    which bodies press on something (a contact of the part's last step with a positive
    normal impulse): returns its dict with ``q`` (k + 1, nq) (the start first), ``t`` (k +
    1,) [s], ``touch`` (k + 1, nb) bool and ``frac`` (k + 1,) (the fraction of bodies
    touching), ``diverged``: None, or the time [s] at which a part diverged
    (:class:`~articulated.SimulationDiverged`; the statistics are then those of the k
    parts before it)."""
    sim = art.Simulator(model, H, contacts=geom, q0=q0, **kw)
    part = steps // samples
    q, t, touch = [sim.q.copy()], [0.0], [np.zeros(model.nb, bool)]

    def sample(sim):
        on = np.zeros(model.nb, bool)
        for c in sim.contact_list():
            if c["impulse"] @ c["normal"] > 0.0:
                for b in c["bodies"]:
                    if b is not None:
                        on[model.body_id(b)] = True
        q.append(sim.q.copy())
        t.append(sim.t)
        touch.append(on)

    trs, walls, diverged = run_parts(sim, part, samples, sample)
    c = {k: np.concatenate([tr.contacts[k] for tr in trs]) for k in trs[0].contacts.dtype.names}
    ct = c["detect_time"] + c["response_time"]
    touch = np.array(touch)
    return dict(step=sum(walls) / (part * len(trs)), contact=float(ct.mean()),
                n=float(c["n"].mean()), depth=float(c["max_depth"].max()), c=c, q=np.array(q),
                t=np.array(t), touch=touch, frac=touch.mean(axis=1), diverged=diverged)


def full_and_adaptive(m, q0, steps, samples, na, forces, **kw):
    """:func:`run_sampled` of the full model and of adaptive dynamics (``N_A = na``, region
    update every 10 steps) without and with the contact option ``energy_bound``, each with
    fresh ``forces()``. Returns ``{"full": ..., "adaptive": ..., "bounded": ...}``."""
    adaptive = dict(method="adaptive", max_active=na, update_every=10)
    return {name: run_sampled(m, m.collision, q0, steps, samples, forces=forces(), **kw,
                              **extra)
            for name, extra in (("full", {}), ("adaptive", adaptive),
                                ("bounded", dict(adaptive,
                                                 contact_options=dict(energy_bound=True))))}


def thread_run(n, steps, na, samples=50, **kw):
    """Scene (b) (GLM Fig. 5): :func:`articulated.models.thread` with ``n`` links pulled by
    :func:`thread_pull` for ``steps`` steps, the full model and adaptive ``N_A = na``;
    returns ``(model, {"full": ..., "adaptive": ..., "bounded": ...})``
    (:func:`full_and_adaptive`)."""
    m, q0, qd0 = art.models.thread(n, return_configuration=True, **kw)
    return m, full_and_adaptive(m, q0, steps, samples, na, lambda: thread_pull(m, q0), qd0=qd0)


def snake_run(n, steps, na, samples=50, **kw):
    """Scene (c) (GLM Fig. 6): :func:`articulated.models.snake_bridge` with ``n`` links
    driven by :func:`snake_gait` for ``steps`` steps, the full model and adaptive ``N_A =
    na``; returns ``(model, {"full": ..., "adaptive": ..., "bounded": ...})``
    (:func:`full_and_adaptive`)."""
    m, q0 = art.models.snake_bridge(n, return_configuration=True, **kw)
    return m, full_and_adaptive(m, q0, steps, samples, na, lambda: [snake_gait(m)])


def _row(name, x, last):
    """A table row of scenes (b), (c): ``last(x)``, the scene's own column, at the end."""
    if len(x["t"]) < 2:
        return [name, f"diverged in the first part (t <= {x['diverged']:.3f} s)", "-", "-",
                "-", "-"]
    cut = "" if x["diverged"] is None else f" (diverged at t = {x['diverged']:.3f} s)"
    return [name + cut, f"{x['step'] * 1e3:.3f}", f"{x['contact'] * 1e3:.3f}", f"{x['n']:.2f}",
            f"{x['depth'] * 1e3:.3f}", last(x)]


def _speedup(f, a):
    """``mean step x, contact time x`` of adaptive over full (over the parts each ran)."""
    if len(f["t"]) < 2 or len(a["t"]) < 2:
        return "no ratio (a run diverged at once)"
    cut = "" if f["diverged"] is None and a["diverged"] is None else (
        ", each over the parts it ran")
    return (f"mean step {f['step'] / a['step']:.2f}x, contact time "
            f"{f['contact'] / a['contact']:.2f}x{cut}")


def _scenes_bc(emit, out, quick):
    """Scenes (b) and (c) of the module docstring, into the report (``emit``) and ``out``."""
    from ..viewer.animation import to_gif

    n, steps, na = (40, 600, 10) if quick else (295, 3000, 60)
    m, r = thread_run(n, steps, na)
    walls = [x for x in m.collision._rows if x["body"] < 0]
    last = max(w["pos"][0] for w in walls)
    emit(f"## (b) thread-{m.nv} through 5 walls, {steps} steps (GLM Fig. 5)")
    emit("")
    emit(markdown_table(
        ["run", "mean step [ms]", "contact time [ms/step]", "contacts/step", "max depth [mm]",
         "head x at the end [m]"],
        [_row("full (ABA)", r["full"], lambda x: f"{x['q'][-1, 0]:.3f}"),
         _row(f"adaptive N_A = {na}", r["adaptive"], lambda x: f"{x['q'][-1, 0]:.3f}"),
         _row(f"adaptive N_A = {na}, energy_bound=True", r["bounded"],
              lambda x: f"{x['q'][-1, 0]:.3f}")]))
    emit("")
    emit(f"Thread of {n} links ({m.nv} DOF), 2 cm capsules of radius 4 mm, no gravity; holes "
         f"3 cm square, their centres 12 mm off the axis in turn; the last wall at x = "
         f"{last:.2f} m; the anchor moves at {art.models.THREAD_SPEED} m/s. Speed-up of "
         f"adaptive over full: {_speedup(r['full'], r['adaptive'])}; with the energy bound: "
         f"{_speedup(r['full'], r['bounded'])} (GLM: 5x overall at N_A = 60).")
    emit("")

    n, steps, na = (40, 600, 10) if quick else (SNAKE_N, 2500, 70)
    samples_c = 50
    m, r = snake_run(n, steps, na, samples_c)
    emit(f"## (c) snake-{n - 1} on a bridge, {steps} steps (GLM Fig. 6)")
    emit("")
    def pressing(x):
        half = x["frac"][len(x["frac"]) // 2:]
        return f"{half.mean() * 100:.0f} % (last {x['frac'][-1] * 100:.0f} %)"

    emit(markdown_table(
        ["run", "mean step [ms]", "contact time [ms/step]", "contacts/step", "max depth [mm]",
         "links pressing on the beam (2nd half, mean of samples)"],
        [_row("full (ABA)", r["full"], pressing),
         _row(f"adaptive N_A = {na}", r["adaptive"], pressing),
         _row(f"adaptive N_A = {na}, energy_bound=True", r["bounded"], pressing)]))
    emit("")
    emit(f"Snake: free base and {n - 1} hinges ({m.nv} DOF), 5 cm capsules of radius 1 cm, "
         f"around a 6 cm box beam with edges rounded to 1.5 cm; PD gait (kp 5 N m/rad) "
         f"tightening from amplitude 1.6 to 2.0 rad in 1 s at a constant pitch, rolling at "
         f"2 rad/s. Speed-up of adaptive over full: {_speedup(r['full'], r['adaptive'])}; "
         f"with the energy bound: {_speedup(r['full'], r['bounded'])} (GLM: 8x at N_A = 70).")
    emit("")
    f = r["full"]
    if not quick and len(f["t"]) > 2:
        name = "contact-snake.gif"
        to_gif(m, SimpleNamespace(t=f["t"], q=f["q"]), out / name, speed=1.0, fps=25.0,
               color=f["touch"], bool_labels=("free", "pressing on the beam"),
               title=f"snake-{n - 1} on a bridge (full model, a 0.6 m stretch)",
               max_frames=60, dpi=80, size=(7.0, 4.5),
               bounds=((-0.3, -0.12, 0.38), (0.3, 0.12, 0.62)))
        emit(f"![snake on a bridge]({name})")
        emit("")


SNAKE_N = 501
"""Links of the measured scene (c): a free base and 500 hinges, GLM's snake."""


def _pile(emit, out, quick):
    """Run the pile: :func:`articulated.models.capsule_chain` of 300 links of 2 cm
    (radius 2 mm, 20 g) standing on its tip 5 cm above the plane, joints bent at random by
    up to 0.05 rad, 3 s: the full model with the energy bound and without it (the default),
    adaptive ``N_A = 60`` without and with it, and MuJoCo's ``mj_step``: whether it ran or diverged, time per
    step, depth, the total energy against its start, a figure and (not ``quick``) an
    animation of the full model."""
    from ..viewer.animation import to_gif

    n, steps, na = (60, 1000, 20) if quick else (300, 3000, 60)
    m, q0 = art.models.capsule_chain(n, link_length=0.02, radius=0.002, mass=0.02,
                                     upright=True, bend=0.05, height=0.05,
                                     return_configuration=True)
    E0 = sum(art.energy(m, q0, np.zeros(m.nv)))
    runs = (("full (ABA), energy_bound=True", dict(contact_options=dict(energy_bound=True))),
            ("full (ABA), default (no energy bound)", {}),
            (f"adaptive N_A = {na}", dict(method="adaptive", max_active=na, update_every=10)),
            (f"adaptive N_A = {na}, energy_bound=True",
             dict(method="adaptive", max_active=na, update_every=10,
                  contact_options=dict(energy_bound=True))))
    rows, curves, first = [], [], None
    for name, kw in runs:
        t0 = time.perf_counter()
        try:
            tr, end = art.Simulator(m, H, contacts=m.collision, q0=q0, **kw).run(steps), None
        except art.SimulationDiverged as e:
            tr, end = e.trajectory, float(e.trajectory.t[-1])
        wall = time.perf_counter() - t0
        first = tr if first is None else first
        c = tr.contacts
        E = np.array([sum(art.energy(m, q, qd)) for q, qd in zip(tr.q, tr.qd)])
        curves.append((name, tr.t, E))
        rows.append([name, f"ran {steps * H:g} s" if end is None else f"diverged at t = {end:.3f} s",
                     f"{wall / len(c) * 1e3:.2f}", f"{c['n'][-1]}",
                     f"{c['max_depth'].max() * 1e3:.3f}", f"{max(E.max() - E0, 0.0):.3g}",
                     f"{E[-1]:.3f}", f"{art.energy(m, tr.q[-1], tr.qd[-1])[0]:.2e}",
                     f"{c['energy_removed'].sum():.1f}"])
    try:
        mj = _pile_mujoco(m, q0, steps)
        rows.append(["MuJoCo `mj_step` (default solver)",
                     f"ran {steps * H:g} s" if mj["end"] is None else
                     f"diverged (BADQACC) at t = {mj['end']:.3f} s",
                     f"{mj['t'].mean() * 1e3:.2f}", f"{mj['ncon']}",
                     f"{mj['depth'].max() * 1e3:.3f}", "-", "-", "-", "-"])
    except ImportError:
        pass
    emit(f"## The pile: capsule chain-{n} (2 cm links) dropped on its tip, {steps} steps")
    emit("")
    emit(f"Total energy at the start: {E0:.4f} J.")
    emit("")
    emit(markdown_table(["run", "outcome", "mean step [ms]", "contacts at the end",
                         "max depth [mm]", "largest rise above the start [J]", "energy at the end [J]",
                         "kinetic energy at the end [J]", "taken out by the bound [J]"], rows))
    emit("")
    fig, ax = new_figure((7, 4))
    for (name, t, E), ls in zip(curves, ("-", "--", ":", "-.")):
        ax.plot(t, E, ls, label=name)
    ax.axhline(E0, color="0.6", lw=0.8, label="start")
    ax.set(xlabel="t [s]", ylabel="total energy T + V [J]", yscale="log",
           title=f"the pile: capsule chain-{n} dropped on its tip")
    ax.legend()
    save_figure(fig, out / "contact-pile-energy.png")
    emit("![the pile's energy](contact-pile-energy.png)")
    emit("")
    if not quick:
        to_gif(m, first, out / "contact-pile.gif", fps=15, speed=0.5, max_frames=80, dpi=70,
               elev=25, title=f"capsule chain-{n} dropped on its tip (full model)")
        emit("![the pile](contact-pile.gif)")
        emit("")


def rope_run(n, steps, **kw):
    """The rope (:func:`articulated.models.hanging_rope` of ``n`` links) for ``steps``
    steps with the simulator options ``kw``, in parts of 100 steps: a dict with ``wall``
    (k,) [s] the wall time per step of each part, ``c`` the contact statistics of the
    steps run, ``diverged`` (None, or the time [s] of the failing part), ``E`` (k + 1,)
    the total energy [J] after each part (the start first), ``steps`` the steps run."""
    m, q0 = art.models.hanging_rope(n, return_configuration=True)
    sim = art.Simulator(m, H, contacts=m.collision, q0=q0, **kw)
    part = min(100, steps)
    E = [sum(art.energy(m, q0, np.zeros(m.nv)))]
    trs, walls, diverged = run_parts(sim, part, steps // part,
                                     lambda s: E.append(sum(art.energy(m, s.q, s.qd))))
    c = {k: np.concatenate([tr.contacts[k] for tr in trs]) for k in trs[0].contacts.dtype.names}
    return dict(wall=np.concatenate([np.full(part, w / part) for w in walls]), c=c,
                diverged=diverged, E=np.array(E),
                steps=len(c["n"]))


def _rope(emit, out, quick):
    """The rope of the module docstring: the full model and adaptive ``N_A = 100``, 3 s
    (``quick``: 200 links, 0.5 s)."""
    n, steps = (200, 500) if quick else (1000, 3000)
    runs = (("full (ABA)", {}),
            ("adaptive N_A = 100", dict(method="adaptive", max_active=100, update_every=10)))
    rows = []
    for name, kw in runs:
        r = rope_run(n, steps, **kw)
        c, w = r["c"], r["wall"]
        rows.append([name, f"ran {steps * H:g} s" if r["diverged"] is None else
                     f"diverged at t = {r['diverged']:.3f} s",
                     f"{w.mean() * 1e3:.2f}", f"{np.median(w) * 1e3:.2f}",
                     f"{(c['detect_time'].mean()) * 1e3:.2f}",
                     f"{(c['response_time'].mean()) * 1e3:.2f}",
                     f"{c['max_depth'].max() * 1e3:.3f}", f"{c['n'].mean():.0f} / {c['n'].max()}",
                     f"{np.median(c['sweeps']):.0f} / {c['sweeps'].max()}",
                     f"{r['E'][0]:.2f} / {r['E'][-1]:.2f} / {r['E'].max():.2f}"])
    emit(f"## The rope: {n} capsules on spherical joints over a cylinder, {steps} steps")
    emit("")
    emit(markdown_table(["run", "outcome", "mean step [ms]", "median step [ms]",
                         "detection [ms/step]", "response [ms/step]", "max depth [mm]",
                         "contacts mean / max", "sweeps median / max",
                         "energy start / end / max [J]"], rows))
    emit("")


def _pile_mujoco(model, q0, steps):
    """``mj_step`` on the pile (:func:`articulated.interop.to_mujoco`) from ``q0`` at rest
    until ``steps`` or its first BADQACC warning (MuJoCo then resets the state): per-step
    times [s], largest depth per step [m], contacts at the end, the time it diverged [s]
    (None if it did not)."""
    import mujoco

    from ..interop import to_mujoco

    mj, conv = to_mujoco(model, model.collision)
    mj.opt.timestep = H
    d = mujoco.MjData(mj)
    d.qpos[:] = conv.qpos(q0)
    t, depth, end = [], [], None
    bad = int(mujoco.mjtWarning.mjWARN_BADQACC)
    for s in range(steps):
        t0 = time.perf_counter()
        mujoco.mj_step(mj, d)
        t.append(time.perf_counter() - t0)
        if d.warning[bad].number:
            end = s * H
            break
        depth.append(max(0.0, -float(d.contact.dist[:d.ncon].min())) if d.ncon else 0.0)
    return dict(t=np.array(t), depth=np.array(depth or [0.0]), ncon=int(d.ncon), end=end)


def warm_up(pipelines=("full", "adaptive")):
    """Compile (or load) every kernel of the contact ``pipelines`` (the full model's,
    adaptive dynamics') on a small scene with contacts, so that no timed run pays for it:
    a 3-link pendulum with capsules falling onto a plane and a static cylinder, with
    compiled forces and with a force that is a Python function (scene (c)'s gait, through
    the loops' hook), with and without the energy bound."""
    m, geom, q0 = pendulum_cylinders(3, 0)
    geom.add_static(art.Plane(normal=(0, 0, 1), pos=(0, 0, -0.25)), group=2, mask=1)
    geom.add_static(art.Cylinder(radius=0.05, length=0.6, pos=(0.15, 0, -0.2),
                                 R=np.array([[1.0, 0, 0], [0, 0, -1], [0, 1, 0]])),
                    group=2, mask=1)
    zero = np.zeros(m.nv)
    python_force = [art.JointTorque(lambda t, q, qd: zero)]
    methods = dict(full=dict(), adaptive=dict(method="adaptive", max_active=2, update_every=10))
    for kw in (methods[p] for p in pipelines):
        for forces, bound in (((), False), (python_force, False), (python_force, True)):
            tr = art.Simulator(m, H, contacts=geom, q0=q0, forces=forces,
                               contact_options=dict(energy_bound=bound), **kw).run(300)
            assert tr.contacts["n"].sum() > 0


def run_ours(model, geom, q0, steps, **kw):
    """One run of ``steps`` steps (kernels compiled by :func:`warm_up`); returns a dict of
    mean step [s], contact time per step [s], contacts per step, largest depth [m], the
    trajectory and the wall time of every step [s] (adaptive: measured; full model: its
    contact time plus the mean of the rest of a step)."""
    sim = art.Simulator(model, H, contacts=geom, q0=q0, **kw)
    t0 = time.perf_counter()
    tr = sim.run(steps)
    wall = time.perf_counter() - t0
    c = tr.contacts
    ct = c["detect_time"] + c["response_time"]
    per = getattr(tr, "wall", None)
    if per is None:  # the full model records no per-step wall: contact time + the mean rest
        per = ct + (wall - ct.sum()) / steps
    return dict(step=wall / steps, contact=float(ct.mean()), n=float(c["n"].mean()),
                depth=float(c["max_depth"].max()), tr=tr, wall=per)


def run_mujoco(model, geom, q0, steps):
    """``mj_step`` of the MuJoCo model with geoms (:func:`articulated.interop.to_mujoco`)
    from ``q0`` at rest; returns per-step times [s], the largest penetration per step [m],
    the base height per step [m] and the kinetic energy per step [J]."""
    import mujoco

    from ..interop import to_mujoco

    mj, conv = to_mujoco(model, geom)
    mj.opt.timestep = H
    d = mujoco.MjData(mj)
    d.qpos[:] = conv.qpos(q0)
    t = np.zeros(steps)
    depth = np.zeros(steps)
    z = np.zeros(steps)
    ke = np.zeros(steps)
    for s in range(steps):
        t0 = time.perf_counter()
        mujoco.mj_step(mj, d)
        t[s] = time.perf_counter() - t0
        depth[s] = max(0.0, -float(d.contact.dist[:d.ncon].min())) if d.ncon else 0.0
        z[s] = d.qpos[2]
        mujoco.mj_energyVel(mj, d)
        ke[s] = d.energy[1]
    return dict(t=t, depth=depth, z=z, ke=ke, ncon=int(d.ncon))


def _depth_height_figure(T, series, height_label, title, path):
    """Two panels against time ``T`` [s]: largest depth [mm] and a height [m], one line per
    ``(label, depth [m], height [m], style)`` of ``series``; saved to ``path``."""
    fig, ax = new_figure((8, 4), 1, 2)
    for label, depth, z, ls in series:
        ax[0].plot(T, depth * 1e3, ls, label=label)
        ax[1].plot(T, z, ls, label=label)
    ax[0].set(xlabel="t [s]", ylabel="largest depth [mm]", title="penetration")
    ax[1].set(xlabel="t [s]", ylabel=height_label, title=title)
    for a in ax:
        a.legend()
    save_figure(fig, path)


def response_per_contact(n, na, steps):
    """Scene (d) (GLM Fig. 7): ``capsule_chain(n)`` lying on the plane at rest (both ends
    of every capsule touching), adaptive dynamics with ``N_A = na`` for ``steps`` steps;
    returns the median response time per contact [s] (rows, sweeps, projection: the
    impulses' part of a step, detection excluded) and the median contacts per step."""
    m, geom, q0 = capsule_chain(n)
    q0[2] = 0.01
    r = run_ours(m, geom, q0, steps, method="adaptive", max_active=na, update_every=10)
    c = r["tr"].contacts
    k = slice(steps // 3, steps)
    return (float(np.median(c["response_time"][k] / np.maximum(c["n"][k], 1))),
            float(np.median(c["n"][k])))


SOLO12_KP, SOLO12_KD = 6.0, 0.1
"""PD gains of scene (e) [N m/rad, N m s/rad]."""

SOLO12_POSE = {"FL_HAA": 0.0, "FL_HFE": 0.8, "FL_KFE": -1.6, "HL_HAA": 0.0, "HL_HFE": -0.8,
               "HL_KFE": 1.6, "FR_HAA": 0.0, "FR_HFE": 0.8, "FR_KFE": -1.6, "HR_HAA": 0.0,
               "HR_HFE": -0.8, "HR_KFE": 1.6}
"""solo12's "straight_standing" joint angles [rad] (example-robot-data's solo.srdf)."""


def solo12_scene(robots_dir, z0=0.30, kp=SOLO12_KP, kd=SOLO12_KD):
    """Scene (e): example-robot-data's solo12 from its URDF with its own ``<collision>``
    meshes (convex hulls through coal), free base, mu 0.8, only robot-floor contacts
    (``set_filter``: its hulls overlap at rest), the base ``z0`` [m] above a plane in the
    SRDF's straight standing pose, held there by a :class:`~articulated.PDController` on
    its 12 joints (``kp`` [N m/rad], ``kd`` [N m s/rad]). Returns ``(model, geom, q0,
    pd)``."""
    m = art.load_urdf(robots_dir / "solo_description/robots/solo12.urdf", floating_base=True,
                      collision=True, mu=0.8)
    geom = m.collision
    geom.set_filter(group=1, mask=2)
    geom.add_static(art.Plane(normal=(0, 0, 1)), mu=0.8, group=2, mask=1)
    q0 = m.neutral()
    q0[2] = z0
    names = list(SOLO12_POSE)
    ref = np.array(list(SOLO12_POSE.values()))
    q0[m.jnt_qadr[[m.joint_id(n) for n in names]]] = ref
    return m, geom, q0, art.PDController(kp=kp, kd=kd, q_ref=ref, joints=names)


SOLO12_NOSLIP = 20
"""MuJoCo's ``noslip_iterations`` in the second MuJoCo run of scene (e)."""


def run_solo12(robots_dir, steps):
    """Scene (e), ours (full model, ABA) and MuJoCo's ``mj_step`` on the same model
    (:func:`articulated.interop.to_mujoco`: the same hulls, inertias and filter) with the
    same PD torques (``qfrc_applied``), twice: MuJoCo's defaults, and with
    ``noslip_iterations = SOLO12_NOSLIP`` (MuJoCo's post-processing that removes the slip
    its soft friction allows: with the defaults the feet creep outward under the legs'
    load and the base sinks). Returns a dict with per-step times [s], base heights [m] and
    largest depths [m] of each (``ours_*``, ``mj_*``, ``mjns_*``), our sweeps per step and
    the contacts at the end."""
    import mujoco

    from ..interop import to_mujoco

    m, geom, q0, pd = solo12_scene(robots_dir)
    r = run_ours(m, geom, q0, steps, forces=[pd])
    c = r["tr"].contacts
    res = dict(ours_t=r["wall"], ours_z=r["tr"].q[1:, 2], ours_depth=c["max_depth"],
               ours_n=c["n"], ours_sweeps=c["sweeps"])
    js = [m.joint_id(n) for n in SOLO12_POSE]
    iq, iv = m.jnt_qadr[js], m.jnt_vadr[js]
    ref = np.array(list(SOLO12_POSE.values()))
    for key, noslip in (("mj", 0), ("mjns", SOLO12_NOSLIP)):
        mj, conv = to_mujoco(m, geom)
        mj.opt.timestep = H
        mj.opt.noslip_iterations = noslip
        d = mujoco.MjData(mj)
        d.qpos[:] = conv.qpos(q0)
        t, z, depth = np.zeros(steps), np.zeros(steps), np.zeros(steps)
        for k in range(steps):
            t0 = time.perf_counter()
            d.qfrc_applied[:] = 0.0
            d.qfrc_applied[iv] = pd.kp * (ref - d.qpos[iq]) - pd.kd * d.qvel[iv]
            mujoco.mj_step(mj, d)
            t[k] = time.perf_counter() - t0
            z[k] = d.qpos[2]
            depth[k] = max(0.0, -float(d.contact.dist[:d.ncon].min())) if d.ncon else 0.0
        res.update({key + "_t": t, key + "_z": z, key + "_depth": depth,
                    key + "_n": int(d.ncon)})
    return res


def _solo12(emit, out, quick):
    """Scene (e): solo12 standing on its meshes against MuJoCo (:func:`run_solo12`): a
    table, the height and depth picture ``contact-solo12.png``."""
    robots = robots_dir()
    try:
        import mujoco  # noqa: F401 (the test extra)
        have_mujoco = True
    except ImportError:
        have_mujoco = False
    emit("## (e) solo12 from its URDF, collision meshes, PD standing, against MuJoCo")
    emit("")
    if robots is None or not have_mujoco:
        emit("skipped: needs example-robot-data (the robots extra) and MuJoCo")
    else:
        steps5 = 1000 if quick else 5000
        s5 = run_solo12(robots, steps5)
        land = slice(int(0.1 * steps5), steps5)
        rest5 = slice(int(0.75 * steps5), steps5)
        runs = [("articulated full (ABA)", "ours"), ("MuJoCo mj_step", "mj"),
                 (f"MuJoCo, noslip_iterations = {SOLO12_NOSLIP}", "mjns")]
        emit(markdown_table(
            ["run", "step [ms], median", "contacts at the end", "max depth [mm]",
             "max depth after 0.1 of the run [mm]", "base z at 1 s [m]",
             "base z at the end [m]"],
            [[name, f"{np.median(s5[k + '_t'][rest5]) * 1e3:.3f}",
              f"{np.ravel(s5[k + '_n'])[-1]}", f"{s5[k + '_depth'].max() * 1e3:.3f}",
              f"{s5[k + '_depth'][land].max() * 1e3:.3f}",
              f"{s5[k + '_z'][min(1000, steps5) - 1]:.5f}", f"{s5[k + '_z'][-1]:.5f}"]
             for name, k in runs]))
        emit("")
        one = min(1000, steps5) - 1

        def gap(k, i):
            return abs(s5["ours_z"][i] - s5[k + "_z"][i]) * 1e3

        emit(f"{steps5} steps from the base at 0.30 m (the standing pose's feet about 6 cm up), "
             f"kp = {SOLO12_KP} N m/rad, kd = {SOLO12_KD} N m s/rad. Base height difference "
             f"(target 5 mm) to MuJoCo at 1 s {gap('mj', one):.2f} mm, at the end "
             f"{gap('mj', -1):.2f} mm; to MuJoCo with noslip {gap('mjns', one):.2f} and "
             f"{gap('mjns', -1):.2f} mm. Our base moved "
             f"{abs(s5['ours_z'][-1] - s5['ours_z'][one]) * 1e3:.3f} mm from 1 s to the end; "
             f"sweeps per step after 1 s: median "
             f"{np.median(s5['ours_sweeps'][one:]):.0f}, largest "
             f"{s5['ours_sweeps'][one:].max()}. MuJoCo's step / ours: "
             f"{np.median(s5['mj_t'][rest5]) / np.median(s5['ours_t'][rest5]):.3f}x "
             f"(with noslip {np.median(s5['mjns_t'][rest5]) / np.median(s5['ours_t'][rest5]):.3f}x).")
        emit("")
        name = "contact-solo12" + ("-quick" if quick else "") + ".png"
        _depth_height_figure(H * np.arange(1, steps5 + 1),
                             [("articulated", s5["ours_depth"], s5["ours_z"], "-"),
                              ("MuJoCo", s5["mj_depth"], s5["mj_z"], "--"),
                              (f"MuJoCo, noslip {SOLO12_NOSLIP}", s5["mjns_depth"],
                               s5["mjns_z"], ":")],
                             "base height [m]", "solo12 drop and stand", out / name)
        emit(f"![solo12]({name})")
    emit("")


def add_arguments(parser):
    """Declare the options of ``articulated bench contact [--quick] [--out DIR]``."""
    parser.description = "contact benchmarks (Gayle, Lin & Manocha 2006)"
    parser.add_argument("--quick", action="store_true", help="small sizes only (smoke test)")
    parser.add_argument("--only", default=None, choices=("b,c", "pile", "e", "rope"),
                        help="run only the scenes (b) thread and (c) snake (report "
                             "contact-results-bc.md), only the pile and its animation "
                             "(contact-results-pile.md, contact-pile.gif), or only (e) "
                             "solo12 (contact-results-e.md, contact-solo12.png), or only "
                             "the rope (contact-results-rope.md)")
    parser.add_argument("--out", default="docs", metavar="DIR",
                        help="folder for the PNG and the Markdown results (default docs)")


def main(argv=None) -> int:
    """``python -m articulated.bench.contact [--quick] [--out DIR]``."""
    return bench_main("contact", add_arguments, run, argv)


def run(args) -> int:
    """Run the scenes of the module docstring; print the Markdown, write it to
    ``OUT/contact-results.md`` (``-quick.md`` with ``--quick``) and the PNG; returns 0."""
    warnings.filterwarnings("ignore", module="numba")
    quick = args.quick
    report = MarkdownReport("Contact benchmark", args.out, "contact", quick, f"; dt = {H} s")
    out, emit = report.out, report.emit

    warm_up()
    if args.only == "pile":
        _pile(emit, out, quick)
        path = report.write("contact-results-pile" + ("-quick" if quick else "") + ".md")
        print(f"wrote {path}")
        return 0
    if args.only == "rope":
        _rope(emit, out, quick)
        path = report.write("contact-results-rope" + ("-quick" if quick else "") + ".md")
        print(f"wrote {path}")
        return 0
    if args.only == "e":
        _solo12(emit, out, quick)
        path = report.write("contact-results-e" + ("-quick" if quick else "") + ".md")
        print(f"wrote {path}")
        return 0
    if args.only == "b,c":
        _scenes_bc(emit, out, quick)
        path = report.write("contact-results-bc" + ("-quick" if quick else "") + ".md")
        print(f"wrote {path}")
        return 0
    # (a) pendulum through cylinders: full vs adaptive
    n, k, NA, steps = (50, 8, 10, 300) if quick else (200, 20, 40, 1500)
    m, geom, q0 = pendulum_cylinders(n, k)
    full = run_ours(m, geom, q0, steps)
    ad = run_ours(m, geom, q0, steps, method="adaptive", max_active=NA, update_every=10)
    emit(f"## (a) pendulum-{n} through {k} cylinders, {steps} steps (GLM Fig. 4)")
    emit("")
    rows = [[name, f"{r['step'] * 1e3:.3f}", f"{r['contact'] * 1e3:.3f}", f"{r['n']:.2f}",
             f"{r['depth'] * 1e3:.3f}"] for name, r in (("full (ABA)", full),
                                                       (f"adaptive N_A = {NA}", ad))]
    emit(markdown_table(["run", "mean step [ms]", "contact time [ms/step]", "contacts/step",
                         "max depth [mm]"], rows))
    emit("")
    emit(f"Speed-up of adaptive over full: mean step {full['step'] / ad['step']:.2f}x, "
         f"contact time {full['contact'] / ad['contact']:.2f}x (GLM: 5x at N_A = 40).")
    emit("")

    # MuJoCo: capsule chain dropped flat
    n2, steps2 = (60, 600) if quick else (300, 2000)
    m2, geom2, q2 = capsule_chain(n2)
    emit(f"## Capsule chain-{n2} ({m2.nv} DOF) dropped flat from 0.3 m, {steps2} steps: "
         f"against MuJoCo")
    emit("")
    ours = run_ours(m2, geom2, q2, steps2)
    ad2 = run_ours(m2, geom2, q2, steps2, method="adaptive", max_active=min(60, n2),
                   update_every=10)
    try:
        import mujoco  # noqa: F401 (the test extra)
        mj = run_mujoco(m2, geom2, q2, steps2)
    except ImportError:
        mj = None
    rest = slice(int(0.75 * steps2), steps2)  # the last quarter: lying on the plane
    fly = slice(0, int(0.1 * steps2))
    T = H * np.arange(1, steps2 + 1)

    def per_step(r):
        c = r["tr"].contacts
        return c["detect_time"] + c["response_time"]

    def ours_row(name, r):
        c = r["tr"].contacts
        w = r["wall"]
        return [name, f"{np.median(w[fly]) * 1e3:.3f}", f"{np.median(w[rest]) * 1e3:.2f}",
                f"{np.median(per_step(r)[rest]) * 1e3:.2f}", f"{r['step'] * 1e3:.2f}",
                f"{c['n'][rest].mean():.0f}", f"{np.median(c['sweeps'][rest]):.0f}",
                f"{c['max_depth'].max() * 1e3:.3f}", f"{float(r['tr'].q[-1, 2]):.4f}"]

    rows = [ours_row("articulated full (ABA)", ours),
            ours_row(f"articulated adaptive N_A = {min(60, n2)}", ad2)]
    if mj is not None:
        rows.append(["MuJoCo mj_step", f"{np.median(mj['t'][fly]) * 1e3:.3f}",
                     f"{np.median(mj['t'][rest]) * 1e3:.2f}", "-", f"{mj['t'].mean() * 1e3:.2f}",
                     f"{mj['ncon']}", "-", f"{mj['depth'].max() * 1e3:.3f}", f"{mj['z'][-1]:.4f}"])
    emit(markdown_table(["run", "in flight [ms/step]", "at rest [ms/step]",
                         "contact time at rest [ms/step]", "mean step [ms]", "contacts at rest",
                         "sweeps at rest", "max depth [mm]", "base z at the end [m]"], rows))
    emit("")
    emit("Whole steps, median (in flight: the first tenth of the run; at rest: the last "
         "quarter; the full model's: its contact time plus the mean rest of its steps); "
         "contact time: detection and response.")
    if mj is not None:
        rest_mj = np.median(mj["t"][rest])
        emit(f"MuJoCo's step / ours at rest: full {rest_mj / np.median(ours['wall'][rest]):.2f}x, "
             f"adaptive {rest_mj / np.median(ad2['wall'][rest]):.2f}x.")
    emit("")
    series = [(name, r["tr"].contacts["max_depth"], r["tr"].q[1:, 2], "-")
              for name, r in (("articulated full", ours), (f"adaptive N_A = {min(60, n2)}", ad2))]
    if mj is not None:
        series.append(("MuJoCo", mj["depth"], mj["z"], "--"))
    name = "contact-chain" + ("-quick" if quick else "") + ".png"
    _depth_height_figure(T, series, "height of capsule 0 [m]", "fall and rest", out / name)
    emit(f"![chain drop]({name})")
    emit("")
    if not quick:   # the adaptive run as an animation
        from ..viewer.animation import to_gif

        to_gif(m2, ad2["tr"], out / "contact-chain-drop.gif", fps=15, speed=0.5,
               max_frames=60, dpi=70, elev=25,
               title=f"capsule chain-{n2} dropped flat (adaptive N_A = {min(60, n2)})")
        emit("![chain drop, animation](contact-chain-drop.gif)")
        emit("")
    # (d) response time per contact vs N_A and vs n (GLM Fig. 7)
    n3, nas, ns, na3, steps3 = ((60, (5, 10, 20, 40, 60), (60, 120, 240), 20, 30) if quick else
                                (300, (10, 20, 40, 80, 160, 300), (300, 1000, 3000), 60, 60))
    by_na = [response_per_contact(n3, na, steps3) for na in nas]
    by_n = [response_per_contact(n, na3, steps3) for n in ns]
    t_na = np.array([t for t, _ in by_na])
    fit = np.polyfit(nas, t_na, 1)
    r2 = 1.0 - ((t_na - np.polyval(fit, nas)) ** 2).sum() / ((t_na - t_na.mean()) ** 2).sum()
    emit(f"## (d) Response time per contact (GLM Fig. 7): capsule chain lying on the plane, "
         f"{steps3} steps")
    emit("")
    emit(markdown_table(["chain", "N_A", "contacts", "response per contact [us]"],
                        [[f"{n3}", f"{na}", f"{nc:.0f}", f"{t * 1e6:.2f}"]
                         for na, (t, nc) in zip(nas, by_na)]
                        + [[f"{n}", f"{na3}", f"{nc:.0f}", f"{t * 1e6:.2f}"]
                           for n, (t, nc) in zip(ns, by_n)]))
    emit("")
    emit(f"Linear fit in N_A: {fit[0] * 1e9:.2f} ns per active joint + {fit[1] * 1e6:.2f} us, "
         f"R^2 = {r2:.3f} (target >= 0.95). From n = {ns[0]} to {ns[-1]} at N_A = {na3}: "
         f"x{by_n[-1][0] / by_n[0][0]:.2f} (target < 1.5x).")
    emit("")
    fig, ax = new_figure((8, 3.8), 1, 2)
    ax[0].plot(nas, t_na * 1e6, "o", label="measured")
    ax[0].plot(nas, np.polyval(fit, nas) * 1e6, "-", label=f"linear fit, R^2 = {r2:.3f}")
    ax[0].set(xlabel="active joints N_A", ylabel="response per contact [us]",
              title=f"chain-{n3} at rest")
    ax[1].plot(ns, [t * 1e6 for t, _ in by_n], "o-", label=f"N_A = {na3}")
    ax[1].set(xscale="log", xlabel="links n", ylabel="response per contact [us]",
              title="vs chain length", ylim=(0, None))
    ax[1].set_xticks(ns, [str(n) for n in ns])
    ax[1].minorticks_off()
    for a in ax:
        a.legend()
    name = "contact-fig7" + ("-quick" if quick else "") + ".png"
    save_figure(fig, out / name)
    emit(f"![response per contact]({name})")
    emit("")

    _solo12(emit, out, quick)
    _scenes_bc(emit, out, quick)
    path = report.write("contact-results" + ("-quick" if quick else "") + ".md")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
