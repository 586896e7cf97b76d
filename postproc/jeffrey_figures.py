#!/usr/bin/python3
"""jeffrey_figures.py — figures of Jeffrey's (2015) dry-friction oscillator (kernel
jeffrey-oscillator), computed by running twofold:

  jeffrey-stick-slip.png  the friction law mu = Lambda_eps (1 + rho Gamma_eps) for several eps
                          (the static peak mu_s does not depend on eps); the forced block
                          below and above N mu_s, discontinuous (event-driven Filippov) and
                          smoothed (PETSc TS), converging as eps -> 0
  jeffrey-noise.png       static friction against noise: the fraction of members that break
                          loose under a constant load N < a < N mu_s within t = 10, against
                          the noise amplitude sigma, for several eps (ensembles, 95 % binomial
                          intervals) with the Kolmogorov-equation prediction; the threshold
                          sigma* (half the members loose) against eps

  postproc/jeffrey_figures.py --twofold build/twofold --out docs [--members 200]
Prints the measured thresholds (the numbers quoted in docs/OPEN_QUESTION.md).
"""
import argparse
import json
import math
import os
import subprocess
import tempfile

import h5py
import numpy as np
import scipy.sparse as sps
import scipy.sparse.linalg as spl

A, C, N, RHO, V_A, T_END = 1.2, 0.1, 1.0, 2.0, 0.3, 10.0


def run(twofold, text, out, ranks):
    cfg = out[:-3] + ".yaml"
    with open(cfg, "w") as f:
        f.write(text)
    cmd = [twofold, "run", cfg, "-o", out, "--overwrite", "--quiet", "--json"]
    if ranks > 1:
        cmd = ["mpiexec", "-n", str(ranks)] + cmd
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)}: {res.stderr}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def drift(v, eps):
    u = v / eps
    gam = 1 / (1 + u * u)
    return A - C * v - N * u * np.sqrt(gam) * (1 + RHO * gam)


def escape_probability(sigma, eps, dt=5e-3, v_left=-0.1):
    """1 - S(T, 0) from the backward Kolmogorov equation (as in tests/scripts/jeffrey_noise.py)."""
    dv = eps / 20
    v = np.arange(v_left, V_A + dv / 2, dv)
    n, b = len(v), drift(v, eps)
    pe = b * dv / sigma**2
    diff = np.where(abs(pe) > 1e-8, b * dv / 2 / np.tanh(np.where(pe == 0, 1, pe)), sigma**2 / 2)
    lo, up = diff / dv**2 - b / (2 * dv), diff / dv**2 + b / (2 * dv)
    L = sps.diags([lo[1:], -2 * diff / dv**2, up[:-1]], [-1, 0, 1], format="lil")
    L[0, 1] = lo[0] + up[0]
    L = L.tocsr()[: n - 1, : n - 1]
    eye = sps.identity(n - 1, format="csc")
    S = np.ones(n - 1)
    half = spl.splu((eye - dt / 2 * L).tocsc())
    for _ in range(4):
        S = half.solve(S)
    explicit = eye + dt / 2 * L
    for _ in range(int(round((T_END - 2 * dt) / dt))):
        S = half.solve(explicit @ S)
    return 1 - S[int(round(-v_left / dv))]


def half_crossing(x, p):
    """sigma where p crosses 1/2 (linear interpolation in log sigma)."""
    for i in range(len(x) - 1):
        if p[i] < 0.5 <= p[i + 1]:
            w = (0.5 - p[i]) / (p[i + 1] - p[i])
            return math.exp(math.log(x[i]) + w * (math.log(x[i + 1]) - math.log(x[i])))
    return float("nan")


def stick_slip_figure(args, work):
    import matplotlib.pyplot as plt

    period3 = 3 * 2 * math.pi / 0.2
    base = "k: 1, c: 0.1, N: 1, omega: 0.2, rho: 2, beta: 0.01"
    fig, axes = plt.subplots(1, 3, figsize=(16, 4.4))
    ax = axes[0]
    v = np.linspace(-0.05, 0.05, 2001)
    for eps in (1e-2, 3e-3, 1e-3):
        u = v / eps
        gam = 1 / (1 + u * u)
        ax.plot(v, u * np.sqrt(gam) * (1 + RHO * gam), label=f"$\\varepsilon$ = {eps:g}")
    ax.axhline(math.sqrt(2), color="k", ls=":", lw=1)
    ax.text(0.02, math.sqrt(2) + 0.03, "$\\mu_s = \\sqrt{2}$", fontsize=9)
    ax.set_xlabel("v")
    ax.set_ylabel("$\\mu = \\Lambda_\\varepsilon (1 + \\rho\\Gamma_\\varepsilon)$, $\\rho$ = 2")
    ax.set_title("friction law: the static peak does not depend on $\\varepsilon$", fontsize=10)
    ax.legend(fontsize=8)
    for ax, a, title in [(axes[1], 1.3, "a = 1.3 < N$\\mu_s$: sticks for ever"),
                         (axes[2], 1.5, "a = 1.5 > N$\\mu_s$: stick-slip")]:
        out = os.path.join(work, f"filippov{a}.h5")
        run(args.twofold, f"""
job: ensemble
model: {{name: jeffrey-oscillator, params: {{{base}, a: {a}}}}}
initial: {{state: [0, 0, 1, 0]}}
integrator: {{t_end: {period3!r}, rtol: 1.0e-10, atol: 1.0e-12}}
ensemble: {{members: 1}}
output: {{trajectory_samples: 1501}}
""", out, 1)
        with h5py.File(out, "r") as f:
            x = f["members/trajectory"][0].reshape(-1, 4)
        t = np.linspace(0, period3, len(x))
        for eps in (1e-2, 1e-3):
            o = os.path.join(work, f"smooth{a}-{eps}.h5")
            run(args.twofold, f"""
job: trajectory
model: {{name: jeffrey-oscillator, params: {{{base}, a: {a}, eps: {eps}}}}}
initial: {{state: [0, 0, 1, 0]}}
integrator: {{t_end: {period3!r}, rtol: 1.0e-8, atol: 1.0e-10,
             ts: {{options: "-snes_lag_jacobian 1"}}}}
output: {{samples: 1501}}
""", o, 1)
            with h5py.File(o, "r") as f:
                ax.plot(f["trajectory/t"][:], f["trajectory/state"][:, 0], lw=1,
                        label=f"y, smoothed $\\varepsilon$ = {eps:g} (PETSc TS)")
        ax.plot(t, x[:, 0], "k--", lw=1.2, label="y, Filippov (event-driven)")
        ax.plot(t, -a * np.sin(0.2 * t) / 4, color="0.7", lw=0.8, label="forcing / 4")
        ax.set_xlabel("t")
        ax.set_title(title, fontsize=10)
        ax.legend(fontsize=7)
    fig.suptitle("Jeffrey (2015) oscillator, $\\rho$ = 2, $\\beta$ = 0.01, k = 1, c = 0.1, "
                 "$\\omega$ = 0.2")
    fig.tight_layout()
    fig.savefig(os.path.join(args.out, "jeffrey-stick-slip.png"), dpi=100)


def noise_figure(args, work):
    import matplotlib.pyplot as plt

    fig, (ax, bx) = plt.subplots(1, 2, figsize=(13, 4.6))
    rows = []
    for ci, eps in enumerate((0.04, 0.02, 0.01)):
        sig = math.sqrt(eps) * np.linspace(0.2, 0.6, 9)
        fr, lo, hi = [], [], []
        for s in sig:
            out = os.path.join(work, f"noise{eps}-{s:.5f}.h5")
            run(args.twofold, f"""
job: ensemble
model:
  name: jeffrey-oscillator
  params: {{k: 0, c: {C}, N: {N}, a: {A}, omega: 0, rho: {RHO}, beta: 0, eps: {eps}, noise: {s!r}}}
initial: {{state: [0, 0, 1, {-math.pi / 2!r}]}}
integrator: {{method: euler-maruyama, dt: {eps / 50}, t_end: {T_END}, max_steps: 100000000}}
ensemble: {{members: {args.members}, seed: 5}}
""", out, args.ranks)
            with h5py.File(out, "r") as f:
                p = float(np.mean(f["members/final_state"][:, 1] >= V_A))
            n = args.members
            half_w = 1.96 * math.sqrt(max(p * (1 - p), 0.25 / n) / n)
            fr.append(p), lo.append(max(p - half_w, 0)), hi.append(min(p + half_w, 1))
        fine = np.linspace(sig[0], sig[-1], 40)
        pred = np.array([escape_probability(s, eps) for s in fine])
        color = f"C{ci}"
        ax.errorbar(sig, fr, yerr=[np.array(fr) - lo, np.array(hi) - fr], fmt="o", color=color,
                    capsize=3, label=f"$\\varepsilon$ = {eps:g}: ensembles ({args.members})")
        ax.plot(fine, pred, color=color, lw=1, label=f"$\\varepsilon$ = {eps:g}: Kolmogorov")
        s_meas, s_pred = half_crossing(sig, fr), half_crossing(fine, pred)
        rows.append((eps, s_meas, s_pred))
        print(f"eps {eps:g}: sigma* measured {s_meas:.4f}, Kolmogorov {s_pred:.4f}, "
              f"sigma*/sqrt(eps) {s_meas / math.sqrt(eps):.3f}")
    ax.set_xlabel("noise amplitude $\\sigma$ (random force on v)")
    ax.set_ylabel(f"fraction broken loose by t = {T_END:g}")
    ax.set_title(f"load a = {A} between N = 1 and N$\\mu_s$ = $\\sqrt{{2}}$ ($\\rho$ = 2, "
                 "$\\beta$ = 0): static friction vs noise", fontsize=10)
    ax.legend(fontsize=7)
    e = np.array([r[0] for r in rows])
    bx.loglog(e, [r[1] for r in rows], "o", label="measured (ensembles)")
    bx.loglog(e, [r[2] for r in rows], "x", ms=9, label="Kolmogorov equation")
    bx.loglog(e, rows[1][2] * np.sqrt(e / rows[1][0]), "k:", label="$\\propto\\sqrt{\\varepsilon}$")
    bx.set_xlabel("$\\varepsilon$")
    bx.set_ylabel("threshold $\\sigma^*$ (half the members loose)")
    bx.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(args.out, "jeffrey-noise.png"), dpi=100)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--twofold", default="build/twofold")
    ap.add_argument("--out", default="docs")
    ap.add_argument("--members", type=int, default=200)
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--only", choices=["stick-slip", "noise"], default=None)
    args = ap.parse_args()
    import matplotlib
    matplotlib.use("Agg")
    os.environ.setdefault("OMPI_MCA_rmaps_base_oversubscribe", "1")
    if os.geteuid() == 0:
        os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
        os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    with tempfile.TemporaryDirectory() as work:
        if args.only in (None, "stick-slip"):
            stick_slip_figure(args, work)
        if args.only in (None, "noise"):
            noise_figure(args, work)


if __name__ == "__main__":
    main()
