/* run.c — `actx run`: one model, one run. Prints which EP ran each node, the run's latency and
 * the outputs (shape and first values), and writes each output's raw bytes to --out.
 *
 * Exit codes: 0 ok; 1 ORT refused the model or failed to run it; 2 the command line was wrong
 * (unknown option, unreadable path, missing or misshapen input). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "compare.h"
#include "host.h"
#include "inputs.h"
#include "model.h"
#include "rng.h"
#include "stats.h"

#define CMD "run"
#define EP_NAME "actx"
#define MAX_INPUT_ARGS 32
/* Output values printed per output. */
#define VALUES_SHOWN 8

typedef struct run_options {
  const char *model;
  bool use_ep;
  const char *policy;
  long threads;
  const char *ep_lib_arg;
  const char *out_dir;
  bool random;
  uint64_t seed;
  bool verbose;
  actx_input_arg input_args[MAX_INPUT_ARGS];
  size_t n_input_args;
  actx_shape_arg shape_args[MAX_INPUT_ARGS];
  size_t n_shape_args;
} run_options;

static void usage(FILE *out) {
  fprintf(out,
          "usage: actx run MODEL.onnx [options]\n"
          "\n"
          "Runs the model once and prints node -> EP assignment, latency and outputs.\n"
          "\n"
          "  --ep actx|none        run with the actx EP (default) or ORT alone\n"
          "  --policy auto|all     the EP's policy (default auto)\n"
          "  --threads N           intra-op threads (default: ORT's choice)\n"
          "  --in NAME=FILE        an input: .pb (TensorProto) or raw little-endian elements\n"
          "  --shape NAME=AxBxC    the shape of a raw or random input\n"
          "  --random              inputs not given are random (seeded) instead of an error\n"
          "  --seed N              seed of --random (default 1)\n"
          "  --out DIR             write each output's raw bytes to DIR/<output name>.bin\n"
          "  --ep-lib PATH         libactx_ep.so (default: ../lib/ beside this program)\n"
          "  --verbose             keep ORT's warnings\n"
          "\n"
          "Exit codes: 0 ok, 1 ORT error, 2 usage (bad option, path, or input).\n");
}

static int parse_options(int argc, char **argv, run_options *o) {
  memset(o, 0, sizeof *o);
  o->use_ep = true;
  o->policy = "auto";
  o->seed = 1;
  bool bad = false;
  for (int i = 1; i < argc && !bad; i++) {
    const char *a = argv[i], *v = NULL;
    char err[256];
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      usage(stdout);
      exit(ACTX_EXIT_OK);
    } else if (strcmp(a, "--random") == 0) {
      o->random = true;
    } else if (strcmp(a, "--verbose") == 0) {
      o->verbose = true;
    } else if (actx_arg_value(argc, argv, &i, "--ep", &v, &bad, CMD)) {
      if (!bad && strcmp(v, "actx") != 0 && strcmp(v, "none") != 0) {
        fprintf(stderr, "actx %s: --ep '%s': expected actx or none\n", CMD, v);
        bad = true;
      }
      o->use_ep = !bad && strcmp(v, "actx") == 0;
    } else if (actx_arg_value(argc, argv, &i, "--policy", &v, &bad, CMD)) {
      if (!bad && strcmp(v, "auto") != 0 && strcmp(v, "all") != 0 && strcmp(v, "none") != 0) {
        fprintf(stderr, "actx %s: --policy '%s': expected auto, all or none\n", CMD, v);
        bad = true;
      }
      o->policy = v;
    } else if (actx_arg_value(argc, argv, &i, "--threads", &v, &bad, CMD)) {
      bad = bad || actx_parse_long(CMD, "--threads", v, 1, 256, &o->threads) != 0;
    } else if (actx_arg_value(argc, argv, &i, "--seed", &v, &bad, CMD)) {
      long seed = 0;
      bad = bad || actx_parse_long(CMD, "--seed", v, 0, 0x7fffffffL, &seed) != 0;
      o->seed = (uint64_t)seed;
    } else if (actx_arg_value(argc, argv, &i, "--out", &v, &bad, CMD)) {
      o->out_dir = v;
    } else if (actx_arg_value(argc, argv, &i, "--ep-lib", &v, &bad, CMD)) {
      o->ep_lib_arg = v;
    } else if (actx_arg_value(argc, argv, &i, "--in", &v, &bad, CMD)) {
      if (bad)
        break;
      if (o->n_input_args == MAX_INPUT_ARGS) {
        fprintf(stderr, "actx %s: more than %d --in options\n", CMD, MAX_INPUT_ARGS);
        bad = true;
      } else if (actx_parse_input_arg(v, &o->input_args[o->n_input_args++], err, sizeof err)) {
        fprintf(stderr, "actx %s: %s\n", CMD, err);
        bad = true;
      }
    } else if (actx_arg_value(argc, argv, &i, "--shape", &v, &bad, CMD)) {
      if (bad)
        break;
      if (o->n_shape_args == MAX_INPUT_ARGS) {
        fprintf(stderr, "actx %s: more than %d --shape options\n", CMD, MAX_INPUT_ARGS);
        bad = true;
      } else if (actx_parse_shape_arg(v, &o->shape_args[o->n_shape_args++], err, sizeof err)) {
        fprintf(stderr, "actx %s: %s\n", CMD, err);
        bad = true;
      }
    } else if (a[0] == '-') {
      fprintf(stderr, "actx %s: unknown option '%s' (see actx run --help)\n", CMD, a);
      bad = true;
    } else if (o->model != NULL) {
      fprintf(stderr, "actx %s: one model at a time ('%s' and '%s')\n", CMD, o->model, a);
      bad = true;
    } else {
      o->model = a;
    }
  }
  if (!bad && o->model == NULL) {
    fprintf(stderr, "actx %s: no model given\n", CMD);
    usage(stderr);
    bad = true;
  }
  return bad ? -1 : 0;
}

/* The session's inputs in the form inputs.c takes. */
static int session_inputs(const actx_ort_session *s, actx_model_info *info, char *err,
                          size_t err_size) {
  memset(info, 0, sizeof *info);
  info->n_inputs = actx_ort_session_input_count(s);
  info->inputs = calloc(info->n_inputs + 1, sizeof *info->inputs);
  if (info->inputs == NULL) {
    snprintf(err, err_size, "out of memory");
    return -1;
  }
  for (size_t i = 0; i < info->n_inputs; i++) {
    actx_ort_tensor t;
    actx_ort_error oe = {0};
    if (actx_ort_session_input_info(s, i, &t, &oe) != 0) {
      snprintf(err, err_size, "%s", oe.message);
      return -1;
    }
    actx_model_value *v = &info->inputs[i];
    snprintf(v->name, sizeof v->name, "%s", t.name);
    v->elem_type = (int32_t)t.elem_type;
    v->rank = t.rank;
    memcpy(v->dims, t.dims, t.rank * sizeof *v->dims);
  }
  return 0;
}

static void print_values(const actx_ort_tensor *t) {
  size_t n = t->count < VALUES_SHOWN ? t->count : VALUES_SHOWN;
  printf("    values:");
  for (size_t i = 0; i < n; i++)
    printf(" %.9g", actx_element_as_double((int32_t)t->elem_type, t->data, i));
  if (t->count > n)
    printf(" ... (%zu more)", t->count - n);
  printf("\n");
}

/* An output name made safe as a file name. */
static void file_name_for(const char *name, char *buf, size_t size) {
  size_t j = 0;
  for (size_t i = 0; name[i] != '\0' && j + 5 < size; i++) {
    char ch = name[i];
    bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
              ch == '_' || ch == '-' || ch == '.';
    buf[j++] = ok ? ch : '_';
  }
  if (j == 0)
    buf[j++] = '_';
  snprintf(buf + j, size - j, ".bin");
}

static int write_output(const char *dir, const actx_ort_tensor *t, char *path, size_t size) {
  char file[160];
  file_name_for(t->name, file, sizeof file);
  snprintf(path, size, "%s/%s", dir, file);
  FILE *f = fopen(path, "wb");
  if (f == NULL)
    return -1;
  size_t written = t->bytes > 0 ? fwrite(t->data, 1, t->bytes, f) : 0;
  int rc = fclose(f);
  return written == t->bytes && rc == 0 ? 0 : -1;
}

int actx_cmd_run(int argc, char **argv) {
  static run_options o;
  if (parse_options(argc, argv, &o) != 0)
    return ACTX_EXIT_USAGE;
  char err[4096];
  char ep_lib[4096];
  if (o.use_ep &&
      actx_find_ep_library(o.ep_lib_arg, ep_lib, sizeof ep_lib, err, sizeof err) != 0) {
    fprintf(stderr, "actx %s: %s\n", CMD, err);
    return ACTX_EXIT_USAGE;
  }
  if (o.out_dir != NULL && actx_make_dirs(o.out_dir) != 0) {
    fprintf(stderr, "actx %s: cannot create output directory '%s': %s\n", CMD, o.out_dir,
            strerror(errno));
    return ACTX_EXIT_USAGE;
  }
  uint8_t *bytes = NULL;
  size_t size = 0;
  if (actx_read_file(o.model, &bytes, &size, err, sizeof err) != 0) {
    fprintf(stderr, "actx %s: %s\n", CMD, err);
    return ACTX_EXIT_USAGE;
  }
  if (actx_quiet_ort(o.verbose, CMD) != 0) {
    free(bytes);
    return ACTX_EXIT_FAILURE;
  }

  const char *keys[] = {"policy"};
  const char *values[] = {o.policy};
  actx_ort_session_options so = {.intra_op_threads = (int)o.threads, .record_assignments = true};
  if (o.use_ep) {
    so.ep_library_path = ep_lib;
    so.ep_name = EP_NAME;
    so.n_ep_options = 1;
    so.ep_option_keys = keys;
    so.ep_option_values = values;
  }
  actx_ort_session *session = NULL;
  actx_ort_error oe = {0};
  double t0 = actx_now_ns();
  if (actx_ort_session_create(bytes, size, &so, &session, &oe) != 0) {
    fprintf(stderr, "actx %s: %s: %s\n", CMD, o.model, oe.message);
    free(bytes);
    return ACTX_EXIT_FAILURE;
  }
  double create_ms = (actx_now_ns() - t0) / 1e6;
  free(bytes);

  int rc = ACTX_EXIT_OK;
  actx_model_info info;
  actx_model_inputs inputs = {0};
  actx_rng rng;
  actx_rng_seed(&rng, o.seed);
  if (session_inputs(session, &info, err, sizeof err) != 0) {
    fprintf(stderr, "actx %s: %s\n", CMD, err);
    rc = ACTX_EXIT_FAILURE;
  } else if (actx_model_inputs_load(&info, o.input_args, o.n_input_args, o.shape_args,
                                    o.n_shape_args, o.random ? &rng : NULL, &inputs, err,
                                    sizeof err) != 0) {
    fprintf(stderr, "actx %s: %s\n", CMD, err);
    rc = ACTX_EXIT_USAGE;
  }
  free(info.inputs);
  if (rc != ACTX_EXIT_OK) {
    actx_ort_session_free(session);
    return rc;
  }

  printf("model: %s\n", o.model);
  printf("session: %s, created in %.1f ms\n",
         o.use_ep ? "ORT + actx EP" : "ORT alone (CPU EP)", create_ms);
  for (size_t i = 0; i < inputs.n; i++) {
    char shape[192];
    const actx_ort_tensor *t = &inputs.tensors[i];
    actx_describe_tensor((int32_t)t->elem_type, t->rank, t->dims, shape, sizeof shape);
    printf("input  %s: %s (%s)\n", inputs.names[i], shape, inputs.sources[i]);
  }

  actx_ort_assignment *assignment = NULL;
  size_t n_assigned = 0;
  if (actx_ort_session_assignments(session, &assignment, &n_assigned, &oe) == 0) {
    printf("nodes (%zu):\n", n_assigned);
    for (size_t i = 0; i < n_assigned; i++)
      printf("  %-32s %s%s%s -> %s\n",
             assignment[i].node_name[0] ? assignment[i].node_name : "(unnamed)",
             assignment[i].domain, assignment[i].domain[0] ? "." : "", assignment[i].op_type,
             assignment[i].ep_name);
    free(assignment);
  } else {
    printf("nodes: assignment unknown (%s)\n", oe.message);
  }

  actx_ort_tensor *outputs = NULL;
  size_t n_outputs = 0;
  t0 = actx_now_ns();
  if (actx_ort_run(session, inputs.n, inputs.tensors, &outputs, &n_outputs, &oe) != 0) {
    fprintf(stderr, "actx %s: %s: %s\n", CMD, o.model, oe.message);
    actx_model_inputs_free(&inputs);
    actx_ort_session_free(session);
    return ACTX_EXIT_FAILURE;
  }
  double run_ms = (actx_now_ns() - t0) / 1e6;
  printf("latency: %.3f ms (one run, the first: it includes one-time work)\n", run_ms);
  for (size_t i = 0; i < n_outputs; i++) {
    char shape[192];
    const actx_ort_tensor *t = &outputs[i];
    actx_describe_tensor((int32_t)t->elem_type, t->rank, t->dims, shape, sizeof shape);
    printf("output %s: %s\n", t->name, shape);
    print_values(t);
    if (o.out_dir != NULL) {
      char path[4400];
      if (write_output(o.out_dir, t, path, sizeof path) != 0) {
        fprintf(stderr, "actx %s: cannot write %s: %s\n", CMD, path, strerror(errno));
        rc = ACTX_EXIT_FAILURE;
      } else {
        printf("    written: %s (%zu bytes, raw little-endian)\n", path, t->bytes);
      }
    }
  }
  actx_ort_tensors_free(outputs, n_outputs);
  actx_model_inputs_free(&inputs);
  actx_ort_session_free(session);
  return rc;
}
