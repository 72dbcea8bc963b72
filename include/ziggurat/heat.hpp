#pragma once
// The explicit heat scheme (method notes, section 1) on a 2D grid held in device memory.
//
// Five-point cross, Dirichlet boundary: the boundary nodes keep their initial values and every
// interior node is updated as
//
//     U'(x, y) = A * (((U(x-1, y) + U(x+1, y)) + U(x, y-1)) + U(x, y+1)) + B * U(x, y)
//
// with B = 1 - 4A, in exactly this order of operations and without fused multiply-add, in the
// CPU reference and in every kernel. A and B are rounded to the element type once, on the host.
// The scheme is stable for 0 < A <= 1/4; then each new value is a convex combination of old ones.

#include <cstddef>

#include "ziggurat/context.hpp"
#include "ziggurat/grid.hpp"
#include "ziggurat/memory.hpp"

namespace ziggurat {

/// The largest stable A for a grid of `dims` dimensions: 1 / (2 dims).
double max_stable_alpha(std::size_t dims);

template <class T>
struct HeatCoefficients {
  T a;  ///< weight of each neighbour
  T b;  ///< weight of the node itself, 1 - 2 dims A
};

/// A and B for `dims` dimensions. Throws InvalidArgument unless 0 < alpha <= max_stable_alpha.
template <class T>
HeatCoefficients<T> heat_coefficients(double alpha, std::size_t dims);

/// CPU reference: advances a 2D grid by `steps` steps in place.
template <class T>
void heat_steps_reference(Grid<T>& grid, double alpha, std::size_t steps);

/// The slowest discrete mode sin(pi x / (W-1)) sin(pi y / (H-1)), zero on the boundary. It is an
/// eigenvector of the scheme: after K steps the exact discrete solution is decay^K times it.
template <class T>
Grid<T> heat_mode_field(std::size_t width, std::size_t height);

/// The mode's factor per step: 1 - 4A + 2A (cos(pi / (W-1)) + cos(pi / (H-1))).
double heat_mode_decay(std::size_t width, std::size_t height, double alpha);

/// Throws InvalidArgument naming the first node that is NaN or infinite.
template <class T>
void require_finite(const Grid<T>& grid, const char* what);

struct StepTiming {
  std::size_t steps = 0;
  double wall_seconds = 0;    ///< host clock, enqueue of the first step to the end of the last
  double device_seconds = -1; ///< profiling counters, first kernel start to last kernel end; -1 without profiling
};

/// A 2D grid held entirely in device memory, stepped there by the five-point kernel with two
/// buffers swapped each step. Rows are padded to the device's base-address alignment.
template <class T>
class InDeviceHeat2D {
 public:
  /// Uploads `initial` (at least 3 x 3 nodes, all finite). Throws UnsupportedFeature for double
  /// on a device without fp64, OutOfDeviceMemory when the grid does not fit.
  InDeviceHeat2D(const Context& context, const Grid<T>& initial, double alpha);
  // Move-only: a copy would share the device buffers with the original.
  InDeviceHeat2D(InDeviceHeat2D&&) noexcept = default;
  InDeviceHeat2D& operator=(InDeviceHeat2D&&) noexcept = default;
  InDeviceHeat2D(const InDeviceHeat2D&) = delete;
  InDeviceHeat2D& operator=(const InDeviceHeat2D&) = delete;

  /// Throws OutOfDeviceMemory unless a width x height grid of T fits the device (call it before
  /// building a large field on the host), InvalidArgument if the kernel cannot index it.
  static void check_fits(const DeviceInfo& device, std::size_t width, std::size_t height);

  /// Advances the field by `steps` steps and waits for them to finish.
  StepTiming advance(std::size_t steps);
  /// The current field (blocking download).
  Grid<T> read();

  std::size_t steps_done() const noexcept { return steps_done_; }
  std::size_t width() const noexcept { return width_; }
  std::size_t height() const noexcept { return height_; }
  std::size_t pitch() const noexcept { return pitch_; }  ///< row length in device memory, in values

 private:
  Context context_;
  std::size_t width_, height_, pitch_;
  HeatCoefficients<T> coefficients_;
  DeviceBuffer<T> current_, next_;
  cl::Kernel kernel_;
  cl::NDRange local_, global_;
  std::size_t steps_done_ = 0;
};

}  // namespace ziggurat
