#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
/* A value's result never depends on where it sits or on its tensor's length, and a kernel
 * touches nothing but its tensors: for every op variant (cases.h), dtype, ISA and ORT rule,
 *   - every length 0..100, with x, y and the bias each at every byte offset 0..63 from a
 *     64-byte boundary (misaligned for every dtype and vector width), gives the bits its
 *     elements have inside a long tensor computed by the portable kernel; in place too; the
 *     bytes around y and all of x and the bias are left alone. By each ISA's kernel (the
 *     bias, one element per x, at any length) and by actx_compute (lengths in whole bias rows,
 *     offsets 0..7);
 *   - tensors of every length 0..100 ending where an unmapped page begins, or beginning where
 *     one ends (x, y and the bias alike), so that a read or write outside them faults: the
 *     AVX-512 tail's masked loads and stores, the AVX2 tail's copies, the portable loop.
 * Bias variants with a row longer than the longest tensor (h = 768) have no length to test. */
#include <sys/mman.h>
#include <unistd.h>

#include "../../src/dispatch.h"
#include "cases.h"
#include "inputs.h"

#define LONG_N 4096
#define MAX_LEN 100
#define ALIGN 64
#define API_OFFSETS 8
#define PAD (ALIGN + 16)         /* bytes watched on each side of y */
#define BUF (PAD + ALIGN + MAX_LEN * 4 + PAD)

static unsigned char xs[LONG_N * 4];   /* the long tensor */
static unsigned char bs[LONG_N * 4];   /* its bias: the case's row, repeated */
static unsigned char ref[LONG_N * 4];  /* the portable kernel's result */
static unsigned char row_f[7 * 4], row_h[7 * 2];

typedef struct where {
  const test_case *c;
  actx_dtype dt;
  actx_ort_rule rule;
  actx_isa isa;
} where;

/* Runs x[off..off+len) with x, y, bias at byte offsets xo, yo, bo (y == x when in_place) and
 * checks the result and everything around it. api: through actx_compute (bias: the row). */
static void check_one(const where *w, size_t len, size_t off, size_t xo, size_t yo, size_t bo,
                      int in_place, int api) {
  static unsigned char xb[BUF], yb[BUF], bb[BUF], xcopy[BUF], bcopy[BUF];
  const size_t es = actx_dtype_size(w->dt), bytes = len * es;
  actx_op_desc d = case_desc(w->c, w->dt, w->dt == ACTX_F32 ? (void *)row_f : (void *)row_h);
  memset(yb, 0x5A, sizeof yb);
  unsigned char *y = yb + PAD + yo, *x = in_place ? y : xb + PAD + xo, *b = bb + PAD + bo;
  if (!in_place) memset(xb, 0xC3, sizeof xb);
  memcpy(x, xs + off * es, bytes);
  memset(bb, 0x3C, sizeof bb);
  memcpy(b, bs + off * es, bytes);
  memcpy(xcopy, xb, sizeof xb);
  memcpy(bcopy, bb, sizeof bb);
  if (api) { /* on w->isa, set by the caller */
    EXPECT(actx_compute(&d, x, y, len, NULL) == ACTX_OK, "compute");
  } else {
    actx_kernel_params p = rule_params(w->rule, &d);
    p.bias = d.bias ? b : NULL;
    actx_kernel_for_isa(w->isa, d.op, d.dtype)(x, y, len, &p);
  }
  const char *how = api ? "actx_compute" : "kernel";
#define WHERE_FMT "%s %s, %s rule, %s %s%s: length %zu at x+%zu y+%zu bias+%zu: "
#define WHERE_ARGS w->c->name, actx_dtype_name(w->dt), actx_ort_rule_name(w->rule), \
                   actx_isa_name(w->isa), how, in_place ? " in place" : "", len, xo, yo, bo
  EXPECT(memcmp(y, ref + off * es, bytes) == 0, WHERE_FMT "differs from the long tensor", WHERE_ARGS);
  int outside = 0;
  for (size_t i = 0; i < PAD + yo; i++) outside |= yb[i] != 0x5A;
  for (size_t i = PAD + yo + bytes; i < BUF; i++) outside |= yb[i] != 0x5A;
  EXPECT(!outside, WHERE_FMT "wrote outside y", WHERE_ARGS);
  EXPECT(in_place || memcmp(xb, xcopy, BUF) == 0, WHERE_FMT "wrote to x", WHERE_ARGS);
  EXPECT(memcmp(bb, bcopy, BUF) == 0, WHERE_FMT "wrote to the bias", WHERE_ARGS);
#undef WHERE_FMT
#undef WHERE_ARGS
}

static void check_lengths(const where *w) {
  const size_t h = w->c->bias_len;
  actx_set_isa(w->isa);
  uint64_t s = 99;
  for (size_t len = 0; len <= MAX_LEN; len++) {
    for (size_t o = 0; o < ALIGN; o++) {
      /* the other two offsets run through every value too, in another order */
      const size_t off = (size_t)(rng_next(&s) % (LONG_N - MAX_LEN));
      const size_t yo = (o * 37 + 5) % ALIGN, bo = (o * 23 + 11) % ALIGN;
      check_one(w, len, off, o, yo, bo, 0, 0);
      check_one(w, len, off, o, yo, bo, 1, 0);
    }
    if (h && len % h) continue;
    for (size_t o = 0; o < API_OFFSETS; o++) {
      size_t off = (size_t)(rng_next(&s) % (LONG_N - MAX_LEN));
      off -= h ? off % h : 0; /* the bias row starts with x */
      check_one(w, len, off, o, (o * 3 + 1) % API_OFFSETS, 0, 0, 1);
      check_one(w, len, off, o, 0, 0, 1, 1);
    }
  }
}

/* Three pages per tensor, the outer two unmapped: a tensor at the start or at the end of the
 * middle one. */
typedef struct guarded {
  unsigned char *m;
  size_t page;
} guarded;

static unsigned char *guarded_at(const guarded *g, int tensor, int at_end, size_t bytes) {
  unsigned char *mid = g->m + (3 * (size_t)tensor + 1) * g->page;
  return at_end ? mid + g->page - bytes : mid;
}

static void check_guard_pages(const where *w, const guarded *g) {
  const size_t es = actx_dtype_size(w->dt), h = w->c->bias_len;
  actx_set_isa(w->isa);
  for (int at_end = 0; at_end <= 1; at_end++) {
    for (size_t len = 0; len <= MAX_LEN; len++) {
      const size_t bytes = len * es;
      unsigned char *x = guarded_at(g, 0, at_end, bytes), *y = guarded_at(g, 1, at_end, bytes),
                    *b = guarded_at(g, 2, at_end, bytes);
      memcpy(b, bs, bytes);
      /* the kernel, out of place and in place */
      actx_op_desc d = case_desc(w->c, w->dt, NULL);
      actx_kernel_params p = rule_params(w->rule, &d);
      p.bias = h ? b : NULL;
      const actx_kernel_fn k = actx_kernel_for_isa(w->isa, d.op, d.dtype);
      memcpy(x, xs, bytes);
      k(x, y, len, &p);
      EXPECT(memcmp(y, ref, bytes) == 0, "%s %s, %s rule, %s kernel: guard page, length %zu",
             w->c->name, actx_dtype_name(w->dt), actx_ort_rule_name(w->rule),
             actx_isa_name(w->isa), len);
      k(x, x, len, &p);
      EXPECT(memcmp(x, ref, bytes) == 0, "%s %s, %s rule, %s kernel: guard page in place, "
             "length %zu", w->c->name, actx_dtype_name(w->dt), actx_ort_rule_name(w->rule),
             actx_isa_name(w->isa), len);
      /* actx_compute, in whole bias rows, the row guarded too */
      if (h && len % h) continue;
      unsigned char *row = guarded_at(g, 2, at_end, h * es);
      memcpy(row, bs, h * es);
      d.bias = h ? row : NULL;
      memcpy(x, xs, bytes);
      EXPECT(actx_compute(&d, x, y, len, NULL) == ACTX_OK, "compute");
      EXPECT(memcmp(y, ref, bytes) == 0, "%s %s, %s rule, %s actx_compute: guard page, length %zu",
             w->c->name, actx_dtype_name(w->dt), actx_ort_rule_name(w->rule),
             actx_isa_name(w->isa), len);
    }
  }
}

int main(void) {
  test_expect_vector_isa();
  static float inputs[LONG_N + 4096];
  make_inputs(inputs, LONG_N, 5);
  guarded g = {NULL, (size_t)sysconf(_SC_PAGESIZE)};
  g.m = mmap(NULL, 9 * g.page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  EXPECT(g.m != MAP_FAILED, "mmap");
  if (g.m == MAP_FAILED) return test_finish("test_placement");
  for (int t = 0; t < 3; t++)
    EXPECT(mprotect(g.m + (3 * (size_t)t + 1) * g.page, g.page, PROT_READ | PROT_WRITE) == 0,
           "mprotect");
  uint64_t s = 11;
  for (size_t i = 0; i < 7; i++) {
    const float bf = rng_uniform(&s, -2, 2);
    const uint16_t bh = (uint16_t)(0x3C00 + i * 0x0111);
    memcpy(row_f + 4 * i, &bf, 4);
    memcpy(row_h + 2 * i, &bh, 2);
  }
  for (int dt = 0; dt < ACTX_DTYPE_COUNT; dt++) {
    const size_t es = actx_dtype_size((actx_dtype)dt);
    for (size_t i = 0; i < LONG_N; i++) {
      if (dt == ACTX_F32) {
        memcpy(xs + 4 * i, &inputs[(i * 7 + 3) % LONG_N], 4); /* the specials spread around */
      } else {
        const uint16_t hbits = (uint16_t)rng_next(&s);
        memcpy(xs + 2 * i, &hbits, 2);
      }
    }
    for (size_t c = 0; c < TEST_CASE_COUNT; c++) {
      const test_case *tc = &test_cases[c];
      const size_t h = tc->bias_len;
      if (h > MAX_LEN) continue;
      const unsigned char *row = dt == ACTX_F32 ? row_f : row_h;
      for (size_t i = 0; h && i < LONG_N; i++) memcpy(bs + i * es, row + i % h * es, es);
      for (int r = 0; r < ACTX_ORT_RULE_COUNT; r++) {
        where w = {tc, (actx_dtype)dt, (actx_ort_rule)r, ACTX_ISA_PORTABLE};
        actx_set_ort_rule(w.rule);
        const actx_op_desc d = case_desc(tc, w.dt, NULL);
        actx_kernel_params p = rule_params(w.rule, &d);
        p.bias = h ? bs : NULL;
        actx_kernel_for_isa(ACTX_ISA_PORTABLE, d.op, d.dtype)(xs, ref, LONG_N, &p);
        for (size_t k = 0; k < TEST_ISA_COUNT; k++) {
          if (!test_isa_usable(test_isas[k])) continue;
          w.isa = test_isas[k];
          check_lengths(&w);
          check_guard_pages(&w, &g);
        }
      }
    }
  }
  munmap(g.m, 9 * g.page);
  return test_finish("test_placement");
}
