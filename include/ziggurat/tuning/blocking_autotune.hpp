#pragma once
// Choosing how many steps (sweeps) a blocked kernel launch advances on chip (HeatPlan::depth) and
// the work-group it runs in (HeatPlan::group), for the heat steps and the Jacobi sweeps: the
// single-step kernel and the blocked kernel at each candidate depth in the device's default group,
// then every candidate group at the fastest blocked depth and the next deeper one (a wider group
// owns more of its tile, so it may go deeper), timed on an in-device grid once per scheme,
// precision, dimension and device, and kept as a tuning record (tuning/profile_store.hpp) that
// later runs only read. Each heat depth's measured time a node and step is what the cost model
// charges for its kernels when the planner weighs that depth (plan_heat_depths()).

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "ziggurat/base/context.hpp"
#include "ziggurat/ops/heat_scheme.hpp"

namespace ziggurat {

/// The depth of Jacobi sweeps a launch to ask for on `device` when the caller names none: 0, the
/// tuned depth, on GPUs and accelerators (where the blocked kernels run several times as fast as
/// single sweeps: bench/results/2026-11-25-h100-heat-blocked.md), and 1 elsewhere (tuning solves
/// several times a candidate, 2 to 3 s on PoCL). Heat steps ask for 0 on every device: a CPU
/// device times only depths 1, 2 and 4 in one group, well under a second.
std::size_t default_blocking_depth(const DeviceInfo& device);

struct BlockingChoice {
  std::size_t depth = 1;      ///< 1: the single-step kernel won
  BlockedGroup group;         ///< the blocked kernel's work-group (zeros when depth is 1)
  double ns_per_node = 0;     ///< its measured time a node and step
  std::string key;            ///< the kind of problem, as kept in the tuning record
  bool measured_now = false;  ///< false when read from the record
  /// Seconds a node and step of each candidate ("1" the single-step kernel, "4/256x1" the blocked
  /// one at depth 4 in work-groups of 256 x 1), fastest first.
  std::vector<std::pair<std::string, double>> seconds;
};

/// A candidate's name in BlockingChoice::seconds: "1", or "<depth>/<x>x<y>".
std::string blocking_candidate_name(std::size_t depth, const BlockedGroup& group);
/// The depth and group a candidate's name stands for; InvalidArgument for any other text.
std::pair<std::size_t, BlockedGroup> parse_blocking_candidate(const std::string& name);

/// "heat-blocking f32 2d": precision and dimension.
template <class T>
std::string heat_blocking_key(std::size_t dims);

/// The fastest depth and group for heat grids of `dims` axes on this device, from the record of
/// this kind of problem or measured now and recorded. Candidates the device cannot run (local
/// memory, work-group size, registers) are left out.
template <class T>
BlockingChoice choose_heat_blocking(const Context& context, std::size_t dims);

/// "jacobi-blocking f32 3d".
template <class T>
std::string jacobi_blocking_key();

/// The same for the Jacobi sweeps of the Poisson solver (3D, one more value a node to stream:
/// the right-hand side), timed as sweeps of an in-core solve.
template <class T>
BlockingChoice choose_jacobi_blocking(const Context& context);

}  // namespace ziggurat
