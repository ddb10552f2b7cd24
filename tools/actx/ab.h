/* ab.h — what the three files of `actx ab`'s Run() table share.
 *
 * ab.c is the driver: the option table, the order of the work, the cases. ab_measure.c
 * measures one cell: its sessions, their interleaved timing and ratios, the output check and
 * the optional profile. ab_report.c turns the cells into the table, the CSV, the summary, the
 * notes and the chart. Nothing here is used outside `actx ab`. */
#ifndef ACTX_TOOLS_AB_H
#define ACTX_TOOLS_AB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ab_cases.h"
#include "ab_creation.h"
#include "ab_eps.h"
#include "ab_models.h"
#include "actx.h"
#include "compare.h"
#include "host.h"
#include "inputs.h"
#include "stats.h"
#include "timed_session.h"

#define AB_CMD "ab"
#define AB_MAX_SIZES 16
#define AB_MAX_THREADS 8
#define AB_MAX_MODELS 16
#define AB_MAX_INPUT_ARGS 32
#define AB_MAX_PEER_OPTIONS 32
/* --profile's runs per arm, at most */
#define AB_MAX_PROFILE_RUNS 1000

/* The dtypes of the op cases, in the order the summary prints them. */
#define AB_N_DTYPES 3
extern const actx_dtype ab_dtypes[AB_N_DTYPES];

/* The arms of a cell: arm A (ORT alone unless --baseline says otherwise), ORT + actx, the null
 * control (a second arm A), then one per peer. */
typedef enum ab_arm_kind {
  ARM_ORT,
  ARM_ACTX,
  ARM_NULL,
  ARM_PEER,
  N_ARMS = ARM_PEER + ACTX_AB_MAX_PEERS
} ab_arm_kind;

typedef struct ab_options {
  const char *ops, *dtypes;
  long sizes[AB_MAX_SIZES];
  size_t n_sizes;
  long threads[AB_MAX_THREADS];
  size_t n_threads;
  long reps, warmup;
  double batch_ms;
  bool null_control, quick, no_chart, verbose, strict, spin;
  bool sizes_given; /* --sizes: every case at those; otherwise a case may have its own */
  const char *policy;
  const char *ep_lib_arg;
  char ep_lib[4096];
  actx_ab_ep actx_ep; /* the actx arm's EP, with the policy of --policy */
  /* Arm A: ORT alone, or with --baseline ORT + actx with that policy (baseline_ep); on
   * threads_a threads (0: the cell's) and in dtype_a (NULL: the case's). */
  const char *baseline;
  actx_ab_ep baseline_ep;
  long threads_a;
  const char *dtype_a;
  long profile_runs; /* --profile: profiled runs per arm and cell (0: none) */
  actx_ab_ep peers[ACTX_AB_MAX_PEERS];
  size_t n_peers;
  /* --peer-option values, applied once every --peer is known */
  const char *peer_options[AB_MAX_PEER_OPTIONS];
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
  const char *models[AB_MAX_MODELS];
  size_t n_models;
  actx_input_arg input_args[AB_MAX_INPUT_ARGS];
  size_t n_input_args;
  actx_shape_arg shape_args[AB_MAX_INPUT_ARGS];
  size_t n_shape_args;
} ab_options;

/* Whether arm A is anything but ORT alone on the cell's model, dtype and threads: then its
 * outputs are no reference, and the check runs an ORT-alone session of its own. */
bool ab_arm_a_is_custom(const ab_options *o);

typedef struct ab_arm {
  actx_timed_session *ts;
  bool ok;
  bool not_implemented;
  char error[1024];
  size_t batch;
  double *samples; /* ns per Run, one per rep; freed once the cell is measured */
  size_t n_samples;
  actx_stats stats;
  /* Each arm but arm A against arm A: */
  actx_stats ratio; /* of the rep-by-rep ratios arm A / this arm */
  bool has_ratio;
  char ep_summary[128]; /* where the arm's nodes ran */
  const char *reference; /* what its outputs were compared with: "ORT", "libactx", NULL */
  bool compared;
  actx_compare cmp;
  char check[96];
} ab_arm;

/* --profile: per arm (0: arm A, 1: ORT + actx), medians over the profiled runs of the GELU
 * part's time, the whole Run()'s, and the part's share of each run. */
typedef struct ab_profile {
  bool ok;
  size_t runs;
  double part_us[2], run_us[2], share[2];
  char error[1024];
} ab_profile;

typedef struct ab_cell {
  char label[64];
  char dtype[16];
  size_t elements;
  long threads;
  ab_arm arms[N_ARMS];
  const char *policy_used;
  bool auto_declined; /* auto left every node to ORT: measured with policy=all */
  ab_profile profile;
} ab_cell;

/* A model with its inputs. */
typedef struct ab_model_ref {
  const uint8_t *model;
  size_t model_size;
  size_t n_inputs;
  const actx_ort_tensor *inputs;
} ab_model_ref;

/* What a case brings to a cell: the model every arm runs but arm A, arm A's (the same unless
 * --dtype-a), and an optional libactx reference. */
typedef struct ab_cell_input {
  ab_model_ref b, a;
  const actx_ab_model *reference; /* NULL: none */
} ab_cell_input;

typedef struct ab_results {
  ab_cell *cells;
  size_t n, capacity;
} ab_results;

/* ---- ab_measure.c ------------------------------------------------------------------------ */

/* A zeroed cell at the end of r, or NULL when out of memory. */
ab_cell *ab_new_cell(ab_results *r);
/* Creates the cell's sessions, checks ORT + actx's outputs (and each peer's), times the arms
 * interleaved, profiles them when asked, and frees the sessions. The label, dtype, elements
 * and threads are the caller's to set first. */
void ab_run_cell(const ab_options *o, const ab_cell_input *in, ab_cell *c);

/* ---- ab_report.c ------------------------------------------------------------------------- */

/* What the report says besides the cells. */
typedef struct ab_run_info {
  char started[64], load_before[16], load_after[16];
  double seconds;
} ab_run_info;

/* The 1-minute load average, "?" when unknown. */
void ab_load_average(char *buf, size_t size);
/* Prints the report (stdout and <out>/ab.txt) and writes the CSVs and the chart: the Run()
 * table when r is not NULL, then the sections of creation and models when not NULL.
 * ACTX_EXIT_OK, or ACTX_EXIT_FAILURE when a CSV could not be written. */
int ab_report(const ab_options *o, const ab_results *r, const ab_run_info *info,
              const actx_ab_creation *creation, const actx_ab_models *models);

#endif /* ACTX_TOOLS_AB_H */
