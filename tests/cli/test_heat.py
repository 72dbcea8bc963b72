#!/usr/bin/env python3
"""`ziggurat heat`: the pyramid solver's modes, depths and outputs, and the long-vector method,
checked against NumPy.

Usage: test_heat.py PATH/TO/ziggurat
"""
import json
import os

import numpy as np

import cli_support as support
from cli_support import ScratchFolderTest, cache_with_profile, digest, numpy_heat, read_png, run, tuned_or_given


# The colour bar's panel beside a field's picture (tools/cli_support/picture.cpp) at font scale 1:
# a gap of 8, the bar of 16, a gap of 6, 11 characters of 6 pixels, a margin of 4.
BAR_PANEL = 8 + 16 + 6 + 66 + 4

# The bar's 5 x 7 font, rows top first, "#" a black pixel: the labels are read back with it.
FONT = {
    "0": " ### |#   #|#  ##|# # #|##  #|#   #| ### ", "1": "  #  | ##  |  #  |  #  |  #  |  #  | ### ",
    "2": " ### |#   #|    #|   # |  #  | #   |#####", "3": "#####|   # |  #  |   # |    #|#   #| ### ",
    "4": "   # |  ## | # # |#  # |#####|   # |   # ", "5": "#####|#    |#### |    #|    #|#   #| ### ",
    "6": "  ## | #   |#    |#### |#   #|#   #| ### ", "7": "#####|    #|   # |  #  | #   | #   | #   ",
    "8": " ### |#   #|#   #| ### |#   #|#   #| ### ", "9": " ### |#   #|#   #| ####|    #|   # | ##  ",
    "-": "     |     |     |#####|     |     |     ", "+": "     |  #  |  #  |#####|  #  |  #  |     ",
    ".": "     |     |     |     |     | ##  | ##  ", "e": "     |     | ### |#   #|#####|#    | ### ",
}


def read_label(png, x, y):
    """The text printed at (x, y) of an RGB picture in the bar's font, up to 11 characters."""
    text = ""
    for k in range(11):
        cell = png[y:y + 7, x + 6 * k:x + 6 * k + 5, 0] == 0
        drawn = "|".join("".join("#" if black else " " for black in row) for row in cell)
        if not cell.any():
            break
        matches = [c for c, glyph in FONT.items() if glyph == drawn]
        text += matches[0] if matches else "?"
    return text


class Heat(ScratchFolderTest):

    def test_default_field_checks_itself(self):
        summary = json.loads(run("heat", "--size", "65x33", "--steps", "20", "--json")[0])
        self.assertEqual(summary["size"], [65, 33])
        self.assertEqual(summary["initial_field"], "mode")
        self.assertLess(summary["max_error_vs_exact"], 1e-5)
        self.assertGreater(summary["nodes_per_s"], 0)
        self.assertIn("device", summary)

    def test_human_output(self):
        out = run("heat", "--size", "17x9", "--steps", "3")[0]
        self.assertIn("throughput", out)
        self.assertIn("17x9", out)

    def test_numpy_round_trip_float64_matches_numpy(self):
        rng = np.random.default_rng(2024)
        u0 = rng.uniform(-1, 1, size=(33, 65))  # H = 33, W = 65: not square, catches transposition
        np.save(self.path("init.npy"), u0)
        before = digest(self.path("init.npy"))
        run("heat", "--init", self.path("init.npy"), "--out", self.path("out.npy"), "--steps", "10",
            "--alpha", "0.2")  # float64 input: computed in double without asking
        out = np.load(self.path("out.npy"))
        self.assertEqual(out.shape, (33, 65))
        self.assertEqual(out.dtype, np.float64)
        expected = numpy_heat(u0, 0.2, 10)
        self.assertLessEqual(np.abs(out - expected).max(), 8 * 10 * np.finfo(np.float64).eps)
        self.assertEqual(digest(self.path("init.npy")), before, "the input file was modified")
        self.assertEqual([f for f in os.listdir(self.tmp) if ".tmp" in f], [])

    def test_numpy_round_trip_float32(self):
        u0 = np.zeros((20, 30), dtype=np.float32)
        u0[0, :] = 1.0  # a hot top edge
        np.save(self.path("init.npy"), u0)
        run("heat", "--init", self.path("init.npy"), "--out", self.path("out.npy"), "--steps", "25",
            "--size", "30x20")
        out = np.load(self.path("out.npy"))
        self.assertEqual(out.dtype, np.float32)
        np.testing.assert_allclose(out, numpy_heat(u0, 0.2, 25), rtol=0, atol=8 * 25 * np.finfo(np.float32).eps)
        self.assertTrue((out[1, 1:-1] > out[2, 1:-1]).all())  # heat flows down from the top edge

    def check_error(self, args, message, expect=1):
        err = run(*args, expect=expect)[1]
        self.assertIn(message, err)

    def test_bad_arguments_are_clear_errors(self):
        self.check_error(["heat", "--alpha", "0.3"], "unstable")
        self.check_error(["heat", "--alpha", "0"], "positive")
        self.check_error(["heat", "--size", "10x10x10x10"], "expected 1 to 3 extents")
        self.check_error(["heat", "--size", "10x10", "--dims", "3"], "does not match")
        self.check_error(["heat", "--size", "10xabc"], "'abc' is not a positive integer")
        self.check_error(["heat", "--size", "0x5"], "an extent is zero")
        self.check_error(["heat", "--size", "2x5"], "at least 3 nodes on every axis")
        self.check_error(["heat", "--size", "9x9x9", "--alpha", "0.2"], "unstable")  # 3D needs A <= 1/6
        self.check_error(["heat", "--mode", "sideways"], "--mode is auto, incore")
        self.check_error(["heat", "--mode", "strip", "--decomposition", "block"], "has its own")
        self.check_error(["heat", "--mode", "incore", "--height", "3"], "has no pyramid")
        self.check_error(["heat", "--size", "9x9x9", "--alpha", "0.1", "--depth", "9"], "at most 8")
        self.check_error(["heat", "--depth", "0"], "--depth is auto or a whole number")
        self.check_error(["heat", "--depth", "500"], "choose a depth of at most")
        self.check_error(["heat", "--device-memory", "12 bananas"], "bananas")
        self.check_error(["heat", "--device-memory", "1KiB", "--mode", "strip"], "needs at least")
        self.check_error(["heat", "--size", "30", "--png", self.path("x.png")], "1D")
        self.check_error(["heat", "--device", "no-such-device-anywhere"], "no OpenCL device matches")
        self.check_error(["heat", "--device", "vendor:x"], "unknown key 'vendor:'")
        self.check_error(["heat", "--precision", "f16"], "f16")
        self.check_error(["heat", "--steps", "-3"], "steps")
        self.check_error(["heat", "--out", self.path("missing/out.npy")], "does not exist")
        self.check_error(["heat", "--out", self.tmp], "is a folder")
        self.check_error(["heat", "--size", "1000000x1000000"], "of host memory")

    def test_bad_init_files_are_clear_errors(self):
        self.check_error(["heat", "--init", self.path("missing.npy")], "no such file")  # checked before any work
        np.save(self.path("ints.npy"), np.zeros((5, 5), dtype=np.int32))
        self.check_error(["heat", "--init", self.path("ints.npy")], "dtype is '<i4'")
        np.save(self.path("4d.npy"), np.zeros((3, 4, 5, 5)))
        self.check_error(["heat", "--init", self.path("4d.npy")], "1 to 3 dimensions")
        nan = np.zeros((5, 6))
        nan[2, 3] = np.nan
        np.save(self.path("nan.npy"), nan)
        self.check_error(["heat", "--init", self.path("nan.npy")], "non-finite value (nan) at node 3, 2")
        np.save(self.path("ok.npy"), np.zeros((5, 6)))
        self.check_error(["heat", "--init", self.path("ok.npy"), "--size", "5x6"], "does not match")
        self.check_error(["heat", "--init", self.path("ok.npy"), "--out", self.path("ok.npy")], "never overwrites")
        with open(self.path("ok.npy"), "rb") as source, open(self.path("truncated.npy"), "wb") as f:
            f.write(source.read()[:100])
        self.check_error(["heat", "--init", self.path("truncated.npy")], "truncated")

    def test_every_mode_gives_the_same_bits_in_1d_2d_3d(self):
        rng = np.random.default_rng(11)
        # Budgets that hold a few rows (planes) at a time but not the whole grid, whatever the row padding.
        for shape, budget in [((61,), "256"), ((33, 65), "24KiB"), ((40, 6, 128), "100KiB")]:
            u0 = rng.uniform(-1, 1, size=shape).astype(np.float32)
            np.save(self.path("init.npy"), u0)
            alpha = 0.4 / len(shape)
            results = {}
            for mode in ["incore", "trivial", "strip", "block", "auto"]:
                if mode == "block" and len(shape) != 2:
                    continue
                args = ["heat", "--init", self.path("init.npy"), "--out", self.path(mode + ".npy"), "--steps", "9",
                        "--alpha", alpha, "--mode", mode, "--json"]
                if mode != "incore":
                    args += ["--device-memory", budget] + (["--height", "3"] if mode in ("strip", "block") else [])
                summary = json.loads(run(*args)[0])
                if mode != "auto":  # trivial runs one-step strips
                    self.assertEqual(summary["plan"]["decomposition"], "strip" if mode == "trivial" else mode, summary)
                if mode != "incore":
                    self.assertGreater(summary["plan"]["tasks"], 1, summary)
                    self.assertLessEqual(summary["device_bytes"], summary["budget_bytes"])
                self.assertGreater(summary["predicted_s"], 0)
                results[mode] = np.load(self.path(mode + ".npy"))
            # Several steps a launch, on chip.
            for mode in ["incore", "strip", "block"][:2 if len(shape) != 2 else 3]:
                args = ["heat", "--init", self.path("init.npy"), "--out", self.path(mode + "-d.npy"), "--steps",
                        "9", "--alpha", alpha, "--mode", mode, "--depth", "2", "--json"]
                if mode != "incore":
                    # block: launches of 2, 2 and 1 steps; a taller pass needs more than 24 KiB where rows
                    # are padded to 512 bytes (NVIDIA)
                    args += ["--device-memory", budget, "--height", "3" if mode == "strip" else "5"]
                summary = json.loads(run(*args)[0])
                self.assertEqual(summary["plan"]["depth"], 2, summary)
                results[mode + " --depth 2"] = np.load(self.path(mode + "-d.npy"))
            if len(shape) == 2:  # the tuned depth: measured on a cold cache, then read from its record
                cold = cache_with_profile(self.path("c"))  # cold but for the device's profile
                for measured_now in (True, False):
                    summary = json.loads(run("heat", "--init", self.path("init.npy"), "--out", self.path("auto-d.npy"),
                                             "--steps", "9", "--alpha", alpha, "--mode", "strip", "--depth", "auto",
                                             "--device-memory", budget, "--json", env={"ZIGGURAT_CACHE_DIR": cold})[0])
                    tuning = summary["depth_tuning"]
                    self.assertEqual(tuning["measured_now"], measured_now, summary)
                    depth, group = tuned_or_given(summary, ["--depth", "auto"])
                    self.assertEqual((summary["plan"]["depth"], summary["plan"]["group"]), (depth, group), summary)
                    # Every tuned depth was planned, each in its fastest group; the plan is the chosen one's.
                    plans = summary["depth_plans"]
                    self.assertEqual([int(plan["candidate"].partition("/")[0]) for plan in plans],
                                     sorted({int(name.partition("/")[0]) for name in tuning["ns_per_node"]}), summary)
                    chosen = min(plans, key=lambda plan: plan["predicted_s"])
                    self.assertEqual(summary["plan"]["height"], chosen["height"], summary)
                    # Charged the chosen candidate's measured time.
                    self.assertEqual(summary["plan"]["kernel_rate"], "tuning record", summary)
                    self.assertAlmostEqual(summary["plan"]["kernel_ns_per_node"],
                                           tuning["ns_per_node"][chosen["candidate"]], delta=1e-9, msg=summary)
                    self.assertAlmostEqual(summary["predicted_s"], chosen["predicted_s"], delta=1e-12)
                    fastest = min(tuning["ns_per_node"], key=tuning["ns_per_node"].get).partition("/")[0]
                    if fastest != "1":  # the other work-groups were tried at the fastest depth
                        self.assertGreater(sum(name.startswith(f"{fastest}/") for name in tuning["ns_per_node"]), 1,
                                           summary)
                    results["strip --depth auto"] = np.load(self.path("auto-d.npy"))
            for mode, out in results.items():
                self.assertEqual(out.tobytes(), results["incore"].tobytes(), f"{mode} differs from incore on {shape}")
            np.testing.assert_allclose(results["incore"], numpy_heat(u0, alpha, 9), rtol=0,
                                       atol=8 * 9 * np.finfo(np.float32).eps)

    def test_picture_and_plan_in_the_summary(self):
        summary = json.loads(run("heat", "--size", "200x120", "--steps", "30", "--mode", "strip", "--height", "5",
                                 "--device-memory", "64KiB", "--png", self.path("f.png"), "--timeline",
                                 self.path("t.json"), "--json", "--quiet")[0])
        plan = summary["plan"]
        self.assertEqual((plan["decomposition"], plan["height"], plan["passes"]), ("strip", 5, 6))
        with open(self.path("t.json")) as f:
            events = json.load(f)["traceEvents"]
        self.assertEqual(len(events), 3 * plan["tasks"] * plan["passes"])
        self.assertEqual({e["tid"] for e in events}, {"upload", "compute", "download"})
        self.assertTrue(all(e["dur"] >= 0 and e["ts"] >= 0 for e in events))
        self.assertLess(summary["max_error_vs_exact"], 1e-5)
        for key in ("time_s", "predicted_s", "ns_per_node", "task_extent", "tasks"):
            self.assertIn(key, summary if key in summary else plan)
        with open(self.path("f.png"), "rb") as f:
            header = f.read(24)
        self.assertEqual(header[:8], b"\x89PNG\r\n\x1a\n")
        self.assertEqual(int.from_bytes(header[16:20], "big"), 200 + BAR_PANEL)  # width: the field and its bar
        self.assertEqual(int.from_bytes(header[20:24], "big"), 120)  # height
        cube = json.loads(run("heat", "--dims", "3", "--size", "20x16x12", "--steps", "10", "--png", self.path("c.png"),
                              "--json")[0])
        self.assertEqual(cube["dims"], 3)
        self.assertLess(cube["max_error_vs_exact"], 1e-5)
        self.assertTrue(os.path.exists(self.path("c.png")))

    def test_picture_has_a_colour_bar_labelled_with_the_fields_max_and_min(self):
        run("heat", "--size", "200x120", "--steps", 10, "--out", self.path("u.npy"), "--png", self.path("f.png"), "--quiet")
        u, png = np.load(self.path("u.npy")), read_png(self.path("f.png"))
        self.assertEqual(png.shape, (120, 200 + BAR_PANEL, 3))
        self.assertTrue(np.all(png[:, 200:208] == 255))  # the gap between the field and the bar
        bar = png[4:116, 216].astype(int)  # 4 pixels of margin above and below, viridis from max down to min
        self.assertEqual(bar[0].tolist(), [253, 231, 37])
        self.assertEqual(bar[-1].tolist(), [68, 1, 84])
        self.assertTrue(np.all(png[:4, 208:224] == 255) and np.all(png[116:, 208:224] == 255))
        self.assertEqual(read_label(png, 230, 4), "%.4g" % float(u.max()))
        self.assertEqual(read_label(png, 230, 109), "%.4g" % float(u.min()))
        self.assertTrue(np.all(png[12:108, 230:] == 255))  # nothing between the labels
        # The longest labels, 11 characters, fit the panel.
        np.save(self.path("tiny.npy"), np.linspace(-1.2345e-100, 9.8765e-101, 40 * 30).reshape(30, 40))
        run("heat", "--init", self.path("tiny.npy"), "--steps", 1, "--out", self.path("t.npy"), "--png",
            self.path("t.png"), "--quiet")
        u, png = np.load(self.path("t.npy")), read_png(self.path("t.png"))
        self.assertEqual(png.shape, (38, 40 + BAR_PANEL, 3))  # as tall as the two labels need
        self.assertEqual([read_label(png, 70, 4), read_label(png, 70, 27)], ["%.4g" % u.max(), "%.4g" % u.min()])
        self.assertEqual(len(read_label(png, 70, 27)), 11)

    def test_explicit_precision_wins_over_the_input_type(self):
        np.save(self.path("init.npy"), np.zeros((9, 9)))
        run("heat", "--init", self.path("init.npy"), "--out", self.path("out.npy"), "--precision", "f32")
        self.assertEqual(np.load(self.path("out.npy")).dtype, np.float32)

    def test_refused_run_writes_no_output(self):
        run("heat", "--alpha", "0.9", "--out", self.path("never.npy"), expect=1)
        self.assertEqual(os.listdir(self.tmp), [])


class LongVector(ScratchFolderTest):
    """`ziggurat heat --method long-vector` (CLBlast calls on the unrolled grid) and its benchmark."""

    def test_matches_numpy_keeps_the_boundary_and_reports_its_calls(self):
        rng = np.random.default_rng(13)
        for dtype in (np.float64, np.float32):
            u0 = rng.uniform(-1, 1, size=(21, 34)).astype(dtype)  # H = 21, W = 34: not square
            np.save(self.path("init.npy"), u0)
            try:
                summary = json.loads(run("heat", "--method", "long-vector", "--init", self.path("init.npy"), "--out",
                                         self.path("out.npy"), "--steps", 12, "--alpha", 0.2, "--json")[0])
            except AssertionError as refused:
                if dtype == np.float64 and "double precision" in str(refused):
                    continue  # a device without fp64
                raise
            out = np.load(self.path("out.npy"))
            self.assertEqual((out.shape, out.dtype), (u0.shape, dtype))
            # Another order of additions than the stencil's: within the bound of the device tests.
            np.testing.assert_allclose(out, numpy_heat(u0, 0.2, 12), rtol=0, atol=8 * 12 * np.finfo(dtype).eps)
            for edge in (np.s_[0, :], np.s_[-1, :], np.s_[:, 0], np.s_[:, -1]):
                self.assertEqual(out[edge].tobytes(), u0[edge].tobytes())
            self.assertEqual(summary["method"], "long-vector")
            self.assertEqual([c["routine"] for c in summary["plan"]["calls_per_step"]],
                             ["xCOPY", "xAXPY", "xHAD", "xAXPY", "xOMATCOPY"])
            self.assertEqual(summary["plan"]["calls_per_step"][2]["length"], (21 - 2) * 34 - 2)
            self.assertGreater(summary["time_s"], 0)

    def test_default_field_and_human_output(self):
        summary = json.loads(run("heat", "--method", "long-vector", "--size", "40x40", "--steps", 30, "--json")[0])
        self.assertLess(summary["max_error_vs_exact"], 1e-5)
        self.assertGreater(summary["predicted_s"], 0)  # model (1), from the device's profile
        out = run("heat", "--method", "long-vector", "--size", "17x9", "--steps", 3, "--png", self.path("f.png"))[0]
        self.assertIn("long-vector", out)
        self.assertIn("model (1)", out)
        self.assertTrue(os.path.exists(self.path("f.png")))

    def test_bad_arguments_are_clear_errors(self):
        def check(args, message):
            self.assertIn(message, run("heat", "--method", "long-vector", *args, expect=1)[1])
        check(["--size", "20x20x20", "--alpha", 0.1], "steps 2D grids")
        check(["--size", "100"], "steps 2D grids")
        check(["--mode", "strip"], "--mode belongs to the pyramid solver")
        check(["--device-memory", "1MiB"], "--device-memory belongs to the pyramid solver")
        check(["--height", 3], "--height belongs")
        check(["--size", "20x20", "--alpha", 0.3], "unstable")
        self.assertIn("--method is stencil or long-vector",
                      run("heat", "--method", "sideways", expect=1)[1])
        run("heat", "--method", "long-vector", "--mode", "block", "--out", self.path("never.npy"), expect=1)
        self.assertEqual(os.listdir(self.tmp), [])

    def test_benchmark_through_the_tool(self):
        bench = os.path.join(os.path.dirname(support.ZIGGURAT), "..", "libexec", "ziggurat", "ziggurat-bench")
        if not os.path.exists(bench):
            self.skipTest("the optional benchmark component is not built")
        report = json.loads(run("bench", "long-vector", "--min-n", 10, "--max-n", 110, "--step-small", 40,
                                "--step-large", 10, "--steps", 3, "--repeat", 1, "--json")[0])
        self.assertEqual([p["N"] for p in report["points"]], [10, 50, 90, 100, 110])
        self.assertTrue(all(p["measured_s"] > 0 and p["modelled_s"] > 0 for p in report["points"]))
        for key in ("paper_eps", "rms_relative_error", "max_relative_error", "constants"):
            self.assertIn(key, report)


if __name__ == "__main__":
    support.main()
