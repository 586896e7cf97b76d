/* task_farm.c — a task farm of library calls: every rank runs a config of its own with
 * twofold_run_config on MPI_COMM_SELF, at the same time as the others.
 *   mpiexec -n N task_farm CONFIG_0 OUTPUT_0 ... CONFIG_N-1 OUTPUT_N-1
 * Rank r runs CONFIG_r into OUTPUT_r and prints "rank r status S [message]"; the exit status is
 * 0 when every rank's call returned TWOFOLD_OK.  A call that waits for another rank's model
 * (a collective on the world's communicator) never returns: the caller's timeout catches it. */
#include <stdio.h>
#include <twofold/twofold.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc != 1 + 2 * size) {
    if (rank == 0) fprintf(stderr, "usage: task_farm CONFIG OUTPUT (one pair per rank)\n");
    MPI_Finalize();
    return 2;
  }
  char err[4096] = "";
  const int rc = twofold_run_config(MPI_COMM_SELF, argv[1 + 2 * rank], argv[2 + 2 * rank], NULL,
                                    err, sizeof err);
  printf("rank %d status %d [%s]\n", rank, rc, err);
  fflush(stdout);
  int worst = 0;
  MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst == TWOFOLD_OK ? 0 : 1;
}
