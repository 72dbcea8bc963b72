// `ziggurat-bench wave`: the explicit FEM wave step (method notes, section 5) on the paper's two
// model sizes (and 3D models), beside the physical limit and the peers:
//   - ziggurat on one device, and the streaming limit: the bytes one step must move (the stored
//     diagonals of K1 (11 in 2D, 50 in 3D), K2, m, u1 and u2 read, u3 written) over the measured
//     copy bandwidth; the same with the walks of --walks beside the planned one;
//   - ziggurat on several devices (--devices A/B) at each halo depth of --halo-steps, the cost
//     model's s among them, each beside the model's time a step;
//   - the same on MPI ranks (--mpirun "mpirun -np 2": `ziggurat wave` under that launcher);
//   - ziggurat's own multithreaded CPU step (all host cores, wave_step_reference);
//   - CuPy's sparse product (cuSPARSE CSR of the full K1) and vector operations for the same step
//     (wave_peers.py), as a GPU user would write it;
// and the seed's Tesla C1060 figures for model B for history. Models: A 1298 x 648 nodes
// (841,104, the paper's 840,848), B 4042 x 2021 (8,168,882; the paper's 8,170,042), 2 DOFs a node;
// NXxNYxNZ sizes are 3D models, 3 DOFs a node.

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "bench.hpp"
#include "format.hpp"
#include "peer_support.hpp"
#include "ziggurat/base/timestamp.hpp"
#include "ziggurat/app/devices.hpp"
#include "ziggurat/app/wave_run.hpp"
#include "ziggurat/base/host_cores.hpp"
#include "ziggurat/base/context.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/base/precision.hpp"
#include "ziggurat/base/version.hpp"
#include "ziggurat/io/npy.hpp"
#include "ziggurat/matrix/elastic_grid.hpp"
#include "ziggurat/ops/wave_step.hpp"
#include "ziggurat/solver/wave.hpp"
#include "ziggurat/tuning/calibration.hpp"
#include "ziggurat/tuning/profile_store.hpp"
#include "ziggurat/tuning/wave_planner.hpp"

namespace ziggurat::cli {

namespace {

using namespace ziggurat::wave;
using Clock = std::chrono::steady_clock;

struct BenchWaveOptions {
  std::string models = "1298x648,4042x2021";
  std::size_t steps = 500;
  std::string precision = "f32,f64";
  std::string devices;  // several: specs separated by '/'
  std::string halo_steps = "1,4,auto";
  std::string python = "python3";
  std::string mpirun;  // a launcher such as "mpirun -np 2": the same model on MPI ranks
  std::size_t rank_steps = 0;  // steps of each ranks' run (0: 10x --steps, so that start-up weighs little)
  bool no_peers = false;
  std::string device;
  std::string walks;  // one-device walks beside the planned one: R (DOFs a work-item) or RxS (and strips of S rows)
};


struct Row {
  std::string who;
  double seconds_per_step = 0;
  std::string note;
};

// A layered model of nx x nz (x ny) nodes at 10 m, the second layer from 0.3 of the depth.
ElasticGrid model(const std::vector<std::size_t>& n) {
  const std::vector<Layer> layers{{0, 2000, 1000, 2100}, {double(n.back()) * 3, 3500, 2000, 2500}};
  return n.size() == 3 ? layered_grid(n[0], n[1], n[2], 10, layers) : layered_grid(n[0], n[1], 10, layers);
}

std::string size_text(const std::vector<std::size_t>& n) {
  std::string text;
  for (const std::size_t v : n) text += (text.empty() ? "" : " x ") + std::to_string(v);
  return text;
}

template <class T>
double device_step_seconds(const std::vector<Context>& devices, const WaveSystem<T>& system, const PointSource& source,
                           std::size_t steps, std::size_t halo_steps, std::optional<WaveWalk> walk = std::nullopt) {
  WaveSplit split{{}, halo_steps};
  split.walk = walk;
  WaveSolver<T> solver(devices, system, source, 15, {{system.nx / 2, system.ny / 2, 0}}, split);
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

std::size_t rank_steps(const BenchWaveOptions& o) { return o.rank_steps > 0 ? o.rank_steps : 10 * o.steps; }

// The same model run by `ziggurat wave` under the --mpirun launcher (one block a rank, rank r on
// device r of its host), at halo depth `s`, for --rank-steps steps: its reported time a step, the
// first steps included (the process has no warm-up run).
template <class T>
Row ranks_row(const BenchWaveOptions& o, const ElasticGrid& grid, std::size_t sponge, const std::string& s) {
  Row row{"ziggurat, " + o.mpirun + ", halos every " + s, 0, ""};
  const auto metres = [&](std::size_t node) { return std::to_string(double(node) * grid.dx); };
  const std::string source = grid.dims == 3 ? metres(grid.nx / 2) + "," + metres(grid.ny / 2) + "," + metres(10)
                                            : metres(grid.nx / 2) + "," + metres(10);
  const std::string why = run_tool(
      o.mpirun,
      [&](const std::filesystem::path& folder) {
        std::vector<std::string> size{std::to_string(grid.nx), std::to_string(grid.nz)};
        if (grid.dims == 3) size.insert(size.begin() + 1, std::to_string(grid.ny));
        std::string sizes;
        for (const std::string& v : size) sizes += (sizes.empty() ? "" : "x") + v;
        return std::vector<std::string>{"wave", "--dims", std::to_string(grid.dims), "--size", sizes, "--dx",
                                        std::to_string(grid.dx), "--model", (folder / "layers.json").string(),
                                        "--absorbing", std::to_string(sponge), "--source", source, "--receivers",
                                        (folder / "receivers.npy").string(), "--steps", std::to_string(rank_steps(o)),
                                        "--halo-steps", s, "--precision", sizeof(T) == 4 ? "f32" : "f64", "--json",
                                        "--quiet"};
      },
      [&](const std::filesystem::path& folder) {
        const std::string layers = nlohmann::json::array({{{"top", 0}, {"vp", 2000}, {"vs", 1000}, {"rho", 2100}},
                                                          {{"top", double(grid.nz) * 3}, {"vp", 3500}, {"vs", 2000},
                                                           {"rho", 2500}}})
                                       .dump();
        write_file(folder / "layers.json", layers.data(), layers.size());
        std::vector<double> receiver{double(grid.nx / 2) * grid.dx, double(grid.ny / 2) * grid.dx, 0};
        if (grid.dims == 2) receiver.erase(receiver.begin() + 1);
        write_npy(folder / "receivers.npy", receiver.data(), {1, grid.dims});
      },
      [&](const std::filesystem::path&, const nlohmann::json& answer) {
        row.seconds_per_step = answer.at("seconds").get<double>() / double(rank_steps(o));
        row.who = "ziggurat, " + std::to_string(answer.at("ranks").get<int>()) + " MPI ranks, halos every " +
                  std::to_string(answer.at("halo_steps").get<std::size_t>()) + (s == "auto" ? " (the model's s)" : "");
        row.note = std::to_string(rank_steps(o)) + " steps, the first included";
      });
  if (!why.empty()) row.note = why;
  return row;
}

// What CuPy's step holds on the GPU: the expanded DIA data (2d - 1 diagonals) it builds the CSR
// from, the CSR's values and int32 column indices, and five vectors.
template <class T>
double cupy_device_bytes(const WaveSystem<T>& system) {
  const double n = double(system.dofs()), full = 2.0 * double(system.k1.offsets.size()) - 1;
  return full * n * (2 * sizeof(T) + 4) + 5 * n * sizeof(T);
}

template <class T>
Row cupy_row(const BenchWaveOptions& o, const Context& context, const WaveSystem<T>& system, std::size_t steps) {
  Row row{"CuPy (cuSPARSE CSR of K1 + vector ops)", 0, ""};
  // A model whose full CSR cannot fit is not handed over (its files alone would fill the disk).
  const double needs = cupy_device_bytes(system), has = double(context.device().global_mem_bytes);
  if (context.device().type == DeviceType::gpu && needs > has) {
    row.note = "not run: the full CSR of K1 needs " + number_text(needs * 1e-9) + " GB, the GPU has " +
               number_text(has * 1e-9) + " GB";
    return row;
  }
  const std::string why = run_peer_script(
      o.python, "wave_peers.py",
      [&](const std::filesystem::path& folder) {
        const std::size_t n = system.dofs(), d = system.k1.offsets.size();
        write_npy(folder / "k1.npy", system.k1.values.data(), {d, n});
        write_npy(folder / "offsets.npy", system.k1.offsets.data(), {d});
        write_npy(folder / "k2.npy", system.k2.data(), {n});
        write_npy(folder / "inverse_mass.npy", system.inverse_mass.data(), {n});
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

// Every option that is text, parsed (and the devices opened) before anything is measured.
struct Parsed {
  std::vector<std::vector<std::size_t>> models;
  std::vector<std::string> precisions;
  std::vector<std::size_t> halo_steps;  // 0: the model's
  std::vector<Context> devices;         // --devices
  std::vector<WaveWalk> walks;          // --walks
};

std::string walk_text(const WaveWalk& walk) {
  return std::to_string(walk.rows_per_item) + " DOFs a work-item, " +
         (walk.strip_rows == 0 ? std::string("in order") : "strips of " + std::to_string(walk.strip_rows) + " rows");
}

Parsed parse(const BenchWaveOptions& o) {
  Parsed p;
  for (const std::string& size : split(o.models, ',')) {
    p.models.push_back(parse_extents(size, 2, 3, "--models"));
    if (*std::min_element(p.models.back().begin(), p.models.back().end()) < 4)
      throw InvalidArgument("--models '" + size + "': a wave grid needs at least 4 nodes on each axis");
    app::check_wave_memory(p.models.back(), sizeof(double));
  }
  for (const std::string& precision : split(o.precision, ',')) {
    if (precision != "f32" && precision != "f64")
      throw InvalidArgument("--precision takes f32, f64 or f32,f64, not '" + o.precision + "'");
    p.precisions.push_back(precision);
  }
  p.halo_steps = parse_counts(o.halo_steps, "--halo-steps", "halo depths s", true);
  if (!o.devices.empty()) p.devices = app::contexts_on(o.devices);
  for (const std::string& walk : split(o.walks, ',')) {
    const std::vector<std::size_t> v = parse_extents(walk, 1, 2, "--walks");
    p.walks.push_back({v[0], v.size() == 2 ? v[1] : 0});
  }
  return p;
}

std::string halo_text(std::size_t s) { return s == 0 ? "auto" : std::to_string(s); }

template <class T>
void bench_model(const BenchWaveOptions& o, const Parsed& parsed, const Context& context, double copy,
                 const std::vector<std::size_t>& n, nlohmann::json& report) {
  const ElasticGrid grid = model(n);
  const std::size_t sponge = std::min<std::size_t>(20, *std::min_element(n.begin(), n.end()) / 4);
  const WaveSystem<T> system = wave_system<T>(grid, 0.9 * stable_time_step(grid), {sponge});
  const PointSource source = explosion(grid, {grid.nx / 2, grid.ny / 2, 10});
  const double nodes = double(grid.nodes());
  // K1's stored diagonals, K2, m, u1, u2 read; u3 written.
  const std::size_t values_per_dof = system.k1.offsets.size() + 5;
  const double limit = double(values_per_dof * sizeof(T)) * double(system.dofs()) / copy;
  const Row streaming{"streaming limit (" + std::to_string(values_per_dof) + " values a DOF / copy bandwidth)", limit, ""};
  const Row one{"ziggurat, " + context.device().label(), device_step_seconds({context}, system, source, o.steps, 1),
                "walk: " + walk_text(plan_walk(context.device(), system))};
  std::cout << "## " << size_text(n) << " nodes (" << number_text(nodes * 1e-6) << " M), " << type_name<T>()
            << ", " << o.steps << " steps\n\n"
            << "| run | ms/step | Mnodes/s | of streaming limit | vs one device | note |\n"
               "| --- | ---: | ---: | ---: | ---: | --- |\n";
  // Each row printed as soon as it is measured: a run stopped part-way keeps what it measured.
  nlohmann::json json_rows = nlohmann::json::array();
  const auto print = [&](const Row& r) {
    if (r.seconds_per_step <= 0) {
      std::cout << "| " << r.who << " | - | - | - | - | " << r.note << " |\n" << std::flush;
      return;
    }
    std::cout << "| " << r.who << " | " << number_text(r.seconds_per_step * 1e3) << " | "
              << number_text(nodes / r.seconds_per_step * 1e-6) << " | " << number_text(limit / r.seconds_per_step, 3)
              << " | " << number_text(one.seconds_per_step / r.seconds_per_step, 3) << " | " << r.note << " |\n"
              << std::flush;
    json_rows.push_back({{"run", r.who}, {"seconds_per_step", r.seconds_per_step}, {"note", r.note}});
  };
  print(streaming);
  print(one);
  for (const WaveWalk& walk : parsed.walks)
    if (walk.strip_rows == 0 || grid.dims == 3)
      print({"ziggurat, walk: " + walk_text(walk), device_step_seconds({context}, system, source, o.steps, 1, walk), ""});
  if (!parsed.devices.empty()) {
    const std::vector<Context>& devices = parsed.devices;
    const DeviceProfile profile = load_or_calibrate(devices.front());
    for (const std::size_t given : parsed.halo_steps) {
      const std::size_t s = given == 0 ? plan_halo_steps(profile, system, devices.size()) : given;
      const double modelled = modelled_step_seconds(profile, system, devices.size(), s);
      print({"ziggurat, " + std::to_string(devices.size()) + " devices (" + o.devices + "), halos every " +
                 std::to_string(s) + (given == 0 ? " (the model's s)" : ""),
             device_step_seconds(devices, system, source, o.steps, s), "model " + number_text(modelled * 1e3) + " ms/step"});
    }
  }
  if (!o.mpirun.empty())
    for (const std::size_t s : parsed.halo_steps) print(ranks_row<T>(o, grid, sponge, halo_text(s)));
  print({"ziggurat CPU step, " + std::to_string(usable_host_cores()) + " host threads",
         cpu_step_seconds(system, source, std::max<std::size_t>(o.steps / 10, 5)), ""});
  if (!o.no_peers) print(cupy_row(o, context, system, o.steps));
  std::cout << "\n" << std::flush;
  report["models"].push_back({{"nodes", n}, {"precision", type_name<T>()}, {"rows", json_rows}});
}

void run(const BenchWaveOptions& o) {
  const Parsed parsed = parse(o);
  Context context(o.device);
  const auto [kernel_copy, driver_copy] =
      measure_copy_bandwidth(context, std::min<std::size_t>(context.device().max_alloc_bytes / 4, 512u << 20), 3);
  const double copy = std::max(kernel_copy, driver_copy);
  std::cout << "# Explicit FEM elastic waves (2D P-SV, 3D)\n\n"
            << "device: " << context.device().label() << ", driver " << context.device().driver_version << "; host: "
            << usable_host_cores() << " threads; ziggurat " << version << "; " << utc_timestamp() << "\n"
            << "copy bandwidth " << number_text(copy * 1e-9) << " GB/s (read + write)\n"
            << "history (the paper, Tesla C1060, model B, 10,000 steps): CUDA 404 s (40.4 ms/step), OpenCL 569 s, "
               "one CPU core 16,368 s, OpenMP 3,661 s\n\n";
  nlohmann::json report = {{"benchmark", "wave"}, {"library_version", version}, {"copy_bytes_per_s", copy}};
  for (const std::string& precision : parsed.precisions) {
    if (precision == "f64" && !context.device().fp64) {
      std::cout << "(f64 skipped: " << context.device().label() << " has no double precision)\n\n";
      continue;
    }
    for (const std::vector<std::size_t>& n : parsed.models) {
      if (precision == "f32")
        bench_model<float>(o, parsed, context, copy, n, report);
      else
        bench_model<double>(o, parsed, context, copy, n, report);
    }
  }
}

}  // namespace

void add_bench_wave_command(CLI::App& app) {
  auto o = std::make_shared<BenchWaveOptions>();
  auto* command = app.add_subcommand("wave", "The explicit FEM wave step beside the streaming limit, several "
                                             "devices, the CPU and CuPy");
  command->add_option("--models", o->models, "Grids NXxNZ (2D) or NXxNYxNZ (3D), comma-separated")
      ->capture_default_str();
  command->add_option("--steps", o->steps, "Timed steps a run")->capture_default_str()->check(whole_number(1));
  command->add_option("--precision", o->precision, "f32, f64 or both")->capture_default_str();
  command->add_option("--devices", o->devices, "Several devices: a spec matching them all (gpu), or one spec each "
                                               "separated by '/' (0/1)");
  command->add_option("--halo-steps", o->halo_steps, "Halo depths s of the several-device runs (auto: the cost "
                                                     "model's, with its prediction beside each)")
      ->capture_default_str();
  command->add_option("--python", o->python, "Python of the CuPy peer (wave_peers.py)")->capture_default_str();
  command->add_option("--mpirun", o->mpirun, "A launcher, e.g. \"mpirun -np 2\": the same runs on MPI ranks "
                                             "(`ziggurat wave` under it, rank r on device r of its host)");
  command->add_option("--rank-steps", o->rank_steps, "Steps of each run on ranks (default 10x --steps: the process's "
                                                     "start-up is timed too)")
      ->check(whole_number(1));
  command->add_flag("--no-peers", o->no_peers, "Leave CuPy out");
  command->add_option("--walks", o->walks, "One-device walks measured beside the planned one: R (DOFs a "
                                           "work-item) or RxS (and strips of S rows of each plane, 3D only), "
                                           "comma-separated");
  command->add_option("--device", o->device, "Device selection");
  command->callback([o] { run(*o); });
}

}  // namespace ziggurat::cli
