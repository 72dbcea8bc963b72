// `ziggurat model`: what-if predictions of the cost models, without a device (or with its profile).

#include <algorithm>
#include <cmath>
#include <optional>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "file_options.hpp"
#include "format.hpp"
#include "option_aliases.hpp"
#include "plot.hpp"
#include "ziggurat/app/cost_model.hpp"
#include "ziggurat/app/json_output.hpp"
#include "ziggurat/app/run_profile.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/matrix/grid.hpp"
#include "ziggurat/tuning/blocking_model.hpp"
#include "ziggurat/tuning/cost_model.hpp"
#include "ziggurat/tuning/model_constants.hpp"
#include "ziggurat/tuning/model_sweep.hpp"
#include "ziggurat/tuning/profile_store.hpp"

namespace ziggurat::cli {

namespace {

using namespace ziggurat::model;

struct ModelOptions {
  FileOptions files;  // every file read or written, checked before any work
  std::string scheme = "explicit";
  std::size_t dims = 2;
  std::size_t grid = 32768;
  std::size_t steps = 1000;
  std::string precision = "f32";
  std::string device_mem;
  double tau_c = -1, tau_a = -1;
  std::string profile, device;
  std::string decomposition = "auto";
  bool serial = false;
  std::size_t height = 0;
  std::size_t planes = 0;
  bool sweep = false;
  std::string ratios = "1,5,10,15";
  std::string memories = "128MiB,512MiB,1GiB";
  std::string plot;
  double stream_ns = -1, update_ns = -1;
  std::string tile;
  std::size_t most_depth = 12;
  bool json = false;
};

// Where the constants come from: a calibration (profile file or device), the command line, or both.
struct Inputs {
  std::optional<DeviceProfile> profile;
  std::string profile_source;
  std::uint64_t device_memory = 0;  // the calibrated device's, when there is one
};

std::size_t value_bytes(const ModelOptions& o);

// What of the device's profile the scheme reads beyond the device figures: CLBlast's constants for
// the long-vector model, else the heat stencil's rate where --tau-a does not give it.
ProfileNeeds model_needs(const ModelOptions& o) {
  if (o.scheme == "long-vector") return ProfileNeeds::long_vector();
  return o.tau_a > 0 ? ProfileNeeds{} : ProfileNeeds::heat(o.dims, value_bytes(o));
}

Inputs load_inputs(const ModelOptions& o) {
  if (!o.profile.empty() && !o.device.empty()) throw InvalidArgument("give --profile or --device, not both");
  Inputs in;
  if (!o.profile.empty()) {
    in.profile = read_profile_file(o.profile);
    in.profile_source = o.profile;
  } else if (!o.device.empty()) {
    const Context context(o.device);
    ProfileOrigin origin;
    in.profile = load_or_calibrate(context, model_needs(o), &origin);
    app::warn_if_not_cached(origin);
    in.profile_source = context.device().label();
    in.device_memory = context.device().global_mem_bytes;
  }
  return in;
}

std::size_t value_bytes(const ModelOptions& o) { return o.precision == "f64" ? 8 : 4; }

DeviceConstants constants_for(const ModelOptions& o, const Inputs& in) {
  DeviceConstants k;
  if (in.profile) {
    if (o.tau_a <= 0 && !in.profile->tau_a_ns(o.dims, value_bytes(o))) {
      throw InvalidArgument("the profile of " + in.profile->device + " has no measured compute rate for a " +
                            std::to_string(o.dims) + "D " + (value_bytes(o) == 4 ? "float" : "double") +
                            " stencil (ziggurat has no such kernel yet, or the device lacks fp64): give --tau-a");
    }
    k = heat_constants(*in.profile, o.dims, value_bytes(o), o.tau_a > 0 ? std::optional<double>(o.tau_a) : std::nullopt);
  } else if (o.tau_a <= 0 || (o.tau_c <= 0 && !o.sweep)) {
    throw InvalidArgument(std::string("the model needs ") + (o.sweep ? "tau_a: give --tau-a (ns per node computed)" :
                          "tau_c and tau_a: give --tau-c and --tau-a (ns per value moved, ns per node computed)") +
                          ", or take the constants from a calibration with --profile FILE or --device SEL");
  } else {
    k = DeviceConstants::paper(o.sweep ? o.tau_a : o.tau_c, o.tau_a);  // a sweep sets tau_c from its ratios
  }
  if (o.tau_c > 0) k.set_tau_c(o.tau_c);
  return k;
}

std::uint64_t budget_of(const ModelOptions& o, const Inputs& in) {
  if (!o.device_mem.empty()) return parse_bytes(o.device_mem);
  if (in.device_memory > 0) return in.device_memory;
  throw InvalidArgument("give the device-memory budget with --device-memory (e.g. 512MiB), or --device SEL to use a "
                        "device's memory");
}

Problem problem_of(const ModelOptions& o) {
  Problem p{std::vector<std::size_t>(o.dims, o.grid), o.steps, value_bytes(o)};
  p.validate();
  return p;
}

Schedule schedule_of(const ModelOptions& o) { return o.serial ? Schedule::serial : Schedule::overlapped; }

std::optional<std::size_t> height_of(const ModelOptions& o) {
  return o.height > 0 ? std::optional<std::size_t>(o.height) : std::nullopt;
}

// The budget as the paper counts it (paper_budget): one time layer fills it in the serial schedule.
Plan plan_for(const ModelOptions& o, const Problem& problem, std::uint64_t budget_bytes, const DeviceConstants& k,
              const std::string& decomposition) {
  const Budget budget = paper_budget(budget_bytes, schedule_of(o));
  if (decomposition == "auto") return best_plan_auto(problem, budget, k, schedule_of(o), height_of(o));
  return best_plan(problem, budget, k, schedule_of(o), decomposition == "block" ? Decomposition::block : Decomposition::strip,
                   height_of(o));
}

std::string plan_shape(const Plan& plan) {
  const PyramidLayout& l = plan.layout;
  switch (l.decomposition) {
    case Decomposition::incore: return "the whole grid in device memory";
    case Decomposition::block:
      return "blocks of " + std::to_string(l.task_extent) + " x " + std::to_string(l.task_extent) + " nodes in " +
             std::to_string(plan.buffer_extent) + " x " + std::to_string(plan.buffer_extent) + " buffers";
    default:
      return "strips of " + std::to_string(l.task_extent) + " rows in buffers of " + std::to_string(plan.buffer_extent) + " rows";
  }
}

void run_explicit(const ModelOptions& o, const Inputs& in) {
  const Problem problem = problem_of(o);
  const DeviceConstants k = constants_for(o, in);
  const std::uint64_t budget = budget_of(o, in);
  const Plan plan = plan_for(o, problem, budget, k, o.decomposition);
  if (o.json) {
    nlohmann::json j = {{"grid", problem.extents}, {"steps", o.steps}, {"precision", o.precision},
                        {"budget_bytes", budget}, {"schedule", to_string(schedule_of(o))},
                        {"constants", app::to_json(k)}, {"plan", app::to_json(plan)}};
    if (in.profile) j["profile"] = in.profile_source;
    std::cout << app::json_output(j);
    return;
  }
  std::cout << "grid " << extents_string(problem.extents) << " " << (value_bytes(o) == 4 ? "float" : "double") << ", "
            << o.steps << " steps, " << bytes_text(budget) << " of device memory, " << to_string(schedule_of(o))
            << " schedule\n"
            << "constants: tau_c " << number_text(k.upload.ns_per_value) << " ns up, " << number_text(k.download.ns_per_value)
            << " ns down (rect " << number_text(k.rect_upload.ns_per_value) << ", " << number_text(k.rect_download.ns_per_value)
            << "), tau_a " << number_text(k.tau_a_ns) << " ns, launch " << number_text(k.launch_ns) << " ns, latency "
            << number_text(k.upload.latency_ns) << " ns"
            << (in.profile ? " (from " + in.profile_source + ")" : std::string()) << "\n"
            << "plan: " << to_string(plan.layout.decomposition);
  if (plan.layout.decomposition != Decomposition::incore) {
    const auto count = [](std::size_t n, const char* one, const char* many) {
      return std::to_string(n) + " " + (n == 1 ? one : many);
    };
    std::cout << ", height n = " << plan.layout.height << ", " << plan_shape(plan) << ", "
              << count(plan.prediction.tasks, "task", "tasks") << " x " << count(plan.prediction.passes, "pass", "passes");
  }
  std::cout << "\npredicted: " << number_text(plan.prediction.ns_per_node, 4) << " ns/node ("
            << number_text(plan.prediction.total_ns * 1e-9) << " s); trivial " << number_text(plan.trivial.ns_per_node, 4)
            << " ns/node; speedup " << number_text(plan.speedup_over_trivial()) << "x";
  if (plan.approx_ns_per_node > 0) {
    std::cout << "; the paper's (serial) formula: " << number_text(plan.approx_ns_per_node, 4) << " ns/node";
  }
  std::cout << "\n";
}

void run_sweep(const ModelOptions& o, const Inputs& in) {
  const Problem problem = problem_of(o);
  const DeviceConstants base = constants_for(o, in);
  const auto ratios = parse_numbers(o.ratios, "--ratios");
  for (const double ratio : ratios)
    if (ratio * base.tau_a_ns > DeviceConstants::kMostNs)
      throw InvalidArgument("--ratios " + o.ratios + " makes tau_c " + number_text(ratio * base.tau_a_ns) +
                            " ns with tau_a " + number_text(base.tau_a_ns) + " ns: the model takes up to " +
                            number_text(DeviceConstants::kMostNs) + " ns; give smaller ratios or --tau-a");
  std::vector<std::uint64_t> memories;
  for (const auto& text : split(o.memories, ',')) memories.push_back(parse_bytes(text));
  std::vector<Decomposition> decompositions;
  if (o.decomposition == "auto") {
    decompositions = problem.extents.size() == 2 ? std::vector<Decomposition>{Decomposition::strip, Decomposition::block}
                                                 : std::vector<Decomposition>{Decomposition::strip};
  } else {
    decompositions = {o.decomposition == "block" ? Decomposition::block : Decomposition::strip};
  }
  const std::vector<SweepPoint> points =
      sweep_plans(problem, base, memories, decompositions, ratios, schedule_of(o), height_of(o));

  nlohmann::json list = nlohmann::json::array();
  Table table({"memory", "tau_c/tau_a", "decomposition", "n", "task", "buffer", "pyramid ns/node", "trivial ns/node", "speedup"});
  std::vector<Series> series;
  std::vector<std::string> notes;
  for (const SweepPoint& point : points) {
    const std::string decomposition = to_string(point.decomposition);
    nlohmann::json j = {{"budget_bytes", point.budget_bytes}, {"tau_c_over_tau_a", point.tau_c_over_tau_a},
                        {"decomposition", decomposition}};
    if (!point.plan) {
      j["error"] = point.error;
      list.push_back(j);
      table.add({bytes_text(point.budget_bytes), number_text(point.tau_c_over_tau_a), decomposition, "-", "-", "-",
                 "no pyramid fits", "-", "-"});
      notes.push_back(bytes_text(point.budget_bytes) + " " + decomposition + ": " + point.error);
      continue;
    }
    const Plan& plan = *point.plan;
    j["plan"] = app::to_json(plan);
    list.push_back(j);
    table.add({bytes_text(point.budget_bytes), number_text(point.tau_c_over_tau_a), decomposition,
               std::to_string(plan.layout.height), std::to_string(plan.layout.task_extent),
               std::to_string(plan.buffer_extent), number_text(plan.prediction.ns_per_node, 4),
               number_text(plan.trivial.ns_per_node, 4), number_text(plan.speedup_over_trivial())});
    const std::string label = bytes_text(point.budget_bytes) + " " + decomposition;
    if (series.empty() || series.back().label != label)
      series.push_back({label, {}, {}, point.decomposition == Decomposition::block});
    series.back().x.push_back(point.tau_c_over_tau_a);
    series.back().y.push_back(plan.speedup_over_trivial());
  }
  if (!o.plot.empty()) {
    plot_lines(o.plot, "Pyramid speedup over trivial, " + extents_string(problem.extents) + ", " + std::to_string(o.steps) +
                           " steps, " + to_string(schedule_of(o)),
               "tau_c / tau_a", "speedup over the trivial algorithm", series);
  }
  if (o.json) {
    nlohmann::json j = {{"grid", problem.extents}, {"steps", o.steps}, {"precision", o.precision},
                        {"schedule", to_string(schedule_of(o))}, {"tau_a_ns", base.tau_a_ns}, {"rows", list}};
    if (!o.plot.empty()) j["plot"] = o.plot;
    std::cout << app::json_output(j);
    return;
  }
  std::cout << "grid " << extents_string(problem.extents) << " " << (value_bytes(o) == 4 ? "float" : "double") << ", "
            << o.steps << " steps, " << to_string(schedule_of(o)) << " schedule, tau_a " << number_text(base.tau_a_ns)
            << " ns, tau_c = ratio x tau_a" << (in.profile ? " (latencies and launch cost from " + in.profile_source + ")" : "")
            << "\n\n";
  table.print(std::cout);
  for (const auto& note : notes) std::cout << "no pyramid fits " << note << "\n";
  if (!o.plot.empty()) std::cout << "\nplot: " << o.plot << "\n";
}

void run_jacobi(const ModelOptions& o, const Inputs& in) {
  if (o.dims != 3) throw InvalidArgument("the Jacobi pyramid model is for 3D grids N x N x L: give --dims 3");
  const DeviceConstants k = constants_for(o, in);
  const std::uint64_t budget = budget_of(o, in);
  const std::size_t n = o.grid, planes = o.planes > 0 ? o.planes : o.grid;
  if (planes < 3) throw InvalidArgument("--planes " + std::to_string(planes) + ": the Jacobi model needs at least 3 planes");
  // A block holds U, f and the second Jacobi layer for R planes of N x N values.
  const double plane_bytes = 3.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(value_bytes(o));
  const auto R = static_cast<std::size_t>(std::min(std::floor(static_cast<double>(budget) / plane_bytes), 1e18));
  const double tau_c = 0.5 * (k.upload.ns_per_value + k.download.ns_per_value);
  const std::size_t h = best_jacobi_halo(n, planes, std::min(R, planes), tau_c, k.tau_a_ns);
  const double outer = jacobi_pyramid_ns(n, planes, std::min(R, planes), h, tau_c, k.tau_a_ns);
  const double per_node = outer / static_cast<double>(h) / (static_cast<double>(n - 2) * static_cast<double>(n - 2) * static_cast<double>(planes - 2));
  if (o.json) {
    std::cout << app::json_output(nlohmann::json{{"grid", {n, n, planes}}, {"block_planes", R}, {"halo", h}, {"outer_iteration_s", outer * 1e-9},
                                {"ns_per_node_per_sweep", per_node}});
    return;
  }
  std::cout << "Jacobi pyramid (eq. 2): " << n << " x " << n << " x " << planes << ", blocks of " << std::min(R, planes)
            << " planes; best halo h = " << h << " sweeps a pass; " << number_text(outer * 1e-9) << " s an outer iteration, "
            << number_text(per_node, 4) << " ns per node and sweep\n";
}

void run_long_vector(const ModelOptions& o, const Inputs& in) {
  if (o.dims != 2) throw InvalidArgument("the long-vector model is for 2D grids: give --dims 2");
  if (!in.profile) {
    throw InvalidArgument("the long-vector model needs measured call, wave and numstreams constants: give --profile FILE "
                          "or --device SEL");
  }
  const std::size_t interior = o.grid - 2;
  const auto c = long_vector_constants(*in.profile, value_bytes(o), static_cast<double>(o.grid) * static_cast<double>(o.grid));
  const double total = long_vector_ns(interior, o.steps, c);
  const double per_node = total / (static_cast<double>(interior) * static_cast<double>(interior) * static_cast<double>(o.steps));
  if (o.json) {
    std::cout << app::json_output(nlohmann::json{{"grid", {o.grid, o.grid}}, {"steps", o.steps}, {"predicted_s", total * 1e-9},
                                {"ns_per_node", per_node}, {"numstreams", c.numstreams}});
    return;
  }
  std::cout << "long-vector algorithm (eq. 1) on " << o.grid << " x " << o.grid << ", " << o.steps
            << " steps: " << number_text(total * 1e-9) << " s, " << number_text(per_node, 4) << " ns/node (numstreams "
            << c.numstreams << ", a call " << number_text(c.t_kernel_ns) << " ns, a wave " << number_text(c.t_saxpy_ns)
            << " ns)\n";
}

// ns a node and step through device memory: a value read and one written at the copy bandwidth.
double stream_ns_of(const ModelOptions& o, const Inputs& in) {
  if (o.stream_ns > 0) return o.stream_ns;
  if (in.profile && in.profile->copy_bytes_per_s() > 0) return crossing_ns(*in.profile, value_bytes(o));
  throw InvalidArgument("the blocking model needs the memory time of a node and step: give --stream-ns, or take the "
                        "copy bandwidth from a calibration with --profile FILE or --device SEL");
}

// --tile, else the blocked kernels' tiles (blocked_kernel_tile()).
std::vector<std::size_t> tile_of(const ModelOptions& o) {
  if (o.tile.empty()) return blocked_kernel_tile(o.dims);
  std::vector<std::size_t> tile;
  for (const std::string& side : split(o.tile, 'x')) {
    if (side.empty() || side.size() > 9 || side.find_first_not_of("0123456789") != std::string::npos)
      throw InvalidArgument("--tile '" + o.tile + "': give the tile's blocked sides as whole numbers, e.g. 256 or 32x32");
    tile.push_back(std::stoul(side));
  }
  return tile;
}

void run_blocking(const ModelOptions& o, const Inputs& in) {
  if (o.update_ns <= 0)
    throw InvalidArgument("the blocking model needs the on-chip time of one node update: give --update-ns (e.g. "
                          "fitted from `ziggurat-bench heat --depths`, whose table prints it)");
  const double stream = stream_ns_of(o, in);
  const std::vector<std::size_t> tile = tile_of(o);
  const double single = blocked_ns_per_node(stream, o.update_ns, blocked_redundancy(tile, 1), 1);
  nlohmann::json rows = nlohmann::json::array();
  Table table({"depth T", "redundancy", "memory ns", "on chip ns", "ns/node", "Gnodes/s", "x depth 1"});
  for (std::size_t depth = 1; depth <= blocked_deepest(tile, o.most_depth); ++depth) {
    const double redundancy = blocked_redundancy(tile, depth);
    const double ns = blocked_ns_per_node(stream, o.update_ns, redundancy, depth);
    rows.push_back({{"depth", depth}, {"redundancy", redundancy}, {"memory_ns", stream / double(depth)},
                    {"on_chip_ns", o.update_ns * redundancy}, {"ns_per_node", ns}});
    table.add({std::to_string(depth), number_text(redundancy, 4), number_text(stream / double(depth), 3),
               number_text(o.update_ns * redundancy, 3), number_text(ns, 3), number_text(1 / ns), number_text(single / ns)});
  }
  const std::size_t best = blocked_best_depth(stream, o.update_ns, tile, o.most_depth);
  if (o.json) {
    std::cout << app::json_output(nlohmann::json{{"stream_ns", stream}, {"update_ns", o.update_ns}, {"tile", tile}, {"best_depth", best},
                                {"depths", rows}});
    return;
  }
  std::cout << "temporal blocking on chip: t(T) = max(stream / T, update x redundancy(T)); stream "
            << number_text(stream, 4) << " ns, update " << number_text(o.update_ns, 4) << " ns, tile "
            << extents_string(tile) << "\n";
  table.print(std::cout);
  std::cout << "the memory term falls to the on-chip one at depth " << best
            << ": deeper launches gain nothing in this model (register spills, which it leaves out, make them slower)\n";
}

}  // namespace

void add_model_command(CLI::App& app) {
  auto o = std::make_shared<ModelOptions>();
  auto* command = app.add_subcommand("model", "Predict run times with the cost models and choose the pyramid's parameters "
                                              "(what-if: no device needed)");
  command->add_option("--scheme", o->scheme, "explicit (pyramid passes), long-vector (eq. 1), jacobi (eq. 2) or "
                                             "blocking (several steps a launch on chip)")
      ->check(CLI::IsMember({"explicit", "long-vector", "jacobi", "blocking"}))->capture_default_str();
  command->add_option("--dims", o->dims, "Grid dimensions")->check(CLI::IsMember({1, 2, 3}))->capture_default_str();
  command->add_option("--grid", o->grid, "Nodes per side, boundary included")->check(whole_number(3))->capture_default_str();
  command->add_option("--steps", o->steps, "Time steps K")->check(whole_number(1))->capture_default_str();
  add_precision_option(command, o->precision);
  add_deprecated_alias(command,
                       command->add_option("--device-memory", o->device_mem, "Device-memory budget, e.g. 512MiB or 2GB"),
                       "--device-mem", o->device_mem);
  command->add_option("--tau-c", o->tau_c, "ns to move one value between host and device")->check(positive_number(DeviceConstants::kMostNs));
  command->add_option("--tau-a", o->tau_a, "ns to compute one node and step")->check(positive_number(DeviceConstants::kMostNs));
  o->files.add_input(command, "--profile", o->profile, "Take the constants from a calibration (ziggurat calibrate --json)");
  command->add_option("--device", o->device, "Take the constants (and memory) from this device's calibration");
  command->add_option("--decomposition", o->decomposition, "strip, block or auto")
      ->check(CLI::IsMember({"strip", "block", "auto"}))->capture_default_str();
  auto* serial = command->add_flag("--serial", o->serial, "The paper's serial schedule: one time layer fills the budget, "
                                                          "transfers and kernels one after another");
  command->add_flag("--overlapped", "Uploads, kernels and downloads overlap (the default)")->excludes(serial);
  command->add_option("--height", o->height, "Fix the pyramid height n instead of choosing it")->check(whole_number(1));
  command->add_option("--planes", o->planes, "jacobi: planes along the long axis (default: --grid)")->check(whole_number(1));
  command->add_flag("--sweep", o->sweep, "A table over tau_c/tau_a ratios and memory sizes");
  command->add_option("--ratios", o->ratios, "--sweep: tau_c/tau_a ratios")->capture_default_str();
  command->add_option("--memories", o->memories, "--sweep: device-memory budgets")->capture_default_str();
  o->files.add_output(command, "--plot", o->plot, "--sweep: also draw the speedups into this PNG file");
  command->add_option("--stream-ns", o->stream_ns, "blocking: ns a node and step through device memory (default: "
                                                   "2 values at the calibrated copy bandwidth)")->check(positive_number(DeviceConstants::kMostNs));
  command->add_option("--update-ns", o->update_ns, "blocking: ns of one node update on chip")->check(positive_number(DeviceConstants::kMostNs));
  command->add_option("--tile", o->tile, "blocking: the tile's blocked sides, e.g. 256 (1D, 2D) or 32x32 (3D, the "
                                         "default)");
  command->add_option("--most-depth", o->most_depth, "blocking: the deepest depth tabled")->check(whole_number(1))
      ->capture_default_str();
  command->add_flag("--json", o->json, "Print JSON");
  command->callback([o] {
    o->files.check();
    if (!o->plot.empty() && !o->sweep) throw InvalidArgument("--plot draws a --sweep: add --sweep");
    const Inputs inputs = load_inputs(*o);
    if (o->scheme == "jacobi") {
      run_jacobi(*o, inputs);
    } else if (o->scheme == "long-vector") {
      run_long_vector(*o, inputs);
    } else if (o->scheme == "blocking") {
      run_blocking(*o, inputs);
    } else if (o->sweep) {
      run_sweep(*o, inputs);
    } else {
      run_explicit(*o, inputs);
    }
  });
}

}  // namespace ziggurat::cli
