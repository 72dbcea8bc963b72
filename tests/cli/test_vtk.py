#!/usr/bin/env python3
"""--vtk files (issue 41, item 1) read back with VTK's own readers (python3-vtk9): heat's and
Poisson's .vti hold the bits of their .npy, a 2-rank heat run's .pvti reads as one grid equal to
one process's result, wave's snapshots form a .pvd series whose displacements at the receivers
are the seismograms' samples, modes' .vtu holds the mesh and every mode's bits, and a mode shape
renders offscreen. Wave's --seismograms .npz, read by NumPy, holds the .npy's bits and what they
are.

Usage: test_vtk.py PATH/TO/ziggurat
"""
import json
import os
import shutil
import subprocess
import sys
import unittest
import zipfile
import xml.etree.ElementTree as ET

import numpy as np

import cli_support as support
from cli_support import ScratchFolderTest, mpi_environment, read_png, run

try:
    import vtk
    from vtk.util.numpy_support import vtk_to_numpy
except ImportError:
    vtk = None


def read_points(reader_class, path, name="u"):
    """The image's dimensions (x, y, z) and point array `name`, as VTK's reader gives them."""
    reader = reader_class()
    reader.SetFileName(path)
    reader.Update()
    image = reader.GetOutput()
    array = image.GetPointData().GetArray(name)
    if array is None:
        raise AssertionError(f"{path} has no point array {name!r}")
    return image.GetDimensions(), vtk_to_numpy(array)


class VtkFiles(ScratchFolderTest):
    def setUp(self):
        if vtk is None:
            self.skipTest("VTK's Python module is missing: scripts/setup.sh installs python3-vtk9")
        super().setUp()

    def assert_image_holds(self, reader_class, path, npy):
        field = np.load(npy)
        dims, values = read_points(reader_class, path)
        self.assertEqual(tuple(d for d in dims if d > 1), tuple(reversed(field.shape)))
        self.assertEqual(values.dtype, field.dtype)
        self.assertEqual(values.tobytes(), field.tobytes())

    def test_heat_vti_holds_the_bits_of_the_npy_in_2d_and_3d_f32_and_f64(self):
        for size, precision in (("37x23", "f32"), ("13x11x9", "f64")):
            out, vti = self.path(f"u-{precision}.npy"), self.path(f"u-{precision}.vti")
            stdout, _ = run("heat", "--size", size, "--steps", 12, "--precision", precision, "--out", out, "--vtk", vti,
                            "--quiet", "--json")
            self.assertEqual(json.loads(stdout)["vtk"], vti)
            self.assert_image_holds(vtk.vtkXMLImageDataReader, vti, out)

    def test_a_pvti_of_one_process_names_one_piece(self):
        out, pvti = self.path("u.npy"), self.path("u.pvti")
        run("heat", "--size", "40x30", "--steps", 8, "--out", out, "--vtk", pvti, "--quiet")
        self.assertTrue(os.path.exists(self.path("u_0.vti")))
        self.assert_image_holds(vtk.vtkXMLPImageDataReader, pvti, out)

    def test_poisson_vti_holds_the_bits_of_the_npy(self):
        out, vti = self.path("p.npy"), self.path("p.vti")
        run("poisson", "--size", "17x15x13", "--problem", "manufactured", "--out", out, "--vtk", vti, "--quiet")
        self.assert_image_holds(vtk.vtkXMLImageDataReader, vti, out)

    def test_wave_snapshots_form_a_pvd_series_whose_fields_hold_the_seismograms_bits(self):
        np.save(self.path("receivers.npy"), np.array([[300.0, 0.0], [500.0, 100.0]]))  # nodes (30, 0), (50, 10)
        pvd = self.path("series.pvd")
        stdout, _ = run("wave", "--size", "80x50", "--steps", 90, "--snapshots", 40, "--vtk", pvd, "--receivers",
                        self.path("receivers.npy"), "--out", self.path("seis.npy"), "--json")
        dt = json.loads(stdout)["dt_s"]
        seismograms = np.load(self.path("seis.npy"))  # (receivers, steps, ux uz)
        steps = [(float(d.get("timestep")), d.get("file")) for d in ET.parse(pvd).getroot().iter("DataSet")]
        self.assertEqual([name for _, name in steps], ["series-000040.vti", "series-000080.vti", "series-000090.vti"])
        for (time, name), step in zip(steps, (40, 80, 90)):
            self.assertEqual(time, step * dt)
            reader = vtk.vtkXMLImageDataReader()
            reader.SetFileName(self.path(name))
            reader.Update()
            image = reader.GetOutput()
            self.assertEqual(image.GetDimensions(), (80, 1, 50))
            self.assertEqual(image.GetSpacing(), (10.0, 10.0, 10.0))
            u = vtk_to_numpy(image.GetPointData().GetArray("displacement"))
            for r, (ix, iz) in enumerate(((30, 0), (50, 10))):
                self.assertEqual(u[iz * 80 + ix].tobytes(), seismograms[r, step - 1].tobytes())
        _, err = run("wave", "--size", "80x50", "--steps", 9, "--snapshots", 4, "--vtk", self.path("s.vtk"), expect=1)
        self.assertIn("must end in .pvd", err)

    def modes_vtu(self, precision):
        """Runs modes on a small cantilever with --vtk, --out and --save-model; returns the report,
        the .vtu's grid as VTK reads it, phi and the elements' DOFs."""
        vtu, out, prefix = self.path(f"m-{precision}.vtu"), self.path(f"phi-{precision}.npy"), self.path(precision)
        stdout, _ = run("modes", "--mesh", "cantilever:1x0.1x0.1:6,1,1", "--modes", 3, "--precision", precision,
                        "--out", out, "--vtk", vtu, "--save-model", prefix, "--quiet", "--json")
        report = json.loads(stdout)
        self.assertEqual(report["vtk"], vtu)
        reader = vtk.vtkXMLUnstructuredGridReader()
        reader.SetFileName(vtu)
        reader.Update()
        return report, reader.GetOutput(), np.load(out), np.load(prefix + "-dofs.npy")

    def test_modes_vtu_holds_the_mesh_and_the_bits_of_every_mode(self):
        for precision in ("f64", "f32"):
            report, grid, phi, dofs = self.modes_vtu(precision)
            self.assertEqual((grid.GetNumberOfPoints(), grid.GetNumberOfCells()), (7 * 2 * 2, 6))
            self.assertEqual({grid.GetCellType(c) for c in range(6)}, {vtk.VTK_HEXAHEDRON})
            self.assertEqual(grid.GetBounds(), (0.0, 1.0, 0.0, 0.1, 0.0, 0.1))
            corners = vtk_to_numpy(grid.GetCells().GetConnectivityArray()).reshape(6, 8)
            points = vtk_to_numpy(grid.GetPoints().GetData())
            for brick in points[corners]:  # VTK's hexahedron: the bottom face counter-clockwise, then the top
                low, high = brick.min(axis=0), brick.max(axis=0)
                expected = [[(low, high)[bit][axis] for axis, bit in enumerate(corner)]
                            for corner in ((0, 0, 0), (1, 0, 0), (1, 1, 0), (0, 1, 0), (0, 0, 1), (1, 0, 1),
                                           (1, 1, 1), (0, 1, 1))]
                self.assertEqual(brick.tolist(), expected)
            names = [f"mode_{k + 1}_{f:.2f}Hz" for k, f in enumerate(report["frequencies_hz"])]
            self.assertEqual([grid.GetPointData().GetArrayName(k) for k in range(3)], names)
            for k, name in enumerate(names):
                u = vtk_to_numpy(grid.GetPointData().GetArray(name))
                self.assertEqual(u.dtype, phi.dtype)
                expected = np.zeros_like(u)  # clamped nodes (x = 0) stay 0
                for element, element_points in enumerate(corners):  # each local DOF through --save-model's
                    for a, point in enumerate(element_points):
                        for d in range(3):
                            if dofs[element, 3 * a + d] >= 0:
                                expected[point, d] = phi[dofs[element, 3 * a + d], k]
                self.assertEqual(u.tobytes(), expected.tobytes())
        _, err = run("modes", "--mesh", "cantilever:1x0.1x0.1:6,1,1", "--vtk", self.path("m.vti"), expect=1)
        self.assertIn("must end in .vtu", err)
        _, err = run("modes", "--elements", self.path("f32-stiffness.npy"), "--dofs", self.path("f32-dofs.npy"),
                     "--vtk", self.path("e.vtu"), expect=1)
        self.assertIn("element files carry no geometry", err)
        self.assertFalse(os.path.exists(self.path("e.vtu")))

    def test_a_mode_shape_renders_offscreen(self):
        xvfb = shutil.which("xvfb-run")
        if not xvfb and not os.environ.get("DISPLAY"):
            self.skipTest("no X display and no xvfb-run: scripts/setup.sh installs xvfb (Debian's VTK renders "
                          "through X)")
        _, grid, _, _ = self.modes_vtu("f64")
        png = self.path("mode.png")
        done = subprocess.run([*([xvfb, "-a"] if xvfb else []), sys.executable, os.path.join(os.path.dirname(__file__), "render_mode.py"),
                               self.path("m-f64.vtu"), grid.GetPointData().GetArrayName(0), png],
                              capture_output=True, text=True, timeout=120)
        self.assertEqual(done.returncode, 0, done.stderr)
        pixels = read_png(png)
        self.assertEqual(pixels.shape, (240, 320, 3))
        drawn = np.any(pixels != 255, axis=2)  # not the white background
        self.assertGreater(drawn.sum(), 0.02 * drawn.size)
        self.assertGreater(len(np.unique(pixels[drawn], axis=0)), 10)  # coloured by the mode's magnitude

    def test_wave_seismograms_npz_holds_the_npys_bits_and_says_what_they_are(self):
        np.save(self.path("receivers.npy"), np.array([[300.0, 0.0], [500.0, 100.0]]))
        npz = self.path("seis.npz")
        stdout, _ = run("wave", "--size", "80x50", "--steps", 30, "--receivers", self.path("receivers.npy"), "--out",
                        self.path("seis.npy"), "--seismograms", npz, "--json")
        report = json.loads(stdout)
        self.assertEqual(report["seismograms"], npz)
        with zipfile.ZipFile(npz) as archive:
            self.assertIsNone(archive.testzip())  # every entry's CRC-32
            self.assertEqual(archive.namelist(), [f"{n}.npy" for n in
                                                  ("data", "dt", "t0", "receivers", "components", "units")])
        with np.load(npz) as f:
            seismograms = np.load(self.path("seis.npy"))
            self.assertEqual((f["data"].dtype, f["data"].shape), (seismograms.dtype, seismograms.shape))
            self.assertEqual(f["data"].tobytes(), seismograms.tobytes())
            self.assertEqual((f["dt"].shape, float(f["dt"]), float(f["t0"])), ((), report["dt_s"], report["dt_s"]))
            self.assertEqual(f["receivers"].tolist(), [[300.0, 0.0], [500.0, 100.0]])
            self.assertEqual(f["components"].tolist(), ["ux", "uz"])
            self.assertIn("data: m (displacement)", f["units"].tolist())
        run("wave", "--dims", 3, "--size", "21x11x11", "--steps", 5, "--absorbing", 2, "--out", self.path("s3.npy"),
            "--seismograms", self.path("s3.npz"), "--quiet")
        with np.load(self.path("s3.npz")) as f:
            self.assertEqual(f["data"].tobytes(), np.load(self.path("s3.npy")).tobytes())
            self.assertEqual(f["components"].tolist(), ["ux", "uy", "uz"])
            self.assertEqual(f["receivers"].shape, (f["data"].shape[0], 3))
            self.assertTrue(np.all(f["receivers"][:, 2] == 0))  # the default line on the free surface
        _, err = run("wave", "--size", "80x50", "--steps", 3, "--seismograms", self.path("s.npy"), expect=1)
        self.assertIn("must end in .npz", err)
        self.assertFalse(os.path.exists(self.path("s.npy")))

    def test_other_names_are_refused_before_any_work(self):
        _, err = run("heat", "--size", "9x9", "--steps", 1, "--vtk", self.path("u.vtk"), expect=1)
        self.assertIn("must end in .vti", err)
        self.assertFalse(os.path.exists(self.path("u.vtk")))

    def test_two_ranks_write_pieces_and_a_pvti_that_reads_as_the_one_process_grid(self):
        mpirun = shutil.which("mpirun")
        if mpirun is None:
            self.skipTest("no mpirun: scripts/setup.sh installs openmpi-bin")
        device = "name:" + json.loads(run("heat", "--size", "9x9", "--steps", 1, "--json")[0])["device"]
        args = ("--size", "64x50", "--steps", 16, "--height", 4, "--precision", "f32", "--device", device, "--quiet")
        run("heat", *args, "--out", self.path("one.npy"))
        done = subprocess.run([mpirun, "-np", "2", "--oversubscribe", support.ZIGGURAT, "heat", *map(str, args),
                               "--vtk", self.path("ranks.pvti")], capture_output=True, text=True, timeout=300,
                              env=mpi_environment())
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertTrue(os.path.exists(self.path("ranks_0.vti")) and os.path.exists(self.path("ranks_1.vti")))
        self.assert_image_holds(vtk.vtkXMLPImageDataReader, self.path("ranks.pvti"), self.path("one.npy"))
        done = subprocess.run([mpirun, "-np", "2", "--oversubscribe", support.ZIGGURAT, "heat", *map(str, args),
                               "--vtk", self.path("ranks.vti")], capture_output=True, text=True, timeout=300,
                              env=mpi_environment())
        self.assertNotEqual(done.returncode, 0)
        self.assertIn("under MPI give a NAME.pvti", done.stderr)


if __name__ == "__main__":
    support.main()
