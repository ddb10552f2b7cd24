#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
/* A value's result never depends on where it sits: every length 0..100 at random (also
 * byte-misaligned) offsets gives the bits it has inside a long tensor; in place equals out of
 * place; a tensor ending just before an unmapped page is computed without touching it. For
 * every op variant, dtype and ISA. */
#include <sys/mman.h>
#include <unistd.h>

#include "cases.h"
#include "inputs.h"

#define LONG_N 4096
#define MAX_LEN 100

static unsigned char xs[LONG_N * 4 + 64], ref[LONG_N * 4 + 64], out[LONG_N * 4 + 64];
static unsigned char bias_f[7 * 4], bias_h[7 * 2];

/* bias cases use h = 7 here, so lengths and offsets step by 7 */
static size_t case_h(const test_case *c) { return c->bias_len ? 7 : 0; }

static void check_case(const test_case *c, actx_dtype dt, int isa) {
  const size_t es = actx_dtype_size(dt), h = case_h(c);
  actx_op_desc d = case_desc(c, dt, dt == ACTX_F32 ? (void *)bias_f : (void *)bias_h);
  if (h) d.bias_len = h;
  EXPECT(actx_compute(&d, xs, ref, LONG_N - LONG_N % (h ? h : 1), NULL) == ACTX_OK, "long");
  uint64_t s = 99;
  const size_t step = h ? h : 1;
  for (size_t len = 0; len <= MAX_LEN; len += step) {
    size_t off = (size_t)(rng_next(&s) % (LONG_N - MAX_LEN - 8));
    off -= off % step;
    const size_t skew = (size_t)(rng_next(&s) % 4); /* bytes: misaligned for every dtype */
    unsigned char *x = out + 16 + skew; /* a shifted copy, so y is misaligned too */
    memcpy(x, xs + off * es, len * es);
    EXPECT(actx_compute(&d, x, x, len, NULL) == ACTX_OK, "in place");
    EXPECT(memcmp(x, ref + off * es, len * es) == 0, "%s %s %s: length %zu at %zu (skew %zu) "
           "differs from the long tensor", c->name, actx_dtype_name(dt), actx_isa_name(isa), len,
           off, skew);
    unsigned char y[MAX_LEN * 4 + 8];
    EXPECT(actx_compute(&d, xs + off * es, y + skew, len, NULL) == ACTX_OK, "out of place");
    EXPECT(memcmp(y + skew, ref + off * es, len * es) == 0, "%s %s %s: out of place, length %zu",
           c->name, actx_dtype_name(dt), actx_isa_name(isa), len);
  }
}

/* Tensors ending at an unmapped page: any read or write past the end faults. */
static void check_guard_pages(const test_case *c, actx_dtype dt) {
  const size_t page = (size_t)sysconf(_SC_PAGESIZE), es = actx_dtype_size(dt), h = case_h(c);
  unsigned char *m = mmap(NULL, 4 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  EXPECT(m != MAP_FAILED, "mmap");
  if (m == MAP_FAILED) return;
  EXPECT(mprotect(m + page, page, PROT_NONE) == 0 && mprotect(m + 3 * page, page, PROT_NONE) == 0,
         "mprotect");
  actx_op_desc d = case_desc(c, dt, dt == ACTX_F32 ? (void *)bias_f : (void *)bias_h);
  if (h) d.bias_len = h;
  for (size_t len = 0; len <= 64; len += h ? h : 1) {
    unsigned char *x = m + page - len * es, *y = m + 3 * page - len * es;
    memcpy(x, xs, len * es);
    EXPECT(actx_compute(&d, x, y, len, NULL) == ACTX_OK, "guard");
    EXPECT(memcmp(y, ref, len * es) == 0, "%s %s guard page, length %zu", c->name,
           actx_dtype_name(dt), len);
    EXPECT(actx_compute(&d, x, x, len, NULL) == ACTX_OK, "guard in place");
    EXPECT(memcmp(x, ref, len * es) == 0, "%s %s guard page in place, length %zu", c->name,
           actx_dtype_name(dt), len);
  }
  munmap(m, 4 * page);
}

int main(void) {
  static float inputs[LONG_N + 4096];
  make_inputs(inputs, LONG_N, 5);
  uint64_t s = 11;
  for (int isa = 0; isa < ACTX_ISA_COUNT; isa++) {
    if (!actx_isa_supported((actx_isa)isa)) continue;
    actx_set_isa((actx_isa)isa);
    for (int dt = 0; dt < ACTX_DTYPE_COUNT; dt++) {
      const size_t es = actx_dtype_size((actx_dtype)dt);
      for (size_t i = 0; i < LONG_N; i++) {
        if (dt == ACTX_F32) {
          memcpy(xs + 4 * i, &inputs[i + 7], 4); /* skip some specials: spread them around */
        } else {
          const uint16_t hbits = (uint16_t)rng_next(&s);
          memcpy(xs + 2 * i, &hbits, 2);
        }
      }
      for (size_t i = 0; i < 7; i++) {
        const float bf = rng_uniform(&s, -2, 2);
        const uint16_t bh = (uint16_t)(0x3C00 + i * 0x0111);
        memcpy(bias_f + 4 * i, &bf, 4);
        memcpy(bias_h + 2 * i, &bh, 2);
      }
      (void)es;
      for (size_t c = 0; c < TEST_CASE_COUNT; c++) {
        check_case(&test_cases[c], (actx_dtype)dt, isa);
        /* check_case left ref holding the long result from the start */
        check_guard_pages(&test_cases[c], (actx_dtype)dt);
      }
    }
  }
  return test_finish("test_placement");
}
