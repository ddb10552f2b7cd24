/* ab.c — `actx ab`: ORT alone against ORT with actx, session against session.
 *
 * For every case (an op of the case table × dtype × element count, or a user's model) and every
 * intra-op thread count, two sessions live in this process: A runs on ORT's CPU EP alone, B has
 * the actx EP in front of it. Both get the same model, options and input buffers, and their
 * outputs go to buffers created once (timed_session.c), so the clock sees Run() and nothing of
 * ours. After warm-ups the arms are timed in alternating order (A B, B A, ...), each rep a batch
 * of runs lasting about --batch-ms; the samples give median, p10, p90 per arm. The ratio
 * A / B (> 1: actx faster) is taken rep by rep, from the two batches that ran next to each
 * other, and reported as the median and p10-p90 of those ratios: load that comes and goes on a
 * shared machine hits both batches of a rep alike and cancels out of their ratio.
 * --null adds a second ORT-alone session C: A against C shows what the machine's noise does to a
 * ratio that should be 1.
 *
 * Every cell also checks B's outputs against A's (bits, ULPs) — or, where ORT alone cannot run
 * the model (bfloat16), against libactx called directly — and reports which EP ran each node.
 * The EP's `auto` policy may leave a node to ORT; the cell is then measured with policy=all and
 * marked, so the table shows both what auto does and what actx would do.
 *
 * --peer NAME=PATH adds an arm per other plugin EP library (ab_eps.h), timed in the same
 * interleaving, its outputs checked against ORT alone's and its node assignment shown, each in a
 * column group of its own. A peer that fails in a cell fails only there.
 *
 * Before the cells, the session-creation section (ab_creation.h) times creating sessions of
 * chains of claimable nodes, reported apart from the Run() table; after them, the real-model
 * section (ab_models.h) runs the models of models/manifest.txt. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ab_cases.h"
#include "ab_creation.h"
#include "ab_eps.h"
#include "ab_models.h"
#include "actx.h"
#include "chart.h"
#include "cli.h"
#include "compare.h"
#include "host.h"
#include "inputs.h"
#include "model.h"
#include "rng.h"
#include "stats.h"
#include "table.h"
#include "timed_session.h"

#define CMD "ab"
#define ORT_CPU_EP "CPUExecutionProvider"

#define DEFAULT_REPS 21
#define DEFAULT_WARMUP 3
#define DEFAULT_BATCH_MS 2.0
#define DEFAULT_SEED 20240611u
#define QUICK_REPS 11
#define QUICK_WARMUP 2
#define QUICK_BATCH_MS 1.0
#define MAX_SIZES 16
#define MAX_THREADS 8
#define MAX_MODELS 16
#define MAX_INPUT_ARGS 32
/* The session-creation section: node counts of its chains, and sessions created per arm. */
#define DEFAULT_CREATION_REPS 5
#define QUICK_CREATION_REPS 3
#define MAX_PEER_OPTIONS 32
/* A batch never runs more than this many times, however fast one run is. */
#define MAX_BATCH 100000
/* Runs timed to size the batches (the fastest counts). */
#define CALIBRATION_RUNS 3

/* 2048 to 11008: one token's activations in LLM decoding (hidden and FFN widths). */
static const long k_default_sizes[] = {512,   2048,  3072,  4096,   8192,
                                       11008, 16384, 65536, 262144, 1048576};
static const long k_quick_sizes[] = {512, 4096, 16384, 1048576};
static const long k_default_threads[] = {1, 2};
static const long k_default_creation_nodes[] = {100, 1000, 3000};
static const actx_dtype k_dtypes[] = {ACTX_F32, ACTX_F16, ACTX_BF16};
#define N_DTYPES (sizeof k_dtypes / sizeof k_dtypes[0])

/* The arms of a cell: ORT alone, ORT + actx, the null control, then one per peer. */
typedef enum arm_kind {
  ARM_ORT,
  ARM_ACTX,
  ARM_NULL,
  ARM_PEER,
  N_ARMS = ARM_PEER + ACTX_AB_MAX_PEERS
} arm_kind;

typedef struct ab_options {
  const char *ops, *dtypes;
  long sizes[MAX_SIZES];
  size_t n_sizes;
  long threads[MAX_THREADS];
  size_t n_threads;
  long reps, warmup;
  double batch_ms;
  bool null_control, quick, no_chart, verbose, strict, spin;
  bool sizes_given; /* --sizes: every case at those; otherwise a case may have its own */
  const char *policy;
  const char *ep_lib_arg;
  char ep_lib[4096];
  actx_ab_ep actx_ep; /* the actx arm's EP, with the policy of --policy */
  actx_ab_ep peers[ACTX_AB_MAX_PEERS];
  size_t n_peers;
  /* --peer-option values, applied once every --peer is known */
  const char *peer_options[MAX_PEER_OPTIONS];
  size_t n_peer_options;
  bool no_creation, creation_only;
  bool no_models, models_only, models_check;
  const char *model_names; /* --models: a subset of the manifest */
  const char *models_manifest;
  long creation_nodes[ACTX_AB_CREATION_MAX_SIZES];
  size_t n_creation_nodes;
  long creation_reps;
  const char *out_dir;
  uint64_t seed;
  const char *models[MAX_MODELS];
  size_t n_models;
  actx_input_arg input_args[MAX_INPUT_ARGS];
  size_t n_input_args;
  actx_shape_arg shape_args[MAX_INPUT_ARGS];
  size_t n_shape_args;
} ab_options;

typedef struct arm {
  actx_timed_session *ts;
  bool ok;
  bool not_implemented;
  char error[1024];
  size_t batch;
  double *samples; /* ns per Run, one per rep */
  size_t n_samples;
  actx_stats stats;
  /* Each arm but ORT alone against ORT alone: */
  actx_stats ratio; /* of the rep-by-rep ratios ORT alone / this arm */
  bool has_ratio;
  char ep_summary[128]; /* where the arm's nodes ran */
  const char *reference; /* what its outputs were compared with: "ORT", "libactx", NULL */
  bool compared;
  actx_compare cmp;
  char check[96];
} arm;

typedef struct cell {
  char label[64];
  char dtype[16];
  size_t elements;
  long threads;
  arm arms[N_ARMS];
  const char *policy_used;
  bool auto_declined; /* auto left every node to ORT: measured with policy=all */
} cell;

/* What a case brings to a cell: model bytes, inputs, an optional libactx reference. */
typedef struct cell_input {
  const uint8_t *model;
  size_t model_size;
  size_t n_inputs;
  const actx_ort_tensor *inputs;
  const actx_ab_model *reference; /* NULL: none */
} cell_input;

/* "512,2048,..." */
static void format_list(const long *v, size_t n, char *buf, size_t size) {
  size_t used = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < n && used < size; i++)
    used += (size_t)snprintf(buf + used, size - used, "%s%ld", i ? "," : "", v[i]);
}

static void usage(FILE *out) {
  char sizes[256], quick_sizes[256];
  format_list(k_default_sizes, sizeof k_default_sizes / sizeof *k_default_sizes, sizes,
              sizeof sizes);
  format_list(k_quick_sizes, sizeof k_quick_sizes / sizeof *k_quick_sizes, quick_sizes,
              sizeof quick_sizes);
  fprintf(out,
          "usage: actx ab [MODEL.onnx ...] [options]\n"
          "\n"
          "Times ORT alone against ORT with the actx EP, in one process, arms interleaved.\n"
          "Without MODEL, measures every op actx serves x dtype x size; with MODEL files,\n"
          "measures those (inputs random unless --in gives files). First, without MODEL,\n"
          "the time to create sessions of chains of 100 to 3000 claimable nodes; last, the\n"
          "real models of the manifest (claims, outputs, ORT/actx, the null control).\n"
          "\n"
          "  --quick               a subset that takes about a minute\n"
          "  --ops LIST            case names, comma-separated (default: all; see --list)\n"
          "  --dtypes LIST         f32,f16,bf16 (default: all)\n"
          "  --sizes LIST          element counts (default\n"
          "                        %s;\n"
          "                        --quick %s; 2048 to 11008: one token's\n"
          "                        activations in LLM decoding; the BERT blocks: X's, 768\n"
          "                        per token, at sequence lengths 32, 128, 512; they run\n"
          "                        float32 and float16 only)\n"
          "  --threads LIST        intra-op thread counts (default: 1,2)\n"
          "  --reps N              timed reps per arm (default %d)\n"
          "  --warmup N            untimed reps per arm first (default %d)\n"
          "  --batch-ms X          each rep runs the model for about X ms (default %.1f)\n"
          "  --null                add a second ORT-alone arm: the noise of a 1.00x ratio\n"
          "  --spin                leave ORT's intra-op threads spinning between runs (ORT's\n"
          "                        default; off here, since the arms' pools share the cores)\n"
          "  --policy auto|all     the EP's policy for the actx arm (default auto)\n"
          "  --ep-lib PATH         libactx_ep.so (default: ../lib/ beside this program)\n"
          "  --peer NAME=PATH      another plugin EP library as a further arm (repeatable, up\n"
          "                        to %d): registered under NAME, its CPU device appended\n"
          "                        with no options; columns NAME us, ORT/NAME, check, EP\n"
          "  --peer-option NAME:KEY=VALUE  a provider option for peer NAME (repeatable)\n"
          "  --no-creation         skip the session-creation section\n"
          "  --creation-only       only the session-creation section\n"
          "  --creation-nodes LIST node counts of its chains (default 100,1000,3000)\n"
          "  --creation-reps N     sessions created per arm and size (default %d; --quick %d)\n"
          "  --no-models           skip the real-model section (the models of the manifest,\n"
          "                        fetched by `make models`)\n"
          "  --models-only         only the real-model section\n"
          "  --models LIST         only these models of the manifest, comma-separated\n"
          "  --models-check        only check each model (claims, outputs) against the\n"
          "                        manifest, untimed; exit 1 on a mismatch\n"
          "  --models-manifest FILE  the manifest (default %s)\n"
          "  --out DIR             where ab.csv, ab-creation.csv, ab-models.csv, ab.txt and\n"
          "                        ab.png go\n"
          "                        (default %s)\n"
          "  --seed N              seed of the random inputs (default %u)\n"
          "  --in NAME=FILE        a model input from a file (.pb TensorProto or raw)\n"
          "  --shape NAME=AxB      the shape of a random or raw input\n"
          "  --no-chart            skip the PNG chart\n"
          "  --strict              exit 1 when any cell's outputs differ from the reference\n"
          "  --list                print the case names and exit\n"
          "  --verbose             keep ORT's warnings\n",
          sizes, quick_sizes, DEFAULT_REPS, DEFAULT_WARMUP, DEFAULT_BATCH_MS, ACTX_AB_MAX_PEERS,
          DEFAULT_CREATION_REPS, QUICK_CREATION_REPS, ACTX_MODELS_MANIFEST,
          ACTX_DEFAULT_RESULTS_DIR, DEFAULT_SEED);
}

static void list_cases(void) {
  size_t n = 0;
  const actx_ab_case *cases = actx_ab_cases(&n);
  for (size_t i = 0; i < n; i++)
    printf("%s\n", cases[i].name);
}

/* ---- Options ------------------------------------------------------------------------------ */

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
    const char *v = NULL;
    const char *a = argv[i];
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      usage(stdout);
      exit(ACTX_EXIT_OK);
    } else if (strcmp(a, "--list") == 0) {
      list_cases();
      exit(ACTX_EXIT_OK);
    } else if (strcmp(a, "--quick") == 0) {
      o->quick = true;
    } else if (strcmp(a, "--null") == 0) {
      o->null_control = true;
    } else if (strcmp(a, "--spin") == 0) {
      o->spin = true;
    } else if (strcmp(a, "--no-chart") == 0) {
      o->no_chart = true;
    } else if (strcmp(a, "--strict") == 0) {
      o->strict = true;
    } else if (strcmp(a, "--verbose") == 0) {
      o->verbose = true;
    } else if (strcmp(a, "--no-creation") == 0) {
      o->no_creation = true;
    } else if (strcmp(a, "--creation-only") == 0) {
      o->creation_only = true;
    } else if (strcmp(a, "--no-models") == 0) {
      o->no_models = true;
    } else if (strcmp(a, "--models-only") == 0) {
      o->models_only = true;
    } else if (strcmp(a, "--models-check") == 0) {
      o->models_only = o->models_check = true;
    } else if (actx_arg_value(argc, argv, &i, "--models", &v, &bad, CMD)) {
      o->model_names = v;
    } else if (actx_arg_value(argc, argv, &i, "--models-manifest", &v, &bad, CMD)) {
      o->models_manifest = v;
    } else if (actx_arg_value(argc, argv, &i, "--creation-nodes", &v, &bad, CMD)) {
      bad = bad || actx_parse_long_list(CMD, "--creation-nodes", v, 1, 100000, o->creation_nodes,
                                        ACTX_AB_CREATION_MAX_SIZES, &o->n_creation_nodes) != 0;
    } else if (actx_arg_value(argc, argv, &i, "--creation-reps", &v, &bad, CMD)) {
      bad = bad || actx_parse_long(CMD, "--creation-reps", v, 1, 1000, &o->creation_reps) != 0;
    } else if (actx_arg_value(argc, argv, &i, "--peer", &v, &bad, CMD)) {
      char err[512];
      if (!bad && actx_ab_peer_parse(v, o->peers, &o->n_peers, err, sizeof err) != 0) {
        fprintf(stderr, "actx %s: %s\n", CMD, err);
        bad = true;
      }
    } else if (actx_arg_value(argc, argv, &i, "--peer-option", &v, &bad, CMD)) {
      if (!bad && o->n_peer_options == MAX_PEER_OPTIONS) {
        fprintf(stderr, "actx %s: more than %d --peer-option options\n", CMD, MAX_PEER_OPTIONS);
        bad = true;
      } else if (!bad) {
        o->peer_options[o->n_peer_options++] = v;
      }
    } else if (actx_arg_value(argc, argv, &i, "--ops", &v, &bad, CMD)) {
      o->ops = v;
    } else if (actx_arg_value(argc, argv, &i, "--dtypes", &v, &bad, CMD)) {
      o->dtypes = v;
    } else if (actx_arg_value(argc, argv, &i, "--sizes", &v, &bad, CMD)) {
      bad = bad || actx_parse_long_list(CMD, "--sizes", v, 1, 1L << 30, o->sizes, MAX_SIZES,
                                        &o->n_sizes) != 0;
    } else if (actx_arg_value(argc, argv, &i, "--threads", &v, &bad, CMD)) {
      bad = bad || actx_parse_long_list(CMD, "--threads", v, 1, 256, o->threads, MAX_THREADS,
                                        &o->n_threads) != 0;
    } else if (actx_arg_value(argc, argv, &i, "--reps", &v, &bad, CMD)) {
      bad = bad || actx_parse_long(CMD, "--reps", v, 1, 100000, &o->reps) != 0;
    } else if (actx_arg_value(argc, argv, &i, "--warmup", &v, &bad, CMD)) {
      bad = bad || actx_parse_long(CMD, "--warmup", v, 0, 100000, &o->warmup) != 0;
    } else if (actx_arg_value(argc, argv, &i, "--batch-ms", &v, &bad, CMD)) {
      bad = bad || actx_parse_double(CMD, "--batch-ms", v, 0, 10000, &o->batch_ms) != 0;
    } else if (actx_arg_value(argc, argv, &i, "--policy", &v, &bad, CMD)) {
      if (!bad && strcmp(v, "auto") != 0 && strcmp(v, "all") != 0) {
        fprintf(stderr, "actx %s: --policy '%s': expected auto or all\n", CMD, v);
        bad = true;
      }
      o->policy = v;
    } else if (actx_arg_value(argc, argv, &i, "--ep-lib", &v, &bad, CMD)) {
      o->ep_lib_arg = v;
    } else if (actx_arg_value(argc, argv, &i, "--out", &v, &bad, CMD)) {
      o->out_dir = v;
    } else if (actx_arg_value(argc, argv, &i, "--seed", &v, &bad, CMD)) {
      long seed = 0;
      bad = bad || actx_parse_long(CMD, "--seed", v, 0, 0x7fffffffL, &seed) != 0;
      o->seed = (uint64_t)seed;
    } else if (actx_arg_value(argc, argv, &i, "--in", &v, &bad, CMD)) {
      char err[256];
      if (!bad && o->n_input_args == MAX_INPUT_ARGS) {
        fprintf(stderr, "actx %s: more than %d --in options\n", CMD, MAX_INPUT_ARGS);
        bad = true;
      } else if (!bad && actx_parse_input_arg(v, &o->input_args[o->n_input_args++], err,
                                              sizeof err) != 0) {
        fprintf(stderr, "actx %s: %s\n", CMD, err);
        bad = true;
      }
    } else if (actx_arg_value(argc, argv, &i, "--shape", &v, &bad, CMD)) {
      char err[256];
      if (!bad && o->n_shape_args == MAX_INPUT_ARGS) {
        fprintf(stderr, "actx %s: more than %d --shape options\n", CMD, MAX_INPUT_ARGS);
        bad = true;
      } else if (!bad && actx_parse_shape_arg(v, &o->shape_args[o->n_shape_args++], err,
                                              sizeof err) != 0) {
        fprintf(stderr, "actx %s: %s\n", CMD, err);
        bad = true;
      }
    } else if (a[0] == '-') {
      fprintf(stderr, "actx %s: unknown option '%s' (see actx ab --help)\n", CMD, a);
      bad = true;
    } else if (o->n_models == MAX_MODELS) {
      fprintf(stderr, "actx %s: more than %d models\n", CMD, MAX_MODELS);
      bad = true;
    } else {
      o->models[o->n_models++] = a;
    }
  }
  for (size_t k = 0; k < o->n_peer_options && !bad; k++) {
    char err[512];
    if (actx_ab_peer_option_parse(o->peer_options[k], o->peers, o->n_peers, err, sizeof err) != 0) {
      fprintf(stderr, "actx %s: %s\n", CMD, err);
      bad = true;
    }
  }
  if (!bad && o->no_creation && o->creation_only) {
    fprintf(stderr, "actx %s: --no-creation and --creation-only exclude each other\n", CMD);
    bad = true;
  }
  if (!bad && o->no_models && (o->models_only || o->model_names != NULL)) {
    fprintf(stderr, "actx %s: --no-models excludes --models, --models-only and --models-check\n",
            CMD);
    bad = true;
  }
  if (!bad && o->models_only && (o->creation_only || o->n_models > 0)) {
    fprintf(stderr, "actx %s: --models-only runs the manifest's models alone: not with "
                    "--creation-only or MODEL files\n", CMD);
    bad = true;
  }
  if (!bad && o->creation_only && o->n_models > 0) {
    fprintf(stderr, "actx %s: --creation-only times its own chains, not MODEL files\n", CMD);
    bad = true;
  }
  for (size_t k = 1; k < o->n_creation_nodes && !bad; k++)
    if (o->creation_nodes[k] <= o->creation_nodes[k - 1]) {
      fprintf(stderr, "actx %s: --creation-nodes: counts must be ascending\n", CMD);
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
      bool known = false;
      for (size_t d = 0; d < N_DTYPES; d++)
        known = known || strcmp(t, actx_dtype_name(k_dtypes[d])) == 0;
      if (!known) {
        fprintf(stderr, "actx %s: --dtypes: unknown dtype '%s' (f32, f16, bf16)\n", CMD, t);
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
        fprintf(stderr, "actx %s: --ops: unknown case '%s' (see actx ab --list)\n", CMD, t);
        bad = true;
      }
    }
    free(copy);
  }
  return bad ? -1 : 0;
}

/* ---- Sessions ------------------------------------------------------------------------------ */

static void arm_free(arm *a) {
  actx_timed_session_free(a->ts);
  free(a->samples);
  a->ts = NULL;
  a->samples = NULL;
}

static void arm_error(arm *a, const actx_ort_error *err) {
  a->ok = false;
  a->not_implemented = err->code == ORT_NOT_IMPLEMENTED;
  snprintf(a->error, sizeof a->error, "%s", err->message);
}

/* The arm's name in notes: "ORT alone", "ORT + actx", "ORT alone (null)", "ORT + NAME". */
static void arm_name(const ab_options *o, int k, char *buf, size_t size) {
  if (k == ARM_ORT)
    snprintf(buf, size, "ORT alone");
  else if (k == ARM_NULL)
    snprintf(buf, size, "ORT alone (null)");
  else
    snprintf(buf, size, "ORT + %s",
             k == ARM_ACTX ? o->actx_ep.label : o->peers[k - ARM_PEER].label);
}

/* Creates the arm's session: ORT alone (ep NULL) or ORT + ep. */
static int create_arm(const ab_options *o, const cell_input *in, long threads,
                      const actx_ab_ep *ep, arm *a) {
  actx_ab_session_config config;
  actx_ab_session_config_init(&config, ep, threads, o->spin);
  actx_ort_error err = {0};
  if (actx_timed_session_create(in->model, in->model_size, &config.opt, in->n_inputs, in->inputs,
                                &a->ts, &err) != 0) {
    arm_error(a, &err);
    return -1;
  }
  a->ok = true;
  return 0;
}

/* "actx", "CPU", or "actx 3/5, CPU 2/5" for the nodes of an arm; *on_ep: how many ran on
 * ep_name. */
static void summarise_assignment(const actx_ort_session *s, const char *ep_name, char *buf,
                                 size_t size, long *on_ep) {
  actx_ort_assignment *list = NULL;
  size_t n = 0;
  actx_ort_error err = {0};
  *on_ep = 0;
  if (actx_ort_session_assignments(s, &list, &n, &err) != 0) {
    snprintf(buf, size, "unknown");
    return;
  }
  const char *names[8];
  size_t counts[8], n_names = 0;
  for (size_t i = 0; i < n; i++) {
    const char *ep = strcmp(list[i].ep_name, ORT_CPU_EP) == 0 ? "CPU" : list[i].ep_name;
    if (strcmp(list[i].ep_name, ep_name) == 0)
      (*on_ep)++;
    size_t k = 0;
    while (k < n_names && strcmp(names[k], ep) != 0)
      k++;
    if (k == n_names && n_names < 8) {
      names[n_names] = ep;
      counts[n_names++] = 0;
    }
    if (k < n_names)
      counts[k]++;
  }
  if (n_names == 1) {
    snprintf(buf, size, "%s", names[0]);
  } else {
    int used = 0;
    buf[0] = '\0';
    for (size_t k = 0; k < n_names && used >= 0 && (size_t)used < size; k++)
      used += snprintf(buf + used, size - (size_t)used, "%s%s %zu/%zu", k ? ", " : "", names[k],
                       counts[k], n);
  }
  free(list); /* names pointed into it; buf holds the copy */
}

/* Arm b's outputs against ORT alone's, or against libactx when ORT alone could not run. */
static void check_outputs(cell *c, const cell_input *in, arm *b) {
  const arm *a = &c->arms[ARM_ORT];
  if (!b->ok)
    return;
  if (a->ok) {
    size_t n = actx_timed_session_output_count(a->ts);
    if (n != actx_timed_session_output_count(b->ts)) {
      snprintf(b->check, sizeof b->check, "output count differs");
      b->compared = true;
      b->cmp.differing = 1;
      return;
    }
    b->reference = "ORT";
    b->compared = true;
    memset(&b->cmp, 0, sizeof b->cmp);
    for (size_t i = 0; i < n; i++) {
      const actx_ort_tensor *x = actx_timed_session_output(a->ts, i);
      const actx_ort_tensor *y = actx_timed_session_output(b->ts, i);
      actx_compare one;
      if (x->elem_type != y->elem_type || x->count != y->count ||
          actx_compare_tensors((int32_t)x->elem_type, x->data, y->data, x->count, 0, 0, &one) !=
              0) {
        snprintf(b->check, sizeof b->check, "output %zu: type or size differs", i);
        b->cmp.differing += x->count > 0 ? x->count : 1;
        return;
      }
      b->cmp.count += one.count;
      b->cmp.differing += one.differing;
      b->cmp.nan_mismatch = b->cmp.nan_mismatch || one.nan_mismatch;
      if (one.max_ulp > b->cmp.max_ulp)
        b->cmp.max_ulp = one.max_ulp;
    }
    actx_compare_describe(&b->cmp, b->check, sizeof b->check);
    return;
  }
  if (in->reference == NULL || actx_timed_session_output_count(b->ts) != 1) {
    snprintf(b->check, sizeof b->check, "no reference");
    return;
  }
  const actx_ort_tensor *y = actx_timed_session_output(b->ts, 0);
  void *expected = malloc(y->bytes > 0 ? y->bytes : 1);
  char err[256];
  if (expected == NULL || y->count != in->reference->elements ||
      actx_ab_reference(in->reference, expected, err, sizeof err) != 0) {
    snprintf(b->check, sizeof b->check, "libactx reference failed");
    free(expected);
    return;
  }
  b->reference = "libactx";
  b->compared = true;
  actx_compare_tensors((int32_t)y->elem_type, expected, y->data, y->count, 0, 0, &b->cmp);
  char what[64];
  actx_compare_describe(&b->cmp, what, sizeof what);
  snprintf(b->check, sizeof b->check, "%s vs libactx", what);
  free(expected);
}

/* ---- Timing --------------------------------------------------------------------------------- */

/* Mean ns per Run over `runs` runs; negative on error (message in a->error). */
static double time_runs(arm *a, size_t runs) {
  actx_ort_error err = {0};
  double t0 = actx_now_ns();
  for (size_t k = 0; k < runs; k++) {
    if (actx_timed_session_run(a->ts, &err) != 0) {
      arm_error(a, &err);
      return -1;
    }
  }
  return (actx_now_ns() - t0) / (double)runs;
}

static void calibrate(const ab_options *o, arm *a) {
  double best = INFINITY;
  for (int i = 0; i < CALIBRATION_RUNS && a->ok; i++) {
    double t = time_runs(a, 1);
    if (t >= 0 && t < best)
      best = t;
  }
  if (!a->ok)
    return;
  double target = o->batch_ms * 1e6;
  double runs = best > 0 ? ceil(target / best) : MAX_BATCH;
  a->batch = runs < 1 ? 1 : runs > MAX_BATCH ? MAX_BATCH : (size_t)runs;
}

static void measure(const ab_options *o, cell *c) {
  arm_kind active[N_ARMS];
  size_t n_active = 0;
  for (int k = 0; k < N_ARMS; k++) {
    arm *a = &c->arms[k];
    if (!a->ok)
      continue;
    a->samples = calloc((size_t)o->reps, sizeof *a->samples);
    if (a->samples == NULL) {
      a->ok = false;
      snprintf(a->error, sizeof a->error, "out of memory");
      continue;
    }
    calibrate(o, a);
    if (a->ok)
      active[n_active++] = (arm_kind)k;
  }
  for (long w = 0; w < o->warmup; w++)
    for (size_t i = 0; i < n_active; i++)
      if (c->arms[active[i]].ok)
        time_runs(&c->arms[active[i]], c->arms[active[i]].batch);
  for (long r = 0; r < o->reps; r++) {
    for (size_t j = 0; j < n_active; j++) {
      /* alternate the order each rep (A B, B A, ...) so drift favours no arm */
      size_t i = r % 2 == 0 ? j : n_active - 1 - j;
      arm *a = &c->arms[active[i]];
      if (!a->ok)
        continue;
      double t = time_runs(a, a->batch);
      if (t >= 0)
        a->samples[a->n_samples++] = t;
    }
  }
  for (int k = 0; k < N_ARMS; k++)
    if (c->arms[k].ok)
      actx_stats_compute(c->arms[k].samples, c->arms[k].n_samples, &c->arms[k].stats);
  /* rep-by-rep ratios: the spread of the ratio itself */
  double *ratios = calloc((size_t)o->reps + 1, sizeof *ratios);
  const arm *a = &c->arms[ARM_ORT];
  for (int other = ARM_ACTX; ratios != NULL && other < N_ARMS; other++) {
    arm *b = &c->arms[other];
    if (!a->ok || !b->ok || a->n_samples != b->n_samples || a->n_samples == 0)
      continue;
    for (size_t r = 0; r < a->n_samples; r++)
      ratios[r] = a->samples[r] / b->samples[r];
    actx_stats_compute(ratios, a->n_samples, &b->ratio);
    b->has_ratio = true;
  }
  free(ratios);
}

static void summarise_arm(arm *a, const actx_ab_ep *ep, long *on_ep) {
  summarise_assignment(actx_timed_session_host(a->ts), ep->ep_name, a->ep_summary,
                       sizeof a->ep_summary, on_ep);
}

static void run_cell(const ab_options *o, const cell_input *in, cell *c) {
  create_arm(o, in, c->threads, NULL, &c->arms[ARM_ORT]);
  c->policy_used = o->policy;
  arm *b = &c->arms[ARM_ACTX];
  if (create_arm(o, in, c->threads, &o->actx_ep, b) == 0) {
    long on_actx = 0;
    summarise_arm(b, &o->actx_ep, &on_actx);
    if (on_actx == 0 && strcmp(o->policy, "auto") == 0) {
      /* auto declined: measure what actx would do, and say so */
      arm_free(b);
      c->auto_declined = true;
      c->policy_used = "all";
      actx_ab_ep all = o->actx_ep;
      actx_ab_ep_set_option(&all, "policy", "all");
      if (create_arm(o, in, c->threads, &all, b) == 0)
        summarise_arm(b, &all, &on_actx);
    }
  }
  if (o->null_control)
    create_arm(o, in, c->threads, NULL, &c->arms[ARM_NULL]);
  for (size_t p = 0; p < o->n_peers; p++) {
    long on_peer = 0;
    arm *peer = &c->arms[ARM_PEER + p];
    if (create_arm(o, in, c->threads, &o->peers[p], peer) == 0)
      summarise_arm(peer, &o->peers[p], &on_peer);
  }
  check_outputs(c, in, b);
  for (size_t p = 0; p < o->n_peers; p++)
    check_outputs(c, in, &c->arms[ARM_PEER + p]);
  measure(o, c);
  for (int k = 0; k < N_ARMS; k++) {
    actx_timed_session_free(c->arms[k].ts);
    c->arms[k].ts = NULL;
  }
}

/* ---- Output ----------------------------------------------------------------------------- */

static void format_us(double ns, char *buf, size_t size) {
  double us = ns / 1000.0;
  if (us >= 1000)
    snprintf(buf, size, "%.0f", us);
  else if (us >= 100)
    snprintf(buf, size, "%.1f", us);
  else if (us >= 10)
    snprintf(buf, size, "%.2f", us);
  else
    snprintf(buf, size, "%.3f", us);
}

static void format_spread(const actx_stats *s, char *buf, size_t size) {
  char lo[32], hi[32];
  format_us(s->p10, lo, sizeof lo);
  format_us(s->p90, hi, sizeof hi);
  snprintf(buf, size, "%s-%s", lo, hi);
}

static const char *arm_failure(const arm *a) {
  if (a->ts == NULL && a->error[0] == '\0')
    return "-";
  return a->not_implemented ? "not impl." : "error";
}

typedef struct results {
  cell *cells;
  size_t n, capacity;
} results;

static cell *new_cell(results *r) {
  if (r->n == r->capacity) {
    size_t capacity = r->capacity ? r->capacity * 2 : 128;
    cell *grown = realloc(r->cells, capacity * sizeof *grown);
    if (grown == NULL)
      return NULL;
    r->cells = grown;
    r->capacity = capacity;
  }
  cell *c = &r->cells[r->n++];
  memset(c, 0, sizeof *c);
  return c;
}

/* An arm's median time, or why there is none ("-": not created, "error", "not impl."). */
static void arm_time(const arm *a, char *buf, size_t size) {
  if (a->ok)
    format_us(a->stats.median, buf, size);
  else
    snprintf(buf, size, "%s", arm_failure(a));
}

static void arm_ratio(const arm *a, char *buf, size_t size) {
  if (a->has_ratio)
    snprintf(buf, size, "%.2fx", a->ratio.median);
  else
    snprintf(buf, size, "-");
}

/* Columns per peer in the table: time, ratio, check, EP. */
#define PEER_TABLE_COLUMNS 4

static actx_table *build_table(const ab_options *o, const results *r) {
  const char *headers[ACTX_TABLE_MAX_COLUMNS] = {
      "case",    "dtype",    "N",       "thr",      "ORT us", "p10-p90", "actx us",
      "p10-p90", "ORT/actx", "p10-p90", "ORT/ORT'", "check",  "EP"};
  enum { NULL_COLUMN = 10, OWN_COLUMNS = 13 };
  char peer_headers[ACTX_AB_MAX_PEERS][PEER_TABLE_COLUMNS][48];
  size_t all_cols = OWN_COLUMNS;
  for (size_t p = 0; p < o->n_peers && all_cols + PEER_TABLE_COLUMNS <= ACTX_TABLE_MAX_COLUMNS;
       p++) {
    const char *name = o->peers[p].label;
    snprintf(peer_headers[p][0], sizeof peer_headers[p][0], "%s us", name);
    snprintf(peer_headers[p][1], sizeof peer_headers[p][1], "ORT/%s", name);
    snprintf(peer_headers[p][2], sizeof peer_headers[p][2], "%s check", name);
    snprintf(peer_headers[p][3], sizeof peer_headers[p][3], "%s EP", name);
    for (int k = 0; k < PEER_TABLE_COLUMNS; k++)
      headers[all_cols++] = peer_headers[p][k];
  }
  const size_t n_peer_groups = (all_cols - OWN_COLUMNS) / PEER_TABLE_COLUMNS;
  /* without --null the null-control column is left out */
  const size_t skip = o->null_control ? all_cols : NULL_COLUMN;
  const char *kept[ACTX_TABLE_MAX_COLUMNS];
  size_t n_cols = 0;
  for (size_t k = 0; k < all_cols; k++)
    if (k != skip)
      kept[n_cols++] = headers[k];
  actx_table *t = actx_table_create(n_cols, kept);
  if (t == NULL)
    return NULL;
  const char *prev_label = "";
  for (size_t i = 0; i < r->n; i++) {
    const cell *c = &r->cells[i];
    if (i > 0 && strcmp(prev_label, c->label) != 0)
      actx_table_add_break(t);
    prev_label = c->label;
    char n_buf[32], thr[16], a_us[32], a_sp[80], b_us[32], b_sp[80], ratio[32], ratio_sp[48],
        null_ratio[32], ep[160];
    char peer_cells[ACTX_AB_MAX_PEERS][PEER_TABLE_COLUMNS][160];
    snprintf(n_buf, sizeof n_buf, "%zu", c->elements);
    snprintf(thr, sizeof thr, "%ld", c->threads);
    const arm *a = &c->arms[ARM_ORT], *b = &c->arms[ARM_ACTX];
    arm_time(a, a_us, sizeof a_us);
    arm_time(b, b_us, sizeof b_us);
    if (a->ok)
      format_spread(&a->stats, a_sp, sizeof a_sp);
    else
      snprintf(a_sp, sizeof a_sp, "-");
    if (b->ok)
      format_spread(&b->stats, b_sp, sizeof b_sp);
    else
      snprintf(b_sp, sizeof b_sp, "-");
    arm_ratio(b, ratio, sizeof ratio);
    if (b->has_ratio)
      snprintf(ratio_sp, sizeof ratio_sp, "%.2f-%.2f", b->ratio.p10, b->ratio.p90);
    else
      snprintf(ratio_sp, sizeof ratio_sp, "-");
    arm_ratio(&c->arms[ARM_NULL], null_ratio, sizeof null_ratio);
    snprintf(ep, sizeof ep, "%s%s", b->ok ? b->ep_summary : "-",
             c->auto_declined ? " [all]" : "");
    const char *row[ACTX_TABLE_MAX_COLUMNS] = {
        c->label, c->dtype, n_buf, thr, a_us, a_sp, b_us, b_sp, ratio, ratio_sp, null_ratio,
        b->check[0] ? b->check : "-", ep};
    for (size_t p = 0; p < n_peer_groups; p++) {
      const arm *x = &c->arms[ARM_PEER + p];
      arm_time(x, peer_cells[p][0], sizeof peer_cells[p][0]);
      arm_ratio(x, peer_cells[p][1], sizeof peer_cells[p][1]);
      snprintf(peer_cells[p][2], sizeof peer_cells[p][2], "%s", x->check[0] ? x->check : "-");
      snprintf(peer_cells[p][3], sizeof peer_cells[p][3], "%s", x->ok ? x->ep_summary : "-");
      for (int k = 0; k < PEER_TABLE_COLUMNS; k++)
        row[OWN_COLUMNS + p * PEER_TABLE_COLUMNS + (size_t)k] = peer_cells[p][k];
    }
    const char *cells[ACTX_TABLE_MAX_COLUMNS];
    size_t n = 0;
    for (size_t k = 0; k < all_cols; k++)
      if (k != skip)
        cells[n++] = row[k];
    actx_table_add_row(t, cells);
  }
  return t;
}

/* The CSV columns of each peer, after the others, each named <NAME>_<column>. */
static const char *const k_peer_csv_columns[] = {
    "ep",        "median_ns",    "p10_ns",    "p90_ns",    "batch",
    "ratio",     "ratio_p10",    "ratio_p90", "reference", "differing",
    "max_ulp",   "nan_mismatch", "ep_assignment", "error"};
#define N_PEER_CSV_COLUMNS (sizeof k_peer_csv_columns / sizeof *k_peer_csv_columns)

/* An arm's time columns (median, p10, p90 in ns; batch) into v[0..4), blank when it did not
 * run; and its ratio columns (median, p10, p90) into v[0..3), blank without a ratio. */
static void arm_time_cells(const arm *x, char (*v)[48]) {
  if (!x->ok) return;
  snprintf(v[0], 48, "%.1f", x->stats.median);
  snprintf(v[1], 48, "%.1f", x->stats.p10);
  snprintf(v[2], 48, "%.1f", x->stats.p90);
  snprintf(v[3], 48, "%zu", x->batch);
}
static void arm_ratio_cells(const arm *x, char (*v)[48]) {
  if (!x->has_ratio) return;
  snprintf(v[0], 48, "%.4f", x->ratio.median);
  snprintf(v[1], 48, "%.4f", x->ratio.p10);
  snprintf(v[2], 48, "%.4f", x->ratio.p90);
}
/* The comparison columns (differing, max ulp, NaN mismatch) into v[0..3). */
static void arm_check_cells(const arm *x, char (*v)[48]) {
  if (!x->compared) return;
  snprintf(v[0], 48, "%zu", x->cmp.differing);
  snprintf(v[1], 48, "%llu", (unsigned long long)x->cmp.max_ulp);
  snprintf(v[2], 48, "%d", x->cmp.nan_mismatch ? 1 : 0);
}

/* A peer arm's CSV cells, in k_peer_csv_columns' order (v holds the numbers). */
static void peer_csv_cells(const actx_ab_ep *ep, const arm *x, char (*v)[48],
                           const char **cells) {
  for (size_t k = 0; k < N_PEER_CSV_COLUMNS; k++)
    v[k][0] = '\0';
  arm_time_cells(x, &v[1]);
  arm_ratio_cells(x, &v[5]);
  arm_check_cells(x, &v[9]);
  for (size_t k = 0; k < N_PEER_CSV_COLUMNS; k++)
    cells[k] = v[k];
  cells[0] = ep->ep_name;
  cells[8] = x->reference != NULL ? x->reference : "";
  cells[12] = x->ok ? x->ep_summary : "";
  cells[13] = x->ok ? "" : x->error;
}

static void write_csv(FILE *f, const ab_options *o, const results *r) {
  const char *own_headers[] = {"case", "dtype", "elements", "threads", "policy", "auto_declined",
                               "ort_median_ns", "ort_p10_ns", "ort_p90_ns", "ort_batch",
                               "actx_median_ns", "actx_p10_ns", "actx_p90_ns", "actx_batch",
                               "ratio", "ratio_p10", "ratio_p90", "null_median_ns", "null_ratio",
                               "null_ratio_p10", "null_ratio_p90", "reps", "reference",
                               "differing", "max_ulp", "nan_mismatch", "ep_assignment",
                               "ort_error", "actx_error"};
  enum { OWN = sizeof own_headers / sizeof *own_headers };
  enum { MAX_COLUMNS = OWN + ACTX_AB_MAX_PEERS * N_PEER_CSV_COLUMNS };
  const char *headers[MAX_COLUMNS];
  char peer_headers[ACTX_AB_MAX_PEERS][N_PEER_CSV_COLUMNS][48];
  size_t n_cols = 0;
  for (size_t k = 0; k < OWN; k++)
    headers[n_cols++] = own_headers[k];
  for (size_t p = 0; p < o->n_peers; p++)
    for (size_t k = 0; k < N_PEER_CSV_COLUMNS; k++) {
      snprintf(peer_headers[p][k], sizeof peer_headers[p][k], "%s_%s", o->peers[p].label,
               k_peer_csv_columns[k]);
      headers[n_cols++] = peer_headers[p][k];
    }
  actx_csv_write_row(f, n_cols, headers);
  for (size_t i = 0; i < r->n; i++) {
    const cell *c = &r->cells[i];
    const arm *a = &c->arms[ARM_ORT], *b = &c->arms[ARM_ACTX], *z = &c->arms[ARM_NULL];
    char v[21][48];
    memset(v, 0, sizeof v);
    snprintf(v[0], 48, "%zu", c->elements);
    snprintf(v[1], 48, "%ld", c->threads);
    arm_time_cells(a, &v[2]);
    arm_time_cells(b, &v[6]);
    arm_ratio_cells(b, &v[10]);
    if (z->ok)
      snprintf(v[13], 48, "%.1f", z->stats.median);
    arm_ratio_cells(z, &v[14]);
    snprintf(v[17], 48, "%ld", o->reps);
    arm_check_cells(b, &v[18]);
    const char *row[MAX_COLUMNS] = {c->label, c->dtype, v[0], v[1], c->policy_used,
                         c->auto_declined ? "1" : "0", v[2], v[3], v[4], v[5], v[6], v[7], v[8],
                         v[9], v[10], v[11], v[12], v[13], v[14], v[15], v[16], v[17],
                         b->reference != NULL ? b->reference : "", v[18], v[19], v[20],
                         b->ok ? b->ep_summary : "", a->ok ? "" : a->error,
                         b->ok ? "" : b->error};
    char peer_v[ACTX_AB_MAX_PEERS][N_PEER_CSV_COLUMNS][48];
    for (size_t p = 0; p < o->n_peers; p++)
      peer_csv_cells(&o->peers[p], &c->arms[ARM_PEER + p], peer_v[p],
                     &row[OWN + p * N_PEER_CSV_COLUMNS]);
    actx_csv_write_row(f, n_cols, row);
  }
}

/* The geometric mean of ORT alone / arm k over the cells of one configuration (dtype NULL:
 * the user's models, whose dtype column is none of ours); *worst: the ratio furthest from 1. */
static size_t geometric_mean(const results *r, int k, const char *dtype, long threads,
                             double *mean, double *worst) {
  double log_sum = 0, worst_log = 0;
  size_t n = 0;
  for (size_t i = 0; i < r->n; i++) {
    const cell *c = &r->cells[i];
    bool match = dtype != NULL ? strcmp(c->dtype, dtype) == 0 : true;
    for (size_t d = 0; dtype == NULL && d < N_DTYPES; d++)
      match = match && strcmp(c->dtype, actx_dtype_name(k_dtypes[d])) != 0;
    if (!match || c->threads != threads || !c->arms[k].has_ratio)
      continue;
    const double l = log(c->arms[k].ratio.median);
    log_sum += l;
    if (fabs(l) > fabs(worst_log))
      worst_log = l;
    n++;
  }
  *mean = n > 0 ? exp(log_sum / (double)n) : 0;
  *worst = exp(worst_log);
  return n;
}

/* Geometric means of the ratio per (dtype, threads): the one-line answer per configuration. */
static void print_summary(FILE *out, const ab_options *o, const results *r) {
  fprintf(out, "\nGeometric mean of ORT/actx (> 1: actx faster) over the cells measured:\n");
  for (size_t d = 0; d < N_DTYPES + 1; d++) {
    const char *dtype = d < N_DTYPES ? actx_dtype_name(k_dtypes[d]) : NULL;
    for (size_t t = 0; t < o->n_threads; t++) {
      double mean = 0, worst = 0;
      const size_t n = geometric_mean(r, ARM_ACTX, dtype, o->threads[t], &mean, &worst);
      if (n == 0)
        continue;
      fprintf(out, "  %-6s %ld thread%s: %.2fx over %zu cells", dtype != NULL ? dtype : "models",
              o->threads[t], o->threads[t] == 1 ? " " : "s", mean, n);
      if (geometric_mean(r, ARM_NULL, dtype, o->threads[t], &mean, &worst) > 0)
        fprintf(out, "   null control ORT/ORT': %.2fx (worst %.2fx)", mean, worst);
      for (size_t p = 0; p < o->n_peers; p++) {
        const size_t n_peer =
            geometric_mean(r, ARM_PEER + (int)p, dtype, o->threads[t], &mean, &worst);
        if (n_peer > 0)
          fprintf(out, "   ORT/%s: %.2fx over %zu", o->peers[p].label, mean, n_peer);
      }
      fputc('\n', out);
    }
  }
}

static void print_notes(FILE *out, const ab_options *o, const results *r) {
  size_t not_impl = 0, declined = 0, mismatched = 0;
  const cell *example = NULL;
  for (size_t i = 0; i < r->n; i++) {
    const cell *c = &r->cells[i];
    if (c->auto_declined)
      declined++;
    if (c->arms[ARM_ACTX].compared && c->arms[ARM_ACTX].cmp.differing > 0)
      mismatched++;
    for (int k = 0; k < N_ARMS; k++) {
      const arm *a = &c->arms[k];
      if (a->ok || a->error[0] == '\0')
        continue;
      if (a->not_implemented && (k == ARM_ORT || k == ARM_NULL)) {
        if (k == ARM_ORT && not_impl++ == 0)
          example = c;
        continue; /* the null arm fails as the ORT arm does: counted once */
      }
      char name[64];
      arm_name(o, k, name, sizeof name);
      fprintf(out, "  %s %s N=%zu %ld thr: %s: %s\n", c->label, c->dtype, c->elements,
              c->threads, name, a->error);
    }
  }
  if (not_impl > 0)
    fprintf(out, "  ORT alone: not implemented in %zu cells (e.g. %s %s: %s); the actx arm's "
                 "time is reported alone and its output checked against libactx\n",
            not_impl, example->label, example->dtype, example->arms[ARM_ORT].error);
  if (declined > 0)
    fprintf(out, "  [all]: in %zu cells the EP's auto policy left the node(s) to ORT; they were "
                 "measured with policy=all to show what actx would do\n",
            declined);
  if (mismatched > 0) {
    fprintf(out, "  outputs differ from the reference in %zu cells (", mismatched);
    for (size_t d = 0, shown = 0; d < N_DTYPES; d++) {
      size_t k = 0;
      for (size_t i = 0; i < r->n; i++)
        k += r->cells[i].arms[ARM_ACTX].compared && r->cells[i].arms[ARM_ACTX].cmp.differing > 0 &&
             strcmp(r->cells[i].dtype, actx_dtype_name(k_dtypes[d])) == 0;
      if (k > 0)
        fprintf(out, "%s%s: %zu", shown++ ? ", " : "", actx_dtype_name(k_dtypes[d]), k);
    }
    fprintf(out, "); see the check column\n");
  }
}

static int write_chart(const ab_options *o, const results *r, const char *png_path, char *err,
                       size_t err_size) {
  size_t n_series = 0, capacity = 64;
  actx_chart_series *series = calloc(capacity, sizeof *series);
  if (series == NULL) {
    snprintf(err, err_size, "out of memory");
    return -1;
  }
  for (size_t i = 0; i < r->n; i++) {
    const cell *c = &r->cells[i];
    if (!c->arms[ARM_ACTX].has_ratio)
      continue;
    char label[64];
    snprintf(label, sizeof label, "%s, %ld thread%s", c->dtype, c->threads,
             c->threads == 1 ? "" : "s");
    size_t s = 0;
    while (s < n_series &&
           (strcmp(series[s].panel, c->label) != 0 || strcmp(series[s].label, label) != 0))
      s++;
    if (s == n_series) {
      if (n_series == capacity) {
        actx_chart_series *grown = realloc(series, 2 * capacity * sizeof *grown);
        if (grown == NULL)
          break;
        series = grown;
        capacity *= 2;
      }
      memset(&series[s], 0, sizeof series[s]);
      snprintf(series[s].panel, sizeof series[s].panel, "%s", c->label);
      snprintf(series[s].label, sizeof series[s].label, "%s", label);
      n_series++;
    }
    if (series[s].n < ACTX_CHART_MAX_POINTS) {
      series[s].x[series[s].n] = (double)c->elements;
      series[s].y[series[s].n] = c->arms[ARM_ACTX].ratio.median;
      series[s].n++;
    }
  }
  char title[160];
  snprintf(title, sizeof title, "ORT alone / ORT + actx: Run() time ratio (> 1: actx faster), "
           "median of %ld rep-by-rep ratios", o->reps);
  actx_chart chart = {.title = title, .x_label = "elements", .y_label = "ORT / actx",
                      .log_x = true, .log_y = true, .has_reference_y = true, .reference_y = 1.0};
  int rc = actx_chart_write(png_path, &chart, series, n_series, err, err_size);
  free(series);
  return rc;
}

/* The CPU's name from /proc/cpuinfo, for the header. */
static void cpu_name(char *buf, size_t size) {
  snprintf(buf, size, "unknown CPU");
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (f == NULL)
    return;
  char line[512];
  while (fgets(line, sizeof line, f) != NULL) {
    if (strncmp(line, "model name", 10) == 0) {
      const char *colon = strchr(line, ':');
      if (colon != NULL) {
        snprintf(buf, size, "%s", colon + 2);
        buf[strcspn(buf, "\n")] = '\0';
      }
      break;
    }
  }
  fclose(f);
}

static void load_average(char *buf, size_t size) {
  snprintf(buf, size, "?");
  FILE *f = fopen("/proc/loadavg", "r");
  if (f == NULL)
    return;
  double one = 0;
  if (fscanf(f, "%lf", &one) == 1)
    snprintf(buf, size, "%.2f", one);
  fclose(f);
}

static void print_header(FILE *out, const ab_options *o, const char *started, const char *load) {
  const OrtApiBase *base = OrtGetApiBase();
  char cpu[256];
  cpu_name(cpu, sizeof cpu);
  fprintf(out, "actx ab — ORT %s alone vs ORT + actx %s (EP %s)\n",
          base != NULL ? base->GetVersionString() : "?", actx_version_string(), o->ep_lib);
  fprintf(out, "%s; %ld cores online; libactx ISA %s, ORT rule %s; started %s, load average %s\n",
          cpu, sysconf(_SC_NPROCESSORS_ONLN), actx_isa_name(actx_get_isa()),
          actx_ort_rule_name(actx_get_ort_rule()), started, load);
  if (!o->creation_only && !o->models_only)
    fprintf(out, "Run() time per call in microseconds: median and p10-p90 of %ld reps (each a "
                 "batch of ~%.1f ms), after %ld warm-up reps; arms interleaved, order "
                 "alternating; policy %s; seed %llu; intra-op threads %s between runs\n",
            o->reps, o->batch_ms, o->warmup, o->policy, (unsigned long long)o->seed,
            o->spin ? "spin" : "sleep");
  fputc('\n', out);
  for (size_t p = 0; p < o->n_peers; p++) {
    const actx_ab_ep *peer = &o->peers[p];
    fprintf(out, "Peer %s: EP %s (its CPU device) from %s, ", peer->label, peer->ep_name,
            peer->path);
    if (peer->n_options == 0)
      fprintf(out, "no provider options");
    for (size_t k = 0; k < peer->n_options; k++)
      fprintf(out, "%s%s=%s", k ? ", " : "provider options ", peer->keys[k], peer->values[k]);
    fprintf(out, "\n");
  }
  if (o->n_peers > 0)
    fputc('\n', out);
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

static int run_builtin_cases(const ab_options *o, results *r, progress *p) {
  size_t n_cases = 0;
  const actx_ab_case *cases = actx_ab_cases(&n_cases);
  for (size_t ci = 0; ci < n_cases; ci++) {
    const actx_ab_case *c = &cases[ci];
    if (!actx_list_contains(o->ops, c->name))
      continue;
    const long *sizes;
    size_t n_sizes;
    case_sizes(o, c, &sizes, &n_sizes);
    for (size_t d = 0; d < N_DTYPES; d++) {
      const char *dtype = actx_dtype_name(k_dtypes[d]);
      if (!case_takes_dtype(o, c, k_dtypes[d]))
        continue;
      for (size_t s = 0; s < n_sizes; s++) {
        actx_ab_model m;
        char err[512];
        char seed_name[128];
        snprintf(seed_name, sizeof seed_name, "%s/%s/%ld", c->name, dtype, sizes[s]);
        if (c->build(c, k_dtypes[d], (size_t)sizes[s], actx_hash_string(o->seed, seed_name),
                     &m, err, sizeof err) != 0) {
          fprintf(stderr, "actx %s: %s\n", CMD, err);
          return -1;
        }
        cell_input in = {m.bytes, m.size, m.n_inputs, m.inputs, m.has_reference ? &m : NULL};
        for (size_t t = 0; t < o->n_threads; t++) {
          progress_show(p, c->name, dtype, m.elements, o->threads[t]);
          cell *cl = new_cell(r);
          if (cl == NULL) {
            actx_ab_model_free(&m);
            fprintf(stderr, "actx %s: out of memory\n", CMD);
            return -1;
          }
          snprintf(cl->label, sizeof cl->label, "%s", c->name);
          snprintf(cl->dtype, sizeof cl->dtype, "%s", dtype);
          cl->elements = m.elements;
          cl->threads = o->threads[t];
          run_cell(o, &in, cl);
          for (int k = 0; k < N_ARMS; k++) {
            free(cl->arms[k].samples);
            cl->arms[k].samples = NULL;
          }
        }
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

static int run_model_files(const ab_options *o, results *r, progress *p) {
  for (size_t mi = 0; mi < o->n_models; mi++) {
    const char *path = o->models[mi];
    uint8_t *bytes = NULL;
    size_t size = 0;
    char err[1024];
    if (actx_read_file(path, &bytes, &size, err, sizeof err) != 0) {
      fprintf(stderr, "actx %s: %s\n", CMD, err);
      return ACTX_EXIT_USAGE;
    }
    actx_model_info info;
    if (actx_model_info_parse(bytes, size, &info, err, sizeof err) != 0) {
      fprintf(stderr, "actx %s: %s: %s\n", CMD, path, err);
      free(bytes);
      return ACTX_EXIT_FAILURE;
    }
    actx_rng rng;
    actx_rng_seed(&rng, actx_hash_string(o->seed, path));
    actx_model_inputs inputs;
    if (actx_model_inputs_load(&info, o->input_args, o->n_input_args, o->shape_args,
                               o->n_shape_args, &rng, &inputs, err, sizeof err) != 0) {
      fprintf(stderr, "actx %s: %s: %s\n", CMD, path, err);
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
      fprintf(stderr, "actx %s: %s: input %s = %s (%s)\n", CMD, base, inputs.names[i], shape,
              inputs.sources[i]);
    }
    cell_input in = {bytes, size, inputs.n, inputs.tensors, NULL};
    for (size_t t = 0; t < o->n_threads; t++) {
      const int32_t elem0 = inputs.n > 0 ? (int32_t)inputs.tensors[0].elem_type : 0;
      progress_show(p, base, dtype_label(elem0), inputs.n > 0 ? inputs.tensors[0].count : 0,
                    o->threads[t]);
      cell *cl = new_cell(r);
      if (cl == NULL)
        break;
      snprintf(cl->label, sizeof cl->label, "%s", base);
      snprintf(cl->dtype, sizeof cl->dtype, "%s", dtype_label(elem0));
      cl->elements = inputs.n > 0 ? inputs.tensors[0].count : 0;
      cl->threads = o->threads[t];
      run_cell(o, &in, cl);
      for (int k = 0; k < N_ARMS; k++) {
        free(cl->arms[k].samples);
        cl->arms[k].samples = NULL;
      }
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
      for (size_t d = 0; d < N_DTYPES; d++)
        if (case_takes_dtype(o, &cases[c], k_dtypes[d])) {
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
    fprintf(stderr, "actx %s: %s\n", CMD, err);
    return ACTX_EXIT_USAGE;
  }
  actx_ab_ep_actx(&o.actx_ep, o.ep_lib, o.policy);
  if (actx_make_dirs(o.out_dir) != 0) {
    fprintf(stderr, "actx %s: cannot create the results directory '%s'\n", CMD, o.out_dir);
    return ACTX_EXIT_USAGE;
  }
  if (actx_quiet_ort(o.verbose, CMD) != 0)
    return ACTX_EXIT_FAILURE;
  /* A peer that cannot be loaded is a bad command line: found before any cell is measured. */
  for (size_t p = 0; p < o.n_peers; p++)
    if (actx_ab_peer_load(&o.peers[p], err, sizeof err) != 0) {
      fprintf(stderr, "actx %s: %s\n", CMD, err);
      return ACTX_EXIT_USAGE;
    }
  char started[64], load_before[16], load_after[16];
  actx_format_timestamp(started, sizeof started);
  load_average(load_before, sizeof load_before);
  const bool tty = isatty(STDERR_FILENO) != 0;

  actx_ab_creation *creation = NULL;
  if (!o.no_creation && o.n_models == 0 && !o.models_only) {
    const actx_ab_creation_config config = {
        .nodes = o.creation_nodes, .n_sizes = o.n_creation_nodes, .reps = o.creation_reps,
        .actx_path = o.ep_lib, .peers = o.peers, .n_peers = o.n_peers, .tty = tty};
    creation = actx_ab_creation_run(&config);
    if (creation == NULL) {
      fprintf(stderr, "actx %s: out of memory\n", CMD);
      return ACTX_EXIT_FAILURE;
    }
  }

  results r = {0};
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
      fprintf(stderr, "actx %s: %s\n", CMD, err);
      free(r.cells);
      actx_ab_creation_free(creation);
      return o.models_only ? ACTX_EXIT_USAGE : ACTX_EXIT_FAILURE;
    }
  }
  load_average(load_after, sizeof load_after);
  double seconds = (actx_now_ns() - p.started_ns) / 1e9;

  char csv_path[4200], creation_csv_path[4200], models_csv_path[4200], txt_path[4200],
      png_path[4200];
  snprintf(csv_path, sizeof csv_path, "%s/ab.csv", o.out_dir);
  snprintf(creation_csv_path, sizeof creation_csv_path, "%s/ab-creation.csv", o.out_dir);
  snprintf(models_csv_path, sizeof models_csv_path, "%s/ab-models.csv", o.out_dir);
  snprintf(txt_path, sizeof txt_path, "%s/ab.txt", o.out_dir);
  snprintf(png_path, sizeof png_path, "%s/ab.png", o.out_dir);

  actx_table *table = run_table ? build_table(&o, &r) : NULL;
  FILE *txt = fopen(txt_path, "w");
  FILE *outs[2] = {stdout, txt};
  for (int k = 0; k < 2; k++) {
    FILE *out = outs[k];
    if (out == NULL)
      continue;
    print_header(out, &o, started, load_before);
    if (run_table) {
      fprintf(out, "==== Run() time ====\n");
      if (table != NULL)
        actx_table_print(table, out);
      print_summary(out, &o, &r);
      fprintf(out, "\nNotes:\n");
      fprintf(out, "  check: the actx arm's outputs against ORT alone's, bit for bit (ulp: units "
                   "in the last place)\n");
      fprintf(out, "  EP: where the actx arm ran its node(s) (CPU: ORT's own kernels)\n");
      if (o.n_peers > 0)
        fprintf(out, "  NAME us, ORT/NAME, NAME check, NAME EP: the same for each peer arm; "
                     "--strict looks at actx's check only\n");
      print_notes(out, &o, &r);
      fprintf(out, "  %zu cells in %.0f s; load average %s before, %s after\n", r.n, seconds,
              load_before, load_after);
    }
    if (creation != NULL)
      actx_ab_creation_print(creation, out);
    if (models != NULL)
      actx_ab_models_print(models, out);
  }
  if (txt != NULL)
    fclose(txt);
  else
    fprintf(stderr, "actx %s: cannot write %s\n", CMD, txt_path);
  actx_table_free(table);

  printf("\nTable: %s\n", txt_path);
  if (run_table) {
    FILE *csv = fopen(csv_path, "w");
    if (csv == NULL) {
      fprintf(stderr, "actx %s: cannot write %s\n", CMD, csv_path);
      rc = ACTX_EXIT_FAILURE;
    } else {
      write_csv(csv, &o, &r);
      fclose(csv);
      printf("CSV:   %s\n", csv_path);
    }
  }
  if (creation != NULL) {
    FILE *csv = fopen(creation_csv_path, "w");
    if (csv == NULL) {
      fprintf(stderr, "actx %s: cannot write %s\n", CMD, creation_csv_path);
      rc = ACTX_EXIT_FAILURE;
    } else {
      actx_ab_creation_write_csv(creation, csv);
      fclose(csv);
      printf("CSV:   %s (session creation)\n", creation_csv_path);
    }
  }
  if (models != NULL) {
    FILE *csv = fopen(models_csv_path, "w");
    if (csv == NULL) {
      fprintf(stderr, "actx %s: cannot write %s\n", CMD, models_csv_path);
      rc = ACTX_EXIT_FAILURE;
    } else {
      actx_ab_models_write_csv(models, csv);
      fclose(csv);
      printf("CSV:   %s (real models)\n", models_csv_path);
    }
  }
  if (!o.no_chart && o.n_models == 0 && run_table) {
    if (write_chart(&o, &r, png_path, err, sizeof err) == 0)
      printf("Chart: %s\n", png_path);
    else
      printf("Chart: not drawn: %s\n", err);
  }
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
