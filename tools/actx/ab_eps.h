/* ab_eps.h — the plugin EPs `actx ab` puts in front of ORT's CPU EP, and the session options
 * every arm is created with.
 *
 * An arm is ORT alone or ORT with one plugin EP: actx (libactx_ep.so, with its policy) or a
 * peer, any other plugin EP library the user names with --peer NAME=PATH, registered with ORT
 * under NAME, whose CPU devices are appended with SessionOptionsAppendExecutionProvider_V2 and
 * the options of --peer-option NAME:key=value (none by default). */
#ifndef ACTX_TOOLS_AB_EPS_H
#define ACTX_TOOLS_AB_EPS_H

#include <stdbool.h>
#include <stddef.h>

#include "host.h"

#define ACTX_AB_MAX_PEERS 4
#define ACTX_AB_MAX_EP_OPTIONS 8
/* A peer's NAME labels table and CSV columns: letters, digits, '-' and '_', this long at most. */
#define ACTX_AB_PEER_NAME_MAX 16

typedef struct actx_ab_ep {
  char label[ACTX_AB_PEER_NAME_MAX + 1]; /* "actx", or the peer's NAME */
  char path[4096];                       /* the library, absolute */
  char ep_name[64];                      /* the EP its devices report */
  bool cpu_devices_only;
  size_t n_options;
  char keys[ACTX_AB_MAX_EP_OPTIONS][64];
  char values[ACTX_AB_MAX_EP_OPTIONS][256];
} actx_ab_ep;

/* Sets (or replaces) a provider option. 0, or -1 when the table is full or a string too long. */
int actx_ab_ep_set_option(actx_ab_ep *ep, const char *key, const char *value);
/* The value of a provider option, or NULL. */
const char *actx_ab_ep_option(const actx_ab_ep *ep, const char *key);

/* The actx arm's EP: the library at path (absolute), EP "actx", option policy. */
void actx_ab_ep_actx(actx_ab_ep *ep, const char *path, const char *policy);

/* --peer NAME=PATH: a new peer in peers[*n] (the library is not touched yet). 0, or -1 with a
 * message in err (bad syntax, bad or duplicate NAME, too many peers). */
int actx_ab_peer_parse(const char *arg, actx_ab_ep *peers, size_t *n, char *err, size_t err_size);
/* --peer-option NAME:key=value for a peer parsed before. 0, or -1 with a message. */
int actx_ab_peer_option_parse(const char *arg, actx_ab_ep *peers, size_t n, char *err,
                              size_t err_size);
/* Resolves the peer's path, registers the library with ORT under its NAME and picks its EP: the
 * one EP with a CPU device among those the library brought. 0, or -1 with a message (missing
 * file, not a plugin EP library, no CPU device). */
int actx_ab_peer_load(actx_ab_ep *peer, char *err, size_t err_size);

/* What one session is created with: ORT alone (ep NULL) or ORT + ep, intra-op threads, and
 * whether those threads spin between runs. Holds the pointers opt points at: keep it while the
 * session is being created. */
typedef struct actx_ab_session_config {
  actx_ort_session_options opt;
  const char *ep_keys[ACTX_AB_MAX_EP_OPTIONS], *ep_values[ACTX_AB_MAX_EP_OPTIONS];
} actx_ab_session_config;

void actx_ab_session_config_init(actx_ab_session_config *c, const actx_ab_ep *ep, long threads,
                                 bool spin);

#endif /* ACTX_TOOLS_AB_EPS_H */
