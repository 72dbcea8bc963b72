#!/usr/bin/env python3
"""The tool under mpirun: ranks give the bits of one process (heat in 1D, 2D and 3D, waves in 2D and
3D); ranks given arguments that disagree fail at once, naming the value and the ranks, instead of
corrupting the heap, hanging, or writing a wrong field (item 3 of issue 38).

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


class HeatRanks(ScratchFolderTest):
    """`mpirun -np R ziggurat heat`: the field split over ranks, exchanging halos."""

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
            (("--size", "90x61", "--steps", 17, "--height", 4, "--device-memory", "48KiB"), 3, 4),
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


class WaveRanks(ScratchFolderTest):
    """`mpirun -np R ziggurat wave`: the grid split over ranks, in 2D and 3D."""

    def wave(self, *args):
        return json.loads(run("wave", *args, "--json", "--quiet")[0])

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
        # More ranks than devices without --device, where a rank sees several: a clear error, and the
        # whole job ends (a rank that sees one device takes it: test_batch.py).
        listed = json.loads(run("devices", "--json")[0])["devices"]
        pool = [d for d in listed if d["type"] == "gpu"] or [d for d in listed if d["type"] == "cpu"]
        if len(pool) < 2:
            return
        done = ranks(len(pool) + 1, environment={k: v for k, v in env.items() if k != "ZIGGURAT_DEVICE"})
        self.assertNotEqual(done.returncode, 0)
        self.assertIn("ranks on this host but", done.stderr)

    def test_3d_ranks_give_the_bits_of_one_process(self):
        """(The same run split over devices in one process: test_wave.py.)"""
        mpirun = shutil.which("mpirun")
        if mpirun is None:
            self.skipTest("no mpirun: scripts/setup.sh installs openmpi-bin")
        receivers = self.path("r.npy")
        np.save(receivers, np.array([[50.0, 60.0, 0.0], [120.0, 90.0, 40.0]]))
        common = ("--dims", 3, "--size", "22x19x24", "--steps", 40, "--receivers", receivers, "--absorbing", 4,
                  "--source-kind", "force", "--force", "0.2,0.4,1")
        one = self.wave(*common, "--out", self.path("one.npy"))
        same = "name:" + one["device"]
        seis = np.load(self.path("one.npy"))
        done = subprocess.run([mpirun, "-np", "2", "--oversubscribe", support.ZIGGURAT, "wave", *map(str, common), "--device",
                               same, "--out", self.path("ranks.npy"), "--seismograms", self.path("ranks.npz"), "--json",
                               "--quiet"],
                              capture_output=True, text=True, timeout=300, env=mpi_environment())
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(np.load(self.path("ranks.npy")).tobytes(), seis.tobytes())
        with np.load(self.path("ranks.npz")) as f:  # written by rank 0, the gathered seismograms
            self.assertEqual(f["data"].tobytes(), seis.tobytes())
            self.assertEqual(f["receivers"].tolist(), [[50.0, 60.0, 0.0], [120.0, 90.0, 40.0]])


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
