"""The rope of `articulated bench contact --only rope` (1,000 capsules on spherical joints)
with the full model and the contact options given, by phase: ``python docs/scripts/rope_phases.py
[STEPS] [OPTIONS]`` (OPTIONS a Python dict of simulator keywords, e.g.
``"dict(contact_options=dict(solver='sequential'))"``); time per step, response, contacts,
the share of steps solved matrix-free and the solves that reached ``tol`` (1e-6 m/s)."""
import sys, time, numpy as np
from articulated.bench.contact import rope_run
steps = int(sys.argv[1]) if len(sys.argv) > 1 else 3000
kw = eval(sys.argv[2]) if len(sys.argv) > 2 else {}
t0 = time.time()
r = rope_run(1000, steps, **kw)
c, w = r["c"], r["wall"]
apg = c["solver"] == 1
solved = c["sweeps"] > 0
print(f"kw={kw} steps={r['steps']} diverged={r['diverged']} wall={time.time()-t0:.1f}s")
print(f"mean step {w.mean()*1e3:.2f} ms, median {np.median(w)*1e3:.2f}; detect {c['detect_time'].mean()*1e3:.2f}, response {c['response_time'].mean()*1e3:.2f} ms/step")
print(f"depth max {c['max_depth'].max()*1e3:.3f} mm; contacts mean {c['n'].mean():.0f} max {c['n'].max()}; apgd share {apg.mean():.2f}")
print(f"converged {(c['residual'][solved] <= 1e-6).mean():.3f}; iters median {np.median(c['sweeps'][solved]) if solved.any() else 0} p90 {np.percentile(c['sweeps'][solved],90) if solved.any() else 0} max {c['sweeps'].max()}")
print("E start/end/max", r["E"][0], r["E"][-1], r["E"].max())
# per 500-step phase
for a in range(0, len(w), 500):
    print(f"  steps {a}-{a+500}: {w[a:a+500].mean()*1e3:.2f} ms/step, response {c['response_time'][a:a+500].mean()*1e3:.2f}, contacts {c['n'][a:a+500].mean():.0f}, apgd {apg[a:a+500].mean():.2f}")
