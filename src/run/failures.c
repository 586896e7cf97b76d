/* failures.c — see failures.h. */
#include "failures.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5io.h"

void tf_failures_add(tf_failures *f, uint64_t member, int status) {
  const int k = status >= 0 && status < TF_MEMBER_STATUS_COUNT ? status : TF_MEMBER_FAILED;
  if (f->counts[k] < TF_FAILURES_FIRST) f->first[k][f->counts[k]] = member;
  f->counts[k]++;
}

int tf_failures_read(hid_t file, tf_failures *f) {
  memset(f, 0, sizeof *f);
  if (H5Lexists(file, "members", H5P_DEFAULT) <= 0 ||
      H5Lexists(file, "members/status", H5P_DEFAULT) <= 0)
    return -1;
  const hid_t d = H5Dopen2(file, "members/status", H5P_DEFAULT);
  if (d < 0) return -1;
  const hid_t s = H5Dget_space(d), type = tf_h5_status_type();
  hsize_t n = 0;
  H5Sget_simple_extent_dims(s, &n, NULL);
  const hsize_t block = 1 << 20;
  uint8_t *buf = malloc(block);
  int rc = buf ? 0 : -1;
  for (hsize_t start = 0; !rc && start < n; start += block) {
    const hsize_t count = n - start < block ? n - start : block;
    rc = tf_h5_read_rows(d, type, 1, start, count, buf);
    for (hsize_t i = 0; !rc && i < count; i++) tf_failures_add(f, start + i, buf[i]);
  }
  free(buf);
  H5Tclose(type);
  H5Sclose(s);
  H5Dclose(d);
  f->have_ids = rc == 0;
  return rc;
}

int tf_failures_text(hid_t file, uint64_t member, char *buf, size_t n) {
  enum { MOST = 4096 };
  if (!n) return -1;
  buf[0] = '\0';
  if (H5Lexists(file, "members", H5P_DEFAULT) <= 0 ||
      H5Lexists(file, "members/failure", H5P_DEFAULT) <= 0)
    return -1;
  const hid_t d = H5Dopen2(file, "members/failure", H5P_DEFAULT);
  if (d < 0) return -1;
  const hid_t ftype = H5Dget_type(d);
  const size_t size = ftype >= 0 ? H5Tget_size(ftype) : 0;
  int rc = -1;
  if (ftype >= 0 && H5Tget_class(ftype) == H5T_STRING && H5Tis_variable_str(ftype) == 0 &&
      size > 0 && size <= MOST) {
    const hid_t mtype = H5Tcopy(H5T_C_S1);
    H5Tset_size(mtype, size);
    H5Tset_strpad(mtype, H5T_STR_NULLPAD);
    H5Tset_cset(mtype, H5Tget_cset(ftype)); /* HDF5 converts no character set into another */
    char *text = calloc(1, size + 1);
    if (text && tf_h5_read_rows(d, mtype, 1, member, 1, text) == 0) {
      snprintf(buf, n, "%s", text);
      rc = 0;
    }
    free(text);
    H5Tclose(mtype);
  }
  if (ftype >= 0) H5Tclose(ftype);
  H5Dclose(d);
  return rc;
}

long long tf_failures_done(const tf_failures *f) {
  long long done = 0;
  for (int k = 0; k < TF_MEMBER_STATUS_COUNT; k++)
    if (k != TF_MEMBER_PENDING) done += f->counts[k];
  return done;
}

long long tf_failures_failed(const tf_failures *f) {
  return tf_member_failures(f->counts);
}

bool tf_failures_fail_run(long long failed, long long done, double max_fraction) {
  return failed > 0 && (failed == done || (double)failed > max_fraction * (double)done);
}

void tf_failures_describe(const tf_failures *f, char *buf, size_t n) {
  size_t len = 0;
  buf[0] = '\0';
  for (int k = 0; k < TF_MEMBER_STATUS_COUNT && len < n; k++) {
    if (!tf_member_status_failed(k) || !f->counts[k]) continue;
    len += (size_t)snprintf(buf + len, n - len, "%s%s %lld", len ? ", " : "",
                            tf_member_status_name(k), f->counts[k]);
    if (!f->have_ids) continue;
    const long long named = f->counts[k] < TF_FAILURES_FIRST ? f->counts[k] : TF_FAILURES_FIRST;
    const bool more = f->counts[k] > named;
    for (long long i = 0; i < named && len < n; i++)
      len += (size_t)snprintf(buf + len, n - len, "%s%llu",
                              i      ? ", "
                              : more ? " (first: "
                                     : " (members: ",
                              (unsigned long long)f->first[k][i]);
    if (len < n) len += (size_t)snprintf(buf + len, n - len, "%s)", more ? ", ..." : "");
  }
}
