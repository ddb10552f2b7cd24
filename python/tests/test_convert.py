"""actx_ep.convert: float32 models to their bfloat16 twins and back, on small built models (the
real models' twins: test_bf16_models.py). What each test pins: the rounding of every
initializer, which values stay float32 (shape arithmetic, float32-only slots), the Casts at the
edges, the opset raise, the round trip, and a clear error for each bad input."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import actx_ep
from actx_ep import convert

F, BF, I64 = TensorProto.FLOAT, TensorProto.BFLOAT16, TensorProto.INT64


def reference_bf16(values: np.ndarray) -> np.ndarray:
    """src/half.h's actx_f32_to_bf16, one value at a time (Python ints), plus the converter's
    saturation of finite values beyond bfloat16's range."""
    out = []
    for u in np.asarray(values, np.float32).ravel().view(np.uint32).tolist():
        if (u & 0x7FFFFFFF) > 0x7F800000:
            h = (u | 0x00400000) >> 16
        else:
            h = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) & 0xFFFF
            if (u & 0x7FFFFFFF) < 0x7F800000 and (h & 0x7FFF) == 0x7F80:
                h = (h & 0x8000) | 0x7F7F
        out.append(h)
    return np.array(out, np.uint16)


def edge_values() -> np.ndarray:
    bits = [0x00000000, 0x80000000, 0x3F800000, 0x3F808000, 0x3F818000, 0x3F807FFF, 0x3F808001,
            0x00000001, 0x807FFFFF, 0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001, 0xFFFFFFFF,
            0x7F7FFFFF, 0xFF7FFFFF, 0x7F7F7FFF, 0x7F7F8000]
    rng = np.random.default_rng(7)
    rand = rng.integers(0, 2**32, 4096, dtype=np.uint64).astype(np.uint32)
    return np.concatenate([np.array(bits, np.uint32), rand]).view(np.float32)


def mlp(opset: int = 17) -> onnx.ModelProto:
    """x [N, 8] -> MatMul, Add, Relu, Div by sqrt(a dimension of x), Reshape, Resize with float32
    scales; plus a shape path through float arithmetic (Cast to float, Mul, Cast back)."""
    rng = np.random.default_rng(1)
    w = numpy_helper.from_array(rng.standard_normal((8, 8)).astype(np.float32), "w")
    # Ties, subnormals, -0, the largest finite (saturated): the bias's rounding is checked.
    b = numpy_helper.from_array(np.nan_to_num(edge_values()[:8], posinf=1, neginf=1), "b")
    half = numpy_helper.from_array(np.array([0.5], np.float32), "half")
    scales = numpy_helper.from_array(np.array([1, 1, 2, 1], np.float32), "scales")
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["mm"]),
        helper.make_node("Add", ["mm", "b"], ["add"]),
        helper.make_node("Relu", ["add"], ["relu"]),
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Cast", ["shape"], ["shape_f"], to=F),
        helper.make_node("Mul", ["shape_f", "half"], ["shape_half"]),
        helper.make_node("Cast", ["shape_half"], ["shape_i"], to=I64),
        helper.make_node("Constant", [], ["four"], value=numpy_helper.from_array(
            np.array([1, 1, -1, 8], np.int64))),
        # An attention-style scale from a shape, sqrt(dim): computed in float32, cast once.
        helper.make_node("Constant", [], ["one"], value=numpy_helper.from_array(
            np.array(1, np.int64))),
        helper.make_node("Gather", ["shape", "one"], ["dim"]),
        helper.make_node("Cast", ["dim"], ["dim_f"], to=F),
        helper.make_node("Sqrt", ["dim_f"], ["sqrt_dim"]),
        helper.make_node("Div", ["relu", "sqrt_dim"], ["scaled"]),
        helper.make_node("Reshape", ["scaled", "four"], ["r4"]),
        helper.make_node("Resize", ["r4", "", "scales"], ["y"], mode="nearest"),
        helper.make_node("Identity", ["shape_i"], ["half_shape"]),
    ]
    g = helper.make_graph(
        nodes, "mlp",
        [helper.make_tensor_value_info("x", F, ["N", 8])],
        [helper.make_tensor_value_info("y", F, ["a", "b", "c", "d"]),
         helper.make_tensor_value_info("half_shape", I64, [2])],
        [w, b, half, scales])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


def cnn() -> onnx.ModelProto:
    """Conv + SiLU + MaxPool at opset 17: Conv's and MaxPool's bfloat16 schemas are opset 22's."""
    rng = np.random.default_rng(2)
    w = numpy_helper.from_array(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "w")
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Sigmoid", ["c"], ["s"]),
        helper.make_node("Mul", ["c", "s"], ["silu"]),
        helper.make_node("MaxPool", ["silu"], ["y"], kernel_shape=[2, 2], strides=[2, 2]),
    ]
    g = helper.make_graph(nodes, "cnn", [helper.make_tensor_value_info("x", F, [1, 3, 8, 8])],
                          [helper.make_tensor_value_info("y", F, [1, 4, 4, 4])], [w])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def types_of(m: onnx.ModelProto) -> dict:
    inferred = onnx.shape_inference.infer_shapes(m, strict_mode=True)
    g = inferred.graph
    t = {v.name: v.type.tensor_type.elem_type for v in list(g.input) + list(g.value_info)
         + list(g.output)}
    t.update({i.name: i.data_type for i in g.initializer})
    return t


def opset_of(m: onnx.ModelProto) -> int:
    return next(o.version for o in m.opset_import if o.domain in ("", "ai.onnx"))


def ort_graph_resolves(m: onnx.ModelProto) -> str:
    """'' when ORT's CPU EP loads the model; else its message. A bfloat16 model whose graph
    resolves fails only for want of a kernel (NOT_IMPLEMENTED); a type a schema rejects fails
    earlier, with another message."""
    try:
        ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
        return ""
    except Exception as e:  # ORT's errors are of several classes
        return str(e)


def test_rounding_matches_the_reference_bit_for_bit():
    values = edge_values()
    assert np.array_equal(convert.f32_to_bf16_bits(values, saturate=True), reference_bf16(values))
    plain = convert.f32_to_bf16_bits(np.array([3.4028235e38, -3.4028235e38], np.float32))
    assert plain.tolist() == [0x7F80, 0xFF80]  # without saturation, half.h's infinity
    nan = convert.f32_to_bf16_bits(np.array([0x7F800001], np.uint32).view(np.float32))
    assert nan.tolist() == [0x7FC0]  # quiet
    assert np.array_equal(convert.bf16_bits_to_f32(np.array([0x3F80, 0xC000], np.uint16)),
                          np.array([1.0, -2.0], np.float32))


def test_every_initializer_is_the_reference_rounding():
    m = mlp()
    twin = convert.to_bfloat16(m)
    before = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
    after = {t.name: t for t in twin.graph.initializer}
    for name in ("w", "b"):
        t = after[name]
        assert t.data_type == BF
        got = np.frombuffer(t.raw_data, "<u2")
        assert np.array_equal(got, reference_bf16(before[name])), name
    # Shape arithmetic's constant and Resize's scales stay float32, bit for bit.
    for name in ("half", "scales"):
        assert after[name].data_type == F, name
        assert np.array_equal(numpy_helper.to_array(after[name]), before[name])


def test_compute_in_bf16_io_float32_shape_paths_untouched():
    twin = convert.to_bfloat16(mlp())
    t = types_of(twin)
    assert t["x"] == F and t["y"] == F and t["half_shape"] == I64
    for name in ("mm", "add", "relu", "r4"):
        assert t[name] == BF, name
    assert t["scaled"] == BF
    for name in ("shape_f", "shape_half", "dim_f", "sqrt_dim"):  # float arithmetic on shapes
        assert t[name] == F, name
    casts = [n for n in twin.graph.node if n.op_type == "Cast"]
    edges = {(n.input[0], n.output[0]) for n in casts}
    assert ("x", "x/bf16") in edges
    out_cast = [n for n in casts if n.output[0] == "y"]
    assert len(out_cast) == 1 and t[out_cast[0].input[0]] == BF
    # The shape path's Casts are the model's own two, unchanged.
    own = [n for n in casts if n.output[0] in ("shape_f", "shape_i")]
    assert [a.i for n in own for a in n.attribute if a.name == "to"] == [F, I64]
    onnx.checker.check_model(twin, full_check=True)


def test_keep_io_types_false_makes_the_edges_bfloat16():
    twin = convert.to_bfloat16(mlp(), keep_io_types=False)
    t = types_of(twin)
    assert t["x"] == BF and t["y"] == BF and t["half_shape"] == I64
    assert not any(n.op_type == "Cast" and n.output[0] in ("x/bf16", "y")
                   for n in twin.graph.node)


def test_opset_raised_where_a_bf16_schema_is_newer():
    twin = convert.to_bfloat16(cnn())
    assert opset_of(twin) == 22
    assert convert.bf16_opsets(cnn()) == {"Conv": 22, "Sigmoid": 17, "Mul": 17, "MaxPool": 22}
    assert opset_of(convert.to_bfloat16(mlp())) == 17  # nothing there needs more
    assert opset_of(convert.to_bfloat16(mlp(), opset=21)) == 21
    with pytest.raises(convert.ConversionError, match="older than the model"):
        convert.to_bfloat16(mlp(), opset=15)


@pytest.mark.parametrize("build", [mlp, cnn])
def test_ort_resolves_the_twin_and_fails_only_for_want_of_a_kernel(build):
    msg = ort_graph_resolves(convert.to_bfloat16(build()))
    # ORT 1.30's CPU EP has no bfloat16 MatMul / Conv: the first compute node is named. An EP
    # that runs them makes this load; either way no schema rejected a type.
    assert msg == "" or "NOT_IMPLEMENTED" in msg, msg


@pytest.mark.parametrize("build", [mlp, cnn])
def test_round_trip_float32_twin(build):
    m = build()
    twin = convert.to_bfloat16(m)
    back = convert.to_float32(twin)
    t = types_of(back)
    assert BF not in t.values()
    # The float32 twin computes with the rounded weights: the same graph, float32 everywhere.
    w = {i.name: numpy_helper.to_array(i) for i in back.graph.initializer}
    orig = {i.name: numpy_helper.to_array(i) for i in m.graph.initializer}
    assert np.array_equal(w["w"].ravel().view(np.uint32),
                          reference_bf16(orig["w"]).astype(np.uint32) << 16)
    x = np.random.default_rng(3).standard_normal(
        (4, 8) if build is mlp else (1, 3, 8, 8)).astype(np.float32)
    got = ort.InferenceSession(back.SerializeToString(), providers=["CPUExecutionProvider"]) \
        .run(None, {"x": x})
    want = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]) \
        .run(None, {"x": x})
    rel = np.linalg.norm(got[0] - want[0]) / np.linalg.norm(want[0])
    assert 0 < rel < 1e-2, rel  # weights rounded to 8 bits: close, not equal
    # Twice round: the bfloat16 twin of the float32 twin holds the same bits.
    again = convert.to_bfloat16(back)
    a = {i.name: i.raw_data for i in twin.graph.initializer}
    b = {i.name: i.raw_data for i in again.graph.initializer}
    assert a == b


def test_a_table_gathered_by_shape_made_positions_is_bfloat16():
    # Position embeddings: positions = Range(0, N) with N from Shape(x), table[positions] + x.
    table = numpy_helper.from_array(
        np.random.default_rng(4).standard_normal((16, 8)).astype(np.float32), "table")
    scalar = lambda name, v: helper.make_node(  # noqa: E731
        "Constant", [], [name], value=numpy_helper.from_array(np.array(v, np.int64)))
    g = helper.make_graph(
        [helper.make_node("Shape", ["x"], ["s"]), scalar("zero", 0), scalar("one", 1),
         helper.make_node("Gather", ["s", "zero"], ["n"]),
         helper.make_node("Range", ["zero", "n", "one"], ["pos"]),
         helper.make_node("Gather", ["table", "pos"], ["emb"]),
         helper.make_node("Add", ["x", "emb"], ["y"])],
        "pos", [helper.make_tensor_value_info("x", F, ["N", 8])],
        [helper.make_tensor_value_info("y", F, ["N", 8])], [table])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    twin = convert.to_bfloat16(m)
    t = types_of(twin)
    assert t["table"] == BF and t["emb"] == BF and t["y/bf16"] == BF
    assert [n.input[0] for n in twin.graph.node if n.op_type == "Cast"] == ["x", "y/bf16"]


def test_a_weight_whose_shape_is_read_is_held_once():
    w = numpy_helper.from_array(np.ones((8, 4), np.float32), "w")
    g = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"]), helper.make_node("Shape", ["w"], ["s"])],
        "w", [helper.make_tensor_value_info("x", F, [2, 8])],
        [helper.make_tensor_value_info("y", F, [2, 4]),
         helper.make_tensor_value_info("s", I64, [2])], [w])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    twin = convert.to_bfloat16(m)
    assert [(t.name, t.data_type) for t in twin.graph.initializer] == [("w", BF)]


def test_float_constant_nodes_converted_where_they_feed_compute():
    g = helper.make_graph(
        [helper.make_node("Constant", [], ["k"], value_float=0.1),
         helper.make_node("Mul", ["x", "k"], ["y"])],
        "c", [helper.make_tensor_value_info("x", F, [2])],
        [helper.make_tensor_value_info("y", F, [2])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    twin = convert.to_bfloat16(m)
    k = next(n for n in twin.graph.node if n.op_type == "Constant")
    t = k.attribute[0].t
    assert t.data_type == BF
    assert np.frombuffer(t.raw_data, "<u2").tolist() == reference_bf16(np.float32(0.1)).tolist()


def test_an_op_without_bf16_schema_runs_in_float32_between_casts():
    # Range has no bfloat16 form at any opset: its float data input is cast to float32.
    g = helper.make_graph(
        [helper.make_node("ReduceMax", ["x"], ["top"], keepdims=0),
         helper.make_node("Constant", [], ["zero"], value_float=0.0),
         helper.make_node("Constant", [], ["one"], value_float=1.0),
         helper.make_node("Range", ["zero", "top", "one"], ["r"]),
         helper.make_node("Neg", ["r"], ["y"])],
        "r", [helper.make_tensor_value_info("x", F, [4])],
        [helper.make_tensor_value_info("y", F, ["n"])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)
    twin = convert.to_bfloat16(m)
    t = types_of(twin)
    assert t["top"] == BF and t["r"] == F and t["y"] == F
    rng = next(n for n in twin.graph.node if n.op_type == "Range")
    assert all(t[i] == F for i in rng.input)
    msg = ort_graph_resolves(twin)
    assert msg == "" or "NOT_IMPLEMENTED" in msg, msg


def test_float32_ops_keeps_named_ops_in_float32():
    twin = convert.to_bfloat16(cnn(), float32_ops=["Sigmoid"])
    t = types_of(twin)
    assert t["c"] == BF and t["s"] == F and t["silu"] == BF


def unserved_model() -> onnx.ModelProto:
    """Served ops around two the EP cannot run in bfloat16 (Hardmax, LpNormalization)."""
    inits = []
    g = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["r"]),
         helper.make_node("Hardmax", ["r"], ["i"], axis=1),
         helper.make_node("LpNormalization", ["i"], ["p"], axis=1),
         helper.make_node("Neg", ["p"], ["y"])],
        "u", [helper.make_tensor_value_info("x", F, [2, 4, 5, 6])],
        [helper.make_tensor_value_info("y", F, [2, 4, 5, 6])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def test_ops_the_ep_cannot_run_stay_float32_so_the_twin_loads(devices):
    twin = convert.to_bfloat16(unserved_model())
    t = types_of(twin)
    assert t["r"] == BF and t["y"] == F  # the served ones in bfloat16
    for op in ("Hardmax", "LpNormalization"):
        node = next(n for n in twin.graph.node if n.op_type == op)
        assert all(t[v] == F for v in list(node.input) + list(node.output) if v), op
    assert "float32_ops=Hardmax,LpNormalization" in twin.metadata_props[-1].value
    so = ort.SessionOptions()
    so.add_provider_for_devices(list(devices), actx_ep.provider_options("auto"))
    s = ort.InferenceSession(twin.SerializeToString(), so)
    x = np.random.default_rng(0).uniform(-2, 2, (2, 4, 5, 6)).astype(np.float32)
    got = s.run(None, {"x": x})[0]
    want = ort.InferenceSession(convert.to_float32(twin).SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    np.testing.assert_allclose(got, want, rtol=2e-2, atol=2e-2)
    # every op in bfloat16 where its schema allows: ORT then names the node it cannot run
    every = convert.to_bfloat16(unserved_model(), only_actx_ops=False)
    assert types_of(every)["i"] == BF
    with pytest.raises(Exception, match="Hardmax"):
        ort.InferenceSession(every.SerializeToString(), so)


def conv_bn_model(constants: bool = False) -> onnx.ModelProto:
    """x -> Conv (no bias) -> BatchNormalization -> Relu -> y; x -> Conv2 (bias) -> c2, read by a
    BatchNormalization and by z (not folded: another reader). constants: the weights and
    statistics as Constant nodes (older exporters' form), not initializers."""
    rng = np.random.default_rng(6)
    c, m = 3, 4
    init = lambda name, shape, lo=-1.0, hi=1.0: numpy_helper.from_array(  # noqa: E731
        rng.uniform(lo, hi, shape).astype(np.float32), name)
    inits = [init("w", [m, c, 3, 3]), init("w2", [m, c, 1, 1]), init("b2", [m]),
             init("s", [m]), init("b", [m]), init("mean", [m]), init("var", [m], 0.5, 2.0),
             init("s2", [m]), init("bb2", [m]), init("mean2", [m]), init("var2", [m], 0.5, 2.0)]
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("BatchNormalization", ["c", "s", "b", "mean", "var"], ["n"],
                              epsilon=1e-3),
             helper.make_node("Relu", ["n"], ["y"]),
             helper.make_node("Conv", ["x", "w2", "b2"], ["c2"]),
             helper.make_node("BatchNormalization", ["c2", "s2", "bb2", "mean2", "var2"], ["n2"]),
             helper.make_node("Add", ["n2", "c2"], ["z"])]
    if constants:
        nodes = [helper.make_node("Constant", [], [t.name], value=t) for t in inits] + nodes
        inits = []
    g = helper.make_graph(nodes, "cbn", [helper.make_tensor_value_info("x", F, [1, c, 6, 6])],
                          [helper.make_tensor_value_info("y", F, [1, m, 6, 6]),
                           helper.make_tensor_value_info("z", F, [1, m, 6, 6])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 15)], ir_version=8)


@pytest.mark.parametrize("constants", [False, True])
def test_batch_norm_after_a_conv_is_folded_in_float32(devices, constants):
    m = conv_bn_model(constants)
    twin = convert.to_bfloat16(m)
    assert "folded_batch_norms=1" in twin.metadata_props[-1].value
    assert [n.op_type for n in twin.graph.node if n.op_type in ("Conv", "BatchNormalization")] \
        == ["Conv", "Conv", "BatchNormalization"]  # the second Conv's result has two readers
    arr = {t.name: numpy_helper.to_array(t) for t in conv_bn_model().graph.initializer}
    s = arr["s"] / np.sqrt(arr["var"] + np.float32(1e-3))
    want_w = (arr["w"] * s[:, None, None, None]).astype(np.float32)
    want_b = ((np.zeros(4, np.float32) - arr["mean"]) * s + arr["b"]).astype(np.float32)
    got = {t.name: np.frombuffer(t.raw_data, "<u2") for t in twin.graph.initializer}
    got.update({n.output[0]: np.frombuffer(n.attribute[0].t.raw_data, "<u2")
                for n in twin.graph.node if n.op_type == "Constant"})
    assert not {"s", "b", "mean", "var"} & set(got)  # the folded statistics are gone
    np.testing.assert_array_equal(got["w"], reference_bf16(want_w))
    np.testing.assert_array_equal(got["w/folded_bias"], reference_bf16(want_b))
    so = ort.SessionOptions()
    so.add_provider_for_devices(list(devices), actx_ep.provider_options("auto"))
    x = np.random.default_rng(7).uniform(-2, 2, (1, 3, 6, 6)).astype(np.float32)
    ours = ort.InferenceSession(twin.SerializeToString(), so).run(None, {"x": x})
    ref = ort.InferenceSession(m.SerializeToString(),
                               providers=["CPUExecutionProvider"]).run(None, {"x": x})
    for a, b in zip(ours, ref):
        np.testing.assert_allclose(a, b, rtol=0.03, atol=0.05)
    kept = convert.to_bfloat16(m, fold_batch_norm=False)
    assert sum(n.op_type == "BatchNormalization" for n in kept.graph.node) == 2
    assert "folded" not in kept.metadata_props[-1].value


def test_batch_norm_fold_leaves_an_output_weight_and_takes_a_free_name():
    """A Conv weight that is also a graph output is not folded (the output would change); a
    folded bias gets a name no other value has."""
    m = conv_bn_model()
    m.graph.output.append(helper.make_tensor_value_info("w", F, [4, 3, 3, 3]))
    twin = convert.to_bfloat16(m)
    assert "folded_batch_norms" not in twin.metadata_props[-1].value
    m = conv_bn_model()
    m.graph.initializer.append(numpy_helper.from_array(np.zeros(2, np.float32), "w/folded_bias"))
    m.graph.node.append(helper.make_node("Neg", ["w/folded_bias"], ["nb"]))
    m.graph.output.append(helper.make_tensor_value_info("nb", F, [2]))
    twin = convert.to_bfloat16(m)
    conv = next(n for n in twin.graph.node if n.op_type == "Conv" and n.input[1] == "w")
    assert conv.input[2] == "w/folded_bias_2"


def test_a_stale_declared_shape_is_replaced_by_the_inferred_one(devices):
    """An exporter's stale output shape (rank 2 declared, the Reshape makes rank 3) and a stale
    value_info hint: ORT runs the model; the converter drops the hint and declares the output
    as inference finds it."""
    shape = numpy_helper.from_array(np.array([1, 2, 3], np.int64), "shape")
    g = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Reshape", ["r", "shape"], ["y"])],
        "stale", [helper.make_tensor_value_info("x", F, [2, 3])],
        [helper.make_tensor_value_info("y", F, [1, "n"])], [shape],
        value_info=[helper.make_tensor_value_info("r", F, [7])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    with pytest.raises(Exception):  # onnx's strict inference refuses the model as it is
        onnx.shape_inference.infer_shapes(m, strict_mode=True)
    twin = convert.to_bfloat16(m)
    dims = [d.dim_value for d in twin.graph.output[0].type.tensor_type.shape.dim]
    assert dims == [1, 2, 3] and types_of(twin)["r"] == BF
    so = ort.SessionOptions()
    so.add_provider_for_devices(list(devices), actx_ep.provider_options("auto"))
    x = np.array([[-1, 2, -3], [4, -5, 6]], np.float32)
    y = ort.InferenceSession(twin.SerializeToString(), so).run(None, {"x": x})[0]
    np.testing.assert_array_equal(y, np.maximum(x, 0).reshape(1, 2, 3))


F16 = TensorProto.FLOAT16


def half_model() -> onnx.ModelProto:
    """A float16 model: x float16 [2, 8] read by a MatMul (no Cast) -> Add -> Relu -> y float16,
    and z = Cast(Relu, to float32); u float32 -> Cast to float16 -> Sigmoid -> Cast back -> v
    float32 (the float16 island exporters write between float32 edges)."""
    rng = np.random.default_rng(3)
    w = numpy_helper.from_array(rng.standard_normal((8, 8)).astype(np.float16), "w")
    b = numpy_helper.from_array(rng.standard_normal(8).astype(np.float16), "b")
    g = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["mm"]),
         helper.make_node("Add", ["mm", "b"], ["add"]),
         helper.make_node("Relu", ["add"], ["y"]),
         helper.make_node("Cast", ["y"], ["z"], to=F),
         helper.make_node("Cast", ["u"], ["u16"], to=F16),
         helper.make_node("Sigmoid", ["u16"], ["s16"]),
         helper.make_node("Cast", ["s16"], ["v"], to=F)],
        "half", [helper.make_tensor_value_info("x", F16, [2, 8]),
                 helper.make_tensor_value_info("u", F, [2, 8])],
        [helper.make_tensor_value_info("y", F16, [2, 8]),
         helper.make_tensor_value_info("z", F, [2, 8]),
         helper.make_tensor_value_info("v", F, [2, 8])], [w, b])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def test_a_float16_model_computes_in_bfloat16_with_its_io_types(devices):
    m = half_model()
    twin = convert.to_bfloat16(m)
    assert "from=float16" in twin.metadata_props[-1].value
    assert [v.type.tensor_type.elem_type for v in twin.graph.input] == [F16, F]
    assert [v.type.tensor_type.elem_type for v in twin.graph.output] == [F16, F, F]
    t = types_of(twin)
    assert t["mm"] == BF and t["add"] == BF and t["s16"] == BF
    # float16 -> bfloat16 rounds once (float16 widens to float32 exactly)
    for init in m.graph.initializer:
        got = next(i for i in twin.graph.initializer if i.name == init.name)
        assert got.data_type == BF
        want = reference_bf16(numpy_helper.to_array(init).astype(np.float32))
        np.testing.assert_array_equal(np.frombuffer(got.raw_data, "<u2"), want)
    so = ort.SessionOptions()
    so.add_session_config_entry("session.record_ep_graph_assignment_info", "1")
    so.add_provider_for_devices(list(devices), actx_ep.provider_options("auto"))
    s = ort.InferenceSession(twin.SerializeToString(), so)
    on_cpu = {n.op_type for sg in s.get_provider_graph_assignment_info()
              if sg.ep_name != "actx" for n in sg.get_nodes()}
    assert on_cpu <= {"Cast"}, on_cpu
    rng = np.random.default_rng(4)
    feeds = {"x": rng.uniform(-2, 2, (2, 8)).astype(np.float16),
             "u": rng.uniform(-4, 4, (2, 8)).astype(np.float32)}
    got = s.run(None, feeds)
    assert [o.dtype for o in got] == [np.float16, np.float32, np.float32]
    want = ort.InferenceSession(m.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, feeds)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a.astype(np.float32), b.astype(np.float32),
                                   rtol=3e-2, atol=3e-2)
    # bfloat16 edges on request: none of float16 left
    bf_io = convert.to_bfloat16(m, keep_io_types=False)
    assert F16 not in set(convert._all_tensor_types(bf_io))
    # a float16 input that is an output too: float16 on both sides; an output's value_info hint
    m.graph.output.append(helper.make_tensor_value_info("x", F16, [2, 8]))
    m.graph.value_info.append(helper.make_tensor_value_info("y", F16, [2, 8]))
    twin = convert.to_bfloat16(m)
    assert [v.type.tensor_type.elem_type for v in twin.graph.output] == [F16, F, F, F16]
    assert "y" not in {v.name for v in twin.graph.value_info}
    got = ort.InferenceSession(twin.SerializeToString(), so).run(None, feeds)
    assert got[3].dtype == np.float16 and np.array_equal(got[3], feeds["x"])


def test_bad_input_not_a_model(tmp_path):
    p = tmp_path / "x.onnx"
    p.write_bytes(b"not a model at all")
    with pytest.raises(convert.ConversionError, match="not an ONNX model"):
        convert.to_bfloat16(str(p))
    with pytest.raises(convert.ConversionError, match="not an ONNX model"):
        convert.to_bfloat16(b"\x00\x01garbage")
    with pytest.raises(convert.ConversionError, match="expected an onnx.ModelProto"):
        convert.to_bfloat16(42)
    with pytest.raises(FileNotFoundError):
        convert.to_bfloat16(str(tmp_path / "missing.onnx"))
    empty = helper.make_model(helper.make_graph([], "e", [], []), ir_version=8)
    with pytest.raises(convert.ConversionError, match="no nodes"):
        convert.to_bfloat16(empty)


def test_bad_input_already_bfloat16():
    twin = convert.to_bfloat16(mlp())
    with pytest.raises(convert.ConversionError, match="already holds bfloat16"):
        convert.to_bfloat16(twin)
    with pytest.raises(convert.ConversionError, match="holds no bfloat16"):
        convert.to_float32(mlp())


def test_bad_input_cycle_and_opsets():
    g = helper.make_graph([helper.make_node("Relu", ["b"], ["a"]),
                           helper.make_node("Relu", ["a"], ["b"])], "cycle",
                          [helper.make_tensor_value_info("x", F, [2])],
                          [helper.make_tensor_value_info("a", F, [2])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    with pytest.raises(convert.ConversionError, match="cycle through Relu"):
        convert.to_bfloat16(m)
    with pytest.raises(convert.ConversionError, match="newer than the converter raises to"):
        convert.to_bfloat16(mlp(), opset=convert.MAX_OPSET + 1)


def test_bad_input_unknown_op():
    g = helper.make_graph([helper.make_node("Frobnicate", ["x"], ["y"], domain="example.org")],
                          "u", [helper.make_tensor_value_info("x", F, [2])],
                          [helper.make_tensor_value_info("y", F, [2])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17),
                                            helper.make_opsetid("example.org", 1)], ir_version=8)
    with pytest.raises(convert.ConversionError, match="Frobnicate.*unknown to the converter"):
        convert.to_bfloat16(m, only_actx_ops=False)
    # by default an op the EP does not run stays float32, known to onnx or not
    m.graph.node[0].input[0] = "r"
    m.graph.node.insert(0, helper.make_node("Relu", ["x"], ["r"]))
    t = types_of(convert.to_bfloat16(m))
    assert t["r"] == BF and t["y"] == F


def if_model(compute_outside: bool) -> onnx.ModelProto:
    """An If whose branches read an outer value by name (h = Relu(x), or x itself) and w, an
    initializer."""
    h = "h" if compute_outside else "x"
    then = helper.make_graph([helper.make_node("Mul", [h, "w"], ["t"])], "then", [],
                             [helper.make_tensor_value_info("t", F, [2])])
    other = helper.make_graph([helper.make_node("Add", [h, "w"], ["e"])], "else", [],
                              [helper.make_tensor_value_info("e", F, [2])])
    nodes = [helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other)]
    if compute_outside:
        nodes = [helper.make_node("Relu", ["x"], ["h"])] + nodes
    g = helper.make_graph(
        nodes[::-1], "i",  # out of order: the converter sorts, as ORT accepts either
        [helper.make_tensor_value_info("c", TensorProto.BOOL, []),
         helper.make_tensor_value_info("x", F, [2])],
        [helper.make_tensor_value_info("y", F, [2])],
        [numpy_helper.from_array(np.array([2, 3], np.float32), "w")])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def test_control_flow_stays_float32_reading_float32_copies():
    twin = convert.to_bfloat16(if_model(compute_outside=True))
    t = types_of(twin)
    assert t["h"] == BF and t["w"] == F
    branch = next(n for n in twin.graph.node if n.op_type == "If").attribute[0].g
    reads = list(branch.node[0].input)
    assert reads[1] == "w" and reads[0] != "h" and t[reads[0]] == F
    c, x = np.array(True), np.array([-1.5, 2.25], np.float32)
    y = ort.InferenceSession(convert.to_float32(twin).SerializeToString(),
                             providers=["CPUExecutionProvider"]).run(None, {"c": c, "x": x})[0]
    assert y.tolist() == [0.0, 6.75]
    with pytest.raises(convert.ConversionError, match="control flow, kept float32: If"):
        convert.to_bfloat16(if_model(compute_outside=False))


def test_command_line(tmp_path, capsys):
    src, dst, back = tmp_path / "m.onnx", tmp_path / "m.bf16.onnx", tmp_path / "m.f32.onnx"
    onnx.save(cnn(), str(src))
    assert convert.main(["--bfloat16", str(src), str(dst)]) == 0
    assert "opset=17->22" in capsys.readouterr().out
    assert types_of(onnx.load(str(dst)))["c"] == BF
    assert convert.main(["--float32", str(dst), str(back)]) == 0
    assert BF not in types_of(onnx.load(str(back))).values()
    assert convert.main(["--bfloat16", str(dst), str(back)]) == 1
    assert "already holds bfloat16" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        convert.main([str(src), str(dst)])  # neither --bfloat16 nor --float32
    onnx.save(unserved_model(), str(src))
    assert convert.main(["--bfloat16", str(src), str(dst)]) == 0
    assert types_of(onnx.load(str(dst)))["i"] == F
    assert convert.main(["--bfloat16", "--every-op", str(src), str(dst)]) == 0
    assert types_of(onnx.load(str(dst)))["i"] == BF
