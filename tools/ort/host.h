/* host.h — running models in ONNX Runtime 1.30 from C: what actx's tools and tests share.
 *
 * One OrtApi (version 30) and one OrtEnv per process, created on first use. Sessions are made
 * from model bytes (see model.h) with a few options: threads, optimisation level, a plugin EP
 * library to register and select, extra session config entries, and recording which EP ran each
 * node. Runs take plain buffers and return plain malloc'ed buffers.
 *
 * Errors: every function that can fail returns 0 on success or -1, and fills *err (which may be
 * NULL) with the ORT error code and message and what was being done. Nothing here aborts. */
#ifndef ACTX_TOOLS_ORT_HOST_H
#define ACTX_TOOLS_ORT_HOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ort_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct actx_ort_error {
  OrtErrorCode code;  /* ORT's code, or ORT_FAIL / ORT_INVALID_ARGUMENT for our own checks */
  char message[1024]; /* "<what we did>: <ORT_CODE_NAME>: <ORT's message>" */
} actx_ort_error;

/* "ORT_INVALID_ARGUMENT", ...; "ORT_ERROR_<n>" for a code this header does not know. */
const char *actx_ort_error_code_name(OrtErrorCode code);

/* The OrtApi for ORT_API_VERSION, fetched once; NULL (with *err) if the library is too old. */
const OrtApi *actx_ort_api(actx_ort_error *err);
/* The process-wide environment, created once; NULL on failure. ORT logs to stderr at the level
 * named by the environment variable ACTX_ORT_LOG (verbose|info|warning|error|fatal; default
 * error: "verbose" shows how ORT partitions a graph between EPs). */
OrtEnv *actx_ort_env(actx_ort_error *err);
/* Turns a non-NULL OrtStatus into *err (and releases it). Returns 0 for NULL, else -1. */
int actx_ort_check(OrtStatus *status, const char *what, actx_ort_error *err);

/* Registers a plugin EP library with the process-wide env, once per file: later calls naming
 * the same file (by any path) succeed without registering again. A relative path is resolved
 * against the current directory (ORT itself would look next to libonnxruntime). Libraries stay
 * registered until actx_ort_shutdown(). */
int actx_ort_register_ep_library(const char *library_path, actx_ort_error *err);

/* Most EPs one library's registration is recorded with. */
#define ACTX_ORT_MAX_LIBRARY_EPS 4

/* The EPs a plugin library brought: those of the OrtEpDevices that appeared when it was
 * registered (ORT does not say which library a device came from, so the devices before and
 * after are compared), with how many of each EP's devices are CPUs. */
typedef struct actx_ort_library_eps {
  size_t n;
  struct {
    char name[64];
    size_t devices, cpu_devices;
  } eps[ACTX_ORT_MAX_LIBRARY_EPS];
} actx_ort_library_eps;

/* The same registration, under registration_name (NULL: one is made up) when this call is the
 * one that registers the file, and what it brought into *eps (may be NULL). A library without
 * the plugin EP entry points fails here, with ORT's message. */
int actx_ort_register_named_ep_library(const char *library_path, const char *registration_name,
                                       actx_ort_library_eps *eps, actx_ort_error *err);

/* The hardware devices ORT found on this machine, e.g. "CPU AMD (vendor id 0x1022)", comma-
 * separated into buf: what plugin EP factories are offered to serve. */
int actx_ort_describe_hardware(char *buf, size_t size, actx_ort_error *err);

/* Graph optimisation levels; the zero value is ORT's default for sessions, ORT_ENABLE_ALL. */
typedef enum actx_ort_optimization {
  ACTX_ORT_OPTIMIZE_ALL = 0,
  ACTX_ORT_OPTIMIZE_NONE,
  ACTX_ORT_OPTIMIZE_BASIC,
  ACTX_ORT_OPTIMIZE_EXTENDED,
  ACTX_ORT_OPTIMIZE_LAYOUT,
} actx_ort_optimization;

/* Session options; zero-initialise, then set what you need. */
typedef struct actx_ort_session_options {
  int intra_op_threads; /* 0: ORT's default (one per core). Inter-op is always 1, sequential. */
  actx_ort_optimization optimization;
  /* A plugin EP: register ep_library_path (NULL for none), then append every
   * OrtEpDevice whose EP name is ep_name, with these provider options. */
  const char *ep_library_path;
  const char *ep_name;
  size_t n_ep_options;
  const char *const *ep_option_keys;
  const char *const *ep_option_values;
  /* Append only those of ep_name's devices that are CPUs. */
  bool ep_cpu_devices_only;
  /* Extra AddSessionConfigEntry key/value pairs. */
  size_t n_config;
  const char *const *config_keys;
  const char *const *config_values;
  /* Sets session.record_ep_graph_assignment_info=1 so actx_ort_session_assignments works. */
  bool record_assignments;
  /* Not NULL: ORT writes the graph it will run, after all its optimisations, to this file
   * (SetOptimizedModelFilePath). It cannot write one that has nodes compiled by an EP. */
  const char *optimized_model_path;
  /* Not NULL: ORT profiles every Run() into <prefix>_<date>.json (EnableProfiling); the
   * file is complete once actx_ort_session_end_profiling has been called. */
  const char *profile_prefix;
} actx_ort_session_options;

typedef struct actx_ort_session actx_ort_session;

/* Creates a session from a serialized model. opt may be NULL (all defaults). */
int actx_ort_session_create(const void *model, size_t model_size,
                            const actx_ort_session_options *opt, actx_ort_session **out,
                            actx_ort_error *err);
void actx_ort_session_free(actx_ort_session *session);
/* The underlying ORT session, for anything these functions do not cover. */
OrtSession *actx_ort_session_handle(actx_ort_session *session);

/* Most dimensions a tensor may have here. */
#define ACTX_ORT_MAX_RANK 8

/* A tensor crossing the boundary. For inputs, data is the caller's (not copied, not written);
 * for outputs, data is malloc'ed by actx_ort_run (free with actx_ort_tensors_free). */
typedef struct actx_ort_tensor {
  const char *name; /* inputs: NULL means the session's input at the same position */
  ONNXTensorElementDataType elem_type;
  size_t rank;
  int64_t dims[ACTX_ORT_MAX_RANK];
  void *data;
  size_t count; /* elements (outputs: filled in) */
  size_t bytes; /* outputs: filled in */
} actx_ort_tensor;

/* Graph inputs and outputs as the session sees them: name (owned by the session), element type,
 * rank and dims (-1 for a symbolic dimension). index < count. */
size_t actx_ort_session_input_count(const actx_ort_session *session);
size_t actx_ort_session_output_count(const actx_ort_session *session);
int actx_ort_session_input_info(const actx_ort_session *session, size_t index,
                                actx_ort_tensor *info, actx_ort_error *err);
int actx_ort_session_output_info(const actx_ort_session *session, size_t index,
                                 actx_ort_tensor *info, actx_ort_error *err);

/* Runs the session on n_inputs tensors and returns all of its outputs, in the session's order,
 * as a malloc'ed array of *n_outputs tensors (free with actx_ort_tensors_free). */
int actx_ort_run(actx_ort_session *session, size_t n_inputs, const actx_ort_tensor *inputs,
                 actx_ort_tensor **outputs, size_t *n_outputs, actx_ort_error *err);
void actx_ort_tensors_free(actx_ort_tensor *tensors, size_t n);

/* One node and the EP it was assigned to. ORT records each node when it assigns it to an EP:
 * the graph as partitioned, after the level-1 optimisations and before the level-2 fusions
 * (GeluFusion below opset 20, BiasGelu, FastGelu, QuickGelu, LayerNorm, ...). A subgraph ORT
 * fuses later is listed as its original nodes and the fused node never appears, nor do the
 * Casts ORT inserts afterwards around float16 nodes. To see the graph ORT finally runs, save it
 * with optimized_model_path. */
typedef struct actx_ort_assignment {
  size_t subgraph; /* which of ORT's assigned subgraphs holds it: one per compiled node */
  char ep_name[64];
  char node_name[128];
  char domain[64];
  char op_type[64];
} actx_ort_assignment;

/* Which EP runs each node; needs record_assignments. Malloc'ed array (free()), *n entries. */
int actx_ort_session_assignments(const actx_ort_session *session, actx_ort_assignment **out,
                                 size_t *n, actx_ort_error *err);
/* How many of those nodes are assigned to ep_name (-1 on error). */
long actx_ort_count_nodes_on(const actx_ort_session *session, const char *ep_name,
                             actx_ort_error *err);
/* How many subgraphs ORT assigned to ep_name (-1 on error): nodes an EP runs as one compiled
 * node are one, every node it runs with a registered kernel is one of its own. */
long actx_ort_count_subgraphs_on(const actx_ort_session *session, const char *ep_name,
                                 actx_ort_error *err);

/* Ends the profiling of a session created with profile_prefix and writes the name of the
 * profile file ORT wrote into path. */
int actx_ort_session_end_profiling(actx_ort_session *session, char *path, size_t path_size,
                                   actx_ort_error *err);

/* Unregisters the EP libraries and releases the env, for leak checkers. Every session must be
 * freed first; afterwards the functions here start over on next use. Not thread-safe against them.
 */
void actx_ort_shutdown(void);

#ifdef __cplusplus
}
#endif

#endif /* ACTX_TOOLS_ORT_HOST_H */
