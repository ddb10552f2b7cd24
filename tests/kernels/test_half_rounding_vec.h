/* The checks of one vector vocabulary (see test_half_rounding.h), written once over its words:
 * include the vocabulary (src/kernels/vec_<isa>.h) first, then define HR_VOCAB to the name of
 * the hr_vocab to define and HR_ISA_NAME to the ISA's name. */
#if !defined(HR_VOCAB) || !defined(HR_ISA_NAME) || !defined(VF_LANES)
#error "include the vocabulary, define HR_VOCAB and HR_ISA_NAME first"
#endif

#include <string.h>

#include "../../src/half.h"
#include "../../src/kernels/loop.h" /* the block loads and stores every vocabulary gets */
#include "test_half_rounding.h"

#define HR_BLOCK (VF_LANES * VF_UNROLL)

static void hr_bad(hr_tally *t, int kind, uint32_t x) {
  if (t->bad[kind]++ == 0) t->first[kind] = x;
}
static void hr_bad_other(hr_tally *t, const char *what) {
  if (t->bad_other++ == 0) t->other = what;
}

static float hr_widen_f16(uint16_t h) { return actx_f16_to_f32(h); }
static float hr_widen_bf16(uint16_t h) { return actx_bf16_to_f32(h); }

/* where[j]: the element of a block that the block load puts in lane j (the vectors laid end to
 * end), read by loading 16-bit values that widen to distinct floats (the small integers' bits
 * give tiny subnormals for float16 and bfloat16); a block store must put lane j back there.
 * Identity except for AVX2's bfloat16, whose load permutes (vec_avx2.h). */
#define HR_DEFINE_WHERE(dt)                                                              \
  static void hr_where_##dt(int *where, hr_tally *t) {                                   \
    uint16_t index[HR_BLOCK];                                                            \
    float lanes[HR_BLOCK];                                                               \
    vf v[VF_UNROLL];                                                                     \
    for (int i = 0; i < HR_BLOCK; i++) index[i] = (uint16_t)i;                           \
    vf_load_block_##dt(index, v);                                                        \
    for (int k = 0; k < VF_UNROLL; k++) vf_store_f32(lanes + k * VF_LANES, v[k]);        \
    uint64_t seen = 0;                                                                   \
    for (int j = 0; j < HR_BLOCK; j++) {                                                 \
      where[j] = 0;                                                                      \
      for (int i = 0; i < HR_BLOCK; i++)                                                 \
        if (actx_f32_bits(lanes[j]) == actx_f32_bits(hr_widen_##dt(index[i]))) where[j] = i; \
      seen |= 1ull << where[j];                                                          \
    }                                                                                    \
    if (seen != ~0ull >> (64 - HR_BLOCK)) hr_bad_other(t, #dt " block load: not a permutation"); \
  }
HR_DEFINE_WHERE(f16)
HR_DEFINE_WHERE(bf16)
#undef HR_DEFINE_WHERE

/* ---- float32 -> 16 bits ------------------------------------------------------------------ */

#define HR_DEFINE_STORES(dt, SINGLE, BLOCK, PART)                                          \
  static void hr_stores_##dt(const uint32_t *x, const uint16_t *want, size_t n, uint16_t *out, \
                             const int *where, hr_tally *t) {                              \
    /* one vector */                                                                       \
    for (size_t i = 0; i < n; i += VF_LANES) vf_store_##dt(out + i, vf_load_f32(x + i));   \
    if (memcmp(out, want, n * 2) != 0)                                                     \
      for (size_t i = 0; i < n; i++)                                                       \
        if (out[i] != want[i]) hr_bad(t, SINGLE, x[i]);                                    \
    /* blocks: lane j holds the element the block load would have put there */            \
    for (size_t i = 0; i < n; i += HR_BLOCK) {                                             \
      uint32_t lanes[HR_BLOCK];                                                            \
      vf v[VF_UNROLL];                                                                     \
      for (int j = 0; j < HR_BLOCK; j++) lanes[j] = x[i + (size_t)where[j]];               \
      for (int k = 0; k < VF_UNROLL; k++) v[k] = vf_load_f32(lanes + k * VF_LANES);        \
      vf_store_block_##dt(out + i, v);                                                     \
    }                                                                                      \
    if (memcmp(out, want, n * 2) != 0)                                                     \
      for (size_t i = 0; i < n; i++)                                                       \
        if (out[i] != want[i]) hr_bad(t, BLOCK, x[i]);                                     \
    /* partial vectors of every count 1 .. lanes - 1 in turn, each followed in out by one     \
     * element that must be left alone (checked after the loop, not after each store: a load  \
     * of what a masked store has just written waits for it). The lanes past the count hold   \
     * the next elements, whose results would land there. */                                 \
    size_t count = 1, o = 0;                                                               \
    for (size_t i = 0; i < n; i += count, o += count + 1, count = count % (VF_LANES - 1) + 1) { \
      if (count > n - i) count = n - i;                                                    \
      out[o + count] = 0xA5A5;                                                             \
      vf_store_part_##dt(out + o, vf_load_f32(x + i), count);                              \
    }                                                                                      \
    count = 1, o = 0;                                                                      \
    for (size_t i = 0; i < n; i += count, o += count + 1, count = count % (VF_LANES - 1) + 1) { \
      if (count > n - i) count = n - i;                                                    \
      for (size_t j = 0; j < count; j++)                                                   \
        if (out[o + j] != want[i + j]) hr_bad(t, PART, x[i + j]);                          \
      if (out[o + count] != 0xA5A5) hr_bad_other(t, #dt " partial store wrote past its count"); \
    }                                                                                      \
  }
HR_DEFINE_STORES(f16, HR_F16, HR_BLOCK_F16, HR_PART_F16)
HR_DEFINE_STORES(bf16, HR_BF16, HR_BLOCK_BF16, HR_PART_BF16)
#undef HR_DEFINE_STORES

static void hr_stores(const uint32_t *x, const uint16_t *want_f16, const uint16_t *want_bf16,
                      size_t n, uint16_t *scratch, hr_tally *t) {
  int where_f16[HR_BLOCK], where_bf16[HR_BLOCK];
  hr_where_f16(where_f16, t);
  hr_where_bf16(where_bf16, t);
  hr_stores_f16(x, want_f16, n, scratch, where_f16, t);
  hr_stores_bf16(x, want_bf16, n, scratch, where_bf16, t);
}

/* ---- 16 bits -> float32 ------------------------------------------------------------------ */

#define HR_DEFINE_LOADS(dt, SINGLE, BLOCK, PART)                                           \
  static void hr_loads_##dt(const int *where, hr_tally *t) {                               \
    static uint16_t h[65536];                                                              \
    for (uint32_t i = 0; i < 65536; i++) h[i] = (uint16_t)i;                               \
    for (uint32_t i = 0; i < 65536; i += HR_BLOCK) {                                       \
      float lanes[HR_BLOCK];                                                               \
      vf v[VF_UNROLL];                                                                     \
      for (int k = 0; k < VF_UNROLL; k++)                                                  \
        vf_store_f32(lanes + k * VF_LANES, vf_load_##dt(h + i + k * VF_LANES));            \
      for (int j = 0; j < HR_BLOCK; j++)                                                   \
        if (actx_f32_bits(lanes[j]) != actx_f32_bits(hr_widen_##dt(h[i + j])))             \
          hr_bad(t, SINGLE, h[i + j]);                                                     \
      vf_load_block_##dt(h + i, v);                                                        \
      for (int k = 0; k < VF_UNROLL; k++) vf_store_f32(lanes + k * VF_LANES, v[k]);        \
      for (int j = 0; j < HR_BLOCK; j++)                                                   \
        if (actx_f32_bits(lanes[j]) != actx_f32_bits(hr_widen_##dt(h[i + where[j]])))      \
          hr_bad(t, BLOCK, h[i + where[j]]);                                               \
    }                                                                                      \
    /* partial vectors: every count at every start; the lanes past the count are +0 */     \
    for (size_t count = 1; count < VF_LANES; count++)                                      \
      for (size_t i = 0; i + count <= 65536; i += count) {                                 \
        float lanes[VF_LANES];                                                             \
        vf_store_f32(lanes, vf_load_part_##dt(h + i, count));                              \
        for (size_t j = 0; j < count; j++)                                                 \
          if (actx_f32_bits(lanes[j]) != actx_f32_bits(hr_widen_##dt(h[i + j])))           \
            hr_bad(t, PART, h[i + j]);                                                     \
        for (size_t j = count; j < VF_LANES; j++)                                          \
          if (actx_f32_bits(lanes[j]) != 0) hr_bad_other(t, #dt " partial load: a lane past the count is not +0"); \
      }                                                                                    \
  }
HR_DEFINE_LOADS(f16, HR_F16, HR_BLOCK_F16, HR_PART_F16)
HR_DEFINE_LOADS(bf16, HR_BF16, HR_BLOCK_BF16, HR_PART_BF16)
#undef HR_DEFINE_LOADS

static void hr_loads(hr_tally *t) {
  int where_f16[HR_BLOCK], where_bf16[HR_BLOCK];
  hr_where_f16(where_f16, t);
  hr_where_bf16(where_bf16, t);
  hr_loads_f16(where_f16, t);
  hr_loads_bf16(where_bf16, t);
}

/* ---- nothing past the tensor --------------------------------------------------------------- */

/* count elements ending at end, for every count below a vector: loaded, then stored back (the
 * values are whatever the page holds; a fault is the failure) */
static void hr_guard(unsigned char *end) {
  for (size_t count = 0; count < VF_LANES; count++) {
    vf_store_part_f32(end - 4 * count, vf_load_part_f32(end - 4 * count, count), count);
    vf_store_part_f16(end - 2 * count, vf_load_part_f16(end - 2 * count, count), count);
    vf_store_part_bf16(end - 2 * count, vf_load_part_bf16(end - 2 * count, count), count);
  }
}

const hr_vocab HR_VOCAB = {HR_ISA_NAME, VF_LANES, HR_BLOCK, hr_stores, hr_loads, hr_guard};
