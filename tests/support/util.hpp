#pragma once
// Small helpers shared by the tests: temporary folders, environment overrides, seeded fields.

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "ziggurat/matrix/grid.hpp"

namespace ziggurat::test {

/// A fresh folder under the system's temporary folder, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    static unsigned counter = 0;
    path_ = std::filesystem::temp_directory_path() /
            ("ziggurat-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code error;
    std::filesystem::remove_all(path_, error);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

/// Sets (or, with nullptr, unsets) an environment variable for its lifetime.
class EnvGuard {
 public:
  EnvGuard(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value != nullptr) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~EnvGuard() {
    if (old_) {
      ::setenv(name_.c_str(), old_->c_str(), 1);
    } else {
      ::unsetenv(name_.c_str());
    }
  }
  EnvGuard(const EnvGuard&) = delete;
  EnvGuard& operator=(const EnvGuard&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

/// Values uniform in [-1, 1], boundary included, from a fixed seed.
template <class T>
Grid<T> random_field(std::vector<std::size_t> extents, unsigned seed) {
  Grid<T> grid(std::move(extents));
  std::mt19937 generator(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  for (auto& value : grid) value = static_cast<T>(uniform(generator));
  return grid;
}

/// How many nodes of two grids of the same size hold the same bits.
template <class T>
std::size_t identical_nodes(const Grid<T>& a, const Grid<T>& b) {
  std::size_t same = 0;
  for (std::size_t i = 0; i < a.size(); ++i) same += std::memcmp(&a.data()[i], &b.data()[i], sizeof(T)) == 0;
  return same;
}

template <class T>
double max_abs_difference(const Grid<T>& a, const Grid<T>& b) {
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    worst = std::max(worst, std::abs(static_cast<double>(a.data()[i]) - static_cast<double>(b.data()[i])));
  }
  return worst;
}

inline void write_bytes(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

inline std::string read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

/// Files in `folder` whose name contains `part`.
inline std::size_t count_files(const std::filesystem::path& folder, const std::string& part) {
  std::size_t count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    count += entry.path().filename().string().find(part) != std::string::npos;
  }
  return count;
}

/// n x k values uniform in [-1, 1).
template <class T>
std::vector<T> random_vectors(std::size_t n, std::size_t k, std::uint64_t seed) {
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> value(-1, 1);
  std::vector<T> x(n * k);
  for (T& v : x) v = T(value(random));
  return x;
}

}  // namespace ziggurat::test
