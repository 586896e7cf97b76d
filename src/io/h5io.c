/* h5io.c — thin helpers over the HDF5 C API for the layout in h5io.h. */
#include "h5io.h"

#include "h5_headers.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "status.h"

/* The one results file of this process, named in the message when a write fails. */
static char open_path[4096];

void tf_h5_renamed(const char *path) {
  snprintf(open_path, sizeof open_path, "%s", path);
}

void tf_h5_quiet(void) {
  if (!getenv("TWOFOLD_HDF5_ERRORS")) H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

static hid_t parallel_fapl(MPI_Comm comm) {
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_fapl_mpio(fapl, comm, MPI_INFO_NULL);
  H5Pset_all_coll_metadata_ops(fapl, true);
  H5Pset_coll_metadata_write(fapl, true);
  return fapl;
}

/* Freed file space is never reused.  A compressed chunk that grows moves to a new address
 * and its old place is freed; were that place handed to another chunk before the chunk
 * index pointing at it reached the disk, a crash would leave the on-disk index of one
 * dataset reading another dataset's rows.  The price is a file that grows by the chunks
 * rewritten in each flush round (h5repack reclaims it). */
static hid_t durable_fcpl(void) {
  hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
  H5Pset_file_space_strategy(fcpl, H5F_FSPACE_STRATEGY_NONE, false, 1);
  return fcpl;
}

hid_t tf_h5_create(const char *path, MPI_Comm comm, tf_error *err) {
  struct stat st;
  if (stat(path, &st) == 0)
    return tf_fail_code(err, TF_ERR_CONFIG,
                        "output '%s' already exists; pass --resume to complete it or "
                        "--overwrite to replace it",
                        path);
  hid_t fapl = parallel_fapl(comm), fcpl = durable_fcpl();
  snprintf(open_path, sizeof open_path, "%s", path);
  hid_t f = H5Fcreate(path, H5F_ACC_EXCL, fcpl, fapl);
  H5Pclose(fcpl);
  H5Pclose(fapl);
  if (f < 0)
    return tf_fail_code(err, TF_ERR_IO, "cannot create output '%s': %s", path,
                        strerror(errno ? errno : EIO));
  return f;
}

const char *tf_file_kind(const char *path) {
  struct stat st;
  if (stat(path, &st) != 0) return NULL;
  if (S_ISREG(st.st_mode)) return "regular file";
  if (S_ISDIR(st.st_mode)) return "directory";
  if (S_ISCHR(st.st_mode)) return "character device";
  if (S_ISBLK(st.st_mode)) return "block device";
  if (S_ISFIFO(st.st_mode)) return "FIFO";
  if (S_ISSOCK(st.st_mode)) return "socket";
  return "special file";
}

/* Only regular files are opened as HDF5: a FIFO would block the open for ever, a device is
 * nobody's results. */
static int require_regular(const char *path, tf_error *err) {
  const char *kind = tf_file_kind(path);
  if (!kind) return tf_fail_code(err, TF_ERR_CONFIG, "cannot open '%s': %s", path, strerror(errno));
  if (strcmp(kind, "regular file") != 0)
    return tf_fail_code(err, TF_ERR_CONFIG, "'%s' is a %s, not a results file", path, kind);
  return 0;
}

bool tf_h5_is_results_file(const char *path) {
  const char *kind = tf_file_kind(path);
  if (!kind || strcmp(kind, "regular file") != 0 || H5Fis_hdf5(path) <= 0) return false;
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  /* An HDF5 file too damaged to open (a run killed while its metadata was being written)
   * can only be replaced: nobody can read it, and --overwrite is the way out. */
  if (f < 0) return true;
  char *version = tf_h5_attr_read_string(f, "twofold_version");
  const bool ours = version != NULL;
  free(version);
  H5Fclose(f);
  return ours;
}

hid_t tf_h5_open_rw(const char *path, MPI_Comm comm, tf_error *err) {
  if (require_regular(path, err)) return -1;
  if (H5Fis_hdf5(path) <= 0)
    return tf_fail_code(err, TF_ERR_CONFIG,
                        "cannot open '%s': missing, unreadable or not an HDF5 file", path);
  hid_t fapl = parallel_fapl(comm);
  snprintf(open_path, sizeof open_path, "%s", path);
  hid_t f = H5Fopen(path, H5F_ACC_RDWR, fapl);
  H5Pclose(fapl);
  if (f < 0)
    return tf_fail_code(err, TF_ERR_IO,
                        "cannot open '%s' for writing (corrupt, or open elsewhere?)", path);
  return f;
}

int tf_h5_recover_eoa(const char *path) {
  struct stat st; /* anything but a regular HDF5 file is for the parallel open to report */
  if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || H5Fis_hdf5(path) <= 0) return 0;
  hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  if (f < 0) return 0;
  haddr_t eoa = 0;
  int rc = 0;
  if (H5Fget_eoa(f, &eoa) >= 0 && (haddr_t)st.st_size > eoa)
    rc = H5Fincrement_filesize(f, 0) < 0 ? -1 : 0;
  return H5Fclose(f) < 0 || rc ? -1 : 0;
}

hid_t tf_h5_open_serial(const char *path, tf_error *err) {
  if (require_regular(path, err)) return -1;
  if (H5Fis_hdf5(path) <= 0)
    return tf_fail_code(err, TF_ERR_CONFIG, "'%s' is not an HDF5 file (or is corrupt)", path);
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0) return tf_fail_code(err, TF_ERR_CONFIG, "cannot open '%s' (corrupt HDF5 file?)", path);
  return f;
}

static int write_attr(hid_t obj, const char *name, hid_t type, const void *value) {
  if (H5Aexists(obj, name) > 0) H5Adelete(obj, name);
  hid_t space = H5Screate(H5S_SCALAR);
  hid_t attr = H5Acreate2(obj, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
  herr_t rc = attr < 0 ? -1 : H5Awrite(attr, type, value);
  if (attr >= 0) H5Aclose(attr);
  H5Sclose(space);
  return rc < 0 ? -1 : 0;
}

static hid_t utf8_string_type(void) {
  hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, H5T_VARIABLE);
  H5Tset_cset(t, H5T_CSET_UTF8);
  return t;
}

int tf_h5_attr_string(hid_t obj, const char *name, const char *value) {
  hid_t t = utf8_string_type();
  int rc = write_attr(obj, name, t, &value);
  H5Tclose(t);
  return rc;
}

int tf_h5_attr_strings(hid_t obj, const char *name, const char *const *values, size_t n) {
  if (H5Aexists(obj, name) > 0) H5Adelete(obj, name);
  hid_t t = utf8_string_type();
  const hsize_t dims[1] = {n};
  hid_t space = H5Screate_simple(1, dims, NULL);
  hid_t attr = H5Acreate2(obj, name, t, space, H5P_DEFAULT, H5P_DEFAULT);
  herr_t rc = attr < 0 ? -1 : H5Awrite(attr, t, values);
  if (attr >= 0) H5Aclose(attr);
  H5Sclose(space);
  H5Tclose(t);
  return rc < 0 ? -1 : 0;
}

int tf_h5_attr_names(hid_t obj, const char *name, const char *joined_names) {
  char *copy = strdup(joined_names);
  const char **names = calloc(strlen(joined_names) + 1, sizeof *names);
  size_t n = 0;
  for (char *at = copy, *end; copy && names && *joined_names; at = end + 1) {
    names[n++] = at;
    if (!(end = strchr(at, ','))) break;
    *end = '\0';
  }
  const int rc = copy && names ? tf_h5_attr_strings(obj, name, names, n) : -1;
  free(names);
  free(copy);
  return rc;
}

int tf_h5_attr_double(hid_t obj, const char *name, double value) {
  return write_attr(obj, name, H5T_NATIVE_DOUBLE, &value);
}

int tf_h5_attr_int(hid_t obj, const char *name, long long value) {
  return write_attr(obj, name, H5T_NATIVE_LLONG, &value);
}

/* An attribute holding exactly one value: anything else (a list where a scalar belongs, in a
 * damaged or hostile file) would make H5Aread write past the one value it is given. */
hid_t tf_h5_attr_open_single(hid_t obj, const char *name) {
  if (H5Aexists(obj, name) <= 0) return -1;
  hid_t attr = H5Aopen(obj, name, H5P_DEFAULT);
  if (attr < 0) return -1;
  hid_t space = H5Aget_space(attr);
  const hssize_t points = space >= 0 ? H5Sget_simple_extent_npoints(space) : -1;
  if (space >= 0) H5Sclose(space);
  if (points != 1) {
    H5Aclose(attr);
    return -1;
  }
  return attr;
}

/* Variable-length strings, read with bounds.
 *
 * A variable-length string attribute stores a reference (length, address of a global heap
 * collection, index of the object in it); the characters live in the collection.  HDF5 1.10
 * follows the reference trusting every number in it and in the collection: one flipped bit
 * makes H5Aread copy past its buffers (a crash) or parse the collection for ever (a hang).
 * So the reference is read as stored first, through a conversion to an opaque type of the
 * same size that leaves the bytes as they are (HDF5 hands a conversion function an
 * attribute's stored bytes), and the collection is parsed here as HDF5 parses it, every
 * length checked against the collection and the file.  Only a reference that passes goes
 * to H5Aread.  (Writing fixed-length strings instead would not help: files written so far,
 * and hostile ones, hold variable-length strings, and h5py reads fixed-length ones as
 * bytes, not str.) */
static const char stored_tag[] = "twofold: a variable-length string as stored";

typedef struct heap_ref {
  uint64_t length, addr;
  uint32_t index;
} heap_ref;

static herr_t keep_stored_bytes(hid_t src, hid_t dst, H5T_cdata_t *cdata, size_t n, size_t stride,
                                size_t bkg_stride, void *buf, void *bkg, hid_t dxpl) {
  (void)n, (void)stride, (void)bkg_stride, (void)buf, (void)bkg, (void)dxpl;
  if (cdata->command != H5T_CONV_INIT) return 0;
  cdata->need_bkg = H5T_BKG_NO;
  char *tag = H5Tget_tag(dst); /* only our own opaque type: no one else's conversion changes */
  const bool ours = tag && strcmp(tag, stored_tag) == 0;
  if (tag) H5free_memory(tag);
  return ours && H5Tis_variable_str(src) > 0 && H5Tget_size(src) == H5Tget_size(dst) ? 0 : -1;
}

static uint64_t little_endian(const uint8_t *p, size_t n) {
  uint64_t v = 0;
  for (size_t i = n; i-- > 0;) v = v << 8 | p[i];
  return v;
}

/* The sizes of addresses and lengths in the file, and where its address 0 is. */
static int file_sizes(hid_t file, size_t *sizeof_addr, size_t *sizeof_size, hsize_t *base) {
  hid_t fcpl = H5Fget_create_plist(file);
  const int rc = fcpl < 0 || H5Pget_sizes(fcpl, sizeof_addr, sizeof_size) < 0 ||
                 H5Pget_userblock(fcpl, base) < 0;
  if (fcpl >= 0) H5Pclose(fcpl);
  return rc || *sizeof_addr < 2 || *sizeof_addr > 8 || *sizeof_size < 2 || *sizeof_size > 8 ? -1
                                                                                            : 0;
}

/* The references of an attribute of `count` variable-length strings, as stored. */
static int stored_references(hid_t attr, size_t sizeof_addr, size_t count, heap_ref *refs) {
  static bool registered;
  const size_t width = 8 + sizeof_addr;
  hid_t vstring = H5Tcopy(H5T_C_S1), raw = H5Tcreate(H5T_OPAQUE, width);
  H5Tset_size(vstring, H5T_VARIABLE);
  H5Tset_tag(raw, stored_tag);
  if (!registered)
    registered =
        H5Tregister(H5T_PERS_SOFT, "twofold_stored_bytes", vstring, raw, keep_stored_bytes) >= 0;
  uint8_t *bytes = calloc(count ? count : 1, width);
  const int rc = !bytes || H5Aread(attr, raw, bytes) < 0 ? -1 : 0;
  H5Tclose(raw);
  H5Tclose(vstring);
  for (size_t i = 0; !rc && i < count; i++) {
    const uint8_t *b = bytes + i * width;
    refs[i].length = little_endian(b, 4);
    refs[i].addr = little_endian(b + 4, sizeof_addr);
    refs[i].index = (uint32_t)little_endian(b + 4 + sizeof_addr, 4);
  }
  free(bytes);
  return rc;
}

/* The global heap collection at ref->addr, parsed as H5HG__cache_heap_deserialize does (the
 * file format specification, "Global Heap"): true if the parse ends, every object lies inside
 * the collection and the collection inside the file, and the object of ref->index exists
 * with exactly ref->length bytes. */
static bool collection_holds(const uint8_t *c, uint64_t size, size_t sizeof_size,
                             const heap_ref *ref) {
  const uint64_t header = 8 + sizeof_size, object_header = 8 + sizeof_size;
  uint64_t at = header, max_index = 0, found_size = 0;
  bool found = false;
  while (at < size) {
    if (at + object_header > size) break; /* too small for an object: free space */
    const unsigned index = (unsigned)little_endian(c + at, 2);
    const uint64_t object_size = little_endian(c + at + 8, sizeof_size);
    if (object_size > size) return false;
    const uint64_t need = index > 0 ? object_header + (object_size + 7) / 8 * 8 : object_size;
    if (need < object_header || need > size - at) return false;
    if (index == ref->index) found = true, found_size = object_size;
    if (index > max_index) max_index = index;
    at += need;
  }
  return found && ref->index > 0 && ref->index <= max_index && found_size == ref->length;
}

/* Collections are at least 4 KiB (H5HG_MINSIZE); one larger than 1 GiB is not ours. */
enum { collection_min = 4096, collection_max = 1 << 30 };

static bool reference_fits(hid_t file, const heap_ref *ref, size_t sizeof_size, hsize_t base) {
  if (ref->addr == 0) return true; /* a null string: HDF5 reads nothing */
  char path[4096];
  if (H5Fget_name(file, path, sizeof path) <= 0) return false;
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  struct stat st;
  bool fits = false;
  uint8_t header[16];
  const uint64_t at = base + ref->addr, header_size = 8 + sizeof_size;
  if (fd >= 0 && fstat(fd, &st) == 0 && ref->addr < (uint64_t)st.st_size &&
      at < (uint64_t)st.st_size &&
      pread(fd, header, header_size, (off_t)at) == (ssize_t)header_size &&
      memcmp(header, "GCOL", 4) == 0 && header[4] == 1) {
    const uint64_t size = little_endian(header + 8, sizeof_size);
    uint8_t *c =
        size >= collection_min && size <= collection_max && size <= (uint64_t)st.st_size - at
            ? malloc(size)
            : NULL;
    fits = c && pread(fd, c, size, (off_t)at) == (ssize_t)size &&
           collection_holds(c, size, sizeof_size, ref);
    free(c);
  }
  if (fd >= 0) close(fd);
  return fits;
}

/* The strings of an attribute joined with ',' (one string: itself). */
static char *joined(char *const *values, size_t count) {
  size_t len = 1;
  for (size_t i = 0; i < count; i++) len += (values[i] ? strlen(values[i]) : 0) + 1;
  char *out = calloc(len, 1);
  for (size_t i = 0; out && i < count; i++)
    strcat(strcat(out, i ? "," : ""), values[i] ? values[i] : "");
  return out;
}

static char *read_variable_strings(hid_t attr, hid_t file, size_t count, char *why, size_t n) {
  size_t sizeof_addr = 0, sizeof_size = 0;
  hsize_t base = 0;
  heap_ref *refs = calloc(count ? count : 1, sizeof *refs);
  if (!refs || file_sizes(file, &sizeof_addr, &sizeof_size, &base) ||
      stored_references(attr, sizeof_addr, count, refs)) {
    snprintf(why, n, "its stored string reference cannot be read");
    free(refs);
    return NULL;
  }
  for (size_t i = 0; i < count; i++)
    if (!reference_fits(file, &refs[i], sizeof_size, base)) {
      snprintf(why, n,
               "its reference (%llu bytes, object %u of the global heap at address %llu) does "
               "not match that heap (one of the two is damaged)",
               (unsigned long long)refs[i].length, refs[i].index, (unsigned long long)refs[i].addr);
      free(refs);
      return NULL;
    }
  free(refs);
  hid_t t = utf8_string_type();
  char **values = calloc(count ? count : 1, sizeof *values), *copy = NULL;
  if (values && H5Aread(attr, t, values) >= 0) {
    copy = joined(values, count);
    for (size_t i = 0; i < count; i++) H5free_memory(values[i]);
  }
  free(values);
  H5Tclose(t);
  if (!copy) snprintf(why, n, "its string cannot be read");
  return copy;
}

/* Fixed-length strings are held in the attribute itself: read with their own size. */
static char *read_fixed_strings(hid_t attr, hid_t type, size_t count, char *why, size_t n) {
  const size_t size = H5Tget_size(type);
  const bool fits = size > 0 && size < collection_max && count <= collection_max / size;
  char *data = fits ? calloc(count ? count : 1, size) : NULL, *value = NULL;
  char **values = calloc(count ? count : 1, sizeof *values);
  hid_t t = H5Tcopy(type);
  if (data && values && t >= 0 && H5Aread(attr, t, data) >= 0) {
    for (size_t i = 0; i < count; i++) values[i] = strndup(data + i * size, size);
    value = joined(values, count);
    for (size_t i = 0; i < count; i++) free(values[i]);
  }
  if (!value) snprintf(why, n, "its string cannot be read");
  if (t >= 0) H5Tclose(t);
  free(values);
  free(data);
  return value;
}

/* The attribute `name` of obj if it is one value or a list of at most most_strings values
 * (-1 otherwise), and how many. */
enum { most_strings = 4096 };
static hid_t attr_open_list(hid_t obj, const char *name, size_t *count) {
  hid_t attr = H5Aopen(obj, name, H5P_DEFAULT);
  hid_t space = attr >= 0 ? H5Aget_space(attr) : -1;
  const int rank = space >= 0 ? H5Sget_simple_extent_ndims(space) : -1;
  const hssize_t points = space >= 0 ? H5Sget_simple_extent_npoints(space) : -1;
  if (space >= 0) H5Sclose(space);
  if (attr >= 0 &&
      (rank < 0 || rank > 1 || points < 0 || points > most_strings || (rank == 0 && points != 1))) {
    H5Aclose(attr);
    attr = -1;
  }
  *count = points > 0 ? (size_t)points : 0;
  return attr;
}

/* One string, or (list) a list of strings joined with ','. */
static int get_strings(hid_t obj, const char *name, bool list, char **value, char *why, size_t n) {
  *value = NULL;
  if (H5Aexists(obj, name) <= 0) return 0;
  size_t count = 0;
  hid_t attr = attr_open_list(obj, name, &count);
  if (attr >= 0 && !list && count != 1) H5Aclose(attr), attr = -1;
  hid_t type = attr >= 0 ? H5Aget_type(attr) : -1;
  hid_t file = attr >= 0 ? H5Iget_file_id(attr) : -1;
  if (type < 0 || H5Tget_class(type) != H5T_STRING)
    snprintf(why, n, list ? "it is not a string or a list of strings" : "it is not one string");
  else if (H5Tis_variable_str(type) > 0)
    *value = file >= 0 ? read_variable_strings(attr, file, count, why, n) : NULL;
  else
    *value = read_fixed_strings(attr, type, count, why, n);
  if (file >= 0) H5Fclose(file);
  if (type >= 0) H5Tclose(type);
  if (attr >= 0) H5Aclose(attr);
  return *value ? 0 : -1;
}

int tf_h5_attr_get_string(hid_t obj, const char *name, char **value, char *why, size_t n) {
  return get_strings(obj, name, false, value, why, n);
}

int tf_h5_attr_get_names(hid_t obj, const char *name, char **value, char *why, size_t n) {
  return get_strings(obj, name, true, value, why, n);
}

char *tf_h5_attr_read_string(hid_t obj, const char *name) {
  char *value = NULL, why[256];
  tf_h5_attr_get_string(obj, name, &value, why, sizeof why);
  return value;
}

char *tf_h5_attr_read_names(hid_t obj, const char *name) {
  char *value = NULL, why[256];
  tf_h5_attr_get_names(obj, name, &value, why, sizeof why);
  return value;
}

int tf_h5_attr_read_int(hid_t obj, const char *name, long long *value) {
  hid_t attr = tf_h5_attr_open_single(obj, name);
  if (attr < 0) return -1;
  herr_t rc = H5Aread(attr, H5T_NATIVE_LLONG, value);
  H5Aclose(attr);
  return rc < 0 ? -1 : 0;
}

hid_t tf_h5_group(hid_t file, const char *path) {
  if (H5Lexists(file, path, H5P_DEFAULT) > 0) return H5Gopen2(file, path, H5P_DEFAULT);
  return H5Gcreate2(file, path, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
}

/* Parallel writes of filtered chunks bypass the raw-data chunk cache; a chunk cached by an
 * earlier read (the done mask on resume) would later be written back stale over newer
 * data.  So member tables are opened without a chunk cache. */
hid_t tf_h5_table_access(void) {
  hid_t dapl = H5Pcreate(H5P_DATASET_ACCESS);
  H5Pset_chunk_cache(dapl, 0, 0, 1.0);
  return dapl;
}

hid_t tf_h5_open_table(hid_t loc, const char *name) {
  hid_t dapl = tf_h5_table_access();
  hid_t dset = H5Dopen2(loc, name, dapl);
  H5Pclose(dapl);
  return dset;
}

hid_t tf_h5_create_table(hid_t loc, const char *name, hid_t type, uint64_t rows, uint64_t width,
                         int compression, const char *doc) {
  const int rank = width > 1 ? 2 : 1;
  const hsize_t dims[2] = {rows, width};
  /* About 256 KiB per chunk: large enough for compression, small enough for partial reads. */
  const size_t row_bytes = (size_t)width * H5Tget_size(type);
  hsize_t chunk_rows = (hsize_t)(262144 / (row_bytes ? row_bytes : 1));
  if (chunk_rows < 1) chunk_rows = 1;
  if (chunk_rows > rows) chunk_rows = rows ? rows : 1;
  const hsize_t chunk[2] = {chunk_rows, width};
  hid_t space = H5Screate_simple(rank, dims, NULL);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, rank, chunk);
  if (compression > 0) {
    H5Pset_shuffle(dcpl);
    H5Pset_deflate(dcpl, (unsigned)compression);
  }
  /* Parallel HDF5 needs chunks of filtered datasets allocated when first written together;
   * unwritten rows read as the zero fill value. */
  H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_INCR);
  hid_t dapl = tf_h5_table_access();
  hid_t dset = H5Dcreate2(loc, name, type, space, H5P_DEFAULT, dcpl, dapl);
  H5Pclose(dapl);
  H5Pclose(dcpl);
  H5Sclose(space);
  if (dset >= 0 && doc) tf_h5_attr_string(dset, "doc", doc);
  return dset;
}

int tf_h5_write_rows(hid_t dset, hid_t memtype, uint64_t width, size_t n, const uint64_t *ids,
                     const void *buf) {
  hid_t fspace = H5Dget_space(dset);
  const int rank = H5Sget_simple_extent_ndims(fspace);
  hsize_t mdims[2] = {n ? n : 1, width};
  hid_t mspace = H5Screate_simple(rank, mdims, NULL);
  if (n == 0) {
    H5Sselect_none(fspace);
    H5Sselect_none(mspace);
  } else {
    H5Sselect_none(fspace);
    /* Coalesce runs of consecutive ids into one hyperslab block each. */
    for (size_t i = 0; i < n;) {
      size_t j = i + 1;
      while (j < n && ids[j] == ids[j - 1] + 1) j++;
      const hsize_t start[2] = {ids[i], 0}, count[2] = {j - i, width};
      H5Sselect_hyperslab(fspace, H5S_SELECT_OR, start, NULL, count, NULL);
      i = j;
    }
  }
  hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
  H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE);
  herr_t rc = H5Dwrite(dset, memtype, mspace, fspace, dxpl, buf);
  H5Pclose(dxpl);
  H5Sclose(mspace);
  H5Sclose(fspace);
  return rc < 0 ? -1 : 0;
}

int tf_h5_read_rows(hid_t dset, hid_t memtype, uint64_t width, uint64_t start, uint64_t count,
                    void *buf) {
  hid_t fspace = H5Dget_space(dset);
  const int rank = H5Sget_simple_extent_ndims(fspace);
  const hsize_t fstart[2] = {start, 0}, fcount[2] = {count, width};
  H5Sselect_hyperslab(fspace, H5S_SELECT_SET, fstart, NULL, fcount, NULL);
  hid_t mspace = H5Screate_simple(rank, fcount, NULL);
  herr_t rc = H5Dread(dset, memtype, mspace, fspace, H5P_DEFAULT, buf);
  H5Sclose(mspace);
  H5Sclose(fspace);
  return rc < 0 ? -1 : 0;
}

/* True if `loc` lies in a file open with MPI-IO (collective transfers are refused otherwise:
 * a summary is written into a file opened serially, see results.h). */
static bool in_parallel_file(hid_t loc) {
  hid_t f = H5Iget_file_id(loc), fapl = f >= 0 ? H5Fget_access_plist(f) : -1;
  const bool mpio = fapl >= 0 && H5Pget_driver(fapl) == H5FD_MPIO;
  if (fapl >= 0) H5Pclose(fapl);
  if (f >= 0) H5Fclose(f);
  return mpio;
}

int tf_h5_write_small(hid_t loc, const char *name, hid_t type, uint64_t n, const void *data,
                      const char *doc) {
  return tf_h5_write_small_matrix(loc, name, type, n, 0, data, doc);
}

int tf_h5_write_small_matrix(hid_t loc, const char *name, hid_t type, uint64_t rows, uint64_t cols,
                             const void *data, const char *doc) {
  if (H5Lexists(loc, name, H5P_DEFAULT) > 0) H5Ldelete(loc, name, H5P_DEFAULT);
  const hsize_t dims[2] = {rows, cols};
  hid_t space = H5Screate_simple(cols ? 2 : 1, dims, NULL);
  hid_t dset = H5Dcreate2(loc, name, type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  herr_t rc = -1;
  if (dset >= 0) {
    hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
    if (in_parallel_file(loc)) H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE);
    rc = H5Dwrite(dset, type, H5S_ALL, H5S_ALL, dxpl, data);
    H5Pclose(dxpl);
    if (doc) tf_h5_attr_string(dset, "doc", doc);
    H5Dclose(dset);
  }
  H5Sclose(space);
  return rc < 0 ? -1 : 0;
}

/* Bytes held by datasets, for the compaction decision. */
static herr_t add_storage(hid_t obj, const char *name, const H5O_info_t *info, void *op) {
  if (info->type == H5O_TYPE_DATASET) {
    hid_t d = H5Dopen2(obj, name, H5P_DEFAULT);
    if (d >= 0) *(uint64_t *)op += H5Dget_storage_size(d), H5Dclose(d);
  }
  return 0;
}

static herr_t copy_attr(hid_t loc, const char *name, const H5A_info_t *info, void *op) {
  (void)info;
  hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
  if (a < 0) return -1;
  hid_t ftype = H5Aget_type(a), space = H5Aget_space(a);
  hid_t mtype = H5Tget_native_type(ftype, H5T_DIR_ASCEND);
  const hssize_t n = H5Sget_simple_extent_npoints(space);
  void *buf = calloc((size_t)(n > 0 ? n : 1), H5Tget_size(mtype));
  herr_t rc = -1;
  if (buf && H5Aread(a, mtype, buf) >= 0) {
    hid_t b = H5Acreate2(*(hid_t *)op, name, ftype, space, H5P_DEFAULT, H5P_DEFAULT);
    if (b >= 0) rc = H5Awrite(b, mtype, buf), H5Aclose(b);
    H5Dvlen_reclaim(mtype, space, H5P_DEFAULT, buf);
  }
  free(buf);
  H5Tclose(mtype), H5Tclose(ftype), H5Sclose(space), H5Aclose(a);
  return rc < 0 ? -1 : 0;
}

/* Whether `type` holds variable-length data anywhere (H5Tdetect_class does not see a
 * variable-length string inside a compound), or references. */
static bool holds_variable(hid_t type) {
  const H5T_class_t c = H5Tget_class(type);
  bool held = c == H5T_VLEN || c == H5T_REFERENCE || H5Tis_variable_str(type) > 0;
  if (c == H5T_COMPOUND)
    for (int i = 0; !held && i < H5Tget_nmembers(type); i++) {
      hid_t m = H5Tget_member_type(type, (unsigned)i);
      held = m < 0 || holds_variable(m);
      if (m >= 0) H5Tclose(m);
    }
  if (c == H5T_ARRAY) {
    hid_t base = H5Tget_super(type);
    held = base < 0 || holds_variable(base);
    if (base >= 0) H5Tclose(base);
  }
  return held;
}

/* An attribute whose data the copy may read: no variable-length data but strings that pass
 * the bounded read. */
static herr_t attribute_copyable(hid_t loc, const char *name, const H5A_info_t *info, void *op) {
  (void)info, (void)op;
  hid_t attr = H5Aopen(loc, name, H5P_DEFAULT), type = attr >= 0 ? H5Aget_type(attr) : -1;
  const bool is_string = type >= 0 && H5Tget_class(type) == H5T_STRING;
  const bool other_variable = type >= 0 && !is_string && holds_variable(type);
  if (type >= 0) H5Tclose(type);
  if (attr >= 0) H5Aclose(attr);
  char why[200], *value = NULL;
  const bool ok = attr >= 0 && type >= 0 && !other_variable &&
                  (!is_string || tf_h5_attr_get_names(loc, name, &value, why, sizeof why) == 0);
  free(value);
  return ok ? 0 : -1;
}

/* The string attributes twofold reads from the root group of a results file.  They are
 * checked by name: listing a damaged attribute table (H5Aiterate2) can itself crash HDF5. */
static const char *const root_strings[] = {"twofold_version", "created",           "config",
                                           "config_source",   "fingerprint",       "model",
                                           "model_plugin",    "model_plugin_code", NULL};
/* merged_from: the parts' paths (older files: one string, the paths joined with newlines) */
static const char *const root_name_lists[] = {"state_names", "merged_from", NULL};

static int check_root(hid_t file, const char *path, const char *const *names, bool list,
                      tf_error *err) {
  for (const char *const *name = names; *name; name++) {
    char why[200], *value = NULL;
    if (get_strings(file, *name, list, &value, why, sizeof why))
      return tf_fail_code(err, TF_ERR_CONFIG,
                          "'%s': corrupt or not a twofold results file: attribute '%s': %s", path,
                          *name, why);
    free(value);
  }
  return 0;
}

int tf_h5_check_strings(hid_t file, const char *path, tf_error *err) {
  if (tf_h5_check_headers(file, path, err)) return -1; /* before any attribute is decoded */
  return check_root(file, path, root_strings, false, err) ||
                 check_root(file, path, root_name_lists, true, err)
             ? -1
             : 0;
}

/* Copying reads every attribute and dataset, and HDF5 decodes their headers and follows
 * their heap references unchecked: every header must pass h5_headers.c (so that listing the
 * attributes is safe), every string attribute must pass the bounded read, and no other
 * variable-length data is copied at all (twofold writes none). */
static herr_t check_copyable(hid_t loc, const char *name, const H5O_info_t *info, void *op) {
  (void)op;
  hid_t obj = H5Oopen(loc, name, H5P_DEFAULT);
  int rc = obj < 0 || H5Aiterate2(obj, H5_INDEX_NAME, H5_ITER_INC, NULL, attribute_copyable, NULL)
               ? -1
               : 0;
  if (!rc && info->type == H5O_TYPE_DATASET) {
    hid_t type = H5Dget_type(obj);
    rc = type < 0 || holds_variable(type) ? -1 : 0;
    if (type >= 0) H5Tclose(type);
  }
  if (obj >= 0) H5Oclose(obj);
  return rc;
}

static herr_t copy_link(hid_t loc, const char *name, const H5L_info_t *info, void *op) {
  (void)info;
  return H5Ocopy(loc, name, *(hid_t *)op, name, H5P_DEFAULT, H5P_DEFAULT) < 0 ? -1 : 0;
}

int tf_h5_compact(const char *path, double factor, bool *compacted) {
  *compacted = false;
  struct stat st;
  if (stat(path, &st) != 0) return -1;
  /* within the megabyte of slack below whatever the live data: no need to open it */
  if ((double)st.st_size <= (double)(1 << 20)) return 0;
  hid_t src = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (src < 0) return -1;
  uint64_t live = 0;
  H5Ovisit(src, H5_INDEX_NAME, H5_ITER_NATIVE, add_storage, &live);
  if ((double)st.st_size <= factor * (double)live + (1 << 20)) return H5Fclose(src) < 0 ? -1 : 0;
  tf_error ignored; /* a file that fails stays as written, still correct */
  if (tf_h5_check_headers(src, path, &ignored) ||
      H5Ovisit(src, H5_INDEX_NAME, H5_ITER_NATIVE, check_copyable, NULL) != 0) {
    H5Fclose(src);
    return -1;
  }
  char tmp[4200];
  snprintf(tmp, sizeof tmp, "%s.compacting", path);
  unlink(tmp); /* left by a compaction that died */
  hid_t fcpl = durable_fcpl();
  hid_t dst = H5Fcreate(tmp, H5F_ACC_EXCL, fcpl, H5P_DEFAULT);
  H5Pclose(fcpl);
  int rc = dst < 0 || H5Aiterate2(src, H5_INDEX_NAME, H5_ITER_NATIVE, NULL, copy_attr, &dst) < 0 ||
           H5Literate(src, H5_INDEX_NAME, H5_ITER_NATIVE, NULL, copy_link, &dst) < 0;
  if (dst >= 0 && H5Fclose(dst) < 0) rc = 1;
  H5Fclose(src);
  if (!rc && rename(tmp, path) == 0) {
    *compacted = true;
    return 0;
  }
  unlink(tmp);
  return -1;
}

int tf_h5_flush(hid_t obj) {
  return H5Fflush(obj, H5F_SCOPE_GLOBAL) < 0 ? -1 : 0;
}

hid_t tf_h5_status_type(void) {
  return tf_h5_status_type_upto(TF_MEMBER_STATUS_COUNT);
}

hid_t tf_h5_status_type_upto(int count) {
  hid_t t = H5Tenum_create(H5T_NATIVE_UINT8);
  for (int s = 0; s < count; s++) {
    const uint8_t v = (uint8_t)s;
    H5Tenum_insert(t, tf_member_status_name(s), &v);
  }
  return t;
}

/* Every write of parallel HDF5 goes through the two MPI-IO calls below, wrapped through the
 * MPI profiling interface for two reasons.
 *
 * A failed write (a full disk) is fatal to the whole job.  Parallel HDF5 gives up a write on
 * the rank that saw the error while the others go on into the collective calls that follow,
 * and the ranks then wait for each other for ever (or crash closing the file).  So the rank
 * that sees the error says so and aborts the job: every rank exits nonzero at once, and the
 * file is left as a crash leaves it, which --resume verifies and repairs (the done mask is
 * written only after the rows it covers are flushed).
 *
 * The crash test hook: TWOFOLD_TEST_KILL_AT_WRITE=K[@R] makes rank R (default 0) raise
 * SIGKILL just before its K-th MPI-IO write, so a test can stop a run at any moment inside
 * HDF5's data and metadata writes, chosen by a count instead of a clock; with "count" every
 * rank reports its number of writes at exit. */
static long long kill_at_write = -2, writes_done;
static int writer_rank;
/* MPI_COMM_NULL until twofold owns the process (the executable) or is running a config (the
 * library entry point): a program linking libtwofold keeps its own MPI-IO writes to itself. */
static MPI_Comm guard_comm = MPI_COMM_NULL;

void tf_h5_guard_writes(MPI_Comm comm) {
  guard_comm = comm;
}

static void report_writes(void) {
  fprintf(stderr, "twofold: rank %d made %lld MPI-IO writes\n", writer_rank, writes_done);
}

static void before_write(void) {
  if (guard_comm == MPI_COMM_NULL) return;
  if (kill_at_write == -2) {
    kill_at_write = -1;
    const char *spec = getenv("TWOFOLD_TEST_KILL_AT_WRITE");
    long long k = 0;
    int r = 0;
    MPI_Comm_rank(guard_comm, &writer_rank);
    if (spec && strcmp(spec, "count") == 0) atexit(report_writes);
    if (spec && sscanf(spec, "%lld@%d", &k, &r) >= 1 && k > 0 && writer_rank == r)
      kill_at_write = k;
  }
  if (++writes_done == kill_at_write) raise(SIGKILL);
}

static int after_write(int rc, int count, MPI_Datatype type, MPI_Status *status) {
  if (guard_comm == MPI_COMM_NULL) return rc;
  int written = count;
  if (rc == MPI_SUCCESS && status != MPI_STATUS_IGNORE) MPI_Get_count(status, type, &written);
  if (rc == MPI_SUCCESS && written == count) return rc;
  char why[MPI_MAX_ERROR_STRING] = "short write";
  int len = 0;
  if (rc != MPI_SUCCESS) MPI_Error_string(rc, why, &len);
  /* a file-size limit fails writes the same way (SIGXFSZ is ignored, see cli.c) */
  struct rlimit fsize;
  char limit[96] = "";
  if (getrlimit(RLIMIT_FSIZE, &fsize) == 0 && fsize.rlim_cur != RLIM_INFINITY)
    snprintf(limit, sizeof limit, ", or has it reached the file size limit (ulimit -f: %llu bytes)",
             (unsigned long long)fsize.rlim_cur);
  fprintf(stderr,
          "twofold: error: writing '%s' failed (%s; is its file system full%s?); the members "
          "flushed before are kept: make room and run again with --resume\n",
          open_path[0] ? open_path : "the results file", why, limit);
  fflush(stderr);
  MPI_Abort(guard_comm, TF_EXIT_IO); /* the output cannot be written */
  return rc;
}

int MPI_File_write_at(MPI_File fh, MPI_Offset offset, const void *buf, int count,
                      MPI_Datatype datatype, MPI_Status *status) {
  before_write();
  return after_write(PMPI_File_write_at(fh, offset, buf, count, datatype, status), count, datatype,
                     status);
}

int MPI_File_write_at_all(MPI_File fh, MPI_Offset offset, const void *buf, int count,
                          MPI_Datatype datatype, MPI_Status *status) {
  before_write();
  return after_write(PMPI_File_write_at_all(fh, offset, buf, count, datatype, status), count,
                     datatype, status);
}
