"""ziggurat.heat against a NumPy version of the scheme, on every device and precision."""

import time

import numpy as np
import pytest

import ziggurat
from conftest import device_nbytes, interrupted_after, require_fp64
from references import numpy_heat


def random_field(shape, dtype, seed=1):
    return np.random.default_rng(seed).uniform(-1, 1, shape).astype(dtype)


@pytest.mark.parametrize("shape", [(301,), (37, 53), (23, 9, 32)], ids=["1d", "2d", "3d"])
def test_heat_matches_numpy_and_every_plan_gives_the_same_bits(context, profile, dtype, shape):
    u0 = random_field(shape, dtype)
    alpha, steps = 0.8 * ziggurat.max_stable_alpha(len(shape)), 9
    incore, report = ziggurat.heat(u0, steps, alpha, mode="incore", context=context, profile=profile)
    assert incore.dtype == dtype and incore.shape == shape
    assert report["plan"]["decomposition"] == "incore" and report["steps"] == steps
    np.testing.assert_allclose(incore, numpy_heat(u0, alpha, steps), rtol=0, atol=8 * steps * np.finfo(dtype).eps)
    budget = 3 * device_nbytes(context, u0) if u0.ndim > 1 else 3 * u0.nbytes  # four task buffers of 3/4 of the grid in the overlapped schedule: several tasks a pass
    for mode, height in [("strip", 2), ("strip", 3)] + ([("block", 3)] if len(shape) == 2 else []):
        field, report = ziggurat.heat(u0, steps, alpha, mode=mode, height=height, device_memory=budget, context=context,
                                      profile=profile)
        assert report["plan"]["decomposition"] == mode and report["plan"]["height"] == height
        assert report["plan"]["tasks"] > 1 and report["plan"]["passes"] == -(-steps // height)
        assert field.tobytes() == incore.tobytes(), f"{mode} n = {height} differs from incore"


def test_the_report_has_the_plan_and_the_measured_and_predicted_time(context, profile):
    field, report = ziggurat.heat(random_field((64, 80), np.float32), 20, context=context, profile=profile)
    assert report["alpha"] == pytest.approx(0.2) and report["size"] == [80, 64] and report["dtype"] == "float32"
    assert report["time_s"] > 0 and report["predicted_s"] > 0 and report["ns_per_node"] > 0
    assert report["profile"] == "given" and report["device"] == context.device["label"]
    assert {"decomposition", "height", "task_extent", "tasks", "passes", "depth", "group", "schedule"} <= report["plan"].keys()


def test_dtypes_are_kept_converted_or_refused(context, profile):
    ints = np.arange(5 * 6, dtype=np.int32).reshape(5, 6)
    field, _ = ziggurat.heat(ints.astype(np.float16), 3, context=context, profile=profile)
    assert field.dtype == np.float32
    with pytest.raises(ziggurat.InvalidArgument, match="complex"):
        ziggurat.heat(ints.astype(np.complex64), 3, context=context, profile=profile)
    require_fp64(context)
    field, report = ziggurat.heat(ints, 3, context=context, profile=profile)
    assert field.dtype == np.float64 and report["dtype"] == "float64"
    np.testing.assert_allclose(field, numpy_heat(ints.astype(np.float64), 0.2, 3), rtol=0, atol=1e-12)


def test_fortran_ordered_and_strided_arrays_give_the_c_ordered_result(context, profile):
    u0 = random_field((40, 30), np.float32)
    want, _ = ziggurat.heat(u0, 5, context=context, profile=profile)
    fortran = np.asfortranarray(u0)
    strided = np.zeros((80, 90), np.float32)[::2, ::3]
    strided[...] = u0
    for given in (fortran, strided):
        before = given.copy()
        field, _ = ziggurat.heat(given, 5, context=context, profile=profile)
        assert field.flags.c_contiguous and field.tobytes() == want.tobytes()
        assert np.array_equal(given, before)  # the input is never written


def test_read_only_and_memory_mapped_arrays_give_the_same_result(context, profile, tmp_path):
    u0 = random_field((40, 30), np.float32)
    want, _ = ziggurat.heat(u0, 5, context=context, profile=profile)
    read_only = u0.copy()
    read_only.flags.writeable = False
    np.save(tmp_path / "u0.npy", u0)
    mapped = np.load(tmp_path / "u0.npy", mmap_mode="r")
    for given in (read_only, mapped, mapped[::-1][::-1]):
        field, _ = ziggurat.heat(given, 5, context=context, profile=profile)
        assert field.tobytes() == want.tobytes()
    assert np.array_equal(np.load(tmp_path / "u0.npy"), u0)  # the file behind the map is untouched


def test_errors_keep_the_library_message(context, profile):
    u0 = random_field((20, 20), np.float32)
    with pytest.raises(ziggurat.InvalidArgument, match="unstable"):
        ziggurat.heat(u0, 5, 0.3, context=context, profile=profile)
    with pytest.raises(ziggurat.InvalidArgument, match="at least 3"):
        ziggurat.heat(np.zeros((2, 20), np.float32), 5, context=context, profile=profile)
    with pytest.raises(ziggurat.InvalidArgument, match="memory size"):
        ziggurat.heat(u0, 5, device_memory="lots", context=context, profile=profile)
    with pytest.raises(ziggurat.InvalidArgument, match="minimum|too small"):
        ziggurat.heat(u0, 5, mode="strip", device_memory=64, context=context, profile=profile)
    with pytest.raises(ziggurat.InvalidArgument, match="trivial"):
        ziggurat.heat(u0, 5, mode="sideways", context=context, profile=profile)


def test_progress_is_reported_after_each_pass(context, profile):
    calls = []
    field, report = ziggurat.heat(random_field((60, 50), np.float32), 12, mode="strip", height=3,
                                  device_memory="16KiB", progress=calls.append, context=context, profile=profile)
    passes = report["plan"]["passes"]
    assert [c["passes_done"] for c in calls] == list(range(1, passes + 1))
    assert calls[-1]["steps_done"] == calls[-1]["steps"] == 12 and calls[-1]["passes"] == passes


def test_an_exception_in_the_progress_callback_stops_the_run(context, profile):
    def stop_after_two(p):
        if p["passes_done"] == 2:
            raise RuntimeError("enough")

    with pytest.raises(RuntimeError, match="enough"):
        ziggurat.heat(random_field((60, 50), np.float32), 30, mode="strip", height=3, device_memory="16KiB",
                      progress=stop_after_two, context=context, profile=profile)


def long_run(context, profile, steps=2000):
    """Many short passes with no progress callback: strip passes of two steps in a small budget."""
    return ziggurat.heat(random_field((64, 64), np.float32), steps, mode="strip", height=2, device_memory="16KiB",
                         context=context, profile=profile)


def test_ctrl_c_while_the_device_works_stops_the_run_early(context, profile):
    """SIGINT arrives (from a timer's thread) while the main thread is in the library, GIL released."""
    long_run(context, profile, steps=4)  # kernels built: the timings below are the run's
    start = time.perf_counter()
    _, report = long_run(context, profile)
    whole = time.perf_counter() - start
    assert report["plan"]["passes"] == 1000
    interrupted, seconds = interrupted_after(whole / 10, lambda: long_run(context, profile))
    assert interrupted, "the run was not interrupted"
    assert seconds < whole / 2, f"stopped after {seconds:.3f} s of a {whole:.3f} s run"


def test_an_in_core_run_is_one_pass(context, profile):
    """Ctrl-C stops a run between passes: an in-core run has one, so it stops only at its end."""
    _, report = ziggurat.heat(random_field((64, 64), np.float32), 50, mode="incore", context=context, profile=profile)
    assert report["plan"]["passes"] == 1
