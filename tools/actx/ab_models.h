/* ab_models.h — `actx ab`'s real-model section: the models of models/manifest.txt (fetched by
 * scripts/fetch-models.sh), ORT alone against ORT + actx.
 *
 * Per model: how many nodes the EP claims under policy auto and under policy all; whether each
 * arm's outputs are ORT alone's bits, or the largest absolute difference; and, per intra-op
 * thread count, the Run() time ratio ORT alone / ORT + actx (auto; and all, where all claims other
 * nodes than auto), with the null control (a second ORT-alone session) beside it. Arms are timed
 * interleaved in alternating order as in the Run() table. A model runs from milliseconds to
 * seconds, so each gets a time budget rather than a fixed count: batches of about batch_ms, as
 * many reps as the budget holds within [min_reps, max_reps]; a run longer than a batch is timed
 * one run per rep, its calibration run counting as the first.
 *
 * check_only: the sessions are created and run once, claims and outputs checked against the
 * manifest (the model tests), nothing timed. */
#ifndef ACTX_TOOLS_AB_MODELS_H
#define ACTX_TOOLS_AB_MODELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define ACTX_AB_MODELS_MAX_THREADS 8

typedef struct actx_ab_models_config {
  const char *manifest;  /* models/manifest.txt */
  const char *only;      /* comma-separated model names; NULL: all */
  const char *actx_path; /* libactx_ep.so */
  const long *threads;
  size_t n_threads;
  bool null_control, spin, quick, check_only, tty;
  uint64_t seed;
} actx_ab_models_config;

typedef struct actx_ab_models actx_ab_models;

/* Runs the section. NULL with a message in err when the manifest cannot be read or names no
 * model `only` asks for, or when out of memory; a model that fails (not fetched, ORT error) is
 * reported in its rows. */
actx_ab_models *actx_ab_models_run(const actx_ab_models_config *config, char *err,
                                   size_t err_size);
void actx_ab_models_free(actx_ab_models *m);

/* The section of the report: a heading, the table, notes. */
void actx_ab_models_print(const actx_ab_models *m, FILE *out);
/* One CSV row per model x thread count. */
void actx_ab_models_write_csv(const actx_ab_models *m, FILE *out);
/* Models that failed: not loaded, claims other than the manifest's, outputs past its bound. */
size_t actx_ab_models_failures(const actx_ab_models *m);

#endif /* ACTX_TOOLS_AB_MODELS_H */
