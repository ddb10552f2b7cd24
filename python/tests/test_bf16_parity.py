"""The bfloat16 service against ORT's own float32 kernels, op by op, over random small
configurations: a twin must run wherever its float32 model runs in ORT alone, with ORT's output
shapes, and near its values.

Each case is a one-node float32 model (random attributes, shapes down to one element, pads and
strides past the kernel, auto_pad, ceil_mode, broadcasts...) made a twin by actx_ep.convert. ORT
alone runs the model's float32 twin (the twin's rounded weights, computed in float32: the
reference), ORT + actx runs the twin, both on the same bfloat16-exact inputs. Where ORT alone
runs, the twin runs on actx, every output of ORT's shape, within 2^-6 of the larger of the
value and the output's largest (one bfloat16 rounding of the result, and a float32
accumulation's order); where ORT alone refuses, the twin refuses with a status or computes
what the ONNX definition gives (Pad's reflect past the axis, as the ONNX documentation's
example does and ORT refuses), never a crash. A
case the converter refuses (onnx's strict shape inference rejects the model) is skipped: ORT
alone is not asked. The pooling output sizes ORT computes where the kernel passes the padded
input (C's truncation, not ONNX's floor) were found this way."""

from __future__ import annotations

from typing import Callable, Dict, List, Optional, Tuple

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import actx_ep
from actx_ep import convert
from conftest import RECORD_ASSIGNMENT

F = TensorProto.FLOAT
CASES_PER_OP = 40

Case = Tuple[onnx.ModelProto, Dict[str, np.ndarray]]


def bf16_exact(rng: np.random.Generator, shape) -> np.ndarray:
    """Uniform in [-4, 4], rounded to bfloat16 (so the twin's edge Cast is exact)."""
    x = rng.uniform(-4, 4, shape).astype(np.float32)
    return convert.bf16_bits_to_f32(convert.f32_to_bf16_bits(x)).reshape(shape)


def one_node(op: str, inputs: List[Tuple[str, List[int]]], attrs: dict, opset: int,
             inits: List[onnx.TensorProto] = (), n_out: int = 1) -> onnx.ModelProto:
    node = helper.make_node(op, [n for n, _ in inputs] + [t.name for t in inits if t.name],
                            [f"y{i}" for i in range(n_out)], name="n", **attrs)
    graph = helper.make_graph(
        [node], "parity", [helper.make_tensor_value_info(n, F, shape) for n, shape in inputs],
        [helper.make_tensor_value_info(f"y{i}", F, None) for i in range(n_out)],
        [t for t in inits if t.name])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                             ir_version=10)


def spatial(rng, k: int, lo: int = 1, hi: int = 9) -> List[int]:
    return [int(v) for v in rng.integers(lo, hi + 1, k)]


def window_attrs(rng, k: int, dilations: bool) -> dict:
    kernel = spatial(rng, k, 1, 4)
    attrs = {"kernel_shape": kernel}
    if rng.random() < 0.7:
        attrs["strides"] = spatial(rng, k, 1, 3)
    if dilations and rng.random() < 0.4:
        attrs["dilations"] = spatial(rng, k, 1, 2)
    pad_kind = rng.integers(0, 5)
    if pad_kind == 1:
        attrs["auto_pad"] = "VALID"
    elif pad_kind == 2:
        attrs["auto_pad"] = ["SAME_UPPER", "SAME_LOWER"][rng.integers(0, 2)]
    elif pad_kind >= 3:
        attrs["pads"] = [int(rng.integers(0, kk)) for kk in kernel] * 2
    return attrs


def pool_case(rng) -> Case:
    op = ["MaxPool", "AveragePool"][rng.integers(0, 2)]
    k = int(rng.integers(1, 3))
    attrs = window_attrs(rng, k, dilations=True)
    if rng.random() < 0.4:
        attrs["ceil_mode"] = 1
    if op == "AveragePool" and rng.random() < 0.5:
        attrs["count_include_pad"] = 1
    shape = [int(rng.integers(1, 3)), int(rng.integers(1, 4))] + spatial(rng, k)
    return one_node(op, [("x", shape)], attrs, 22), {"x": bf16_exact(rng, shape)}


def global_pool_case(rng) -> Case:
    op = ["GlobalMaxPool", "GlobalAveragePool"][rng.integers(0, 2)]
    shape = [int(rng.integers(1, 3)), int(rng.integers(1, 4))] + spatial(rng, int(rng.integers(1, 4)), 1, 6)
    return one_node(op, [("x", shape)], {}, 22), {"x": bf16_exact(rng, shape)}


def conv_case(rng) -> Case:
    k = int(rng.integers(1, 3))
    c = int(rng.integers(1, 5))
    group = c if (c > 1 and rng.random() < 0.3) else 1
    m = group * int(rng.integers(1, 3)) if group > 1 else int(rng.integers(1, 5))
    attrs = window_attrs(rng, k, dilations=True)
    kernel = attrs.pop("kernel_shape")
    if rng.random() < 0.7:
        attrs["kernel_shape"] = kernel
    if group > 1:
        attrs["group"] = group
    if "auto_pad" in attrs and attrs["auto_pad"].startswith("SAME"):
        attrs.pop("dilations", None)  # ORT refuses dilated SAME convolutions
    w = numpy_helper.from_array(bf16_exact(rng, [m, c // group] + kernel), "w")
    inits = [w]
    if rng.random() < 0.5:
        inits.append(numpy_helper.from_array(bf16_exact(rng, [m]), "b"))
    shape = [int(rng.integers(1, 3)), c] + spatial(rng, k)
    return one_node("Conv", [("x", shape)], attrs, 22, inits), {"x": bf16_exact(rng, shape)}


def conv_transpose_case(rng) -> Case:
    k = int(rng.integers(1, 3))
    c, m = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    kernel = spatial(rng, k, 1, 3)
    strides = spatial(rng, k, 1, 3)
    attrs = {"strides": strides}
    if rng.random() < 0.5:
        attrs["output_padding"] = [int(rng.integers(0, s)) for s in strides]
    if rng.random() < 0.5:
        attrs["pads"] = [int(rng.integers(0, kk)) for kk in kernel] * 2
    elif rng.random() < 0.4:
        attrs["auto_pad"] = ["SAME_UPPER", "SAME_LOWER"][rng.integers(0, 2)]
    if rng.random() < 0.3:
        attrs["dilations"] = spatial(rng, k, 1, 2)
    w = numpy_helper.from_array(bf16_exact(rng, [c, m] + kernel), "w")
    shape = [1, c] + spatial(rng, k, 1, 6)
    return (one_node("ConvTranspose", [("x", shape)], attrs, 22, [w]),
            {"x": bf16_exact(rng, shape)})


def resize_case(rng) -> Case:
    rank = int(rng.integers(3, 5))
    shape = [1, int(rng.integers(1, 3))] + spatial(rng, rank - 2, 1, 7)
    mode = ["nearest", "linear"][rng.integers(0, 2)]
    attrs = {"mode": mode, "coordinate_transformation_mode": [
        "half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel"][rng.integers(0, 4)]}
    if mode == "nearest":
        attrs["nearest_mode"] = ["round_prefer_floor", "round_prefer_ceil", "floor",
                                 "ceil"][rng.integers(0, 4)]
    inits = [numpy_helper.from_array(np.array([], np.float32), "roi")]
    if rng.random() < 0.5:
        scales = [1.0, 1.0] + [float(rng.choice([0.5, 1.0, 1.5, 2.0, 3.0])) for _ in shape[2:]]
        inits.append(numpy_helper.from_array(np.array(scales, np.float32), "scales"))
    else:
        sizes = shape[:2] + [int(rng.integers(1, 13)) for _ in shape[2:]]
        inits += [helper.make_tensor("", F, [0], []),
                  numpy_helper.from_array(np.array(sizes, np.int64), "sizes")]
    node_inputs = ["x", "roi", inits[1].name if inits[1].name else "", *(
        [inits[2].name] if len(inits) > 2 else [])]
    node = helper.make_node("Resize", node_inputs, ["y0"], name="n", **attrs)
    graph = helper.make_graph([node], "parity", [helper.make_tensor_value_info("x", F, shape)],
                              [helper.make_tensor_value_info("y0", F, None)],
                              [t for t in inits if t.name])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)], ir_version=10)
    return m, {"x": bf16_exact(rng, shape)}


def pad_case(rng) -> Case:
    rank = int(rng.integers(1, 5))
    shape = spatial(rng, rank, 1, 5)
    mode = ["constant", "reflect", "edge", "wrap"][rng.integers(0, 4)]
    pads = [int(rng.integers(-1 if mode == "constant" else 0, 4)) for _ in range(2 * rank)]
    if mode == "wrap":  # ORT 1.30 reads past the input where a wrap pad passes its dimension
        pads = [min(p, shape[d % rank]) for d, p in enumerate(pads)]
    inits = [numpy_helper.from_array(np.array(pads, np.int64), "pads")]
    if mode == "constant" and rng.random() < 0.5:
        inits.append(numpy_helper.from_array(np.array(1.5, np.float32), "value"))
    return (one_node("Pad", [("x", shape)], {"mode": mode}, 19, inits),
            {"x": bf16_exact(rng, shape)})


def reduce_case(rng) -> Case:
    op = ["ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin"][rng.integers(0, 4)]
    rank = int(rng.integers(1, 5))
    shape = spatial(rng, rank, 1, 5)
    attrs = {"keepdims": int(rng.integers(0, 2))}
    inits = []
    if rng.random() < 0.7:
        axes = sorted({int(a) for a in rng.integers(-rank, rank, int(rng.integers(1, rank + 1)))}
                      , key=lambda a: a % rank)
        axes = list(dict.fromkeys(a % rank for a in axes))
        inits.append(numpy_helper.from_array(np.array(axes, np.int64), "axes"))
    elif rng.random() < 0.5:
        attrs["noop_with_empty_axes"] = 1
    return one_node(op, [("x", shape)], attrs, 18, inits), {"x": bf16_exact(rng, shape)}


def softmax_case(rng) -> Case:
    op = ["Softmax", "LogSoftmax"][rng.integers(0, 2)]
    rank = int(rng.integers(1, 5))
    shape = spatial(rng, rank, 1, 6)
    return (one_node(op, [("x", shape)], {"axis": int(rng.integers(-rank, rank))}, 13),
            {"x": bf16_exact(rng, shape)})


def broadcast_pair(rng) -> Tuple[List[int], List[int]]:
    rank = int(rng.integers(1, 5))
    a = spatial(rng, rank, 1, 5)
    b = [d if rng.random() < 0.6 else 1 for d in a][int(rng.integers(0, rank)):]
    if rng.random() < 0.5:
        a, b = b, a
    return a, b


def matmul_case(rng) -> Case:
    m, k, n = (int(v) for v in rng.integers(1, 7, 3))
    batch_a, batch_b = broadcast_pair(rng) if rng.random() < 0.6 else ([], [])
    a = batch_a[:2] + [m, k] if rng.random() < 0.85 else [k]
    b = batch_b[:2] + [k, n] if rng.random() < 0.85 else [k]
    return (one_node("MatMul", [("a", a), ("b", b)], {}, 13),
            {"a": bf16_exact(rng, a), "b": bf16_exact(rng, b)})


def gemm_case(rng) -> Case:
    m, k, n = (int(v) for v in rng.integers(1, 7, 3))
    ta, tb = int(rng.integers(0, 2)), int(rng.integers(0, 2))
    attrs = {"transA": ta, "transB": tb, "alpha": float(rng.choice([1.0, 0.5])),
             "beta": float(rng.choice([1.0, 2.0]))}
    w = numpy_helper.from_array(bf16_exact(rng, [n, k] if tb else [k, n]), "w")
    inits = [w]
    if rng.random() < 0.7:
        c_shape = [[n], [1, n], [m, n], [m, 1], []][rng.integers(0, 5)]
        inits.append(numpy_helper.from_array(bf16_exact(rng, c_shape), "c"))
    a = [k, m] if ta else [m, k]
    return one_node("Gemm", [("a", a)], attrs, 13, inits), {"a": bf16_exact(rng, a)}


def expand_tile_case(rng) -> Case:
    rank = int(rng.integers(1, 4))
    shape = [d if rng.random() < 0.5 else 1 for d in spatial(rng, rank, 1, 4)]
    if rng.random() < 0.5:
        target = [d if d != 1 else int(rng.integers(1, 4)) for d in shape]
        target = [int(rng.integers(1, 3)) for _ in range(int(rng.integers(0, 2)))] + target
        init = numpy_helper.from_array(np.array(target, np.int64), "shape")
        return one_node("Expand", [("x", shape)], {}, 13, [init]), {"x": bf16_exact(rng, shape)}
    reps = numpy_helper.from_array(rng.integers(1, 4, rank).astype(np.int64), "repeats")
    return one_node("Tile", [("x", shape)], {}, 13, [reps]), {"x": bf16_exact(rng, shape)}


def binary_case(rng) -> Case:
    op = ["Add", "Sub", "Mul", "Div", "Max", "Min", "PRelu", "Pow"][rng.integers(0, 8)]
    a, b = broadcast_pair(rng)
    if op == "PRelu" and len(b) > len(a):
        a, b = b, a
    feeds = {"a": bf16_exact(rng, a), "b": bf16_exact(rng, b)}
    if op == "Pow":
        feeds["a"] = np.abs(feeds["a"])
    return one_node(op, [("a", a), ("b", b)], {}, 16), feeds


def norm_case(rng) -> Case:
    op = ["LayerNormalization", "InstanceNormalization", "BatchNormalization"][rng.integers(0, 3)]
    rank = int(rng.integers(2 if op == "LayerNormalization" else 3, 5))
    shape = spatial(rng, rank, 1, 5)
    attrs = {"epsilon": float(rng.choice([1e-5, 1e-3, 0.1]))}
    if op == "LayerNormalization":
        axis = int(rng.integers(-rank, rank))
        attrs["axis"] = axis
        inner = shape[axis % rank:]
        inits = [numpy_helper.from_array(bf16_exact(rng, inner), "scale")]
        if rng.random() < 0.6:
            inits.append(numpy_helper.from_array(bf16_exact(rng, inner), "bias"))
        return one_node(op, [("x", shape)], attrs, 17, inits), {"x": bf16_exact(rng, shape)}
    c = shape[1]
    inits = [numpy_helper.from_array(bf16_exact(rng, [c]), "scale"),
             numpy_helper.from_array(bf16_exact(rng, [c]), "bias")]
    if op == "BatchNormalization":
        inits += [numpy_helper.from_array(bf16_exact(rng, [c]), "mean"),
                  numpy_helper.from_array(np.abs(bf16_exact(rng, [c])), "var")]
    return (one_node(op, [("x", shape)], attrs, 15 if op == "BatchNormalization" else 22, inits),
            {"x": bf16_exact(rng, shape)})


def where_case(rng) -> Case:
    a, b = broadcast_pair(rng)
    op = ["Where", "Less", "Greater", "Equal", "LessOrEqual"][rng.integers(0, 5)]
    feeds = {"a": bf16_exact(rng, a), "b": bf16_exact(rng, b)}
    if op != "Where":
        feeds["b"] = np.where(rng.random(b) < 0.3, np.broadcast_to(feeds["a"].ravel()[0], b),
                              feeds["b"]).astype(np.float32)
        m = one_node(op, [("a", a), ("b", b)], {}, 16)
        m.graph.output[0].type.tensor_type.elem_type = TensorProto.BOOL
        return m, feeds
    cond = numpy_helper.from_array(rng.random(a) < 0.5, "cond")
    node = helper.make_node("Where", ["cond", "a", "b"], ["y0"], name="n")
    graph = helper.make_graph([node], "parity", [helper.make_tensor_value_info("a", F, a),
                                                 helper.make_tensor_value_info("b", F, b)],
                              [helper.make_tensor_value_info("y0", F, None)], [cond])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)],
                             ir_version=10), feeds


CASES: Dict[str, Callable[[np.random.Generator], Case]] = {
    "pool": pool_case, "global_pool": global_pool_case, "conv": conv_case,
    "conv_transpose": conv_transpose_case, "resize": resize_case, "pad": pad_case,
    "reduce": reduce_case, "softmax": softmax_case, "matmul": matmul_case, "gemm": gemm_case,
    "expand_tile": expand_tile_case, "binary": binary_case, "norm": norm_case,
    "where_compare": where_case,
}


def run(model: onnx.ModelProto, feeds, devices) -> Tuple[Optional[List[np.ndarray]], str]:
    try:
        if devices is None:
            s = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        else:
            so = ort.SessionOptions()
            so.add_session_config_entry(RECORD_ASSIGNMENT, "1")
            so.add_provider_for_devices(list(devices), actx_ep.provider_options("auto"))
            s = ort.InferenceSession(model.SerializeToString(), so, enable_fallback=0)
        return s.run(None, feeds), ""
    except Exception as e:  # ORT's errors are of several classes
        return None, str(e)


def declare_outputs(model: onnx.ModelProto, feeds) -> None:
    """The outputs' shapes (onnx's checker wants one) of the rank ORT alone gives them, every
    dimension symbolic; where ORT alone refuses the model, of the first input's rank."""
    got, _ = run(model, feeds, None)
    first = model.graph.input[0].type.tensor_type.shape.dim
    for k, out in enumerate(model.graph.output):
        rank = got[k].ndim if got is not None else len(first)
        out.type.tensor_type.shape.dim.extend(
            onnx.TensorShapeProto.Dimension(dim_param=f"{out.name}_{d}") for d in range(rank))


@pytest.mark.parametrize("family", list(CASES))
def test_twin_runs_where_ort_runs_with_its_shapes(family, devices):
    ort.set_default_logger_severity(4)
    rng = np.random.default_rng(sum(map(ord, family)))
    compared = 0
    for i in range(CASES_PER_OP):
        model, feeds = CASES[family](rng)
        declare_outputs(model, feeds)
        try:
            twin = convert.to_bfloat16(model)
        except convert.ConversionError:
            continue  # onnx rejects the model; ORT alone is not asked
        want, why_ref = run(convert.to_float32(twin), feeds, None)
        got, why = run(twin, feeds, devices)
        label = f"{family} case {i}: {helper.printable_node(model.graph.node[0])}"
        if want is None:
            continue  # refused or computed by the ONNX definition (Pad's reflect past ORT's limit)
        if got is None and "negative start pad" in why:
            continue  # ORT's AveragePool and dilated MaxPool move their windows by it; refused
        assert got is not None, f"{label}: ORT alone runs it, the twin fails: {why[-300:]}"
        for g, w in zip(got, want):
            assert g.shape == w.shape, f"{label}: shape {g.shape}, ORT's {w.shape}"
            # ORT's result rounded as the twin rounds it (MaxPool's -FLT_MAX of an empty window
            # is -inf in bfloat16)
            if w.dtype != np.float32:  # a comparison's bool
                assert np.array_equal(g, w), f"{label}: {g} where ORT has {w}"
                continue
            w = convert.bf16_bits_to_f32(convert.f32_to_bf16_bits(w)).reshape(w.shape)
            scale = max(float(np.max(np.abs(w[np.isfinite(w)]), initial=0.0)), 1.0)
            bad = ~(np.isclose(g, w, rtol=2**-6, atol=2**-6 * scale, equal_nan=True))
            assert not bad.any(), f"{label}: {g[bad][:4]} where ORT has {w[bad][:4]}"
        compared += 1
    assert compared >= CASES_PER_OP // 2, f"{family}: only {compared} cases ran"
