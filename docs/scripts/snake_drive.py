"""Scene (c) under its whole-body gait: how closely adaptive dynamics follows the drive.

    python docs/scripts/snake_drive.py [STEPS] [CASE ...]

Runs snake-500 on the beam (``articulated.bench.contact`` scene (c), its PD gait) for STEPS
steps (default 1300) with the full model and with adaptive dynamics, and prints per case:
the mean step [ms], the gait's tracking error (mean |q_ref - q| over the driven hinges at the end)
[rad], the largest rise of the total energy above its start [J], the fraction of links
pressing on the beam (second half, sampled every 50 steps), the largest energy of the
gait's springs ``1/2 kp sum (q_ref - q)^2`` over the driven hinges [J] (a rigid joint's
error stays stored in its spring), and the head's (body 0) and the centre of mass's largest
distance from the full model's at the same samples [mm].

Cases (default: all): ``full``; ``adaptive-N`` (N_A = N, the scene's gait); ``held-N``
(N_A = N, the gait's reference of a rigid joint held at its angle and, once the joint is
active again, returning to the gait at 4 rad/s at most); ``clipped-N`` (N_A = N, the
gait's error clipped to 0.5 rad); ``head`` and ``head-N`` (the gait on the first 60 hinges
only, viscous joint friction 5e-4 N m s/rad on every hinge; full model and N_A = N).
"""
import sys
import time

import numpy as np

import articulated as art
from articulated.bench.contact import snake_gait

KP, KD, HEAD = 5.0, 0.01, 60


class HeldGait(art.Force):
    """The gait with the reference of a rigid joint held at its angle (no tracking error
    builds up while the hybrid body cannot move the joint); an active joint's reference
    returns to the gait's at ``rate`` [rad/s] at most."""

    def __init__(self, gait, rate):
        self.gait, self.rate, self.ref, self.t, self.sim = gait, rate, None, None, None

    def support(self, model):
        return [], list(range(1, model.nb))

    def apply(self, model, t, q, qd, tau, f_ext, kin=None):
        r, qj = self.gait.q_ref(t), q[7:]
        act = self.sim.solver.active[1:]
        if self.ref is None:
            self.ref, self.t = qj.copy(), t
        step = self.rate * (t - self.t)
        self.t = t
        self.ref[~act] = qj[~act]
        self.ref[act] += np.clip(r[act] - self.ref[act], -step, step)
        tau[6:] += KP * (self.ref - qj) - KD * qd[6:]


class ClippedGait(art.Force):
    """The gait with its error clipped to ``limit`` [rad]."""

    def __init__(self, gait, limit):
        self.gait, self.limit = gait, limit

    def support(self, model):
        return [], list(range(1, model.nb))

    def apply(self, model, t, q, qd, tau, f_ext, kin=None):
        e = np.clip(self.gait.q_ref(t) - q[7:], -self.limit, self.limit)
        tau[6:] += KP * e - KD * qd[6:]


def forces(case, m, gait):
    kind = case.split("-")[0]
    if kind == "held":
        return [HeldGait(gait, 4.0)]
    if kind == "clipped":
        return [ClippedGait(gait, 0.5)]
    if kind == "head":
        b = np.full(m.nv, 5e-4)
        b[:6] = 0.0
        return [art.PDController(kp=KP, kd=KD, q_ref=lambda t: gait.q_ref(t)[:HEAD],
                                 joints=list(range(1, HEAD + 1))), art.JointDamping(b)]
    return [gait]


def run(case, steps):
    m, q0 = art.models.snake_bridge(501, return_configuration=True)
    gait = snake_gait(m)
    f = forces(case, m, gait)
    na = case.split("-")[-1]
    kw = dict(method="adaptive", max_active=int(na), update_every=10) if na.isdigit() else {}
    sim = art.Simulator(m, 1e-3, contacts=m.collision, q0=q0, forces=f, **kw)
    for x in f:
        if isinstance(x, HeldGait):
            x.sim = sim
    E0 = sum(art.energy(m, sim.q, sim.qd))
    mass = m.body_mass
    rec = dict(head=[], com=[], press=[], dE=[], wall=[], spring=[])
    for _ in range(steps // 50):
        t0 = time.perf_counter()
        sim.run(50)
        rec["wall"].append((time.perf_counter() - t0) / 50)
        R, p = art.forward_kinematics(m, sim.q)
        c = p + np.einsum("bij,bj->bi", R, m.body_com)
        rec["com"].append(mass @ c / mass.sum())
        rec["head"].append(p[0])
        T, V = art.energy(m, sim.q, sim.qd)
        rec["dE"].append(T + V - E0)
        e = (gait.q_ref(sim.t) - sim.q[7:])[:HEAD if case.startswith("head") else None]
        rec["spring"].append(0.5 * KP * np.sum(e ** 2))
        on = {b for c in sim.contact_list() if c["impulse"] @ c["normal"] > 0
              for b in c["bodies"] if b is not None}
        rec["press"].append(len(on) / m.nb)
    n = len(rec["wall"])
    err = np.abs(gait.q_ref(sim.t) - sim.q[7:])[:HEAD if case.startswith("head") else None]
    track = err.mean()
    return dict(ms=1e3 * np.mean(rec["wall"]), track=track, dE=max(rec["dE"]),
                spring=max(rec["spring"]),
                press=np.mean(rec["press"][n // 2:]), head=np.array(rec["head"]),
                com=np.array(rec["com"]))


def main():
    args = sys.argv[1:]
    steps = int(args.pop(0)) if args and args[0].isdigit() else 1300
    cases = args or ["full", "adaptive-30", "adaptive-70", "adaptive-150", "adaptive-300",
                     "held-70", "clipped-70", "head", "head-70"]
    res = {c: run(c, steps) for c in cases}
    print(f"snake-500, scene (c), {steps} steps\n")
    print("| case | mean step [ms] | tracking error [rad] | energy rise [J] | gait springs [J] "
          "| links pressing | head from full [mm] | centre of mass from full [mm] |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for c, r in res.items():
        ref = res.get("head" if c.startswith("head") else "full")
        d = ("-", "-") if ref is None or ref is r else tuple(
            f"{1e3 * np.linalg.norm(r[k] - ref[k], axis=1).max():.0f}" for k in ("head", "com"))
        print(f"| {c} | {r['ms']:.2f} | {r['track']:.3f} | {r['dE']:.2f} | {r['spring']:.0f} | "
              f"{100 * r['press']:.0f} % | {d[0]} | {d[1]} |")


if __name__ == "__main__":
    main()
