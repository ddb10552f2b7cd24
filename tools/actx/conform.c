/* conform.c — `actx conform`: ONNX's node tests through ORT with actx, against ORT alone.
 *
 * Every directory holding model.onnx and test_data_set_N/input_K.pb, output_K.pb (Debian's
 * libonnx-testdata, plus the generated tests of conform_cases.c) is run twice: by ORT alone and
 * by ORT with the actx EP (policy all by default: every node actx can run, it runs). Outputs
 * are compared with the expected ones within rtol/atol (rtol 1e-4, atol 1e-5 for float32 and
 * double; a half type's own rounding step for float16 and bfloat16, whose expected values the
 * tests round once from a more precise result), and counted for exact bits.
 *
 * Verdicts: a test of an op actx serves must pass with actx, must have run at least one node in
 * actx, and where ORT alone also ran it, must give ORT alone's bits in its float32 outputs (the
 * half types are reported: actx rounds once from float32, ORT's own half kernels do not always);
 * any other test must not go from passing with ORT alone to failing with actx. Tests whose
 * data this tool cannot load (sequences, optionals, strings) are skipped, and so are tests
 * neither ORT alone nor ORT + actx can load. The exit status is 1 when any verdict fails. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "compare.h"
#include "conform_cases.h"
#include "host.h"
#include "model.h"
#include "stats.h"
#include "table.h"

#define CMD "conform"
#define EP_NAME "actx"
/* Debian's libonnx-testdata; each subdirectory (node, pytorch-converted, ...) holds tests. */
#define DEFAULT_TESTDATA_DIR "/usr/share/libonnx-testdata/data"
#define DEFAULT_GENERATED_SUBDIR "conform/generated"
#define MAX_DATA_DIRS 16
#define MAX_IO 16
#define MAX_SETS 16

/* The reference PR's tolerance, for float32 and double outputs. */
#define RTOL_F32 1e-4
#define ATOL 1e-5
/* One rounding step of the type, relative: 2^-10 (float16), 2^-7 (bfloat16), rounded up. */
#define RTOL_F16 1e-3
#define RTOL_BF16 8e-3

typedef enum outcome { OUTCOME_PASS, OUTCOME_FAIL, OUTCOME_ERROR } outcome;
static const char *const k_outcome_names[] = {"pass", "FAIL", "error"};

typedef struct conform_options {
  const char *data_dirs[MAX_DATA_DIRS];
  size_t n_data_dirs;
  const char *generated_dir;
  bool no_generated;
  const char *filter;
  const char *policy;
  long threads;
  const char *ep_lib_arg;
  char ep_lib[4096];
  const char *out_dir;
  bool verbose, ort_verbose;
  bool no_data;
  double rtol, atol; /* < 0: the defaults per element type */
} conform_options;

typedef struct test_set {
  size_t n_inputs, n_outputs;
  actx_tensor inputs[MAX_IO], outputs[MAX_IO];
} test_set;

typedef struct arm_result {
  outcome outcome;
  char why[600];
  long nodes_on_actx;
  size_t elements, exact; /* output elements, and those with the expected bits */
  actx_ort_tensor *outputs[MAX_SETS];
  size_t n_outputs[MAX_SETS];
} arm_result;

typedef struct test_result {
  char suite[64];
  char name[128];
  bool served;
  bool skipped;
  char skip_why[600];
  arm_result ort, actx;
  bool compared_to_ort;
  size_t ort_identical; /* actx output elements with ORT alone's bits */
  size_t ort_compared;  /* of so many */
  bool ok;
  const char *verdict;
} test_result;

static void usage(FILE *out) {
  fprintf(out,
          "usage: actx conform [options]\n"
          "\n"
          "Runs ONNX's node tests (model.onnx + test_data_set_*/) through ORT alone and ORT +\n"
          "actx; fails when a test of an op actx serves fails or does not run in actx, or any\n"
          "test that passes with ORT alone fails with actx.\n"
          "\n"
          "  --data DIR            a directory of test directories, or of such directories\n"
          "                        (repeatable; default %s)\n"
          "  --generated DIR       where the generated Gelu / com.microsoft / half tests are\n"
          "                        written and run from (default <out>/%s)\n"
          "  --no-generated        run only the --data tests\n"
          "  --no-data             run only the generated tests\n"
          "  --rtol X, --atol X    tolerance for every floating type (default: rtol %g, atol %g;\n"
          "                        float16 rtol %g, bfloat16 rtol %g)\n"
          "  --filter TEXT         only tests whose name contains TEXT\n"
          "  --policy all|auto     the EP's policy (default all)\n"
          "  --threads N           intra-op threads (default 1)\n"
          "  --ep-lib PATH         libactx_ep.so (default: ../lib/ beside this program)\n"
          "  --out DIR             where conform.csv goes (default %s)\n"
          "  -v, --verbose         a line for every test, not only the notable ones\n"
          "  --ort-verbose         keep ORT's warnings\n",
          DEFAULT_TESTDATA_DIR, DEFAULT_GENERATED_SUBDIR, RTOL_F32, ATOL, RTOL_F16, RTOL_BF16,
          ACTX_DEFAULT_RESULTS_DIR);
}

static int parse_options(int argc, char **argv, conform_options *o) {
  memset(o, 0, sizeof *o);
  o->policy = "all";
  o->threads = 1;
  o->out_dir = ACTX_DEFAULT_RESULTS_DIR;
  o->rtol = -1;
  o->atol = -1;
  bool bad = false;
  for (int i = 1; i < argc && !bad; i++) {
    const char *a = argv[i], *v = NULL;
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      usage(stdout);
      exit(ACTX_EXIT_OK);
    } else if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0) {
      o->verbose = true;
    } else if (strcmp(a, "--ort-verbose") == 0) {
      o->ort_verbose = true;
    } else if (strcmp(a, "--no-generated") == 0) {
      o->no_generated = true;
    } else if (strcmp(a, "--no-data") == 0) {
      o->no_data = true;
    } else if (actx_arg_value(argc, argv, &i, "--rtol", &v, &bad, CMD)) {
      bad = bad || actx_parse_double(CMD, "--rtol", v, 0, 1, &o->rtol) != 0;
    } else if (actx_arg_value(argc, argv, &i, "--atol", &v, &bad, CMD)) {
      bad = bad || actx_parse_double(CMD, "--atol", v, 0, 1, &o->atol) != 0;
    } else if (actx_arg_value(argc, argv, &i, "--data", &v, &bad, CMD)) {
      if (!bad && o->n_data_dirs == MAX_DATA_DIRS) {
        fprintf(stderr, "actx %s: more than %d --data directories\n", CMD, MAX_DATA_DIRS);
        bad = true;
      } else if (!bad) {
        o->data_dirs[o->n_data_dirs++] = v;
      }
    } else if (actx_arg_value(argc, argv, &i, "--generated", &v, &bad, CMD)) {
      o->generated_dir = v;
    } else if (actx_arg_value(argc, argv, &i, "--filter", &v, &bad, CMD)) {
      o->filter = v;
    } else if (actx_arg_value(argc, argv, &i, "--policy", &v, &bad, CMD)) {
      if (!bad && strcmp(v, "all") != 0 && strcmp(v, "auto") != 0) {
        fprintf(stderr, "actx %s: --policy '%s': expected all or auto\n", CMD, v);
        bad = true;
      }
      o->policy = v;
    } else if (actx_arg_value(argc, argv, &i, "--threads", &v, &bad, CMD)) {
      bad = bad || actx_parse_long(CMD, "--threads", v, 1, 256, &o->threads) != 0;
    } else if (actx_arg_value(argc, argv, &i, "--ep-lib", &v, &bad, CMD)) {
      o->ep_lib_arg = v;
    } else if (actx_arg_value(argc, argv, &i, "--out", &v, &bad, CMD)) {
      o->out_dir = v;
    } else {
      fprintf(stderr, "actx %s: unknown argument '%s' (see actx conform --help)\n", CMD, a);
      bad = true;
    }
  }
  if (!bad && o->n_data_dirs == 0 && !o->no_data)
    o->data_dirs[o->n_data_dirs++] = DEFAULT_TESTDATA_DIR;
  if (!bad && o->no_data && o->n_data_dirs > 0) {
    fprintf(stderr, "actx %s: --no-data and --data together\n", CMD);
    bad = true;
  }
  return bad ? -1 : 0;
}

/* ---- Finding tests ---------------------------------------------------------------------- */

typedef struct test_dir {
  char path[4096];
  char suite[64];
  char name[128];
} test_dir;

typedef struct test_list {
  test_dir *items;
  size_t n, capacity;
} test_list;

static bool is_file(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static bool is_dir(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int compare_names(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The sorted names of dir's entries (malloc'ed array of malloc'ed strings), NULL on error. */
static char **list_dir(const char *dir, size_t *n) {
  *n = 0;
  DIR *d = opendir(dir);
  if (d == NULL)
    return NULL;
  size_t capacity = 64;
  char **names = malloc(capacity * sizeof *names);
  struct dirent *e;
  while (names != NULL && (e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.')
      continue;
    if (*n == capacity) {
      char **grown = realloc(names, 2 * capacity * sizeof *names);
      if (grown == NULL)
        break;
      names = grown;
      capacity *= 2;
    }
    names[*n] = strdup(e->d_name);
    if (names[*n] != NULL)
      (*n)++;
  }
  closedir(d);
  if (names != NULL)
    qsort(names, *n, sizeof *names, compare_names);
  return names;
}

static void free_names(char **names, size_t n) {
  for (size_t i = 0; names != NULL && i < n; i++)
    free(names[i]);
  free(names);
}

static int add_test(test_list *list, const char *path, const char *suite, const char *name) {
  if (list->n == list->capacity) {
    size_t capacity = list->capacity ? 2 * list->capacity : 256;
    test_dir *grown = realloc(list->items, capacity * sizeof *grown);
    if (grown == NULL)
      return -1;
    list->items = grown;
    list->capacity = capacity;
  }
  test_dir *t = &list->items[list->n++];
  snprintf(t->path, sizeof t->path, "%s", path);
  snprintf(t->suite, sizeof t->suite, "%s", suite);
  snprintf(t->name, sizeof t->name, "%s", name);
  return 0;
}

static const char *base_name(const char *path) {
  size_t len = strlen(path);
  while (len > 1 && path[len - 1] == '/')
    len--;
  const char *p = path + len;
  while (p > path && p[-1] != '/')
    p--;
  return p;
}

/* Adds every test directory in dir (one level), or in its subdirectories (two levels). */
static int find_tests(const char *dir, test_list *list, int depth, const char *filter) {
  size_t n = 0;
  char **names = list_dir(dir, &n);
  if (names == NULL)
    return -1;
  char suite[64];
  snprintf(suite, sizeof suite, "%.*s", (int)strcspn(base_name(dir), "/"), base_name(dir));
  for (size_t i = 0; i < n; i++) {
    char path[4096], model[4200];
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    snprintf(model, sizeof model, "%s/model.onnx", path);
    if (is_file(model)) {
      if (filter == NULL || strstr(names[i], filter) != NULL)
        add_test(list, path, suite, names[i]);
    } else if (depth > 0 && is_dir(path)) {
      find_tests(path, list, depth - 1, filter);
    }
  }
  free_names(names, n);
  return 0;
}

/* ---- Loading a test ------------------------------------------------------------------------ */

static void free_sets(test_set *sets, size_t n) {
  for (size_t s = 0; s < n; s++) {
    for (size_t k = 0; k < sets[s].n_inputs; k++)
      actx_tensor_free(&sets[s].inputs[k]);
    for (size_t k = 0; k < sets[s].n_outputs; k++)
      actx_tensor_free(&sets[s].outputs[k]);
  }
}

/* Reads <set>/<prefix>_0.pb, _1.pb, ... until one is missing. -1 with why on a bad file. */
static int load_tensors(const char *set_dir, const char *prefix, actx_tensor *out, size_t *n,
                        char *why, size_t why_size) {
  *n = 0;
  for (size_t k = 0; k < MAX_IO; k++) {
    char path[4300];
    snprintf(path, sizeof path, "%s/%s_%zu.pb", set_dir, prefix, k);
    if (!is_file(path))
      return 0;
    char err[512];
    if (actx_tensor_read_file(path, &out[k], err, sizeof err) != 0) {
      snprintf(why, why_size, "%s_%zu.pb: %s", prefix, k, err);
      return -1;
    }
    *n = k + 1;
  }
  return 0;
}

static int load_sets(const char *test_path, test_set *sets, size_t *n_sets, char *why,
                     size_t why_size) {
  *n_sets = 0;
  size_t n = 0;
  char **names = list_dir(test_path, &n);
  if (names == NULL) {
    snprintf(why, why_size, "cannot list %.500s", test_path);
    return -1;
  }
  int rc = 0;
  for (size_t i = 0; i < n && rc == 0; i++) {
    if (strncmp(names[i], "test_data_set_", 14) != 0)
      continue;
    if (*n_sets == MAX_SETS)
      break;
    char set_dir[4300];
    snprintf(set_dir, sizeof set_dir, "%s/%s", test_path, names[i]);
    test_set *s = &sets[*n_sets];
    memset(s, 0, sizeof *s);
    (*n_sets)++;
    rc = load_tensors(set_dir, "input", s->inputs, &s->n_inputs, why, why_size);
    if (rc == 0)
      rc = load_tensors(set_dir, "output", s->outputs, &s->n_outputs, why, why_size);
  }
  free_names(names, n);
  if (rc == 0 && *n_sets == 0) {
    snprintf(why, why_size, "no test_data_set_* directory");
    rc = -1;
  }
  return rc;
}

/* ---- Running a test ---------------------------------------------------------------------- */

static double g_rtol_override = -1, g_atol_override = -1;

static double rtol_for(int32_t elem_type) {
  if (g_rtol_override >= 0)
    return g_rtol_override;
  switch (elem_type) {
  case ACTX_ELEM_FLOAT16: return RTOL_F16;
  case ACTX_ELEM_BFLOAT16: return RTOL_BF16;
  default: return RTOL_F32;
  }
}

static void arm_free_outputs(arm_result *r) {
  for (size_t s = 0; s < MAX_SETS; s++) {
    actx_ort_tensors_free(r->outputs[s], r->n_outputs[s]);
    r->outputs[s] = NULL;
    r->n_outputs[s] = 0;
  }
}

static bool same_shape(const actx_tensor *e, const actx_ort_tensor *a) {
  if (e->rank != a->rank)
    return e->count == a->count && e->count == 1; /* a scalar stored as [1], or the reverse */
  for (size_t d = 0; d < e->rank; d++)
    if (e->dims[d] != a->dims[d])
      return false;
  return true;
}

/* Checks one set's outputs against the expected ones; first failure into r->why. */
static void check_set(size_t set_index, const test_set *set, arm_result *r) {
  const actx_ort_tensor *got = r->outputs[set_index];
  size_t n_got = r->n_outputs[set_index];
  if (n_got < set->n_outputs) {
    if (r->outcome == OUTCOME_PASS)
      snprintf(r->why, sizeof r->why, "%zu outputs, %zu expected", n_got, set->n_outputs);
    r->outcome = OUTCOME_FAIL;
    return;
  }
  for (size_t k = 0; k < set->n_outputs; k++) {
    const actx_tensor *e = &set->outputs[k];
    const actx_ort_tensor *a = &got[k];
    const char *name = a->name != NULL ? a->name : "?";
    r->elements += e->count;
    if ((int32_t)a->elem_type != e->elem_type || !same_shape(e, a)) {
      if (r->outcome == OUTCOME_PASS)
        snprintf(r->why, sizeof r->why, "output %s: %s with %zu elements, expected %s with %zu",
                 name, actx_elem_name((int32_t)a->elem_type), a->count,
                 actx_elem_name(e->elem_type), e->count);
      r->outcome = OUTCOME_FAIL;
      continue;
    }
    actx_compare c;
    if (actx_compare_tensors(e->elem_type, e->data, a->data, e->count, rtol_for(e->elem_type),
                             g_atol_override >= 0 ? g_atol_override : ATOL, &c) != 0) {
      if (r->outcome == OUTCOME_PASS)
        snprintf(r->why, sizeof r->why, "output %s: element type %s not compared", name,
                 actx_elem_name(e->elem_type));
      r->outcome = OUTCOME_FAIL;
      continue;
    }
    r->exact += e->count - c.differing;
    if (c.out_of_tolerance > 0) {
      if (r->outcome == OUTCOME_PASS)
        snprintf(r->why, sizeof r->why,
                 "output %s: %zu of %zu elements out of tolerance; first [%zu]: expected %.9g, "
                 "got %.9g",
                 name, c.out_of_tolerance, e->count, c.first_out, c.first_expected,
                 c.first_actual);
      r->outcome = OUTCOME_FAIL;
    }
  }
}

static void run_arm(const conform_options *o, const uint8_t *model, size_t model_size,
                    const test_set *sets, size_t n_sets, bool with_ep, arm_result *r) {
  memset(r, 0, sizeof *r);
  r->nodes_on_actx = -1;
  const char *keys[] = {"policy"};
  const char *values[] = {o->policy};
  actx_ort_session_options so = {.intra_op_threads = (int)o->threads};
  if (with_ep) {
    so.ep_library_path = o->ep_lib;
    so.ep_name = EP_NAME;
    so.n_ep_options = 1;
    so.ep_option_keys = keys;
    so.ep_option_values = values;
    so.record_assignments = true;
  }
  actx_ort_session *session = NULL;
  actx_ort_error err = {0};
  if (actx_ort_session_create(model, model_size, &so, &session, &err) != 0) {
    r->outcome = OUTCOME_ERROR;
    snprintf(r->why, sizeof r->why, "%.590s", err.message);
    return;
  }
  if (with_ep)
    r->nodes_on_actx = actx_ort_count_nodes_on(session, EP_NAME, &err);
  for (size_t s = 0; s < n_sets; s++) {
    actx_ort_tensor inputs[MAX_IO];
    memset(inputs, 0, sizeof inputs);
    for (size_t k = 0; k < sets[s].n_inputs; k++) {
      const actx_tensor *t = &sets[s].inputs[k];
      inputs[k].name = t->name[0] != '\0' ? t->name : NULL;
      inputs[k].elem_type = (ONNXTensorElementDataType)t->elem_type;
      inputs[k].rank = t->rank;
      memcpy(inputs[k].dims, t->dims, t->rank * sizeof *t->dims);
      inputs[k].data = t->data != NULL ? t->data : (void *)"";
      inputs[k].count = t->count;
      inputs[k].bytes = t->bytes;
    }
    if (actx_ort_run(session, sets[s].n_inputs, inputs, &r->outputs[s], &r->n_outputs[s],
                     &err) != 0) {
      r->outcome = OUTCOME_ERROR;
      snprintf(r->why, sizeof r->why, "%.590s", err.message);
      break;
    }
    check_set(s, &sets[s], r);
  }
  actx_ort_session_free(session);
}

/* Elements of the actx arm's outputs with the ORT arm's bits; *f32_differing counts the float32
 * elements that differ (actx's float32 kernels are ORT's bit for bit; its half types round once
 * from float32, which ORT's own half kernels do not always do). */
static size_t count_identical(const arm_result *a, const arm_result *b, size_t n_sets,
                              size_t *total, size_t *f32_differing) {
  size_t same = 0;
  *total = 0;
  *f32_differing = 0;
  for (size_t s = 0; s < n_sets; s++) {
    for (size_t k = 0; k < a->n_outputs[s] && k < b->n_outputs[s]; k++) {
      const actx_ort_tensor *x = &a->outputs[s][k], *y = &b->outputs[s][k];
      *total += y->count;
      actx_compare c;
      if (x->elem_type != y->elem_type || x->count != y->count ||
          actx_compare_tensors((int32_t)x->elem_type, x->data, y->data, x->count, 0, 0, &c) != 0) {
        *f32_differing += y->count;
        continue;
      }
      same += x->count - c.differing;
      if (x->elem_type == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT)
        *f32_differing += c.differing;
    }
  }
  return same;
}

static void run_test(const conform_options *o, const test_dir *t, test_result *r) {
  memset(r, 0, sizeof *r);
  snprintf(r->suite, sizeof r->suite, "%s", t->suite);
  snprintf(r->name, sizeof r->name, "%s", t->name);
  r->served = actx_conform_served(t->name);
  char model_path[4200];
  snprintf(model_path, sizeof model_path, "%s/model.onnx", t->path);
  uint8_t *model = NULL;
  size_t model_size = 0;
  char why[600];
  static test_set sets[MAX_SETS];
  size_t n_sets = 0;
  if (actx_read_file(model_path, &model, &model_size, why, sizeof why) != 0 ||
      load_sets(t->path, sets, &n_sets, why, sizeof why) != 0) {
    r->skipped = true;
    snprintf(r->skip_why, sizeof r->skip_why, "data not loadable: %.560s", why);
    free_sets(sets, n_sets);
    free(model);
    r->ok = !r->served;
    r->verdict = r->served ? "FAIL (served op, data not loadable)" : "skip";
    return;
  }
  run_arm(o, model, model_size, sets, n_sets, false, &r->ort);
  run_arm(o, model, model_size, sets, n_sets, true, &r->actx);
  size_t f32_differing = 0;
  if (r->ort.outcome != OUTCOME_ERROR && r->actx.outcome != OUTCOME_ERROR) {
    r->compared_to_ort = true;
    r->ort_identical = count_identical(&r->ort, &r->actx, n_sets, &r->ort_compared,
                                       &f32_differing);
  }
  const bool identical = f32_differing == 0;
  if (r->served) {
    r->ok = r->actx.outcome == OUTCOME_PASS && r->actx.nodes_on_actx > 0 && identical;
    r->verdict = r->ok                             ? "ok"
                 : r->actx.outcome != OUTCOME_PASS ? "FAIL (served op)"
                 : r->actx.nodes_on_actx <= 0      ? "FAIL (served op not run in actx)"
                                                   : "FAIL (float32 bits differ from ORT alone)";
  } else if (r->ort.outcome == OUTCOME_PASS) {
    r->ok = r->actx.outcome == OUTCOME_PASS;
    r->verdict = r->ok ? "ok" : "REGRESSION";
  } else {
    r->ok = true; /* ORT alone does not pass it: nothing to regress from */
    r->verdict = r->ort.outcome == OUTCOME_ERROR && r->actx.outcome == OUTCOME_ERROR
                     ? "skip (ORT cannot run it)"
                     : "ok (fails with ORT alone too)";
    if (r->ort.outcome == OUTCOME_ERROR && r->actx.outcome == OUTCOME_ERROR)
      r->skipped = true;
  }
  arm_free_outputs(&r->ort);
  arm_free_outputs(&r->actx);
  free_sets(sets, n_sets);
  free(model);
}

/* ---- Output ---------------------------------------------------------------------------------- */

static void print_test(const test_result *r, bool details) {
  const bool ran = !(r->skipped && r->skip_why[0] != '\0');
  char identical[64] = "-";
  if (r->compared_to_ort)
    snprintf(identical, sizeof identical, "%zu/%zu", r->ort_identical, r->ort_compared);
  printf("%-18s %-40s ORT %-5s actx %-5s nodes in actx %ld  exact %zu/%zu  as ORT %-9s %s\n",
         r->suite, r->name, ran ? k_outcome_names[r->ort.outcome] : "-",
         ran ? k_outcome_names[r->actx.outcome] : "-",
         r->actx.nodes_on_actx < 0 ? 0 : r->actx.nodes_on_actx, r->actx.exact, r->actx.elements,
         identical, r->verdict);
  if (r->ok && !details)
    return; /* why ORT alone cannot run a test is noise when the verdict is fine */
  if (!ran)
    printf("    %s\n", r->skip_why);
  if (ran && r->ort.outcome != OUTCOME_PASS && r->ort.why[0] != '\0')
    printf("    ORT alone: %s\n", r->ort.why);
  if (ran && r->actx.outcome != OUTCOME_PASS && r->actx.why[0] != '\0')
    printf("    ORT + actx: %s\n", r->actx.why);
}

static void write_csv_row(FILE *f, const test_result *r) {
  char nodes[32], elements[32], exact[32], identical[32];
  snprintf(nodes, sizeof nodes, "%ld", r->actx.nodes_on_actx);
  snprintf(elements, sizeof elements, "%zu", r->actx.elements);
  snprintf(exact, sizeof exact, "%zu", r->actx.exact);
  if (r->compared_to_ort)
    snprintf(identical, sizeof identical, "%zu", r->ort_identical);
  else
    identical[0] = '\0';
  const bool ran = !(r->skipped && r->skip_why[0] != '\0');
  const char *row[] = {r->suite,
                       r->name,
                       r->served ? "1" : "0",
                       r->verdict,
                       ran ? k_outcome_names[r->ort.outcome] : "",
                       ran ? k_outcome_names[r->actx.outcome] : "",
                       ran ? nodes : "",
                       ran ? elements : "",
                       ran ? exact : "",
                       identical,
                       r->skip_why[0] ? r->skip_why : r->ort.why,
                       r->actx.why};
  actx_csv_write_row(f, sizeof row / sizeof *row, row);
}

int actx_cmd_conform(int argc, char **argv) {
  static conform_options o;
  if (parse_options(argc, argv, &o) != 0)
    return ACTX_EXIT_USAGE;
  g_rtol_override = o.rtol;
  g_atol_override = o.atol;
  char err[4096];
  if (actx_find_ep_library(o.ep_lib_arg, o.ep_lib, sizeof o.ep_lib, err, sizeof err) != 0) {
    fprintf(stderr, "actx %s: %s\n", CMD, err);
    return ACTX_EXIT_USAGE;
  }
  if (actx_make_dirs(o.out_dir) != 0) {
    fprintf(stderr, "actx %s: cannot create '%s': %s\n", CMD, o.out_dir, strerror(errno));
    return ACTX_EXIT_USAGE;
  }
  test_list list = {0};
  for (size_t d = 0; d < o.n_data_dirs; d++) {
    if (!is_dir(o.data_dirs[d])) {
      fprintf(stderr, "actx %s: test data directory '%s' not found (install libonnx-testdata, "
                      "or give --data DIR)\n",
              CMD, o.data_dirs[d]);
      free(list.items);
      return ACTX_EXIT_USAGE;
    }
    find_tests(o.data_dirs[d], &list, 1, o.filter);
  }
  char generated[4200];
  if (!o.no_generated) {
    if (o.generated_dir != NULL)
      snprintf(generated, sizeof generated, "%s", o.generated_dir);
    else
      snprintf(generated, sizeof generated, "%s/%s", o.out_dir, DEFAULT_GENERATED_SUBDIR);
    size_t n_generated = 0;
    if (actx_conform_generate(generated, &n_generated, err, sizeof err) != 0) {
      fprintf(stderr, "actx %s: generating tests: %s\n", CMD, err);
      free(list.items);
      return ACTX_EXIT_FAILURE;
    }
    printf("generated %zu tests in %s\n", n_generated, generated);
    find_tests(generated, &list, 0, o.filter);
  }
  if (list.n == 0) {
    fprintf(stderr, "actx %s: no tests found%s\n", CMD, o.filter != NULL ? " (--filter)" : "");
    free(list.items);
    return ACTX_EXIT_USAGE;
  }
  if (actx_quiet_ort(o.ort_verbose, CMD) != 0) {
    free(list.items);
    return ACTX_EXIT_FAILURE;
  }

  char csv_path[4200];
  snprintf(csv_path, sizeof csv_path, "%s/conform.csv", o.out_dir);
  FILE *csv = fopen(csv_path, "w");
  if (csv == NULL) {
    fprintf(stderr, "actx %s: cannot write %s: %s\n", CMD, csv_path, strerror(errno));
    free(list.items);
    return ACTX_EXIT_FAILURE;
  }
  const char *headers[] = {"suite",      "test",          "served",     "verdict",
                           "ort",        "actx",          "actx_nodes", "output_elements",
                           "exact_bits", "ort_identical", "ort_why",    "actx_why"};
  actx_csv_write_row(csv, sizeof headers / sizeof *headers, headers);

  if (o.rtol >= 0 || o.atol >= 0)
    printf("%zu tests; EP %s, policy %s, %ld intra-op thread%s; tolerance rtol %g atol %g\n\n",
           list.n, o.ep_lib, o.policy, o.threads, o.threads == 1 ? "" : "s",
           o.rtol >= 0 ? o.rtol : RTOL_F32, o.atol >= 0 ? o.atol : ATOL);
  else
    printf("%zu tests; EP %s, policy %s, %ld intra-op thread%s; tolerance rtol %g atol %g "
           "(float16 rtol %g, bfloat16 rtol %g)\n\n",
           list.n, o.ep_lib, o.policy, o.threads, o.threads == 1 ? "" : "s", RTOL_F32, ATOL,
           RTOL_F16, RTOL_BF16);
  size_t n_ok = 0, n_failed = 0, n_skipped = 0, n_served = 0, n_served_ok = 0, n_actx_ran = 0,
         n_both_pass = 0, n_fail_both = 0, n_regressions = 0;
  double started = actx_now_ns();
  for (size_t i = 0; i < list.n; i++) {
    test_result r;
    run_test(&o, &list.items[i], &r);
    write_csv_row(csv, &r);
    fflush(csv);
    if (r.skipped)
      n_skipped++;
    if (r.ok)
      n_ok++;
    else
      n_failed++;
    if (r.served) {
      n_served++;
      n_served_ok += r.ok;
    }
    if (r.actx.nodes_on_actx > 0)
      n_actx_ran++;
    if (!r.skipped && r.ort.outcome == OUTCOME_PASS && r.actx.outcome == OUTCOME_PASS)
      n_both_pass++;
    if (!r.skipped && !r.served && r.ort.outcome != OUTCOME_PASS)
      n_fail_both++;
    if (strcmp(r.verdict, "REGRESSION") == 0)
      n_regressions++;
    if (o.verbose || r.served || !r.ok || r.actx.nodes_on_actx > 0)
      print_test(&r, o.verbose);
  }
  fclose(csv);
  printf("\n%zu tests in %.0f s: %zu ok, %zu FAILED; %zu of %zu tests of ops actx serves ok; "
         "actx ran nodes in %zu tests\n",
         list.n, (actx_now_ns() - started) / 1e9, n_ok, n_failed, n_served_ok, n_served,
         n_actx_ran);
  printf("pass with both: %zu; fail with ORT alone too: %zu; skipped (data or model ORT cannot "
         "load): %zu; regressions: %zu\n",
         n_both_pass, n_fail_both, n_skipped, n_regressions);
  printf("CSV: %s\n", csv_path);
  free(list.items);
  return n_failed == 0 ? ACTX_EXIT_OK : ACTX_EXIT_FAILURE;
}
