#include "ziggurat/io/vtk.hpp"

#include <cstdint>
#include <sstream>
#include <type_traits>

#include "ziggurat/base/error.hpp"
#include "ziggurat/base/files.hpp"

namespace ziggurat::vtk {

namespace {

template <class T>
const char* type_of() {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "float or double");
  return std::is_same_v<T, float> ? "Float32" : "Float64";
}

std::string extent_text(const Extent& e) {
  std::ostringstream text;
  for (std::size_t axis = 0; axis < 3; ++axis) text << (axis ? " " : "") << e.first[axis] << " " << e.last[axis];
  return text.str();
}

std::string image_attributes(const Extent& whole, double spacing) {
  std::ostringstream text;
  text.precision(17);
  text << "WholeExtent=\"" << extent_text(whole) << "\" Origin=\"0 0 0\" Spacing=\"" << spacing << " " << spacing << " "
       << spacing << "\"";
  return text.str();
}

std::size_t points(const Extent& e) {
  std::size_t count = 1;
  for (std::size_t axis = 0; axis < 3; ++axis) count *= e.last[axis] - e.first[axis] + 1;
  return count;
}

// XML attribute text: a name given by the caller may hold any character.
std::string escaped(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (c == '&') out += "&amp;";
    else if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '"') out += "&quot;";
    else out += c;
  }
  return out;
}

// The array's role: scalars, or vectors where it has 3 components (VTK's vectors have 3; a 2D
// displacement is a plain array of 2).
std::string point_attribute(std::size_t components, const std::string& name) {
  if (components == 1) return " Scalars=\"" + escaped(name) + "\"";
  if (components == 3) return " Vectors=\"" + escaped(name) + "\"";
  return "";
}

const char* kHead = "<?xml version=\"1.0\"?>\n";

}  // namespace

Extent whole_extent(const std::vector<std::size_t>& extents) {
  if (extents.empty() || extents.size() > 3) throw InvalidArgument("a VTK image has 1 to 3 axes");
  Extent e;
  for (std::size_t axis = 0; axis < extents.size(); ++axis) {
    if (extents[axis] == 0) throw InvalidArgument("a VTK image has at least one point along each axis");
    e.last[axis] = extents[axis] - 1;
  }
  return e;
}

Extent slab_extent(const std::vector<std::size_t>& extents, std::size_t first, std::size_t count) {
  Extent e = whole_extent(extents);
  const std::size_t slowest = extents.size() - 1;
  if (count == 0 || first + count > extents[slowest])
    throw InvalidArgument("rows " + std::to_string(first) + " to " + std::to_string(first + count) +
                          " lie outside a grid of " + std::to_string(extents[slowest]) + " rows");
  e.first[slowest] = first;
  e.last[slowest] = first + count - 1;
  return e;
}

template <class T>
void write_image(const std::filesystem::path& path, const T* values, const Extent& whole, const Extent& piece,
                 const std::string& name, double spacing, std::size_t components) {
  if (components == 0) throw InvalidArgument("a VTK point array has at least one component");
  for (std::size_t axis = 0; axis < 3; ++axis)
    if (piece.first[axis] > piece.last[axis] || piece.first[axis] < whole.first[axis] ||
        piece.last[axis] > whole.last[axis])
      throw InvalidArgument("the VTK piece " + extent_text(piece) + " lies outside its image " + extent_text(whole));
  std::ostringstream head;
  head << kHead << "<VTKFile type=\"ImageData\" version=\"1.0\" byte_order=\"LittleEndian\" header_type=\"UInt64\">\n"
       << "  <ImageData " << image_attributes(whole, spacing) << ">\n"
       << "    <Piece Extent=\"" << extent_text(piece) << "\">\n"
       << "      <PointData" << point_attribute(components, name) << ">\n"
       << "        <DataArray type=\"" << type_of<T>() << "\" Name=\"" << escaped(name) << "\" NumberOfComponents=\""
       << components << "\" format=\"appended\" offset=\"0\"/>\n"
       << "      </PointData>\n"
       << "      <CellData/>\n"
       << "    </Piece>\n"
       << "  </ImageData>\n"
       << "  <AppendedData encoding=\"raw\">\n   _";
  const std::string start = head.str();
  const std::uint64_t bytes = points(piece) * components * sizeof(T);
  const std::string tail = "\n  </AppendedData>\n</VTKFile>\n";
  write_file_atomically(path, {{start.data(), start.size()}, {&bytes, sizeof bytes}, {values, bytes},
                               {tail.data(), tail.size()}});
}

template <class T>
void write_parallel_image(const std::filesystem::path& path, const Extent& whole, const std::vector<ImagePiece>& pieces,
                          const std::string& name, double spacing) {
  std::ostringstream text;
  text << kHead << "<VTKFile type=\"PImageData\" version=\"1.0\" byte_order=\"LittleEndian\" header_type=\"UInt64\">\n"
       << "  <PImageData " << image_attributes(whole, spacing) << " GhostLevel=\"0\">\n"
       << "    <PPointData Scalars=\"" << escaped(name) << "\">\n"
       << "      <PDataArray type=\"" << type_of<T>() << "\" Name=\"" << escaped(name) << "\" NumberOfComponents=\"1\"/>\n"
       << "    </PPointData>\n";
  for (const ImagePiece& piece : pieces)
    text << "    <Piece Extent=\"" << extent_text(piece.extent) << "\" Source=\"" << escaped(piece.file) << "\"/>\n";
  text << "  </PImageData>\n</VTKFile>\n";
  write_file_atomically(path, text.str());
}

void write_collection(const std::filesystem::path& path, const std::vector<TimeStep>& steps) {
  std::ostringstream text;
  text.precision(17);
  text << kHead << "<VTKFile type=\"Collection\" version=\"1.0\" byte_order=\"LittleEndian\">\n  <Collection>\n";
  for (const TimeStep& step : steps)
    text << "    <DataSet timestep=\"" << step.time << "\" part=\"0\" file=\"" << escaped(step.file) << "\"/>\n";
  text << "  </Collection>\n</VTKFile>\n";
  write_file_atomically(path, text.str());
}

std::filesystem::path piece_path(const std::filesystem::path& path, std::size_t rank) {
  std::filesystem::path piece = path;
  piece.replace_filename(path.stem().string() + "_" + std::to_string(rank) + ".vti");
  return piece;
}

template void write_image<float>(const std::filesystem::path&, const float*, const Extent&, const Extent&,
                                 const std::string&, double, std::size_t);
template void write_image<double>(const std::filesystem::path&, const double*, const Extent&, const Extent&,
                                  const std::string&, double, std::size_t);
template void write_parallel_image<float>(const std::filesystem::path&, const Extent&, const std::vector<ImagePiece>&,
                                          const std::string&, double);
template void write_parallel_image<double>(const std::filesystem::path&, const Extent&, const std::vector<ImagePiece>&,
                                           const std::string&, double);

}  // namespace ziggurat::vtk
