/* ep_path.c — finding libactx_ep.so. ORT loads a plugin EP by absolute path only (a relative one
 * is taken against ORT's own directory), so the tool resolves it: the build and install layouts
 * both put the tool in bin/ and the EP in lib/ beside it. */
#define _DEFAULT_SOURCE /* realpath, readlink */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#define EP_LIBRARY_NAME "libactx_ep.so"

int actx_find_ep_library(const char *override, char *path, size_t size, char *err,
                         size_t err_size) {
  char resolved[PATH_MAX];
  if (override != NULL) {
    if (realpath(override, resolved) == NULL) {
      snprintf(err, err_size, "EP library '%s': %s", override, strerror(errno));
      return -1;
    }
  } else {
    char exe[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0) {
      snprintf(err, err_size, "cannot read /proc/self/exe (%s); give --ep-lib PATH",
               strerror(errno));
      return -1;
    }
    exe[len] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash == NULL) {
      snprintf(err, err_size, "executable path '%s' has no directory; give --ep-lib PATH", exe);
      return -1;
    }
    *slash = '\0';
    char candidate[PATH_MAX + 32];
    snprintf(candidate, sizeof candidate, "%s/../lib/" EP_LIBRARY_NAME, exe);
    if (realpath(candidate, resolved) == NULL) {
      snprintf(err, err_size, "EP library not found at %s (%s); build target actx_ep or give "
               "--ep-lib PATH", candidate, strerror(errno));
      return -1;
    }
  }
  if (access(resolved, R_OK) != 0) {
    snprintf(err, err_size, "EP library '%s' is not readable: %s", resolved, strerror(errno));
    return -1;
  }
  if (strlen(resolved) + 1 > size) {
    snprintf(err, err_size, "EP library path too long: %s", resolved);
    return -1;
  }
  memcpy(path, resolved, strlen(resolved) + 1);
  return 0;
}
