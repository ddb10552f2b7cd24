/* bf16_conv_nonfinite.c — see bf16_conv_nonfinite.h for why a convolution needs this. */
#include "bf16_conv_nonfinite.h"

#include <stdlib.h>
#include <string.h>

#include "bf16_family.h"
#include "half.h"

/* 0x8000 where h's exponent is all ones (NaN, infinity): 0x7F80 + 0x0080 carries into the sign
 * bit, a smaller exponent does not. Integer arithmetic a vector unit does 32 at a time. */
static inline uint16_t nonfinite_bit(uint16_t h) {
  return (uint16_t)(((h & 0x7F80u) + 0x0080u) & 0x8000u);
}

ACTX_BF16_VECTORISED static uint16_t any_nonfinite(const uint16_t *restrict x, size_t n) {
  uint16_t any = 0;
  for (size_t i = 0; i < n; i++) any |= nonfinite_bit(x[i]);
  return any;
}

bool actx_conv_has_nonfinite(const uint16_t *x, size_t n) { return any_nonfinite(x, n) != 0; }

ACTX_BF16_VECTORISED static void zero_nonfinite(const uint16_t *restrict x, uint16_t *restrict y,
                                                size_t n) {
  for (size_t i = 0; i < n; i++) y[i] = (uint16_t)(x[i] & ~(0u - (nonfinite_bit(x[i]) >> 15)));
}

uint16_t *actx_conv_finite_copy(const uint16_t *x, size_t n) {
  uint16_t *y = malloc(n > 0 ? n * sizeof *y : 1);
  if (y != NULL) zero_nonfinite(x, y, n);
  return y;
}

/* The geometry of cs over three spatial dimensions (the unused ones of extent 1). */
typedef struct geometry {
  int64_t in[3], k[3], out[3], st[3], dl[3], lo[3];
  bool transposed;
} geometry;

static geometry geometry_of(const actx_dnnl_conv_shape *cs) {
  geometry g = {.transposed = cs->transposed};
  for (size_t d = 0; d < 3; d++) {
    const bool used = d < cs->spatial;
    g.in[d] = used ? cs->in[d] : 1;
    g.k[d] = used ? cs->kernel[d] : 1;
    g.out[d] = used ? cs->out[d] : 1;
    g.st[d] = used ? cs->strides[d] : 1;
    g.dl[d] = used ? cs->dilations[d] : 1;
    g.lo[d] = used ? cs->pads_begin[d] : 0;
  }
  return g;
}

/* The input position of tap k of output o along dimension d, or -1 outside the image (or, in
 * a transposed convolution, where no input position reaches o through k: o = i · stride - lo
 * + k · dilation). */
static inline int64_t tap(const geometry *g, size_t d, int64_t o, int64_t k) {
  int64_t i;
  if (g->transposed) {
    const int64_t t = o + g->lo[d] - k * g->dl[d];
    i = t >= 0 && t % g->st[d] == 0 ? t / g->st[d] : -1;
  } else {
    i = o * g->st[d] - g->lo[d] + k * g->dl[d];
  }
  return i >= 0 && i < g->in[d] ? i : -1;
}

/* Output o's window: the taps that fall inside the image, as positions in a channel's plane
 * (at) and in the kernel (k), in kernel order. Returns how many. */
static int64_t window_of(const geometry *g, const int64_t *o, int64_t *at, int64_t *k) {
  int64_t n = 0;
  for (int64_t k0 = 0; k0 < g->k[0]; k0++) {
    const int64_t i0 = tap(g, 0, o[0], k0);
    for (int64_t k1 = 0; i0 >= 0 && k1 < g->k[1]; k1++) {
      const int64_t i1 = tap(g, 1, o[1], k1);
      for (int64_t k2 = 0; i1 >= 0 && k2 < g->k[2]; k2++) {
        const int64_t i2 = tap(g, 2, o[2], k2);
        if (i2 < 0) continue;
        at[n] = (i0 * g->in[1] + i1) * g->in[2] + i2;
        k[n++] = (k0 * g->k[1] + k1) * g->k[2] + k2;
      }
    }
  }
  return n;
}

bool actx_conv_repair(const actx_dnnl_conv_shape *cs, const uint16_t *x, const float *w,
                      const float *bias, uint16_t *y) {
  const geometry g = geometry_of(cs);
  const int64_t groups = cs->group, cg = cs->channels / groups, mg = cs->out_channels / groups;
  const int64_t plane = g.in[0] * g.in[1] * g.in[2], out_plane = g.out[0] * g.out[1] * g.out[2];
  const int64_t taps = g.k[0] * g.k[1] * g.k[2];
  /* one image and group's marks a position: the worst special of its channels there (0 none,
   * 1 an infinity, 2 a NaN); and one output's window */
  uint8_t *marks = malloc((size_t)plane);
  int64_t *at = malloc((size_t)taps * sizeof *at), *k = malloc((size_t)taps * sizeof *k);
  const bool ok = marks != NULL && at != NULL && k != NULL;
  for (int64_t image = 0; ok && image < cs->batch; image++)
    for (int64_t grp = 0; grp < groups; grp++) {
      const uint16_t *xg = x + (image * cs->channels + grp * cg) * plane;
      memset(marks, 0, (size_t)plane);
      bool any = false;
      for (int64_t i = 0; i < cg * plane; i++)
        if (nonfinite_bit(xg[i]) != 0) {
          const uint8_t m = (xg[i] & 0x007F) != 0 ? 2 : 1;
          if (m > marks[i % plane]) marks[i % plane] = m;
          any = true;
        }
      if (!any) continue;
      int64_t o[3];
      for (o[0] = 0; o[0] < g.out[0]; o[0]++)
        for (o[1] = 0; o[1] < g.out[1]; o[1]++)
          for (o[2] = 0; o[2] < g.out[2]; o[2]++) {
            const int64_t n = window_of(&g, o, at, k);
            uint8_t worst = 0;
            for (int64_t t = 0; t < n; t++)
              if (marks[at[t]] > worst) worst = marks[at[t]];
            if (worst == 0) continue;
            const int64_t out_at = (o[0] * g.out[1] + o[1]) * g.out[2] + o[2];
            for (int64_t oc = grp * mg; oc < (grp + 1) * mg; oc++) {
              uint16_t *yo = &y[(image * cs->out_channels + oc) * out_plane + out_at];
              if (worst == 2) { /* NaN · w and NaN + s are NaN */
                *yo = 0x7FC0;
                continue;
              }
              /* the float32 sum of the window's products (channels, then taps) and the bias */
              float acc = 0.0f;
              for (int64_t ic = 0; ic < cg; ic++)
                for (int64_t t = 0; t < n; t++)
                  acc += actx_bf16_to_f32(xg[ic * plane + at[t]]) * w[(oc * cg + ic) * taps + k[t]];
              *yo = actx_f32_to_bf16(bias != NULL ? acc + bias[oc] : acc);
            }
          }
    }
  free(marks), free(at), free(k);
  return ok;
}
