/* h5io.h — the one results file per job, written in parallel.
 *
 * All ranks open the file with the MPI-IO driver.  Per-member tables are chunked and
 * deflate-compressed; parallel HDF5 writes filtered datasets only collectively, so every
 * rank calls tf_h5_write_rows in each flush round, with zero rows if it has none.  Rows are
 * addressed by member id, which is what makes the file independent of the rank count. */
#ifndef TF_H5IO_H
#define TF_H5IO_H

#include <hdf5.h>
#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

/* Creates a new file; fails (without touching it) if the path exists. */
hid_t tf_h5_create(const char *path, MPI_Comm comm, tf_error *err);
/* The results file now has this name (for error messages). */
void tf_h5_renamed(const char *path);
/* Opens an existing file for reading and writing (all ranks). */
hid_t tf_h5_open_rw(const char *path, MPI_Comm comm, tf_error *err);
/* A run killed in the middle of H5Fflush can leave chunk indexes on disk that point past the
 * end of the file recorded in the superblock, though the chunks are there: HDF5 then refuses
 * to read them.  Called on one process before a file is resumed, this moves that end to the
 * file's real size (what h5clear --increment does). */
int tf_h5_recover_eoa(const char *path);
/* Opens a file for reading on this process only (for `twofold info` and tests). */
hid_t tf_h5_open_serial(const char *path, tf_error *err);

/* Attributes on any object (collective when the file is parallel; all ranks pass the same
 * values). */
int tf_h5_attr_string(hid_t obj, const char *name, const char *value);
/* An array of n strings (names, in order). */
int tf_h5_attr_strings(hid_t obj, const char *name, const char *const *values, size_t n);
/* The same from one comma-joined string ("x,v,theta"; "" is no names): every list of names
 * (state names, event kinds, log fields) is stored as an array, never as one joined string. */
int tf_h5_attr_names(hid_t obj, const char *name, const char *joined_names);
int tf_h5_attr_double(hid_t obj, const char *name, double value);
int tf_h5_attr_int(hid_t obj, const char *name, long long value);
/* What path is ("regular file", "directory", "character device", "FIFO", ...), following
 * links; NULL (errno set) if it does not exist. */
const char *tf_file_kind(const char *path);
/* True if path is a regular file holding a twofold results file (HDF5 with twofold_version,
 * or HDF5 too damaged to open): the only kind of file --overwrite may replace. */
bool tf_h5_is_results_file(const char *path);

/* The attribute `name` of obj if it exists and holds exactly one value (-1 otherwise). */
hid_t tf_h5_attr_open_single(hid_t obj, const char *name);
/* A string attribute (variable or fixed length), read with bounds (see h5io.c): 0 with
 * *value (malloc'd), or with *value NULL if obj has no attribute `name`; -1 with `why` if it
 * exists but is not one readable string (a damaged or hostile file). */
int tf_h5_attr_get_string(hid_t obj, const char *name, char **value, char *why, size_t n);
/* The same, NULL if absent or unreadable. */
char *tf_h5_attr_read_string(hid_t obj, const char *name);
/* A list of strings (a tf_h5_attr_names attribute, or one string as older files hold it),
 * read with the same bounds, joined with ','. */
int tf_h5_attr_get_names(hid_t obj, const char *name, char **value, char *why, size_t n);
char *tf_h5_attr_read_names(hid_t obj, const char *name);
/* Every object header's attribute messages hold what they claim (h5_headers.h), and every
 * string attribute twofold reads from the root of a results file passes the bounded read: 0, or -1
 * with err "'PATH': corrupt or not a twofold results file: attribute 'NAME':
 * ...". */
int tf_h5_check_strings(hid_t file, const char *path, tf_error *err);
int tf_h5_attr_read_int(hid_t obj, const char *name, long long *value);

/* Creates a group, or opens it if it exists. */
hid_t tf_h5_group(hid_t file, const char *path);

/* A (rows x width) table, or (rows) if width is 1, chunked and compressed (level 0 = no
 * compression).  `doc` goes into a "doc" attribute. */
hid_t tf_h5_create_table(hid_t loc, const char *name, hid_t type, uint64_t rows, uint64_t width,
                         int compression, const char *doc);

/* Opens a table for parallel writing (no raw-data chunk cache; see h5io.c). */
hid_t tf_h5_open_table(hid_t loc, const char *name);
hid_t tf_h5_table_access(void);

/* Collective write of n rows with the given (strictly increasing) member ids; `buf` holds
 * the rows in the same order, `width` elements of `memtype` each. */
int tf_h5_write_rows(hid_t dset, hid_t memtype, uint64_t width, size_t n, const uint64_t *ids,
                     const void *buf);

/* Independent read of rows [start, start+count). */
int tf_h5_read_rows(hid_t dset, hid_t memtype, uint64_t width, uint64_t start, uint64_t count,
                    void *buf);

/* A small dataset written by all ranks with identical contents (summaries). */
int tf_h5_write_small(hid_t loc, const char *name, hid_t type, uint64_t n, const void *data,
                      const char *doc);
/* The same as a (rows x cols) matrix, rows one after the other in data (cols 0: 1-D). */
int tf_h5_write_small_matrix(hid_t loc, const char *name, hid_t type, uint64_t rows, uint64_t cols,
                             const void *data, const char *doc);

/* One process, the file closed everywhere: if the file is more than `factor` times the bytes
 * its datasets hold (plus 1 MiB), copies every object and root attribute into PATH.compacting
 * and renames it over PATH (chunks keep their layout and compression; the space the flush
 * rounds left behind is dropped).  On failure PATH is unchanged. */
int tf_h5_compact(const char *path, double factor, bool *compacted);
/* H5Fflush of the whole file: metadata and raw data reach the file system (collective). */
int tf_h5_flush(hid_t obj);

/* The HDF5 enum type of member statuses (caller closes). */
hid_t tf_h5_status_type(void);
/* The enum of the first `count` statuses only: a new file of a run that cannot record crashed
 * or timeout (not isolated) stores the type files had before those existed. */
hid_t tf_h5_status_type_upto(int count);

/* Silences HDF5's automatic error stack printing (we report errors ourselves). */
void tf_h5_quiet(void);

/* Turns the MPI-IO write guard on for the run on comm (a failed or short write aborts comm;
 * the crash-test hook TWOFOLD_TEST_KILL_AT_WRITE counts ranks of comm), or off with
 * MPI_COMM_NULL: on for the whole life of the executable (MPI_COMM_WORLD), and only during a
 * run inside a program that links the library (the run's communicator). */
void tf_h5_guard_writes(MPI_Comm comm);

#endif
