"""Contact response by impulses on an articulated body.

Contact response by impulses on an articulated body: the collision matrix ``K`` from test
impulses, Coulomb friction with sticking and sliding, restitution, sequential impulses over
many contacts, and position projection (Gayle, Lin & Manocha 2006, "GLM", sec. IV.A, after
Mirtich 1996, ch. 4).

The response is split along GLM IV.A's steps, one module each:

* :mod:`~articulated.algorithms.impulse` - test impulses (steps 1-3, 6-7), and the tables of
  ``nv`` joint test impulses for rows by dofs;
* :mod:`~articulated.algorithms.contact_rows` - contact frames, ``J^T``, ``W``, ``K`` (step 4),
  the blocks of contacts on one body pair, the rows of the joint limits (IV.B);
* :mod:`~articulated.algorithms.sweeps` - sequential impulses with friction and restitution,
  warm start (step 5, Fig. 3, VI);
* :mod:`~articulated.algorithms.projection` - post-stabilization of positions (ref. [4]);
* :mod:`~articulated.algorithms.response` - the response of a step (:func:`respond_kernel`),
  its buffers, statistics and :func:`collision_matrix`.

This module gathers their public names.
"""

from .contact_rows import (BLOCK_MIN, ContactRows, Limits, block_buffers, contact_buffers,
                           contact_rows, limit_rows, model_limits)
from .impulse import Factor, ImpulseModel, impulse_response, impulse_scratch
from .projection import MAX_STEP_DISPLACEMENT, project_positions, runaway_dof
from .response import (Response, ResponseOptions, collision_matrix, energy_scale,
                       grow_response, respond_kernel, response_buffers)
from .sweeps import save_impulses, solve_impulses, warm_start

__all__ = ["BLOCK_MIN", "MAX_STEP_DISPLACEMENT", "ContactRows", "Factor", "ImpulseModel",
           "Limits", "Response", "ResponseOptions", "block_buffers", "collision_matrix",
           "contact_buffers", "contact_rows", "energy_scale", "grow_response",
           "impulse_response", "impulse_scratch", "limit_rows", "model_limits",
           "project_positions", "respond_kernel", "response_buffers", "runaway_dof",
           "save_impulses", "solve_impulses", "warm_start"]
