#pragma once
// The device profile a run plans with: the one given (the file --profile names, the dict
// profile= holds), else the device's cached profile, with what the run needs (ProfileNeeds)
// measured now where the cache lacks it.

#include <optional>
#include <string>

#include "ziggurat/base/context.hpp"
#include "ziggurat/tuning/device_profile.hpp"
#include "ziggurat/tuning/profile_store.hpp"

namespace ziggurat::app {

struct RunProfile {
  DeviceProfile profile;
  std::string origin;  ///< the --profile file, "given", "cached" or "measured now" (wholly or in part)
};

/// `given` when there is one (origin "given"), else the cached profile of the context's device
/// with what `needs` names measured now where it lacks it, cached (load_or_calibrate(); origin
/// "cached" or "measured now"; `origin_details`, when given, says whether it could be cached).
/// Nothing is said on stderr. A calibration takes a while: Python calls it without the GIL.
RunProfile planning_profile(const Context& context, const std::optional<DeviceProfile>& given,
                            const ProfileNeeds& needs, ProfileOrigin* origin_details = nullptr);

/// `path` empty: planning_profile() of no given profile, the calibration announced on stderr when
/// `announce` (it takes a while), with a warning when it could not be cached. Otherwise the profile
/// saved in `path`.
RunProfile run_profile(const Context& context, const std::string& path, bool announce, const ProfileNeeds& needs);

/// A warning on stderr when a profile measured now could not be cached (a cache folder that is a
/// file or read-only): every run would measure again.
void warn_if_not_cached(const ProfileOrigin& origin);

}  // namespace ziggurat::app
