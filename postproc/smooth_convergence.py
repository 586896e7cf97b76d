#!/usr/bin/python3
"""smooth_convergence.py — smoothed trajectories approaching the Filippov one as eps -> 0.

    /usr/bin/python3 postproc/smooth_convergence.py OUT.png FILIPPOV.h5 SMOOTHED.h5 [...]
                                                    [--component NAME]

FILIPPOV.h5 is an event-driven ensemble results file with output.trajectory_samples > 0
(member 0's /members/trajectory is the reference); each SMOOTHED.h5 is a `trajectory` job of
the same model with a model.smoothing section (its law and epsilon are read from the file's
stored config).  Panel (a): the chosen state component (default the first) against time,
Filippov in black, smoothed members coloured by eps; panel (b): the largest distance from the
Filippov trajectory (interpolated onto the smoothed samples) against eps, per law, log-log,
with the slope of each law's line in the legend.  For the relay, for example:
    twofold run fil.yaml -o fil.h5          # model relay, output.trajectory_samples: 2001
    for e in 1e-2 1e-3 1e-4; do twofold run smooth.yaml -o s$e.h5 \\
        --set model.smoothing.epsilon=$e; done
    postproc/smooth_convergence.py relay.png fil.h5 s*.h5

`load` returns every array the figure draws and `make_figure` draws only those, so a test
can check the curves and slopes against the file and the theory.
"""
import os
import sys

import h5py
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import yaml  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from results_layout import names_attr  # noqa: E402

STYLES = {"tanh": "-", "sqrt": "--", "linear": ":"}


def usage(msg):
    sys.exit(f"smooth_convergence.py: {msg}\n" + __doc__.split("\n\n")[1])


def load(fil_path, smooth_paths, component=None):
    """The Filippov reference, the smoothed curves and the distance per (law, eps)."""
    with h5py.File(fil_path) as f:
        if "members/trajectory" not in f:
            usage(f"{fil_path} has no /members/trajectory (run the Filippov ensemble with "
                  "output.trajectory_samples > 0)")
        names = names_attr(f, "state_names")
        d = f["members/trajectory"]
        samples, t0, t1 = int(d.attrs["samples"]), float(d.attrs["t0"]), float(d.attrs["t_end"])
        ref = d[0].reshape(samples, len(names))
        t_ref = np.linspace(t0, t1, samples)
        ok = np.all(np.isfinite(ref), axis=1)
        ref, t_ref = ref[ok], t_ref[ok]
    c = names.index(component) if component else 0
    runs = []
    for p in smooth_paths:
        with h5py.File(p) as f:
            cfg = yaml.safe_load(f.attrs["config"])
            sm = cfg.get("model", {}).get("smoothing")
            if not sm or "trajectory" not in f:
                usage(f"{p} is not a trajectory of a smoothed model")
            t, x = f["trajectory/t"][:], f["trajectory/state"][:]
        inside = (t >= t_ref[0]) & (t <= t_ref[-1])
        err = max(np.abs(x[inside, k] - np.interp(t[inside], t_ref, ref[:, k])).max()
                  for k in range(len(names)))
        runs.append({"law": sm["law"], "eps": float(sm["epsilon"]), "t": t, "x": x[:, c],
                     "err": err})
    runs.sort(key=lambda r: (r["law"], -r["eps"]))
    laws = {}
    for law in sorted({r["law"] for r in runs}):
        pts = sorted((r["eps"], r["err"]) for r in runs if r["law"] == law)
        e, r = np.array(pts).T
        slope = np.polyfit(np.log(e), np.log(r), 1)[0] if len(e) > 1 else float("nan")
        laws[law] = {"eps": e, "err": r, "slope": slope, "label": f"{law} (slope {slope:.2f})"}
    return {"name": names[c], "t_ref": t_ref, "ref": ref[:, c], "runs": runs, "laws": laws}


def make_figure(d):
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(11, 4.2))
    ax.plot(d["t_ref"], d["ref"], "k-", lw=2.2, label="Filippov (event-driven)")
    cmap = plt.get_cmap("viridis")
    eps_all = sorted({r["eps"] for r in d["runs"]})
    for r in d["runs"]:
        k = eps_all.index(r["eps"]) / max(1, len(eps_all) - 1)
        ax.plot(r["t"], r["x"], STYLES.get(r["law"], "-"), color=cmap(0.85 * k), lw=1.2,
                label=f"{r['law']}, eps = {r['eps']:g}")
    ax.set_xlabel("t")
    ax.set_ylabel(d["name"])
    ax.set_title(f"(a) {d['name']}(t): smoothed against Filippov")
    ax.legend(fontsize=7)
    for law in d["laws"].values():
        bx.loglog(law["eps"], law["err"], "o-", label=law["label"])
    bx.set_xlabel("epsilon")
    bx.set_ylabel("max |x_eps(t) - x_Filippov(t)|")
    bx.set_title("(b) distance to the Filippov trajectory")
    bx.grid(True, which="both", alpha=0.3)
    bx.legend(fontsize=8)
    fig.tight_layout()
    return fig


def main(args):
    component = None
    if "--component" in args:
        i = args.index("--component")
        component = args[i + 1]
        del args[i:i + 2]
    if len(args) < 3:
        usage("need OUT.png FILIPPOV.h5 and at least one SMOOTHED.h5")
    out, fil_path, smooth_paths = args[0], args[1], args[2:]
    make_figure(load(fil_path, smooth_paths, component)).savefig(out, dpi=130)
    print(f"wrote {out}")


if __name__ == "__main__":
    main(sys.argv[1:])
