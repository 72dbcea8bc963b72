#pragma once
// A grid held entirely in device memory, stepped there by the explicit heat scheme
// (ops/heat_scheme.hpp). Grids larger than device memory: solver/heat_pyramid.hpp.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "ziggurat/base/context.hpp"
#include "ziggurat/matrix/grid.hpp"
#include "ziggurat/ops/heat_scheme.hpp"
#include "ziggurat/solver/step_timing.hpp"

namespace ziggurat {

/// Which kernel steps an in-device grid.
enum class StepKernel {
  aligned,  ///< the column-walking, aligned-work-group kernels (lib/ops/heat_stencil.cl), 1D to 3D
  naive,    ///< one work-item per node, every neighbour read from global memory (2D only): the baseline
  blocked,  ///< temporal blocking on chip: up to `depth` steps a launch, each tile kept in
            ///< local memory between them (lib/ops/heat_blocked.cl); the same bits as single steps
};

/// A grid held entirely in device memory, stepped there with two buffers swapped each step.
/// Rows are padded to the device's base-address alignment.
template <class T>
class InDeviceHeat {
 public:
  /// Uploads `initial` (1 to 3 axes of at least 3 nodes, all finite). `depth`: the steps a launch of
  /// the blocked kernel advances (at least 1; the other kernels take 0), in work-groups of `group`
  /// (zeros: the device's default). Throws UnsupportedFeature for double on a device without
  /// fp64, the naive kernel on a grid that is not 2D, or a depth and group the device cannot run;
  /// OutOfDeviceMemory when the grid does not fit.
  InDeviceHeat(const Context& context, const Grid<T>& initial, double alpha, StepKernel kernel = StepKernel::aligned,
               std::size_t depth = 0, const BlockedGroup& group = {});
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
