// `ziggurat-bench wave`: the explicit FEM wave step (method notes, section 5) on the paper's two
// model sizes, beside the physical limit and the peers:
//   - ziggurat on one device, and the streaming limit: the bytes one step must move (the 11 stored
//     diagonals of K1, K2, m, u1 and u2 read, u3 written: 16 values a DOF) over the measured copy
//     bandwidth;
//   - ziggurat on several devices (--devices A/B) at each halo depth of --halo-steps;
//   - ziggurat's own multithreaded CPU step (all host cores, wave_step_reference);
//   - CuPy's sparse product (cuSPARSE CSR of the full K1) and vector operations for the same step
//     (wave_peers.py), as a GPU user would write it;
// and the seed's Tesla C1060 figures for model B for history. Models: A 1298 x 648 nodes
// (841,104, the paper's 840,848), B 4042 x 2021 (8,168,882; the paper's 8,170,042), 2 DOFs a node.

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "bench.hpp"
#include "device_list.hpp"
#include "format.hpp"
#include "peer_support.hpp"
#include "ziggurat/base/context.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/base/precision.hpp"
#include "ziggurat/base/version.hpp"
#include "ziggurat/io/npy.hpp"
#include "ziggurat/matrix/elastic_grid.hpp"
#include "ziggurat/ops/wave_step.hpp"
#include "ziggurat/solver/wave.hpp"
#include "ziggurat/tuning/calibration.hpp"

namespace ziggurat::cli {

namespace {

using namespace ziggurat::wave;
using Clock = std::chrono::steady_clock;

struct BenchWaveOptions {
  std::string models = "1298x648,4042x2021";
  std::size_t steps = 500;
  std::string precision = "f32,f64";
  std::string devices;  // several: specs separated by '/'
  std::string halo_steps = "1,4";
  std::string python = "python3";
  bool no_peers = false;
  std::string device;
};

constexpr double kValuesPerDof = 16;  // K1's 11 diagonals, K2, m, u1, u2 read; u3 written

struct Row {
  std::string who;
  double seconds_per_step = 0;
  std::string note;
};

// A layered model of nx x nz nodes at 10 m with a source near the top and receivers on the surface.
ElasticGrid2D model(std::size_t nx, std::size_t nz) {
  return layered_grid(nx, nz, 10, {{0, 2000, 1000, 2100}, {double(nz) * 3, 3500, 2000, 2500}});
}

template <class T>
double device_step_seconds(const std::vector<Context>& devices, const WaveSystem<T>& system, const PointSource& source,
                           std::size_t steps, std::size_t halo_steps) {
  WaveSolver<T> solver(devices, system, source, 15, {system.nx / 2, 0}, {{}, halo_steps});
  solver.run(std::min<std::size_t>(steps, 20));  // warm-up: programs, first touches
  return solver.run(steps).seconds / double(steps);
}

template <class T>
double cpu_step_seconds(const WaveSystem<T>& system, const PointSource& source, std::size_t steps) {
  const std::vector<T> weights = source_weights(system, source);
  std::vector<T> u1(system.dofs(), T(0)), u2 = u1, u3;
  const auto start = Clock::now();
  for (std::size_t s = 0; s < steps; ++s) {
    wave_step_reference(system, u1, u2, u3, source, weights, ricker(double(s) * system.dt, 15));
    std::swap(u1, u2);
    std::swap(u2, u3);
  }
  return std::chrono::duration<double>(Clock::now() - start).count() / double(steps);
}

template <class T>
Row cupy_row(const BenchWaveOptions& o, const WaveSystem<T>& system, std::size_t steps) {
  Row row{"CuPy (cuSPARSE CSR of K1 + vector ops)", 0, ""};
  const std::string why = run_peer_script(
      o.python, "wave_peers.py",
      [&](const std::filesystem::path& folder) {
        const std::size_t n = system.dofs(), d = system.k1.offsets.size();
        write_npy(folder / "k1.npy", system.k1.values.data(), {d, n});
        write_npy(folder / "offsets.npy", system.k1.offsets.data(), {d});
        write_npy(folder / "k2.npy", system.k2.data(), {n});
        write_npy(folder / "m.npy", system.m.data(), {n});
        const std::string request = nlohmann::json{{"command", "time"}, {"steps", steps}}.dump();
        write_file(folder / "request.json", request.data(), request.size());
      },
      [&](const std::filesystem::path&, const nlohmann::json& answer) {
        if (answer.contains("unavailable")) row.note = answer["unavailable"].get<std::string>();
        if (!answer.contains("seconds_per_step")) return;
        row.seconds_per_step = answer["seconds_per_step"].get<double>();
        row.note = answer.value("note", std::string());
      });
  if (!why.empty()) row.note = why;
  return row;
}

template <class T>
void bench_model(const BenchWaveOptions& o, const Context& context, double copy, std::size_t nx, std::size_t nz,
                 nlohmann::json& report) {
  const ElasticGrid2D grid = model(nx, nz);
  const WaveSystem<T> system = wave_system<T>(grid, 0.9 * stable_time_step(grid), {20});
  const PointSource source = explosion(grid, nx / 2, 10);
  const double nodes = double(nx * nz);
  const double limit = kValuesPerDof * sizeof(T) * double(system.dofs()) / copy;
  std::vector<Row> rows{{"streaming limit (16 values a DOF / copy bandwidth)", limit, ""}};
  rows.push_back({"ziggurat, " + context.device().label(), device_step_seconds({context}, system, source, o.steps, 1), ""});
  if (!o.devices.empty()) {
    const std::vector<Context> devices = contexts_on(o.devices);
    for (const std::string& s : split(o.halo_steps, ','))
      rows.push_back({"ziggurat, " + std::to_string(devices.size()) + " devices (" + o.devices + "), halos every " + s,
                      device_step_seconds(devices, system, source, o.steps, std::stoul(s)), ""});
  }
  rows.push_back({"ziggurat CPU step, " + std::to_string(std::thread::hardware_concurrency()) + " host threads",
                  cpu_step_seconds(system, source, std::max<std::size_t>(o.steps / 10, 5)), ""});
  if (!o.no_peers) rows.push_back(cupy_row(o, system, o.steps));
  const double one = rows[1].seconds_per_step;
  std::cout << "## " << nx << " x " << nz << " nodes (" << number_text(nodes * 1e-6) << " M), " << type_name<T>()
            << ", " << o.steps << " steps\n\n"
            << "| run | ms/step | Mnodes/s | of streaming limit | vs one device | note |\n"
               "| --- | ---: | ---: | ---: | ---: | --- |\n";
  nlohmann::json json_rows = nlohmann::json::array();
  for (const Row& r : rows) {
    if (r.seconds_per_step <= 0) {
      std::cout << "| " << r.who << " | - | - | - | - | " << r.note << " |\n";
      continue;
    }
    std::cout << "| " << r.who << " | " << number_text(r.seconds_per_step * 1e3) << " | "
              << number_text(nodes / r.seconds_per_step * 1e-6) << " | " << number_text(limit / r.seconds_per_step, 3)
              << " | " << number_text(one / r.seconds_per_step, 3) << " | " << r.note << " |\n";
    json_rows.push_back({{"run", r.who}, {"seconds_per_step", r.seconds_per_step}, {"note", r.note}});
  }
  std::cout << "\n" << std::flush;
  report["models"].push_back({{"nx", nx}, {"nz", nz}, {"precision", type_name<T>()}, {"rows", json_rows}});
}

void run(const BenchWaveOptions& o) {
  Context context(o.device);
  const auto [kernel_copy, driver_copy] =
      measure_copy_bandwidth(context, std::min<std::size_t>(context.device().max_alloc_bytes / 4, 512u << 20), 3);
  const double copy = std::max(kernel_copy, driver_copy);
  std::cout << "# Explicit FEM elastic waves (2D P-SV)\n\n"
            << "device: " << context.device().label() << ", driver " << context.device().driver_version << "; host: "
            << std::thread::hardware_concurrency() << " threads; ziggurat " << version << "; " << now_text() << "\n"
            << "copy bandwidth " << number_text(copy * 1e-9) << " GB/s (read + write)\n"
            << "history (the paper, Tesla C1060, model B, 10,000 steps): CUDA 404 s (40.4 ms/step), OpenCL 569 s, "
               "one CPU core 16,368 s, OpenMP 3,661 s\n\n";
  nlohmann::json report = {{"benchmark", "wave"}, {"library_version", version}, {"copy_bytes_per_s", copy}};
  for (const std::string& precision : split(o.precision, ',')) {
    if (precision != "f32" && precision != "f64") throw InvalidArgument("--precision takes f32 and/or f64");
    if (precision == "f64" && !context.device().fp64) {
      std::cout << "(f64 skipped: " << context.device().label() << " has no double precision)\n\n";
      continue;
    }
    for (const std::string& size : split(o.models, ',')) {
      const std::size_t x = size.find('x');
      if (x == std::string::npos) throw InvalidArgument("--models takes NXxNZ sizes, not '" + size + "'");
      const std::size_t nx = std::stoul(size.substr(0, x)), nz = std::stoul(size.substr(x + 1));
      if (precision == "f32")
        bench_model<float>(o, context, copy, nx, nz, report);
      else
        bench_model<double>(o, context, copy, nx, nz, report);
    }
  }
}

}  // namespace

void add_bench_wave_command(CLI::App& app) {
  auto o = std::make_shared<BenchWaveOptions>();
  auto* command = app.add_subcommand("wave", "The explicit FEM wave step beside the streaming limit, several "
                                             "devices, the CPU and CuPy");
  command->add_option("--models", o->models, "Grids NXxNZ, comma-separated")->capture_default_str();
  command->add_option("--steps", o->steps, "Timed steps a run")->capture_default_str()->check(whole_number(1));
  command->add_option("--precision", o->precision, "f32, f64 or both")->capture_default_str();
  command->add_option("--devices", o->devices, "Several devices: a spec matching them all (gpu), or one spec each "
                                               "separated by '/' (0/1)");
  command->add_option("--halo-steps", o->halo_steps, "Halo depths s of the several-device runs")->capture_default_str();
  command->add_option("--python", o->python, "Python of the CuPy peer (wave_peers.py)")->capture_default_str();
  command->add_flag("--no-peers", o->no_peers, "Leave CuPy out");
  command->add_option("--device", o->device, "Device selection");
  command->callback([o] { run(*o); });
}

}  // namespace ziggurat::cli
