/* mpi_start.c — Open MPI singleton defaults (see mpi_start.h). */
#include "mpi_start.h"

#include <stdlib.h>

bool tf_mpi_launched(void) {
  static const char *const marks[] = {"OMPI_COMM_WORLD_SIZE",  "PMIX_RANK", "PMI_RANK", "PMI_FD",
                                      "OMPI_MCA_orte_hnp_uri", NULL};
  for (int i = 0; marks[i]; i++)
    if (getenv(marks[i])) return true;
  return false;
}

void tf_mpi_singleton_defaults(void) {
  if (tf_mpi_launched() || getenv("TWOFOLD_MPI_FULL_SINGLETON")) return;
  /* overwrite = 0: a user's own choice stays */
  setenv("OMPI_MCA_ess_singleton_isolated", "1", 0); /* no daemon forked */
  setenv("OMPI_MCA_pml", "ob1", 0);                  /* not UCX */
  setenv("OMPI_MCA_btl", "self", 0);                 /* one process */
  setenv("OMPI_MCA_mtl", "^ofi,psm,psm2", 0);
  setenv("OMPI_MCA_osc", "^ucx", 0);
}
