/* Finds the activation subgraphs exporters write (PyTorch, TensorFlow, Megatron, ...) that one
 * libactx call computes: exact GELU, tanh GELU, SiLU and QuickGelu, each optionally after an
 * Add of a bias, and a Gelu / FastGelu node after such an Add.
 *
 * A subgraph is recognised by what it computes rather than by how it is spelt. From the core
 * node (Erf, Tanh, Sigmoid) the matcher evaluates the core's argument as a polynomial in one
 * value x: it walks back through Mul, Add, Div-by-a-constant and Pow(·, 2 or 3) nodes whose output
 * feeds only that walk, and stops at constants and at x. So Div(x, √2) and Mul(1/√2, x), Pow(x, 3)
 * and (x·x)·x, (√(2/π)·x)·(1 + 0.044715·x·x) and √(2/π)·(x + 0.044715·x³) are each one
 * argument. After the core it follows the chain Add(·, 1) → Mul → Mul... multiplying in each
 * Mul's other operand (a monomial in x), or dividing by a Div's constant, until the product is
 * 0.5·x·(...), which covers every placement of the 0.5 (or the / 2). Whether ORT would have fused
 * the same subgraph itself, and so whether our result is ORT's to the bit, is decided separately
 * (ort_fusions.c).
 *
 * IEEE arithmetic is not the algebra of polynomials, so the evaluation only folds what gives the
 * same function for every input, infinities, NaNs and signed zeros included: constants lie in a
 * range where the few an argument combines cannot overflow or underflow where the activation
 * does not saturate anyway; no term may vanish (0·x² is NaN at x = ±inf, x + 0 is +0 at x = −0)
 * or cancel (x·1.5 + x·(−0.5) is inf − inf there); and QuickGelu's α, a parameter of the kernel
 * rather than a constant it knows, must be what one node computes. Anything else is no match. */
#include <math.h>
#include <string.h>

#include "actx_ep.h"

/* A polynomial in x of degree <= 3, the most an activation argument needs (x³). */
#define MAX_DEGREE 3
typedef struct poly {
  double c[MAX_DEGREE + 1]; /* c[k]: coefficient of x^k */
} poly;

/* The magnitudes a folded constant may have (0 aside: eval_node decides where a zero may be).
 * Activation constants lie far inside (0.044715 ... 3). */
#define MIN_CONSTANT 0x1p-20
#define MAX_CONSTANT 0x1p20

/* How deep the argument's expression may nest (the deepest spelling needs 4). */
#define MAX_EXPR_DEPTH 8
/* Mul / Div nodes after Add(core, 1) until the product is 0.5·x·(...): x and 0.5 apart. */
#define MAX_CHAIN 3

/* State of one match attempt. */
typedef struct matcher {
  const OrtApi *api;
  actx_ep_fusion *f;
  double tolerance;    /* relative, for constants: the rounding of the element type */
  bool rank1_constant; /* a [1]-shaped constant took part (it broadcasts a scalar x to [1]) */
  bool failed;         /* the subgraph is not one we take (not an error) */
} matcher;

/* How far a constant (or a product or quotient of two) may be from the exact value, relative.
 * float16 / bfloat16: 1.5 units of roundoff, so the correctly rounded constant passes and its
 * neighbours do not. float32: 4 units, because exporters compute constants such as √(2/π) or
 * 1/√2 in float32 arithmetic, rounding more than once; still far inside ORT's own 1e-5. */
static double dtype_tolerance(actx_dtype dtype) {
  switch (dtype) {
    case ACTX_F16: return 1.5 * 0x1p-11;
    case ACTX_BF16: return 1.5 * 0x1p-8;
    default: return 0x1p-22;
  }
}

static bool near(const matcher *m, double v, double want) {
  return fabs(v - want) <= m->tolerance * fabs(want);
}

static void add_node(matcher *m, const OrtNode *node) {
  actx_ep_fusion *f = m->f;
  for (size_t i = 0; i < f->n_nodes; i++)
    if (f->nodes[i] == node) return;
  if (f->n_nodes == ACTX_EP_MAX_FUSED_NODES) {
    m->failed = true;
    return;
  }
  f->nodes[f->n_nodes++] = node;
}

static bool in_fusion(const actx_ep_fusion *f, const OrtNode *node) {
  for (size_t i = 0; i < f->n_nodes; i++)
    if (f->nodes[i] == node) return true;
  return false;
}

static void poly_mul(const poly *a, const poly *b, poly *out, bool *ok) {
  poly r = {{0}};
  *ok = true;
  for (int i = 0; i <= MAX_DEGREE; i++)
    for (int j = 0; j <= MAX_DEGREE; j++) {
      if (a->c[i] == 0 || b->c[j] == 0) continue;
      if (i + j > MAX_DEGREE) {
        *ok = false;
        return;
      }
      r.c[i + j] += a->c[i] * b->c[j];
    }
  *out = r;
}

/* A leaf of the expression: it has to be x (the first leaf found decides which value that is). */
static OrtStatus *leaf(matcher *m, const OrtValueInfo *value, poly *out) {
  bool is_const = false;
  OrtStatus *st = m->api->ValueInfo_IsConstantInitializer(value, &is_const);
  if (st != NULL) return st;
  if (is_const) { /* a constant that is not a scalar: not an activation of x */
    m->failed = true;
    return NULL;
  }
  if (m->f->root == NULL) {
    m->f->root = value;
  } else {
    bool same = false;
    if ((st = actx_ep_same_value(m->api, value, m->f->root, &same)) != NULL) return st;
    if (!same) {
      m->failed = true;
      return NULL;
    }
  }
  memset(out, 0, sizeof *out);
  out->c[1] = 1;
  return NULL;
}

/* A scalar constant operand, as ORT's fusions define one (rank 0 or [1]). */
static OrtStatus *scalar(matcher *m, const OrtValueInfo *value, double *v, bool *ok) {
  actx_ep_constant c;
  OrtStatus *st = actx_ep_scalar_constant(m->api, value, &c, ok);
  if (st != NULL || !*ok) return st;
  if (c.rank > 1) {
    *ok = false;
    return NULL;
  }
  if (c.rank == 1) m->rank1_constant = true;
  *v = c.value;
  *ok = c.value == 0 || (fabs(c.value) >= MIN_CONSTANT && fabs(c.value) <= MAX_CONSTANT);
  return NULL;
}

static bool is_constant(const poly *p) {
  for (int k = 1; k <= MAX_DEGREE; k++)
    if (p->c[k] != 0) return false;
  return true;
}

static bool is_zero(const poly *p) { return is_constant(p) && p->c[0] == 0; }

/* Whether a + b is a sum IEEE arithmetic computes as the polynomial does: no operand is a zero
 * (x + 0 is +0 at x = −0) and no two terms that overflow to infinity can do so with opposite
 * signs (x·1.5 + x·(−0.5) is inf − inf = NaN at x = inf): terms of x^i and x^j need the same
 * sign and i − j even. Constants added to each other fold exactly. */
static bool sum_folds(const poly *a, const poly *b) {
  if (is_constant(a) && is_constant(b)) return true;
  if (is_zero(a) || is_zero(b)) return false;
  for (int i = 1; i <= MAX_DEGREE; i++)
    for (int j = 1; j <= MAX_DEGREE; j++)
      if (a->c[i] != 0 && b->c[j] != 0 &&
          ((i - j) % 2 != 0 || signbit(a->c[i]) != signbit(b->c[j])))
        return false;
  return true;
}

static OrtStatus *eval(matcher *m, const OrtValueInfo *value, int depth, poly *out);

/* value's producer when value feeds nothing but the expression being evaluated. */
static OrtStatus *private_producer(matcher *m, const OrtValueInfo *value, const OrtNode **node) {
  *node = NULL;
  const OrtNode *consumer = NULL;
  OrtStatus *st = actx_ep_single_consumer(m->api, value, &consumer);
  if (st != NULL || consumer == NULL) return st;
  return actx_ep_value_producer(m->api, value, node);
}

/* Evaluates a Mul, Add, Div or Pow node; *expanded false if node is none of those. */
static OrtStatus *eval_node(matcher *m, const OrtNode *node, int depth, poly *out, bool *expanded) {
  *expanded = false;
  const OrtApi *api = m->api;
  const OrtValueInfo *in[2];
  size_t n_in = 0;
  OrtStatus *st = actx_ep_node_inputs(api, node, in, 2, &n_in);
  if (st != NULL || n_in != 2 || in[0] == NULL || in[1] == NULL) return st;
  bool is_mul = false, is_add = false, is_div = false, is_pow = false;
  if ((st = actx_ep_node_is(api, node, "Mul", actx_ep_binary_since, &is_mul)) != NULL ||
      (st = actx_ep_node_is(api, node, "Add", actx_ep_binary_since, &is_add)) != NULL ||
      (st = actx_ep_node_is(api, node, "Div", actx_ep_binary_since, &is_div)) != NULL ||
      (st = actx_ep_node_is(api, node, "Pow", actx_ep_pow_since, &is_pow)) != NULL)
    return st;
  if (!is_mul && !is_add && !is_div && !is_pow) return NULL;
  *expanded = true;
  poly a;
  if ((st = eval(m, in[0], depth + 1, &a)) != NULL || m->failed) return st;
  if (is_mul || is_add) {
    poly b;
    if ((st = eval(m, in[1], depth + 1, &b)) != NULL || m->failed) return st;
    if (is_add) {
      m->failed = !sum_folds(&a, &b);
      for (int k = 0; k <= MAX_DEGREE; k++) out->c[k] = a.c[k] + b.c[k];
    } else {
      /* 0·x is not 0 at x = ±inf or NaN */
      const bool zero_times_x = !(is_constant(&a) && is_constant(&b)) && (is_zero(&a) || is_zero(&b));
      bool ok = false;
      poly_mul(&a, &b, out, &ok);
      m->failed = !ok || zero_times_x;
    }
  } else {
    /* Div by a constant, Pow by a constant 2 or 3 */
    double c = 0;
    bool ok = false;
    if ((st = scalar(m, in[1], &c, &ok)) != NULL) return st;
    if (!ok || (is_div && c == 0) || (is_pow && c != 2 && c != 3)) {
      m->failed = true;
      return NULL;
    }
    if (is_div) {
      for (int k = 0; k <= MAX_DEGREE; k++) out->c[k] = a.c[k] / c;
    } else {
      bool fits = true;
      poly_mul(&a, &a, out, &fits);
      if (fits && c == 3) {
        const poly square = *out;
        poly_mul(&square, &a, out, &fits);
      }
      m->failed = !fits;
    }
  }
  if (!m->failed) add_node(m, node);
  return NULL;
}

static OrtStatus *eval(matcher *m, const OrtValueInfo *value, int depth, poly *out) {
  memset(out, 0, sizeof *out);
  if (depth > MAX_EXPR_DEPTH || value == NULL) {
    m->failed = true;
    return NULL;
  }
  double c = 0;
  bool ok = false;
  OrtStatus *st = scalar(m, value, &c, &ok);
  if (st != NULL) return st;
  if (ok) {
    out->c[0] = c;
    return NULL;
  }
  const OrtNode *producer = NULL;
  if ((st = private_producer(m, value, &producer)) != NULL) return st;
  if (producer != NULL) {
    bool expanded = false;
    if ((st = eval_node(m, producer, depth, out, &expanded)) != NULL || expanded || m->failed)
      return st;
  }
  return leaf(m, value, out);
}

/* p is c·x^power with power 0 or 1 (a factor the chain after the core may multiply in). */
static bool monomial(const poly *p, int *power, double *coeff) {
  int found = -1;
  for (int k = 0; k <= MAX_DEGREE; k++) {
    if (p->c[k] == 0) continue;
    if (found >= 0) return false;
    found = k;
  }
  if (found < 0 || found > 1) return false;
  *power = found;
  *coeff = p->c[found];
  return true;
}

/* The Add(value, ≈1) that is value's only consumer; NULL if there is none. */
static OrtStatus *plus_one(matcher *m, const OrtValueInfo *value, const OrtNode **add) {
  *add = NULL;
  const OrtNode *consumer = NULL;
  OrtStatus *st = actx_ep_single_consumer(m->api, value, &consumer);
  if (st != NULL || consumer == NULL) return st;
  bool is_add = false;
  if ((st = actx_ep_node_is(m->api, consumer, "Add", actx_ep_binary_since, &is_add)) != NULL ||
      !is_add)
    return st;
  const OrtValueInfo *other = NULL;
  if ((st = actx_ep_other_input(m->api, consumer, value, &other)) != NULL || other == NULL)
    return st;
  double c = 0;
  bool ok = false;
  if ((st = scalar(m, other, &c, &ok)) != NULL) return st;
  if (ok && near(m, c, 1.0)) *add = consumer;
  return NULL;
}

/* From value = 1 + erf(...) (or tanh): the Mul nodes (and a Div by a constant, as in x·f / 2)
 * that make it 0.5·x·value. Sets f->y. */
static OrtStatus *times_half_x(matcher *m, const OrtValueInfo *value) {
  int power = 0;
  double coeff = 1;
  for (int step = 0; step < MAX_CHAIN; step++) {
    const OrtNode *next = NULL;
    bool is_mul = false, is_div = false;
    OrtStatus *st = actx_ep_single_consumer(m->api, value, &next);
    if (st == NULL) st = actx_ep_node_is(m->api, next, "Mul", actx_ep_binary_since, &is_mul);
    if (st == NULL) st = actx_ep_node_is(m->api, next, "Div", actx_ep_binary_since, &is_div);
    if (st != NULL || (!is_mul && !is_div)) return st;
    const OrtValueInfo *in[2], *other = NULL;
    size_t n_in = 0;
    if ((st = actx_ep_node_inputs(m->api, next, in, 2, &n_in)) != NULL || n_in != 2) return st;
    poly factor = {{0}};
    int p = 0;
    double c = 0;
    if (is_div) { /* value / constant */
      bool first = false, ok = false;
      if ((st = actx_ep_same_value(m->api, in[0], value, &first)) != NULL) return st;
      if (!first || (st = scalar(m, in[1], &c, &ok)) != NULL || !ok || c == 0) return st;
      factor.c[0] = 1 / c;
    } else {
      if ((st = actx_ep_other_input(m->api, next, value, &other)) != NULL || other == NULL)
        return st;
      if ((st = eval(m, other, 0, &factor)) != NULL || m->failed) return st;
    }
    /* x, 0.5, 0.5·x or a / 2: a larger factor would overflow the product where 0.5·x·(...) does
     * not */
    if (!monomial(&factor, &p, &c) || !(near(m, c, 1.0) || near(m, c, 0.5))) return NULL;
    power += p;
    coeff *= c;
    add_node(m, next);
    if ((st = actx_ep_node_output(m->api, next, &value)) != NULL || value == NULL) return st;
    if (power > 1) return NULL;
    if (power == 1 && near(m, coeff, 0.5)) {
      m->f->y = value;
      return NULL;
    }
  }
  return NULL;
}

/* erf(x/√2) or tanh(√(2/π)·(x + 0.044715·x³)), then 0.5·x·(1 + ·). */
static OrtStatus *match_gelu(matcher *m, const OrtValueInfo *arg, const OrtValueInfo *core_out) {
  actx_ep_fusion *f = m->f;
  poly p;
  OrtStatus *st = eval(m, arg, 0, &p);
  if (st != NULL || m->failed || f->root == NULL) return st;
  if (p.c[0] != 0 || p.c[2] != 0) return NULL;
  if (f->family == ACTX_EP_FUSION_ERF_GELU) {
    if (p.c[3] != 0 ||
        !(near(m, p.c[1], 1 / ACTX_EP_SQRT_2) || near(m, p.c[1], 1 / ACTX_EP_SQRT_2_SHORT)))
      return NULL;
  } else if (!near(m, p.c[1], ACTX_EP_SQRT_2_OVER_PI) ||
             !near(m, p.c[3] / p.c[1], ACTX_EP_CUBIC_COEFF)) {
    return NULL;
  }
  const OrtNode *add = NULL;
  if ((st = plus_one(m, core_out, &add)) != NULL || add == NULL) return st;
  add_node(m, add);
  const OrtValueInfo *sum = NULL;
  if ((st = actx_ep_node_output(m->api, add, &sum)) != NULL || sum == NULL) return st;
  return times_half_x(m, sum);
}

/* The α of the Sigmoid's argument α·x: x itself (α = 1), Mul(x, α) in either order, or
 * Div(x, c) where c is a power of two (x / c is then x·(1/c) for every x, and 1/c exact). The
 * kernel computes α·x with the α it is given, so α must be what one node of the graph computes
 * with: folding (x·a)·b into x·(a·b) rounds, overflows and underflows differently. */
static OrtStatus *sigmoid_alpha(matcher *m, const OrtValueInfo *arg, double *alpha) {
  const OrtApi *api = m->api;
  *alpha = 1;
  const OrtNode *node = NULL;
  bool is_mul = false, is_div = false;
  OrtStatus *st = private_producer(m, arg, &node);
  if (st == NULL) st = actx_ep_node_is(api, node, "Mul", actx_ep_binary_since, &is_mul);
  if (st == NULL) st = actx_ep_node_is(api, node, "Div", actx_ep_binary_since, &is_div);
  if (st != NULL) return st;
  poly p;
  if (!is_mul && !is_div) return leaf(m, arg, &p);
  const OrtValueInfo *in[2];
  size_t n_in = 0;
  if ((st = actx_ep_node_inputs(api, node, in, 2, &n_in)) != NULL) return st;
  double c[2] = {0, 0};
  bool constant[2] = {false, false};
  for (size_t i = 0; i < 2 && n_in == 2; i++)
    if (in[i] != NULL && (st = scalar(m, in[i], &c[i], &constant[i])) != NULL) return st;
  /* the constant: either operand of a Mul, the divisor of a Div */
  const int k = constant[1] ? 1 : is_mul && constant[0] ? 0 : -1;
  int exponent = 0;
  if (n_in != 2 || k < 0 || constant[1 - k] || c[k] == 0 ||
      (is_div && fabs(frexp(c[k], &exponent)) != 0.5)) {
    m->failed = true;
    return NULL;
  }
  *alpha = is_div ? 1 / c[k] : c[k];
  add_node(m, node);
  return leaf(m, in[1 - k], &p);
}

/* x·sigmoid(α·x): the Sigmoid's only consumer multiplies its output by x itself. */
static OrtStatus *match_sigmoid(matcher *m, const OrtValueInfo *arg, const OrtValueInfo *core_out) {
  actx_ep_fusion *f = m->f;
  double alpha = 1;
  OrtStatus *st = sigmoid_alpha(m, arg, &alpha);
  if (st != NULL || m->failed || f->root == NULL) return st;
  const OrtNode *mul = NULL;
  bool is_mul = false;
  if ((st = actx_ep_single_consumer(m->api, core_out, &mul)) != NULL) return st;
  if ((st = actx_ep_node_is(m->api, mul, "Mul", actx_ep_binary_since, &is_mul)) != NULL || !is_mul)
    return st;
  const OrtValueInfo *other = NULL;
  if ((st = actx_ep_other_input(m->api, mul, core_out, &other)) != NULL || other == NULL) return st;
  poly factor;
  if ((st = eval(m, other, 0, &factor)) != NULL || m->failed) return st;
  if (factor.c[0] != 0 || factor.c[1] != 1 || factor.c[2] != 0 || factor.c[3] != 0) return NULL;
  add_node(m, mul);
  f->node.alpha = (float)alpha;
  return actx_ep_node_output(m->api, mul, &f->y);
}

/* A float16 / bfloat16 Gelu node after Add(x, c), c a one-element constant that leaves x's shape
 * as it is: ORT has no kernel for either node in float16 and computes both in one float32 island,
 * so the sum must not be rounded to float16 (where x + c overflows, Gelu(±inf) is NaN and the
 * island's is ±0 or x + c). Our kernel adds c in float32 as the island does. */
static OrtStatus *match_scalar_bias(matcher *m, const OrtNode *add, const OrtValueInfo *const in[2],
                                    const actx_ep_tensor_meta *a, const actx_ep_tensor_meta *b) {
  actx_ep_fusion *f = m->f;
  if (f->family != ACTX_EP_FUSION_GELU_NODE || f->node.dtype == ACTX_F32) return NULL;
  const actx_ep_tensor_meta *meta[2] = {a, b};
  for (int i = 0; i < 2; i++) {
    actx_ep_constant c;
    bool ok = false;
    OrtStatus *st = actx_ep_scalar_constant(m->api, in[i], &c, &ok);
    if (st != NULL) return st;
    const actx_ep_tensor_meta *x = meta[1 - i];
    if (!ok || c.type != x->elem_type || !x->has_shape || c.rank > x->rank) continue;
    f->bias_add = add;
    f->bias = in[i];
    f->x = in[1 - i];
    f->node.bias_is_scalar = true;
    add_node(m, add);
    return NULL;
  }
  return NULL;
}

/* The Add that produces root, when one input is a 1-D bias along the other's last dimension and
 * root feeds nothing outside the fusion (ORT's BiasGeluFusion rule, which picks input 0 as the
 * bias when both are 1-D). */
static OrtStatus *match_bias(matcher *m) {
  const OrtApi *api = m->api;
  actx_ep_fusion *f = m->f;
  const OrtNode *add = NULL;
  bool is_add = false;
  OrtStatus *st = actx_ep_value_producer(api, f->root, &add);
  if (st == NULL) st = actx_ep_node_is(api, add, "Add", actx_ep_binary_since, &is_add);
  if (st != NULL || !is_add) return st;
  const OrtNode *consumers[ACTX_EP_MAX_CONSUMERS];
  size_t n = 0;
  bool graph_output = false;
  if ((st = actx_ep_value_consumers(api, f->root, consumers, ACTX_EP_MAX_CONSUMERS, &n,
                                    &graph_output)) != NULL)
    return st;
  if (graph_output || n == 0 || n > ACTX_EP_MAX_CONSUMERS) return NULL;
  for (size_t i = 0; i < n; i++)
    if (!in_fusion(f, consumers[i])) return NULL;
  const OrtValueInfo *in[2];
  size_t n_in = 0;
  if ((st = actx_ep_node_inputs(api, add, in, 2, &n_in)) != NULL || n_in != 2) return st;
  actx_ep_tensor_meta a, b;
  if ((st = actx_ep_value_meta(api, in[0], &a)) != NULL ||
      (st = actx_ep_value_meta(api, in[1], &b)) != NULL)
    return st;
  if ((st = match_scalar_bias(m, add, in, &a, &b)) != NULL || f->bias_add != NULL) return st;
  if (!a.has_shape || !b.has_shape || a.rank < 1 || b.rank < 1 ||
      !actx_ep_same_dim(&a, a.rank - 1, &b, b.rank - 1) || a.elem_type != b.elem_type)
    return NULL;
  int bias_index = a.rank == 1 ? 0 : b.rank == 1 ? 1 : -1;
  if (bias_index < 0) return NULL;
  f->bias_add = add;
  f->bias = in[bias_index];
  f->x = in[1 - bias_index];
  add_node(m, add);
  return NULL;
}

/* The kind of ORT kernel the subgraph amounts to (the policy table's row). */
static actx_ep_kind fused_kind(const actx_ep_fusion *f) {
  const bool bias = f->bias_add != NULL;
  switch (f->family) {
    case ACTX_EP_FUSION_ERF_GELU: return bias ? ACTX_EP_BIAS_GELU : ACTX_EP_MS_GELU;
    case ACTX_EP_FUSION_TANH_GELU: return bias ? ACTX_EP_FAST_GELU_BIAS : ACTX_EP_FAST_GELU;
    case ACTX_EP_FUSION_SIGMOID: return f->node.alpha == 1 ? ACTX_EP_SILU : ACTX_EP_QUICK_GELU;
    case ACTX_EP_FUSION_GELU_NODE:
      return f->node.op == ACTX_OP_GELU_TANH ? ACTX_EP_FAST_GELU_BIAS : ACTX_EP_BIAS_GELU;
    case ACTX_EP_FUSION_HALF_CASTS:
      return f->node.op == ACTX_OP_ERF ? ACTX_EP_ERF
             : f->node.op == ACTX_OP_TANH ? ACTX_EP_TANH
                                          : ACTX_EP_SIGMOID;
  }
  return ACTX_EP_MS_GELU;
}

/* Whether value (not a graph output) feeds node and nothing else. */
static OrtStatus *feeds_only(const OrtApi *api, const OrtValueInfo *value, const OrtNode *node,
                             bool *out) {
  const OrtNode *only = NULL;
  OrtStatus *st = actx_ep_single_consumer(api, value, &only);
  *out = st == NULL && only != NULL && only == node;
  return st;
}

/* Whether node is a Cast to `to`. */
static OrtStatus *cast_to(const OrtApi *api, const OrtNode *node, int64_t to, bool *out) {
  *out = false;
  bool is_cast = false, found = false;
  int64_t target = 0;
  OrtStatus *st = actx_ep_node_is(api, node, "Cast", NULL, &is_cast);
  if (st == NULL && is_cast) st = actx_ep_int_attr(api, node, "to", &target, &found);
  *out = st == NULL && is_cast && found && target == to;
  return st;
}

/* Cast(x: float → float16) → core → Cast(→ float), each value feeding only the next node. ORT
 * has no float16 kernel for Erf, Tanh or Sigmoid and runs the core in float32 between Casts it
 * inserts; its RemoveDuplicateCastTransformer then drops those and the model's two Casts too (an
 * inserted Cast does not count as a loss of precision), so ORT alone computes the float32
 * activation of x, which is our float32 kernel's result to the bit. Taking the core alone instead
 * would round its input and output to float16. */
static OrtStatus *match_half_casts(matcher *m, actx_op op, const OrtValueInfo *arg,
                                   const OrtValueInfo *core_out) {
  const OrtApi *api = m->api;
  actx_ep_fusion *f = m->f;
  const OrtNode *in_cast = NULL, *out_cast = NULL;
  bool ok = false;
  OrtStatus *st = actx_ep_value_producer(api, arg, &in_cast);
  if (st == NULL) st = cast_to(api, in_cast, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16, &ok);
  if (st != NULL || !ok) return st;
  if ((st = feeds_only(api, arg, f->core, &ok)) != NULL || !ok) return st;
  if ((st = actx_ep_single_consumer(api, core_out, &out_cast)) != NULL || out_cast == NULL)
    return st;
  if ((st = cast_to(api, out_cast, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &ok)) != NULL || !ok)
    return st;
  const OrtValueInfo *x = NULL, *y = NULL;
  size_t n = 0;
  if ((st = actx_ep_node_inputs(api, in_cast, &x, 1, &n)) != NULL || n != 1 || x == NULL) return st;
  if ((st = actx_ep_node_output(api, out_cast, &y)) != NULL || y == NULL) return st;
  actx_ep_tensor_meta x_meta;
  if ((st = actx_ep_value_meta(api, x, &x_meta)) != NULL) return st;
  if (!x_meta.is_tensor || x_meta.elem_type != ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT) return NULL;
  f->family = ACTX_EP_FUSION_HALF_CASTS;
  f->node.op = op;
  f->node.dtype = ACTX_F32;
  f->root = f->x = x;
  f->y = y;
  add_node(m, f->core);
  add_node(m, in_cast);
  add_node(m, out_cast);
  return NULL;
}

/* Element types, shapes and the size the policy needs, from x and y. */
static OrtStatus *check_values(matcher *m) {
  actx_ep_fusion *f = m->f;
  actx_ep_tensor_meta x, y;
  OrtStatus *st = actx_ep_value_meta(m->api, f->x, &x);
  if (st == NULL) st = actx_ep_value_meta(m->api, f->y, &y);
  if (st != NULL) return st;
  actx_dtype dtype;
  if (!x.is_tensor || !actx_ep_elem_dtype(x.elem_type, &dtype) || !y.is_tensor ||
      y.elem_type != x.elem_type || dtype != f->node.dtype) {
    m->failed = true;
    return NULL;
  }
  bool shape_holds = false;
  if ((st = actx_ep_output_shape_holds(m->api, f->y, &x, &y, &shape_holds)) != NULL) return st;
  if (!shape_holds) {
    m->failed = true;
    return NULL;
  }
  /* a [1] constant makes a scalar x's result [1]; ours would keep x's shape */
  if (m->rank1_constant && (!x.has_shape || x.rank == 0)) {
    m->failed = true;
    return NULL;
  }
  f->node.elem_type = x.elem_type;
  f->node.elements = actx_ep_meta_elements(&x, &f->node.min_elements);
  return NULL;
}

const char *actx_ep_fusion_name(const actx_ep_fusion *f) {
  const bool bias = f->bias_add != NULL;
  switch (f->family) {
    case ACTX_EP_FUSION_ERF_GELU: return bias ? "bias + erf GELU" : "erf GELU";
    case ACTX_EP_FUSION_TANH_GELU: return bias ? "bias + tanh GELU" : "tanh GELU";
    case ACTX_EP_FUSION_SIGMOID: return f->node.alpha == 1 ? "SiLU" : "QuickGelu";
    case ACTX_EP_FUSION_GELU_NODE: return "bias + Gelu node";
    case ACTX_EP_FUSION_HALF_CASTS: return "float16 activation between Casts";
  }
  return "activation";
}

OrtStatus *actx_ep_match_fusion(const OrtApi *api, const OrtNode *node, actx_ep_fusion *out,
                                bool *found) {
  memset(out, 0, sizeof *out);
  *found = false;
  matcher m = {.api = api, .f = out};
  bool is_erf = false, is_tanh = false, is_sigmoid = false;
  OrtStatus *st = actx_ep_node_is(api, node, "Erf", actx_ep_erf_since, &is_erf);
  if (st == NULL) st = actx_ep_node_is(api, node, "Tanh", actx_ep_activation_since, &is_tanh);
  if (st == NULL) st = actx_ep_node_is(api, node, "Sigmoid", actx_ep_activation_since, &is_sigmoid);
  if (st != NULL) return st;
  if (!is_erf && !is_tanh && !is_sigmoid) {
    const char *op_type = NULL;
    if ((st = api->Node_GetOperatorType(node, &op_type)) != NULL) return st;
    if (op_type == NULL || (strcmp(op_type, "Gelu") != 0 && strcmp(op_type, "FastGelu") != 0))
      return NULL;
  }

  const OrtValueInfo *arg = NULL, *core_out = NULL;
  size_t n_in = 0;
  if ((st = actx_ep_node_inputs(api, node, &arg, 1, &n_in)) != NULL) return st;
  if ((st = actx_ep_node_output(api, node, &core_out)) != NULL) return st;
  if (n_in != 1 || arg == NULL || core_out == NULL) return NULL;
  actx_ep_tensor_meta meta;
  if ((st = actx_ep_value_meta(api, arg, &meta)) != NULL) return st;
  if (!meta.is_tensor || !actx_ep_elem_dtype(meta.elem_type, &out->node.dtype)) return NULL;
  m.tolerance = dtype_tolerance(out->node.dtype);
  out->core = node;

  if (out->node.dtype == ACTX_F16 && (is_erf || is_tanh || is_sigmoid)) {
    const actx_op op = is_erf ? ACTX_OP_ERF : is_tanh ? ACTX_OP_TANH : ACTX_OP_SIGMOID;
    if ((st = match_half_casts(&m, op, arg, core_out)) != NULL) return st;
    if (out->family == ACTX_EP_FUSION_HALF_CASTS) {
      if (m.failed || (st = check_values(&m)) != NULL || m.failed) return st;
      out->node.kind = fused_kind(out);
      *found = true;
      return NULL;
    }
    /* not between Casts: the subgraphs below, as for float32 */
  }
  if (is_erf || is_tanh) {
    out->family = is_erf ? ACTX_EP_FUSION_ERF_GELU : ACTX_EP_FUSION_TANH_GELU;
    out->node.op = is_erf ? ACTX_OP_GELU : ACTX_OP_GELU_TANH;
    add_node(&m, node);
    st = match_gelu(&m, arg, core_out);
  } else if (is_sigmoid) {
    out->family = ACTX_EP_FUSION_SIGMOID;
    out->node.op = ACTX_OP_QUICK_GELU;
    add_node(&m, node);
    st = match_sigmoid(&m, arg, core_out);
  } else {
    /* a Gelu-like node we can run on its own, fused only with a bias Add before it */
    actx_ep_node single;
    const char *reason = NULL;
    if ((st = actx_ep_claim(api, node, &single, &reason)) != NULL || reason != NULL) return st;
    switch (single.kind) {
      case ACTX_EP_GELU:
      case ACTX_EP_GELU_TANH:
      case ACTX_EP_MS_GELU:
      case ACTX_EP_FAST_GELU: break;
      default: return NULL;
    }
    out->family = ACTX_EP_FUSION_GELU_NODE;
    out->node.op = single.op;
    out->root = arg;
    out->y = core_out;
    add_node(&m, node);
  }
  if (st != NULL || m.failed || out->y == NULL || out->root == NULL) return st;

  out->x = out->root;
  /* libactx adds a bias only to the GELUs (as ORT's BiasGelu / FastGelu do) */
  if (out->family != ACTX_EP_FUSION_SIGMOID && ((st = match_bias(&m)) != NULL || m.failed))
    return st;
  if (out->family == ACTX_EP_FUSION_GELU_NODE && out->bias_add == NULL) return NULL;
  if ((st = check_values(&m)) != NULL || m.failed) return st;
  out->node.kind = fused_kind(out);
  out->node.has_bias = out->bias_add != NULL;
  if (out->node.op != ACTX_OP_QUICK_GELU) out->node.alpha = 0;
  *found = true;
  return NULL;
}
