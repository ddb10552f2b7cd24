/* The library's environment switches (env.h). */
#include "env.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int actx_env_choice(const char *var, const char *const *names, int count, int fallback) {
  const char *value = getenv(var);
  if (value == NULL || value[0] == '\0') return fallback;
  for (int i = 0; i < count; i++)
    if (strcmp(value, names[i]) == 0) return i;
  fprintf(stderr, "actx: %s=%s is not one of", var, value);
  for (int i = 0; i < count; i++) fprintf(stderr, "%s %s", i ? "," : "", names[i]);
  fprintf(stderr, "; using %s\n", names[fallback]);
  return fallback;
}
