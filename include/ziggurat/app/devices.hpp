#pragma once
// Devices as the shared runs name and report them: the contexts a --devices / devices= list
// selects for a run spread over several devices, and a device's properties as JSON (what
// `ziggurat devices --json` lists and ziggurat.devices() returns).

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ziggurat/base/context.hpp"
#include "ziggurat/base/device.hpp"

namespace ziggurat::app {

/// A context on each device `specs` names: one spec selects every device it matches ("all",
/// "gpu"); several, separated by '/' (a comma already means "and" inside a spec), one device each,
/// in that order (a device may repeat). DeviceNotFound when nothing matches.
std::vector<Context> contexts_on(const std::string& specs);

/// index, name, label, type, vendor, platform, platform_vendor, platform_version, version,
/// driver_version (and driver, its older name in the Python package), opencl_c_version,
/// compute_units, global_mem_bytes, max_alloc_bytes, local_mem_bytes, max_work_group_size,
/// base_address_align_bytes (grid rows on the device are padded to it), fp64,
/// host_unified_memory, profiling, nvidia_compute_capability.
nlohmann::json to_json(const DeviceInfo& device);

}  // namespace ziggurat::app
