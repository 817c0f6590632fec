"""The one place that chooses a simulator: :func:`Simulator`.

``Simulator(model, dt, method=...)`` is a factory function rather than a class, so that the
simulators below it need not know each other (no import loop) and each keeps a plain
``__init__``: it returns a

* :class:`~articulated.simulation.simulator.DynamicsSimulator` for the forward-dynamics
  methods (``"aba"``, ``"aba_modified"``, ``"crba"``, ``"dca"``, ``"srm"``) and a time
  integrator;
* :class:`~articulated.simulation.adaptive.AdaptiveSimulator` for ``"adaptive"``;
* :class:`~articulated.simulation.quasistatic.QuasiStaticSimulator` for ``"quasistatic"``
  and ``"quasistatic-adaptive"``.

Test an instance against those classes (``isinstance(sim, Simulator)`` does not work on a
function).

``Simulator.resume(path, model=None, forces=None)`` finishes a checkpointed run
(:func:`articulated.simulation.checkpoint.resume`, an attribute of the factory so that the
run and its continuation are spelled alike).
"""

from __future__ import annotations

from .adaptive import AdaptiveSimulator
from .checkpoint import resume
from .quasistatic import QUASI_STATIC_METHODS, QuasiStaticSimulator
from .simulator import DynamicsSimulator


def Simulator(model, dt, integrator=None, method: str = "aba", **kwargs):
    """Build the simulator of ``method`` for ``model`` with time step ``dt`` [s].

    Parameters
    ----------
    model : Model
    dt : float > 0 - time step [s]
    integrator : str, optional - the time integrator of a
        :class:`~articulated.simulation.simulator.DynamicsSimulator` (its default when
        None); the adaptive and quasi-static simulators have their own schemes and reject it
    method : str
        ``"aba"`` (default), ``"aba_modified"``, ``"crba"``, ``"dca"``, ``"srm"``: tree
        dynamics by that forward-dynamics algorithm and a time integrator,
        :class:`~articulated.simulation.simulator.DynamicsSimulator` (keywords ``forces``,
        ``q0``, ``qd0``, ``rtol``, ``atol``, ``dtype``, ``srm``, ``contacts``,
        ``contact_options``, ``limits``);
        ``"adaptive"``: adaptive dynamics with hybrid bodies (Redon, Galoppo & Lin 2005),
        :class:`~articulated.simulation.adaptive.AdaptiveSimulator` (keywords
        ``max_active``, ``eps_vel``, ``eps_acc``, ``max_update``, ``update_every``,
        ``weights``, ``velocity_weights``, ``forces``, ``q0``, ``qd0``, ``assembly``,
        ``contacts``, ``limits``, ``contact_options``);
        ``"quasistatic-adaptive"``, ``"quasistatic"``: forward quasi-statics (Redon & Lin
        2005), :class:`~articulated.simulation.quasistatic.QuasiStaticSimulator` (keywords
        ``eps_max``, ``error``, ``max_joints``, ``weights``, ``q0``, ``forces``,
        ``assembly``).

    Returns
    -------
    DynamicsSimulator, AdaptiveSimulator or QuasiStaticSimulator - each has ``step()``,
    ``run(steps, record_every)`` and ``add_force(force)``.

    Raises
    ------
    ValueError, TypeError - as the chosen simulator's constructor (unknown method or
        integrator, bad ``dt``, state or settings, keywords the simulator does not take).

    Example
    -------
    >>> sim = Simulator(model, 1e-3, integrator="rk4")             # DynamicsSimulator
    >>> sim = Simulator(model, 1e-3, method="adaptive", max_active=8)
    """
    if integrator is not None:
        kwargs["integrator"] = integrator
    if method == "adaptive":
        return AdaptiveSimulator(model, dt, **kwargs)
    if method in QUASI_STATIC_METHODS:
        return QuasiStaticSimulator(model, dt, method=method, **kwargs)
    return DynamicsSimulator(model, dt, method=method, **kwargs)


Simulator.resume = resume
