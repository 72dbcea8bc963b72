// `ziggurat-bench build`: program build time with a cold and a warm binary cache.

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>

#include "bench.hpp"
#include "format.hpp"
#include "ziggurat/base/timestamp.hpp"
#include "ziggurat/app/json_output.hpp"
#include "ziggurat/base/context.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/base/version.hpp"
#include "ziggurat/solver/in_device_heat.hpp"

namespace ziggurat::cli {

namespace {

struct BenchOptions {
  std::size_t repeat = 5;
  std::string device;
  bool json = false;
};

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

nlohmann::json device_json(const DeviceInfo& device) {
  return {{"name", device.name}, {"platform", device.platform_name}, {"driver", device.driver_version}};
}

// Build time of one program from source (cold: empty cache) and from the cache (warm), each in a
// fresh Context so that only the disk cache can help, plus the first launch that follows.
void bench_build(const BenchOptions& options) {
  // Vendor caches would make "cold" builds warm: switch them off before the drivers load.
  setenv("POCL_KERNEL_CACHE", "0", 1);
  setenv("CUDA_CACHE_DISABLE", "1", 1);
  const DeviceInfo device = select_device(options.device);
  // Scratch cache folders, removed however the benchmark ends.
  struct ScratchFolder {
    std::filesystem::path path = std::filesystem::temp_directory_path() /
                                 ("ziggurat-bench-build-" + std::to_string(std::random_device{}()));
    ~ScratchFolder() {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  } scratch;
  const auto& root = scratch.path;
  struct Sample { std::vector<double> build, launch; };
  Sample cold, warm;
  const auto build_and_launch = [&](const std::filesystem::path& folder, Sample& sample) {
    Context context(device, BinaryCache(folder));
    const Grid<float> field = heat_mode_field<float>({64, 64});
    // The solver builds its program (heat_stencil) when it is made; the tiny grid's upload is
    // noise beside that.
    const auto start = std::chrono::steady_clock::now();
    InDeviceHeat<float> solver(context, field, 0.2);
    const auto built = std::chrono::steady_clock::now();
    const auto launch_start = built;
    solver.advance(1);
    const auto launched = std::chrono::steady_clock::now();
    sample.build.push_back(std::chrono::duration<double>(built - start).count());
    sample.launch.push_back(std::chrono::duration<double>(launched - launch_start).count());
    return context.build_stats();
  };
  for (std::size_t r = 0; r < options.repeat; ++r) {
    const auto folder = root / std::to_string(r);
    const auto first = build_and_launch(folder, cold);
    const auto second = build_and_launch(folder, warm);
    if (first.from_disk != 0 || second.from_source != 0) {  // cold must compile, warm must only load
      throw Error("the program cache did not behave as expected (cold run: " + std::to_string(first.from_disk) +
                  " programs from the cache, warm run: " + std::to_string(second.from_source) + " compiled)");
    }
  }

  const double cold_ms = 1e3 * median(cold.build), warm_ms = 1e3 * median(warm.build);
  if (options.json) {
    nlohmann::json j = {{"benchmark", "program build"}, {"date", utc_timestamp()},
                        {"device", device_json(device)}, {"program", "heat_stencil (float)"}, {"repeat", options.repeat},
                        {"cold_build_ms_median", cold_ms}, {"warm_build_ms_median", warm_ms},
                        {"cold_first_step_ms_median", 1e3 * median(cold.launch)},
                        {"warm_first_step_ms_median", 1e3 * median(warm.launch)}};
    std::cout << app::json_output(j);
    return;
  }
  std::cout << "ziggurat " << version << " bench build, " << utc_timestamp() << "\n"
            << "device: " << device.label() << ", driver " << device.driver_version << "\n"
            << "program heat_stencil (float), median of " << options.repeat
            << " runs, each in a fresh context; vendor kernel caches off\n\n";
  Table table({"binary cache", "build ms", "first step ms"});
  table.add({"cold (compiled from source)", number_text(cold_ms), number_text(1e3 * median(cold.launch))});
  table.add({"warm (loaded from cache)", number_text(warm_ms), number_text(1e3 * median(warm.launch))});
  table.print(std::cout);
  std::cout << "warm build is " << number_text(cold_ms / warm_ms) << "x faster\n";
}

}  // namespace

void add_bench_build_command(CLI::App& app) {
  auto build = std::make_shared<BenchOptions>();
  auto* command = app.add_subcommand("build", "Program build time, cold and warm binary cache");
  command->add_option("--repeat", build->repeat, "Runs of each")->capture_default_str()->check(whole_number(1));
  command->add_option("--device", build->device, "Device selection (see `ziggurat devices`)");
  command->add_flag("--json", build->json, "Print JSON");
  command->callback([build] { bench_build(*build); });
}

}  // namespace ziggurat::cli
