#include "vtk_output.hpp"

#include <filesystem>

#include "ziggurat/base/error.hpp"
#include "ziggurat/io/vtk.hpp"

namespace ziggurat::cli {

namespace {

bool ends_with(const std::string& text, const std::string& tail) {
  return text.size() >= tail.size() && text.compare(text.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace

void add_vtk_option(CLI::App* command, FileOptions& files, std::string& path) {
  files.add_output(command, "--vtk", path, "Write the final field for ParaView: NAME.vti (VTK image), or NAME.pvti "
                                           "(under MPI: one NAME_RANK.vti a rank beside it)");
}

void check_vtk_name(const std::string& path, bool ranks) {
  if (path.empty()) return;
  if (ranks && !ends_with(path, ".pvti"))
    throw InvalidArgument("--vtk " + path + ": under MPI give a NAME.pvti (each rank writes its piece NAME_RANK.vti)");
  if (!ends_with(path, ".vti") && !ends_with(path, ".pvti"))
    throw InvalidArgument("--vtk " + path + " must end in .vti (a VTK image) or .pvti (its pieces)");
}

template <class T>
void write_slab_vtk(const std::string& path, const T* values, const std::vector<std::size_t>& extents,
                    const std::vector<std::pair<std::size_t, std::size_t>>& slabs, std::size_t rank,
                    const std::string& name) {
  const vtk::Extent whole = vtk::whole_extent(extents);
  const auto& [first, count] = slabs.at(rank);
  vtk::write_image(vtk::piece_path(path, rank), values, whole, vtk::slab_extent(extents, first, count), name);
  if (rank != 0) return;
  std::vector<vtk::ImagePiece> pieces;
  for (std::size_t r = 0; r < slabs.size(); ++r)
    pieces.push_back({vtk::slab_extent(extents, slabs[r].first, slabs[r].second),
                      vtk::piece_path(path, r).filename().string()});
  vtk::write_parallel_image<T>(path, whole, pieces, name);
}

template void write_slab_vtk<float>(const std::string&, const float*, const std::vector<std::size_t>&,
                                    const std::vector<std::pair<std::size_t, std::size_t>>&, std::size_t,
                                    const std::string&);
template void write_slab_vtk<double>(const std::string&, const double*, const std::vector<std::size_t>&,
                                     const std::vector<std::pair<std::size_t, std::size_t>>&, std::size_t,
                                     const std::string&);

}  // namespace ziggurat::cli
