/* The bfloat16 service's op facts and kernels: the row of bf16_ops.h an op has, and a kernel's
 * life (create, pack, shapes, run, destroy) handed to its family after the checks every op
 * shares. */
#include <stdlib.h>
#include <string.h>

#include "bf16_family.h"
#include "lut.h"

#define ACTX_BF16_INFO_(name, e, dom, fam, min_in, max_in, min_out, max_out, ...) \
  [ACTX_BF16_OP_##e] = {#name, dom, {__VA_ARGS__}, min_in, max_in, min_out, max_out},
static const actx_bf16_op_info op_infos[ACTX_BF16_OP_COUNT] = {ACTX_BF16_OPS(ACTX_BF16_INFO_)};
#undef ACTX_BF16_INFO_

#define ACTX_BF16_FAMILY_OF_(name, e, dom, fam, ...) [ACTX_BF16_OP_##e] = &actx_bf16_family_##fam,
static const actx_bf16_family *const op_families[ACTX_BF16_OP_COUNT] = {
    ACTX_BF16_OPS(ACTX_BF16_FAMILY_OF_)};
#undef ACTX_BF16_FAMILY_OF_

struct actx_bf16_kernel {
  const actx_bf16_family *family;
  void *state;
};

const actx_bf16_op_info *actx_bf16_op_info_get(actx_bf16_op op) {
  return (unsigned)op < ACTX_BF16_OP_COUNT ? &op_infos[op] : NULL;
}

actx_bf16_op actx_bf16_op_find(const char *domain, const char *op_type) {
  if (domain == NULL || strcmp(domain, "ai.onnx") == 0) domain = "";
  if (op_type == NULL) return ACTX_BF16_OP_COUNT;
  for (int op = 0; op < ACTX_BF16_OP_COUNT; op++)
    if (strcmp(op_infos[op].name, op_type) == 0 && strcmp(op_infos[op].domain, domain) == 0)
      return (actx_bf16_op)op;
  return ACTX_BF16_OP_COUNT;
}

actx_status actx_bf16_kernel_create(const actx_bf16_node *node, actx_bf16_kernel **out,
                                    const char **why) {
  static const char *unused;
  if (why == NULL) why = &unused;
  *why = "";
  if (out == NULL) return actx_bf16_fail(why, "no place for the kernel");
  *out = NULL;
  if (node == NULL) return actx_bf16_fail(why, "no node");
  const actx_bf16_op_info *info = actx_bf16_op_info_get(node->op);
  if (info == NULL) return actx_bf16_fail(why, "operator not served in bfloat16");
  bool version_served = false;
  for (size_t v = 0; v < 4 && info->since[v] != 0; v++)
    version_served |= info->since[v] == node->since_version;
  if (!version_served) return actx_bf16_fail(why, "operator version not served in bfloat16");
  if (node->n_inputs < (size_t)info->min_inputs || node->n_inputs > (size_t)info->max_inputs ||
      node->n_inputs > ACTX_BF16_MAX_INPUTS)
    return actx_bf16_fail(why, "wrong number of inputs");
  if (node->n_outputs < (size_t)info->min_outputs || node->n_outputs > (size_t)info->max_outputs ||
      node->n_outputs > ACTX_BF16_MAX_OUTPUTS)
    return actx_bf16_fail(why, "wrong number of outputs");
  for (size_t i = 0; i < (size_t)info->min_inputs; i++)
    if (!node->input_present[i]) return actx_bf16_fail(why, "a required input is missing");
  actx_bf16_kernel *k = calloc(1, sizeof *k);
  if (k == NULL) return ACTX_ERROR_OUT_OF_MEMORY;
  k->family = op_families[node->op];
  const actx_status st = k->family->create(node, &k->state, why);
  if (st != ACTX_OK) {
    free(k);
    return st;
  }
  *out = k;
  return ACTX_OK;
}

actx_status actx_bf16_kernel_pack(actx_bf16_kernel *k, size_t input, const actx_tensor *value,
                                  bool *packed, const char **why) {
  static const char *unused;
  if (why == NULL) why = &unused;
  *why = "";
  if (packed != NULL) *packed = false;
  if (k == NULL || value == NULL || packed == NULL) return actx_bf16_fail(why, "NULL argument");
  if (k->family->pack == NULL) return ACTX_OK;
  return k->family->pack(k->state, input, value, packed, why);
}

actx_status actx_bf16_kernel_shapes(const actx_bf16_kernel *k, const actx_tensor *in,
                                    size_t n_in, actx_tensor *out, size_t n_out,
                                    const char **why) {
  static const char *unused;
  if (why == NULL) why = &unused;
  *why = "";
  if (k == NULL || (n_in > 0 && in == NULL) || (n_out > 0 && out == NULL))
    return actx_bf16_fail(why, "NULL argument");
  return k->family->shapes(k->state, in, n_in, out, n_out, why);
}

actx_status actx_bf16_kernel_run(const actx_bf16_kernel *k, const actx_tensor *in, size_t n_in,
                                 actx_tensor *out, size_t n_out, const actx_parallel *par,
                                 const char **why) {
  static const char *unused;
  if (why == NULL) why = &unused;
  *why = "";
  if (k == NULL || (n_in > 0 && in == NULL) || (n_out > 0 && out == NULL))
    return actx_bf16_fail(why, "NULL argument");
  return k->family->run(k->state, in, n_in, out, n_out, par, why);
}

void actx_bf16_kernel_destroy(actx_bf16_kernel *k) {
  if (k == NULL) return;
  if (k->family->destroy != NULL) k->family->destroy(k->state);
  free(k);
}

int64_t actx_shape_elements(const actx_shape *s) {
  int64_t n = 1;
  for (size_t i = 0; i < s->rank; i++) n *= s->dims[i];
  return n;
}

bool actx_shape_broadcast(const actx_shape *a, const actx_shape *b, actx_shape *out) {
  const size_t rank = a->rank > b->rank ? a->rank : b->rank;
  if (rank > ACTX_BF16_MAX_RANK) return false;
  actx_shape r = {.rank = rank};
  for (size_t i = 0; i < rank; i++) {
    const int64_t da = i < rank - a->rank ? 1 : a->dims[i - (rank - a->rank)];
    const int64_t db = i < rank - b->rank ? 1 : b->dims[i - (rank - b->rank)];
    if (da != db && da != 1 && db != 1) return false;
    r.dims[i] = da == 1 ? db : da;
  }
  *out = r;
  return true;
}

bool actx_bf16_kernel_chain_form(const actx_bf16_kernel *k, actx_bf16_chain_form *form) {
  return k != NULL && k->family->chain_form != NULL && k->family->chain_form(k->state, form);
}

/* The table of a table-driven unary op's kernel; NULL for any other. */
static const uint16_t *activation_table(const actx_bf16_kernel *k) {
  actx_bf16_chain_form form;
  return actx_bf16_kernel_chain_form(k, &form) && form.kind == ACTX_CHAIN_TABLE ? form.table
                                                                                : NULL;
}

bool actx_bf16_kernel_is_activation(const actx_bf16_kernel *k) {
  return activation_table(k) != NULL;
}

static bool fuse_table(actx_bf16_kernel *k, const uint16_t *table) {
  return k != NULL && table != NULL && k->family->fuse_table != NULL &&
         k->family->fuse_table(k->state, table);
}

bool actx_bf16_kernel_fuse_activation(actx_bf16_kernel *k, const actx_bf16_kernel *activation) {
  return fuse_table(k, activation_table(activation));
}

bool actx_bf16_kernel_fuse_exact(actx_bf16_kernel *k, actx_op op) {
  return k != NULL && k->family->fuse_table != NULL && fuse_table(k, actx_lut_get(op, ACTX_BF16));
}

bool actx_bf16_kernel_chains(const actx_bf16_kernel *k) {
  actx_bf16_chain_form form;
  return actx_bf16_kernel_chain_form(k, &form);
}
