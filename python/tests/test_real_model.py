"""One real model: PP-OCRv4's text recogniser (a CNN + SVTR transformer, 10.9 MB), as the
rapidocr-onnxruntime package ships it. Its Swish activations are exported SiLU subgraphs
(x · sigmoid(x)) that the EP fuses, beside lone Sigmoids. With policy 'all' they run on actx
and the model's output has ORT's bits; with 'auto' the output is ORT's too.

The model is not in the repository: the pinned wheel is fetched from the package index with
pip, checked against its sha256, and the model, checked too, is cached outside the tree
($ACTX_CACHE_DIR, else $XDG_CACHE_HOME/actx, else ~/.cache/actx)."""

from __future__ import annotations

import hashlib
import os
import pathlib
import subprocess
import sys
import tempfile
import zipfile

import numpy as np
import pytest

from conftest import describe, differing, on_actx, ort_alone, with_actx

PACKAGE = "rapidocr-onnxruntime"
VERSION = "1.4.4"
WHEEL = "rapidocr_onnxruntime-1.4.4-py3-none-any.whl"
WHEEL_SHA256 = "971d7d5f223a7a808662229df1ef69893809d8457d834e6373d3854bc1782cbf"
MEMBER = "rapidocr_onnxruntime/models/ch_PP-OCRv4_rec_infer.onnx"
MODEL_SHA256 = "48fc40f24f6d2a207a2b1091d3437eb3cc3eb6b676dc3ef9c37384005483683b"
# One text line as the recogniser takes it: 48 pixels high, 320 wide, normalised RGB.
INPUT_SHAPE = (1, 3, 48, 320)


def sha256(path: pathlib.Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def cache_dir() -> pathlib.Path:
    base = os.environ.get("ACTX_CACHE_DIR")
    if not base:
        base = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"),
                            "actx")
    return pathlib.Path(base) / "models" / f"{PACKAGE}-{VERSION}"


def fetch_model() -> pathlib.Path:
    target = cache_dir() / pathlib.Path(MEMBER).name
    if target.is_file() and sha256(target) == MODEL_SHA256:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
               "--disable-pip-version-check", "-q", "-d", tmp, f"{PACKAGE}=={VERSION}"]
        got = subprocess.run(cmd, capture_output=True, text=True)
        if got.returncode != 0:
            pytest.fail(f"could not fetch {PACKAGE}=={VERSION} with pip:\n{got.stderr[-2000:]}")
        wheel = pathlib.Path(tmp) / WHEEL
        assert wheel.is_file(), f"pip did not save {WHEEL}: {os.listdir(tmp)}"
        assert sha256(wheel) == WHEEL_SHA256, f"{WHEEL}: sha256 differs from the pinned one"
        with zipfile.ZipFile(wheel) as z:
            partial = pathlib.Path(tmp) / "model.onnx"
            partial.write_bytes(z.read(MEMBER))
        assert sha256(partial) == MODEL_SHA256, f"{MEMBER}: sha256 differs from the pinned one"
        os.replace(partial, target)  # atomic: a concurrent run never sees half a file
    return target


@pytest.fixture(scope="module")
def model() -> bytes:
    return fetch_model().read_bytes()


@pytest.fixture(scope="module")
def line_image() -> np.ndarray:
    # A reproducible stand-in for a normalised text-line crop, values in [-1, 1].
    rng = np.random.default_rng(2024)
    return rng.uniform(-1.0, 1.0, INPUT_SHAPE).astype(np.float32)


def run_both(model: bytes, devices, policy: str, x: np.ndarray):
    sess = with_actx(model, devices, policy)
    name = sess.get_inputs()[0].name
    got = sess.run(None, {name: x})
    expected = ort_alone(model).run(None, {name: x})
    return sess, expected, got


def test_real_model_all(model, devices, line_image):
    sess, expected, got = run_both(model, devices, "all", line_image)
    taken = on_actx(sess)
    # The five Swish blocks (Sigmoid + Mul each, fused) and two lone Sigmoids.
    assert taken.get("Sigmoid", 0) >= 5 and taken.get("Mul", 0) >= 5, taken
    assert len(expected) == len(got)
    for e, g in zip(expected, got):
        diff = differing(e, g)
        assert diff.size == 0, describe(line_image, e, g, diff)


def test_real_model_auto(model, devices, line_image):
    _, expected, got = run_both(model, devices, "auto", line_image)
    for e, g in zip(expected, got):
        assert differing(e, g).size == 0
