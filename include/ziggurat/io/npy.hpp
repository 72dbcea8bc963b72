#pragma once
// NumPy .npy files (format versions 1.0, 2.0 and 3.0): little-endian float32 or float64 arrays
// in C order, and int32 or int64 arrays for indices. Grids map to arrays with their extents
// reversed: a W x H grid is an array of shape (H, W), a W x H x D grid one of shape (D, H, W).

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <vector>

#include "ziggurat/matrix/grid.hpp"

namespace ziggurat {

enum class NpyType { f32, f64, i32, i64 };

struct NpyHeader {
  NpyType type = NpyType::f64;
  std::vector<std::size_t> shape;  ///< NumPy order: slowest axis first
  std::size_t data_offset = 0;     ///< bytes before the first value
};

/// Reads and validates a .npy header. Throws IoError naming the file and the problem for a bad
/// magic string, an unsupported version, a malformed header, a dtype other than '<f4', '<f8',
/// '<i4' or '<i8', Fortran order, or a file whose size does not match the shape.
NpyHeader read_npy_header(const std::filesystem::path& path);

/// The values of a float32 or float64 .npy file converted to T (float or double; IoError for an
/// integer file); `shape` receives the array's shape.
template <class T>
std::vector<T> read_npy(const std::filesystem::path& path, std::vector<std::size_t>& shape);

/// The values of an int32 or int64 .npy file (IoError for a float file); `shape` receives the
/// array's shape.
std::vector<std::int64_t> read_npy_integers(const std::filesystem::path& path, std::vector<std::size_t>& shape);

/// Writes `values` (C order, `shape` slowest axis first) as a .npy file of T (float, double or
/// std::int32_t), atomically: the file appears whole under its name or not at all.
template <class T>
void write_npy(const std::filesystem::path& path, const T* values,
               const std::vector<std::size_t>& shape);

/// A .npy file that several processes write at once, each its rows of the slowest axis:
/// create_npy() (one process) writes the header of T and `shape` and sizes the file for the values;
/// then write_npy_rows() writes rows [first, first + rows) (`values` in C order) and syncs them.
/// Not atomic: write to a temporary name and rename it once every process has written.
template <class T>
void create_npy(const std::filesystem::path& path, const std::vector<std::size_t>& shape);
template <class T>
void write_npy_rows(const std::filesystem::path& path, std::size_t first, const T* values, std::size_t rows);

/// A grid from a .npy array of 1 to 3 dimensions.
template <class T>
Grid<T> load_grid(const std::filesystem::path& path);
/// Rows [first, first + count) of the slowest axis of such an array (its planes in 3D), read
/// without the rest: a grid of those rows. IoError for rows outside the array.
template <class T>
Grid<T> load_grid_rows(const std::filesystem::path& path, std::size_t first, std::size_t count);

/// A grid as a .npy array (atomic write).
template <class T>
void save_grid(const std::filesystem::path& path, const Grid<T>& grid);

}  // namespace ziggurat
