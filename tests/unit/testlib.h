/* testlib.h — scaffolding shared by the unit tests of the member engine (member_engine.h):
 * an engine made from a config's text, with failures counted as checks (check.h). */
#ifndef TF_TESTLIB_H
#define TF_TESTLIB_H

#include <mpi.h>

#include "check.h"
#include "config.h"
#include "member_engine.h"

/* A step hook of tf_member_settings (NULL: none). */
typedef void (*test_step_hook)(void *ctx, const tf_member_engine *e, double ta, double tb);

/* The member engine of the config text yaml (called `file` in its messages) for one member on
 * MPI_COMM_SELF, every accepted step shown to step with ctx; NULL, with a failed check, if the
 * config or the engine is refused. */
static inline tf_member_engine *test_member_engine(const char *yaml, const char *file,
                                                   test_step_hook step, void *ctx) {
  tf_error err = {0};
  tf_config *cfg = tf_config_parse_string(yaml, file, &err);
  CHECK(cfg != NULL, "config: %s", err.msg);
  if (!cfg) return NULL;
  const tf_member_settings s = {
      .members = 1, .samples = 0, .comm = MPI_COMM_SELF, .step = step, .ctx = ctx};
  tf_member_engine *e = NULL;
  const int rc = tf_member_engine_create(cfg, &s, &e, &err);
  CHECK(rc == 0, "engine: %s", err.msg);
  tf_config_free(cfg);
  if (rc) tf_member_engine_destroy(e);
  return rc ? NULL : e;
}

#endif
