/* decay_source.h — the C source of a one-state plugin, x' = -r x with default r = rate, for
 * the tests of compiling and caching model sources (each rate is another source text). */
#ifndef TF_TEST_DECAY_SOURCE_H
#define TF_TEST_DECAY_SOURCE_H

#include <stdio.h>

static inline void write_decay_source(const char *path, const char *name, double rate) {
  FILE *f = fopen(path, "w");
  if (!f) return;
  fprintf(f,
          "#include \"twofold/model.h\"\n"
          "static const tf_param params[] = {{\"r\", %.17g, 0, 100, \"rate\", false}};\n"
          "static const char *const names[] = {\"x\"};\n"
          "static int rhs(double t, const double *x, const double *p, double *dx) {\n"
          "  (void)t; dx[0] = -p[0] * x[0];\n  return 0;\n}\n"
          "static const tf_flow_ops ops = {TF_OPS_SIZE(tf_flow_ops), .rhs = rhs};\n"
          "static const tf_model_def def = {TF_MODEL_HEAD, .name = \"%s\",\n"
          "  .kind = TF_MODEL_FLOW, .dim = 1, .state_names = names, .nparams = 1,\n"
          "  .params = params, .flow = &ops};\n"
          "TWOFOLD_MODELS(&def);\n",
          rate, name);
  fclose(f);
}

#endif
