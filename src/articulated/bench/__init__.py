"""Benchmarks: the papers' tables and the peer comparisons (the interfaces layer).

One module per benchmark of ``articulated bench NAME``, each declaring its options with
``add_arguments(parser)``, running with ``run(args)`` and runnable on its own
(``python -m articulated.bench.NAME``):

* :mod:`~articulated.bench.fd` - ABA / RNEA / CRBA against Pinocchio and MuJoCo, scaling;
* :mod:`~articulated.bench.dca` - the DCA against our ABA, assembly-tree statistics;
* :mod:`~articulated.bench.adaptive` - adaptive dynamics (Redon, Galoppo & Lin 2005), with
  :mod:`~articulated.bench.spring` (Fig. 6), :mod:`~articulated.bench.crowd` (Fig. 1) and
  the shared runs of :mod:`~articulated.bench.adaptive_runs`;
* :mod:`~articulated.bench.quasistatics` - adaptive quasi-statics (Redon & Lin 2005);
* :mod:`~articulated.bench.proteins` - the same on real proteins (``load_structure``);
* :mod:`~articulated.bench.speedups` - the adaptive methods' headline speed-ups beside the
  papers', in one run;
* :mod:`~articulated.bench.loops` - closed loops by SRM (Ascher & Lin 1999);
* :mod:`~articulated.bench.contact` - contact (Gayle, Lin & Manocha 2006), against MuJoCo;
* :mod:`~articulated.bench.contact_mujoco` - MuJoCo beside every scene of ``contact``
  (``articulated bench contact-mujoco``);
* :mod:`~articulated.bench.robots` - example-robot-data's floating-base robots on a floor,
  as ``articulated simulate`` runs them, against MuJoCo;
* :mod:`~articulated.bench.simulator` - the simulators through the public API against the
  bare dynamics call (speed as a user gets it);
* :mod:`~articulated.bench.sweep` - sweep throughput on Dask (1 vs W worker processes);
* :mod:`~articulated.bench.soak` - long adaptive runs checking energy and memory;
* :mod:`~articulated.bench.stiffness` - formulation stiffness (Ascher, Pai & Cloutier 1997):
  computed by :mod:`~articulated.bench.stiffness_study`, reported by
  :mod:`~articulated.bench.stiffness_report`.

:mod:`~articulated.bench.common` holds what they share: machine information, peak RSS,
timing, Markdown tables and figures.
"""

BENCHMARKS = ("fd", "dca", "loops", "stiffness", "quasistatics", "adaptive", "contact",
              "contact-mujoco",
              "robots", "simulator", "proteins", "speedups", "sweep", "soak")
"""The modules behind ``articulated bench NAME``, in the order of ``articulated bench --help``
(a ``-`` in NAME is a ``_`` in the module's name)."""
