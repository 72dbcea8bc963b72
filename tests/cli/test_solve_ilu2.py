#!/usr/bin/env python3
"""`ziggurat solve --preconditioner ilu2` (issue 37): ILU2 solves the real systems where ILU(0) stops, IC2
with cg, the nested-dissection ordering, the options' checks and the report's fill and times.

Usage: test_solve_ilu2.py PATH/TO/ziggurat
"""
import json
import os

import cli_support as support
from cli_support import run

MATRICES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "matrices")
GMRES = ("--method", "gmres", "--restart", "50", "--rtol", "1e-9", "--kernel", "rule")


def matrix(name):
    return os.path.join(MATRICES, name)


def solve_json(*args):
    return json.loads(run("solve", *args, "--json")[0])


class Ilu2(support.unittest.TestCase):
    def test_ilu2_solves_the_zero_diagonal_systems_where_ilu0_stops(self):
        # bp_1200 has 816 zero diagonal entries, west0067 65: ILU(0) cannot even start.
        for name in ("bp_1200.mtx", "west0067.mtx"):
            err = run("solve", "--matrix", matrix(name), *GMRES, expect=1)[1]
            self.assertIn("no diagonal block", err)
            report = solve_json("--matrix", matrix(name), *GMRES, "--preconditioner", "ilu2")
            self.assertTrue(report["converged"], report["reason"])
            self.assertLess(report["relative_residual"], 1e-9)
            self.assertLessEqual(report["iterations"], 15)  # SciPy's spilu + GMRES(50): 7 and 2
            self.assertTrue(report["matched_rows"])
            self.assertGreater(report["fill"], 1)
            self.assertGreater(report["times"]["host_factorization_s"], 0)
            self.assertEqual(report["preconditioner"], "ilu2")

    def test_in_blocks_the_single_rows_are_matched_where_the_blocks_cannot_be(self):
        # Blocks of 3 of bp_1200 hold zeros on their diagonals whatever block rows are matched.
        for ordering in ("natural", "nested-dissection"):
            report = solve_json("--matrix", matrix("bp_1200.mtx"), "--block", "3", *GMRES, "--preconditioner", "ilu2",
                                "--ordering", ordering)
            self.assertTrue(report["converged"], report["reason"])
            self.assertTrue(report["matched_rows"])
            self.assertLessEqual(report["iterations"], 25)

    def test_without_static_pivoting_a_zero_pivot_names_its_row_and_the_remedies(self):
        err = run("solve", "--matrix", matrix("bp_1200.mtx"), *GMRES, "--preconditioner", "ilu2", "--static-pivoting", "off",
                  expect=1)[1]
        self.assertIn("ILU2 failed: the diagonal block of block row", err)
        for remedy in ("--shift", "--threshold", "--static-pivoting on"):
            self.assertIn(remedy, err)

    def test_the_threshold_trades_fill_for_iterations(self):
        fill, iterations = [], []
        for tau in ("0.1", "0.01", "0"):
            report = solve_json("--matrix", matrix("fs_183_1.mtx"), *GMRES, "--preconditioner", "ilu2", "--threshold", tau)
            self.assertTrue(report["converged"], report["reason"])
            fill.append(report["fill"])
            iterations.append(report["iterations"])
        self.assertEqual(fill, sorted(fill))
        self.assertEqual(iterations, sorted(iterations, reverse=True))
        self.assertLessEqual(iterations[-1], 2)  # threshold 0: the complete LU

    def test_nested_dissection_for_ilu2_and_ilu0_reports_levels(self):
        system = ("--generate", "12x12x10", "--block", "2", "--system", "convection", "--kernel", "rule")
        for precond in ("ilu2", "ilu0"):
            report = solve_json(*system, "--preconditioner", precond, "--ordering", "nested-dissection")
            self.assertTrue(report["converged"], report["reason"])
            self.assertEqual(report["ordering"], "nested-dissection")
            self.assertGreater(report["lower_levels"], 1)
            self.assertGreater(report["upper_levels"], 1)
        text = run("solve", *system, "--preconditioner", "ilu2", "--ordering", "nested-dissection", "--quiet")[0]
        self.assertIn("bicgstab + ilu2(0.003) (nested-dissection,", text)
        self.assertIn("on the host", text)

    def test_cg_runs_ic2_and_refuses_static_pivoting(self):
        system = ("--generate", "10x8x6", "--block", "3", "--symmetric", "--method", "cg", "--kernel", "rule")
        text = run("solve", *system, "--preconditioner", "ilu2", "--quiet")[0]
        self.assertIn("cg + ic2(0.003)", text)
        err = run("solve", *system, "--preconditioner", "ilu2", "--static-pivoting", "on", expect=1)[1]
        self.assertIn("static pivoting", err)

    def test_options_are_checked_and_documented(self):
        base = ("solve", "--matrix", matrix("fs_183_1.mtx"), "--preconditioner", "ilu2")
        self.assertIn("--threshold", run(*base, "--threshold", "-1", expect=1)[1])
        self.assertIn("unknown static pivoting", run(*base, "--static-pivoting", "maybe", expect=1)[1])
        self.assertIn("nested-dissection", run(*base, "--ordering", "dissection", expect=1)[1])
        self.assertIn("ilu2", run("solve", "--preconditioner", "ilu3", "--matrix", matrix("fs_183_1.mtx"), expect=1)[1])
        help_text = run("solve", "--help")[0]
        for word in ("ilu2", "--threshold", "--static-pivoting", "nested-dissection"):
            self.assertIn(word, help_text)


if __name__ == "__main__":
    support.main()
