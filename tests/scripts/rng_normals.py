#!/usr/bin/python3
"""rng_normals.py TEST_RNG — the engine's Wiener increments against an independent
computation: Philox4x64-10 written out here in Python integers (checked on Random123's
published known answer), then Box-Muller with Python's math module, one pair at a time.
The engine draws its normals in batches; each must equal this definition bit for bit."""
import math
import subprocess
import sys

MASK = (1 << 64) - 1
M0, M1 = 0xD2E7470EE14C6C93, 0xCA5A826395121157
W0, W1 = 0x9E3779B97F4A7C15, 0xBB67AE8584CAA73B
NOISE = 2  # TF_RNG_NOISE


def philox4x64(ctr, key):
    x0, x1, x2, x3 = ctr
    k0, k1 = key
    for _ in range(10):
        p0, p1 = M0 * x0, M1 * x2
        x0, x1, x2, x3 = (p1 >> 64) ^ x1 ^ k0, p1 & MASK, (p0 >> 64) ^ x3 ^ k1, p0 & MASK
        k0, k1 = (k0 + W0) & MASK, (k1 + W1) & MASK
    return x0, x1, x2, x3


def open_unit(bits):
    return ((bits >> 11) + 0.5) * 2.0**-53


def normals(seed, member, counter, n):
    out = []
    for block in range((n + 3) // 4):
        r = philox4x64((counter, NOISE, block, 0), (seed, member))
        for pair in range(2):
            radius = math.sqrt(-2.0 * math.log(open_unit(r[2 * pair])))
            angle = 2.0 * math.pi * open_unit(r[2 * pair + 1])
            out += [radius * math.cos(angle), radius * math.sin(angle)]
    return out[:n]


def main():
    # Random123 kat_vectors, philox4x64 10 rounds: ctr pi digits, key pi digits
    kat = philox4x64((0x243F6A8885A308D3, 0x13198A2E03707344, 0xA4093822299F31D0,
                      0x082EFA98EC4E6C89), (0x452821E638D01377, 0xBE5466CF34E90C6C))
    assert kat == (0xA528F45403E61D95, 0x38C72DBD566E9788, 0xA5A1610E72FD18B5,
                   0x57BD43B5E52B7FE6), "the Python Philox is wrong"
    cases = [(20141, 0, 0, 3), (20141, 3999, 3999, 3), (7, 1, 123456789, 16),
             (MASK, MASK - 1, MASK - 3, 5), (1, 2, 3, 1), (42, 8, 17, 4)]
    failures = 0
    for seed, member, counter, n in cases:
        text = subprocess.run([sys.argv[1], "print", str(seed), str(member), str(counter), str(n)],
                              check=True, capture_output=True, text=True).stdout.split()
        got = [float.fromhex(v) for v in text]
        want = normals(seed, member, counter, n)
        if got != want:
            failures += 1
            print(f"seed {seed} member {member} counter {counter} n {n}:\n  engine {got}\n"
                  f"  python {want}")
    print(f"{len(cases) - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
