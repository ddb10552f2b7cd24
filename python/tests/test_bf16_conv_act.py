"""A bfloat16 Conv and the activation that alone reads its result (ep/bf16_conv_act.c): one
compiled node whose Conv looks each result up in the activation's table as it rounds it. Checked
through ORT on twins that hold the same Conv twice, once fused and once not (its result is also a
graph output, so two values leave it): the two give the same bits, with NaN, infinities and -0 in
the input (the Conv's repair of their windows), the weights constant or given at run time."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from actx_ep import convert
from conftest import with_actx

import actx_ep

F = TensorProto.FLOAT
X_SHAPE = [1, 8, 13, 11]

ACTIVATIONS = {
    "Relu": {},
    "HardSwish": {},
    "LeakyRelu": {"alpha": 0.2},
    "HardSigmoid": {"alpha": 0.3, "beta": 0.4},
    "Neg": {},
}


def twin_of(activation: str, runtime_w: bool, pads: int = 1, group: int = 1) -> onnx.ModelProto:
    """x -> Conv A -> activation -> ya (fused); x -> Conv B -> activation -> yb, Conv B's result
    also the output zb (not fused). A and B have the same weights."""
    rng = np.random.default_rng(7)
    w = rng.uniform(-0.5, 0.5, (16, X_SHAPE[1] // group, 3, 3)).astype(np.float32)
    b = rng.uniform(-1, 1, (16,)).astype(np.float32)
    conv = {"pads": [pads] * 4, "group": group}
    nodes = [
        helper.make_node("Conv", ["x", "wa", "b"], ["ca"], name="conv_a", **conv),
        helper.make_node(activation, ["ca"], ["ya"], **ACTIVATIONS[activation]),
        helper.make_node("Conv", ["x", "wb", "b"], ["zb"], name="conv_b", **conv),
        helper.make_node(activation, ["zb"], ["yb"], **ACTIVATIONS[activation]),
    ]
    inputs = [helper.make_tensor_value_info("x", F, X_SHAPE)]
    inits = [numpy_helper.from_array(b, "b")]
    if runtime_w:
        inputs += [helper.make_tensor_value_info(n, F, list(w.shape)) for n in ("wa", "wb")]
    else:
        inits += [numpy_helper.from_array(w, "wa"), numpy_helper.from_array(w.copy(), "wb")]
    outputs = [helper.make_tensor_value_info(n, F, [1, 16, None, None]) for n in ("ya", "yb", "zb")]
    graph = helper.make_graph(nodes, "conv_act", inputs, outputs, inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    return convert.to_bfloat16(m), w


def actx_subgraph_sizes(session) -> list:
    return sorted(len(s.get_nodes()) for s in session.get_provider_graph_assignment_info()
                  if s.ep_name == actx_ep.EP_NAME)


def inputs(w: np.ndarray, runtime_w: bool, special: bool) -> dict:
    x = np.random.default_rng(3).uniform(-4, 4, X_SHAPE).astype(np.float32)
    if special:
        x.ravel()[[0, 40, 300, 777, 1000]] = [np.nan, np.inf, -np.inf, -0.0, 1e-39]
    feeds = {"x": x}
    if runtime_w:
        feeds.update(wa=w, wb=w)
    return feeds


@pytest.mark.parametrize("activation", sorted(ACTIVATIONS))
@pytest.mark.parametrize("runtime_w", [False, True])
def test_the_fused_node_gives_the_nodes_bits(devices, activation, runtime_w):
    twin, w = twin_of(activation, runtime_w)
    session = with_actx(twin.SerializeToString(), devices, policy="auto")
    # Conv A and its activation as one compiled node; Conv B (two values leave it) on its own
    assert actx_subgraph_sizes(session).count(2) == 1, actx_subgraph_sizes(session)
    for special in (False, True):
        ya, yb, _ = session.run(None, inputs(w, runtime_w, special))
        np.testing.assert_array_equal(ya.view(np.uint32), yb.view(np.uint32))


def test_depthwise_and_no_padding(devices):
    twin, w = twin_of("HardSwish", False, pads=0, group=8)
    session = with_actx(twin.SerializeToString(), devices, policy="auto")
    assert actx_subgraph_sizes(session).count(2) == 1, actx_subgraph_sizes(session)
    ya, yb, _ = session.run(None, inputs(w, False, True))
    np.testing.assert_array_equal(ya.view(np.uint32), yb.view(np.uint32))


def test_a_result_read_twice_is_not_fused(devices):
    """Conv -> Relu and Conv -> Neg on the same result: each stays a node of its own."""
    rng = np.random.default_rng(9)
    w = rng.uniform(-0.5, 0.5, (4, X_SHAPE[1], 3, 3)).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"]),
             helper.make_node("Relu", ["c"], ["r"]), helper.make_node("Neg", ["c"], ["n"])]
    graph = helper.make_graph(nodes, "two_readers", [helper.make_tensor_value_info("x", F, X_SHAPE)],
                              [helper.make_tensor_value_info(n, F, [1, 4, None, None]) for n in ("r", "n")],
                              [numpy_helper.from_array(w, "w")])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    session = with_actx(convert.to_bfloat16(m).SerializeToString(), devices, policy="auto")
    assert 2 not in actx_subgraph_sizes(session), actx_subgraph_sizes(session)
    r, n = session.run(None, inputs(w, False, False))
    c = -n  # Neg is exact: the Conv's rounded result
    np.testing.assert_array_equal(r, np.where(c < 0, np.float32(0), c))


def hand_twin(activation: str, nested: bool) -> onnx.ModelProto:
    """A bfloat16 Conv (weights an initializer of the main graph) and its activation: inside an
    If's branches (nested: the weights an outer value), or at the top with the Conv's result
    also a graph output (not fused)."""
    B = TensorProto.BFLOAT16
    w = np.random.default_rng(4).uniform(-0.5, 0.5, (4, 3, 3, 3)).astype(np.float32)
    wb = helper.make_tensor("w", B, list(w.shape), convert.f32_to_bf16_bits(w).tobytes(), raw=True)

    def body(tag: str) -> list:
        return [helper.make_node("Conv", ["xb", "w"], ["c" + tag], pads=[1, 1, 1, 1]),
                helper.make_node(activation, ["c" + tag], ["y" + tag], **ACTIVATIONS[activation])]

    outputs = [helper.make_tensor_value_info("y", F, [1, 4, 5, 5])]
    nodes = [helper.make_node("Cast", ["x"], ["xb"], to=B)]
    if nested:
        branch = [helper.make_graph(body(t), t, [], [helper.make_tensor_value_info("y" + t, B, [1, 4, 5, 5])])
                  for t in ("t", "e")]
        nodes.append(helper.make_node("If", ["cond"], ["yb"], then_branch=branch[0],
                                      else_branch=branch[1]))
        nodes.append(helper.make_node("Cast", ["yb"], ["y"], to=F))
    else:
        nodes += body("t") + [helper.make_node("Cast", ["yt"], ["y"], to=F),
                              helper.make_node("Cast", ["ct"], ["c"], to=F)]
        outputs.append(helper.make_tensor_value_info("c", F, [1, 4, 5, 5]))
    inputs = [helper.make_tensor_value_info("x", F, [1, 3, 5, 5]),
              helper.make_tensor_value_info("cond", TensorProto.BOOL, [])]
    graph = helper.make_graph(nodes, "hand", inputs, outputs, [wb])
    # opset 22: Conv's bfloat16 (the If's branches are type-checked against it)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)], ir_version=10)


@pytest.mark.parametrize("activation", ["Relu", "HardSwish"])
def test_in_an_if_branch_with_the_weights_outside(devices, activation):
    nested = with_actx(hand_twin(activation, True).SerializeToString(), devices, policy="auto")
    flat = with_actx(hand_twin(activation, False).SerializeToString(), devices, policy="auto")
    # each branch's Conv and activation as one node; the flat twin's Conv (read twice) alone
    assert actx_subgraph_sizes(nested).count(2) == 2, actx_subgraph_sizes(nested)
    assert actx_subgraph_sizes(flat).count(2) == 0, actx_subgraph_sizes(flat)
    x = np.random.default_rng(5).uniform(-2, 2, (1, 3, 5, 5)).astype(np.float32)
    x.ravel()[[3, 17]] = [np.nan, -np.inf]
    want = flat.run(None, {"x": x, "cond": np.array(True)})[0]
    for cond in (True, False):
        got = nested.run(None, {"x": x, "cond": np.array(cond)})[0]
        np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


def bf16_convs(pads: list, shared_outputs: bool, dead: bool = False) -> onnx.ModelProto:
    """Convs of the same weights (an initializer read by all) with pads[k] each, each followed by
    a Relu: y0, y1...; shared_outputs: each Conv's result is a graph output too (not fused);
    dead: one more Conv and Relu whose result nothing reads."""
    B = TensorProto.BFLOAT16
    w = np.random.default_rng(6).uniform(-0.5, 0.5, (4, 3, 3, 3)).astype(np.float32)
    wb = helper.make_tensor("w", B, list(w.shape), convert.f32_to_bf16_bits(w).tobytes(), raw=True)
    nodes = [helper.make_node("Cast", ["x"], ["xb"], to=B)]
    outputs = []
    for k, p in enumerate(pads):
        nodes += [helper.make_node("Conv", ["xb", "w"], [f"c{k}"], pads=[p] * 4),
                  helper.make_node("Relu", [f"c{k}"], [f"r{k}"]),
                  helper.make_node("Cast", [f"r{k}"], [f"y{k}"], to=F)]
        outputs.append(helper.make_tensor_value_info(f"y{k}", F, None))
        if shared_outputs:
            nodes.append(helper.make_node("Cast", [f"c{k}"], [f"z{k}"], to=F))
            outputs.append(helper.make_tensor_value_info(f"z{k}", F, None))
    if dead:
        nodes += [helper.make_node("Conv", ["xb", "w"], ["cd"], pads=[2] * 4),
                  helper.make_node("Relu", ["cd"], ["unread"])]
    graph = helper.make_graph(nodes, "convs", [helper.make_tensor_value_info("x", F, [1, 3, 6, 7])],
                              outputs, [wb])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)], ir_version=10)


def test_convs_sharing_their_weights(devices):
    """Two fused Convs read one initializer (packed by each at Compile); the same bits as the
    two unfused."""
    fused = with_actx(bf16_convs([1, 0], False).SerializeToString(), devices, policy="auto")
    single = with_actx(bf16_convs([1, 0], True).SerializeToString(), devices, policy="auto")
    assert actx_subgraph_sizes(fused).count(2) == 2, actx_subgraph_sizes(fused)
    assert actx_subgraph_sizes(single).count(2) == 0, actx_subgraph_sizes(single)
    x = np.random.default_rng(8).uniform(-2, 2, (1, 3, 6, 7)).astype(np.float32)
    got, want = fused.run(None, {"x": x}), single.run(None, {"x": x})
    for k in range(2):
        np.testing.assert_array_equal(got[k].view(np.uint32), want[2 * k].view(np.uint32))


def test_an_activation_nothing_reads_is_not_fused(devices):
    """A Conv and a Relu whose result nothing reads: a fused node would have no output (ORT 1.30
    crashed on its Compute asking for one), so they stay single nodes and the session runs."""
    session = with_actx(bf16_convs([1], False, dead=True).SerializeToString(), devices,
                        policy="auto")
    # the read pair fused, the unread one not
    assert actx_subgraph_sizes(session).count(2) == 1, actx_subgraph_sizes(session)
    x = np.random.default_rng(9).uniform(-2, 2, (1, 3, 6, 7)).astype(np.float32)
    y = session.run(None, {"x": x})[0]
    want = with_actx(bf16_convs([1], True).SerializeToString(), devices, policy="auto")
    np.testing.assert_array_equal(y.view(np.uint32), want.run(None, {"x": x})[0].view(np.uint32))
