#include "ziggurat/app/devices.hpp"

#include "ziggurat/app/text.hpp"
#include "ziggurat/base/error.hpp"

namespace ziggurat::app {

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

nlohmann::json to_json(const DeviceInfo& d) {
  return {{"index", d.index},
          {"name", d.name},
          {"label", d.label()},
          {"type", to_string(d.type)},
          {"vendor", d.vendor},
          {"platform", d.platform_name},
          {"platform_vendor", d.platform_vendor},
          {"platform_version", d.platform_version},
          {"version", d.version},
          {"driver_version", d.driver_version},
          {"driver", d.driver_version},
          {"opencl_c_version", d.opencl_c_version},
          {"compute_units", d.compute_units},
          {"global_mem_bytes", d.global_mem_bytes},
          {"max_alloc_bytes", d.max_alloc_bytes},
          {"local_mem_bytes", d.local_mem_bytes},
          {"max_work_group_size", d.max_work_group_size},
          {"base_address_align_bytes", d.base_address_align_bytes},
          {"fp64", d.fp64},
          {"host_unified_memory", d.host_unified_memory},
          {"profiling", d.profiling},
          {"nvidia_compute_capability", d.nvidia_compute_capability}};
}

}  // namespace ziggurat::app
