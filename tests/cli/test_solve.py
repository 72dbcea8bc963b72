#!/usr/bin/env python3
"""`ziggurat solve`: the Krylov solvers on real and generated systems against NumPy's dense solve,
every ordering, sweep and product kernel, outcomes and bad input.

Usage: test_solve.py PATH/TO/ziggurat
"""
import json
import os

import numpy as np

import cli_support as support
from cli_support import MATRICES, ScratchFolderTest, read_mtx, run


class Solve(ScratchFolderTest):
    """`ziggurat solve` against NumPy's dense solve of the same system."""

    def test_solution_matches_numpy_and_outputs_are_written(self):
        matrix = os.path.join(MATRICES, "fs_183_1.mtx")
        a = read_mtx(matrix)
        b = np.linspace(-1, 1, a.shape[0])
        np.save(self.path("b.npy"), b)
        for method in ("bicgstab", "gmres"):
            out, hist = self.path(f"x-{method}.npy"), self.path(f"h-{method}.csv")
            summary = json.loads(run("solve", "--matrix", matrix, "--rhs", self.path("b.npy"), "--method", method,
                                     "--restart", 60, "--preconditioner", "ilu0", "--block", 3, "--rtol", 1e-10,
                                     "--out", out, "--history", hist, "--json")[0])
            self.assertTrue(summary["converged"], summary["reason"])
            x = np.load(out)
            self.assertEqual(x.shape, (a.shape[0],))
            self.assertLess(np.linalg.norm(a @ x - b) / np.linalg.norm(b), 1e-9)
            with open(hist) as f:
                lines = f.read().splitlines()
            self.assertEqual(lines[0], "iteration,relative_residual_0")
            self.assertEqual(len(lines), summary["iterations"] + 2)

    def test_absolute_tolerance_stops_at_its_bound(self):
        """--atol alone (--rtol 0): converged once ||b - A x|| < atol, checked against NumPy."""
        matrix = os.path.join(MATRICES, "fs_183_1.mtx")
        a = read_mtx(matrix)
        out = self.path("x.npy")
        b = np.ones(a.shape[0])
        norm_b = np.linalg.norm(b)
        summary = json.loads(run("solve", "--matrix", matrix, "--block", 3, "--rtol", 0, "--atol", 1e-6 * norm_b,
                                 "--kernel", "rule", "--out", out, "--json")[0])
        self.assertTrue(summary["converged"], summary["reason"])
        self.assertLess(np.linalg.norm(a @ np.load(out) - b), 1e-6 * norm_b)
        _, err = run("solve", "--matrix", matrix, "--rtol", 0, "--atol", 0, expect=1)
        self.assertIn("rtol and atol are both 0", err)

    def test_generated_system_every_ordering_and_k_vectors(self):
        for ordering in ("natural", "levels", "colours"):
            summary = json.loads(run("solve", "--generate", "8x6x5", "--block", 4, "--exact", "random",
                                     "--ordering", ordering, "--json")[0])
            self.assertTrue(summary["converged"], summary["reason"])
            self.assertLess(summary["error"], 1e-6)
        summary = json.loads(run("solve", "--generate", "6x6x6", "--block", 3, "--symmetric", "--method", "cg",
                                 "--preconditioner", "block-jacobi", "--exact", "random", "--vectors", 4, "--json")[0])
        self.assertTrue(summary["converged"], summary["reason"])
        self.assertEqual(summary["k"], 4)
        self.assertEqual(len(summary["vectors"]), 4)  # each right-hand side's report, its history in --history
        for vector in summary["vectors"]:
            self.assertEqual(vector["status"], "converged")
            self.assertLessEqual(vector["iterations"], summary["iterations"])
            self.assertNotIn("history", vector)

    def test_product_kernel_measured_by_default_the_rule_or_named(self):
        """auto times the kernels once and keeps the record; rule and a name measure nothing."""
        env = {"ZIGGURAT_CACHE_DIR": self.path("c")}
        args = ("solve", "--generate", "6x5x4", "--block", 3, "--symmetric", "--method", "cg", "--vectors", 4,
                "--exact", "random", "--json")
        first = json.loads(run(*args, env=env)[0])
        self.assertTrue(first["converged"], first["reason"])
        self.assertTrue(os.listdir(os.path.join(self.path("c"), "tuning")))  # the record of this kind of matrix
        again = json.loads(run(*args, env=env)[0])
        self.assertEqual(again["product_kernel"], first["product_kernel"])
        named = json.loads(run(*args, "--kernel", "multirow/2", env={"ZIGGURAT_CACHE_DIR": self.path("d")})[0])
        self.assertEqual(named["product_kernel"], "multirow/2")
        self.assertTrue(named["converged"], named["reason"])
        run(*args, "--kernel", "rule", env={"ZIGGURAT_CACHE_DIR": self.path("e")})
        self.assertFalse(os.path.exists(os.path.join(self.path("d"), "tuning")) or
                         os.path.exists(os.path.join(self.path("e"), "tuning")))
        _, err = run(*args, "--kernel", "fast", expect=1)
        self.assertIn("auto", err)

    def test_convection_system_orderings_and_sweeps(self):
        """Every sweep gives the same solve; block colours sit between natural and red-black."""
        iterations = {}
        for ordering, sweep in (("natural", "levels"), ("natural", "sync-free"), ("natural", "sequential"),
                                ("colours", "auto"), ("block-colours", "auto")):
            out = self.path(f"x-{ordering}-{sweep}.npy")
            summary = json.loads(run("solve", "--generate", "12x10x9", "--block", 2, "--system", "convection",
                                     "--exact", "random", "--ordering", ordering, "--sweep", sweep,
                                     "--aggregate", 8, "--out", out, "--json")[0])
            self.assertTrue(summary["converged"], summary["reason"])
            self.assertLess(summary["error"], 1e-6)
            if sweep != "auto":
                self.assertEqual(summary["sweep"], sweep)
            iterations[ordering, sweep] = summary["iterations"]
        for sweep in ("sync-free", "sequential"):
            self.assertTrue(np.array_equal(np.load(self.path("x-natural-levels.npy")),
                                           np.load(self.path(f"x-natural-{sweep}.npy"))))
        # Jacobi sweeps: approximate solves, the report naming their count; as many as the levels
        # less one (12 + 10 + 9 - 2 = 29 levels) give the exact solves' bits.
        for sweeps in (2, 28):
            out = self.path(f"x-jacobi-{sweeps}.npy")
            summary = json.loads(run("solve", "--generate", "12x10x9", "--block", 2, "--system", "convection",
                                     "--exact", "random", "--ordering", "natural", "--sweep", "jacobi",
                                     "--jacobi-sweeps", sweeps, "--out", out, "--json")[0])
            self.assertTrue(summary["converged"], summary["reason"])
            self.assertLess(summary["error"], 1e-6)
            self.assertEqual((summary["sweep"], summary["lower_jacobi_sweeps"], summary["upper_jacobi_sweeps"]),
                             ("jacobi", sweeps, sweeps))
        self.assertTrue(np.array_equal(np.load(self.path("x-natural-levels.npy")), np.load(self.path("x-jacobi-28.npy"))))
        summary = json.loads(run("solve", "--generate", "12x10x9", "--block", 2, "--system", "convection",
                                 "--ordering", "natural", "--sweep", "jacobi", "--json")[0])
        self.assertTrue(summary["converged"], summary["reason"])
        self.assertTrue(1 <= summary["upper_jacobi_sweeps"] <= summary["lower_jacobi_sweeps"] <= 16)
        _, err = run("solve", "--generate", "4x4x4", "--block", 1, "--sweep", "levels", "--jacobi-sweeps", 2, expect=1)
        self.assertIn("jacobi_sweeps 2 counts the sweeps of sweep jacobi; with sweep levels it would do nothing", err)
        for bad in (-1, 100001, "some"):
            _, err = run("solve", "--generate", "4x4x4", "--block", 1, "--jacobi-sweeps", bad, expect=1)
            self.assertIn(f"jacobi_sweeps (sweep jacobi's sweeps a triangular solve) is auto or 0 to 100000, not "
                          f"'{bad}'", err)
        self.assertLess(iterations["block-colours", "auto"], iterations["colours", "auto"])
        _, err = run("solve", "--generate", "4x4x4", "--block", 2, "--sweep", "fast", expect=1)
        self.assertIn("unknown triangular sweep 'fast'", err)
        _, err = run("solve", "--generate", "4x4x4", "--block", 2, "--system", "poisson", expect=1)
        self.assertIn("--system takes dominant, convection, laplace7", err)

    def test_model_problems_solve_with_their_own_blocks(self):
        for system, method, block in (("laplace7", "cg", 1), ("laplace27", "cg", 1), ("anisotropic", "cg", 1),
                                      ("upwind", "bicgstab", 1), ("elasticity", "cg", 3)):
            summary = json.loads(run("solve", "--generate", "6x5x4", "--system", system, "--method", method,
                                     "--exact", "random", "--rtol", 1e-9, "--max-iterations", 2000, "--json")[0])
            self.assertTrue(summary["converged"], summary["reason"])
            self.assertEqual(summary["block_size"], block)
            self.assertLess(summary["error"], 1e-5)
            self.assertEqual(summary["matrix"], f"{system} 6x5x4")
            # The scalar model problems are diagonally dominant (elasticity's blocks are not scalar).
            self.assertEqual(summary["ordering"],
                             support.auto_ilu0_ordering(block, skewed=system == "upwind", dominant=block == 1))
        _, err = run("solve", "--generate", "4x4x4", "--system", "elasticity", "--block", 2, expect=1)
        self.assertIn("elasticity has blocks of 3, not 2", err)
        _, err = run("solve", "--generate", "4x4x4", "--system", "dominant", expect=1)
        self.assertIn("--system dominant needs --block b", err)

    def test_padded_blocks_solve(self):
        """48 rows in blocks of 5: the padded last block row stays out of the answer."""
        matrix = os.path.join(MATRICES, "bcsstk01.mtx")
        a = read_mtx(matrix)
        for precond, ordering in (("jacobi", "natural"), ("block-jacobi", "natural"), ("ilu0", "block-colours")):
            out = self.path(f"x-{precond}.npy")
            summary = json.loads(run("solve", "--matrix", matrix, "--block", 5, "--method", "cg", "--preconditioner", precond,
                                     "--ordering", ordering, "--max-iterations", 500, "--rtol", 1e-10, "--out", out,
                                     "--json")[0])
            self.assertTrue(summary["converged"], summary["reason"])
            x = np.load(out)
            self.assertEqual(x.shape, (48,))
            self.assertLess(np.linalg.norm(a @ x - 1) / np.linalg.norm(np.ones(48)), 1e-9)

    def test_outcomes_and_bad_input(self):
        # Not converged: the report is printed and the exit status is 2.
        out, _ = run("solve", "--generate", "6x6x6", "--block", 2, "--preconditioner", "none", "--max-iterations", 1, expect=2)
        self.assertIn("not converged in 1 iterations", out)
        _, err = run("solve", "--generate", "4x4x4", "--block", 2, "--method", "lsqr", expect=1)
        self.assertIn("unknown method 'lsqr'", err)
        _, err = run("solve", "--matrix", os.path.join(MATRICES, "west0067.mtx"), "--rhs", self.path("none.npy"), expect=1)
        np.save(self.path("short.npy"), np.ones(3))
        _, err = run("solve", "--matrix", os.path.join(MATRICES, "west0067.mtx"), "--rhs", self.path("short.npy"), expect=1)
        self.assertIn("must have shape (67)", err)
        np.save(self.path("nan.npy"), np.full(67, np.nan))
        _, err = run("solve", "--matrix", os.path.join(MATRICES, "west0067.mtx"), "--rhs", self.path("nan.npy"),
                     "--preconditioner", "none", expect=1)
        self.assertIn("NaN at row 0", err)
        _, err = run("solve", "--generate", "4x4x4", "--block", 2, "--preconditioner", "jacobi", "--ordering", "colours", expect=1)
        self.assertIn("is for the ilu0 and ilu2 preconditioners", err)


if __name__ == "__main__":
    support.main()
