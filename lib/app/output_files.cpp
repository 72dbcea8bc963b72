#include "ziggurat/app/output_files.hpp"

#include <cstdint>
#include <cstdio>
#include <filesystem>

#include "ziggurat/base/error.hpp"
#include "ziggurat/io/npz.hpp"
#include "ziggurat/io/vtk.hpp"

namespace ziggurat::app {

namespace {

bool ends_with(const std::string& text, const std::string& tail) {
  return text.size() >= tail.size() && text.compare(text.size() - tail.size(), tail.size(), tail) == 0;
}

// A box's nodes (x fastest) and its bricks as VTK hexahedra: the local node order of hex_mesh.hpp,
// (0,0,0) (1,0,0) (1,1,0) (0,1,0) then the same a layer up, is VTK's.
std::vector<double> box_points(const fem::BoxMesh& b) {
  std::vector<double> points;
  points.reserve(3 * b.nodes());
  for (std::size_t l = 0; l <= b.nz; ++l)
    for (std::size_t j = 0; j <= b.ny; ++j)
      for (std::size_t i = 0; i <= b.nx; ++i)
        points.insert(points.end(), {b.lx * double(i) / double(b.nx), b.ly * double(j) / double(b.ny),
                                     b.lz * double(l) / double(b.nz)});
  return points;
}

std::vector<std::int64_t> box_hexahedra(const fem::BoxMesh& b) {
  const auto node = [&](std::size_t i, std::size_t j, std::size_t l) {
    return std::int64_t(i + (b.nx + 1) * (j + (b.ny + 1) * l));
  };
  std::vector<std::int64_t> cells;
  cells.reserve(8 * b.elements());
  for (std::size_t l = 0; l < b.nz; ++l)
    for (std::size_t j = 0; j < b.ny; ++j)
      for (std::size_t i = 0; i < b.nx; ++i)
        for (std::size_t up = 0; up < 2; ++up)
          cells.insert(cells.end(), {node(i, j, l + up), node(i + 1, j, l + up), node(i + 1, j + 1, l + up),
                                     node(i, j + 1, l + up)});
  return cells;
}

}  // namespace

void check_ending(const std::string& path, const std::vector<std::string>& endings, const std::string& option) {
  std::string names;
  for (const std::string& ending : endings) {
    if (ends_with(path, ending)) return;
    names += (names.empty() ? "" : " or ") + ending;
  }
  throw InvalidArgument(option + " " + path + " must end in " + names);
}

template <class T>
void write_field_vtk(const std::string& path, const T* values, const std::vector<std::size_t>& extents,
                     const std::string& name) {
  check_ending(path, {".vti", ".pvti"}, "the VTK file");
  const vtk::Extent whole = vtk::whole_extent(extents);
  if (!ends_with(path, ".pvti")) return vtk::write_image(path, values, whole, whole, name);
  const std::filesystem::path piece = vtk::piece_path(path, 0);
  vtk::write_image(piece, values, whole, whole, name);
  vtk::write_parallel_image<T>(path, whole, {{whole, piece.filename().string()}}, name);
}

std::string mode_name(std::size_t index, double hz) {
  char name[64];
  std::snprintf(name, sizeof name, "mode_%zu_%.2fHz", index + 1, hz);
  return name;
}

template <class T>
void write_modes_vtk(const std::string& path, const fem::ElasticModel<T>& model, const std::vector<T>& modes,
                     const std::vector<double>& frequencies) {
  check_ending(path, {".vtu"}, "the mode shapes' VTK file");
  const std::size_t p = frequencies.size(), dofs = model.stiffness.dofs, nodes = model.box.nodes();
  if (modes.size() != dofs * p)
    throw InvalidArgument("mode shapes of " + std::to_string(modes.size()) + " values are not " +
                          std::to_string(p) + " modes of " + std::to_string(dofs) + " DOFs");
  std::vector<std::vector<T>> shapes(p, std::vector<T>(3 * nodes, T(0)));
  for (std::size_t n = 0; n < 3 * nodes; ++n)
    if (const std::int32_t dof = model.node_dofs[n]; dof >= 0)
      for (std::size_t k = 0; k < p; ++k) shapes[k][n] = modes[std::size_t(dof) * p + k];
  std::vector<vtk::PointArray<T>> arrays;
  for (std::size_t k = 0; k < p; ++k) arrays.push_back({mode_name(k, frequencies[k]), shapes[k].data(), 3});
  vtk::write_hexahedra(path, box_points(model.box), box_hexahedra(model.box), arrays);
}

template <class T>
void write_displacement_vtk(const std::string& path, const wave::ElasticGrid& grid, const T* u) {
  check_ending(path, {".vti"}, "the displacement's VTK file");
  const vtk::Extent image = vtk::whole_extent({grid.nx, grid.ny, grid.nz});
  vtk::write_image(path, u, image, image, "displacement", grid.dx, grid.dims);
}

template <class T>
void write_seismograms_npz(const std::string& path, const wave::WaveRun<T>& run, const WaveSetup& setup) {
  check_ending(path, {".npz"}, "the seismograms' file");
  const std::size_t dims = setup.grid.dims;
  std::vector<double> positions;
  for (const wave::GridNode& node : setup.receivers) {
    positions.push_back(double(node.ix) * setup.grid.dx);
    if (dims == 3) positions.push_back(double(node.iy) * setup.grid.dx);
    positions.push_back(double(node.iz) * setup.grid.dx);
  }
  const std::vector<std::string> components =
      dims == 3 ? std::vector<std::string>{"ux", "uy", "uz"} : std::vector<std::string>{"ux", "uz"};
  write_npz(path, {npz_values("data", run.seismograms.data(), {run.receivers, run.steps, run.components}),
                   npz_scalar("dt", setup.dt), npz_scalar("t0", setup.dt),
                   npz_values("receivers", positions.data(), {setup.receivers.size(), dims}),
                   npz_texts("components", components),
                   npz_texts("units", {"data: m (displacement)", "dt: s", "t0: s",
                                       std::string("receivers: m (") + axes_text(dims) + ", z down)"})});
}

template void write_field_vtk<float>(const std::string&, const float*, const std::vector<std::size_t>&,
                                     const std::string&);
template void write_field_vtk<double>(const std::string&, const double*, const std::vector<std::size_t>&,
                                      const std::string&);
template void write_modes_vtk<float>(const std::string&, const fem::ElasticModel<float>&, const std::vector<float>&,
                                     const std::vector<double>&);
template void write_modes_vtk<double>(const std::string&, const fem::ElasticModel<double>&,
                                      const std::vector<double>&, const std::vector<double>&);
template void write_displacement_vtk<float>(const std::string&, const wave::ElasticGrid&, const float*);
template void write_displacement_vtk<double>(const std::string&, const wave::ElasticGrid&, const double*);
template void write_seismograms_npz<float>(const std::string&, const wave::WaveRun<float>&, const WaveSetup&);
template void write_seismograms_npz<double>(const std::string&, const wave::WaveRun<double>&, const WaveSetup&);

}  // namespace ziggurat::app
