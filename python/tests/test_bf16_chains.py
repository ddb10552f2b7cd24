"""Chains of bfloat16 element-wise nodes (src/bf16/bf16_chain.c, ep/bf16_chain.c): nodes that
read one another's results become one compiled node, computed in one pass, with every node's
result still rounded to bfloat16 as its own kernel rounds it. Checked through ORT on the
converter's twin of a PP-LCNet block (a learnt scale and shift, HardSwish written out as Add,
Clip, Mul, Div, another scale and a per-channel shift), to the bit of the nodes computed one by
one in numpy float32 and rounded after each; and a set with two values leaving (a middle
result is also a graph output), which stays single nodes, with the same bits."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from actx_ep import convert
from conftest import assignment, with_actx

import actx_ep

F = TensorProto.FLOAT
SHAPE = [2, 6, 5, 7]


def bf16_round(values: np.ndarray) -> np.ndarray:
    """float32 values rounded to bfloat16 and widened back (round to nearest even)."""
    return convert.bf16_bits_to_f32(convert.f32_to_bf16_bits(values))


def lcnet_block(middle_output: bool) -> onnx.ModelProto:
    rng = np.random.default_rng(5)
    consts = {
        "w": np.array([1.3], np.float32), "b": np.array([-0.4], np.float32),
        "three": np.array(3, np.float32), "zero": np.array(0, np.float32),
        "six": np.array(6, np.float32), "six_div": np.array([6], np.float32),
        "w2": np.array([0.7], np.float32),
        "b2": rng.uniform(-1, 1, (SHAPE[1], 1, 1)).astype(np.float32),
    }
    nodes = [
        helper.make_node("Mul", ["w", "x"], ["s"], name="scale"),
        helper.make_node("Add", ["s", "b"], ["t"], name="shift"),
        helper.make_node("Add", ["t", "three"], ["u"], name="plus3"),
        helper.make_node("Clip", ["u", "zero", "six"], ["c"], name="clip"),
        helper.make_node("Mul", ["t", "c"], ["m"], name="times"),
        helper.make_node("Div", ["m", "six_div"], ["h"], name="by6"),
        helper.make_node("Mul", ["w2", "h"], ["s2"], name="scale2"),
        helper.make_node("Add", ["s2", "b2"], ["y"], name="shift2"),
    ]
    outputs = [helper.make_tensor_value_info("y", F, SHAPE)]
    if middle_output:
        outputs.append(helper.make_tensor_value_info("t", F, SHAPE))
    graph = helper.make_graph(nodes, "lcnet", [helper.make_tensor_value_info("x", F, SHAPE)],
                              outputs, [numpy_helper.from_array(v, k) for k, v in consts.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def op(f, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """A binary node: f in float32, the stated NaN rule (a NaN operand's own, the first; one
    made from numbers the positive quiet NaN), rounded."""
    a, b = np.broadcast_arrays(a, b)
    with np.errstate(all="ignore"):
        r = f(a, b).astype(np.float32)
    made = np.isnan(r) & ~np.isnan(a) & ~np.isnan(b)
    r = np.where(np.isnan(r) & np.isnan(b), b, r)
    r = np.where(np.isnan(r) & np.isnan(a), a, r)
    return bf16_round(np.where(made, np.float32(np.nan), r).astype(np.float32))


def reference(x: np.ndarray, twin: onnx.ModelProto) -> np.ndarray:
    """Each node in float32 on the twin's bfloat16 constants, its result rounded."""
    c = {t.name: convert.bf16_bits_to_f32(np.frombuffer(t.raw_data, np.uint16)).reshape(t.dims)
         for t in twin.graph.initializer}
    s = op(np.multiply, c["w"], bf16_round(x))
    t = op(np.add, s, c["b"])
    u = op(np.add, t, c["three"])
    # Clip as ORT's: x < lo ? lo : x, then hi < v ? hi : v (a NaN stays)
    v = np.where(u < c["zero"], c["zero"], u)
    clip = bf16_round(np.where(c["six"] < v, c["six"], v).astype(np.float32))
    m = op(np.multiply, t, clip)
    h = op(np.divide, m, c["six_div"])
    s2 = op(np.multiply, c["w2"], h)
    return op(np.add, s2, c["b2"])


def run_block(middle_output: bool, devices) -> tuple:
    twin = convert.to_bfloat16(lcnet_block(middle_output))
    session = with_actx(twin.SerializeToString(), devices, policy="auto")
    rng = np.random.default_rng(0)
    x = rng.uniform(-6, 6, SHAPE).astype(np.float32)
    x.ravel()[:6] = [np.inf, -np.inf, -0.0, 1e-39, np.nan, -3.0]
    got = session.run(None, {"x": x})[0]
    return session, got, reference(x, twin)


def actx_subgraph_sizes(session) -> list:
    return sorted(len(s.get_nodes()) for s in session.get_provider_graph_assignment_info()
                  if s.ep_name == actx_ep.EP_NAME)


def test_a_chain_is_one_node_with_each_nodes_bits(devices):
    session, got, want = run_block(False, devices)
    # the 8 element-wise nodes as one compiled node; the edge Casts on their own
    assert 8 in actx_subgraph_sizes(session), actx_subgraph_sizes(session)
    assert [o for (ep, o) in assignment(session) if ep != actx_ep.EP_NAME and o != "Cast"] == []
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


def test_clip_without_max_in_a_chain(devices):
    """A Clip that leaves out its max (and one that leaves out its min: "" in its place)."""
    nodes = [
        helper.make_node("Neg", ["x"], ["r"]),  # (a Relu here, ORT would fold into the Clip)
        helper.make_node("Clip", ["r", "lo"], ["c"]),
        helper.make_node("Clip", ["c", "", "hi"], ["d"]),
        helper.make_node("Abs", ["d"], ["y"]),
    ]
    consts = [numpy_helper.from_array(np.array(0.75, np.float32), "lo"),
              numpy_helper.from_array(np.array(2.5, np.float32), "hi")]
    graph = helper.make_graph(nodes, "clips", [helper.make_tensor_value_info("x", F, SHAPE)],
                              [helper.make_tensor_value_info("y", F, SHAPE)], consts)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    twin = convert.to_bfloat16(m)
    session = with_actx(twin.SerializeToString(), devices, policy="auto")
    assert 4 in actx_subgraph_sizes(session), actx_subgraph_sizes(session)
    rng = np.random.default_rng(1)
    x = rng.uniform(-4, 4, SHAPE).astype(np.float32)
    x.ravel()[:4] = [np.inf, -np.inf, np.nan, -0.0]
    got = session.run(None, {"x": x})[0]
    xr = bf16_round(x)
    r = -xr
    c = np.where(r < np.float32(0.75), np.float32(0.75), r)  # a NaN stays
    d = np.where(np.float32(2.5) < c, np.float32(2.5), c)
    want = bf16_round(np.abs(d))
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


def test_two_values_leaving_stay_single_nodes(devices):
    session, got, want = run_block(True, devices)
    sizes = actx_subgraph_sizes(session)
    assert 8 not in sizes, sizes
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


def test_a_set_reading_more_values_than_a_chain_takes_runs_node_by_node(devices):
    """17 Clips with bounds of their own read 35 values from outside: no chain (at most 32
    inputs), each Clip a node of its own, the session loads and gives each node's bits."""
    nodes, consts, prev = [], [], "x"
    for k in range(17):
        lo, hi = -4.0 + 0.125 * k, 4.0 - 0.0625 * k
        consts += [numpy_helper.from_array(np.array(lo, np.float32), f"lo{k}"),
                   numpy_helper.from_array(np.array(hi, np.float32), f"hi{k}")]
        out = "y" if k == 16 else f"c{k}"
        nodes.append(helper.make_node("Clip", [prev, f"lo{k}", f"hi{k}"], [out]))
        prev = out
    graph = helper.make_graph(nodes, "clips", [helper.make_tensor_value_info("x", F, SHAPE)],
                              [helper.make_tensor_value_info("y", F, SHAPE)], consts)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    twin = convert.to_bfloat16(m)
    session = with_actx(twin.SerializeToString(), devices, policy="auto")
    assert max(actx_subgraph_sizes(session)) == 1, actx_subgraph_sizes(session)
    x = np.random.default_rng(2).uniform(-6, 6, SHAPE).astype(np.float32)
    got = session.run(None, {"x": x})[0]
    v = bf16_round(x)
    for k in range(17):
        lo, hi = np.float32(-4.0 + 0.125 * k), np.float32(4.0 - 0.0625 * k)
        v = np.where(v < lo, lo, v)
        v = bf16_round(np.where(hi < v, hi, v).astype(np.float32))
    np.testing.assert_array_equal(got.view(np.uint32), v.view(np.uint32))


def test_a_set_whose_result_nothing_reads_runs_node_by_node(devices):
    """Relu then Add whose result no node and no graph output reads: a fused node would have no
    output, so the two stay single nodes and the session loads."""
    nodes = [helper.make_node("Relu", ["x"], ["r"]),
             helper.make_node("Add", ["r", "r"], ["dead"]),
             helper.make_node("Neg", ["x"], ["y"])]
    graph = helper.make_graph(nodes, "dead", [helper.make_tensor_value_info("x", F, SHAPE)],
                              [helper.make_tensor_value_info("y", F, SHAPE)])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    twin = convert.to_bfloat16(m)
    session = with_actx(twin.SerializeToString(), devices, policy="auto")
    x = np.random.default_rng(3).uniform(-6, 6, SHAPE).astype(np.float32)
    got = session.run(None, {"x": x})[0]
    np.testing.assert_array_equal(got.view(np.uint32), bf16_round(-bf16_round(x)).view(np.uint32))
