#pragma once
// The files a run leaves for ParaView and NumPy, written alike by the CLI (--vtk, --seismograms)
// and the Python module (vtk=): a grid's field as a VTK image, a model's mode shapes on its mesh,
// a wave's displacement, and seismograms in a file that says what they are.

#include <cstddef>
#include <string>
#include <vector>

#include "ziggurat/app/wave_run.hpp"
#include "ziggurat/matrix/elastic_grid.hpp"
#include "ziggurat/matrix/hex_mesh.hpp"
#include "ziggurat/solver/wave.hpp"

namespace ziggurat::app {

/// Throws InvalidArgument naming `option` unless `path` ends in one of `endings` (".vti").
void check_ending(const std::string& path, const std::vector<std::string>& endings, const std::string& option);

/// The field `values` of a grid of `extents` (fastest first) as `path`: a .vti, or a .pvti naming
/// one piece NAME_0.vti beside it; the point array `name`. InvalidArgument for another ending.
template <class T>
void write_field_vtk(const std::string& path, const T* values, const std::vector<std::size_t>& extents,
                     const std::string& name);

/// The name of mode `index` (from 0) of frequency `hz` in a .vtu: "mode_1_12.34Hz".
std::string mode_name(std::size_t index, double hz);

/// A generated model's mesh as a .vtu: its nodes (m), its bricks as hexahedra, and each mode
/// (`modes`: dofs x modes, row after row, as subspace_iteration returns them) as a point vector
/// ux, uy, uz named by mode_name(); a clamped node's is 0. InvalidArgument unless `path` ends in
/// .vtu or `modes` holds dofs x frequencies.size() values.
template <class T>
void write_modes_vtk(const std::string& path, const fem::ElasticModel<T>& model, const std::vector<T>& modes,
                     const std::vector<double>& frequencies);

/// A wave's displacement `u` (ux, uz or ux, uy, uz a node) as a .vti of `grid`'s nodes, spacing dx
/// (x right, z down from the free surface), the point array "displacement".
template <class T>
void write_displacement_vtk(const std::string& path, const wave::ElasticGrid& grid, const T* u);

/// `run`'s seismograms as a .npz that numpy.load opens: data (receivers, steps, components; m),
/// dt and t0 (the time of sample 0, which is dt; s), receivers (receivers, dims: the positions of
/// the nodes recorded, x, z or x, y, z in m, z down), components ("ux", "uz" or "ux", "uy", "uz")
/// and units (what each array is in). InvalidArgument unless `path` ends in .npz.
template <class T>
void write_seismograms_npz(const std::string& path, const wave::WaveRun<T>& run, const WaveSetup& setup);

}  // namespace ziggurat::app
