// `ziggurat poisson`: the stationary 3D heat (Poisson) equation -Laplace(u) = f on an N x N x L grid
// held in host memory, solved by Jacobi sweeps on the device: in core when it fits, else in
// pyramid passes whose height and task size the cost model (eq. (2) of the method notes, exactly)
// chooses from the device's measured profile.

#include <cmath>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "commands.hpp"
#include "file_options.hpp"
#include "format.hpp"
#include "option_aliases.hpp"
#include "picture.hpp"
#include "progress.hpp"
#include "program_main.hpp"
#include "ziggurat/app/json_output.hpp"
#include "ziggurat/app/reports.hpp"
#include "ziggurat/app/run_profile.hpp"
#include "vtk_output.hpp"
#include "ziggurat/automatic/poisson.hpp"
#include "ziggurat/base/context.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/base/host_memory.hpp"
#include "ziggurat/base/precision.hpp"
#include "ziggurat/io/npy.hpp"
#include "ziggurat/ops/poisson_scheme.hpp"

namespace ziggurat::cli {

namespace {

struct PoissonOptions {
  FileOptions files;  // every file read or written, checked before any work
  std::string size;
  std::string rhs;
  std::string problem;
  std::string boundary;
  double spacing = 0;  // 0: 1 / (W - 1)
  double tolerance = 1e-6;
  std::size_t max_sweeps = 10000;
  std::string mode = "auto";
  std::size_t height = 0;  // 0: the model's choice
  std::string depth;       // sweeps a launch: N, or auto (tuned); empty: the device's default
  std::string device_mem;
  std::string precision;  // empty: the --rhs array's type, else f32
  std::string device;
  std::string out;
  std::string png;
  std::string vtk;
  std::string profile;
  bool serial = false;
  bool quiet = false;
  ProgressOption progress;
  bool json = false;
};

std::vector<std::size_t> npy_extents(const std::string& path) {
  const auto shape = read_npy_header(path).shape;
  return {shape.rbegin(), shape.rend()};
}

// The grid's extents from --size, --rhs and --boundary, which must agree; checked before any large
// allocation.
std::vector<std::size_t> grid_extents(const PoissonOptions& o) {
  std::optional<std::vector<std::size_t>> extents;
  std::string from;
  const auto take = [&](const std::vector<std::size_t>& e, const std::string& what) {
    if (extents && *extents != e) {
      throw InvalidArgument(what + " is " + extents_string(e) + " but " + from + " is " + extents_string(*extents) +
                            " (an array of shape (L, N, N) is N x N x L): give them the same grid");
    }
    extents = e;
    from = what;
  };
  if (!o.size.empty()) take(parse_extents(o.size, 3, 3), "--size");
  if (!o.rhs.empty()) take(npy_extents(o.rhs), "--rhs " + o.rhs);
  if (!o.boundary.empty()) take(npy_extents(o.boundary), "--boundary " + o.boundary);
  if (!extents) throw InvalidArgument("give the grid: --size NxNxL, or an --rhs or --boundary array");
  require_poisson_grid(*extents, "ziggurat poisson");
  return *extents;
}

PoissonPlanRequest plan_request(const PoissonOptions& o) {
  PoissonPlanRequest request;
  try {
    request.mode = parse_poisson_mode(o.mode);
  } catch (const InvalidArgument&) {
    throw InvalidArgument("--mode is auto, incore or strip, not '" + o.mode + "'");
  }
  if (o.height > 0) request.height = o.height;
  if (!o.depth.empty()) request.depth = parse_auto_count(o.depth, "--depth", "sweeps a launch");
  if (!o.device_mem.empty()) request.device_memory = parse_bytes(o.device_mem);
  request.schedule = o.serial ? Schedule::serial : Schedule::overlapped;
  return request;
}

// "poisson: sweeps 640/10000, update 3.2e-05, ETA 4.1 s".
std::string progress_text(const PoissonProgress& p) {
  return "poisson: sweeps " + std::to_string(p.sweeps_done) + "/" + std::to_string(p.max_sweeps) + ", update " +
         number_text(p.update, 3) + ", ETA " + number_text(p.eta_seconds, 2) + " s";
}

std::string plan_text(const PlannedPoissonRun& planned, const PoissonRun& run) {
  const model::Plan& plan = planned.predicted;
  if (plan.layout.decomposition == Decomposition::incore) {
    return "incore: the whole grid on the device, a stopping test every " +
           std::to_string(run.sweeps > 0 && run.passes > 0 ? (run.sweeps + run.passes - 1) / run.passes : 0) + " sweeps";
  }
  return "strip pyramid, h = " + std::to_string(plan.layout.height) + " sweeps a pass, blocks of R = " +
         std::to_string(plan.buffer_extent) + " planes owning " + std::to_string(plan.layout.task_extent) + ", " +
         std::to_string(plan.prediction.tasks) + " tasks a pass, " + to_string(planned.schedule);
}

template <class T>
struct Inputs {
  Grid<T> initial, rhs;
  std::optional<Grid<T>> solution;  // --problem manufactured
};

template <class T>
Inputs<T> load_inputs(const PoissonOptions& o, const std::vector<std::size_t>& extents, double spacing) {
  Inputs<T> in;
  if (o.problem == "manufactured") {
    ManufacturedPoisson<T> m = manufactured_poisson<T>(extents, spacing);
    in.rhs = std::move(m.rhs);
    in.initial = o.boundary.empty() ? std::move(m.initial) : load_grid<T>(o.boundary);
    in.solution = std::move(m.solution);
  } else {
    in.rhs = load_grid<T>(o.rhs);
    in.initial = o.boundary.empty() ? Grid<T>(extents, T(0)) : load_grid<T>(o.boundary);
  }
  return in;
}

template <class T>
double max_difference(const T* a, const Grid<T>& b) {
  double most = 0;
  for (std::size_t i = 0; i < b.size(); ++i) most = std::max(most, std::abs(double(a[i]) - double(b.data()[i])));
  return most;
}

template <class T>
void run(const PoissonOptions& o) {
  if (!o.rhs.empty() && !o.problem.empty())
    throw InvalidArgument("give one right-hand side: --rhs f.npy or --problem manufactured, not both");
  if (o.rhs.empty() && o.problem.empty())
    throw InvalidArgument("give the right-hand side: --rhs f.npy or --problem manufactured");
  if (!o.problem.empty() && o.problem != "manufactured") {
    throw InvalidArgument("--problem is 'manufactured' (u* known, f = -Laplace_h u*), not '" + o.problem + "'");
  }
  PoissonPlanRequest request = plan_request(o);
  const auto extents = grid_extents(o);
  check_vtk_name(o.vtk, false);
  const double spacing = o.spacing > 0 ? o.spacing : 1.0 / static_cast<double>(extents[0] - 1);
  jacobi_coefficients<T>(spacing);
  // f and the initial field here, two layers and f in the solver (and u* for a manufactured problem).
  check_host_memory((o.problem.empty() ? 5 : 6) * checked_node_count(extents) * sizeof(T),
                    "a " + extents_string(extents) + " Poisson problem in " + type_name<T>());
  Context context(o.device);
  require_device_precision(context.device(), o.precision);
  if (o.depth.empty()) request.depth = default_blocking_depth(context.device());  // tuned on GPUs
  const bool progress = o.progress.enabled(o.quiet, o.json);
  const app::RunProfile planned_with = app::run_profile(context, o.profile, progress, ProfileNeeds::jacobi(sizeof(T)));
  const DeviceProfile& profile = planned_with.profile;

  std::optional<Grid<T>> solution;
  std::unique_ptr<PoissonSolver<T>> solver;
  {
    Inputs<T> in = load_inputs<T>(o, extents, spacing);
    solution = std::move(in.solution);
    solver = std::make_unique<PoissonSolver<T>>(context, in.initial, in.rhs, spacing);
  }
  PoissonRunOptions run_options;
  ProgressLines lines(progress);
  std::string last;  // the last state, printed whatever the interval
  if (progress) run_options.progress = [&](const PoissonProgress& p) { lines.show(last = progress_text(p)); };
  const PoissonStop stop{o.tolerance, o.max_sweeps};
  const PoissonOutcome outcome = solve_poisson(*solver, stop, request, profile, run_options);
  const PoissonRun& result = outcome.run;
  if (!last.empty()) lines.show(last, true);
  lines.finish();
  // The solution is read where the solver holds it: the grid may fill most of host memory.
  if (!o.out.empty()) write_npy(o.out, solver->data(), std::vector<std::size_t>(extents.rbegin(), extents.rend()));
  if (!o.vtk.empty()) app::write_field_vtk(o.vtk, solver->data(), extents, "u");
  if (!o.png.empty()) write_field_png(o.png, solver->data(), extents);

  const model::Plan& plan = outcome.planned.predicted;
  const double interior = model::Problem{extents, 1}.interior_nodes();
  const double predicted_s = plan.prediction.ns_per_node * 1e-9 * interior * static_cast<double>(result.sweeps);
  const double residual = solver->residual();
  nlohmann::json summary = {
      {"device", context.device().name},
      {"platform", context.device().platform_name},
      {"driver", context.device().driver_version},
      {"size", extents},
      {"precision", sizeof(T) == 4 ? "f32" : "f64"},
      {"spacing", spacing},
      {"problem", o.problem.empty() ? o.rhs : o.problem},
      {"tolerance", o.tolerance},
      {"max_sweeps", o.max_sweeps},
      {"residual", residual},
  };
  summary.update(app::to_json(outcome, o.mode, extents, planned_with.origin));
  if (solution) summary["max_error_vs_exact"] = max_difference(solver->data(), *solution);
  if (!o.out.empty()) summary["output"] = o.out;
  if (!o.vtk.empty()) summary["vtk"] = o.vtk;
  if (!o.png.empty()) summary["picture"] = o.png;
  if (o.json) {
    std::cout << app::json_output(summary);
  } else {
    std::cout << "device      " << context.device().label() << "\n"
              << "grid        " << extents_string(extents) << " " << type_name<T>() << ", h = " << spacing << ", f: "
              << (o.problem.empty() ? o.rhs : "manufactured (u* known)") << "\n"
              << "plan        " << plan_text(outcome.planned, result) << "\n"
              << "memory      device budget " << bytes_text(outcome.planned.budget_bytes) << ", buffers "
              << bytes_text(result.device_bytes) << "; host memory " << (result.pinned_host_memory ? "pinned" : "pageable")
              << "\n"
              << "result      " << to_string(result.reason) << " after " << result.sweeps << " sweeps; last update "
              << number_text(result.update, 3) << " (tolerance " << o.tolerance << "), residual max|f + Laplace_h u| "
              << number_text(residual, 3) << "\n"
              << "time        " << number_text(result.seconds) << " s measured, " << number_text(predicted_s)
              << " s predicted\n"
              << "throughput  " << number_text(result.ns_per_node > 0 ? 1 / result.ns_per_node : 0)
              << " Gnode-sweeps/s, " << number_text(result.ns_per_node) << " ns per node and sweep\n";
    if (solution) std::cout << "check       max |u - u*| = " << number_text(summary["max_error_vs_exact"].get<double>(), 3) << "\n";
    if (!o.png.empty()) std::cout << "picture     " << o.png << " (middle plane)\n";
    if (!o.out.empty()) std::cout << "output      " << o.out << "\n";
  }
  // Diverged, or stopped by --max-sweeps before --tol: the report says so, the status too.
  if (result.reason == PoissonReason::diverged || (result.reason == PoissonReason::max_sweeps && o.tolerance > 0))
    throw ResultNotReached{};
}

}  // namespace

void add_poisson_command(CLI::App& app) {
  auto options = std::make_shared<PoissonOptions>();
  auto* command = app.add_subcommand("poisson", "Solve the stationary 3D heat (Poisson) equation -Laplace(u) = f "
                                                "(Dirichlet boundary) by Jacobi sweeps, in pyramid passes where the "
                                                "grid does not fit the device");
  command->add_option("--size", options->size, "Grid nodes WxHxD including the boundary, e.g. 400x400x20000 "
                                               "(default: from --rhs or --boundary)");
  options->files.add_input(command, "--rhs", options->rhs, "Right-hand side f, a .npy float32/float64 array of shape (D, H, W)");
  command->add_option("--problem", options->problem, "manufactured: u* = sin(0.3x)cos(0.2y) + sin(0.1z + 0.5) in grid "
                                                     "coordinates, f = -Laplace_h u*; reports max |u - u*|");
  options->files.add_input(command, "--boundary", options->boundary, "Dirichlet values on the boundary and the first guess inside "
                                                       "(.npy, shape (D, H, W)); default: zero (manufactured: u* on the "
                                                       "boundary)");
  command->add_option("--spacing", options->spacing, "Grid spacing h (default 1/(W-1))")->check(positive_number());
  command->add_option("--tol", options->tolerance, "Stop when one sweep changes no node by this much (0: run "
                                                   "--max-sweeps sweeps)")
      ->capture_default_str()
      ->check(non_negative_number());
  command->add_option("--max-sweeps", options->max_sweeps, "The most sweeps")->capture_default_str()->check(whole_number(1));
  command->add_option("--mode", options->mode, "auto, incore or strip (pyramid passes)")->capture_default_str();
  command->add_option("--depth", options->depth, "Sweeps a kernel launch runs with its tile on chip (the same bits as "
                                                 "single sweeps), or auto: tuned for the device (measured once, then "
                                                 "read); default auto on GPUs, 1 elsewhere");
  command->add_option("--height", options->height, "Sweeps per pass (in core: between stopping tests); default: the "
                                                   "model's choice (in core 32)")
      ->check(whole_number(1));
  add_deprecated_alias(command,
                       command->add_option("--device-memory", options->device_mem, "Device memory the run may use, e.g. 512MiB "
                                                           "(default: 90% of the device's)"),
                       "--device-mem", options->device_mem);
  add_precision_option(command, options->precision, "f32 (float) or f64 (double); default: the --rhs array's type, else f32");
  command->add_option("--device", options->device, "Device selection (see `ziggurat devices`); default: ZIGGURAT_DEVICE, else the first GPU");
  options->files.add_output(command, "--out", options->out, "Write the solution here (.npy, shape (D, H, W); written atomically)");
  options->files.add_output(command, "--png", options->png, "Draw the solution's middle plane here, colour-mapped");
  add_vtk_option(command, options->files, options->vtk);
  options->files.add_input(command, "--profile", options->profile, "Plan with this device profile (`ziggurat calibrate --json`)");
  command->add_flag("--serial", options->serial, "Serial schedule (the paper's): no overlap of transfers and sweeps");
  command->add_flag("--quiet", options->quiet, "No progress on stderr");
  options->progress.add(command);
  command->add_flag("--json", options->json, "Print a machine-readable summary");
  command->callback([options] {
    options->files.check();
    options->precision = precision_or_input_type(options->precision, options->rhs);
    with_precision(options->precision, [&](auto zero) { run<decltype(zero)>(*options); });
  });
}

}  // namespace ziggurat::cli
