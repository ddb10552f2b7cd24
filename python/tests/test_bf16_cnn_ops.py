"""Ops CNN exports write that the named models' twins do not have, in bfloat16 models through
ORT and the EP (the converter's twins of float32 models):

- BatchNormalization (opset 13, so the converter raises it to a version with a bfloat16 schema)
  runs on actx, to the bit of the formula src/bf16/bf16_batch_norm.c states, written here in
  numpy float32; a node in training mode is left to ORT, whose error names it.
- ConvTranspose runs on actx within the bound of one float32 accumulation and one rounding of
  ORT alone's float32 result on the float32 twin (same output shape: output_padding,
  output_shape, SAME pads with an odd total, groups)."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from actx_ep import convert
from conftest import on_actx, with_actx

F = TensorProto.FLOAT
EPS = 1e-3


def bf16_round(values: np.ndarray) -> np.ndarray:
    """float32 values rounded to bfloat16 and widened back (round to nearest even)."""
    return convert.bf16_bits_to_f32(convert.f32_to_bf16_bits(values))


def model(training: bool = False) -> onnx.ModelProto:
    rng = np.random.default_rng(3)
    c = 6
    stats = {
        "scale": rng.uniform(-2, 2, c), "bias": rng.uniform(-1, 1, c),
        "mean": rng.uniform(-3, 3, c), "var": rng.uniform(0, 4, c),
    }
    inits = [numpy_helper.from_array(v.astype(np.float32), k) for k, v in stats.items()]
    attrs = {"epsilon": EPS}
    outputs = ["y", "running_mean", "running_var"] if training else ["y"]
    if training:
        attrs["training_mode"] = 1
    node = helper.make_node("BatchNormalization", ["x", *stats], outputs, name="bn", **attrs)
    graph = helper.make_graph(
        [node], "bn", [helper.make_tensor_value_info("x", F, [2, c, 5, 7])],
        [helper.make_tensor_value_info("y", F, [2, c, 5, 7])]
        + [helper.make_tensor_value_info(o, F, [c]) for o in outputs[1:]], inits)
    opset = [helper.make_opsetid("", 14 if training else 13)]
    return helper.make_model(graph, opset_imports=opset, ir_version=8)


def reference(x: np.ndarray, twin: onnx.ModelProto) -> np.ndarray:
    """The stated formula in float32 on the twin's (bfloat16) statistics and x rounded as the
    twin's edge Cast rounds it, then rounded once."""
    init = {t.name: convert.bf16_bits_to_f32(np.frombuffer(t.raw_data, np.uint16))
            for t in twin.graph.initializer}
    g, b, m, v = (init[k].astype(np.float32) for k in ("scale", "bias", "mean", "var"))
    a = (np.float32(1) / np.sqrt(v + np.float32(EPS))) * g
    off = b - m * a
    xr = bf16_round(x)
    y = xr * a[None, :, None, None] + off[None, :, None, None]
    return bf16_round(y.astype(np.float32))


def test_batch_norm_on_actx_to_the_bit(devices):
    twin = convert.to_bfloat16(model())
    assert [n.op_type for n in twin.graph.node if n.op_type == "BatchNormalization"]
    session = with_actx(twin.SerializeToString(), devices, policy="auto")
    assert on_actx(session).get("BatchNormalization") == 1
    rng = np.random.default_rng(0)
    x = rng.uniform(-5, 5, (2, 6, 5, 7)).astype(np.float32)
    x.ravel()[:4] = [np.inf, -np.inf, -0.0, 1e-39]
    got = session.run(None, {"x": x})[0]
    want = reference(x, twin)
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


def test_batch_norm_in_training_mode_is_left_to_ort(devices):
    twin = convert.to_bfloat16(model(training=True))
    with pytest.raises(Exception, match="BatchNormalization.*'bn'"):
        with_actx(twin.SerializeToString(), devices, policy="auto")


CONV_TRANSPOSE_CASES = {
    "k2 s2, bias": ([1, 8, 5, 6], [8, 4, 2, 2], True, dict(strides=[2, 2])),
    "pads, output_padding": ([2, 6, 7, 5], [6, 3, 3, 3], True,
                             dict(strides=[2, 2], pads=[1, 1, 1, 1], output_padding=[1, 1])),
    "SAME_UPPER, odd total": ([1, 4, 5, 5], [4, 4, 4, 3], False,
                              dict(auto_pad="SAME_UPPER", strides=[2, 2])),
    "SAME_LOWER, odd total": ([1, 4, 5, 5], [4, 4, 4, 3], False,
                              dict(auto_pad="SAME_LOWER", strides=[2, 2])),
    "output_shape": ([1, 4, 5, 5], [4, 4, 3, 3], True, dict(strides=[2, 2], output_shape=[10, 9])),
    "groups, dilations": ([1, 6, 5, 5], [6, 2, 3, 3], True,
                          dict(group=2, dilations=[2, 2], strides=[1, 2])),
    "SAME_UPPER, kernel below the stride": ([1, 2, 2, 3], [2, 2, 1, 1], True,
                                            dict(auto_pad="SAME_UPPER", strides=[2, 2])),
    "output_shape 2 x in": ([1, 3, 20, 20], [3, 4, 2, 2], True,
                            dict(strides=[2, 2], output_shape=[40, 40])),
    "output_padding past the end pad": ([1, 4, 4, 4], [4, 5, 3, 3], True,
                                        dict(strides=[3, 2], pads=[0, 1, 0, 0],
                                             output_padding=[2, 1])),
}


def conv_transpose_model(xshape, wshape, bias, attrs) -> onnx.ModelProto:
    rng = np.random.default_rng(1)
    inits = [numpy_helper.from_array(rng.standard_normal(wshape).astype(np.float32), "w")]
    if bias:
        m = wshape[1] * attrs.get("group", 1)
        inits.append(numpy_helper.from_array(rng.standard_normal(m).astype(np.float32), "b"))
    node = helper.make_node("ConvTranspose", ["x", "w", "b"][:len(inits) + 1], ["y"], name="ct",
                            **attrs)
    graph = helper.make_graph([node], "ct", [helper.make_tensor_value_info("x", F, xshape)],
                              [helper.make_tensor_value_info("y", F, [None] * len(xshape))],
                              inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)], ir_version=10)


@pytest.mark.parametrize("case", list(CONV_TRANSPOSE_CASES))
def test_conv_transpose_on_actx_within_the_bound(case, devices):
    xshape, wshape, bias, attrs = CONV_TRANSPOSE_CASES[case]
    twin = convert.to_bfloat16(conv_transpose_model(xshape, wshape, bias, attrs))
    session = with_actx(twin.SerializeToString(), devices, policy="auto")
    assert on_actx(session).get("ConvTranspose") == 1
    f32_twin = convert.to_float32(twin)
    x = bf16_round(np.random.default_rng(2).standard_normal(xshape).astype(np.float32))
    got = session.run(None, {"x": x})[0].astype(np.float64)
    want = ort_alone_run(f32_twin, x)
    # the same with |x|, |w| and |b|: the sums of the terms' magnitudes
    for t in f32_twin.graph.initializer:
        t.CopyFrom(numpy_helper.from_array(np.abs(numpy_helper.to_array(t)), t.name))
    magnitude = ort_alone_run(f32_twin, np.abs(x))
    assert got.shape == want.shape
    # one float32 accumulation of K terms and the bias, ours and ORT's, then one rounding
    k = (xshape[1] // attrs.get("group", 1)) * int(np.prod(wshape[2:])) + 2
    bound = np.abs(want) * 2.0**-8 + k * 2.0**-23 * magnitude
    assert (np.abs(got - want) <= bound).all()


def ort_alone_run(model: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {"x": x})[0].astype(np.float64)


def more_ops_model() -> onnx.ModelProto:
    """PRelu (a slope per channel), then the exact element-wise ops added with it (Softsign,
    ThresholdedRelu, Round), then the transcendental ones (Elu, Softplus, Sin, Cos, Tan, Atan)."""
    slope = numpy_helper.from_array(np.array([-0.5, 0.25, 2.0], np.float32).reshape(3, 1, 1), "s")
    nodes = [helper.make_node("PRelu", ["x", "s"], ["p"]),
             helper.make_node("Softsign", ["p"], ["q"]),
             helper.make_node("ThresholdedRelu", ["q"], ["t"], alpha=-0.25),
             helper.make_node("Mul", ["t", "eight"], ["m"]),
             helper.make_node("Round", ["m"], ["exact"]),
             helper.make_node("Elu", ["x"], ["e"], alpha=0.5),
             helper.make_node("Softplus", ["e"], ["sp"]),
             helper.make_node("Sin", ["sp"], ["si"]),
             helper.make_node("Cos", ["si"], ["co"]),
             helper.make_node("Tan", ["co"], ["ta"]),
             helper.make_node("Atan", ["ta"], ["trans"])]
    eight = numpy_helper.from_array(np.array(8, np.float32), "eight")
    graph = helper.make_graph(
        nodes, "more", [helper.make_tensor_value_info("x", F, [2, 3, 4, 5])],
        [helper.make_tensor_value_info(o, F, [2, 3, 4, 5]) for o in ("exact", "trans")],
        [slope, eight])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def test_prelu_and_the_added_unary_ops_on_actx(devices):
    twin = convert.to_bfloat16(more_ops_model())
    session = with_actx(twin.SerializeToString(), devices, policy="auto")
    on = on_actx(session)
    for op in ("PRelu", "Softsign", "ThresholdedRelu", "Round", "Elu", "Softplus", "Sin", "Cos",
               "Tan", "Atan"):
        assert on.get(op) == 1, (op, on)
    rng = np.random.default_rng(4)
    x = rng.uniform(-4, 4, (2, 3, 4, 5)).astype(np.float32)
    x.ravel()[:4] = [np.inf, -np.inf, -0.0, 1e-39]
    exact, trans = session.run(None, {"x": x})
    # the exact ones node by node in numpy float32, each result rounded
    s = np.array([-0.5, 0.25, 2.0], np.float32).reshape(3, 1, 1)
    xr = bf16_round(x)
    p = bf16_round(np.where(xr < 0, s * xr, xr).astype(np.float32))
    with np.errstate(invalid="ignore"):
        q = bf16_round((p / (np.float32(1) + np.abs(p))).astype(np.float32))
    t = bf16_round(np.where(q > np.float32(-0.25), q, np.float32(0)))
    want = bf16_round(np.rint(bf16_round(t * np.float32(8))).astype(np.float32))
    np.testing.assert_array_equal(exact.view(np.uint32), want.view(np.uint32))
    # the transcendental ones against the float32 twin run by ORT alone
    ref = ort.InferenceSession(convert.to_float32(twin).SerializeToString(),
                               providers=["CPUExecutionProvider"]).run(None, {"x": x})[1]
    np.testing.assert_allclose(trans, ref, rtol=0.05, atol=0.05)


def test_instance_normalization_on_actx(devices):
    rng = np.random.default_rng(6)
    inits = [numpy_helper.from_array(rng.uniform(-2, 2, 5).astype(np.float32), "scale"),
             numpy_helper.from_array(rng.uniform(-1, 1, 5).astype(np.float32), "b")]
    node = helper.make_node("InstanceNormalization", ["x", "scale", "b"], ["y"], epsilon=1e-3)
    graph = helper.make_graph([node], "in", [helper.make_tensor_value_info("x", F, [2, 5, 6, 7])],
                              [helper.make_tensor_value_info("y", F, [2, 5, 6, 7])], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    twin = convert.to_bfloat16(m)
    session = with_actx(twin.SerializeToString(), devices, policy="auto")
    assert on_actx(session).get("InstanceNormalization") == 1
    x = rng.uniform(-3, 3, (2, 5, 6, 7)).astype(np.float32)
    got = session.run(None, {"x": x})[0]
    want = ort.InferenceSession(convert.to_float32(twin).SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    # one float32 computation each, then our one rounding: within a bfloat16 ulp or so
    np.testing.assert_allclose(got, want, rtol=1e-2, atol=2e-2)
