/* rng.c — Philox4x64-10 streams and the variates built on them.  See rng.h for the keying. */
#include "rng.h"

#include <Random123/philox.h>
#include <math.h>

void tf_rng_philox(const uint64_t key[2], const uint64_t ctr[4], uint64_t out[4]) {
  philox4x64_key_t k = {{key[0], key[1]}};
  philox4x64_ctr_t c = {{ctr[0], ctr[1], ctr[2], ctr[3]}};
  philox4x64_ctr_t r = philox4x64(c, k);
  for (int i = 0; i < 4; i++) out[i] = r.v[i];
}

/* The top 53 bits, shifted by half a unit so that neither 0 nor 1 can occur. */
static double open_unit(uint64_t bits) {
  return ((double)(bits >> 11) + 0.5) * 0x1.0p-53;
}

void tf_rng_uniforms(tf_rng_key key, uint64_t counter, uint32_t purpose, size_t n, double *out) {
  const uint64_t k[2] = {key.seed, key.member};
  for (size_t block = 0; block * 4 < n; block++) {
    const uint64_t c[4] = {counter, purpose, block, 0};
    uint64_t r[4];
    tf_rng_philox(k, c, r);
    for (size_t i = 0; i < 4 && block * 4 + i < n; i++) out[block * 4 + i] = open_unit(r[i]);
  }
}

double tf_rng_uniform(tf_rng_key key, uint64_t counter, uint32_t purpose) {
  double u;
  tf_rng_uniforms(key, counter, purpose, 1, &u);
  return u;
}

void tf_rng_normals(tf_rng_key key, uint64_t counter, uint32_t purpose, size_t n, double *out) {
  const uint64_t k[2] = {key.seed, key.member};
  for (size_t block = 0; block * 4 < n; block++) {
    const uint64_t c[4] = {counter, purpose, block, 0};
    uint64_t r[4];
    tf_rng_philox(k, c, r);
    for (size_t pair = 0; pair < 2; pair++) {
      const double radius = sqrt(-2.0 * log(open_unit(r[2 * pair])));
      const double angle = 2.0 * M_PI * open_unit(r[2 * pair + 1]);
      const size_t i = block * 4 + 2 * pair;
      if (i < n) out[i] = radius * cos(angle);
      if (i + 1 < n) out[i + 1] = radius * sin(angle);
    }
  }
}

double tf_rng_exponential(tf_rng_key key, uint64_t counter, uint32_t purpose) {
  return -log(tf_rng_uniform(key, counter, purpose));
}
