"""The `policy` provider option: auto, all and none give ORT's bits and take what they say;
a bad value is a clear error, from the helper and from ORT itself."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest

import actx_ep
from conftest import (RECORD_ASSIGNMENT, differing, inputs, on_actx, ort_alone, single_op_model,
                      with_actx)

# Exact GELU over 1 Mi elements: where `auto` takes it on both host classes (measured faster
# than ORT's kernel; the AVX-512 table from 1 Mi, the AVX2 one from 2 Ki).
LARGE = (1024, 1024)
# 256 elements: below what `auto` takes for the GELU family (the per-node cost loses there).
SMALL = (1, 256)


def gelu(shape):
    return single_op_model("Gelu", shape, opset=20)


@pytest.mark.parametrize("policy", ["auto", "all", "none"])
def test_policy_same_bits(policy, devices):
    for shape in (LARGE, SMALL):
        model = gelu(shape)
        x = inputs(shape)
        got = with_actx(model, devices, policy).run(None, {"x": x})[0]
        expected = ort_alone(model).run(None, {"x": x})[0]
        assert differing(expected, got).size == 0, (policy, shape)


def test_auto_takes_large_declines_small(devices):
    assert on_actx(with_actx(gelu(LARGE), devices, "auto")) == {"Gelu": 1}
    assert on_actx(with_actx(gelu(SMALL), devices, "auto")) == {}


def test_all_takes_small(devices):
    assert on_actx(with_actx(gelu(SMALL), devices, "all")) == {"Gelu": 1}


def test_none_takes_nothing(devices):
    assert on_actx(with_actx(gelu(LARGE), devices, "none")) == {}


def test_default_is_auto(devices):
    so = ort.SessionOptions()
    so.add_session_config_entry(RECORD_ASSIGNMENT, "1")
    so.add_provider_for_devices(devices, {})
    sess = ort.InferenceSession(gelu(LARGE), so, enable_fallback=0)
    assert on_actx(sess) == {"Gelu": 1}


@pytest.mark.parametrize("bad", ["bogus", "ALL", "", " auto"])
def test_bad_policy_helper_raises(bad):
    with pytest.raises(ValueError, match=r"'policy' is .*expected one of auto, all, none"):
        actx_ep.provider_options(bad)


def test_unknown_option_helper_raises():
    with pytest.raises(ValueError, match=r"unknown provider option\(s\) polciy"):
        actx_ep.provider_options(polciy="all")


def test_bad_policy_from_ort(devices):
    """The same mistake past the helper: ORT reports the EP's message when the session is
    created (enable_fallback=0 keeps ORT 1.30 / 1.31 from retrying on the CPU EP alone)."""
    so = ort.SessionOptions()
    so.add_provider_for_devices(devices, {"policy": "bogus"})
    with pytest.raises(Exception, match=r"actx EP: option 'policy' has value 'bogus'; "
                                         r"expected auto, all or none"):
        ort.InferenceSession(gelu(SMALL), so, enable_fallback=0)


def test_unknown_option_from_ort(devices):
    so = ort.SessionOptions()
    so.add_provider_for_devices(devices, {"polciy": "all"})
    with pytest.raises(Exception, match=r"actx EP: unknown option 'polciy'"):
        ort.InferenceSession(gelu(SMALL), so, enable_fallback=0)


def test_provider_options_documented():
    assert set(actx_ep.PROVIDER_OPTIONS) == {"policy"}
    assert actx_ep.PROVIDER_OPTIONS["policy"]["default"] == "auto"
    assert tuple(actx_ep.PROVIDER_OPTIONS["policy"]["values"]) == actx_ep.POLICIES
    assert actx_ep.provider_options() == {"policy": "auto"}
    for p in actx_ep.POLICIES:
        assert actx_ep.provider_options(p) == {"policy": p}
        assert actx_ep.provider_options(policy=p) == {"policy": p}
