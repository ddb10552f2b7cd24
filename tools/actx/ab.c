/* ab.c — `actx ab`: ORT alone against ORT with actx, session against session.
 *
 * For every case (an op of the case table × dtype × element count, or a user's model) and every
 * intra-op thread count, the arms' sessions live in this process: A runs on ORT's CPU EP alone,
 * B has the actx EP in front of it; ab_measure.c times them interleaved and takes the ratio
 * A / B (> 1: actx faster) rep by rep. --null adds a second arm A: A against A' shows what the
 * machine's noise does to a ratio that should be 1. --baseline, --threads-a and --dtype-a make
 * arm A something else than ORT alone (ORT + actx with another policy, other threads, another
 * dtype), so that A / B isolates one thing: the node's kernel, the split over threads, the dtype.
 *
 * Every cell also checks B's outputs against ORT alone's (bits, ULPs) — or, where ORT alone
 * cannot run the model (bfloat16), against libactx called directly — and reports which EP ran
 * each node. The EP's `auto` policy may leave a node to ORT; the cell is then measured with
 * policy=all and marked, so the table shows both what auto does and what actx would do.
 *
 * --peer NAME=PATH adds an arm per other plugin EP library (ab_eps.h), timed in the same
 * interleaving, its outputs checked against ORT alone's and its node assignment shown, each in a
 * column group of its own. A peer that fails in a cell fails only there.
 *
 * Before the cells, the session-creation section (ab_creation.h) times creating sessions of
 * chains of claimable nodes, reported apart from the Run() table; after them, the real-model
 * section (ab_models.h) runs the models of models/manifest.txt. ab_report.c prints it all.
 *
 * This file: the options (one table gives each option's name, value, help and effect, and the
 * usage is printed from it), the order of the work, and the cases. */
#define _POSIX_C_SOURCE 200809L
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ab.h"
#include "cli.h"
#include "model.h"
#include "rng.h"

#define STR_(x) #x
#define STR(x) STR_(x)

#define DEFAULT_REPS 21
#define DEFAULT_WARMUP 3
#define DEFAULT_BATCH_MS 2.0
#define DEFAULT_SEED 20240611
#define QUICK_REPS 11
#define QUICK_WARMUP 2
#define QUICK_BATCH_MS 1.0
/* The session-creation section: sessions created per arm. */
#define DEFAULT_CREATION_REPS 5
#define QUICK_CREATION_REPS 3

/* 2048 to 11008: one token's activations in LLM decoding (hidden and FFN widths). */
static const long k_default_sizes[] = {512,   2048,  3072,  4096,   8192,
                                       11008, 16384, 65536, 262144, 1048576};
static const long k_quick_sizes[] = {512, 4096, 16384, 1048576};
static const long k_default_threads[] = {1, 2};
static const long k_default_creation_nodes[] = {100, 1000, 3000};
/* "f32", "f16", "bf16" to *dtype (false, *dtype untouched, for anything else). */
static bool parse_dtype(const char *name, actx_dtype *dtype) {
  for (size_t d = 0; d < AB_N_DTYPES; d++)
    if (strcmp(name, actx_dtype_name(ab_dtypes[d])) == 0) {
      *dtype = ab_dtypes[d];
      return true;
    }
  return false;
}

/* ---- The option table ------------------------------------------------------------------- */

typedef enum opt_kind {
  OPT_FLAG,   /* sets a bool */
  OPT_STRING, /* keeps the value */
  OPT_LONG,   /* a whole number in [min, max] */
  OPT_DOUBLE, /* a number in [min, max] */
  OPT_LIST,   /* comma-separated whole numbers in [min, max], at most max_n */
  OPT_CALL,   /* call() does it */
} opt_kind;

typedef struct ab_option {
  const char *name;
  const char *arg;  /* the value's name in the usage; NULL: the option takes none */
  const char *help; /* its lines in the usage, '\n' between them; "%s": help_value()'s text */
  opt_kind kind;
  size_t field;     /* offsetof(ab_options, ...) of what it sets */
  size_t count;     /* OPT_LIST: offsetof the number of values */
  long min, max;
  size_t max_n;
  int (*call)(ab_options *o, const char *value); /* OPT_CALL: 0, or -1 after saying why */
  const char *(*help_value)(void);
} ab_option;

#define FLAG(name, f, help) {name, NULL, help, OPT_FLAG, offsetof(ab_options, f), 0, 0, 0, 0, NULL, NULL}
#define STRING(name, arg, f, help)                                                               \
  {name, arg, help, OPT_STRING, offsetof(ab_options, f), 0, 0, 0, 0, NULL, NULL}
#define LONG(name, arg, f, lo, hi, help)                                                         \
  {name, arg, help, OPT_LONG, offsetof(ab_options, f), 0, lo, hi, 0, NULL, NULL}
#define DOUBLE(name, arg, f, lo, hi, help)                                                       \
  {name, arg, help, OPT_DOUBLE, offsetof(ab_options, f), 0, lo, hi, 0, NULL, NULL}
#define LIST(name, f, n, lo, hi, help)                                                           \
  {name, "LIST", help, OPT_LIST, offsetof(ab_options, f), offsetof(ab_options, n), lo, hi,       \
   sizeof((ab_options *)0)->f / sizeof *((ab_options *)0)->f, NULL, NULL}
#define CALL(name, arg, fn, help) {name, arg, help, OPT_CALL, 0, 0, 0, 0, 0, fn, NULL}

static void usage(FILE *out);

static int opt_help(ab_options *o, const char *v) {
  usage(stdout);
  exit(ACTX_EXIT_OK);
}

static int opt_list(ab_options *o, const char *v) {
  size_t n = 0;
  const actx_ab_case *cases = actx_ab_cases(&n);
  for (size_t i = 0; i < n; i++)
    printf("%s\n", cases[i].name);
  exit(ACTX_EXIT_OK);
}

static int opt_models_check(ab_options *o, const char *v) {
  o->models_only = o->models_check = true;
  return 0;
}

static int opt_policy(ab_options *o, const char *v) {
  o->policy = v;
  if (strcmp(v, "auto") == 0 || strcmp(v, "all") == 0)
    return 0;
  fprintf(stderr, "actx %s: --policy '%s': expected auto or all\n", AB_CMD, v);
  return -1;
}

static int opt_baseline(ab_options *o, const char *v) {
  if (strcmp(v, "ort") == 0) {
    o->baseline = NULL;
    return 0;
  }
  o->baseline = v;
  if (strcmp(v, "none") == 0 || strcmp(v, "all") == 0 || strcmp(v, "auto") == 0)
    return 0;
  fprintf(stderr, "actx %s: --baseline '%s': expected ort, none, auto or all\n", AB_CMD, v);
  return -1;
}

static int opt_dtype_a(ab_options *o, const char *v) {
  o->dtype_a = v;
  actx_dtype unused;
  if (parse_dtype(v, &unused))
    return 0;
  fprintf(stderr, "actx %s: --dtype-a: unknown dtype '%s' (f32, f16, bf16)\n", AB_CMD, v);
  return -1;
}

static int opt_seed(ab_options *o, const char *v) {
  long seed = 0;
  if (actx_parse_long(AB_CMD, "--seed", v, 0, 0x7fffffffL, &seed) != 0)
    return -1;
  o->seed = (uint64_t)seed;
  return 0;
}

static int opt_peer(ab_options *o, const char *v) {
  char err[512];
  if (actx_ab_peer_parse(v, o->peers, &o->n_peers, err, sizeof err) == 0)
    return 0;
  fprintf(stderr, "actx %s: %s\n", AB_CMD, err);
  return -1;
}

static int opt_peer_option(ab_options *o, const char *v) {
  if (o->n_peer_options == AB_MAX_PEER_OPTIONS) {
    fprintf(stderr, "actx %s: more than %d --peer-option options\n", AB_CMD, AB_MAX_PEER_OPTIONS);
    return -1;
  }
  o->peer_options[o->n_peer_options++] = v;
  return 0;
}

static int opt_in(ab_options *o, const char *v) {
  char err[256];
  if (o->n_input_args == AB_MAX_INPUT_ARGS) {
    fprintf(stderr, "actx %s: more than %d --in options\n", AB_CMD, AB_MAX_INPUT_ARGS);
    return -1;
  }
  if (actx_parse_input_arg(v, &o->input_args[o->n_input_args++], err, sizeof err) == 0)
    return 0;
  fprintf(stderr, "actx %s: %s\n", AB_CMD, err);
  return -1;
}

static int opt_shape(ab_options *o, const char *v) {
  char err[256];
  if (o->n_shape_args == AB_MAX_INPUT_ARGS) {
    fprintf(stderr, "actx %s: more than %d --shape options\n", AB_CMD, AB_MAX_INPUT_ARGS);
    return -1;
  }
  if (actx_parse_shape_arg(v, &o->shape_args[o->n_shape_args++], err, sizeof err) == 0)
    return 0;
  fprintf(stderr, "actx %s: %s\n", AB_CMD, err);
  return -1;
}

/* "512,2048,..." */
static void format_list(const long *v, size_t n, char *buf, size_t size) {
  size_t used = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < n && used < size; i++)
    used += (size_t)snprintf(buf + used, size - used, "%s%ld", i ? "," : "", v[i]);
}

/* The default size lists, for --sizes' help. */
static const char *sizes_help(void) {
  static char text[600];
  char sizes[256], quick[256];
  format_list(k_default_sizes, sizeof k_default_sizes / sizeof *k_default_sizes, sizes,
              sizeof sizes);
  format_list(k_quick_sizes, sizeof k_quick_sizes / sizeof *k_quick_sizes, quick, sizeof quick);
  snprintf(text, sizeof text, "%s;\n--quick %s", sizes, quick);
  return text;
}

static const ab_option k_options[] = {
    CALL("--help", NULL, opt_help, NULL),
    FLAG("--quick", quick, "a subset that takes about a minute"),
    STRING("--ops", "LIST", ops, "case names, comma-separated (default: all; see --list)"),
    STRING("--dtypes", "LIST", dtypes, "f32,f16,bf16 (default: all)"),
    {"--sizes", "LIST",
     "element counts (default\n%s; 2048 to 11008: one token's\n"
     "activations in LLM decoding; the BERT blocks: X's, 768\n"
     "per token, at sequence lengths 32, 128, 512; they run\nfloat32 and float16 only)",
     OPT_LIST, offsetof(ab_options, sizes), offsetof(ab_options, n_sizes), 1, 1L << 30,
     AB_MAX_SIZES, NULL, sizes_help},
    LIST("--threads", threads, n_threads, 1, 256, "intra-op thread counts (default: 1,2)"),
    LONG("--reps", "N", reps, 1, 100000, "timed reps per arm (default " STR(DEFAULT_REPS) ")"),
    LONG("--warmup", "N", warmup, 0, 100000,
         "untimed reps per arm first (default " STR(DEFAULT_WARMUP) ")"),
    DOUBLE("--batch-ms", "X", batch_ms, 0, 10000,
           "each rep runs the model for about X ms (default " STR(DEFAULT_BATCH_MS) ")"),
    FLAG("--null", null_control, "add a second arm A: the noise of a 1.00x ratio"),
    FLAG("--spin", spin, "leave ORT's intra-op threads spinning between runs (ORT's\n"
                         "default; off here, since the arms' pools share the cores)"),
    CALL("--policy", "auto|all", opt_policy, "the EP's policy for the actx arm (default auto)"),
    CALL("--baseline", "ort|none|auto|all", opt_baseline,
         "arm A, the ORT columns (default ort: ORT alone); none:\n"
         "ORT + actx claiming nothing, so that A / B is the node's\n"
         "kernel alone, without ORT's cost of a second EP; auto,\n"
         "all: ORT + actx with that policy"),
    LONG("--threads-a", "N", threads_a, 1, 256,
         "arm A's intra-op threads (default: the cell's); with\n"
         "--baseline all, actx split over --threads against not"),
    CALL("--dtype-a", "DTYPE", opt_dtype_a,
         "arm A runs the case in this dtype (f32, f16, bf16; not\n"
         "with MODEL files): --dtypes bf16 --dtype-a f16 --baseline\n"
         "all times bfloat16 against float16, both in actx"),
    LONG("--profile", "RUNS", profile_runs, 1, AB_MAX_PROFILE_RUNS,
         "then profile arm A and the actx arm RUNS times each, runs\n"
         "interleaved: the GELU part's time and share of a run"),
    STRING("--ep-lib", "PATH", ep_lib_arg, "libactx_ep.so (default: ../lib/ beside this program)"),
    CALL("--peer", "NAME=PATH", opt_peer,
         "another plugin EP library as a further arm (repeatable, up\n"
         "to " STR(ACTX_AB_MAX_PEERS) "): registered under NAME, its CPU device appended\n"
         "with no options; columns NAME us, ORT/NAME, check, EP"),
    CALL("--peer-option", "NAME:KEY=VALUE", opt_peer_option,
         "a provider option for peer NAME (repeatable)"),
    FLAG("--no-creation", no_creation, "skip the session-creation section"),
    FLAG("--creation-only", creation_only, "only the session-creation section"),
    {"--creation-nodes", "LIST", "node counts of its chains (default 100,1000,3000)", OPT_LIST,
     offsetof(ab_options, creation_nodes), offsetof(ab_options, n_creation_nodes), 1, 100000,
     ACTX_AB_CREATION_MAX_SIZES, NULL, NULL},
    LONG("--creation-reps", "N", creation_reps, 1, 1000,
         "sessions created per arm and size (default " STR(DEFAULT_CREATION_REPS) "; --quick " STR(
             QUICK_CREATION_REPS) ")"),
    FLAG("--no-models", no_models, "skip the real-model section (the models of the manifest,\n"
                                   "fetched by `make models`)"),
    FLAG("--models-only", models_only, "only the real-model section"),
    STRING("--models", "LIST", model_names, "only these models of the manifest, comma-separated"),
    CALL("--models-check", NULL, opt_models_check,
         "only check each model (claims, outputs) against the\n"
         "manifest, untimed; exit 1 on a mismatch"),
    STRING("--models-manifest", "FILE", models_manifest,
           "the manifest (default " ACTX_MODELS_MANIFEST ")"),
    STRING("--out", "DIR", out_dir,
           "where ab.csv, ab-creation.csv, ab-models.csv, ab.txt and\nab.png go\n"
           "(default " ACTX_DEFAULT_RESULTS_DIR ")"),
    CALL("--seed", "N", opt_seed, "seed of the random inputs (default " STR(DEFAULT_SEED) ")"),
    CALL("--in", "NAME=FILE", opt_in, "a model input from a file (.pb TensorProto or raw)"),
    CALL("--shape", "NAME=AxB", opt_shape, "the shape of a random or raw input"),
    FLAG("--no-chart", no_chart, "skip the PNG chart"),
    FLAG("--strict", strict, "exit 1 when any cell's outputs differ from the reference"),
    CALL("--list", NULL, opt_list, "print the case names and exit"),
    FLAG("--verbose", verbose, "keep ORT's warnings"),
};
#define N_OPTIONS (sizeof k_options / sizeof k_options[0])

/* The column where help text starts, and how wide a name and value may be to leave one space. */
#define HELP_COLUMN 24
#define NAME_WIDTH (HELP_COLUMN - 3)

static void usage(FILE *out) {
  fprintf(out,
          "usage: actx ab [MODEL.onnx ...] [options]\n"
          "\n"
          "Times ORT alone against ORT with the actx EP, in one process, arms interleaved.\n"
          "Without MODEL, measures every op actx serves x dtype x size; with MODEL files,\n"
          "measures those (inputs random unless --in gives files). First, without MODEL,\n"
          "the time to create sessions of chains of 100 to 3000 claimable nodes; last, the\n"
          "real models of the manifest (claims, outputs, ORT/actx, the null control).\n"
          "\n");
  for (size_t k = 0; k < N_OPTIONS; k++) {
    const ab_option *opt = &k_options[k];
    if (opt->help == NULL)
      continue;
    char name[64], help[1024];
    snprintf(name, sizeof name, "%s%s%s", opt->name, opt->arg ? " " : "", opt->arg ? opt->arg : "");
    if (opt->help_value != NULL)
      snprintf(help, sizeof help, opt->help, opt->help_value());
    else
      snprintf(help, sizeof help, "%s", opt->help);
    fprintf(out, strlen(name) <= NAME_WIDTH ? "  %-*s " : "  %-*s  ", NAME_WIDTH, name);
    for (const char *line = help; line != NULL;) {
      const char *nl = strchr(line, '\n');
      fprintf(out, "%.*s\n", nl ? (int)(nl - line) : (int)strlen(line), line);
      line = nl ? nl + 1 : NULL;
      if (line != NULL)
        fprintf(out, "%*s", HELP_COLUMN, "");
    }
  }
}

/* Applies one option of the table to o; false when its value is bad (already said why). */
static bool apply_option(const ab_option *opt, const char *v, ab_options *o) {
  char *field = (char *)o + opt->field;
  switch (opt->kind) {
  case OPT_FLAG: *(bool *)field = true; return true;
  case OPT_STRING: *(const char **)field = v; return true;
  case OPT_LONG:
    return actx_parse_long(AB_CMD, opt->name, v, opt->min, opt->max, (long *)field) == 0;
  case OPT_DOUBLE:
    return actx_parse_double(AB_CMD, opt->name, v, (double)opt->min, (double)opt->max,
                             (double *)field) == 0;
  case OPT_LIST:
    return actx_parse_long_list(AB_CMD, opt->name, v, opt->min, opt->max, (long *)field,
                                opt->max_n, (size_t *)((char *)o + opt->count)) == 0;
  case OPT_CALL: return opt->call(o, v) == 0;
  }
  return false;
}

static int parse_options(int argc, char **argv, ab_options *o) {
  memset(o, 0, sizeof *o);
  o->reps = -1;
  o->warmup = -1;
  o->batch_ms = -1;
  o->policy = "auto";
  o->out_dir = ACTX_DEFAULT_RESULTS_DIR;
  o->seed = DEFAULT_SEED;
  o->creation_reps = -1;
  o->models_manifest = ACTX_MODELS_MANIFEST;
  bool bad = false;
  for (int i = 1; i < argc && !bad; i++) {
    const char *a = strcmp(argv[i], "-h") == 0 ? "--help" : argv[i];
    const ab_option *opt = NULL;
    for (size_t k = 0; k < N_OPTIONS && opt == NULL; k++)
      if (strcmp(a, k_options[k].name) == 0)
        opt = &k_options[k];
    const char *v = NULL;
    if (opt != NULL) {
      if (opt->arg != NULL)
        actx_arg_value(argc, argv, &i, opt->name, &v, &bad, AB_CMD);
      bad = bad || !apply_option(opt, v, o);
    } else if (a[0] == '-') {
      fprintf(stderr, "actx %s: unknown option '%s' (see actx ab --help)\n", AB_CMD, a);
      bad = true;
    } else if (o->n_models == AB_MAX_MODELS) {
      fprintf(stderr, "actx %s: more than %d models\n", AB_CMD, AB_MAX_MODELS);
      bad = true;
    } else {
      o->models[o->n_models++] = a;
    }
  }
  for (size_t k = 0; k < o->n_peer_options && !bad; k++) {
    char err[512];
    if (actx_ab_peer_option_parse(o->peer_options[k], o->peers, o->n_peers, err, sizeof err) != 0) {
      fprintf(stderr, "actx %s: %s\n", AB_CMD, err);
      bad = true;
    }
  }
  if (!bad && o->no_creation && o->creation_only) {
    fprintf(stderr, "actx %s: --no-creation and --creation-only exclude each other\n", AB_CMD);
    bad = true;
  }
  if (!bad && o->no_models && (o->models_only || o->model_names != NULL)) {
    fprintf(stderr, "actx %s: --no-models excludes --models, --models-only and --models-check\n",
            AB_CMD);
    bad = true;
  }
  if (!bad && o->models_only && (o->creation_only || o->n_models > 0)) {
    fprintf(stderr, "actx %s: --models-only runs the manifest's models alone: not with "
                    "--creation-only or MODEL files\n", AB_CMD);
    bad = true;
  }
  if (!bad && o->creation_only && o->n_models > 0) {
    fprintf(stderr, "actx %s: --creation-only times its own chains, not MODEL files\n", AB_CMD);
    bad = true;
  }
  if (!bad && o->dtype_a != NULL && o->n_models > 0) {
    fprintf(stderr, "actx %s: --dtype-a builds the op cases in another dtype: not with MODEL "
                    "files\n", AB_CMD);
    bad = true;
  }
  for (size_t k = 1; k < o->n_creation_nodes && !bad; k++)
    if (o->creation_nodes[k] <= o->creation_nodes[k - 1]) {
      fprintf(stderr, "actx %s: --creation-nodes: counts must be ascending\n", AB_CMD);
      bad = true;
    }
  if (bad)
    return -1;
  if (o->n_creation_nodes == 0) {
    o->n_creation_nodes = sizeof k_default_creation_nodes / sizeof *k_default_creation_nodes;
    memcpy(o->creation_nodes, k_default_creation_nodes, sizeof k_default_creation_nodes);
  }
  if (o->creation_reps < 0)
    o->creation_reps = o->quick ? QUICK_CREATION_REPS : DEFAULT_CREATION_REPS;
  o->sizes_given = o->n_sizes > 0;
  if (o->n_sizes == 0) {
    const long *src = o->quick ? k_quick_sizes : k_default_sizes;
    size_t n = o->quick ? sizeof k_quick_sizes / sizeof *src : sizeof k_default_sizes / sizeof *src;
    memcpy(o->sizes, src, n * sizeof *src);
    o->n_sizes = n;
  }
  if (o->n_threads == 0) {
    o->n_threads = sizeof k_default_threads / sizeof *k_default_threads;
    memcpy(o->threads, k_default_threads, sizeof k_default_threads);
  }
  if (o->reps < 0)
    o->reps = o->quick ? QUICK_REPS : DEFAULT_REPS;
  if (o->warmup < 0)
    o->warmup = o->quick ? QUICK_WARMUP : DEFAULT_WARMUP;
  if (o->batch_ms < 0)
    o->batch_ms = o->quick ? QUICK_BATCH_MS : DEFAULT_BATCH_MS;
  if (o->dtypes != NULL) {
    char *copy = strdup(o->dtypes), *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t != NULL; t = strtok_r(NULL, ",", &save)) {
      actx_dtype unused;
      if (!parse_dtype(t, &unused)) {
        fprintf(stderr, "actx %s: --dtypes: unknown dtype '%s' (f32, f16, bf16)\n", AB_CMD, t);
        bad = true;
      }
    }
    free(copy);
  }
  if (o->ops != NULL) {
    size_t n = 0;
    const actx_ab_case *cases = actx_ab_cases(&n);
    char *copy = strdup(o->ops), *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t != NULL; t = strtok_r(NULL, ",", &save)) {
      bool known = false;
      for (size_t c = 0; c < n; c++)
        known = known || actx_list_contains(t, cases[c].name);
      if (!known) {
        fprintf(stderr, "actx %s: --ops: unknown case '%s' (see actx ab --list)\n", AB_CMD, t);
        bad = true;
      }
    }
    free(copy);
  }
  return bad ? -1 : 0;
}

/* ---- Progress ------------------------------------------------------------------------------- */

typedef struct progress {
  size_t done, total;
  bool tty;
  double started_ns;
} progress;

static void progress_show(progress *p, const char *label, const char *dtype, size_t n,
                          long threads) {
  double elapsed = (actx_now_ns() - p->started_ns) / 1e9;
  if (p->tty) {
    fprintf(stderr, "\r\033[K[%zu/%zu %.0fs] %s %s N=%zu threads=%ld", p->done + 1, p->total,
            elapsed, label, dtype, n, threads);
  } else if (p->total >= 10 && (p->done * 10 / p->total) != ((p->done + 1) * 10 / p->total)) {
    fprintf(stderr, "actx ab: %zu/%zu cells (%.0f s)\n", p->done + 1, p->total, elapsed);
  }
  p->done++;
}

static void progress_end(progress *p) {
  if (p->tty)
    fprintf(stderr, "\r\033[K");
}

/* ---- Cases -------------------------------------------------------------------------------- */

/* The sizes and dtypes a case is measured at. */
static void case_sizes(const ab_options *o, const actx_ab_case *c, const long **sizes, size_t *n) {
  const bool own = !o->sizes_given && c->default_sizes != NULL;
  *sizes = own ? c->default_sizes : o->sizes;
  *n = own ? c->n_default_sizes : o->n_sizes;
}
static bool case_takes_dtype(const ab_options *o, const actx_ab_case *c, actx_dtype dtype) {
  return actx_list_contains(o->dtypes, actx_dtype_name(dtype)) && !(c->no_bf16 && dtype == ACTX_BF16);
}

static int run_builtin_cases(const ab_options *o, ab_results *r, progress *p) {
  size_t n_cases = 0;
  const actx_ab_case *cases = actx_ab_cases(&n_cases);
  actx_dtype dtype_a = ACTX_F32; /* --dtype-a was checked when parsed */
  if (o->dtype_a != NULL) (void)parse_dtype(o->dtype_a, &dtype_a);
  for (size_t ci = 0; ci < n_cases; ci++) {
    const actx_ab_case *c = &cases[ci];
    if (!actx_list_contains(o->ops, c->name))
      continue;
    const long *sizes;
    size_t n_sizes;
    case_sizes(o, c, &sizes, &n_sizes);
    for (size_t d = 0; d < AB_N_DTYPES; d++) {
      const char *dtype = actx_dtype_name(ab_dtypes[d]);
      if (!case_takes_dtype(o, c, ab_dtypes[d]))
        continue;
      for (size_t s = 0; s < n_sizes; s++) {
        actx_ab_model m;
        char err[512];
        char seed_name[128];
        snprintf(seed_name, sizeof seed_name, "%s/%s/%ld", c->name, dtype, sizes[s]);
        if (c->build(c, ab_dtypes[d], (size_t)sizes[s], actx_hash_string(o->seed, seed_name),
                     &m, err, sizeof err) != 0) {
          fprintf(stderr, "actx %s: %s\n", AB_CMD, err);
          return -1;
        }
        /* --dtype-a: arm A's model is the same case in that dtype, inputs from the same seed */
        actx_ab_model m_a;
        const bool own_a = o->dtype_a != NULL && dtype_a != ab_dtypes[d];
        if (own_a && c->build(c, dtype_a, (size_t)sizes[s], actx_hash_string(o->seed, seed_name),
                              &m_a, err, sizeof err) != 0) {
          fprintf(stderr, "actx %s: %s\n", AB_CMD, err);
          actx_ab_model_free(&m);
          return -1;
        }
        const actx_ab_model *a = own_a ? &m_a : &m;
        const ab_cell_input in = {{m.bytes, m.size, m.n_inputs, m.inputs},
                                  {a->bytes, a->size, a->n_inputs, a->inputs},
                                  m.has_reference ? &m : NULL};
        for (size_t t = 0; t < o->n_threads; t++) {
          progress_show(p, c->name, dtype, m.elements, o->threads[t]);
          ab_cell *cl = ab_new_cell(r);
          if (cl == NULL) {
            if (own_a)
              actx_ab_model_free(&m_a);
            actx_ab_model_free(&m);
            fprintf(stderr, "actx %s: out of memory\n", AB_CMD);
            return -1;
          }
          snprintf(cl->label, sizeof cl->label, "%s", c->name);
          snprintf(cl->dtype, sizeof cl->dtype, "%s", dtype);
          cl->elements = m.elements;
          cl->threads = o->threads[t];
          ab_run_cell(o, &in, cl);
        }
        if (own_a)
          actx_ab_model_free(&m_a);
        actx_ab_model_free(&m);
      }
    }
  }
  return 0;
}

static const char *dtype_label(int32_t elem_type) {
  switch (elem_type) {
  case ACTX_ELEM_FLOAT: return "f32";
  case ACTX_ELEM_FLOAT16: return "f16";
  case ACTX_ELEM_BFLOAT16: return "bf16";
  default: return actx_elem_name(elem_type);
  }
}

/* A model's name for the table: its file name, or "<dir>/model.onnx" for ONNX's layout where
 * every model is called model.onnx. */
static void model_label(const char *path, char *buf, size_t size) {
  const char *slash = strrchr(path, '/');
  const char *file = slash != NULL ? slash + 1 : path;
  if (strcmp(file, "model.onnx") == 0 && slash != NULL && slash > path) {
    const char *dir = slash;
    while (dir > path && dir[-1] != '/')
      dir--;
    snprintf(buf, size, "%.*s", (int)(slash - dir), dir);
    return;
  }
  snprintf(buf, size, "%s", file);
}

static int run_model_files(const ab_options *o, ab_results *r, progress *p) {
  for (size_t mi = 0; mi < o->n_models; mi++) {
    const char *path = o->models[mi];
    uint8_t *bytes = NULL;
    size_t size = 0;
    char err[1024];
    if (actx_read_file(path, &bytes, &size, err, sizeof err) != 0) {
      fprintf(stderr, "actx %s: %s\n", AB_CMD, err);
      return ACTX_EXIT_USAGE;
    }
    actx_model_info info;
    if (actx_model_info_parse(bytes, size, &info, err, sizeof err) != 0) {
      fprintf(stderr, "actx %s: %s: %s\n", AB_CMD, path, err);
      free(bytes);
      return ACTX_EXIT_FAILURE;
    }
    actx_rng rng;
    actx_rng_seed(&rng, actx_hash_string(o->seed, path));
    actx_model_inputs inputs;
    if (actx_model_inputs_load(&info, o->input_args, o->n_input_args, o->shape_args,
                               o->n_shape_args, &rng, &inputs, err, sizeof err) != 0) {
      fprintf(stderr, "actx %s: %s: %s\n", AB_CMD, path, err);
      actx_model_info_free(&info);
      free(bytes);
      return ACTX_EXIT_USAGE;
    }
    char base[64];
    model_label(path, base, sizeof base);
    for (size_t i = 0; i < inputs.n; i++) {
      char shape[192];
      actx_describe_tensor((int32_t)inputs.tensors[i].elem_type, inputs.tensors[i].rank,
                           inputs.tensors[i].dims, shape, sizeof shape);
      fprintf(stderr, "actx %s: %s: input %s = %s (%s)\n", AB_CMD, base, inputs.names[i], shape,
              inputs.sources[i]);
    }
    const ab_model_ref model = {bytes, size, inputs.n, inputs.tensors};
    const ab_cell_input in = {model, model, NULL};
    for (size_t t = 0; t < o->n_threads; t++) {
      const int32_t elem0 = inputs.n > 0 ? (int32_t)inputs.tensors[0].elem_type : 0;
      progress_show(p, base, dtype_label(elem0), inputs.n > 0 ? inputs.tensors[0].count : 0,
                    o->threads[t]);
      ab_cell *cl = ab_new_cell(r);
      if (cl == NULL)
        break;
      snprintf(cl->label, sizeof cl->label, "%s", base);
      snprintf(cl->dtype, sizeof cl->dtype, "%s", dtype_label(elem0));
      cl->elements = inputs.n > 0 ? inputs.tensors[0].count : 0;
      cl->threads = o->threads[t];
      ab_run_cell(o, &in, cl);
    }
    actx_model_inputs_free(&inputs);
    actx_model_info_free(&info);
    free(bytes);
  }
  return ACTX_EXIT_OK;
}

static size_t count_cells(const ab_options *o) {
  if (o->creation_only || o->models_only)
    return 0;
  if (o->n_models > 0)
    return o->n_models * o->n_threads;
  size_t n_cases = 0, total = 0;
  const actx_ab_case *cases = actx_ab_cases(&n_cases);
  for (size_t c = 0; c < n_cases; c++)
    if (actx_list_contains(o->ops, cases[c].name))
      for (size_t d = 0; d < AB_N_DTYPES; d++)
        if (case_takes_dtype(o, &cases[c], ab_dtypes[d])) {
          const long *sizes;
          size_t n_sizes;
          case_sizes(o, &cases[c], &sizes, &n_sizes);
          total += n_sizes * o->n_threads;
        }
  return total;
}


int actx_cmd_ab(int argc, char **argv) {
  static ab_options o;
  if (parse_options(argc, argv, &o) != 0)
    return ACTX_EXIT_USAGE;
  char err[4096];
  if (actx_find_ep_library(o.ep_lib_arg, o.ep_lib, sizeof o.ep_lib, err, sizeof err) != 0) {
    fprintf(stderr, "actx %s: %s\n", AB_CMD, err);
    return ACTX_EXIT_USAGE;
  }
  actx_ab_ep_actx(&o.actx_ep, o.ep_lib, o.policy);
  if (o.baseline != NULL)
    actx_ab_ep_actx(&o.baseline_ep, o.ep_lib, o.baseline);
  if (actx_make_dirs(o.out_dir) != 0) {
    fprintf(stderr, "actx %s: cannot create the results directory '%s'\n", AB_CMD, o.out_dir);
    return ACTX_EXIT_USAGE;
  }
  if (actx_quiet_ort(o.verbose, AB_CMD) != 0)
    return ACTX_EXIT_FAILURE;
  /* A peer that cannot be loaded is a bad command line: found before any cell is measured. */
  for (size_t p = 0; p < o.n_peers; p++)
    if (actx_ab_peer_load(&o.peers[p], err, sizeof err) != 0) {
      fprintf(stderr, "actx %s: %s\n", AB_CMD, err);
      return ACTX_EXIT_USAGE;
    }
  ab_run_info info;
  actx_format_timestamp(info.started, sizeof info.started);
  ab_load_average(info.load_before, sizeof info.load_before);
  const bool tty = isatty(STDERR_FILENO) != 0;

  actx_ab_creation *creation = NULL;
  if (!o.no_creation && o.n_models == 0 && !o.models_only) {
    const actx_ab_creation_config config = {
        .nodes = o.creation_nodes, .n_sizes = o.n_creation_nodes, .reps = o.creation_reps,
        .actx_path = o.ep_lib, .peers = o.peers, .n_peers = o.n_peers, .tty = tty};
    creation = actx_ab_creation_run(&config);
    if (creation == NULL) {
      fprintf(stderr, "actx %s: out of memory\n", AB_CMD);
      return ACTX_EXIT_FAILURE;
    }
  }

  ab_results r = {0};
  progress p = {.total = count_cells(&o), .tty = tty, .started_ns = actx_now_ns()};
  int rc = ACTX_EXIT_OK;
  const bool run_table = !o.creation_only && !o.models_only;
  if (run_table)
    rc = o.n_models > 0 ? run_model_files(&o, &r, &p)
                        : (run_builtin_cases(&o, &r, &p) == 0 ? ACTX_EXIT_OK : ACTX_EXIT_FAILURE);
  progress_end(&p);
  if (rc != ACTX_EXIT_OK && r.n == 0) {
    free(r.cells);
    actx_ab_creation_free(creation);
    return rc;
  }
  actx_ab_models *models = NULL;
  if (!o.no_models && o.n_models == 0 && !o.creation_only) {
    const actx_ab_models_config config = {
        .manifest = o.models_manifest, .only = o.model_names, .actx_path = o.ep_lib,
        .threads = o.threads, .n_threads = o.n_threads, .null_control = o.null_control,
        .spin = o.spin, .quick = o.quick, .check_only = o.models_check, .tty = tty,
        .seed = o.seed};
    models = actx_ab_models_run(&config, err, sizeof err);
    if (models == NULL) {
      fprintf(stderr, "actx %s: %s\n", AB_CMD, err);
      free(r.cells);
      actx_ab_creation_free(creation);
      return o.models_only ? ACTX_EXIT_USAGE : ACTX_EXIT_FAILURE;
    }
  }
  ab_load_average(info.load_after, sizeof info.load_after);
  info.seconds = (actx_now_ns() - p.started_ns) / 1e9;

  if (ab_report(&o, run_table ? &r : NULL, &info, creation, models) != ACTX_EXIT_OK)
    rc = ACTX_EXIT_FAILURE;
  /* Differing outputs are shown in the table and the notes; --strict also fails the run (on
   * actx's outputs: a peer owes no one ORT's bits). */
  for (size_t i = 0; o.strict && i < r.n; i++)
    if (r.cells[i].arms[ARM_ACTX].compared && r.cells[i].arms[ARM_ACTX].cmp.differing > 0)
      rc = ACTX_EXIT_FAILURE;
  /* A model that does not load, claims other nodes than its manifest line says, or differs from
   * ORT alone past its bound fails --models-check, and --strict. */
  if (models != NULL && (o.strict || o.models_check) && actx_ab_models_failures(models) > 0)
    rc = ACTX_EXIT_FAILURE;
  free(r.cells);
  actx_ab_creation_free(creation);
  actx_ab_models_free(models);
  return rc;
}
