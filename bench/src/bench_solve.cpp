// `ziggurat-bench solve`: ziggurat's preconditioned Krylov solvers beside their peers in one run,
// on the same systems: every ordering and preconditioner of ziggurat, ViennaCL's solvers on the
// same OpenCL device, cuSPARSE (through CuPy) on an NVIDIA GPU and SciPy on the CPU
// (solve_peers.hpp), and the lower bound of one BiCGStab + ILU(0) iteration (the bytes its
// products, triangular solves and vector operations must move over the measured copy bandwidth).
// Every solve is judged by its true residual and its error against the known solution, computed
// here on the host in double from the x it returns.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <iostream>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>

#include "bench.hpp"
#include "format.hpp"
#include "option_aliases.hpp"
#include "solve_peers.hpp"
#include "ziggurat/base/timestamp.hpp"
#include "ziggurat/app/generated_systems.hpp"
#include "ziggurat/app/json_output.hpp"
#include "ziggurat/app/matrix_inputs.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/base/host_memory.hpp"
#include "ziggurat/base/version.hpp"
#include "ziggurat/io/matrix_market.hpp"
#include "ziggurat/matrix/grid.hpp"
#include "ziggurat/solver/krylov.hpp"
#include "ziggurat/tuning/calibration.hpp"

namespace ziggurat::cli {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// One solve of the table (ziggurat's or a peer's), or the bound of a system (solver "bound").
struct SolveRow {
  std::string system, precision, solver, config, status, note;
  bool ran = true;
  std::size_t iterations = 0;
  double setup_s = kNaN, ordering_s = kNaN, factorization_s = kNaN, solve_s = kNaN;
  double device_per_iteration_s = kNaN;  ///< ziggurat: products + preconditioner + vector operations
  double residual = kNaN, error = kNaN;
  double time_to_solution() const { return setup_s + solve_s; }
};

// A system of the benchmark: the block matrix ziggurat runs, its CSR (the same pattern, for the
// peers), a known solution and b = A x*.
template <class T>
struct BenchSystem {
  std::string name;
  sparse::Bsr<T> bsr;
  sparse::Csr<T> csr;
  std::vector<T> exact, b;
};

template <class T>
BenchSystem<T> make_system(std::string name, sparse::Bsr<T> bsr) {
  BenchSystem<T> s;
  s.name = std::move(name);
  s.bsr = std::move(bsr);
  s.csr = sparse::to_csr(s.bsr);
  s.exact.resize(s.bsr.rows);
  std::mt19937_64 random(2);
  std::uniform_real_distribution<double> value(-1, 1);
  for (T& v : s.exact) v = static_cast<T>(value(random));
  s.b = sparse::multiply(s.bsr, s.exact, 1);
  return s;
}

// Every option that is text, parsed (and the matrix files' sizes checked) before anything is measured.
struct Parsed {
  std::vector<std::size_t> grid;  // empty: by device type
  std::vector<std::string> systems, precisions;
  std::vector<std::size_t> blocks;
  std::vector<std::filesystem::path> files;
};

Parsed parse(const BenchSolveOptions& options) {
  Parsed p;
  if (!options.grid.empty()) p.grid = parse_extents(options.grid, 3, 3, "--grid");
  for (const std::string& kind : split(options.systems.empty() ? "convection,dominant" : options.systems, ',')) {
    app::check_system_name(kind, "--systems");
    p.systems.push_back(kind);
  }
  p.blocks = parse_counts(options.blocks, "--blocks", "block sizes 1 to 16");
  for (const std::size_t b : p.blocks)
    if (b > 16) throw InvalidArgument("--blocks takes block sizes 1 to 16, not " + std::to_string(b));
  p.files = app::matrix_files(options.matrices, "--matrices", 8);
  p.precisions = parse_precisions(options.precision);
  if (!p.grid.empty()) {  // seven blocks a block row, twice, and the solvers' vectors
    const double rows = double(p.grid[0]) * double(p.grid[1]) * double(p.grid[2]);
    const double b = double(*std::max_element(p.blocks.begin(), p.blocks.end()));
    const double bytes = rows * b * (2 * 7 * b + 8) * sizeof(double);
    check_host_memory(bytes < 1.8e19 ? std::uint64_t(bytes) : std::numeric_limits<std::uint64_t>::max(),
                      "--grid " + options.grid + " --blocks " + options.blocks, "give a smaller grid");
  }
  return p;
}

std::vector<std::size_t> default_grid(const Parsed& parsed, const Context& context) {
  if (!parsed.grid.empty()) return parsed.grid;
  return context.device().type == DeviceType::gpu ? std::vector<std::size_t>{100, 100, 100}
                                                  : std::vector<std::size_t>{24, 24, 24};
}

// ---- ziggurat ----

struct ZigguratConfig {
  std::string name;
  sparse::SolverOptions options;
};

// `cpu`: the device is a CPU, the only kind where a sequential sweep (one work-item) is worth a row.
// `jacobi_sweeps`: the counts of the suite's rows with a fixed number of Jacobi sweeps (besides
// the row whose sweeps the solver chooses).
std::vector<ZigguratConfig> ziggurat_configs(double tolerance, std::size_t max_iterations, bool suite, bool cpu,
                                             const std::vector<std::size_t>& jacobi_sweeps) {
  using sparse::KrylovMethod;
  using sparse::Ordering;
  using sparse::PreconditionerKind;
  using sparse::TriangularSweep;
  const auto config = [&](std::string name, KrylovMethod method, PreconditionerKind precond, Ordering ordering,
                          bool fuse = true, TriangularSweep sweep = TriangularSweep::automatic) {
    ZigguratConfig c{std::move(name), {}};
    c.options.method = method;
    c.options.preconditioner = precond;
    c.options.ordering = ordering;
    c.options.fuse = fuse;
    c.options.sweep = sweep;
    c.options.tolerance = tolerance;
    c.options.max_iterations = max_iterations;
    return c;
  };
  if (suite) {  // every ordering, each sweep where the ordering leaves many levels
    const auto ilu = [&](std::string name, Ordering ordering, TriangularSweep sweep = TriangularSweep::automatic) {
      return config("bicgstab+ilu0 " + std::move(name), KrylovMethod::bicgstab, PreconditionerKind::ilu0, ordering,
                    true, sweep);
    };
    std::vector<ZigguratConfig> rows = {ilu("auto", Ordering::automatic),  // the defaults, as a user calls them
                                        ilu("natural levels-sweep", Ordering::natural, TriangularSweep::levels),
                                        ilu("natural sync-free", Ordering::natural, TriangularSweep::sync_free)};
    if (cpu) rows.push_back(ilu("natural sequential", Ordering::natural, TriangularSweep::sequential));
    rows.push_back(ilu("natural jacobi", Ordering::natural, TriangularSweep::jacobi));  // sweeps chosen
    for (const std::size_t sweeps : jacobi_sweeps) {
      rows.push_back(ilu("natural jacobi-" + std::to_string(sweeps), Ordering::natural, TriangularSweep::jacobi));
      rows.back().options.jacobi_sweeps = sweeps;
    }
    rows.push_back(ilu("colours", Ordering::colours));
    rows.push_back(ilu("block-colours", Ordering::block_colours));
    return rows;
  }
  return {config("bicgstab+ilu0 natural", KrylovMethod::bicgstab, PreconditionerKind::ilu0, Ordering::natural),
          config("bicgstab+ilu0 levels", KrylovMethod::bicgstab, PreconditionerKind::ilu0, Ordering::levels),
          config("bicgstab+ilu0 colours", KrylovMethod::bicgstab, PreconditionerKind::ilu0, Ordering::colours),
          config("bicgstab+ilu0 colours unfused", KrylovMethod::bicgstab, PreconditionerKind::ilu0, Ordering::colours,
                 false),
          config("bicgstab+ilu0 block-colours", KrylovMethod::bicgstab, PreconditionerKind::ilu0, Ordering::block_colours),
          config("bicgstab+block-jacobi", KrylovMethod::bicgstab, PreconditionerKind::block_jacobi, Ordering::natural),
          config("gmres30+ilu0 block-colours", KrylovMethod::gmres, PreconditionerKind::ilu0, Ordering::block_colours)};
}

// One configuration: a warm-up solve of a small system with the same options (programs built,
// caches warm), then the setup and the solve of the real system, each timed once.
template <class T>
SolveRow run_ziggurat(const Context& context, const BenchSystem<T>& s, const BenchSystem<T>& warm_up,
                      const ZigguratConfig& config) {
  SolveRow row;
  row.solver = "ziggurat";
  row.config = config.name;
  try {
    std::vector<T> x;
    sparse::solve(context, warm_up.bsr, warm_up.b, x, 1, config.options);
    x.clear();
    sparse::KrylovSolver<T> solver(context, s.bsr, 1, config.options);
    const sparse::SolveReport report = solver.solve(s.b, x);
    const sparse::SolveTimes& t = report.times;
    row.status = sparse::to_string(report.status);
    row.iterations = report.iterations;
    row.setup_s = t.setup;
    row.ordering_s = t.ordering;
    row.factorization_s = t.device_timed ? t.factorization : kNaN;
    row.solve_s = t.solve;
    if (t.device_timed && report.iterations > 0) {
      row.device_per_iteration_s = (t.products + t.preconditioner + t.vector_ops) / double(report.iterations);
    }
    if (report.lower_levels > 0) {
      row.note = report.ordering + ": " + std::to_string(report.lower_levels) + "+" + std::to_string(report.upper_levels) + " levels, " +
                 report.sweep +
                 (report.sweep == "jacobi" ? " " + std::to_string(report.lower_jacobi_sweeps) + "+" +
                                                 std::to_string(report.upper_jacobi_sweeps)
                                           : "") +
                 (report.colours > 0 ? ", " + std::to_string(report.colours) + " colours" : "");
    }
    const SolutionQuality quality = judge_solution(s.csr, s.b, s.exact, x);
    row.residual = quality.relative_residual;
    row.error = quality.error;
  } catch (const Error& error) {  // a zero pivot, say: the row says so and the benchmark goes on
    row.ran = false;
    row.note = error.what();
  }
  return row;
}

// One untimed iteration of the first configuration on the system itself: its first large host
// and device allocations are paid here, so that the first configuration ("auto" in the suite) is
// timed as the ones after it. A failure shows in that configuration's own row.
template <class T>
void warm_up_system(const Context& context, const BenchSystem<T>& s, const ZigguratConfig& config) {
  sparse::SolverOptions options = config.options;
  options.max_iterations = 1;
  try {
    std::vector<T> x;
    sparse::KrylovSolver<T>(context, s.bsr, 1, options).solve(s.b, x);
  } catch (const Error&) {
  }
}

// The least bytes one BiCGStab + ILU(0) iteration moves: 2 products (matrix, x, y), 2
// preconditioner applications (the factors, which have the matrix's pattern, and 4 vectors: two
// sweeps each reading and writing one) and the fused vector operations (19 vector reads and
// writes); over the copy bandwidth.
template <class T>
SolveRow bound_row(const sparse::Bsr<T>& a, double copy_bytes_per_s) {
  const double vector = double(a.block_rows * a.block_size) * sizeof(T);
  const double matrix = double(a.values.size()) * sizeof(T) + double(a.block_col.size() + a.block_row_ptr.size()) * 4;
  const double product = matrix + 2 * vector, preconditioner = matrix + 4 * vector;
  SolveRow row;
  row.solver = "bound";
  row.config = "bicgstab+ilu0 iteration bytes / copy bandwidth";
  row.device_per_iteration_s = (2 * product + 2 * preconditioner + 19 * vector) / copy_bytes_per_s;
  return row;
}

SolveRow peer_row(const PeerSolve& peer) {
  SolveRow row;
  row.solver = peer.peer;
  row.config = peer.method + "+" + peer.preconditioner;
  row.ran = peer.ran;
  row.iterations = peer.iterations;
  row.setup_s = peer.ran ? peer.setup_s : kNaN;
  row.solve_s = peer.ran ? peer.solve_s : kNaN;
  row.residual = peer.relative_residual;
  row.error = peer.error;
  row.note = peer.ran ? peer.note : peer.why_not;
  return row;
}

template <class T>
std::vector<SolveRow> bench_system(const Context& context, const BenchSystem<T>& s, const BenchSolveOptions& options,
                                   double copy_bytes_per_s) {
  const bool single = sizeof(T) == 4;
  const double tolerance = single ? options.tolerance_f32 : options.tolerance;
  // Large enough (28 levels in natural order) that the warm-up runs the sweep the real system will.
  const BenchSystem<T> warm_up =
      make_system<T>("warm-up", sparse::convection_diffusion_bsr<T>(10, 10, 10, s.bsr.block_size));
  const std::vector<ZigguratConfig> configs =
      ziggurat_configs(tolerance, options.max_iterations, options.suite, context.device().type == DeviceType::cpu,
                       options.jacobi_sweeps);
  warm_up_system(context, s, configs.front());
  std::vector<SolveRow> rows;
  for (const ZigguratConfig& config : configs) rows.push_back(run_ziggurat(context, s, warm_up, config));
  if (!options.no_peers) {
    PeerSolveSettings settings;
    settings.tolerance = tolerance;
    settings.max_iterations = options.max_iterations;
    settings.block_size = s.bsr.block_size;
    settings.ilu_only = options.suite;  // the suite's peers: cuSPARSE's ILU(0), and SciPy's spilu where it fits
    if (!options.suite)
      for (const PeerSolve& peer : viennacl_solves(context, s.csr, s.b, s.exact, settings)) rows.push_back(peer_row(peer));
    if (!options.python.empty()) {
      // The suite's large systems leave SciPy out: its CPU solves of millions of rows take minutes.
      const std::size_t scipy_limit = options.suite ? 1'000'000 : 30'000'000;
      for (const PeerSolve& peer : python_solves(options.python, s.csr, s.b, s.exact, settings, scipy_limit)) {
        rows.push_back(peer_row(peer));
      }
    }
  }
  rows.push_back(bound_row(s.bsr, copy_bytes_per_s));
  for (SolveRow& row : rows) {
    row.system = s.name;
    row.precision = single ? "f32" : "f64";
  }
  return rows;
}

// A system of the suite: its kind (app/generated_systems.hpp), grid and block size (0: its own).
struct SuiteSystem {
  std::string kind;
  std::size_t n, b;
};

// The suite: scalar and small-block systems of about 2 M rows or more on a GPU (the sizes users
// bring there), of about 14,000 on other devices.
std::vector<SuiteSystem> suite_systems(const Context& context) {
  const bool gpu = context.device().type == DeviceType::gpu;
  const auto size = [&](std::size_t on_gpu, std::size_t elsewhere) { return gpu ? on_gpu : elsewhere; };
  return {{"laplace7", size(128, 24), 0},    {"laplace27", size(128, 24), 0}, {"anisotropic", size(128, 24), 0},
          {"upwind", size(128, 24), 0},      {"convection", size(104, 19), 2}, {"elasticity", size(88, 16), 0},
          {"convection", size(90, 17), 3},   {"convection", size(100, 15), 4}, {"convection", size(80, 14), 5}};
}

// The suite's systems of the kinds --systems lists, when it is given.
std::vector<SuiteSystem> chosen_suite(const Context& context, const BenchSolveOptions& options) {
  std::vector<SuiteSystem> chosen;
  const std::vector<std::string> kinds = split(options.systems, ',');
  for (const SuiteSystem& s : suite_systems(context))
    if (kinds.empty() || std::find(kinds.begin(), kinds.end(), s.kind) != kinds.end()) chosen.push_back(s);
  return chosen;
}

// Every system's rows; `done` (if set) gets each system's rows as soon as they are measured.
template <class T>
std::vector<SolveRow> bench_precision(const Context& context, const BenchSolveOptions& options, const Parsed& parsed,
                                      double copy_bytes_per_s,
                                      const std::function<void(const std::vector<SolveRow>&)>& done) {
  std::vector<SolveRow> rows;
  const auto add = [&](const BenchSystem<T>& s) {
    std::cerr << "solving " << s.name << " in " << (sizeof(T) == 4 ? "f32" : "f64") << "\n";
    const std::vector<SolveRow> more = bench_system(context, s, options, copy_bytes_per_s);
    rows.insert(rows.end(), more.begin(), more.end());
    if (done) done(more);
  };
  if (options.suite) {
    for (const SuiteSystem& s : chosen_suite(context, options)) {
      const std::vector<std::size_t> grid(3, s.n);
      sparse::Bsr<T> a = app::generated_system<T>(s.kind, grid, s.b, 1, "--suite");
      add(make_system<T>(s.kind + " " + extents_string(grid) + " b=" + std::to_string(a.block_size), std::move(a)));
    }
  }
  const std::vector<std::size_t> grid = default_grid(parsed, context);
  for (const std::string& kind : options.suite ? std::vector<std::string>{} : parsed.systems) {
    for (const std::size_t block : parsed.blocks) {
      add(make_system<T>(kind + " " + extents_string(grid) + " b=" + std::to_string(block),
                         app::generated_system<T>(kind, grid, block, 1, "--systems")));
    }
  }
  for (const auto& file : parsed.files) {
    const sparse::Csr<T> csr = sparse::read_matrix_market<T>(file).matrix;
    const std::size_t b = sparse::propose_block_size(csr);
    add(make_system<T>(file.filename().string() + " b=" + std::to_string(b), sparse::to_bsr(csr, b)));
  }
  return rows;
}

// ---- the table ----

std::string ms(double seconds) { return std::isnan(seconds) ? "-" : number_text(seconds * 1e3); }

// The time to solution of the fastest BiCGStab with an ILU(0)-type preconditioner (ILU(0) in any
// ordering, or Chow-Patel's approximation of it; not ViennaCL's block-ilu0, which is block Jacobi)
// of a peer whose name starts with `peer`, among rows [first, end) whose true residual reached the
// tolerance (within 2x); 0 when there is none.
double best_bicgstab_ilu(const std::vector<SolveRow>& rows, std::size_t first, std::size_t end, const std::string& peer,
                         double tolerance) {
  double best = 0;
  for (std::size_t i = first; i < end; ++i) {
    const SolveRow& r = rows[i];
    const bool ilu = r.config.rfind("bicgstab+ilu0", 0) == 0 || r.config == "bicgstab+chow-patel";
    if (!r.ran || r.solver.rfind(peer, 0) != 0 || !ilu || !(r.residual <= 2 * tolerance)) continue;
    if (best == 0 || r.time_to_solution() < best) best = r.time_to_solution();
  }
  return best;
}

std::string ratio(double baseline_s, double seconds) {
  return baseline_s > 0 && seconds > 0 ? number_text(baseline_s / seconds) + "x" : "-";
}

void print_markdown(const std::vector<SolveRow>& rows, const BenchSolveOptions& options, std::ostream& out) {
  Table table({"system", "prec", "solver", "config", "iterations", "vs natural", "setup ms", "of which ordering ms",
               "factorisation ms (device)",
               "solve ms", "ms/iteration", "device ms/iteration", "of bound", "time to solution ms", "vs ViennaCL",
               "vs cuSPARSE", "residual", "error", "note"});
  for (std::size_t first = 0; first < rows.size();) {
    std::size_t end = first;
    while (end < rows.size() && rows[end].system == rows[first].system && rows[end].precision == rows[first].precision) {
      ++end;
    }
    double bound = kNaN, natural = 0;
    for (std::size_t i = first; i < end; ++i) {
      if (rows[i].solver == "bound") bound = rows[i].device_per_iteration_s;
      if (rows[i].solver == "ziggurat" && rows[i].config.rfind("bicgstab+ilu0 natural", 0) == 0 && rows[i].ran &&
          natural == 0) {
        natural = double(rows[i].iterations);
      }
    }
    const double tolerance = rows[first].precision == "f32" ? options.tolerance_f32 : options.tolerance;
    const double viennacl = best_bicgstab_ilu(rows, first, end, "ViennaCL", tolerance);
    const double cusparse = best_bicgstab_ilu(rows, first, end, "cuSPARSE", tolerance);
    for (std::size_t i = first; i < end; ++i) {
      const SolveRow& r = rows[i];
      if (r.solver == "bound") {
        table.add({r.system, r.precision, r.solver, r.config, "-", "-", "-", "-", "-", "-", "-",
                   ms(r.device_per_iteration_s), "1", "-", "-", "-", "-", "-", ""});
        continue;
      }
      const bool ours = r.solver == "ziggurat";
      const double tts = r.ran ? r.time_to_solution() : kNaN;
      table.add({r.system, r.precision, r.solver, r.config, r.ran ? std::to_string(r.iterations) : "-",
                 r.ran && natural > 0 && r.config.rfind("bicgstab", 0) == 0 ? number_text(r.iterations / natural) : "-",
                 ms(r.setup_s), ms(r.ordering_s), ms(r.factorization_s), ms(r.solve_s),
                 r.ran && r.iterations > 0 ? ms(r.solve_s / double(r.iterations)) : "-", ms(r.device_per_iteration_s),
                 ours && !std::isnan(r.device_per_iteration_s) ? number_text(r.device_per_iteration_s / bound) : "-",
                 ms(tts), ours ? ratio(viennacl, tts) : "-", ours ? ratio(cusparse, tts) : "-",
                 r.ran ? number_text(r.residual) : "-", r.ran ? number_text(r.error) : "-",
                 (r.status.empty() || r.status == "converged" ? "" : r.status + ". ") + r.note});
    }
    first = end;
  }
  table.print_markdown(out);
}

nlohmann::json rows_json(const std::vector<SolveRow>& rows) {
  const auto number = [](double v) { return std::isnan(v) ? nlohmann::json(nullptr) : nlohmann::json(v); };
  nlohmann::json list = nlohmann::json::array();
  for (const SolveRow& r : rows) {
    list.push_back({{"system", r.system}, {"precision", r.precision}, {"solver", r.solver}, {"config", r.config},
                    {"ran", r.ran}, {"status", r.status}, {"iterations", r.iterations}, {"setup_s", number(r.setup_s)},
                    {"ordering_s", number(r.ordering_s)},
                    {"factorization_s", number(r.factorization_s)}, {"solve_s", number(r.solve_s)},
                    {"device_per_iteration_s", number(r.device_per_iteration_s)}, {"residual", number(r.residual)},
                    {"error", number(r.error)}, {"note", r.note}});
  }
  return list;
}

}  // namespace

void add_bench_solve_options(CLI::App* command, BenchSolveOptions& options) {
  command->add_option("--grid", options.grid, "Block rows of the generated systems, NXxNYxNZ (default 100x100x100 on "
                                              "a GPU, 24x24x24 elsewhere)");
  command->add_option("--systems", options.systems, "Generated systems (default convection,dominant): convection "
                                                    "(convection-diffusion) and/or dominant (random, strongly "
                                                    "diagonally dominant); with --suite, the suite's kinds to run "
                                                    "(default all)");
  command->add_option("--blocks", options.blocks, "Block sizes of the generated systems")->capture_default_str();
  command->add_option("--matrices", options.matrices, "Matrix Market files or folders of them, comma-separated "
                                                      "(each with the block size of least fill)");
  command->add_option("--precision", options.precision, "f32, f64 or both: f32,f64")->capture_default_str();
  auto* rtol = command->add_option("--rtol", options.tolerance, "Relative tolerance in double")
                   ->capture_default_str()
                   ->check(positive_number());
  add_deprecated_alias(command, rtol, "--tol", options.tolerance)->check(positive_number());
  auto* rtol_f32 = command->add_option("--rtol-f32", options.tolerance_f32, "Relative tolerance in float")
                       ->capture_default_str()
                       ->check(positive_number());
  add_deprecated_alias(command, rtol_f32, "--tol-f32", options.tolerance_f32)->check(positive_number());
  auto* limit = command->add_option("--max-iterations", options.max_iterations, "Iteration limit")
                    ->capture_default_str()
                    ->check(whole_number(1));
  add_deprecated_alias(command, limit, "--max-iter", options.max_iterations)->check(whole_number(1));
  command->add_option("--python", options.python, "Python with SciPy (and CuPy on NVIDIA) for the Python peers "
                                                  "(empty: leave them out)")
      ->capture_default_str();
  command->add_flag("--no-peers", options.no_peers, "ziggurat alone");
  command->add_flag("--suite", options.suite, "The suite of systems users bring instead of --systems: laplace7, "
                                              "laplace27, anisotropic, upwind, elasticity (b = 3) and convection "
                                              "with b = 2..5, about 2 M rows each on a GPU, with every ordering and "
                                              "sweep");
  command->add_option("--jacobi-sweeps", options.jacobi_sweeps, "--suite: besides the row whose Jacobi sweeps are "
                                                                 "chosen, a row of ILU(0) in natural order with "
                                                                 "this many (--sweep jacobi) for each count")
      ->delimiter(',')
      ->capture_default_str();
  command->add_option("--device", options.device, "Device selection (see `ziggurat devices`)");
  command->add_flag("--json", options.json, "Print JSON");
}

// What the tables say, and on which device.
void print_heading(const Context& context, const BenchSolveOptions& options, double copy_bytes_per_s, std::ostream& out) {
  out << "ziggurat " << version << " bench solve, " << utc_timestamp() << "\n\n"
      << "device: " << context.device().label() << ", driver " << context.device().driver_version
      << "; copy bandwidth " << number_text(copy_bytes_per_s * 1e-9) << " GB/s (read + write)\n\n"
      << "Tolerance " << number_text(options.tolerance) << " (f64), " << number_text(options.tolerance_f32)
      << " (f32), on ||b - A x|| / ||b|| for ziggurat (each peer's own rule: see its note). b = A x* for a "
         "random x*; residual and error are computed on the host in double from each x. Setup and solve are "
         "wall times of one run after a warm-up on a small system and one untimed iteration on the system "
         "itself; time to solution = setup + solve. vs "
         "natural: iterations over those of ziggurat's natural-order ILU(0) (the sequential CPU algorithm's, "
         "within 1). vs ViennaCL / vs cuSPARSE: the peer's fastest BiCGStab + ILU(0)-type time to solution "
         "among its runs whose true residual reached the tolerance (within 2x), over this row's (> 1: "
         "ziggurat is faster). of bound: device time per iteration over the "
         "bound.\n\n";
}

void run_bench_solve(const BenchSolveOptions& options) {
  const Parsed parsed = parse(options);
  Context context(options.device);
  const auto copy = measure_copy_bandwidth(context, std::size_t{256} << 20, 5);
  const double copy_bytes_per_s = std::max(copy.first, copy.second);
  // The suite's tables come system by system, as measured: a long run shows its results as it goes.
  const bool incremental = options.suite && !options.json;
  if (incremental) print_heading(context, options, copy_bytes_per_s, std::cout);
  const auto done = [&](const std::vector<SolveRow>& rows) {
    print_markdown(rows, options, std::cout);
    std::cout << std::endl;
  };
  std::vector<SolveRow> rows;
  for (const std::string& precision : parsed.precisions) {
    if (precision == "f64" && !context.device().fp64) continue;
    with_precision(precision, [&](auto zero) {
      const auto more = bench_precision<decltype(zero)>(context, options, parsed, copy_bytes_per_s,
                                                        incremental ? done : std::function<void(const std::vector<SolveRow>&)>{});
      rows.insert(rows.end(), more.begin(), more.end());
    });
  }
  if (incremental) return;
  if (options.json) {
    nlohmann::json j = {{"benchmark", "solve"}, {"date", utc_timestamp()},
                        {"device", {{"name", context.device().name}, {"platform", context.device().platform_name},
                                    {"driver", context.device().driver_version}}},
                        {"copy_bytes_per_s", copy_bytes_per_s}, {"rtol", options.tolerance},
                        {"rtol_f32", options.tolerance_f32}, {"rows", rows_json(rows)}};
    std::cout << app::json_output(j);
    return;
  }
  print_heading(context, options, copy_bytes_per_s, std::cout);
  print_markdown(rows, options, std::cout);
}

}  // namespace ziggurat::cli
