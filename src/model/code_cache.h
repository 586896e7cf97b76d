/* code_cache.h — the directory of compiled model code, trusted only while it is the user's own.
 *
 * A model given as C source or as equations is compiled into a cache and the object is
 * dlopen'ed, which runs its constructors before any check can look at it: an object that
 * someone else could write is someone else's code running as us.  So
 *  - the cache directory must be ours: owned by the effective user, not a symbolic link, not
 *    writable by group or others, and every directory above it owned by root or us and not
 *    writable by others (a sticky /tmp is fine).  A directory writable by others is accepted
 *    only with the documented opt-in TWOFOLD_CACHE_SHARED=1 and the sticky bit, and even
 *    then an object is used only if it is ours: there is no way to trust another user's code;
 *  - an object is loaded only through a descriptor opened without following links, owned by
 *    us, not writable by others, whose SHA-256 equals the manifest that our own compile wrote
 *    beside it (`OBJECT.sha256`); anything else is compiled again (tf_cache_open says why);
 *  - temporary files are created by mkstemp (O_CREAT|O_EXCL, never following a link) next to
 *    their final name and renamed into place, never opened at a predictable name.
 */
#ifndef TF_CODE_CACHE_H
#define TF_CODE_CACHE_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"

/* The cache directory ($TWOFOLD_CACHE, else $XDG_CACHE_HOME/twofold, else
 * ~/.cache/twofold), created with mode 0700 if missing, then checked as above; a refusal
 * says what is wrong and how to fix it. */
int tf_cache_dir(char *buf, size_t n, tf_error *err);

/* True when the opt-in to a shared (sticky, writable by others) cache directory is set. */
bool tf_cache_shared(void);

/* Checks a directory as the cache directory is checked (owner, mode, link, ancestors). */
int tf_cache_check_dir(const char *dir, bool shared, tf_error *err);

/* Creates an empty file with a fresh unique name beside `final` (final.tmp.XXXXXX, mode 0600)
 * and returns its name in tmp[0..n). */
int tf_cache_temp(const char *final, char *tmp, size_t n, tf_error *err);

/* Writes data[0..len) to `final` through a fresh temporary file and a rename. */
int tf_cache_write(const char *final, const void *data, size_t len, tf_error *err);

/* Seals a freshly compiled object: opens it (*fd, for loading: what this process compiled,
 * whatever a concurrent compile of the same source renames over it), writes the SHA-256 of
 * its bytes as final's manifest, then renames tmp to final. */
int tf_cache_seal(const char *tmp, const char *final, int *fd, tf_error *err);

/* Opens `final` for loading if it is trusted (see above): 0 and *fd open (the caller loads
 * "/proc/self/fd/N" and closes it), or 1 with why[] saying why it is not (missing, not ours,
 * writable by others, a link, no manifest, a hash that differs). */
int tf_cache_open(const char *final, int *fd, char *why, size_t why_size);

/* The SHA-256 of an open file's bytes (read from offset 0) as 64 hex digits. */
int tf_sha256_fd(int fd, char hex[65]);

#endif
