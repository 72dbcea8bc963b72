#!/usr/bin/env python3
"""The `ziggurat` command-line tool, end to end, checked against NumPy.

Usage: test_cli.py PATH/TO/ziggurat
"""
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

import numpy as np

ZIGGURAT = None


def run(*args, expect=0):
    """Runs ziggurat; checks its exit code; returns (stdout, stderr)."""
    done = subprocess.run([ZIGGURAT, *map(str, args)], capture_output=True, text=True, timeout=600)
    if done.returncode != expect:
        raise AssertionError(f"ziggurat {' '.join(map(str, args))} exited {done.returncode}, expected {expect}\n"
                             f"stdout:\n{done.stdout}\nstderr:\n{done.stderr}")
    return done.stdout, done.stderr


def numpy_heat(u, alpha, steps):
    """The scheme of include/ziggurat/heat.hpp, in the same order of operations, in u's dtype."""
    u = u.copy()
    a = u.dtype.type(alpha)
    b = u.dtype.type(1.0 - 4.0 * alpha)
    for _ in range(steps):
        s = ((u[1:-1, :-2] + u[1:-1, 2:]) + u[:-2, 1:-1]) + u[2:, 1:-1]
        v = u.copy()
        v[1:-1, 1:-1] = a * s + b * u[1:-1, 1:-1]
        u = v
    return u


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


class Devices(unittest.TestCase):
    def test_json_lists_devices_with_one_default(self):
        devices = json.loads(run("devices", "--json")[0])
        self.assertGreaterEqual(len(devices), 1)
        self.assertEqual(sum(d["default"] for d in devices), 1)
        for d in devices:
            for key in ("name", "platform", "type", "fp64", "global_mem_bytes", "max_alloc_bytes",
                        "max_work_group_size", "preferred_work_group_multiple", "base_address_align_bytes",
                        "compute_units", "driver_version", "host_unified_memory"):
                self.assertIn(key, d)
            self.assertGreaterEqual(d["preferred_work_group_multiple"], 1)

    def test_table_marks_one_default(self):
        out = run("devices")[0]
        self.assertIn("WG mult", out)
        self.assertEqual(len(re.findall(r"^\d+\*\s", out, re.MULTILINE)), 1, out)


class Heat(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.tmp = self.dir.name

    def tearDown(self):
        self.dir.cleanup()

    def path(self, name):
        return os.path.join(self.tmp, name)

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
        self.check_error(["heat", "--size", "10"], "expected 2 extents")
        self.check_error(["heat", "--size", "10xabc"], "'abc' is not a positive integer")
        self.check_error(["heat", "--size", "0x5"], "an extent is zero")
        self.check_error(["heat", "--size", "2x5"], "at least 3 x 3")
        self.check_error(["heat", "--device", "no-such-device-anywhere"], "no OpenCL device matches")
        self.check_error(["heat", "--device", "vendor:x"], "unknown key 'vendor:'")
        self.check_error(["heat", "--precision", "f16"], "f16", expect=105)
        self.check_error(["heat", "--steps", "-3"], "steps", expect=105)
        self.check_error(["heat", "--out", self.path("missing/out.npy")], "does not exist")
        self.check_error(["heat", "--out", self.tmp], "is a folder")
        self.check_error(["heat", "--size", "1000000x1000000"], "needs two device buffers")

    def test_bad_init_files_are_clear_errors(self):
        self.check_error(["heat", "--init", self.path("missing.npy")], "cannot open")
        np.save(self.path("ints.npy"), np.zeros((5, 5), dtype=np.int32))
        self.check_error(["heat", "--init", self.path("ints.npy")], "dtype is '<i4'")
        np.save(self.path("cube.npy"), np.zeros((4, 5, 5)))
        self.check_error(["heat", "--init", self.path("cube.npy")], "3D array")
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

    def test_explicit_precision_wins_over_the_input_type(self):
        np.save(self.path("init.npy"), np.zeros((9, 9)))
        run("heat", "--init", self.path("init.npy"), "--out", self.path("out.npy"), "--precision", "f32")
        self.assertEqual(np.load(self.path("out.npy")).dtype, np.float32)

    def test_refused_run_writes_no_output(self):
        run("heat", "--alpha", "0.9", "--out", self.path("never.npy"), expect=1)
        self.assertEqual(os.listdir(self.tmp), [])


class Misc(unittest.TestCase):
    def test_version_and_cache(self):
        self.assertRegex(run("--version")[0], r"\d+\.\d+\.\d+")
        self.assertIn("program cache", run("cache")[0])

    def test_no_subcommand_is_a_usage_error(self):
        run(expect=106)


if __name__ == "__main__":
    ZIGGURAT = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
