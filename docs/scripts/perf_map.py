"""Profile compiled kernels with Linux ``perf``: numba's machine code (fresh or loaded from
the on-disk cache) gets names in ``perf report``.

    perf record -F 4000 -o perf.data python docs/scripts/perf_map.py SCRIPT [ARGS...]
    python docs/scripts/perf_map.py --report perf.data [TOP]

The first form runs ``SCRIPT`` with a hook on numba's object code: every compiled or
cache-loaded library's ELF object is kept, and at exit its function symbols, placed at the
addresses the JIT linker gave them, are written to ``/tmp/perf-PID.map`` (the file ``perf``
reads for JIT code). The second prints each kernel's share of the samples that fell in
numba's code (self time, inlined helpers counted in their caller), named ``module.function``.
Needs ``pyelftools``."""
import atexit
import io
import os
import re
import runpy
import subprocess
import sys


def _install():
    from numba.core import codegen

    objs = []
    get = codegen.CPUCodeLibrary._object_getbuffer_hook.__func__
    done = codegen.CPUCodeLibrary._object_compiled_hook.__func__

    def get_hook(cls, ll_module):
        buf = get(cls, ll_module)
        if buf:
            objs.append(buf)
        return buf

    def done_hook(cls, ll_module, buf):
        done(cls, ll_module, buf)
        objs.append(buf)

    codegen.CPUCodeLibrary._object_getbuffer_hook = classmethod(get_hook)
    codegen.CPUCodeLibrary._object_compiled_hook = classmethod(done_hook)
    return objs


def _write_map(objs):
    from elftools.elf.elffile import ELFFile
    from numba.core.registry import cpu_target

    engine = cpu_target.target_context.codegen()._engine._ee
    lines = []
    for buf in objs:
        syms = [s for sec in ELFFile(io.BytesIO(buf)).iter_sections()
                if sec["sh_type"] == "SHT_SYMTAB" for s in sec.iter_symbols()
                if s["st_info"]["type"] == "STT_FUNC" and s["st_size"] > 0]
        base = {}
        for s in syms:                       # a global symbol places its section
            if s["st_info"]["bind"] == "STB_GLOBAL":
                a = engine.get_function_address(s.name)
                if a:
                    base.setdefault(s["st_shndx"], a - s["st_value"])
        lines += [f"{base[s['st_shndx']] + s['st_value']:x} {s['st_size']:x} {s.name}"
                  for s in syms if s["st_shndx"] in base]
    with open(f"/tmp/perf-{os.getpid()}.map", "w") as fh:
        fh.write("\n".join(lines) + "\n")


def _kernel_name(sym):
    """``module.function`` of a numba symbol (``_ZN<len><name>...``), else None."""
    if not sym.startswith("_ZN"):
        return None
    parts, i = [], 3
    while i < len(sym) and sym[i].isdigit():
        j = i
        while sym[j].isdigit():
            j += 1
        k = int(sym[i:j])
        parts.append(sym[j:j + k])
        i = j + k
    return ".".join(parts) or None


def report(data, top=30):
    out = subprocess.run(["perf", "report", "-i", data, "--no-children", "--sort", "symbol",
                          "-F", "overhead,sym"], capture_output=True, text=True).stdout
    share, total = {}, 0.0
    for line in out.splitlines():
        m = re.match(r"\s*([\d.]+)%\s+\[.\]\s+(\S+)", line)
        name = m and _kernel_name(m.group(2))
        if name:
            share[name] = share.get(name, 0.0) + float(m.group(1))
            total += float(m.group(1))
    print(f"compiled code: {total:.1f} % of all samples")
    for name, p in sorted(share.items(), key=lambda x: -x[1])[:top]:
        print(f"{100 * p / total:6.1f} %  {name}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--report"]:
        report(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 30)
    else:
        objects = _install()
        atexit.register(_write_map, objects)
        sys.argv = sys.argv[1:]
        runpy.run_path(sys.argv[0], run_name="__main__")
