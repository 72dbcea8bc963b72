#pragma once
// The heat step kernels of kernels/stencil.cl, launched over a box of a buffer: shared by the
// in-device solver and the pyramid passes, so that both run exactly the same arithmetic.

#include <array>
#include <cstddef>
#include <type_traits>
#include <vector>

#include "ziggurat/context.hpp"
#include "ziggurat/heat.hpp"

namespace ziggurat::detail {

/// "float" or "double", for messages.
template <class T>
const char* type_name() {
  return std::is_same_v<T, float> ? "float" : "double";
}

/// Nodes begin[a] <= i < end[a] on each axis a (fastest first); unused axes are {0, 1}.
struct Box {
  std::array<std::size_t, 3> begin{0, 0, 0};
  std::array<std::size_t, 3> end{1, 1, 1};
  std::size_t count(std::size_t axis) const { return end[axis] - begin[axis]; }
  std::size_t nodes() const { return count(0) * count(1) * count(2); }
};

/// How a buffer lays out a grid region: rows `pitch` values apart, planes `plane` values apart.
struct BufferShape {
  std::size_t pitch = 1;
  std::size_t plane = 1;
  std::size_t offset(std::size_t x, std::size_t y, std::size_t z) const { return z * plane + y * pitch + x; }
};

template <class T>
class StencilKernels {
 public:
  StencilKernels(const Context& context, std::size_t dims, HeatCoefficients<T> coefficients);

  /// Row pitch (values) for rows of `width` values: a multiple of the device's base-address
  /// alignment, so that every row starts aligned. 1D grids are one row.
  static std::size_t aligned_pitch(const DeviceInfo& device, std::size_t width);

  /// Enqueues one step of the nodes of `box` from `in` to `out` (both laid out as `shape`); the box
  /// must lie inside the buffer with one node to spare on every side.
  void enqueue(cl::CommandQueue& queue, const cl::Buffer& in, const cl::Buffer& out, const BufferShape& shape,
               const Box& box, const std::vector<cl::Event>* wait, cl::Event* done);

 private:
  Context context_;
  std::size_t dims_;
  std::array<std::size_t, 2> group_{1, 1};
  cl::Kernel kernel_;
};

}  // namespace ziggurat::detail
