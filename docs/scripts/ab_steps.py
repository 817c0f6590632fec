"""Milliseconds per step of the stepping loops, compiled paths and with a Python force:
``python docs/scripts/ab_steps.py OUT.json`` (each case: a 10-step warm-up, then the
median of three timed ``Simulator.run``). For an A/B, run it alternately with each
commit's ``src`` first on ``PYTHONPATH`` and compare the medians of the runs."""
import sys, time, json, warnings, numpy as np
warnings.filterwarnings("ignore")
import articulated as art
from articulated.bench.contact import pendulum_cylinders, capsule_chain, H
def timed(make, steps):
    make().run(10)                  # compile / warm
    out = []
    for _ in range(3):
        sim = make()
        t0 = time.perf_counter(); sim.run(steps); out.append((time.perf_counter() - t0) / steps * 1e3)
    return float(np.median(out))
res = {}
P = art.models.pendulum(300); q = P.neutral(); q[0] = 1.0
res["tree pendulum-300 rk4 aba"] = timed(lambda: art.Simulator(P, 1e-3, integrator="rk4", q0=q, forces=[art.JointDamping(0.01)]), 1000)
res["tree pendulum-300 sie dca"] = timed(lambda: art.Simulator(P, 1e-3, integrator="semi_implicit_euler", method="dca", q0=q), 500)
res["adaptive pendulum-300 N_A=50"] = timed(lambda: art.Simulator(P, 1e-3, method="adaptive", max_active=50, q0=q, forces=[art.PointForce(299, (0, 0.5, 0))]), 2000)
m, geom, q0 = pendulum_cylinders(200, 20)
res["contact (a) full"] = timed(lambda: art.Simulator(m, H, contacts=geom, q0=q0), 400)
res["contact (a) adaptive N_A=40"] = timed(lambda: art.Simulator(m, H, contacts=geom, q0=q0, method="adaptive", max_active=40), 400)
mc, gc, qc = capsule_chain(60)
res["contact chain-60 full"] = timed(lambda: art.Simulator(mc, H, contacts=gc, q0=qc), 300)
class PyForce:
    def apply(self, model, t, q, qd, tau, f_ext, kin=None):
        pass
res["tree pendulum-300 rk4 aba, a Python force"] = timed(lambda: art.Simulator(P, 1e-3, integrator="rk4", q0=q, forces=[art.JointDamping(0.01), PyForce()]), 300)
res["contact (a) full, a Python force"] = timed(lambda: art.Simulator(m, H, contacts=geom, q0=q0, forces=[PyForce()]), 200)
res["adaptive pendulum-300 N_A=50, a Python force"] = timed(lambda: art.Simulator(P, 1e-3, method="adaptive", max_active=50, q0=q, forces=[art.PointForce(299, (0, 0.5, 0)), PyForce()]), 500)
json.dump(res, open(sys.argv[1], "w"), indent=1)
print(res)
