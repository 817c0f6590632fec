"""DCA / ABA on pendulum-300 and molecule-50k in one process, and the DCA's passes:
``python docs/scripts/ab_dca.py`` (15 interleaved rounds of ABA and ``DCA.forward_dynamics``
calls, medians; each pass of the DCA run in one compiled loop, minimum of 15). For an A/B,
run it alternately with each commit's ``src`` first on ``PYTHONPATH``."""
import timeit
import numpy as np
from articulated import aba, models
from articulated.algorithms.bundles import DCAInputs
from articulated.algorithms.dca import dca_pass_loop
from articulated.algorithms.dca_solver import DCA
for name, make in (("pendulum-300", lambda: models.pendulum(300)),
                   ("molecule-50k", lambda: models.molecule(50_000))):
    m = make()
    rng = np.random.default_rng(0)
    q, qd, tau = m.random_configuration(rng), rng.normal(size=m.nv), rng.normal(size=m.nv)
    s = DCA(m, "balanced")
    ref = aba(m, q, qd, tau)
    err = np.abs(s.forward_dynamics(q, qd, tau) - ref).max() / max(1, np.abs(ref).max())
    nb, reps = m.nb, max(1, 20_000 // m.nb)
    ta, td = [], []
    for _ in range(15):
        ta.append(timeit.timeit(lambda: aba(m, q, qd, tau), number=reps) / reps / nb * 1e9)
        td.append(timeit.timeit(lambda: s.forward_dynamics(q, qd, tau), number=reps)
                  / reps / nb * 1e9)
    args = (s.kernel_model, DCAInputs(q, qd, tau, s.f_none, False), s.kernel_scratch,
            s.kernel_data)
    ph = []
    for k in range(3):
        dca_pass_loop(k, 1, *args)
        ph.append(min(timeit.repeat(lambda: dca_pass_loop(k, reps, *args), number=1,
                                    repeat=15)) / reps / nb * 1e9)
    print(f"{name}: err {err:.1e}, ABA {np.median(ta):.0f} ns/DOF, DCA {np.median(td):.0f}, "
          f"DCA/ABA {np.median(td) / np.median(ta):.2f}; passes: kinematics {ph[0]:.0f}, "
          f"main {ph[1]:.0f}, back-substitution {ph[2]:.0f}", flush=True)
