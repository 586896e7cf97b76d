/* job.c — job registry look-up and the output keys every job shares. */
#include "job.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const tf_job *tf_job_find(const char *name) {
  for (size_t i = 0; i < tf_job_count(); i++)
    if (strcmp(tf_job_at(i)->name, name) == 0) return tf_job_at(i);
  return NULL;
}

static void default_output_name(const char *config_path, char *out, size_t n) {
  const char *base = strrchr(config_path, '/');
  base = base ? base + 1 : config_path;
  const char *dot = strrchr(base, '.');
  const size_t stem = dot && dot != base ? (size_t)(dot - base) : strlen(base);
  snprintf(out, n, "%.*s.h5", (int)stem, base);
}

int tf_job_output_from_config(tf_run *run, int *compression, double *flush_interval,
                              tf_error *err) {
  char def[1024];
  default_output_name(run->config_path ? run->config_path : "twofold", def, sizeof def);
  const char *file;
  if (tf_config_get_string(run->cfg, "output.file", def, NULL, &file, err)) return -1;
  snprintf(run->output_path, sizeof run->output_path, "%s",
           run->output_override ? run->output_override : file);
  const long long d_level = 4;
  long long level;
  if (tf_config_get_int(run->cfg, "output.compression", &d_level, 0, 9, &level, err)) return -1;
  if (compression) *compression = (int)level;
  const double d_flush = 10.0;
  double flush;
  if (tf_config_get_double(run->cfg, "output.flush_interval", &d_flush, 0.01, INFINITY, &flush,
                           err))
    return -1;
  if (flush_interval) *flush_interval = flush;
  const double d_buffer = TF_DEFAULT_BUFFER_BYTES / 1048576.0;
  double buffer_mb;
  if (tf_config_get_double(run->cfg, "output.buffer_mb", &d_buffer, 1.0 / 1024, 1048576.0,
                           &buffer_mb, err))
    return -1;
  run->buffer_bytes = (uint64_t)(buffer_mb * 1048576.0);
  return 0;
}
