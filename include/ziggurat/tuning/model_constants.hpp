#pragma once
// The cost models' constants (tuning/cost_model.hpp), derived from a device's measured profile
// (tuning/device_profile.hpp): the measurement stays what was measured, and what each model makes
// of it is decided here, beside the models.

#include <cstddef>
#include <optional>

#include "ziggurat/tuning/cost_model.hpp"
#include "ziggurat/tuning/device_profile.hpp"

namespace ziggurat::model {

/// How one kind of transfer shares the device with kernels and with transfers the other way:
/// overlap and duplex when their efficiencies reach 0.5, and each engine slowed down by its time
/// with all three running over its time alone (never below 1).
TransferEngines transfer_engines(const OverlapMeasurement& overlap);

/// ns a node of `value_bytes`-byte values takes to cross device memory once (a value read and one
/// written at the profile's copy bandwidth): the streaming limit of a launch; 0 when the profile
/// has no copy bandwidth (measured without timers).
double crossing_ns(const DeviceProfile& profile, std::size_t value_bytes);

/// The heat pyramid's constants for a grid of `dims` dimensions and `value_bytes`-byte values:
/// pinned transfers (pageable ones when `pinned_host` is false), rect transfers for blocks, tau_a
/// of the matching stencil kernel (or `tau_a_ns` when given), pipelined launch cost, the crossing
/// of device memory, measured overlap; launch depth 1 (the planner sets its own). Throws
/// UnsupportedFeature when tau_a_ns is not given and the profile has no rate for such a kernel.
DeviceConstants heat_constants(const DeviceProfile& profile, std::size_t dims, std::size_t value_bytes,
                               std::optional<double> tau_a_ns = std::nullopt, bool pinned_host = true);

/// The long-vector model's constants (method notes, eq. 1) for a grid of `values` values. Throws
/// UnsupportedFeature when the profile has none (not measured, or CLBlast could not run there).
LongVectorConstants long_vector_constants(const DeviceProfile& profile, std::size_t value_bytes, double values);

}  // namespace ziggurat::model
