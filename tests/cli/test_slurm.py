#!/usr/bin/env python3
"""Runs under a real one-node Slurm started by this test (Debian's slurm-wlm and munge, installed by
scripts/setup.sh): `srun --mpi=pmix -n 2` splits heat and wave between the two tasks (PMIx exports
no size: the tasks are counted from Slurm's variables) and gives the bits of one process, with one
report; srun without an MPI plugin is refused instead of running the problem twice; the SIGTERM
that `scancel --signal=TERM` sends both tasks stops them after the same pass, the field whole. The daemons
run from a temporary folder on free ports and are stopped at the end; where they cannot start, the
tests are skipped, saying why.

Usage: test_slurm.py PATH/TO/ziggurat
"""
import json
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import unittest

import numpy as np

import cli_support as support
from cli_support import ScratchFolderTest, run, stop_after_first_progress

SKIP_REASON = None  # set by setUpModule when the daemons cannot run here


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class OneNodeSlurm:
    """munged, slurmctld and slurmd in `folder`, for this host only."""

    def __init__(self, folder):
        self.folder = folder
        for name in ("state", "spool", "log"):
            os.mkdir(os.path.join(folder, name))
        os.chmod(folder, 0o755)  # munged wants its socket's folder reachable by all
        self.key = self.path("munge.key")
        with open(self.key, "wb") as f:
            f.write(os.urandom(1024))
        os.chmod(self.key, 0o600)
        self.conf = self.path("slurm.conf")
        host = socket.gethostname().split(".")[0]
        with open(self.conf, "w") as f:
            f.write("\n".join([
                "ClusterName=zigguratci", f"SlurmctldHost={host}(127.0.0.1)",
                f"SlurmctldPort={free_port()}", f"SlurmdPort={free_port()}",
                "AuthType=auth/munge", "CredType=cred/munge", f"AuthInfo=socket={self.path('munge.sock')}",
                f"SlurmUser={pwd.getpwuid(os.geteuid()).pw_name}", f"SlurmdUser={pwd.getpwuid(os.geteuid()).pw_name}",
                f"StateSaveLocation={self.path('state')}", f"SlurmdSpoolDir={self.path('spool')}",
                f"SlurmctldPidFile={self.path('slurmctld.pid')}", f"SlurmdPidFile={self.path('slurmd.pid')}",
                f"SlurmctldLogFile={self.path('log/slurmctld.log')}", f"SlurmdLogFile={self.path('log/slurmd.log')}",
                "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none", "SelectType=select/cons_tres",
                "SelectTypeParameters=CR_Core", "MpiDefault=none", "ReturnToService=2", "JobCompType=jobcomp/none",
                "AccountingStorageType=accounting_storage/none", "SchedulerType=sched/builtin",
                f"NodeName={host} NodeAddr=127.0.0.1 CPUs={os.cpu_count()} State=UNKNOWN",
                "PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES", ""]))
        self.environment = {**os.environ, "SLURM_CONF": self.conf}

    def path(self, name):
        return os.path.join(self.folder, name)

    def start(self):
        """Starts the daemons; returns None, or why they could not start."""
        steps = [
            ["munged", f"--key-file={self.key}", f"--socket={self.path('munge.sock')}", "--force",
             f"--pid-file={self.path('munged.pid')}", f"--log-file={self.path('log/munged.log')}",
             f"--seed-file={self.path('munge.seed')}"],
            ["slurmctld", "-f", self.conf],
            ["slurmd", "-f", self.conf],
        ]
        for command in steps:
            done = subprocess.run(command, capture_output=True, text=True, timeout=60, env=self.environment)
            if done.returncode != 0:
                return f"{command[0]} did not start ({done.returncode}): {done.stderr.strip()} {self.logs()}"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # the node registers, then is idle
            state = subprocess.run(["sinfo", "-h", "-o", "%t"], capture_output=True, text=True, env=self.environment)
            if state.stdout.strip() == "idle":
                return None
            time.sleep(0.5)
        return f"the node never became idle: {self.logs()}"

    def logs(self):
        text = ""
        for name in ("munged.log", "slurmctld.log", "slurmd.log"):
            try:
                with open(self.path("log/" + name)) as f:
                    text += f"\n{name}:\n" + "".join(f.readlines()[-10:])
            except OSError:
                pass
        return text

    def stop(self):
        """Ends the daemons this object started, by the ids in their pid files."""
        for name in ("slurmd.pid", "slurmctld.pid", "munged.pid"):
            try:
                with open(self.path(name)) as f:
                    pid = int(f.read().split()[0])
            except (OSError, ValueError, IndexError):
                continue
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                continue
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                try:
                    os.kill(pid, 0)
                except ProcessLookupError:
                    break
                time.sleep(0.2)

    def jobs(self):
        """The ids squeue lists, or None where it could not answer."""
        done = subprocess.run(["squeue", "-h", "-o", "%A"], capture_output=True, text=True, env=self.environment)
        return done.stdout.split() if done.returncode == 0 else None

    def only_job(self):
        """The one job's id. squeue can miss an answer on a loaded machine: it is asked again."""
        deadline = time.monotonic() + 60
        while (jobs := self.jobs()) is None or len(jobs) != 1:
            if time.monotonic() > deadline:
                raise AssertionError(f"squeue lists {jobs}, not one job")
            time.sleep(0.5)
        return jobs[0]

    def cancel_all(self):
        """Kills what a failed test left queued or running, so that it holds no later test's node."""
        for job in self.jobs() or ():
            subprocess.run(["scancel", "--signal=KILL", "--full", job], env=self.environment)

    def srun(self, *args, mpi="pmix"):
        return subprocess.run(["srun", f"--mpi={mpi}", "-n", "2", "--kill-on-bad-exit=1", support.ZIGGURAT,
                               *map(str, args)], capture_output=True, text=True, timeout=600, env=self.environment)


SLURM = None
FOLDER = None


def setUpModule():
    global SLURM, FOLDER, SKIP_REASON
    missing = [p for p in ("munged", "slurmctld", "slurmd", "srun", "sinfo") if shutil.which(p) is None]
    if missing:
        SKIP_REASON = f"{', '.join(missing)} not installed: scripts/setup.sh installs slurm-wlm and munge"
        return
    FOLDER = tempfile.mkdtemp(prefix="ziggurat-slurm-")
    SLURM = OneNodeSlurm(FOLDER)
    reason = SLURM.start()
    if reason is not None:
        SKIP_REASON = "the Slurm daemons cannot run in this container: " + reason
        SLURM.stop()


def tearDownModule():
    if SLURM is not None:
        SLURM.stop()
    if FOLDER is not None:
        shutil.rmtree(FOLDER, ignore_errors=True)


class UnderSlurm(ScratchFolderTest):
    def setUp(self):
        if SKIP_REASON is not None:
            self.skipTest(SKIP_REASON)
        super().setUp()
        self.device = "name:" + json.loads(run("heat", "--size", "9x9", "--steps", "1", "--json")[0])["device"]
        self.addCleanup(SLURM.cancel_all)

    def split_run(self, command, common):
        """One process, then two Slurm tasks; the reports and the two outputs."""
        one = json.loads(run(command, *common, "--device", self.device, "--out", self.path("one.npy"), "--json")[0])
        done = SLURM.srun(command, *common, "--device", self.device, "--out", self.path("two.npy"), "--json")
        self.assertEqual(done.returncode, 0, done.stderr)
        reports, text, decoder = [], done.stdout.strip(), json.JSONDecoder()
        while text:
            report, end = decoder.raw_decode(text)
            reports.append(report)
            text = text[end:].strip()
        self.assertEqual(len(reports), 1, "one report, from rank 0, not one a task:\n" + done.stdout)
        return one, reports[0]

    def assert_same_bits(self):
        self.assertEqual(np.load(self.path("two.npy")).tobytes(), np.load(self.path("one.npy")).tobytes())

    def test_srun_with_pmix_splits_heat_with_the_bits_of_one_process(self):
        one, two = self.split_run("heat", ("--size", "256x192", "--steps", 24, "--height", 4, "--precision", "f32"))
        self.assertNotIn("ranks", one)
        self.assertEqual(two["ranks"], 2)
        self.assert_same_bits()

    def test_srun_with_pmix_splits_wave_with_the_bits_of_one_process(self):
        _, two = self.split_run("wave", ("--size", "90x70", "--steps", 120, "--source", "450,300", "--absorbing", 8,
                                         "--halo-steps", 2, "--quiet"))
        self.assertEqual(two["ranks"], 2)
        self.assert_same_bits()

    def test_scancel_signal_term_stops_both_tasks_after_the_same_pass_with_the_field_whole(self):
        heat = ("heat", "--size", "256x256", "--height", 4, "--precision", "f32", "--device", self.device)
        steps = 400_000  # far more than squeue and scancel take to stop it: 4,000 could end first on a CPU

        def scancel(job):
            subprocess.run(["scancel", "--signal=TERM", SLURM.only_job()], check=True, env=SLURM.environment)

        status, err = stop_after_first_progress(
            ["srun", "--mpi=pmix", "-n", "2", support.ZIGGURAT, *heat, "--steps", steps, "--out", self.path("two.npy"),
             "--progress", "always"], "heat: steps", scancel, env=SLURM.environment)
        self.assertNotEqual(status, 0, err)
        found = re.search(rf"stopped by SIGTERM after (\d+) of {steps} steps", err)
        self.assertIsNotNone(found, err)
        done = int(found.group(1))
        self.assertTrue(0 < done < steps and done % 4 == 0, err)
        run(*heat, "--steps", done, "--quiet", "--out", self.path("one.npy"))
        self.assert_same_bits()

    def test_srun_without_an_mpi_plugin_is_refused(self):
        done = SLURM.srun("heat", "--size", "64x64", "--steps", 4, "--device", self.device, "--out",
                          self.path("u.npy"), mpi="none")
        # Open MPI refuses a direct launch without PMI itself; another MPI joins no tasks and ziggurat
        # refuses (ranks.hpp). Either message names srun.
        self.assertNotEqual(done.returncode, 0)
        self.assertIn("srun", done.stderr)
        self.assertFalse(os.path.exists(self.path("u.npy")))


if __name__ == "__main__":
    support.main()
