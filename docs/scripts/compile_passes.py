"""Where a subsystem's compile time goes: ``NUMBA_LLVM_PASS_TIMINGS=1 NUMBA_CACHE_DIR=DIR
python docs/scripts/compile_passes.py SUBSYSTEM [TOP]`` runs the workload of
``articulated compile SUBSYSTEM`` (cold for the kernels ``DIR`` does not hold) and prints
each kernel's own compile time (numba's ``numba:compile`` events, callees left out), then
for the ``TOP`` slowest kernels numba's pipeline times (typing, lowering) and LLVM's
(per-function passes, module passes, machine code), each with its slowest passes."""
import gc
import sys

from numba.core.registry import CPUDispatcher

from articulated.precompile import _run

name = sys.argv[1]
top = int(sys.argv[2]) if len(sys.argv) > 2 else 3
_, seconds, rows = _run(name, True)
rows.sort(key=lambda r: -r[1])
print(f"{name}: {seconds:.1f} s wall, {sum(r[1] for r in rows):.1f} s compiling, "
      f"{len(rows)} versions")
for kernel, own, _ in rows[:20]:
    print(f"{own:8.1f} s  {kernel}")
want = {k for k, _, _ in rows[:top]}
for obj in gc.get_objects():
    if not isinstance(obj, CPUDispatcher):
        continue
    fn = obj.py_func
    kernel = f"{fn.__module__}.{fn.__qualname__}"
    if kernel not in want:
        continue
    for cres in obj.overloads.values():
        md = cres.metadata or {}
        print(f"== {kernel}")
        for pipe, passes in md.get("pipeline_times", {}).items():
            slow = sorted(((v.run, k.split("_")[-1]) for k, v in passes.items()), reverse=True)
            print(f"   numba {pipe}: " + ", ".join(f"{k} {t:.1f} s" for t, k in slow[:4]))
        for rec in md.get("llvm_pass_timings") or ():
            total = rec.timings.get_total_time()
            if total >= 1.0:
                print(f"   {total:7.1f} s  {rec.name[:70]}")
                for p in rec.timings.list_top(2):
                    print(f"              {p.wall_time:7.1f} s  {p.pass_name}")
