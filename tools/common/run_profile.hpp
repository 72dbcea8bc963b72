#pragma once
// The device profile a command plans with: the file --profile names, else the device's cached
// profile, else one measured now.

#include <string>

#include "ziggurat/base/context.hpp"
#include "ziggurat/tuning/device_profile.hpp"

namespace ziggurat::cli {

struct RunProfile {
  DeviceProfile profile;
  std::string origin;  ///< the --profile file, "cached" or "measured now"
};

/// `path` empty: the cached profile of the context's device, else a calibration now, announced on
/// stderr when `announce` (it takes a while). Otherwise the profile saved in `path`.
RunProfile run_profile(const Context& context, const std::string& path, bool announce);

}  // namespace ziggurat::cli
