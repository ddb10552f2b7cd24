/* args.c — option values, directories and timestamps for the subcommands (see cli.h). */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

#include "cli.h"
#include "host.h"

bool actx_arg_value(int argc, char **argv, int *i, const char *name, const char **value,
                    bool *bad, const char *cmd) {
  if (strcmp(argv[*i], name) != 0)
    return false;
  if (*i + 1 >= argc) {
    fprintf(stderr, "actx %s: option %s needs a value\n", cmd, name);
    *bad = true;
    *value = NULL;
    return true;
  }
  *i += 1;
  *value = argv[*i];
  return true;
}

int actx_parse_long(const char *cmd, const char *option, const char *text, long min, long max,
                    long *out) {
  char *end = NULL;
  errno = 0;
  long v = strtol(text, &end, 10);
  if (text[0] == '\0' || *end != '\0' || errno != 0 || v < min || v > max) {
    fprintf(stderr, "actx %s: %s '%s' is not a whole number in [%ld, %ld]\n", cmd, option, text,
            min, max);
    return -1;
  }
  *out = v;
  return 0;
}

int actx_parse_double(const char *cmd, const char *option, const char *text, double min,
                      double max, double *out) {
  char *end = NULL;
  errno = 0;
  double v = strtod(text, &end);
  if (text[0] == '\0' || *end != '\0' || errno != 0 || !(v >= min && v <= max)) {
    fprintf(stderr, "actx %s: %s '%s' is not a number in [%g, %g]\n", cmd, option, text, min,
            max);
    return -1;
  }
  *out = v;
  return 0;
}

int actx_parse_long_list(const char *cmd, const char *option, const char *text, long min,
                         long max, long *out, size_t max_n, size_t *n) {
  *n = 0;
  const char *p = text;
  for (;;) {
    const char *comma = strchr(p, ',');
    size_t len = comma != NULL ? (size_t)(comma - p) : strlen(p);
    char item[32];
    if (len == 0 || len >= sizeof item) {
      fprintf(stderr, "actx %s: %s '%s' is not a comma-separated list of numbers\n", cmd, option,
              text);
      return -1;
    }
    if (*n == max_n) {
      fprintf(stderr, "actx %s: %s has more than %zu values\n", cmd, option, max_n);
      return -1;
    }
    memcpy(item, p, len);
    item[len] = '\0';
    if (actx_parse_long(cmd, option, item, min, max, &out[*n]) != 0)
      return -1;
    *n += 1;
    if (comma == NULL)
      return 0;
    p = comma + 1;
  }
}

bool actx_list_contains(const char *list, const char *name) {
  if (list == NULL || list[0] == '\0')
    return true;
  size_t name_len = strlen(name);
  const char *p = list;
  for (;;) {
    const char *comma = strchr(p, ',');
    size_t len = comma != NULL ? (size_t)(comma - p) : strlen(p);
    if (len == name_len && strncasecmp(p, name, len) == 0)
      return true;
    if (comma == NULL)
      return false;
    p = comma + 1;
  }
}

int actx_make_dirs(const char *path) {
  char buf[4096];
  size_t len = strlen(path);
  if (len == 0 || len >= sizeof buf) {
    errno = ENAMETOOLONG;
    return -1;
  }
  memcpy(buf, path, len + 1);
  for (size_t i = 1; i <= len; i++) {
    if (buf[i] != '/' && buf[i] != '\0')
      continue;
    char saved = buf[i];
    buf[i] = '\0';
    if (mkdir(buf, 0777) != 0 && errno != EEXIST)
      return -1;
    buf[i] = saved;
  }
  struct stat st;
  if (stat(path, &st) != 0)
    return -1;
  if (!S_ISDIR(st.st_mode)) {
    errno = ENOTDIR;
    return -1;
  }
  return 0;
}

void actx_format_timestamp(char *buf, size_t size) {
  time_t now = time(NULL);
  struct tm tm;
  localtime_r(&now, &tm);
  strftime(buf, size, "%Y-%m-%d %H:%M:%S", &tm);
}

int actx_quiet_ort(bool verbose, const char *cmd) {
  actx_ort_error err = {0};
  const OrtApi *api = actx_ort_api(&err);
  OrtEnv *env = api != NULL ? actx_ort_env(&err) : NULL;
  if (env == NULL) {
    fprintf(stderr, "actx %s: %s\n", cmd, err.message);
    return -1;
  }
  if (verbose)
    return 0;
  if (actx_ort_check(api->UpdateEnvWithCustomLogLevel(env, ORT_LOGGING_LEVEL_ERROR),
                     "UpdateEnvWithCustomLogLevel", &err) != 0) {
    fprintf(stderr, "actx %s: %s\n", cmd, err.message);
    return -1;
  }
  return 0;
}
