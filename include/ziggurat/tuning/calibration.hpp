#pragma once
// Measuring a device: transfers, overlap, launches, memory bandwidth, stencil compute rates and
// the length from which vector calls saturate the device, as a DeviceProfile
// (tuning/device_profile.hpp). tuning/profile_store.hpp keeps profiles on disk, so that a program
// pays for the measurement once per device, driver and library version. A command measures the
// device figures and the rates it needs (ProfileNeeds); a later command adds its own rates.
//
// Every timing is taken after a warm-up, repeated, and kept as median and minimum; device work
// is timed with OpenCL profiling events where the device has them, else with the host clock.
// Transfers are fitted as t(bytes) = latency + bytes / bandwidth over a sweep of sizes. The
// profile records how long each phase took (DeviceProfile::phases).

#include <cstddef>
#include <utility>

#include "ziggurat/base/context.hpp"
#include "ziggurat/tuning/device_profile.hpp"

namespace ziggurat {

/// Measures the device of `context` now: everything (ProfileNeeds::everything()). Throws
/// UnsupportedFeature for a device with less than 16 MiB in its largest allocation, Error when the
/// device's timers give an impossible result.
DeviceProfile calibrate(const Context& context);

/// Measures the device figures (transfers, launches, copy bandwidth, overlap) and what `needs`
/// names, as calibrate(context) does.
DeviceProfile calibrate(const Context& context, const ProfileNeeds& needs);

/// `needs` less what cannot run there (double rates on a device without fp64, stencils of other than
/// 1 to 3 dimensions): what can be measured.
ProfileNeeds measurable_needs(const DeviceInfo& device, const ProfileNeeds& needs);

/// Adds to `profile`, measured on the device of `context`, what of `needs` it lacks: each rate a
/// phase of its own, the time added to calibration_s. Error, as calibrate(), when a timer gives an
/// impossible result (the profile is then unchanged).
void add_measurements(const Context& context, DeviceProfile& profile, const ProfileNeeds& needs);

/// The copy bandwidth of the device in read + write bytes per second, over buffers of `bytes`:
/// {copy kernel, clEnqueueCopyBuffer}, each the best of `repeat` rounds. Needs profiling
/// (UnsupportedFeature otherwise).
std::pair<double, double> measure_copy_bandwidth(const Context& context, std::size_t bytes, std::size_t repeat);

}  // namespace ziggurat
