#!/usr/bin/env python3
"""Batch runs (issue 41, item 2): progress lines off a terminal (heat, wave, poisson, solve, modes),
SIGTERM stopping a heat or wave run at a whole pass with that pass kept and a restart from it
ending on the bits of an uninterrupted run, in one process and under mpirun (a signal to one rank
stops them all after the same pass), the thread cap's variables, and MPI ranks that each see one
device taking it.

Usage: test_batch.py PATH/TO/ziggurat
"""
import json
import os
import re
import shutil
import signal
import subprocess
import time

import numpy as np

import cli_support as support
from cli_support import ScratchFolderTest, mpi_environment, run, stop_after_first_progress

HEAT = ("heat", "--size", "512x512", "--height", "4", "--device-memory", "2MiB", "--precision", "f32")
WAVE = ("wave", "--size", "100x60", "--absorbing", "8", "--precision", "f32")
TIMESTAMP = r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ "


def rank_process(job, rank):
    """The process of MPI rank `rank`, a child of mpirun's `job`."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        found = subprocess.run(["pgrep", "-P", str(job.pid)], capture_output=True, text=True).stdout.split()
        for pid in map(int, found):
            with open(f"/proc/{pid}/environ", "rb") as environ:
                if f"OMPI_COMM_WORLD_RANK={rank}".encode() in environ.read().split(b"\0"):
                    return pid
        time.sleep(0.2)
    raise AssertionError(f"no process of rank {rank} under mpirun")


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

    def test_poisson_solve_and_modes_print_timestamped_lines_too_and_none_with_never(self):
        commands = ((("poisson", "--size", "10x10x10", "--problem", "manufactured", "--tol", 0.05), "poisson: sweeps"),
                    (("solve", "--generate", "12x12x12", "--system", "laplace7"), "solve: iteration"),
                    (("modes", "--mesh", "cantilever:2x0.1x0.1:20,1,1", "--modes", 3), "modes: iteration"))
        for command, marker in commands:
            _, err = run(*command, "--progress", "always", env={"ZIGGURAT_PROGRESS_SECONDS": "0"})
            self.assertRegex(err, re.compile(TIMESTAMP + marker, re.M))
            self.assertNotIn("\r", err)
            _, err = run(*command, "--progress", "never")
            self.assertNotIn(marker, err)


class StopOnSignal(ScratchFolderTest):
    def stopped_run(self, sig, steps):
        """A heat run of `steps` stopped by `sig` after its first progress line; (returncode, stderr)."""
        return stop_after_first_progress([support.ZIGGURAT, *HEAT, "--steps", steps, "--out", self.path("stopped.npy")],
                                         "heat: pass", lambda job: job.send_signal(sig))

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


class WaveStopAndResume(ScratchFolderTest):
    STEPS = 1500

    def test_sigterm_keeps_the_last_whole_pass_and_a_resume_ends_on_the_uninterrupted_bits(self):
        whole = self.path("whole.npy")
        device = json.loads(run(*WAVE, "--steps", self.STEPS, "--out", whole, "--json")[0])["device"]
        same = "name:" + device
        # One device, and two with halos every 3 steps: a pass of 256 steps stops between exchanges.
        for split in ((), ("--devices", f"{same}/{same}", "--halo-steps", 3)):
            with self.subTest(split=split):
                checkpoint = self.path("state.ckpt")
                status, err = stop_after_first_progress(
                    [support.ZIGGURAT, *WAVE, *split, "--steps", self.STEPS, "--out", self.path("stopped.npy"),
                     "--checkpoint", checkpoint, "--progress", "always"], "wave: step",
                    lambda job: job.send_signal(signal.SIGTERM))
                self.assertEqual(status, 128 + signal.SIGTERM, err)
                done = int(re.search(rf"stopped by SIGTERM after (\d+) of {self.STEPS} steps", err).group(1))
                self.assertTrue(0 < done < self.STEPS and done % 256 == 0, err)  # whole passes of 256 steps
                self.assertIn(f"--resume {checkpoint}", err)
                stopped, uninterrupted = np.load(self.path("stopped.npy")), np.load(whole)
                self.assertEqual(stopped.shape, (uninterrupted.shape[0], done, 2))
                self.assertEqual(stopped.tobytes(), np.ascontiguousarray(uninterrupted[:, :done]).tobytes())
                run(*WAVE, *split, "--steps", self.STEPS, "--resume", checkpoint, "--out", self.path("resumed.npy"),
                    "--quiet")
                self.assertEqual(np.load(self.path("resumed.npy")).tobytes(), uninterrupted.tobytes())
        # Another run's options are refused, naming what differs.
        _, err = run(*WAVE, "--steps", self.STEPS, "--freq", 20, "--resume", checkpoint, expect=1)
        self.assertIn("holds the state of another run (frequency_hz", err)
        _, err = run(*WAVE, "--steps", 100, "--resume", checkpoint, expect=1)
        self.assertIn("more than --steps 100", err)
        _, err = run(*WAVE, "--steps", 100, "--resume", whole, expect=1)
        self.assertIn("is no wave checkpoint", err)
        with open(checkpoint, "rb") as whole_file, open(self.path("short.ckpt"), "wb") as short:
            short.write(whole_file.read()[:-8])
        _, err = run(*WAVE, "--steps", self.STEPS, "--resume", self.path("short.ckpt"), expect=1)
        self.assertIn("is cut short", err)


class StopUnderMpi(ScratchFolderTest):
    def setUp(self):
        super().setUp()
        self.mpirun = shutil.which("mpirun")
        if self.mpirun is None:
            self.skipTest("no mpirun: scripts/setup.sh installs openmpi-bin")

    def stopped_ranks(self, command, marker):
        """`command` on 2 ranks, SIGTERM to rank 1 after the first progress line (rank 0's)."""
        status, err = stop_after_first_progress(
            [self.mpirun, "-np", "2", "--oversubscribe", support.ZIGGURAT, *command, "--progress", "always"], marker,
            lambda job: os.kill(rank_process(job, 1), signal.SIGTERM), env=mpi_environment())
        self.assertNotEqual(status, 0, err)
        self.assertEqual(err.count("stopped by SIGTERM"), 1, err)  # rank 0 says it, for both
        return err

    def test_a_signal_to_one_heat_rank_stops_both_after_the_same_pass_with_the_field_whole(self):
        steps = 400_000  # far more than finding rank 1 takes: 4,000 could end first on a CPU
        heat = ("heat", "--size", "256x256", "--height", 4, "--precision", "f32", "--steps", steps)
        err = self.stopped_ranks((*heat, "--out", self.path("stopped.npy")), "heat: steps")
        done = int(re.search(rf"stopped by SIGTERM after (\d+) of {steps} steps", err).group(1))
        self.assertTrue(0 < done < steps and done % 4 == 0, err)  # halo intervals of 4 steps
        self.assertIn(f"--init {self.path('stopped.npy')} --steps {steps - done}", err)
        run("heat", "--size", "256x256", "--height", 4, "--precision", "f32", "--steps", done, "--quiet",
            "--out", self.path("same_steps.npy"))
        self.assertEqual(np.load(self.path("stopped.npy")).tobytes(), np.load(self.path("same_steps.npy")).tobytes())

    def test_a_signal_to_one_wave_rank_stops_both_and_a_resume_on_ranks_ends_on_the_bits_of_one(self):
        wave = (*WAVE, "--steps", 1500)
        run(*wave, "--out", self.path("whole.npy"), "--quiet")
        checkpoint = self.path("state.ckpt")
        err = self.stopped_ranks((*wave, "--out", self.path("stopped.npy"), "--checkpoint", checkpoint), "wave: step")
        done = int(re.search(r"stopped by SIGTERM after (\d+) of 1500 steps", err).group(1))
        whole = np.load(self.path("whole.npy"))
        self.assertEqual(np.load(self.path("stopped.npy")).tobytes(), np.ascontiguousarray(whole[:, :done]).tobytes())
        resumed = subprocess.run([self.mpirun, "-np", "2", "--oversubscribe", support.ZIGGURAT, *map(str, wave),
                                  "--resume", checkpoint, "--out", self.path("resumed.npy"), "--quiet"],
                                 capture_output=True, text=True, timeout=300, env=mpi_environment())
        self.assertEqual(resumed.returncode, 0, resumed.stderr)
        self.assertEqual(np.load(self.path("resumed.npy")).tobytes(), whole.tobytes())


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
