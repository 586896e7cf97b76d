/* mpi_init_bare.c — the floor of an MPI program's start-up: MPI_Init and MPI_Finalize, nothing
 * else; the start-up section times twofold's trivial run against it. */
#include <mpi.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Finalize();
  return 0;
}
