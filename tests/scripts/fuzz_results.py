"""fuzz_results.py — a damaged or hostile results file never crashes twofold.

A seeded generator mutates two real results files (a complete part of a split run, and an
interrupted one): bit flips anywhere, bit flips and zeroed bytes inside HDF5's metadata (the
superblock, object headers, B-trees, local and global heaps: where a flip is read, not just
copied), truncations, zeroed blocks; and three mutants aimed at the stored config's string
in the global heap, which HDF5 1.10 follows unchecked, and one at an attribute message's
stored lengths, which it decodes unchecked (crafted()).  Every mutant goes through
  - `twofold info M.h5 --config`;
  - `twofold merge OUT.h5 M.h5 P1.h5` (the mutant is part 0, P1.h5 the intact part 1);
  - `twofold run smoke.yaml --part 0/2 -o M.h5 --resume` (on a copy).
Asserted for each command:
  - the exit status is one `twofold --help` documents for it: 0 or 2 (bad input) for info,
    which only reads; 0, 1 or 2 for merge and --resume, which also meet damage in the data
    while they run (1: "'F.h5' is damaged beyond repair", a dataset that cannot be opened);
    never a signal, never a sanitizer report (.ci/run runs this on the ASan + UBSan build),
    never a hang (each command has a generous timeout that only a hang reaches);
  - an error names the file;
  - the four aimed mutants are refused by all three commands (exit 2);
  - a refused merge leaves no output file behind.
Environment: TWOFOLD, CONFIGS, WORK as for every script test; FUZZ_H5_COUNT random mutants
besides the four aimed ones (default 30: under a minute; .ci/run runs 400 on the sanitizer
build), FUZZ_H5_SEED (default 1), FUZZ_H5_JOBS mutants at a time (default 2),
FUZZ_H5_TIMEOUT seconds per command (default 300)."""
import concurrent.futures
import os
import random
import re
import shutil
import signal
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
import h5py  # noqa: E402
import testlib  # noqa: E402

COUNT = int(os.environ.get("FUZZ_H5_COUNT", "30"))
SEED = int(os.environ.get("FUZZ_H5_SEED", "1"))
JOBS = int(os.environ.get("FUZZ_H5_JOBS", "2"))
TIMEOUT = float(os.environ.get("FUZZ_H5_TIMEOUT", "300"))
SANITIZER = re.compile(r"AddressSanitizer|UndefinedBehaviorSanitizer|runtime error:|LeakSanitizer")
# `info` only reads: a damaged file is bad input (2).  merge and --resume also meet damage in
# the data while running, which ends as a runtime error (1) or, where rewriting the damaged
# chunks fails, as an output that cannot be written (6: "'F.h5' is damaged beyond repair"),
# naming the file.
INFO_EXITS, RUN_EXITS = (0, 2), (0, 1, 2, 6)
SMALL = ["--set", "ensemble.members=40", "--set", "integrator.t_end=0.2"]
# HDF5's metadata structures begin with these signatures (the file format specification);
# the version-0 superblock and the root group's object header are the first bytes.
SIGNATURES = [b"GCOL", b"TREE", b"HEAP", b"SNOD", b"OHDR", b"OCHK", b"BTHD", b"BTLF",
              b"FRHP", b"FHDB", b"FHIB", b"FSHD", b"FSSE", b"\x89HDF"]


def metadata_offsets(data):
    """Where HDF5 metadata structures start in `data` (and the first KiB: the superblock and
    the root object header)."""
    starts = {0}
    for sig in SIGNATURES:
        at = data.find(sig)
        while at >= 0:
            starts.add(at)
            at = data.find(sig, at + 1)
    return sorted(starts)


def mutate(rng, data):
    """One mutant of `data`: (bytes, kind)."""
    b = bytearray(data)
    meta = metadata_offsets(data)
    kind = rng.choice(["flip", "flip", "flip-meta", "flip-meta", "flip-meta", "zero",
                       "zero-meta", "truncate"])
    if kind == "flip":
        for _ in range(rng.randint(1, 8)):
            b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
    elif kind == "flip-meta":
        for _ in range(rng.randint(1, 4)):
            at = min(rng.choice(meta) + rng.randrange(512), len(b) - 1)
            b[at] ^= 1 << rng.randrange(8)
    elif kind == "zero":
        at, n = rng.randrange(len(b)), rng.randint(1, 1024)
        b[at:at + n] = bytes(len(b[at:at + n]))
    elif kind == "zero-meta":
        at, n = min(rng.choice(meta) + rng.randrange(512), len(b) - 1), rng.randint(1, 16)
        b[at:at + n] = bytes(len(b[at:at + n]))
    else:
        del b[rng.randrange(len(b)):]
    return bytes(b), kind


def heap_objects(data):
    """(offset, index, size) of every object of the first global heap collection in `data`,
    parsed here from the file format specification ("Global Heap": a 16-byte header, then
    objects of a 16-byte header (index, references, reserved, size) and data padded to 8)."""
    start = data.index(b"GCOL")
    size = int.from_bytes(data[start + 8:start + 16], "little")
    at, found = start + 16, []
    while at + 16 <= start + size:
        index = int.from_bytes(data[at:at + 2], "little")
        length = int.from_bytes(data[at + 8:at + 16], "little")
        if index == 0:
            break
        found.append((at, index, length))
        at += 16 + (length + 7) // 8 * 8
    return found


def crafted(data, config):
    """Mutants aimed at the string of the stored config, as HDF5 1.10 reads it unchecked: its
    heap object's size grown past the collection (H5HG_read copies that many bytes), shrunk
    to 0 in a free-space header (the collection's parse never ends), and its index pointing
    past the collection's objects."""
    at = next(o for o, _, n in heap_objects(data) if n == len(config.encode()))
    grown = bytearray(data)
    grown[at + 8:at + 16] = (1 << 40).to_bytes(8, "little")
    looping = bytearray(data)
    looping[at:at + 2] = bytes(2)
    looping[at + 8:at + 16] = bytes(8)
    # the attribute's stored reference: length, the collection's address, the object's index
    gcol = data.index(b"GCOL")
    index = int.from_bytes(data[at:at + 2], "little")
    ref = len(config.encode()).to_bytes(4, "little") + gcol.to_bytes(8, "little") + \
        index.to_bytes(4, "little")
    far = bytearray(data)
    where = data.index(ref)
    far[where + 12:where + 16] = (4000).to_bytes(4, "little")
    # an attribute message (version 1: version, reserved, then the 2-byte lengths of name,
    # datatype and dataspace, the name after them) whose dataspace length is grown past the
    # message: HDF5 1.10 decodes it unchecked when any attribute of /model is looked up
    spread = bytearray(data)
    name = re.search(rb"\x01\x00\x05\x00(..)(..)name\x00", data, re.S)
    spread[name.start(2):name.start(2) + 2] = (0x0808).to_bytes(2, "little")
    return [(bytes(grown), "heap-size"), (bytes(looping), "heap-loop"),
            (bytes(far), "heap-index"), (bytes(spread), "attribute-size")]


def command(args, cwd):
    """(exit status, stderr) of one command; status None if it did not end in TIMEOUT."""
    try:
        res = subprocess.run(args, cwd=cwd, capture_output=True, text=True, errors="replace",
                             timeout=TIMEOUT)
        return res.returncode, res.stderr
    except subprocess.TimeoutExpired:
        return None, ""


def describe(rc):
    if rc is None:
        return f"no end within {TIMEOUT:.0f} s (a hang)"
    if rc < 0:
        return f"signal {signal.Signals(-rc).name}"
    return f"exit {rc}"


def judge(what, rc, err, name, allowed):
    """None if the command ended acceptably, else the failure."""
    if rc is None or rc < 0 or SANITIZER.search(err):
        return f"{what} crashed ({describe(rc)}): {err[-1500:]!r}"
    if rc not in allowed:
        return f"{what}: {describe(rc)} for a damaged input ({allowed} expected): {err[-600:]!r}"
    if rc != 0 and name not in err:
        return f"{what}: the error does not name '{name}': {err[-600:]!r}"
    return None


def try_mutant(i, name, kind, smoke):
    """Runs the three commands on one mutant in its own directory; the failures found."""
    d = os.path.abspath(f"m{i:04d}")
    found = []
    rc, err = command([testlib.TWOFOLD, "info", name, "--config"], d)
    found.append(judge("info", rc, err, name, INFO_EXITS))
    statuses = {"info": rc}
    rc, err = command([testlib.TWOFOLD, "merge", "out.h5", name, "../p1.h5"], d)
    found.append(judge("merge", rc, err, name, RUN_EXITS))
    statuses["merge"] = rc
    left = [f for f in os.listdir(d) if f.startswith("out.h5")]
    if rc != 0 and left:
        found.append(f"merge: {describe(rc)} but left {left}")
    shutil.copy(os.path.join(d, name), os.path.join(d, "r.h5"))
    rc, err = command([testlib.TWOFOLD, "run", smoke, "--part", "0/2", "-o", "r.h5", "--resume",
                       "--quiet", *SMALL], d)
    found.append(judge("run --resume", rc, err, "r.h5", RUN_EXITS))
    statuses["resume"] = rc
    return [f"{d}/{name} ({kind}): {f}" for f in found if f], statuses


def main():
    # .ci/run passes paths relative to the repository; setup() moves into WORK
    if os.sep in testlib.TWOFOLD:
        testlib.TWOFOLD = os.path.abspath(testlib.TWOFOLD)
    smoke = os.path.join(os.path.abspath(testlib.CONFIGS), "smoke.yaml")
    testlib.setup()
    base = [testlib.TWOFOLD, "run", smoke, "--quiet", *SMALL]
    for args in (["-o", "p0.h5", "--part", "0/2"], ["-o", "p1.h5", "--part", "1/2"],
                 ["-o", "i0.h5", "--part", "0/2", "--stop-after", "7"]):
        rc = subprocess.run(base + args, capture_output=True).returncode
        if rc not in (0, 3):
            testlib.check(False, f"the base file {args[1]} was not written (exit {rc})")
            testlib.finish()
    bases = {}
    for b in ("p0.h5", "i0.h5"):
        with open(b, "rb") as f:
            bases[b] = f.read()
    with h5py.File("p0.h5", "r") as f:
        config = f.attrs["config"]
    rng = random.Random(SEED)
    aimed = crafted(bases["p0.h5"], config)
    mutants = []
    for i in range(len(aimed) + COUNT):
        which = "p0.h5" if i < len(aimed) else rng.choice(sorted(bases))
        data, kind = aimed[i] if i < len(aimed) else mutate(rng, bases[which])
        name = f"{kind}-{which}"
        os.makedirs(f"m{i:04d}")
        with open(os.path.join(f"m{i:04d}", name), "wb") as f:
            f.write(data)
        mutants.append((i, name, kind))
    with concurrent.futures.ThreadPoolExecutor(max_workers=JOBS) as pool:
        results = list(pool.map(lambda m: try_mutant(*m, smoke), mutants))
    failed = 0
    for found, _ in results:
        failed += bool(found)
        for f in found:
            testlib.check(False, f)
    kinds = {k: sum(m[2] == k for m in mutants) for k in sorted({m[2] for m in mutants})}
    for i, (found, statuses) in enumerate(results[:len(aimed)]):
        testlib.check(statuses["info"] == 2 and statuses["merge"] == 2 and
                      statuses["resume"] == 2,
                      f"{mutants[i][1]}: refused by info, merge and --resume (exit 2): {statuses}")
    exits = {c: {describe(s): sum(r[1][c] == s for r in results)
                 for s in sorted({r[1][c] for r in results}, key=str)}
             for c in ("info", "merge", "resume")}
    testlib.check(not failed, f"{len(mutants)} mutated results files (seed {SEED}; {kinds}) through "
                  f"info, merge and --resume: {failed} failed; endings {exits}")
    testlib.finish()


if __name__ == "__main__":
    main()
