#include "ziggurat/app/run_profile.hpp"

#include <iostream>
#include <utility>

namespace ziggurat::app {

RunProfile planning_profile(const Context& context, const std::optional<DeviceProfile>& given,
                            ProfileOrigin* origin_details) {
  if (given) return {*given, "given"};
  ProfileOrigin origin;
  DeviceProfile profile = load_or_calibrate(context, false, &origin);
  if (origin_details) *origin_details = origin;
  return {std::move(profile), origin.from_cache ? "cached" : "measured now"};
}

RunProfile run_profile(const Context& context, const std::string& path, bool announce) {
  if (!path.empty()) return {read_profile_file(path), path};
  if (announce && !load_cached_profile(context.device())) std::cerr << "calibrating " << context.device().label() << " ...\n";
  ProfileOrigin origin;
  RunProfile run = planning_profile(context, std::nullopt, &origin);
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
