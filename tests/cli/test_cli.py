#!/usr/bin/env python3
"""The `ziggurat` command-line tool, end to end, checked against NumPy.

Usage: test_cli.py PATH/TO/ziggurat
"""
import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest

import numpy as np

import cli_support as support
from cli_support import ScratchFolderTest, digest, mpi_environment, numpy_heat, numpy_jacobi, run


def tuned_or_given(summary, args):
    """(depth, group) a run's plan must show: --depth N as given; with --depth auto, or none on a GPU
    (tuned there by default), a candidate of its depth_tuning ("1" or "<depth>/<x>x<y>"): for heat the
    depth_plans entry predicted fastest (the smaller depth on ties; depth and height chosen together),
    else the fastest candidate; else single steps."""
    given = args[args.index("--depth") + 1] if "--depth" in args else None
    if given not in (None, "auto"):
        return int(given), "default"
    if "depth_plans" in summary:
        chosen = min(summary["depth_plans"], key=lambda plan: plan["predicted_s"])["candidate"]
    elif given == "auto" or "depth_tuning" in summary:
        candidates = summary["depth_tuning"]["ns_per_node"]
        chosen = min(candidates, key=candidates.get)
    else:
        return 1, "default"
    depth, _, group = chosen.partition("/")
    return int(depth), group or "default"


class Devices(unittest.TestCase):
    def test_json_lists_devices_with_one_default(self):
        devices = json.loads(run("devices", "--json")[0])
        self.assertGreaterEqual(len(devices), 1)
        self.assertEqual(sum(d["default"] for d in devices), 1)
        for d in devices:
            for key in ("name", "platform", "type", "fp64", "global_mem_bytes", "max_alloc_bytes",
                        "max_work_group_size", "preferred_work_group_multiple", "base_address_align_bytes",
                        "compute_units", "driver_version", "host_unified_memory", "nvidia_compute_capability"):
                self.assertIn(key, d)
            self.assertGreaterEqual(d["preferred_work_group_multiple"], 1)

    def test_table_marks_one_default(self):
        out = run("devices")[0]
        self.assertIn("WG mult", out)
        self.assertEqual(len(re.findall(r"^\d+\*\s", out, re.MULTILINE)), 1, out)


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
        self.check_error(["heat", "--device-mem", "12 bananas"], "bananas")
        self.check_error(["heat", "--device-mem", "1KiB", "--mode", "strip"], "needs at least")
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
                    args += ["--device-mem", budget] + (["--height", "3"] if mode in ("strip", "block") else [])
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
                    args += ["--device-mem", budget, "--height", "3" if mode == "strip" else "5"]
                summary = json.loads(run(*args)[0])
                self.assertEqual(summary["plan"]["depth"], 2, summary)
                results[mode + " --depth 2"] = np.load(self.path(mode + "-d.npy"))
            if len(shape) == 2:  # the tuned depth: measured on a cold cache, then read from its record
                for measured_now in (True, False):
                    summary = json.loads(run("heat", "--init", self.path("init.npy"), "--out", self.path("auto-d.npy"),
                                             "--steps", "9", "--alpha", alpha, "--mode", "strip", "--depth", "auto",
                                             "--device-mem", budget, "--json", env={"ZIGGURAT_CACHE_DIR": self.path("c")})[0])
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
                                 "--device-mem", "64KiB", "--png", self.path("f.png"), "--timeline",
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
        self.assertEqual(int.from_bytes(header[16:20], "big"), 200)  # width
        self.assertEqual(int.from_bytes(header[20:24], "big"), 120)  # height
        cube = json.loads(run("heat", "--dims", "3", "--size", "20x16x12", "--steps", "10", "--png", self.path("c.png"),
                              "--json")[0])
        self.assertEqual(cube["dims"], 3)
        self.assertLess(cube["max_error_vs_exact"], 1e-5)
        self.assertTrue(os.path.exists(self.path("c.png")))

    def test_explicit_precision_wins_over_the_input_type(self):
        np.save(self.path("init.npy"), np.zeros((9, 9)))
        run("heat", "--init", self.path("init.npy"), "--out", self.path("out.npy"), "--precision", "f32")
        self.assertEqual(np.load(self.path("out.npy")).dtype, np.float32)

    def test_refused_run_writes_no_output(self):
        run("heat", "--alpha", "0.9", "--out", self.path("never.npy"), expect=1)
        self.assertEqual(os.listdir(self.tmp), [])


    def test_mpi_ranks_give_the_bits_of_one_process(self):
        mpirun = shutil.which("mpirun")
        if mpirun is None:
            self.skipTest("no mpirun: scripts/setup.sh installs openmpi-bin")
        one = json.loads(run("heat", "--size", "8x8", "--steps", "1", "--json")[0])
        same = "name:" + one["device"]  # every rank on the device of the single run

        def ranks(count, *args):
            return subprocess.run([mpirun, "-np", str(count), "--oversubscribe", support.ZIGGURAT, "heat", "--device", same,
                                   "--quiet", *map(str, args)],
                                  capture_output=True, text=True, timeout=300, env=mpi_environment())
        rng = np.random.default_rng(7)
        np.save(self.path("init3.npy"), rng.uniform(-1, 1, size=(30, 9, 13)))
        cases = [  # (arguments, ranks, halo depth or None for the model's)
            (("--size", "90x61", "--steps", 17, "--height", 4), 2, 4),
            (("--size", "90x61", "--steps", 17, "--height", 4, "--device-mem", "48KiB"), 3, 4),
            (("--init", self.path("init3.npy"), "--steps", 12), 2, None),
            (("--size", "300", "--steps", 9, "--height", 2), 3, 2),
        ]
        for args, count, depth in cases:
            with self.subTest(args=args, ranks=count):
                single = json.loads(run("heat", *args, "--out", self.path("one.npy"), "--json")[0])
                done = ranks(count, *args, "--out", self.path("ranks.npy"), "--json")
                self.assertEqual(done.returncode, 0, done.stderr)
                summary = json.loads(done.stdout)
                self.assertEqual(summary["ranks"], count)
                if depth is not None:
                    self.assertEqual(summary["halo_depth"], depth)
                self.assertEqual(summary["exchanges"], -(-int(args[args.index("--steps") + 1]) // summary["halo_depth"]) - 1)
                if "max_error_vs_exact" in single:
                    self.assertEqual(summary["max_error_vs_exact"], single["max_error_vs_exact"])
                self.assertEqual(np.load(self.path("ranks.npy")).tobytes(), np.load(self.path("one.npy")).tobytes())
        self.assertEqual([f for f in os.listdir(self.tmp) if "partial" in f], [])
        done = ranks(2, "--size", "40x40", "--steps", 3, "--png", self.path("p.png"))
        self.assertNotEqual(done.returncode, 0)
        self.assertIn("--png draws the field of one process", done.stderr)
        done = ranks(3, "--size", "20x7", "--steps", 5, "--height", 3)
        self.assertNotEqual(done.returncode, 0)
        self.assertIn("fewer than the halo depth 3", done.stderr)


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
        check(["--device-mem", "1MiB"], "--device-mem belongs to the pyramid solver")
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


class Poisson(ScratchFolderTest):
    """`ziggurat poisson`: Jacobi sweeps in core and in pyramid passes, against NumPy."""

    def test_matches_numpy_and_every_plan_gives_the_same_bits(self):
        rng = np.random.default_rng(5)
        shape = (23, 9, 12)  # (D, H, W): 12 x 9 x 23
        for dtype in (np.float32, np.float64):
            u0 = rng.uniform(-1, 1, size=shape).astype(dtype)
            f = rng.uniform(-1, 1, size=shape).astype(dtype)
            np.save(self.path("u0.npy"), u0)
            np.save(self.path("f.npy"), f)
            outputs = []
            # Budgets that hold a few tasks where rows are padded to 128 values (NVIDIA), one on PoCL; the
            # tuned depth in float only (tuning builds a program for every candidate).
            for plan in (["--mode", "incore"], ["--mode", "strip", "--height", 3, "--device-mem", "400KiB"],
                         ["--mode", "strip", "--height", 2, "--device-mem", "200KiB", "--serial"],
                         ["--mode", "incore", "--depth", 2], ["--mode", "strip", "--height", 3, "--device-mem", "400KiB",
                                                              "--depth", 2]) + ((["--mode", "incore", "--depth", "auto"],)
                                                                                if dtype == np.float32 else ()):
                try:
                    summary = json.loads(run("poisson", "--rhs", self.path("f.npy"), "--boundary", self.path("u0.npy"),
                                             "--spacing", 0.1, "--tol", 0, "--max-sweeps", 7, "--out",
                                             self.path("u.npy"), "--json", *plan)[0])
                except AssertionError as refused:
                    if dtype == np.float64 and "double precision" in str(refused):
                        break
                    raise
                self.assertEqual((summary["reason"], summary["sweeps"]), ("max-sweeps", 7))
                self.assertEqual((summary["plan"]["depth"], summary["plan"]["group"]), tuned_or_given(summary, plan))
                outputs.append(np.load(self.path("u.npy")))
                self.assertEqual((outputs[-1].shape, outputs[-1].dtype), (shape, dtype))
            for out in outputs[1:]:
                self.assertEqual(out.tobytes(), outputs[0].tobytes())
            if outputs:
                # The same operations in the same order without fused multiply-add.
                np.testing.assert_allclose(outputs[0], numpy_jacobi(u0, f, 0.1, 7), rtol=0,
                                           atol=4 * 7 * np.finfo(dtype).eps)

    def test_manufactured_problem_converges_and_reports(self):
        summary = json.loads(run("poisson", "--size", "14x12x40", "--problem", "manufactured", "--tol", 1e-5,
                                 "--spacing", 0.05, "--mode", "strip", "--height", 5, "--device-mem", "1MiB",
                                 "--json")[0])
        self.assertEqual(summary["reason"], "converged")
        self.assertLess(summary["update"], 1e-5)
        self.assertEqual(summary["sweeps"] % 5, 0)
        self.assertLess(summary["max_error_vs_exact"], 5e-3)
        self.assertLess(summary["residual"], 6e-5 / 0.05**2 * 1.01 + 1e-2)
        self.assertEqual(summary["plan"]["decomposition"], "strip")
        self.assertGreater(summary["predicted_s"], 0)
        out = run("poisson", "--size", "10x10x10", "--problem", "manufactured", "--max-sweeps", 20, "--png",
                  self.path("p.png"), expect=2)[0]  # stopped above --tol: the report, and status 2
        for word in ("plan", "result", "residual", "max |u - u*|", "incore"):
            self.assertIn(word, out)
        self.assertTrue(os.path.exists(self.path("p.png")))

    def test_bad_arguments_are_clear_errors(self):
        def check(args, message):
            self.assertIn(message, run("poisson", *args, expect=1)[1])
        np.save(self.path("f.npy"), np.zeros((10, 8, 8), np.float32))
        np.save(self.path("f2d.npy"), np.zeros((8, 8), np.float32))
        bad = np.zeros((10, 8, 8), np.float32)
        bad[3, 4, 5] = np.nan
        np.save(self.path("bad.npy"), bad)
        check(["--size", "8x8x10"], "--rhs f.npy or --problem manufactured")
        check(["--size", "8x8x10", "--problem", "other"], "--problem is 'manufactured'")
        check(["--size", "2x8x10", "--problem", "manufactured"], "at least 3 nodes")
        check(["--size", "8x8x11", "--rhs", self.path("f.npy")], "give them the same grid")
        check(["--rhs", self.path("f2d.npy")], "needs a 3D grid")
        check(["--rhs", self.path("bad.npy")], "at node 5, 4, 3")
        check(["--size", "8x8x10", "--problem", "manufactured", "--mode", "strip", "--height", 2, "--device-mem", "1KiB"],
              "needs at least")
        check(["--size", "8x8x10", "--problem", "manufactured", "--mode", "incore", "--device-mem", "1KiB"],
              "does not fit in core")
        check(["--size", "8x8x10", "--problem", "manufactured", "--mode", "sideways"], "--mode is auto, incore or strip")
        check(["--rhs", self.path("f.npy"), "--out", self.path("f.npy")], "--out")
        self.assertFalse(os.path.exists(self.path("u.npy")))


class Calibrate(unittest.TestCase):
    def test_json_profile_then_cached_then_forced(self):
        profile = json.loads(run("calibrate", "--json")[0])
        for key in ("upload_pinned", "download_pinned", "upload_pageable", "download_pageable", "upload_rect",
                    "download_rect", "overlap", "launch_pipelined_s", "kernels", "numstreams", "library_version",
                    "device", "driver", "date"):
            self.assertIn(key, profile)
        self.assertGreater(profile["upload_pinned"]["bytes_per_s"], 0)
        self.assertGreaterEqual(profile["numstreams"], 1)
        out = run("calibrate")[0]
        self.assertIn("loaded from", out)
        self.assertIn("host->device pinned", out)
        self.assertIn("tau_a heat2d_box", out)
        self.assertTrue(run("calibrate", "--force")[0].splitlines()[1].startswith("measured "))


class Model(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.dir.cleanup()

    def test_explicit_plan(self):
        out = json.loads(run("model", "--grid", "8194", "--steps", "200", "--device-mem", "64MiB", "--tau-c", "2",
                             "--tau-a", "0.2", "--json")[0])
        plan = out["plan"]
        self.assertIn(plan["decomposition"], ("strip", "block"))
        self.assertGreaterEqual(plan["height"], 1)
        self.assertGreater(plan["speedup_over_trivial"], 1)
        self.assertEqual(out["schedule"], "overlapped")
        human = run("model", "--grid", "8194", "--steps", "200", "--device-mem", "64MiB", "--tau-c", "2",
                    "--tau-a", "0.2", "--serial", "--decomposition", "strip")[0]
        self.assertIn("plan: strip, height n = ", human)
        self.assertIn("serial schedule", human)

    def test_height_can_be_fixed(self):
        out = json.loads(run("model", "--grid", "4098", "--steps", "100", "--device-mem", "16MiB", "--tau-c", "1",
                             "--tau-a", "0.1", "--height", "7", "--decomposition", "strip", "--json")[0])
        self.assertEqual(out["plan"]["height"], 7)

    def test_sweep_table_json_and_plot(self):
        args = ["model", "--grid", "2050", "--steps", "100", "--tau-a", "0.1", "--sweep", "--serial",
                "--memories", "1MiB,4MiB,16MiB"]
        out = json.loads(run(*args, "--json")[0])
        self.assertEqual(len(out["rows"]), 3 * 2 * 4)
        table = run(*args)[0]
        self.assertIn("speedup", table)
        png = os.path.join(self.dir.name, "sweep.png")
        done = subprocess.run([support.ZIGGURAT, *args, "--plot", png], capture_output=True, text=True)
        if done.returncode == 0:
            with open(png, "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
        else:
            self.assertIn("without PLplot", done.stderr)

    def test_with_a_calibrated_device(self):
        out = json.loads(run("model", "--grid", "4098", "--steps", "50", "--device-mem", "8MiB", "--device", "0",
                             "--json")[0])
        self.assertGreater(out["constants"]["tau_a_ns"], 0)
        self.assertIn("profile", out)
        run("model", "--dims", "3", "--grid", "200", "--device-mem", "8MiB", "--device", "0", "--tau-a", "0.5")
        lv = json.loads(run("model", "--scheme", "long-vector", "--grid", "1026", "--device", "0", "--json")[0])
        self.assertGreater(lv["ns_per_node"], 0)
        self.assertGreater(lv["numstreams"], 0)

    def test_jacobi(self):
        out = json.loads(run("model", "--scheme", "jacobi", "--dims", "3", "--grid", "800", "--planes", "4000",
                             "--device-mem", "4GiB", "--tau-c", "2.35", "--tau-a", "0.6", "--json")[0])
        self.assertGreater(out["halo"], 1)

    def test_bad_model_arguments(self):
        base = ["model", "--grid", "1026", "--tau-c", "1", "--tau-a", "1"]
        self.assertIn("needs at least 48.09 KiB", run(*base, "--device-mem", "4KiB", "--decomposition", "strip", expect=1)[1])
        self.assertIn("give --tau-c and --tau-a", run("model", "--device-mem", "1GiB", expect=1)[1])
        self.assertIn("is not a memory size", run(*base, "--device-mem", "12XB", expect=1)[1])
        self.assertIn("give the device-memory budget", run(*base, expect=1)[1])
        self.assertIn("--plot draws a --sweep", run(*base, "--device-mem", "1GiB", "--plot", "x.png", expect=1)[1])
        self.assertIn("n = 500 on grid 1026x1026 in the overlapped schedule: the smallest task (one owned row and n halo a side, 4 buffers) needs at least 15.67 MiB", run(*base, "--device-mem", "64KiB", "--height", "500", "--decomposition", "strip",
                                   expect=1)[1])
        self.assertIn("for 2D grids", run("model", "--dims", "3", "--grid", "100", "--tau-c", "1", "--tau-a", "1",
                                          "--device-mem", "1MiB", "--decomposition", "block", expect=1)[1])
        self.assertIn("excludes", run(*base, "--device-mem", "1GiB", "--serial", "--overlapped", expect=1)[1])
        jacobi = ["model", "--scheme", "jacobi", "--dims", "3", "--tau-c", "1", "--tau-a", "1"]
        self.assertIn("at least 3 planes", run(*jacobi, "--grid", "4294967296", "--device-mem", "1GiB", expect=1)[1])
        self.assertIn("too many to try", run(*jacobi, "--grid", "3", "--planes", "100000000000000000",
                                             "--device-mem", "17000000TB", expect=1)[1])
        self.assertIn("3 planes", run(*jacobi, "--grid", "100", "--planes", "2", "--device-mem", "1GiB", expect=1)[1])

    def test_absurd_sizes_are_planned_quickly_or_refused(self):
        out = json.loads(run("model", "--grid", "2050", "--steps", "100000000", "--device-mem", "4MiB", "--tau-c", "1",
                             "--tau-a", "0.1", "--json")[0])
        self.assertGreater(out["plan"]["passes"], 1000000)
        out = json.loads(run("model", "--grid", "32768", "--steps", "100000", "--device-mem", "16GiB", "--tau-c", "1",
                             "--tau-a", "0.1", "--json")[0])
        self.assertEqual(out["plan"]["decomposition"], "incore")

    def test_sweep_rows_that_hold_no_pyramid_are_reported(self):
        out = json.loads(run("model", "--grid", "2050", "--steps", "10", "--tau-a", "0.1", "--sweep", "--json",
                             "--memories", "1KiB,16MiB", "--ratios", "5")[0])
        self.assertEqual(len(out["rows"]), 4)
        self.assertIn("error", out["rows"][0])
        self.assertIn("plan", out["rows"][3])


MATRICES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "matrices")


def read_mtx(path):
    """A dense float64 array from a Matrix Market coordinate file (real or pattern, general or
    symmetric): the test's own reader, independent of ziggurat's."""
    with open(path) as f:
        banner = f.readline().lower().split()
        lines = [line for line in f if line.strip() and not line.startswith("%")]
    rows, cols, _ = map(int, lines[0].split())
    a = np.zeros((rows, cols))
    for line in lines[1:]:
        parts = line.split()
        i, j = int(parts[0]) - 1, int(parts[1]) - 1
        v = 1.0 if banner[3] == "pattern" else float(parts[2])
        a[i, j] += v
        if banner[4] == "symmetric" and i != j:
            a[j, i] += v
    return a


class Spmm(ScratchFolderTest):

    def product(self, matrix, x, *options):
        """Runs spmm on X (saved as .npy) and returns (Y, summary)."""
        np.save(self.path("x.npy"), x)
        out = json.loads(run("spmm", "--matrix", matrix, "--x", self.path("x.npy"), "--out", self.path("y.npy"),
                             "--repeat", 2, "--json", *options)[0])
        return np.load(self.path("y.npy")), out

    def check_close(self, a, x, y):
        # The documented tolerance: 2 (m + 1) eps (|A| |X|) element by element, m the longest row.
        m = int((a != 0).sum(axis=1).max())
        eps = np.finfo(y.dtype).eps
        bound = 2 * (m + 1) * eps * (np.abs(a) @ np.abs(x.astype(np.float64)))
        self.assertTrue((np.abs(y - a @ x.astype(np.float64)) <= bound + 1e-300).all())

    def test_every_format_matches_numpy_on_the_real_matrices(self):
        rng = np.random.default_rng(5)
        for name in ("bcsstk01.mtx", "can___24.mtx", "west0067.mtx", "fs_183_1.mtx"):
            matrix = os.path.join(MATRICES, name)
            a = read_mtx(matrix)
            x = rng.uniform(-1, 1, (a.shape[1], 3))
            for options in (["--format", "csr"], ["--format", "bsr"], ["--block", "3", "--kernel", "multirow"],
                            ["--block", "2", "--kernel", "row"], ["--block", "5", "--kernel", "group"]):
                y, out = self.product(matrix, x, *options)
                self.assertEqual(y.shape, (a.shape[0], 3))
                self.assertEqual(y.dtype, np.float64)
                self.check_close(a, x, y)
                self.assertEqual(out["k"], 3)
                self.assertEqual(out["precision"], "f64")
                self.assertGreaterEqual(out["nonzeros"], int((a != 0).sum()))  # explicit zeros are stored

    def test_symmetric_file_runs_as_half_stored_dia(self):
        matrix = os.path.join(MATRICES, "bcsstk01.mtx")
        a = read_mtx(matrix)
        x = np.random.default_rng(6).uniform(-1, 1, a.shape[1]).astype(np.float32)
        y, out = self.product(matrix, x, "--format", "dia")
        self.assertEqual(out["kernel"], "dia (symmetric half-stored)")
        self.assertEqual(out["precision"], "f32")  # from X
        self.assertEqual(y.shape, (a.shape[0],))  # a 1-D X gives a 1-D Y
        self.check_close(a, x, y)

    def test_random_vectors_and_the_summary(self):
        out = json.loads(run("spmm", "--matrix", os.path.join(MATRICES, "west0067.mtx"), "--vectors", 4,
                             "--precision", "f32", "--repeat", 3, "--json")[0])
        for key in ("format", "block_size", "k", "kernel", "time_s", "gflops", "effective_gb_per_s", "bytes",
                    "max_relative_error"):
            self.assertIn(key, out)
        self.assertEqual((out["format"], out["k"]), ("bsr", 4))
        self.assertIn(out["auto"]["source"], ("measured now", "tuning record"))
        self.assertIn(out["kernel"], out["auto"]["seconds"])
        self.assertLess(out["max_relative_error"], 1e-5)
        self.assertIn("check", run("spmm", "--matrix", os.path.join(MATRICES, "west0067.mtx"), "--repeat", 1)[0])

    def check_error(self, args, message):
        self.assertIn(message, run("spmm", *args, expect=1)[1])

    def test_bad_input_is_a_clear_error_and_writes_nothing(self):
        west = os.path.join(MATRICES, "west0067.mtx")
        bad = self.path("bad.mtx")
        with open(bad, "w") as f:
            f.write("%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1.0\n3 1 2.0\n")
        self.check_error(["--matrix", bad], "bad.mtx:4")
        self.check_error(["--matrix", self.path("missing.mtx")], "missing.mtx")
        self.check_error(["--matrix", west, "--block", "17"], "--block is 1 to 16")
        self.check_error(["--matrix", west, "--format", "coo"], "--format is bsr, csr or dia")
        self.check_error(["--matrix", west, "--format", "dia", "--kernel", "row"], "DIA has one")
        self.check_error(["--matrix", west, "--format", "csr", "--block", "2"], "has none")
        self.check_error(["--matrix", west, "--kernel", "fast"], "unknown block CSR kernel 'fast'")
        self.check_error(["--matrix", west, "--format", "dia"], "diagonals")
        np.save(self.path("x.npy"), np.ones((5, 2)))
        self.check_error(["--matrix", west, "--x", self.path("x.npy")], "must be (67, k)")
        np.save(self.path("x.npy"), np.ones((67, 2)))
        self.check_error(["--matrix", west, "--x", self.path("x.npy"), "--vectors", "2"], "not both")
        self.check_error(["--matrix", west, "--x", self.path("x.npy"), "--out", self.path("x.npy")], "never overwrites")
        self.check_error(["--matrix", west, "--out", self.tmp], "is a folder")
        self.check_error(["--matrix", west, "--kernel", "multirow", "--lanes", "3"], "power of two")
        self.check_error(["--matrix", west, "--out", self.path("y.npy"), "--block", "0"], "--block is 1 to 16")
        self.assertFalse(os.path.exists(self.path("y.npy")))


class Autotuning(ScratchFolderTest):
    """`spmm --kernel auto` times the kernels, keeps the timings as records of their own, and never
    calibrates the device, also when several processes tune at once in one cache."""

    def records(self):
        """The autotuning records of the cache, by key (read straight from the files)."""
        found = {}
        for folder, _, files in os.walk(os.path.join(self.tmp, "tuning")):
            for name in files:
                if name.endswith(".json"):
                    with open(os.path.join(folder, name)) as f:
                        record = json.load(f)
                    found[record["key"]] = record
        return found

    def test_auto_on_a_cold_cache_measures_kernels_not_the_device(self):
        env = {"ZIGGURAT_CACHE_DIR": self.tmp}
        matrix = os.path.join(MATRICES, "west0067.mtx")
        out = json.loads(run("spmm", "--matrix", matrix, "--vectors", 4, "--repeat", 1, "--json", env=env)[0])
        self.assertEqual(out["auto"]["source"], "measured now")
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "profiles")))  # no calibration ran
        self.assertEqual(list(self.records()), [out["auto"]["key"]])
        again = json.loads(run("spmm", "--matrix", matrix, "--vectors", 4, "--repeat", 1, "--json", env=env)[0])
        self.assertEqual(again["auto"]["source"], "tuning record")
        self.assertEqual(again["kernel"], out["kernel"])
        self.assertIn("autotuning records", run("cache", env=env)[0])

    def test_processes_tuning_at_once_keep_every_record(self):
        env = {**os.environ, "ZIGGURAT_CACHE_DIR": self.tmp}
        matrix = os.path.join(MATRICES, "fs_183_1.mtx")
        ks = [1, 2, 3, 4, 5, 6]  # a kind of problem each
        children = [subprocess.Popen([support.ZIGGURAT, "spmm", "--matrix", matrix, "--vectors", str(k), "--repeat", "1",
                                      "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
                    for k in ks]
        keys = set()
        for child in children:
            stdout, stderr = child.communicate(timeout=600)
            self.assertEqual(child.returncode, 0, stderr)
            keys.add(json.loads(stdout)["auto"]["key"])
        self.assertEqual(len(keys), len(ks))
        self.assertEqual(set(self.records()), keys)
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "profiles")))


class Misc(unittest.TestCase):
    def test_version_and_cache(self):
        self.assertRegex(run("--version")[0], r"\d+\.\d+\.\d+")
        out = run("cache")[0]
        self.assertIn("program cache", out)
        self.assertIn("device profiles", out)

    def test_benchmarks_run_through_the_tool(self):
        bench = os.path.join(os.path.dirname(support.ZIGGURAT), "..", "libexec", "ziggurat", "ziggurat-bench")
        if os.path.exists(bench):
            out = json.loads(run("bench", "build", "--repeat", 1, "--json")[0])
            self.assertGreater(out["cold_build_ms_median"], 0)
            self.assertIn("heat", run("bench", "--help")[0])
        # A tool installed without the optional component says what to do.
        with tempfile.TemporaryDirectory() as folder:
            alone = os.path.join(folder, "bin", "ziggurat")
            os.makedirs(os.path.dirname(alone))
            shutil.copy(support.ZIGGURAT, alone)
            done = subprocess.run([alone, "bench", "heat"], capture_output=True, text=True)
            self.assertEqual(done.returncode, 1)
            self.assertIn("optional component", done.stderr)
            self.assertIn("--component bench", done.stderr)

    def test_no_subcommand_is_a_usage_error(self):
        run(expect=1)



class Solve(ScratchFolderTest):
    """`ziggurat solve` against NumPy's dense solve of the same system."""

    def test_solution_matches_numpy_and_outputs_are_written(self):
        matrix = os.path.join(MATRICES, "fs_183_1.mtx")
        a = read_mtx(matrix)
        b = np.linspace(-1, 1, a.shape[0])
        np.save(self.path("b.npy"), b)
        for method in ("bicgstab", "gmres"):
            out, hist = self.path(f"x-{method}.npy"), self.path(f"h-{method}.csv")
            summary = json.loads(run("solve", "--matrix", matrix, "--rhs", self.path("b.npy"), "--method", method,
                                     "--restart", 60, "--precond", "ilu0", "--block", 3, "--tol", 1e-10,
                                     "--out", out, "--history", hist, "--json")[0])
            self.assertTrue(summary["converged"], summary["reason"])
            x = np.load(out)
            self.assertEqual(x.shape, (a.shape[0],))
            self.assertLess(np.linalg.norm(a @ x - b) / np.linalg.norm(b), 1e-9)
            with open(hist) as f:
                lines = f.read().splitlines()
            self.assertEqual(lines[0], "iteration,relative_residual_0")
            self.assertEqual(len(lines), summary["iterations"] + 2)

    def test_generated_system_every_ordering_and_k_vectors(self):
        for ordering in ("natural", "levels", "colours"):
            summary = json.loads(run("solve", "--generate", "8x6x5", "--block", 4, "--exact", "random",
                                     "--ordering", ordering, "--json")[0])
            self.assertTrue(summary["converged"], summary["reason"])
            self.assertLess(summary["error"], 1e-6)
        summary = json.loads(run("solve", "--generate", "6x6x6", "--block", 3, "--symmetric", "--method", "cg",
                                 "--precond", "block-jacobi", "--exact", "random", "--vectors", 4, "--json")[0])
        self.assertTrue(summary["converged"], summary["reason"])
        self.assertEqual(summary["k"], 4)
        self.assertEqual(len(summary["vectors"]), 4)  # each right-hand side's report, its history in --history
        for vector in summary["vectors"]:
            self.assertEqual(vector["status"], "converged")
            self.assertLessEqual(vector["iterations"], summary["iterations"])
            self.assertNotIn("history", vector)

    def test_product_kernel_measured_by_default_the_rule_or_named(self):
        """auto times the kernels once and keeps the record; rule and a name measure nothing."""
        env = {"ZIGGURAT_CACHE_DIR": self.path("c")}
        args = ("solve", "--generate", "6x5x4", "--block", 3, "--symmetric", "--method", "cg", "--vectors", 4,
                "--exact", "random", "--json")
        first = json.loads(run(*args, env=env)[0])
        self.assertTrue(first["converged"], first["reason"])
        self.assertTrue(os.listdir(os.path.join(self.path("c"), "tuning")))  # the record of this kind of matrix
        again = json.loads(run(*args, env=env)[0])
        self.assertEqual(again["product_kernel"], first["product_kernel"])
        named = json.loads(run(*args, "--kernel", "multirow/2", env={"ZIGGURAT_CACHE_DIR": self.path("d")})[0])
        self.assertEqual(named["product_kernel"], "multirow/2")
        self.assertTrue(named["converged"], named["reason"])
        run(*args, "--kernel", "rule", env={"ZIGGURAT_CACHE_DIR": self.path("e")})
        self.assertFalse(os.path.exists(os.path.join(self.path("d"), "tuning")) or
                         os.path.exists(os.path.join(self.path("e"), "tuning")))
        _, err = run(*args, "--kernel", "fast", expect=1)
        self.assertIn("auto", err)

    def test_convection_system_orderings_and_sweeps(self):
        """Both sweeps give the same solve; block colours sit between natural and red-black."""
        iterations = {}
        for ordering, sweep in (("natural", "levels"), ("natural", "sync-free"), ("colours", "auto"),
                                ("block-colours", "auto")):
            out = self.path(f"x-{ordering}-{sweep}.npy")
            summary = json.loads(run("solve", "--generate", "12x10x9", "--block", 2, "--system", "convection",
                                     "--exact", "random", "--ordering", ordering, "--sweep", sweep,
                                     "--aggregate", 8, "--out", out, "--json")[0])
            self.assertTrue(summary["converged"], summary["reason"])
            self.assertLess(summary["error"], 1e-6)
            if sweep != "auto":
                self.assertEqual(summary["sweep"], sweep)
            iterations[ordering, sweep] = summary["iterations"]
        self.assertTrue(np.array_equal(np.load(self.path("x-natural-levels.npy")),
                                       np.load(self.path("x-natural-sync-free.npy"))))
        self.assertLess(iterations["block-colours", "auto"], iterations["colours", "auto"])
        _, err = run("solve", "--generate", "4x4x4", "--block", 2, "--sweep", "fast", expect=1)
        self.assertIn("unknown triangular sweep 'fast'", err)
        _, err = run("solve", "--generate", "4x4x4", "--block", 2, "--system", "poisson", expect=1)
        self.assertIn("--system takes dominant, convection, laplace7", err)

    def test_model_problems_solve_with_their_own_blocks(self):
        for system, method, block in (("laplace7", "cg", 1), ("laplace27", "cg", 1), ("anisotropic", "cg", 1),
                                      ("upwind", "bicgstab", 1), ("elasticity", "cg", 3)):
            summary = json.loads(run("solve", "--generate", "6x5x4", "--system", system, "--method", method,
                                     "--exact", "random", "--tol", 1e-9, "--max-iter", 2000, "--json")[0])
            self.assertTrue(summary["converged"], summary["reason"])
            self.assertEqual(summary["block_size"], block)
            self.assertLess(summary["error"], 1e-5)
            self.assertEqual(summary["matrix"], f"{system} 6x5x4")
            self.assertEqual(summary["ordering"], "colours")  # auto's rule for ILU(0) of blocks of 1 to 3
        _, err = run("solve", "--generate", "4x4x4", "--system", "elasticity", "--block", 2, expect=1)
        self.assertIn("elasticity has blocks of 3, not 2", err)
        _, err = run("solve", "--generate", "4x4x4", "--system", "dominant", expect=1)
        self.assertIn("--system dominant needs --block b", err)

    def test_padded_blocks_solve(self):
        """48 rows in blocks of 5: the padded last block row stays out of the answer."""
        matrix = os.path.join(MATRICES, "bcsstk01.mtx")
        a = read_mtx(matrix)
        for precond, ordering in (("jacobi", "natural"), ("block-jacobi", "natural"), ("ilu0", "block-colours")):
            out = self.path(f"x-{precond}.npy")
            summary = json.loads(run("solve", "--matrix", matrix, "--block", 5, "--method", "cg", "--precond", precond,
                                     "--ordering", ordering, "--max-iter", 500, "--tol", 1e-10, "--out", out,
                                     "--json")[0])
            self.assertTrue(summary["converged"], summary["reason"])
            x = np.load(out)
            self.assertEqual(x.shape, (48,))
            self.assertLess(np.linalg.norm(a @ x - 1) / np.linalg.norm(np.ones(48)), 1e-9)

    def test_outcomes_and_bad_input(self):
        # Not converged: the report is printed and the exit status is 2.
        out, _ = run("solve", "--generate", "6x6x6", "--block", 2, "--precond", "none", "--max-iter", 1, expect=2)
        self.assertIn("not converged in 1 iterations", out)
        _, err = run("solve", "--generate", "4x4x4", "--block", 2, "--method", "lsqr", expect=1)
        self.assertIn("unknown method 'lsqr'", err)
        _, err = run("solve", "--matrix", os.path.join(MATRICES, "west0067.mtx"), "--rhs", self.path("none.npy"), expect=1)
        np.save(self.path("short.npy"), np.ones(3))
        _, err = run("solve", "--matrix", os.path.join(MATRICES, "west0067.mtx"), "--rhs", self.path("short.npy"), expect=1)
        self.assertIn("must have shape (67)", err)
        np.save(self.path("nan.npy"), np.full(67, np.nan))
        _, err = run("solve", "--matrix", os.path.join(MATRICES, "west0067.mtx"), "--rhs", self.path("nan.npy"),
                     "--precond", "none", expect=1)
        self.assertIn("NaN at row 0", err)
        _, err = run("solve", "--generate", "4x4x4", "--block", 2, "--precond", "jacobi", "--ordering", "colours", expect=1)
        self.assertIn("is for the ilu0 and ilu2 preconditioners", err)

class Modes(ScratchFolderTest):
    """`ziggurat modes`: subspace iteration on element-by-element K and M, against SciPy's eigsh."""

    MESH = "cantilever:1x0.1x0.15:12,2,3"

    def assembled(self, prefix, kind):
        """K or M assembled by SciPy from the element files (negative DOFs dropped)."""
        import scipy.sparse
        matrices, dofs = np.load(f"{prefix}-{kind}.npy"), np.load(f"{prefix}-dofs.npy")
        n = int(dofs.max()) + 1
        rows = np.repeat(dofs[:, :, None], dofs.shape[1], axis=2)
        cols = np.repeat(dofs[:, None, :], dofs.shape[1], axis=1)
        keep = (rows >= 0) & (cols >= 0)
        return scipy.sparse.coo_matrix((matrices[keep], (rows[keep], cols[keep])), shape=(n, n)).tocsc()

    def modes(self, *args):
        return json.loads(run("modes", *args, "--json")[0])

    def test_generated_cantilever_matches_scipy_eigsh(self):
        import scipy.sparse.linalg
        prefix = self.path("beam")
        # Colouring in both runs: atomics add in a varying order, and the comparison below is exact.
        summary = self.modes("--mesh", self.MESH, "--modes", 6, "--save-model", prefix, "--out", self.path("phi.npy"),
                             "--scatter", "colouring")
        self.assertTrue(summary["converged"], summary["reason"])
        k, m = self.assembled(prefix, "stiffness"), self.assembled(prefix, "mass")
        self.assertEqual(summary["dofs"], k.shape[0])
        want = np.sort(scipy.sparse.linalg.eigsh(k, k=6, M=m, sigma=0, which="LM")[0])
        np.testing.assert_allclose(summary["eigenvalues"], want, rtol=1e-8, atol=0)
        np.testing.assert_allclose(summary["frequencies_hz"], np.sqrt(want) / (2 * np.pi), rtol=1e-8)
        self.assertLess(max(summary["residuals"]), 1e-5)
        phi = np.load(self.path("phi.npy"))
        self.assertEqual(phi.shape, (k.shape[0], 6))
        np.testing.assert_allclose(phi.T @ (m @ phi), np.eye(6), atol=1e-7)
        np.testing.assert_allclose(phi.T @ (k @ phi), np.diag(summary["eigenvalues"]), rtol=0,
                                   atol=1e-7 * max(summary["eigenvalues"]))
        # The same model from the element files gives the same eigenvalues.
        again = self.modes("--elements", f"{prefix}-stiffness.npy", "--dofs", f"{prefix}-dofs.npy", "--mass",
                           f"{prefix}-mass.npy", "--modes", 6, "--scatter", "colouring")
        self.assertEqual(again["eigenvalues"], summary["eigenvalues"])
        for phase in ("setup", "solve", "projection", "small", "update", "total"):
            self.assertGreaterEqual(summary["times_s"][phase], 0)

    def test_matrix_free_cg_finds_the_assembled_modes(self):
        assembled = self.modes("--mesh", self.MESH, "--modes", 4)
        self.assertEqual((assembled["cg_operator"], assembled["preconditioner"]), ("assembled", "ilu0"))
        free = self.modes("--mesh", self.MESH, "--modes", 4, "--cg-operator", "matrix-free")
        self.assertEqual((free["cg_operator"], free["preconditioner"]), ("matrix-free", "block-jacobi"))
        self.assertTrue(free["converged"], free["reason"])
        np.testing.assert_allclose(free["eigenvalues"], assembled["eigenvalues"], rtol=1e-8)
        _, err = run("modes", "--mesh", self.MESH, "--modes", 4, "--cg-operator", "matrix-free",
                     "--preconditioner", "ilu0", expect=1)
        self.assertIn("ILU(0) needs the assembled matrix", err)
        _, err = run("modes", "--mesh", self.MESH, "--cg-operator", "sparse", expect=1)
        self.assertIn("--cg-operator", err)

    def test_both_projection_layouts_give_the_same_bits(self):
        runs = {layout: self.modes("--mesh", self.MESH, "--modes", 4, "--scatter", "colouring", "--projection", layout)
                for layout in ("tiles", "columns")}
        for layout, summary in runs.items():
            self.assertEqual(summary["projection_layout"], layout)
        self.assertEqual(runs["tiles"]["eigenvalues"], runs["columns"]["eigenvalues"])
        # auto takes a layout that runs here: tensor only on NVIDIA's double-precision tensor cores.
        device = next(d for d in json.loads(run("devices", "--json")[0]) if d["default"])
        tensor_runs = device["nvidia_compute_capability"] >= 80 and device["fp64"]
        self.assertIn(self.modes("--mesh", self.MESH, "--modes", 4)["projection_layout"],
                      ("tiles", "columns", "tensor") if tensor_runs else ("tiles", "columns"))
        self.check_error(["--mesh", self.MESH, "--projection", "rows"], "--projection")

    def test_tensor_layout_runs_where_there_are_tensor_cores_else_says_why(self):
        device = next(d for d in json.loads(run("devices", "--json")[0]) if d["default"])
        args = ["--mesh", self.MESH, "--modes", 4, "--scatter", "colouring", "--projection", "tensor"]
        if device["nvidia_compute_capability"] >= 80 and device["fp64"]:
            tensor = self.modes(*args)
            self.assertEqual(tensor["projection_layout"], "tensor")
            # Bricks' stiffness and consistent mass are semi-definite: both projections read factors.
            self.assertEqual(tensor["projection_factored"], {"stiffness": True, "mass": True})
            tiles = self.modes("--mesh", self.MESH, "--modes", 4, "--scatter", "colouring", "--projection", "tiles")
            np.testing.assert_allclose(tensor["eigenvalues"], tiles["eigenvalues"], rtol=1e-10)
        else:
            self.check_error(args, "compute capability 8.0")
        self.check_error(args + ["--precision", "f32"], "tensor layout")

    def test_lumped_mass_float_and_streamed_elements(self):
        import scipy.sparse
        import scipy.sparse.linalg
        prefix = self.path("lumped")
        double = self.modes("--mesh", self.MESH, "--lumped", "--modes", 4, "--save-model", prefix, "--scatter",
                            "colouring")
        m = self.assembled(prefix, "mass")
        self.assertEqual((m - scipy.sparse.diags(m.diagonal())).count_nonzero(), 0)  # diagonal
        want = np.sort(scipy.sparse.linalg.eigsh(self.assembled(prefix, "stiffness"), k=4, M=m, sigma=0)[0])
        np.testing.assert_allclose(double["eigenvalues"], want, rtol=1e-8)
        streamed = self.modes("--mesh", self.MESH, "--lumped", "--modes", 4, "--batch-elements", 32, "--scatter",
                              "colouring")
        np.testing.assert_allclose(streamed["eigenvalues"], double["eigenvalues"], rtol=1e-12)
        self.assertEqual((double["batch_elements"], streamed["batch_elements"]), (0, 32))  # small: resident
        single = self.modes("--mesh", self.MESH, "--lumped", "--modes", 4, "--precision", "f32")
        self.assertEqual(single["precision"], "f32")
        np.testing.assert_allclose(single["eigenvalues"], want, rtol=5e-3)

    def test_human_output_and_picture(self):
        out, _ = run("modes", "--mesh", "cantilever:2x0.1x0.1:20,1,1", "--modes", 3, "--png", self.path("mode.png"))
        self.assertIn("frequency (Hz)", out)
        self.assertIn("projection", out)
        with open(self.path("mode.png"), "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")

    def check_error(self, args, message):
        self.assertIn(message, run("modes", *args, expect=1)[1])

    def test_bad_input_is_a_clear_error(self):
        rng = np.random.default_rng(3)
        a = rng.uniform(-1, 1, size=(5, 4, 4))
        a = a + a.transpose(0, 2, 1) + 8 * np.eye(4)
        dofs = np.array([[0, 1, 2, 3], [2, 3, 4, 5], [4, 5, 6, 7], [6, 7, 8, 9], [8, 9, -1, -1]], np.int32)
        np.save(self.path("L.npy"), a)
        np.save(self.path("V.npy"), dofs)
        far = dofs.astype(np.int64)
        far[3, 3] = 1 << 40
        np.save(self.path("far.npy"), far)
        self.check_error(["--elements", self.path("L.npy"), "--dofs", self.path("far.npy")], "2^31")
        self.check_error(["--elements", self.path("L.npy"), "--dofs", self.path("V.npy"), "--modes", 20],
                         "only 10 DOFs")
        twice = dofs.copy()
        twice[1, 1] = 2
        np.save(self.path("twice.npy"), twice)
        self.check_error(["--elements", self.path("L.npy"), "--dofs", self.path("twice.npy")], "twice")
        skew = a.copy()
        skew[3, 0, 1] += 1
        np.save(self.path("skew.npy"), skew)
        self.check_error(["--elements", self.path("skew.npy"), "--dofs", self.path("V.npy")], "not symmetric")
        nan = a.copy()
        nan[1, 2, 2] = np.nan
        np.save(self.path("nan.npy"), nan)
        self.check_error(["--elements", self.path("nan.npy"), "--dofs", self.path("V.npy")], "NaN")
        np.save(self.path("short.npy"), dofs[:3])
        self.check_error(["--elements", self.path("L.npy"), "--dofs", self.path("short.npy")], "5")
        # Nothing holds the model: every DOF free, and a constant field costs no energy.
        springs = np.tile(np.array([[1.0, -1.0], [-1.0, 1.0]]), (4, 1, 1))
        np.save(self.path("springs.npy"), springs)
        np.save(self.path("chain.npy"), np.array([[0, 1], [1, 2], [2, 3], [3, 4]], np.int32))
        self.check_error(["--elements", self.path("springs.npy"), "--dofs", self.path("chain.npy"), "--modes", 2],
                         "rigid body")
        self.check_error(["--mesh", "plate:1x1x1:2,2,2"], "cantilever:LxWxH:nx,ny,nz")
        self.check_error(["--mesh", "cantilever:1x1:2,2,2"], "LxWxH")
        self.check_error(["--elements", self.path("L.npy"), "--dofs", self.path("V.npy"), "--png", self.path("p.png")],
                         "no geometry")
        self.check_error(["--mesh", self.MESH, "--material", "210e9,0.5,7850"], "nu")
        self.check_error(["--mesh", self.MESH, "--preconditioner", "magic"], "--preconditioner")


class Wave(ScratchFolderTest):
    """`ziggurat wave`: 2D and 3D elastic waves, seismograms of a Ricker source."""

    def wave(self, *args):
        return json.loads(run("wave", *args, "--json", "--quiet")[0])

    def test_direct_p_wave_arrives_at_distance_over_vp(self):
        receivers = self.path("r.npy")
        np.save(receivers, np.array([[1000.0, 500.0], [1400.0, 500.0]]))  # 0 and 400 m from the source
        out = self.path("seis.npy")
        summary = self.wave("--size", "201x101", "--dx", 10, "--medium", "3000,1500,2500", "--source", "1000,500",
                            "--freq", 15, "--steps", 200, "--receivers", receivers, "--out", out)
        self.assertLessEqual(summary["dt"], summary["dt_limit"])
        seis = np.load(out)
        self.assertEqual(seis.shape, (2, 200, 2))
        times = (np.arange(200) + 1) * summary["dt"]
        # An explosion: P only; its peak at the far receiver comes 400 m / vp after the source's.
        peak = times[np.argmax(np.abs(seis[1, :, 0]))] - 1.5 / 15
        self.assertLess(abs(peak - 400 / 3000), 1 / 15)
        again = self.path("again.npy")
        self.wave("--size", "201x101", "--dx", 10, "--medium", "3000,1500,2500", "--source", "1000,500",
                  "--freq", 15, "--steps", 200, "--receivers", receivers, "--out", again)
        self.assertEqual(np.load(again).tobytes(), seis.tobytes())  # the same bits every run

    def test_several_devices_and_halo_depths_give_the_bits_of_one(self):
        common = ("--size", "90x70", "--steps", 150, "--source", "450,300", "--absorbing", 8)
        one = self.wave(*common, "--out", self.path("one.npy"))
        same = "name:" + one["device"]  # the device of the single run, once per block
        for devices, s in ((f"{same}/{same}", 1), (f"{same}/{same}/{same}", 3)):
            split = self.wave(*common, "--devices", devices, "--halo-steps", s, "--out", self.path("split.npy"))
            self.assertEqual((split["devices"], split["halo_steps"]), (devices.count("/") + 1, s))
            self.assertEqual(np.load(self.path("split.npy")).tobytes(), np.load(self.path("one.npy")).tobytes())
        # The cost model's s and the measured shares (one device twice: equal), and equal shares.
        for extra in ((), ("--split", "equal", "--halo-steps", "auto")):
            split = self.wave(*common, "--devices", f"{same}/{same}", *extra, "--out", self.path("split.npy"))
            self.assertEqual(split["halo_steps_chosen_by"], "model")
            self.assertGreaterEqual(split["halo_steps"], 1)
            self.assertEqual(np.load(self.path("split.npy")).tobytes(), np.load(self.path("one.npy")).tobytes())
        _, err = run("wave", *common, "--devices", f"{same}/{same}", "--halo-steps", 60, expect=1)
        self.assertIn("smaller than its halo", err)
        for bad in ("deep", "-1"):  # -1 once read as 2^64 - 1
            _, err = run("wave", *common, "--devices", f"{same}/{same}", "--halo-steps", bad, expect=1)
            self.assertIn("--halo-steps is auto or a whole number", err)
        _, err = run("wave", *common, "--devices", f"{same}/{same}", "--split", "fair", expect=1)
        self.assertIn("--split is measured or equal", err)

    def test_mpi_ranks_give_the_bits_of_one_process(self):
        mpirun = shutil.which("mpirun")
        if mpirun is None:
            self.skipTest("no mpirun: scripts/setup.sh installs openmpi-bin")
        env = mpi_environment()
        common = ("--size", "90x70", "--steps", 150, "--source", "450,300", "--absorbing", 8, "--quiet")
        one = self.wave(*common, "--out", self.path("one.npy"))
        same = "name:" + one["device"]

        def ranks(count, *args, environment=env):
            return subprocess.run([mpirun, "-np", str(count), "--oversubscribe", support.ZIGGURAT, "wave",
                                   *map(str, common), *map(str, args)],
                                  capture_output=True, text=True, timeout=300, env=environment)
        for count, s in ((2, 1), (3, 2)):
            done = ranks(count, "--device", same, "--halo-steps", s, "--out", self.path("ranks.npy"), "--json")
            self.assertEqual(done.returncode, 0, done.stderr)
            self.assertEqual(json.loads(done.stdout)["ranks"], count)
            self.assertEqual(np.load(self.path("ranks.npy")).tobytes(), np.load(self.path("one.npy")).tobytes())
        # More ranks than devices without --device: a clear error, and the whole job ends.
        listed = json.loads(run("devices", "--json")[0])
        pool = [d for d in listed if d["type"] == "gpu"] or [d for d in listed if d["type"] == "cpu"]
        done = ranks(len(pool) + 1, environment={k: v for k, v in env.items() if k != "ZIGGURAT_DEVICE"})
        self.assertNotEqual(done.returncode, 0)
        self.assertIn("ranks on this host but", done.stderr)

    def test_snapshots_draw_the_field_and_keep_the_seismograms(self):
        common = ("--size", "80x50", "--steps", 90, "--absorbing", 5)
        self.wave(*common, "--out", self.path("plain.npy"))
        os.mkdir(self.path("pictures"))
        self.wave(*common, "--snapshots", 40, "--png-dir", self.path("pictures"), "--out", self.path("drawn.npy"))
        self.assertEqual(sorted(os.listdir(self.path("pictures"))), ["uz-000040.png", "uz-000080.png", "uz-000090.png"])
        with open(os.path.join(self.path("pictures"), "uz-000090.png"), "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
        self.assertEqual(np.load(self.path("drawn.npy")).tobytes(), np.load(self.path("plain.npy")).tobytes())
        _, err = run("wave", *common, "--snapshots", 40, expect=1)
        self.assertIn("go together", err)

    def test_gridded_model_gives_the_layered_bits(self):
        layers = self.path("layers.json")
        with open(layers, "w") as f:
            json.dump([{"top": 0, "vp": 2000, "vs": 1000, "rho": 2000},
                       {"top": 200, "vp": 3500, "vs": 2000, "rho": 2600}], f)
        depth = (np.arange(39) + 0.5) * 10
        for name, (top, bottom) in {"vp": (2000, 3500), "vs": (1000, 2000), "rho": (2000, 2600)}.items():
            np.save(self.path(f"{name}.npy"), np.repeat(np.where(depth < 200, top, bottom)[:, None], 59, axis=1).astype(float))
        common = ("--dx", 10, "--steps", 120, "--dt", 0.002, "--out")
        self.wave("--size", "60x40", "--model", layers, *common, self.path("a.npy"))
        self.wave("--vp", self.path("vp.npy"), "--vs", self.path("vs.npy"), "--rho", self.path("rho.npy"), *common,
                  self.path("b.npy"))
        a, b = np.load(self.path("a.npy")), np.load(self.path("b.npy"))
        self.assertEqual(a.shape, (6, 120, 2))
        self.assertGreater(np.abs(a).max(), 0)
        self.assertEqual(a.tobytes(), b.tobytes())

    def test_bad_input_is_a_clear_error(self):
        _, err = run("wave", "--size", "60x40", "--dt", 1, "--steps", 2, expect=1)
        self.assertIn("stability (CFL) limit", err)
        _, err = run("wave", "--size", "60x40", "--source", "900,10", "--steps", 2, expect=1)
        self.assertIn("outside the grid", err)
        np.save(self.path("vp.npy"), np.full((9, 9), 3000.0))
        np.save(self.path("vs.npy"), np.full((9, 8), 1500.0))
        np.save(self.path("rho.npy"), np.full((9, 9), 2500.0))
        _, err = run("wave", "--vp", self.path("vp.npy"), "--vs", self.path("vs.npy"), "--rho", self.path("rho.npy"),
                     expect=1)
        self.assertIn("must match", err)
        _, err = run("wave", "--size", "60x40", "--medium", "1000,900,2000", expect=1)
        self.assertIn("vp > 1.155 vs", err)
        _, err = run("wave", "--size", "60x40", "--dims", 3, expect=1)
        self.assertIn("NXxNYxNZ", err)
        _, err = run("wave", "--size", "20x20x20", "--dims", 3, "--source", "100,100", expect=1)
        self.assertIn("x,y,z", err)
        _, err = run("wave", "--vp", self.path("vp.npy"), "--vs", self.path("vp.npy"), "--rho", self.path("vp.npy"),
                     "--dims", 3, expect=1)
        self.assertIn("must be 3D", err)
        _, err = run("wave", "--size", "60x40", "--dims", 4, expect=1)
        self.assertIn("2 or 3", err)

    def test_3d_runs_split_over_devices_and_ranks_with_the_bits_of_one(self):
        receivers = self.path("r.npy")
        np.save(receivers, np.array([[50.0, 60.0, 0.0], [120.0, 90.0, 40.0]]))
        common = ("--dims", 3, "--size", "22x19x24", "--steps", 40, "--receivers", receivers, "--absorbing", 4,
                  "--source-kind", "force", "--force", "0.2,0.4,1")
        one = self.wave(*common, "--out", self.path("one.npy"))
        self.assertEqual((one["dims"], one["nx"], one["ny"], one["nz"]), (3, 22, 19, 24))
        self.assertEqual(len(one["source_node"]), 3)
        seis = np.load(self.path("one.npy"))
        self.assertEqual(seis.shape, (2, 40, 3))
        self.assertGreater(np.abs(seis).max(), 0)
        same = "name:" + one["device"]
        self.wave(*common, "--devices", f"{same}/{same}", "--halo-steps", 2, "--out", self.path("split.npy"))
        self.assertEqual(np.load(self.path("split.npy")).tobytes(), seis.tobytes())
        os.mkdir(self.path("pictures"))
        self.wave(*common, "--snapshots", 40, "--png-dir", self.path("pictures"))
        self.assertEqual(os.listdir(self.path("pictures")), ["uz-000040.png"])
        mpirun = shutil.which("mpirun")
        if mpirun is None:
            return
        done = subprocess.run([mpirun, "-np", "2", "--oversubscribe", support.ZIGGURAT, "wave", *map(str, common), "--device",
                               same, "--out", self.path("ranks.npy"), "--json", "--quiet"],
                              capture_output=True, text=True, timeout=300, env=mpi_environment())
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(np.load(self.path("ranks.npy")).tobytes(), seis.tobytes())


if __name__ == "__main__":
    support.main()
