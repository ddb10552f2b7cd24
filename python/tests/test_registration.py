"""Registering the library with ORT: finding its device, registering twice, unregistering once
the sessions are gone, and registering again."""

from __future__ import annotations

import gc

import numpy as np
import onnxruntime as ort
import pytest

import actx_ep
from conftest import differing, inputs, on_actx, ort_alone, single_op_model, with_actx

SHAPE = (4, 512)


def actx_devices():
    return [d for d in ort.get_ep_devices() if d.ep_name == actx_ep.EP_NAME]


def test_device(devices):
    assert len(devices) >= 1
    for d in devices:
        assert d.ep_name == "actx"
        assert d.ep_vendor == "actx"
        assert d.device.type == ort.OrtHardwareDeviceType.CPU
        assert dict(d.ep_metadata).get("library_path") == actx_ep.get_library_path()
        assert dict(d.ep_metadata).get("version") == actx_ep.info()["version"]


def test_get_ep_devices_matches_register(devices):
    assert [d.ep_name for d in actx_ep.get_ep_devices(ort)] == [d.ep_name for d in devices]
    assert len(actx_ep.get_ep_devices()) == len(devices)  # imports onnxruntime itself


def test_register_twice_is_idempotent(devices):
    before = len(actx_devices())
    again = actx_ep.register(ort)
    assert len(again) == len(devices)
    assert len(actx_devices()) == before, "register() registered the library a second time"


def test_register_same_name_twice_is_orts_error(devices):
    """ORT itself refuses a registration name that is taken."""
    with pytest.raises(Exception, match="already registered"):
        ort.register_execution_provider_library(actx_ep.EP_NAME, actx_ep.get_library_path())


def test_registered_under_two_names(devices):
    """A second registration of the same library under another name offers every CPU twice;
    the helpers still give one device each, which a session accepts."""
    ort.register_execution_provider_library("actx-second", actx_ep.get_library_path())
    try:
        assert len(actx_devices()) == 2 * len(devices)
        both = actx_ep.register(ort)
        assert len(both) == len(devices)
        model = single_op_model("Erf", SHAPE)
        sess = with_actx(model, both, "all")
        assert on_actx(sess) == {"Erf": 1}
        x = inputs(SHAPE)
        assert differing(ort_alone(model).run(None, {"x": x})[0],
                         sess.run(None, {"x": x})[0]).size == 0
        del sess  # ORT unregisters a library only once no session uses it
    finally:
        gc.collect()
        actx_ep.unregister(ort, "actx-second")
    assert len(actx_devices()) == len(devices)


def test_unregister_after_sessions_gone_then_register_again(devices):
    model = single_op_model("Sigmoid", SHAPE)
    x = inputs(SHAPE)
    expected = ort_alone(model).run(None, {"x": x})[0]
    sessions = [with_actx(model, devices, "all") for _ in range(3)]
    for s in sessions:
        assert differing(expected, s.run(None, {"x": x})[0]).size == 0
    del s, sessions  # ORT unregisters a library only once no session uses it
    gc.collect()

    actx_ep.unregister(ort)
    assert actx_devices() == []
    with pytest.raises(RuntimeError, match="register the library first"):
        actx_ep.get_ep_devices(ort)
    with pytest.raises(Exception, match="not registered"):
        actx_ep.unregister(ort)

    again = actx_ep.register(ort)
    sess = with_actx(model, again, "all")
    assert on_actx(sess) == {"Sigmoid": 1}
    assert differing(expected, sess.run(None, {"x": x})[0]).size == 0


def test_session_without_actx_after_unregister(devices):
    """Unregistering leaves ORT usable for sessions that never had the EP."""
    model = single_op_model("Tanh", SHAPE)
    x = inputs(SHAPE)
    actx_ep.unregister(ort)
    y = ort_alone(model).run(None, {"x": x})[0]
    assert y.shape == SHAPE and np.isfinite(y[~np.isnan(x)]).all()
    actx_ep.register(ort)
