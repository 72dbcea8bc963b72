#!/usr/bin/env python3
"""`ziggurat wave`: 2D and 3D elastic waves, seismograms of a Ricker source; split over devices.
(The runs under mpirun are in test_ranks.py.)

Usage: test_wave.py PATH/TO/ziggurat
"""
import json
import os

import numpy as np

import cli_support as support
from cli_support import ScratchFolderTest, run


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
        self.assertLessEqual(summary["dt_s"], summary["dt_limit_s"])
        seis = np.load(out)
        self.assertEqual(seis.shape, (2, 200, 2))
        times = (np.arange(200) + 1) * summary["dt_s"]
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
        self.assertIn("--snapshots N goes with", err)

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

    def test_3d_runs_split_over_devices_with_the_bits_of_one(self):
        """(Under mpirun too: test_ranks.py, WaveRanks.)"""
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


if __name__ == "__main__":
    support.main()
