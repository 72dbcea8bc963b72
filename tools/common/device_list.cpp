#include "device_list.hpp"

#include "format.hpp"
#include "ziggurat/base/device.hpp"
#include "ziggurat/base/error.hpp"

namespace ziggurat::cli {

std::vector<Context> contexts_on(const std::string& specs) {
  const std::vector<std::string> parts = split(specs, '/');
  std::vector<Context> out;
  if (parts.size() == 1) {
    for (const DeviceInfo& d : filter_devices(list_devices(), parts[0])) out.emplace_back(d);
    if (out.empty()) throw DeviceNotFound("no device matches --devices " + specs + " (see `ziggurat devices`)");
    return out;
  }
  for (const std::string& spec : parts) out.emplace_back(select_device(spec));
  return out;
}

}  // namespace ziggurat::cli
