"""Error-bounded adaptive quasi-statics (Redon & Lin 2005).

Error-bounded adaptive quasi-statics (Redon & Lin 2005): the DCA engine with every node's
coefficients kept, total-acceleration equations, partial back-substitution under an error
bound or a joint budget, and lazy O(N_U log(N / N_U)) coefficient updates.

Source: Redon & Lin (2005), "An efficient, error-bounded approximation algorithm for
simulating quasi-statics of complex linkages" (RL): Sec. 3.1 (DCA, eqs. 1-7,
:mod:`articulated.algorithms.dca`), Sec. 4 (Definitions 1-3, Lemma 1, eqs. 8-9,
:mod:`articulated.algorithms.metric`; partial back-substitution 4.3,
:mod:`articulated.algorithms.back_substitution`), Sec. 5 (hierarchical frames 5.1,
:mod:`articulated.algorithms.handles`; simplified update 5.2,
:mod:`articulated.algorithms.node_update`). The joint weights ``A_i`` are the acceleration
metric of Redon, Galoppo & Lin (2005), "Adaptive dynamics of articulated bodies" (RGL), Sec.
5.2 (eqs. 7-8); identity weights reproduce RL. The solver is the engine of
:mod:`articulated.algorithms.engine` in quasi-static mode (zero velocities at every
instant).
"""

from __future__ import annotations

from .engine import DCAEngine
from .metric import mark_stale


class AdaptiveQuasiStatics(DCAEngine):
    """Error-bounded adaptive forward quasi-statics (Redon & Lin 2005).

    Runs on a balanced assembly tree, with every node's coefficients kept between calls.

    Usage::

        s = AdaptiveQuasiStatics(model)            # full main pass at q = neutral
        s.set_state(q, tau, f_ext)                 # full update, O(n)
        res = s.solve(eps_max=2**-19, error="relative_joint")     # O(N_E)
        res.qdd, res.joints, res.bound
        s.update(q_new, joints=res.joints, bodies=[...], f_ext=..., tau=...)   # lazy

    An update with ``metric=False`` recomputes the DCA coefficients only and marks the
    nodes' total-acceleration coefficients stale (:func:`~articulated.algorithms.metric.
    mark_stale`): the next solve computes their joints before it may stop (their ``A(C)``
    is unknown), so its certified bound still holds, and ``total_acceleration()`` is
    ``inf`` until an update with the metric (or :meth:`set_state`) has refreshed them.

    Parameters and errors: those of :class:`~articulated.algorithms.engine.DCAEngine`.
    """

    def _update(self, nodes, n, metric=True):
        super()._update(nodes, n, metric)
        if not metric:
            mark_stale(nodes, n, self.tree.node_joint, self.eta)
