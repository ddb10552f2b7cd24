/* bf16_dnnl.c — oneDNN behind bf16_dnnl.h. An op is one oneDNN primitive plus the reorders that
 * bring the caller's plain tensors to the layouts (and element type) it chose: src and dst of a
 * convolution (blocked layouts; channels-last ones by our own transposes, bf16_transpose.h),
 * the weights when they arrive plain or in a layout this shape's
 * primitive does not take, and, on hosts without bfloat16 arithmetic, the widening of src and
 * weights to float32. Every primitive uses a user scratchpad, allocated per run with the
 * reorders' temporaries, so that concurrent runs of one op share nothing writable. */
#include "bf16_dnnl.h"
#include "bf16_family.h"
#include "bf16_round.h"
#include "bf16_transpose.h"
#include "lut.h"

#include <stdlib.h>
#include <string.h>

/* ---- the rounding of results (with or without oneDNN) ------------------------------------- */

/* Below this many results a task, the pool's wake-up costs more than the pass. */
#define ROUND_MIN_PER_TASK 32768
/* its speed, for actx_bf16_tasks's rule */
#define ROUND_NS_PER_ELEMENT 0.05

typedef struct round_job {
  const float *acc;
  uint16_t *y;
  size_t n, per_task;
} round_job;

static void round_task(void *ctx, size_t task) {
  const round_job *j = ctx;
  const size_t begin = task * j->per_task;
  if (begin >= j->n) return;
  const size_t len = j->n - begin < j->per_task ? j->n - begin : j->per_task;
  actx_bf16_round_span(j->acc + begin, j->y + begin, len);
}

void actx_dnnl_round(const float *acc, uint16_t *y, size_t n, const actx_parallel *par) {
  const size_t tasks = actx_bf16_tasks(par, (int64_t)n, (int64_t)n, ROUND_MIN_PER_TASK,
                                       ROUND_NS_PER_ELEMENT);
  if (tasks <= 1) {
    actx_bf16_round_span(acc, y, n);
    return;
  }
  round_job job = {.acc = acc, .y = y, .n = n, .per_task = (n + tasks - 1) / tasks};
  par->parallel_for(par->runner_ctx, round_task, &job, tasks);
}

#ifndef ACTX_HAVE_DNNL

static actx_status unavailable(const char **why) {
  if (why != NULL) *why = "oneDNN not available (this build has no MatMul, Gemm or Conv)";
  return ACTX_ERROR_UNSUPPORTED;
}
bool actx_dnnl_available(void) { return false; }
double actx_dnnl_ns_per_mac(void) { return 1.0; }
bool actx_dnnl_native_bf16(void) { return false; }
actx_status actx_dnnl_matmul_pack(const actx_dnnl_matmul_shape *shape, const uint16_t *b,
                                  actx_dnnl_weights **out, const char **why) {
  return unavailable(why);
}
actx_status actx_dnnl_conv_pack(const actx_dnnl_conv_shape *shape, const uint16_t *w,
                                actx_dnnl_weights **out, const char **why) {
  return unavailable(why);
}
size_t actx_dnnl_weights_bytes(const actx_dnnl_weights *weights) { return 0; }
void actx_dnnl_weights_destroy(actx_dnnl_weights *weights) {}
actx_status actx_dnnl_weights_plain(const actx_dnnl_weights *weights, float *plain,
                                    const char **why) {
  return unavailable(why);
}
actx_status actx_dnnl_matmul_create(const actx_dnnl_matmul_shape *shape,
                                    const actx_dnnl_weights *weights, actx_dnnl_op **out,
                                    const char **why) {
  return unavailable(why);
}
actx_status actx_dnnl_conv_create(const actx_dnnl_conv_shape *shape,
                                  const actx_dnnl_weights *weights, actx_dnnl_op **out,
                                  const char **why) {
  return unavailable(why);
}
actx_status actx_dnnl_run(const actx_dnnl_op *op, const uint16_t *src, const uint16_t *weights,
                          const float *bias, float *dst, const char **why) {
  return unavailable(why);
}
actx_status actx_dnnl_run_rounded(const actx_dnnl_op *op, const uint16_t *src,
                                  const uint16_t *weights, const float *bias, uint16_t *y,
                                  const uint16_t *table, bool *nonfinite, const char **why) {
  return unavailable(why);
}
const char *actx_dnnl_op_impl(const actx_dnnl_op *op) { return ""; }
bool actx_dnnl_op_reorders_weights(const actx_dnnl_op *op) { return false; }
bool actx_dnnl_op_transposes(const actx_dnnl_op *op) { return false; }
void actx_dnnl_op_destroy(actx_dnnl_op *op) {}
actx_dnnl_cache *actx_dnnl_cache_create(actx_dnnl_weights *weights) {
  actx_dnnl_weights_destroy(weights);
  return NULL;
}
const actx_dnnl_weights *actx_dnnl_cache_weights(const actx_dnnl_cache *cache) { return NULL; }
actx_status actx_dnnl_cache_matmul(actx_dnnl_cache *cache, const actx_dnnl_matmul_shape *shape,
                                   actx_dnnl_op **op, const char **why) {
  return unavailable(why);
}
actx_status actx_dnnl_cache_conv(actx_dnnl_cache *cache, const actx_dnnl_conv_shape *shape,
                                 actx_dnnl_op **op, const char **why) {
  return unavailable(why);
}
void actx_dnnl_cache_release(actx_dnnl_cache *cache, actx_dnnl_op *op) {}
void actx_dnnl_cache_destroy(actx_dnnl_cache *cache) {}

#else

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>

#include <oneapi/dnnl/dnnl.h>

#include "half.h"

/* oneDNN and its OpenMP runtime keep process-wide state (JIT-generated code, thread teams, a few
 * allocations made once) that they never tear down. The EP library that brings them in may be
 * unloaded (ORT's UnregisterExecutionProviderLibrary); they must stay, or that state would point
 * into unmapped code and its allocations would be lost. So, once loaded, they are made
 * non-deletable (RTLD_NOLOAD: only those already mapped, as this library's dependencies). */
__attribute__((constructor)) static void pin_runtime_libraries(void) {
  static const char *const names[] = {"libdnnl.so.3", "libgomp.so.1"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    (void)dlopen(names[i], RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
}

/* GNU OpenMP's entry points (libgomp.so.1, oneDNN's runtime): declared here rather than through
 * omp.h so that no file needs -fopenmp (clang's would mean a second OpenMP runtime). */
extern int omp_get_max_threads(void);
extern void omp_set_num_threads(int n);

/* Every primitive here is made and run on one OpenMP thread, the caller's: the parallelism is
 * the caller's, over ORT's pool (bf16_family.h). Both matter: oneDNN fixes a primitive's thread
 * count when it is made (its work split; a run then asks for that many whatever the count is
 * then), so one made under the default (every core) ran a team of that many beside ORT's
 * threads on each run. The count is a per-thread ICV in GNU OpenMP, so it is set around each
 * entry point and restored (the caller's own OpenMP use keeps its count). */
static int one_thread_begin(void) {
  const int previous = omp_get_max_threads();
  omp_set_num_threads(1);
  return previous;
}
static void one_thread_end(int previous) { omp_set_num_threads(previous); }
/* An entry point's body: returns `call` (an actx_status), made on one OpenMP thread. */
#define RETURN_ON_ONE_THREAD(call)             \
  do {                                         \
    const int previous_ = one_thread_begin();  \
    const actx_status status_ = (call);        \
    one_thread_end(previous_);                 \
    return status_;                            \
  } while (0)

#define ALIGN 64

static pthread_once_t engine_once = PTHREAD_ONCE_INIT;
/* The CPU engine: thread-safe, one per process, kept for its lifetime. */
static dnnl_engine_t engine;
static bool native_bf16;
/* actx_dnnl_ns_per_mac: one core's rate of the kernels oneDNN 3.2 picks, at the fast end of what
 * was measured (a 128 x 384 x 1536 bfloat16 matmul: 183 us with AMX on a Xeon, 401 us with
 * AVX512_BF16 on Zen 5; float32 on AVX-512 or AVX2 hosts about 0.012-0.02 ns a multiply-add) */
#define NS_PER_MAC_AMX 0.0025
#define NS_PER_MAC_AVX512_BF16 0.005
#define NS_PER_MAC_F32 0.012
static double ns_per_mac = NS_PER_MAC_F32;

struct actx_dnnl_weights {
  dnnl_memory_desc_t md;
  dnnl_data_type_t type;
  void *data;
  size_t bytes;
};

/* A channels-first view: (batch, channels, spatial...) with the spatial dimensions dense (one
 * plane of `plane` elements an image and channel), batch and channel strides any (elements): a
 * whole tensor, or a slab's rows of one. */
typedef struct channels_view {
  bool ok;
  int64_t batch, channels, plane, batch_stride, channel_stride;
} channels_view;

/* Whether the transposes of bf16_transpose.h make a layout change in place of a oneDNN reorder:
 * between the caller's channels-first view and the dense channels-last tensor of the same
 * dimensions and element type a convolution primitive takes. */
typedef struct channels_move {
  bool on;
  size_t elem_bytes; /* 2 or 4 */
} channels_move;

struct actx_dnnl_op {
  dnnl_primitive_t prim;
  /* what the caller passes: plain bfloat16 src and weights (or the packed weights), f32 dst */
  dnnl_memory_desc_t user_src, user_wei, user_dst, bias;
  /* float32 computation: the caller's src / weights widened, same layout (NULL: not widened).
   * Widened here, not by a oneDNN reorder: its bfloat16 -> float32 reorder is a generic loop
   * (simple:any) that costs more than the matmul. */
  dnnl_memory_desc_t wide_src, wide_wei;
  size_t src_span, wei_span; /* elements the caller's strided buffers cover */
  /* what the primitive takes */
  dnnl_memory_desc_t src, wei, dst;
  /* caller's -> primitive's (src, weights) and primitive's -> caller's (dst); NULL: the same */
  dnnl_primitive_t src_reorder, wei_reorder, dst_reorder;
  /* the caller's src and dst as channels-first views (a convolution's; .ok false otherwise),
   * and for each whether a transpose makes the change (src_reorder / dst_reorder then NULL) */
  channels_view src_view, dst_view;
  channels_move src_move, dst_move;
  /* the bytes a rounded run takes: float32 in the caller's layout or, with dst_move, bfloat16
   * channels-last */
  size_t rounded_bytes;
  /* per run: widened src / weights, reordered src / weights / dst, scratchpad */
  size_t wide_src_bytes, wide_wei_bytes, src_bytes, wei_bytes, dst_bytes, scratch_bytes;
  const actx_dnnl_weights *packed; /* the weights a run uses: the caller's or own_wei */
  /* the packed weights reordered once into this shape's layout when the caller's are in
   * another (packed for a guessed shape): owned, NULL when the caller's serve as they are */
  actx_dnnl_weights *own_wei;
  char impl[64];
};

static actx_status fail(const char **why, const char *message, actx_status status) {
  if (why != NULL) *why = message;
  return status;
}

static size_t round_up(size_t n) { return (n + ALIGN - 1) / ALIGN * ALIGN; }

/* A dense row-major descriptor of dims (strides 0 where a dimension is 1 do not matter). */
static dnnl_status_t dense_md(dnnl_memory_desc_t *md, int nd, const int64_t *dims,
                              dnnl_data_type_t type) {
  dnnl_dims_t d, s;
  int64_t stride = 1;
  for (int i = nd - 1; i >= 0; i--) {
    d[i] = dims[i];
    s[i] = stride;
    stride *= dims[i];
  }
  return dnnl_memory_desc_create_with_strides(md, nd, d, type, s);
}

static dnnl_status_t strided_md(dnnl_memory_desc_t *md, int nd, const int64_t *dims,
                                const int64_t *strides, dnnl_data_type_t type) {
  dnnl_dims_t d, s;
  for (int i = 0; i < nd; i++) {
    d[i] = dims[i];
    s[i] = strides[i];
  }
  return dnnl_memory_desc_create_with_strides(md, nd, d, type, s);
}

static dnnl_status_t any_md(dnnl_memory_desc_t *md, int nd, const int64_t *dims,
                            dnnl_data_type_t type) {
  dnnl_dims_t d;
  for (int i = 0; i < nd; i++) d[i] = dims[i];
  return dnnl_memory_desc_create_with_tag(md, nd, d, type, dnnl_format_tag_any);
}

/* md (plain, strided) with another element type, and the elements its buffer covers. */
static dnnl_status_t retype_md(const_dnnl_memory_desc_t md, dnnl_data_type_t type,
                               dnnl_memory_desc_t *out, size_t *span) {
  int nd = 0;
  const dnnl_dims_t *dims = NULL, *strides = NULL;
  dnnl_status_t st = dnnl_memory_desc_query(md, dnnl_query_ndims_s32, &nd);
  if (st == dnnl_success) st = dnnl_memory_desc_query(md, dnnl_query_dims, &dims);
  if (st == dnnl_success) st = dnnl_memory_desc_query(md, dnnl_query_strides, &strides);
  if (st != dnnl_success) return st;
  size_t n = 1;
  for (int i = 0; i < nd; i++) n += (size_t)((*dims)[i] - 1) * (size_t)(*strides)[i];
  *span = n;
  return dnnl_memory_desc_create_with_strides(out, nd, *dims, type, *strides);
}

/* bfloat16 -> float32, exact */
static void widen(const uint16_t *from, float *to, size_t n) {
  for (size_t i = 0; i < n; i++) to[i] = actx_bf16_to_f32(from[i]);
}

static dnnl_data_type_t md_type(const_dnnl_memory_desc_t md) {
  dnnl_data_type_t type = dnnl_data_type_undef;
  dnnl_memory_desc_query(md, dnnl_query_data_type, &type);
  return type;
}

/* md's dims and strides when it is a plain strided layout (no blocks, no padding, no offset) of
 * `nd` >= 3 dimensions; else false. */
static bool plain_layout(const_dnnl_memory_desc_t md, int nd, const dnnl_dims_t **dims,
                         const dnnl_dims_t **strides) {
  int n = 0, blocks = -1;
  dnnl_format_kind_t kind = dnnl_format_kind_undef;
  const dnnl_dims_t *padded = NULL;
  int64_t offset = -1;
  if (dnnl_memory_desc_query(md, dnnl_query_ndims_s32, &n) != dnnl_success || n != nd ||
      dnnl_memory_desc_query(md, dnnl_query_format_kind, &kind) != dnnl_success ||
      kind != dnnl_blocked ||
      dnnl_memory_desc_query(md, dnnl_query_inner_nblks_s32, &blocks) != dnnl_success ||
      blocks != 0 ||
      dnnl_memory_desc_query(md, dnnl_query_submemory_offset_s64, &offset) != dnnl_success ||
      offset != 0 || dnnl_memory_desc_query(md, dnnl_query_dims, dims) != dnnl_success ||
      dnnl_memory_desc_query(md, dnnl_query_padded_dims, &padded) != dnnl_success ||
      dnnl_memory_desc_query(md, dnnl_query_strides, strides) != dnnl_success)
    return false;
  for (int i = 0; i < nd; i++)
    if ((*padded)[i] != (**dims)[i]) return false;
  return true;
}

/* md as a channels-first view (.ok). */
static channels_view channels_view_of(const_dnnl_memory_desc_t md) {
  channels_view v = {.ok = false};
  int nd = 0;
  const dnnl_dims_t *dims = NULL, *strides = NULL;
  if (dnnl_memory_desc_query(md, dnnl_query_ndims_s32, &nd) != dnnl_success || nd < 3 ||
      !plain_layout(md, nd, &dims, &strides))
    return v;
  int64_t plane = 1;
  for (int i = nd - 1; i >= 2; i--) {
    if ((*dims)[i] > 1 && (*strides)[i] != plane) return v;
    plane *= (*dims)[i];
  }
  return (channels_view){.ok = true,
                         .batch = (*dims)[0],
                         .channels = (*dims)[1],
                         .plane = plane,
                         .batch_stride = (*strides)[0],
                         .channel_stride = (*strides)[1]};
}

/* Whether a transpose takes `first` (the caller's layout, view v) to or from `last` (the
 * primitive's): v is a channels-first view and last the dense channels-last layout of the same
 * dimensions and element type (a stride of a dimension of 1 does not matter). */
static channels_move channels_move_of(const channels_view *v, const_dnnl_memory_desc_t first,
                                      const_dnnl_memory_desc_t last) {
  const channels_move none = {.on = false};
  const dnnl_data_type_t type = md_type(first);
  int nd = 0;
  if (!v->ok || dnnl_memory_desc_equal(first, last) || type != md_type(last) ||
      (type != dnnl_bf16 && type != dnnl_f32) ||
      dnnl_memory_desc_query(first, dnnl_query_ndims_s32, &nd) != dnnl_success)
    return none;
  const dnnl_dims_t *first_dims = NULL, *first_strides = NULL, *dims = NULL, *strides = NULL;
  if (!plain_layout(first, nd, &first_dims, &first_strides) ||
      !plain_layout(last, nd, &dims, &strides) ||
      memcmp(*first_dims, *dims, (size_t)nd * sizeof (*dims)[0]) != 0)
    return none;
  int64_t span = v->channels;
  for (int i = nd - 1; i >= 2; i--) {
    if ((*dims)[i] > 1 && (*strides)[i] != span) return none;
    span *= (*dims)[i];
  }
  if ((v->channels > 1 && (*strides)[1] != 1) || (v->batch > 1 && (*strides)[0] != span))
    return none;
  return (channels_move){.on = true, .elem_bytes = type == dnnl_bf16 ? 2 : 4};
}

/* Image by image, elements of elem_bytes: the view's [channels][plane] (rows channel_stride
 * apart) to dense [plane][channels] (to_last), or back. */
static void channels_transpose(const channels_view *v, size_t elem_bytes, bool to_last,
                               const void *from, void *to) {
  const size_t c = (size_t)v->channels, plane = (size_t)v->plane, cs = (size_t)v->channel_stride;
  const size_t rows = to_last ? c : plane, cols = to_last ? plane : c;
  const size_t from_stride = to_last ? cs : c, to_stride = to_last ? c : cs;
  for (int64_t n = 0; n < v->batch; n++) {
    const size_t first = (size_t)(n * v->batch_stride), last = (size_t)n * plane * c;
    const size_t f = to_last ? first : last, t = to_last ? last : first;
    if (elem_bytes == 2)
      actx_transpose16((const uint16_t *)from + f, rows, cols, from_stride, (uint16_t *)to + t,
                       to_stride);
    else
      actx_transpose32((const uint32_t *)from + f, rows, cols, from_stride, (uint32_t *)to + t,
                       to_stride);
  }
}

/* A rounded result's positions a block: its bfloat16 (ROUND_BLOCK_ELEMENTS, 16 KiB) and the
 * float32 it is rounded from stay in L1 between the rounding and the transpose. */
#define ROUND_BLOCK_ELEMENTS 8192
static size_t round_block_positions(const channels_view *v) {
  const size_t c = (size_t)v->channels, plane = (size_t)v->plane;
  const size_t b = c < ROUND_BLOCK_ELEMENTS ? ROUND_BLOCK_ELEMENTS / c : 1;
  return b < plane ? b : plane;
}

/* The dense channels-last float32 result `from` rounded into the caller's channels-first view
 * `to`, a block of positions at a time through `block` (round_block_positions x channels):
 * rounding first, in the primitive's layout, so that the transpose moves 2 bytes an element,
 * not 4; by blocks, so that the rounded copy is a block, not the tensor (a YOLOv8n first Conv's
 * was 0.8 MB), and is transposed while it is in L1. Returns the rounding's NaN / infinity flag. */
static uint32_t round_channels_first(const channels_view *v, const float *from, uint16_t *block,
                                     uint16_t *to, const uint16_t *table) {
  const size_t c = (size_t)v->channels, plane = (size_t)v->plane, cs = (size_t)v->channel_stride;
  const size_t per_block = round_block_positions(v);
  uint32_t special = 0;
  for (int64_t n = 0; n < v->batch; n++) {
    const float *image = from + (size_t)n * plane * c;
    uint16_t *out = to + (size_t)(n * v->batch_stride);
    for (size_t p = 0; p < plane; p += per_block) {
      const size_t rows = plane - p < per_block ? plane - p : per_block;
      special |= actx_bf16_round_span(image + p * c, block, rows * c);
      if (table != NULL) actx_lut_apply(table, block, block, rows * c);
      actx_transpose16(block, rows, c, c, out + p, cs);
    }
  }
  return special;
}

static dnnl_primitive_attr_t user_scratchpad_attr(void) {
  dnnl_primitive_attr_t attr = NULL;
  if (dnnl_primitive_attr_create(&attr) != dnnl_success) return NULL;
  if (dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user) != dnnl_success) {
    dnnl_primitive_attr_destroy(attr);
    return NULL;
  }
  return attr;
}

static const char *pd_impl(const_dnnl_primitive_desc_t pd) {
  const char *impl = NULL;
  if (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) != dnnl_success ||
      impl == NULL)
    return "";
  return impl;
}

/* ---- the primitives' descriptors ----------------------------------------------------------- */

/* wei: the weights' descriptor to insist on, or NULL for the primitive's choice. */
static dnnl_status_t matmul_pd(const actx_dnnl_matmul_shape *s, dnnl_data_type_t type,
                               const_dnnl_memory_desc_t wei, dnnl_primitive_desc_t *pd) {
  const int nd = (int)s->rank;
  int64_t c_dims[ACTX_DNNL_MAX_RANK];
  for (int i = 0; i < nd - 2; i++)
    c_dims[i] = s->a_dims[i] > s->b_dims[i] ? s->a_dims[i] : s->b_dims[i];
  c_dims[nd - 2] = s->a_dims[nd - 2];
  c_dims[nd - 1] = s->b_dims[nd - 1];
  dnnl_memory_desc_t src = NULL, any_wei = NULL, dst = NULL;
  dnnl_primitive_attr_t attr = user_scratchpad_attr();
  dnnl_status_t st = attr == NULL ? dnnl_out_of_memory : dnnl_success;
  /* the caller's strides, in bfloat16 or widened to float32 */
  if (st == dnnl_success) st = strided_md(&src, nd, s->a_dims, s->a_strides, type);
  if (st == dnnl_success && wei == NULL) st = any_md(&any_wei, nd, s->b_dims, type);
  if (st == dnnl_success) st = dense_md(&dst, nd, c_dims, dnnl_f32);
  if (st == dnnl_success)
    st = dnnl_matmul_primitive_desc_create(pd, engine, src, wei != NULL ? wei : any_wei, NULL,
                                           dst, attr);
  dnnl_memory_desc_destroy(src);
  dnnl_memory_desc_destroy(any_wei);
  dnnl_memory_desc_destroy(dst);
  dnnl_primitive_attr_destroy(attr);
  return st;
}

static void conv_weight_dims(const actx_dnnl_conv_shape *s, int *nd, int64_t *dims) {
  int n = 0;
  if (s->group > 1) dims[n++] = s->group;
  dims[n++] = s->out_channels / s->group;
  dims[n++] = s->channels / s->group;
  for (size_t i = 0; i < s->spatial; i++) dims[n++] = s->kernel[i];
  *nd = n;
}

/* The caller's plain weights as oneDNN's dims ([G,] OC / G, C / G, kernel...): a conv's dense
 * in that order, a transposed conv's ONNX [C, OC / G, kernel...], the same dims with the
 * channel strides swapped. */
static dnnl_status_t plain_weights_md(const actx_dnnl_conv_shape *s, dnnl_memory_desc_t *md) {
  int64_t dims[6], strides[6];
  int nd;
  conv_weight_dims(s, &nd, dims);
  if (!s->transposed) return dense_md(md, nd, dims, dnnl_bf16);
  const int oc = s->group > 1 ? 1 : 0; /* then [OC / G, C / G] */
  int64_t taps = 1;
  for (int i = nd - 1; i > oc + 1; i--) {
    strides[i] = taps;
    taps *= dims[i];
  }
  strides[oc] = taps;
  strides[oc + 1] = dims[oc] * taps;
  if (oc == 1) strides[0] = dims[1] * dims[2] * taps;
  return strided_md(md, nd, dims, strides, dnnl_bf16);
}

/* a bfloat16 AMX tile row's multiply-adds */
#define AMX_BF16_TILE_K 32

/* Whether pd's scratchpad is as large as the input of s (bfloat16): room for a copy of it. */
static bool scratch_holds_input(const actx_dnnl_conv_shape *s, const_dnnl_primitive_desc_t pd) {
  const_dnnl_memory_desc_t scratch =
      dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
  double input_bytes = 2.0 * (double)s->batch * (double)s->channels;
  for (size_t i = 0; i < s->spatial; i++) input_bytes *= (double)s->in[i];
  return scratch != NULL && (double)dnnl_memory_desc_get_size(scratch) >= input_bytes;
}

/* Whether pd is oneDNN 3.2's brgconv_1x1 on AMX that copies its input (conv_pd) */
static bool copies_input_1x1(const actx_dnnl_conv_shape *s, const_dnnl_primitive_desc_t pd) {
  return !s->transposed && (s->channels / s->group) % AMX_BF16_TILE_K != 0 &&
         strcmp(pd_impl(pd), "brgconv_1x1:avx512_core_amx") == 0 && scratch_holds_input(s, pd);
}

/* The primitive descriptor of s; skip_first: the first implementation oneDNN offers passed
 * over for the next one */
static dnnl_status_t conv_pd_create(const actx_dnnl_conv_shape *s, dnnl_data_type_t type,
                                    const_dnnl_memory_desc_t wei, bool skip_first,
                                    dnnl_primitive_desc_t *pd) {
  const int nd = 2 + (int)s->spatial;
  int64_t src_dims[5] = {s->batch, s->channels}, dst_dims[5] = {s->batch, s->out_channels};
  int64_t wei_dims[6];
  int wei_nd;
  conv_weight_dims(s, &wei_nd, wei_dims);
  dnnl_dims_t strides, dilates, pad_l, pad_r;
  for (size_t i = 0; i < s->spatial; i++) {
    src_dims[2 + i] = s->in[i];
    dst_dims[2 + i] = s->out[i];
    strides[i] = s->strides[i];
    dilates[i] = s->dilations[i] - 1; /* oneDNN counts the holes */
    pad_l[i] = s->pads_begin[i];
    pad_r[i] = s->pads_end[i];
  }
  dnnl_memory_desc_t src = NULL, any_wei = NULL, bias = NULL, dst = NULL;
  dnnl_primitive_attr_t attr = user_scratchpad_attr();
  dnnl_status_t st = attr == NULL ? dnnl_out_of_memory : dnnl_success;
  if (st == dnnl_success) st = any_md(&src, nd, src_dims, type);
  if (st == dnnl_success && wei == NULL) st = any_md(&any_wei, wei_nd, wei_dims, type);
  if (st == dnnl_success && s->bias) st = dense_md(&bias, 1, &s->out_channels, dnnl_f32);
  if (st == dnnl_success) st = any_md(&dst, nd, dst_dims, dnnl_f32);
  if (st == dnnl_success && s->transposed)
    st = dnnl_deconvolution_forward_primitive_desc_create(
        pd, engine, dnnl_forward_inference, dnnl_deconvolution_direct, src,
        wei != NULL ? wei : any_wei, bias, dst, strides, dilates, pad_l, pad_r, attr);
  else if (st == dnnl_success)
    st = dnnl_convolution_forward_primitive_desc_create(
        pd, engine, dnnl_forward_inference, dnnl_convolution_direct, src,
        wei != NULL ? wei : any_wei, bias, dst, strides, dilates, pad_l, pad_r, attr);
  if (st == dnnl_success && skip_first && dnnl_primitive_desc_next_impl(*pd) != dnnl_success) {
    dnnl_primitive_desc_destroy(*pd);
    *pd = NULL;
    st = dnnl_unimplemented;
  }
  dnnl_memory_desc_destroy(src);
  dnnl_memory_desc_destroy(any_wei);
  dnnl_memory_desc_destroy(bias);
  dnnl_memory_desc_destroy(dst);
  dnnl_primitive_attr_destroy(attr);
  return st;
}

/* oneDNN 3.2's 1 x 1 AMX convolution (brgconv_1x1), where a group's input channels are not a
 * multiple of a bfloat16 tile row's 32 (48: 32 + 16), can first copy its whole input, the
 * channels padded, into its scratchpad (848 KB for YOLOv8n's 48-channel 80 x 80 Conv; 20 KB for
 * a 16-channel 112 x 112 one, which it does not copy). In that model's twin, one thread of the
 * AMX Xeon, the copying primitive ran 0.73-1.17 ms (ONEDNN_VERBOSE's exec times, 4 runs; 0.07
 * alone with warm buffers) and oneDNN's next implementation for it, jit_1x1:avx512_core_amx,
 * which copies nothing, 0.06-0.09; the 16-channel one was faster as it is (0.23 against 0.39).
 * Such a primitive (channels not a multiple of 32, a scratchpad as large as its input) takes
 * the next implementation, unless that is the reference loops or copies the input too. (The
 * names are oneDNN 3.2's, the version the build installs.) */
static dnnl_status_t conv_pd(const actx_dnnl_conv_shape *s, dnnl_data_type_t type,
                             const_dnnl_memory_desc_t wei, dnnl_primitive_desc_t *pd) {
  dnnl_status_t st = conv_pd_create(s, type, wei, false, pd);
  if (st != dnnl_success || !copies_input_1x1(s, *pd)) return st;
  dnnl_primitive_desc_t next = NULL;
  if (conv_pd_create(s, type, wei, true, &next) == dnnl_success) {
    if (strncmp(pd_impl(next), "ref", 3) != 0 && !scratch_holds_input(s, next)) {
      dnnl_primitive_desc_destroy(*pd);
      *pd = next;
    } else {
      dnnl_primitive_desc_destroy(next);
    }
  }
  return dnnl_success;
}

/* ---- the engine, and whether bfloat16 is native here --------------------------------------- */

static void engine_init(void) {
  if (dnnl_engine_create(&engine, dnnl_cpu, 0) != dnnl_success) {
    engine = NULL;
    return;
  }
  /* oneDNN's bfloat16 primitives on a host without bfloat16 arithmetic are its reference
   * loops ("ref:any"), orders of magnitude slower than its float32 ones; on AVX-512 without
   * AVX512_BF16 its jit emulation ("gemm:jit:bf16") makes NaN of inf · x in its matmuls (the
   * zero padding of K). Both compute in float32 instead. */
  const dnnl_cpu_isa_t isa = dnnl_get_effective_cpu_isa(); /* a mask: AMX's holds this one */
  const bool bf16_hardware = (isa & dnnl_cpu_isa_avx512_core_bf16) == dnnl_cpu_isa_avx512_core_bf16;
  const actx_dnnl_matmul_shape probe = {
      .rank = 2, .a_dims = {64, 64}, .a_strides = {64, 1}, .b_dims = {64, 64},
      .b_strides = {64, 1}};
  dnnl_primitive_desc_t pd = NULL;
  const int previous = one_thread_begin();
  if (matmul_pd(&probe, dnnl_bf16, NULL, &pd) == dnnl_success) {
    native_bf16 = bf16_hardware && strncmp(pd_impl(pd), "ref", 3) != 0;
    dnnl_primitive_desc_destroy(pd);
  }
  if (native_bf16)
    ns_per_mac = (isa & dnnl_cpu_isa_avx512_core_amx) == dnnl_cpu_isa_avx512_core_amx
                     ? NS_PER_MAC_AMX
                     : NS_PER_MAC_AVX512_BF16;
  one_thread_end(previous);
}

bool actx_dnnl_available(void) {
  pthread_once(&engine_once, engine_init);
  return engine != NULL;
}

bool actx_dnnl_native_bf16(void) { return actx_dnnl_available() && native_bf16; }

double actx_dnnl_ns_per_mac(void) {
  (void)actx_dnnl_available();
  return ns_per_mac;
}

static dnnl_data_type_t compute_type(void) { return native_bf16 ? dnnl_bf16 : dnnl_f32; }

/* ---- running primitives -------------------------------------------------------------------- */

typedef struct arg {
  int kind;
  const_dnnl_memory_desc_t md;
  void *data;
} arg;

static dnnl_status_t execute(dnnl_primitive_t prim, dnnl_stream_t stream, const arg *args,
                             int n) {
  dnnl_exec_arg_t exec[8];
  dnnl_status_t st = dnnl_success;
  int made = 0;
  for (; made < n && st == dnnl_success; made++) {
    exec[made].arg = args[made].kind;
    st = dnnl_memory_create(&exec[made].memory, args[made].md, engine, args[made].data);
    if (st != dnnl_success) break;
  }
  if (st == dnnl_success) st = dnnl_primitive_execute(prim, stream, n, exec);
  if (st == dnnl_success) st = dnnl_stream_wait(stream);
  for (int i = 0; i < made; i++) dnnl_memory_destroy(exec[i].memory);
  return st;
}

static dnnl_status_t reorder_run(dnnl_primitive_t reorder, dnnl_stream_t stream,
                                 const_dnnl_memory_desc_t from_md, const void *from,
                                 const_dnnl_memory_desc_t to_md, void *to, void *scratch) {
  const_dnnl_memory_desc_t scratch_md = NULL;
  const_dnnl_primitive_desc_t pd = NULL;
  dnnl_primitive_get_primitive_desc(reorder, &pd);
  scratch_md = dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
  if (scratch_md != NULL && dnnl_memory_desc_get_size(scratch_md) == 0) scratch_md = NULL;
  const arg args[3] = {{DNNL_ARG_FROM, from_md, (void *)from},
                       {DNNL_ARG_TO, to_md, to},
                       {DNNL_ARG_SCRATCHPAD, scratch_md, scratch}};
  return execute(reorder, stream, args, scratch_md != NULL ? 3 : 2);
}

/* A reorder from -> to and the scratchpad it needs, or NULL when the layouts are the same. */
static dnnl_status_t reorder_make(const_dnnl_memory_desc_t from, const_dnnl_memory_desc_t to,
                                  dnnl_primitive_t *reorder, size_t *scratch) {
  *reorder = NULL;
  if (dnnl_memory_desc_equal(from, to)) return dnnl_success;
  dnnl_primitive_attr_t attr = user_scratchpad_attr();
  if (attr == NULL) return dnnl_out_of_memory;
  dnnl_primitive_desc_t pd = NULL;
  dnnl_status_t st = dnnl_reorder_primitive_desc_create(&pd, from, engine, to, engine, attr);
  dnnl_primitive_attr_destroy(attr);
  if (st != dnnl_success) return st;
  const_dnnl_memory_desc_t scratch_md =
      dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
  const size_t bytes = scratch_md != NULL ? dnnl_memory_desc_get_size(scratch_md) : 0;
  if (bytes > *scratch) *scratch = bytes;
  st = dnnl_primitive_create(reorder, pd);
  dnnl_primitive_desc_destroy(pd);
  return st;
}

/* data (laid out as from) reordered once into to (laid out as to_md), on the calling thread:
 * the weights' one-off layout changes. */
static actx_status reorder_once(const_dnnl_memory_desc_t from_md, const void *from,
                                const_dnnl_memory_desc_t to_md, void *to) {
  dnnl_primitive_t reorder = NULL;
  size_t scratch_bytes = 0;
  if (reorder_make(from_md, to_md, &reorder, &scratch_bytes) != dnnl_success)
    return ACTX_ERROR_UNSUPPORTED;
  if (reorder == NULL) {
    memcpy(to, from, dnnl_memory_desc_get_size(to_md));
    return ACTX_OK;
  }
  actx_status status = ACTX_ERROR_OUT_OF_MEMORY;
  void *scratch = NULL;
  dnnl_stream_t stream = NULL;
  if (scratch_bytes == 0 || (scratch = aligned_alloc(ALIGN, round_up(scratch_bytes))) != NULL) {
    status = ACTX_ERROR_UNSUPPORTED;
    if (dnnl_stream_create(&stream, engine, dnnl_stream_default_flags) == dnnl_success &&
        reorder_run(reorder, stream, from_md, from, to_md, to, scratch) == dnnl_success)
      status = ACTX_OK;
  }
  if (stream != NULL) dnnl_stream_destroy(stream);
  dnnl_primitive_destroy(reorder);
  free(scratch);
  return status;
}

/* ---- packing ------------------------------------------------------------------------------- */

typedef dnnl_status_t (*pd_maker)(const void *shape, dnnl_data_type_t type,
                                  const_dnnl_memory_desc_t wei, dnnl_primitive_desc_t *pd);

static dnnl_status_t make_matmul_pd(const void *s, dnnl_data_type_t t,
                                    const_dnnl_memory_desc_t w, dnnl_primitive_desc_t *pd) {
  return matmul_pd(s, t, w, pd);
}
static dnnl_status_t make_conv_pd(const void *s, dnnl_data_type_t t, const_dnnl_memory_desc_t w,
                                  dnnl_primitive_desc_t *pd) {
  return conv_pd(s, t, w, pd);
}

static actx_status pack(pd_maker make, const void *shape, const_dnnl_memory_desc_t plain,
                        const void *data, actx_dnnl_weights **out, const char **why) {
  const dnnl_data_type_t type = compute_type();
  dnnl_primitive_desc_t pd = NULL;
  if (make(shape, type, NULL, &pd) != dnnl_success)
    return fail(why, "oneDNN has no primitive for this shape", ACTX_ERROR_UNSUPPORTED);
  actx_dnnl_weights *w = calloc(1, sizeof *w);
  actx_status status = ACTX_ERROR_OUT_OF_MEMORY;
  dnnl_memory_desc_t wide_md = NULL;
  float *wide = NULL;
  if (w == NULL) goto done;
  w->type = type;
  if (dnnl_memory_desc_clone(&w->md, dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0))
      != dnnl_success)
    goto done;
  w->bytes = dnnl_memory_desc_get_size(w->md);
  w->data = aligned_alloc(ALIGN, round_up(w->bytes));
  if (w->data == NULL) goto done;
  /* float32 computation: widen the caller's weights (same layout) before the reorder */
  if (type == dnnl_f32) {
    size_t span = 0;
    if (retype_md(plain, dnnl_f32, &wide_md, &span) != dnnl_success) goto done;
    if ((wide = malloc(span * sizeof *wide)) == NULL) goto done;
    widen(data, wide, span);
    plain = wide_md;
    data = wide;
  }
  status = reorder_once(plain, data, w->md, w->data);
  *why = status == ACTX_OK ? "" : "oneDNN cannot reorder the weights";
done:
  free(wide);
  dnnl_memory_desc_destroy(wide_md);
  dnnl_primitive_desc_destroy(pd);
  if (status != ACTX_OK) {
    actx_dnnl_weights_destroy(w);
    if (status == ACTX_ERROR_OUT_OF_MEMORY) *why = "out of memory";
    return status;
  }
  *out = w;
  return ACTX_OK;
}

static const char *unavailable_why = "oneDNN not available (its CPU engine could not be made)";

/* Packed weights reordered into another layout `to` (same dimensions and element type): once,
 * when an op's primitive prefers a layout other than the one they were packed in. */
static actx_status weights_relayout(const actx_dnnl_weights *from, const_dnnl_memory_desc_t to,
                                    actx_dnnl_weights **out) {
  *out = NULL;
  actx_dnnl_weights *w = calloc(1, sizeof *w);
  if (w == NULL) return ACTX_ERROR_OUT_OF_MEMORY;
  w->type = from->type;
  actx_status status = ACTX_ERROR_OUT_OF_MEMORY;
  if (dnnl_memory_desc_clone(&w->md, to) == dnnl_success) {
    w->bytes = dnnl_memory_desc_get_size(w->md);
    if ((w->data = aligned_alloc(ALIGN, round_up(w->bytes))) != NULL)
      status = reorder_once(from->md, from->data, w->md, w->data);
  }
  if (status != ACTX_OK) {
    actx_dnnl_weights_destroy(w);
    return status;
  }
  *out = w;
  return ACTX_OK;
}

static actx_status pack_matmul_weights(const actx_dnnl_matmul_shape *s, const uint16_t *b,
                                       actx_dnnl_weights **out, const char **why) {
  *out = NULL;
  if (!actx_dnnl_available()) return fail(why, unavailable_why, ACTX_ERROR_UNSUPPORTED);
  dnnl_memory_desc_t plain = NULL;
  if (strided_md(&plain, (int)s->rank, s->b_dims, s->b_strides, dnnl_bf16) != dnnl_success)
    return fail(why, "oneDNN cannot describe the weights", ACTX_ERROR_UNSUPPORTED);
  const actx_status st = pack(make_matmul_pd, s, plain, b, out, why);
  dnnl_memory_desc_destroy(plain);
  return st;
}

actx_status actx_dnnl_matmul_pack(const actx_dnnl_matmul_shape *s, const uint16_t *b,
                                  actx_dnnl_weights **out, const char **why) {
  RETURN_ON_ONE_THREAD(pack_matmul_weights(s, b, out, why));
}

static actx_status pack_conv_weights(const actx_dnnl_conv_shape *s, const uint16_t *w,
                                     actx_dnnl_weights **out, const char **why) {
  *out = NULL;
  if (!actx_dnnl_available()) return fail(why, unavailable_why, ACTX_ERROR_UNSUPPORTED);
  dnnl_memory_desc_t plain = NULL;
  if (plain_weights_md(s, &plain) != dnnl_success)
    return fail(why, "oneDNN cannot describe the weights", ACTX_ERROR_UNSUPPORTED);
  const actx_status st = pack(make_conv_pd, s, plain, w, out, why);
  dnnl_memory_desc_destroy(plain);
  return st;
}

actx_status actx_dnnl_conv_pack(const actx_dnnl_conv_shape *s, const uint16_t *w,
                                actx_dnnl_weights **out, const char **why) {
  RETURN_ON_ONE_THREAD(pack_conv_weights(s, w, out, why));
}

size_t actx_dnnl_weights_bytes(const actx_dnnl_weights *w) { return w != NULL ? w->bytes : 0; }

static actx_status weights_plain(const actx_dnnl_weights *w, float *plain, const char **why) {
  int nd = 0;
  const dnnl_dims_t *dims = NULL;
  if (dnnl_memory_desc_query(w->md, dnnl_query_ndims_s32, &nd) != dnnl_success ||
      dnnl_memory_desc_query(w->md, dnnl_query_dims, &dims) != dnnl_success)
    return fail(why, "oneDNN cannot describe the weights", ACTX_ERROR_UNSUPPORTED);
  dnnl_memory_desc_t md = NULL;
  if (dense_md(&md, nd, *dims, dnnl_f32) != dnnl_success)
    return fail(why, "oneDNN cannot describe the weights", ACTX_ERROR_UNSUPPORTED);
  const actx_status st = reorder_once(w->md, w->data, md, plain);
  dnnl_memory_desc_destroy(md);
  return st == ACTX_OK ? ACTX_OK : fail(why, "oneDNN cannot reorder the weights", st);
}

actx_status actx_dnnl_weights_plain(const actx_dnnl_weights *w, float *plain, const char **why) {
  RETURN_ON_ONE_THREAD(weights_plain(w, plain, why));
}

void actx_dnnl_weights_destroy(actx_dnnl_weights *w) {
  if (w == NULL) return;
  dnnl_memory_desc_destroy(w->md);
  free(w->data);
  free(w);
}

/* ---- ops ----------------------------------------------------------------------------------- */

void actx_dnnl_op_destroy(actx_dnnl_op *op) {
  if (op == NULL) return;
  if (op->prim != NULL) dnnl_primitive_destroy(op->prim);
  if (op->src_reorder != NULL) dnnl_primitive_destroy(op->src_reorder);
  if (op->wei_reorder != NULL) dnnl_primitive_destroy(op->wei_reorder);
  if (op->dst_reorder != NULL) dnnl_primitive_destroy(op->dst_reorder);
  actx_dnnl_weights_destroy(op->own_wei);
  dnnl_memory_desc_t mds[] = {op->user_src, op->user_wei, op->user_dst, op->bias, op->wide_src,
                              op->wide_wei, op->src,      op->wei,      op->dst};
  for (size_t i = 0; i < sizeof mds / sizeof mds[0]; i++) dnnl_memory_desc_destroy(mds[i]);
  free(op);
}

/* The op's primitive for the caller's descriptors (user_*), with the reorders its own need.
 * plain_weights: try the caller's plain weights as they are first (a matmul's runtime B: no
 * reorder per run); a convolution's runtime W always goes to the layout the primitive picks,
 * so that its results are the bits of the same W packed.
 * Packed weights never constrain the primitive: they were packed for a guessed shape (an image
 * size, an M), and forcing that layout on another shape makes oneDNN take its reference loops
 * ("ref:any": a stride-2 convolution given a stride-1 one's layout) or reorder them every run.
 * The primitive picks its layout ("any"); when it differs from the packed one, the weights are
 * reordered into it once, here, and the op holds that copy (own_wei; the cache may adopt it). */
static actx_status op_finish(actx_dnnl_op *op, pd_maker make, const void *shape,
                             bool plain_weights, const char **why) {
  const dnnl_data_type_t type = op->packed != NULL ? op->packed->type : compute_type();
  dnnl_status_t st = dnnl_success;
  if (type == dnnl_f32 && md_type(op->user_src) != dnnl_f32)
    st = retype_md(op->user_src, dnnl_f32, &op->wide_src, &op->src_span);
  if (st == dnnl_success && type == dnnl_f32 && md_type(op->user_wei) != dnnl_f32)
    st = retype_md(op->user_wei, dnnl_f32, &op->wide_wei, &op->wei_span);
  if (st != dnnl_success) {
    actx_dnnl_op_destroy(op);
    return fail(why, "oneDNN cannot describe the widened operands", ACTX_ERROR_UNSUPPORTED);
  }
  const_dnnl_memory_desc_t from_src = op->wide_src != NULL ? op->wide_src : op->user_src;
  const_dnnl_memory_desc_t from_wei = op->wide_wei != NULL ? op->wide_wei : op->user_wei;
  dnnl_primitive_desc_t pd = NULL;
  /* a runtime matmul B as it is when the primitive takes it; else the primitive's own layout */
  if (op->packed != NULL || !plain_weights || make(shape, type, from_wei, &pd) != dnnl_success) {
    pd = NULL;
    if (make(shape, type, NULL, &pd) != dnnl_success) {
      actx_dnnl_op_destroy(op);
      return fail(why, "oneDNN has no primitive for this shape", ACTX_ERROR_UNSUPPORTED);
    }
  }
  if (op->packed != NULL) {
    const_dnnl_memory_desc_t want = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
    if (!dnnl_memory_desc_equal(want, op->packed->md)) {
      const actx_status rs = weights_relayout(op->packed, want, &op->own_wei);
      dnnl_memory_desc_t user = NULL;
      if (rs == ACTX_OK && dnnl_memory_desc_clone(&user, want) != dnnl_success)
        st = dnnl_out_of_memory;
      if (rs != ACTX_OK || st != dnnl_success) {
        dnnl_primitive_desc_destroy(pd);
        actx_dnnl_op_destroy(op);
        return fail(why, rs == ACTX_ERROR_UNSUPPORTED ? "oneDNN cannot reorder the weights"
                                                      : "out of memory",
                    rs == ACTX_ERROR_UNSUPPORTED ? rs : ACTX_ERROR_OUT_OF_MEMORY);
      }
      op->packed = op->own_wei;
      dnnl_memory_desc_destroy(op->user_wei);
      op->user_wei = user;
      from_wei = op->user_wei;
    }
  }
  snprintf(op->impl, sizeof op->impl, "%s%s", pd_impl(pd), type == dnnl_f32 ? " (f32)" : "");
  const_dnnl_memory_desc_t scratch_md =
      dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
  op->scratch_bytes = scratch_md != NULL ? dnnl_memory_desc_get_size(scratch_md) : 0;
  st = dnnl_memory_desc_clone(&op->src, dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0));
  if (st == dnnl_success)
    st = dnnl_memory_desc_clone(&op->wei,
                                dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0));
  if (st == dnnl_success)
    st = dnnl_memory_desc_clone(&op->dst, dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0));
  if (st == dnnl_success) st = dnnl_primitive_create(&op->prim, pd);
  dnnl_primitive_desc_destroy(pd);
  if (st == dnnl_success) {
    op->src_view = channels_view_of(from_src);
    op->dst_view = channels_view_of(op->user_dst);
    op->src_move = channels_move_of(&op->src_view, from_src, op->src);
    op->dst_move = channels_move_of(&op->dst_view, op->user_dst, op->dst);
  }
  if (st == dnnl_success && !op->src_move.on)
    st = reorder_make(from_src, op->src, &op->src_reorder, &op->scratch_bytes);
  if (st == dnnl_success)
    st = reorder_make(from_wei, op->wei, &op->wei_reorder, &op->scratch_bytes);
  if (st == dnnl_success && !op->dst_move.on)
    st = reorder_make(op->dst, op->user_dst, &op->dst_reorder, &op->scratch_bytes);
  if (st != dnnl_success) {
    actx_dnnl_op_destroy(op);
    return fail(why, st == dnnl_out_of_memory ? "out of memory"
                                              : "oneDNN cannot make the primitive or its reorders",
                st == dnnl_out_of_memory ? ACTX_ERROR_OUT_OF_MEMORY : ACTX_ERROR_UNSUPPORTED);
  }
  if (op->wide_src != NULL) op->wide_src_bytes = round_up(op->src_span * sizeof(float));
  if (op->wide_wei != NULL) op->wide_wei_bytes = round_up(op->wei_span * sizeof(float));
  if (op->src_reorder != NULL || op->src_move.on)
    op->src_bytes = round_up(dnnl_memory_desc_get_size(op->src));
  if (op->wei_reorder != NULL) op->wei_bytes = round_up(dnnl_memory_desc_get_size(op->wei));
  if (op->dst_reorder != NULL || op->dst_move.on)
    op->dst_bytes = round_up(dnnl_memory_desc_get_size(op->dst));
  const channels_view *v = &op->dst_view;
  if (op->dst_move.on)
    op->rounded_bytes =
        round_up(round_block_positions(v) * (size_t)v->channels * sizeof(uint16_t));
  else if (v->ok)
    op->rounded_bytes = round_up(dnnl_memory_desc_get_size(op->user_dst));
  op->scratch_bytes = round_up(op->scratch_bytes);
  return ACTX_OK;
}

static actx_status make_matmul_op(const actx_dnnl_matmul_shape *s,
                                  const actx_dnnl_weights *weights, actx_dnnl_op **out,
                                  const char **why) {
  *out = NULL;
  if (!actx_dnnl_available()) return fail(why, unavailable_why, ACTX_ERROR_UNSUPPORTED);
  if (s->rank < 2 || s->rank > ACTX_DNNL_MAX_RANK)
    return fail(why, "matmul rank out of range", ACTX_ERROR_INVALID_ARGUMENT);
  actx_dnnl_op *op = calloc(1, sizeof *op);
  if (op == NULL) return fail(why, "out of memory", ACTX_ERROR_OUT_OF_MEMORY);
  op->packed = weights;
  const int nd = (int)s->rank;
  int64_t c_dims[ACTX_DNNL_MAX_RANK];
  for (int i = 0; i < nd - 2; i++)
    c_dims[i] = s->a_dims[i] > s->b_dims[i] ? s->a_dims[i] : s->b_dims[i];
  c_dims[nd - 2] = s->a_dims[nd - 2];
  c_dims[nd - 1] = s->b_dims[nd - 1];
  const dnnl_data_type_t type = weights != NULL ? weights->type : compute_type();
  dnnl_status_t st = strided_md(&op->user_src, nd, s->a_dims, s->a_strides, dnnl_bf16);
  if (st == dnnl_success)
    st = weights != NULL ? dnnl_memory_desc_clone(&op->user_wei, weights->md)
                         : strided_md(&op->user_wei, nd, s->b_dims, s->b_strides, dnnl_bf16);
  if (st == dnnl_success) st = dense_md(&op->user_dst, nd, c_dims, dnnl_f32);
  (void)type;
  if (st != dnnl_success) {
    actx_dnnl_op_destroy(op);
    return fail(why, "oneDNN cannot describe the matmul", ACTX_ERROR_UNSUPPORTED);
  }
  const actx_status status = op_finish(op, make_matmul_pd, s, true, why);
  if (status == ACTX_OK) *out = op;
  return status;
}

actx_status actx_dnnl_matmul_create(const actx_dnnl_matmul_shape *s,
                                    const actx_dnnl_weights *weights, actx_dnnl_op **out,
                                    const char **why) {
  RETURN_ON_ONE_THREAD(make_matmul_op(s, weights, out, why));
}

static actx_status make_conv_op(const actx_dnnl_conv_shape *s, const actx_dnnl_weights *weights,
                                actx_dnnl_op **out, const char **why) {
  *out = NULL;
  if (!actx_dnnl_available()) return fail(why, unavailable_why, ACTX_ERROR_UNSUPPORTED);
  if (s->spatial < 1 || s->spatial > 3 || s->group < 1 || s->channels % s->group != 0 ||
      s->out_channels % s->group != 0)
    return fail(why, "convolution shape out of range", ACTX_ERROR_INVALID_ARGUMENT);
  actx_dnnl_op *op = calloc(1, sizeof *op);
  if (op == NULL) return fail(why, "out of memory", ACTX_ERROR_OUT_OF_MEMORY);
  op->packed = weights;
  const int nd = 2 + (int)s->spatial;
  int64_t src_dims[5] = {s->batch, s->channels}, dst_dims[5] = {s->batch, s->out_channels};
  for (size_t i = 0; i < s->spatial; i++) {
    src_dims[2 + i] = s->in[i];
    dst_dims[2 + i] = s->out[i];
  }
  dnnl_status_t st = s->x_strides[0] != 0
                         ? strided_md(&op->user_src, nd, src_dims, s->x_strides, dnnl_bf16)
                         : dense_md(&op->user_src, nd, src_dims, dnnl_bf16);
  if (st == dnnl_success)
    st = weights != NULL ? dnnl_memory_desc_clone(&op->user_wei, weights->md)
                         : plain_weights_md(s, &op->user_wei);
  if (st == dnnl_success)
    st = s->y_strides[0] != 0 ? strided_md(&op->user_dst, nd, dst_dims, s->y_strides, dnnl_f32)
                              : dense_md(&op->user_dst, nd, dst_dims, dnnl_f32);
  if (st == dnnl_success && s->bias) st = dense_md(&op->bias, 1, &s->out_channels, dnnl_f32);
  if (st != dnnl_success) {
    actx_dnnl_op_destroy(op);
    return fail(why, "oneDNN cannot describe the convolution", ACTX_ERROR_UNSUPPORTED);
  }
  const actx_status status = op_finish(op, make_conv_pd, s, false, why);
  if (status == ACTX_OK) *out = op;
  return status;
}

actx_status actx_dnnl_conv_create(const actx_dnnl_conv_shape *s,
                                  const actx_dnnl_weights *weights, actx_dnnl_op **out,
                                  const char **why) {
  RETURN_ON_ONE_THREAD(make_conv_op(s, weights, out, why));
}

const char *actx_dnnl_op_impl(const actx_dnnl_op *op) { return op != NULL ? op->impl : ""; }

bool actx_dnnl_op_reorders_weights(const actx_dnnl_op *op) {
  return op != NULL && op->wei_reorder != NULL;
}

bool actx_dnnl_op_transposes(const actx_dnnl_op *op) {
  return op != NULL && (op->src_move.on || op->dst_move.on);
}

/* The next `bytes` of a run's block of temporaries (NULL for none: the block may be NULL). */
static char *take(char **cursor, size_t bytes) {
  if (bytes == 0) return NULL;
  char *p = *cursor;
  *cursor += bytes;
  return p;
}

/* actx_dnnl_run into dst (float32), or, where rounded is set, actx_dnnl_run_rounded into it. */
static actx_status run_op(const actx_dnnl_op *op, const uint16_t *src, const uint16_t *weights,
                          const float *bias, float *dst, uint16_t *rounded,
                          const uint16_t *table, bool *nonfinite, const char **why) {
  if (op == NULL) return fail(why, "no oneDNN op", ACTX_ERROR_INVALID_ARGUMENT);
  if (rounded != NULL && !op->dst_view.ok)
    return fail(why, "the result is not a channels-first view to round",
                ACTX_ERROR_INVALID_ARGUMENT);
  const void *from_src = src, *from_wei = op->packed != NULL ? op->packed->data : weights;
  const size_t bytes = op->scratch_bytes + op->wide_src_bytes + op->wide_wei_bytes +
                       op->src_bytes + op->wei_bytes + op->dst_bytes +
                       (rounded != NULL ? op->rounded_bytes : 0);
  char *block = NULL;
  if (bytes > 0 && (block = aligned_alloc(ALIGN, bytes)) == NULL)
    return fail(why, "out of memory", ACTX_ERROR_OUT_OF_MEMORY);
  char *cursor = block;
  char *scratch = take(&cursor, op->scratch_bytes), *wide_src = take(&cursor, op->wide_src_bytes);
  char *wide_wei = take(&cursor, op->wide_wei_bytes), *src_tmp = take(&cursor, op->src_bytes);
  char *wei_tmp = take(&cursor, op->wei_bytes), *dst_tmp = take(&cursor, op->dst_bytes);
  /* a rounded run: the float32 result in the caller's layout, or with dst_move its rounding
   * channels-last, before the transpose */
  char *round_tmp = rounded != NULL ? take(&cursor, op->rounded_bytes) : NULL;
  if (rounded != NULL && !op->dst_move.on) dst = (float *)round_tmp;
  if (op->wide_src != NULL) {
    widen(src, (float *)wide_src, op->src_span);
    from_src = wide_src;
  }
  if (op->wide_wei != NULL) {
    widen(from_wei, (float *)wide_wei, op->wei_span);
    from_wei = wide_wei;
  }
  const_dnnl_memory_desc_t src_md = op->wide_src != NULL ? op->wide_src : op->user_src;
  const_dnnl_memory_desc_t wei_md = op->wide_wei != NULL ? op->wide_wei : op->user_wei;
  dnnl_stream_t stream = NULL;
  const int previous = one_thread_begin();
  dnnl_status_t st = dnnl_stream_create(&stream, engine, dnnl_stream_default_flags);
  if (op->src_move.on)
    channels_transpose(&op->src_view, op->src_move.elem_bytes, true, from_src, src_tmp);
  if (st == dnnl_success && op->src_reorder != NULL)
    st = reorder_run(op->src_reorder, stream, src_md, from_src, op->src, src_tmp, scratch);
  if (st == dnnl_success && op->wei_reorder != NULL)
    st = reorder_run(op->wei_reorder, stream, wei_md, from_wei, op->wei, wei_tmp, scratch);
  if (st == dnnl_success) {
    const_dnnl_primitive_desc_t pd = NULL;
    dnnl_primitive_get_primitive_desc(op->prim, &pd);
    const_dnnl_memory_desc_t scratch_md =
      dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
    arg args[5] = {
        {DNNL_ARG_SRC, op->src, src_tmp != NULL ? src_tmp : (void *)from_src},
        {DNNL_ARG_WEIGHTS, op->wei, op->wei_reorder != NULL ? wei_tmp : (void *)from_wei},
        {DNNL_ARG_DST, op->dst, dst_tmp != NULL ? (void *)dst_tmp : dst}};
    int n = 3;
    if (op->bias != NULL) args[n++] = (arg){DNNL_ARG_BIAS, op->bias, (void *)bias};
    if (scratch_md != NULL && dnnl_memory_desc_get_size(scratch_md) > 0)
      args[n++] = (arg){DNNL_ARG_SCRATCHPAD, scratch_md, scratch};
    st = execute(op->prim, stream, args, n);
  }
  if (st == dnnl_success && op->dst_reorder != NULL)
    st = reorder_run(op->dst_reorder, stream, op->dst, dst_tmp, op->user_dst, dst, scratch);
  const channels_view *v = &op->dst_view;
  uint32_t special = 0; /* a rounded result's NaNs and infinities */
  if (st == dnnl_success && op->dst_move.on && rounded == NULL)
    channels_transpose(v, op->dst_move.elem_bytes, false, dst_tmp, dst);
  if (st == dnnl_success && op->dst_move.on && rounded != NULL)
    special |= round_channels_first(v, (const float *)dst_tmp, (uint16_t *)round_tmp, rounded,
                                    table);
  if (st == dnnl_success && !op->dst_move.on && rounded != NULL)
    for (int64_t n = 0; n < v->batch; n++)
      for (int64_t c = 0; c < v->channels; c++) {
        const size_t at = (size_t)(n * v->batch_stride + c * v->channel_stride);
        special |= actx_bf16_round_span(dst + at, rounded + at, (size_t)v->plane);
        if (table != NULL) actx_lut_apply(table, rounded + at, rounded + at, (size_t)v->plane);
      }
  if (nonfinite != NULL) *nonfinite = special != 0;
  if (stream != NULL) dnnl_stream_destroy(stream);
  one_thread_end(previous);
  free(block);
  if (st != dnnl_success)
    return fail(why, st == dnnl_out_of_memory ? "out of memory" : "oneDNN failed to run",
                st == dnnl_out_of_memory ? ACTX_ERROR_OUT_OF_MEMORY : ACTX_ERROR_UNSUPPORTED);
  return ACTX_OK;
}

actx_status actx_dnnl_run(const actx_dnnl_op *op, const uint16_t *src, const uint16_t *weights,
                          const float *bias, float *dst, const char **why) {
  return run_op(op, src, weights, bias, dst, NULL, NULL, NULL, why);
}

actx_status actx_dnnl_run_rounded(const actx_dnnl_op *op, const uint16_t *src,
                                  const uint16_t *weights, const float *bias, uint16_t *y,
                                  const uint16_t *table, bool *nonfinite, const char **why) {
  return run_op(op, src, weights, bias, NULL, y, table, nonfinite, why);
}

/* ---- the per-kernel cache ----------------------------------------------------------------- */

/* Enough for the shapes a model's node meets in turn (sequence lengths, batch sizes); an op is
 * a few kilobytes plus oneDNN's kernel code. */
#define CACHE_SLOTS 8

typedef union shape_key {
  actx_dnnl_matmul_shape matmul;
  actx_dnnl_conv_shape conv;
} shape_key;

typedef struct slot {
  bool used, conv;
  shape_key key;
  actx_dnnl_op *op;
  size_t refs;
  uint64_t stamp;
} slot;

struct actx_dnnl_cache {
  pthread_mutex_t lock;
  /* held while an op is made: ops are made once per shape, and the first may replace weights,
   * which the making of another reads */
  pthread_mutex_t make_lock;
  actx_dnnl_weights *weights; /* owned */
  bool made;                  /* an op has been made (with weights as they are now) */
  uint64_t clock;
  slot slots[CACHE_SLOTS];
};

actx_dnnl_cache *actx_dnnl_cache_create(actx_dnnl_weights *weights) {
  actx_dnnl_cache *c = calloc(1, sizeof *c);
  if (c != NULL && pthread_mutex_init(&c->lock, NULL) != 0) {
    free(c);
    c = NULL;
  }
  if (c != NULL && pthread_mutex_init(&c->make_lock, NULL) != 0) {
    pthread_mutex_destroy(&c->lock);
    free(c);
    c = NULL;
  }
  if (c == NULL) {
    actx_dnnl_weights_destroy(weights);
    return NULL;
  }
  c->weights = weights;
  return c;
}

const actx_dnnl_weights *actx_dnnl_cache_weights(const actx_dnnl_cache *c) {
  return c != NULL ? c->weights : NULL;
}

/* The slot's op of this shape (one more user), or NULL; under c->lock. */
static actx_dnnl_op *cache_find(actx_dnnl_cache *c, bool conv, const void *shape, size_t size) {
  for (size_t i = 0; i < CACHE_SLOTS; i++) {
    slot *s = &c->slots[i];
    if (s->used && s->conv == conv && memcmp(&s->key, shape, size) == 0) {
      s->refs++;
      s->stamp = ++c->clock;
      return s->op;
    }
  }
  return NULL;
}

static actx_status cache_acquire(actx_dnnl_cache *c, bool conv, const void *shape, size_t size,
                                 actx_dnnl_op **out, const char **why) {
  *out = NULL;
  pthread_mutex_lock(&c->lock);
  *out = cache_find(c, conv, shape, size);
  pthread_mutex_unlock(&c->lock);
  if (*out != NULL) return ACTX_OK;
  /* made outside the lookup lock: concurrent runs of cached shapes need not wait for it */
  pthread_mutex_lock(&c->make_lock);
  pthread_mutex_lock(&c->lock);
  *out = cache_find(c, conv, shape, size); /* made meanwhile by another thread */
  pthread_mutex_unlock(&c->lock);
  if (*out != NULL) {
    pthread_mutex_unlock(&c->make_lock);
    return ACTX_OK;
  }
  actx_dnnl_op *op = NULL;
  const actx_status st = conv ? actx_dnnl_conv_create(shape, c->weights, &op, why)
                              : actx_dnnl_matmul_create(shape, c->weights, &op, why);
  if (st == ACTX_OK && op->own_wei != NULL && !c->made) {
    /* the first shape's layout replaces the packed one (no op uses that yet): a model of one
     * shape holds one copy of its weights; later shapes of another layout hold their own */
    actx_dnnl_weights_destroy(c->weights);
    c->weights = op->own_wei;
    op->own_wei = NULL;
  }
  if (st == ACTX_OK) c->made = true;
  pthread_mutex_unlock(&c->make_lock);
  if (st != ACTX_OK) return st;
  actx_dnnl_op *evicted = NULL;
  pthread_mutex_lock(&c->lock);
  slot *victim = NULL;
  for (size_t i = 0; i < CACHE_SLOTS; i++) {
    slot *s = &c->slots[i];
    if (s->used && s->refs > 0) continue;
    if (victim == NULL || !s->used || (victim->used && s->stamp < victim->stamp)) victim = s;
  }
  if (victim != NULL) {
    if (victim->used) evicted = victim->op;
    memset(&victim->key, 0, sizeof victim->key);
    memcpy(&victim->key, shape, size);
    *victim = (slot){.used = true, .conv = conv, .key = victim->key, .op = op, .refs = 1,
                     .stamp = ++c->clock};
  }
  pthread_mutex_unlock(&c->lock);
  actx_dnnl_op_destroy(evicted);
  *out = op; /* not in a slot when every one is busy: release destroys it */
  return ACTX_OK;
}

actx_status actx_dnnl_cache_matmul(actx_dnnl_cache *c, const actx_dnnl_matmul_shape *shape,
                                   actx_dnnl_op **op, const char **why) {
  return cache_acquire(c, false, shape, sizeof *shape, op, why);
}

actx_status actx_dnnl_cache_conv(actx_dnnl_cache *c, const actx_dnnl_conv_shape *shape,
                                 actx_dnnl_op **op, const char **why) {
  return cache_acquire(c, true, shape, sizeof *shape, op, why);
}

void actx_dnnl_cache_release(actx_dnnl_cache *c, actx_dnnl_op *op) {
  if (c == NULL || op == NULL) return;
  bool cached = false;
  pthread_mutex_lock(&c->lock);
  for (size_t i = 0; i < CACHE_SLOTS; i++)
    if (c->slots[i].used && c->slots[i].op == op) {
      c->slots[i].refs--;
      cached = true;
    }
  pthread_mutex_unlock(&c->lock);
  if (!cached) actx_dnnl_op_destroy(op);
}

void actx_dnnl_cache_destroy(actx_dnnl_cache *c) {
  if (c == NULL) return;
  for (size_t i = 0; i < CACHE_SLOTS; i++)
    if (c->slots[i].used) actx_dnnl_op_destroy(c->slots[i].op);
  actx_dnnl_weights_destroy(c->weights);
  pthread_mutex_destroy(&c->make_lock);
  pthread_mutex_destroy(&c->lock);
  free(c);
}

#endif /* ACTX_HAVE_DNNL */
