// `ziggurat-bench heat`: the heat solver's modes side by side with their peers (the naive kernel,
// the trivial algorithm) and the physical limits (streaming copy bandwidth, the bus), on a 2D and
// a 3D grid several times larger than the device-memory budget; and a sweep of the pyramid height
// that sets the measured times beside the cost model's predictions (method notes, section 1).
// Beside the in-device kernels, two peers on the same GPU (heat_peers.py): a naive CUDA kernel
// through CuPy and EBISU's temporal blocking (ICS 2023).

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

#include "bench.hpp"
#include "format.hpp"
#include "option_aliases.hpp"
#include "peer_support.hpp"
#include "plot.hpp"
#include "ziggurat/base/timestamp.hpp"
#include "ziggurat/app/json_output.hpp"
#include "ziggurat/automatic/heat.hpp"
#include "ziggurat/base/context.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/base/host_memory.hpp"
#include "ziggurat/base/version.hpp"
#include "ziggurat/solver/in_device_heat.hpp"
#include "ziggurat/tuning/blocking_model.hpp"
#include "ziggurat/tuning/calibration.hpp"
#include "ziggurat/tuning/profile_store.hpp"

namespace ziggurat::cli {

namespace {

struct Row {
  std::string what, plan;
  double seconds = 0, predicted_s = 0, ns_per_node = 0;
  std::size_t steps = 0;
};

std::string layout_text(const model::Plan& plan) {
  const PyramidLayout& l = plan.layout;
  if (l.decomposition == Decomposition::incore) return "whole grid";
  return "n=" + std::to_string(l.height) + ", " + (l.decomposition == Decomposition::block ? "b=" : "r=") +
         std::to_string(l.task_extent) + ", " + std::to_string(plan.prediction.tasks) + " tasks x " +
         std::to_string(plan.prediction.passes) + " passes";
}

// A kernel whose grid or tile does not fit the device has no row: said, not left out silently.
std::nullopt_t skipped(const std::vector<std::size_t>& extents, StepKernel kernel, std::size_t depth, const Error& why) {
  std::cerr << "ziggurat-bench: warning: no row for the " << extents_string(extents) << " grid's "
            << (kernel == StepKernel::blocked ? "blocked kernel at depth " + std::to_string(depth)
                                              : std::string(kernel == StepKernel::naive ? "naive" : "aligned") + " kernel")
            << ": " << why.what() << "\n";
  return std::nullopt;
}

// The in-device step rate of one kernel (the blocked one at `depth` steps a launch): the best of
// three rounds of `steps` steps (device timers). None when the grid or the depth's tile does not fit.
template <class T>
std::optional<Row> in_device_row(const Context& context, const Grid<T>& initial, StepKernel kernel, std::size_t steps,
                                 std::size_t depth = 0, const BlockedGroup& group = {}) {
  std::optional<InDeviceHeat<T>> made;
  try {
    InDeviceHeat<T>::check_fits(context.device(), initial.extents());
    made.emplace(context, initial, 0.9 * max_stable_alpha(initial.dims()), kernel, depth, group);
  } catch (const OutOfDeviceMemory& error) {
    return skipped(initial.extents(), kernel, depth, error);
  } catch (const UnsupportedFeature& error) {
    return skipped(initial.extents(), kernel, depth, error);
  }
  InDeviceHeat<T>& solver = *made;
  solver.advance(2);
  double best = 1e300;
  for (int round = 0; round < 3; ++round) {
    const StepTiming t = solver.advance(steps);
    best = std::min(best, t.device_seconds >= 0 ? t.device_seconds : t.wall_seconds);
  }
  Row row;
  row.what = kernel == StepKernel::aligned ? "in-device steps, aligned kernel"
             : kernel == StepKernel::naive ? "in-device steps, naive kernel"
                                           : "in-device steps, blocked kernel, " + std::to_string(depth) + " steps a launch" +
                                                 (group.is_default() ? "" : " in groups of " + to_string(group));
  row.plan = "kernel only";
  row.seconds = best;
  row.steps = steps;
  row.ns_per_node = best * 1e9 / (model::Problem{initial.extents(), steps}.interior_nodes() * static_cast<double>(steps));
  return row;
}

// A peer's answer for one grid: its row, or none and why (in `note` either way).
struct PeerAnswer {
  std::string name;
  std::optional<Row> row;
  std::string note;
};

// The blocking model (tuning/blocking_model.hpp) fitted to the blocked rows (depth, row index):
// each row's "model s" becomes its prediction. Returns the fitted on-chip update time, or none
// when no measured depth computes longer than it streams.
std::optional<double> fit_blocking_model(std::vector<Row>& rows, const std::vector<std::pair<std::size_t, std::size_t>>& blocked,
                                         double streaming_ns, const std::vector<std::size_t>& tile) {
  std::vector<std::pair<std::size_t, double>> measured;
  for (const auto& [depth, index] : blocked) measured.emplace_back(depth, rows[index].ns_per_node);
  double update_ns = 0;
  try {
    update_ns = model::fit_update_ns(measured, streaming_ns, tile);
  } catch (const InvalidArgument&) {
    return std::nullopt;
  }
  for (const auto& [depth, index] : blocked) {
    Row& row = rows[index];
    const double ns = model::blocked_ns_per_node(streaming_ns, update_ns, model::blocked_redundancy(tile, depth), depth);
    row.predicted_s = row.seconds * ns / row.ns_per_node;
  }
  return update_ns;
}

std::string peer_title(const std::string& name) {
  return name == "cupy" ? "peer: CuPy, naive CUDA kernel (1 step a launch)"
                        : "peer: EBISU (ICS 2023), temporal blocking";
}

// The names in --peers; InvalidArgument for one that is no peer.
std::vector<std::string> peer_names(const std::string& list) {
  if (list == "none") return {};
  const std::vector<std::string> names = split(list, ',');
  for (const std::string& name : names)
    if (name != "cupy" && name != "ebisu")
      throw InvalidArgument("--peers takes cupy and/or ebisu, comma-separated, or none; not '" + name + "'");
  return names;
}

PeerAnswer peer_answer(const std::string& name, const nlohmann::json& answer, std::size_t steps) {
  if (!answer.contains("seconds_per_step")) return {name, std::nullopt, answer.value("unavailable", "no answer")};
  const double per_step = answer["seconds_per_step"].get<double>();
  Row row;
  row.what = peer_title(name);
  // Its own grid: EBISU runs a narrower one where its blocks cannot cover the asked grid at once.
  row.plan = "grid " + extents_string(answer["extents"].get<std::vector<std::size_t>>());
  row.seconds = per_step * static_cast<double>(steps);
  row.steps = steps;
  row.ns_per_node = per_step * 1e9 / answer["interior_nodes"].get<double>();
  return {name, row, answer.value("note", "")};
}

// The peers' step rates on the grid, one run of heat_peers.py for all of them (the same steps and
// A as the in-device rows).
template <class T>
std::vector<PeerAnswer> peer_answers(const BenchHeatOptions& options, const std::vector<std::size_t>& extents) {
  const std::vector<std::string> names = peer_names(options.peers);
  std::vector<PeerAnswer> answers;
  if (names.empty()) return answers;
  const std::string why = run_peer_script(
      options.python, "heat_peers.py",
      [&](const std::filesystem::path& folder) {
        const std::string request =
            nlohmann::json{{"extents", extents}, {"dtype", sizeof(T) == 4 ? "float32" : "float64"},
                           {"steps", options.steps}, {"alpha", 0.9 * max_stable_alpha(extents.size())}, {"peers", names}}
                .dump();
        write_file(folder / "request.json", request.data(), request.size());
      },
      [&](const std::filesystem::path&, const nlohmann::json& answer) {
        for (const std::string& name : names)
          answers.push_back(peer_answer(name, answer.value(name, nlohmann::json::object()), options.steps));
      });
  if (!why.empty())
    for (const std::string& name : names) answers.push_back({name, std::nullopt, why});
  return answers;
}

template <class T>
Row solver_row(HeatSolver<T>& solver, const std::string& what, std::size_t steps, const HeatPlanRequest& request,
               const DeviceProfile& profile) {
  const HeatOutcome outcome = advance_heat(solver, steps, request, profile);
  const model::Plan& plan = outcome.planned.predicted;
  // A tuned depth (0 asked for) is named with what was chosen: "4/256x1".
  const std::string chosen =
      request.depth == std::size_t{0} ? ": " + blocking_candidate_name(outcome.planned.depth, outcome.planned.group) : "";
  return {what + chosen, layout_text(plan), outcome.run.seconds, plan.prediction.total_ns * 1e-9, outcome.run.ns_per_node,
          steps};
}

struct SweepPoint {
  std::size_t n = 0;
  double measured_s = 0, predicted_s = 0, other_schedule_s = 0;
};

struct Sweep {
  Decomposition decomposition;
  Schedule schedule;
  std::vector<SweepPoint> points;
  // The paper's metrics: eps_max = max |t - tau| / t, eps = (1/N) sqrt(sum ((t - tau) / t)^2).
  double eps_max() const {
    double worst = 0;
    for (const auto& p : points) worst = std::max(worst, std::abs(p.measured_s - p.predicted_s) / p.measured_s);
    return worst;
  }
  double eps() const {
    double sum = 0;
    for (const auto& p : points) sum += std::pow((p.measured_s - p.predicted_s) / p.measured_s, 2);
    return std::sqrt(sum) / static_cast<double>(points.size());
  }
};

template <class T>
Sweep sweep_heights(HeatSolver<T>& solver, Decomposition decomposition, Schedule schedule, std::size_t most,
                    std::size_t steps, std::uint64_t budget, const DeviceProfile& profile) {
  Sweep sweep{decomposition, schedule, {}};
  HeatPlanRequest request;
  request.mode = decomposition == Decomposition::block ? HeatMode::block : HeatMode::strip;
  request.schedule = schedule;
  request.device_memory = budget;
  for (std::size_t n = 1; n <= std::min(most, steps); ++n) {
    request.height = n;
    HeatPlanRequest other = request;
    other.schedule = schedule == Schedule::serial ? Schedule::overlapped : Schedule::serial;
    const double other_s = plan_heat(solver, steps, other, profile).predicted.prediction.total_ns * 1e-9;
    const HeatOutcome outcome = advance_heat(solver, steps, request, profile);
    sweep.points.push_back({n, outcome.run.seconds, outcome.planned.predicted.prediction.total_ns * 1e-9, other_s});
    if (::isatty(STDERR_FILENO)) {
      std::cerr << "\rsweep " << to_string(decomposition) << " " << to_string(schedule) << " n=" << n
                << "   " << std::flush;
    }
  }
  if (::isatty(STDERR_FILENO)) std::cerr << "\r                                        \r";
  return sweep;
}

// Every option that is text, parsed before anything is measured.
struct Parsed {
  std::vector<std::vector<std::size_t>> grids;  // --size2d, --size3d
  std::uint64_t budget = 0;
  std::vector<std::size_t> depths;
};

Parsed parse(const BenchHeatOptions& options) {
  Parsed p;
  if (!options.size2d.empty()) p.grids.push_back(parse_extents(options.size2d, 2, 2, "--size2d"));
  if (!options.size3d.empty()) p.grids.push_back(parse_extents(options.size3d, 3, 3, "--size3d"));
  if (options.sweep > 0 && options.size2d.empty())
    throw InvalidArgument("--sweep sweeps the 2D grid: give --size2d (or drop --sweep)");
  p.budget = parse_bytes(options.device_mem);
  p.depths = parse_counts(options.depths, "--depths", "steps a launch of the blocked kernel");
  peer_names(options.peers);
  return p;
}

template <class T>
void bench(const BenchHeatOptions& options) {
  const Parsed parsed = parse(options);
  for (const std::vector<std::size_t>& extents : parsed.grids)  // the field and the solver's two layers
    check_host_memory(3 * checked_node_count(extents) * sizeof(T), "a " + extents_string(extents) + " grid");
  Context context(options.device);
  const DeviceInfo& device = context.device();
  const DeviceProfile profile = load_or_calibrate(context);
  const std::uint64_t budget = parsed.budget;
  // The better of a copy kernel and clEnqueueCopyBuffer: the fastest the device moves memory.
  const auto [kernel_copy, driver_copy] =
      device.profiling ? measure_copy_bandwidth(context, 256u << 20, 3) : std::pair{profile.copy_bytes_per_s(), 0.0};
  const double copy = std::max(kernel_copy, driver_copy);
  const double streaming_ns = 2.0 * sizeof(T) / copy * 1e9;  // read once, written once
  const double bus_ns = sizeof(T) / std::min(profile.upload_pinned.bytes_per_s, profile.download_pinned.bytes_per_s) * 1e9;

  nlohmann::json report = {{"benchmark", "heat"}, {"date", utc_timestamp()},
                           {"device", {{"name", device.name}, {"platform", device.platform_name},
                                       {"driver", device.driver_version}}},
                           {"precision", sizeof(T) == 4 ? "f32" : "f64"}, {"budget_bytes", budget},
                           {"copy_bytes_per_s", copy}, {"copy_kernel_bytes_per_s", kernel_copy},
                           {"copy_driver_bytes_per_s", driver_copy}, {"upload_bytes_per_s", profile.upload_pinned.bytes_per_s},
                           {"download_bytes_per_s", profile.download_pinned.bytes_per_s}};
  std::ostream& out = std::cout;
  if (!options.json) {
    out << "ziggurat " << version << " bench heat, " << utc_timestamp() << "\n"
        << "device: " << device.label() << ", driver " << device.driver_version << "\n"
        << (sizeof(T) == 4 ? "float" : "double") << "; device-memory budget " << bytes_text(budget)
        << " for the out-of-core modes; overlapped schedule; wall time of whole runs (transfers included)\n"
        << "limits: streaming copy " << number_text(copy * 1e-9) << " GB/s (copy kernel " << number_text(kernel_copy * 1e-9)
        << ", clEnqueueCopyBuffer " << number_text(driver_copy * 1e-9) << ") = " << number_text(streaming_ns)
        << " ns/node (" << 2 * sizeof(T) << " B a node and step: one read, one write); bus " << number_text(profile.upload_pinned.bytes_per_s * 1e-9) << " up / "
        << number_text(profile.download_pinned.bytes_per_s * 1e-9) << " down GB/s = " << number_text(bus_ns)
        << " ns/node (a value each way per step: the trivial algorithm's limit)\n";
  }

  std::optional<HeatSolver<T>> sweep_solver;
  for (const std::vector<std::size_t>& extents : parsed.grids) {
    const double grid_bytes = static_cast<double>(checked_node_count(extents) * sizeof(T));
    std::vector<Row> rows;
    std::optional<BlockingChoice> tuned;  // the tuner's depth and work-group
    std::vector<PeerAnswer> peers;
    std::vector<std::pair<std::size_t, std::size_t>> blocked;  // (depth, row) of the blocked kernel's rows
    const std::vector<std::size_t> model_tile = model::blocked_kernel_tile(extents.size());
    std::optional<double> update_ns;  // the blocking model's on-chip update time, fitted
    HeatSolver<T> solver = [&] {
      const Grid<T> initial = heat_mode_field<T>(extents);
      for (const StepKernel kernel : {StepKernel::aligned, StepKernel::naive}) {
        if (kernel == StepKernel::naive && extents.size() != 2) continue;
        if (auto row = in_device_row(context, initial, kernel, options.steps)) rows.push_back(*row);
      }
      for (const std::size_t depth : parsed.depths)
        if (auto row = in_device_row(context, initial, StepKernel::blocked, options.steps, depth)) {
          blocked.emplace_back(depth, rows.size());
          rows.push_back(*row);
        }
      update_ns = fit_blocking_model(rows, blocked, streaming_ns, model_tile);
      // The tuner's choice among depths and work-groups (tuning/blocking_autotune.hpp), on this grid.
      tuned = choose_heat_blocking<T>(context, extents.size());
      if (tuned->depth > 1)
        if (auto row = in_device_row(context, initial, StepKernel::blocked, options.steps, tuned->depth, tuned->group)) {
          row->what += " (tuned)";
          rows.push_back(*row);
        }
      // Before the solver takes device memory: the peers' grids need it.
      peers = peer_answers<T>(options, extents);
      for (const PeerAnswer& peer : peers)
        if (peer.row) rows.push_back(*peer.row);
      return HeatSolver<T>(context, initial, 0.9 * max_stable_alpha(extents.size()));
    }();
    HeatPlanRequest request;
    request.mode = HeatMode::incore;
    if (InDeviceHeat<T>::buffer_bytes(device, extents) <= device.max_alloc_bytes) {
      rows.push_back(solver_row(solver, "incore (upload, K steps, download)", options.steps, request, profile));
    }
    request.device_memory = budget;
    request.mode = HeatMode::trivial;
    rows.push_back(solver_row(solver, "trivial, strips (1 step a pass)", options.trivial_steps, request, profile));
    for (const HeatMode mode : {HeatMode::strip, HeatMode::block, HeatMode::automatic}) {
      if (mode == HeatMode::block && extents.size() != 2) continue;
      request.mode = mode;
      const std::string what = mode == HeatMode::automatic ? "auto plan" : std::string(to_string(mode)) + " pyramid, model's n";
      rows.push_back(solver_row(solver, what, options.steps, request, profile));
    }
    // The pyramids again, each pass in launches of the tuned depth and work-group.
    if (tuned->depth > 1) {
      request.depth = tuned->depth;
      request.group = tuned->group;
      request.kernel_ns_per_node = tuned->ns_per_node;
      for (const HeatMode mode : {HeatMode::strip, HeatMode::block}) {
        if (mode == HeatMode::block && extents.size() != 2) continue;
        request.mode = mode;
        rows.push_back(solver_row(solver, std::string(to_string(mode)) + " pyramid, model's n, " +
                                              std::to_string(tuned->depth) + " steps a launch in groups of " +
                                              to_string(tuned->group),
                                  options.steps, request, profile));
      }
      request.depth.reset();
      request.group = {};
      request.kernel_ns_per_node.reset();
    }
    // What `ziggurat heat --depth auto` runs: the decomposition, n and the launch depth planned together.
    request.mode = HeatMode::automatic;
    request.depth = 0;
    rows.push_back(solver_row(solver, "auto plan, depth chosen with n", options.steps, request, profile));
    request.depth.reset();
    request.mode = HeatMode::strip;
    request.schedule = Schedule::serial;
    rows.push_back(solver_row(solver, "strip pyramid, serial schedule", options.steps, request, profile));

    const double kernel_ns = rows.front().ns_per_node;
    const double trivial_ns = std::find_if(rows.begin(), rows.end(), [](const Row& r) {
                                return r.what.rfind("trivial", 0) == 0;
                              })->ns_per_node;
    nlohmann::json grid = {{"size", extents}, {"grid_bytes", grid_bytes}, {"budget_multiple", grid_bytes / static_cast<double>(budget)},
                           {"streaming_limit_ns_per_node", streaming_ns}, {"bus_limit_ns_per_node", bus_ns},
                           {"rows", nlohmann::json::array()}, {"peers", nlohmann::json::object()}};
    grid["tuned"] = {{"key", tuned->key}, {"depth", tuned->depth}, {"group", to_string(tuned->group)},
                     {"ns_per_node", tuned->ns_per_node}, {"candidates", tuned->seconds}};
    if (update_ns) grid["blocking_model"] = {{"update_ns", *update_ns}, {"tile", model_tile}};
    for (const PeerAnswer& peer : peers)
      grid["peers"][peer.name] = {{peer.row ? "note" : "unavailable", peer.note}};
    Table table({"what", "plan", "steps", "time s", "model s", "ns/node", "Gnodes/s", "vs in-device kernel",
                 "vs streaming limit", "x trivial"});
    for (const Row& r : rows) {
      grid["rows"].push_back({{"what", r.what}, {"plan", r.plan}, {"steps", r.steps}, {"time_s", r.seconds},
                              {"predicted_s", r.predicted_s}, {"ns_per_node", r.ns_per_node}});
      table.add({r.what, r.plan, std::to_string(r.steps), number_text(r.seconds),
                 r.predicted_s > 0 ? number_text(r.predicted_s) : "-", number_text(r.ns_per_node),
                 number_text(1 / r.ns_per_node), number_text(kernel_ns / r.ns_per_node),
                 number_text(streaming_ns / r.ns_per_node), number_text(trivial_ns / r.ns_per_node)});
    }
    table.add({"limit: streaming copy", std::to_string(2 * sizeof(T)) + " B/node", "", "", "", number_text(streaming_ns), number_text(1 / streaming_ns),
               number_text(kernel_ns / streaming_ns), "1", number_text(trivial_ns / streaming_ns)});
    table.add({"limit: bus, 1 step a transfer", "", "", "", "", number_text(bus_ns), number_text(1 / bus_ns),
               number_text(kernel_ns / bus_ns), number_text(streaming_ns / bus_ns), number_text(trivial_ns / bus_ns)});
    report["grids"].push_back(grid);
    if (!options.json) {
      out << "\ngrid " << extents_string(extents) << " (" << bytes_text(static_cast<std::uint64_t>(grid_bytes)) << ", "
          << number_text(grid_bytes / static_cast<double>(budget)) << " x the budget)\n";
      table.print(out);
      for (const PeerAnswer& peer : peers)
        out << peer_title(peer.name) << (peer.row ? ": " : ": unavailable: ") << peer.note << "\n";
      out << "tuned (" << tuned->key << (tuned->measured_now ? ", measured now" : ", from the record")
          << "), fastest first, ns/node:";
      for (std::size_t i = 0; i < std::min<std::size_t>(tuned->seconds.size(), 8); ++i)
        out << " " << tuned->seconds[i].first << " " << number_text(tuned->seconds[i].second * 1e9, 3);
      out << "\n";
      if (update_ns)
        out << "blocking model (the blocked rows' \"model s\"): t(T) = max(streaming / T, " << number_text(*update_ns, 4)
            << " ns x redundancy of a " << extents_string(model_tile)
            << " tile), the on-chip update time fitted to these rows (`ziggurat model --scheme blocking`)\n";
    }
    if (extents.size() == 2 && options.sweep > 0) sweep_solver.emplace(std::move(solver));
  }
  if (!sweep_solver) {
    if (options.json) std::cout << app::json_output(report);
    return;
  }

  // The height sweep on the 2D grid, every decomposition and schedule.
  HeatSolver<T>& solver = *sweep_solver;
  std::vector<Sweep> sweeps;
  for (const Schedule schedule : {Schedule::overlapped, Schedule::serial}) {
    for (const Decomposition d : {Decomposition::strip, Decomposition::block}) {
      sweeps.push_back(sweep_heights(solver, d, schedule, options.sweep, options.sweep_steps, budget, profile));
    }
  }
  HeatPlanRequest automatic;
  automatic.device_memory = budget;
  const HeatOutcome auto_outcome = advance_heat(solver, options.sweep_steps, automatic, profile);
  const HeatRun& auto_run = auto_outcome.run;
  const model::Plan& auto_plan = auto_outcome.planned.predicted;
  double best_measured = 1e300;
  std::string best_what;
  for (const Sweep& s : sweeps) {
    for (const SweepPoint& p : s.points) {
      if (p.measured_s < best_measured) {
        best_measured = p.measured_s;
        best_what = std::string(to_string(s.decomposition)) + " n=" + std::to_string(p.n) + " " +
                    to_string(s.schedule);
      }
    }
  }
  nlohmann::json sweep_json = {{"steps", options.sweep_steps}, {"sweeps", nlohmann::json::array()},
                               {"auto", {{"plan", layout_text(auto_plan)},
                                         {"decomposition", to_string(auto_plan.layout.decomposition)},
                                         {"time_s", auto_run.seconds}}},
                               {"best_measured", {{"what", best_what}, {"time_s", best_measured}}},
                               {"auto_over_best", auto_run.seconds / best_measured}};
  std::vector<Series> series;
  for (const Sweep& s : sweeps) {
    const std::string name = std::string(to_string(s.decomposition)) + " " + to_string(s.schedule);
    nlohmann::json points = nlohmann::json::array();
    Series measured{name + " measured", {}, {}, false}, predicted{name + " model", {}, {}, true};
    for (const SweepPoint& p : s.points) {
      points.push_back({{"n", p.n}, {"measured_s", p.measured_s}, {"predicted_s", p.predicted_s},
                        {"other_schedule_predicted_s", p.other_schedule_s}});
      measured.x.push_back(static_cast<double>(p.n));
      measured.y.push_back(p.measured_s);
      predicted.x.push_back(static_cast<double>(p.n));
      predicted.y.push_back(p.predicted_s);
    }
    series.push_back(measured);
    series.push_back(predicted);
    sweep_json["sweeps"].push_back({{"decomposition", to_string(s.decomposition)},
                                    {"schedule", to_string(s.schedule)}, {"eps_max", s.eps_max()},
                                    {"eps", s.eps()}, {"points", points}});
  }
  report["sweep"] = sweep_json;
  const auto draw = [&] {
    if (options.plot.empty()) return;
    plot_lines(options.plot, "pyramid height sweep, " + extents_string(solver.extents()) + ", " + device.name, "height n",
               "time of " + std::to_string(options.sweep_steps) + " steps, s", series);
  };
  if (options.json) {
    std::cout << app::json_output(report);
    draw();
    return;
  }
  out << "\nheight sweep: grid " << extents_string(solver.extents()) << ", " << options.sweep_steps
      << " steps, budget " << bytes_text(budget) << "; time in s, measured and predicted (model of the schedule run; the "
      << "other schedule's prediction beside it)\n";
  Table table({"n", "strip ovl", "model", "block ovl", "model", "strip serial", "model", "block serial", "model",
               "strip: serial model", "strip: ovl model"});
  for (std::size_t i = 0; i < sweeps.front().points.size(); ++i) {
    std::vector<std::string> cells{std::to_string(sweeps.front().points[i].n)};
    for (const Sweep& s : sweeps) {
      cells.push_back(number_text(s.points[i].measured_s));
      cells.push_back(number_text(s.points[i].predicted_s));
    }
    cells.push_back(number_text(sweeps[0].points[i].other_schedule_s));
    cells.push_back(number_text(sweeps[2].points[i].other_schedule_s));
    table.add(cells);
  }
  table.print(out);
  out << "\nmodel error over n = 1.." << sweeps.front().points.size() << " (method notes: eps_max, eps):\n";
  for (const Sweep& s : sweeps) {
    out << "  " << to_string(s.decomposition) << ", " << to_string(s.schedule)
        << ": eps_max = " << number_text(s.eps_max(), 2) << ", eps = " << number_text(s.eps(), 2) << "\n";
  }
  out << "auto plan (" << to_string(auto_plan.layout.decomposition) << ", " << layout_text(auto_plan)
      << "): " << number_text(auto_run.seconds) << " s; best measured in the sweep (" << best_what
      << "): " << number_text(best_measured) << " s; auto / best = " << number_text(auto_run.seconds / best_measured)
      << "\n";
  draw();  // last: everything measured is printed even where the plot cannot be drawn
  if (!options.plot.empty()) out << "plot: " << options.plot << "\n";
}

}  // namespace

void run_bench_heat(const BenchHeatOptions& options) {
  options.files.check();
  with_precision(options.precision, [&](auto zero) { bench<decltype(zero)>(options); });
}

void add_bench_heat_options(CLI::App* command, BenchHeatOptions& options) {
  command->add_option("--size2d", options.size2d, "2D grid WxH (empty: none)")->capture_default_str();
  command->add_option("--size3d", options.size3d, "3D grid WxHxD (empty: none)")->capture_default_str();
  command->add_option("--steps", options.steps, "Steps K of each run")->capture_default_str()->check(whole_number(1));
  command->add_option("--trivial-steps", options.trivial_steps, "Steps of the (slow) trivial runs")
      ->capture_default_str()->check(whole_number(1));
  add_deprecated_alias(command,
                       command->add_option("--device-memory", options.device_mem,
                                           "Device-memory budget of the out-of-core runs")
      ->capture_default_str(),
                       "--device-mem", options.device_mem);
  command->add_option("--sweep", options.sweep, "Sweep the pyramid height n = 1..N on the 2D grid (0: no sweep)")
      ->capture_default_str()
      ->check(whole_number(0));
  command->add_option("--sweep-steps", options.sweep_steps, "Steps of each sweep run")->capture_default_str()
      ->check(whole_number(1));
  options.files.add_output(command, "--plot", options.plot, "Draw the sweep, measured and predicted time against n (PNG)");
  add_precision_option(command, options.precision);
  command->add_option("--depths", options.depths, "Steps a launch of the blocked in-device kernel, comma-separated (the fastest also runs the pyramids)")
      ->capture_default_str();
  command->add_option("--peers", options.peers, "Peers of the in-device kernels on the same GPU, comma-separated: cupy "
                                                "(a naive CUDA kernel), ebisu (EBISU's temporal blocking, built with "
                                                "nvcc; bench/README.md), or none")
      ->capture_default_str();
  command->add_option("--python", options.python, "Python of the peers (heat_peers.py)")->capture_default_str();
  command->add_option("--device", options.device, "Device selection (see `ziggurat devices`)");
  command->add_flag("--json", options.json, "Print JSON");
}

}  // namespace ziggurat::cli
