/* lock.c — see lock.h. */
#define _GNU_SOURCE
#include "lock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int held = -1;
static char held_path[4200];

static int set_lock(int fd, short type) {
  struct flock fl = {.l_type = type, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
  return fcntl(fd, F_SETLK, &fl);
}

static long holder(int fd) {
  struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
  if (fcntl(fd, F_GETLK, &fl) != 0 || fl.l_type == F_UNLCK) return 0;
  return (long)fl.l_pid;
}

int tf_lock_take(const char *path, tf_error *err) {
  if (held >= 0) return 0;
  char lock[sizeof held_path];
  snprintf(lock, sizeof lock, "%s.lock", path);
  /* The holder removes the file when it releases, so a lock taken on a file that has since
   * been unlinked (or replaced) protects nothing: retry on the file now at that path. */
  for (int attempt = 0; attempt < 100; attempt++) {
    /* never through a link: a link planted in a shared directory would have us truncate
     * whatever it points to */
    const int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0 && errno == ELOOP)
      return tf_fail_code(err, TF_ERR_CONFIG,
                          "the lock file '%s' is a symbolic link, which twofold refuses to open; "
                          "remove it (nobody else's run makes one)",
                          lock);
    if (fd < 0)
      return tf_fail_code(err, TF_ERR_IO, "cannot create the lock file '%s': %s", lock,
                          strerror(errno));
    struct stat own;
    if (fstat(fd, &own) != 0 || !S_ISREG(own.st_mode) || own.st_nlink != 1) {
      close(fd);
      return tf_fail_code(err, TF_ERR_CONFIG,
                          "the lock file '%s' is not a plain file of its own (a hard link or a "
                          "special file); remove it",
                          lock);
    }
    if (set_lock(fd, F_WRLCK) != 0) {
      const long pid = holder(fd);
      close(fd);
      if (pid > 0)
        return tf_fail_code(
            err, TF_ERR_CONFIG,
            "'%s' is being written by another twofold run (process %ld holds '%s'); "
            "wait for it to end or stop it",
            path, pid, lock);
      continue; /* released in between */
    }
    struct stat a, b;
    if (fstat(fd, &a) != 0 || stat(lock, &b) != 0 || a.st_ino != b.st_ino || a.st_dev != b.st_dev) {
      close(fd);
      continue;
    }
    char text[32];
    const int len = snprintf(text, sizeof text, "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) != 0 || write(fd, text, (size_t)len) != len) {
      /* the PID is for people; the lock itself is what protects */
    }
    held = fd;
    snprintf(held_path, sizeof held_path, "%s", lock);
    return 0;
  }
  return tf_fail(err, "cannot take the lock '%s': it keeps changing", lock);
}

void tf_lock_release(void) {
  if (held < 0) return;
  unlink(held_path);
  close(held); /* drops the lock */
  held = -1;
}
