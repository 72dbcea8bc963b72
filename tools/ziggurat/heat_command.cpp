// `ziggurat heat`: the explicit heat scheme in 1D, 2D or 3D on a grid held in host memory, run on
// the device by the pyramid method (or in core when it fits), as the cost model plans it; or, with
// --method long-vector, in device memory by the long-vector algorithm (CLBlast calls), as model (1)
// predicts it.

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cmath>
#include <filesystem>
#include <functional>
#include <iostream>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "commands.hpp"
#include "file_options.hpp"
#include "format.hpp"
#include "option_aliases.hpp"
#include "picture.hpp"
#include "progress.hpp"
#include "ranks.hpp"
#include "stop_signal.hpp"
#include "vtk_output.hpp"
#include "ziggurat/app/json_output.hpp"
#include "ziggurat/app/reports.hpp"
#include "ziggurat/app/run_profile.hpp"
#include "ziggurat/automatic/heat.hpp"
#include "ziggurat/base/context.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/base/files.hpp"
#include "ziggurat/base/host_memory.hpp"
#include "ziggurat/base/precision.hpp"
#ifdef ZIGGURAT_HAVE_MPI
#include "ziggurat/distributed/heat.hpp"
#endif
#include "ziggurat/io/npy.hpp"
#include "ziggurat/ops/heat_scheme.hpp"
#include "ziggurat/solver/long_vector_heat.hpp"
#include "ziggurat/tuning/model_constants.hpp"

namespace ziggurat::cli {

namespace {

struct HeatOptions {
  FileOptions files;  // every file read or written, checked before any work
  std::size_t dims = 0;  // 0: from --size or --init, else 2
  std::string size;
  std::size_t steps = 1000;
  double alpha = std::numeric_limits<double>::quiet_NaN();  // NaN: 0.4 / dims, 80 % of the stability limit
  std::string precision;  // empty: the --init array's type, else f32
  std::string device;
  std::string init;
  std::string out;
  std::string png;
  std::string vtk;
  std::string timeline;
  std::string method = "stencil";
  std::string mode = "auto";
  std::string decomposition;
  std::size_t height = 0;  // 0: the model's choice
  std::string depth;       // steps a launch: N, or auto (tuned); empty: auto
  std::string device_mem;
  std::string profile;  // empty: the device's cached profile, or a calibration now
  bool serial = false;
  bool quiet = false;
  bool json = false;
  ProgressOption progress;
};

// The grid's extents, fastest axis first: from --size or the --init file's header (shape
// (D, H, W) is W x H x D), checked against each other and --dims before any large allocation.
std::vector<std::size_t> grid_extents(const HeatOptions& options) {
  std::vector<std::size_t> extents;
  if (!options.init.empty()) {
    const auto shape = read_npy_header(options.init).shape;
    extents.assign(shape.rbegin(), shape.rend());
    if (!options.size.empty() && parse_extents(options.size, 1, 3) != extents) {
      throw InvalidArgument("--size " + options.size + " does not match --init " + options.init + ", which is " +
                            extents_string(extents) + " (shape (D, H, W) is W x H x D); drop --size or fix it");
    }
  } else if (!options.size.empty()) {
    extents = parse_extents(options.size, 1, 3);
  } else {
    extents.assign(options.dims == 0 ? 2 : options.dims, options.dims == 3 ? 128 : options.dims == 1 ? 1 << 20 : 1024);
  }
  if (options.dims != 0 && extents.size() != options.dims) {
    throw InvalidArgument("--dims " + std::to_string(options.dims) + " does not match the " +
                          std::to_string(extents.size()) + "D grid " + extents_string(extents) +
                          (options.init.empty() ? " of --size" : " of --init"));
  }
  require_heat_grid(extents, "ziggurat heat");
  return extents;
}

HeatPlanRequest plan_request(const HeatOptions& options) {
  HeatPlanRequest request;
  try {
    request.mode = parse_heat_mode(options.mode);
  } catch (const InvalidArgument&) {
    throw InvalidArgument("--mode is auto, incore, trivial, strip or block, not '" + options.mode + "'");
  }
  if (!options.decomposition.empty()) {
    if (options.decomposition != "strip" && options.decomposition != "block") {
      throw InvalidArgument("--decomposition is strip or block, not '" + options.decomposition + "'");
    }
    if (request.mode != HeatMode::automatic && request.mode != HeatMode::trivial) {
      throw InvalidArgument("--decomposition chooses the sub-domains of --mode trivial or auto; --mode " + options.mode +
                            " has its own");
    }
    request.decomposition = options.decomposition == "strip" ? Decomposition::strip : Decomposition::block;
  }
  if (options.height > 0) {
    if (request.mode == HeatMode::incore || request.mode == HeatMode::trivial) {
      throw InvalidArgument("--height sets the pyramid height of --mode strip, block or auto; --mode " + options.mode +
                            (request.mode == HeatMode::trivial ? " always takes one step per pass" : " has no pyramid"));
    }
    request.height = options.height;
  }
  if (!options.depth.empty()) request.depth = parse_auto_count(options.depth, "--depth", "steps a launch");
  if (!options.device_mem.empty()) request.device_memory = parse_bytes(options.device_mem);
  request.schedule = options.serial ? Schedule::serial : Schedule::overlapped;
  return request;
}

// The run's timeline in the Trace Event format (chrome://tracing, Perfetto): one track per engine,
// one slice per task, times in microseconds.
void write_timeline(const std::string& path, const std::vector<HeatTimelineEntry>& timeline) {
  nlohmann::json events = nlohmann::json::array();
  for (const auto& e : timeline) {
    events.push_back({{"name", "pass " + std::to_string(e.pass) + " task " + std::to_string(e.task)},
                      {"cat", to_string(e.engine)},
                      {"ph", "X"},
                      {"pid", 0},
                      {"tid", to_string(e.engine)},
                      {"ts", e.start_s * 1e6},
                      {"dur", (e.end_s - e.start_s) * 1e6}});
  }
  const std::string text = nlohmann::json{{"traceEvents", events}, {"displayTimeUnit", "ms"}}.dump();
  write_file_atomically(path, text);
}

// "pass 3/21, steps 144/1000, 251 Gnodes/s, ETA 3.1 s".
std::string progress_text(const HeatProgress& p) {
  return "heat: pass " + std::to_string(p.passes_done) + "/" + std::to_string(p.passes) + ", steps " +
         std::to_string(p.steps_done) + "/" + std::to_string(p.steps) + ", " + number_text(p.nodes_per_second * 1e-9) +
         " Gnodes/s, ETA " + number_text(p.eta_seconds, 2) + " s";
}

// A run stopped by a signal after `steps_done` steps, the last pass completed entirely: write()
// puts that field in --out (a run can go on from it with --init) and --vtk, the root process says
// how to go on, and the process ends with 128 + the signal's number.
[[noreturn]] void end_stopped(const HeatOptions& options, std::size_t steps_done, int signal, bool root,
                              const std::function<void()>& write) {
  write();
  std::string where = "; no --out was given, so nothing was kept";
  if (!options.out.empty())
    where = "; the field after " + std::to_string(steps_done) + " steps is in " + options.out + ": go on with --init " +
            options.out + " --steps " + std::to_string(options.steps - steps_done);
  if (root)
    std::cerr << "ziggurat heat: " << RunStopped(signal).what() << " after " << steps_done << " of " << options.steps
              << " steps (a whole pass)" << where << std::endl;
  std::cout.flush();
  std::exit(stopped_exit_status(signal));
}

std::string plan_text(const PlannedHeatRun& planned, std::size_t dims) {
  const model::Plan& plan = planned.predicted;
  const PyramidLayout& layout = plan.layout;
  const std::string launches =
      planned.depth > 1 ? ", " + std::to_string(planned.depth) + " steps a launch in work-groups of " + to_string(planned.group)
                        : "";
  if (layout.decomposition == Decomposition::incore) return "incore: the whole grid on the device" + launches;
  const bool block = layout.decomposition == Decomposition::block;
  const std::string unit = block ? "blocks" : dims == 3 ? "strips of planes" : dims == 1 ? "strips of nodes" : "strips of rows";
  return std::string(block ? "block" : "strip") + " pyramid, n = " + std::to_string(layout.height) + ", " + unit +
         " owning " + std::to_string(layout.task_extent) + (block ? " x " + std::to_string(layout.task_extent) : "") +
         " (buffers of " + std::to_string(plan.buffer_extent) + "), " + std::to_string(plan.prediction.tasks) +
         " tasks x " + std::to_string(plan.prediction.passes) + " passes, " + to_string(planned.schedule) + launches;
}

// "T = 4, n = 12 (0.53 s)": one launch depth's plan (n = 0 is in core).
std::string depth_plan_text(const DepthPlan& plan) {
  return "T = " + std::to_string(parse_blocking_candidate(plan.candidate).first) +
         (plan.height > 0 ? ", n = " + std::to_string(plan.height) : ", in core") + " (" + number_text(plan.predicted_s) +
         " s)";
}

// The chosen launch depth's plan among the tuned depths' (one plan a depth), and the runner-up's.
std::string depth_plans_text(const PlannedHeatRun& planned, const std::vector<DepthPlan>& plans) {
  const DepthPlan* runner_up = nullptr;
  std::string text;
  for (const DepthPlan& plan : plans) {
    if (parse_blocking_candidate(plan.candidate).first == planned.depth)
      text = depth_plan_text(plan) + (plans.size() == 1 ? ", the only tuned launch depth"
                                                        : " predicted fastest of " + std::to_string(plans.size()) +
                                                              " launch depths");
    else if (!runner_up || plan.predicted_s < runner_up->predicted_s) runner_up = &plan;
  }
  return runner_up ? text + "; runner-up " + depth_plan_text(*runner_up) : text;
}

// What every summary of a heat run starts with: the device, the grid and the scheme.
template <class T>
nlohmann::json summary_head(const DeviceInfo& device, const std::vector<std::size_t>& extents, double alpha,
                            std::size_t steps, const char* method) {
  return {{"device", device.name},
          {"platform", device.platform_name},
          {"driver", device.driver_version},
          {"size", extents},
          {"dims", extents.size()},
          {"precision", sizeof(T) == 4 ? "f32" : "f64"},
          {"alpha", alpha},
          {"steps", steps},
          {"method", method}};
}

// --method long-vector runs in device memory only, in 2D: refuses the options of the pyramid
// solver instead of ignoring them.
void check_long_vector_options(const HeatOptions& options, const std::vector<std::size_t>& extents) {
  if (extents.size() != 2) {
    throw InvalidArgument("--method long-vector steps 2D grids; this one is " + extents_string(extents) +
                          ": use --method stencil");
  }
  const auto refuse = [](bool given, const char* option) {
    if (given) {
      throw InvalidArgument(std::string(option) + " belongs to the pyramid solver (--method stencil); --method "
                            "long-vector holds the whole grid in device memory");
    }
  };
  refuse(options.mode != "auto" && options.mode != "incore", "--mode");
  refuse(!options.decomposition.empty(), "--decomposition");
  refuse(options.height > 0, "--height");
  refuse(!options.depth.empty(), "--depth");
  refuse(!options.device_mem.empty(), "--device-memory");
  refuse(!options.timeline.empty(), "--timeline");
  refuse(options.serial, "--serial");
}

// The run's time beside model (1) (method notes, section 2). The steps alone are compared: the
// whole run also builds CLBlast's kernels (on the first use in a process), which the model has not.
struct LongVectorRun {
  double seconds = 0;       // upload with CLBlast's builds, steps, download
  double step_seconds = 0;  // the steps alone
  std::optional<double> predicted_s, predicted_step_s;  // the whole run (with T_cpu/gpu), one step
};

template <class T>
void run_long_vector(const HeatOptions& options, const std::vector<std::size_t>& extents, double alpha) {
  check_long_vector_options(options, extents);
  Context context(options.device);
  require_device_precision(context.device(), options.precision);
  LongVectorHeat<T>::check_fits(context.device(), extents);
  const bool progress = options.progress.enabled(options.quiet, options.json);
  const app::RunProfile planned_with = app::run_profile(context, options.profile, progress, ProfileNeeds::long_vector());
  const DeviceProfile& profile = planned_with.profile;

  LongVectorRun run;
  Grid<T> field;
  {
    const Grid<T> initial = options.init.empty() ? heat_mode_field<T>(extents) : load_grid<T>(options.init);
    const auto start = std::chrono::steady_clock::now();
    LongVectorHeat<T> solver(context, initial, alpha);
    const StepTiming timing = solver.advance(options.steps);
    field = solver.read();
    run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    run.step_seconds = timing.device_seconds >= 0 ? timing.device_seconds : timing.wall_seconds;
  }
  if (profile.numstreams > 0) {
    const auto constants = model::long_vector_constants(profile, sizeof(T), static_cast<double>(field.size()));
    const std::size_t interior = extents[0] - 2;  // model (1) counts a square grid: N of the fastest axis
    run.predicted_s = model::long_vector_ns(interior, options.steps, constants) * 1e-9;
    run.predicted_step_s = (*run.predicted_s - constants.transfer_ns * 1e-9) / std::max<double>(1, options.steps);
  }
  if (!options.out.empty()) write_npy(options.out, field.data(), {extents[1], extents[0]});
  if (!options.vtk.empty()) app::write_field_vtk(options.vtk, field.data(), extents, "u");
  if (!options.png.empty()) write_field_png(options.png, field.data(), extents);

  const double node_steps = static_cast<double>((extents[0] - 2) * (extents[1] - 2)) * static_cast<double>(options.steps);
  const double ns_per_node = node_steps > 0 ? run.seconds * 1e9 / node_steps : 0;
  nlohmann::json calls = nlohmann::json::array();
  for (const VectorCall& call : LongVectorHeat<T>::step_calls(extents)) {
    calls.push_back({{"routine", call.routine}, {"length", call.length}, {"purpose", call.purpose}});
  }
  nlohmann::json summary = summary_head<T>(context.device(), extents, alpha, options.steps, "long-vector");
  summary.update({
      {"plan", {{"method", "long-vector"}, {"calls_per_step", calls}}},
      {"profile", planned_with.origin},
      {"time_s", run.seconds},
      {"step_time_s", options.steps > 0 ? run.step_seconds / static_cast<double>(options.steps) : 0.0},
      {"nodes_per_s", ns_per_node > 0 ? 1e9 / ns_per_node : 0},
      {"ns_per_node", ns_per_node},
      {"initial_field", options.init.empty() ? "mode" : options.init},
  });
  if (run.predicted_s) {
    summary["predicted_s"] = *run.predicted_s;
    summary["predicted_step_time_s"] = *run.predicted_step_s;
  }
  if (options.init.empty() && options.steps > 0) {
    summary["max_error_vs_exact"] = heat_mode_error(field.data(), extents, alpha, options.steps);
  }
  if (!options.out.empty()) summary["output"] = options.out;
  if (!options.vtk.empty()) summary["vtk"] = options.vtk;
  if (!options.png.empty()) summary["picture"] = options.png;
  if (options.json) {
    std::cout << app::json_output(summary);
    return;
  }
  std::cout << "device      " << context.device().label() << "\n"
            << "grid        " << extents_string(extents) << " " << type_name<T>() << ", A = " << alpha << ", "
            << options.steps << " steps, initial field: " << (options.init.empty() ? "slowest mode" : options.init)
            << "\n";
  if (options.steps == 0) return;
  std::cout << "method      long-vector: " << calls.size() << " CLBlast calls a step on the unrolled grid, in device memory\n"
            << "time        " << number_text(run.seconds) << " s (upload and CLBlast's kernel builds, steps, download)\n";
  const double step_s = run.step_seconds / static_cast<double>(options.steps);
  std::cout << "step        " << number_text(step_s * 1e6) << " us measured";
  if (run.predicted_step_s) {
    std::cout << ", " << number_text(*run.predicted_step_s * 1e6) << " us by model (1) ("
              << (*run.predicted_step_s >= step_s ? "+" : "")
              << number_text(100 * (*run.predicted_step_s - step_s) / step_s, 2) << " %)";
  }
  std::cout << "\nthroughput  " << number_text(1 / ns_per_node) << " Gnodes/s, " << number_text(ns_per_node)
            << " ns/node\n";
  if (summary.contains("max_error_vs_exact")) {
    std::cout << "check       max |u - exact discrete solution| = "
              << number_text(summary["max_error_vs_exact"].get<double>()) << "\n";
  }
  if (!options.png.empty()) std::cout << "picture     " << options.png << "\n";
  if (!options.out.empty()) std::cout << "output      " << options.out << "\n";
}

// Without --depth, the tuned depth (briefly tuned on CPUs: tuning/blocking_autotune.hpp).
HeatPlanRequest with_default_depth(HeatPlanRequest request, const HeatOptions& options) {
  if (options.depth.empty()) request.depth = 0;
  return request;
}

#ifdef ZIGGURAT_HAVE_MPI
// Each rank's piece of the .pvti: its rows and the next rank's first row, which VTK needs to
// join the pieces' cells (pieces of an image share their boundary points).
template <class T>
void write_ranks_vtk(const std::string& path, const mpi::DistributedHeat<T>& heat, const std::vector<std::size_t>& extents,
                     const mpi::Communicator& world) {
  const std::size_t row = checked_node_count(extents) / extents.back(), rank = std::size_t(world.rank());
  const bool last = rank + 1 == std::size_t(world.size());
  std::vector<T> piece(heat.owned_data(), heat.owned_data() + heat.owned().count * row);
  piece.resize(piece.size() + (last ? 0 : row));
  std::vector<wave::HaloTransport::Send> sends;
  std::vector<wave::HaloTransport::Receive> receives;
  if (rank > 0) sends.push_back({rank - 1, heat.owned_data(), row * sizeof(T), 0});
  if (!last) receives.push_back({rank + 1, piece.data() + heat.owned().count * row, row * sizeof(T), 0});
  mpi::HaloTransport(world).exchange(sends, receives);
  std::vector<std::pair<std::size_t, std::size_t>> slabs;
  const std::vector<mpi::RowRange> split = mpi::split_rows(extents.back(), std::size_t(world.size()));
  for (std::size_t r = 0; r < split.size(); ++r) slabs.emplace_back(split[r].first, split[r].count + (r + 1 < split.size()));
  write_slab_vtk(path, piece.data(), extents, slabs, rank, "u");
}

// mpirun -np R: the grid split along its slowest axis, one slab a rank, halos of the pass height
// exchanged between passes (distributed/heat.hpp). Each rank reads or makes only its slab.
template <class T>
void run_ranks(const HeatOptions& options, const std::vector<std::size_t>& extents, double alpha,
               const HeatPlanRequest& requested) {
  on_ranks({{"--precision", options.precision},
            {"--steps", std::to_string(options.steps)},
            {"--height", options.height > 0 ? std::to_string(options.height) : "the model's"},
            {"the grid (--size, --init)", extents_string(extents)}},
           [&](const mpi::Communicator& world) {
    if (options.method != "stencil") throw InvalidArgument("--method long-vector runs in one process: drop mpirun");
    if (!options.png.empty())
      throw UnsupportedFeature("--png draws the field of one process: under mpirun write --out and draw that file");
    if (!options.timeline.empty()) throw UnsupportedFeature("--timeline records one process's device: drop mpirun");
    const Context context = rank_device(options.device, world);
    require_device_precision(context.device(), options.precision);
    const HeatPlanRequest request = with_default_depth(requested, options);
    const DeviceProfile profile =
        app::run_profile(context, options.profile, false, ProfileNeeds::heat(extents.size(), sizeof(T))).profile;
    const std::size_t depth = options.height > 0 ? options.height
                                                 : mpi::plan_halo_depth<T>(world, context.device(), extents,
                                                                           options.steps, request, profile);
    mpi::DistributedHeat<T> heat(world, context, extents, alpha, depth, [&](std::size_t first, std::size_t count) {
      return options.init.empty() ? heat_mode_field<T>(extents, first, count)
                                  : load_grid_rows<T>(options.init, first, count);
    });
    ProgressLines lines(world.rank() == 0 && options.progress.enabled(options.quiet, options.json));
    const auto write = [&] {
      if (!options.out.empty()) heat.write_npy(options.out);
      if (!options.vtk.empty()) write_ranks_vtk(options.vtk, heat, extents, world);
    };
    const StopOnSignal stop_on_signal;
    std::size_t steps_done = 0;
    mpi::DistributedHeatRun run;
    try {
      // A signal on any rank stops every rank after the same interval (one agreement an interval).
      run = heat.advance(options.steps, request, profile, [&](std::size_t done) {
        lines.show("heat: steps " + std::to_string(done) + "/" + std::to_string(options.steps) + " on " +
                       std::to_string(world.size()) + " ranks",
                   done == options.steps);
        steps_done = done;
        if (const int signal = agreed_stop(world); signal != 0 && done < options.steps) throw RunStopped(signal);
      });
    } catch (const RunStopped& stopped) {
      lines.finish();
      end_stopped(options, steps_done, stopped.signal, world.rank() == 0, write);
    }
    write();
    double error = 0;
    if (options.init.empty() && options.steps > 0) {
      error = world.max(heat_mode_error(heat.owned_data(), extents, alpha, options.steps, heat.owned().first,
                                        heat.owned().count));
    }
    if (world.rank() != 0) return;
    const model::Plan& plan = run.planned.predicted;
    nlohmann::json summary = summary_head<T>(context.device(), extents, alpha, options.steps, "stencil");
    summary.update({
        {"ranks", world.size()},
        {"halo_depth", run.depth},
        {"exchanges", run.intervals > 0 ? run.intervals - 1 : 0},
        {"plan",
         {{"mode", options.mode},
          {"decomposition", to_string(plan.layout.decomposition)},
          {"height", plan.layout.height},
          {"task_extent", plan.layout.task_extent},
          {"schedule", to_string(run.planned.schedule)}}},
        {"time_s", run.seconds},
        {"exchange_s", run.exchange_seconds},
        {"nodes_per_s", run.ns_per_node > 0 ? 1e9 / run.ns_per_node : 0},
        {"ns_per_node", run.ns_per_node},
        {"initial_field", options.init.empty() ? "mode" : options.init},
    });
    if (options.init.empty() && options.steps > 0) summary["max_error_vs_exact"] = error;
    if (!options.out.empty()) summary["output"] = options.out;
    if (!options.vtk.empty()) summary["vtk"] = options.vtk;
    if (options.json) {
      std::cout << app::json_output(summary);
      return;
    }
    std::cout << "device      " << context.device().label() << " on rank 0 of " << world.size() << "\n"
              << "grid        " << extents_string(extents) << " " << (sizeof(T) == 4 ? "float" : "double")
              << ", A = " << alpha << ", " << options.steps << " steps, split in " << world.size()
              << " slabs along its slowest axis\n"
              << "plan        halos of " << run.depth << " rows exchanged every " << run.depth << " steps ("
              << summary["exchanges"].get<std::size_t>() << " exchanges); rank 0: "
              << plan_text(run.planned, extents.size()) << "\n"
              << "time        " << number_text(run.seconds) << " s, of which exchanges " << number_text(run.exchange_seconds)
              << " s\n"
              << "throughput  " << number_text(run.ns_per_node > 0 ? 1 / run.ns_per_node : 0) << " Gnodes/s\n";
    if (summary.contains("max_error_vs_exact"))
      std::cout << "check       max |u - exact discrete solution| = " << number_text(error) << "\n";
    if (!options.out.empty()) std::cout << "output      " << options.out << "\n";
  });
}
#endif

template <class T>
void run(const HeatOptions& options) {
  if (options.method != "stencil" && options.method != "long-vector") {
    throw InvalidArgument("--method is stencil or long-vector, not '" + options.method + "'");
  }
  const HeatPlanRequest requested = plan_request(options);
  const auto extents = grid_extents(options);
  const double alpha = std::isnan(options.alpha) ? 0.8 * max_stable_alpha(extents.size()) : options.alpha;
  heat_coefficients<T>(alpha, extents.size());  // refuse an unstable A before any work
  const bool ranks = launched_with_ranks();  // a tool without MPI refuses
  check_vtk_name(options.vtk, ranks);
  if (ranks) {
#ifdef ZIGGURAT_HAVE_MPI
    return run_ranks<T>(options, extents, alpha, requested);
#endif
  }
  if (!options.png.empty() && extents.size() == 1) throw InvalidArgument("--png draws 2D and 3D grids; this one is 1D");
  // The initial field and the solver's two layers, before anything that large is built.
  check_host_memory(3 * checked_node_count(extents) * sizeof(T), "a " + extents_string(extents) + " grid of " +
                                                                     (sizeof(T) == 4 ? "float" : "double") +
                                                                     " (the initial field and two solver layers)");
  if (options.method == "long-vector") {
    run_long_vector<T>(options, extents, alpha);
    return;
  }
  Context context(options.device);
  require_device_precision(context.device(), options.precision);
  const HeatPlanRequest request = with_default_depth(requested, options);
  const bool progress = options.progress.enabled(options.quiet, options.json);
  const app::RunProfile planned_with =
      app::run_profile(context, options.profile, progress, ProfileNeeds::heat(extents.size(), sizeof(T)));
  const DeviceProfile& profile = planned_with.profile;

  std::unique_ptr<HeatSolver<T>> solver;
  {
    const Grid<T> initial = options.init.empty() ? heat_mode_field<T>(extents) : load_grid<T>(options.init);
    solver = std::make_unique<HeatSolver<T>>(context, initial, alpha);
  }
  ProgressLines lines(progress);
  HeatRunOptions run_options;
  // Always a hook: a signal stops the run after the pass it came in.
  run_options.progress = [&](const HeatProgress& p) {
    lines.show(progress_text(p), p.passes_done == p.passes);
    throw_if_stop_requested();
  };
  run_options.record_timeline = !options.timeline.empty();
  const StopOnSignal stop_on_signal;
  HeatOutcome outcome;
  try {
    outcome = advance_heat(*solver, options.steps, request, profile, run_options);
  } catch (const RunStopped& stopped) {
    lines.finish();
    end_stopped(options, solver->steps_done(), stopped.signal, true, [&] {
      if (!options.vtk.empty()) app::write_field_vtk(options.vtk, solver->data(), extents, "u");
      if (!options.out.empty())
        write_npy(options.out, solver->data(), std::vector<std::size_t>(extents.rbegin(), extents.rend()));
    });
  }
  lines.finish();
  const HeatRun& result = outcome.run;
  if (!options.out.empty()) {
    write_npy(options.out, solver->data(), std::vector<std::size_t>(extents.rbegin(), extents.rend()));
  }
  if (!options.vtk.empty()) app::write_field_vtk(options.vtk, solver->data(), extents, "u");
  if (!options.png.empty()) write_field_png(options.png, solver->data(), extents);
  if (!options.timeline.empty()) write_timeline(options.timeline, result.timeline);

  const model::Plan& plan = outcome.planned.predicted;
  const double predicted_s = plan.prediction.total_ns * 1e-9;
  const double nodes_per_second = result.ns_per_node > 0 ? 1e9 / result.ns_per_node : 0;
  nlohmann::json summary = summary_head<T>(context.device(), extents, alpha, options.steps, "stencil");
  summary.update(app::to_json(outcome, options.mode, planned_with.origin));
  if (options.init.empty() && options.steps > 0) {
    summary["initial_field"] = "mode";
    summary["max_error_vs_exact"] = heat_mode_error(solver->data(), extents, alpha, options.steps);
  } else {
    summary["initial_field"] = options.init.empty() ? "mode" : options.init;
  }
  if (!options.out.empty()) summary["output"] = options.out;
  if (!options.vtk.empty()) summary["vtk"] = options.vtk;
  if (!options.png.empty()) summary["picture"] = options.png;
  if (!options.timeline.empty()) summary["timeline"] = options.timeline;

  if (options.json) {
    std::cout << app::json_output(summary);
    return;
  }
  std::cout << "device      " << context.device().label() << "\n"
            << "grid        " << extents_string(extents) << " " << (sizeof(T) == 4 ? "float" : "double")
            << ", A = " << alpha << ", " << options.steps << " steps, initial field: "
            << (options.init.empty() ? "slowest mode" : options.init) << "\n";
  if (options.steps == 0) return;
  std::cout << "plan        " << plan_text(outcome.planned, extents.size()) << "\n";
  if (!outcome.depth_plans.empty())
    std::cout << "depth       " << depth_plans_text(outcome.planned, outcome.depth_plans) << "\n";
  std::cout << "memory      device budget " << bytes_text(outcome.planned.budget_bytes) << ", buffers "
            << bytes_text(result.device_bytes) << "; host memory " << (result.pinned_host_memory ? "pinned" : "pageable")
            << "\n"
            << "time        " << number_text(result.seconds) << " s measured, " << number_text(predicted_s)
            << " s predicted (" << (predicted_s >= result.seconds ? "+" : "")
            << number_text(100 * (predicted_s - result.seconds) / result.seconds, 2) << " %)\n"
            << "throughput  " << number_text(nodes_per_second * 1e-9) << " Gnodes/s, "
            << number_text(result.ns_per_node) << " ns/node\n";
  if (summary.contains("max_error_vs_exact")) {
    std::cout << "check       max |u - exact discrete solution| = "
              << number_text(summary["max_error_vs_exact"].get<double>()) << "\n";
  }
  if (!options.png.empty()) std::cout << "picture     " << options.png << "\n";
  if (!options.out.empty()) std::cout << "output      " << options.out << "\n";
  if (!options.timeline.empty()) std::cout << "timeline    " << options.timeline << "\n";
}

}  // namespace

void add_heat_command(CLI::App& app) {
  auto options = std::make_shared<HeatOptions>();
  auto* command = app.add_subcommand("heat", "Solve the heat equation (explicit scheme, Dirichlet boundary) in 1D, 2D "
                                             "or 3D on a grid in host memory, by the pyramid method where it does "
                                             "not fit the device");
  command->add_option("--dims", options->dims, "1, 2 or 3 (default: from --size or --init, else 2)")
      ->check(whole_number(1, 3));
  command->add_option("--size", options->size, "Grid nodes W, WxH or WxHxD including the boundary "
                                               "(default 1024x1024, 1048576, 128x128x128 by --dims)");
  command->add_option("--steps", options->steps, "Time steps K")->capture_default_str()->check(whole_number(0));
  command->add_option("--alpha", options->alpha, "The scheme's A = a^2 ht / h^2, 0 < A <= 1/(2 dims) (default 0.4 / dims)")
      ->check(finite_number());
  add_precision_option(command, options->precision, "f32 (float) or f64 (double); default: the --init array's type, else f32");
  command->add_option("--device", options->device, "Device selection (see `ziggurat devices`); default: ZIGGURAT_DEVICE, else the first GPU");
  options->files.add_input(command, "--init", options->init, "Initial field, a .npy float32/float64 array of shape (W), (H, W) or "
                                               "(D, H, W); default: the slowest mode, product of sin(pi i/(E-1))");
  options->files.add_output(command, "--out", options->out, "Write the final field here (.npy, same shape; written atomically)");
  options->files.add_output(command, "--png", options->png, "Draw the final field (2D; the middle slice in 3D) here, colour-mapped");
  add_vtk_option(command, options->files, options->vtk);
  options->files.add_output(command, "--timeline", options->timeline, "Write when each task's upload, kernels and download ran "
                                                       "(Trace Event JSON for chrome://tracing or Perfetto)");
  command->add_option("--method", options->method, "stencil (the heat kernels, in core or by pyramids) or long-vector "
                                                   "(CLBlast calls on the unrolled grid, in device memory, 2D only)")
      ->capture_default_str();
  command->add_option("--mode", options->mode, "auto, incore, trivial (one step per transfer), strip or block (pyramids)")
      ->capture_default_str();
  command->add_option("--decomposition", options->decomposition, "strip or block: the sub-domains of --mode trivial, "
                                                                 "or the only choice of --mode auto");
  command->add_option("--depth", options->depth, "Steps a kernel launch advances with its tile on chip, or auto (the "
                                                 "depth tuned for the device, measured once; on CPUs depths 1, 2 and 4 only); default auto. The same bits "
                                                 "as single steps");
  command->add_option("--height", options->height, "Pyramid height n (steps per pass); default: the model's choice")
      ->check(whole_number(1));
  add_deprecated_alias(command,
                       command->add_option("--device-memory", options->device_mem, "Device memory the run may use, e.g. 512MiB "
                                                           "(default: 90% of the device's)"),
                       "--device-mem", options->device_mem);
  options->files.add_input(command, "--profile", options->profile, "Plan with this device profile (`ziggurat calibrate --json`) "
                                                     "instead of the device's cached or measured one");
  command->add_flag("--serial", options->serial, "Serial schedule (the paper's): no overlap of transfers and kernels");
  command->add_flag("--quiet", options->quiet, "No progress on stderr");
  options->progress.add(command);
  command->add_flag("--json", options->json, "Print a machine-readable summary");
  command->callback([options] {
    options->files.check();
    options->precision = precision_or_input_type(options->precision, options->init);
    with_precision(options->precision, [&](auto zero) { run<decltype(zero)>(*options); });
  });
}

}  // namespace ziggurat::cli
