/* Provider options. ORT copies the options given to SessionOptionsAppendExecutionProvider_V2
 * into the session config as ep.<ep name>.<key>, so reading the session config under
 * ep.actx. sees both those and entries set directly with AddSessionConfigEntry. One of ORT's own
 * entries matters too: session.disable_cpu_ep_fallback, which ORT reads as on when it is "1"
 * (anything else is off, as in ORT). */
#include <string.h>

#include "actx_ep.h"

typedef struct policy_name {
  const char *name;
  actx_ep_policy_mode mode;
} policy_name;

static const policy_name policy_names[] = {
    {"auto", ACTX_EP_POLICY_AUTO},
    {"all", ACTX_EP_POLICY_ALL},
    {"none", ACTX_EP_POLICY_NONE},
};
#define N_POLICY_NAMES (sizeof policy_names / sizeof policy_names[0])

const char *actx_ep_policy_mode_name(actx_ep_policy_mode mode) {
  for (size_t i = 0; i < N_POLICY_NAMES; i++)
    if (policy_names[i].mode == mode) return policy_names[i].name;
  return "unknown";
}

static OrtStatus *parse_policy(const OrtApi *api, const char *key, const char *value,
                               actx_ep_options *out) {
  for (size_t i = 0; i < N_POLICY_NAMES; i++) {
    if (strcmp(value, policy_names[i].name) == 0) {
      out->policy = policy_names[i].mode;
      return NULL;
    }
  }
  return actx_ep_error(api, ORT_INVALID_ARGUMENT,
                       "option '%s' has value '%s'; expected auto, all or none", key, value);
}

/* One known option: its key after the prefix and how to read its value. */
typedef struct option_def {
  const char *key;
  OrtStatus *(*parse)(const OrtApi *api, const char *key, const char *value, actx_ep_options *out);
} option_def;

static const option_def option_defs[] = {
    {"policy", parse_policy},
};
#define N_OPTION_DEFS (sizeof option_defs / sizeof option_defs[0])

OrtStatus *actx_ep_options_read(const OrtApi *api, const OrtSessionOptions *session_options,
                                actx_ep_options *out) {
  const actx_ep_options defaults = {.policy = ACTX_EP_POLICY_AUTO, .cpu_fallback_disabled = false};
  *out = defaults;
  if (session_options == NULL) return NULL;

  OrtKeyValuePairs *entries = NULL;
  OrtStatus *status = api->GetSessionOptionsConfigEntries(session_options, &entries);
  if (status != NULL) return status;

  const char *const *keys = NULL, *const *values = NULL;
  size_t n = 0;
  api->GetKeyValuePairs(entries, &keys, &values, &n);
  const size_t prefix_len = strlen(ACTX_EP_OPTION_PREFIX);
  for (size_t i = 0; i < n && status == NULL; i++) {
    if (strcmp(keys[i], ACTX_EP_DISABLE_CPU_FALLBACK_KEY) == 0)
      out->cpu_fallback_disabled = values[i] != NULL && strcmp(values[i], "1") == 0;
    if (strncmp(keys[i], ACTX_EP_OPTION_PREFIX, prefix_len) != 0) continue;
    const char *key = keys[i] + prefix_len;
    const option_def *def = NULL;
    for (size_t d = 0; d < N_OPTION_DEFS; d++)
      if (strcmp(key, option_defs[d].key) == 0) def = &option_defs[d];
    if (def == NULL)
      status = actx_ep_error(api, ORT_INVALID_ARGUMENT,
                             "unknown option '%s' (session config key '%s'); known: policy", key,
                             keys[i]);
    else
      status = def->parse(api, key, values[i] != NULL ? values[i] : "", out);
  }
  api->ReleaseKeyValuePairs(entries);
  if (status != NULL) *out = defaults;
  return status;
}
