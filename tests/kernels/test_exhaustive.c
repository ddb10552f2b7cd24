/* Every float32 bit pattern through the AVX2 and the portable path: identical bits for erf,
 * gelu, tanh and sigmoid (gelu_tanh and quick_gelu reuse tanh's and the logistic's bodies).
 *
 *   test_exhaustive [SHARDS [SHARD...]]
 * splits the 2^32 inputs into SHARDS interleaved blocks and runs the listed ones (default:
 * all of them); `make exhaustive` runs everything, CI a few shards. Two threads. */
#include <pthread.h>

#include "test_util.h"

#define BLOCK (1u << 16)
static const actx_op ops[] = {ACTX_OP_ERF, ACTX_OP_GELU, ACTX_OP_TANH, ACTX_OP_SIGMOID};
#define OP_COUNT (sizeof ops / sizeof ops[0])

typedef struct worker {
  uint64_t first_block, block_step, blocks_end, shards;
  const int *shard_on;
  uint64_t checked, mismatches[OP_COUNT];
  uint32_t first_bad[OP_COUNT];
} worker;

/* The two paths are called directly, so both threads can run them at once. */
#include "../../src/kernels.h"
static const actx_kernel_fn avx2[OP_COUNT] = {actx_f32_erf__avx2_u32, actx_f32_gelu__avx2_u32,
                                              actx_f32_tanh__avx2_u32, actx_f32_sigmoid__avx2_u32};
static const actx_kernel_fn portable[OP_COUNT] = {actx_f32_erf__portable, actx_f32_gelu__portable,
                                                  actx_f32_tanh__portable, actx_f32_sigmoid__portable};

static void *run(void *arg) {
  worker *w = arg;
  static _Thread_local uint32_t x[BLOCK];
  static _Thread_local float ya[BLOCK], yp[BLOCK];
  for (uint64_t blk = w->first_block; blk < w->blocks_end; blk += w->block_step) {
    if (!w->shard_on[blk % w->shards]) continue;
    for (uint32_t i = 0; i < BLOCK; i++) x[i] = (uint32_t)(blk * BLOCK + i);
    for (size_t o = 0; o < OP_COUNT; o++) {
      avx2[o](x, ya, BLOCK, NULL, 0);
      portable[o](x, yp, BLOCK, NULL, 0);
      if (memcmp(ya, yp, sizeof ya) != 0)
        for (uint32_t i = 0; i < BLOCK; i++)
          if (bits_of(ya[i]) != bits_of(yp[i]) && w->mismatches[o]++ == 0) w->first_bad[o] = x[i];
    }
    w->checked += BLOCK;
  }
  return NULL;
}

int main(int argc, char **argv) {
  if (!actx_isa_supported(ACTX_ISA_AVX2)) {
    fprintf(stderr, "test_exhaustive: no AVX2+FMA+F16C on this CPU\n");
    return 1;
  }
  const uint64_t shards = argc > 1 ? strtoull(argv[1], NULL, 10) : 1;
  if (shards == 0 || shards > 65536) {
    fprintf(stderr, "usage: test_exhaustive [SHARDS [SHARD...]]\n");
    return 2;
  }
  int *on = calloc(shards, sizeof *on);
  for (int a = 2; a < argc; a++) on[strtoull(argv[a], NULL, 10) % shards] = 1;
  if (argc <= 2)
    for (uint64_t s = 0; s < shards; s++) on[s] = 1;
  worker w[2] = {{0, 2, 65536, shards, on, 0, {0}, {0}}, {1, 2, 65536, shards, on, 0, {0}, {0}}};
  pthread_t t;
  pthread_create(&t, NULL, run, &w[1]);
  run(&w[0]);
  pthread_join(t, NULL);
  const uint64_t checked = w[0].checked + w[1].checked;
  for (size_t o = 0; o < OP_COUNT; o++) {
    const uint64_t bad = w[0].mismatches[o] + w[1].mismatches[o];
    printf("%-8s %llu inputs, %llu differ\n", actx_op_name(ops[o]), (unsigned long long)checked,
           (unsigned long long)bad);
    EXPECT(bad == 0, "%s: avx2 and portable differ, e.g. at x = 0x%08x", actx_op_name(ops[o]),
           w[0].mismatches[o] ? w[0].first_bad[o] : w[1].first_bad[o]);
  }
  EXPECT(checked > 0, "no input checked");
  free(on);
  return test_finish("test_exhaustive");
}
