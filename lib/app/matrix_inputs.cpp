#include "ziggurat/app/matrix_inputs.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>

#include "ziggurat/app/text.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/base/host_memory.hpp"
#include "ziggurat/io/matrix_market.hpp"

namespace ziggurat::app {

void check_matrix_memory(const std::string& option, const std::string& path, std::size_t vectors,
                         std::size_t value_bytes) {
  const sparse::MatrixMarketHeader h = sparse::read_matrix_market_header(path);
  const double mirrored = h.symmetry == sparse::MatrixMarketSymmetry::general ? 1 : 2;
  const double index = sizeof(sparse::Index);
  const double matrix = (double(h.rows) + 1) * index + mirrored * double(h.entries) * (index + double(value_bytes));
  const double bytes =
      2 * matrix + double(vectors) * double(std::max(h.rows, h.cols)) * double(value_bytes);
  check_host_memory(bytes < 1.8e19 ? std::uint64_t(bytes) : std::numeric_limits<std::uint64_t>::max(),
                    option + " " + path + " (" + std::to_string(h.rows) + " x " + std::to_string(h.cols) + ", " +
                        std::to_string(h.entries) + " entries) with " + std::to_string(vectors) + " vectors",
                    "give a smaller matrix");
}

std::vector<std::filesystem::path> matrix_files(const std::string& list, const std::string& option,
                                                std::size_t vectors) {
  std::vector<std::filesystem::path> files;
  for (const std::string& path : split(list, ',')) {
    if (path.empty()) continue;
    std::error_code error;
    if (!std::filesystem::exists(path, error))
      throw InvalidArgument(option + " " + path + ": no such file or folder");
    if (!std::filesystem::is_directory(path, error)) {
      files.emplace_back(path);
      continue;
    }
    std::vector<std::filesystem::path> found;
    for (const auto& entry : std::filesystem::directory_iterator(path))
      if (entry.path().extension() == ".mtx") found.push_back(entry.path());
    std::sort(found.begin(), found.end());
    files.insert(files.end(), found.begin(), found.end());
  }
  for (const auto& file : files) check_matrix_memory(option, file.string(), vectors, sizeof(double));
  return files;
}

}  // namespace ziggurat::app
