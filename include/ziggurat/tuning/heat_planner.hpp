#pragma once
// Planning the pyramid solver's runs (solver/heat_pyramid.hpp): the cost model
// (tuning/cost_model.hpp), fed with the device's measured profile, chooses the decomposition,
// height n and task size that fit a device-memory budget, and (plan_heat_depths) the steps a
// launch T among the tuned ones together with n. Nothing is measured here.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ziggurat/solver/heat_pyramid.hpp"
#include "ziggurat/tuning/cost_model.hpp"
#include "ziggurat/tuning/device_profile.hpp"

namespace ziggurat {

enum class HeatMode {
  automatic,  ///< the cost model's choice: incore when the grid fits, else the best pyramid
  incore,     ///< the whole grid on the device: one upload, K steps, one download
  trivial,    ///< sub-domains copied in, one step, copied back (the baseline the pyramid beats)
  strip,      ///< pyramid passes over strips of rows (planes in 3D, nodes in 1D)
  block,      ///< pyramid passes over 2D blocks, moved as rectangular regions
};

const char* to_string(HeatMode mode);
/// "auto", "incore", "trivial", "strip" or "block"; InvalidArgument otherwise.
HeatMode parse_heat_mode(std::string_view text);

/// What to plan: everything left empty is chosen by the cost model.
struct HeatPlanRequest {
  HeatMode mode = HeatMode::automatic;
  /// strip or block: the sub-domains of `trivial` (default strip), or the only decomposition
  /// `automatic` may choose among the pyramids.
  std::optional<Decomposition> decomposition;
  std::optional<std::size_t> height;           ///< pyramid height n (strip, block, automatic)
  std::optional<std::uint64_t> device_memory;  ///< budget in bytes; default default_device_budget()
  Schedule schedule = Schedule::overlapped;
  /// Steps a kernel launch advances with its tile on chip (HeatPlan::depth); default 1. 0: chosen
  /// with the height among the depths tuned for the device, which advance_heat() reads or measures
  /// (tuning/blocking_autotune.hpp) and plans with (plan_heat_depths()); plan_heat() takes 1 or more.
  std::optional<std::size_t> depth;
  /// The blocked kernels' work-group at that depth (zeros: the device's default; advance_heat()
  /// sets the tuned one with a depth of 0).
  BlockedGroup group;
  /// The kernels' time a node and step at `depth`, in ns; default: the profile's single-step
  /// rate. plan_heat_depths() sets each tuned depth's measured time (a caller's is ignored there);
  /// advance_heat(), for a named depth, the device's tuning record's time of that depth and group
  /// where it holds one. The model charges it for every step of a full launch; a partial launch
  /// (a pass of s steps ends with s mod depth) costs a crossing of device memory a node and its
  /// steps on chip (tuning/cost_model.hpp).
  std::optional<double> kernel_ns_per_node;
};

/// What a run may use unless told otherwise: 90 % of the device's memory (the rest is left to the
/// driver and other programs).
std::uint64_t default_device_budget(const DeviceInfo& device);

/// A planned run: what the solver runs, and what the model predicts for it.
struct PlannedHeatRun {
  model::Plan predicted;  ///< layout, buffer extent, predicted time, and the trivial algorithm's
  Schedule schedule = Schedule::overlapped;
  std::uint64_t budget_bytes = 0;  ///< the solver's buffers take at most this much device memory
  std::size_t depth = 1;           ///< steps a kernel launch (HeatPlan::depth)
  BlockedGroup group;              ///< the blocked kernels' work-group (HeatPlan::group)
  double kernel_ns_per_node = 0;   ///< the kernels' time a node and step that the model charged
  /// Where that time came from: "profile" (its single-step rate), "tuning record" (the depth's
  /// measured time in its work-group) or "given" (HeatPlanRequest::kernel_ns_per_node).
  std::string kernel_rate;
  HeatPlan plan() const { return {predicted.layout, schedule, depth, group}; }
};

/// The model's view of `steps` steps of the solver's grid (rows padded as the solver pads them).
template <class T>
model::Problem heat_problem(const HeatSolver<T>& solver, std::size_t steps);

/// The plan of `steps` steps of `solver` that `request` asks for, with the constants of `profile`
/// (pinned or pageable transfers as the solver's host memory is). Throws InvalidArgument when the
/// request cannot be met: a budget too small for n = 1 names the minimum; incore when the grid
/// does not fit; a height outside 1..steps; blocks on a grid that is not 2D.
template <class T>
PlannedHeatRun plan_heat(const HeatSolver<T>& solver, std::size_t steps, const HeatPlanRequest& request,
                         const DeviceProfile& profile);
/// The same for a grid of T of `extents` on `device` that no solver holds yet (in pinned or
/// pageable host memory): what plan_heat() would give the solver of that grid.
template <class T>
PlannedHeatRun plan_heat(const DeviceInfo& device, const std::vector<std::size_t>& extents, bool pinned_host_memory,
                         std::size_t steps, const HeatPlanRequest& request, const DeviceProfile& profile);

/// What one launch depth gives, as plan_heat_depths() weighs it.
struct DepthPlan {
  std::string candidate;   ///< the tuned candidate: "1", or "4/256x1" (depth 4, work-groups of 256 x 1)
  std::size_t height = 0;  ///< the pyramid height n planned with it (0: in core)
  double predicted_s = 0;  ///< the plan's predicted time
};

/// The plan of the launch depth predicted fastest, and every depth's.
struct DepthPlans {
  PlannedHeatRun chosen;
  std::vector<DepthPlan> depths;  ///< by depth, the smallest first
};

/// The launch depth T and the plan chosen together: plan_heat() at every depth of `candidates`
/// (a tuning record: seconds a node and step of each candidate, as BlockingChoice::seconds), each
/// in its fastest work-group and charged that group's measured rate (depth 1 too: the record's
/// single steps, timed as the others were); the least predicted time wins, ties going to the smaller depth. A shallower
/// depth can win where the budget holds only low pyramids: passes of fewer steps than T run
/// partial launches. `request.depth` is not read. Errors: those of plan_heat(), and
/// InvalidArgument for a record without candidates or with a name that is none.
template <class T>
DepthPlans plan_heat_depths(const DeviceInfo& device, const std::vector<std::size_t>& extents, bool pinned_host_memory,
                            std::size_t steps, const HeatPlanRequest& request, const DeviceProfile& profile,
                            const std::vector<std::pair<std::string, double>>& candidates);

/// The smallest budget in which the solver can run `steps` steps of pyramid passes of `height`
/// with `decomposition` under `schedule`: tasks of one owned row (strips) or node a side (blocks).
template <class T>
std::uint64_t minimum_heat_budget(const HeatSolver<T>& solver, std::size_t steps, Decomposition decomposition,
                                  std::size_t height, Schedule schedule);

}  // namespace ziggurat
