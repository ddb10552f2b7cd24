/* Claims whose right decision depends on a neighbouring claim: what ORT does with a subgraph
 * can hang on what became of the node before it, and a value can play two roles in one node.
 *
 * usage: test_ep_chained_claims <absolute path of libactx_ep.so>
 *
 *   - Exported erf GELUs in a row ((x·(1 + erf(x/√2)))·0.5, each on the previous one's output):
 *     ORT's GeluFusion gives up on that spelling when x comes from a Mul, but by the time it
 *     reaches the second GELU the first one's last Mul is part of ORT's Gelu (or of our node), so
 *     ORT alone fuses every one. The EP took the first whole and only the lone Erf of the next,
 *     and ORT ran the rest of it node by node (32 of 4096 outputs differed). Also after a Neg,
 *     after a tanh GELU (fused by FastGeluFusion, which runs after GeluFusion: ORT fuses the erf
 *     GELU on its next pass) and after SiLU, and 1000 of them on [64]; and a chain ORT alone does
 *     not fuse (the first GELU spelt with Mul(1/√2)), where the second is not fused either; at
 *     opset 20, where GeluFusion runs before the EP and not after it.
 *   - Tanh(B) → t, then com.microsoft BiasGelu(t, t) or FastGelu(t, t) (and an Erf after it):
 *     t is both x and bias. Grouped with the Tanh, the bias was a value inside the group, no
 *     input of the fused node, and session creation failed.
 *
 *   - Claims whose result nothing reads (a SiLU, an erf GELU, Tanh → Erf beside the output):
 *     as a fused node they had no output, and session creation failed.
 *
 *   - Two float16 claims in a row (Tanh → Erf, ...; also the opset-20 Gelus and Tanh → BiasGelu
 *     above): ORT alone, with no float16 kernel for either, computes both in one float32 island
 *     and rounds once; the group rounded between them (1.6-12% of outputs one float16 step off).
 *
 * Every model, float32 and float16, under `all` and `auto`, is checked against ORT alone bit for
 * bit (but for float16 FastGelu, whose function body ORT alone runs: see below); and with
 * session.disable_cpu_ep_fallback=1, where the EP must
 * take every node: the session is created and gives ORT alone's bits (ORT alone refuses that
 * option outright), except where a node no EP of ours runs (the Neg, the Mul / Add of a GELU ORT
 * runs unfused) is left, and the session fails as ORT alone's does. */
#include <stdlib.h>
#include <string.h>

#include "ep_test.h"
#include "model_parts.h"

static const char *const no_fallback_key[] = {"session.disable_cpu_ep_fallback"};
static const char *const no_fallback_on[] = {"1"};

/* What comes before the chain. */
typedef enum lead {
  LEAD_NONE,
  LEAD_NEG,             /* x → Neg */
  LEAD_TANH_GELU,       /* GPT-2's tanh GELU (ORT: FastGelu) */
  LEAD_SILU,            /* x·Sigmoid(x) (ORT: QuickGelu) */
  LEAD_UNFUSED_GELU,    /* an erf GELU with Mul(1/√2), which ORT runs node by node */
} lead;

typedef struct chain_case {
  const char *label;
  lead lead;
  int n_gelus;
  int64_t elements;
  int64_t opset; /* 0: 17; from 20 on, ORT's GeluFusion runs at level 1, before the EP */
} chain_case;

static void add_scalar(actx_model *m, int32_t elem_type, const char *name, float v) {
  uint16_t h = elem_type == ACTX_ELEM_FLOAT16 ? ep_float_to_half(v) : 0;
  actx_model_add_initializer(m, name, elem_type, 0, NULL, elem_type == ACTX_ELEM_FLOAT16
                                                              ? (const void *)&h
                                                              : (const void *)&v);
}

/* x → lead → n erf GELUs → y, on [elements / 64, 64] (or [elements] below 64). */
static int build_chain(const chain_case *c, int32_t elem_type, size_t *rank, int64_t *dims,
                       uint8_t **bytes, size_t *size, size_t *n_nodes) {
  *rank = c->elements >= 64 ? 2 : 1;
  dims[0] = *rank == 2 ? c->elements / 64 : c->elements;
  dims[1] = 64;
  actx_model *m = actx_model_create(ACTX_MODEL_DEFAULT_IR_VERSION, c->opset ? c->opset : 17, 1);
  actx_model_add_input(m, "x", elem_type, *rank, dims, NULL);
  actx_model_add_output(m, "y", elem_type, *rank, dims, NULL);
  char value[32] = "x", next[32], prefix[32];
  *n_nodes = 0;
  switch (c->lead) {
    case LEAD_NONE: break;
    case LEAD_NEG:
      actx_model_add_node(m, "Neg", "", 1, (const char *[]){"x"}, 1, (const char *[]){"lead"});
      *n_nodes += 1;
      break;
    case LEAD_TANH_GELU:
    case LEAD_SILU:
      actx_part_add_activation(m, c->lead == LEAD_SILU ? ACTX_ACT_SILU : ACTX_ACT_TANH_GELU,
                               elem_type, "x", "lead", "l_", 0, NULL, 0);
      *n_nodes += c->lead == LEAD_SILU ? 2 : 8;
      break;
    case LEAD_UNFUSED_GELU:
      add_scalar(m, elem_type, "l_rsqrt2", 0.70710678f);
      add_scalar(m, elem_type, "l_one", 1.0f);
      add_scalar(m, elem_type, "l_half", 0.5f);
      actx_model_add_node(m, "Mul", "", 2, (const char *[]){"x", "l_rsqrt2"}, 1,
                          (const char *[]){"l_a"});
      actx_model_add_node(m, "Erf", "", 1, (const char *[]){"l_a"}, 1, (const char *[]){"l_e"});
      actx_model_add_node(m, "Add", "", 2, (const char *[]){"l_e", "l_one"}, 1,
                          (const char *[]){"l_f"});
      actx_model_add_node(m, "Mul", "", 2, (const char *[]){"x", "l_f"}, 1,
                          (const char *[]){"l_m"});
      actx_model_add_node(m, "Mul", "", 2, (const char *[]){"l_m", "l_half"}, 1,
                          (const char *[]){"lead"});
      *n_nodes += 5;
      break;
  }
  if (c->lead != LEAD_NONE) strcpy(value, "lead");
  for (int i = 0; i < c->n_gelus; i++) {
    snprintf(prefix, sizeof prefix, "g%d_", i);
    if (i + 1 == c->n_gelus)
      strcpy(next, "y");
    else
      snprintf(next, sizeof next, "v%d", i);
    actx_part_add_activation(m, ACTX_ACT_ERF_GELU, elem_type, value, next, prefix, 0, NULL, 0);
    *n_nodes += 5;
    strcpy(value, next);
  }
  const int rc = actx_model_serialize(m, bytes, size);
  if (rc != 0) printf("model: %s\n", actx_model_error(m));
  actx_model_free(m);
  return rc;
}

/* Runs one session on x; 0 with its output (and the nodes on actx), -1 with err. */
static int run_session(const uint8_t *bytes, size_t size, const ep_session_spec *spec,
                       int32_t elem_type, const void *x, size_t rank, const int64_t *dims,
                       actx_ort_tensor **out, size_t *n_out, long *on_actx, actx_ort_error *err) {
  actx_ort_session *s = NULL;
  *out = NULL;
  *n_out = 0;
  *on_actx = 0;
  if (ep_session_create(bytes, size, spec, &s, err) != 0) return -1;
  actx_ort_tensor in = {.elem_type = (ONNXTensorElementDataType)elem_type, .rank = rank,
                        .data = (void *)x, .count = ep_shape_count(rank, dims)};
  memcpy(in.dims, dims, rank * sizeof dims[0]);
  int rc = actx_ort_run(s, 1, &in, out, n_out, err);
  if (rc == 0 && spec->policy != NULL) *on_actx = actx_ort_count_nodes_on(s, "actx", err);
  actx_ort_session_free(s);
  return rc;
}

/* ORT alone (without the option) against the EP under policy, with the CPU fallback disabled or
 * not. Returns the nodes the EP ran, -1 if its session failed (after CHECKing that this was
 * right: only with the option, where ORT alone refuses it as well), -2 on a difference (CHECKed
 * when bits is set). */
static long compare(const uint8_t *bytes, size_t size, int32_t elem_type, size_t rank,
                    const int64_t *dims, const char *policy, bool no_fallback, bool bits,
                    const char *label) {
  const size_t n = ep_shape_count(rank, dims);
  void *x = malloc(n * actx_elem_size(elem_type));
  ep_fill_inputs(elem_type, x, n, 7);
  const ep_session_spec alone = {.threads = 1};
  ep_session_spec with = {.policy = policy, .threads = 1};
  if (no_fallback) {
    with.n_config = 1;
    with.config_keys = no_fallback_key;
    with.config_values = no_fallback_on;
  }
  actx_ort_tensor *want = NULL, *got = NULL;
  size_t n_want = 0, n_got = 0;
  long ignored = 0, on_actx = 0, result = -2;
  actx_ort_error err;
  if (run_session(bytes, size, &alone, elem_type, x, rank, dims, &want, &n_want, &ignored,
                  &err) != 0) {
    CHECK(false, "%s: ORT alone: %s", label, err.message);
  } else if (run_session(bytes, size, &with, elem_type, x, rank, dims, &got, &n_got, &on_actx,
                         &err) != 0) {
    CHECK(no_fallback, "%s, policy %s: %s", label, policy, err.message);
    if (no_fallback) { /* ORT alone with the option fails too */
      ep_session_spec alone_no_fallback = with;
      alone_no_fallback.policy = NULL;
      actx_ort_tensor *t = NULL;
      size_t n_t = 0;
      actx_ort_error err2;
      CHECK(run_session(bytes, size, &alone_no_fallback, elem_type, x, rank, dims, &t, &n_t,
                        &ignored, &err2) != 0,
            "%s: ORT alone runs it with the CPU fallback disabled", label);
      actx_ort_tensors_free(t, n_t);
    }
    result = -1;
  } else {
    const bool same_shape = n_want == 1 && n_got == 1 && want[0].bytes == got[0].bytes;
    const long at = same_shape ? ep_first_difference(want[0].data, got[0].data, want[0].bytes)
                               : 0;
    long differing = 0;
    const size_t es = actx_elem_size(elem_type);
    for (size_t i = 0; same_shape && i < n; i++)
      differing += memcmp((char *)want[0].data + i * es, (char *)got[0].data + i * es, es) != 0;
    CHECK(!bits || (same_shape && at < 0),
          "%s, %s, policy %s%s: %ld of %zu outputs differ from ORT alone's (%ld nodes on actx)",
          label, actx_elem_name(elem_type), policy, no_fallback ? ", no CPU fallback" : "",
          differing, n, on_actx);
    if (!bits || (same_shape && at < 0)) result = on_actx;
  }
  actx_ort_tensors_free(want, n_want);
  actx_ort_tensors_free(got, n_got);
  free(x);
  return result;
}

static void test_gelu_chains(void) {
  static const chain_case cases[] = {
      {"2 erf GELUs", LEAD_NONE, 2, 4096, 0},
      {"3 erf GELUs", LEAD_NONE, 3, 65536, 0},
      {"Neg, then 2 erf GELUs", LEAD_NEG, 2, 4096, 0},
      {"tanh GELU, then 2 erf GELUs", LEAD_TANH_GELU, 2, 4096, 0},
      {"SiLU, then 2 erf GELUs", LEAD_SILU, 2, 4096, 0},
      {"unfused erf GELU (Mul 1/sqrt2), then 2 erf GELUs", LEAD_UNFUSED_GELU, 2, 4096, 0},
      {"1000 erf GELUs", LEAD_NONE, 1000, 64, 0},
      /* opset 20: the GELUs ORT fuses at level 1 (after x, after a GELU) come to the EP as
       * ai.onnx Gelu nodes; one after a tanh GELU or SiLU is fused neither at level 1 (x is
       * still a Mul's output) nor at level 2 (GeluFusion leaves opset-20 models alone there) */
      {"opset 20: 2 erf GELUs", LEAD_NONE, 2, 4096, 20},
      {"opset 20: tanh GELU, then 2 erf GELUs", LEAD_TANH_GELU, 2, 4096, 20},
      {"opset 20: SiLU, then 2 erf GELUs", LEAD_SILU, 2, 4096, 20},
  };
  static const int32_t types[] = {ACTX_ELEM_FLOAT, ACTX_ELEM_FLOAT16};
  static const char *const policies[] = {"all", "auto"};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    for (size_t t = 0; t < 2; t++) {
      const chain_case *c = &cases[i];
      if (c->n_gelus > 100 && types[t] != ACTX_ELEM_FLOAT) continue;
      size_t rank = 0, n_nodes = 0, size = 0;
      int64_t dims[2];
      uint8_t *bytes = NULL;
      if (build_chain(c, types[t], &rank, dims, &bytes, &size, &n_nodes) != 0) {
        CHECK(false, "%s: model", c->label);
        continue;
      }
      /* float16 at opset 20: ORT makes two ai.onnx Gelu nodes of the GELUs, which the EP takes
       * (ORT has no float16 Gelu kernel) as one group, computed in float32 and rounded once,
       * as ORT alone computes their inlined bodies: one float32 island */
      const bool bits = true; /* every case: ORT alone's bits */
      for (size_t p = 0; p < 2; p++) {
        compare(bytes, size, types[t], rank, dims, policies[p], false, bits, c->label);
        const long on =
            compare(bytes, size, types[t], rank, dims, policies[p], true, bits, c->label);
        /* float32 GELUs ORT fuses: every node ours, the session created without CPU fallback;
         * the Neg, and the lead ORT runs unfused (Mul, Add), are left, and that session fails */
        const bool all_ours = types[t] == ACTX_ELEM_FLOAT && c->opset == 0 &&
                              (c->lead == LEAD_NONE || c->lead == LEAD_TANH_GELU ||
                               c->lead == LEAD_SILU);
        if (all_ours)
          CHECK(on == (long)n_nodes, "%s, policy %s, no CPU fallback: %ld of %zu nodes on actx",
                c->label, policies[p], on, n_nodes);
        if (types[t] == ACTX_ELEM_FLOAT && c->opset == 20 && c->lead == LEAD_NONE)
          CHECK(on == 2, "%s, policy %s, no CPU fallback: %ld nodes on actx (2 Gelu)", c->label,
                policies[p], on);
      }
      free(bytes);
    }
}

/* Tanh(B) → t → op(t, t) [→ Erf], op BiasGelu or FastGelu, on [elements]. */
static int build_shared_bias(const char *op, bool erf_after, int32_t elem_type, int64_t elements,
                             uint8_t **bytes, size_t *size) {
  actx_model *m = actx_model_create(ACTX_MODEL_DEFAULT_IR_VERSION, 17, 1);
  const int64_t dims[1] = {elements};
  actx_model_add_input(m, "x", elem_type, 1, dims, NULL);
  actx_model_add_output(m, "y", elem_type, 1, dims, NULL);
  actx_model_add_node(m, "Tanh", "", 1, (const char *[]){"x"}, 1, (const char *[]){"t"});
  actx_model_add_node(m, op, ACTX_MODEL_MS_DOMAIN, 2, (const char *[]){"t", "t"}, 1,
                      (const char *[]){erf_after ? "g" : "y"});
  if (erf_after)
    actx_model_add_node(m, "Erf", "", 1, (const char *[]){"g"}, 1, (const char *[]){"y"});
  const int rc = actx_model_serialize(m, bytes, size);
  if (rc != 0) printf("model: %s\n", actx_model_error(m));
  actx_model_free(m);
  return rc;
}

static void test_value_as_x_and_bias(void) {
  static const char *const ops[] = {"BiasGelu", "FastGelu"};
  static const int32_t types[] = {ACTX_ELEM_FLOAT, ACTX_ELEM_FLOAT16};
  static const int64_t sizes[] = {1024, 262144};
  static const char *const policies[] = {"all", "auto"};
  char label[96];
  for (size_t o = 0; o < 2; o++)
    for (int erf_after = 0; erf_after < 2; erf_after++)
      for (size_t t = 0; t < 2; t++)
        for (size_t s = 0; s < 2; s++) {
          uint8_t *bytes = NULL;
          size_t size = 0;
          snprintf(label, sizeof label, "Tanh -> t -> %s(t, t)%s, %lld", ops[o],
                   erf_after ? " -> Erf" : "", (long long)sizes[s]);
          if (build_shared_bias(ops[o], erf_after, types[t], sizes[s], &bytes, &size) != 0) {
            CHECK(false, "%s: model", label);
            continue;
          }
          for (size_t p = 0; p < 2; p++)
            for (int no_fallback = 0; no_fallback < 2; no_fallback++) {
              /* float16: ORT alone runs Tanh and the Gelu as one float32 island between
               * Casts and rounds once; so does the group (t its x and its bias). But ORT has
               * no FastGelu kernel there and inlines FastGelu's function body, with its
               * constants rounded to float16, which our FastGelu does not compute even alone
               * (~5% of a lone float16 FastGelu's outputs are not ORT alone's): bits not
               * compared for it */
              const bool bits = types[t] == ACTX_ELEM_FLOAT || o == 0;
              const long on = compare(bytes, size, types[t], 1, &sizes[s], policies[p],
                                      no_fallback, bits, label);
              const long want = 2 + erf_after;
              if (no_fallback || strcmp(policies[p], "all") == 0)
                CHECK(on == want, "%s, %s, policy %s%s: %ld of %ld nodes on actx", label,
                      actx_elem_name(types[t]), policies[p],
                      no_fallback ? ", no CPU fallback" : "", on, want);
            }
          free(bytes);
        }
}

/* x → first → t → second → y, ai.onnx activations on [elements]: in float16 ORT alone has a
 * kernel for neither and computes both in one float32 island between Casts, rounding once at
 * its end; the EP's group of the two must do the same (rounding t to float16 between them put
 * 1.6-12% of outputs one float16 step off). */
static void test_float16_claims_in_a_row(void) {
  static const char *const pairs[][2] = {
      {"Tanh", "Erf"}, {"Tanh", "Sigmoid"}, {"Sigmoid", "Tanh"}, {"Erf", "Erf"}};
  static const int32_t types[] = {ACTX_ELEM_FLOAT, ACTX_ELEM_FLOAT16};
  static const int64_t sizes[] = {1024, 262144};
  static const char *const policies[] = {"all", "auto"};
  char label[96];
  for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
    for (size_t t = 0; t < 2; t++)
      for (size_t s = 0; s < 2; s++) {
        actx_model *m = actx_model_create(ACTX_MODEL_DEFAULT_IR_VERSION, 17, 1);
        actx_model_add_input(m, "x", types[t], 1, &sizes[s], NULL);
        actx_model_add_output(m, "y", types[t], 1, &sizes[s], NULL);
        actx_model_add_node(m, pairs[i][0], "", 1, (const char *[]){"x"}, 1,
                            (const char *[]){"t"});
        actx_model_add_node(m, pairs[i][1], "", 1, (const char *[]){"t"}, 1,
                            (const char *[]){"y"});
        uint8_t *bytes = NULL;
        size_t size = 0;
        snprintf(label, sizeof label, "%s -> %s, %lld", pairs[i][0], pairs[i][1],
                 (long long)sizes[s]);
        const int rc = actx_model_serialize(m, &bytes, &size);
        if (rc != 0) printf("model: %s\n", actx_model_error(m));
        actx_model_free(m);
        if (rc != 0) {
          CHECK(false, "%s: model", label);
          continue;
        }
        for (size_t p = 0; p < 2; p++)
          for (int no_fallback = 0; no_fallback < 2; no_fallback++) {
            const long on = compare(bytes, size, types[t], 1, &sizes[s], policies[p],
                                    no_fallback, true, label);
            if (no_fallback || strcmp(policies[p], "all") == 0)
              CHECK(on == 2, "%s, %s, policy %s%s: %ld of 2 nodes on actx", label,
                    actx_elem_name(types[t]), policies[p],
                    no_fallback ? ", no CPU fallback" : "", on);
          }
        free(bytes);
      }
}

/* x → Erf → y, and beside it claims whose result nothing reads: a SiLU, an erf GELU (fused
 * subgraphs; in float32: ORT's fusions leave float16 ones to ORT), Tanh → Erf (two claims in a
 * row). A fused node would have no output there (ORT gives it none) and Compile found no
 * record: the session failed ("a graph of 2 nodes that GetCapability did not take"). Now such a
 * subgraph is left to the single claims and such a claim joins no group: the session loads, y
 * is ORT alone's, and under `all` the EP runs nodes (the Erf at least). */
static void test_unread_results(void) {
  static const int32_t types[] = {ACTX_ELEM_FLOAT, ACTX_ELEM_FLOAT16};
  static const char *const policies[] = {"all", "auto"};
  static const char *const labels[] = {"an unread SiLU", "an unread erf GELU",
                                       "an unread Tanh -> Erf"};
  const int64_t dims[1] = {4096};
  for (size_t k = 0; k < 3; k++)
    for (size_t t = 0; t < 2; t++) {
      actx_model *m = actx_model_create(ACTX_MODEL_DEFAULT_IR_VERSION, 17, 1);
      actx_model_add_input(m, "x", types[t], 1, dims, NULL);
      actx_model_add_output(m, "y", types[t], 1, dims, NULL);
      actx_model_add_node(m, "Erf", "", 1, (const char *[]){"x"}, 1, (const char *[]){"y"});
      if (k < 2) {
        actx_part_add_activation(m, k == 0 ? ACTX_ACT_SILU : ACTX_ACT_ERF_GELU, types[t], "x",
                                 "dead", "d_", 0, NULL, 0);
      } else {
        actx_model_add_node(m, "Tanh", "", 1, (const char *[]){"x"}, 1, (const char *[]){"t"});
        actx_model_add_node(m, "Erf", "", 1, (const char *[]){"t"}, 1, (const char *[]){"dead"});
      }
      uint8_t *bytes = NULL;
      size_t size = 0;
      const int rc = actx_model_serialize(m, &bytes, &size);
      if (rc != 0) printf("model: %s\n", actx_model_error(m));
      actx_model_free(m);
      if (rc != 0) {
        CHECK(false, "%s: model", labels[k]);
        continue;
      }
      for (size_t p = 0; p < 2; p++) {
        const long on = compare(bytes, size, types[t], 1, dims, policies[p], 0, true, labels[k]);
        CHECK(on >= 0, "%s, %s, policy %s: the session failed or differs from ORT alone",
              labels[k], actx_elem_name(types[t]), policies[p]);
        CHECK(on != 0 || p != 0, "%s, %s, policy all: no node on actx", labels[k],
              actx_elem_name(types[t]));
      }
      free(bytes);
    }
}

int main(int argc, char **argv) {
  if (ep_test_init(argc, argv) != 0) return 2;
  test_gelu_chains();
  test_value_as_x_and_bias();
  test_float16_claims_in_a_row();
  test_unread_results();
  actx_ort_shutdown();
  printf("%d failures\n", g_failures);
  return g_failures ? 1 : 0;
}
