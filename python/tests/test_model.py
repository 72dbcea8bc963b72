"""ziggurat.model against `ziggurat model --json`: the same library functions, the same plan."""

import json
import subprocess
from pathlib import Path

import pytest

import ziggurat

CLI = Path(ziggurat.__file__).resolve().parents[2] / "bin" / "ziggurat"  # the build tree's tool beside the package


def cli_model(*args):
    return json.loads(subprocess.run([str(CLI), "model", "--json", *args], check=True, capture_output=True,
                                     text=True).stdout)


@pytest.mark.skipif(not CLI.exists(), reason="the ziggurat tool is not built beside the package")
@pytest.mark.parametrize("dims, decomposition, serial", [(2, "auto", False), (2, "block", True), (3, "strip", False)])
def test_the_plan_is_the_command_line_tool_s(dims, decomposition, serial):
    grid = 4096 if dims == 2 else 300
    mine = ziggurat.model(grid, 500, dims=dims, device_memory="64MiB", tau_c=1.5, tau_a=0.1,
                          decomposition=decomposition, serial=serial)
    theirs = cli_model("--grid", str(grid), "--steps", "500", "--dims", str(dims), "--device-memory", "64MiB",
                       "--tau-c", "1.5", "--tau-a", "0.1", "--decomposition", decomposition,
                       *(["--serial"] if serial else []))
    assert mine["plan"] == pytest.approx(theirs["plan"])
    assert mine["budget_bytes"] == theirs["budget_bytes"] and mine["schedule"] == theirs["schedule"]


def test_a_grid_that_fits_runs_in_core_and_shapes_follow_numpy():
    plan = ziggurat.model((100, 300), 10, device_memory="1GiB", tau_c=1, tau_a=0.1)
    assert plan["plan"]["decomposition"] == "incore" and plan["grid"] == [300, 100]


def test_a_calibrated_device_gives_the_constants(context, profile):
    with_profile = ziggurat.model(2048, 100, device_memory="8MiB", profile=profile)
    assert with_profile == ziggurat.model(2048, 100, device_memory="8MiB", context=context)
    assert with_profile["constants"]["tau_a_ns"] > 0 and with_profile["plan"]["height"] >= 1
    whole_device = ziggurat.model(2048, 100, context=context)
    assert whole_device["budget_bytes"] == context.device["global_mem_bytes"]


def test_missing_constants_are_named():
    with pytest.raises(ziggurat.InvalidArgument, match="tau_c and tau_a"):
        ziggurat.model(1024, 10, device_memory="1MiB", tau_a=0.1)
    with pytest.raises(ziggurat.InvalidArgument, match="device_memory"):
        ziggurat.model(1024, 10, tau_c=1, tau_a=0.1)
