#!/usr/bin/env python3
"""`ziggurat model`: the cost model's plans, sweeps and plots, with given constants and a calibrated
device.

Usage: test_model.py PATH/TO/ziggurat
"""
import json
import os
import subprocess
import tempfile
import unittest

import cli_support as support
from cli_support import run


class Model(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.dir.cleanup()

    def test_explicit_plan(self):
        out = json.loads(run("model", "--grid", "8194", "--steps", "200", "--device-memory", "64MiB", "--tau-c", "2",
                             "--tau-a", "0.2", "--json")[0])
        plan = out["plan"]
        self.assertIn(plan["decomposition"], ("strip", "block"))
        self.assertGreaterEqual(plan["height"], 1)
        self.assertGreater(plan["speedup_over_trivial"], 1)
        self.assertEqual(out["schedule"], "overlapped")
        human = run("model", "--grid", "8194", "--steps", "200", "--device-memory", "64MiB", "--tau-c", "2",
                    "--tau-a", "0.2", "--serial", "--decomposition", "strip")[0]
        self.assertIn("plan: strip, height n = ", human)
        self.assertIn("serial schedule", human)

    def test_height_can_be_fixed(self):
        out = json.loads(run("model", "--grid", "4098", "--steps", "100", "--device-memory", "16MiB", "--tau-c", "1",
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
        out = json.loads(run("model", "--grid", "4098", "--steps", "50", "--device-memory", "8MiB", "--device", "0",
                             "--json")[0])
        self.assertGreater(out["constants"]["tau_a_ns"], 0)
        self.assertIn("profile", out)
        run("model", "--dims", "3", "--grid", "200", "--device-memory", "8MiB", "--device", "0", "--tau-a", "0.5")
        lv = json.loads(run("model", "--scheme", "long-vector", "--grid", "1026", "--device", "0", "--json")[0])
        self.assertGreater(lv["ns_per_node"], 0)
        self.assertGreater(lv["numstreams"], 0)

    def test_jacobi(self):
        out = json.loads(run("model", "--scheme", "jacobi", "--dims", "3", "--grid", "800", "--planes", "4000",
                             "--device-memory", "4GiB", "--tau-c", "2.35", "--tau-a", "0.6", "--json")[0])
        self.assertGreater(out["halo"], 1)

    def test_bad_model_arguments(self):
        base = ["model", "--grid", "1026", "--tau-c", "1", "--tau-a", "1"]
        self.assertIn("needs at least 48.09 KiB", run(*base, "--device-memory", "4KiB", "--decomposition", "strip", expect=1)[1])
        self.assertIn("give --tau-c and --tau-a", run("model", "--device-memory", "1GiB", expect=1)[1])
        self.assertIn("is not a memory size", run(*base, "--device-memory", "12XB", expect=1)[1])
        self.assertIn("give the device-memory budget", run(*base, expect=1)[1])
        self.assertIn("--plot draws a --sweep", run(*base, "--device-memory", "1GiB", "--plot", "x.png", expect=1)[1])
        self.assertIn("n = 500 on grid 1026x1026 in the overlapped schedule: the smallest task (one owned row and n halo a side, 4 buffers) needs at least 15.67 MiB", run(*base, "--device-memory", "64KiB", "--height", "500", "--decomposition", "strip",
                                   expect=1)[1])
        self.assertIn("for 2D grids", run("model", "--dims", "3", "--grid", "100", "--tau-c", "1", "--tau-a", "1",
                                          "--device-memory", "1MiB", "--decomposition", "block", expect=1)[1])
        self.assertIn("excludes", run(*base, "--device-memory", "1GiB", "--serial", "--overlapped", expect=1)[1])
        jacobi = ["model", "--scheme", "jacobi", "--dims", "3", "--tau-c", "1", "--tau-a", "1"]
        self.assertIn("at least 3 planes", run(*jacobi, "--grid", "4294967296", "--device-memory", "1GiB", expect=1)[1])
        self.assertIn("too many to try", run(*jacobi, "--grid", "3", "--planes", "100000000000000000",
                                             "--device-memory", "17000000TB", expect=1)[1])
        self.assertIn("3 planes", run(*jacobi, "--grid", "100", "--planes", "2", "--device-memory", "1GiB", expect=1)[1])

    def test_absurd_sizes_are_planned_quickly_or_refused(self):
        out = json.loads(run("model", "--grid", "2050", "--steps", "100000000", "--device-memory", "4MiB", "--tau-c", "1",
                             "--tau-a", "0.1", "--json")[0])
        self.assertGreater(out["plan"]["passes"], 1000000)
        out = json.loads(run("model", "--grid", "32768", "--steps", "100000", "--device-memory", "16GiB", "--tau-c", "1",
                             "--tau-a", "0.1", "--json")[0])
        self.assertEqual(out["plan"]["decomposition"], "incore")

    def test_sweep_rows_that_hold_no_pyramid_are_reported(self):
        out = json.loads(run("model", "--grid", "2050", "--steps", "10", "--tau-a", "0.1", "--sweep", "--json",
                             "--memories", "1KiB,16MiB", "--ratios", "5")[0])
        self.assertEqual(len(out["rows"]), 4)
        self.assertIn("error", out["rows"][0])
        self.assertIn("plan", out["rows"][3])


if __name__ == "__main__":
    support.main()
