"""The active-region update of adaptive dynamics (RGL Sec. 5.1).

The active-region update of adaptive dynamics (Redon, Galoppo & Lin 2005, RGL Sec. 5.1
and 6) as one compiled kernel, :func:`region_update_kernel`, behind
:meth:`articulated.algorithms.adaptive.AdaptiveDynamics.region_update` and the compiled run
loop of :class:`articulated.simulation.adaptive.AdaptiveSimulator`.

The steps (RGL Sec. 5.1):

1. conversion to the fully articulated state around the active region (RGL Sec. 6): the
   rigid-front nodes from their linear-coefficient tensors, the force-update region
   (passive nodes with external forces on their bodies or joint forces other than those in
   their tensors, and their passive ancestors) and the passive root nodes recomputed
   exactly in their linear coefficients only (their inverse inertias do not change while
   they are passive), the active nodes recomputed in full;
2. acceleration update region U by the partial back-substitution in priority of the
   acceleration metric (RGL Sec. 5.3.1), passive nodes evaluated from their tensors as the
   queue reaches them;
3. joint accelerations on the transient hybrid body (active region + U, RGL Sec. 5.3.2),
   ``qd += h qdd``;
4. new active region by the velocity metric (RGL Sec. 5.4.1) and rigidification impulses
   (RGL Sec. 5.4.2): ``K^R Q^R = -qd^R`` with ``K^R`` from unit test impulses for at most
   ``columns`` joints, else the equal M-orthogonal projection from the generalized momentum
   (one hybrid solve); the hybrid-body solves of steps 3 and 4 are ABA on the reduced tree
   of the transient or new hybrid body (:mod:`articulated.algorithms.reduced`);
5. conversion to the new hybrid state: rigid-state coefficients (RGL eq. 6) and tensors of
   the nodes that became passive, the new region's bookkeeping.

No Python between the steps: the per-update cost is that of the nodes touched plus the
integer and vector passes listed in :mod:`articulated.algorithms.adaptive`.
"""

from __future__ import annotations

from numba import njit

from .._byref import byref, byref_each, deref
from ..config import inline, KERNEL
from ..spatial import spd_inverse
from .back_substitution import _partial_back_substitution
from .bundles import N_AJOINTS, N_ANODES, N_FRONT, STAT_BAD, STAT_N
from .heap import _heapsort
from .hybrid import (hybrid_kinematics, passive_front, prepare_region, tensorize_nodes,
                     velocity_metric, velocity_traversal, world_frames)
from .node_update import _dirty_nodes, _update_biases, _update_nodes
from .reduced import reduced_dynamics, reduced_momentum

ERR_FULL = 1
"""Error code of :func:`region_update_kernel`: the fully articulated acceleration is not
finite at the returned joint."""
ERR_HYBRID = 2
"""Error code: the hybrid-body acceleration is not finite at the returned joint."""


@njit(**KERNEL)
def _rigidify(rigid, nrig, active, c, c_al, nodes, node_of_joint, upd, epoch, moved):
    """Rigidify the joints ``rigid[:nrig]`` of the hybrid body: inactive, no velocity
    product, and the rigid-state coefficients (RGL Sec. 4.2, eq. 6) of the nodes of those
    that ``moved`` (nb,) bool (active before this update; ``nodes`` scratch, ``upd`` a
    pointer to the arguments of :func:`_update_nodes` after the node list,
    :func:`~articulated._byref.byref`); ``epoch`` counts each node's recomputations (what
    is cached from a rigid node's coefficients is stale when it changes). A joint that
    joined from the update region and did not move keeps its node as it is: neither it
    nor a joint below it (the active region holds every ancestor of an active node) has
    moved since the node's rigid-state coefficients and frames were computed, so they and
    what is cached from them are current. O(nodes of the joints that moved)."""
    n = 0
    for k in range(nrig):
        j = rigid[k]
        active[j] = False
        for a in range(6):
            c[j, a] = 0.0
            c_al[j, a] = 0.0
        if moved[j]:
            nodes[n] = node_of_joint[j]
            epoch[nodes[n]] += 1
            n += 1
    _heapsort(nodes, n)
    _update_nodes(nodes, n, upd)


@inline
def _swap_active(a, b, ajoints, na, vadr, jnv):
    """Swap ``a`` and ``b`` (nv,) on the dofs of the active joints ``ajoints[:na]``."""
    for u in range(na):
        J = ajoints[u]
        for r in range(jnv[J]):
            k = vadr[J] + r
            x = a[k]
            a[k] = b[k]
            b[k] = x


@njit(**KERNEL)
def _project_out(v, dofs, nd, ls, act, red):
    """``v += M_T^-1 G^T Q^R`` with ``K^R Q^R = -v^R`` (``Kb[1]`` the inverse of ``K^R``):
    the joint impulses on the rigidified dofs ``dofs[:nd]`` that zero their part of ``v``
    (nv,), by one solve on the reduced tree against ``base``, at the kinematics of its
    solve; ``ls``, ``act``, ``red`` as in :func:`_rigidification_impulses`. Returns False
    when an acceleration is not finite."""
    Kb, x, tau, qdd, base = ls
    ajoints, nj, vadr, jnv = act
    bkp, nbodies, bodies, f_ext, posep, rp, stats = red
    for r in range(nd):
        s = 0.0
        for c in range(nd):
            s -= Kb[1, r, c] * v[dofs[c]]
        x[r] = s
    for r in range(nd):
        tau[dofs[r]] += x[r]
    reduced_dynamics(bkp, nbodies, bodies, f_ext, posep, rp, stats, False)
    for r in range(nd):
        tau[dofs[r]] -= x[r]
    if stats[STAT_BAD] >= 0:
        return False
    for u in range(nj):
        J = ajoints[u]
        for r in range(jnv[J]):
            k = vadr[J] + r
            v[k] += qdd[k] - base[k]
    return True


@njit(**KERNEL)
def _rigidification_impulses(dofs, nd, qd, qddT, split, ls, act, red):
    """RGL Sec. 5.4.2 on the transient hybrid body: ``K^R`` column by column from unit
    test impulses on the dofs ``dofs[:nd]`` of the rigidified joints (Kokkevis et al.
    1996: the change of the accelerations for a unit joint force, each an exact solve on
    the reduced tree, :func:`~articulated.algorithms.reduced.reduced_dynamics`, against
    the solve at the solver's state, kept in ``base``), ``K^R Q^R = -qd^R`` and ``qd +=
    M_T^-1 G^T Q^R`` on the active dofs. With ``split``, the same projection (it is
    linear in ``qd``) also takes the rigidified joints' accelerations out of ``qddT`` (the
    step's ``h qddT`` is part of ``qd``): a split step starts from ``qd - h qddT``, which
    is then the projection of the velocities before the update. Only the first solve
    computes the reduced tree's kinematics: the others, at the same ``q, qd`` with other
    joint forces, take them as it left them (ABA's pass 1 skipped; the same operations on
    the same state). Returns False when an acceleration is not finite.

    Tuples: ``ls = (Kb, x, tau, qdd, base)`` the system ``Kb`` (3, nd, nd) (``K^R``, its
    inverse, scratch), ``x`` (nd,), the solver's ``tau``, ``qdd`` (nv,) and ``base`` (nv,);
    ``act = (ajoints, nj, vadr, jnv)`` the active joints ``ajoints[:nj]`` of the reduced
    tree and the model's dof layout; ``red = (bkp, nbodies, bodies, f_ext, posep, rp,
    stats)`` the arguments of :func:`~articulated.algorithms.reduced.reduced_dynamics`."""
    Kb, x, tau, qdd, base = ls
    ajoints, nj, vadr, jnv = act
    bkp, nbodies, bodies, f_ext, posep, rp, stats = red
    reduced_dynamics(bkp, nbodies, bodies, f_ext, posep, rp, stats, True)
    if stats[STAT_BAD] >= 0:
        return False
    for u in range(nj):
        J = ajoints[u]
        for r in range(jnv[J]):
            base[vadr[J] + r] = qdd[vadr[J] + r]
    for c in range(nd):
        tau[dofs[c]] += 1.0
        reduced_dynamics(bkp, nbodies, bodies, f_ext, posep, rp, stats, False)
        tau[dofs[c]] -= 1.0
        if stats[STAT_BAD] >= 0:
            return False
        for r in range(nd):
            Kb[0, r, c] = qdd[dofs[r]] - base[dofs[r]]
    for r in range(nd):
        for c in range(r):
            s = 0.5 * (Kb[0, r, c] + Kb[0, c, r])
            Kb[0, r, c] = s
            Kb[0, c, r] = s
    spd_inverse(Kb[0], nd, Kb[1], Kb[2])
    # qddT first: the solves' velocity terms must be those of ``base`` (qd unchanged)
    if split and not _project_out(qddT, dofs, nd, ls, act, red):
        return False
    return _project_out(qd, dofs, nd, ls, act, red)


@inline
def _copy_coefficients(src, dst):
    """Every array of the :class:`~articulated.algorithms.bundles.Coefficients` ``src``
    into ``dst`` (same shapes)."""
    for a, b in ((src.Phi, dst.Phi), (src.Psi, dst.Psi), (src.W, dst.W), (src.P, dst.P),
                 (src.D, dst.D)):
        x = a.reshape(a.size)
        y = b.reshape(b.size)
        for k in range(x.size):
            y[k] = x[k]
    for a, b in ((src.bh, dst.bh), (src.ph, dst.ph), (src.beta, dst.beta),
                 (src.gamma, dst.gamma), (src.R, dst.R)):
        x = a.reshape(a.size)
        y = b.reshape(b.size)
        for k in range(x.size):
            y[k] = x[k]
    for k in range(src.eta.size):
        dst.eta[k] = src.eta[k]


@njit(**KERNEL)
def region_update_kernel(h, crit, bodies, hp, rp, ra, at_set_state):
    """RGL Sec. 5.1 steps 1-5 (module docstring) from the current hybrid state at the
    solver's ``q``, ``qd``, ``tau``, ``f_ext``, whose
    :func:`~articulated.algorithms.hybrid.hybrid_kinematics` the caller has computed;
    leaves the solver in the new hybrid state (the world frames ``P`` of its nodes
    included; not the world velocities ``Vw`` and velocity products, which the next
    step's kinematics computes: nothing reads them before).

    h: time step [s]; ``crit`` = ``(eps, budget_u, eps_vel, keep_region, budgets, per_tree,
    columns)`` (:meth:`AdaptiveDynamics._region_criteria
    <articulated.algorithms.adaptive.AdaptiveDynamics._region_criteria>`): eps the square
    root of the acceleration-metric threshold, budget_u the joint budget of the update
    region (-1: none); eps_vel, budgets (per tree when ``per_tree``, else ``budgets[0]``
    for the whole model; -1: none), keep_region (no criterion: keep the transient region);
    columns: K^R for at most this many rigidified joints; ``bodies`` (int64): the bodies
    with external forces. ``ra``: the
    :class:`~articulated.algorithms.bundles.RegionArgs` of
    :meth:`AdaptiveDynamics._region_args`; the hybrid-step bundle and the reduced tree's
    buffers by reference (``hp``, :func:`~articulated._byref.byref_each`, and ``rp``,
    :func:`~articulated._byref.byref`; :func:`region_update` takes them as values). The
    hybrid-body solves of steps 3 and 4 are ABA on the reduced tree
    (:mod:`articulated.algorithms.reduced`), which is left built for the new region when
    the momentum projection ran.

    ``at_set_state``: the hybrid coefficient set is that of the current ``q``, ``qd`` with
    every joint active and no joint or body force (:meth:`AdaptiveDynamics.set_state
    <articulated.algorithms.adaptive.AdaptiveDynamics.set_state>` of a new or restarted
    simulator, and no step since): the fully articulated set is copied from it and only
    the nodes on the paths of this step's forces are recomputed.

    Returns ``(nU, nrigid, nreg, n_eval, n_tensorized, err, joint)``: U in ``buf``'s U,
    the rigidified joints in its ``rigid``; ``err`` 0, :data:`ERR_FULL` or
    :data:`ERR_HYBRID` with the joint whose acceleration is not finite (the solver's state
    is then undefined)."""
    eps, budget_u, eps_vel, keep_region, budgets, per_tree, columns = crit
    nbodies = bodies.shape[0]
    bk, prep, fupd, fsolve, tens = ra.bk, ra.prep, ra.update, ra.solve, ra.tens
    vmet, topo, buf, st = ra.vmet, ra.topo, ra.buf, ra.st
    counts = bk.counts
    node_active, anodes, ajoints = bk.node_active, bk.anodes, bk.ajoints
    dof_body, node_of_joint, leaf_of_body = topo.dof_body, topo.node_of_joint, topo.leaf_of_body
    roots, node_parent, node_joint = topo.roots, topo.node_parent, topo.node_joint
    node_A, node_B, vadr, jnv = topo.node_A, topo.node_B, topo.vadr, topo.jnv
    qd, tau, f_ext, qdd, active, tau_T = st.qd, st.tau, st.f_ext, st.qdd, st.active, st.tau_T
    gravity, c, c_al, stats, ncomp = st.gravity, st.c, st.c_al, st.stats, st.ncomp
    computed, Vw = st.computed, st.Vw
    mark, dirty, stale, seeds, region = buf.mark, buf.dirty, buf.stale, buf.seeds, buf.region
    in_region, fresh, fresh_list, nfresh = buf.in_region, buf.fresh, buf.fresh_list, buf.nfresh
    U, rigid, new, moved, V, Kb, x = buf.U, buf.rigid, buf.new, buf.moved, buf.V, buf.Kb, buf.x
    base, save, dofs, path = buf.base, buf.save, buf.dofs, buf.path
    Vweights, hk, hn = vmet.Vweights, vmet.hk, vmet.hn
    nb = active.shape[0]
    nv = qd.shape[0]
    front, front_body, near = bk.front, bk.front_body, bk.near
    bkp = byref(bk)                 # pointers: the kernels below take them
    fup = byref(fupd)
    fsp = byref(fsolve)
    upd = hp.update

    # ---- 1. fully articulated state around the active region (RGL Sec. 6)
    ns = 0
    for k in range(nv):
        if tau[k] != tau_T[k]:            # joint forces other than those in the tensors
            seeds[ns] = node_of_joint[dof_body[k]]
            ns += 1
    n_tau = _dirty_nodes(node_parent, seeds, ns, mark, dirty, node_active)
    for k in range(n_tau):
        stale[k] = dirty[k]
    for k in range(nbodies):
        seeds[k] = leaf_of_body[bodies[k]]
    npath = _dirty_nodes(node_parent, seeds, nbodies, mark, dirty, node_active)
    nreg = 0
    for k in range(npath + n_tau + counts[N_ANODES] + roots.shape[0]):
        if k < npath:
            i = dirty[k]
        elif k < npath + n_tau:
            i = stale[k - npath]
        elif k < npath + n_tau + counts[N_ANODES]:
            i = anodes[k - npath - n_tau]
        else:
            i = roots[k - npath - n_tau - counts[N_ANODES]]
            if node_active[i]:
                continue
        if not in_region[i]:
            in_region[i] = True
            region[nreg] = i
            nreg += 1
    _heapsort(region, nreg)
    nfresh[0] = 0
    passive_front(front, counts[N_FRONT], front_body, near, Vw, region, nreg, in_region,
                   node_active, fsp, deref(hp.pose))
    # passive nodes (post-order, below every active one): linear coefficients only, their
    # inverse inertias are those of their last update; then the active nodes in full
    nact = 0
    npas = 0
    for k in range(nreg):
        i = region[k]
        if node_active[i]:
            seeds[nact] = i
            nact += 1
        else:
            path[npas] = i
            npas += 1
    _update_biases(path, npas, fup)
    if at_set_state:
        # every node as the hybrid set has it (set_state: all active, no forces), then the
        # nodes whose joint or leaf has a force, and their ancestors
        _copy_coefficients(deref(upd).coef, fupd.coef)
        ns = 0
        for j in range(nb):
            for r in range(jnv[j]):
                if tau[vadr[j] + r] != 0.0:
                    seeds[ns] = node_of_joint[j]
                    ns += 1
                    break
        for k in range(nbodies):
            seeds[ns] = leaf_of_body[bodies[k]]
            ns += 1
        nact = _dirty_nodes(node_parent, seeds, ns, mark, path, mark)
        _update_nodes(path, nact, fup)
    else:
        _update_nodes(seeds, nact, fup)
    # ---- 2. acceleration update region (lazy partial back-substitution, RGL Sec. 5.3.1)
    _partial_back_substitution(eps, 0, budget_u, ncomp[0], fsp)
    ncomp[0] = int(stats[STAT_N])
    nU = ncomp[0]
    for k in range(nU):
        U[k] = computed[k]
    n_eval = nfresh[0] - nreg
    for k in range(nfresh[0]):
        fresh[fresh_list[k]] = False
    for k in range(nreg):
        in_region[region[k]] = False
    if stats[STAT_BAD] >= 0:
        return nU, 0, nreg, n_eval, 0, ERR_FULL, int(stats[STAT_BAD])
    # ---- 3. transient hybrid body (RGL Sec. 5.3.2)
    grown = False
    for j in range(nb):
        moved[j] = active[j]              # the joints that moved since the last update
    for k in range(nU):
        if not active[U[k]]:
            active[U[k]] = True
            grown = True
    if grown:
        prepare_region(active, prep, bk)
        world_frames(bkp, hp)     # the new front's (a joint that joins has not moved)
    reduced_dynamics(bkp, nbodies, bodies, f_ext, hp.pose, rp, stats, True)
    if stats[STAT_BAD] >= 0:
        return nU, 0, nreg, n_eval, 0, ERR_HYBRID, int(stats[STAT_BAD])
    qddT = buf.qddT
    split = buf.split[0]
    for u in range(counts[N_AJOINTS]):
        J = ajoints[u]
        for r in range(jnv[J]):
            k = vadr[J] + r
            qd[k] += h * qdd[k]
            qddT[k] = qdd[k]
    # ---- 4. new active region (RGL Sec. 5.4.1), rigidification impulses (Sec. 5.4.2)
    if keep_region:
        for j in range(nb):
            new[j] = active[j]
    else:
        # only the transient active nodes have moving joints (RGL Sec. 5.4.1: the
        # transient rigid front has V = 0); V is zero elsewhere between updates
        velocity_metric(anodes, counts[N_ANODES], node_A, node_B, node_joint, vadr, jnv, Vweights,
                         qd, V)
        for j in range(nb):
            new[j] = False
        if per_tree:
            for k in range(roots.shape[0]):
                velocity_traversal(roots[k:k + 1], V, node_A, node_B, node_joint, eps_vel,
                                    budgets[k], new, hk, hn)
        else:
            velocity_traversal(roots, V, node_A, node_B, node_joint, eps_vel, budgets[0], new, hk,
                                hn)
        for u in range(counts[N_ANODES]):
            V[anodes[u]] = 0.0
    nrig = 0
    moving = False
    projected = False
    for j in range(nb):
        if active[j] and not new[j]:
            rigid[nrig] = j
            nrig += 1
            for r in range(jnv[j]):
                moving = moving or qd[vadr[j] + r] != 0.0
    if nrig > 0 and moving:
        if nrig <= columns:
            nd = 0
            for k in range(nrig):
                j = rigid[k]
                for r in range(jnv[j]):
                    dofs[nd] = vadr[j] + r
                    nd += 1
            if not _rigidification_impulses(
                    dofs, nd, qd, qddT, split, (Kb, x, tau, qdd, base),
                    (ajoints, counts[N_AJOINTS], vadr, jnv),
                    (bkp, nbodies, bodies, f_ext, hp.pose, rp, stats)):
                return nU, nrig, nreg, n_eval, 0, ERR_HYBRID, int(stats[STAT_BAD])
        else:
            # the equal M-orthogonal projection: p = M qd is kept on the new active
            # joints, qd_new = M_NN^-1 p_N by one hybrid solve at rest without gravity;
            # p_N from the transient reduced tree (O(N_T)), the solve on the new one. The
            # same (linear) projection of qddT with ``split`` (see
            # _rigidification_impulses): its momentum into ``base`` (qddT in place of qd
            # for the pass), a second solve
            reduced_momentum(bkp, rp, new, save)              # p_N into ``save``
            if split:
                _swap_active(qd, qddT, ajoints, counts[N_AJOINTS], vadr, jnv)
                reduced_momentum(bkp, rp, new, base)
                _swap_active(qd, qddT, ajoints, counts[N_AJOINTS], vadr, jnv)
            _rigidify(rigid, nrig, active, c, c_al, seeds, node_of_joint, upd, bk.epoch,
                  moved)
            prepare_region(active, prep, bk)     # of the new region: step 5 needs none
            projected = True
            g0, g1, g2 = gravity[0], gravity[1], gravity[2]
            gravity[0] = gravity[1] = gravity[2] = 0.0
            for u in range(counts[N_AJOINTS]):
                J = ajoints[u]
                for r in range(jnv[J]):
                    k = vadr[J] + r
                    x_k = tau[k]
                    tau[k] = save[k]
                    save[k] = x_k                              # save <-> tau
                    qd[k] = 0.0
            world_frames(bkp, hp)                             # the new front's
            reduced_dynamics(bkp, 0, bodies, f_ext, hp.pose, rp, stats, True)
            for u in range(counts[N_AJOINTS]):
                J = ajoints[u]
                for r in range(jnv[J]):
                    k = vadr[J] + r
                    tau[k] = base[k] if split else save[k]
                    base[k] = qdd[k]                           # qd_new, kept in ``base``
            if split and stats[STAT_BAD] < 0:
                reduced_dynamics(bkp, 0, bodies, f_ext, hp.pose, rp, stats, True)
            gravity[0], gravity[1], gravity[2] = g0, g1, g2
            for u in range(counts[N_AJOINTS]):
                J = ajoints[u]
                for r in range(jnv[J]):
                    k = vadr[J] + r
                    tau[k] = save[k]
                    qd[k] = base[k]
                    if split:
                        qddT[k] = qdd[k]
            if stats[STAT_BAD] >= 0:
                return nU, nrig, nreg, n_eval, 0, ERR_HYBRID, int(stats[STAT_BAD])
        for k in range(nrig):
            j = rigid[k]
            for r in range(jnv[j]):
                qd[vadr[j] + r] = 0.0
                qddT[vadr[j] + r] = 0.0
    # ---- 5. new hybrid state. The traversal may also take joints of the transient rigid
    # front (V = 0, RGL Sec. 5.4.1: the nodes traversed become the new active region); they
    # join with zero velocity, and the bookkeeping must include them
    added = False
    for j in range(nb):
        if new[j] and not active[j]:
            added = True
            for r in range(jnv[j]):
                qddT[vadr[j] + r] = 0.0
        active[j] = new[j]
    if nrig and not projected:
        _rigidify(rigid, nrig, active, c, c_al, seeds, node_of_joint, upd, bk.epoch,
                  moved)
    # tensors change only where the configuration did (joints active before this update)
    # or where the joint forces did (stale); a node of the update region that is
    # rigidified again keeps its tensors
    nt = 0
    for k in range(nrig + n_tau):
        if k < nrig:
            if not moved[rigid[k]]:
                continue
            i = node_of_joint[rigid[k]]
        else:
            i = stale[k - nrig]
            J = node_joint[i]
            if J < 0 or new[J]:
                continue
        if node_parent[i] < 0 or in_region[i]:
            continue                          # root nodes are never tensorized
        in_region[i] = True
        dirty[nt] = i
        nt += 1
    _heapsort(dirty, nt)
    for k in range(nt):
        i = dirty[k]
        in_region[i] = False
        J = node_joint[i]
        for r in range(jnv[J]):
            tau_T[vadr[J] + r] = tau[vadr[J] + r]
    if nt:
        tensorize_nodes(dirty, nt, fupd, fsolve.passive, tens)
    if (nrig and not projected) or added:
        prepare_region(active, prep, bk)
        world_frames(bkp, hp)
    return nU, nrig, nreg, n_eval, nt, 0, -1


@njit(**KERNEL)
def region_update(h, crit, bodies, args, red, ra):
    """:func:`~articulated.algorithms.hybrid.hybrid_kinematics` at the solver's state,
    then :func:`region_update_kernel`, with the hybrid-step bundle ``args`` (a
    :class:`~articulated.algorithms.bundles.HybridArgs`) and the reduced tree's buffers
    ``red`` (for callers in Python)."""
    hp = byref_each(args)
    hybrid_kinematics(byref(ra.bk), hp)
    return region_update_kernel(h, crit, bodies, hp, byref(red), ra, False)
