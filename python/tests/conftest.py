"""Shared pieces of the Python suite: the registered EP's devices, sessions with and without
it, where each node ran, bit-for-bit comparison, and ONNX models built with onnx.helper.

The suite runs against whichever onnxruntime is installed (the Makefile makes one virtual
environment per version) and the installed actx-ep wheel, never a source tree's copy."""

from __future__ import annotations

import pathlib
from collections import Counter
from typing import Dict, Iterable, List, Optional, Sequence

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import actx_ep

REPO = pathlib.Path(__file__).resolve().parents[2]


def fetch_models_or_skip(names: Sequence[str]) -> None:
    """The real models named (models/manifest.txt), fetched and checked by
    scripts/fetch-models.sh as python/bench/bf16_models.py runs it; a skip when they cannot be
    fetched (no network)."""
    import sys

    sys.path.insert(0, str(REPO / "python" / "bench"))
    import bf16_models

    rc, msg = bf16_models.fetch(list(names))
    if rc == 3:
        pytest.skip(f"the models cannot be fetched (no network?): {msg}")
    assert rc == 0, msg

# ORT fills its assignment report only when asked: which EP took which node.
RECORD_ASSIGNMENT = "session.record_ep_graph_assignment_info"


@pytest.fixture
def devices() -> List[object]:
    """The EP's devices, registering the library when a test before unregistered it."""
    return actx_ep.register(ort)


def with_actx(model: bytes, devices: Sequence[object], policy: str = "all",
              **kwargs) -> ort.InferenceSession:
    """A session with the actx EP first and ORT's CPU EP for the rest. No fallback: an EP
    error must fail the test, not quietly rerun the model on the CPU EP."""
    so = ort.SessionOptions()
    so.add_session_config_entry(RECORD_ASSIGNMENT, "1")
    so.add_provider_for_devices(list(devices), actx_ep.provider_options(policy))
    return ort.InferenceSession(model, so, enable_fallback=0, **kwargs)


def ort_alone(model: bytes) -> ort.InferenceSession:
    so = ort.SessionOptions()
    so.add_session_config_entry(RECORD_ASSIGNMENT, "1")
    return ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])


def assignment(session: ort.InferenceSession) -> Counter:
    """(EP name, op type) -> how many nodes of that type the EP runs."""
    counts: Counter = Counter()
    for subgraph in session.get_provider_graph_assignment_info():
        for node in subgraph.get_nodes():
            counts[(subgraph.ep_name, node.op_type)] += 1
    return counts


def on_actx(session: ort.InferenceSession) -> Dict[str, int]:
    return {op: n for (ep, op), n in assignment(session).items() if ep == actx_ep.EP_NAME}


def bits(a: np.ndarray) -> np.ndarray:
    assert a.dtype == np.float32, a.dtype
    return np.ascontiguousarray(a).view(np.uint32).ravel()


def differing(expected: np.ndarray, got: np.ndarray) -> np.ndarray:
    """Flat indices where the two float32 arrays differ in any bit."""
    assert expected.shape == got.shape, (expected.shape, got.shape)
    return np.nonzero(bits(expected) != bits(got))[0]


def describe(x: np.ndarray, expected: np.ndarray, got: np.ndarray, idx: np.ndarray) -> str:
    rows = [
        f"  [{i}] x={bits(x)[i]:#010x} ({x.ravel()[i]!r}) ORT={bits(expected)[i]:#010x} "
        f"actx={bits(got)[i]:#010x}"
        for i in idx[:8]
    ]
    return f"{idx.size} of {expected.size} elements differ:\n" + "\n".join(rows)


# ---- inputs --------------------------------------------------------------------------------

# Values where the kernels' range reduction, clamps and special cases change: zeros, the
# smallest subnormals, infinities, quiet NaNs with payloads, the edges where erf / tanh / the
# logistic saturate, and the largest floats.
SPECIAL = np.array(
    [0.0, -0.0, 1e-45, -1e-45, 1e-38, -1e-38, 1e-7, -1e-7, 0.5, -0.5, 1.0, -1.0,
     3.925724029541015625, -3.925724029541015625, 5.0, -5.0, 9.0, -9.0, 9.01, -9.01,
     10.0, -10.0, 17.0, -17.0, 20.0, -20.0, 88.7, -88.7, 104.0, -104.0, 1e30, -1e30,
     3.4028234663852886e38, -3.4028234663852886e38, np.inf, -np.inf],
    dtype=np.float32)
QUIET_NANS = np.array([0x7FC00000, 0xFFC00000, 0x7FC12345, 0xFFFFFFFF], np.uint32).view(np.float32)
SIGNALLING_NANS = np.array([0x7F800001, 0xFF812345, 0x7FBFFFFF], np.uint32).view(np.float32)


def inputs(shape: Sequence[int], seed: int = 0, scale: float = 3.0,
           signalling: bool = False) -> np.ndarray:
    """Normal values around the interesting range, then the special values (and, if asked,
    signalling NaNs) at the start."""
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * scale).astype(np.float32)
    special = [SPECIAL, QUIET_NANS] + ([SIGNALLING_NANS] if signalling else [])
    head = np.concatenate(special)
    flat = x.reshape(-1)
    flat[: head.size] = head[: flat.size]
    return x


# ---- models --------------------------------------------------------------------------------

MS = "com.microsoft"
IR_VERSION = 10  # opset 20 needs IR 9 or newer


def make_model(nodes: Iterable, inputs_: Sequence, outputs: Sequence,
               initializers: Sequence = (), opset: int = 17, ms: bool = False) -> bytes:
    graph = helper.make_graph(list(nodes), "g", list(inputs_), list(outputs), list(initializers))
    opsets = [helper.make_opsetid("", opset)] + ([helper.make_opsetid(MS, 1)] if ms else [])
    return helper.make_model(graph, opset_imports=opsets, ir_version=IR_VERSION).SerializeToString()


def f32(name: str, shape: Sequence) -> object:
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, list(shape))


def const(name: str, value: np.ndarray) -> object:
    return numpy_helper.from_array(np.asarray(value, dtype=np.float32), name)


def single_op_model(op: str, shape: Sequence[int], domain: str = "", opset: int = 17,
                    bias: Optional[np.ndarray] = None, **attrs) -> bytes:
    """y = op(x [, bias]) with the bias an initializer, as exporters write it."""
    names = ["x"] + (["bias"] if bias is not None else [])
    node = helper.make_node(op, names, ["y"], domain=domain, **attrs)
    inits = [const("bias", bias)] if bias is not None else []
    return make_model([node], [f32("x", shape)], [f32("y", shape)], inits, opset=opset,
                      ms=domain == MS)
