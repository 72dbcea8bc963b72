#pragma once
// The explicit heat scheme of heat.hpp on grids larger than device memory: the pyramid method
// (method notes, section 1). The grid stays in host memory; each pass cuts it into tasks (strips
// of rows or planes, or 2D blocks), copies each task's region plus n halo layers to the device,
// runs n steps there while the region shrinks, and copies the valid part back. Passes exchange
// data only through host memory. The cost model (model.hpp), fed with the device's measured
// profile (calibration.hpp), chooses the mode, decomposition, height n and task size.
//
// The result is bit-identical to stepping the whole grid in device memory (InDeviceHeat) on the
// same device: every mode runs the same kernels on the same values, it only recomputes.
//
// Host memory: two layers of the grid (passes read one and write the other), page-locked when
// the OpenCL runtime allows it, so that transfers run at full bus speed.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ziggurat/calibration.hpp"
#include "ziggurat/context.hpp"
#include "ziggurat/grid.hpp"
#include "ziggurat/model.hpp"

namespace ziggurat {

enum class HeatMode {
  automatic,  ///< the cost model's choice: incore when the grid fits, else the best pyramid
  incore,     ///< the whole grid on the device: one upload, K steps, one download
  trivial,    ///< sub-domains copied in, one step, copied back (the baseline the pyramid beats)
  strip,      ///< pyramid passes over strips of rows (planes in 3D, nodes in 1D)
  block,      ///< pyramid passes over 2D blocks, moved as rectangular regions
};

const char* to_string(HeatMode mode);

/// How to run: everything left empty is chosen by the cost model.
struct HeatPlanRequest {
  HeatMode mode = HeatMode::automatic;
  /// strip or block: the sub-domains of `trivial` (default strip), or the only decomposition
  /// `automatic` may choose among the pyramids.
  std::optional<model::Decomposition> decomposition;
  std::optional<std::size_t> height;             ///< pyramid height n (strip, block, automatic)
  std::optional<std::uint64_t> device_memory;    ///< budget in bytes; default default_device_budget()
  model::Schedule schedule = model::Schedule::overlapped;
  /// Record when each task's transfers and kernels ran on the device (HeatRun::timeline). Needs
  /// a device that profiles commands (UnsupportedFeature otherwise).
  bool record_timeline = false;
};

/// What the solver may use unless told otherwise: 90 % of the device's memory (the rest is left
/// to the driver and other programs).
std::uint64_t default_device_budget(const DeviceInfo& device);

/// Throws InvalidArgument naming `what` unless `bytes` fit in the machine's physical memory.
void check_host_memory(std::uint64_t bytes, const std::string& what);

/// Progress of a run, reported after each pass.
struct HeatProgress {
  std::size_t passes_done = 0, passes = 0;
  std::size_t steps_done = 0, steps = 0;
  double seconds = 0;            ///< since the run started
  double nodes_per_second = 0;   ///< interior nodes x steps done / seconds
  double eta_seconds = 0;        ///< at the rate so far
};
using HeatProgressCallback = std::function<void(const HeatProgress&)>;

/// One task's work on one engine, in seconds since the run's first command started: its upload,
/// its kernels (boundary copy and n steps), or its download.
struct HeatTimelineEntry {
  enum class Engine { upload, compute, download };
  Engine engine = Engine::upload;
  std::size_t pass = 0, task = 0;
  double start_s = 0, end_s = 0;
};

const char* to_string(HeatTimelineEntry::Engine engine);

/// What a run did.
struct HeatRun {
  model::Plan plan;             ///< the plan that ran (layout, predicted time)
  model::Schedule schedule = model::Schedule::overlapped;
  std::uint64_t budget_bytes = 0;
  std::uint64_t device_bytes = 0;  ///< device memory the run's buffers took
  std::size_t steps = 0;
  double seconds = 0;              ///< wall time, first upload to last download
  double ns_per_node = 0;          ///< seconds / (interior nodes x steps)
  bool pinned_host_memory = false;
  std::vector<HeatTimelineEntry> timeline;  ///< when HeatPlanRequest::record_timeline was set
};

/// A grid in host memory, advanced on a device by the pyramid method.
template <class T>
class HeatSolver {
 public:
  /// Copies `initial` (1 to 3 axes of at least 3 nodes, all finite) into the solver's host memory
  /// (two layers; InvalidArgument if they exceed the machine's physical memory).
  /// `profile` (load_or_calibrate()) feeds the cost model. Throws UnsupportedFeature for double
  /// on a device without fp64, InvalidArgument for an unstable alpha or a bad grid.
  HeatSolver(const Context& context, const Grid<T>& initial, double alpha, DeviceProfile profile);
  HeatSolver(HeatSolver&&) noexcept;
  HeatSolver& operator=(HeatSolver&&) noexcept;
  HeatSolver(const HeatSolver&) = delete;
  HeatSolver& operator=(const HeatSolver&) = delete;
  ~HeatSolver();

  /// The plan advance(steps, request) would run. Throws InvalidArgument when the request cannot
  /// be met (a budget too small for n = 1 names the minimum; incore when the grid does not fit).
  model::Plan plan(std::size_t steps, const HeatPlanRequest& request = {}) const;

  /// Advances the grid by `steps` steps; `progress` (if given) is called after each pass, on this
  /// thread. On an error the field keeps the state before the call.
  HeatRun advance(std::size_t steps, const HeatPlanRequest& request = {}, const HeatProgressCallback& progress = {});

  /// The current field (a copy), and a view of it valid until the next advance().
  Grid<T> field() const;
  const T* data() const noexcept;
  const std::vector<std::size_t>& extents() const noexcept;
  std::size_t steps_done() const noexcept;

  /// The model's view of `steps` steps of this grid on this device.
  model::Problem problem(std::size_t steps) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ziggurat
