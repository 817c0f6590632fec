"""``articulated bench soak`` (issue 22, item 5): the energy and memory checks on short runs
(the long runs are the explicit command; numbers in docs/results/reliability.md)."""

import numpy as np

from articulated import models
from articulated.bench.adaptive_runs import adaptive_simulator, initial_state, spread_forces
from articulated.bench.soak import full_model_bound, soak, total_energy


def test_all_active_adaptive_run_stays_in_the_full_model_band():
    """With every joint active the adaptive simulator is the full model (semi-implicit
    Euler, RGL Sec. 7), so its energy at every check equals the full DCA's to round-off and
    the check passes; the same run against half that bound fails; RSS does not grow over 10
    checks."""
    m = models.pendulum(12)
    q0 = initial_state(m)
    forces = lambda: spread_forces(m, 2)  # noqa: E731
    bound = full_model_bound(m, q0, forces(), 2000, chunk=200)
    assert bound["diverged"] is None and 0 < bound["rise"] < 0.1
    sim = adaptive_simulator(m, q0, m.nb, forces())
    res = soak(sim, m, forces(), 2000, 200, bound, emit=lambda s: None)
    assert res["ok"] and res["steps_done"] == 2000 and len(res["rows"]) == 10
    assert abs(res["max_rise"] - bound["rise"]) < 1e-9      # the same trajectory
    assert res["rss_growth_mib"] < 16
    sim = adaptive_simulator(m, q0, m.nb, forces())
    half = dict(bound, rise=bound["rise"] / 2)
    res = soak(sim, m, forces(), 2000, 200, half, emit=lambda s: None)
    assert not res["energy_ok"] and not res["ok"] and res["rss_ok"]
    E, T = total_energy(m, forces(), q0, np.zeros(m.nv))
    assert T == 0.0 and E == bound["E0"]
