"""Every operator the EP claims, in a one-node float32 model, and the exported GELU / SiLU
subgraphs it fuses: with policy 'all' the node runs on actx and the output has ORT's bits."""

from __future__ import annotations

import math

import numpy as np
import pytest
from onnx import helper

import actx_ep
from conftest import (MS, const, describe, differing, f32, inputs,
                      make_model, on_actx, ort_alone, single_op_model, with_actx)

SHAPE = (8, 1024)
BIAS = np.random.default_rng(7).standard_normal(SHAPE[-1]).astype(np.float32)

# id -> (op, domain, opset, bias, attributes)
OPS = {
    "Erf": ("Erf", "", 13, None, {}),
    "Gelu": ("Gelu", "", 20, None, {}),
    "Gelu-tanh": ("Gelu", "", 20, None, {"approximate": "tanh"}),
    "ms.Gelu": ("Gelu", MS, 17, None, {}),
    "ms.BiasGelu": ("BiasGelu", MS, 17, BIAS, {}),
    "ms.FastGelu": ("FastGelu", MS, 17, None, {}),
    "ms.FastGelu-bias": ("FastGelu", MS, 17, BIAS, {}),
    "ms.QuickGelu": ("QuickGelu", MS, 17, None, {}),
    "ms.QuickGelu-alpha1": ("QuickGelu", MS, 17, None, {"alpha": 1.0}),
    "Tanh": ("Tanh", "", 13, None, {}),
    "Sigmoid": ("Sigmoid", "", 13, None, {}),
}


def op_model(case: str) -> bytes:
    op, domain, opset, bias, attrs = OPS[case]
    return single_op_model(op, SHAPE, domain=domain, opset=opset, bias=bias, **attrs)


def erf_gelu_subgraph() -> bytes:
    """GELU as PyTorch exports it below opset 20: 0.5 · x · (1 + erf(x / √2))."""
    nodes = [
        helper.make_node("Div", ["x", "sqrt2"], ["d"]),
        helper.make_node("Erf", ["d"], ["e"]),
        helper.make_node("Add", ["e", "one"], ["a"]),
        helper.make_node("Mul", ["x", "a"], ["m"]),
        helper.make_node("Mul", ["m", "half"], ["y"]),
    ]
    inits = [const("sqrt2", math.sqrt(2.0)), const("one", 1.0), const("half", 0.5)]
    return make_model(nodes, [f32("x", SHAPE)], [f32("y", SHAPE)], inits, opset=17)


def silu_subgraph() -> bytes:
    """SiLU as exporters write it: x · sigmoid(x)."""
    nodes = [helper.make_node("Sigmoid", ["x"], ["s"]), helper.make_node("Mul", ["x", "s"], ["y"])]
    return make_model(nodes, [f32("x", SHAPE)], [f32("y", SHAPE)], opset=17)


SUBGRAPHS = {"erf-GELU-subgraph": erf_gelu_subgraph, "SiLU-subgraph": silu_subgraph}


def check_same_bits(model: bytes, devices, x: np.ndarray) -> dict:
    sess = with_actx(model, devices, "all")
    taken = on_actx(sess)
    got = sess.run(None, {"x": x})[0]
    expected = ort_alone(model).run(None, {"x": x})[0]
    diff = differing(expected, got)
    assert diff.size == 0, describe(x, expected, got, diff)
    return taken


@pytest.mark.parametrize("case", list(OPS))
def test_op_on_actx_same_bits(case, devices):
    model = op_model(case)
    taken = check_same_bits(model, devices, inputs(SHAPE))
    assert taken == {OPS[case][0]: 1}, f"{case} did not run on actx: {taken}"


@pytest.mark.parametrize("case", list(SUBGRAPHS))
def test_subgraph_fused_on_actx_same_bits(case, devices):
    model = SUBGRAPHS[case]()
    taken = check_same_bits(model, devices, inputs(SHAPE))
    assert "Mul" in taken and ("Erf" in taken or "Sigmoid" in taken), \
        f"{case} was not taken by actx: {taken}"


@pytest.mark.parametrize("case", list(OPS))
def test_signalling_nan(case, devices):
    """Signalling NaN inputs: ORT's kernels differ by host in whether they come out quieted
    (the library's NaN rule, which follows the host's); actx must give ORT's bits either way."""
    model = op_model(case)
    x = inputs(SHAPE, signalling=True)
    got = with_actx(model, devices, "all").run(None, {"x": x})[0]
    expected = ort_alone(model).run(None, {"x": x})[0]
    diff = differing(expected, got)
    if diff.size == 0:
        return
    pytest.fail(describe(x, expected, got, diff))
