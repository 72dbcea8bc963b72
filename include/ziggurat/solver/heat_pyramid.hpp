#pragma once
// The explicit heat scheme (ops/heat_scheme.hpp) on grids larger than device memory: the pyramid
// method (method notes, section 1). The grid stays in host memory; each pass cuts it into tasks
// (strips of rows or planes, or 2D blocks), copies each task's region plus n halo layers to the
// device, runs n steps there while the region shrinks, and copies the valid part back. Passes
// exchange data only through host memory.
//
// The solver runs the plan it is given (a HeatPlan: decomposition, height, task size, schedule;
// solver/pyramid_layout.hpp). tuning/heat_planner.hpp chooses one with the cost model and the
// device's measured profile; automatic/heat.hpp plans and runs in one call.
//
// The result is bit-identical to stepping the whole grid in device memory (InDeviceHeat) on the
// same device: every plan runs the same kernels on the same values, it only recomputes.
//
// Host memory: two layers of the grid (passes read one and write the other), page-locked when
// the OpenCL runtime allows it, so that transfers run at full bus speed.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "ziggurat/base/context.hpp"
#include "ziggurat/matrix/grid.hpp"
#include "ziggurat/solver/pyramid_layout.hpp"

namespace ziggurat {

/// Progress of a run, reported after each pass.
struct HeatProgress {
  std::size_t passes_done = 0, passes = 0;
  std::size_t steps_done = 0, steps = 0;
  double seconds = 0;            ///< since the run started
  double nodes_per_second = 0;   ///< interior nodes x steps done / seconds
  double eta_seconds = 0;        ///< at the rate so far
};
using HeatProgressCallback = std::function<void(const HeatProgress&)>;

struct HeatRunOptions {
  /// Called after each pass, on the calling thread.
  HeatProgressCallback progress;
  /// Record when each task's transfers and kernels ran on the device (HeatRun::timeline). Needs
  /// a device that profiles commands (UnsupportedFeature otherwise).
  bool record_timeline = false;
};

/// What a run did.
struct HeatRun {
  HeatPlan plan;                   ///< the plan that ran
  std::size_t tasks = 0;           ///< per pass
  std::size_t passes = 0;
  std::uint64_t device_bytes = 0;  ///< device memory the run's buffers took
  std::size_t steps = 0;
  double seconds = 0;              ///< wall time, first upload to last download
  double ns_per_node = 0;          ///< seconds / (interior nodes x steps)
  bool pinned_host_memory = false;
  std::vector<HeatTimelineEntry> timeline;  ///< when HeatRunOptions::record_timeline was set
};

/// A grid in host memory, advanced on a device by the pyramid method.
template <class T>
class HeatSolver {
 public:
  /// Copies `initial` (1 to 3 axes of at least 3 nodes, all finite) into the solver's host memory
  /// (two layers; InvalidArgument if they exceed the machine's physical memory). Throws
  /// UnsupportedFeature for double on a device without fp64, InvalidArgument for an unstable
  /// alpha or a bad grid.
  HeatSolver(const Context& context, const Grid<T>& initial, double alpha);
  HeatSolver(HeatSolver&&) noexcept;
  HeatSolver& operator=(HeatSolver&&) noexcept;
  HeatSolver(const HeatSolver&) = delete;
  HeatSolver& operator=(const HeatSolver&) = delete;
  ~HeatSolver();

  /// Advances the grid by `steps` steps as `plan` says. Throws InvalidArgument for a plan that
  /// cannot run on this grid (validate(PyramidLayout, ...)), OutOfDeviceMemory when a buffer is
  /// larger than the device allocates at once, and the driver's OpenCLError when the buffers
  /// together do not fit; the field is untouched then. When a run fails part-way (an
  /// OpenCL error, or an exception thrown by the progress callback), it stops: the field holds
  /// the state after the last pass that completed entirely, never a mix of two passes, and
  /// steps_done() counts the steps of those passes.
  HeatRun advance(std::size_t steps, const HeatPlan& plan, const HeatRunOptions& options = {});

  /// The current field (a copy), and a view of it valid until the next advance().
  Grid<T> field() const;
  const T* data() const noexcept;
  /// The same view, writable between runs: the next advance() starts from what it holds (a
  /// distributed run writes the rows its neighbours computed here).
  T* data() noexcept;
  const std::vector<std::size_t>& extents() const noexcept;
  std::size_t steps_done() const noexcept;

  const Context& context() const noexcept;
  /// Device buffers pad rows (2D) and plane rows (3D) to a multiple of this many values.
  std::size_t row_alignment() const noexcept;
  /// Whether the host layers are page-locked (transfers at full bus speed).
  bool pinned_host_memory() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ziggurat
