/* replay_log.c — see replay_log.h. */
#include "replay_log.h"

#include <hdf5.h>
#include <stdlib.h>
#include <string.h>

#include "h5io.h"

/* Reads /members/exits of an earlier run: u and kind are columns 1 and 3 of each logged draw. */
static int read_draws(tf_draw_log *log, const tf_replay_source *from, uint64_t members,
                      long max_logged, tf_error *err) {
  const char *path = from->path, *where = from->where, *key = from->key;
  memset(log, 0, sizeof *log);
  tf_error open_err;
  hid_t f = tf_h5_open_serial(path, &open_err);
  if (f < 0) return tf_fail_code(err, TF_ERR_CONFIG, "%s: key '%s': %s", where, key, open_err.msg);
  hid_t d = H5Dopen2(f, "members/exits", H5P_DEFAULT);
  if (d < 0) {
    H5Fclose(f);
    return tf_fail_code(err, TF_ERR_CONFIG,
                        "%s: key '%s': '%s' has no /members/exits (not a Filippov ensemble file)",
                        where, key, path);
  }
  hid_t s = H5Dget_space(d);
  hsize_t dims[2] = {0, 0};
  H5Sget_simple_extent_dims(s, dims, NULL);
  H5Sclose(s);
  long long width = 0;
  tf_h5_attr_read_int(d, "slot_width", &width);
  int rc = 0;
  if (dims[0] != members || width < 4 || dims[1] % (hsize_t)width)
    rc =
        tf_fail_code(err, TF_ERR_CONFIG, "%s: key '%s': '%s' holds %llu members, this run has %llu",
                     where, key, path, (unsigned long long)dims[0], (unsigned long long)members);
  double *all = rc ? NULL : malloc(dims[0] * dims[1] * sizeof *all);
  if (!rc && (!all || H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, all) < 0))
    rc = tf_fail_code(err, TF_ERR_CONFIG, "%s: key '%s': cannot read /members/exits of '%s'", where,
                      key, path);
  H5Dclose(d);
  H5Fclose(f);
  if (rc) return free(all), -1;
  log->draws = (long)(dims[1] / (hsize_t)width);
  if (log->draws > max_logged) log->draws = max_logged;
  log->members = members;
  const size_t cells = (members ? members : 1) * (size_t)log->draws;
  log->u = malloc(cells * sizeof *log->u);
  log->kind = malloc(cells * sizeof *log->kind);
  if (!log->u || !log->kind) return free(all), tf_draw_log_free(log), tf_fail(err, "out of memory");
  for (uint64_t m = 0; m < members; m++)
    for (long v = 0; v < log->draws; v++) {
      const double *slot = all + m * dims[1] + (uint64_t)v * (uint64_t)width;
      log->u[m * (uint64_t)log->draws + (uint64_t)v] = slot[1];
      log->kind[m * (uint64_t)log->draws + (uint64_t)v] = slot[3];
    }
  free(all);
  return 0;
}

int tf_replay_logs_read(tf_exit_policy *exit, tf_intersection_policy *choice, uint64_t members,
                        long max_logged, tf_error *err) {
  if (exit->replay_from.path &&
      read_draws(&exit->replay, &exit->replay_from, members, max_logged, err))
    return -1;
  if (choice->replay_from.path &&
      read_draws(&choice->replay, &choice->replay_from, members, max_logged, err))
    return -1;
  return 0;
}
