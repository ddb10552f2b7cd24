/* bf16_elementwise.h — what the element-wise families (unary, binary, compare, layout) share:
 * loads and stores at any address, the checks of a tensor argument, and one strided walk over an
 * output that hands a piece function runs of contiguous output with each input either advancing
 * (step 1) or held (step 0). numpy broadcasting, Expand and Tile are all that walk with other
 * strides. Internal to src/bf16/. */
#ifndef ACTX_BF16_ELEMENTWISE_H
#define ACTX_BF16_ELEMENTWISE_H

#include <string.h>

#include "bf16_family.h"
#include "half.h"

/* Loads and stores through memcpy: a tensor's data may sit at any address (an odd offset in a
 * buffer), which a plain uint16_t access would make undefined. Compilers emit one move. */
static inline uint16_t actx_ld_u16(const unsigned char *p) {
  uint16_t v;
  memcpy(&v, p, sizeof v);
  return v;
}
static inline void actx_st_u16(unsigned char *p, uint16_t v) { memcpy(p, &v, sizeof v); }
static inline float actx_ld_bf16(const unsigned char *p) {
  return actx_bf16_to_f32(actx_ld_u16(p));
}
static inline void actx_st_bf16(unsigned char *p, float f) { actx_st_u16(p, actx_f32_to_bf16(f)); }
static inline float actx_ld_f32(const unsigned char *p) {
  float v;
  memcpy(&v, p, sizeof v);
  return v;
}
static inline int64_t actx_ld_i64(const unsigned char *p) {
  int64_t v;
  memcpy(&v, p, sizeof v);
  return v;
}

/* What a NaN result is, the same on every ISA and whatever operand order a compiler picks
 * (C leaves both open: x86 gives the first operand's NaN, or a negative default NaN, ARM a
 * positive one): a NaN operand's own NaN, the first if both are (rounding then makes it quiet,
 * keeping sign and top payload); a NaN made from numbers (0 / 0, sqrt(-1)) the positive quiet
 * NaN. */
#define ACTX_BF16_DEFAULT_NAN 0x7FC0u
static inline float actx_nan_rule(float r, float a, float b) {
  return r == r ? r : a != a ? a : b != b ? b : actx_bf16_to_f32(ACTX_BF16_DEFAULT_NAN);
}

/* Clip's bounds when absent: bfloat16's lowest and largest finite values. */
#define ACTX_BF16_LOWEST 0xFF7Fu
#define ACTX_BF16_MAX_FINITE 0x7F7Fu
/* Clip's float32 function, min(max(x, lo), hi) as ORT's (Eigen's cwiseMax / cwiseMin):
 * x < lo ? lo : x, then hi < v ? hi : v (a NaN x stays NaN, a NaN bound bounds nothing). The
 * one definition, for the unary family's Clip and a chain's (bf16_chain.c). */
static inline float actx_clip_f32(float x, float lo, float hi) {
  const float v = x < lo ? lo : x;
  return hi < v ? hi : v;
}

/* Blocks: the arithmetic pieces run ACTX_BLOCK elements at a time, each step a loop of fixed
 * length over arrays nothing else can point into, which the compiler vectorises (for each ISA
 * where the piece is ACTX_BF16_VECTORISED). A shorter tail goes through the same block
 * (zero-padded), so an element's bits never depend on where it sits. A block's results are
 * stored only once all its inputs are read, so an output that is an input (in place) is
 * exact. */
#define ACTX_BLOCK 64
/* Rounds float32 bits to bfloat16: actx_f32_to_bf16's arithmetic, branch-free. */
static inline uint16_t actx_round_bits(uint32_t x) {
  const uint32_t nearest = (x + 0x7FFFu + ((x >> 16) & 1u)) >> 16;
  const uint32_t quiet = (x | 0x00400000u) >> 16;
  return (uint16_t)((x & 0x7FFFFFFFu) > 0x7F800000u ? quiet : nearest);
}
/* The rounding of a value known not to be a NaN (where a block has none, the arithmetic
 * pieces take it: the same bits as actx_round_bits, fewer steps). */
static inline uint16_t actx_round_number_bits(uint32_t x) {
  return (uint16_t)((x + 0x7FFFu + ((x >> 16) & 1u)) >> 16);
}
/* Bit 31 set exactly where float32 bits x are a NaN: |x| + 0x007FFFFF passes 0x7FFFFFFF
 * exactly when |x| > 0x7F800000. OR'd over a block, it says whether the block has a NaN. */
static inline uint32_t actx_nan_bit(uint32_t x) { return (x & 0x7FFFFFFFu) + 0x007FFFFFu; }
/* actx_nan_rule on float32 bits, in integers (a float comparison there would keep the loop
 * from vectorising under -ftrapping-math): r becomes a's NaN, else b's, else the default,
 * where r is a NaN. */
static inline uint32_t actx_nan_mask(uint32_t x) {
  return (uint32_t)0 - (uint32_t)((x & 0x7FFFFFFFu) > 0x7F800000u);
}
static inline uint32_t actx_nan_pick(uint32_t r, uint32_t a, uint32_t b) {
  const uint32_t def = (uint32_t)ACTX_BF16_DEFAULT_NAN << 16;
  const uint32_t nb_or_def = def ^ ((def ^ b) & actx_nan_mask(b));
  const uint32_t operand = nb_or_def ^ ((nb_or_def ^ a) & actx_nan_mask(a));
  return r ^ ((r ^ operand) & actx_nan_mask(r));
}
/* Where a block's ACTX_BLOCK bfloat16 inputs are read from, for an input at p advancing step
 * (0 or 1): a whole block of an advancing input in place, at element i; its tail of m <
 * ACTX_BLOCK elements copied into tmp, zero-padded; a held input from tmp, which
 * actx_hold_block filled once for the piece. */
static inline void actx_hold_block(const unsigned char *p, int64_t step, uint16_t *tmp) {
  if (step != 0) return;
  const uint16_t v = actx_ld_u16(p);
  for (size_t j = 0; j < ACTX_BLOCK; j++) tmp[j] = v;
}
static inline const unsigned char *actx_block_src(const unsigned char *p, int64_t step, size_t i,
                                                  size_t m, uint16_t *tmp) {
  if (step == 0) return (const unsigned char *)tmp;
  if (m == ACTX_BLOCK) return p + 2 * i;
  memcpy(tmp, p + 2 * i, 2 * m);
  memset(tmp + m, 0, 2 * (ACTX_BLOCK - m));
  return (const unsigned char *)tmp;
}
/* A block's values, read as float32 for the arithmetic and as bits for the rest (C11 allows
 * reading a union member other than the one last written: the bytes are reinterpreted). */
typedef union actx_block {
  float f[ACTX_BLOCK];
  uint32_t u[ACTX_BLOCK];
} actx_block;
/* Widens n <= ACTX_BLOCK elements (step 1) or one held element (step 0), zero-padded. */
static inline void actx_widen_block(const unsigned char *p, int64_t step, size_t n,
                                    actx_block *b) {
  if (step == 0) {
    const uint32_t v = (uint32_t)actx_ld_u16(p) << 16;
    for (size_t j = 0; j < ACTX_BLOCK; j++) b->u[j] = v;
  } else if (n == ACTX_BLOCK) {
    for (size_t j = 0; j < ACTX_BLOCK; j++) b->u[j] = (uint32_t)actx_ld_u16(p + 2 * j) << 16;
  } else {
    for (size_t j = 0; j < ACTX_BLOCK; j++)
      b->u[j] = j < n ? (uint32_t)actx_ld_u16(p + 2 * j) << 16 : 0;
  }
}
/* Stores the first n of a block of 16-bit results. */
static inline void actx_store_block(const uint16_t *h, unsigned char *out, size_t n) {
  if (n == ACTX_BLOCK)
    memcpy(out, h, 2 * ACTX_BLOCK);
  else
    memcpy(out, h, 2 * n);
}
/* Rounds a block and stores its first n. */
static inline void actx_round_block(const actx_block *b, unsigned char *out, size_t n) {
  uint16_t h[ACTX_BLOCK];
  uint32_t nan = 0;
  for (size_t j = 0; j < ACTX_BLOCK; j++) nan |= actx_nan_bit(b->u[j]);
  if (nan >> 31)
    for (size_t j = 0; j < ACTX_BLOCK; j++) h[j] = actx_round_bits(b->u[j]);
  else
    for (size_t j = 0; j < ACTX_BLOCK; j++) h[j] = actx_round_number_bits(b->u[j]);
  actx_store_block(h, out, n);
}

/* Bytes of one element of each type. */
size_t actx_elem_size(actx_elem elem);

/* Checks a tensor argument: element type elem, rank <= ACTX_BF16_MAX_RANK, no negative dim,
 * and with need_data, data present unless it has no elements. _shapes needs the data only of
 * the inputs whose values decide shapes; a run checks all (actx_bf16_check_data). The message
 * names what was wrong. */
actx_status actx_bf16_check_tensor(const actx_tensor *t, actx_elem elem, bool need_data,
                                   const char **why);
/* Every present input (elem not ACTX_ELEM_COUNT) with elements has data. */
actx_status actx_bf16_check_data(const actx_tensor *in, size_t n_in, const char **why);
/* Checks a run's output against the shape and type _shapes gave, and that it overlaps no input
 * in[k] unless that input has the output's shape (element k read before element k is written:
 * in place is exact), which the element-wise ops allow. */
actx_status actx_bf16_check_output(const actx_tensor *out, actx_elem elem,
                                   const actx_shape *shape, const actx_tensor *in, size_t n_in,
                                   const char **why);
/* Checks inputs in[k] (n_in <= ACTX_BF16_MAX_INPUTS) as arguments of element type elems[k]
 * (actx_bf16_check_tensor, no data needed) and broadcasts their shapes into *shape. */
actx_status actx_bf16_broadcast_inputs(const actx_tensor *in, size_t n_in,
                                       const actx_elem *elems, actx_shape *shape,
                                       const char **why);
/* What every element-wise run checks once its _shapes gave the output's elem and shape
 * (shaped: that call's status, returned when not ACTX_OK): all inputs' data
 * (actx_bf16_check_data), then the output (actx_bf16_check_output against the first n_alias
 * inputs, NULL and 0 for an op that allows no overlap at all). */
actx_status actx_bf16_check_run(actx_status shaped, const actx_tensor *in, size_t n_in,
                                const actx_tensor *out, actx_elem elem, const actx_shape *shape,
                                size_t n_alias, const char **why);
/* Whether a and b are the same shape. */
bool actx_shape_equal(const actx_shape *a, const actx_shape *b);
/* Product of dims, false when a dim is negative or the product passes 2^48 elements (no real
 * tensor is that large; the bound keeps every byte offset within int64_t). */
bool actx_dims_elements(size_t rank, const int64_t *dims, int64_t *elements);

/* The walk: an output of rank dims, each input with its element strides in that output
 * (0 where broadcast). Tile's interleaved view needs twice the tensor rank. */
#define ACTX_WALK_MAX_RANK (2 * ACTX_BF16_MAX_RANK)
typedef struct actx_walk {
  size_t rank, n_in; /* after merging: rank >= 1 */
  int64_t dims[ACTX_WALK_MAX_RANK];
  int64_t strides[ACTX_BF16_MAX_INPUTS][ACTX_WALK_MAX_RANK];
  int64_t total;
} actx_walk;

/* Runs n contiguous output elements at out; input k starts at in[k] and advances step[k]
 * elements (0 or 1) per output element. */
typedef void (*actx_walk_piece_fn)(const void *ctx, const unsigned char *const *in,
                                   const int64_t *step, unsigned char *out, size_t n);

/* A walk from explicit strides (rank <= ACTX_WALK_MAX_RANK): dims of 1 are dropped and
 * neighbours that every input steps through contiguously are merged, so same-shape operands
 * become one run, a row broadcast a run per row, a scalar a held input. */
void actx_walk_init(actx_walk *w, size_t rank, const int64_t *dims, size_t n_in,
                    const int64_t (*strides)[ACTX_WALK_MAX_RANK]);
/* The walk of numpy broadcasting: inputs of shapes in[k] into the output shape out. */
void actx_walk_broadcast(actx_walk *w, const actx_shape *out, const actx_shape *const *in,
                         size_t n_in);
/* Broadcasts inputs in[0 .. n_in) into output shape out, then walks it as actx_walk_run does:
 * each input's data and element size taken from its tensor. */
void actx_walk_broadcast_run(const actx_shape *out_shape, const actx_tensor *in, size_t n_in,
                             void *out, size_t out_size, actx_walk_piece_fn piece,
                             const void *ctx, double ns_per_element, const actx_parallel *par);
/* Walks the whole output (elements of out_size bytes; in_size[k] bytes per element of input k),
 * split over par by actx_bf16_tasks's rule at the piece's ns_per_element (its speed on an
 * AVX-512 host, out of cache: ACTX_WALK_NS_* below), in chunks of at least
 * ACTX_WALK_MIN_CHUNK elements. Every element is computed by the same piece function whatever
 * the split, so the bits never depend on it. */
#define ACTX_WALK_MIN_CHUNK ((int64_t)16384)
void actx_walk_run(const actx_walk *w, const void *const *in, const size_t *in_size, void *out,
                   size_t out_size, actx_walk_piece_fn piece, const void *ctx,
                   double ns_per_element, const actx_parallel *par);
/* The pieces' speeds, ns an element, measured on the AMX Xeon (1 thread, 409,600 elements of
 * bfloat16, [1, 16, 160, 160]): a table lookup 0.33, Add 0.19, Max 0.33, Pow 4.8, Less 0.29,
 * Expand's byte moves 0.06 (Clip 0.21 on [1, 240, 12, 80]). Each family passes its own. */
#define ACTX_WALK_NS_TABLE 0.33
#define ACTX_WALK_NS_CLIP 0.21
#define ACTX_WALK_NS_ARITHMETIC 0.19 /* Add, Sub, Mul, Div */
#define ACTX_WALK_NS_FOLD 0.33       /* Max, Min */
#define ACTX_WALK_NS_POW 4.8
#define ACTX_WALK_NS_COMPARE 0.29
#define ACTX_WALK_NS_MOVE 0.06

#endif /* ACTX_BF16_ELEMENTWISE_H */
