#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
/* The vector vocabularies' float32 <-> float16 / bfloat16 conversions (src/kernels/vec_avx2.h,
 * vec_avx512.h) equal src/half.h's, which the portable path uses, so no ISA can change a 16-bit
 * result:
 *   - every float32 value stored as float16 and as bfloat16 one vector at a time, in the
 *     unrolled step's blocks (AVX2's bfloat16 block permutes lanes and looks for NaNs once per
 *     block, so blocks of random values with NaNs sprinkled in follow) and in partial vectors of
 *     every count (the tail), which must write nothing past their count;
 *   - every 16-bit value loaded the same three ways; a partial load's other lanes are +0;
 *   - partial loads and stores of every count end at a page followed by an unmapped one, so a
 *     read or write past the tensor faults.
 * Each vocabulary is compiled in a file of its own for its ISA (test_half_rounding_vec.h); this
 * one runs on any x86-64 and calls those whose ISA the CPU has. Two threads. */
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../../src/half.h"
#include "test_half_rounding.h"
#include "test_util.h"

#if ACTX_HAVE_X86_KERNELS /* the x86 vocabularies' check; other builds only say so (main) */
#define CHUNK 65536
#define ALL_CHUNKS ((1ull << 32) / CHUNK)
#define RANDOM_CHUNKS 256 /* 2^24 random float32 values, a NaN in about one lane of 16 */
#define THREADS 2
#define MAX_VOCABS 2

static const char *const kind_names[HR_KINDS] = {
    [HR_F16] = "float16 (one vector)",       [HR_BF16] = "bfloat16 (one vector)",
    [HR_BLOCK_F16] = "float16 (block)",      [HR_BLOCK_BF16] = "bfloat16 (block)",
    [HR_PART_F16] = "float16 (partial)",     [HR_PART_BF16] = "bfloat16 (partial)"};

typedef struct worker {
  const hr_vocab *const *vocabs;
  size_t n_vocabs;
  uint64_t first_chunk;
  hr_tally tally[MAX_VOCABS];
} worker;

static void *store_chunks(void *arg) {
  worker *w = arg;
  uint32_t *x = calloc(CHUNK + 16, sizeof *x); /* + a vector read past the last partial one */
  uint16_t *want_f16 = malloc(CHUNK * 2), *want_bf16 = malloc(CHUNK * 2),
           *scratch = malloc(2 * CHUNK * 2);
  if (!x || !want_f16 || !want_bf16 || !scratch) abort();
  for (uint64_t c = w->first_chunk; c < ALL_CHUNKS + RANDOM_CHUNKS; c += THREADS) {
    uint64_t s = c;
    for (uint32_t i = 0; i < CHUNK; i++) {
      if (c < ALL_CHUNKS) {
        x[i] = (uint32_t)(c * CHUNK + i);
      } else {
        const uint64_t r = rng_next(&s);
        x[i] = (uint32_t)r;
        if ((r >> 32 & 15) == 0) x[i] |= 0x7F800001u; /* a NaN */
      }
      want_f16[i] = actx_f32_to_f16(actx_f32_from_bits(x[i]));
      want_bf16[i] = actx_f32_to_bf16(actx_f32_from_bits(x[i]));
    }
    for (size_t v = 0; v < w->n_vocabs; v++)
      w->vocabs[v]->stores(x, want_f16, want_bf16, CHUNK, scratch, &w->tally[v]);
  }
  free(x), free(want_f16), free(want_bf16), free(scratch);
  return NULL;
}

static void report(const hr_vocab *v, const hr_tally *t, const char *what) {
  for (int k = 0; k < HR_KINDS; k++)
    EXPECT(t->bad[k] == 0, "%s %s to / from %s: %llu values differ from src/half.h; first 0x%08x",
           v->isa, what, kind_names[k], (unsigned long long)t->bad[k], t->first[k]);
}

#endif /* ACTX_HAVE_X86_KERNELS */

int main(void) {
#if !ACTX_HAVE_X86_KERNELS
  printf("test_half_rounding: this build has no vector vocabulary: nothing to check\n");
  return test_finish("test_half_rounding");
#else
  const hr_vocab *vocabs[MAX_VOCABS];
  size_t n = 0;
  if (test_isa_usable(ACTX_ISA_AVX2)) vocabs[n++] = &hr_avx2;
  if (test_isa_usable(ACTX_ISA_AVX512)) vocabs[n++] = &hr_avx512;
  EXPECT(n > 0, "this CPU has no vector ISA: nothing was checked");

  /* a page, then an unmapped one */
  const size_t page = (size_t)sysconf(_SC_PAGESIZE);
  unsigned char *m = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  EXPECT(m != MAP_FAILED && mprotect(m + page, page, PROT_NONE) == 0, "mmap / mprotect");
  for (size_t v = 0; v < n && m != MAP_FAILED; v++) vocabs[v]->guard(m + page);
  if (m != MAP_FAILED) munmap(m, 2 * page);

  for (size_t v = 0; v < n; v++) {
    hr_tally t = {0};
    vocabs[v]->loads(&t);
    report(vocabs[v], &t, "widening");
    EXPECT(t.bad_other == 0, "%s: %s (%llu times)", vocabs[v]->isa, t.other,
           (unsigned long long)t.bad_other);
  }

  worker w[THREADS];
  pthread_t th[THREADS];
  for (int i = 0; i < THREADS; i++) {
    w[i] = (worker){.vocabs = vocabs, .n_vocabs = n, .first_chunk = (uint64_t)i};
    EXPECT(pthread_create(&th[i], NULL, store_chunks, &w[i]) == 0, "pthread_create");
  }
  for (int i = 0; i < THREADS; i++) pthread_join(th[i], NULL);
  for (size_t v = 0; v < n; v++) {
    hr_tally t = {0};
    for (int i = 0; i < THREADS; i++) {
      const hr_tally *ti = &w[i].tally[v];
      for (int k = 0; k < HR_KINDS; k++) {
        if (ti->bad[k] && !t.bad[k]) t.first[k] = ti->first[k];
        t.bad[k] += ti->bad[k];
      }
      if (ti->bad_other && !t.bad_other) t.other = ti->other;
      t.bad_other += ti->bad_other;
    }
    report(vocabs[v], &t, "narrowing");
    EXPECT(t.bad_other == 0, "%s: %s (%llu times)", vocabs[v]->isa, t.other,
           (unsigned long long)t.bad_other);
    printf("%s: every float32 and %d random ones narrowed, every 16-bit value widened, by one "
           "vector, a block of %zu and partial vectors\n", vocabs[v]->isa, RANDOM_CHUNKS * CHUNK,
           vocabs[v]->block);
  }
  return test_finish("test_half_rounding");
#endif
}
