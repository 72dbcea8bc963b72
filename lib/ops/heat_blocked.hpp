#pragma once
// The launcher of heat1d_blocked, heat2d_blocked and heat3d_blocked (heat_blocked.cl): up to `depth` explicit heat steps of a box
// in one launch, the tile kept on chip between steps, with the bits of as many single steps.

#include <array>
#include <cstddef>
#include <vector>

#include "ops/heat_stencil.hpp"
#include "ziggurat/base/context.hpp"
#include "ziggurat/ops/heat_scheme.hpp"

namespace ziggurat::detail {

/// Nodes of a column in y each work-item of a 3D blocked kernel holds.
constexpr std::size_t kBlockedRowsPerItem = 4;

/// The work-group of the 3D blocked kernels (heat3d_blocked, jacobi3d_blocked) on this device at
/// this depth: `requested`, or the device's default for zeros. Throws UnsupportedFeature when the
/// device cannot run it (work-group size, local memory for `value_bytes` values) or the depth
/// leaves the tile less than half of it to own.
std::array<std::size_t, 2> blocked_tile_3d(const DeviceInfo& device, std::size_t value_bytes, std::size_t depth,
                                           const BlockedGroup& requested);

/// The work-group a blocked heat or Jacobi kernel of `dims` axes runs in at `depth`: `requested`,
/// or the device's default for zeros. Throws UnsupportedFeature where the device cannot run it.
BlockedGroup blocked_group_for(const DeviceInfo& device, std::size_t dims, std::size_t value_bytes, std::size_t depth,
                               const BlockedGroup& requested);

/// How a 3D blocked kernel covers `box`: groups owning tile - 2 depth nodes on x and on y (y: tile
/// rows x kBlockedRowsPerItem), each walking `strip` planes.
struct BlockedLaunch3d {
  std::size_t strip = 1, groups = 1;
  cl::NDRange global, local;
};
BlockedLaunch3d blocked_launch_3d(const Box& box, const std::array<std::size_t, 2>& tile, std::size_t depth,
                                  unsigned compute_units);

template <class T>
class HeatBlockedStep {
 public:
  /// Kernels of up to `depth` steps a launch (1 <= depth) on grids of `dims` axes, in work-groups
  /// of `group` (zeros: the device's default). Throws UnsupportedFeature when the device's
  /// work-groups or its local memory (of which at most 48 KiB is used, the least a GPU offers)
  /// cannot hold the group's rows, or the depth leaves the group less than half of it to own.
  HeatBlockedStep(const Context& context, std::size_t dims, HeatCoefficients<T> coefficients, std::size_t depth,
                  const BlockedGroup& group = {});

  std::size_t depth() const noexcept { return depth_; }

  /// Enqueues `steps` (1..depth) steps from `in` to `out` (buffers laid out as `shape`): step t
  /// computes `box` grown by steps - t nodes on each side within `interior` (buffer coordinates;
  /// outside it is the grid's boundary, whose values stay), so that `out` holds on `box` what
  /// `steps` single steps of shrinking boxes (a pyramid) leave there. In core, box = interior.
  void enqueue(cl::CommandQueue& queue, const cl::Buffer& in, const cl::Buffer& out, const BufferShape& shape,
               const Box& box, const Box& interior, std::size_t steps, const std::vector<cl::Event>* wait,
               cl::Event* done);

 private:
  Context context_;
  std::size_t dims_;
  HeatCoefficients<T> coefficients_;
  std::size_t depth_;
  std::array<std::size_t, 2> tile_{1, 1};  ///< work-group shape
  cl::Kernel kernel_;
};

}  // namespace ziggurat::detail
