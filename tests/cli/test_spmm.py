#!/usr/bin/env python3
"""`ziggurat spmm`: sparse products of the real matrices in every format against NumPy, and the
automatic kernel choice (`--kernel auto`) and its records.

Usage: test_spmm.py PATH/TO/ziggurat
"""
import json
import os
import subprocess

import numpy as np

import cli_support as support
from cli_support import MATRICES, ScratchFolderTest, read_mtx, run


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
        self.assertIn(out["kernel"], out["auto"]["time_s"])
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


if __name__ == "__main__":
    support.main()
