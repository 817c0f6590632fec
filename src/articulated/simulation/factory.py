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

``Simulator.resume(path, model=None, forces=None)`` (:func:`resume`, an attribute of the
factory so that a run and its continuation are spelled alike) rebuilds the simulator of a
checkpoint (:mod:`articulated.simulation.checkpoint`) and finishes its run.
"""

from __future__ import annotations

from .adaptive import AdaptiveSimulator
from .checkpoint import Checkpointer, Resume, read
from .forces import force_from_spec
from .quasistatic import QUASI_STATIC_METHODS, QuasiStaticSimulator
from .simulator import DynamicsSimulator


def Simulator(model, dt, integrator=None, method: str = "aba", **kwargs):
    """Build the simulator of ``method`` for ``model`` with time step ``dt`` [s].

    Parameters
    ----------
    model : Model
    dt : float > 0
        Time step [s].
    integrator : str, optional
        The time integrator of a
        :class:`~articulated.simulation.simulator.DynamicsSimulator` (its default when
        None); the adaptive and quasi-static simulators have their own schemes and reject
        it.
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
        ``contacts``, ``limits``, ``contact_options``, ``update_on_impact``);
        ``"quasistatic-adaptive"``, ``"quasistatic"``: forward quasi-statics (Redon & Lin
        2005), :class:`~articulated.simulation.quasistatic.QuasiStaticSimulator` (keywords
        ``eps_max``, ``error``, ``max_joints``, ``weights``, ``q0``, ``forces``,
        ``assembly``).

    Returns
    -------
    DynamicsSimulator, AdaptiveSimulator or QuasiStaticSimulator
        Each has ``step()``, ``run(steps, record_every)`` and ``add_force(force)``.

    Raises
    ------
    ValueError, TypeError
        As the chosen simulator's constructor (unknown method or integrator,
        bad ``dt``, state or settings, keywords the simulator does not take).

    Notes
    -----
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


def restore(path, *, model=None, forces=None):
    """The simulator of a checkpoint, in the state of its last write, and the run's
    bookkeeping: ``(sim, info, trajectory so far)``.

    Parameters
    ----------
    path : the checkpoint (``.npz``)
    model : Model, optional
        The model (default: rebuilt from the description in the file).
    forces : list, optional
        The applied forces (default: rebuilt from the file; needed when one of them was a
        user's own force).

    Raises
    ------
    ValueError
        When the model cannot be rebuilt or does not match (body names), or when
        a force cannot be rebuilt and ``forces`` is not given.
    """
    info, traj, state = read(path)
    if model is None:
        model = traj.build_model()
    elif traj.body_name and list(model.body_name) != list(traj.body_name):
        raise ValueError(f"the model passed to resume has bodies {model.body_name[:3]}... "
                         f"({model.nb}), the checkpoint {traj.body_name[:3]}... "
                         f"({len(traj.body_name)})")
    if forces is None:
        missing = [n for s, n in zip(info["forces"], info["force_names"]) if s is None]
        if missing:
            raise ValueError(f"the checkpoint {str(path)!r} cannot rebuild the force(s) "
                             f"{missing} (a user's own force, or a callable argument): pass "
                             f"the run's forces again, resume(path, forces=[...])")
        forces = [force_from_spec(s) for s in info["forces"]]
    settings = dict(info["settings"])
    dt = settings.pop("dt")
    for k, v in list(settings.items()):
        if k.endswith("weights") and v == "array":
            settings[k] = state.pop(k)
    if settings.get("method", "aba") != "adaptive" and \
            settings.get("method") not in QUASI_STATIC_METHODS:
        settings["model_forces"] = False    # the file's forces include the model's
        settings["limits"] = False          # a checkpointed run has no limit rows
    sim = Simulator(model, dt, q0=state["q"], qd0=state["qd"], forces=forces, **settings)
    sim.restore_state(info["state"], state)
    return sim, info, traj


def resume(path, *, model=None, forces=None, progress=None):
    """Finish the run of a checkpoint (see the module docstring).

    The result equals, bit for bit, the trajectory of the run had it not stopped (wall times
    aside).

    Parameters
    ----------
    path : the checkpoint (``.npz``)
    model, forces : as :func:`restore`
    progress : as the simulator's ``run``

    Returns
    -------
    Trajectory
        The whole run, from its first step; the checkpoint is updated as the run goes on
        (same ``checkpoint_every``).

    Raises
    ------
    ValueError
        As :func:`restore`; what the simulator's ``run`` raises.
    """
    sim, info, traj = restore(path, model=model, forces=forces)
    run = info["run"]
    ck = Checkpointer(sim, path, run["checkpoint_every"], run["steps"], run["record_every"])
    if info.get("watch") is not None and getattr(sim, "_watch", None) is not None:
        sim._watch.restore(info["watch"])
    start = Resume(run["done"], traj, run["nfev"], run["wall_time"])
    return sim.continue_run(run["steps"], run["record_every"], progress, ck, start)


Simulator.resume = resume
