/* host.c — ORT session utilities (see host.h). */
#define _XOPEN_SOURCE 700 /* realpath */
#include "host.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h" /* actx_elem_size: ONNX and ORT number element types alike */

/* The session config key that makes ORT keep the EP assignment of every node. */
#define RECORD_ASSIGNMENT_KEY "session.record_ep_graph_assignment_info"
/* How many distinct EP libraries one process may register through these functions. */
#define MAX_EP_LIBRARIES 16

typedef struct registered_library {
  char *path;
  char *registration_name;
  actx_ort_library_eps eps;
} registered_library;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static const OrtApi *g_api;
static OrtEnv *g_env;
static registered_library g_libraries[MAX_EP_LIBRARIES];
static size_t g_n_libraries;

struct actx_ort_session {
  OrtSession *session;
  size_t n_inputs, n_outputs;
  char **input_names, **output_names;
  OrtMemoryInfo *cpu_memory; /* describes caller buffers handed to ORT as inputs */
};

/* ---- Errors ------------------------------------------------------------------------------- */

const char *actx_ort_error_code_name(OrtErrorCode code) {
  switch (code) {
    case ORT_OK: return "ORT_OK";
    case ORT_FAIL: return "ORT_FAIL";
    case ORT_INVALID_ARGUMENT: return "ORT_INVALID_ARGUMENT";
    case ORT_NO_SUCHFILE: return "ORT_NO_SUCHFILE";
    case ORT_NO_MODEL: return "ORT_NO_MODEL";
    case ORT_ENGINE_ERROR: return "ORT_ENGINE_ERROR";
    case ORT_RUNTIME_EXCEPTION: return "ORT_RUNTIME_EXCEPTION";
    case ORT_INVALID_PROTOBUF: return "ORT_INVALID_PROTOBUF";
    case ORT_MODEL_LOADED: return "ORT_MODEL_LOADED";
    case ORT_NOT_IMPLEMENTED: return "ORT_NOT_IMPLEMENTED";
    case ORT_INVALID_GRAPH: return "ORT_INVALID_GRAPH";
    case ORT_EP_FAIL: return "ORT_EP_FAIL";
    case ORT_MODEL_LOAD_CANCELED: return "ORT_MODEL_LOAD_CANCELED";
    case ORT_MODEL_REQUIRES_COMPILATION: return "ORT_MODEL_REQUIRES_COMPILATION";
    case ORT_NOT_FOUND: return "ORT_NOT_FOUND";
    case ORT_DEVICE_RESET: return "ORT_DEVICE_RESET";
  }
  static _Thread_local char unknown[32];
  snprintf(unknown, sizeof unknown, "ORT_ERROR_%d", (int)code);
  return unknown;
}

/* Fills *err with our own error; returns -1. */
static int set_error(actx_ort_error *err, OrtErrorCode code, const char *fmt, ...) {
  if (err == NULL)
    return -1;
  err->code = code;
  va_list args;
  va_start(args, fmt);
  vsnprintf(err->message, sizeof err->message, fmt, args);
  va_end(args);
  return -1;
}

int actx_ort_check(OrtStatus *status, const char *what, actx_ort_error *err) {
  if (status == NULL)
    return 0;
  /* g_api is set: a status can only come from a call made through it. */
  OrtErrorCode code = g_api->GetErrorCode(status);
  set_error(err, code, "%s: %s: %s", what, actx_ort_error_code_name(code),
            g_api->GetErrorMessage(status));
  g_api->ReleaseStatus(status);
  return -1;
}

static char *copy_string(const char *s) {
  size_t len = strlen(s) + 1;
  char *copy = malloc(len);
  if (copy != NULL)
    memcpy(copy, s, len);
  return copy;
}

/* ---- API, environment, EP libraries ------------------------------------------------------ */

const OrtApi *actx_ort_api(actx_ort_error *err) {
  pthread_mutex_lock(&g_lock);
  if (g_api == NULL) {
    const OrtApiBase *base = OrtGetApiBase();
    g_api = base != NULL ? base->GetApi(ORT_API_VERSION) : NULL;
    if (g_api == NULL)
      set_error(err, ORT_FAIL, "libonnxruntime %s does not provide C API version %d",
                base != NULL ? base->GetVersionString() : "(no OrtApiBase)", ORT_API_VERSION);
  }
  const OrtApi *api = g_api;
  pthread_mutex_unlock(&g_lock);
  return api;
}

/* ORT's log level from ACTX_ORT_LOG (verbose|info|warning|error|fatal); default error, since
 * ORT warns about every node a plugin EP leaves to the CPU EP, which is routine here. */
static OrtLoggingLevel log_level_from_environment(void) {
  static const char *const names[] = {"verbose", "info", "warning", "error", "fatal"};
  const char *value = getenv("ACTX_ORT_LOG");
  for (int i = 0; value != NULL && i < 5; i++)
    if (strcmp(value, names[i]) == 0)
      return (OrtLoggingLevel)i;
  return ORT_LOGGING_LEVEL_ERROR;
}

OrtEnv *actx_ort_env(actx_ort_error *err) {
  const OrtApi *api = actx_ort_api(err);
  if (api == NULL)
    return NULL;
  pthread_mutex_lock(&g_lock);
  if (g_env == NULL)
    actx_ort_check(api->CreateEnv(log_level_from_environment(), "actx", &g_env), "CreateEnv", err);
  OrtEnv *env = g_env;
  pthread_mutex_unlock(&g_lock);
  return env;
}

/* The devices ORT lists now, copied (ORT's array may change with the next registration). */
static int list_devices(OrtEnv *env, const OrtEpDevice ***out, size_t *n, actx_ort_error *err) {
  const OrtEpDevice *const *devices = NULL;
  *out = NULL;
  *n = 0;
  if (actx_ort_check(g_api->GetEpDevices(env, &devices, n), "GetEpDevices", err) != 0)
    return -1;
  *out = calloc(*n + 1, sizeof **out);
  if (*out == NULL)
    return set_error(err, ORT_FAIL, "GetEpDevices: out of memory");
  for (size_t i = 0; i < *n; i++)
    (*out)[i] = devices[i];
  return 0;
}

/* The EPs of the devices listed now that were not among before[0..n_before). */
static int record_new_devices(OrtEnv *env, const OrtEpDevice **before, size_t n_before,
                              actx_ort_library_eps *eps, actx_ort_error *err) {
  const OrtEpDevice **after = NULL;
  size_t n_after = 0;
  memset(eps, 0, sizeof *eps);
  if (list_devices(env, &after, &n_after, err) != 0)
    return -1;
  for (size_t i = 0; i < n_after; i++) {
    bool old = false;
    for (size_t k = 0; k < n_before && !old; k++)
      old = before[k] == after[i];
    const char *name = old ? NULL : g_api->EpDevice_EpName(after[i]);
    if (name == NULL)
      continue;
    size_t e = 0;
    while (e < eps->n && strcmp(eps->eps[e].name, name) != 0)
      e++;
    if (e == ACTX_ORT_MAX_LIBRARY_EPS)
      continue;
    if (e == eps->n)
      snprintf(eps->eps[eps->n++].name, sizeof eps->eps[e].name, "%s", name);
    const OrtHardwareDevice *hw = g_api->EpDevice_Device(after[i]);
    eps->eps[e].devices++;
    eps->eps[e].cpu_devices +=
        hw != NULL && g_api->HardwareDevice_Type(hw) == OrtHardwareDeviceType_CPU;
  }
  free(after);
  return 0;
}

int actx_ort_register_ep_library(const char *library_path, actx_ort_error *err) {
  return actx_ort_register_named_ep_library(library_path, NULL, NULL, err);
}

int actx_ort_register_named_ep_library(const char *library_path, const char *registration_name,
                                       actx_ort_library_eps *eps, actx_ort_error *err) {
  if (library_path == NULL || library_path[0] == '\0')
    return set_error(err, ORT_INVALID_ARGUMENT, "register EP library: no path");
  /* ORT resolves a relative path against its own directory, not ours: make it absolute. */
  char resolved[PATH_MAX];
  if (realpath(library_path, resolved) == NULL)
    return set_error(err, ORT_NO_SUCHFILE, "register EP library %s: %s", library_path,
                     strerror(errno));
  library_path = resolved;
  OrtEnv *env = actx_ort_env(err);
  if (env == NULL)
    return -1;
  int rc = 0;
  const OrtEpDevice **before = NULL;
  size_t n_before = 0;
  pthread_mutex_lock(&g_lock);
  for (size_t i = 0; i < g_n_libraries; i++)
    if (strcmp(g_libraries[i].path, library_path) == 0) {
      if (eps != NULL) /* registered before: nothing to do but say what it brought */
        *eps = g_libraries[i].eps;
      goto done;
    }
  if (g_n_libraries == MAX_EP_LIBRARIES) {
    rc = set_error(err, ORT_FAIL, "register EP library %s: already %d libraries registered",
                   library_path, MAX_EP_LIBRARIES);
    goto done;
  }
  /* ORT keys libraries by registration name; one per path keeps them apart. */
  char name[64];
  for (size_t i = 0; registration_name != NULL && i < g_n_libraries; i++)
    if (strcmp(g_libraries[i].registration_name, registration_name) == 0) {
      rc = set_error(err, ORT_INVALID_ARGUMENT,
                     "register EP library %s: the name '%s' is taken by %s", library_path,
                     registration_name, g_libraries[i].path);
      goto done;
    }
  if (registration_name != NULL)
    snprintf(name, sizeof name, "%s", registration_name);
  else
    snprintf(name, sizeof name, "actx_ep_library_%zu", g_n_libraries);
  if (list_devices(env, &before, &n_before, err) != 0) {
    rc = -1;
    goto done;
  }
  char what[64 + 4096];
  snprintf(what, sizeof what, "RegisterExecutionProviderLibrary(%s)", library_path);
  if (actx_ort_check(g_api->RegisterExecutionProviderLibrary(env, name, library_path), what, err) !=
      0) {
    rc = -1;
    goto done;
  }
  registered_library *lib = &g_libraries[g_n_libraries];
  if (record_new_devices(env, before, n_before, &lib->eps, err) != 0) {
    actx_ort_check(g_api->UnregisterExecutionProviderLibrary(env, name), "unregister", NULL);
    rc = -1;
    goto done;
  }
  if (eps != NULL)
    *eps = lib->eps;
  lib->path = copy_string(library_path);
  lib->registration_name = copy_string(name);
  if (lib->path == NULL || lib->registration_name == NULL) {
    actx_ort_check(g_api->UnregisterExecutionProviderLibrary(env, name), "unregister", NULL);
    free(lib->path);
    free(lib->registration_name);
    lib->path = lib->registration_name = NULL;
    rc = set_error(err, ORT_FAIL, "register EP library: out of memory");
    goto done;
  }
  g_n_libraries++;
done:
  pthread_mutex_unlock(&g_lock);
  free(before);
  return rc;
}

int actx_ort_describe_hardware(char *buf, size_t size, actx_ort_error *err) {
  static const char *const types[] = {"CPU", "GPU", "NPU"};
  if (size == 0)
    return set_error(err, ORT_INVALID_ARGUMENT, "describe hardware: no buffer");
  buf[0] = '\0';
  OrtEnv *env = actx_ort_env(err);
  size_t n = 0;
  if (env == NULL ||
      actx_ort_check(g_api->GetNumHardwareDevices(env, &n), "GetNumHardwareDevices", err) != 0)
    return -1;
  const OrtHardwareDevice **devices = calloc(n + 1, sizeof *devices);
  if (devices == NULL)
    return set_error(err, ORT_FAIL, "describe hardware: out of memory");
  int rc = actx_ort_check(g_api->GetHardwareDevices(env, devices, n), "GetHardwareDevices", err);
  for (size_t i = 0; rc == 0 && i < n; i++) {
    const OrtHardwareDeviceType type = g_api->HardwareDevice_Type(devices[i]);
    const char *vendor = g_api->HardwareDevice_Vendor(devices[i]);
    const size_t used = strlen(buf);
    snprintf(buf + used, size - used, "%s%s %s (vendor id 0x%04x)", used > 0 ? ", " : "",
             (unsigned)type < 3 ? types[type] : "device", vendor != NULL ? vendor : "?",
             (unsigned)g_api->HardwareDevice_VendorId(devices[i]));
  }
  free(devices);
  return rc;
}

void actx_ort_shutdown(void) {
  pthread_mutex_lock(&g_lock);
  for (size_t i = 0; i < g_n_libraries; i++) {
    if (g_env != NULL)
      actx_ort_check(
          g_api->UnregisterExecutionProviderLibrary(g_env, g_libraries[i].registration_name),
          "UnregisterExecutionProviderLibrary", NULL);
    free(g_libraries[i].path);
    free(g_libraries[i].registration_name);
    g_libraries[i].path = g_libraries[i].registration_name = NULL;
  }
  g_n_libraries = 0;
  if (g_env != NULL)
    g_api->ReleaseEnv(g_env);
  g_env = NULL;
  pthread_mutex_unlock(&g_lock);
}

/* ---- Sessions ------------------------------------------------------------------------------ */

static GraphOptimizationLevel ort_level(actx_ort_optimization level) {
  switch (level) {
    case ACTX_ORT_OPTIMIZE_NONE: return ORT_DISABLE_ALL;
    case ACTX_ORT_OPTIMIZE_BASIC: return ORT_ENABLE_BASIC;
    case ACTX_ORT_OPTIMIZE_EXTENDED: return ORT_ENABLE_EXTENDED;
    case ACTX_ORT_OPTIMIZE_LAYOUT: return ORT_ENABLE_LAYOUT;
    case ACTX_ORT_OPTIMIZE_ALL: break;
  }
  return ORT_ENABLE_ALL;
}

/* Appends every device of the EP named ep_name, with the provider options. */
static int append_ep(const OrtApi *api, OrtEnv *env, OrtSessionOptions *so,
                     const actx_ort_session_options *opt, actx_ort_error *err) {
  const OrtEpDevice *const *devices = NULL;
  size_t n_devices = 0;
  if (actx_ort_check(api->GetEpDevices(env, &devices, &n_devices), "GetEpDevices", err) != 0)
    return -1;
  const OrtEpDevice **chosen = calloc(n_devices + 1, sizeof *chosen);
  if (chosen == NULL)
    return set_error(err, ORT_FAIL, "append EP %s: out of memory", opt->ep_name);
  size_t n_chosen = 0;
  char available[512] = "";
  for (size_t i = 0; i < n_devices; i++) {
    const char *name = api->EpDevice_EpName(devices[i]);
    const OrtHardwareDevice *hw = api->EpDevice_Device(devices[i]);
    const bool cpu = hw != NULL && api->HardwareDevice_Type(hw) == OrtHardwareDeviceType_CPU;
    if (name != NULL && strcmp(name, opt->ep_name) == 0 && (cpu || !opt->ep_cpu_devices_only))
      chosen[n_chosen++] = devices[i];
    size_t used = strlen(available);
    snprintf(available + used, sizeof available - used, "%s%s", used > 0 ? ", " : "",
             name != NULL ? name : "?");
  }
  int rc = 0;
  if (n_chosen == 0) {
    rc = set_error(err, ORT_NOT_FOUND, "append EP: no %sOrtEpDevice of EP '%s' (devices: %s)",
                   opt->ep_cpu_devices_only ? "CPU " : "", opt->ep_name, available);
  } else if (opt->n_ep_options > 0 &&
             (opt->ep_option_keys == NULL || opt->ep_option_values == NULL)) {
    rc = set_error(err, ORT_INVALID_ARGUMENT, "append EP %s: %zu options but no keys/values",
                   opt->ep_name, opt->n_ep_options);
  } else {
    char what[160];
    snprintf(what, sizeof what, "SessionOptionsAppendExecutionProvider_V2(%s)", opt->ep_name);
    rc = actx_ort_check(api->SessionOptionsAppendExecutionProvider_V2(
                            so, env, chosen, n_chosen, opt->ep_option_keys, opt->ep_option_values,
                            opt->n_ep_options),
                        what, err);
  }
  free(chosen);
  return rc;
}

static int fill_session_options(const OrtApi *api, OrtEnv *env, OrtSessionOptions *so,
                                const actx_ort_session_options *opt, actx_ort_error *err) {
  if (actx_ort_check(api->SetSessionExecutionMode(so, ORT_SEQUENTIAL), "SetSessionExecutionMode",
                     err) != 0 ||
      actx_ort_check(api->SetInterOpNumThreads(so, 1), "SetInterOpNumThreads", err) != 0)
    return -1;
  if (opt->intra_op_threads < 0)
    return set_error(err, ORT_INVALID_ARGUMENT, "intra_op_threads is %d", opt->intra_op_threads);
  if (opt->intra_op_threads > 0 &&
      actx_ort_check(api->SetIntraOpNumThreads(so, opt->intra_op_threads), "SetIntraOpNumThreads",
                     err) != 0)
    return -1;
  if (actx_ort_check(api->SetSessionGraphOptimizationLevel(so, ort_level(opt->optimization)),
                     "SetSessionGraphOptimizationLevel", err) != 0)
    return -1;
  if (opt->n_config > 0 && (opt->config_keys == NULL || opt->config_values == NULL))
    return set_error(err, ORT_INVALID_ARGUMENT, "%zu config entries but no keys/values",
                     opt->n_config);
  for (size_t i = 0; i < opt->n_config; i++) {
    char what[256];
    snprintf(what, sizeof what, "AddSessionConfigEntry(%s)", opt->config_keys[i]);
    if (actx_ort_check(api->AddSessionConfigEntry(so, opt->config_keys[i], opt->config_values[i]),
                       what, err) != 0)
      return -1;
  }
  if (opt->record_assignments &&
      actx_ort_check(api->AddSessionConfigEntry(so, RECORD_ASSIGNMENT_KEY, "1"),
                     "AddSessionConfigEntry(" RECORD_ASSIGNMENT_KEY ")", err) != 0)
    return -1;
  if (opt->optimized_model_path != NULL &&
      actx_ort_check(api->SetOptimizedModelFilePath(so, opt->optimized_model_path),
                     "SetOptimizedModelFilePath", err) != 0)
    return -1;
  if (opt->profile_prefix != NULL &&
      actx_ort_check(api->EnableProfiling(so, opt->profile_prefix), "EnableProfiling", err) != 0)
    return -1;
  if (opt->ep_library_path != NULL) {
    if (opt->ep_name == NULL)
      return set_error(err, ORT_INVALID_ARGUMENT,
                       "EP library %s given without the name of the EP to use",
                       opt->ep_library_path);
    if (actx_ort_register_ep_library(opt->ep_library_path, err) != 0)
      return -1;
  }
  if (opt->ep_name != NULL && append_ep(api, env, so, opt, err) != 0)
    return -1;
  return 0;
}

/* Copies the session's input or output names (ORT allocates them with its allocator). */
static int read_names(const OrtApi *api, OrtSession *session, bool inputs, size_t *count,
                      char ***names, actx_ort_error *err) {
  const char *what = inputs ? "SessionGetInputCount" : "SessionGetOutputCount";
  OrtStatus *status = inputs ? api->SessionGetInputCount(session, count)
                             : api->SessionGetOutputCount(session, count);
  if (actx_ort_check(status, what, err) != 0)
    return -1;
  OrtAllocator *allocator = NULL;
  if (actx_ort_check(api->GetAllocatorWithDefaultOptions(&allocator),
                     "GetAllocatorWithDefaultOptions", err) != 0)
    return -1;
  *names = calloc(*count + 1, sizeof **names);
  if (*names == NULL)
    return set_error(err, ORT_FAIL, "out of memory for %zu names", *count);
  for (size_t i = 0; i < *count; i++) {
    char *name = NULL;
    status = inputs ? api->SessionGetInputName(session, i, allocator, &name)
                    : api->SessionGetOutputName(session, i, allocator, &name);
    if (actx_ort_check(status, inputs ? "SessionGetInputName" : "SessionGetOutputName", err) != 0)
      return -1;
    (*names)[i] = copy_string(name);
    actx_ort_check(api->AllocatorFree(allocator, name), "AllocatorFree", NULL);
    if ((*names)[i] == NULL)
      return set_error(err, ORT_FAIL, "out of memory for a name");
  }
  return 0;
}

static void free_names(char **names, size_t count) {
  if (names == NULL)
    return;
  for (size_t i = 0; i < count; i++)
    free(names[i]);
  free(names);
}

void actx_ort_session_free(actx_ort_session *s) {
  if (s == NULL)
    return;
  if (s->session != NULL)
    g_api->ReleaseSession(s->session);
  if (s->cpu_memory != NULL)
    g_api->ReleaseMemoryInfo(s->cpu_memory);
  free_names(s->input_names, s->n_inputs);
  free_names(s->output_names, s->n_outputs);
  free(s);
}

int actx_ort_session_create(const void *model, size_t model_size,
                            const actx_ort_session_options *opt, actx_ort_session **out,
                            actx_ort_error *err) {
  static const actx_ort_session_options defaults;
  if (out == NULL)
    return set_error(err, ORT_INVALID_ARGUMENT, "create session: out is NULL");
  *out = NULL;
  if (model == NULL || model_size == 0)
    return set_error(err, ORT_INVALID_ARGUMENT, "create session: no model bytes");
  if (opt == NULL)
    opt = &defaults;
  OrtEnv *env = actx_ort_env(err);
  if (env == NULL)
    return -1;
  const OrtApi *api = g_api;
  actx_ort_session *s = calloc(1, sizeof *s);
  if (s == NULL)
    return set_error(err, ORT_FAIL, "create session: out of memory");
  OrtSessionOptions *so = NULL;
  int rc = actx_ort_check(api->CreateSessionOptions(&so), "CreateSessionOptions", err);
  if (rc == 0)
    rc = fill_session_options(api, env, so, opt, err);
  if (rc == 0)
    rc = actx_ort_check(api->CreateSessionFromArray(env, model, model_size, so, &s->session),
                        "CreateSessionFromArray", err);
  if (so != NULL)
    api->ReleaseSessionOptions(so);
  if (rc == 0)
    rc = read_names(api, s->session, true, &s->n_inputs, &s->input_names, err);
  if (rc == 0)
    rc = read_names(api, s->session, false, &s->n_outputs, &s->output_names, err);
  if (rc == 0)
    rc = actx_ort_check(
        api->CreateCpuMemoryInfo(OrtArenaAllocator, OrtMemTypeDefault, &s->cpu_memory),
        "CreateCpuMemoryInfo", err);
  if (rc != 0) {
    actx_ort_session_free(s);
    return -1;
  }
  *out = s;
  return 0;
}

int actx_ort_session_end_profiling(actx_ort_session *s, char *path, size_t path_size,
                                   actx_ort_error *err) {
  if (s == NULL || path == NULL || path_size == 0)
    return set_error(err, ORT_INVALID_ARGUMENT, "end profiling: NULL argument");
  path[0] = '\0';
  OrtAllocator *allocator = NULL;
  char *name = NULL;
  if (actx_ort_check(g_api->GetAllocatorWithDefaultOptions(&allocator),
                     "GetAllocatorWithDefaultOptions", err) != 0 ||
      actx_ort_check(g_api->SessionEndProfiling(s->session, allocator, &name),
                     "SessionEndProfiling", err) != 0)
    return -1;
  snprintf(path, path_size, "%s", name != NULL ? name : "");
  if (name != NULL)
    actx_ort_check(g_api->AllocatorFree(allocator, name), "AllocatorFree", NULL);
  if (path[0] == '\0')
    return set_error(err, ORT_FAIL, "end profiling: ORT wrote no profile (was it enabled?)");
  return 0;
}

OrtSession *actx_ort_session_handle(actx_ort_session *session) {
  return session != NULL ? session->session : NULL;
}

size_t actx_ort_session_input_count(const actx_ort_session *session) {
  return session != NULL ? session->n_inputs : 0;
}

size_t actx_ort_session_output_count(const actx_ort_session *session) {
  return session != NULL ? session->n_outputs : 0;
}

/* Element type and shape of a tensor type-and-shape info into t. */
static int read_shape(const OrtApi *api, const OrtTensorTypeAndShapeInfo *shape, actx_ort_tensor *t,
                      const char *what, actx_ort_error *err) {
  size_t rank = 0;
  if (actx_ort_check(api->GetTensorElementType(shape, &t->elem_type), what, err) != 0 ||
      actx_ort_check(api->GetDimensionsCount(shape, &rank), what, err) != 0)
    return -1;
  if (rank > ACTX_ORT_MAX_RANK)
    return set_error(err, ORT_FAIL, "%s: rank %zu is more than %d", what, rank, ACTX_ORT_MAX_RANK);
  t->rank = rank;
  return actx_ort_check(api->GetDimensions(shape, t->dims, rank), what, err);
}

static int value_info(const actx_ort_session *s, size_t index, bool input, actx_ort_tensor *info,
                      actx_ort_error *err) {
  if (s == NULL || info == NULL)
    return set_error(err, ORT_INVALID_ARGUMENT, "session info: NULL argument");
  memset(info, 0, sizeof *info);
  size_t count = input ? s->n_inputs : s->n_outputs;
  const char *what = input ? "SessionGetInputTypeInfo" : "SessionGetOutputTypeInfo";
  if (index >= count)
    return set_error(err, ORT_INVALID_ARGUMENT, "%s: index %zu of %zu", what, index, count);
  info->name = input ? s->input_names[index] : s->output_names[index];
  OrtTypeInfo *type = NULL;
  OrtStatus *status = input ? g_api->SessionGetInputTypeInfo(s->session, index, &type)
                            : g_api->SessionGetOutputTypeInfo(s->session, index, &type);
  if (actx_ort_check(status, what, err) != 0)
    return -1;
  const OrtTensorTypeAndShapeInfo *shape = NULL;
  int rc = actx_ort_check(g_api->CastTypeInfoToTensorInfo(type, &shape), what, err);
  if (rc == 0 && shape == NULL)
    rc = set_error(err, ORT_INVALID_ARGUMENT, "%s: '%s' is not a tensor", what, info->name);
  if (rc == 0)
    rc = read_shape(g_api, shape, info, what, err);
  g_api->ReleaseTypeInfo(type);
  return rc;
}

int actx_ort_session_input_info(const actx_ort_session *session, size_t index,
                                actx_ort_tensor *info, actx_ort_error *err) {
  return value_info(session, index, true, info, err);
}

int actx_ort_session_output_info(const actx_ort_session *session, size_t index,
                                 actx_ort_tensor *info, actx_ort_error *err) {
  return value_info(session, index, false, info, err);
}

void actx_ort_tensors_free(actx_ort_tensor *tensors, size_t n) {
  if (tensors == NULL)
    return;
  for (size_t i = 0; i < n; i++)
    free(tensors[i].data);
  free(tensors);
}

/* Wraps a caller's input buffer in an OrtValue (no copy). */
static int make_input(const actx_ort_session *s, const actx_ort_tensor *in, size_t index,
                      OrtValue **value, actx_ort_error *err) {
  const char *name = in->name != NULL ? in->name : s->input_names[index];
  size_t elem_size = actx_elem_size((int32_t)in->elem_type);
  if (elem_size == 0)
    return set_error(err, ORT_INVALID_ARGUMENT, "input '%s': element type %d not supported", name,
                     (int)in->elem_type);
  if (in->rank > ACTX_ORT_MAX_RANK)
    return set_error(err, ORT_INVALID_ARGUMENT, "input '%s': rank %zu", name, in->rank);
  size_t count = 1;
  for (size_t d = 0; d < in->rank; d++) {
    if (in->dims[d] < 0 || (in->dims[d] > 0 && count > SIZE_MAX / elem_size / (size_t)in->dims[d]))
      return set_error(err, ORT_INVALID_ARGUMENT, "input '%s': dimension %zu is %lld", name, d,
                       (long long)in->dims[d]);
    count *= (size_t)in->dims[d];
  }
  if (count > 0 && in->data == NULL)
    return set_error(err, ORT_INVALID_ARGUMENT, "input '%s': data is NULL", name);
  char what[192];
  snprintf(what, sizeof what, "CreateTensorWithDataAsOrtValue(%s)", name);
  /* ORT takes a non-const pointer but does not write graph inputs. */
  return actx_ort_check(g_api->CreateTensorWithDataAsOrtValue(s->cpu_memory, in->data,
                                                              count * elem_size, in->dims, in->rank,
                                                              in->elem_type, value),
                        what, err);
}

/* Copies one output OrtValue into t (malloc'ed data). */
static int take_output(const OrtValue *value, const char *name, actx_ort_tensor *t,
                       actx_ort_error *err) {
  char what[192];
  snprintf(what, sizeof what, "reading output '%s'", name);
  t->name = name;
  int is_tensor = 0;
  if (actx_ort_check(g_api->IsTensor(value, &is_tensor), what, err) != 0)
    return -1;
  if (!is_tensor)
    return set_error(err, ORT_NOT_IMPLEMENTED, "%s: not a tensor", what);
  OrtTensorTypeAndShapeInfo *shape = NULL;
  if (actx_ort_check(g_api->GetTensorTypeAndShape(value, &shape), what, err) != 0)
    return -1;
  int rc = read_shape(g_api, shape, t, what, err);
  if (rc == 0)
    rc = actx_ort_check(g_api->GetTensorShapeElementCount(shape, &t->count), what, err);
  g_api->ReleaseTensorTypeAndShapeInfo(shape);
  if (rc != 0)
    return -1;
  if (t->elem_type == ONNX_TENSOR_ELEMENT_DATA_TYPE_STRING)
    return set_error(err, ORT_NOT_IMPLEMENTED, "%s: string tensors are not supported", what);
  if (actx_ort_check(g_api->GetTensorSizeInBytes(value, &t->bytes), what, err) != 0)
    return -1;
  const void *data = NULL;
  if (actx_ort_check(g_api->GetTensorData(value, &data), what, err) != 0)
    return -1;
  t->data = malloc(t->bytes > 0 ? t->bytes : 1);
  if (t->data == NULL)
    return set_error(err, ORT_FAIL, "%s: out of memory (%zu bytes)", what, t->bytes);
  if (t->bytes > 0)
    memcpy(t->data, data, t->bytes);
  return 0;
}

int actx_ort_run(actx_ort_session *s, size_t n_inputs, const actx_ort_tensor *inputs,
                 actx_ort_tensor **outputs, size_t *n_outputs, actx_ort_error *err) {
  if (s == NULL || outputs == NULL || n_outputs == NULL || (n_inputs > 0 && inputs == NULL))
    return set_error(err, ORT_INVALID_ARGUMENT, "run: NULL argument");
  *outputs = NULL;
  *n_outputs = 0;
  if (n_inputs > s->n_inputs)
    return set_error(err, ORT_INVALID_ARGUMENT, "run: %zu inputs for a model with %zu", n_inputs,
                     s->n_inputs);
  OrtValue **in_values = calloc(n_inputs + 1, sizeof *in_values);
  const char **in_names = calloc(n_inputs + 1, sizeof *in_names);
  OrtValue **out_values = calloc(s->n_outputs + 1, sizeof *out_values);
  actx_ort_tensor *result = calloc(s->n_outputs + 1, sizeof *result);
  int rc = 0;
  if (in_values == NULL || in_names == NULL || out_values == NULL || result == NULL)
    rc = set_error(err, ORT_FAIL, "run: out of memory");
  for (size_t i = 0; rc == 0 && i < n_inputs; i++) {
    in_names[i] = inputs[i].name != NULL ? inputs[i].name : s->input_names[i];
    rc = make_input(s, &inputs[i], i, &in_values[i], err);
  }
  if (rc == 0)
    rc = actx_ort_check(g_api->Run(s->session, NULL, in_names, (const OrtValue *const *)in_values,
                                   n_inputs, (const char *const *)s->output_names, s->n_outputs,
                                   out_values),
                        "Run", err);
  for (size_t i = 0; rc == 0 && i < s->n_outputs; i++)
    rc = take_output(out_values[i], s->output_names[i], &result[i], err);
  for (size_t i = 0; in_values != NULL && i < n_inputs; i++)
    if (in_values[i] != NULL)
      g_api->ReleaseValue(in_values[i]);
  for (size_t i = 0; out_values != NULL && i < s->n_outputs; i++)
    if (out_values[i] != NULL)
      g_api->ReleaseValue(out_values[i]);
  free(in_values);
  free(in_names);
  free(out_values);
  if (rc != 0) {
    actx_ort_tensors_free(result, s->n_outputs);
    return -1;
  }
  *outputs = result;
  *n_outputs = s->n_outputs;
  return 0;
}

/* ---- EP assignment ------------------------------------------------------------------------- */

int actx_ort_session_assignments(const actx_ort_session *s, actx_ort_assignment **out, size_t *n,
                                 actx_ort_error *err) {
  if (s == NULL || out == NULL || n == NULL)
    return set_error(err, ORT_INVALID_ARGUMENT, "assignments: NULL argument");
  *out = NULL;
  *n = 0;
  const OrtEpAssignedSubgraph *const *subgraphs = NULL;
  size_t n_subgraphs = 0;
  if (actx_ort_check(g_api->Session_GetEpGraphAssignmentInfo(s->session, &subgraphs, &n_subgraphs),
                     "Session_GetEpGraphAssignmentInfo (was record_assignments set?)", err) != 0)
    return -1;
  actx_ort_assignment *list = NULL;
  size_t count = 0;
  for (size_t g = 0; g < n_subgraphs; g++) {
    const char *ep = NULL;
    const OrtEpAssignedNode *const *nodes = NULL;
    size_t n_nodes = 0;
    if (actx_ort_check(g_api->EpAssignedSubgraph_GetEpName(subgraphs[g], &ep),
                       "EpAssignedSubgraph_GetEpName", err) != 0 ||
        actx_ort_check(g_api->EpAssignedSubgraph_GetNodes(subgraphs[g], &nodes, &n_nodes),
                       "EpAssignedSubgraph_GetNodes", err) != 0)
      goto fail;
    actx_ort_assignment *grown = realloc(list, (count + n_nodes + 1) * sizeof *list);
    if (grown == NULL) {
      set_error(err, ORT_FAIL, "assignments: out of memory");
      goto fail;
    }
    list = grown;
    for (size_t k = 0; k < n_nodes; k++) {
      const char *name = NULL, *domain = NULL, *op = NULL;
      if (actx_ort_check(g_api->EpAssignedNode_GetName(nodes[k], &name), "EpAssignedNode_GetName",
                         err) != 0 ||
          actx_ort_check(g_api->EpAssignedNode_GetDomain(nodes[k], &domain),
                         "EpAssignedNode_GetDomain", err) != 0 ||
          actx_ort_check(g_api->EpAssignedNode_GetOperatorType(nodes[k], &op),
                         "EpAssignedNode_GetOperatorType", err) != 0)
        goto fail;
      actx_ort_assignment *a = &list[count++];
      a->subgraph = g;
      snprintf(a->ep_name, sizeof a->ep_name, "%s", ep != NULL ? ep : "");
      snprintf(a->node_name, sizeof a->node_name, "%s", name != NULL ? name : "");
      snprintf(a->domain, sizeof a->domain, "%s", domain != NULL ? domain : "");
      snprintf(a->op_type, sizeof a->op_type, "%s", op != NULL ? op : "");
    }
  }
  *out = list;
  *n = count;
  return 0;
fail:
  free(list);
  return -1;
}

long actx_ort_count_nodes_on(const actx_ort_session *session, const char *ep_name,
                             actx_ort_error *err) {
  if (ep_name == NULL)
    return set_error(err, ORT_INVALID_ARGUMENT, "count nodes: ep_name is NULL");
  actx_ort_assignment *list = NULL;
  size_t n = 0;
  if (actx_ort_session_assignments(session, &list, &n, err) != 0)
    return -1;
  long count = 0;
  for (size_t i = 0; i < n; i++)
    count += strcmp(list[i].ep_name, ep_name) == 0;
  free(list);
  return count;
}

long actx_ort_count_subgraphs_on(const actx_ort_session *session, const char *ep_name,
                                 actx_ort_error *err) {
  if (ep_name == NULL)
    return set_error(err, ORT_INVALID_ARGUMENT, "count subgraphs: ep_name is NULL");
  actx_ort_assignment *list = NULL;
  size_t n = 0;
  if (actx_ort_session_assignments(session, &list, &n, err) != 0)
    return -1;
  long count = 0;
  for (size_t i = 0; i < n; i++) /* a subgraph's nodes are listed together */
    count += strcmp(list[i].ep_name, ep_name) == 0 &&
             (i == 0 || list[i - 1].subgraph != list[i].subgraph);
  free(list);
  return count;
}
