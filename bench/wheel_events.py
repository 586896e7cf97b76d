"""wheel_events.py — shared helpers of the wheel benchmarks (bench/wheel_scipy.py,
bench/wheel_compare.py, bench/work_precision.py): read the engine's continuation points and
event log from a results file, and compare event sequences.

  python3 bench/wheel_events.py compare ENGINE.h5 EVENTS.txt [N]   -> one JSON line

EVENTS.txt holds one event per line: "member t kind from to" (kind numbers as the engine's:
0 crossing, 1 slide_start, 2 slide_end, 3 twofold, 4 exit; modes -1 slip-, 0 sliding,
1 slip+).

Two comparisons: `raw` matches the logged event sequences one for one (kinds must agree);
`collapsed` first merges bursts of events closer than BURST (1e-4) time units into one
transition (time of the first, mode before the first -> mode after the last; a burst that
returns to its starting mode is dropped).  Bursts are the micro-chatter of a trajectory that
meets Sigma next to a fold line, where crossing and sliding are decided by the sign of a
tangency of size ~1e-10: their number depends on round-off, their net effect does not."""
import json
import math
import os
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "postproc"))
from results_layout import names_attr  # noqa: E402  (both layouts of the results file)

KINDS = ["crossing", "slide_start", "slide_end", "twofold", "exit"]


def load_engine(path, members=None):
    """(params, exits, events): params dict from /model attributes; exits[m] the list of
    (t, u, side, r, v, omega) slots of member m (slot 0 its start); events[m] the list of
    (t, kind) of its logged events."""
    with h5py.File(path, "r") as f:
        params = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in f["model"].attrs.items()}
        ex = f["members/exits"][()]
        ev = f["members/event_log"][()]
        ew = int(f["members/exits"].attrs["slot_width"])
        lw = int(f["members/event_log"].attrs["slot_width"])
        names = names_attr(f["members/exits"], "fields")
    pick = [names.index(k) for k in ("t", "u", "side", "r", "v", "omega")]  # the file's layout
    n = ex.shape[0] if members is None else min(members, ex.shape[0])
    exits, events = [], []
    for m in range(n):
        slots = ex[m].reshape(-1, ew)
        exits.append([tuple(float(s[i]) for i in pick) for s in slots if not math.isnan(s[0])])
        log = ev[m].reshape(-1, lw)
        events.append([(float(s[0]), int(s[1]), int(s[2]), int(s[3])) for s in log
                       if not math.isnan(s[0])])
    return params, exits, events



def first_full_stick(path):
    """Earliest logged arrival at the wheel's full stick (an intersection event of the engine's
    event log: rest, pass, choice, undefined or slide) over the members, or inf.  The scipy
    and CVODE drivers replay the engine's two-fold exits but have no treatment of full stick
    (they would cross it by rounding, where the engine follows the extended Filippov verdict),
    so a comparison window must end before it."""
    with h5py.File(path, "r") as f:
        d = f["members/event_log"]
        kinds, fields = names_attr(d, "kinds"), names_attr(d, "fields")
        lw, log = int(d.attrs["slot_width"]), d[()]
    codes = [i for i, k in enumerate(kinds) if k.startswith("intersection")]
    slots = log.reshape(-1, lw)
    t, kind = slots[:, fields.index("t")], slots[:, fields.index("kind")]
    hit = ~np.isnan(t) & np.isin(kind, codes)
    return float(t[hit].min()) if hit.any() else math.inf


def require_window_before_full_stick(path, t_end, who):
    """Exits with a clear message when the window [0, t_end] reaches full stick."""
    first = first_full_stick(path)
    if first <= t_end:
        raise SystemExit(f"{who}: the window t = 0..{t_end:g} reaches the wheel's full stick (first "
                         f"arrival at t = {first:.4f}), which the scipy and CVODE drivers do not treat; "
                         f"choose --t-end below it")
    return first


BURST = 1e-4


def collapse(events, burst=BURST):
    """Merges bursts of events closer than `burst` into net transitions (t, from, to)."""
    out = []
    i = 0
    while i < len(events):
        j = i
        while j + 1 < len(events) and events[j + 1][0] - events[j][0] < burst:
            j += 1
        t, frm, to = events[i][0], events[i][2], events[j][3]
        if frm != to or any(e[1] in (3, 4) for e in events[i:j + 1]):
            out.append((t, frm, to))
        i = j + 1
    return out


def _match(a, b, key, first_n):
    worst, matched, diverged, worst_member, per_member = 0.0, 0, 0, -1, []
    for m, (x, y) in enumerate(zip(a, b)):
        n = min(len(x), len(y))
        if first_n is not None:
            n = min(n, first_n)
        mm = 0.0
        for i in range(n):
            if key(x[i]) != key(y[i]):
                diverged += 1
                break
            mm = max(mm, abs(x[i][0] - y[i][0]))
            matched += 1
        per_member.append(mm)
        if mm > worst:
            worst, worst_member = mm, m
    return {"max_event_dt": worst,
            "median_member_max_dt": float(np.median(per_member)) if per_member else 0.0,
            "matched_events": matched, "diverged_members": diverged, "worst_member": worst_member,
            "per_member": per_member}


def compare(engine_events, other_events, first_n=None, burst=BURST):
    """Event-time agreement of two sets of per-member event lists (t, kind, from, to), in
    order, over the first `first_n` events of each member (all if None) and up to the first
    event where the two disagree on what happened.  Returns the collapsed comparison's
    numbers at the top level and the raw one under "raw"."""
    raw = _match(engine_events, other_events, lambda e: e[1], first_n)
    ca = [collapse(e, burst) for e in engine_events]
    cb = [collapse(e, burst) for e in other_events]
    col = _match(ca, cb, lambda e: (e[1], e[2]), first_n)
    return {**col, "compared_first_n": first_n, "burst": burst, "raw": raw}


def read_event_text(path, members):
    events = [[] for _ in range(members)]
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) < 3:
                continue
            m = int(p[0])
            if m < members:
                events[m].append((float(p[1]), int(p[2]), int(p[3]), int(p[4])))
    return events


if __name__ == "__main__":
    if len(sys.argv) < 4 or sys.argv[1] != "compare":
        sys.exit(__doc__)
    _, exits, eng = load_engine(sys.argv[2])
    other = read_event_text(sys.argv[3], len(eng))
    n = int(sys.argv[4]) if len(sys.argv) > 4 else None
    print(json.dumps(compare(eng, other, n)))
