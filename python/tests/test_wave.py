"""ziggurat.wave on every device: physics of a homogeneous medium, splits, precisions, bad input."""

import numpy as np
import pytest

import ziggurat
from conftest import require_fp64

VP, VS, RHO, DX = 3000.0, 1732.0, 2500.0, 10.0


def homogeneous(nx=201, nz=101):
    return np.full((nz - 1, nx - 1), VP), VS, RHO


def onset(trace, fraction=0.05):
    return int(np.argmax(np.abs(trace) > fraction * np.abs(trace).max()))


def test_the_p_wave_crosses_between_receivers_at_vp(context):
    seismograms, report = ziggurat.wave(*homogeneous(), dx=DX, steps=260, source=(1000, 500), freq=15,
                                        receivers=[[1200, 500], [1600, 500]], context=context)
    assert seismograms.shape == (2, 260, 2) and seismograms.dtype == np.float32
    ux = seismograms[:, :, 0]  # radial on this horizontal line: the P wave's motion
    delay = (onset(ux[1]) - onset(ux[0])) * report["dt_s"]
    # 400 m at vp, within a quarter of the dominant period
    assert delay == pytest.approx(400 / VP, abs=0.25 / 15)
    assert report["receivers"] == 2 and report["dt_s"] <= report["dt_limit_s"] and report["peak_amplitude"] > 0


def test_two_blocks_give_the_bits_of_one_and_double_agrees(context):
    model = homogeneous(121, 61)
    common = dict(dx=DX, steps=150, receivers=[[300, 0], [900, 100]], context=context)
    one, _ = ziggurat.wave(*model, **common)
    index = context.device["index"]
    split, report = ziggurat.wave(*model, **common, devices=f"{index}/{index}", halo_steps=3, split="equal")
    assert report["devices"] == 2 and report["halo_steps"] == 3
    assert split.tobytes() == one.tobytes()
    require_fp64(context)
    double, _ = ziggurat.wave(*model, **common, dtype="float64")
    assert double.dtype == np.float64
    np.testing.assert_allclose(one, double, rtol=0, atol=1e-3 * np.abs(double).max())


def test_3d_and_progress(context):
    seen = []
    seismograms, report = ziggurat.wave(np.full((19, 19, 19), VP), VS, RHO, dx=DX, steps=30, absorbing=4,
                                        progress=seen.append, context=context)
    assert seismograms.shape[1:] == (30, 3) and report["dims"] == 3
    assert seen and seen[-1]["step"] == 30 and seen[-1]["steps"] == 30


@pytest.mark.parametrize("call, message", [
    (lambda c: ziggurat.wave(*homogeneous(41, 21), dx=DX, steps=5, dt=1.0, context=c), "stability"),
    (lambda c: ziggurat.wave(*homogeneous(41, 21), dx=DX, steps=5, source=(900, 10), context=c), "outside the grid"),
    (lambda c: ziggurat.wave(np.full((20, 40), VP), np.full((20, 39), VS), RHO, dx=DX, steps=5, context=c), "one shape"),
    (lambda c: ziggurat.wave(np.full((20, 40), 1000.0), 900.0, RHO, dx=DX, steps=5, context=c), "vs"),
    (lambda c: ziggurat.wave(np.full(40, VP), VS, RHO, dx=DX, steps=5, context=c), "cells"),
    (lambda c: ziggurat.wave(*homogeneous(41, 21), dx=DX, steps=5, source=(100, 100, 10), context=c), "source"),
    (lambda c: ziggurat.wave(*homogeneous(41, 21), dx=DX, steps=5, source_kind="quake", context=c), "explosion"),
    (lambda c: ziggurat.wave(*homogeneous(41, 21), dx=DX, steps=5, receivers=[1, 2, 3], context=c), "receivers"),
    (lambda c: ziggurat.wave(*homogeneous(41, 21), dx=DX, steps=0, context=c), "steps"),
    (lambda c: ziggurat.wave(*homogeneous(41, 21), dx=DX, steps=5, split="fair", devices="0/0", context=c), "split"),
])
def test_bad_input_is_a_clear_error(context, call, message):
    with pytest.raises(ziggurat.InvalidArgument, match=message):
        call(context)
