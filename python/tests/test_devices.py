"""Devices, contexts, calibration and the exception hierarchy."""

import pytest

import ziggurat
from conftest import DEVICES


def test_devices_are_found_and_described():
    assert DEVICES, "no OpenCL device found (or none that ZIGGURAT_DEVICE selects): the suite would test nothing"
    every = ziggurat.devices()
    for device in DEVICES:
        assert device in every
        assert {"index", "name", "label", "type", "platform", "fp64", "global_mem_bytes"} <= device.keys()
        assert device["type"] in ("gpu", "cpu", "accelerator", "other")


def test_a_context_by_number_and_by_text(context):
    device = context.device
    assert ziggurat.Context(device=device["index"]).device == device
    assert ziggurat.Context(device=f"name:{device['name']}").device["name"] == device["name"]
    assert device["label"] in repr(context)


def test_selection_errors_are_python_exceptions():
    with pytest.raises(ziggurat.DeviceNotFound, match="no-such-device"):
        ziggurat.Context(device="name:no-such-device")
    with pytest.raises(ziggurat.InvalidArgument) as caught:
        ziggurat.devices("platform:")
    assert isinstance(caught.value, ValueError) and str(caught.value)


def test_the_exception_hierarchy():
    for error in (ziggurat.InvalidArgument, ziggurat.DeviceNotFound, ziggurat.UnsupportedFeature, ziggurat.IoError,
                  ziggurat.BuildError, ziggurat.ZeroPivot, ziggurat.OpenCLError, ziggurat.OutOfDeviceMemory):
        assert issubclass(error, ziggurat.Error)
    assert issubclass(ziggurat.InvalidArgument, ValueError)
    assert issubclass(ziggurat.OutOfDeviceMemory, ziggurat.OpenCLError)
    assert issubclass(ziggurat.OutOfDeviceMemory, MemoryError)
    assert ziggurat.Error.__module__ == "ziggurat"


def test_calibrate_returns_the_profile_and_caches_it(context, profile):
    assert profile["device"] == context.device["name"]
    assert profile["upload_pinned"]["bytes_per_s"] > 0
    assert profile["kernels"]
    assert context.calibrate() == profile  # read from the cache, not measured again
