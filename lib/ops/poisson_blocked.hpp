#pragma once
// The launcher of jacobi3d_blocked (poisson_blocked.cl, which shares its 3D walk with the heat
// kernel): up to `depth` Jacobi sweeps of a 3D box in one launch, the tile kept on chip between
// sweeps, with the bits of as many single sweeps and the same largest update of the last one.

#include <array>
#include <cstddef>
#include <vector>

#include "ops/heat_stencil.hpp"
#include "ziggurat/base/context.hpp"
#include "ziggurat/ops/heat_scheme.hpp"
#include "ziggurat/ops/poisson_scheme.hpp"

namespace ziggurat::detail {

template <class T>
class JacobiBlockedSweep {
 public:
  /// Up to `depth` sweeps a launch in work-groups of `group` (zeros: the device's default). Throws
  /// UnsupportedFeature when the device cannot run the group or the depth leaves it less than half
  /// of its tile to own (blocked_tile_3d()).
  JacobiBlockedSweep(const Context& context, JacobiCoefficients<T> coefficients, std::size_t depth,
                     const BlockedGroup& group = {});

  std::size_t depth() const noexcept { return depth_; }
  /// Work-groups a launch over `box` runs: the partial maxima it records.
  std::size_t groups(const Box& box) const;
  /// The most work-groups a launch over any box inside a buffer of `extents` nodes runs.
  std::size_t most_groups(const std::array<std::size_t, 3>& extents) const;

  /// Enqueues `sweeps` (1..depth) sweeps from `in` to `out` with right-hand side `f` (all laid out
  /// as `shape`), the box growing as HeatBlockedStep's does within `interior`. With `partial`, each
  /// work-group writes the largest update of the last sweep there (groups(box) values).
  void enqueue(cl::CommandQueue& queue, const cl::Buffer& in, const cl::Buffer& out, const cl::Buffer& f,
               const cl::Buffer* partial, const BufferShape& shape, const Box& box, const Box& interior,
               std::size_t sweeps, const std::vector<cl::Event>* wait, cl::Event* done);

 private:
  Context context_;
  JacobiCoefficients<T> coefficients_;
  std::size_t depth_;
  std::array<std::size_t, 2> tile_;
  cl::Kernel kernel_;
};

}  // namespace ziggurat::detail
