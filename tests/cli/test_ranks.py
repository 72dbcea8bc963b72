#!/usr/bin/env python3
"""MPI ranks given arguments that disagree fail at once, naming the value and the ranks, instead
of corrupting the heap, hanging, or writing a wrong field (item 3 of issue 38).

Usage: test_ranks.py PATH/TO/ziggurat
"""
import json
import os
import shutil
import signal
import subprocess
import time

import numpy as np

import cli_support as support
from cli_support import ScratchFolderTest, mpi_environment, run


class DisagreeingRanks(ScratchFolderTest):
    def setUp(self):
        super().setUp()
        self.mpirun = shutil.which("mpirun")
        if self.mpirun is None:
            self.skipTest("no mpirun: scripts/setup.sh installs openmpi-bin")
        self.device = "name:" + json.loads(run("heat", "--size", "9x9", "--steps", "1", "--json")[0])["device"]

    def two_ranks(self, first, second):
        """`mpirun -np 1 ziggurat FIRST : -np 1 ziggurat SECOND`; returns the finished process."""
        command = [self.mpirun, "--oversubscribe", "-np", "1", support.ZIGGURAT, *map(str, first), ":", "-np", "1",
                   support.ZIGGURAT, *map(str, second)]
        return subprocess.run(command, capture_output=True, text=True, timeout=120, env=mpi_environment())

    def assert_refused(self, first, second, phrase):
        done = self.two_ranks(first, second)
        self.assertNotEqual(done.returncode, 0, done.stdout)
        self.assertIn("the ranks disagree on " + phrase, done.stderr)
        self.assertNotIn("double free", done.stderr)
        self.assertNotIn("MPI_Waitall", done.stderr)

    def command(self, name, defaults, changes, flags=()):
        options = {**defaults, "--device": self.device, **changes}
        return (name, *[str(v) for pair in options.items() for v in pair], "--quiet", *flags)

    def heat(self, *flags, **changes):
        defaults = {"--size": "64x64", "--steps": 8, "--height": 4, "--precision": "f32"}
        return self.command("heat", defaults, {"--" + k: v for k, v in changes.items()}, flags)

    def test_heat_ranks_agree_on_type_steps_height_and_grid(self):
        self.assert_refused(self.heat(), self.heat(precision="f64"), "--precision")
        self.assert_refused(self.heat(), self.heat(steps=9), "--steps")
        self.assert_refused(self.heat(), self.heat(height=2), "--height")
        self.assert_refused(self.heat(), self.heat(size="64x65"), "the grid")

    def test_heat_ranks_refuse_init_files_of_different_shapes(self):
        a, b = self.path("a.npy"), self.path("b.npy")
        np.save(a, np.ones((64, 64), dtype=np.float32))
        np.save(b, np.ones((66, 64), dtype=np.float32))
        out = self.path("u.npy")
        self.assert_refused(("heat", "--init", a, "--steps", 4, "--device", self.device, "--out", out),
                            ("heat", "--init", b, "--steps", 4, "--device", self.device, "--out", out), "the grid")
        self.assertFalse(os.path.exists(out))

    def wave(self, **changes):
        defaults = {"--size": "41x31", "--steps": 6, "--halo-steps": 2, "--precision": "f32", "--freq": 10}
        return self.command("wave", defaults, {"--" + k.replace("_", "-"): v for k, v in changes.items()})

    def test_wave_ranks_agree_on_grid_steps_and_halos(self):
        self.assert_refused(self.wave(), self.wave(precision="f64"), "--precision")
        self.assert_refused(self.wave(), self.wave(steps=7), "--steps")
        self.assert_refused(self.wave(), self.wave(halo_steps=3), "--halo-steps")
        self.assert_refused(self.wave(), self.wave(size="41x33"), "the grid's nodes")
        self.assert_refused(self.wave(), self.wave(freq=12), "the source's frequency")

    def test_a_killed_rank_ends_the_job_at_once(self):
        command = [self.mpirun, "--oversubscribe", "-np", "2", support.ZIGGURAT, *map(str, self.heat(size="1024x1024",
                                                                                                  steps=100000))]
        job = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               env=mpi_environment())
        try:
            ranks = []
            deadline = time.monotonic() + 60
            while len(ranks) < 2 and time.monotonic() < deadline:  # the ranks are mpirun's children
                time.sleep(0.5)
                found = subprocess.run(["pgrep", "-P", str(job.pid)], capture_output=True, text=True).stdout.split()
                ranks = [int(pid) for pid in found]
            self.assertEqual(len(ranks), 2, "the ranks did not start")
            time.sleep(2)  # into the run
            os.kill(ranks[1], signal.SIGKILL)
            killed = time.monotonic()
            job.wait(timeout=30)
            self.assertLess(time.monotonic() - killed, 5)
            self.assertNotEqual(job.returncode, 0)
        finally:
            if job.poll() is None:
                job.kill()

    def test_ranks_that_agree_still_run(self):
        done = self.two_ranks(self.heat("--json"), self.heat("--json"))
        self.assertEqual(json.loads(done.stdout)["ranks"], 2)
        self.assertEqual(done.returncode, 0, done.stderr)


if __name__ == "__main__":
    support.main()
