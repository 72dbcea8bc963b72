#!/usr/bin/env python3
"""Batch runs (issue 41, item 2): progress lines off a terminal, SIGTERM stopping a heat run at a
whole pass with that pass in --out and a restart from it ending on the bits of an uninterrupted
run, the thread cap's variables, and MPI ranks that each see one device taking it.

Usage: test_batch.py PATH/TO/ziggurat
"""
import json
import os
import re
import shutil
import signal
import subprocess

import numpy as np

import cli_support as support
from cli_support import ScratchFolderTest, mpi_environment, run

HEAT = ("heat", "--size", "512x512", "--height", "4", "--device-memory", "2MiB", "--precision", "f32")


class Progress(ScratchFolderTest):
    def test_off_a_terminal_heat_prints_timestamped_progress_lines(self):
        _, err = run(*HEAT, "--steps", 40, env={"ZIGGURAT_PROGRESS_SECONDS": "0"})
        lines = [line for line in err.splitlines() if "heat: pass" in line]
        self.assertGreaterEqual(len(lines), 2, err)
        self.assertRegex(lines[-1], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ heat: pass (\d+)/\1, steps 40/40")
        self.assertNotIn("\r", err)

    def test_lines_are_spaced_by_the_interval_and_the_last_is_always_printed(self):
        _, err = run(*HEAT, "--steps", 40, env={"ZIGGURAT_PROGRESS_SECONDS": "3600"})
        lines = [line for line in err.splitlines() if "heat: pass" in line]
        self.assertEqual(len(lines), 2, err)  # the first pass, then the last
        self.assertIn("steps 40/40", lines[-1])

    def test_progress_never_and_quiet_print_none_and_always_prints_with_json(self):
        for flags in (("--progress", "never"), ("--quiet",)):
            _, err = run(*HEAT, "--steps", 8, *flags)
            self.assertNotIn("heat: pass", err)
        out, err = run(*HEAT, "--steps", 8, "--json", "--progress", "always")
        self.assertIn("heat: pass", err)
        self.assertEqual(json.loads(out)["steps"], 8)
        _, err = run(*HEAT, "--steps", 8, "--progress", "sometimes", expect=1)
        self.assertIn("--progress is auto, always or never", err)

    def test_wave_prints_progress_lines_too(self):
        _, err = run("wave", "--size", "60x40", "--steps", 300, "--progress", "always",
                     env={"ZIGGURAT_PROGRESS_SECONDS": "0"})
        self.assertRegex(err, r"Z wave: step 300 of 300")


class StopOnSignal(ScratchFolderTest):
    def stopped_run(self, sig, steps):
        """A heat run of `steps` stopped by `sig` after its first progress line; (returncode, stderr)."""
        job = subprocess.Popen([support.ZIGGURAT, *HEAT, "--steps", str(steps), "--out", self.path("stopped.npy")],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "ZIGGURAT_PROGRESS_SECONDS": "0"})
        seen = ""
        while "heat: pass" not in seen:
            line = job.stderr.readline()
            self.assertTrue(line, "the run ended before its first pass was reported")
            seen += line
        job.send_signal(sig)
        _, err = job.communicate(timeout=300)
        return job.returncode, seen + err

    def test_sigterm_writes_the_last_whole_pass_and_a_restart_ends_on_the_uninterrupted_bits(self):
        steps = 2000
        status, err = self.stopped_run(signal.SIGTERM, steps)
        self.assertEqual(status, 128 + signal.SIGTERM, err)
        done = int(re.search(r"stopped by SIGTERM after (\d+) of 2000 steps", err).group(1))
        self.assertTrue(0 < done < steps and done % 4 == 0, err)  # whole passes of n = 4
        self.assertIn(f"--init {self.path('stopped.npy')} --steps {steps - done}", err)
        run(*HEAT, "--steps", done, "--out", self.path("same_passes.npy"), "--quiet")
        stopped = np.load(self.path("stopped.npy"))
        self.assertEqual(stopped.tobytes(), np.load(self.path("same_passes.npy")).tobytes())
        run("heat", "--init", self.path("stopped.npy"), "--steps", steps - done, "--height", 4, "--device-memory", "2MiB",
            "--out", self.path("resumed.npy"), "--quiet")
        run(*HEAT, "--steps", steps, "--out", self.path("whole.npy"), "--quiet")
        self.assertEqual(np.load(self.path("resumed.npy")).tobytes(), np.load(self.path("whole.npy")).tobytes())

    def test_sigint_stops_the_same_way(self):
        status, err = self.stopped_run(signal.SIGINT, 2000)
        self.assertEqual(status, 128 + signal.SIGINT, err)
        self.assertIn("stopped by SIGINT", err)
        self.assertEqual(np.load(self.path("stopped.npy")).shape, (512, 512))


class ThreadCap(ScratchFolderTest):
    SOLVE = ("solve", "--generate", "16x16x16", "--system", "laplace7", "--preconditioner", "ilu2", "--quiet")

    def test_a_thread_count_that_is_no_number_is_refused_naming_the_variable(self):
        for name in ("ZIGGURAT_NUM_THREADS", "OMP_NUM_THREADS"):
            _, err = run(*self.SOLVE, expect=1, env={"ZIGGURAT_NUM_THREADS": "", name: "many"})
            self.assertIn(f"{name}=many is no thread count", err)

    def test_the_solution_does_not_depend_on_the_cap(self):
        caps = ({"ZIGGURAT_NUM_THREADS": "1"}, {"ZIGGURAT_NUM_THREADS": "2"},
                {"ZIGGURAT_NUM_THREADS": "", "OMP_NUM_THREADS": "1,1"})
        for i, cap in enumerate(caps):
            run(*self.SOLVE, "--out", self.path(f"x{i}.npy"), env=cap)
        first = np.load(self.path("x0.npy")).tobytes()
        for i in range(1, len(caps)):
            self.assertEqual(np.load(self.path(f"x{i}.npy")).tobytes(), first, caps[i])


class OneDeviceARank(ScratchFolderTest):
    def test_ranks_that_each_see_one_device_take_it(self):
        mpirun = shutil.which("mpirun")
        if mpirun is None:
            self.skipTest("no mpirun: scripts/setup.sh installs openmpi-bin")
        listed = json.loads(run("devices", "--json")[0])["devices"]
        pool = [d for d in listed if d["type"] == "gpu"] or [d for d in listed if d["type"] == "cpu"]
        if len(pool) != 1:
            self.skipTest(f"this host shows {len(pool)} devices of one kind; the rule is for a rank that sees one")
        args = ("--size", "128x96", "--steps", 16, "--height", 4, "--precision", "f32", "--quiet")
        run("heat", *args, "--out", self.path("one.npy"))
        env = {k: v for k, v in mpi_environment().items() if k != "ZIGGURAT_DEVICE"}
        done = subprocess.run([mpirun, "-np", "2", "--oversubscribe", support.ZIGGURAT, "heat", *map(str, args),
                               "--out", self.path("two.npy"), "--json"],
                              capture_output=True, text=True, timeout=300, env=env)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(json.loads(done.stdout)["ranks"], 2)
        self.assertEqual(np.load(self.path("two.npy")).tobytes(), np.load(self.path("one.npy")).tobytes())


if __name__ == "__main__":
    support.main()
