/* Accuracy against a double-precision reference, on dense sweeps: >= 400k points over [-6, 6]
 * plus MLAS's branch points, clamps and subnormals. The bounds are the measured worst cases of
 * MLAS's polynomials (which actx reproduces bit for bit), so a wrong constant or a wrong
 * operation order shows up here even before the ORT oracle runs.
 *   erf, tanh, sigmoid: error in units in the last place of the result.
 *   the GELUs: absolute error / max(1, |x|) (the form 0.5 x (1 + erf) cancels for x << 0, so
 *   a relative bound there would measure the cancellation, not the kernel). */
#include "inputs.h"

#define SWEEP 400001

/* measured worst cases (tanh 4.37 ulp, 1.50e-7; sigmoid 7.4e-8; gelu 1.07e-7; gelu_tanh
 * 1.85e-7; quick_gelu 1.73e-7), rounded up a little */
#define BOUND_TANH_ULP 5.0
#define BOUND_TANH_ABS 2e-7
#define BOUND_SIGMOID_ABS 1e-7
#define BOUND_GELU_ABS 1.5e-7
#define BOUND_GELU_TANH_ABS 2.5e-7
#define BOUND_QUICK_GELU_ABS 2.5e-7

typedef struct accuracy_case {
  const char *name;
  actx_op op;
  float alpha;
  double (*reference)(double x, double alpha);
  int relative; /* 1: ulps of the result, 0: abs error / max(1, |x|) */
  double min_abs_x; /* relative cases: smaller |x| are not measured (see below) */
  double bound;
} accuracy_case;

static double ref_erf(double x, double a) { (void)a; return erf(x); }
static double ref_tanh(double x, double a) { (void)a; return tanh(x); }
static double ref_sigmoid(double x, double a) { (void)a; return 1.0 / (1.0 + exp(-x)); }
static double ref_gelu(double x, double a) { (void)a; return 0.5 * x * (1.0 + erf(x / sqrt(2.0))); }
static double ref_gelu_tanh(double x, double a) {
  (void)a;
  return 0.5 * x * (1.0 + tanh(sqrt(2.0 / 3.14159265358979323846) * (x + 0.044715 * x * x * x)));
}
static double ref_quick_gelu(double x, double a) { return x / (1.0 + exp(-a * x)); }

/* ulp of a float near v (the spacing of floats at |v|), for the relative measure */
static double ulp_at(double v) {
  const double a = fabs(v);
  if (a < 0x1p-126) return 0x1p-149;
  int e;
  frexp(a, &e);
  return ldexp(1.0, e - 24);
}

static const accuracy_case cases[] = {
    {"erf", ACTX_OP_ERF, 0, ref_erf, 1, 0, 1.0},
    /* tanh's rational loses relative accuracy where x^2 underflows (|x| < ~1e-19): measured in
     * ulps above that, and in absolute terms (tanh_abs) everywhere */
    {"tanh", ACTX_OP_TANH, 0, ref_tanh, 1, 1e-18, BOUND_TANH_ULP},
    {"tanh_abs", ACTX_OP_TANH, 0, ref_tanh, 0, 0, BOUND_TANH_ABS},
    /* sigmoid is clamped at +-18 (sigmoid(-18) = 1.5e-8 stands for all smaller values), so
     * its error is absolute */
    {"sigmoid", ACTX_OP_SIGMOID, 0, ref_sigmoid, 0, 0, BOUND_SIGMOID_ABS},
    {"gelu", ACTX_OP_GELU, 0, ref_gelu, 0, 0, BOUND_GELU_ABS},
    {"gelu_tanh", ACTX_OP_GELU_TANH, 0, ref_gelu_tanh, 0, 0, BOUND_GELU_TANH_ABS},
    {"quick_gelu", ACTX_OP_QUICK_GELU, 1.702f, ref_quick_gelu, 0, 0, BOUND_QUICK_GELU_ABS},
};

int main(void) {
  static float x[SWEEP + 8192], y[SWEEP + 8192];
  size_t n = 0;
  for (size_t i = 0; i < SWEEP; i++) x[n++] = -6.0f + 12.0f * (float)i / (SWEEP - 1);
  float extra[8192];
  const size_t ne = make_inputs(extra, 0, 1);
  for (size_t i = 0; i < ne; i++)
    if (isfinite(extra[i]) && fabsf(extra[i]) <= 20.0f) x[n++] = extra[i];

  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    const accuracy_case *k = &cases[c];
    const actx_op_desc d = {.op = k->op, .dtype = ACTX_F32, .alpha = k->alpha};
    EXPECT(actx_compute(&d, x, y, n, NULL) == ACTX_OK, "compute");
    double worst = 0;
    float worst_x = 0;
    for (size_t i = 0; i < n; i++) {
      if (k->relative && fabs((double)x[i]) < k->min_abs_x) continue;
      const double r = k->reference(x[i], k->alpha);
      const double err = k->relative ? fabs(y[i] - r) / ulp_at(r)
                                     : fabs(y[i] - r) / fmax(1.0, fabs((double)x[i]));
      if (err > worst) {
        worst = err;
        worst_x = x[i];
      }
    }
    printf("%-10s worst %s %.4g at x = %a\n", k->name, k->relative ? "ulp" : "abs/max(1,|x|)",
           worst, worst_x);
    EXPECT(worst <= k->bound, "%s: %g > bound %g", k->name, worst, k->bound);
  }
  return test_finish("test_accuracy");
}
