#include "ziggurat/app/run_profile.hpp"

#include <iostream>
#include <utility>

#include "ziggurat/tuning/calibration.hpp"

namespace ziggurat::app {

RunProfile planning_profile(const Context& context, const std::optional<DeviceProfile>& given,
                            const ProfileNeeds& needs, ProfileOrigin* origin_details) {
  if (given) return {*given, "given"};
  ProfileOrigin origin;
  DeviceProfile profile = load_or_calibrate(context, needs, &origin);
  if (origin_details) *origin_details = origin;
  return {std::move(profile), origin.from_cache ? "cached" : "measured now"};
}

RunProfile run_profile(const Context& context, const std::string& path, bool announce, const ProfileNeeds& needs) {
  if (!path.empty()) return {read_profile_file(path), path};
  if (announce) {
    const auto cached = load_cached_profile(context.device());
    if (!cached || !missing_from(*cached, measurable_needs(context.device(), needs)).empty()) {
      std::cerr << "calibrating " << context.device().label() << " ...\n";
    }
  }
  ProfileOrigin origin;
  RunProfile run = planning_profile(context, std::nullopt, needs, &origin);
  warn_if_not_cached(origin);
  return run;
}

void warn_if_not_cached(const ProfileOrigin& origin) {
  if (origin.cache_write_error.empty()) return;
  std::cerr << "ziggurat: warning: the device profile could not be cached, so every run measures the device again: "
            << origin.cache_write_error << "; make the cache folder writable (ziggurat cache shows it), set "
            << "ZIGGURAT_CACHE_DIR, or ZIGGURAT_CACHE=off to measure without a cache\n";
}

}  // namespace ziggurat::app
