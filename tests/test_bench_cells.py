"""The paper grids on Dask (issue 24, item 4): the cells of RGL Table 1 (``bench adaptive
--table1``) and RL Table 1 / Fig. 5 (``bench quasistatics``) run on a LocalCluster of two
single-threaded workers give the serial run's table values, the non-timing columns (active
joints, errors against the full DCA, joints and nodes computed, bounds) exactly; a worker
with two threads is refused before any cell runs."""

from __future__ import annotations

import numpy as np
import pytest

distributed = pytest.importorskip("distributed", reason="Dask distributed (test extra)")


def test_adaptive_table1_cells_on_two_workers_equal_serial(client):
    from articulated.bench.adaptive import bench_table1

    kw = dict(n=12, steps=41, na_values=(1, 4, 12), nf_values=(1, 3), log=lambda *a: None)
    serial = bench_table1(**kw)
    dist = bench_table1(**kw, client=client)
    for rs, rd in zip(serial["rows"], dist["rows"], strict=True):
        assert rs["nf"] == rd["nf"]
        assert rd["dca"] > 0 and rd["aba"] > 0
        for cs, cd in zip(rs["cells"], rd["cells"], strict=True):
            assert (cs["na"], cs["active"], cs["updates"]) == (cd["na"], cd["active"],
                                                              cd["updates"])
            assert 1 <= cd["active"] <= cd["na"]
            assert cd["mean"] > 0 and cd["hybrid"] > 0
        # N_A = n: every joint active, the same dynamics as the full DCA run (RGL sec. 4)
        full_s, full_d = rs["cells"][-1], rd["cells"][-1]
        assert full_d["err_full"] == full_s["err_full"] and full_d["err_full"] < 1e-9


def test_quasistatics_table1_and_millipede_cells_on_two_workers_equal_serial(client):
    from articulated import models
    from articulated.bench.quasistatics import bench_millipede, bench_table1

    mol = models.molecule(300, seed=0, gravity=(0.0, 0.0, 0.0))
    kw = dict(nf_values=(1, 10), eps_values=(2.0 ** -3, 2.0 ** -11), log=lambda *a: None)
    serial = bench_table1(mol, "molecule-300", 4, **kw)
    dist = bench_table1(mol, "molecule-300", 4, **kw, client=client)
    keys = ("joints", "nodes", "bound", "lower", "e_f", "e_max", "e_ideal")
    for rs, rd in zip(serial["rows"], dist["rows"], strict=True):
        assert (rs["nf"], rs["dt"]) == (rd["nf"], rd["dt"])
        assert rs["dca"]["joints"] == rd["dca"]["joints"] == mol.nb   # the DCA: every joint
        for a, b in zip(rs["adaptive"], rd["adaptive"], strict=True):
            assert [a[k] for k in keys] == [b[k] for k in keys]
            assert b["lower"] <= b["joints"] <= mol.nb
    # the tighter bound computes more joints and errs less (RL Table 1's trend)
    for r in dist["rows"]:
        coarse, fine = r["adaptive"]
        assert fine["joints"] >= coarse["joints"] and fine["e_f"] <= coarse["e_f"]
    ms = bench_millipede(True, 3, eps_values=(2.0 ** -2, 2.0 ** -10), log=lambda *a: None)
    md = bench_millipede(True, 3, eps_values=(2.0 ** -2, 2.0 ** -10), log=lambda *a: None,
                         client=client)
    assert [[r[k] for k in keys] for r in ms["rows"]] == [[r[k] for k in keys]
                                                          for r in md["rows"]]


def test_workers_with_two_threads_are_refused():
    from articulated.sweep import map_cells

    ran = []
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as c:
        with pytest.raises(ValueError, match="--nthreads 1"):
            map_cells(ran.append, [(1,), (2,)], client=c)
    assert ran == []
    # serial: in order, here
    assert map_cells(np.add, [(1, 2), (3, 4)], common=()) == [3, 7]


def test_a_pickled_model_computes_as_the_original():
    """A model is sent to the workers pickled after the calling process used it: its cached
    workspace (one buffer that every field views) must not travel, split into copies, or the
    DCA quasi-statics differ (they did, by 3e-6 rad after 4 steps of molecule-300)."""
    import copy
    import pickle

    from articulated import models
    from articulated.bench.quasistatics import initial_solution, random_forces, simulate

    mol = models.molecule(300, seed=0, gravity=(0.0, 0.0, 0.0))
    q0, forces = mol.neutral(), random_forces(mol, 1, 0)
    initial_solution(mol, q0, forces, repeats=1)           # fills the workspace cache
    ref = simulate(mol, q0, forces, 0.0123, 4, "quasistatic")["q"]
    for m in (pickle.loads(pickle.dumps(mol)), copy.deepcopy(mol)):
        assert np.array_equal(simulate(m, q0, forces, 0.0123, 4, "quasistatic")["q"], ref)
