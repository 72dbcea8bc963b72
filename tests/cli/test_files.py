#!/usr/bin/env python3
"""The files every command reads and writes: outputs never replace what is not a regular file,
never overwrite an input or each other, and are checked before any work.

Usage: test_files.py PATH/TO/ziggurat
"""
import os
import stat
import subprocess
import threading
import time

import numpy as np

import cli_support as support
from cli_support import ScratchFolderTest, run

MATRIX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "matrices", "bcsstk01.mtx")
SWEEP = ("model", "--grid", "2050", "--steps", "100", "--tau-a", "0.1", "--sweep", "--serial",
         "--memories", "1MiB,4MiB")


def has_plplot():
    done = subprocess.run([support.ZIGGURAT, *SWEEP, "--plot", "/dev/null"], capture_output=True, text=True)
    return "without PLplot" not in done.stderr


class OutputsKeepWhatIsThere(ScratchFolderTest):
    """Item 1 of issue 38: a device, a FIFO or a link at an output path stays what it is."""

    def assert_char_device(self, path):
        self.assertTrue(stat.S_ISCHR(os.stat(path).st_mode), f"{path} is no longer a character device")

    def test_dev_null_takes_every_kind_of_output_and_stays_a_device(self):
        heat = ("heat", "--size", "33x17", "--steps", "2", "--quiet")
        run(*heat, "--out", "/dev/null", "--png", "/dev/null", "--timeline", "/dev/null")
        run("solve", "--matrix", MATRIX, "--out", "/dev/null", "--history", "/dev/null", "--quiet")
        run("spmm", "--matrix", MATRIX, "--out", "/dev/null", "--repeat", "1")
        run("modes", "--mesh", "cantilever:1x0.1x0.1:4,1,1", "--modes", "2", "--quiet", "--out", "/dev/null")
        if has_plplot():
            run(*SWEEP, "--plot", "/dev/null")
        self.assert_char_device("/dev/null")

    def test_a_full_device_is_an_error_not_a_replaced_file(self):
        for args in (("heat", "--size", "33x17", "--steps", "2", "--quiet", "--out", "/dev/full"),
                     ("heat", "--size", "33x17", "--steps", "2", "--quiet", "--png", "/dev/full"),
                     ("solve", "--matrix", MATRIX, "--quiet", "--history", "/dev/full")):
            err = run(*args, expect=1)[1]
            self.assertIn("No space left on device", err)
            self.assertNotIn("internal error", err)
        self.assert_char_device("/dev/full")

    def test_a_fifo_receives_the_file_and_stays_a_fifo(self):
        regular, fifo = self.path("u.npy"), self.path("pipe")
        os.mkfifo(fifo)
        received = []
        reader = threading.Thread(target=lambda: received.append(open(fifo, "rb").read()), daemon=True)
        reader.start()
        run("heat", "--size", "33x17", "--steps", "3", "--quiet", "--out", fifo)
        reader.join(timeout=60)  # a FIFO replaced by a file leaves the reader waiting: nothing received
        run("heat", "--size", "33x17", "--steps", "3", "--quiet", "--out", regular)
        self.assertTrue(stat.S_ISFIFO(os.stat(fifo).st_mode))
        with open(regular, "rb") as f:
            self.assertEqual(received, [f.read()])

    def test_a_link_is_kept_and_the_file_it_names_replaced(self):
        target, link = self.path("target.npy"), self.path("link.npy")
        np.save(target, np.zeros(3))
        os.symlink("target.npy", link)
        run("heat", "--size", "33x17", "--steps", "2", "--quiet", "--out", link)
        self.assertTrue(os.path.islink(link))
        self.assertEqual(np.load(target).shape, (17, 33))

    def test_a_killed_writer_leaves_a_temporary_that_the_next_write_removes(self):
        out = self.path("u.npy")
        with open(out + ".tmp-" + os.uname().nodename + "-999999999-0", "wb") as f:  # no such process
            f.write(b"partial")
        mine = out + ".tmp-" + os.uname().nodename + f"-{os.getpid()}-0"  # a live process's
        open(mine, "wb").close()
        run("heat", "--size", "33x17", "--steps", "2", "--quiet", "--out", out)
        self.assertEqual(sorted(os.listdir(self.tmp)), sorted(["u.npy", os.path.basename(mine)]))

    def test_the_replaced_file_keeps_its_permissions(self):
        out = self.path("u.npy")
        np.save(out, np.zeros(2))
        os.chmod(out, 0o600)
        run("heat", "--size", "33x17", "--steps", "2", "--quiet", "--out", out)
        self.assertEqual(stat.S_IMODE(os.stat(out).st_mode), 0o600)


class OutputsAreWholeOrOld(ScratchFolderTest):
    """What the sweep found good, kept: an output is the old file or the whole new one, under kill -9
    and under writers racing for one path."""

    def test_a_writer_killed_at_any_moment_leaves_the_old_file_or_the_new_one(self):
        out = self.path("u.npy")
        np.save(out, np.zeros((3, 3)))
        old = open(out, "rb").read()
        args = [support.ZIGGURAT, "heat", "--size", "1500x1500", "--steps", "30", "--quiet", "--out", out]
        for delay in (0.2, 0.8, 1.5, 3.0):
            process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(delay)
            process.kill()
            process.wait()
            now = open(out, "rb").read()
            self.assertTrue(now == old or np.load(out).shape == (1500, 1500), f"killed after {delay} s")
            old = now

    def test_writers_racing_for_one_path_leave_one_whole_file(self):
        out = self.path("u.npy")
        runs = [subprocess.Popen([support.ZIGGURAT, "heat", "--size", f"{300 + i}x300", "--steps", "5", "--quiet",
                                  "--out", out]) for i in range(4)]
        self.assertEqual([r.wait(timeout=300) for r in runs], [0] * 4)
        self.assertIn(np.load(out).shape, [(300, 300 + i) for i in range(4)])
        self.assertEqual(os.listdir(self.tmp), ["u.npy"])


class OutputsNeverReplaceInputs(ScratchFolderTest):
    """Item 2 of issue 38: inputs and outputs compared by file identity, for every command."""

    def refused(self, args, phrase, *unchanged):
        before = [open(p, "rb").read() for p in unchanged]
        err = run(*args, expect=1)[1]
        self.assertIn(phrase, err)
        self.assertEqual([open(p, "rb").read() for p in unchanged], before)

    def test_an_output_at_an_input_is_refused_before_any_work(self):
        matrix = self.path("B.mtx")
        with open(MATRIX) as src, open(matrix, "w") as dst:
            dst.write(src.read())
        x = self.path("x.npy")
        np.save(x, np.ones(48))
        for option in ("--out",):
            self.refused(("spmm", "--matrix", matrix, option, matrix), "is the --matrix file", matrix)
        for option in ("--out", "--history", "--plot"):
            self.refused(("solve", "--matrix", matrix, "--quiet", option, matrix), "is the --matrix file", matrix)
        self.refused(("solve", "--matrix", matrix, "--rhs", x, "--quiet", "--out", x), "is the --rhs file", x)
        init = self.path("u0.npy")
        np.save(init, np.ones((17, 33), dtype=np.float32))
        for option in ("--out", "--png", "--timeline"):
            self.refused(("heat", "--init", init, "--steps", "1", "--quiet", option, init), "is the --init file", init)
        receivers = self.path("r.npy")
        np.save(receivers, np.array([[100.0, 50.0]]))
        self.refused(("wave", "--size", "41x21", "--steps", "2", "--receivers", receivers, "--out", receivers),
                     "is the --receivers file", receivers)

    def test_links_and_other_spellings_of_an_input_are_caught(self):
        init = self.path("u0.npy")
        np.save(init, np.ones((17, 33), dtype=np.float32))
        hard, soft = self.path("hard.npy"), self.path("soft.npy")
        os.link(init, hard)
        os.symlink(init, soft)
        dotted = os.path.join(self.tmp, ".", "sub", "..", "u0.npy")
        os.mkdir(self.path("sub"))
        for out in (hard, soft, dotted):
            self.refused(("heat", "--init", init, "--steps", "1", "--quiet", "--out", out), "is the --init file", init)

    def test_a_profile_or_a_model_read_is_never_written(self):
        profile = self.path("p.json")
        with open(profile, "w") as f:
            f.write("{}")
        self.refused(("heat", "--size", "33x17", "--profile", profile, "--out", profile), "is the --profile file",
                     profile)
        self.refused(("wave", "--size", "41x21", "--model", profile, "--out", profile), "is the --model file", profile)

    def test_two_outputs_at_one_path_are_refused(self):
        out = self.path("o.npy")
        self.refused(("heat", "--size", "33x17", "--steps", "1", "--out", out, "--png", out), "name the same file")
        self.refused(("solve", "--matrix", MATRIX, "--history", out, "--plot", os.path.join(self.tmp, ".", "o.npy")),
                     "name the same file")
        self.refused(("modes", "--mesh", "cantilever:1x0.1x0.1:4,1,1", "--out", self.path("m-mass.npy"),
                      "--save-model", self.path("m")), "name the same file")
        self.assertFalse(os.path.exists(out))


class OutputsCheckedFirst(ScratchFolderTest):
    """Items 5 and 20 of issue 38: an output that cannot be written stops the command before it
    computes, with an error, never PLplot's exit of the process."""

    def test_a_missing_folder_is_named_before_any_work(self):
        for args, option in ((("solve", "--matrix", MATRIX, "--json", "--plot", "/nonexistent/h.png"), "--plot"),
                             ((*SWEEP, "--plot", "/nonexistent/s.png"), "--plot"),
                             (("solve", "--matrix", MATRIX, "--history", "/nonexistent/h.csv"), "--history"),
                             (("heat", "--size", "33x17", "--timeline", "/nonexistent/t.json"), "--timeline")):
            start = time.monotonic()
            err = run(*args, expect=1)[1]
            self.assertIn(option, err)
            self.assertIn("does not exist", err)
            self.assertLess(time.monotonic() - start, 30)

    def test_a_plot_that_cannot_be_written_is_an_error_and_the_process_lives(self):
        if not has_plplot():
            self.skipTest("built without PLplot")
        for args in (("solve", "--matrix", MATRIX, "--json", "--plot", "/dev/full"), (*SWEEP, "--plot", "/dev/full")):
            err = run(*args, expect=1)[1]
            self.assertIn("No space left on device", err)
            self.assertNotIn("IMMEDIATE EXIT", err)

    def test_a_read_only_folder_is_refused_before_any_work(self):
        if os.geteuid() == 0:
            self.skipTest("root writes into read-only folders")
        folder = self.path("ro")
        os.mkdir(folder)
        os.chmod(folder, 0o500)
        err = run("heat", "--size", "33x17", "--out", os.path.join(folder, "u.npy"), expect=1)[1]
        self.assertIn("read-only", err)

    def test_empty_paths_and_folders_are_refused(self):
        self.assertIn("the path is empty", run("heat", "--size", "33x17", "--out", "", expect=1)[1])
        self.assertIn("is a folder", run("heat", "--size", "33x17", "--out", self.tmp, expect=1)[1])
        self.assertIn("is a folder", run("heat", "--size", "33x17", "--profile", self.tmp, expect=1)[1])
        self.assertIn("is not a folder", run("wave", "--size", "41x21", "--snapshots", "1", "--png-dir",
                                             self.path("none"), expect=1)[1])


if __name__ == "__main__":
    support.main()
