// The peers of `ziggurat-bench solve`: ViennaCL's iterative solvers on ziggurat's own OpenCL
// context, and SciPy and cuSPARSE (through CuPy) in solve_peers.py, run as a child process. Every
// solution is judged here, on the host in double, by the same rule as ziggurat's.

#include "solve_peers.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <utility>

#include "format.hpp"
#include "peer_support.hpp"
#include "ziggurat/base/error.hpp"

// ViennaCL after ziggurat's headers (see peers.cpp), only headers that need no Boost;
// VIENNACL_WITH_OPENCL comes from the build (bench/CMakeLists.txt). Its solvers assign
// viennacl::vector, whose copy assignment is implicitly declared beside a user-declared copy
// constructor: -Wextra's -Wdeprecated-copy (GCC 9 and later, Clang 10 and later) where ViennaCL is
// not a system folder (the GPU machine's CPATH), silenced for its headers alone.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-copy"
#include <viennacl/compressed_matrix.hpp>
#include <viennacl/linalg/bicgstab.hpp>
#include <viennacl/linalg/gmres.hpp>
#include <viennacl/linalg/ilu.hpp>
#include <viennacl/linalg/jacobi_precond.hpp>
#include <viennacl/vector.hpp>
#pragma GCC diagnostic pop

namespace ziggurat::cli {

namespace {

// ---- shared by both peers ----

template <class T>
void check_system(const sparse::Csr<T>& a, const std::vector<T>& b, const std::vector<T>& exact, const char* who) {
  if (a.rows != a.cols)
    throw InvalidArgument(std::string(who) + ": the matrix is " + std::to_string(a.rows) + " x " +
                          std::to_string(a.cols) + ", not square");
  if (b.size() != a.rows || exact.size() != a.cols)
    throw InvalidArgument(std::string(who) + ": b holds " + std::to_string(b.size()) + " values and x* " +
                          std::to_string(exact.size()) + ", the matrix has " + std::to_string(a.rows) + " rows");
}

void add_note(PeerSolve& solve, const std::string& text) {
  solve.note += (solve.note.empty() ? "" : "; ") + text;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

template <class T>
void judge(const sparse::Csr<T>& a, const std::vector<T>& b, const std::vector<T>& exact, const std::vector<T>& x,
           PeerSolve& solve) {
  const SolutionQuality quality = judge_solution(a, b, exact, x);
  solve.relative_residual = quality.relative_residual;
  solve.error = quality.error;
  if (!std::isfinite(solve.relative_residual)) add_note(solve, "its x holds a NaN or an infinity");
}

// ---- ViennaCL ----

template <class T>
using ViennaclMatrix = viennacl::compressed_matrix<T>;

// What one ViennaCL solve gave.
template <class T>
struct ViennaclRun {
  std::vector<T> x;
  std::size_t iterations = 0;
  double estimate = 0;  ///< ViennaCL's own relative residual at the end (tag.error())
  double setup_s = 0, solve_s = 0;
};

template <class T>
using LevelIlu0 = viennacl::linalg::ilu0_precond<ViennaclMatrix<T>>;

// The level-scheduled ILU(0) of one matrix, built on first use and shared by BiCGStab and GMRES:
// ViennaCL factorises and sets the levels up on the host, the costliest setup here (2.4 s for the
// 7 * 10^6 stored values of a 40^3 b = 4 system on this machine's host; more than linear in them).
template <class T>
class SharedIlu0 {
 public:
  const LevelIlu0<T>& get(const ViennaclMatrix<T>& matrix) {
    if (!preconditioner_) {
      const auto start = std::chrono::steady_clock::now();
      preconditioner_ = std::make_unique<LevelIlu0<T>>(matrix, viennacl::linalg::ilu0_tag(true));
      viennacl::backend::finish();
      setup_s_ = seconds_since(start);
    }
    return *preconditioner_;
  }
  double setup_s() const { return setup_s_; }

 private:
  std::unique_ptr<LevelIlu0<T>> preconditioner_;
  double setup_s_ = 0;
};

// A config: what it is, and how it runs on a matrix already on the device (with that matrix's
// shared ILU(0)).
template <class T>
struct ViennaclConfig {
  std::string method, preconditioner, note;
  std::function<ViennaclRun<T>(const ViennaclMatrix<T>&, const std::vector<T>&, SharedIlu0<T>&)> run;
};

// `a` on ViennaCL's current context, into `matrix` (ViennaCL's matrices have no move: a return
// by value could copy on the device).
template <class T>
void upload(const sparse::Csr<T>& a, ViennaclMatrix<T>& matrix) {
  matrix.set(a.row_ptr.data(), a.col.data(), a.values.data(), a.rows, a.cols, a.nonzeros());
  viennacl::backend::finish();
}

// Solves with `tag` and `preconditioner`, timed once. The upload of b and the download of x count
// as part of the solve, as they do for ziggurat.
template <class T, class Tag, class Preconditioner>
ViennaclRun<T> solve_timed(const ViennaclMatrix<T>& matrix, const std::vector<T>& b, const Tag& tag,
                           const Preconditioner& preconditioner, double setup_s) {
  ViennaclRun<T> run;
  run.setup_s = setup_s;
  const auto start = std::chrono::steady_clock::now();
  viennacl::vector<T> rhs(b.size(), viennacl::traits::context(matrix));
  viennacl::fast_copy(b.begin(), b.end(), rhs.begin());
  const viennacl::vector<T> x = viennacl::linalg::solve(matrix, rhs, tag, preconditioner);
  run.x.resize(b.size());
  viennacl::fast_copy(x.begin(), x.end(), run.x.begin());  // a blocking read: the solve is done
  run.solve_s = seconds_since(start);
  run.iterations = tag.iters();
  run.estimate = tag.error();
  return run;
}

// Builds the preconditioner make(matrix), timed, and solves with it.
template <class T, class Tag, class MakePreconditioner>
ViennaclRun<T> setup_and_solve(const ViennaclMatrix<T>& matrix, const std::vector<T>& b, const Tag& tag,
                               MakePreconditioner make) {
  const auto start = std::chrono::steady_clock::now();
  const auto preconditioner = make(matrix);  // a prvalue: built in place, never copied
  viennacl::backend::finish();
  return solve_timed(matrix, b, tag, preconditioner, seconds_since(start));
}

// Blocks of b rows, one per b-row group (the last one shorter when b does not divide the rows).
std::vector<std::pair<std::size_t, std::size_t>> row_groups(std::size_t rows, std::size_t b) {
  std::vector<std::pair<std::size_t, std::size_t>> blocks;
  for (std::size_t start = 0; start < rows; start += b) blocks.emplace_back(start, std::min(start + b, rows));
  return blocks;
}

template <class T>
std::vector<ViennaclConfig<T>> viennacl_configs(const PeerSolveSettings& s) {
  using namespace viennacl::linalg;
  using Matrix = ViennaclMatrix<T>;
  using Vector = std::vector<T>;
  const bicgstab_tag bicgstab(s.tolerance, s.max_iterations);
  const gmres_tag gmres(s.tolerance, static_cast<unsigned>(s.max_iterations), static_cast<unsigned>(s.restart));
  const std::string bicgstab_rule =
      "ViennaCL's BiCGStab preconditions from the left: it stops when ||M^-1 r|| / ||b|| < tolerance, r its "
      "recurrence residual (and restarts from the true residual every 200 iterations)";
  const std::string gmres_rule =
      "ViennaCL's GMRES (Householder) preconditions from the left: it stops when its estimate of "
      "||M^-1 r|| / ||b|| < tolerance";
  const std::string levels = "ILU(0) factorised and level-scheduled on the host, triangular solves on the device";
  const std::size_t b = s.block_size == 0 ? 1 : s.block_size;
  return {
      {"bicgstab", "ilu0",
       "ILU(0) factorised on the host, its triangular solves on the host too (the vector goes to the host and "
       "back for each); " + bicgstab_rule,
       [=](const Matrix& m, const Vector& rhs, SharedIlu0<T>&) {
         return setup_and_solve(m, rhs, bicgstab,
                                [](const Matrix& a) { return ilu0_precond<Matrix>(a, ilu0_tag(false)); });
       }},
      {"bicgstab", "ilu0 levels", levels + "; " + bicgstab_rule,
       [=](const Matrix& m, const Vector& rhs, SharedIlu0<T>& ilu0) {
         const LevelIlu0<T>& preconditioner = ilu0.get(m);
         return solve_timed(m, rhs, bicgstab, preconditioner, ilu0.setup_s());
       }},
      {"bicgstab", "block-ilu0",
       "block_ilu_precond<ilu0_tag> over blocks of b = " + std::to_string(b) +
           " rows, one per b-row group: the exact LU of each b x b diagonal block, i.e. block Jacobi (ViennaCL's "
           "default partition, 8 blocks, would leave 8 work-groups); factorised on the host, solves on the device "
           "(a work-group per block); " + bicgstab_rule,
       [=](const Matrix& m, const Vector& rhs, SharedIlu0<T>&) {
         return setup_and_solve(m, rhs, bicgstab, [b](const Matrix& a) {
           return block_ilu_precond<Matrix, ilu0_tag>(a, ilu0_tag(), row_groups(a.size1(), b));
         });
       }},
      {"bicgstab", "chow-patel",
       "chow_patel_ilu_precond with ViennaCL's defaults: 3 fixed-point sweeps towards ILU(0)'s factors (on the "
       "device, transposes on the host), each triangular solve 2 Jacobi iterations: an approximation of ILU(0); " +
           bicgstab_rule,
       [=](const Matrix& m, const Vector& rhs, SharedIlu0<T>&) {
         return setup_and_solve(m, rhs, bicgstab,
                                [](const Matrix& a) { return chow_patel_ilu_precond<Matrix>(a, chow_patel_tag()); });
       }},
      {"bicgstab", "jacobi", "1 / diagonal, on the device; " + bicgstab_rule,
       [=](const Matrix& m, const Vector& rhs, SharedIlu0<T>&) {
         return setup_and_solve(m, rhs, bicgstab,
                                [](const Matrix& a) { return jacobi_precond<Matrix>(a, jacobi_tag()); });
       }},
      {"gmres" + std::to_string(s.restart), "ilu0 levels",
       levels + " (bicgstab + ilu0 levels' preconditioner, its setup time counted for both); " + gmres_rule,
       [=](const Matrix& m, const Vector& rhs, SharedIlu0<T>& ilu0) {
         const LevelIlu0<T>& preconditioner = ilu0.get(m);
         return solve_timed(m, rhs, gmres, preconditioner, ilu0.setup_s());
       }},
  };
}

// Why ViennaCL cannot take the system at all, or "".
template <class T>
std::string viennacl_problem(const Context& context, const sparse::Csr<T>& a) {
  if (sizeof(T) == 8 && !context.device().fp64) return "the device has no double precision (cl_khr_fp64)";
  if (a.rows == 0 || a.nonzeros() == 0) return "ViennaCL 1.7 refuses an empty matrix";
  const std::string size = viennacl_size_problem(a.rows, a.cols, a.nonzeros(), 1, sizeof(T));
  if (!size.empty()) return "the matrix is too large for ViennaCL: " + size;
  // ViennaCL's preconditioners take the diagonal entry as given: where one is not stored, their
  // kernels read out of bounds (on the H100 the OpenCL context then faults, and this benchmark
  // shares it with ziggurat).
  for (std::size_t i = 0; i < a.rows; ++i) {
    const auto first = a.col.begin() + a.row_ptr[i], last = a.col.begin() + a.row_ptr[i + 1];
    if (!std::binary_search(first, last, static_cast<sparse::Index>(i))) {
      return "row " + std::to_string(i) + " stores no diagonal entry, which ViennaCL's preconditioners read out of "
             "bounds (faulting the shared OpenCL context)";
    }
  }
  return {};
}

// A small diagonally dominant system (10^3 rows, b = A 1) that every config solves first, so that
// ViennaCL has compiled its kernels before the timed run.
template <class T>
std::pair<sparse::Csr<T>, std::vector<T>> warm_up_system() {
  sparse::Csr<T> a = sparse::to_csr(sparse::seven_point_bsr<T>(10, 10, 10, 1));
  std::vector<T> b = sparse::multiply(a, std::vector<T>(a.cols, T(1)), 1);
  return {std::move(a), std::move(b)};
}

PeerSolve new_solve(std::string peer, const std::string& method, const std::string& preconditioner,
                    const std::string& device) {
  PeerSolve solve;
  solve.peer = std::move(peer);
  solve.method = method;
  solve.preconditioner = preconditioner;
  solve.device = device;
  return solve;
}

// A matrix on the device with its shared ILU(0).
template <class T>
struct ViennaclSystem {
  ViennaclMatrix<T> matrix;
  SharedIlu0<T> ilu0;
  explicit ViennaclSystem(const viennacl::context& where) : matrix(where) {}
};

// One config: warm-up, then the timed run on the system, judged.
template <class T>
PeerSolve run_viennacl(const ViennaclConfig<T>& config, const Context& context, ViennaclSystem<T>& warm,
                       const std::vector<T>& warm_b, ViennaclSystem<T>& system, double upload_s,
                       const sparse::Csr<T>& a, const std::vector<T>& b, const std::vector<T>& exact,
                       const PeerSolveSettings& settings) {
  PeerSolve solve = new_solve(viennacl_name(), config.method, config.preconditioner, context.device().label());
  try {
    config.run(warm.matrix, warm_b, warm.ilu0);
    const ViennaclRun<T> run = config.run(system.matrix, b, system.ilu0);
    solve.iterations = run.iterations;
    solve.setup_s = upload_s + run.setup_s;
    solve.solve_s = run.solve_s;
    solve.note = config.note;
    judge(a, b, exact, run.x, solve);
    add_note(solve, (run.estimate < settings.tolerance ? "converged by ViennaCL's own estimate, "
                                                       : "not converged by ViennaCL's own estimate, ") +
                        number_text(run.estimate));
    solve.ran = true;
  } catch (const std::exception& error) {
    solve.why_not = std::string("ViennaCL failed: ") + error.what();
  }
  return solve;
}

// ViennaCL stops on its preconditioned residual, which can leave the true one above the
// tolerance: then the config runs once more with the tolerance scaled down by the shortfall (and
// a factor 2 to spare), so that the table compares times to the same accuracy. The rerun is what
// is reported, with the first result in its note.
template <class Rerun>
PeerSolve tightened(const PeerSolve& first, const PeerSolveSettings& settings, Rerun rerun) {
  if (!first.ran || !std::isfinite(first.relative_residual) || first.relative_residual <= settings.tolerance ||
      first.iterations >= settings.max_iterations) {
    return first;
  }
  PeerSolveSettings tighter = settings;
  tighter.tolerance = settings.tolerance * settings.tolerance / first.relative_residual / 2;
  PeerSolve again = rerun(tighter);
  add_note(again, "run again with the tolerance " + number_text(tighter.tolerance) + ": with " +
                      number_text(settings.tolerance) + " it stopped after " + std::to_string(first.iterations) +
                      " iterations at a true residual of " + number_text(first.relative_residual));
  return again;
}

// ---- the Python peers ----

// The system as solve_peers.py reads it (write_csr, and b); the script checks the indices against
// int32 where it needs that.
template <class T>
void write_system(const std::filesystem::path& folder, const sparse::Csr<T>& a, const std::vector<T>& b,
                  const PeerSolveSettings& settings, std::size_t scipy_ilu_limit) {
  write_csr(folder, a,
            {{"tolerance", settings.tolerance},
             {"max_iterations", settings.max_iterations},
             {"restart", settings.restart},
             {"block_size", settings.block_size},
             {"scipy_ilu_limit", scipy_ilu_limit},
             {"ilu_only", settings.ilu_only}});
  write_array(folder / "b", b);
}

// The `count` values of type T the script wrote to `name`, a plain file name in `folder`.
template <class T>
std::vector<T> read_solution(const std::filesystem::path& folder, const std::string& name, std::size_t count) {
  if (name.empty() || std::filesystem::path(name).filename() != name)
    throw IoError("the script named its solution file '" + name + "', not a plain file name");
  const auto path = folder / name;
  std::error_code error;
  const auto bytes = std::filesystem::file_size(path, error);
  if (error || bytes != count * sizeof(T))
    throw IoError(path.string() + " does not hold the " + std::to_string(count) + " values of a solution");
  std::vector<T> x(count);
  std::ifstream in(path, std::ios::binary);
  in.read(reinterpret_cast<char*>(x.data()), static_cast<std::streamsize>(bytes));
  if (!in) throw IoError("could not read " + path.string());
  return x;
}

// One run of the script's answer, judged from the solution it wrote.
template <class T>
PeerSolve read_run(const std::filesystem::path& folder, const nlohmann::json& run, const sparse::Csr<T>& a,
                   const std::vector<T>& b, const std::vector<T>& exact) {
  PeerSolve solve = new_solve(run.value("peer", std::string("?")), run.value("method", std::string("?")),
                              run.value("preconditioner", std::string("?")), run.value("device", std::string()));
  solve.note = run.value("note", std::string());
  if (!run.value("ran", false)) {
    solve.why_not = run.value("why_not", std::string("the script gave no reason"));
    return solve;
  }
  try {
    solve.iterations = run.at("iterations").get<std::size_t>();
    solve.setup_s = run.at("setup_s").get<double>();
    solve.solve_s = run.at("solve_s").get<double>();
    judge(a, b, exact, read_solution<T>(folder, run.at("x_file").get<std::string>(), a.cols), solve);
    solve.ran = true;
  } catch (const std::exception& error) {
    solve.why_not = std::string("its answer could not be read: ") + error.what();
  }
  return solve;
}

// One entry per Python peer when the script gave no answer at all.
std::vector<PeerSolve> python_not_run(const std::string& why_not) {
  std::vector<PeerSolve> solves{new_solve("SciPy", "bicgstab", "spilu", "CPU"),
                                new_solve("cuSPARSE (CuPy)", "bicgstab", "ilu0", "NVIDIA GPU")};
  for (PeerSolve& solve : solves) solve.why_not = why_not;
  return solves;
}

}  // namespace

template <class T>
SolutionQuality judge_solution(const sparse::Csr<T>& a, const std::vector<T>& b, const std::vector<T>& exact,
                               const std::vector<T>& x) {
  const std::vector<T> ax = sparse::multiply(a, x, 1);
  double r2 = 0, b2 = 0, e2 = 0, x2 = 0;
  for (std::size_t i = 0; i < b.size(); ++i) {
    const double r = double(b[i]) - double(ax[i]), e = double(x[i]) - double(exact[i]);
    r2 += r * r;
    b2 += double(b[i]) * double(b[i]);
    e2 += e * e;
    x2 += double(exact[i]) * double(exact[i]);
  }
  return {std::sqrt(r2 / b2), std::sqrt(e2 / x2)};
}

template <class T>
std::vector<PeerSolve> viennacl_solves(const Context& context, const sparse::Csr<T>& a, const std::vector<T>& b,
                                       const std::vector<T>& exact, const PeerSolveSettings& settings) {
  check_system(a, b, exact, "viennacl_solves");
  const std::vector<ViennaclConfig<T>> configs = viennacl_configs<T>(settings);
  std::string why_not = viennacl_problem(context, a);
  std::vector<PeerSolve> solves;
  if (why_not.empty()) {
    try {
      viennacl::ocl::switch_context(viennacl_context_id(context));
      const viennacl::context where(viennacl::ocl::current_context());
      const auto [warm_a, warm_b] = warm_up_system<T>();
      ViennaclSystem<T> warm(where), system(where);
      upload(warm_a, warm.matrix);
      const auto start = std::chrono::steady_clock::now();
      upload(a, system.matrix);
      const double upload_s = seconds_since(start);
      for (std::size_t c = 0; c < configs.size(); ++c) {
        PeerSolve solve = run_viennacl(configs[c], context, warm, warm_b, system, upload_s, a, b, exact, settings);
        solves.push_back(tightened(solve, settings, [&](const PeerSolveSettings& tighter) {
          return run_viennacl(viennacl_configs<T>(tighter)[c], context, warm, warm_b, system, upload_s, a, b, exact,
                              tighter);
        }));
      }
      return solves;
    } catch (const std::exception& error) {
      why_not = std::string("ViennaCL failed: ") + error.what();
      solves.clear();
    }
  }
  for (const ViennaclConfig<T>& config : configs) {
    solves.push_back(new_solve(viennacl_name(), config.method, config.preconditioner, context.device().label()));
    solves.back().why_not = why_not;
  }
  return solves;
}

template <class T>
std::vector<PeerSolve> python_solves(const std::string& python, const sparse::Csr<T>& a, const std::vector<T>& b,
                                     const std::vector<T>& exact, const PeerSolveSettings& settings,
                                     std::size_t scipy_ilu_limit) {
  check_system(a, b, exact, "python_solves");
  std::vector<PeerSolve> solves;
  std::string why_not;  // from the answer, or why there is none
  try {
    const std::string no_answer = run_peer_script(
        python, "solve_peers.py",
        [&](const std::filesystem::path& folder) { write_system(folder, a, b, settings, scipy_ilu_limit); },
        [&](const std::filesystem::path& folder, const nlohmann::json& answer) {
          if (!answer.contains("runs") || !answer["runs"].is_array()) {
            why_not = python + ": " + answer.value("why_not", std::string("the script gave no runs"));
            return;
          }
          for (const nlohmann::json& run : answer["runs"]) solves.push_back(read_run(folder, run, a, b, exact));
        });
    if (!no_answer.empty()) why_not = no_answer;
  } catch (const std::exception& error) {
    why_not = std::string("could not run the Python peers: ") + error.what();
  }
  return why_not.empty() ? solves : python_not_run(why_not);
}

template SolutionQuality judge_solution(const sparse::Csr<float>&, const std::vector<float>&, const std::vector<float>&,
                                        const std::vector<float>&);
template SolutionQuality judge_solution(const sparse::Csr<double>&, const std::vector<double>&,
                                        const std::vector<double>&, const std::vector<double>&);
template std::vector<PeerSolve> viennacl_solves(const Context&, const sparse::Csr<float>&, const std::vector<float>&,
                                                const std::vector<float>&, const PeerSolveSettings&);
template std::vector<PeerSolve> viennacl_solves(const Context&, const sparse::Csr<double>&, const std::vector<double>&,
                                                const std::vector<double>&, const PeerSolveSettings&);
template std::vector<PeerSolve> python_solves(const std::string&, const sparse::Csr<float>&, const std::vector<float>&,
                                              const std::vector<float>&, const PeerSolveSettings&, std::size_t);
template std::vector<PeerSolve> python_solves(const std::string&, const sparse::Csr<double>&,
                                              const std::vector<double>&, const std::vector<double>&,
                                              const PeerSolveSettings&, std::size_t);

}  // namespace ziggurat::cli
