// `ziggurat devices`: every OpenCL device, as a table or as JSON.

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "format.hpp"
#include "ziggurat/app/devices.hpp"
#include "ziggurat/app/json_output.hpp"
#include "ziggurat/base/context.hpp"
#include "ziggurat/base/error.hpp"

namespace ziggurat::cli {

namespace {

// The preferred work-group multiple needs a context and a compiled probe kernel; a device that
// cannot give one is still listed, with the reason.
std::string work_group_multiple(const DeviceInfo& device, std::size_t& multiple) {
  try {
    multiple = Context(device).preferred_work_group_multiple();
    return {};
  } catch (const Error& error) {
    multiple = 0;
    return error.what();
  }
}

// The device's properties (app::to_json), whether it is the default, its work-group multiple, and
// why there is none.
nlohmann::json device_json(const DeviceInfo& d, std::size_t multiple, const std::string& problem, bool is_default) {
  nlohmann::json j = app::to_json(d);
  j["default"] = is_default;
  j["preferred_work_group_multiple"] = multiple;
  if (!problem.empty()) j["error"] = problem;
  return j;
}

void run_devices(bool json) {
  std::vector<std::string> problems;
  const auto devices = list_devices(&problems);
  std::size_t default_index = devices.size();
  try {
    if (!devices.empty()) default_index = select_device(devices, "").index;
  } catch (const Error& error) {
    problems.push_back(std::string("selecting the default device: ") + error.what());
  }

  nlohmann::json list = nlohmann::json::array();
  Table table({"#", "type", "device", "platform", "CUs", "memory", "max alloc", "local", "fp64",
               "WG max", "WG mult", "align", "unified", "driver"});
  for (const auto& d : devices) {
    std::size_t multiple = 0;
    const std::string problem = work_group_multiple(d, multiple);
    if (!problem.empty()) problems.push_back("device #" + std::to_string(d.index) + ": " + problem);
    list.push_back(device_json(d, multiple, problem, d.index == default_index));
    table.add({std::to_string(d.index) + (d.index == default_index ? "*" : ""), to_string(d.type), d.name,
               d.platform_name, std::to_string(d.compute_units), bytes_text(d.global_mem_bytes),
               bytes_text(d.max_alloc_bytes), bytes_text(d.local_mem_bytes), d.fp64 ? "yes" : "no",
               std::to_string(d.max_work_group_size), multiple > 0 ? std::to_string(multiple) : "?",
               std::to_string(d.base_address_align_bytes) + " B", d.host_unified_memory ? "yes" : "no",
               d.driver_version});
  }
  for (const auto& problem : problems) std::cerr << "ziggurat: warning: " << problem << "\n";
  if (json) {
    std::cout << app::json_output({{"devices", list}});
    return;
  }
  if (devices.empty()) {
    throw DeviceNotFound("no OpenCL device is installed: install a driver (scripts/setup.sh installs "
                         "PoCL, a CPU device) and check with `clinfo -l`");
  }
  table.print(std::cout);
  std::cout << "* the default device (ZIGGURAT_DEVICE or --device choose another: a number, gpu, cpu, "
               "fp64, platform:TEXT, name:TEXT, or TEXT)\n";

}

}  // namespace

void add_devices_command(CLI::App& app) {
  auto* command = app.add_subcommand("devices", "List every OpenCL device and what it offers");
  auto json = std::make_shared<bool>(false);
  command->add_flag("--json", *json, "Print the list as JSON");
  command->callback([json] { run_devices(*json); });
}

}  // namespace ziggurat::cli
