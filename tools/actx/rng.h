/* rng.h — seeded random inputs: the same seed gives the same tensors on every machine. */
#ifndef ACTX_TOOLS_RNG_H
#define ACTX_TOOLS_RNG_H

#include <stddef.h>
#include <stdint.h>

typedef struct actx_rng {
  uint64_t state;
} actx_rng;

void actx_rng_seed(actx_rng *rng, uint64_t seed);
uint64_t actx_rng_next(actx_rng *rng); /* splitmix64 */
double actx_rng_uniform(actx_rng *rng, double lo, double hi); /* [lo, hi) */
double actx_rng_normal(actx_rng *rng);                        /* mean 0, deviation 1 */

/* FNV-1a of a string, to derive one seed per benchmark case from its name. */
uint64_t actx_hash_string(uint64_t seed, const char *s);

/* Fills count elements of elem_type (ONNX numbering): floating types uniform in [lo, hi)
 * (rounded to the type), integer types in [0, 4), bool 0/1. Returns 0, or -1 for a type it
 * cannot fill. */
int actx_rng_fill(actx_rng *rng, int32_t elem_type, void *data, size_t count, double lo,
                  double hi);

#endif /* ACTX_TOOLS_RNG_H */
