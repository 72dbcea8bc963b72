#!/usr/bin/env python3
"""`ziggurat modes`: subspace iteration on element-by-element K and M, against SciPy's eigsh.

Usage: test_modes.py PATH/TO/ziggurat
"""
import json

import numpy as np

import cli_support as support
from cli_support import ScratchFolderTest, run


class Modes(ScratchFolderTest):
    """`ziggurat modes`: subspace iteration on element-by-element K and M, against SciPy's eigsh."""

    MESH = "cantilever:1x0.1x0.15:12,2,3"

    def assembled(self, prefix, kind):
        """K or M assembled by SciPy from the element files (negative DOFs dropped)."""
        import scipy.sparse
        matrices, dofs = np.load(f"{prefix}-{kind}.npy"), np.load(f"{prefix}-dofs.npy")
        n = int(dofs.max()) + 1
        rows = np.repeat(dofs[:, :, None], dofs.shape[1], axis=2)
        cols = np.repeat(dofs[:, None, :], dofs.shape[1], axis=1)
        keep = (rows >= 0) & (cols >= 0)
        return scipy.sparse.coo_matrix((matrices[keep], (rows[keep], cols[keep])), shape=(n, n)).tocsc()

    def modes(self, *args):
        return json.loads(run("modes", *args, "--json")[0])

    def test_generated_cantilever_matches_scipy_eigsh(self):
        import scipy.sparse.linalg
        prefix = self.path("beam")
        # Colouring in both runs: atomics add in a varying order, and the comparison below is exact.
        summary = self.modes("--mesh", self.MESH, "--modes", 6, "--save-model", prefix, "--out", self.path("phi.npy"),
                             "--scatter", "colouring")
        self.assertTrue(summary["converged"], summary["reason"])
        k, m = self.assembled(prefix, "stiffness"), self.assembled(prefix, "mass")
        self.assertEqual(summary["dofs"], k.shape[0])
        want = np.sort(scipy.sparse.linalg.eigsh(k, k=6, M=m, sigma=0, which="LM")[0])
        np.testing.assert_allclose(summary["eigenvalues"], want, rtol=1e-8, atol=0)
        np.testing.assert_allclose(summary["frequencies_hz"], np.sqrt(want) / (2 * np.pi), rtol=1e-8)
        self.assertLess(max(summary["residuals"]), 1e-5)
        phi = np.load(self.path("phi.npy"))
        self.assertEqual(phi.shape, (k.shape[0], 6))
        np.testing.assert_allclose(phi.T @ (m @ phi), np.eye(6), atol=1e-7)
        np.testing.assert_allclose(phi.T @ (k @ phi), np.diag(summary["eigenvalues"]), rtol=0,
                                   atol=1e-7 * max(summary["eigenvalues"]))
        # The same model from the element files gives the same eigenvalues.
        again = self.modes("--elements", f"{prefix}-stiffness.npy", "--dofs", f"{prefix}-dofs.npy", "--mass",
                           f"{prefix}-mass.npy", "--modes", 6, "--scatter", "colouring")
        self.assertEqual(again["eigenvalues"], summary["eigenvalues"])
        for phase in ("setup", "solve", "projection", "small", "update", "total"):
            self.assertGreaterEqual(summary["times"][phase + "_s"], 0)

    def test_matrix_free_cg_finds_the_assembled_modes(self):
        assembled = self.modes("--mesh", self.MESH, "--modes", 4)
        self.assertEqual((assembled["cg_operator"], assembled["preconditioner"]), ("assembled", "ilu0"))
        free = self.modes("--mesh", self.MESH, "--modes", 4, "--cg-operator", "matrix-free")
        self.assertEqual((free["cg_operator"], free["preconditioner"]), ("matrix-free", "block-jacobi"))
        self.assertTrue(free["converged"], free["reason"])
        np.testing.assert_allclose(free["eigenvalues"], assembled["eigenvalues"], rtol=1e-8)
        _, err = run("modes", "--mesh", self.MESH, "--modes", 4, "--cg-operator", "matrix-free",
                     "--preconditioner", "ilu0", expect=1)
        self.assertIn("ILU(0) needs the assembled matrix", err)
        _, err = run("modes", "--mesh", self.MESH, "--cg-operator", "sparse", expect=1)
        self.assertIn("--cg-operator", err)

    def test_both_projection_layouts_give_the_same_bits(self):
        runs = {layout: self.modes("--mesh", self.MESH, "--modes", 4, "--scatter", "colouring", "--projection", layout)
                for layout in ("tiles", "columns")}
        for layout, summary in runs.items():
            self.assertEqual(summary["projection_layout"], layout)
        self.assertEqual(runs["tiles"]["eigenvalues"], runs["columns"]["eigenvalues"])
        # auto takes a layout that runs here: tensor only on NVIDIA's double-precision tensor cores.
        device = next(d for d in json.loads(run("devices", "--json")[0])["devices"] if d["default"])
        tensor_runs = device["nvidia_compute_capability"] >= 80 and device["fp64"]
        self.assertIn(self.modes("--mesh", self.MESH, "--modes", 4)["projection_layout"],
                      ("tiles", "columns", "tensor") if tensor_runs else ("tiles", "columns"))
        self.check_error(["--mesh", self.MESH, "--projection", "rows"], "--projection")

    def test_tensor_layout_runs_where_there_are_tensor_cores_else_says_why(self):
        device = next(d for d in json.loads(run("devices", "--json")[0])["devices"] if d["default"])
        args = ["--mesh", self.MESH, "--modes", 4, "--scatter", "colouring", "--projection", "tensor"]
        if device["nvidia_compute_capability"] >= 80 and device["fp64"]:
            tensor = self.modes(*args)
            self.assertEqual(tensor["projection_layout"], "tensor")
            # Bricks' stiffness and consistent mass are semi-definite: both projections read factors.
            self.assertEqual(tensor["projection_factored"], {"stiffness": True, "mass": True})
            tiles = self.modes("--mesh", self.MESH, "--modes", 4, "--scatter", "colouring", "--projection", "tiles")
            np.testing.assert_allclose(tensor["eigenvalues"], tiles["eigenvalues"], rtol=1e-10)
        else:
            self.check_error(args, "compute capability 8.0")
        self.check_error(args + ["--precision", "f32"], "tensor layout")

    def test_lumped_mass_float_and_streamed_elements(self):
        import scipy.sparse
        import scipy.sparse.linalg
        prefix = self.path("lumped")
        double = self.modes("--mesh", self.MESH, "--lumped", "--modes", 4, "--save-model", prefix, "--scatter",
                            "colouring")
        m = self.assembled(prefix, "mass")
        self.assertEqual((m - scipy.sparse.diags(m.diagonal())).count_nonzero(), 0)  # diagonal
        want = np.sort(scipy.sparse.linalg.eigsh(self.assembled(prefix, "stiffness"), k=4, M=m, sigma=0)[0])
        np.testing.assert_allclose(double["eigenvalues"], want, rtol=1e-8)
        streamed = self.modes("--mesh", self.MESH, "--lumped", "--modes", 4, "--batch-elements", 32, "--scatter",
                              "colouring")
        np.testing.assert_allclose(streamed["eigenvalues"], double["eigenvalues"], rtol=1e-12)
        self.assertEqual((double["batch_elements"], streamed["batch_elements"]), (0, 32))  # small: resident
        single = self.modes("--mesh", self.MESH, "--lumped", "--modes", 4, "--precision", "f32")
        self.assertEqual(single["precision"], "f32")
        np.testing.assert_allclose(single["eigenvalues"], want, rtol=5e-3)

    def test_human_output_and_picture(self):
        out, _ = run("modes", "--mesh", "cantilever:2x0.1x0.1:20,1,1", "--modes", 3, "--png", self.path("mode.png"))
        self.assertIn("frequency (Hz)", out)
        self.assertIn("projection", out)
        with open(self.path("mode.png"), "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")

    def check_error(self, args, message):
        self.assertIn(message, run("modes", *args, expect=1)[1])

    def test_bad_input_is_a_clear_error(self):
        rng = np.random.default_rng(3)
        a = rng.uniform(-1, 1, size=(5, 4, 4))
        a = a + a.transpose(0, 2, 1) + 8 * np.eye(4)
        dofs = np.array([[0, 1, 2, 3], [2, 3, 4, 5], [4, 5, 6, 7], [6, 7, 8, 9], [8, 9, -1, -1]], np.int32)
        np.save(self.path("L.npy"), a)
        np.save(self.path("V.npy"), dofs)
        far = dofs.astype(np.int64)
        far[3, 3] = 1 << 40
        np.save(self.path("far.npy"), far)
        self.check_error(["--elements", self.path("L.npy"), "--dofs", self.path("far.npy")], "2^31")
        self.check_error(["--elements", self.path("L.npy"), "--dofs", self.path("V.npy"), "--modes", 20],
                         "only 10 DOFs")
        twice = dofs.copy()
        twice[1, 1] = 2
        np.save(self.path("twice.npy"), twice)
        self.check_error(["--elements", self.path("L.npy"), "--dofs", self.path("twice.npy")], "twice")
        skew = a.copy()
        skew[3, 0, 1] += 1
        np.save(self.path("skew.npy"), skew)
        self.check_error(["--elements", self.path("skew.npy"), "--dofs", self.path("V.npy")], "not symmetric")
        nan = a.copy()
        nan[1, 2, 2] = np.nan
        np.save(self.path("nan.npy"), nan)
        self.check_error(["--elements", self.path("nan.npy"), "--dofs", self.path("V.npy")], "NaN")
        np.save(self.path("short.npy"), dofs[:3])
        self.check_error(["--elements", self.path("L.npy"), "--dofs", self.path("short.npy")], "5")
        # Nothing holds the model: every DOF free, and a constant field costs no energy.
        springs = np.tile(np.array([[1.0, -1.0], [-1.0, 1.0]]), (4, 1, 1))
        np.save(self.path("springs.npy"), springs)
        np.save(self.path("chain.npy"), np.array([[0, 1], [1, 2], [2, 3], [3, 4]], np.int32))
        self.check_error(["--elements", self.path("springs.npy"), "--dofs", self.path("chain.npy"), "--modes", 2],
                         "rigid body")
        self.check_error(["--mesh", "plate:1x1x1:2,2,2"], "cantilever:LxWxH:nx,ny,nz")
        self.check_error(["--mesh", "cantilever:1x1:2,2,2"], "LxWxH")
        self.check_error(["--elements", self.path("L.npy"), "--dofs", self.path("V.npy"), "--png", self.path("p.png")],
                         "no geometry")
        self.check_error(["--mesh", self.MESH, "--material", "210e9,0.5,7850"], "nu")
        self.check_error(["--mesh", self.MESH, "--preconditioner", "magic"], "--preconditioner")


if __name__ == "__main__":
    support.main()
