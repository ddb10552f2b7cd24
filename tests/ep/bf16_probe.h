/* bf16_probe.h — the attribute values test_ep_bf16_attrs.c sets and the probe families
 * (bf16_probe_families.c) expect, each stated once. Test-only. */
#ifndef ACTX_TESTS_EP_BF16_PROBE_H
#define ACTX_TESTS_EP_BF16_PROBE_H

#define PROBE_GEMM_ALPHA 0.25f
#define PROBE_GEMM_BETA (-3.5f)
#define PROBE_CONV_STRIDES {2, 1}
#define PROBE_CONV_PADS {1, 0, 1, 0}
#define PROBE_CONV_DILATIONS {1, 2}
#define PROBE_RESIZE_CUBIC (-0.5f)
#define PROBE_RESIZE_EXTRAPOLATION 2.5f
#define PROBE_REDUCE_AXES {1, -1}

#endif /* ACTX_TESTS_EP_BF16_PROBE_H */
