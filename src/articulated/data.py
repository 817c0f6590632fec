"""The state-dependent workspace :class:`Data` of a model and its packed layout.

The state-dependent workspace of a :class:`~articulated.model.Model` (:class:`Data`) and
the layout of its packed buffer (:func:`data_arrays`, the only definition of it)."""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from ._views import mat3_view, rows
from .config import VIEWS


DATA_ARRAY_NAMES = ("Xup_E", "Xup_r", "v", "c", "a", "f", "oE", "op", "stack", "Ia_stack",
                    "pa_stack", "UDinv", "Dinv_u", "u", "U", "D", "Dinv", "F", "qdd", "tau", "T",
                    "T2", "tmp")
"""Names of the arrays :func:`data_arrays` returns, in its order."""

DataViews = namedtuple("DataViews", DATA_ARRAY_NAMES)
DataViews.__doc__ = """The named views :func:`data_arrays` returns (a numba named tuple).

Kernels read its fields by name."""

_DATA_BODY = 48
"""Entries of a body's record in the packed workspace (six 64-byte cache lines)."""
_DATA_STACK = 28
_DATA_DOF = 32


def data_size(nb, nv):
    """Length of the packed workspace buffer of a model with nb bodies and nv dofs."""
    return _DATA_BODY * nb + _DATA_STACK * (nb + 1) + (_DATA_DOF + 8) * nv + 96


@njit(**VIEWS)
def data_arrays(data_f, nb, nv):
    """Named views into the packed workspace buffer of a :class:`Data` (see there).

    The one place that defines the buffer's layout (kernels start with
    ``d = data_arrays(data_f, nb, nv)`` and read ``d.Ia_stack``, ... by name). Returns a
    :class:`DataViews` of the arrays named by
    :data:`DATA_ARRAY_NAMES`; ``Xup_E`` and ``oE`` are (nb, 9), row-major 3x3 matrices. No
    copies, no allocation.
    """
    # one record per body: the fields of ABA pass 1 and 2 in cache lines 0-2, a in line 3
    body = rows(data_f, nb, _DATA_BODY)
    Xup_E = body[:, 0:9]
    Xup_r = body[:, 9:12]
    v = body[:, 12:18]
    c = body[:, 18:24]
    a = body[:, 24:30]
    f = body[:, 30:36]
    oE = body[:, 36:45]
    op = body[:, 45:48]
    o = _DATA_BODY * nb
    stack = rows(data_f[o:], nb + 1, _DATA_STACK)
    Ia_stack = stack[:, 0:21]
    pa_stack = stack[:, 21:27]
    o += _DATA_STACK * (nb + 1)
    # one record per dof: what ABA pass 3 reads in cache line 0
    dof = rows(data_f[o:], nv, _DATA_DOF)
    UDinv = dof[:, 0:6]
    Dinv_u = dof[:, 6]
    u = dof[:, 7]
    U = dof[:, 8:14]
    D = dof[:, 14:20]
    Dinv = dof[:, 20:26]
    o += _DATA_DOF * nv
    F = rows(data_f[o:], nv, 6)
    o += 6 * nv
    qdd = data_f[o:o + nv]
    o += nv
    tau = data_f[o:o + nv]
    o += nv
    T = rows(data_f[o:], 6, 6)
    o += 36
    T2 = rows(data_f[o:], 6, 6)
    o += 36
    tmp = rows(data_f[o:], 4, 6)
    return DataViews(Xup_E, Xup_r, v, c, a, f, oE, op, stack, Ia_stack, pa_stack, UDinv,
                     Dinv_u, u, U, D, Dinv, F, qdd, tau, T, T2, tmp)


class Data:
    """Every state-dependent workspace array of a :class:`Model`, allocated once.

    All arrays are views into one buffer ``buf``, so that a kernel takes the whole
    workspace as one argument and unpacks it with :func:`data_arrays`, the only definition
    of the layout: a record of 48 entries per body (the per-body fields below, strided
    views), a stack of 28 entries per body (and one more), a record of 32 entries per dof,
    then ``F``, ``qdd``, ``tau`` and the scratch arrays. Fields are grouped by the stage
    that writes them (MuJoCo's ``mjData`` habit). Frames: a body quantity of body i is in
    body-i coordinates unless prefixed ``o`` (world). Get the cached one of a model with
    :meth:`Model.data`.

    Parameters
    ----------
    model : Model
        The model whose workspace this is.
    dtype : {numpy.float64, numpy.float32}
        Arithmetic precision.

    Notes
    -----
    The workspace fields, by stage:

    Position stage
        Xup_E (nb, 3, 3), Xup_r (nb, 3): compact transform parent -> body (``iX_lambda(i)``)
        oE (nb, 3, 3): rotation world -> body coordinates; op (nb, 3): body origin in world [m]
    Velocity stage
        v (nb, 6): body spatial velocity; c (nb, 6): velocity-product acceleration ``v x S qd``
    Acceleration / force stage
        a (nb, 6): body spatial acceleration (gravity folded in as a base acceleration)
        f (nb, 6): force transmitted across joint i from its parent [N, N m] (RNEA)
        stack (nb + 1, 28): the terms of the bodies whose parent is still to come in a
        backward pass (:func:`articulated.algorithms.kinematics.pop_children`); the views
        Ia_stack (nb + 1, 21), pa_stack (nb + 1, 6) hold ``Xup^T Ia Xup`` and ``Xup^T pa`` in
        ABA pass 2 (the summands of RBDA eqs. 7.38 and 7.40, carried to parent coordinates;
        Ascher, Pai & Cloutier's ``M~``), ``Xup^T IC Xup`` in CRBA (RBDA eq. 6.13).
        Inertias are packed symmetric (:func:`articulated.spatial.sym6_index`). A chain uses
        one row; the last row stays zero (the children's sum of a leaf).
        UDinv (nv, 6): ``U D^-1`` (row ``vadr + r`` is column r); Dinv_u (nv,): ``D^-1 u``;
        pass 3 needs only these: ``qdd = D^-1 u - (U D^-1)^T a'``
        u (nv,): ``tau - S^T pA``; U (nv, 6): ``IA S``; D, Dinv (nv, 6): the pivot
        ``D = S^T IA S`` of each joint and its inverse, row r of the block in row
        ``vadr + r`` (multi-dof joints and the modified ABA only)
        F (nv, 6): ``IC S`` of each dof, carried up the tree to the body CRBA is at
        (RBDA Table 6.2)
    Outputs
        qdd (nv,), tau (nv,); M (nv, nv) allocated on first use by CRBA
    Scratch
        T, T2 (6, 6), tmp (4, 6); f_none (0, 6): the ``f_ext`` kernels get for
        ``f_ext=None`` (no external forces)
    Kernel arguments
        buf: the buffer of all the arrays above; model_i, model_f: the model's packed
        arrays in this dtype (``ModelArrays.ints``, ``.floats``), kept here so that a call
        looks up one object
    """

    def __init__(self, model, dtype=np.float64):
        nb, nv = model.nb, model.nv
        dt = self.dtype = np.dtype(dtype)
        self.nb, self.nv = nb, nv
        self.buf = np.zeros(data_size(nb, nv), dtype=dt)
        for name, a in zip(DATA_ARRAY_NAMES, data_arrays(self.buf, nb, nv)):
            setattr(self, name, mat3_view(a, nb) if name in ("Xup_E", "oE") else a)
        self.f_none = np.zeros((0, 6), dtype=dt)
        ma = model.arrays(dt)
        self.model_i, self.model_f = ma.ints, ma.floats
        self._M = None

    @property
    def M(self) -> np.ndarray:
        """Joint-space inertia workspace (nv, nv), allocated on first use."""
        if self._M is None:
            self._M = np.zeros((self.nv, self.nv), dtype=self.dtype)
        return self._M

    def nbytes(self) -> int:
        """Return the bytes held by the workspace (the buffer, and M once allocated)."""
        return self.buf.nbytes + (self._M.nbytes if self._M is not None else 0)
