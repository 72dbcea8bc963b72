#!/usr/bin/env python3
"""The caches (issue 38): one process measures a device while the others wait and read its profile;
a cache folder that cannot hold anything, and entries that are not files, are said, never taken as
empty or as an internal error.

Usage: test_cache.py PATH/TO/ziggurat
"""
import glob
import os
import shutil
import subprocess

import cli_support as support
from cli_support import ScratchFolderTest, cache_with_profile, run

MATRIX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "matrices", "bcsstk01.mtx")
HEAT = ("heat", "--size", "33x17", "--steps", "2", "--quiet")


class CacheTest(ScratchFolderTest):
    def cache(self, path=None):
        return {"ZIGGURAT_CACHE_DIR": path or self.path("cache")}

    def replace_by_folders(self, pattern):
        """Each file matching `pattern` becomes a folder of its name; returns how many."""
        paths = glob.glob(pattern, recursive=True)
        for path in paths:
            os.remove(path)
            os.mkdir(path)
        return len(paths)


class OneMeasurementAtATime(CacheTest):
    """Item 18: concurrent calibrations on an empty cache measure once."""

    def test_processes_that_calibrate_at_once_measure_once_and_read_that_profile(self):
        env = {**os.environ, **self.cache()}
        processes = [subprocess.Popen([support.ZIGGURAT, "calibrate"], stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True, env=env) for _ in range(4)]
        outputs = [p.communicate(timeout=600) for p in processes]
        for p, (out, err) in zip(processes, outputs):
            self.assertEqual(p.returncode, 0, err)
        loaded = [out for out, _ in outputs if "loaded from" in out]
        self.assertEqual(len(loaded), 3, "\n".join(out.splitlines()[1] for out, _ in outputs))
        profile = glob.glob(os.path.join(self.path("cache"), "profiles", "*.json"))
        self.assertEqual(len(profile), 1)
        with open(profile[0]) as f:
            stored = f.read()
        measured = [out for out, _ in outputs if "loaded from" not in out][0]
        self.assertIn(measured.splitlines()[1].split(" in ")[0].replace("measured ", ""), stored)  # its date


class UnusableFolders(CacheTest):
    """Items 14 and 23: a cache folder that is a file, and cache entries that are folders."""

    def test_a_cache_folder_that_is_a_file_is_said_by_every_command(self):
        blocked = self.path("file")
        open(blocked, "w").close()
        for args in (("cache",), ("cache", "--clear")):
            err = run(*args, expect=1, env=self.cache(blocked))[1]
            self.assertIn("cannot hold anything", err)
            self.assertNotIn("deleted", run(*args, expect=1, env=self.cache(blocked))[0])
        err = run(*HEAT, env=self.cache(os.path.join(blocked, "below")))[1]  # computes, but says why it is slow
        self.assertIn("could not be cached", err)

    def test_entries_that_are_folders_are_damaged_and_rebuilt(self):
        cache_with_profile(self.path("cache"))  # a profile file (the suite's), without measuring it again
        run("calibrate", env=self.cache())
        run("spmm", "--matrix", MATRIX, "--repeat", "1", env=self.cache())  # a tuning record
        root = self.path("cache")
        records = {"profiles": os.path.join(root, "profiles", "*.json"),
                   "tuning": os.path.join(root, "tuning", "**", "*.json"),
                   "programs": os.path.join(root, "programs", "*.bin")}
        for pattern in records.values():
            self.assertGreater(self.replace_by_folders(pattern), 0)
        self.assertIn("damaged", run("cache", env=self.cache())[0])
        err = run(*HEAT, env=self.cache())[1]  # measures the device again: its profile was damaged
        self.assertNotIn("could not be cached", err)
        run("spmm", "--matrix", MATRIX, "--repeat", "1", env=self.cache())
        for kind in ("profiles", "tuning"):
            paths = glob.glob(records[kind], recursive=True)
            self.assertTrue(paths and all(os.path.isfile(p) for p in paths), f"{kind}: {paths}")
        self.assertTrue(any(os.path.isfile(p) for p in glob.glob(records["programs"])))  # those rebuilt
        self.assertIn("deleted", run("cache", "--clear", env=self.cache())[0])
        self.assertEqual(glob.glob(records["programs"]), [])
        shutil.rmtree(root)


if __name__ == "__main__":
    support.main()
