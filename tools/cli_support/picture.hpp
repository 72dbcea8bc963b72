#pragma once
// Colour-mapped pictures of grid fields as PNG files, through libpng.

#include <array>
#include <cstddef>
#include <filesystem>
#include <vector>

namespace ziggurat::cli {

/// Writes a colour-mapped picture of a 2D field (or the middle z-slice of a 3D field) as PNG, atomically
/// (temporary file in the same folder, then rename). `values` holds the grid with the first axis fastest,
/// extents {W, H} or {W, H, D}. Large fields are reduced by averaging blocks so that the longer side is at
/// most `max_side` pixels. Row y = 0 at the bottom of the picture. Colours: the viridis colour map over
/// [min, max] of the shown values (a flat field is drawn in the map's middle colour). At the
/// right, a colour bar of that map with max printed at its top and min at its bottom (printf's
/// %.4g, "nan" where no value is finite): the picture is wider than the field by its panel, and
/// at least tall enough for both labels (the field at the top left, white around).
/// Throws InvalidArgument for a 1D grid ("a picture needs a 2D or 3D grid"), IoError when the file
/// cannot be written, naming the path and the reason.
template <class T>
void write_field_png(const std::filesystem::path& path, const T* values, const std::vector<std::size_t>& extents,
                     std::size_t max_side = 2048);

/// A straight line from (x0, y0) to (x1, y1) in pixels, y upwards, in one colour.
struct Segment {
  double x0, y0, x1, y1;
  std::array<unsigned char, 3> colour;
};

/// Draws line segments on white, one pixel wide, as a PNG of width x height pixels (atomic write);
/// what falls outside is clipped.
void write_lines_png(const std::filesystem::path& path, const std::vector<Segment>& segments, std::size_t width,
                     std::size_t height);

extern template void write_field_png<float>(const std::filesystem::path&, const float*,
                                            const std::vector<std::size_t>&, std::size_t);
extern template void write_field_png<double>(const std::filesystem::path&, const double*,
                                             const std::vector<std::size_t>&, std::size_t);

}  // namespace ziggurat::cli
