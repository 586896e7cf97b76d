#!/usr/bin/python3
"""wheel_rule_recurrence.py — how many Fig. 5 wheel members return to the two-fold, as a
function of the rule that picks a departure from full stick (docs/WHEEL.md, "Recurrence is a
property of the rule").

    /usr/bin/python3 postproc/wheel_rule_recurrence.py --twofold build/twofold \\
        [--members 500] [--ranks 2] [--runs wheel-rule-runs] \\
        [--q 0 0.1 0.25 0.3333333333333333 0.5 0.75 1] [--rules uniform regularised] \\
        [--figure docs/wheel-rule-recurrence.png] [--json OUT.json]

Every rule runs configs/wheel-fig5.yaml (the paper's point, exits from the two-fold by
exit.policy uniform, t = 300) with --members members, changing only intersection.*:

  uniform       intersection.policy uniform: every admissible departure equally likely;
  regularised   intersection.policy regularised: the departure the smoothed wheel selects;
  q = ...       intersection.policy weighted with weights sliding q and slip-, slip+,
                escaping (1 - q)/3 each: at an arrival where the sliding departure (the
                sticking flow along Sigma, away from full stick) is admissible it is taken
                with probability q / (q + (1 - q)/3 * number of other admissible ones).

Per rule (postproc/wheel_recurrence.py, from /members/twofold_visits and complete logs; a
rule whose logs lost members says so): the fraction of members returning to the two-fold by
t = 300 with a 95 % Wilson interval, returns per member, the first-return distribution
(median, 5-95 %), arrivals at full stick per member and where the choices went.  Writes the
figure (fraction returning and returns per member against q, the first-return ECDFs) and
prints the Markdown table of docs/WHEEL.md.  A results file already in --runs from the same
command line is reused (its config attribute is compared); --fresh reruns everything.
A rule the engine does not know (twofold check refuses intersection.policy) is skipped with
a message."""
import argparse
import json
import os
import subprocess
import sys

import h5py
import numpy as np
from scipy.stats import binomtest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import wheel_recurrence  # noqa: E402
from filippov_logs import EnsembleLogs, return_spread, text_attr  # noqa: E402

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFIG = os.path.join(HERE, "configs", "wheel-fig5.yaml")
DEFAULT_Q = [0, 0.1, 0.25, 1 / 3, 0.5, 0.75, 1]
OTHER_KINDS = ("slip-", "slip+", "escaping")
# every draw and event of every member logged (the rule q = 0 draws up to about 460 times per
# member by t = 300), no trajectory samples
LOG_SETS = ["exit.max_logged=1000", "output.event_log=1000", "output.trajectory_samples=0"]


def weights_for(q):
    """The weighted rule of sliding weight q: the other kinds share 1 - q equally."""
    rest = (1 - q) / len(OTHER_KINDS)
    pairs = [("sliding", q)] + [(k, rest) for k in OTHER_KINDS]
    return "{" + ", ".join(f"{k}: {w:.17g}" for k, w in pairs) + "}"


def rules(qs, named):
    """(name, label, q or None, --set assignments) of every rule to run."""
    out = [(r, r, None, [f"intersection.policy={r}"]) for r in named]
    for q in qs:
        out.append((f"q{q:.4f}", f"q = {q:.3g}", q,
                    ["intersection.policy=weighted", f"intersection.weights={weights_for(q)}"]))
    return out


def mpi_env():
    env = dict(os.environ)
    if os.geteuid() == 0:
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    return env


def known(twofold, sets):
    """Whether the engine accepts these assignments (twofold check), and its message if not."""
    cmd = [twofold, "check", CONFIG] + [a for s in sets for a in ("--set", s)]
    res = subprocess.run(cmd, capture_output=True, text=True)
    return res.returncode == 0, (res.stderr or res.stdout).strip().splitlines()[-1:] or [""]


def config_of(path):
    with h5py.File(path, "r") as f:
        return text_attr(f, "config")


def run_rule(args, name, sets):
    """The rule's results file in --runs, run (or reused when its config is the one this
    command line gives); returns its path and the run's wall time (None when reused)."""
    out = os.path.join(args.runs, f"{name}.h5")
    sets = sets + LOG_SETS + [f"ensemble.members={args.members}"] + args.set
    want = subprocess.run([args.twofold, "check", CONFIG, "--print"]
                          + [a for s in sets for a in ("--set", s)],
                          capture_output=True, text=True).stdout
    want = "\n".join(line for line in want.splitlines() if not line.startswith(CONFIG + ":"))
    if not args.fresh and os.path.exists(out) and config_of(out).strip() == want.strip():
        return out, None
    cmd = ["mpiexec", "-n", str(args.ranks), args.twofold, "run", CONFIG, "-o", out,
           "--overwrite", "--quiet", "--json"] + [a for s in sets for a in ("--set", s)]
    res = subprocess.run(cmd, capture_output=True, text=True, env=mpi_env())
    if res.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} exited {res.returncode}: {res.stderr.strip()[-500:]}")
    return out, json.loads(res.stdout.strip().splitlines()[-1])["wall_seconds"]


def wilson(k, n):
    """95 % Wilson score interval of a binomial proportion k / n (scipy)."""
    ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    return [float(ci.low), float(ci.high)]


def summarise(path):
    s = wheel_recurrence.stats(path)
    logs = EnsembleLogs(path)
    first, lost = logs.first_returns()
    r = s["returns"]
    s["returns"]["fraction_ci"] = wilson(r["members"], s["members"])
    s["first_return_times"] = sorted(first[~np.isnan(first)].tolist())
    s["first_return_spread"] = return_spread(np.array(s["first_return_times"]))
    s["first_return_lost"] = int(lost.sum())
    return s


def table(results):
    """The Markdown table of docs/WHEEL.md."""
    lines = ["| rule at full stick | returning by t = 300 (95 %) | returns per member | "
             "first return: median (5–95 %) | arrivals at full stick per member | "
             "choices into sticking / slip− / slip+ |",
             "|---|---|---|---|---|---|"]
    for res in results:
        s = res["stats"]
        r, fr, fs, ch = s["returns"], s["first_return"], s["full_stick"], s["choices_to"]
        frs = (f"{fr['median']:.0f} ({fr['p5']:.0f}–{fr['p95']:.0f})" if fr["n"] else "—")
        if fr["lost"]:
            frs += f" ({fr['lost']} lost)"
        c = ch["counts"]
        total = sum(c.values())
        choices = (" / ".join(f"{c.get(k, 0) / total:.2f}" for k in ("sticking", "slip-", "slip+"))
                   if total else "no choices")
        if ch["members_left_out"]:
            choices += f" ({ch['members_left_out']} members' logs cut short)"
        lines.append(f"| {res['label']} | {r['fraction']:.3f} [{r['fraction_ci'][0]:.3f}, "
                     f"{r['fraction_ci'][1]:.3f}] | {r['per_member']:.2f} | {frs} | "
                     f"{fs['per_member']:.1f} | {choices} |")
    return "\n".join(lines)


def figure(results, path, members):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    weighted = [r for r in results if r["q"] is not None]
    named = [r for r in results if r["q"] is None]
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.4))
    q = np.array([r["q"] for r in weighted])
    frac = np.array([r["stats"]["returns"]["fraction"] for r in weighted])
    ci = np.array([r["stats"]["returns"]["fraction_ci"] for r in weighted]).reshape(-1, 2)
    per = np.array([r["stats"]["returns"]["per_member"] for r in weighted])
    styles = {"uniform": ("k", "--"), "regularised": ("C3", ":")}
    if len(weighted):
        err = np.clip([frac - ci[:, 0], ci[:, 1] - frac], 0, None)  # rounding at 0 and 1
        axes[0].errorbar(q, frac, yerr=err, marker="o", capsize=3,
                         label="weighted: sliding q, the others (1 - q)/3")
        axes[1].plot(q, per, marker="o", label="weighted")
    for r in named:
        colour, ls = styles.get(r["name"], ("C4", "-."))
        axes[0].axhline(r["stats"]["returns"]["fraction"], color=colour, ls=ls, label=r["label"])
        axes[1].axhline(r["stats"]["returns"]["per_member"], color=colour, ls=ls,
                        label=r["label"])
    axes[0].set_ylim(-0.02, 1.02)
    axes[0].set_xlabel("weight q of the sliding departure at full stick")
    axes[0].set_ylabel(f"fraction of {members} members back at the two-fold by t = 300")
    axes[1].set_xlabel("weight q of the sliding departure at full stick")
    axes[1].set_ylabel("returns to the two-fold per member by t = 300")
    for r in results:
        t = np.array(r["stats"]["first_return_times"])
        if len(t):
            y = np.arange(1, len(t) + 1) / r["stats"]["members"]
            colour, ls = styles.get(r["name"], (None, "-"))
            axes[2].step(t, y, where="post", label=r["label"], color=colour, ls=ls)
    axes[2].set_xlabel("time of the first return to the two-fold")
    axes[2].set_ylabel("fraction of members returned")
    axes[2].set_xlim(0, 300)
    for ax in axes:
        ax.legend(fontsize=7)
        ax.grid(alpha=0.3)
    fig.suptitle("Wheel, Fig. 5 parameters: recurrence to the two-fold depends on the rule at "
                 "full stick (configs/wheel-fig5.yaml, postproc/wheel_rule_recurrence.py)",
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--twofold", default=os.path.join(HERE, "build", "twofold"))
    ap.add_argument("--members", type=int, default=500)
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--runs", default="wheel-rule-runs")
    ap.add_argument("--q", type=float, nargs="*", default=DEFAULT_Q)
    ap.add_argument("--rules", nargs="*", default=["uniform", "regularised"])
    ap.add_argument("--set", action="append", default=[],
                    help="a further --set for every run (e.g. integrator.t_end=100)")
    ap.add_argument("--figure", default=None)
    ap.add_argument("--json", default=None)
    ap.add_argument("--fresh", action="store_true")
    args = ap.parse_args()
    os.makedirs(args.runs, exist_ok=True)
    results, skipped = [], []
    for name, label, q, sets in rules(args.q, args.rules):
        ok, why = known(args.twofold, sets)
        if not ok and name == "uniform" and known(args.twofold, [])[0]:
            # an engine without intersection.policy has the uniform rule only
            ok, sets, label = True, [], "uniform (the engine's only rule)"
        if not ok:
            skipped.append((label, why[0]))
            print(f"skipped {label}: {why[0]}", file=sys.stderr)
            continue
        path, wall = run_rule(args, name, sets)
        results.append({"name": name, "label": label, "q": q, "path": path, "wall_seconds": wall,
                        "sets": sets, "stats": summarise(path)})
        s = results[-1]["stats"]
        sp = s["first_return_spread"]
        print(f"{label:14s} returning {s['returns']['fraction']:.3f} "
              f"({s['returns']['members']} of {s['members']}), "
              f"{s['returns']['per_member']:.2f} returns per member"
              + (f", run {wall:.1f} s" if wall is not None else ", reused")
              + ("; first returns in bunches " + ", ".join(f"{a:.1f}-{b:.1f} ({k})"
                                                         for a, b, k in sp["bunches"])
                 if sp else ""), file=sys.stderr)
    if not results:
        raise SystemExit("no rule ran")
    print(table(results))
    for label, why in skipped:
        print(f"\n(skipped {label}: {why})")
    if args.figure:
        figure(results, args.figure, args.members)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"members": args.members, "results": results,
                       "skipped": skipped}, fh, indent=1)


if __name__ == "__main__":
    main()
