"""dim_limit.py — the one dimension limit (src/base/max_dim.h, 16) is enforced when the model is set up.

A linear chain x_i' = -(i+1) x_i of dimension 17, given as model.equations and as model.source,
is refused by `twofold check` (exit 2) and by `twofold run` (exit 2 for the equations, whose
config states the dimension; 5 for the C model, a definition the checker refuses) with a message
naming the model and the limit, before any member runs (no results file is written; the equations are not even
compiled).  The same chain of dimension 16 runs, and its final states equal exp(-(i+1) t) x0.
"""
import os
import subprocess

import h5py
import numpy as np

import testlib as T

T.setup()
os.environ["TWOFOLD_CACHE"] = os.path.join(T.WORK, "cache")
T_END = 0.5


def equations(n):
    st = ", ".join(f"x{i}" for i in range(n))
    field = ", ".join(f'x{i}: "-{i + 1}*x{i}"' for i in range(n))
    return f"""  equations:
    name: chain{n}
    state: [{st}]
    field: {{{field}}}
"""


def source(n):
    names = ", ".join(f'"x{i}"' for i in range(n))
    return f"""#include "twofold/model.h"
static const char *const names[] = {{{names}}};
static int rhs(double t, const double *x, const double *p, double *dx) {{
  (void)t, (void)p;
  for (int i = 0; i < {n}; i++) dx[i] = -(i + 1) * x[i];
  return 0;
}}
static const tf_flow_ops ops = {{TF_OPS_SIZE(tf_flow_ops), .rhs = rhs}};
static const tf_model_def chain = {{TF_MODEL_HEAD, .name = "chain{n}-c",
    .kind = TF_MODEL_FLOW, .dim = {n}, .state_names = names, .flow = &ops}};
TWOFOLD_MODELS(&chain);
"""


def config(tag, n, model):
    ones = ", ".join(["1"] * n)
    return T.write(f"{tag}.yaml", f"""job: ensemble
model:
{model}initial: {{state: [{ones}]}}
integrator: {{t_end: {T_END}, rtol: 1.0e-10, atol: 1.0e-12}}
ensemble: {{members: 2}}
""")


T.write("chain17.c", source(17))
T.write("chain16.c", source(16))
cases = {
    "eq17": (config("eq17", 17, equations(17)),
             "eq17.yaml:5: key 'model.equations.state': model 'chain17' has 17 state "
             "components; twofold's limit is 16", 2),
    "src17": (config("src17", 17, "  source: chain17.c\n"),
              "key 'model.source': model source", 5),
}
for tag, (cfg, want, run_status) in cases.items():
    for cmd in (["check", cfg], ["run", cfg, "-o", f"{tag}.h5", "--quiet"]):
        res = subprocess.run([T.TWOFOLD, *cmd], capture_output=True, text=True)
        status = run_status if cmd[0] == "run" else 2
        T.check(res.returncode == status and want in res.stderr and "16" in res.stderr
                and not os.path.exists(f"{tag}.h5"),
                f"{tag} {cmd[0]}: exit {res.returncode}, refused at setup: {res.stderr.strip()!r}")
res = subprocess.run([T.TWOFOLD, "check", "src17.yaml"], capture_output=True, text=True)
T.check("model 'chain17-c': dim = 17: expected 1 to 16" in res.stderr,
        f"the C model's message names it and the limit: {res.stderr.strip()!r}")
eq_libs = [f for f in os.listdir("cache") if f.startswith("equations-chain17")] \
    if os.path.isdir("cache") else []
T.check(not eq_libs, f"the 17-state equations were refused before being generated: {eq_libs}")

want = np.exp(-np.arange(1, 17) * T_END)
for tag, model in (("eq16", equations(16)), ("src16", "  source: chain16.c\n")):
    T.run(config(tag, 16, model), f"{tag}.h5")
    with h5py.File(f"{tag}.h5") as f:
        got = f["/members/final_state"][...]
    err = np.max(np.abs(got - want) / want)
    T.check(got.shape == (2, 16) and err < 1e-7,
            f"{tag}: dimension 16 runs, final state = exp(-(i+1) t) (worst relative {err:.1e})")
T.finish()
