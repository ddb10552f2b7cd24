/* The generic part of a bfloat16 kernel's life (bf16_kernel.c): the op list's lookups and the
 * checks every op shares, the shape helpers, and the split rule (bf16_family.h). */
#include "bf16_dnnl.h"
#include "bf16_test_run.h"

static actx_shape shape(size_t rank, const int64_t *dims) {
  actx_shape s = {.rank = rank};
  for (size_t i = 0; i < rank; i++) s.dims[i] = dims[i];
  return s;
}

int main(void) {
  /* every row is found by its name and domain, and says what it is */
  for (int op = 0; op < ACTX_BF16_OP_COUNT; op++) {
    const actx_bf16_op_info *info = actx_bf16_op_info_get((actx_bf16_op)op);
    CHECK(info != NULL && info->since[0] > 0);
    CHECK(actx_bf16_op_find(info->domain, info->name) == (actx_bf16_op)op);
    CHECK(info->min_inputs <= info->max_inputs && info->max_inputs <= ACTX_BF16_MAX_INPUTS);
    CHECK(info->min_outputs <= info->max_outputs && info->max_outputs <= ACTX_BF16_MAX_OUTPUTS);
  }
  CHECK(actx_bf16_op_find("", "Erf") == ACTX_BF16_OP_COUNT); /* the activation service's */
  CHECK(actx_bf16_op_find("com.microsoft", "MatMul") == ACTX_BF16_OP_COUNT);
  CHECK(actx_bf16_op_find("ai.onnx", "MatMul") == ACTX_BF16_OP_MATMUL);
  CHECK(actx_bf16_op_info_get(ACTX_BF16_OP_COUNT) == NULL);

  /* the shared checks, before any family sees the node */
  const char *why = NULL;
  actx_bf16_kernel *k = (actx_bf16_kernel *)&why;
  actx_bf16_node n = {.op = ACTX_BF16_OP_ADD, .since_version = 7, .n_inputs = 2, .n_outputs = 1,
                      .input_present = {true, true}, .output_present = {true}};
  CHECK(actx_bf16_kernel_create(&n, &k, &why) == ACTX_ERROR_INVALID_ARGUMENT && k == NULL);
  CHECK(strstr(why, "version") != NULL);
  n.since_version = 14;
  n.n_inputs = 3;
  CHECK(actx_bf16_kernel_create(&n, &k, &why) == ACTX_ERROR_INVALID_ARGUMENT);
  CHECK(strstr(why, "inputs") != NULL);
  n.n_inputs = 2;
  n.input_present[1] = false;
  CHECK(actx_bf16_kernel_create(&n, &k, &why) == ACTX_ERROR_INVALID_ARGUMENT);
  CHECK(strstr(why, "missing") != NULL);
  n.op = ACTX_BF16_OP_COUNT;
  CHECK(actx_bf16_kernel_create(&n, &k, &why) == ACTX_ERROR_INVALID_ARGUMENT);
  CHECK(actx_bf16_kernel_create(NULL, &k, &why) == ACTX_ERROR_INVALID_ARGUMENT);
  actx_bf16_kernel_destroy(NULL);

  /* broadcasting */
  const int64_t a_dims[] = {4, 1, 3}, b_dims[] = {5, 1}, c_dims[] = {2, 3}, z_dims[] = {0, 1}, r_dims[] = {1, 3};
  actx_shape a = shape(3, a_dims), b = shape(2, b_dims), c = shape(2, c_dims), z = shape(2, z_dims),
             row = shape(2, r_dims);
  actx_shape r;
  CHECK(actx_shape_broadcast(&a, &b, &r) && r.rank == 3 && r.dims[0] == 4 && r.dims[1] == 5 &&
        r.dims[2] == 3);
  CHECK(!actx_shape_broadcast(&b, &c, &r));
  CHECK(!actx_shape_broadcast(&z, &c, &r)); /* 0 vs 2 */
  CHECK(actx_shape_broadcast(&z, &row, &r) && r.dims[0] == 0 && r.dims[1] == 3);
  CHECK(actx_shape_elements(&r) == 0);
  actx_shape scalar = {.rank = 0};
  CHECK(actx_shape_elements(&scalar) == 1);

  /* the split rule: the floor of work alone where the parallel-for's cost is not known; with a
   * cost, each task carries twice it at the family's speed (0.5 ns a unit here) */
  actx_parallel par = {.parallel_for = reverse_parallel_for, .max_tasks = 8};
  CHECK(actx_bf16_tasks(&par, 1 << 20, 1 << 20, 1 << 14, 0.5) == 8);
  CHECK(actx_bf16_tasks(&par, 1 << 15, 1 << 20, 1 << 14, 0.5) == 2);
  CHECK(actx_bf16_tasks(&par, 1 << 20, 3, 1 << 14, 0.5) == 3);  /* no more than the items */
  CHECK(actx_bf16_tasks(NULL, 1 << 20, 1 << 20, 1 << 14, 0.5) == 1);
  par.call_ns = 50000; /* 2 x 50 us at 0.5 ns: 200,000 units a task */
  CHECK(actx_bf16_tasks(&par, 1 << 20, 1 << 20, 1 << 14, 0.5) == 5);
  CHECK(actx_bf16_tasks(&par, 399999, 1 << 20, 1 << 14, 0.5) == 1);
  CHECK(actx_bf16_tasks(&par, 400000, 1 << 20, 1 << 14, 0.5) == 2);
  par.call_ns = 1000; /* 4,000 units: the floor of 16 Ki decides */
  CHECK(actx_bf16_tasks(&par, 1 << 15, 1 << 20, 1 << 14, 0.5) == 2);
  /* oneDNN's ops: the same rule at its rate */
  const double macs_a_task = 2.0 * 50000.0 / actx_dnnl_ns_per_mac();
  par.call_ns = 50000;
  CHECK(actx_dnnl_split_tasks(&par, 3.5 * macs_a_task, 1000, 1e6, 64) == 3);
  CHECK(actx_dnnl_split_tasks(&par, 0.9 * macs_a_task, 1000, 1e6, 64) <= 1);
  par.call_ns = 0;
  CHECK(actx_dnnl_split_tasks(&par, 3e6, 1000, 1e6, 64) == 3);

  if (failures) return 1;
  printf("test_bf16_kernel: %d ops, checks passed\n", (int)ACTX_BF16_OP_COUNT);
  return 0;
}
