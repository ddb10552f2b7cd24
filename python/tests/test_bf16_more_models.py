"""Real models beyond the two the bfloat16 section benchmarks (bf16_models.BF16_MODELS): the
general case. PaddleOCR's PP-OCRv4 detector (DBNet: BatchNormalization, ConvTranspose, Resize,
HardSigmoid, Clip) and recogniser (BatchNormalization, LayerNormalization, MatMul, Softmax,
Clip), pinned in models/manifest.txt, converted as a user would (actx_ep.convert), inputs as its
recipe gives them, and its text direction classifier (HardSwish written out, HardSigmoid,
GlobalAveragePool); RapidOCR's document orientation classifier (a MobileNetV3: BatchNormalization
folded by the converter, HardSwish as an op); and ISNet's float16 background remover (the converter widens a
float16 model first; 1024 x 1024). Their bfloat16 twins load with every bfloat16 compute node on actx, and stay
near the float32 twin:

- the maps' logits (the detector's, ISNet's first mask's), before their final Sigmoid (the
  detector's map itself is near 0 on these inputs, where a relative error means nothing), within
  3 % relative L2, and of the same sign at 99.9 % of pixels or more;
- the recogniser's choice of character (argmax over its classes) at 95 % of its steps or more,
  and its probabilities within 6 % relative L2;
- the classifiers' probabilities within 0.05: PP-OCR's direction classifier at its input size
  and at sizes down to one pixel (where its MaxPool's window passes the input: ORT's output
  size, one clipped window), RapidOCR's MobileNetV3 orientation classifier at batch 1 and 3.

Seen on the AVX-512 Xeon: detector logits 1.2 %; recogniser 100 % of steps, 1.5-2.5 %; ISNet
0.26-0.28 %, 99.998-100 % of pixels."""

from __future__ import annotations

import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from conftest import REPO, fetch_models_or_skip

sys.path.insert(0, str(REPO / "python" / "bench"))
import bf16_models  # noqa: E402

MODELS = ["ppocr-det", "ppocr-rec", "ppocr-cls", "rapid-orient", "isnet-fp16"]
#: Models whose first output is a map after a Sigmoid: compared as logits.
MAPS = {"ppocr-det", "isnet-fp16"}


@pytest.fixture(scope="module")
def fetched():
    fetch_models_or_skip(MODELS)
    return True


def with_logits(path, elem: int) -> bytes:
    """The model with the input of the Sigmoid behind its first output (through Casts) as a last
    output, in float32."""
    m = onnx.load(str(path))
    maker = {o: n for n in m.graph.node for o in n.output}
    sigmoid = maker[m.graph.output[0].name]
    while sigmoid.op_type == "Cast":
        sigmoid = maker[sigmoid.input[0]]
    assert sigmoid.op_type == "Sigmoid", sigmoid.op_type
    name = sigmoid.input[0]
    if elem == TensorProto.BFLOAT16:
        m.graph.node.append(helper.make_node("Cast", [name], ["logits"], to=TensorProto.FLOAT))
        name = "logits"
    m.graph.output.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, None))
    return m.SerializeToString()


def sessions(name: str, logits: bool):
    import onnxruntime as ort

    twin, f32_twin = bf16_models.twins(name)
    if not logits:
        return (bf16_models.session("actx-bf16", twin, 1),
                bf16_models.session("ort-f32", f32_twin, 1), twin)
    import actx_ep

    so = ort.SessionOptions()
    so.add_session_config_entry(bf16_models.RECORD_ASSIGNMENT, "1")
    so.add_provider_for_devices(actx_ep.register(ort), actx_ep.provider_options("auto"))
    ours = ort.InferenceSession(with_logits(twin, TensorProto.BFLOAT16), so, enable_fallback=0)
    ref = ort.InferenceSession(with_logits(f32_twin, TensorProto.FLOAT),
                               providers=["CPUExecutionProvider"])
    return ours, ref, twin


@pytest.mark.parametrize("name", ["ppocr-det", "ppocr-rec", "isnet-fp16"])
def test_twin_runs_on_actx_near_the_float32_twin(fetched, name):
    logits = name in MAPS
    ours, ref, twin = sessions(name, logits)
    assert bf16_models.bf16_left_to_ort(ours, twin) == {}
    for feeds in bf16_models.accuracy_inputs(name, 2):
        got, want = ours.run(None, feeds), ref.run(None, feeds)
        assert all(np.all(np.isfinite(o)) for o in got)
        if logits:
            a, b = got[-1].astype(np.float64), want[-1].astype(np.float64)
            assert np.linalg.norm(a - b) / np.linalg.norm(b) <= 0.03
            assert (np.sign(a) == np.sign(b)).mean() >= 0.999
        else:
            a, b = got[0].astype(np.float64), want[0].astype(np.float64)
            assert (a.argmax(-1) == b.argmax(-1)).mean() >= 0.95
            assert np.linalg.norm(a - b) / np.linalg.norm(b) <= 0.06


CLASSIFIER_SHAPES = {
    "ppocr-cls": [(1, 3, 1, 1), (1, 3, 8, 8), (2, 3, 48, 100), (1, 3, 32, 5)],
    "rapid-orient": [(3, 3, 224, 224)],
}


@pytest.mark.parametrize("name", list(CLASSIFIER_SHAPES))
def test_classifier_twin_at_its_input_sizes(fetched, name):
    ours, ref, twin = sessions(name, False)
    assert bf16_models.bf16_left_to_ort(ours, twin) == {}
    rng = np.random.default_rng(5)
    feeds = bf16_models.accuracy_inputs(name, 2)
    feeds += [{"x": rng.uniform(-1, 1, shape).astype(np.float32)}
              for shape in CLASSIFIER_SHAPES[name]]
    for feed in feeds:
        got, want = ours.run(None, feed)[0], ref.run(None, feed)[0]
        assert got.shape == want.shape and np.all(np.isfinite(got))
        np.testing.assert_allclose(got, want, rtol=0, atol=0.05)


#: Models of other fields, each with its own op mix: Google's Magika file-type classifier (int32
#: bytes in, one-hot by Equal; MatMul, a Conv, GlobalMaxPool, LayerNorm, Softmax and two tanh
#: GELUs written out), the Silero voice activity detector v5 (Conv1Ds, among them an STFT, Pow,
#: Sqrt, Relu, Sigmoid inside an If) and its 16 kHz-only export (the same ops in the main graph),
#: their LSTMs, which the EP does not serve, kept in float32 by the converter; openWakeWord's
#: speech embedding (Convs, LeakyRelu, Max, MaxPool) and its "hey jarvis" head (Gemm, LayerNorm
#: written out, Relu, Sigmoid, an If).
OTHER_FIELDS = ["magika", "silero-v5", "silero-half", "oww-embedding", "oww-hey-jarvis"]


@pytest.mark.parametrize("name", OTHER_FIELDS)
def test_twin_of_another_field_runs_on_actx(name):
    """Every bfloat16 compute node on actx; every output finite and within 5 % relative L2 of
    the float32 twin's (seen on the AVX-512 Xeon: Magika 0.06 %, Silero v5 0.2 %, its 16 kHz
    export 1.5-2 %, openWakeWord 0.4-0.5 %), over three inputs of the manifest's recipe."""
    fetch_models_or_skip([name])
    ours, ref, twin = sessions(name, False)
    assert bf16_models.bf16_left_to_ort(ours, twin) == {}
    for feeds in bf16_models.accuracy_inputs(name, 3):
        outputs, wanted = ours.run(None, feeds), ref.run(None, feeds)
        assert len(outputs) == len(wanted)
        for got, want in zip(outputs, wanted):
            assert got.shape == want.shape and np.all(np.isfinite(got))
            a, b = got.astype(np.float64), want.astype(np.float64)
            assert np.linalg.norm(a - b) <= 0.05 * np.linalg.norm(b), (name, a.shape)
