#!/usr/bin/python3
"""layers.py — the rooms of src/ (src/CMakeLists.txt, docs/ARCHITECTURE.md) hold.

  layers.py [--cc CC --path TARGET=DIR:DIR... ...]

1. Every #include "..." in src/<room>/ names a header of that room or a lower one (in the
   order of TWOFOLD_ROOMS in src/CMakeLists.txt) or a public header of include/; kernels/
   include only twofold/... of include/ (built-in models are written like plugins); jobs/
   reach no room above run; include/ reaches nothing of src/.  No file lies loose in src/,
   and no header name is in two rooms (the includes name headers without their room).
2. With --cc and --path (the include directories each target is built with, given by CTest
   from the build): a header of a higher room is not found on a room's path, every lower one
   is; kernels find none, jobs none above run.  So an upward include fails the build itself.
3. The check of 1 finds the violations planted in a small tree of its own (it can fail).
Exit status 0 only if all hold.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
SOURCE = re.compile(r"\.(c|h)(\.in)?$")
JOBS_SEE_UP_TO = "run"


def rooms_of(root):
    """The rooms, lowest first, as src/CMakeLists.txt builds them."""
    text = open(os.path.join(root, "src", "CMakeLists.txt")).read()
    m = re.search(r"set\(TWOFOLD_ROOMS\s+([^)]*)\)", text)
    return m.group(1).split()


def header_name(file):
    """The name a file is included by: a template (version.h.in) by what it generates."""
    return file[:-3] if file.endswith(".in") else file


def quoted_includes(path):
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if m:
                yield number, m.group(1)


def public(root, name):
    base = os.path.join(root, "include", name)
    return os.path.isfile(base) or os.path.isfile(base + ".in")


def index_rooms(root, rooms, problems):
    """header name -> room; loose files and names in two rooms are problems."""
    src = os.path.join(root, "src")
    room_of = {}
    for entry in sorted(os.listdir(src)):
        if os.path.isfile(os.path.join(src, entry)) and entry != "CMakeLists.txt":
            problems.append(f"src/{entry}: not in a room (src/<room>/, rooms {' '.join(rooms)})")
        elif os.path.isdir(os.path.join(src, entry)) and entry not in rooms:
            problems.append(f"src/{entry}/: not a room of src/CMakeLists.txt")
    for room in rooms:
        for file in sorted(os.listdir(os.path.join(src, room))):
            if not SOURCE.search(file):
                continue
            name = header_name(file)
            if name in room_of:
                problems.append(f"src/{room}/{file}: {name} is also in src/{room_of[name]}/")
            room_of[name] = room
    return room_of


def check_tree(root):
    """Every include of src/, kernels/, jobs/ and include/ against the rooms; the problems."""
    problems = []
    rooms = rooms_of(root)
    rank = {room: i for i, room in enumerate(rooms)}
    room_of = index_rooms(root, rooms, problems)

    def files(folder, pattern):
        top = os.path.join(root, folder)
        for dirpath, _, names in sorted(os.walk(top)):
            for name in sorted(names):
                if re.search(pattern, name):
                    path = os.path.join(dirpath, name)
                    yield path, os.path.relpath(path, root)

    for room in rooms:
        for path, rel in files(os.path.join("src", room), r"\.(c|h)(\.in)?$"):
            for line, name in quoted_includes(path):
                if name in room_of:
                    if rank[room_of[name]] > rank[room]:
                        problems.append(f"{rel}:{line}: includes {name} of room "
                                        f"{room_of[name]}, above {room}")
                elif not public(root, name):
                    problems.append(f"{rel}:{line}: {name} is in no room and not in include/")
    for path, rel in files("kernels", r"\.(c|h)$"):
        for line, name in quoted_includes(path):
            if not (name.startswith("twofold/") and public(root, name)):
                problems.append(f"{rel}:{line}: includes {name}; a kernel sees include/twofold/ "
                                "only, like a plugin")
    for path, rel in files("jobs", r"\.(c|h)$"):
        for line, name in quoted_includes(path):
            beside = os.path.isfile(os.path.join(os.path.dirname(path), name))
            if name in room_of:
                if rank[room_of[name]] > rank[JOBS_SEE_UP_TO]:
                    problems.append(f"{rel}:{line}: includes {name} of room {room_of[name]}, "
                                    f"above {JOBS_SEE_UP_TO} (jobs are glue below the executable)")
            elif not (beside or public(root, name)):
                problems.append(f"{rel}:{line}: {name} is in no room, not beside it and not in "
                                "include/")
    for path, rel in files("include", r"\.h(\.in)?$"):
        for line, name in quoted_includes(path):
            if not public(root, name):
                problems.append(f"{rel}:{line}: a public header includes {name}, not public")
    return problems


def probe_paths(cc, paths, root, work):
    """For each target's include path: which rooms' headers the compiler finds.  One ordinary
    header and every generated one per room; the problems."""
    rooms = rooms_of(root)
    rank = {room: i for i, room in enumerate(rooms)}
    probes = []
    for room in rooms:
        files = sorted(f for f in os.listdir(os.path.join(root, "src", room))
                       if f.endswith(".h") or f.endswith(".h.in"))
        plain = [f for f in files if f.endswith(".h")][:1]
        probes += [(room, header_name(f)) for f in plain + [f for f in files if f.endswith(".in")]]
    visible_rank = {"kernels": -1, "jobs": rank[JOBS_SEE_UP_TO], **rank}
    problems = []
    source = "".join(f'#include "{header}"\n' for _, header in probes)
    for target, dirs in paths:
        flags = [f"-I{d}" for d in dirs.split(":") if d]
        # the dependencies of all probes at once: -MG lists a header it cannot find by its
        # bare name instead of failing, one it finds by its path
        res = subprocess.run([cc, "-MM", "-MG", "-x", "c", "-", *flags], input=source,
                             capture_output=True, text=True, cwd=work)
        if res.returncode != 0:
            problems.append(f"{cc} -MM for {target} failed: {res.stderr.strip()}")
            continue
        deps = res.stdout.replace("\\\n", " ").split()
        for room, header in probes:
            found = any(d.endswith("/" + header) for d in deps)
            expected = rank[room] <= visible_rank[target]
            if found != expected:
                problems.append(f"the include path of {target} {'finds' if found else 'misses'} "
                                f"{header} (room {room})")
        print(f"{target}: {len(probes)} headers probed")
    return problems


def self_test():
    """A tree with one violation of each kind: each must be reported, and nothing else."""
    with tempfile.TemporaryDirectory() as root:
        def put(rel, text=""):
            os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
            with open(os.path.join(root, rel), "w") as f:
                f.write(text)
        put("src/CMakeLists.txt", "set(TWOFOLD_ROOMS base run app)\n")
        put("include/twofold/model.h")
        put("src/base/low.h", '#include "twofold/model.h"\n')
        put("src/base/low.c", '#include "low.h"\n#include "high.h"\n')  # upward
        put("src/base/lost.c", '#include "nowhere.h"\n')  # unknown
        put("src/run/high.h", '#include "low.h"\n')
        put("src/run/gen.h.in")
        put("src/app/top.h", '#include "gen.h"\n')
        put("src/app/gen.h")  # a name in two rooms
        put("src/loose.c")  # not in a room
        put("kernels/k.c", '#include "twofold/model.h"\n#include "low.h"\n')  # kernel sees src
        put("jobs/j.c", '#include "high.h"\n#include "top.h"\n')  # job sees the executable's
        put("include/twofold/twofold.h", '#include "low.h"\n')  # public includes private
        found = check_tree(root)
    expected = ["src/loose.c", "src/app/gen.h: gen.h is also in src/run/",
                "src/base/low.c:2: includes high.h of room run, above base",
                "src/base/lost.c:1: nowhere.h is in no room", "kernels/k.c:2: includes low.h",
                "jobs/j.c:2: includes top.h of room app, above run",
                "include/twofold/twofold.h:1: a public header includes low.h"]
    missed = [e for e in expected if not any(p.startswith(e) for p in found)]
    extra = [p for p in found if not any(p.startswith(e) for e in expected)]
    for m in missed:
        print(f"self-test: not reported: {m}")
    for x in extra:
        print(f"self-test: reported wrongly: {x}")
    return not missed and not extra


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cc")
    ap.add_argument("--path", action="append", default=[], metavar="TARGET=DIR:DIR")
    args = ap.parse_args()
    ok = self_test()
    print("self-test " + ("passed" if ok else "FAILED"))
    problems = check_tree(REPO)
    if args.cc:
        work = os.environ.get("WORK") or tempfile.mkdtemp()
        os.makedirs(work, exist_ok=True)
        problems += probe_paths(args.cc, [p.split("=", 1) for p in args.path], REPO, work)
    for p in problems:
        print(p)
    rooms = rooms_of(REPO)
    print(f"rooms {' < '.join(rooms)}: {len(problems)} problem(s)")
    return 0 if ok and not problems else 1


if __name__ == "__main__":
    sys.exit(main())
