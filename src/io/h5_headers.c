/* h5_headers.c — the attribute messages of a results file's object headers, checked before
 * HDF5 decodes them.
 *
 * HDF5 1.10 decodes an attribute message trusting the lengths stored in it: a flipped bit in
 * a name, datatype or dataspace length makes it copy past the message (a crash, seen on a
 * damaged file under --resume, whose first write of an attribute decodes every attribute
 * of the object).  So every object's header is read here as the file format specification
 * lays it out ("Version 1 Object Header", "Version 2 Object Header", "Attribute Message",
 * "Dataspace Message", "Datatype Message"), and each attribute message must hold its parts
 * and its data.  HDF5 itself checks the header chunks only against each other. */
#include "h5_headers.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum {
  chunk_max = 1 << 24, /* 16 MiB: far beyond any header twofold writes */
  chunks_max = 256,    /* continuation chunks followed per object */
  msg_continuation = 0x10,
  msg_attribute = 0x0c,
};

typedef struct file_view {
  int fd;
  uint64_t size, base;
  size_t sizeof_addr, sizeof_size;
} file_view;

typedef struct chunk {
  uint64_t addr, length;
  bool prefixed; /* a version-2 continuation chunk: "OCHK" first, a checksum last */
} chunk;

static uint64_t le(const uint8_t *p, size_t n) {
  uint64_t v = 0;
  for (size_t i = n; i-- > 0;) v = v << 8 | p[i];
  return v;
}

static uint8_t *read_at(const file_view *f, uint64_t addr, uint64_t n) {
  if (n == 0 || n > chunk_max || addr > f->size - f->base || n > f->size - f->base - addr)
    return NULL;
  uint8_t *buf = malloc(n);
  if (buf && pread(f->fd, buf, n, (off_t)(f->base + addr)) != (ssize_t)n) {
    free(buf);
    return NULL;
  }
  return buf;
}

static uint64_t align8(uint64_t n) {
  return (n + 7) / 8 * 8;
}

/* Points described by a dataspace message (1 for scalar, 0 for null); false if its dimensions
 * do not fit in `n` bytes. */
static bool dataspace_points(const uint8_t *d, uint64_t n, size_t sizeof_size, uint64_t *points) {
  if (n < 4 || d[0] < 1 || d[0] > 2) return false;
  const unsigned rank = d[1], version = d[0];
  const uint64_t dims_at = version == 1 ? 8 : 4;
  if (rank > 32 || dims_at + (uint64_t)rank * sizeof_size > n) return false;
  if (version == 2 && d[3] == 2) return *points = 0, true; /* null dataspace */
  uint64_t p = 1;
  for (unsigned i = 0; i < rank; i++) {
    const uint64_t dim = le(d + dims_at + i * sizeof_size, sizeof_size);
    if (dim != 0 && p > UINT64_MAX / dim) return false;
    p *= dim;
  }
  *points = p;
  return true;
}

/* One attribute message of `n` bytes: version 1 pads name, datatype and dataspace to 8 bytes,
 * versions 2 and 3 do not; version 3 adds the name's character set. */
static bool attribute_fits(const uint8_t *d, uint64_t n, size_t sizeof_size) {
  if (n < 8 || d[0] < 1 || d[0] > 3) return false;
  const unsigned version = d[0];
  const uint64_t name = le(d + 2, 2), type = le(d + 4, 2), space = le(d + 6, 2);
  const uint64_t at_name = version == 3 ? 9 : 8;
  const uint64_t at_type = at_name + (version == 1 ? align8(name) : name);
  const uint64_t at_space = at_type + (version == 1 ? align8(type) : type);
  const uint64_t at_data = at_space + (version == 1 ? align8(space) : space);
  if (name < 1 || type < 8 || space < 4 || at_data > n || d[at_name + name - 1] != 0 ||
      memchr(d + at_name, 0, name) != d + at_name + name - 1)
    return false;
  uint64_t points;
  if (!dataspace_points(d + at_space, space, sizeof_size, &points)) return false;
  const uint64_t element = le(d + at_type + 4, 4);
  return element == 0 || points <= (n - at_data) / element;
}

/* The messages of one chunk (a version-1 layout when v1, else version 2's, whose messages
 * may carry a creation order): attributes checked, continuations queued. */
static bool messages_fit(const file_view *f, const uint8_t *c, uint64_t len, bool v1,
                         unsigned flags, chunk *queue, int *queued) {
  const uint64_t head = v1 ? 8 : (flags & 0x04) ? 6 : 4;
  uint64_t at = 0;
  while (at + head <= len) {
    const unsigned type = v1 ? (unsigned)le(c + at, 2) : c[at];
    const uint64_t size = le(c + at + (v1 ? 2 : 1), 2);
    const uint8_t *data = c + at + head;
    if (size > len - at - head) return false;
    if (type == msg_attribute && !attribute_fits(data, size, f->sizeof_size)) return false;
    if (type == msg_continuation) {
      if (size < f->sizeof_addr + f->sizeof_size || *queued >= chunks_max) return false;
      queue[(*queued)++] =
          (chunk){le(data, f->sizeof_addr), le(data + f->sizeof_addr, f->sizeof_size), !v1};
    }
    at += head + size;
  }
  return true;
}

/* The header at addr: its first chunk from the prefix, then every continuation chunk. */
static bool header_fits(const file_view *f, uint64_t addr) {
  uint8_t *prefix = read_at(f, addr, 16);
  if (!prefix) return false;
  bool v1 = prefix[0] == 1, ok = v1 || memcmp(prefix, "OHDR", 4) == 0;
  unsigned flags = v1 ? 0 : prefix[5];
  uint64_t first = 0, length = 0;
  if (v1) {
    first = addr + 16, length = le(prefix + 8, 4);
  } else if (ok) {
    const uint64_t at = 6 + ((flags & 0x20) ? 16 : 0) + ((flags & 0x10) ? 4 : 0);
    const size_t width = (size_t)1 << (flags & 3);
    uint8_t *more = read_at(f, addr, at + width);
    ok = more != NULL && prefix[4] == 2;
    if (ok) first = addr + at + width, length = le(more + at, width);
    free(more);
  }
  free(prefix);
  chunk queue[chunks_max];
  int queued = 0;
  if (ok) queue[queued++] = (chunk){first, length, false};
  for (int i = 0; ok && i < queued; i++) {
    const chunk ch = queue[i];
    uint8_t *c = read_at(f, ch.addr, ch.length);
    /* "OCHK" before a version-2 continuation's messages, its checksum after them (the
     * first chunk's length counts neither) */
    const uint64_t frame = ch.prefixed ? 8 : 0;
    ok = c && ch.length >= frame && (!ch.prefixed || memcmp(c, "OCHK", 4) == 0) &&
         messages_fit(f, c + frame / 2, ch.length - frame, v1, flags, queue, &queued);
    free(c);
  }
  return ok;
}

typedef struct visit {
  file_view *view;
  char *bad; /* the first object whose header does not fit */
} visit;

static herr_t check_object(hid_t obj, const char *name, const H5O_info_t *info, void *op) {
  (void)obj;
  visit *v = op;
  if (header_fits(v->view, info->addr)) return 0;
  v->bad = strdup(name);
  return 1;
}

int tf_h5_check_headers(hid_t file, const char *path, tf_error *err) {
  char name[4096];
  hid_t fcpl = H5Fget_create_plist(file);
  file_view view = {.fd = -1};
  hsize_t base = 0;
  const bool sized = fcpl >= 0 && H5Pget_sizes(fcpl, &view.sizeof_addr, &view.sizeof_size) >= 0 &&
                     H5Pget_userblock(fcpl, &base) >= 0 && view.sizeof_addr >= 2 &&
                     view.sizeof_addr <= 8 && view.sizeof_size >= 2 && view.sizeof_size <= 8;
  if (fcpl >= 0) H5Pclose(fcpl);
  struct stat st;
  if (sized && H5Fget_name(file, name, sizeof name) > 0) view.fd = open(name, O_RDONLY | O_CLOEXEC);
  if (view.fd < 0 || fstat(view.fd, &st) != 0 || (uint64_t)st.st_size < base) {
    if (view.fd >= 0) close(view.fd);
    return tf_fail_code(err, TF_ERR_CONFIG,
                        "'%s': corrupt or not a twofold results file: its layout cannot be read",
                        path);
  }
  view.size = (uint64_t)st.st_size, view.base = base;
  visit v = {&view, NULL};
  const herr_t rc =
      H5Ovisit2(file, H5_INDEX_NAME, H5_ITER_NATIVE, check_object, &v, H5O_INFO_BASIC);
  close(view.fd);
  if (rc == 0) return 0;
  tf_fail_code(err, TF_ERR_CONFIG,
               "'%s': corrupt or not a twofold results file: the header of '%s' is damaged (an "
               "attribute's stored lengths exceed it)",
               path, v.bad ? v.bad : "a group (its links cannot be listed)");
  free(v.bad);
  return -1;
}
