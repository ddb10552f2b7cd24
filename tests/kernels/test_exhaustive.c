/* Every float32 bit pattern through every vector ISA (avx2, avx512) and the portable path, under
 * both ORT rules: identical bits for every op of the list (src/ops.h), QuickGelu at alpha 1.702
 * and at 1 (ORT's SiLU, which the rule changes), without a bias (a bias is an addition in front
 * of the same body: test_paths and test_placement run those). Under each rule the kernels get
 * the parameters cases.h derives from it. And, over the same inputs, what the rules do:
 *   - a NaN input comes out unchanged where the rule keeps NaNs, made quiet everywhere else;
 *   - the two rules differ at no number but SiLU's clamped inputs, each of them in [16, 18]
 *     with the AVX-512 rule's result x and the AVX2 rule's one ulp above; a full run finds 20
 *     (test_ort_rule finds them in [16, 18] on every run).
 *
 *   test_exhaustive [SHARDS [SHARD...]]
 * splits the 2^32 inputs into SHARDS interleaved blocks and runs the listed ones (default:
 * all of them); `make exhaustive` runs everything, CI a few shards. Two threads. */
#include <pthread.h>

#include "../../src/dispatch.h"
#include "cases.h"
#include "test_util.h"

#define BLOCK (1u << 16)
#define BLOCKS (1u << 16)
#define QUIET 0x00400000u
#define SILU_CLAMPED_COUNT 20

/* The variants: each op of the list without a bias, an op with a parameter at two alphas. */
typedef struct variant {
  const char *name;
  actx_op op;
  float alpha;
} variant;
#define VARIANT_ALPHA_0_(name, e) {#name, e, 0.0f},
#define VARIANT_ALPHA_1_(name, e) {#name "(1.702)", e, 1.702f}, {#name "(1)", e, 1.0f},
#define VARIANTS_OF_OP_(name, e, family, bias, alpha, table) VARIANT_ALPHA_##alpha##_(name, e)
static const variant variants[] = {ACTX_OPS(VARIANTS_OF_OP_)};
#undef VARIANT_ALPHA_0_
#undef VARIANT_ALPHA_1_
#undef VARIANTS_OF_OP_
#define VARIANT_COUNT (sizeof variants / sizeof variants[0])
#define RULES ACTX_ORT_RULE_COUNT

static actx_kernel_params params[VARIANT_COUNT][RULES];
static int rules_differ[VARIANT_COUNT]; /* the rules give this variant different parameters */
static int isa_on[TEST_ISA_COUNT];

typedef struct tally {
  uint64_t count;
  uint32_t first; /* the first input counted */
} tally;
static void count(tally *t, uint32_t x) {
  if (t->count++ == 0) t->first = x;
}

typedef struct worker {
  uint64_t first_block, block_step, shards;
  const int *shard_on;
  uint64_t checked;
  tally isa_differs[VARIANT_COUNT][RULES][TEST_ISA_COUNT]; /* from portable */
  tally nan_wrong[VARIANT_COUNT][RULES];
  tally rules_differ_at[VARIANT_COUNT];  /* numbers whose results differ between the rules */
  tally rules_differ_wrong[VARIANT_COUNT]; /* ... not as SiLU's clamp does */
} worker;

static int is_nan(uint32_t u) { return (u & 0x7FFFFFFFu) > 0x7F800000u; }

static void *run(void *arg) {
  worker *w = arg;
  static _Thread_local uint32_t x[BLOCK], yp[RULES][BLOCK], yv[BLOCK];
  for (uint64_t blk = w->first_block; blk < BLOCKS; blk += w->block_step) {
    if (!w->shard_on[blk % w->shards]) continue;
    for (uint32_t i = 0; i < BLOCK; i++) x[i] = (uint32_t)(blk * BLOCK + i);
    const int has_nans = is_nan(x[BLOCK - 1]); /* NaNs fill the tops of the two exponent-255 ranges */
    for (size_t v = 0; v < VARIANT_COUNT; v++) {
      const actx_op op = variants[v].op;
      for (int r = 0; r < RULES; r++) {
        if (r > 0 && !rules_differ[v]) { /* the same parameters: the same computation */
          memcpy(yp[r], yp[0], sizeof yp[r]);
          continue;
        }
        const actx_kernel_params *p = &params[v][r];
        actx_kernel_for_isa(ACTX_ISA_PORTABLE, op, ACTX_F32)(x, yp[r], BLOCK, p);
        for (size_t k = 0; k < TEST_ISA_COUNT; k++) {
          if (test_isas[k] == ACTX_ISA_PORTABLE || !isa_on[k]) continue;
          actx_kernel_for_isa(test_isas[k], op, ACTX_F32)(x, yv, BLOCK, p);
          if (memcmp(yv, yp[r], sizeof yv) != 0)
            for (uint32_t i = 0; i < BLOCK; i++)
              if (yv[i] != yp[r][i]) count(&w->isa_differs[v][r][k], x[i]);
        }
        if (has_nans)
          for (uint32_t i = 0; i < BLOCK; i++)
            if (is_nan(x[i]) && yp[r][i] != (p->keep_nan ? x[i] : x[i] | QUIET))
              count(&w->nan_wrong[v][r], x[i]);
      }
      if (rules_differ[v] && memcmp(yp[0], yp[1], sizeof yp[0]) != 0) {
        const uint32_t *y2 = yp[ACTX_ORT_RULE_AVX2], *y5 = yp[ACTX_ORT_RULE_AVX512];
        const int clamps = params[v][ACTX_ORT_RULE_AVX512].clamp_one;
        for (uint32_t i = 0; i < BLOCK; i++) {
          if (y2[i] == y5[i] || is_nan(x[i])) continue;
          count(&w->rules_differ_at[v], x[i]);
          const float f = float_of(x[i]);
          if (!(clamps && f >= 16.0f && f <= 18.0f && y5[i] == x[i] && y2[i] == x[i] + 1))
            count(&w->rules_differ_wrong[v], x[i]);
        }
      }
    }
    w->checked += BLOCK;
  }
  return NULL;
}

/* the two workers' tallies of one thing as one */
static tally merged(const tally *a, const tally *b) {
  tally t = {a->count + b->count, a->count ? a->first : b->first};
  return t;
}

int main(int argc, char **argv) {
  const uint64_t shards = argc > 1 ? strtoull(argv[1], NULL, 10) : 1;
  if (shards == 0 || shards > BLOCKS) {
    fprintf(stderr, "usage: test_exhaustive [SHARDS [SHARD...]]\n");
    return 2;
  }
  int *on = calloc(shards, sizeof *on);
  for (int a = 2; a < argc; a++) on[strtoull(argv[a], NULL, 10) % shards] = 1;
  if (argc <= 2)
    for (uint64_t s = 0; s < shards; s++) on[s] = 1;
  uint64_t shards_on = 0;
  for (uint64_t s = 0; s < shards; s++) shards_on += on[s];

  test_expect_vector_isa();
  for (size_t k = 0; k < TEST_ISA_COUNT; k++) isa_on[k] = test_isa_usable(test_isas[k]);
  for (size_t v = 0; v < VARIANT_COUNT; v++) {
    const actx_op_desc d = {.op = variants[v].op, .dtype = ACTX_F32, .alpha = variants[v].alpha};
    for (int r = 0; r < RULES; r++) params[v][r] = rule_params((actx_ort_rule)r, &d);
    rules_differ[v] = memcmp(&params[v][0], &params[v][1], sizeof params[v][0]) != 0;
  }

  static worker w[2];
  for (int t = 0; t < 2; t++) w[t] = (worker){.first_block = (uint64_t)t, .block_step = 2,
                                              .shards = shards, .shard_on = on};
  pthread_t th;
  pthread_create(&th, NULL, run, &w[1]);
  run(&w[0]);
  pthread_join(th, NULL);
  const uint64_t checked = w[0].checked + w[1].checked;
  EXPECT(checked > 0, "no input checked");

  for (size_t v = 0; v < VARIANT_COUNT; v++) {
    const char *name = variants[v].name;
    for (int r = 0; r < RULES; r++) {
      const char *rule = actx_ort_rule_name((actx_ort_rule)r);
      printf("%-18s %-6s rule, %llu inputs:", name, rule, (unsigned long long)checked);
      for (size_t k = 0; k < TEST_ISA_COUNT; k++) {
        if (test_isas[k] == ACTX_ISA_PORTABLE || !isa_on[k]) continue;
        const tally t = merged(&w[0].isa_differs[v][r][k], &w[1].isa_differs[v][r][k]);
        printf(" %s %llu differ", actx_isa_name(test_isas[k]), (unsigned long long)t.count);
        EXPECT(t.count == 0, "%s, %s rule: %s and portable differ at %llu inputs, e.g. x = 0x%08x",
               name, rule, actx_isa_name(test_isas[k]), (unsigned long long)t.count, t.first);
      }
      printf("\n");
      const tally n = merged(&w[0].nan_wrong[v][r], &w[1].nan_wrong[v][r]);
      EXPECT(n.count == 0, "%s, %s rule: %llu NaN inputs do not come out %s, e.g. x = 0x%08x",
             name, rule, (unsigned long long)n.count, params[v][r].keep_nan ? "unchanged" : "quiet",
             n.first);
    }
    if (!rules_differ[v]) continue;
    const tally at = merged(&w[0].rules_differ_at[v], &w[1].rules_differ_at[v]);
    const tally wrong = merged(&w[0].rules_differ_wrong[v], &w[1].rules_differ_wrong[v]);
    printf("%-18s the rules differ at %llu numbers\n", name, (unsigned long long)at.count);
    EXPECT(wrong.count == 0, "%s: the rules differ at %llu numbers beyond SiLU's clamp, e.g. x = "
           "0x%08x", name, (unsigned long long)wrong.count, wrong.first);
    const uint64_t want = params[v][ACTX_ORT_RULE_AVX512].clamp_one ? SILU_CLAMPED_COUNT : 0;
    if (shards_on == shards)
      EXPECT(at.count == want, "%s: the rules differ at %llu numbers, want %llu", name,
             (unsigned long long)at.count, (unsigned long long)want);
    else
      EXPECT(at.count <= want, "%s: the rules differ at %llu numbers, more than %llu", name,
             (unsigned long long)at.count, (unsigned long long)want);
  }
  free(on);
  return test_finish("test_exhaustive");
}
