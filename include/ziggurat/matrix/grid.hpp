#pragma once
// A grid of values in host memory, 1 to 3 dimensions, stored densely with the first axis fastest.

#include <cstddef>
#include <string>
#include <vector>

#include "ziggurat/base/error.hpp"

namespace ziggurat {

/// Grid extents, fastest axis first: {W}, {W, H} or {W, H, D}. Throws InvalidArgument for an
/// empty list, more than three extents, a zero extent, or a node count that overflows size_t.
std::size_t checked_node_count(const std::vector<std::size_t>& extents);

/// "1023x777" for extents {1023, 777}.
std::string extents_string(const std::vector<std::size_t>& extents);

template <class T>
class Grid {
 public:
  Grid() = default;
  explicit Grid(std::vector<std::size_t> extents, T value = T{})
      : extents_(std::move(extents)), values_(checked_node_count(extents_), value) {}
  /// A grid holding `values` (fastest axis first); throws InvalidArgument unless their number
  /// matches the extents.
  Grid(std::vector<std::size_t> extents, std::vector<T> values)
      : extents_(std::move(extents)), values_(std::move(values)) {
    if (values_.size() != checked_node_count(extents_)) {
      throw InvalidArgument("grid " + extents_string(extents_) + " needs " + std::to_string(checked_node_count(extents_)) +
                            " values, got " + std::to_string(values_.size()));
    }
  }

  std::size_t dims() const noexcept { return extents_.size(); }
  const std::vector<std::size_t>& extents() const noexcept { return extents_; }
  std::size_t extent(std::size_t axis) const { return axis < extents_.size() ? extents_[axis] : 1; }
  std::size_t width() const { return extent(0); }
  std::size_t height() const { return extent(1); }
  std::size_t depth() const { return extent(2); }
  std::size_t size() const noexcept { return values_.size(); }

  // The values can be changed but not resized: their number always matches the extents.
  T* data() noexcept { return values_.data(); }
  const T* data() const noexcept { return values_.data(); }
  T* begin() noexcept { return values_.data(); }
  T* end() noexcept { return values_.data() + values_.size(); }
  const std::vector<T>& values() const noexcept { return values_; }

  T& operator()(std::size_t x, std::size_t y = 0, std::size_t z = 0) {
    return values_[(z * height() + y) * width() + x];
  }
  const T& operator()(std::size_t x, std::size_t y = 0, std::size_t z = 0) const {
    return values_[(z * height() + y) * width() + x];
  }

 private:
  std::vector<std::size_t> extents_;
  std::vector<T> values_;
};

}  // namespace ziggurat
