/* Which claims GetCapability hands ORT as one compiled node, and how Compile recognises them.
 *
 * ORT's partitioner checks every group of nodes an EP asks to fuse against the whole graph, so
 * one group per claimed node made session creation grow with the cube of their number (a chain
 * of 2000 claimed nodes took 67 s where ORT alone takes 0.03 s). So claims that follow one
 * another form one group, computed in sequence by one node: a claim joins the group of the
 * claim whose y is its x when that y feeds nothing else and is no graph output, and when every
 * other input it reads (a bias, a constant) is produced by no node at all or by one of its own,
 * or is that same y (BiasGelu(t, t): the step reads its own input as the bias).
 * Then no path leaves the group and comes back, which ORT's partitioner would refuse, and the
 * group has one output, the last claim's y, which something must read (or be a graph output):
 * a claim whose result nothing reads joins no group. Each activation still runs as its own
 * actx_compute() call on the previous one's output, so the bits are those of separate nodes; in
 * float16, those of ORT alone's float32 island: every step in float32, rounded once (compute.c). */
#include <stdlib.h>
#include <string.h>

#include "actx_ep.h"

/* FNV-1a, over bytes and over strings with their terminating NUL (so "ab","c" != "a","bc"). */
#define FNV_OFFSET 0xcbf29ce484222325ull
#define FNV_PRIME 0x100000001b3ull

static uint64_t hash_bytes(uint64_t h, const void *data, size_t n) {
  const unsigned char *p = data;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * FNV_PRIME;
  return h;
}

static uint64_t hash_string(uint64_t h, const char *s) {
  return s != NULL ? hash_bytes(h, s, strlen(s) + 1) : hash_bytes(h, "\xff", 1);
}

static OrtStatus *hash_values(const OrtApi *api, uint64_t *h, const OrtValueInfo *const *values,
                              size_t n) {
  *h = hash_bytes(*h, &n, sizeof n);
  for (size_t i = 0; i < n; i++) {
    const char *name = NULL;
    OrtStatus *st = values[i] != NULL ? api->GetValueInfoName(values[i], &name) : NULL;
    if (st != NULL) return st;
    *h = hash_string(*h, name);
  }
  return NULL;
}

/* Hashes every name in the node's inputs (or outputs), however many there are. */
static OrtStatus *hash_node_values(const OrtApi *api, uint64_t *h, const OrtNode *node,
                                   bool outputs) {
  size_t n = 0;
  OrtStatus *st = outputs ? api->Node_GetNumOutputs(node, &n) : api->Node_GetNumInputs(node, &n);
  if (st != NULL) return st;
  const OrtValueInfo *small[4];
  const OrtValueInfo **values = n <= 4 ? small : malloc(n * sizeof *values);
  if (values == NULL) return actx_ep_error(api, ORT_FAIL, "out of memory reading %zu values", n);
  if (n > 0)
    st = outputs ? api->Node_GetOutputs(node, values, n) : api->Node_GetInputs(node, values, n);
  if (st == NULL) st = hash_values(api, h, values, n);
  if (values != small) free(values);
  return st;
}

typedef struct id_node {
  size_t id;
  const OrtNode *node;
} id_node;

static int by_id(const void *a, const void *b) {
  const size_t x = ((const id_node *)a)->id, y = ((const id_node *)b)->id;
  return x < y ? -1 : x > y;
}

OrtStatus *actx_ep_group_signature(const OrtApi *api, const OrtNode *const *nodes, size_t n,
                                   uint64_t *out) {
  *out = FNV_OFFSET;
  id_node *sorted = malloc((n ? n : 1) * sizeof *sorted);
  if (sorted == NULL) return actx_ep_error(api, ORT_FAIL, "out of memory sorting %zu nodes", n);
  OrtStatus *st = NULL;
  for (size_t i = 0; i < n && st == NULL; i++) {
    sorted[i].node = nodes[i];
    st = api->Node_GetId(nodes[i], &sorted[i].id);
  }
  if (st == NULL) qsort(sorted, n, sizeof *sorted, by_id);
  uint64_t h = FNV_OFFSET;
  for (size_t i = 0; i < n && st == NULL; i++) {
    const char *domain = NULL, *op_type = NULL, *name = NULL;
    if ((st = api->Node_GetDomain(sorted[i].node, &domain)) != NULL ||
        (st = api->Node_GetOperatorType(sorted[i].node, &op_type)) != NULL ||
        (st = api->Node_GetName(sorted[i].node, &name)) != NULL)
      break;
    h = hash_bytes(h, &sorted[i].id, sizeof sorted[i].id);
    h = hash_string(hash_string(hash_string(h, domain), op_type), name);
    if ((st = hash_node_values(api, &h, sorted[i].node, false)) == NULL)
      st = hash_node_values(api, &h, sorted[i].node, true);
  }
  free(sorted);
  *out = h;
  return st;
}

/* ---- chaining claims -------------------------------------------------------------------- */

struct actx_ep_node_pos {
  const OrtNode *node;
  size_t pos;
};

static int by_pointer(const void *a, const void *b) {
  const uintptr_t x = (uintptr_t)((const actx_ep_node_pos *)a)->node;
  const uintptr_t y = (uintptr_t)((const actx_ep_node_pos *)b)->node;
  return x < y ? -1 : x > y;
}

OrtStatus *actx_ep_positions_build(const OrtApi *api, const OrtNode *const *nodes, size_t n,
                                   actx_ep_positions *out) {
  out->n = n;
  out->index = malloc((n ? n : 1) * sizeof *out->index);
  if (out->index == NULL) return actx_ep_error(api, ORT_FAIL, "out of memory indexing %zu nodes", n);
  for (size_t i = 0; i < n; i++) out->index[i] = (actx_ep_node_pos){nodes[i], i};
  qsort(out->index, n, sizeof *out->index, by_pointer);
  return NULL;
}

size_t actx_ep_position(const actx_ep_positions *p, const OrtNode *node) {
  if (node == NULL || p->index == NULL) return SIZE_MAX;
  const actx_ep_node_pos key = {.node = node};
  const actx_ep_node_pos *found = bsearch(&key, p->index, p->n, sizeof key, by_pointer);
  return found != NULL ? found->pos : SIZE_MAX;
}

void actx_ep_positions_free(actx_ep_positions *p) {
  free(p->index);
  p->index = NULL;
}

/* What the chaining needs to know about the graph: each node's claim. */
typedef struct chain_state {
  const OrtApi *api;
  const actx_ep_positions *positions;
  size_t *claim_of; /* by position: the claim holding the node, or SIZE_MAX */
} chain_state;

static size_t claim_holding(const chain_state *c, const OrtNode *node) {
  const size_t pos = actx_ep_position(c->positions, node);
  return pos != SIZE_MAX ? c->claim_of[pos] : SIZE_MAX;
}

/* Whether claim b (index ib) may follow claim a in one group (the file comment's rule). */
static OrtStatus *may_follow(const chain_state *c, const actx_ep_claimed *a, const actx_ep_claimed *b,
                             size_t ib, const OrtNode *const *pool, bool *out) {
  const OrtApi *api = c->api;
  *out = false;
  bool same = false;
  OrtStatus *st = actx_ep_same_value(api, a->y, b->x, &same);
  if (st != NULL || !same) return st;
  const OrtNode *consumers[ACTX_EP_MAX_CONSUMERS];
  size_t n = 0;
  bool graph_output = false;
  if ((st = actx_ep_value_consumers(api, a->y, consumers, ACTX_EP_MAX_CONSUMERS, &n,
                                    &graph_output)) != NULL)
    return st;
  if (graph_output || n == 0 || n > ACTX_EP_MAX_CONSUMERS) return NULL;
  for (size_t i = 0; i < n; i++)
    if (claim_holding(c, consumers[i]) != ib) return NULL;
  /* b's y becomes the group's output: read by nothing, the fused node would have none, and
   * Compile could not find its record */
  bool read = false;
  if ((st = actx_ep_value_is_read(api, b->y, &read)) != NULL || !read) return st;
  /* Inside the group a's y is no input of the fused node: b can read it only as the value each
   * step is handed, as x or, where the bias is the same value (BiasGelu(t, t)), as its bias
   * too (compute.c: bias_is_x). So every other value b reads must come from outside. The bias
   * is the only other role (a subgraph's constants are folded, every other leaf is x). */
  if (b->bias != NULL) {
    const OrtNode *producer = NULL;
    if ((st = actx_ep_same_value(api, b->bias, b->x, &same)) != NULL) return st;
    if (!same && (st = actx_ep_value_producer(api, b->bias, &producer)) != NULL) return st;
    if (producer != NULL && claim_holding(c, producer) != ib) return NULL;
  }
  for (size_t k = 0; k < b->n_nodes; k++) {
    const OrtValueInfo *in[2 * ACTX_EP_MAX_FUSED_NODES];
    const size_t max = sizeof in / sizeof in[0];
    size_t n_in = 0;
    if ((st = actx_ep_node_inputs(api, pool[b->first_node + k], in, max, &n_in)) != NULL)
      return st;
    if (n_in > max) return NULL; /* never for the operators we claim */
    for (size_t j = 0; j < n_in; j++) {
      const OrtNode *producer = NULL;
      if (in[j] == NULL) continue;
      if ((st = actx_ep_same_value(api, in[j], b->x, &same)) != NULL) return st;
      if (same) continue;
      if ((st = actx_ep_value_producer(api, in[j], &producer)) != NULL) return st;
      if (producer != NULL && claim_holding(c, producer) != ib) return NULL;
    }
  }
  *out = true;
  return NULL;
}

typedef struct claim_order {
  size_t pos; /* of the node producing the claim's y */
  size_t claim;
} claim_order;

static int by_pos(const void *a, const void *b) {
  const size_t x = ((const claim_order *)a)->pos, y = ((const claim_order *)b)->pos;
  return x < y ? -1 : x > y;
}

OrtStatus *actx_ep_chain_claims(const OrtApi *api, const actx_ep_positions *positions,
                                const actx_ep_claimed *claims, size_t n_claims,
                                const OrtNode *const *pool, size_t *order, size_t *next) {
  const size_t n = positions->n;
  chain_state c = {.api = api, .positions = positions};
  c.claim_of = malloc((n ? n : 1) * sizeof *c.claim_of);
  claim_order *sorted = malloc((n_claims ? n_claims : 1) * sizeof *sorted);
  bool *is_tail = calloc(n_claims ? n_claims : 1, sizeof *is_tail);
  OrtStatus *st = NULL;
  if (c.claim_of == NULL || sorted == NULL || is_tail == NULL) {
    st = actx_ep_error(api, ORT_FAIL, "out of memory grouping %zu claims", n_claims);
    goto done;
  }
  for (size_t i = 0; i < n; i++) c.claim_of[i] = SIZE_MAX;
  for (size_t k = 0; k < n_claims; k++)
    for (size_t i = 0; i < claims[k].n_nodes; i++) {
      const size_t pos = actx_ep_position(positions, pool[claims[k].first_node + i]);
      if (pos != SIZE_MAX) c.claim_of[pos] = k;
    }
  /* in the order of the graph: a claim comes after the one whose output it reads */
  for (size_t k = 0; k < n_claims && st == NULL; k++) {
    const OrtNode *producer = NULL;
    st = actx_ep_value_producer(api, claims[k].y, &producer);
    sorted[k] = (claim_order){actx_ep_position(positions, producer), k};
  }
  if (st != NULL) goto done;
  qsort(sorted, n_claims, sizeof *sorted, by_pos);
  for (size_t i = 0; i < n_claims && st == NULL; i++) {
    const size_t b = sorted[i].claim;
    order[i] = b;
    next[b] = SIZE_MAX;
    const OrtNode *producer = NULL;
    if ((st = actx_ep_value_producer(api, claims[b].x, &producer)) != NULL) break;
    const size_t a = claim_holding(&c, producer);
    bool follows = false;
    if (a != SIZE_MAX && a != b && is_tail[a] &&
        (st = may_follow(&c, &claims[a], &claims[b], b, pool, &follows)) != NULL)
      break;
    if (follows) {
      next[a] = b;
      is_tail[a] = false;
    }
    is_tail[b] = true;
  }
done:
  free(c.claim_of);
  free(sorted);
  free(is_tail);
  return st;
}
