/* test_sampling.c — the designs of sampling.h at the ensemble sizes the integration test does
 * not reach: a Latin hypercube of N members has exactly one member per stratum in every
 * coordinate for N = 1, 2, 3, 5, 17, 64, 1000 (the Feistel permutation walks back into
 * [0, N) for sizes that are not powers of four), its strata depend on the seed, members are
 * asked for in reverse order (no draw depends on another member's), and a parameter's draw
 * stays in its interval and is the one set in the live parameters. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "config.h"
#include "kernel.h"
#include "sampling.h"

static tf_sampling *make(const tf_kernel *k, const char *yaml, uint64_t members, uint64_t seed,
                         double *params) {
  tf_error err;
  tf_config *cfg = tf_config_parse_string(yaml, "test.yaml", &err);
  CHECK(cfg != NULL, "parse: %s", err.msg);
  const double x0[2] = {0.3, 0.0};
  const tf_sampling_base base = {
      .kernel = k, .x0 = x0, .params = params, .members = members, .seed = seed};
  tf_sampling *s = NULL;
  CHECK(tf_sampling_from_config(cfg, &base, &s, &err) == 0, "sampling: %s", err.msg);
  /* the sampler keeps no pointer into the config but the parameter names (the kernel's) */
  tf_config_free(cfg);
  return s;
}

static const char *const lhs_yaml =
    "initial:\n"
    "  design: latin-hypercube\n"
    "  sample:\n"
    "    x: {dist: uniform, lo: 0, hi: 1}\n"
    "    y: {dist: uniform, lo: 0, hi: 1}\n"
    "model:\n"
    "  sample:\n"
    "    a: {dist: uniform, lo: 1, hi: 2}\n";

static void latin_hypercube(const tf_kernel *k) {
  static const uint64_t sizes[] = {1, 2, 3, 5, 17, 64, 1000};
  double params[2] = {1, 0};
  for (size_t t = 0; t < sizeof sizes / sizeof sizes[0]; t++) {
    const uint64_t n = sizes[t];
    tf_sampling *s = make(k, lhs_yaml, n, 11, params);
    char *seen = calloc(3 * n, 1);
    for (uint64_t m = n; m-- > 0;) { /* backwards: no member's draw depends on another's */
      double x[2], a;
      tf_error err;
      CHECK(tf_sampling_state(s, m, x), "state not sampled");
      CHECK(tf_sampling_set_params(s, m, &a, &err) == 0, "params: %s", err.msg);
      CHECK(params[0] == a && a > 1 && a < 2, "a = %g in (1, 2), live %g", a, params[0]);
      const double u[3] = {x[0], x[1], a - 1};
      for (int j = 0; j < 3; j++) {
        const uint64_t stratum = (uint64_t)floor(u[j] * (double)n);
        CHECK(stratum < n && !seen[j * n + stratum], "N %llu, coordinate %d: stratum %llu twice",
              (unsigned long long)n, j, (unsigned long long)stratum);
        if (stratum < n) seen[j * n + stratum] = 1;
      }
    }
    free(seen);
    tf_sampling_destroy(s);
  }
  /* another seed, other strata */
  tf_sampling *a = make(k, lhs_yaml, 64, 11, params), *b = make(k, lhs_yaml, 64, 12, params);
  int same = 0;
  for (uint64_t m = 0; m < 64; m++) {
    double xa[2], xb[2];
    tf_sampling_state(a, m, xa), tf_sampling_state(b, m, xb);
    same += floor(xa[0] * 64) == floor(xb[0] * 64);
  }
  CHECK(same < 8, "seeds 11 and 12 share %d of 64 strata", same);
  tf_sampling_destroy(a), tf_sampling_destroy(b);
}

int main(void) {
  const tf_kernel *relay = tf_kernel_find("relay");
  CHECK(relay != NULL, "no built-in relay");
  if (relay) latin_hypercube(relay);
  return check_report("test_sampling");
}
