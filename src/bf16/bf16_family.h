/* bf16_family.h — what one op family (bf16_<family>.c) implements for bf16_kernel.c: the four
 * steps of a kernel's life, over the family's own state. Internal to src/bf16/. */
#ifndef ACTX_BF16_FAMILY_H
#define ACTX_BF16_FAMILY_H

#include "bf16.h"

/* What one step of a chain computes: a binary op of two operands, Clip of operand 0 between
 * operands 1 and 2, or a lookup in a unary op's table of all 65,536 results. */
typedef enum actx_bf16_chain_kind {
  ACTX_CHAIN_ADD,
  ACTX_CHAIN_SUB,
  ACTX_CHAIN_MUL,
  ACTX_CHAIN_DIV,
  ACTX_CHAIN_PRELU,
  ACTX_CHAIN_CLIP,
  ACTX_CHAIN_TABLE
} actx_bf16_chain_kind;
typedef struct actx_bf16_chain_form {
  actx_bf16_chain_kind kind;
  const uint16_t *table; /* ACTX_CHAIN_TABLE: the kernel's, alive as long as it is */
} actx_bf16_chain_form;

typedef struct actx_bf16_family {
  /* Checks node (the generic checks of arity and op are done) and makes the family's state:
   * defaults applied, attributes validated, tables built. */
  actx_status (*create)(const actx_bf16_node *node, void **state, const char **why);
  /* A constant input; NULL when the family packs nothing (then *packed is false). */
  actx_status (*pack)(void *state, size_t input, const actx_tensor *value, bool *packed,
                      const char **why);
  actx_status (*shapes)(const void *state, const actx_tensor *in, size_t n_in, actx_tensor *out,
                        size_t n_out, const char **why);
  actx_status (*run)(const void *state, const actx_tensor *in, size_t n_in, actx_tensor *out,
                     size_t n_out, const actx_parallel *par, const char **why);
  void (*destroy)(void *state);
  /* An element-wise family's op as one step of a chain (bf16_chain.c): false where this node
   * cannot be one (Pow, a variadic Max). NULL in the other families. */
  bool (*chain_form)(const void *state, actx_bf16_chain_form *form);
  /* Every result passed through table (a unary op's, ACTX_LUT_ENTRIES entries, alive as long as
   * the state) before it is stored: false where the family cannot (the state unchanged). NULL
   * in the families that never can. */
  bool (*fuse_table)(void *state, const uint16_t *table);
} actx_bf16_family;

/* The kernel's op as a chain step (its family's chain_form); false where it cannot be one. */
bool actx_bf16_kernel_chain_form(const actx_bf16_kernel *kernel, actx_bf16_chain_form *form);

#define ACTX_BF16_FAMILY_DECL_(fam) extern const actx_bf16_family actx_bf16_family_##fam;
ACTX_BF16_FAMILIES(ACTX_BF16_FAMILY_DECL_)
#undef ACTX_BF16_FAMILY_DECL_

/* A hot loop's function, built three times on x86-64 (AVX-512, AVX2 + FMA, the baseline) and
 * picked once per process by the host's ISA (GCC / Clang function multi-versioning): the
 * compiler vectorises the same C at each width. Its results do not depend on the version:
 * nothing is contracted into an fma (-ffp-contract=off; an fmaf written out is one correctly
 * rounded operation everywhere), and such a function does only element-wise float32 arithmetic,
 * which is exact IEEE in every width; a sum it vectorises is
 * written in fixed lanes (so the order of additions is the C's, not the width's). Elsewhere
 * (AArch64: NEON is the baseline) it is the function as written. Its name must be unique across
 * src/bf16/ even when static: Clang 14 gives the resolver it makes external linkage, so two
 * files' static functions of one name fail to link. */
#if defined(__x86_64__) && !defined(ACTX_BF16_NO_MULTIVERSION)
#define ACTX_BF16_VECTORISED \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define ACTX_BF16_VECTORISED
#endif

/* Sets *why and returns ACTX_ERROR_INVALID_ARGUMENT: the one way a family reports bad input. */
static inline actx_status actx_bf16_fail(const char **why, const char *message) {
  if (why != NULL) *why = message;
  return ACTX_ERROR_INVALID_ARGUMENT;
}

/* A task of a split run carries at least this many times what the caller's parallel_for call
 * costs (actx_parallel.call_ns): two tasks then gain where W / 2 + call < W. */
#define ACTX_BF16_TASK_CALLS 2.0

/* How many tasks a run of `work` elements (or units of work) over `items` independent pieces is
 * split into: each task at least min_work, and at least ACTX_BF16_TASK_CALLS · call_ns of work
 * at ns_per_unit (the family's speed on an AVX-512 host, so slower hosts split a little less
 * than would pay, never more); no more tasks than pieces nor than the caller's max_tasks (the
 * EP passes the session's thread count), and 1 without a parallel-for. The one rule every
 * family splits by. */
static inline size_t actx_bf16_tasks(const actx_parallel *par, int64_t work, int64_t items,
                                     int64_t min_work, double ns_per_unit) {
  if (par == NULL || par->parallel_for == NULL || work <= 0 || items <= 1) return 1;
  const double by_call = ACTX_BF16_TASK_CALLS * (double)par->call_ns / ns_per_unit;
  const double least = by_call > (double)min_work ? by_call : (double)min_work;
  const double fit = (double)work / (least > 1.0 ? least : 1.0);
  int64_t tasks = fit < (double)items ? (int64_t)fit : items;
  if (par->max_tasks != 0 && (uint64_t)tasks > (uint64_t)par->max_tasks)
    tasks = (int64_t)par->max_tasks;
  return tasks > 1 ? (size_t)tasks : 1;
}

/* One task's share of a split run: items [begin, end) of the whole, run by task number `task`
 * (0 when the run is not split), which indexes any per-task scratch. */
typedef void (*actx_bf16_range_fn)(const void *ctx, size_t task, int64_t begin, int64_t end);

typedef struct actx_bf16_split_ {
  actx_bf16_range_fn range;
  const void *ctx;
  int64_t items;
  int64_t tasks;
} actx_bf16_split_;

static inline void actx_bf16_split_task_(void *ctx, size_t t) {
  const actx_bf16_split_ *s = ctx;
  s->range(s->ctx, t, s->items * (int64_t)t / s->tasks, s->items * (int64_t)(t + 1) / s->tasks);
}

/* Runs range over [0, items) as `tasks` (from actx_bf16_tasks) even chunks: task t gets
 * [items*t/tasks, items*(t+1)/tasks). One task runs inline on the calling thread. The one way
 * every family that splits by even chunks hands its work to the parallel-for. */
static inline void actx_bf16_run_split(const actx_parallel *par, size_t tasks, int64_t items,
                                       actx_bf16_range_fn range, const void *ctx) {
  if (tasks <= 1) {
    range(ctx, 0, 0, items);
    return;
  }
  actx_bf16_split_ s = {range, ctx, items, (int64_t)tasks};
  par->parallel_for(par->runner_ctx, actx_bf16_split_task_, &s, tasks);
}

#endif /* ACTX_BF16_FAMILY_H */
