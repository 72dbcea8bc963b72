// `ziggurat calibrate`: measure the device (or load its cached profile) and show the profile.

#include <iostream>
#include <memory>

#include "commands.hpp"
#include "format.hpp"
#include "ziggurat/app/json_output.hpp"
#include "ziggurat/app/run_profile.hpp"
#include "ziggurat/matrix/grid.hpp"
#include "ziggurat/tuning/profile_store.hpp"

namespace ziggurat::cli {

namespace {

struct CalibrateOptions {
  std::string device;
  bool force = false;
  bool json = false;
};

std::string microseconds(double seconds) { return number_text(seconds * 1e6) + " us"; }
std::string gigabytes_per_s(double bytes_per_s) { return number_text(bytes_per_s * 1e-9) + " GB/s"; }

void print(const DeviceProfile& p, const ProfileOrigin& origin) {
  std::cout << "ziggurat " << p.library_version << " profile of " << p.device << " [" << p.platform << "], driver "
            << p.driver << "\n"
            << (origin.from_cache ? "loaded from " + origin.path.string() + ", measured " : "measured ") << p.date
            << " in " << number_text(p.calibration_s) << " s, timed with " << p.timer << "\n";
  // A profile that earlier commands measured in part: what they had not needed is measured now.
  if (!origin.from_cache && origin.measured.size() < p.phases.size()) {
    std::cout << "(completed the cached profile " << origin.path.string() << ": measured now";
    for (const auto& phase : origin.measured) std::cout << " " << phase << ";";
    std::cout << " the rest as the earlier commands measured it)\n";
  }
  if (!origin.remeasured_because.empty()) std::cout << "(the cached profile was " << origin.remeasured_because << ")\n";
  std::cout << "time by phase:";
  for (const auto& phase : p.phases) std::cout << " " << phase.name << " " << number_text(phase.seconds * 1e3) << " ms;";
  std::cout << "\n";
  if (p.host_unified_memory) std::cout << "host and device share memory: transfers are copies within host memory\n";

  std::cout << "\n";
  Table transfers({"transfers", "latency", "bandwidth", "fit error >= 1 MiB", "tau_c float", "tau_c double"});
  const auto row = [&](const char* what, const TransferFit& fit) {
    transfers.add({what, microseconds(fit.latency_s), gigabytes_per_s(fit.bytes_per_s),
                   number_text(100 * fit.max_relative_error, 2) + " %", number_text(4e9 / fit.bytes_per_s) + " ns",
                   number_text(8e9 / fit.bytes_per_s) + " ns"});
  };
  row("host->device pinned", p.upload_pinned);
  row("device->host pinned", p.download_pinned);
  row("host->device pageable", p.upload_pageable);
  row("device->host pageable", p.download_pageable);
  row("host->device rect (pinned)", p.upload_rect);
  row("device->host rect (pinned)", p.download_rect);
  transfers.print(std::cout);

  const auto overlap_line = [](const char* what, const OverlapMeasurement& o) {
    std::cout << what << ": upload " << number_text(o.upload_s * 1e3) << " ms, download "
              << number_text(o.download_s * 1e3) << " ms, kernels " << number_text(o.compute_s * 1e3)
              << " ms; all three together " << number_text(o.all_three_s * 1e3) << " ms (efficiency "
              << number_text(o.efficiency, 2) << ": "
              << (o.transfers_overlap_compute() ? "transfers overlap kernels" : "no overlap")
              << "); upload and download together " << number_text(o.up_and_down_s * 1e3) << " ms (duplex efficiency "
              << number_text(o.duplex_efficiency, 2) << ": " << (o.duplex() ? "duplex" : "not duplex")
              << "); with all three running, uploads take " << number_text(o.upload_together_s / o.upload_s, 3)
              << " x, downloads " << number_text(o.download_together_s / o.download_s, 3) << " x and kernels "
              << number_text(o.compute_together_s / o.compute_s, 3) << " x as long\n";
  };
  std::cout << "\n";
  overlap_line("overlap, contiguous transfers", p.overlap);
  overlap_line("overlap, rect transfers", p.rect_overlap);
  std::cout << "kernel launch: " << microseconds(p.launch_pipelined_s) << " each back to back, "
            << microseconds(p.launch_blocking_s) << " launched and waited for\n";
  if (p.copy_bytes_per_s() > 0) {
    std::cout << "device copy: " << gigabytes_per_s(p.copy_driver_bytes_per_s) << " clEnqueueCopyBuffer, "
              << gigabytes_per_s(p.copy_kernel_bytes_per_s) << " copy kernel (bytes read + written)\n";
  }
  for (const auto& k : p.kernels) {
    std::cout << "tau_a " << k.kernel << " (" << k.dims << "D " << (k.value_bytes == 4 ? "float" : "double") << ", "
              << extents_string(k.extents) << "): " << number_text(k.ns_per_node, 4) << " ns/node\n";
  }
  std::cout << "numstreams: " << p.numstreams << " (CLBlast axpy takes twice its shortest time at this length; "
            << microseconds(p.axpy_call_s) << " a call, " << microseconds(p.axpy_wave_s) << " a wave beyond)\n";
}

}  // namespace

void add_calibrate_command(CLI::App& app) {
  auto options = std::make_shared<CalibrateOptions>();
  auto* command = app.add_subcommand("calibrate", "Measure the device's transfer, launch, memory and compute timings "
                                                  "(cached on disk; --force measures again)");
  command->add_option("--device", options->device, "Device selection (see `ziggurat devices`)");
  command->add_flag("--force", options->force, "Measure even when a valid cached profile exists");
  command->add_flag("--json", options->json, "Print the profile as JSON");
  command->callback([options] {
    const Context context(options->device);
    ProfileOrigin origin;
    const DeviceProfile profile = load_or_calibrate(context, options->force, &origin);
    app::warn_if_not_cached(origin);
    if (options->json) {
      std::cout << app::json_output(nlohmann::json::parse(profile_to_json(profile)));  // the profile file, versioned
    } else {
      print(profile, origin);
    }
  });
}

}  // namespace ziggurat::cli
