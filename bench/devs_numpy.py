#!/usr/bin/env python3
"""devs_numpy.py — the numpy baseline of bench/devs_throughput.sh: a DEVS of logistic maps
vectorised over the elements, one step at a time (draws, mask, log|f'|, update, X_i sum),
lambda_1 of the full state from the element sums at the end.

    /usr/bin/python3 bench/devs_numpy.py N STEPS Q MU

Prints one JSON line like bench/devs_naive.c."""
import json
import sys
import time

import numpy as np


def main(n, steps, q, mu):
    rng = np.random.default_rng(1)
    x = rng.random(n)
    L = np.zeros(n)
    X = np.empty(steps)
    w0, c0 = time.perf_counter(), time.process_time()
    for i in range(steps):
        upd = rng.random(n) < q
        L[upd] += np.log(np.abs(mu * (1.0 - 2.0 * x[upd])))
        x = np.where(upd, mu * x * (1.0 - x), x)
        X[i] = x.sum()
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    lmax = L.max()
    lambda1 = (lmax + 0.5 * np.log(np.exp(2 * (L - lmax)).sum()) - 0.5 * np.log(n)) / steps
    updates = n * steps
    print(json.dumps({"N": n, "steps": steps, "seconds": wall, "cpu_seconds": cpu,
                      "element_updates_per_second": updates / wall,
                      "element_updates_per_cpu_second": updates / cpu,
                      "lambda1": float(lambda1), "X_last": float(X[-1])}))


if __name__ == "__main__":
    if len(sys.argv) != 5:
        sys.exit("usage: devs_numpy.py N STEPS Q MU")
    main(int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]))
