#!/usr/bin/python3
"""relay_grazing.py — where the relay's symmetric orbit grazes the sliding region, in closed form.

    /usr/bin/python3 postproc/relay_grazing.py [ZETA W SIGMA K]

The relay feedback system of configs/relay-feedback.yaml (defaults zeta 0.05, w 3, sigma 1,
k 1) is linear on each side of Sigma = {x1 = 0}: from p on Sigma into x1 > 0 (u = -1) a half
period is x(t) = e^{At} (p - A^-1 B) + A^-1 B, and the symmetric orbit without sliding is the
p with x(tau) = -p (Newton on (p2, p3, tau)).  It crosses Sigma transversally while |p2| > k and
slides once |p2| < k: the lam where p2 = k are its sliding (grazing) bifurcations, found here by
continuation from lam = 5 down and up, then Brent.  The independent counterpart of the engine's
diagram, postproc/relay_bifurcation.py.
"""
import sys

import numpy as np
from scipy.linalg import expm
from scipy.optimize import brentq, fsolve


def orbit(lam, v, zeta, w, sigma, k):
    """(p2, p3, tau) of the orbit without sliding, from the guess v."""
    A = np.array([[-(2 * zeta * w + lam), 1, 0], [-(2 * zeta * w * lam + w**2), 0, 1],
                  [-lam * w**2, 0, 0]])
    shift = np.linalg.solve(A, k * np.array([1, -2 * sigma, 1]))
    flight = lambda p, t: expm(A * t) @ (p - shift) + shift
    return fsolve(lambda v: flight(np.array([0, v[0], v[1]]), v[2]) + [0, v[0], v[1]], v,
                  xtol=1e-13)


def grazing(zeta=0.05, w=3.0, sigma=1.0, k=1.0, start=(5.0, (1.33, 6.4, 1.2)), step=0.05):
    """The lam below and above `start` where the orbit's p2 reaches k."""
    out = []
    for direction in (-1, 1):
        lam, v = start[0], orbit(start[0], np.array(start[1]), zeta, w, sigma, k)
        while v[0] > k:  # continue until the orbit reaches the sliding region
            prev = (lam, v)
            lam += direction * step
            v = orbit(lam, v, zeta, w, sigma, k)
        guess = {"v": prev[1]}

        def gap(s):
            guess["v"] = orbit(s, guess["v"], zeta, w, sigma, k)
            return guess["v"][0] - k

        out.append(brentq(gap, prev[0], lam, xtol=1e-9))
    return out


if __name__ == "__main__":
    args = [float(a) for a in sys.argv[1:]]
    lo, hi = grazing(*args)
    print(f"the symmetric orbit slides for lam < {lo:.6f} and lam > {hi:.6f}, and crosses Sigma "
          f"transversally in between")
