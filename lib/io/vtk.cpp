#include "ziggurat/io/vtk.hpp"

#include <cstdint>
#include <deque>
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

// The raw appended section of a VTK XML file: each array a UInt64 byte count, then its bytes; an
// array's offset counts from the byte after the section's '_'.
class AppendedData {
 public:
  /// Adds `bytes` bytes at `data` (kept by the caller until write()); returns their offset.
  std::uint64_t add(const void* data, std::uint64_t bytes) {
    const std::uint64_t offset = end_;
    counts_.push_back(bytes);
    chunks_.push_back({&counts_.back(), sizeof(std::uint64_t)});
    chunks_.push_back({data, bytes});
    end_ += sizeof(std::uint64_t) + bytes;
    return offset;
  }
  /// Writes `head` (the XML up to the appended section), the arrays and the file's end.
  void write(const std::filesystem::path& path, const std::string& head) const {
    const std::string start = head + "  <AppendedData encoding=\"raw\">\n   _";
    std::vector<FileChunk> chunks{{start.data(), start.size()}};
    chunks.insert(chunks.end(), chunks_.begin(), chunks_.end());
    chunks.push_back({kTail, sizeof kTail - 1});
    write_file_atomically(path, chunks);
  }

 private:
  static constexpr char kTail[] = "\n  </AppendedData>\n</VTKFile>\n";
  std::deque<std::uint64_t> counts_;  // a deque: the chunks point at its elements
  std::vector<FileChunk> chunks_;
  std::uint64_t end_ = 0;
};

std::string data_array(const char* type, const std::string& name, std::size_t components, std::uint64_t offset) {
  return std::string("<DataArray type=\"") + type + "\" Name=\"" + escaped(name) + "\" NumberOfComponents=\"" +
         std::to_string(components) + "\" format=\"appended\" offset=\"" + std::to_string(offset) + "\"/>\n";
}

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
  AppendedData appended;
  const std::uint64_t offset = appended.add(values, points(piece) * components * sizeof(T));
  std::ostringstream head;
  head << kHead << "<VTKFile type=\"ImageData\" version=\"1.0\" byte_order=\"LittleEndian\" header_type=\"UInt64\">\n"
       << "  <ImageData " << image_attributes(whole, spacing) << ">\n"
       << "    <Piece Extent=\"" << extent_text(piece) << "\">\n"
       << "      <PointData" << point_attribute(components, name) << ">\n"
       << "        " << data_array(type_of<T>(), name, components, offset)
       << "      </PointData>\n"
       << "      <CellData/>\n"
       << "    </Piece>\n"
       << "  </ImageData>\n";
  appended.write(path, head.str());
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

template <class T>
void write_hexahedra(const std::filesystem::path& path, const std::vector<double>& points,
                     const std::vector<std::int64_t>& cells, const std::vector<PointArray<T>>& arrays) {
  if (points.size() % 3 != 0) throw InvalidArgument("a VTK mesh's points have 3 coordinates each");
  if (cells.size() % 8 != 0) throw InvalidArgument("a VTK hexahedron has 8 points");
  const std::size_t count = points.size() / 3, hexahedra = cells.size() / 8;
  for (const std::int64_t point : cells)
    if (point < 0 || std::uint64_t(point) >= count)
      throw InvalidArgument("a hexahedron names point " + std::to_string(point) + " of a mesh of " +
                            std::to_string(count) + " points");
  std::vector<std::int64_t> ends(hexahedra);
  for (std::size_t cell = 0; cell < hexahedra; ++cell) ends[cell] = std::int64_t(8 * (cell + 1));
  const std::vector<std::uint8_t> types(hexahedra, 12);  // VTK_HEXAHEDRON
  AppendedData appended;
  std::ostringstream head;
  head << kHead << "<VTKFile type=\"UnstructuredGrid\" version=\"1.0\" byte_order=\"LittleEndian\" header_type=\"UInt64\">\n"
       << "  <UnstructuredGrid>\n"
       << "    <Piece NumberOfPoints=\"" << count << "\" NumberOfCells=\"" << hexahedra << "\">\n"
       << "      <PointData" << (arrays.empty() ? "" : point_attribute(arrays[0].components, arrays[0].name)) << ">\n";
  for (const PointArray<T>& array : arrays) {
    if (array.components == 0) throw InvalidArgument("a VTK point array has at least one component");
    head << "        "
         << data_array(type_of<T>(), array.name, array.components,
                       appended.add(array.values, count * array.components * sizeof(T)));
  }
  head << "      </PointData>\n"
       << "      <Points>\n        " << data_array("Float64", "Points", 3, appended.add(points.data(), points.size() * 8))
       << "      </Points>\n"
       << "      <Cells>\n"
       << "        " << data_array("Int64", "connectivity", 1, appended.add(cells.data(), cells.size() * 8))
       << "        " << data_array("Int64", "offsets", 1, appended.add(ends.data(), ends.size() * 8))
       << "        " << data_array("UInt8", "types", 1, appended.add(types.data(), types.size()))
       << "      </Cells>\n"
       << "    </Piece>\n"
       << "  </UnstructuredGrid>\n";
  appended.write(path, head.str());
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
template void write_hexahedra<float>(const std::filesystem::path&, const std::vector<double>&,
                                     const std::vector<std::int64_t>&, const std::vector<PointArray<float>>&);
template void write_hexahedra<double>(const std::filesystem::path&, const std::vector<double>&,
                                      const std::vector<std::int64_t>&, const std::vector<PointArray<double>>&);

}  // namespace ziggurat::vtk
