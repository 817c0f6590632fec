"""One entry point for forward dynamics by any of the library's methods."""

from __future__ import annotations

import numpy as np

from ..model import Model
from .aba import aba
from .crba import crba_forward_dynamics
from .dca_solver import dca

METHODS = ("aba", "aba_modified", "crba", "dca")


def forward_dynamics(model: Model, q, qd, tau, f_ext=None, *, method: str = "aba",
                     dtype=np.float64, data=None) -> np.ndarray:
    """Joint accelerations ``qdd = M(q)^-1 (tau - C(q, qd) + J^T f_ext)``.

    Parameters
    ----------
    model, q, qd, tau, f_ext, dtype : as :func:`articulated.aba`
    method : {"aba", "aba_modified", "crba", "dca"}
        ``"aba"``: articulated-body algorithm, O(n) (RBDA Table 7.1).
        ``"aba_modified"``: ABA with the pivots ``D_k`` accumulated separately (Ascher, Pai &
        Cloutier 1997, eq. 11); more accurate on ill-conditioned chains, same cost order.
        ``"crba"``: joint-space inertia by CRBA, bias by RNEA, sparse ``L^T D L`` solve
        (RBDA sec. 6.5); O(n^3) worst case, fastest for small n.
        ``"dca"``: Featherstone's divide-and-conquer algorithm on a balanced assembly tree
        (Redon, Galoppo & Lin 2005, eqs. 1-5), O(n); the model's :class:`articulated.DCA`
        (assembly tree and coefficients) is built on first use and cached (``data`` is not
        used).

    Returns
    -------
    qdd : (nv,) ndarray of ``dtype`` [rad/s^2 | m/s^2]

    Raises
    ------
    ValueError
        For an unknown method, and as :func:`articulated.aba`.
    """
    if method == "aba":
        return aba(model, q, qd, tau, f_ext, dtype=dtype, data=data)
    if method == "aba_modified":
        return aba(model, q, qd, tau, f_ext, modified=True, dtype=dtype, data=data)
    if method == "crba":
        return crba_forward_dynamics(model, q, qd, tau, f_ext, dtype=dtype, data=data)
    if method == "dca":
        return dca(model, q, qd, tau, f_ext, dtype=dtype)
    raise ValueError(f"unknown forward-dynamics method {method!r}; expected one of {METHODS}")
