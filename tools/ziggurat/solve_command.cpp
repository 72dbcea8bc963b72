// `ziggurat solve`: A x = b with a preconditioned Krylov method on one device, for a Matrix Market
// matrix or a generated seven-point block system; reports convergence, residuals and the time split.

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <limits>
#include <cmath>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "commands.hpp"
#include "file_options.hpp"
#include "format.hpp"
#include "option_aliases.hpp"
#include "plot.hpp"
#include "progress.hpp"
#include "program_main.hpp"
#include "ziggurat/app/generated_systems.hpp"
#include "ziggurat/app/json_output.hpp"
#include "ziggurat/app/matrix_inputs.hpp"
#include "ziggurat/app/text.hpp"
#include "ziggurat/app/reports.hpp"
#include "ziggurat/app/solver_settings.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/base/files.hpp"
#include "ziggurat/base/host_memory.hpp"
#include "ziggurat/io/matrix_market.hpp"
#include "ziggurat/io/npy.hpp"
#include "ziggurat/solver/krylov.hpp"

namespace ziggurat::cli {

namespace {

struct SolveOptions {
  FileOptions files;  // every file read or written, checked before any work
  std::string matrix, generate, system = "dominant", rhs = "ones", exact, out, history, plot;
  app::SolverSettings settings;  // the solver's options, checked and turned into SolverOptions once
  std::string block = "auto", precision = "f64";
  std::size_t vectors = 1;
  bool symmetric = false, unfused = false, json = false, quiet = false;
  ProgressOption progress;
  std::uint64_t seed = 1;
  std::string device;
};

void check_options(const SolveOptions& o) {
  if (o.matrix.empty() == o.generate.empty()) {
    throw InvalidArgument("give --matrix A.mtx or --generate NXxNYxNZ (a seven-point block system), one of them");
  }
  if (o.symmetric && o.generate.empty()) throw InvalidArgument("--symmetric is for --generate");
  app::check_system_name(o.system, "--system");
  if (!o.exact.empty() && o.exact != "random") throw InvalidArgument("--exact takes random, not '" + o.exact + "'");
  if (!o.exact.empty() && o.rhs != "ones") throw InvalidArgument("give --rhs or --exact random, not both");
  if (!o.generate.empty() && o.block == "auto" && !app::is_model_problem(o.system))
    throw InvalidArgument("--generate --system " + o.system + " needs --block b (1 to 16)");
  app::check_solver_settings(o.settings);
}

std::size_t block_size(const std::string& text) {
  const bool digits = !text.empty() && text.size() <= 2 &&
                      std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); });
  if (!digits || std::stoul(text) < 1 || std::stoul(text) > 16)
    throw InvalidArgument("--block is 1 to 16 or auto, not '" + text + "'");
  return std::stoul(text);
}

template <class T>
sparse::Bsr<T> load_matrix(const SolveOptions& o, std::string& source) {
  if (!o.generate.empty()) {
    const std::vector<std::size_t> n = parse_extents(o.generate, 3, 3, "--generate");
    const bool model = app::is_model_problem(o.system);
    const std::size_t given = o.block == "auto" ? 0 : block_size(o.block);
    const std::size_t b = model ? sparse::model_problem_block_size(sparse::parse_model_problem(o.system)) : given;
    // The blocks of a block row (twice: the system and its solver's copy) and a few vectors;
    // elasticity's grid counts bricks, one node more a side.
    const double couplings = o.system == "laplace27" || o.system == "elasticity" ? 27 : 7;
    const double extra = o.system == "elasticity" ? 1 : 0;
    const double rows = (double(n[0]) + extra) * (double(n[1]) + extra) * (double(n[2]) + extra) * double(b);
    const double bytes = rows * (2 * couplings * double(b) * sizeof(T) + 6 * double(o.vectors) * sizeof(T));
    check_host_memory(bytes < 1.8e19 ? std::uint64_t(bytes) : std::numeric_limits<std::uint64_t>::max(),
                      "--generate " + o.generate + " --system " + o.system, "give a smaller grid");
    sparse::Bsr<T> a = app::generated_system<T>(o.system, n, given, o.seed, "--system");
    source = (o.system == "convection" ? "convection-diffusion " : o.system == "dominant" ? "seven-point " : o.system + " ") +
             o.generate + (o.symmetric ? " (symmetric part)" : model ? "" : " (nonsymmetric)");
    return o.symmetric ? sparse::symmetric_part(a) : a;
  }
  source = o.matrix;
  // b, x, the solver's work vectors and x* at least, before a declared 4e9 x 4e9 matrix is read.
  const std::vector<std::size_t> rhs = o.rhs == "ones" ? std::vector<std::size_t>{} : read_npy_header(o.rhs).shape;
  app::check_matrix_memory("--matrix", o.matrix, 6 * (rhs.size() == 2 ? rhs[1] : o.vectors), sizeof(T));
  const sparse::Csr<T> csr = sparse::read_matrix_market<T>(o.matrix).matrix;
  return sparse::to_bsr(csr, o.block == "auto" ? sparse::propose_block_size(csr) : block_size(o.block));
}

// b from --rhs (a .npy (n) or (n, k), or ones) or b = A x* for a random x* (--exact random).
template <class T>
std::vector<T> right_hand_side(const SolveOptions& o, const sparse::Bsr<T>& a, std::size_t& k, std::vector<T>& exact) {
  k = o.vectors;
  if (o.exact == "random") {
    exact.resize(a.rows * k);
    std::mt19937_64 random(o.seed + 1);
    std::uniform_real_distribution<double> value(-1, 1);
    for (T& v : exact) v = static_cast<T>(value(random));
    return sparse::multiply(a, exact, k);
  }
  if (o.rhs == "ones") return std::vector<T>(a.rows * k, T(1));
  std::vector<std::size_t> shape;
  std::vector<T> b = read_npy<T>(o.rhs, shape);
  if (shape.empty() || shape.size() > 2 || shape[0] != a.rows) {
    throw InvalidArgument("--rhs " + o.rhs + " must have shape (" + std::to_string(a.rows) + ") or (" +
                          std::to_string(a.rows) + ", k): the matrix has " + std::to_string(a.rows) + " rows");
  }
  k = shape.size() == 2 ? shape[1] : 1;
  return b;
}

template <class T>
double error_against(const std::vector<T>& x, const std::vector<T>& exact) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    num += (double(x[i]) - double(exact[i])) * (double(x[i]) - double(exact[i]));
    den += double(exact[i]) * double(exact[i]);
  }
  return std::sqrt(num / den);
}

void write_history(const std::string& path, const sparse::SolveReport& report) {
  std::ostringstream text;
  text << "iteration";
  for (std::size_t j = 0; j < report.vectors.size(); ++j) text << ",relative_residual_" << j;
  text << "\n";
  std::size_t longest = 0;
  for (const auto& v : report.vectors) longest = std::max(longest, v.history.size());
  for (std::size_t i = 0; i < longest; ++i) {
    text << i;
    for (const auto& v : report.vectors) text << "," << (i < v.history.size() ? number_text(v.history[i], 6) : "");
    text << "\n";
  }
  write_file_atomically(path, text.str());
}

void plot_history(const std::string& path, const sparse::SolveReport& report, const std::string& title) {
  std::vector<Series> series;
  for (std::size_t j = 0; j < report.vectors.size(); ++j) {
    Series s{report.vectors.size() == 1 ? "||r|| / ||b||" : "vector " + std::to_string(j), {}, {}};
    for (std::size_t i = 0; i < report.vectors[j].history.size(); ++i) {
      s.x.push_back(double(i));
      s.y.push_back(-std::log10(std::max(report.vectors[j].history[i], 1e-300)));  // digits gained
    }
    series.push_back(std::move(s));
  }
  plot_lines(path, title, "iteration", "-log10 ||r|| / ||b||", series);
}

template <class T>
void run(const SolveOptions& o) {
  check_options(o);
  std::string source;
  const sparse::Bsr<T> a = load_matrix<T>(o, source);
  std::size_t k = 1;
  std::vector<T> exact;
  const std::vector<T> b = right_hand_side<T>(o, a, k, exact);
  Context context(o.device);
  require_device_precision(context.device(), o.precision);
  app::SolverSettings settings = o.settings;
  settings.fused = !o.unfused;
  const app::SolverSettings& s = settings;
  sparse::SolverOptions options = app::solver_options(settings, context);
  ProgressLines lines(o.progress.enabled(o.quiet, o.json));
  if (lines.enabled()) {
    options.progress = [&lines](const sparse::SolveProgress& p) {
      lines.show("solve: iteration " + std::to_string(p.iteration) + ", ||r|| / ||b|| = " +
                 number_text(p.relative_residual));
    };
  }
  sparse::KrylovSolver<T> solver(context, a, k, options);
  std::vector<T> x;
  const sparse::SolveReport report = solver.solve(b, x);
  lines.finish();
  if (!o.out.empty()) {
    write_npy(o.out, x.data(), k == 1 ? std::vector<std::size_t>{a.rows} : std::vector<std::size_t>{a.rows, k});
  }
  if (!o.history.empty()) write_history(o.history, report);
  if (!o.plot.empty()) plot_history(o.plot, report, s.method + " + " + s.preconditioner + " on " + source);
  const double error = exact.empty() ? std::nan("") : error_against(x, exact);
  nlohmann::json summary = {
      {"device", context.device().name},
      {"driver", context.device().driver_version},
      {"matrix", source},
      {"rows", a.rows},
      {"block_size", a.block_size},
      {"blocks", a.blocks()},
      {"k", k},
      {"precision", o.precision},
      {"method", s.method},
      {"preconditioner", s.preconditioner},
  };
  summary.update(app::to_json(report, false));  // the histories go to --history
  if (!exact.empty()) summary["error"] = error;
  if (o.json) {
    std::cout << app::json_output(summary);
  } else {
    const sparse::SolveTimes& t = report.times;
    std::cout << "device      " << context.device().label() << "\n"
              << "system      " << source << ": " << a.rows << " rows, b = " << a.block_size << ", " << a.blocks()
              << " blocks, k = " << k << ", " << (sizeof(T) == 4 ? "float" : "double") << "\n"
              << "method      " << s.method << (s.method == "gmres" ? "(" + std::to_string(s.restart) + ")" : "")
              << " + " << (s.preconditioner == "ilu2" && s.method == "cg" ? "ic2" : s.preconditioner)
              << (s.preconditioner == "ilu2" ? "(" + number_text(s.threshold) + ")" : "")
              << (s.preconditioner == "ilu0" || s.preconditioner == "ilu2"
                      ? " (" + report.ordering + ", " + std::to_string(report.lower_levels) + " + " +
                            std::to_string(report.upper_levels) + " levels, " + report.sweep + " sweeps" +
                            (report.sweep == "jacobi" ? " (" + std::to_string(report.lower_jacobi_sweeps) + " + " +
                                                            std::to_string(report.upper_jacobi_sweeps) + " a solve)"
                                                      : "") +
                            ", fill " +
                            number_text(report.fill) +
                            (report.matched_rows ? ", rows matched" : "") +
                            (report.replaced_pivots > 0 ? ", " + std::to_string(report.replaced_pivots) +
                                                              " tiny pivots replaced"
                                                        : "") +
                            ")"
                      : "")
              << "\n"
              << "result      " << report.reason << "\n"
              << "iterations  " << report.iterations << ", ||b - A x|| / ||b|| = " << number_text(report.relative_residual)
              << (exact.empty() ? "" : ", ||x - x*|| / ||x*|| = " + number_text(error)) << "\n"
              << "time        setup " << number_text(t.setup * 1e3) << " ms (ordering " << number_text(t.ordering * 1e3)
              << " ms, preconditioner " << number_text(t.preconditioner_setup * 1e3) << " ms, of which factorisation "
              << (s.preconditioner == "ilu2" ? number_text(t.host_factorization * 1e3) + " ms on the host"
                                      : number_text(t.factorization * 1e3) + " ms on the device")
              << "), solve " << number_text(t.solve * 1e3) << " ms\n";
    if (t.device_timed) {
      std::cout << "device time products " << number_text(t.products * 1e3) << " ms, preconditioner "
                << number_text(t.preconditioner * 1e3) << " ms, vector operations " << number_text(t.vector_ops * 1e3)
                << " ms\n";
    }
  }
  if (!report.converged) throw ResultNotReached{};  // the report is printed; scripts see the failure
}

}  // namespace

void add_solve_command(CLI::App& app) {
  auto options = std::make_shared<SolveOptions>();
  auto* command = app.add_subcommand("solve", "A x = b with a preconditioned Krylov method (cg, bicgstab, gmres) on "
                                              "the device; block ILU(0) factorised there, or ILU2 (IC2 for cg) on "
                                              "the host's cores");
  options->files.add_input(command, "--matrix", options->matrix, "A, a Matrix Market coordinate file (square)");
  command->add_option("--generate", options->generate,
                      "Instead of --matrix: a generated system (--system) on an NXxNYxNZ grid (of blocks of --block b "
                      "for dominant and convection; of bricks for elasticity)");
  command->add_option("--system", options->system,
                      "--generate's system: dominant (random blocks, strongly diagonally dominant: few iterations, "
                      "nonsymmetric unless --symmetric), convection (convection-diffusion, weakly dominant: iterations "
                      "grow with the grid), or a model problem: laplace7, laplace27, anisotropic, upwind (scalar) or "
                      "elasticity (blocks of 3)")
      ->capture_default_str();
  command->add_flag("--symmetric", options->symmetric, "--generate its symmetric part (SPD, for cg)");
  options->files.add_input(command, "--rhs", options->rhs, "b: a .npy array (n) or (n, k), or ones", {"ones"})
      ->capture_default_str();
  command->add_option("--exact", options->exact, "random: b = A x* for a random x*, and report the error against x*");
  command->add_option("--vectors", options->vectors, "k right-hand sides with --rhs ones or --exact random (cg, bicgstab)")
      ->capture_default_str()
      ->check(whole_number(1));
  command->add_option("--method", options->settings.method, "cg, bicgstab or gmres")->capture_default_str();
  command->add_option("--restart", options->settings.restart, "GMRES(m): m")->capture_default_str()->check(whole_number(1));
  add_deprecated_alias(command,
                       command->add_option("--preconditioner", options->settings.preconditioner,
                                           "none, jacobi, block-jacobi, ilu0 or ilu2 (IC2 with cg)")
                           ->capture_default_str(),
                       "--precond", options->settings.preconditioner);
  command->add_option("--threshold", options->settings.threshold, "ILU2's drop threshold tau: blocks of scaled norm >= tau kept, "
                      "down to tau^2 used while factorising; 0 is the complete LU")
      ->capture_default_str()
      ->check(non_negative_number());
  command->add_option("--static-pivoting", options->settings.static_pivoting,
                      "ILU2: auto (on with bicgstab and gmres, off with cg), on (rows matched to large diagonal "
                      "blocks, tiny pivots replaced) or off (a tiny pivot is an error)")
      ->capture_default_str();
  command->add_option("--ordering", options->settings.ordering,
                      "ILU(0)/ILU2 ordering: auto (the solver's rule: for ILU(0) natural on a CPU device of at most " +
                          std::to_string(sparse::kSequentialSweepCores) +
                          " compute units; else, for a diagonally dominant scalar system with --sweep auto, natural "
                          "with jacobi sweeps; else colours for blocks of 1 to 3 unless A's skewness ||A - A^T|| / "
                          "||A + A^T|| is above " + app::number_text(sparse::kNaturalOrderSkewness) +
                          " (natural); nested-dissection for ILU2; else natural), natural, levels, colours, "
                          "block-colours or nested-dissection (METIS)")
      ->capture_default_str();
  command->add_option("--aggregate", options->settings.aggregate, "block-colours: block rows per aggregate")
      ->capture_default_str()
      ->check(whole_number(1));
  command->add_option("--sweep", options->settings.sweep,
                      "ILU(0)/ILU2 triangular solves: levels (a launch per level), sync-free (one launch, each "
                      "level's rows wait for the earlier levels), sequential (one work-item a vector walks the rows: "
                      "CPU devices), jacobi (approximate: --jacobi-sweeps sweeps over every row at once) or auto "
                      "(above " + std::to_string(sparse::kSyncFreeLevels) +
                          " levels sequential on a CPU device of at most " +
                          std::to_string(sparse::kSequentialSweepCores) +
                          " compute units, else sync-free; with --ordering auto, jacobi where that rule says)")
      ->capture_default_str();
  command->add_option("--jacobi-sweeps", options->settings.jacobi_sweeps,
                      "--sweep jacobi: Jacobi sweeps of each triangular solve after its first iterate (as many as "
                      "the levels less one solve exactly), or auto: chosen per triangle from its factor, the fewest "
                      "that leave at most " + app::number_text(sparse::kJacobiSweepResidue) +
                          " of the error its contraction bounds (1 to " +
                          std::to_string(sparse::kMostChosenJacobiSweeps) + ")")
      ->capture_default_str();
  command->add_option("--block", options->block, "Block size b, 1 to 16, or auto (the least fill)")->capture_default_str();
  command->add_option("--kernel", options->settings.kernel, "Block CSR kernel of the products: auto (the fastest for this kind of "
                      "matrix on this device, measured once and recorded), rule (multirow by the rule, nothing measured), "
                      "or a kernel as `ziggurat spmm` names it (row, group, multirow/4, multirow/1/v8)")
      ->capture_default_str();
  command->add_option("--shift", options->settings.shift, "Diagonal shift of ILU(0) / ILU2 / Jacobi: a_rr += shift * max_j |a_rj|")
      ->capture_default_str()
      ->check(finite_number());
  auto* rtol = command->add_option("--rtol", options->settings.rtol, "Stop at ||b - A x|| / ||b|| below this (or "
                                    "below --atol)")
                   ->capture_default_str()
                   ->check(non_negative_number());
  add_deprecated_alias(command, rtol, "--tol", options->settings.rtol)->check(non_negative_number());
  command->add_option("--atol", options->settings.atol, "Stop at ||b - A x|| below this (or below --rtol: converged "
                      "when ||b - A x|| < max(rtol ||b||, atol))")
      ->capture_default_str()
      ->check(non_negative_number());
  auto* limit = command->add_option("--max-iterations", options->settings.max_iterations,
                                    "Iteration limit (GMRES: inner iterations)")
                    ->capture_default_str()
                    ->check(whole_number(1));
  add_deprecated_alias(command, limit, "--max-iter", options->settings.max_iterations)->check(whole_number(1));
  add_precision_option(command, options->precision, "f32 (float) or f64 (double, the default)");
  options->files.add_output(command, "--out", options->out, "Write x here (.npy, atomically)");
  options->files.add_output(command, "--history", options->history, "Write the residual history here (CSV)");
  options->files.add_output(command, "--plot", options->plot, "Plot the residual history here (PNG)");
  command->add_option("--seed", options->seed, "Seed of --generate and --exact random")
      ->capture_default_str()
      ->check(whole_number(0));
  command->add_flag("--unfused", options->unfused, "Vector operations unfused (to measure the fused ones against)");
  command->add_option("--device", options->device, "Device selection (see `ziggurat devices`)");
  command->add_flag("--json", options->json, "Print a machine-readable summary");
  command->add_flag("--quiet", options->quiet, "No progress on stderr");
  options->progress.add(command);
  command->callback([options] {
    options->files.check();
    with_precision(options->precision, [&](auto zero) { run<decltype(zero)>(*options); });
  });
}

}  // namespace ziggurat::cli
