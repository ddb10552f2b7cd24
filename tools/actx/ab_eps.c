/* ab_eps.c — the arms' EPs and session options (see ab_eps.h). */
#define _XOPEN_SOURCE 700 /* realpath */
#include "ab_eps.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define ACTX_EP "actx"

int actx_ab_ep_set_option(actx_ab_ep *ep, const char *key, const char *value) {
  if (strlen(key) >= sizeof ep->keys[0] || strlen(value) >= sizeof ep->values[0])
    return -1;
  size_t i = 0;
  while (i < ep->n_options && strcmp(ep->keys[i], key) != 0)
    i++;
  if (i == ACTX_AB_MAX_EP_OPTIONS)
    return -1;
  snprintf(ep->keys[i], sizeof ep->keys[i], "%s", key);
  snprintf(ep->values[i], sizeof ep->values[i], "%s", value);
  if (i == ep->n_options)
    ep->n_options++;
  return 0;
}

const char *actx_ab_ep_option(const actx_ab_ep *ep, const char *key) {
  for (size_t i = 0; i < ep->n_options; i++)
    if (strcmp(ep->keys[i], key) == 0)
      return ep->values[i];
  return NULL;
}

void actx_ab_ep_actx(actx_ab_ep *ep, const char *path, const char *policy) {
  memset(ep, 0, sizeof *ep);
  snprintf(ep->label, sizeof ep->label, ACTX_EP);
  snprintf(ep->path, sizeof ep->path, "%s", path);
  snprintf(ep->ep_name, sizeof ep->ep_name, ACTX_EP);
  actx_ab_ep_set_option(ep, "policy", policy);
}

/* Labels the tables already use for their own arms: a peer by one of these names would make
 * two CSV columns of one name. */
static const char *const k_reserved_names[] = {"ort", "actx", "null"};

static int check_peer_name(const char *name, size_t len, char *err, size_t err_size) {
  if (len == 0 || len > ACTX_AB_PEER_NAME_MAX) {
    snprintf(err, err_size, "--peer: NAME must be 1 to %d characters, not '%.*s'",
             ACTX_AB_PEER_NAME_MAX, (int)len, name);
    return -1;
  }
  for (size_t i = 0; i < len; i++)
    if (!isalnum((unsigned char)name[i]) && name[i] != '_' && name[i] != '-') {
      snprintf(err, err_size, "--peer: NAME '%.*s' may hold letters, digits, '-' and '_' only "
               "(it names table and CSV columns)", (int)len, name);
      return -1;
    }
  for (size_t i = 0; i < sizeof k_reserved_names / sizeof *k_reserved_names; i++)
    if (strlen(k_reserved_names[i]) == len && strncasecmp(name, k_reserved_names[i], len) == 0) {
      snprintf(err, err_size, "--peer: NAME '%.*s' is taken by an arm of the table; choose "
               "another", (int)len, name);
      return -1;
    }
  return 0;
}

static actx_ab_ep *find_peer(actx_ab_ep *peers, size_t n, const char *name, size_t len) {
  for (size_t i = 0; i < n; i++)
    if (strlen(peers[i].label) == len && strncmp(peers[i].label, name, len) == 0)
      return &peers[i];
  return NULL;
}

int actx_ab_peer_parse(const char *arg, actx_ab_ep *peers, size_t *n, char *err,
                       size_t err_size) {
  const char *eq = strchr(arg, '=');
  if (eq == NULL || eq[1] == '\0') {
    snprintf(err, err_size, "--peer '%s': expected NAME=PATH (e.g. --peer mine=/path/to/"
             "libmy_ep.so)", arg);
    return -1;
  }
  const size_t len = (size_t)(eq - arg);
  if (check_peer_name(arg, len, err, err_size) != 0)
    return -1;
  if (find_peer(peers, *n, arg, len) != NULL) {
    snprintf(err, err_size, "--peer: NAME '%.*s' is given twice", (int)len, arg);
    return -1;
  }
  if (*n == ACTX_AB_MAX_PEERS) {
    snprintf(err, err_size, "--peer: at most %d peers", ACTX_AB_MAX_PEERS);
    return -1;
  }
  if (strlen(eq + 1) >= sizeof peers[0].path) {
    snprintf(err, err_size, "--peer %.*s: path too long", (int)len, arg);
    return -1;
  }
  actx_ab_ep *p = &peers[(*n)++];
  memset(p, 0, sizeof *p);
  snprintf(p->label, sizeof p->label, "%.*s", (int)len, arg);
  snprintf(p->path, sizeof p->path, "%s", eq + 1);
  p->cpu_devices_only = true;
  return 0;
}

int actx_ab_peer_option_parse(const char *arg, actx_ab_ep *peers, size_t n, char *err,
                              size_t err_size) {
  const char *colon = strchr(arg, ':');
  const char *eq = colon != NULL ? strchr(colon + 1, '=') : NULL;
  if (colon == NULL || eq == NULL || eq == colon + 1) {
    snprintf(err, err_size, "--peer-option '%s': expected NAME:key=value", arg);
    return -1;
  }
  actx_ab_ep *p = find_peer(peers, n, arg, (size_t)(colon - arg));
  if (p == NULL) {
    snprintf(err, err_size, "--peer-option '%s': no --peer named '%.*s'", arg,
             (int)(colon - arg), arg);
    return -1;
  }
  char key[sizeof p->keys[0]];
  const size_t key_len = (size_t)(eq - colon - 1);
  if (key_len < sizeof key) {
    snprintf(key, sizeof key, "%.*s", (int)key_len, colon + 1);
    if (actx_ab_ep_set_option(p, key, eq + 1) == 0)
      return 0;
  }
  snprintf(err, err_size, "--peer-option '%s': key or value too long, or more than %d options",
           arg, ACTX_AB_MAX_EP_OPTIONS);
  return -1;
}

int actx_ab_peer_load(actx_ab_ep *p, char *err, size_t err_size) {
  char resolved[PATH_MAX];
  if (realpath(p->path, resolved) == NULL) {
    snprintf(err, err_size, "--peer %s=%s: %s", p->label, p->path, strerror(errno));
    return -1;
  }
  if (access(resolved, R_OK) != 0) {
    snprintf(err, err_size, "--peer %s=%s: not readable: %s", p->label, p->path,
             strerror(errno));
    return -1;
  }
  snprintf(p->path, sizeof p->path, "%s", resolved);
  actx_ort_library_eps eps;
  actx_ort_error e = {0};
  if (actx_ort_register_named_ep_library(p->path, p->label, &eps, &e) != 0) {
    snprintf(err, err_size, "--peer %s=%s: not a plugin EP library ORT can load: %s", p->label,
             p->path, e.message);
    return -1;
  }
  const char *chosen = NULL;
  char seen[256] = "";
  for (size_t i = 0; i < eps.n; i++) {
    size_t used = strlen(seen);
    snprintf(seen + used, sizeof seen - used, "%s%s (%zu device%s, %zu CPU)", used ? ", " : "",
             eps.eps[i].name, eps.eps[i].devices, eps.eps[i].devices == 1 ? "" : "s",
             eps.eps[i].cpu_devices);
    if (chosen == NULL && eps.eps[i].cpu_devices > 0)
      chosen = eps.eps[i].name;
  }
  if (chosen == NULL && eps.n > 0) {
    snprintf(err, err_size, "--peer %s=%s: the library offers no CPU device (its EPs: %s)",
             p->label, p->path, seen);
    return -1;
  }
  if (chosen == NULL) {
    /* an EP's factory chooses the devices it serves, some by vendor: say what was offered */
    char hardware[512];
    if (actx_ort_describe_hardware(hardware, sizeof hardware, NULL) != 0)
      snprintf(hardware, sizeof hardware, "unknown");
    snprintf(err, err_size, "--peer %s=%s: ORT loaded the library, but its EP takes none of this "
             "machine's devices (ORT offered: %s)", p->label, p->path, hardware);
    return -1;
  }
  snprintf(p->ep_name, sizeof p->ep_name, "%s", chosen);
  return 0;
}

void actx_ab_session_config_init(actx_ab_session_config *c, const actx_ab_ep *ep, long threads,
                                 bool spin) {
  /* Every arm's session lives in this process with its own intra-op pool, whose threads spin
   * for a while after each Run(): an idle arm's spinning threads would take the cores from the
   * arm being timed. Measured on the BERT blocks at 2 threads on 2 cores: with spinning, the
   * null control (ORT alone against ORT alone) strayed to 0.84 and runs took 1.5-3x as long;
   * without, it stayed within 1.00-1.02. All arms get the same setting. */
  static const char *const config_keys[] = {"session.intra_op.allow_spinning"};
  static const char *const config_values[] = {"0"};
  memset(c, 0, sizeof *c);
  c->opt.intra_op_threads = (int)threads;
  if (threads != 1 && !spin) {
    c->opt.n_config = 1;
    c->opt.config_keys = config_keys;
    c->opt.config_values = config_values;
  }
  if (ep == NULL)
    return;
  for (size_t i = 0; i < ep->n_options; i++) {
    c->ep_keys[i] = ep->keys[i];
    c->ep_values[i] = ep->values[i];
  }
  c->opt.ep_library_path = ep->path;
  c->opt.ep_name = ep->ep_name;
  c->opt.ep_cpu_devices_only = ep->cpu_devices_only;
  c->opt.n_ep_options = ep->n_options;
  c->opt.ep_option_keys = c->ep_keys;
  c->opt.ep_option_values = c->ep_values;
  c->opt.record_assignments = true;
}
