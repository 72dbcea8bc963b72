#include "run_profile.hpp"

#include <iostream>

#include "ziggurat/tuning/profile_store.hpp"

namespace ziggurat::cli {

RunProfile run_profile(const Context& context, const std::string& path, bool announce) {
  if (!path.empty()) return {read_profile_file(path), path};
  if (announce && !load_cached_profile(context.device())) std::cerr << "calibrating " << context.device().label() << " ...\n";
  ProfileOrigin origin;
  DeviceProfile profile = load_or_calibrate(context, false, &origin);
  return {std::move(profile), origin.from_cache ? "cached" : "measured now"};
}

}  // namespace ziggurat::cli
