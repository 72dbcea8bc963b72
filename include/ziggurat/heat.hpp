#pragma once
// The explicit heat scheme (method notes, section 1) in 1, 2 and 3 dimensions, its CPU reference,
// and a grid held entirely in device memory. Grids larger than device memory: heat_solver.hpp.
//
// Three-, five- or seven-point stencil, Dirichlet boundary: the boundary nodes keep their initial
// values and every interior node is updated as
//
//     U' = A * (((((U[x-1] + U[x+1]) + U[y-1]) + U[y+1]) + U[z-1]) + U[z+1]) + B * U
//
// (the terms of the axes the grid has), B = 1 - 2 dims A, in exactly this order of operations and
// without fused multiply-add, in the CPU reference and in every kernel. A and B are rounded to
// the element type once, on the host. The scheme is stable for 0 < A <= 1/(2 dims); then each new
// value is a convex combination of old ones.

#include <cstddef>
#include <memory>
#include <vector>

#include "ziggurat/context.hpp"
#include "ziggurat/grid.hpp"

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

/// Throws InvalidArgument unless the grid has 1 to 3 axes of at least 3 nodes each (one interior
/// node between two boundary nodes); `who` names the caller in the message.
void require_heat_grid(const std::vector<std::size_t>& extents, const char* who);

/// CPU reference: advances a grid of 1 to 3 dimensions by `steps` steps in place.
template <class T>
void heat_steps_reference(Grid<T>& grid, double alpha, std::size_t steps);

/// The slowest discrete mode, the product of sin(pi i / (E-1)) over the axes (E nodes on the axis),
/// zero on the boundary. It is an eigenvector of the scheme: after K steps the exact discrete
/// solution is decay^K times it.
template <class T>
Grid<T> heat_mode_field(const std::vector<std::size_t>& extents);

/// The mode's factor per step: 1 - 2 dims A + 2A (sum over the axes of cos(pi / (E-1))).
double heat_mode_decay(const std::vector<std::size_t>& extents, double alpha);

/// Throws InvalidArgument naming the first node that is NaN or infinite.
template <class T>
void require_finite(const Grid<T>& grid, const char* what);

struct StepTiming {
  std::size_t steps = 0;
  double wall_seconds = 0;    ///< host clock, enqueue of the first step to the end of the last
  double device_seconds = -1; ///< profiling counters, first kernel start to last kernel end; -1 without profiling
};

/// Which kernel steps an in-device grid.
enum class StepKernel {
  aligned,  ///< the column-walking, aligned-work-group kernels (kernels/stencil.cl), 1D to 3D
  naive,    ///< one work-item per node, every neighbour read from global memory (2D only): the baseline
};

/// A grid held entirely in device memory, stepped there with two buffers swapped each step.
/// Rows are padded to the device's base-address alignment.
template <class T>
class InDeviceHeat {
 public:
  /// Uploads `initial` (1 to 3 axes of at least 3 nodes, all finite). Throws UnsupportedFeature for
  /// double on a device without fp64 or the naive kernel on a grid that is not 2D,
  /// OutOfDeviceMemory when the grid does not fit.
  InDeviceHeat(const Context& context, const Grid<T>& initial, double alpha, StepKernel kernel = StepKernel::aligned);
  InDeviceHeat(InDeviceHeat&&) noexcept;
  InDeviceHeat& operator=(InDeviceHeat&&) noexcept;
  InDeviceHeat(const InDeviceHeat&) = delete;  // a copy would share the device buffers
  InDeviceHeat& operator=(const InDeviceHeat&) = delete;
  ~InDeviceHeat();

  /// Throws OutOfDeviceMemory unless a grid of these extents fits the device in two buffers (call
  /// it before building a large field on the host), InvalidArgument if the kernels cannot index it.
  static void check_fits(const DeviceInfo& device, const std::vector<std::size_t>& extents);
  /// Bytes of one device buffer of the grid (rows padded).
  static std::uint64_t buffer_bytes(const DeviceInfo& device, const std::vector<std::size_t>& extents);

  /// Advances the field by `steps` steps and waits for them to finish.
  StepTiming advance(std::size_t steps);
  /// The current field (blocking download).
  Grid<T> read();

  std::size_t steps_done() const noexcept;
  const std::vector<std::size_t>& extents() const noexcept;
  std::size_t pitch() const noexcept;  ///< row length in device memory, in values

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ziggurat
