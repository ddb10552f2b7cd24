/* rng.c — seeded random numbers and tensors (see rng.h). */
#include "rng.h"

#include <math.h>
#include <string.h>

#include "half.h"
#include "model.h"

/* Integer inputs of unknown meaning (indices, ids) stay this small so they are valid indices
 * into most tensors a model could gather from. */
#define RANDOM_INT_LIMIT 4

void actx_rng_seed(actx_rng *rng, uint64_t seed) { rng->state = seed; }

uint64_t actx_rng_next(actx_rng *rng) {
  uint64_t z = (rng->state += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

double actx_rng_uniform(actx_rng *rng, double lo, double hi) {
  double unit = (double)(actx_rng_next(rng) >> 11) / 9007199254740992.0; /* 53 bits: [0, 1) */
  return lo + (hi - lo) * unit;
}

double actx_rng_normal(actx_rng *rng) {
  /* Box-Muller; 1 - u keeps the logarithm's argument in (0, 1]. */
  double u = 1.0 - actx_rng_uniform(rng, 0, 1), v = actx_rng_uniform(rng, 0, 1);
  return sqrt(-2.0 * log(u)) * cos(2.0 * 3.14159265358979323846 * v);
}

uint64_t actx_hash_string(uint64_t seed, const char *s) {
  uint64_t h = 0xcbf29ce484222325u ^ seed;
  for (; *s; s++) {
    h ^= (unsigned char)*s;
    h *= 0x100000001b3u;
  }
  return h;
}

int actx_rng_fill(actx_rng *rng, int32_t elem_type, void *data, size_t count, double lo,
                  double hi) {
  unsigned char *p = data;
  for (size_t i = 0; i < count; i++) {
    double x = actx_rng_uniform(rng, lo, hi);
    int64_t k = (int64_t)(actx_rng_next(rng) % RANDOM_INT_LIMIT);
    switch (elem_type) {
    case ACTX_ELEM_FLOAT: {
      float v = (float)x;
      memcpy(p + 4 * i, &v, 4);
      break;
    }
    case ACTX_ELEM_DOUBLE:
      memcpy(p + 8 * i, &x, 8);
      break;
    case ACTX_ELEM_FLOAT16:
    case ACTX_ELEM_BFLOAT16: {
      uint16_t v = elem_type == ACTX_ELEM_FLOAT16 ? actx_f64_to_f16(x) : actx_f64_to_bf16(x);
      memcpy(p + 2 * i, &v, 2);
      break;
    }
    case ACTX_ELEM_BOOL:
      p[i] = (uint8_t)(k & 1);
      break;
    case ACTX_ELEM_UINT8:
    case ACTX_ELEM_INT8:
      p[i] = (uint8_t)k;
      break;
    case ACTX_ELEM_UINT16:
    case ACTX_ELEM_INT16: {
      uint16_t v = (uint16_t)k;
      memcpy(p + 2 * i, &v, 2);
      break;
    }
    case ACTX_ELEM_INT32:
    case ACTX_ELEM_UINT32: {
      uint32_t v = (uint32_t)k;
      memcpy(p + 4 * i, &v, 4);
      break;
    }
    case ACTX_ELEM_INT64:
    case ACTX_ELEM_UINT64:
      memcpy(p + 8 * i, &k, 8);
      break;
    default:
      return -1;
    }
  }
  return 0;
}
