"""vtk= of heat, poisson, modes and wave (issue 41, item 1): the files the CLI's --vtk writes,
written by the same C++ writers, read back with VTK's own readers (python3-vtk9) and compared bit
for bit with the arrays the functions return."""

import pathlib

import numpy as np
import pytest

import ziggurat

vtk = pytest.importorskip("vtk", reason="VTK's Python module is missing: scripts/setup.sh installs python3-vtk9")
from vtk.util.numpy_support import vtk_to_numpy  # noqa: E402


def read(reader_class, path):
    reader = reader_class()
    reader.SetFileName(str(path))
    reader.Update()
    return reader.GetOutput()


def point_array(data, name):
    array = data.GetPointData().GetArray(name)
    assert array is not None, f"no point array {name!r}"
    return vtk_to_numpy(array)


def test_heat_and_poisson_write_the_bits_they_return(context, dtype, tmp_path):
    u0 = np.random.default_rng(3).uniform(-1, 1, size=(11, 9, 7)).astype(dtype)
    u, _ = ziggurat.heat(u0, 5, vtk=tmp_path / "u.vti", context=context)
    assert point_array(read(vtk.vtkXMLImageDataReader, tmp_path / "u.vti"), "u").tobytes() == u.tobytes()
    u, _ = ziggurat.heat(u0[0], 5, vtk=str(tmp_path / "u.pvti"), context=context)
    image = read(vtk.vtkXMLPImageDataReader, tmp_path / "u.pvti")
    assert image.GetDimensions() == (7, 9, 1) and point_array(image, "u").tobytes() == u.tobytes()
    p, _ = ziggurat.poisson(u0, tol=0, max_sweeps=6, vtk=tmp_path / "p.vti", context=context)
    assert point_array(read(vtk.vtkXMLImageDataReader, tmp_path / "p.vti"), "u").tobytes() == p.tobytes()


def test_modes_writes_the_mesh_and_each_mode(context, tmp_path):
    f, phi, _ = ziggurat.modes("cantilever:1x0.1x0.1:6,1,1", modes=2, vtk=tmp_path / "m.vtu", context=context)
    grid = read(vtk.vtkXMLUnstructuredGridReader, tmp_path / "m.vtu")
    assert (grid.GetNumberOfPoints(), grid.GetNumberOfCells()) == (28, 6)
    # Free DOFs are numbered node after node from the first unclamped node (hex_mesh.hpp): the
    # clamped face x = 0 holds the first 4 nodes (x fastest, 7 nodes a row).
    free = [n for n in range(28) if n % 7 != 0]
    for k, hz in enumerate(f):
        u = point_array(grid, f"mode_{k + 1}_{hz:.2f}Hz")
        assert u.dtype == phi.dtype
        assert u[free].tobytes() == phi[:, k].tobytes() and not u[[n for n in range(28) if n % 7 == 0]].any()
    with pytest.raises(ziggurat.InvalidArgument, match="no geometry"):
        ziggurat.modes(elements=np.eye(3)[None], dofs=[[0, 1, 2]], vtk=tmp_path / "e.vtu", context=context)


def test_wave_writes_the_last_displacement_whose_receivers_hold_the_last_samples(context, tmp_path):
    seismograms, _ = ziggurat.wave(np.full((29, 39), 3000.0), 1732.0, 2500.0, dx=10.0, steps=25,
                                        receivers=[[100, 0], [200, 50]], absorbing=5, vtk=tmp_path / "w.vti",
                                        context=context)
    image = read(vtk.vtkXMLImageDataReader, tmp_path / "w.vti")
    assert image.GetDimensions() == (40, 1, 30) and image.GetSpacing() == (10.0, 10.0, 10.0)
    u = point_array(image, "displacement")
    for r, (ix, iz) in enumerate(((10, 0), (20, 5))):
        assert u[iz * 40 + ix].tobytes() == seismograms[r, -1].tobytes()


@pytest.mark.parametrize("call, message", [
    (lambda c, d: ziggurat.heat(np.zeros((5, 5)), 1, vtk=d / "u.vtk", context=c), r"ending in \.vti or \.pvti"),
    (lambda c, d: ziggurat.poisson(np.zeros((5, 5, 5)), vtk=3, context=c), "vtk is a file name"),
    (lambda c, d: ziggurat.modes("cantilever:1x0.1x0.1:4,1,1", vtk=d / "m.vti", context=c), r"ending in \.vtu"),
    (lambda c, d: ziggurat.wave(np.full((9, 9), 3000.0), 1732.0, 2500.0, dx=10.0, steps=2, vtk=d / "w.pvd",
                                context=c), r"ending in \.vti"),
])
def test_a_bad_vtk_name_is_refused_before_any_work(context, tmp_path, call, message):
    with pytest.raises(ziggurat.InvalidArgument, match=message):
        call(context, tmp_path)
    assert list(pathlib.Path(tmp_path).iterdir()) == []
