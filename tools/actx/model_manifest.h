/* model_manifest.h — the real models of models/manifest.txt: what each is, where the fetch script
 * caches it, what the EP should claim in it, and how to make inputs of the kind it expects.
 *
 * The manifest is the one list the fetch script, `actx ab`'s model section and the model tests
 * share; its header documents the columns. A model's inputs are made from the session's own
 * input list (names, element types, shapes), with the manifest's recipe for each: the kind of
 * data (an image, audio, a state) and sizes for the symbolic dimensions. The data is seeded, so
 * every machine times and checks the same tensors. */
#ifndef ACTX_TOOLS_MODEL_MANIFEST_H
#define ACTX_TOOLS_MODEL_MANIFEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "host.h"

#define ACTX_MANIFEST_MAX_INPUTS 8

typedef enum actx_recipe_kind {
  ACTX_RECIPE_IMAGE,   /* a: mean, b: standard deviation */
  ACTX_RECIPE_AUDIO,
  ACTX_RECIPE_UNIFORM, /* a: low, b: high */
  ACTX_RECIPE_ZEROS,
  ACTX_RECIPE_CONST,   /* a: the value */
} actx_recipe_kind;

typedef struct actx_recipe {
  char name[128];
  actx_recipe_kind kind;
  double a, b;
  bool has_shape; /* else the model's shape, which must then be fully known */
  size_t rank;
  int64_t dims[ACTX_ORT_MAX_RANK];
} actx_recipe;

typedef struct actx_manifest_model {
  char name[64];
  char package[128], version[32];
  char member[512];
  char sha256[65];
  long bytes;
  char auto_claims[96]; /* "N" or "RULE:N,RULE:N" */
  long all_claims;
  double bound;
  size_t n_inputs;
  actx_recipe inputs[ACTX_MANIFEST_MAX_INPUTS];
} actx_manifest_model;

/* Reads every model of the manifest at path into a malloc'ed array (free()). 0, or -1 with a
 * message naming the line. */
int actx_manifest_read(const char *path, actx_manifest_model **models, size_t *n, char *err,
                       size_t err_size);

/* The nodes auto should claim under the ORT rule named rule ("avx2", "avx512"); -1 when the
 * manifest does not say for that rule. */
long actx_manifest_auto_claims(const actx_manifest_model *m, const char *rule);

/* Where scripts/fetch-models.sh caches the model: $ACTX_CACHE_DIR, else $XDG_CACHE_HOME/actx,
 * else ~/.cache/actx; then models/<name>-<12 hex digits of sha256>.onnx. */
void actx_manifest_cache_path(const actx_manifest_model *m, char *buf, size_t size);

/* The model's inputs for session s, in the session's order, as a malloc'ed array (free with
 * actx_manifest_inputs_free); names point into m. 0, or -1 with a message: an input the recipe
 * does not cover, a recipe for no input, a shape that does not fit, a type it cannot fill. */
int actx_manifest_make_inputs(const actx_manifest_model *m, const actx_ort_session *s,
                              uint64_t seed, actx_ort_tensor **inputs, size_t *n, char *err,
                              size_t err_size);
void actx_manifest_inputs_free(actx_ort_tensor *inputs, size_t n);

/* "x float[1x3x640x640] image" for each input, "; "-separated, into buf. */
void actx_manifest_describe_inputs(const actx_manifest_model *m, const actx_ort_tensor *inputs,
                                   size_t n, char *buf, size_t size);

#endif /* ACTX_TOOLS_MODEL_MANIFEST_H */
