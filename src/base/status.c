/* status.c — names of member statuses (used for HDF5 enum members, JSON and messages). */
#include "status.h"

const char *tf_member_status_name(int status) {
  static const char *const names[TF_MEMBER_STATUS_COUNT] = {
      "pending", "ok",     "nonfinite", "max_steps", "step_underflow",
      "zeno",    "failed", "codim2",    "ill_posed"};
  return status >= 0 && status < TF_MEMBER_STATUS_COUNT ? names[status] : "unknown";
}

bool tf_member_status_failed(int status) {
  return status != TF_MEMBER_PENDING && status != TF_MEMBER_OK && status != TF_MEMBER_CODIM2 &&
         status != TF_MEMBER_ILL_POSED;
}

long long tf_member_failures(const long long counts[TF_MEMBER_STATUS_COUNT]) {
  long long failed = 0;
  for (int k = 0; k < TF_MEMBER_STATUS_COUNT; k++)
    if (tf_member_status_failed(k)) failed += counts[k];
  return failed;
}
