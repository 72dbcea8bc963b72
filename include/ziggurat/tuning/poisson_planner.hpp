#pragma once
// Planning the Poisson solver's runs (solver/poisson_pyramid.hpp): the cost model
// (tuning/cost_model.hpp) with the field and its right-hand side uploaded per task and tau_a of
// the Jacobi sweep, fed with the device's measured profile, chooses in core or the strip height h
// and task size R - 2h that fit a device-memory budget, by exhaustive search. Nothing is measured
// here.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "ziggurat/solver/poisson_pyramid.hpp"
#include "ziggurat/tuning/cost_model.hpp"
#include "ziggurat/tuning/device_profile.hpp"

namespace ziggurat {

enum class PoissonMode {
  automatic,  ///< in core when the grid fits, else the best strip pyramid
  incore,     ///< the whole grid on the device
  strip,      ///< pyramid passes over strips of planes
};

const char* to_string(PoissonMode mode);
/// "auto", "incore" or "strip"; InvalidArgument otherwise.
PoissonMode parse_poisson_mode(std::string_view text);

/// What to plan: everything left empty is chosen by the cost model.
struct PoissonPlanRequest {
  PoissonMode mode = PoissonMode::automatic;
  std::optional<std::size_t> height;           ///< sweeps per pass (in core: between stopping tests)
  std::optional<std::uint64_t> device_memory;  ///< budget in bytes; default default_device_budget()
  Schedule schedule = Schedule::overlapped;
  /// Sweeps a kernel launch runs with its tile on chip (HeatPlan::depth). 0: the depth tuned for
  /// the device, which solve_poisson() reads or measures first; plan_poisson() takes 1 or more.
  std::size_t depth = 1;
  BlockedGroup group;     ///< the blocked kernel's work-group (zeros: the device's default)
};

/// Device buffers per task slot: two time layers and the right-hand side; two slots when overlapped.
std::size_t poisson_buffer_layers(Schedule schedule);

/// A planned run and what the model predicts for it.
struct PlannedPoissonRun {
  model::Plan predicted;  ///< layout (in core: height = sweeps between tests), predicted time of max_sweeps sweeps
  Schedule schedule = Schedule::overlapped;
  std::uint64_t budget_bytes = 0;
  /// The paper's eq. (2) at the plan's R and h, per sweep (0 in core): tau_c the mean of the
  /// measured upload and download time per value, tau_a the Jacobi sweep's.
  double paper_ns_per_sweep = 0;
  std::size_t depth = 1;  ///< sweeps a launch (PoissonPlanRequest::depth)
  BlockedGroup group;     ///< (PoissonPlanRequest::group)
  HeatPlan plan() const { return {predicted.layout, schedule, depth, group}; }
};

/// The model's view of `sweeps` sweeps of the solver's grid.
template <class T>
model::Problem poisson_problem(const PoissonSolver<T>& solver, std::size_t sweeps);

/// The model's constants: the heat pyramid's transfers and launches, tau_a of the Jacobi sweep.
/// Throws UnsupportedFeature when the profile has no Jacobi rate (calibrate again).
model::DeviceConstants poisson_constants(const DeviceProfile& profile, std::size_t value_bytes, bool pinned_host = true);

/// The plan of `stop.max_sweeps` sweeps of `solver` that `request` asks for. Throws InvalidArgument
/// when it cannot be met: a budget too small for h = 1 names the minimum; incore when the grid does
/// not fit; a height of 0 or above max_sweeps.
template <class T>
PlannedPoissonRun plan_poisson(const PoissonSolver<T>& solver, const PoissonStop& stop, const PoissonPlanRequest& request,
                               const DeviceProfile& profile);

/// The smallest budget for strip passes of `height` sweeps under `schedule`.
template <class T>
std::uint64_t minimum_poisson_budget(const PoissonSolver<T>& solver, std::size_t sweeps, std::size_t height,
                                     Schedule schedule);

}  // namespace ziggurat
