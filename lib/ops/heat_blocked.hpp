#pragma once
// The launchers of heat1d_blocked and heat2d_blocked (heat_blocked.cl): up to `depth` explicit heat steps of a box
// in one launch, the tile kept on chip between steps, with the bits of as many single steps.

#include <cstddef>
#include <vector>

#include "ops/heat_stencil.hpp"
#include "ziggurat/base/context.hpp"
#include "ziggurat/ops/heat_scheme.hpp"

namespace ziggurat::detail {

template <class T>
class HeatBlockedStep {
 public:
  /// Kernels of up to `depth` steps a launch (1 <= depth) on grids of `dims` (1 or 2) axes. Throws
  /// UnsupportedFeature for 3D, and when the
  /// device's work-groups or its local memory (of which at most 48 KiB is used, the least a GPU
  /// offers) cannot hold the tile's rings at this depth.
  HeatBlockedStep(const Context& context, std::size_t dims, HeatCoefficients<T> coefficients, std::size_t depth);

  std::size_t depth() const noexcept { return depth_; }
  std::size_t group_width() const noexcept { return group_; }

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
  std::size_t depth_, group_ = 0;
  cl::Kernel kernel_;
};

}  // namespace ziggurat::detail
