/* h5write.c — HDF5 write bandwidth of the engine's member tables.
 *
 *   mpiexec -n R bench_h5write FILE.h5 MEMBERS WIDTH COMPRESSION
 *
 * Writes MEMBERS rows of WIDTH doubles to /members/bench through the same calls the
 * ensemble scheduler uses (tf_h5_create_table + collective tf_h5_write_rows), with members
 * split into contiguous blocks over the ranks, then flushes and closes.  Prints one JSON
 * line with bytes, seconds and MB/s.  The data are smooth functions of the member id, so
 * compression sees realistic, not constant, doubles. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "h5io.h"

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc != 5) {
    if (rank == 0) fprintf(stderr, "usage: %s FILE.h5 MEMBERS WIDTH COMPRESSION\n", argv[0]);
    MPI_Finalize();
    return 2;
  }
  const char *path = argv[1];
  const uint64_t members = strtoull(argv[2], NULL, 10), width = strtoull(argv[3], NULL, 10);
  const int level = atoi(argv[4]);
  const uint64_t begin = members * (uint64_t)rank / (uint64_t)size;
  const uint64_t end = members * (uint64_t)(rank + 1) / (uint64_t)size;
  const size_t n = (size_t)(end - begin);
  double *buf = malloc((n ? n : 1) * width * sizeof *buf);
  uint64_t *ids = malloc((n ? n : 1) * sizeof *ids);
  for (size_t i = 0; i < n; i++) {
    ids[i] = begin + i;
    for (uint64_t j = 0; j < width; j++)
      buf[i * width + j] = sin(0.001 * (double)(begin + i) + (double)j);
  }
  if (rank == 0) unlink(path);
  MPI_Barrier(MPI_COMM_WORLD);
  tf_error err;
  const double t0 = MPI_Wtime();
  hid_t f = tf_h5_create(path, MPI_COMM_WORLD, &err);
  hid_t g = tf_h5_group(f, "members");
  hid_t d = tf_h5_create_table(g, "bench", H5T_NATIVE_DOUBLE, members, width, level, NULL);
  int rc = tf_h5_write_rows(d, H5T_NATIVE_DOUBLE, width, n, ids, buf);
  H5Dclose(d);
  H5Gclose(g);
  H5Fclose(f);
  MPI_Barrier(MPI_COMM_WORLD);
  const double secs = MPI_Wtime() - t0;
  if (rank == 0) {
    const double bytes = (double)members * (double)width * 8.0;
    printf(
        "{\"ranks\": %d, \"members\": %llu, \"bytes\": %.0f, \"compression\": %d, "
        "\"seconds\": %.4f, \"MB_per_s\": %.1f, \"ok\": %s}\n",
        size, (unsigned long long)members, bytes, level, secs, bytes / secs / 1e6,
        rc == 0 ? "true" : "false");
  }
  free(buf), free(ids);
  MPI_Finalize();
  return rc == 0 ? 0 : 1;
}
