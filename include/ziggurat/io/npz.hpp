#pragma once
// NumPy .npz files: named arrays in one zip archive, as numpy.savez writes them (each array an
// uncompressed entry NAME.npy), which numpy.load opens as a mapping of names to arrays. Entries
// carry their CRC-32 and a fixed date (1980-01-01), so the same arrays give the same bytes.

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace ziggurat {

/// One array of a .npz: values borrowed from the caller (`data`) or held here (`held`).
struct NpzArray {
  std::string name;                ///< the key numpy.load gives it
  std::string descr;               ///< NumPy's dtype text: '<f4', '<f8', '<i4', '<U8'
  std::vector<std::size_t> shape;  ///< slowest axis first; empty for a scalar
  const void* data = nullptr;      ///< the values in C order; nullptr: `held` holds them
  std::size_t bytes = 0;           ///< the values' size
  std::string held;
};

/// `values` (float, double or std::int32_t, C order, of `shape`), borrowed until write_npz returns.
template <class T>
NpzArray npz_values(std::string name, const T* values, std::vector<std::size_t> shape);

/// A float64 scalar (shape ()).
NpzArray npz_scalar(std::string name, double value);

/// ASCII texts as a NumPy unicode array ('<Un', n the longest text): shape (count,), or () for one
/// text given alone (`scalar`). InvalidArgument for a character outside ASCII.
NpzArray npz_texts(std::string name, const std::vector<std::string>& texts, bool scalar = false);

/// Writes `arrays` as a .npz, atomically. Throws InvalidArgument for an empty or repeated name, or
/// arrays past what a zip without ZIP64 holds (4 GiB, 65535 entries); IoError naming the file when
/// it cannot be written.
void write_npz(const std::filesystem::path& path, const std::vector<NpzArray>& arrays);

}  // namespace ziggurat
