"""Conversions to the peer libraries (Pinocchio, MuJoCo) for cross-checks and benchmarks.

Pinocchio (PyPI ``pin``) is linear-first for spatial vectors and stores quaternions as
(x, y, z, w); these helpers permute. Fixed joints are merged into the parent's Pinocchio
joint (their inertia is appended with the fixed placement), as Pinocchio's URDF parser does.
Neither peer is a runtime dependency: they are imported on first use.
"""

from __future__ import annotations

import numpy as np

from .model import (JOINT_FIXED, JOINT_FREE, JOINT_PRISMATIC, JOINT_REVOLUTE, JOINT_SPHERICAL,
                    Model)


class PinocchioModel:
    """A Pinocchio model equivalent to an articulated :class:`Model`, with state converters.

    Attributes: ``model`` (pin.Model), ``data`` (pin.Data), ``joint_of_body`` (nb,) the
    Pinocchio joint id carrying each body, ``placement_of_body`` list of pin.SE3 (body frame
    in that joint's frame).
    """

    def __init__(self, model: Model):
        import pinocchio as pin

        self.pin = pin
        self.src = model
        pm = pin.Model()
        pm.gravity = pin.Motion(np.concatenate([model.gravity, np.zeros(3)]))
        jid = np.zeros(model.nb, dtype=int)
        place = []
        for i in range(model.nb):
            p = model.body_parent[i]
            pj = 0 if p < 0 else int(jid[p])
            pplace = pin.SE3.Identity() if p < 0 else place[p]
            Mtree = pin.SE3(model.jnt_Xtree_E[i].T.copy(), model.jnt_Xtree_r[i].copy())
            Mj = pplace * Mtree  # joint frame in the parent pin-joint frame
            t = model.jnt_type[i]
            name = model.joint_name[i]
            inertia = pin.Inertia(float(model.body_mass[i]), model.body_com[i].copy(),
                                  model.body_I_com[i].copy())
            if t == JOINT_FIXED:
                jid[i] = pj
                place.append(Mj)
                pm.appendBodyToJoint(pj, inertia, Mj)
                continue
            if t == JOINT_REVOLUTE:
                jm = pin.JointModelRevoluteUnaligned(model.jnt_axis[i].copy())
            elif t == JOINT_PRISMATIC:
                jm = pin.JointModelPrismaticUnaligned(model.jnt_axis[i].copy())
            elif t == JOINT_SPHERICAL:
                jm = pin.JointModelSpherical()
            else:
                jm = pin.JointModelFreeFlyer()
            jid[i] = pm.addJoint(pj, jm, Mj, name)
            place.append(pin.SE3.Identity())
            pm.appendBodyToJoint(int(jid[i]), inertia, pin.SE3.Identity())
        self.model = pm
        self.data = pm.createData()
        self.joint_of_body = jid
        self.placement_of_body = place
        # index maps between our q/qd and Pinocchio's
        self._qmap = []
        self._vmap = []
        for i in range(model.nb):
            t = model.jnt_type[i]
            if t == JOINT_FIXED:
                continue
            j = pm.joints[int(jid[i])]
            qa, va = model.jnt_qadr[i], model.jnt_vadr[i]
            if t in (JOINT_REVOLUTE, JOINT_PRISMATIC):
                self._qmap += [(qa, j.idx_q)]
                self._vmap += [(va, j.idx_v)]
            elif t == JOINT_SPHERICAL:  # ours (w,x,y,z) -> pin (x,y,z,w)
                self._qmap += [(qa + 1, j.idx_q), (qa + 2, j.idx_q + 1), (qa + 3, j.idx_q + 2), (qa, j.idx_q + 3)]
                self._vmap += [(va + k, j.idx_v + k) for k in range(3)]
            else:  # free: ours [p, w,x,y,z] / [w; v] -> pin [p, x,y,z,w] / [v; w]
                self._qmap += [(qa + k, j.idx_q + k) for k in range(3)]
                self._qmap += [(qa + 4, j.idx_q + 3), (qa + 5, j.idx_q + 4), (qa + 6, j.idx_q + 5), (qa + 3, j.idx_q + 6)]
                self._vmap += [(va + k, j.idx_v + 3 + k) for k in range(3)]
                self._vmap += [(va + 3 + k, j.idx_v + k) for k in range(3)]
        self._qa = np.array([a for a, _ in self._qmap], dtype=int)
        self._qb = np.array([b for _, b in self._qmap], dtype=int)
        self._va = np.array([a for a, _ in self._vmap], dtype=int)
        self._vb = np.array([b for _, b in self._vmap], dtype=int)

    def q(self, q):
        out = np.zeros(self.model.nq)
        out[self._qb] = q[self._qa]
        return out

    def v(self, v):
        out = np.zeros(self.model.nv)
        out[self._vb] = v[self._va]
        return out

    def v_back(self, vp):
        out = np.zeros(self.src.nv)
        out[self._va] = vp[self._vb]
        return out

    def M_back(self, Mp):
        P = np.zeros((self.src.nv, self.model.nv))
        P[self._va, self._vb] = 1.0
        return P @ Mp @ P.T

    def fext(self, f_ext):
        """Our (nb, 6) body-frame forces as Pinocchio's per-joint local forces."""
        pin = self.pin
        acc = [np.zeros(6) for _ in range(self.model.njoints)]  # pin order [f; n]
        for i in range(self.src.nb):
            w = f_ext[i]
            if not np.any(w):
                continue
            fb = pin.Force(w[3:].copy(), w[:3].copy())
            fj = self.placement_of_body[i].act(fb)
            acc[int(self.joint_of_body[i])] += fj.vector
        return [pin.Force(a) for a in acc]

    def aba(self, q, v, tau, f_ext=None):
        pin = self.pin
        args = (self.model, self.data, self.q(q), self.v(v), self.v(tau))
        if f_ext is not None:
            args = args + (self.fext(f_ext),)
        return self.v_back(pin.aba(*args))

    def rnea(self, q, v, a, f_ext=None):
        pin = self.pin
        args = (self.model, self.data, self.q(q), self.v(v), self.v(a))
        if f_ext is not None:
            args = args + (self.fext(f_ext),)
        return self.v_back(pin.rnea(*args))

    def crba(self, q):
        pin = self.pin
        M = pin.crba(self.model, self.data, self.q(q)).copy()
        M = np.triu(M) + np.triu(M, 1).T
        return self.M_back(M)


def to_pinocchio(model: Model) -> PinocchioModel:
    """Build the Pinocchio equivalent of ``model`` (needs ``pip install pin``)."""
    return PinocchioModel(model)
