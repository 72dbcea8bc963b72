#pragma once
// Choosing how many steps a heat kernel launch advances on chip (HeatPlan::depth): the
// single-step kernel and the blocked kernel at each candidate depth, timed on an in-device grid
// once per precision, dimension and device, and kept as a tuning record (tuning/profile_store.hpp)
// that later runs only read. The chosen depth's measured time a node and step is what the cost
// model then charges for the kernels (HeatPlanRequest::kernel_ns_per_node).

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "ziggurat/base/context.hpp"

namespace ziggurat {

struct HeatDepthChoice {
  std::size_t depth = 1;      ///< 1: the single-step kernel won
  double ns_per_node = 0;     ///< its measured time a node and step
  std::string key;            ///< the kind of problem, as kept in the tuning record
  bool measured_now = false;  ///< false when read from the record
  /// Seconds a node and step of each candidate ("1" the single-step kernel, "4" the blocked one
  /// at depth 4), fastest first.
  std::vector<std::pair<std::string, double>> seconds;
};

/// "heat-depth f32 2d": precision and dimension.
template <class T>
std::string heat_depth_key(std::size_t dims);

/// The fastest depth for grids of `dims` axes on this device, from the record of this kind of
/// problem or measured now and recorded. Candidates the device cannot run (local memory,
/// work-group size) are left out.
template <class T>
HeatDepthChoice choose_heat_depth(const Context& context, std::size_t dims);

}  // namespace ziggurat
