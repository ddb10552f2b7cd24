/* timed_session.h — an ORT session prepared for timing Run() alone.
 *
 * The input and output OrtValues are created once, over buffers that live as long as the
 * session, so a timed Run() allocates no tensors of ours and copies nothing: what a benchmark
 * measures is ORT's Run() (graph execution and each kernel), at 512 elements as at 1M.
 * Output shapes are learnt from one untimed run in which ORT allocates them. */
#ifndef ACTX_TOOLS_TIMED_SESSION_H
#define ACTX_TOOLS_TIMED_SESSION_H

#include <stddef.h>

#include "host.h"

typedef struct actx_timed_session actx_timed_session;

/* Creates the session from model bytes with opt, wraps the n_inputs tensors (their data stays
 * the caller's and must outlive the session; a NULL name means the input at that position) and
 * runs once to learn and allocate the outputs. */
int actx_timed_session_create(const void *model, size_t model_size,
                              const actx_ort_session_options *opt, size_t n_inputs,
                              const actx_ort_tensor *inputs, actx_timed_session **out,
                              actx_ort_error *err);
void actx_timed_session_free(actx_timed_session *ts);

/* One Run() into the prepared outputs. */
int actx_timed_session_run(actx_timed_session *ts, actx_ort_error *err);

size_t actx_timed_session_output_count(const actx_timed_session *ts);
/* Output i after the last run (data is the session's buffer: valid until the next run). */
const actx_ort_tensor *actx_timed_session_output(const actx_timed_session *ts, size_t i);
/* The session, for its EP assignment. */
const actx_ort_session *actx_timed_session_host(const actx_timed_session *ts);
/* For a session created with opt->profile_prefix: ends its profiling (see
 * actx_ort_session_end_profiling). */
int actx_timed_session_end_profiling(actx_timed_session *ts, char *path, size_t path_size,
                                     actx_ort_error *err);

#endif /* ACTX_TOOLS_TIMED_SESSION_H */
