#pragma once
// VTK XML files that ParaView and VTK's own readers open: a grid's field as ImageData (.vti), the
// pieces of a grid split across ranks as one parallel ImageData (.pvti), a mesh of hexahedra with
// point arrays as an UnstructuredGrid (.vtu), and a time series of such files as a collection
// (.pvd). Values are stored raw (appended data, little-endian, 64-bit
// length headers), so a reader gets the very bits written. Points are ordered x fastest, as a
// Grid's nodes are: the values of a .npy of shape (D, H, W) are the .vti's points in order.

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace ziggurat::vtk {

/// Points first..last (inclusive) along x, y, z of an image; unused axes hold 0..0.
struct Extent {
  std::array<std::size_t, 3> first{}, last{};
};

/// The whole image of a grid of `extents` (1 to 3 axes, fastest first, each at least 1).
Extent whole_extent(const std::vector<std::size_t>& extents);

/// Rows (planes in 3D) first..first+count-1 of the slowest axis of a grid of `extents`.
Extent slab_extent(const std::vector<std::size_t>& extents, std::size_t first, std::size_t count);

/// Writes `values`, the points of `piece` in order (x fastest), `components` values a point
/// (a displacement's ux, uz or ux, uy, uz), as a .vti whose image is `whole`, the point array
/// named `name` (float or double). Node spacing 1 from the origin, unless `spacing` (same for
/// every axis) says otherwise. Atomic: the file appears whole or not at all. Throws IoError naming
/// the file when it cannot be written, InvalidArgument for a piece outside the image.
template <class T>
void write_image(const std::filesystem::path& path, const T* values, const Extent& whole, const Extent& piece,
                 const std::string& name, double spacing = 1.0, std::size_t components = 1);

/// One piece of a parallel image: its extent and its .vti file (relative to the .pvti's folder).
struct ImagePiece {
  Extent extent;
  std::string file;
};

/// Writes a .pvti naming `pieces` of an image `whole` with one point array `name` of T.
template <class T>
void write_parallel_image(const std::filesystem::path& path, const Extent& whole, const std::vector<ImagePiece>& pieces,
                          const std::string& name, double spacing = 1.0);

/// One data set of a time series: its time and file (relative to the .pvd's folder).
struct TimeStep {
  double time = 0;
  std::string file;
};

/// Writes a .pvd collection of `steps`, which ParaView opens as one time series.
void write_collection(const std::filesystem::path& path, const std::vector<TimeStep>& steps);

/// A point array of a .vtu: `components` values a point (3: a vector), point after point.
template <class T>
struct PointArray {
  std::string name;
  const T* values = nullptr;
  std::size_t components = 1;
};

/// Writes an unstructured grid (.vtu) of `points` (x, y, z a point) and 8-node hexahedra `cells`
/// (8 point numbers a cell in VTK's order: the bottom face's corners counter-clockwise, then the
/// top face's above them), with `arrays` of T (float or double) on its points, the first the
/// active scalars (1 component) or vectors (3). Atomic. Throws
/// InvalidArgument for a coordinate list not of 3 a point, a cell list not of 8 a cell, or a point
/// number outside the points; IoError naming the file when it cannot be written.
template <class T>
void write_hexahedra(const std::filesystem::path& path, const std::vector<double>& points,
                     const std::vector<std::int64_t>& cells, const std::vector<PointArray<T>>& arrays);

/// The name of piece `rank` of the .pvti `path`: "NAME_RANK.vti" beside it ("u.pvti" -> "u_1.vti").
std::filesystem::path piece_path(const std::filesystem::path& path, std::size_t rank);

}  // namespace ziggurat::vtk
