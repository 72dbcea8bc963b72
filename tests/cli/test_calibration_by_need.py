#!/usr/bin/env python3
"""Calibration by need (issue 39, item 8): a command measures the device figures and the rates of the
kernels it runs, and records them; a later command of another family adds its own to the same
profile without measuring the first one's again; processes that race measure each family once;
`ziggurat calibrate` completes the profile.

Usage: test_calibration_by_need.py PATH/TO/ziggurat
"""
import glob
import json
import os
import subprocess

import cli_support as support
from cli_support import ScratchFolderTest, run

MATRIX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "matrices", "bcsstk01.mtx")
HEAT = ("heat", "--size", "33x17", "--steps", "2", "--json")
POISSON = ("poisson", "--size", "10x10x10", "--problem", "manufactured", "--max-sweeps", "3", "--tol", "0", "--json")
# What every command measures, whatever kernels it runs.
DEVICE_FIGURES = {"host memory", "pinned transfers", "pageable transfers", "rect transfers", "launches",
                  "copy bandwidth", "overlap"}


class ProfileTest(ScratchFolderTest):
    def env(self):
        return {"ZIGGURAT_CACHE_DIR": self.path("cache")}

    def ziggurat(self, *args):
        return run(*args, env=self.env())

    def profile(self):
        """The cached profile's JSON, and its text."""
        paths = glob.glob(os.path.join(self.path("cache"), "profiles", "*.json"))
        self.assertEqual(len(paths), 1, paths)
        with open(paths[0]) as f:
            text = f.read()
        return json.loads(text), text

    def rates(self, profile):
        return {(k["kernel"], k["value_bytes"]): k["ns_per_node"] for k in profile["kernels"]}

    def phases(self, profile):
        return [phase["name"] for phase in profile["phases"]]


class OneCommandAfterAnother(ProfileTest):
    def test_heat_records_only_its_rate_and_poisson_adds_its_own(self):
        out = json.loads(self.ziggurat(*HEAT)[0])
        self.assertEqual(out["profile"], "measured now")
        profile, _ = self.profile()
        self.assertEqual(set(self.rates(profile)), {("heat2d_box", 4)})
        self.assertFalse(profile["vector_calls_measured"])
        self.assertEqual(self.phases(profile).count("rate heat2d_box f32"), 1)
        self.assertTrue(DEVICE_FIGURES <= set(self.phases(profile)), self.phases(profile))
        heat_rate = self.rates(profile)[("heat2d_box", 4)]

        # Another heat run of the same kernel: nothing to measure, the file untouched.
        _, before = self.profile()
        self.assertEqual(json.loads(self.ziggurat(*HEAT)[0])["profile"], "cached")
        self.assertEqual(self.profile()[1], before)

        out = json.loads(self.ziggurat(*POISSON)[0])
        self.assertEqual(out["profile"], "measured now")
        profile, _ = self.profile()
        self.assertEqual(set(self.rates(profile)), {("heat2d_box", 4), ("jacobi3d_box", 4)})
        self.assertEqual(self.rates(profile)[("heat2d_box", 4)], heat_rate)  # not measured again
        phases = self.phases(profile)
        for name in DEVICE_FIGURES | {"rate heat2d_box f32", "rate jacobi3d_box f32"}:
            self.assertEqual(phases.count(name), 1, phases)
        self.assertAlmostEqual(profile["calibration_s"], sum(p["seconds"] for p in profile["phases"]), delta=0.5)

        # A 3D double heat run adds that kernel alone.
        self.ziggurat("heat", "--size", "12x10x9", "--steps", "2", "--precision", "f64", "--json")
        profile, _ = self.profile()
        self.assertEqual(set(self.rates(profile)), {("heat2d_box", 4), ("jacobi3d_box", 4), ("heat3d_box", 8)})

    def test_solve_and_spmm_plan_without_the_profile_and_leave_it_as_it_was(self):
        self.ziggurat(*HEAT)
        _, before = self.profile()
        self.ziggurat("solve", "--matrix", MATRIX, "--method", "cg", "--json")
        self.ziggurat("spmm", "--matrix", MATRIX, "--repeat", 1)
        self.assertEqual(self.profile()[1], before)

    def test_calibrate_completes_a_partial_profile_and_keeps_what_was_measured(self):
        self.ziggurat(*HEAT)
        heat_rate = self.rates(self.profile()[0])[("heat2d_box", 4)]
        out, _ = self.ziggurat("calibrate")
        self.assertIn("completed the cached profile", out)
        self.assertIn("rate jacobi3d_box f32;", out)
        self.assertNotIn("rate heat2d_box f32;", out.split("completed")[1].split(")")[0])
        profile, _ = self.profile()
        self.assertEqual(self.rates(profile)[("heat2d_box", 4)], heat_rate)
        self.assertEqual(len(profile["kernels"]), 8)  # PoCL has fp64: 3 heat kernels and the sweep, twice
        self.assertTrue(profile["vector_calls_measured"])
        self.assertEqual(self.phases(profile).count("host memory"), 1)
        # --force measures everything again, the heat rate included.
        forced = json.loads(self.ziggurat("calibrate", "--force", "--json")[0])
        self.assertEqual(self.phases(forced).count("rate heat2d_box f32"), 1)
        self.assertNotEqual(forced["date"] + str(self.rates(forced)[("heat2d_box", 4)]),
                            profile["date"] + str(heat_rate))


class RacingCommands(ProfileTest):
    def test_four_processes_of_two_families_measure_each_family_once(self):
        env = {**os.environ, **self.env()}
        commands = [HEAT, POISSON, HEAT, POISSON]
        processes = [subprocess.Popen([support.ZIGGURAT, *command], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      text=True, env=env) for command in commands]
        outputs = [p.communicate(timeout=600) for p in processes]
        for p, (_, err) in zip(processes, outputs):
            self.assertEqual(p.returncode, 0, err)
        origins = [json.loads(out)["profile"] for out, _ in outputs]
        # The first to take the lock measures the device figures and its rate, the first of the other
        # family adds its own rate; the second of each family finds its rate cached (after the lock,
        # when it looked before the first of its family had stored it).
        self.assertEqual(sorted(origins), ["cached", "cached", "measured now", "measured now"])
        profile, _ = self.profile()
        self.assertEqual(set(self.rates(profile)), {("heat2d_box", 4), ("jacobi3d_box", 4)})
        phases = self.phases(profile)
        for name in DEVICE_FIGURES | {"rate heat2d_box f32", "rate jacobi3d_box f32"}:
            self.assertEqual(phases.count(name), 1, phases)


if __name__ == "__main__":
    support.main()
