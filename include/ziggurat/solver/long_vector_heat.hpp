#pragma once
// The long-vector algorithm (method notes, section 2): the explicit 2D heat scheme
// (ops/heat_scheme.hpp) on a grid held in device memory, stepped by BLAS-1 calls through CLBlast
// on long sub-vectors of the grid unrolled row by row into one vector V, as in the paper whose
// model (1) (tuning/cost_model.hpp, long_vector_ns) predicts its time. The stencil kernels of
// solver/in_device_heat.hpp are the faster way to step a grid; this one exists to measure the
// model against.
//
// The calls add in another order than the stencil kernels do, so results differ from the CPU
// reference by a few ulps of max|u| a step (tests/device/test_long_vector.cpp measures it).

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "ziggurat/base/context.hpp"
#include "ziggurat/matrix/grid.hpp"
#include "ziggurat/solver/in_device_heat.hpp"

namespace ziggurat {

/// One CLBlast call of a step: the routine and how many elements it processes.
struct VectorCall {
  std::string routine;  ///< "xCOPY", "xAXPY", "xHAD", "xOMATCOPY"
  std::string purpose;  ///< what it computes, in the terms of the method notes
  std::size_t length = 0;
};

/// A 2D grid in device memory, stepped by the long-vector algorithm on the context's compute queue.
template <class T>
class LongVectorHeat {
 public:
  /// Uploads `initial` (2D, at least 3 x 3 nodes, all finite). Throws InvalidArgument for another
  /// grid or an unstable alpha, UnsupportedFeature for double on a device without fp64,
  /// OutOfDeviceMemory when the grid does not fit.
  LongVectorHeat(const Context& context, const Grid<T>& initial, double alpha);
  LongVectorHeat(LongVectorHeat&&) noexcept;
  LongVectorHeat& operator=(LongVectorHeat&&) noexcept;
  LongVectorHeat(const LongVectorHeat&) = delete;  // a copy would share the device buffers
  LongVectorHeat& operator=(const LongVectorHeat&) = delete;
  ~LongVectorHeat();

  /// Throws as the constructor does unless a grid of these extents fits the device (call it
  /// before building a large field on the host).
  static void check_fits(const DeviceInfo& device, const std::vector<std::size_t>& extents);

  /// The calls one step makes, in order, for a grid of these extents.
  static std::vector<VectorCall> step_calls(const std::vector<std::size_t>& extents);

  /// Advances the field by `steps` steps and waits for them to finish. device_seconds runs from
  /// the start of the first call to the end of the last.
  StepTiming advance(std::size_t steps);
  /// The current field (blocking download).
  Grid<T> read();

  std::size_t steps_done() const noexcept;
  const std::vector<std::size_t>& extents() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ziggurat
