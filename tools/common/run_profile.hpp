#pragma once
// The device profile a command plans with: the file --profile names, else the device's cached
// profile, else one measured now.

#include <string>

#include "ziggurat/base/context.hpp"
#include "ziggurat/tuning/device_profile.hpp"
#include "ziggurat/tuning/profile_store.hpp"

namespace ziggurat::cli {

struct RunProfile {
  DeviceProfile profile;
  std::string origin;  ///< the --profile file, "cached" or "measured now"
};

/// `path` empty: the cached profile of the context's device, else a calibration now, announced on
/// stderr when `announce` (it takes a while), with a warning when it could not be cached.
/// Otherwise the profile saved in `path`.
RunProfile run_profile(const Context& context, const std::string& path, bool announce);

/// A warning on stderr when a profile measured now could not be cached (a cache folder that is a
/// file or read-only): every run would measure again.
void warn_if_not_cached(const ProfileOrigin& origin);

}  // namespace ziggurat::cli
