#!/usr/bin/env python3
"""Bad values and what the commands say of them (issue 38): numbers that are not finite, text that
is empty or malformed, options that contradict each other, problems larger than the host, and one
exit status rule for every command.

Usage: test_arguments.py PATH/TO/ziggurat
"""
import json
import os
import re
import subprocess
import time

import numpy as np

import cli_support as support
from cli_support import ScratchFolderTest, run

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "matrices")
MATRIX = os.path.join(DATA, "bcsstk01.mtx")
COMMANDS = ("heat", "poisson", "solve", "spmm", "modes", "wave", "calibrate", "model")
WAVE = ("wave", "--size", "41x21", "--steps", "20", "--quiet")


def options_of(*command):
    """The options of `ziggurat COMMAND --help`, as {name: type} (FLOAT:POSITIVE, INT>=1, FILE...)."""
    text = run(*command, "--help")[0]
    return dict(re.findall(r"^\s+(--[a-z0-9-]+)(?:,\s*-\w)?\s+([A-Z][A-Z0-9_:>=.<]*)", text, re.M))


def float_options(*command):
    return [name for name, kind in options_of(*command).items() if kind.startswith("FLOAT")]


def bench_installed():
    done = subprocess.run([support.ZIGGURAT, "bench", "--help"], capture_output=True, text=True)
    return done.returncode == 0


def failed(args, message, env=None, seconds=None):
    """Runs ziggurat expecting status 1 with `message` on stderr (and within `seconds`); returns stderr."""
    start = time.monotonic()
    err = run(*args, expect=1, env=env)[1]
    if message not in err:
        raise AssertionError(f"ziggurat {' '.join(map(str, args))}: {message!r} not in:\n{err}")
    if "internal error" in err:
        raise AssertionError(f"ziggurat {' '.join(map(str, args))}: {err}")
    if seconds is not None and time.monotonic() - start > seconds:
        raise AssertionError(f"ziggurat {' '.join(map(str, args))} took {time.monotonic() - start:.1f} s to refuse")
    return err


class NumbersAreFinite(ScratchFolderTest):
    """Item 6: NaN and infinities are refused by every floating-point option of every command."""

    def test_every_floating_option_refuses_nan_and_infinities(self):
        found = {command: float_options(command) for command in COMMANDS}
        # The options the issue names are among those found: the help text is read right.
        for command, option in (("heat", "--alpha"), ("poisson", "--spacing"), ("wave", "--dt"),
                                ("modes", "--solve-tol"), ("model", "--tau-c"), ("solve", "--rtol")):
            self.assertIn(option, found[command])
        for command, options in found.items():
            for option in options:
                for value in ("nan", "inf", "-inf", "1e999", "NaN"):
                    err = failed((command, option, value), "finite")
                    self.assertIn(option, err)

    def test_the_benchmarks_floating_options_refuse_them_too(self):
        if not bench_installed():
            self.skipTest("the benchmarks are not built")
        for command in ("heat", "spmm", "solve", "long-vector", "poisson", "ebe", "wave", "build"):
            for option in float_options("bench", command):
                failed(("bench", command, option, "nan"), "finite")

    def test_a_model_constant_of_nan_is_no_longer_printed_as_nan_ns(self):
        failed(("model", "--grid", "1000", "--device-memory", "1MiB", "--tau-c", "nan", "--tau-a", "0.1"), "--tau-c")

    def test_model_constants_beyond_any_device_are_refused_not_a_crash(self):
        sweep = ("model", "--grid", "130", "--device-memory", "1MiB", "--sweep")
        failed((*sweep, "--tau-a", "1e308"), "--tau-a")  # was a division by zero (SIGFPE) in the optimiser
        failed((*sweep, "--tau-a", "1", "--ratios", "1e300"), "--ratios")

    def test_range_errors_name_the_range_without_a_309_digit_bound(self):
        for args in (("wave", "--dx", "-1"), ("modes", "--block-size", "99"), ("poisson", "--tol", "-1"),
                     ("heat", "--dims", "4"), ("model", "--tau-a", "0")):
            err = failed(args, args[1])
            self.assertIsNone(re.search(r"\d{30}", err), err)

    def test_whole_numbers_take_no_sign_octal_or_hexadecimal(self):
        failed(("wave", "--absorbing", "-1"), "whole number")
        failed(("heat", "--steps", "0x10"), "whole number")
        failed(("modes", "--batch-elements", "-5"), "whole number")
        failed(("heat", "--steps", "010"), "no leading zero")  # CLI11 would read octal 8


class WaveInput(ScratchFolderTest):
    """Items 7, 14 and 19: the wave command's forces, model sources and receivers."""

    def test_a_force_that_is_not_finite_is_refused(self):
        for force in ("nan,1", "inf,0", "1,1e999"):
            failed((*WAVE, "--source-kind", "force", "--force", force), "finite numbers")

    def test_a_force_that_overflows_float_is_an_error_not_a_peak_of_zero(self):
        err = failed((*WAVE, "--source-kind", "force", "--force", "1e300,1e300", "--json"), "overflowed float")
        self.assertIn("receiver", err)

    def test_one_model_source_at_a_time(self):
        layers = self.path("layers.json")
        with open(layers, "w") as f:
            json.dump([{"top": 0, "vp": 3000, "vs": 1700, "rho": 2500}], f)
        failed((*WAVE, "--model", layers, "--medium", "3000,1700,2500"), "give one model")
        cells = np.full((10, 30), 3000.0)
        for name in ("vp", "vs", "rho"):
            np.save(self.path(f"{name}.npy"), cells * (0.5 if name == "vs" else 1))
        arrays = ("--vp", self.path("vp.npy"), "--vs", self.path("vs.npy"), "--rho", self.path("rho.npy"))
        failed(("wave", "--size", "41x21", "--steps", "5", *arrays), "does not match --vp")
        failed(("wave", "--steps", "5", *arrays, "--medium", "3000,1700,2500"), "give one model")
        out = json.loads(run("wave", "--size", "31x11", "--steps", "5", "--quiet", "--json", *arrays)[0])
        self.assertEqual((out["nx"], out["nz"]), (31, 11))

    def test_a_folder_as_the_layer_model_is_refused(self):
        failed((*WAVE, "--model", self.tmp), "is a folder")

    def test_a_negative_velocity_is_refused(self):
        failed((*WAVE, "--medium", "-3000,1700,2500"), "vp = -3000")

    def test_an_empty_receiver_array_is_refused_not_replaced_by_the_default(self):
        np.save(self.path("none.npy"), np.zeros((0, 2)))
        failed((*WAVE, "--receivers", self.path("none.npy")), "holds no receiver")

    def test_a_profile_on_one_device_is_refused_and_a_missing_one_named(self):
        failed((*WAVE, "--profile", self.path("missing.json")), "no such file")
        profile = self.path("p.json")
        with open(profile, "w") as f:
            f.write(run("calibrate", "--json")[0])
        failed((*WAVE, "--profile", profile), "plans nothing")


class RefusedBeforeAnyWork(ScratchFolderTest):
    """Items 15 and 16: sizes from a header or a size line beyond the host are refused at once."""

    def test_a_wave_grid_beyond_the_host_is_refused_at_once(self):
        failed(("wave", "--size", "100000x100000", "--steps", "1"), "of host memory", seconds=10)
        failed(("wave", "--dims", "3", "--size", "100000x100000x100", "--steps", "1"), "of host memory", seconds=10)

    def test_a_matrix_declared_beyond_the_host_is_refused_at_once(self):
        big = self.path("big.mtx")
        with open(big, "w") as f:
            f.write("%%MatrixMarket matrix coordinate real general\n4000000000 4000000000 1\n1 1 1\n")
        failed(("spmm", "--matrix", big), "of host memory", seconds=10)
        failed(("solve", "--matrix", big), "of host memory", seconds=10)
        failed(("solve", "--generate", "100000x100000x100000", "--block", "4"), "of host memory", seconds=10)

    def test_a_npy_header_longer_than_its_file_is_refused(self):
        bad = self.path("bad.npy")
        with open(bad, "wb") as f:
            f.write(b"\x93NUMPY\x02\x00\xff\xff\xff\xff{'descr'")
        failed(("heat", "--init", bad), "declares 4294967295 bytes", seconds=10)

    def test_a_profile_of_absurd_values_is_refused_naming_the_value(self):
        profile = json.loads(run("calibrate", "--json")[0])
        profile["launch_blocking_s"] = 1e308
        path = self.path("absurd.json")
        with open(path, "w") as f:
            json.dump(profile, f)
        err = failed(("heat", "--size", "65x65", "--steps", "2", "--profile", path), "launch_blocking_s")
        self.assertNotIn("pyramid height", err)

    def test_a_cantilever_beyond_the_host_is_refused_at_once(self):
        failed(("modes", "--mesh", "cantilever:1x1x1:2000,2000,100"), "of host memory", seconds=10)


class ExitStatus(ScratchFolderTest):
    """Item 11 and 21: 0 done, 1 an error, 2 a result not reached, 3 never; output that cannot be
    written is an error."""

    def test_an_eigen_solve_that_does_not_converge_exits_2_after_its_report(self):
        out = run("modes", "--mesh", "cantilever:1x0.1x0.1:8,1,1", "--modes", "3", "--max-iterations", "1",
                  "--quiet", "--json", expect=2)[0]
        self.assertFalse(json.loads(out)["converged"])

    def test_a_poisson_run_stopped_above_its_tolerance_exits_2(self):
        out = run("poisson", "--size", "10x10x10", "--problem", "manufactured", "--max-sweeps", "3", "--json",
                  expect=2)[0]
        self.assertEqual(json.loads(out)["reason"], "max-sweeps")
        run("poisson", "--size", "10x10x10", "--problem", "manufactured", "--max-sweeps", "3", "--tol", "0", "--json")

    def test_usage_errors_exit_1(self):
        failed(("heat", "--no-such-option"), "--no-such-option")
        failed(("frobnicate",), "'frobnicate' is not a command")
        failed(("heat", "--steps", "-3"), "--steps")
        failed((), "A subcommand is required")

    def test_output_that_cannot_be_written_is_an_error(self):
        for args in (("devices",), ("heat", "--size", "33x17", "--steps", "2", "--json"), ("cache",)):
            with open("/dev/full", "w") as full:
                done = subprocess.run([support.ZIGGURAT, *args], stdout=full, stderr=subprocess.PIPE, text=True)
            self.assertEqual(done.returncode, 1, done.stderr)
            self.assertIn("No space left on device", done.stderr)


class Solves(ScratchFolderTest):
    """Items 8, 9 and 12: reports that say what x holds, and products of finite input."""

    def singular(self):
        path = self.path("s.mtx")
        with open(path, "w") as f:
            f.write("%%MatrixMarket matrix coordinate real general\n3 3 5\n1 1 1\n1 2 2\n2 1 2\n2 2 4\n3 3 1\n")
        return path

    def test_a_breakdown_reports_the_residual_of_the_x_it_returns(self):
        out, _ = run("solve", "--matrix", self.singular(), "--preconditioner", "none", "--kernel", "rule", "--json",
                     "--out", self.path("x.npy"), expect=2)
        report = json.loads(out)
        x = np.load(self.path("x.npy"))
        a = np.array([[1, 2, 0], [2, 4, 0], [0, 0, 1]], float)
        if np.all(np.isfinite(x)):
            truth = np.linalg.norm(np.ones(3) - a @ x) / np.linalg.norm(np.ones(3))
            self.assertAlmostEqual(report["relative_residual"], truth, delta=1e-6 * max(1, truth))
        else:
            self.assertIsNone(report["relative_residual"])  # NaN: JSON's null, never 0
        self.assertNotEqual(report["relative_residual"], 0)

    def test_a_tolerance_below_what_double_resolves_is_not_reported_as_reached(self):
        diagonal = self.path("d.mtx")  # solved exactly: the residual computed in double is 0
        with open(diagonal, "w") as f:
            f.write("%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 2\n2 2 4\n3 3 8\n")
        reports = {matrix: json.loads(run("solve", "--matrix", matrix, "--rtol", "1e-300", "--json", expect=2)[0])
                   for matrix in (diagonal, MATRIX)}  # the second stagnates above 1e-300: the same status
        for report in reports.values():
            self.assertEqual(report["status"], "stagnation", report["reason"])
        self.assertIn("1e-300 cannot be verified", reports[diagonal]["reason"])

    def test_a_nan_in_x_is_refused_as_input_not_blamed_on_a_kernel(self):
        x = np.ones(48)
        x[7] = np.nan
        np.save(self.path("x.npy"), x)
        err = failed(("spmm", "--matrix", MATRIX, "--x", self.path("x.npy")), "holds NaN at row 7")
        self.assertNotIn("kernel is wrong", err)


class Messages(ScratchFolderTest):
    """Items 19 and 24: empty values, conflicting options and messages that name the right thing."""

    def test_an_empty_value_is_refused_not_taken_as_absent(self):
        for args in (("heat", "--size", ""), ("wave", "--size", ""), ("poisson", "--size", ""),
                     ("heat", "--device", ""), ("solve", "--generate", "")):
            failed(args, "empty")

    def test_the_block_size_of_a_generated_system_is_named(self):
        err = failed(("solve", "--generate", "4x4x4", "--block", "0"), "--block is 1 to 16")
        self.assertNotIn("--size", err)

    def test_two_right_hand_sides_are_refused_as_two(self):
        np.save(self.path("f.npy"), np.zeros((8, 8, 8), np.float32))
        failed(("poisson", "--rhs", self.path("f.npy"), "--problem", "manufactured"), "not both")

    def test_an_alpha_just_above_the_limit_is_printed_as_given(self):
        failed(("heat", "--size", "33x17", "--alpha", "0.2500001"), "A = 0.2500001")

    def test_dofs_no_element_touches_are_named(self):
        one = np.eye(4) * 2 - np.eye(4, k=1) - np.eye(4, k=-1)
        np.save(self.path("L.npy"), np.stack([one, one]))
        np.save(self.path("V.npy"), np.array([[0, 1, 2, 3], [6, 7, 8, 9]], np.int32))  # 4 and 5 in none
        err = failed(("modes", "--elements", self.path("L.npy"), "--dofs", self.path("V.npy"), "--modes", "2"),
                     "DOF 4 has no stiffness")
        self.assertNotIn("block row", err)

    def test_an_unclear_cache_switch_is_refused(self):
        failed(("cache",), "ZIGGURAT_CACHE is 'maybe'", env={"ZIGGURAT_CACHE": "maybe"})


class Benchmarks(ScratchFolderTest):
    """Item 13 and 19: the benchmarks parse every option before any work."""

    def setUp(self):
        super().setUp()
        if not bench_installed():
            self.skipTest("the benchmarks are not built")

    def test_bad_lists_are_refused_before_anything_is_measured(self):
        for args, message in ((("heat", "--depths", "auto"), "--depths"), (("heat", "--depths", "1,,2"), "--depths"),
                              (("heat", "--depths", "123456789012345678901"), "--depths"),
                              (("heat", "--sweep", "-1"), "--sweep"), (("heat", "--size2d", "", "--sweep", "4"), "--sweep"),
                              (("wave", "--halo-steps", "x"), "--halo-steps"), (("wave", "--models", "3x3"), "--models"),
                              (("spmm", "--blocks", "0"), "--blocks"), (("solve", "--matrices", "/no/such.mtx"), "no such"),
                              (("poisson", "--heights", "1.5"), "--heights"),
                              (("ebe", "--sections", "projection,nothing"), "nothing")):
            err = failed(("bench", *args), message, seconds=20)
            self.assertNotIn("calibrating", err)

    def test_a_depth_that_cannot_run_is_said_not_dropped(self):
        err = run("bench", "heat", "--size2d", "34x34", "--size3d", "", "--steps", "2", "--trivial-steps", "1",
                  "--depths", "2,1000", "--peers", "none", "--device-memory", "16KiB")[1]
        self.assertIn("no row for the 34x34 grid's blocked kernel at depth 1000", err)


if __name__ == "__main__":
    support.main()
