// `ziggurat-bench poisson`: the Jacobi Poisson solver beside the physical limits and its models.
//   1. The streaming limit (copy bandwidth / 3 values a node: u read, f read, u written) and the
//      in-core sweep rate on a grid that fits the device.
//   2. Out of core, on a grid at least 8x the budget: the model's plan, and its rate against in core.
//   3. Model validation (method notes, sections 1 and 2): for each height h at that budget (R the
//      largest block that fits), measured time per sweep beside the exact model of the schedule
//      that ran and, in the serial schedule, the paper's eq. (2); eps and eps_max as the paper
//      defines them, and whether the model's chosen h is within 5 % of the best measured.
// Every run sweeps a fixed number of times (tolerance 0), whole passes only, so that times compare.

#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>
#include <utility>
#include <nlohmann/json.hpp>

#include "bench.hpp"
#include "format.hpp"
#include "option_aliases.hpp"
#include "ziggurat/base/timestamp.hpp"
#include "ziggurat/app/json_output.hpp"
#include "ziggurat/automatic/poisson.hpp"
#include "ziggurat/base/context.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/base/host_memory.hpp"
#include "ziggurat/base/precision.hpp"
#include "ziggurat/base/version.hpp"
#include "ziggurat/matrix/grid.hpp"
#include "ziggurat/ops/poisson_scheme.hpp"
#include "ziggurat/tuning/calibration.hpp"
#include "ziggurat/tuning/profile_store.hpp"

namespace ziggurat::cli {

namespace {

struct BenchPoissonOptions {
  // Rows of 384 floats need no padding on any device seen (alignment up to 512 bytes), so the
  // budget holds whole planes and strips move as contiguous transfers.
  std::string incore_size = "384x384x2000";
  std::string size = "384x384x29200";  // >= 8 x 2 GiB of float
  std::string device_mem = "2GiB";
  std::string heights;  // empty: a spread over the valid range
  std::size_t passes = 3;
  bool height_sweep = true;
  bool serial_sweep = true;
  std::string precision = "f32";
  std::string device;
  bool json = false;
};

// f = 1 everywhere and a zero boundary: cheap to build at any size, and the iterates stay bounded.
template <class T>
std::unique_ptr<PoissonSolver<T>> make_solver(const Context& context, const std::vector<std::size_t>& extents) {
  const Grid<T> zero(extents, T(0)), one(extents, T(1));
  return std::make_unique<PoissonSolver<T>>(context, zero, one, 1.0 / static_cast<double>(extents[0] - 1));
}

struct Measured {
  std::size_t h = 0, R = 0, sweeps = 0;
  double ns_per_node = 0, predicted = 0, paper = 0;
  Schedule schedule = Schedule::overlapped;
};

template <class T>
Measured measure(PoissonSolver<T>& solver, const PoissonPlanRequest& request, std::size_t sweeps, const DeviceProfile& profile);

// The steady rate: the difference of a run of `sweeps` and one of 4 x `sweeps` sweeps, so that what
// every run pays once (the uploads and downloads of in core, the first upload and last download of
// a pyramid) drops out. The model's figure is taken the same way.
template <class T>
Measured steady(PoissonSolver<T>& solver, const PoissonPlanRequest& request, std::size_t sweeps, const DeviceProfile& profile) {
  const Measured short_run = measure(solver, request, sweeps, profile);
  Measured m = measure(solver, request, 4 * sweeps, profile);
  const auto rate = [&](double long_ns, double short_ns) {
    return (long_ns * static_cast<double>(4 * sweeps) - short_ns * static_cast<double>(sweeps)) / static_cast<double>(3 * sweeps);
  };
  m.ns_per_node = rate(m.ns_per_node, short_run.ns_per_node);
  m.predicted = rate(m.predicted, short_run.predicted);
  return m;
}

template <class T>
Measured measure(PoissonSolver<T>& solver, const PoissonPlanRequest& request, std::size_t sweeps, const DeviceProfile& profile) {
  const PoissonOutcome o = solve_poisson(solver, PoissonStop{0, sweeps}, request, profile);
  Measured m;
  m.h = o.planned.predicted.layout.height;
  m.R = o.planned.predicted.buffer_extent;
  m.sweeps = o.run.sweeps;
  m.ns_per_node = o.run.ns_per_node;
  m.predicted = o.planned.predicted.prediction.ns_per_node;
  m.paper = o.planned.paper_ns_per_sweep / model::Problem{solver.extents(), 1}.interior_nodes();
  m.schedule = request.schedule;
  return m;
}

std::vector<std::size_t> sweep_heights(const std::vector<std::size_t>& given, std::size_t most) {
  if (!given.empty()) return given;
  std::vector<std::size_t> heights;
  for (std::size_t h = 1; h <= most; h = h < 8 ? h + 1 : h + std::max<std::size_t>(2, h / 6)) heights.push_back(h);
  if (heights.back() != most) heights.push_back(most);
  return heights;
}

struct Errors {
  double eps = 0, eps_max = 0;
};

// The paper's metrics: eps_max = max |t - tau| / t, eps = (1/N) sqrt(sum ((t - tau)/t)^2).
Errors model_errors(const std::vector<Measured>& points, double Measured::*model) {
  Errors e;
  double sum = 0;
  for (const Measured& m : points) {
    const double r = (m.ns_per_node - m.*model) / m.ns_per_node;
    e.eps_max = std::max(e.eps_max, std::abs(r));
    sum += r * r;
  }
  e.eps = std::sqrt(sum) / static_cast<double>(points.size());
  return e;
}

// Every option that is text, parsed before anything is measured.
struct Parsed {
  std::vector<std::size_t> incore_extents, extents, heights;
  std::uint64_t budget = 0;
};

template <class T>
Parsed parse(const BenchPoissonOptions& o) {
  Parsed p;
  p.incore_extents = parse_extents(o.incore_size, 3, 3, "--incore-size");
  p.extents = parse_extents(o.size, 3, 3, "--size");
  p.budget = parse_bytes(o.device_mem);
  if (!o.heights.empty()) p.heights = parse_counts(o.heights, "--heights", "sweeps a pass");
  for (const auto& [option, e] : {std::pair{"--incore-size", &p.incore_extents}, {"--size", &p.extents}}) {
    require_poisson_grid(*e, "ziggurat bench poisson");
    check_host_memory(4 * checked_node_count(*e) * sizeof(T), std::string(option) + " " + extents_string(*e),
                      "give a smaller grid");
  }
  return p;
}

template <class T>
void run(const BenchPoissonOptions& o) {
  const Parsed parsed = parse<T>(o);
  Context context(o.device);
  require_device_precision(context.device(), o.precision);
  const DeviceInfo& device = context.device();
  const DeviceProfile profile = load_or_calibrate(context);
  const auto [kernel_copy, driver_copy] = measure_copy_bandwidth(context, std::min<std::size_t>(device.max_alloc_bytes / 4, 512u << 20), 3);
  const double copy = std::max(kernel_copy, driver_copy);
  const double streaming_ns = 3.0 * sizeof(T) / copy * 1e9;
  std::ostream& out = std::cout;
  out << "# Jacobi Poisson solver (" << type_name<T>() << ")\n\n"
      << "device: " << device.label() << ", driver " << device.driver_version << "; ziggurat " << version << "; "
      << utc_timestamp() << "\n"
      << "streaming limit: copy bandwidth " << number_text(copy * 1e-9) << " GB/s / " << 3 * sizeof(T)
      << " B per node = " << number_text(streaming_ns * 1e3) << " ps per node and sweep\n"
      << "bus: pinned upload " << number_text(profile.upload_pinned.bytes_per_s * 1e-9) << " GB/s, download "
      << number_text(profile.download_pinned.bytes_per_s * 1e-9) << " GB/s; tau_a of the Jacobi sweep "
      << number_text(profile.jacobi_tau_a_ns(sizeof(T)).value_or(0) * 1e3) << " ps per node\n\n";
  nlohmann::json report = {{"benchmark", "poisson"}, {"date", utc_timestamp()},
                           {"device", {{"name", device.name}, {"platform", device.platform_name}, {"driver", device.driver_version}}},
                           {"precision", type_name<T>()}, {"copy_bytes_per_s", copy}, {"streaming_ns", streaming_ns}};

  // 1. In core.
  const auto& incore_extents = parsed.incore_extents;
  Measured incore;
  {
    auto solver = make_solver<T>(context, incore_extents);
    PoissonPlanRequest request;
    request.mode = PoissonMode::incore;
    request.height = 50;
    measure(*solver, request, 50, profile);  // warm-up: builds, first touches
    incore = steady(*solver, request, 100, profile);
  }
  // 2. Out of core at the budget: the model's plan.
  const auto& extents = parsed.extents;
  const std::uint64_t budget = parsed.budget;
  auto solver = make_solver<T>(context, extents);
  const double grid_bytes = static_cast<double>(checked_node_count(extents) * sizeof(T));
  PoissonPlanRequest request;
  request.mode = PoissonMode::strip;
  request.device_memory = budget;
  const PlannedPoissonRun chosen = plan_poisson(*solver, PoissonStop{0, 1000000}, request, profile);
  const std::size_t h_model = chosen.predicted.layout.height;
  request.height = h_model;
  const Measured best_plan = steady(*solver, request, o.passes * h_model, profile);

  out << "Steady rates: the difference of runs of S and 4S sweeps (what a run pays once drops out); sweeps = 4S.\n\n"
      << "| run | grid | plan | sweeps | measured ps/node/sweep | model | ratio to in core | of streaming limit |\n"
      << "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: |\n";
  const auto row = [&](const std::string& what, const std::vector<std::size_t>& e, const std::string& plan, const Measured& m) {
    out << "| " << what << " | " << extents_string(e) << " | " << plan << " | " << m.sweeps << " | "
        << number_text(m.ns_per_node * 1e3) << " | " << number_text(m.predicted * 1e3) << " | "
        << number_text(incore.ns_per_node / m.ns_per_node, 3) << " | " << number_text(streaming_ns / m.ns_per_node, 3)
        << " |\n";
  };
  row("in core", incore_extents, "whole grid, test every 50", incore);
  row("out of core, model's plan", extents,
      "h=" + std::to_string(best_plan.h) + ", R=" + std::to_string(best_plan.R) + ", budget " + bytes_text(budget) + " (grid " +
          number_text(grid_bytes / static_cast<double>(budget), 3) + "x)",
      best_plan);
  out << "\n";
  report["incore"] = {{"size", incore_extents}, {"ns_per_node", incore.ns_per_node},
                      {"predicted_ns_per_node", incore.predicted}};
  report["out_of_core"] = {{"size", extents}, {"budget_bytes", budget}, {"h", best_plan.h}, {"R", best_plan.R},
                           {"ns_per_node", best_plan.ns_per_node}, {"predicted_ns_per_node", best_plan.predicted},
                           {"ratio_to_incore", incore.ns_per_node / best_plan.ns_per_node},
                           {"ratio_to_streaming", streaming_ns / best_plan.ns_per_node}};

  // 3. The height sweep, overlapped (what the solver runs) and serial (the paper's schedule, eq. 2).
  const std::size_t most = (chosen.predicted.buffer_extent + 2 * h_model - 1) / 4;  // R >= 4h keeps tasks sensible
  std::vector<Schedule> schedules;
  if (o.height_sweep) schedules.push_back(Schedule::overlapped);
  if (o.height_sweep && o.serial_sweep) schedules.push_back(Schedule::serial);
  for (const Schedule schedule : schedules) {
    request.schedule = schedule;
    std::vector<Measured> points;
    out << "## Height sweep, " << to_string(schedule) << " schedule, " << extents_string(extents) << ", budget "
        << bytes_text(budget) << "\n\n| h | R | measured ps/node/sweep | exact model | error |"
        << (schedule == Schedule::serial ? " eq. (2) | error |" : "") << "\n| ---: | ---: | ---: | ---: | ---: |"
        << (schedule == Schedule::serial ? " ---: | ---: |" : "") << "\n";
    for (const std::size_t h : sweep_heights(parsed.heights, std::max<std::size_t>(1, most))) {
      request.height = h;
      Measured m;
      try {
        m = measure(*solver, request, o.passes * h, profile);
      } catch (const InvalidArgument&) {
        break;  // the budget holds no taller pyramid
      }
      points.push_back(m);
      out << "| " << m.h << " | " << m.R << " | " << number_text(m.ns_per_node * 1e3) << " | " << number_text(m.predicted * 1e3)
          << " | " << number_text(100 * (m.predicted - m.ns_per_node) / m.ns_per_node, 2) << " % |";
      if (schedule == Schedule::serial) {
        out << " " << number_text(m.paper * 1e3) << " | " << number_text(100 * (m.paper - m.ns_per_node) / m.ns_per_node, 2)
            << " % |";
      }
      out << "\n" << std::flush;
    }
    if (points.empty()) continue;
    const Errors exact = model_errors(points, &Measured::predicted);
    const auto fastest = std::min_element(points.begin(), points.end(),
                                          [](const Measured& a, const Measured& b) { return a.ns_per_node < b.ns_per_node; });
    const auto modelled = std::min_element(points.begin(), points.end(),
                                           [](const Measured& a, const Measured& b) { return a.predicted < b.predicted; });
    out << "\nexact model: eps = " << number_text(exact.eps, 3) << ", eps_max = " << number_text(exact.eps_max, 3)
        << "; fastest measured h = " << fastest->h << "; the model's best h = " << modelled->h << " measures "
        << number_text(modelled->ns_per_node / fastest->ns_per_node, 4) << "x the fastest\n";
    nlohmann::json sweep = {{"schedule", to_string(schedule)}, {"eps", exact.eps}, {"eps_max", exact.eps_max},
                            {"fastest_h", fastest->h}, {"model_h", modelled->h},
                            {"model_h_over_fastest", modelled->ns_per_node / fastest->ns_per_node}};
    if (schedule == Schedule::serial) {
      const Errors paper = model_errors(points, &Measured::paper);
      out << "eq. (2): eps = " << number_text(paper.eps, 3) << ", eps_max = " << number_text(paper.eps_max, 3) << "\n";
      sweep["paper_eps"] = paper.eps;
      sweep["paper_eps_max"] = paper.eps_max;
    }
    out << "\n";
    nlohmann::json rows = nlohmann::json::array();
    for (const Measured& m : points) rows.push_back({{"h", m.h}, {"R", m.R}, {"ns", m.ns_per_node}, {"model", m.predicted}, {"paper", m.paper}});
    sweep["points"] = rows;
    report["sweeps"].push_back(sweep);
  }
  if (o.json) out << "```json\n" << app::json_output(report, 1) << "```\n";
}

}  // namespace

void add_bench_poisson_command(CLI::App& app) {
  auto o = std::make_shared<BenchPoissonOptions>();
  auto* command = app.add_subcommand("poisson", "Jacobi Poisson solver in core and out of core beside the streaming "
                                                "limit; height sweep against the exact model and the paper's eq. (2)");
  command->add_option("--incore-size", o->incore_size, "Grid of the in-core run")->capture_default_str();
  command->add_option("--size", o->size, "Grid of the out-of-core runs (at least 8x the budget)")->capture_default_str();
  add_deprecated_alias(command,
                       command->add_option("--device-memory", o->device_mem,
                                           "Device-memory budget of the out-of-core runs")
                           ->capture_default_str(),
                       "--device-mem", o->device_mem);
  command->add_option("--heights", o->heights, "Heights of the sweep, comma-separated (default: a spread over the valid range)");
  command->add_option("--passes", o->passes, "Passes per measured run")->capture_default_str()->check(whole_number(1));
  command->add_flag("!--no-height-sweep", o->height_sweep, "Only the in-core and the model's out-of-core runs");
  command->add_flag("!--no-serial", o->serial_sweep, "Skip the serial-schedule sweep");
  add_precision_option(command, o->precision, "f32 or f64");
  command->add_option("--device", o->device, "Device selection");
  command->add_flag("--json", o->json, "Also print the results as JSON");
  command->callback([o] { with_precision(o->precision, [&](auto zero) { run<decltype(zero)>(*o); }); });
}

}  // namespace ziggurat::cli
