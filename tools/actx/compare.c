/* compare.c — element-wise comparison of tensors (see compare.h). */
#include "compare.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "half.h"
#include "model.h"

bool actx_compare_supports(int32_t elem_type) {
  switch (elem_type) {
  case ACTX_ELEM_FLOAT:
  case ACTX_ELEM_DOUBLE:
  case ACTX_ELEM_FLOAT16:
  case ACTX_ELEM_BFLOAT16:
  case ACTX_ELEM_UINT8:
  case ACTX_ELEM_INT8:
  case ACTX_ELEM_UINT16:
  case ACTX_ELEM_INT16:
  case ACTX_ELEM_INT32:
  case ACTX_ELEM_INT64:
  case ACTX_ELEM_UINT32:
  case ACTX_ELEM_UINT64:
  case ACTX_ELEM_BOOL:
    return true;
  default:
    return false;
  }
}

static bool is_floating(int32_t elem_type) {
  return elem_type == ACTX_ELEM_FLOAT || elem_type == ACTX_ELEM_DOUBLE ||
         elem_type == ACTX_ELEM_FLOAT16 || elem_type == ACTX_ELEM_BFLOAT16;
}

double actx_element_as_double(int32_t elem_type, const void *data, size_t i) {
  const unsigned char *p = data;
  switch (elem_type) {
  case ACTX_ELEM_FLOAT: {
    float v;
    memcpy(&v, p + 4 * i, 4);
    return v;
  }
  case ACTX_ELEM_DOUBLE: {
    double v;
    memcpy(&v, p + 8 * i, 8);
    return v;
  }
  case ACTX_ELEM_FLOAT16:
  case ACTX_ELEM_BFLOAT16: {
    uint16_t v;
    memcpy(&v, p + 2 * i, 2);
    return elem_type == ACTX_ELEM_FLOAT16 ? actx_f16_to_f32(v) : actx_bf16_to_f32(v);
  }
  case ACTX_ELEM_UINT8: return ((const uint8_t *)data)[i];
  case ACTX_ELEM_BOOL: return ((const uint8_t *)data)[i] != 0;
  case ACTX_ELEM_INT8: return ((const int8_t *)data)[i];
  case ACTX_ELEM_UINT16: {
    uint16_t v;
    memcpy(&v, p + 2 * i, 2);
    return v;
  }
  case ACTX_ELEM_INT16: {
    int16_t v;
    memcpy(&v, p + 2 * i, 2);
    return v;
  }
  case ACTX_ELEM_INT32: {
    int32_t v;
    memcpy(&v, p + 4 * i, 4);
    return v;
  }
  case ACTX_ELEM_UINT32: {
    uint32_t v;
    memcpy(&v, p + 4 * i, 4);
    return v;
  }
  case ACTX_ELEM_INT64: {
    int64_t v;
    memcpy(&v, p + 8 * i, 8);
    return (double)v;
  }
  case ACTX_ELEM_UINT64: {
    uint64_t v;
    memcpy(&v, p + 8 * i, 8);
    return (double)v;
  }
  default:
    return NAN;
  }
}

/* The raw bits of element i (up to 64 of them). */
static uint64_t element_bits(const void *data, size_t size, size_t i) {
  uint64_t v = 0;
  memcpy(&v, (const unsigned char *)data + size * i, size); /* little-endian machine */
  return v;
}

/* A signed position on the number line of a sign-magnitude float format of `bits` bits:
 * consecutive representable values are consecutive integers, ±0 both map to 0. */
static int64_t ordered(uint64_t u, unsigned bits) {
  uint64_t sign = (uint64_t)1 << (bits - 1);
  int64_t magnitude = (int64_t)(u & (sign - 1));
  return (u & sign) ? -magnitude : magnitude;
}

static bool bits_are_nan(uint64_t u, int32_t elem_type) {
  switch (elem_type) {
  case ACTX_ELEM_FLOAT: return (u & 0x7fffffffu) > 0x7f800000u;
  case ACTX_ELEM_DOUBLE: return (u & 0x7fffffffffffffffu) > 0x7ff0000000000000u;
  case ACTX_ELEM_FLOAT16: return (u & 0x7fffu) > 0x7c00u;
  case ACTX_ELEM_BFLOAT16: return (u & 0x7fffu) > 0x7f80u;
  default: return false;
  }
}

int actx_compare_tensors(int32_t elem_type, const void *expected, const void *actual,
                         size_t count, double rtol, double atol, actx_compare *out) {
  memset(out, 0, sizeof *out);
  out->count = count;
  if (!actx_compare_supports(elem_type))
    return -1;
  const size_t size = actx_elem_size(elem_type);
  const unsigned bits = (unsigned)(size * 8);
  const bool floating = is_floating(elem_type);
  for (size_t i = 0; i < count; i++) {
    uint64_t e = element_bits(expected, size, i), a = element_bits(actual, size, i);
    if (e == a)
      continue;
    out->differing++;
    bool within = false;
    if (floating) {
      bool e_nan = bits_are_nan(e, elem_type), a_nan = bits_are_nan(a, elem_type);
      if (e_nan != a_nan) {
        out->nan_mismatch = true;
      } else if (!e_nan) {
        int64_t d = ordered(e, bits) - ordered(a, bits);
        uint64_t ulp = d < 0 ? (uint64_t)0 - (uint64_t)d : (uint64_t)d;
        if (ulp > out->max_ulp)
          out->max_ulp = ulp;
        double ev = actx_element_as_double(elem_type, expected, i);
        double av = actx_element_as_double(elem_type, actual, i);
        if (isinf(ev) || isinf(av))
          within = ev == av;
        else
          within = fabs(av - ev) <= atol + rtol * fabs(ev);
      } else {
        within = true; /* NaN and NaN, different payloads */
      }
    }
    if (!within) {
      if (out->out_of_tolerance == 0) {
        out->first_out = i;
        out->first_expected = actx_element_as_double(elem_type, expected, i);
        out->first_actual = actx_element_as_double(elem_type, actual, i);
      }
      out->out_of_tolerance++;
    }
  }
  return 0;
}

void actx_compare_describe(const actx_compare *c, char *buf, size_t size) {
  if (c->differing == 0)
    snprintf(buf, size, "identical");
  else if (c->nan_mismatch)
    snprintf(buf, size, "%zu differ, NaN vs number", c->differing);
  else
    snprintf(buf, size, "%zu differ, max %llu ulp", c->differing,
             (unsigned long long)c->max_ulp);
}
