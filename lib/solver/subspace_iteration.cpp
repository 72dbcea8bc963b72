#include "ziggurat/solver/subspace_iteration.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <numeric>
#include <random>

#include "base/integer_math.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/base/memory.hpp"
#include "ziggurat/ops/block_products.hpp"

namespace ziggurat::fem {

namespace {

using Clock = std::chrono::steady_clock;
using sparse::DeviceVectors;
constexpr double kPi = 3.14159265358979323846;
constexpr std::size_t kMaxSolveVectors = 16;  // KrylovSolver's limit on vectors per solve

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

template <class T>
void check_problem(const ElementSet<T>& stiffness, const ElementSet<T>& mass, const SubspaceOptions& options) {
  if (stiffness.dofs != mass.dofs)
    throw InvalidArgument("the stiffness has " + std::to_string(stiffness.dofs) + " DOFs but the mass " +
                          std::to_string(mass.dofs) + ": both must index the same DOFs");
  if (options.modes == 0) throw InvalidArgument("ask for at least one mode");
  if (options.modes > stiffness.dofs)
    throw InvalidArgument("asked for " + std::to_string(options.modes) + " modes of a model with only " +
                          std::to_string(stiffness.dofs) + " DOFs");
  if (iteration_vectors(options, stiffness.dofs) < options.modes)
    throw InvalidArgument("the iteration vectors (" + std::to_string(options.vectors) +
                          ") must be at least the modes wanted (" + std::to_string(options.modes) + ")");
  if (!(options.tolerance >= 0)) throw InvalidArgument("the eigenvalue tolerance must be >= 0 (0: the default)");
}

// Every DOF moved by the same amount is a rigid translation (of a scalar field, or of every
// component of a displacement field): K 1 = 0 means nothing holds the model in place.
template <class T>
void check_constrained(const ElementSet<T>& stiffness) {
  const std::vector<T> force = multiply(stiffness, std::vector<T>(stiffness.dofs, T(1)), 1);
  const std::vector<T> d = diagonal(stiffness);
  double largest_force = 0, largest_diagonal = 0;
  for (const T f : force) largest_force = std::max(largest_force, std::abs(double(f)));
  for (const T v : d) largest_diagonal = std::max(largest_diagonal, std::abs(double(v)));
  const double eps = std::is_same_v<T, double> ? 1e-12 : 1e-5;
  if (largest_force <= eps * largest_diagonal)
    throw InvalidArgument("the stiffness matrix is singular: moving every DOF by 1 costs no force, so the model can "
                          "move as a rigid body; constrain it (clamp a face, or mark constrained DOFs with negative "
                          "indices)");
  // A DOF without stiffness (no element touches it, or its elements give it none) has an empty
  // row: K is singular, and ILU(0) would find no diagonal block for it.
  const auto loose = std::find_if(d.begin(), d.end(), [](T v) { return !(v > T(0)); });
  if (loose != d.end())
    throw InvalidArgument("the stiffness matrix is singular: DOF " + std::to_string(loose - d.begin()) + " has " +
                          (*loose == T(0) ? "no stiffness (no element gives it any: number the DOFs 0 to v - 1 "
                                            "without gaps, or constrain it with a negative index)"
                                          : "a diagonal entry " + std::to_string(double(*loose)) +
                                                " <= 0, which no positive definite K has"));
}

// Bathe's starting vectors, dofs x q interleaved: diag(M); unit vectors at the DOFs of least
// k_ii / m_ii; a random vector.
template <class T>
std::vector<T> starting_vectors(const std::vector<T>& k_diagonal, const std::vector<T>& m_diagonal, std::size_t q) {
  const std::size_t n = k_diagonal.size();
  std::vector<T> x(n * q, T(0));
  for (std::size_t i = 0; i < n; ++i) x[i * q] = m_diagonal[i];
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  const auto ratio = [&](std::size_t i) {
    return m_diagonal[i] > 0 ? double(k_diagonal[i]) / double(m_diagonal[i]) : HUGE_VAL;
  };
  const std::size_t units = q >= 2 ? q - 2 : 0;
  std::partial_sort(order.begin(), order.begin() + std::min(units, n), order.end(),
                    [&](std::size_t a, std::size_t b) { return ratio(a) < ratio(b) || (ratio(a) == ratio(b) && a < b); });
  for (std::size_t j = 0; j < units; ++j) x[order[j] * q + 1 + j] = T(1);
  if (q >= 2) {
    std::mt19937_64 random(20261124);
    std::uniform_real_distribution<double> uniform(-1, 1);
    for (std::size_t i = 0; i < n; ++i) x[i * q + q - 1] = T(uniform(random));
  }
  return x;
}

template <class T>
sparse::SolverOptions solver_options(const SubspaceOptions& options) {
  sparse::SolverOptions s;
  s.method = sparse::KrylovMethod::cg;
  s.preconditioner = options.preconditioner;
  // The ordering is ILU(0)'s: other preconditioners keep the natural one.
  s.ordering = options.preconditioner == sparse::PreconditionerKind::ilu0 ? options.ordering : sparse::Ordering::natural;
  s.tolerance = options.solve_tolerance > 0 ? options.solve_tolerance : (std::is_same_v<T, double> ? 1e-10 : 1e-5);
  s.max_iterations = options.max_solve_iterations;
  s.choose_product_kernel = options.product_kernel;
  return s;
}

// CG on K for `width` vectors: K assembled as block CSR, or matrix-free on the element operator
// (for `width` vectors, sharing k_op's elements on the device) with K's diagonal blocks for the
// preconditioner.
template <class T>
sparse::KrylovSolver<T> stiffness_solver(const Context& context, const ElementSet<T>& stiffness,
                                         const EbeOperator<T>& k_op, std::size_t width,
                                         const SubspaceOptions& options) {
  if (options.cg_operator == CgOperator::assembled)
    return sparse::KrylovSolver<T>(context, assemble_bsr(stiffness, options.block_size), width,
                                   solver_options<T>(options));
  return sparse::KrylovSolver<T>(context, std::make_shared<EbeOperator<T>>(k_op, width),
                                 assemble_block_diagonal(stiffness, options.block_size), solver_options<T>(options));
}

// The K Y = R solves on the device, q vectors in chunks of at most 16 (the last one padded with
// zero vectors, which converge at once).
template <class T>
class ChunkedSolve {
 public:
  ChunkedSolve(const Context& context, const ElementSet<T>& stiffness, const EbeOperator<T>& k_op, std::size_t q,
               const SubspaceOptions& options)
      : q_(q),
        width_(detail::ceil_div(q, detail::ceil_div(q, kMaxSolveVectors))),  // chunks as even as can be
        solver_(stiffness_solver(context, stiffness, k_op, width_, options)) {}

  /// Deflates the solves that follow by the q vectors X, given K X (KrylovSolver::deflate).
  void deflate(const DeviceVectors<T>& x, const DeviceVectors<T>& kx) { solver_.deflate(x, kx); }

  /// Solves for every vector of r (dofs x q), starting from y, which receives the solution.
  /// Returns the most CG iterations of a chunk; `failure` gets the reason of a chunk that failed;
  /// the device parts of the solves are added to `times`.
  std::size_t solve(const DeviceVectors<T>& r, DeviceVectors<T>& y, std::string& failure, SubspaceTimes& times) {
    std::size_t most = 0;
    for (std::size_t j0 = 0; j0 < q_; j0 += width_) {
      const sparse::SolveReport report = solver_.solve(r, y, j0, std::min(width_, q_ - j0));
      times.solve_products += report.times.products;
      times.solve_preconditioner += report.times.preconditioner;
      times.solve_vector_ops += report.times.vector_ops;
      times.solve_deflation += report.times.deflation;
      most = std::max(most, report.iterations);
      product_kernel_ = report.product_kernel;
      if (!report.converged && failure.empty()) failure = report.reason;
    }
    return most;
  }

  /// CG's product kernel ("matrix-free" on the element operator); empty before the first solve.
  const std::string& product_kernel() const { return product_kernel_; }

 private:
  std::size_t q_, width_;
  sparse::KrylovSolver<T> solver_;
  std::string product_kernel_;
};

struct SmallProblem {
  std::vector<double> eigenvalues;  // q ascending
  std::vector<double> vectors;      // q x q row-major, column j the j-th eigenvector
};

// K+ Q = M+ Q Lambda with Q^T M+ Q = I. Throws InvalidArgument when M+ is not positive definite
// (the iteration vectors became dependent) or K+ shows a zero or negative eigenvalue (singular K).
SmallProblem solve_small(const std::vector<double>& kp, const std::vector<double>& mp, std::size_t q) {
  using Matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const Matrix a = Eigen::Map<const Matrix>(kp.data(), q, q);
  const Matrix b = Eigen::Map<const Matrix>(mp.data(), q, q);
  Eigen::GeneralizedSelfAdjointEigenSolver<Matrix> solver(a, b);
  if (solver.info() != Eigen::Success)
    throw InvalidArgument("the projected mass Y^T M Y is not positive definite: the mass matrix is singular or the "
                          "iteration vectors became dependent (ask for fewer modes, or check the mass)");
  SmallProblem small;
  small.eigenvalues.assign(solver.eigenvalues().data(), solver.eigenvalues().data() + q);
  Matrix v = solver.eigenvectors();
  small.vectors.assign(v.data(), v.data() + q * q);
  return small;
}

template <class T>
std::vector<double> column_norms(const std::vector<T>& v, std::size_t q) {
  std::vector<double> sums(q, 0.0);
  for (std::size_t i = 0; i < v.size() / q; ++i)
    for (std::size_t j = 0; j < q; ++j) sums[j] += double(v[i * q + j]) * double(v[i * q + j]);
  for (double& s : sums) s = std::sqrt(s);
  return sums;
}

template <class T>
class SubspaceRun {
 public:
  SubspaceRun(const Context& context, const ElementSet<T>& stiffness, const ElementSet<T>& mass,
              const SubspaceOptions& options)
      : context_(context),
        options_(options),
        n_(stiffness.dofs),
        q_(iteration_vectors(options, stiffness.dofs)),
        p_(options.modes),
        k_op_(context, stiffness, q_, options.ebe),
        m_op_(context, mass, q_, options.ebe),
        x_(context, n_, q_),
        y_(context, n_, q_),
        r_(context, n_, q_),
        q_matrix_(context, q_ * q_, "the q x q factor of X = Y Q"),
        q_products_(context, n_, q_, q_),
        solve_(context, stiffness, k_op_, q_, options) {
    x_.upload(starting_vectors(diagonal(stiffness), diagonal(mass), q_));
    result_.vectors = q_;
    result_.stiffness_factored = k_op_.factored();
    result_.mass_factored = m_op_.factored();
  }

  SubspaceResult<T> run() {
    const double tolerance = eigenvalue_tolerance<T>(options_);
    double smallest_change = HUGE_VAL;
    std::size_t since_smallest = 0;
    std::vector<double> previous;
    for (std::size_t it = 1; it <= options_.max_iterations; ++it) {
      auto t = Clock::now();
      m_op_.multiply(x_, r_);
      result_.times.mass += seconds_since(t);

      t = Clock::now();
      if (!previous.empty()) {  // X holds Ritz vectors: K-orthogonal, M-orthonormal
        if (options_.deflation && std::is_same_v<T, double>) {
          k_op_.multiply(x_, y_);
          solve_.deflate(x_, y_);
        }
        warm_start(previous);
      }
      std::string failure;
      const std::size_t cg = solve_.solve(r_, y_, failure, result_.times);
      result_.solve_iterations += cg;
      result_.product_kernel = solve_.product_kernel();
      if (!failure.empty()) result_.solve_report = failure;
      result_.times.solve += seconds_since(t);

      t = Clock::now();
      const std::vector<double> kp = k_op_.project(y_), mp = m_op_.project(y_);
      result_.times.projection += seconds_since(t);

      t = Clock::now();
      const SmallProblem small = solve_small(kp, mp, q_);
      check_singular(small.eigenvalues);
      result_.times.small += seconds_since(t);

      t = Clock::now();
      multiply(x_, y_, small.vectors, "the update X = Y Q");
      result_.times.update += seconds_since(t);

      result_.iterations = it;
      const double change = record(small.eigenvalues, previous);
      if (options_.progress) options_.progress({it, change, cg});
      previous = small.eigenvalues;
      if (change <= tolerance) {
        result_.converged = true;
        result_.reason = "every wanted eigenvalue changed by at most " + format(tolerance) +
                         " relative in the last iteration";
        break;
      }
      // In float, changes that stop falling mean its attainable accuracy is reached. Not in double:
      // there a mode the subspace had missed may still enter the window and move the changes up.
      if (change < smallest_change) {
        smallest_change = change;
        since_smallest = 0;
      } else if (++since_smallest >= kStagnationIterations && std::is_same_v<T, float>) {
        result_.reason = "stagnated: the largest eigenvalue change has stayed above its smallest, " +
                         format(smallest_change) + ", for " + std::to_string(kStagnationIterations) +
                         " iterations, the accuracy this precision attains here; loosen the tolerance or "
                         "solve in double";
        break;
      }
    }
    if (result_.reason.empty())
      result_.reason = "the eigenvalues still changed after " + std::to_string(options_.max_iterations) +
                       " iterations: raise --max-iterations or the tolerance";
    finish();
    return std::move(result_);
  }

  SubspaceResult<T>& result() { return result_; }

 private:
  static std::string format(double value) {
    char text[32];
    std::snprintf(text, sizeof text, "%.3g", value);
    return text;
  }

  // Y starts from X diag(lambda)^-1 once Ritz values are known (K Y = M X with X near eigenvectors;
  // the Galerkin solution in the span of X, as X^T K X = diag(lambda) and X^T M X = I).
  void warm_start(const std::vector<double>& lambda) {
    std::vector<double> inverse(q_ * q_, 0.0);
    for (std::size_t j = 0; j < q_; ++j) inverse[j * q_ + j] = 1 / lambda[j];
    multiply(y_, x_, inverse, "the start Y = X diag(lambda)^-1");
  }

  void check_singular(const std::vector<double>& lambda) const {
    const double largest = std::abs(lambda.back());
    if (!(lambda.front() > 1e-12 * largest))
      throw InvalidArgument("the stiffness matrix is singular (its lowest eigenvalue is " + format(lambda.front()) +
                            " against " + format(largest) +
                            "): the model can move as a rigid body; constrain it (clamp a face, or mark "
                            "constrained DOFs with negative indices)");
  }

  // to = from Q on the device, Q q x q (row-major).
  void multiply(DeviceVectors<T>& to, const DeviceVectors<T>& from, const std::vector<double>& q, const char* what) {
    std::vector<T> q_values(q.begin(), q.end());
    detail::write_buffer(context_.compute_queue(), q_matrix_.get(), q_values.data(), q_values.size() * sizeof(T));
    q_products_.combine(from.buffer().get(), q_matrix_.get(), T(1), T(0), to.buffer().get());
    check(context_.compute_queue().finish(), "clFinish", what);
  }

  double record(const std::vector<double>& lambda, const std::vector<double>& previous) {
    result_.eigenvalues.assign(lambda.begin(), lambda.begin() + p_);
    result_.changes.assign(p_, HUGE_VAL);
    double change = previous.empty() ? HUGE_VAL : 0.0;
    if (!previous.empty()) {
      for (std::size_t i = 0; i < p_; ++i) {
        result_.changes[i] = std::abs(lambda[i] - previous[i]) / std::abs(lambda[i]);
        change = std::max(change, result_.changes[i]);
      }
    }
    return change;
  }

  // Frequencies, the modes, and ||K phi - lambda M phi|| / ||K phi|| per mode.
  void finish() {
    const auto t = Clock::now();
    k_op_.multiply(x_, y_);
    m_op_.multiply(x_, r_);
    const std::vector<T> kx = y_.download(), mx = r_.download(), x = x_.download();
    std::vector<T> difference(n_ * q_);
    for (std::size_t i = 0; i < n_; ++i)
      for (std::size_t j = 0; j < q_; ++j) {
        const double lambda = j < p_ ? result_.eigenvalues[j] : 0.0;
        difference[i * q_ + j] = T(double(kx[i * q_ + j]) - lambda * double(mx[i * q_ + j]));
      }
    const std::vector<double> top = column_norms(difference, q_), bottom = column_norms(kx, q_);
    result_.residuals.resize(p_);
    result_.frequencies.resize(p_);
    result_.modes.resize(n_ * p_);
    for (std::size_t j = 0; j < p_; ++j) {
      result_.residuals[j] = bottom[j] > 0 ? top[j] / bottom[j] : HUGE_VAL;
      result_.frequencies[j] = std::sqrt(std::max(result_.eigenvalues[j], 0.0)) / (2 * kPi);
    }
    for (std::size_t i = 0; i < n_; ++i) std::copy_n(x.begin() + i * q_, p_, result_.modes.begin() + i * p_);
    result_.times.residual = seconds_since(t);
  }

  Context context_;
  SubspaceOptions options_;
  std::size_t n_, q_, p_;
  EbeOperator<T> k_op_, m_op_;
  DeviceVectors<T> x_, y_, r_;
  DeviceBuffer<T> q_matrix_;  // Q of X = Y Q, or diag(lambda)^-1
  sparse::BlockProducts<T> q_products_;  // n x q times q x q
  ChunkedSolve<T> solve_;
  SubspaceResult<T> result_;
};

}  // namespace

const char* to_string(CgOperator kind) { return kind == CgOperator::assembled ? "assembled" : "matrix-free"; }

CgOperator parse_cg_operator(std::string_view text) {
  if (text == "assembled") return CgOperator::assembled;
  if (text == "matrix-free") return CgOperator::matrix_free;
  throw InvalidArgument("unknown CG operator '" + std::string(text) + "': expected assembled or matrix-free");
}

std::size_t iteration_vectors(const SubspaceOptions& options, std::size_t dofs) {
  const std::size_t p = options.modes;
  const std::size_t q = options.vectors != 0 ? options.vectors : std::min(2 * p, p + 8);
  return std::min(q, dofs);
}

template <class T>
SubspaceResult<T> subspace_iteration(const Context& context, const ElementSet<T>& stiffness,
                                     const ElementSet<T>& mass, const SubspaceOptions& options) {
  check_problem(stiffness, mass, options);
  check_constrained(stiffness);
  const auto start = Clock::now();
  SubspaceRun<T> run(context, stiffness, mass, options);
  run.result().times.setup = seconds_since(start);
  SubspaceResult<T> result = run.run();
  result.times.total = seconds_since(start);
  return result;
}

template SubspaceResult<float> subspace_iteration(const Context&, const ElementSet<float>&, const ElementSet<float>&,
                                                  const SubspaceOptions&);
template SubspaceResult<double> subspace_iteration(const Context&, const ElementSet<double>&,
                                                   const ElementSet<double>&, const SubspaceOptions&);

}  // namespace ziggurat::fem
