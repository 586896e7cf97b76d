# gdb_count.py — count the machine instructions one call of a function executes, by single
# stepping under gdb (this machine is a virtual one without hardware counters, and valgrind
# cannot run AVX-512 code).  Used by bench/devs_throughput.sh for instructions per update.
#   COUNT_FUNC=name gdb -batch -x bench/gdb_count.py --args PROGRAM ARGS...
# Runs PROGRAM to the first call of COUNT_FUNC, steps until that call returns (callees
# included) and prints one line: GDB_COUNT {"function": ..., "instructions": n, "by_kind":
# {...}} where a kind is the widest vector register an instruction names (zmm, ymm, xmm),
# k-mask, or scalar; multiplications on vector registers are counted apart (*-mul).
import collections
import json
import os

import gdb

func = os.environ["COUNT_FUNC"]
gdb.execute("set pagination off")
gdb.execute("set confirm off")
gdb.execute("break " + func, to_string=True)
gdb.execute("run", to_string=True)
frame = gdb.selected_frame()
sp0 = int(gdb.parse_and_eval("$sp"))
ret = int(frame.older().pc())
arch = frame.architecture()
kinds, kind_at = collections.Counter(), {}
count = 0
while True:
    pc = int(gdb.parse_and_eval("$pc"))
    if pc == ret and int(gdb.parse_and_eval("$sp")) > sp0:
        break
    if pc not in kind_at:
        asm = arch.disassemble(pc)[0]["asm"]
        kind = next((r for r in ("zmm", "ymm", "xmm") if "%" + r in asm), None)
        if kind is None:
            kind = "k-mask" if "%k" in asm else "scalar"
        elif "mul" in asm.split()[0]:
            kind += "-mul"
        kind_at[pc] = kind
    kinds[kind_at[pc]] += 1
    count += 1
    gdb.execute("stepi", to_string=True)
print("GDB_COUNT " + json.dumps({"function": func, "instructions": count, "by_kind": kinds}))
gdb.execute("kill", to_string=True)
