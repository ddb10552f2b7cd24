/* model_manifest.c — reading models/manifest.txt and making each model's inputs (model_manifest.h). */
#define _POSIX_C_SOURCE 200809L
#include "model_manifest.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "half.h"
#include "inputs.h"
#include "model.h"
#include "rng.h"

#define N_COLUMNS 10

static int set_err(char *err, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int set_err(char *err, size_t size, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, size, fmt, ap);
  va_end(ap);
  return -1;
}

static int parse_shape(const char *text, actx_recipe *r) {
  r->has_shape = true;
  r->rank = 0;
  if (*text == '\0')
    return 0; /* a scalar */
  const char *p = text;
  while (*p != '\0') {
    char *end = NULL;
    errno = 0;
    long long d = strtoll(p, &end, 10);
    if (end == p || errno != 0 || d < 0 || r->rank == ACTX_ORT_MAX_RANK)
      return -1;
    r->dims[r->rank++] = d;
    if (*end == 'x')
      end++;
    else if (*end != '\0')
      return -1;
    p = end;
  }
  return 0;
}

/* KIND[/A[/B]] into r; the number of arguments must be the kind's. */
static int parse_kind(char *text, actx_recipe *r) {
  char *save = NULL;
  const char *kind = strtok_r(text, "/", &save);
  double args[2] = {0, 0};
  int n = 0;
  for (char *t = strtok_r(NULL, "/", &save); t != NULL; t = strtok_r(NULL, "/", &save)) {
    char *end = NULL;
    if (n == 2)
      return -1;
    args[n++] = strtod(t, &end);
    if (end == t || *end != '\0')
      return -1;
  }
  static const struct {
    const char *name;
    actx_recipe_kind kind;
    int n_args;
  } kinds[] = {{"image", ACTX_RECIPE_IMAGE, 2}, {"audio", ACTX_RECIPE_AUDIO, 0},
               {"uniform", ACTX_RECIPE_UNIFORM, 2}, {"zeros", ACTX_RECIPE_ZEROS, 0},
               {"const", ACTX_RECIPE_CONST, 1}};
  for (size_t k = 0; kind != NULL && k < sizeof kinds / sizeof kinds[0]; k++)
    if (strcmp(kind, kinds[k].name) == 0) {
      if (n != kinds[k].n_args)
        return -1;
      r->kind = kinds[k].kind;
      r->a = args[0];
      r->b = args[1];
      if (r->kind == ACTX_RECIPE_IMAGE && r->b == 0)
        return -1;
      return 0;
    }
  return -1;
}

/* "NAME=KIND[:SHAPE],..." into m->inputs. */
static int parse_inputs(char *text, actx_manifest_model *m) {
  char *save = NULL;
  for (char *item = strtok_r(text, ",", &save); item != NULL; item = strtok_r(NULL, ",", &save)) {
    if (m->n_inputs == ACTX_MANIFEST_MAX_INPUTS)
      return -1;
    actx_recipe *r = &m->inputs[m->n_inputs++];
    memset(r, 0, sizeof *r);
    char *eq = strchr(item, '=');
    if (eq == NULL || eq == item || (size_t)(eq - item) >= sizeof r->name)
      return -1;
    memcpy(r->name, item, (size_t)(eq - item));
    char *kind = eq + 1;
    char *colon = strchr(kind, ':');
    if (colon != NULL) {
      *colon = '\0';
      if (parse_shape(colon + 1, r) != 0)
        return -1;
    }
    if (parse_kind(kind, r) != 0)
      return -1;
  }
  return m->n_inputs > 0 ? 0 : -1;
}

static int copy_field(char *dst, size_t size, const char *src) {
  if (strlen(src) >= size)
    return -1;
  memcpy(dst, src, strlen(src) + 1);
  return 0;
}

static int parse_long(const char *text, long *out) {
  char *end = NULL;
  errno = 0;
  long v = strtol(text, &end, 10);
  if (end == text || *end != '\0' || errno != 0 || v < 0)
    return -1;
  *out = v;
  return 0;
}

static int parse_line(char *line, actx_manifest_model *m) {
  char *fields[N_COLUMNS + 1];
  size_t n = 0;
  char *save = NULL;
  for (char *t = strtok_r(line, " \t\r\n", &save); t != NULL && n <= N_COLUMNS;
       t = strtok_r(NULL, " \t\r\n", &save))
    fields[n++] = t;
  if (n != N_COLUMNS)
    return -1;
  memset(m, 0, sizeof *m);
  char *end = NULL;
  if (copy_field(m->name, sizeof m->name, fields[0]) != 0 ||
      copy_field(m->package, sizeof m->package, fields[1]) != 0 ||
      copy_field(m->version, sizeof m->version, fields[2]) != 0 ||
      copy_field(m->member, sizeof m->member, fields[3]) != 0 ||
      strlen(fields[4]) != 64 || copy_field(m->sha256, sizeof m->sha256, fields[4]) != 0 ||
      parse_long(fields[5], &m->bytes) != 0 ||
      copy_field(m->auto_claims, sizeof m->auto_claims, fields[6]) != 0 ||
      parse_long(fields[7], &m->all_claims) != 0)
    return -1;
  m->bound = strtod(fields[8], &end);
  if (end == fields[8] || *end != '\0' || m->bound < 0)
    return -1;
  if (actx_manifest_auto_claims(m, "avx2") < 0 && actx_manifest_auto_claims(m, "avx512") < 0)
    return -1;
  return parse_inputs(fields[9], m);
}

int actx_manifest_read(const char *path, actx_manifest_model **models, size_t *n, char *err,
                       size_t err_size) {
  *models = NULL;
  *n = 0;
  FILE *f = fopen(path, "r");
  if (f == NULL)
    return set_err(err, err_size, "cannot read the model manifest %s", path);
  size_t capacity = 0;
  char line[2048];
  long line_no = 0;
  while (fgets(line, sizeof line, f) != NULL) {
    line_no++;
    const char *p = line + strspn(line, " \t");
    if (*p == '#' || *p == '\n' || *p == '\r' || *p == '\0')
      continue;
    if (*n == capacity) {
      capacity = capacity ? 2 * capacity : 16;
      actx_manifest_model *grown = realloc(*models, capacity * sizeof *grown);
      if (grown == NULL) {
        fclose(f);
        return set_err(err, err_size, "%s: out of memory", path);
      }
      *models = grown;
    }
    if (parse_line(line, &(*models)[*n]) != 0) {
      fclose(f);
      free(*models);
      *models = NULL;
      *n = 0;
      return set_err(err, err_size, "%s:%ld: not a model line (see the columns in its header)",
                     path, line_no);
    }
    (*n)++;
  }
  fclose(f);
  if (*n == 0)
    return set_err(err, err_size, "%s lists no model", path);
  return 0;
}

long actx_manifest_auto_claims(const actx_manifest_model *m, const char *rule) {
  long v = -1;
  if (strchr(m->auto_claims, ':') == NULL)
    return parse_long(m->auto_claims, &v) == 0 ? v : -1;
  char copy[sizeof m->auto_claims];
  memcpy(copy, m->auto_claims, sizeof copy);
  char *save = NULL;
  for (char *t = strtok_r(copy, ",", &save); t != NULL; t = strtok_r(NULL, ",", &save)) {
    char *colon = strchr(t, ':');
    if (colon == NULL)
      return -1;
    *colon = '\0';
    if (strcmp(t, rule) == 0)
      return parse_long(colon + 1, &v) == 0 ? v : -1;
  }
  return -1;
}

void actx_manifest_cache_path(const actx_manifest_model *m, char *buf, size_t size) {
  const char *cache = getenv("ACTX_CACHE_DIR");
  const char *xdg = getenv("XDG_CACHE_HOME");
  const char *home = getenv("HOME");
  if (cache != NULL && cache[0] != '\0')
    snprintf(buf, size, "%s/models/%s-%.12s.onnx", cache, m->name, m->sha256);
  else if (xdg != NULL && xdg[0] != '\0')
    snprintf(buf, size, "%s/actx/models/%s-%.12s.onnx", xdg, m->name, m->sha256);
  else
    snprintf(buf, size, "%s/.cache/actx/models/%s-%.12s.onnx", home != NULL ? home : ".",
             m->name, m->sha256);
}

/* Element i of a tensor of elem_type set to v; 0, or -1 for a type this does not fill. */
static int store(int32_t elem_type, void *data, size_t i, double v) {
  unsigned char *p = data;
  switch (elem_type) {
  case ACTX_ELEM_FLOAT: {
    float f = actx_f64_to_f32(v);
    memcpy(p + 4 * i, &f, 4);
    return 0;
  }
  case ACTX_ELEM_DOUBLE:
    memcpy(p + 8 * i, &v, 8);
    return 0;
  case ACTX_ELEM_FLOAT16: {
    uint16_t h = actx_f64_to_f16(v);
    memcpy(p + 2 * i, &h, 2);
    return 0;
  }
  case ACTX_ELEM_INT64: {
    int64_t k = (int64_t)v;
    memcpy(p + 8 * i, &k, 8);
    return 0;
  }
  case ACTX_ELEM_INT32: {
    int32_t k = (int32_t)v;
    memcpy(p + 4 * i, &k, 4);
    return 0;
  }
  default:
    return -1;
  }
}

static double sample(const actx_recipe *r, actx_rng *rng) {
  switch (r->kind) {
  case ACTX_RECIPE_IMAGE: return (actx_rng_uniform(rng, 0, 1) - r->a) / r->b;
  case ACTX_RECIPE_AUDIO: return actx_rng_uniform(rng, -1, 1);
  case ACTX_RECIPE_UNIFORM: return actx_rng_uniform(rng, r->a, r->b);
  case ACTX_RECIPE_ZEROS: return 0;
  case ACTX_RECIPE_CONST: return r->a;
  }
  return 0;
}

static const actx_recipe *find_recipe(const actx_manifest_model *m, const char *name) {
  for (size_t k = 0; k < m->n_inputs; k++)
    if (strcmp(m->inputs[k].name, name) == 0)
      return &m->inputs[k];
  return NULL;
}

void actx_manifest_inputs_free(actx_ort_tensor *inputs, size_t n) {
  for (size_t i = 0; inputs != NULL && i < n; i++)
    free(inputs[i].data);
  free(inputs);
}

int actx_manifest_make_inputs(const actx_manifest_model *m, const actx_ort_session *s,
                              uint64_t seed, actx_ort_tensor **inputs, size_t *n, char *err,
                              size_t err_size) {
  *inputs = NULL;
  *n = 0;
  const size_t count = actx_ort_session_input_count(s);
  if (count != m->n_inputs)
    return set_err(err, err_size, "%s: the model has %zu inputs, the manifest's recipe %zu",
                   m->name, count, m->n_inputs);
  actx_ort_tensor *t = calloc(count, sizeof *t);
  if (t == NULL)
    return set_err(err, err_size, "%s: out of memory", m->name);
  for (size_t i = 0; i < count; i++) {
    actx_ort_tensor info;
    actx_ort_error oe = {0};
    if (actx_ort_session_input_info(s, i, &info, &oe) != 0) {
      actx_manifest_inputs_free(t, i);
      return set_err(err, err_size, "%s: %s", m->name, oe.message);
    }
    const actx_recipe *r = find_recipe(m, info.name);
    if (r == NULL) {
      actx_manifest_inputs_free(t, i);
      return set_err(err, err_size, "%s: the manifest has no recipe for input '%s'",
                     m->name, info.name);
    }
    t[i] = info;
    t[i].name = r->name;
    t[i].data = NULL;
    if (r->has_shape) {
      bool fits = r->rank == info.rank;
      for (size_t d = 0; fits && d < r->rank; d++)
        fits = info.dims[d] < 0 || info.dims[d] == r->dims[d];
      char want[192];
      actx_describe_tensor((int32_t)info.elem_type, info.rank, info.dims, want, sizeof want);
      if (!fits) {
        actx_manifest_inputs_free(t, i);
        return set_err(err, err_size, "%s: the manifest's shape for %s %s does not fit",
                       m->name, r->name, want);
      }
      t[i].rank = r->rank;
      memcpy(t[i].dims, r->dims, sizeof r->dims);
    }
    size_t elements = 1;
    for (size_t d = 0; d < t[i].rank; d++) {
      if (t[i].dims[d] < 0) {
        actx_manifest_inputs_free(t, i);
        return set_err(err, err_size,
                       "%s: input '%s' has symbolic dimensions: the manifest must size them",
                       m->name, r->name);
      }
      elements *= (size_t)t[i].dims[d];
    }
    const size_t elem_size = actx_elem_size((int32_t)info.elem_type);
    t[i].count = elements;
    t[i].data = malloc(elements * elem_size + 1);
    if (t[i].data == NULL || elem_size == 0) {
      actx_manifest_inputs_free(t, i + 1);
      return set_err(err, err_size, "%s: input '%s': out of memory or a type not filled",
                     m->name, r->name);
    }
    actx_rng rng;
    actx_rng_seed(&rng, actx_hash_string(actx_hash_string(seed, m->name), r->name));
    for (size_t k = 0; k < elements; k++)
      if (store((int32_t)info.elem_type, t[i].data, k, sample(r, &rng)) != 0) {
        actx_manifest_inputs_free(t, i + 1);
        return set_err(err, err_size, "%s: input '%s': an element type this cannot fill",
                       m->name, r->name);
      }
  }
  *inputs = t;
  *n = count;
  return 0;
}

void actx_manifest_describe_inputs(const actx_manifest_model *m, const actx_ort_tensor *inputs,
                                   size_t n, char *buf, size_t size) {
  static const char *const kind_names[] = {"image", "audio", "uniform", "zeros", "const"};
  size_t used = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < n && used < size; i++) {
    char shape[192];
    actx_describe_tensor((int32_t)inputs[i].elem_type, inputs[i].rank, inputs[i].dims, shape,
                         sizeof shape);
    const actx_recipe *r = find_recipe(m, inputs[i].name);
    int w = snprintf(buf + used, size - used, "%s%s %s %s", i ? "; " : "", inputs[i].name, shape,
                     r != NULL ? kind_names[r->kind] : "?");
    if (w < 0)
      break;
    used += (size_t)w;
  }
}
