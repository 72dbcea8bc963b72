#include "ziggurat/solver/krylov.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>
#include <sstream>

#include <Eigen/Dense>

#include "base/integer_math.hpp"
#include "base/large_arrays.hpp"
#include "base/parallel.hpp"
#include "ops/stream.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/base/memory.hpp"
#include "ziggurat/base/precision.hpp"
#include "ziggurat/matrix/device_sparse.hpp"
#include "ziggurat/matrix/ilu2.hpp"
#include "ziggurat/matrix/ilu_factors.hpp"
#include "ziggurat/matrix/static_pivoting.hpp"
#include "ziggurat/ops/block_ilu.hpp"
#include "ziggurat/ops/block_products.hpp"
#include "ziggurat/ops/vector_ops.hpp"

namespace ziggurat::sparse {

// ---------------------------------------------------------------------------------------------
// Names

const char* to_string(KrylovMethod method) {
  switch (method) {
    case KrylovMethod::cg: return "cg";
    case KrylovMethod::bicgstab: return "bicgstab";
    case KrylovMethod::gmres: return "gmres";
  }
  return "?";
}

KrylovMethod parse_krylov_method(std::string_view text) {
  for (auto m : {KrylovMethod::cg, KrylovMethod::bicgstab, KrylovMethod::gmres}) {
    if (text == to_string(m)) return m;
  }
  throw InvalidArgument("unknown method '" + std::string(text) + "': use cg, bicgstab or gmres");
}

const char* to_string(PreconditionerKind kind) {
  switch (kind) {
    case PreconditionerKind::none: return "none";
    case PreconditionerKind::jacobi: return "jacobi";
    case PreconditionerKind::block_jacobi: return "block-jacobi";
    case PreconditionerKind::ilu0: return "ilu0";
    case PreconditionerKind::ilu2: return "ilu2";
  }
  return "?";
}

PreconditionerKind parse_preconditioner(std::string_view text) {
  for (auto p : {PreconditionerKind::none, PreconditionerKind::jacobi, PreconditionerKind::block_jacobi,
                 PreconditionerKind::ilu0, PreconditionerKind::ilu2}) {
    if (text == to_string(p)) return p;
  }
  throw InvalidArgument("unknown preconditioner '" + std::string(text) +
                        "': use none, jacobi, block-jacobi, ilu0 or ilu2");
}

const char* to_string(SolveStatus status) {
  switch (status) {
    case SolveStatus::converged: return "converged";
    case SolveStatus::max_iterations: return "max_iterations";
    case SolveStatus::breakdown: return "breakdown";
    case SolveStatus::stagnation: return "stagnation";
    case SolveStatus::not_finite: return "not_finite";
  }
  return "?";
}

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string number(double value) {
  std::ostringstream text;
  text.precision(3);
  text << value;
  return text.str();
}

void check_options(const SolverOptions& o, std::size_t k) {
  if (k < 1 || k > 16) throw InvalidArgument("a solve takes 1 to 16 right-hand sides, not " + std::to_string(k));
  if (!(o.tolerance >= 0) || !(o.absolute_tolerance >= 0)) {
    throw InvalidArgument("the tolerances must be numbers >= 0, not " + std::to_string(o.tolerance) + " (relative) and " +
                          std::to_string(o.absolute_tolerance) + " (absolute)");
  }
  if (o.tolerance == 0 && o.absolute_tolerance == 0) {
    throw InvalidArgument("the relative and the absolute tolerance are both 0: only an exact solution would stop the "
                          "solve; give one of them > 0");
  }
  if (o.method == KrylovMethod::gmres && (o.restart < 1 || o.restart > 200)) {
    throw InvalidArgument("the GMRES restart length is 1 to 200, not " + std::to_string(o.restart));
  }
  if (o.method == KrylovMethod::gmres && k > 1) {
    throw InvalidArgument("gmres solves one right-hand side at a time; use cg or bicgstab for " + std::to_string(k) +
                          " at once, or call solve once per right-hand side");
  }
  if (o.ordering != Ordering::natural && o.ordering != Ordering::automatic &&
      o.preconditioner != PreconditionerKind::ilu0 && o.preconditioner != PreconditionerKind::ilu2) {
    throw InvalidArgument(std::string("the ordering ") + to_string(o.ordering) +
                          " is for the ilu0 and ilu2 preconditioners; use natural with " + to_string(o.preconditioner));
  }
  if (!(o.threshold >= 0) || !std::isfinite(o.threshold)) {
    throw InvalidArgument("the ILU2 threshold must be a finite number >= 0, not " + std::to_string(o.threshold));
  }
  if (o.method == KrylovMethod::cg && o.static_pivoting == StaticPivoting::on) {
    throw InvalidArgument("static pivoting permutes rows, which cg's IC2 cannot take (it needs A symmetric); use "
                          "static pivoting auto or off with cg, or bicgstab or gmres");
  }
  if (o.jacobi_sweeps && o.sweep != TriangularSweep::jacobi && o.sweep != TriangularSweep::automatic) {
    throw InvalidArgument("jacobi_sweeps " + std::to_string(*o.jacobi_sweeps) +
                          " counts the sweeps of sweep jacobi; with sweep " + to_string(o.sweep) +
                          " it would do nothing: give sweep jacobi (or auto), or leave jacobi_sweeps out");
  }
}

// ||column j|| of `values` (rows x width, interleaved) for every j, after checking that every value
// is finite (InvalidArgument naming the first that is not). In parallel over fixed blocks of rows,
// whose sums are added in block order: the same bits on any number of cores.
template <class T>
std::vector<double> checked_column_norms(const std::vector<T>& values, const char* what, std::size_t width) {
  constexpr std::size_t kRowsPerBlock = 16384;
  const std::size_t rows = values.size() / width, blocks = ziggurat::detail::ceil_div(rows, kRowsPerBlock);
  std::vector<double> sums(blocks * width, 0.0);
  ziggurat::detail::parallel_for(blocks, 1, [&](std::size_t first, std::size_t last) {
    for (std::size_t block = first; block < last; ++block) {
      double* sum = sums.data() + block * width;
      for (std::size_t i = block * kRowsPerBlock * width; i < std::min(rows, (block + 1) * kRowsPerBlock) * width; ++i) {
        if (!std::isfinite(values[i]))
          throw InvalidArgument(std::string(what) + " holds " + (std::isnan(values[i]) ? "NaN" : "an infinity") +
                                " at row " + std::to_string(i / width) +
                                (width > 1 ? ", vector " + std::to_string(i % width) : "") + ": a solve needs finite input");
        sum[i % width] += double(values[i]) * double(values[i]);
      }
    }
  });
  std::vector<double> norms(width, 0.0);
  for (std::size_t block = 0; block < blocks; ++block)
    for (std::size_t j = 0; j < width; ++j) norms[j] += sums[block * width + j];
  for (double& norm : norms) norm = std::sqrt(norm);
  return norms;
}

// A matrix that passed validate() checked for a solve: square, not empty, finite.
template <class T>
void check_solvable(const Bsr<T>& a) {
  if (a.rows != a.cols) {
    throw InvalidArgument("a solve needs a square matrix; this one is " + std::to_string(a.rows) + " x " +
                          std::to_string(a.cols));
  }
  if (a.rows == 0) throw InvalidArgument("the matrix is empty");
  // Every value, on every core; the first non-finite one is named.
  ziggurat::detail::parallel_for(a.values.size(), 1 << 20, [&a](std::size_t first, std::size_t last) {
    for (std::size_t i = first; i < last; ++i) {
      if (std::isfinite(a.values[i])) continue;
      const std::size_t bb = a.block_size * a.block_size, block = i / bb;
      const std::size_t row_in = (i % bb) / a.block_size, col_in = i % a.block_size;
      const std::size_t br = std::upper_bound(a.block_row_ptr.begin(), a.block_row_ptr.end(), block) - a.block_row_ptr.begin() - 1;
      throw InvalidArgument("the matrix holds " + std::string(std::isnan(a.values[i]) ? "NaN" : "an infinity") + " at (" +
                            std::to_string(br * a.block_size + row_in) + ", " +
                            std::to_string(a.block_col[block] * a.block_size + col_in) + "): a solve needs finite values");
    }
  });
}

// One value per row: 1 / A(r, r) (scalar Jacobi) with the pattern's changes (the padding's
// diagonal is not zero).
template <class T>
std::vector<T> inverse_diagonal(const Bsr<T>& a, const IluPattern<T>& pattern) {
  const std::size_t b = a.block_size;
  std::vector<T> diagonal(a.block_rows * b);
  for (std::size_t i = 0; i < a.block_rows; ++i) {
    for (std::size_t r = 0; r < b; ++r) diagonal[i * b + r] = a.values[pattern.diagonal[i] * b * b + r * b + r];
  }
  for (const DiagonalChange<T>& change : pattern.changes) diagonal[change.block_row * b + change.line] = change.value;
  std::vector<T> d(a.block_rows * b);
  for (std::size_t i = 0; i < a.block_rows; ++i) {
    for (std::size_t r = 0; r < b; ++r) {
      const T value = diagonal[i * b + r];
      if (value == T(0)) {
        throw ZeroPivot(i, "Jacobi: the diagonal entry A(" + std::to_string(i * b + r) + ", " + std::to_string(i * b + r) +
                               ") is zero; use a diagonal shift (--shift S), block-jacobi, ilu0 or none");
      }
      d[i * b + r] = T(1) / value;
    }
  }
  return d;
}

}  // namespace

// ILU2's static pivoting as the renumbered system sees it: the matrix to factorise (its rows
// matched) and those rows, blocks of `block` rows (b, or 1 where single rows were matched).
template <class T>
struct Pivoted {
  std::optional<Bsr<T>> matrix;
  Permutation rows;
  std::size_t block = 1;
};

// ---------------------------------------------------------------------------------------------
// The solver

template <class T>
struct KrylovSolver<T>::Impl {
  // Result slots of the vector operations.
  enum Slot : std::size_t { kA = 0, kB = 1, kC = 2, kD = 3, kE = 4, kBB = 5, kGmres = 6 };

  Context context;
  SolverOptions options;
  std::size_t k, rows, b, padded;
  Permutation permutation;
  DeviceBuffer<Index> renumbering;  // permutation.old_of_new (the identity for the natural ordering)
  SolveReport setup_report;
  DeviceBsr<T> matrix;  // A; matrix-free: the matrix the preconditioner is built from
  std::shared_ptr<LinearOperator<T>> external;  // matrix-free: A's products
  std::optional<BsrMultiplier<T>> multiplier;   // otherwise
  VectorOps<T> ops;
  std::unique_ptr<DeviceBlockIlu<T>> ilu;
  Pivoted<T> pivoted;                // ilu2: static pivoting's matrix and rows (empty: none)
  DeviceBuffer<Index> matched_rows;  // the rows' old_of_new on the device
  DeviceBuffer<T> gathered;          // the residual in the matched rows' order
  std::unique_ptr<DeviceBlockJacobi<T>> block_jacobi;
  DeviceBuffer<T> jacobi;
  // precondition_with(): M^-1's operator, and the vectors it reads and writes (a preconditioner's
  // input may be a GMRES basis column, which is no DeviceVectors of its own).
  std::shared_ptr<LinearOperator<T>> preconditioner_operator;
  std::optional<DeviceVectors<T>> operator_in, operator_out;
  // The next true_residual() may take r = b without a product: x is zero (a solve from zeros).
  bool start_from_zero = false;
  // The last true_residual()'s squared norms, while x has not changed since (the end of a solve
  // reuses them instead of another product: a product may be a host call).
  std::optional<std::vector<double>> current_truth;
  DeviceVectors<T> x, r, rhs, p, q, z, s, t, shat, r0;
  DeviceBuffer<T> basis;  // GMRES: restart + 1 vectors of padded rows
  // Deflation (deflate()): W, A W and W (W^T A W)^-1 (padded x m, the device's order), an m x k
  // scratch set, and the products over sets of m and k vectors.
  std::size_t deflation = 0;
  DeviceBuffer<T> deflation_w, deflation_aw, deflation_scaled, deflation_g;
  std::unique_ptr<BlockProducts<T>> deflation_products;

  // Device spans waiting to be added to the times (resolved at each read).
  std::vector<std::pair<Span, double*>> pending;
  SolveTimes setup_times;  // the constructor's parts: every solve's times start from them
  SolveTimes times;

  Impl(const Context& c, const Bsr<T>& a, std::size_t k_, SolverOptions o, const Bsr<T>& ordered,
       std::shared_ptr<LinearOperator<T>> op = nullptr, Pivoted<T> pivoted_ = {})
      : context(c),
        options(std::move(o)),
        k(k_),
        rows(a.rows),
        b(a.block_size),
        padded(a.block_rows * a.block_size),
        matrix(c, ordered, Validated{}),
        external(std::move(op)),
        ops(c, padded, k_, options.fuse, options.method == KrylovMethod::gmres ? options.restart + 1 : 2,
            kGmres + 2 * (options.restart + 2)),
        pivoted(std::move(pivoted_)),
        x(input_vectors(c, matrix, k_)),
        r(input_vectors(c, matrix, k_)),
        rhs(input_vectors(c, matrix, k_)),
        p(input_vectors(c, matrix, k_)),
        q(input_vectors(c, matrix, k_)),
        z(input_vectors(c, matrix, k_)),
        s(input_vectors(c, matrix, k_)),
        t(input_vectors(c, matrix, k_)),
        shat(input_vectors(c, matrix, k_)),
        r0(input_vectors(c, matrix, k_)) {
    if (!external) multiplier.emplace(c, matrix, k_, product_kernel());
    setup_preconditioner(ordered);
    if (options.method == KrylovMethod::gmres) basis = DeviceBuffer<T>(c, padded * (options.restart + 1), "GMRES basis");
    setup_report.product_kernel = external ? "matrix-free" : multiplier->kernel().name();
  }

  // The given kernel, else the chooser's for this precision, else the rule's.
  BsrKernel product_kernel() const {
    if (options.product_kernel) return *options.product_kernel;
    const auto& choose = [this]() -> const auto& {
      if constexpr (std::is_same_v<T, float>) return options.choose_product_kernel.f32;
      else return options.choose_product_kernel.f64;
    }();
    return choose ? choose(matrix, k) : BsrKernel{};
  }

  void setup_preconditioner(const Bsr<T>& ordered) {
    if (options.preconditioner == PreconditionerKind::none) return;
    const auto start = Clock::now();
    // ILU2 takes missing or zero diagonal blocks (its fill and static pivoting mend them).
    const IluPattern<T> pattern =
        options.preconditioner == PreconditionerKind::ilu2 ? IluPattern<T>{} : ilu_pattern(ordered, options.shift, Validated{});
    switch (options.preconditioner) {
      case PreconditionerKind::none: break;
      case PreconditionerKind::jacobi: {
        const std::vector<T> d = inverse_diagonal(ordered, pattern);
        jacobi = DeviceBuffer<T>(context, d.size(), "Jacobi inverse diagonal");
        copy_to_device(context.compute_queue(), d.data(), jacobi);
        break;
      }
      case PreconditionerKind::block_jacobi:
        block_jacobi = std::make_unique<DeviceBlockJacobi<T>>(context, ordered, pattern, k, options.shift);
        add(block_jacobi->setup(), setup_times.factorization);
        break;
      case PreconditionerKind::ilu0:
        ilu = std::make_unique<DeviceBlockIlu<T>>(context, matrix, ordered, pattern, k, options.shift, options.sweep,
                                                  options.jacobi_sweeps);
        add(ilu->factorization(), setup_times.factorization);
        settle_sweeps();
        setup_report.fill = 1;
        break;
      case PreconditionerKind::ilu2: setup_ilu2(ordered); break;
    }
    check(context.compute_queue().finish(), "clFinish", "waiting for the preconditioner's setup");
    setup_times.preconditioner_setup = seconds_since(start);
    resolve();
  }

  // The ILU's sweeps settled (CG: one Jacobi count for both triangles, a symmetric preconditioner),
  // then its levels and sweeps into the report.
  void settle_sweeps() {
    if (options.method == KrylovMethod::cg) ilu->equal_jacobi_sweeps();
    setup_report.lower_levels = ilu->lower_levels();
    setup_report.upper_levels = ilu->upper_levels();
    setup_report.sweep = to_string(ilu->sweep());
    setup_report.lower_jacobi_sweeps = ilu->lower_jacobi_sweeps();
    setup_report.upper_jacobi_sweeps = ilu->upper_jacobi_sweeps();
  }

  // ILU2 (IC2 for cg) factorised on the host, of the ordered matrix with its matched rows; the
  // device takes the factors for its triangular solves.
  void setup_ilu2(const Bsr<T>& ordered) {
    Ilu2Options o;
    o.threshold = options.threshold;
    o.symmetric = options.method == KrylovMethod::cg;
    o.shift = options.shift;
    o.replace_tiny_pivots = !o.symmetric && options.static_pivoting != StaticPivoting::off;
    const auto start = Clock::now();
    const Ilu2Factors<T> f = factorize_ilu2(pivoted.matrix ? *pivoted.matrix : ordered, o);
    setup_times.host_factorization = seconds_since(start);
    pivoted.matrix.reset();
    const Permutation& matched = pivoted.rows;
    ilu = std::make_unique<DeviceBlockIlu<T>>(context, f.factors, f.diagonal, k, options.sweep, options.jacobi_sweeps);
    settle_sweeps();
    setup_report.fill = f.fill;
    setup_report.matched_rows = !matched.identity();
    setup_report.replaced_pivots = f.replaced_pivots;
    if (!matched.identity()) {
      matched_rows = DeviceBuffer<Index>(context, matched.old_of_new.size(), "static pivoting's rows");
      copy_to_device(context.compute_queue(), matched.old_of_new.data(), matched_rows);
      gathered = DeviceBuffer<T>(context, padded * k, "the residual in the matched rows");
    }
  }

  // ---- timing ----
  void add(const Span& span, double& bucket) {
    if (context.device().profiling && span.first() != nullptr) pending.emplace_back(span, &bucket);
  }
  void resolve() {
    for (auto& [span, bucket] : pending) *bucket += profiled_seconds(span.first, span.last);
    pending.clear();
  }
  std::vector<double> read(std::size_t slot, std::size_t count) {
    std::vector<double> values = ops.read(slot, count);
    resolve();
    return values;
  }

  // ---- building blocks ----
  void product(const DeviceVectors<T>& in, DeviceVectors<T>& out) {
    Span span;
    if (external)
      span = external->enqueue(in, out);
    else
      span.last = multiplier->enqueue(in, out, nullptr, &span.first);
    add(span, times.products);
  }
  void precondition(const VectorRef& in, const VectorRef& out) {
    Span span;
    if (preconditioner_operator) {
      span.first = ops.copy(in, *operator_in).first;
      preconditioner_operator->enqueue(*operator_in, *operator_out);
      span.last = ops.copy(*operator_out, out).last;
      add(span, times.preconditioner);
      return;
    }
    switch (options.preconditioner) {
      case PreconditionerKind::none: span = ops.copy(in, out); break;
      case PreconditionerKind::jacobi: span = ops.multiply_rows(jacobi, in, out); break;
      case PreconditionerKind::block_jacobi: span = block_jacobi->apply(in, out); break;
      case PreconditionerKind::ilu0: span = ilu->apply(in, out); break;
      case PreconditionerKind::ilu2:
        if (pivoted.rows.identity()) {
          span = ilu->apply(in, out);
        } else {  // M = P^T L U: the residual's rows matched first
          span.first = ops.gather_columns({matched_rows, pivoted.block, rows}, in, {k, 0, k}, gathered, k).first;
          span.last = ilu->apply(gathered, out).last;
        }
        break;
    }
    add(span, options.preconditioner == PreconditionerKind::none ? times.vector_ops : times.preconditioner);
  }
  void vec(const Span& span) { add(span, times.vector_ops); }
  std::vector<T> coefficients(const std::vector<double>& values) const { return {values.begin(), values.end()}; }

  // ||rhs - A x||^2 per vector, r left as it is (q is free between the iteration's products).
  std::vector<double> peek_true_residual() {
    product(x, q);
    vec(ops.axpby(std::vector<T>(k, T(1)), rhs, std::vector<T>(k, T(-1)), q));
    vec(ops.dot(q, q, kE));
    return read(kE, 1);
  }

  // r = rhs - A x; returns ||r||^2 per vector.
  std::vector<double> true_residual() {
    vec(ops.copy(rhs, r));
    if (!start_from_zero) {
      product(x, q);
      vec(ops.axpby(std::vector<T>(k, T(-1)), q, std::vector<T>(k, T(1)), r));
    }
    start_from_zero = false;
    vec(ops.dot(r, r, kE));
    current_truth = read(kE, 1);
    return *current_truth;
  }
  // Every change of x calls this: the last true residual is no longer x's.
  void x_changed() { current_truth.reset(); }

  // x in the caller's order, in double (SolveProgress::iterate). Renumbered through s, which no
  // method holds anything in when its progress hooks run.
  std::vector<double> host_iterate() {
    std::vector<T> values;
    solution(values);
    return {values.begin(), values.end()};
  }

  // The rows' renumbering between the caller's order and the device's.
  RowRenumbering order() const { return {renumbering, b, rows}; }

  // `values` (rows x `width`, the caller's order) into `out` (padded rows) in the device's order:
  // renumbered on the device, through `scratch`. The padding rows of `out` stay zero.
  // Returns the renumbering's span (none for the natural ordering).
  Span to_device(const std::vector<T>& values, std::size_t width, const DeviceBuffer<T>& scratch,
                 const DeviceBuffer<T>& out) {
    ::ziggurat::detail::write_buffer(context.compute_queue(), (permutation.identity() ? out : scratch).get(), values.data(),
                                     values.size() * sizeof(T));
    return permutation.identity() ? Span{} : ops.gather_columns(order(), scratch, {width, 0, width}, out, width);
  }

  // x (rows x k) into `out` in the caller's order, renumbered on the device (through s).
  void solution(std::vector<T>& out) { to_host(x, out); }
  // `from` (padded x k, the device's order) into `out` in the caller's order, through s.
  void to_host(const DeviceVectors<T>& from, std::vector<T>& out) {
    ::ziggurat::detail::resize_large(out, rows * k);  // a new x's pages faulted in on every core
    if (!permutation.identity()) vec(ops.scatter_columns(order(), from, k, s, {k, 0, k}));
    ::ziggurat::detail::read_buffer(context.compute_queue(), (permutation.identity() ? from : s).buffer().get(),
                                    out.data(), out.size() * sizeof(T));
  }

  // The ordering's old_of_new on the device, for the renumberings (device-vector solves renumber
  // through it even for the natural ordering: their gathers also cut out the columns solved).
  void place_renumbering() {
    std::vector<Index> old_of_new = permutation.old_of_new;
    if (permutation.identity()) {
      old_of_new.resize(padded / b);
      std::iota(old_of_new.begin(), old_of_new.end(), Index(0));
    }
    renumbering = DeviceBuffer<Index>(context, old_of_new.size(), "the ordering's renumbering");
    copy_to_device(context.compute_queue(), old_of_new.data(), renumbering);
  }

  // ---- deflation ----
  void set_deflation(const std::vector<T>& w, const std::vector<T>& aw, std::size_t m);
  void set_deflation(const DeviceVectors<T>& w, const DeviceVectors<T>& aw);
  void begin_deflation(std::size_t m);
  void finish_deflation(std::size_t m);
  // z -= W (W^T A W)^-1 (A W)^T z: z made A-orthogonal to W.
  void deflate_direction(DeviceVectors<T>& z) {
    if (deflation == 0) return;
    Span span;
    span.first = deflation_products->gram(deflation_aw.get(), z.buffer().get(), deflation_g.get()).first;
    span.last = deflation_products->combine(deflation_scaled.get(), deflation_g.get(), T(-1), T(1), z.buffer().get()).last;
    add(span, times.deflation);
  }
  // x += W (W^T A W)^-1 W^T r and r = b - A x: the Galerkin correction that leaves W^T r = 0.
  std::vector<double> deflated_start() {
    Span span;
    span.first = deflation_products->gram(deflation_w.get(), r.buffer().get(), deflation_g.get()).first;
    span.last = deflation_products->combine(deflation_scaled.get(), deflation_g.get(), T(1), T(1), x.buffer().get()).last;
    add(span, times.deflation);
    x_changed();
    return true_residual();
  }

  SolveReport solve(const std::vector<T>& b_in, std::vector<T>& x_io);
  SolveReport solve(const DeviceVectors<T>& b_in, DeviceVectors<T>& x_io, std::size_t first, std::size_t count);
  std::vector<double> device_norms(std::size_t first);
  // A solve's times: the setup's, then what its device work adds, and the whole call's.
  void begin_timing() {
    times = setup_times;
    times.device_timed = context.device().profiling;
  }
  SolveReport timed(SolveReport report, Clock::time_point start) {
    times.solve = seconds_since(start);
    report.times = times;
    return report;
  }
  SolveReport iterate(std::vector<double> bnorm);
  void cg(struct Progress& state);
  void bicgstab(struct Progress& state);
  void gmres(struct Progress& state);
};

// Per-vector state of a solve.
struct Progress {
  std::size_t k = 1, max_iterations = 0;
  std::vector<double> tolerance;   // per vector, relative: max(tolerance, absolute_tolerance / ||b||)
  std::vector<double> bnorm;       // ||b|| per vector
  std::function<std::vector<double>()> iterate;  // SolveProgress::iterate
  std::vector<bool> active;        // still iterating
  std::vector<VectorReport> vectors;
  std::size_t iteration = 0;
  std::function<void(const SolveProgress&)> callback;

  std::vector<bool> replaced;      // the residual was replaced after the recurrence reached the tolerance
  std::vector<double> halved;      // the recurrence residual when it last fell below half this mark
  std::vector<std::size_t> halved_at;  // ... and its iteration (or the last restart's or check's)
  std::vector<double> last_true;   // the true relative residual at the last check

  bool any_active() const { return std::find(active.begin(), active.end(), true) != active.end(); }
  double relative(std::size_t j, double squared) const { return std::sqrt(std::max(squared, 0.0)) / bnorm[j]; }
  void stop(std::size_t j, SolveStatus status, std::string reason) {
    active[j] = false;
    vectors[j].status = status;
    vectors[j].reason = std::move(reason);
  }
  // Judges the true residuals (squared norms) computed once the recurrence of the vectors in
  // `reached` met the tolerance: converged, stagnated (replaced before and no better), or going on
  // from the true residual. Returns whether any vector was still active.
  bool judge(const std::vector<double>& truth, const std::vector<bool>& reached) {
    bool any = false;
    for (std::size_t j = 0; j < k; ++j) {
      if (!active[j]) continue;
      any = true;
      const double rel = relative(j, truth[j]);
      if (rel < tolerance[j]) {
        stop(j, SolveStatus::converged, "");
      } else if (reached[j] && replaced[j] && rel >= last_true[j]) {
        stop(j, SolveStatus::stagnation, "");
      } else {  // every active vector restarts from its true residual: its stall clock too
        halved[j] = rel;
        halved_at[j] = iteration;
        replaced[j] = replaced[j] || reached[j];
        last_true[j] = rel;
      }
    }
    return any;
  }
  // Whether a vector's recurrence residual, within 100 times the tolerance, has not halved for
  // longer than it took to get there, or since its last restart or check (at least 50
  // iterations): a recurrence stalled near the accuracy the precision attains, which would
  // otherwise run to the iteration limit. (Further off, a plateau is CG's own and passes.)
  bool stalled(std::size_t j) const {
    const std::size_t window = std::max<std::size_t>(50, halved_at[j]);
    return active[j] && halved[j] < 100 * tolerance[j] && iteration - halved_at[j] > window;
  }
  // Judges the `stalled` vectors by their true residuals (squared norms) and recurrence residuals
  // (squared): converged; to be replaced (returned as reached), where the true residual has
  // drifted above twice the recurrence's; else stagnated if no better than at its last check,
  // or checked again a window later. (One sample a check decides; the checks are a whole window
  // apart, in which the recurrence did not halve.)
  std::vector<bool> settle(const std::vector<double>& truth, const std::vector<double>& squared,
                           const std::vector<bool>& stalled) {
    std::vector<bool> drifted(k, false);
    for (std::size_t j = 0; j < k; ++j) {
      if (!stalled[j]) continue;
      const double rel = relative(j, truth[j]);
      if (rel < tolerance[j]) {
        stop(j, SolveStatus::converged, "");
      } else if (rel > 2 * relative(j, squared[j])) {
        drifted[j] = true;
      } else if (rel >= last_true[j]) {
        stop(j, SolveStatus::stagnation, "");
      } else {
        last_true[j] = rel;
        halved[j] = relative(j, squared[j]);
        halved_at[j] = iteration;
      }
    }
    return drifted;
  }
  // Records the recurrence residuals (squared norms) of this iteration; returns which active
  // vectors reached the tolerance by them. NaN stops a vector.
  std::vector<bool> record(const std::vector<double>& squared) {
    std::vector<bool> reached(k, false);
    double worst = 0;
    for (std::size_t j = 0; j < k; ++j) {
      if (!active[j]) continue;
      const double rel = relative(j, squared[j]);
      vectors[j].history.push_back(rel);
      vectors[j].recurrence_residual = rel;
      vectors[j].iterations = iteration;
      if (!std::isfinite(rel)) {
        stop(j, SolveStatus::not_finite, "the residual became " + std::string(std::isnan(rel) ? "NaN" : "infinite") +
                                             " at iteration " + std::to_string(iteration) +
                                             ": the iteration overflowed (an unstable preconditioner or a singular matrix)");
        continue;
      }
      worst = std::max(worst, rel);
      reached[j] = rel < tolerance[j];
      if (rel < halved[j] / 2) {
        halved[j] = rel;
        halved_at[j] = iteration;
      }
    }
    if (callback) callback({iteration, worst, iterate});
    return reached;
  }
};

// ---- CG ----
template <class T>
void KrylovSolver<T>::Impl::cg(Progress& st) {
  const std::vector<T> ones(k, T(1));
  // Starting (again) from the true residual in r.
  const auto restart = [&]() -> std::vector<double> {
    precondition(r, z);
    deflate_direction(z);
    vec(ops.copy(z, p));
    vec(ops.dot_pair(r, z, r, r, kA));
    return read(kA, 2);  // rho, rr
  };
  std::vector<double> rr = true_residual();
  if (deflation > 0) rr = deflated_start();
  for (std::size_t j = 0; j < k; ++j) st.vectors[j].history.push_back(st.relative(j, rr[j]));
  std::vector<double> start = restart();
  std::vector<double> rho(start.begin(), start.begin() + k);
  // Vectors already converged at the start.
  for (std::size_t j = 0; j < k; ++j) {
    if (st.active[j] && st.relative(j, rr[j]) < st.tolerance[j]) st.stop(j, SolveStatus::converged, "");
  }
  while (st.any_active() && st.iteration < st.max_iterations) {
    ++st.iteration;
    product(p, q);
    vec(ops.dot(p, q, kB));
    const std::vector<double> pq = read(kB, 1);
    std::vector<double> alpha(k, 0);
    for (std::size_t j = 0; j < k; ++j) {
      if (!st.active[j]) continue;
      if (pq[j] == 0 || !std::isfinite(pq[j])) {
        st.stop(j, pq[j] == 0 ? SolveStatus::breakdown : SolveStatus::not_finite,
                "CG broke down at iteration " + std::to_string(st.iteration) + ": p.Ap = " + number(pq[j]) +
                    (pq[j] == 0 ? " (A is singular or not positive definite: try bicgstab or gmres)" : ""));
        continue;
      }
      alpha[j] = rho[j] / pq[j];
    }
    vec(ops.cg_update(coefficients(alpha), x, p, r, q, kC));
    x_changed();
    std::vector<double> rho_new;
    if (options.preconditioner == PreconditionerKind::none && !preconditioner_operator) {
      rr = read(kC, 1);
      rho_new = rr;
      vec(ops.copy(r, z));
      if (deflation > 0) deflate_direction(z);  // (r, z) = (r, r): W^T r = 0
    } else {
      precondition(r, z);
      deflate_direction(z);
      vec(ops.dot(r, z, kD));
      const std::vector<double> both = read(kC, 2);
      rr.assign(both.begin(), both.begin() + k);
      rho_new.assign(both.begin() + k, both.end());
    }
    std::vector<bool> reached = st.record(rr);
    std::vector<bool> stalled(k, false);
    for (std::size_t j = 0; j < k; ++j) stalled[j] = !reached[j] && st.stalled(j);
    if (std::find(stalled.begin(), stalled.end(), true) != stalled.end()) {
      const std::vector<bool> drifted = st.settle(peek_true_residual(), rr, stalled);
      for (std::size_t j = 0; j < k; ++j) reached[j] = reached[j] || drifted[j];
    }
    if (std::find(reached.begin(), reached.end(), true) != reached.end()) {
      const bool any_replaced = st.judge(true_residual(), reached);  // r := b - A x for every vector
      if (any_replaced) {  // the recurrences restart from the true residual
        // Deflated, the true residual has drifted out of W's complement, where the iteration
        // cannot reduce it: the Galerkin correction puts it back first.
        if (deflation > 0) deflated_start();
        const std::vector<double> again = restart();
        rho.assign(again.begin(), again.begin() + k);
        continue;
      }
    }
    std::vector<double> beta(k, 0);
    for (std::size_t j = 0; j < k; ++j) {
      if (st.active[j] && rho[j] != 0) beta[j] = rho_new[j] / rho[j];
      rho[j] = rho_new[j];
    }
    vec(ops.axpby(ones, z, coefficients(beta), p));
  }
}

// ---- BiCGStab (right-preconditioned) ----
template <class T>
void KrylovSolver<T>::Impl::bicgstab(Progress& st) {
  std::vector<double> rr = true_residual();
  for (std::size_t j = 0; j < k; ++j) st.vectors[j].history.push_back(st.relative(j, rr[j]));
  for (std::size_t j = 0; j < k; ++j) {
    if (st.active[j] && st.relative(j, rr[j]) < st.tolerance[j]) st.stop(j, SolveStatus::converged, "");
  }
  std::vector<double> rho, rho_old(k, 1), alpha(k, 1), omega(k, 1);
  bool fresh = true;  // p = r at a (re)start
  const auto restart = [&] {
    vec(ops.copy(r, r0));
    rho = rr;  // r0 . r = r . r
    fresh = true;
  };
  restart();
  const auto only_active = [&](std::vector<double> values) {
    for (std::size_t j = 0; j < k; ++j)
      if (!st.active[j]) values[j] = 0;
    return coefficients(values);
  };
  while (st.any_active() && st.iteration < st.max_iterations) {
    ++st.iteration;
    if (fresh) {
      vec(ops.copy(r, p));
      fresh = false;
    } else {
      std::vector<double> beta(k, 0);
      for (std::size_t j = 0; j < k; ++j) {
        if (st.active[j]) beta[j] = (rho[j] / rho_old[j]) * (alpha[j] / omega[j]);
      }
      vec(ops.bicg_direction(only_active(beta), only_active(omega), p, r, q));
    }
    precondition(p, z);  // phat
    product(z, q);       // v = A phat
    vec(ops.dot(r0, q, kA));
    const std::vector<double> r0v = read(kA, 1);
    for (std::size_t j = 0; j < k; ++j) {
      if (!st.active[j]) continue;
      if (r0v[j] == 0 || !std::isfinite(r0v[j])) {
        st.stop(j, std::isfinite(r0v[j]) ? SolveStatus::breakdown : SolveStatus::not_finite,
                "BiCGStab broke down at iteration " + std::to_string(st.iteration) + ": r0.v = " + number(r0v[j]) +
                    " (rho/(r0.v) undefined; try gmres, another preconditioner, or a shift)");
        continue;
      }
      alpha[j] = rho[j] / r0v[j];
    }
    vec(ops.bicg_half(only_active(alpha), r, q, s, kB));
    precondition(s, shat);
    product(shat, t);
    vec(ops.dot_pair(t, s, t, t, kC));
    const std::vector<double> sst = read(kB, 3);  // s.s, t.s, t.t
    for (std::size_t j = 0; j < k; ++j) {
      if (!st.active[j]) continue;
      const double ss = sst[j], ts = sst[k + j], tt = sst[2 * k + j];
      if (st.relative(j, ss) < st.tolerance[j]) {
        omega[j] = 0;  // s is small enough: x += alpha phat, r = s
      } else if ((tt == 0 || ts == 0) && std::isfinite(tt) && st.relative(j, ss) < std::numeric_limits<T>::epsilon()) {
        // s is below T's rounding, so t = A M^-1 s rounds to nothing: as far as T gets, not a breakdown
        st.stop(j, SolveStatus::stagnation,
                "stagnated at iteration " + std::to_string(st.iteration) + ": ||s|| / ||b|| = " +
                    number(st.relative(j, ss)) + " lies below the rounding of the type computed in, so the tolerance " +
                    number(st.tolerance[j]) + " cannot be reached; loosen it");
      } else if (tt == 0 || !std::isfinite(tt) || ts == 0) {
        st.stop(j, std::isfinite(tt) ? SolveStatus::breakdown : SolveStatus::not_finite,
                "BiCGStab broke down at iteration " + std::to_string(st.iteration) + ": omega = t.s / t.t = " +
                    number(ts) + " / " + number(tt) + " (try gmres, another preconditioner, or a shift)");
      } else {
        omega[j] = ts / tt;
      }
    }
    vec(ops.bicg_update(only_active(alpha), only_active(omega), x, z, shat, s, t, r, r0, kD));
    x_changed();
    const std::vector<double> both = read(kD, 2);
    rr.assign(both.begin(), both.begin() + k);
    rho_old = rho;
    rho.assign(both.begin() + k, both.end());
    const std::vector<bool> reached = st.record(rr);
    for (std::size_t j = 0; j < k; ++j) {
      if (st.active[j] && !reached[j] && rho[j] == 0) {
        st.stop(j, SolveStatus::breakdown, "BiCGStab broke down at iteration " + std::to_string(st.iteration) +
                                               ": rho = r0.r = 0 (try gmres, another preconditioner, or a shift)");
      }
    }
    if (std::find(reached.begin(), reached.end(), true) != reached.end()) {
      const std::vector<double> truth = true_residual();
      st.judge(truth, reached);
      rr = truth;
      restart();
    }
  }
}

// ---- GMRES(m), right-preconditioned, CGS2 ----
template <class T>
void KrylovSolver<T>::Impl::gmres(Progress& st) {
  // A rotated pivot at or below this fraction of its column's norm is rounding: the column is
  // dependent on those before it.
  const double kSingularPivot = 16 * std::numeric_limits<T>::epsilon();
  const std::size_t m = options.restart;
  const std::size_t h1 = kGmres, h2 = kGmres + m + 1, ww = kGmres + 2 * (m + 1);
  std::vector<double> rr = true_residual();
  st.vectors[0].history.push_back(st.relative(0, rr[0]));
  if (st.active[0] && st.relative(0, rr[0]) < st.tolerance[0]) st.stop(0, SolveStatus::converged, "");
  std::vector<double> H((m + 1) * m), cs(m), sn(m), g(m + 1);
  double last_true = std::numeric_limits<double>::infinity();
  bool reached_before = false;
  while (st.active[0] && st.iteration < st.max_iterations) {
    const double beta = std::sqrt(rr[0]);
    std::fill(g.begin(), g.end(), 0.0);
    g[0] = beta;
    vec(ops.scale({T(1 / beta)}, r, VectorRef(basis, 0)));
    std::size_t used = 0;
    bool reached = false;
    for (std::size_t j = 0; j < m && st.iteration < st.max_iterations; ++j) {
      ++st.iteration;
      precondition(VectorRef(basis, j * padded), z);
      product(z, q);  // w
      vec(ops.multi_dot(basis, padded, j + 1, q, h1));
      vec(ops.combine(basis, padded, j + 1, h1, T(-1), q));
      vec(ops.multi_dot(basis, padded, j + 1, q, h2));
      vec(ops.combine(basis, padded, j + 1, h2, T(-1), q));
      vec(ops.dot(q, q, ww));
      const std::vector<double> first = read(h1, j + 1), second = read(h2, j + 1), norm = read(ww, 1);
      for (std::size_t i = 0; i <= j; ++i) H[i * m + j] = first[i] + second[i];
      const double hn = std::sqrt(std::max(norm[0], 0.0));
      H[(j + 1) * m + j] = hn;
      double column = hn * hn;  // ||A M^-1 v_j||^2, which the rotations keep
      for (std::size_t i = 0; i <= j; ++i) column += H[i * m + j] * H[i * m + j];
      for (std::size_t i = 0; i < j; ++i) {  // earlier rotations
        const double a = H[i * m + j], c = H[(i + 1) * m + j];
        H[i * m + j] = cs[i] * a + sn[i] * c;
        H[(i + 1) * m + j] = -sn[i] * a + cs[i] * c;
      }
      const double a = H[j * m + j], c = H[(j + 1) * m + j], d = std::hypot(a, c);
      // A M^-1 is singular on the Krylov space (a singular matrix or preconditioner): this
      // column's pivot is rounding, which the least-squares solve would divide by. It is left out,
      // the residual unchanged, and the cycle ends with the columns before it.
      if (!(d > kSingularPivot * std::sqrt(column))) {
        st.record({g[j] * g[j]});
        reached = true;
        break;
      }
      cs[j] = a / d;
      sn[j] = c / d;
      H[j * m + j] = d;
      H[(j + 1) * m + j] = 0;
      g[j + 1] = -sn[j] * g[j];
      g[j] = cs[j] * g[j];
      used = j + 1;
      const std::vector<bool> hit = st.record({g[j + 1] * g[j + 1]});
      if (!st.active[0]) break;
      if (hit[0] || hn == 0) {  // converged by the estimate, or the Krylov space is exhausted
        reached = true;
        break;
      }
      vec(ops.scale({T(1 / hn)}, q, VectorRef(basis, (j + 1) * padded)));
    }
    if (used == 0) {
      if (st.active[0])
        st.stop(0, SolveStatus::breakdown, "GMRES broke down at iteration " + std::to_string(st.iteration) +
                                               ": A M^-1 maps the residual to 0 (a singular preconditioner or matrix)");
      break;
    }
    // y = H^-1 g (upper triangular), u = V y, x += M^-1 u.
    std::vector<double> y(used);
    for (std::size_t i = used; i-- > 0;) {
      double sum = g[i];
      for (std::size_t c = i + 1; c < used; ++c) sum -= H[i * m + c] * y[c];
      y[i] = sum / H[i * m + i];  // not 0: singular pivots were left out
    }
    vec(ops.scale({T(y[0])}, VectorRef(basis, 0), s));
    for (std::size_t i = 1; i < used; ++i) vec(ops.axpby({T(y[i])}, VectorRef(basis, i * padded), {T(1)}, s));
    precondition(s, z);
    vec(ops.axpby({T(1)}, z, {T(1)}, x));
    x_changed();
    rr = true_residual();
    const double rel = st.relative(0, rr[0]);
    if (options.cycle_end) options.cycle_end({st.iteration, rel, [this] { return host_iterate(); }});
    if (!std::isfinite(rel)) {
      st.stop(0, SolveStatus::not_finite, "the residual became NaN or infinite: the iteration overflowed");
    } else if (rel < st.tolerance[0]) {
      st.stop(0, SolveStatus::converged, "");
    } else if (reached && reached_before && rel >= last_true) {
      st.stop(0, SolveStatus::stagnation, "");
    }
    reached_before = reached_before || reached;
    last_true = rel;
  }
}

namespace {

int severity(SolveStatus status) {
  switch (status) {
    case SolveStatus::converged: return 0;
    case SolveStatus::max_iterations: return 1;
    case SolveStatus::stagnation: return 2;
    case SolveStatus::breakdown: return 3;
    case SolveStatus::not_finite: return 4;
  }
  return 5;
}

// A vector that converged to a tolerance below T's epsilon: a residual computed in T cannot show
// it (at 1e-300 the computed residual rounds to 0 while the exact one is 1e-17), so it reached the
// accuracy T attains, as the solves that stagnate above such a tolerance report.
template <class T>
void unverifiable(VectorReport& v, double tolerance, const char* type) {
  const double epsilon = std::numeric_limits<T>::epsilon();
  if (v.status != SolveStatus::converged || !v.reason.empty() || tolerance >= epsilon) return;
  v.status = SolveStatus::stagnation;
  v.reason = "stagnated at the accuracy " + std::string(type) + " attains: ||b - A x|| / ||b|| = " +
             number(v.relative_residual) + " as computed in " + type + ", whose rounding (" + number(epsilon) +
             ") hides anything below; the tolerance " + number(tolerance) + " cannot be verified: loosen --tol to " +
             number(epsilon) + " or more";
}

// The reason of a vector that has none yet (converged, stagnation, max_iterations).
void explain(VectorReport& v, double tolerance, const char* type) {
  if (!v.reason.empty()) return;
  switch (v.status) {
    case SolveStatus::converged:
      v.reason = "converged: ||b - A x|| / ||b|| = " + number(v.relative_residual) + " < " + number(tolerance) +
                 " after " + std::to_string(v.iterations) + " iterations";
      break;
    case SolveStatus::stagnation:
      v.reason = "stagnated: ||b - A x|| / ||b|| stays at " + number(v.relative_residual) + ", above the tolerance " +
                 number(tolerance) + ": the accuracy " + type + " attains on this system; loosen --tol" +
                 (std::string(type) == "double" ? "" : " or solve in double");
      break;
    case SolveStatus::max_iterations:
      v.reason = "not converged in " + std::to_string(v.iterations) + " iterations: ||b - A x|| / ||b|| = " +
                 number(v.relative_residual) + "; raise --max-iter or use a stronger preconditioner";
      break;
    default: break;
  }
}

}  // namespace

template <class T>
SolveReport KrylovSolver<T>::Impl::solve(const std::vector<T>& b_in, std::vector<T>& x_io) {
  const auto start = Clock::now();
  if (b_in.size() != rows * k) {
    throw InvalidArgument("the right-hand side holds " + std::to_string(b_in.size()) + " values; the matrix's " +
                          std::to_string(rows) + " rows x " + std::to_string(k) + " vectors need " +
                          std::to_string(rows * k));
  }
  if (!x_io.empty() && x_io.size() != rows * k) {
    throw InvalidArgument("the initial guess holds " + std::to_string(x_io.size()) + " values; it needs " +
                          std::to_string(rows * k) + " (or none, for zeros)");
  }
  std::vector<double> bnorm = checked_column_norms(b_in, "the right-hand side", k);
  checked_column_norms(x_io, "the initial guess", k);  // only to refuse non-finite values
  begin_timing();
  vec(to_device(b_in, k, s.buffer(), rhs.buffer()));
  if (x_io.empty()) {
    check(context.compute_queue().enqueueFillBuffer(x.buffer().get(), T(0), 0, x.buffer().bytes()), "clEnqueueFillBuffer",
          "zeroing the initial guess");
    start_from_zero = true;
  } else {
    vec(to_device(x_io, k, s.buffer(), x.buffer()));
  }
  SolveReport report = iterate(std::move(bnorm));
  solution(x_io);
  return timed(std::move(report), start);
}

template <class T>
SolveReport KrylovSolver<T>::Impl::solve(const DeviceVectors<T>& b_in, DeviceVectors<T>& x_io, std::size_t first,
                                         std::size_t count) {
  const auto start = Clock::now();
  if (b_in.rows() != rows || x_io.rows() != rows)
    throw InvalidArgument("the right-hand side and the initial guess have " + std::to_string(b_in.rows()) + " and " +
                          std::to_string(x_io.rows()) + " rows; the matrix has " + std::to_string(rows));
  if (count == 0 || count > k || first + count > b_in.k() || first + count > x_io.k())
    throw InvalidArgument("columns " + std::to_string(first) + " to " + std::to_string(first + count) + " of " +
                          std::to_string(b_in.k()) + " and " + std::to_string(x_io.k()) +
                          " vectors: a solve takes 1 to " + std::to_string(k) + " columns that both hold");
  begin_timing();
  vec(ops.gather_columns(order(), b_in, {b_in.k(), first, count}, rhs, k));
  vec(ops.gather_columns(order(), x_io, {x_io.k(), first, count}, x, k));
  SolveReport report = iterate(device_norms(first));
  vec(ops.scatter_columns(order(), x, k, x_io, {x_io.k(), first, count}));
  check(context.compute_queue().finish(), "clFinish", "writing the solution back");
  resolve();
  return timed(std::move(report), start);
}

// ||b|| per vector from the vectors on the device, which must be finite, as must x's (their
// squares overflowing counts as not finite: the solve could not form them either).
template <class T>
std::vector<double> KrylovSolver<T>::Impl::device_norms(std::size_t first) {
  vec(ops.dot_pair(rhs, rhs, x, x, kA));
  const std::vector<double> squares = read(kA, 2);
  std::vector<double> bnorm(k);
  for (std::size_t j = 0; j < k; ++j) {
    for (const auto& [square, what] : {std::pair{squares[j], "right-hand side"}, {squares[k + j], "initial guess"}}) {
      if (!std::isfinite(square))
        throw InvalidArgument(std::string("the ") + what + "'s vector " + std::to_string(first + j) +
                              " has no finite norm: it holds NaN or an infinity, or values whose squares exceed " +
                              (std::is_same_v<T, float> ? "float" : "double") + "; a solve needs finite input");
    }
    bnorm[j] = std::sqrt(squares[j]);
  }
  return bnorm;
}

// The solve proper, from rhs and x on the device and ||b|| per vector: x is left in the device's
// order.
template <class T>
SolveReport KrylovSolver<T>::Impl::iterate(std::vector<double> bnorm) {
  Progress st;
  st.k = k;
  st.max_iterations = options.max_iterations;
  st.callback = options.progress;
  // GMRES forms x only at a cycle's end (its cycle_end hook): inside a cycle there is none to read.
  if (options.method != KrylovMethod::gmres) st.iterate = [this] { return host_iterate(); };
  st.bnorm = std::move(bnorm);
  st.tolerance.resize(k);
  for (std::size_t j = 0; j < k; ++j)
    st.tolerance[j] = st.bnorm[j] > 0 ? std::max(options.tolerance, options.absolute_tolerance / st.bnorm[j])
                                      : options.tolerance;
  st.active.assign(k, true);
  st.vectors.assign(k, VectorReport{});
  st.replaced.assign(k, false);
  st.halved.assign(k, std::numeric_limits<double>::infinity());
  st.halved_at.assign(k, 0);
  st.last_true.assign(k, std::numeric_limits<double>::infinity());
  std::vector<T> kept(k, T(1));  // 0 for the vectors whose b is 0: their x is 0 exactly
  for (std::size_t j = 0; j < k; ++j) {
    if (st.bnorm[j] > 0) continue;
    kept[j] = 0;
    st.bnorm[j] = 1;
    st.stop(j, SolveStatus::converged, "b = 0, so x = 0");
  }
  if (std::find(kept.begin(), kept.end(), T(0)) != kept.end()) vec(ops.scale(kept, x, x));
  switch (options.method) {
    case KrylovMethod::cg: cg(st); break;
    case KrylovMethod::bicgstab: bicgstab(st); break;
    case KrylovMethod::gmres: gmres(st); break;
  }
  const std::vector<double> truth = current_truth ? *current_truth : true_residual();
  start_from_zero = false;
  SolveReport report = setup_report;
  const char* type = std::is_same_v<T, float> ? "float" : "double";
  for (std::size_t j = 0; j < k; ++j) {
    VectorReport& v = st.vectors[j];
    v.relative_residual = st.relative(j, truth[j]);
    if (st.active[j]) st.stop(j, SolveStatus::max_iterations, "");
    if (v.status == SolveStatus::converged && !(v.relative_residual < st.tolerance[j]) && v.reason.empty()) {
      v.status = SolveStatus::stagnation;
    }
    unverifiable<T>(v, st.tolerance[j], type);
    explain(v, st.tolerance[j], type);
    report.iterations = std::max(report.iterations, v.iterations);
    // The worst vector's, NaN included (std::max would keep the 0 it starts from).
    if (!(v.relative_residual <= report.relative_residual)) report.relative_residual = v.relative_residual;
    if (severity(v.status) >= severity(report.status) || j == 0) {
      if (j == 0 || severity(v.status) > severity(report.status)) report.reason = k == 1 ? v.reason : "vector " + std::to_string(j) + ": " + v.reason;
      report.status = v.status;
    }
  }
  report.converged = report.status == SolveStatus::converged;
  if (report.converged && k > 1) report.reason = "all " + std::to_string(k) + " vectors converged";
  report.vectors = std::move(st.vectors);
  return report;
}

template <class T>
void KrylovSolver<T>::Impl::set_deflation(const std::vector<T>& w, const std::vector<T>& aw, std::size_t m) {
  if (m == 0) {
    deflation = 0;
    return;
  }
  if (w.size() != rows * m || aw.size() != rows * m)
    throw InvalidArgument("deflation needs W and A W of " + std::to_string(rows) + " x " + std::to_string(m) +
                          " values, not " + std::to_string(w.size()) + " and " + std::to_string(aw.size()));
  checked_column_norms(w, "the deflation vectors W", m);
  checked_column_norms(aw, "the deflation vectors A W", m);
  begin_deflation(m);
  add(to_device(w, m, deflation_scaled, deflation_w), times.deflation);
  add(to_device(aw, m, deflation_scaled, deflation_aw), times.deflation);
  finish_deflation(m);
}

template <class T>
void KrylovSolver<T>::Impl::set_deflation(const DeviceVectors<T>& w, const DeviceVectors<T>& aw) {
  const std::size_t m = w.k();
  if (w.rows() != rows || aw.rows() != rows || aw.k() != m)
    throw InvalidArgument("deflation needs W and A W of " + std::to_string(rows) + " x " + std::to_string(m) +
                          " values, not " + std::to_string(w.rows()) + " x " + std::to_string(w.k()) + " and " +
                          std::to_string(aw.rows()) + " x " + std::to_string(aw.k()));
  begin_deflation(m);
  add(ops.gather_columns(order(), w, {m, 0, m}, deflation_w, m), times.deflation);
  add(ops.gather_columns(order(), aw, {m, 0, m}, deflation_aw, m), times.deflation);
  finish_deflation(m);
}

// The checks, and W, A W and W E^-1 zeroed (padded x m): the vectors go in in the device's order.
template <class T>
void KrylovSolver<T>::Impl::begin_deflation(std::size_t m) {
  if (options.method != KrylovMethod::cg) throw InvalidArgument("deflation is for cg, not " + std::string(to_string(options.method)));
  if (m > rows) throw InvalidArgument("deflation by " + std::to_string(m) + " vectors of " + std::to_string(rows) + " rows");
  const auto zeros = [&](DeviceBuffer<T>& buffer, const char* what) {
    if (buffer.size() != padded * m) buffer = DeviceBuffer<T>(context, padded * m, what);
    ::ziggurat::detail::enqueue_zero(context, context.compute_queue(), buffer.get(), buffer.bytes());
  };
  zeros(deflation_scaled, "deflation W E^-1");
  zeros(deflation_w, "deflation vectors W");
  zeros(deflation_aw, "deflation vectors A W");
}

// E = W^T A W on the device, inverted on the host in double; then W E^-1 on the device. A
// non-finite E means W or A W held NaN or an infinity (the device-vector form checks nothing else).
template <class T>
void KrylovSolver<T>::Impl::finish_deflation(std::size_t m) {
  if (!deflation_products || deflation_products->m() != m) {
    deflation_g = DeviceBuffer<T>(context, m * k, "deflation scratch");
    deflation_products = std::make_unique<BlockProducts<T>>(context, padded, m, k);
  }
  BlockProducts<T> square(context, padded, m, m);
  DeviceBuffer<T> e(context, m * m, "deflation W^T A W");
  square.gram(deflation_w.get(), deflation_aw.get(), e.get());
  std::vector<T> values(m * m);
  ::ziggurat::detail::read_buffer(context.compute_queue(), e.get(), values.data(), values.size() * sizeof(T));
  if (!std::all_of(values.begin(), values.end(), [](T v) { return std::isfinite(v); }))
    throw InvalidArgument("deflation: W^T A W is not finite: W or A W holds NaN or an infinity");
  Eigen::MatrixXd matrix(m, m);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < m; ++j) matrix(i, j) = 0.5 * (double(values[i * m + j]) + double(values[j * m + i]));
  const Eigen::LLT<Eigen::MatrixXd> cholesky(matrix);
  if (cholesky.info() != Eigen::Success)
    throw InvalidArgument("deflation: W^T A W is not positive definite: the columns of W are dependent, or A is not "
                          "positive definite on them");
  const Eigen::MatrixXd inverse = cholesky.solve(Eigen::MatrixXd::Identity(m, m));
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < m; ++j) values[i * m + j] = T(inverse(i, j));
  ::ziggurat::detail::write_buffer(context.compute_queue(), e.get(), values.data(), m * m * sizeof(T));
  square.combine(deflation_w.get(), e.get(), T(1), T(0), deflation_scaled.get());
  check(context.compute_queue().finish(), "clFinish", "setting up deflation");
  deflation = m;
}

// ---------------------------------------------------------------------------------------------
// The public class

namespace {

// The renumbered matrix, or nothing for the natural ordering (A itself: no copy). With ILU2's
// static pivoting the rows are matched first and the ordering is made for the matched matrix;
// `pivoted` receives the renumbered, matched matrix to factorise and its rows in the renumbered
// matrix's numbering (its row r, of blocks of pivoted.block rows, is row pivoted.rows.old_of_new[r]).
template <class T>
std::optional<Bsr<T>> ordered_matrix(const Bsr<T>& a, const SolverOptions& options, Permutation& permutation,
                                     std::size_t& colours, Pivoted<T>& pivoted) {
  const bool ilu2 = options.preconditioner == PreconditionerKind::ilu2;
  const StaticPivoting pivoting = options.method == KrylovMethod::cg ? StaticPivoting::off : options.static_pivoting;
  MatchedRows<T> m;  // none, also where every column's largest block is on the diagonal already
  if (ilu2 && pivoting != StaticPivoting::off) m = match_rows(a);
  const bool matched = !m.rows.identity();
  pivoted.block = m.block;
  if ((!ilu2 && options.preconditioner != PreconditionerKind::ilu0) || options.ordering == Ordering::natural) {
    pivoted.rows = std::move(m.rows);
    if (matched) pivoted.matrix = std::move(m.matrix);
    return std::nullopt;
  }
  permutation = make_ordering(matched ? m.matrix : a, options.ordering, &colours, options.aggregate);
  if (matched) {  // Q P Q^T on the rows (single rows or blocks), the matched matrix renumbered
    const std::size_t n = a.block_rows, b = m.block == 1 ? a.block_size : 1;
    std::vector<Index> new_of_old(n);
    for (std::size_t r = 0; r < n; ++r) new_of_old[permutation.old_of_new[r]] = static_cast<Index>(r);
    pivoted.rows.old_of_new.resize(m.rows.old_of_new.size());
    for (std::size_t r = 0; r < n; ++r)
      for (std::size_t l = 0; l < b; ++l) {
        const Index from = m.rows.old_of_new[permutation.old_of_new[r] * b + l];
        pivoted.rows.old_of_new[r * b + l] = static_cast<Index>(new_of_old[from / b] * b + from % b);
      }
    pivoted.matrix = permute(m.matrix, permutation);
  }
  return permute(a, permutation);
}

// chosen_ordering's choice where A's values do not decide it; nothing where its skewness does.
std::optional<Ordering> ordering_by_kind(Ordering ordering, PreconditionerKind preconditioner, std::size_t block_size,
                                         const DeviceInfo& device) {
  if (ordering != Ordering::automatic) return ordering;
  if (preconditioner == PreconditionerKind::ilu2) return Ordering::nested_dissection;
  if (preconditioner != PreconditionerKind::ilu0) return Ordering::natural;
  if (prefers_sequential_sweeps(device) || block_size > 3) return Ordering::natural;
  return std::nullopt;
}

// `a` after the checks of a solve's arguments, in the order the constructor documents: the
// precision, the options, then the matrix.
template <class T>
const Bsr<T>& validated(const Context& context, const Bsr<T>& a, std::size_t k, const SolverOptions& options) {
  require_precision<T>(context.device(), "a solve in double");
  check_options(options, k);
  validate(a);
  return a;
}

}  // namespace

template <class T>
Ordering chosen_ordering(Ordering ordering, PreconditionerKind preconditioner, const Bsr<T>& a,
                         const DeviceInfo& device, Validated) {
  if (const auto chosen = ordering_by_kind(ordering, preconditioner, a.block_size, device)) return *chosen;
  return skewness(a, Validated{}) > kNaturalOrderSkewness ? Ordering::natural : Ordering::colours;
}

template <class T>
Ordering chosen_ordering(Ordering ordering, PreconditionerKind preconditioner, const Bsr<T>& a,
                         const DeviceInfo& device) {
  if (const auto chosen = ordering_by_kind(ordering, preconditioner, a.block_size, device)) return *chosen;
  validate(a);
  return chosen_ordering(ordering, preconditioner, a, device, Validated{});
}

template <class T>
bool jacobi_sweeps_chosen(const SolverOptions& options, const Bsr<T>& a, const DeviceInfo& device, Validated) {
  return options.ordering == Ordering::automatic && options.sweep == TriangularSweep::automatic &&
         options.preconditioner == PreconditionerKind::ilu0 && a.block_size == 1 &&
         !prefers_sequential_sweeps(device) && diagonally_dominant(a, Validated{});
}

template <class T>
KrylovSolver<T>::KrylovSolver(const Context& context, const Bsr<T>& a, std::size_t k, SolverOptions options)
    : KrylovSolver(context, validated(context, a, k, options), k, std::move(options), Validated{}) {}

template <class T>
KrylovSolver<T>::KrylovSolver(const Context& context, const Bsr<T>& a, std::size_t k, SolverOptions options, Validated) {
  const auto start = Clock::now();
  require_precision<T>(context.device(), "a solve in double");
  check_options(options, k);
  check_solvable(a);
  if (jacobi_sweeps_chosen(options, a, context.device(), Validated{})) {
    options.ordering = Ordering::natural;
    options.sweep = TriangularSweep::jacobi;
  }
  options.ordering = chosen_ordering(options.ordering, options.preconditioner, a, context.device(), Validated{});
  Permutation permutation;
  Pivoted<T> pivoted;
  std::size_t colours = 0;
  const std::optional<Bsr<T>> renumbered = ordered_matrix(a, options, permutation, colours, pivoted);
  const double ordering = seconds_since(start);
  impl_ = std::make_unique<Impl>(context, a, k, std::move(options), renumbered ? *renumbered : a, nullptr,
                                 std::move(pivoted));
  impl_->permutation = std::move(permutation);
  impl_->place_renumbering();
  impl_->setup_report.ordering = to_string(impl_->options.ordering);
  if (impl_->options.ordering == Ordering::colours || impl_->options.ordering == Ordering::block_colours) {
    impl_->setup_report.colours = colours;
  }
  impl_->setup_times.setup = seconds_since(start);
  impl_->setup_times.ordering = ordering;
}

template <class T>
KrylovSolver<T>::KrylovSolver(const Context& context, std::shared_ptr<LinearOperator<T>> a, const Bsr<T>& diagonal_blocks,
                              SolverOptions options) {
  const auto start = Clock::now();
  require_precision<T>(context.device(), "a solve in double");
  if (!a) throw InvalidArgument("a matrix-free solve needs an operator, not a null pointer");
  check_options(options, a->vectors());
  if (options.preconditioner == PreconditionerKind::ilu0 || options.preconditioner == PreconditionerKind::ilu2)
    throw InvalidArgument(std::string(options.preconditioner == PreconditionerKind::ilu0 ? "ILU(0)" : "ILU2") +
                          " needs the assembled matrix; a matrix-free solve takes the preconditioner none, jacobi or "
                          "block-jacobi");
  validate(diagonal_blocks);
  check_solvable(diagonal_blocks);
  if (diagonal_blocks.rows != a->size())
    throw InvalidArgument("the preconditioner's matrix has " + std::to_string(diagonal_blocks.rows) +
                          " rows but the operator " + std::to_string(a->size()) + ": both must be the same n");
  const std::size_t k = a->vectors();
  options.ordering = Ordering::natural;  // matrix-free: nothing to renumber
  impl_ = std::make_unique<Impl>(context, diagonal_blocks, k, std::move(options), diagonal_blocks, std::move(a));
  impl_->place_renumbering();
  impl_->setup_report.ordering = to_string(Ordering::natural);
  impl_->setup_times.setup = seconds_since(start);
}

template <class T>
KrylovSolver<T>::~KrylovSolver() = default;
template <class T>
KrylovSolver<T>::KrylovSolver(KrylovSolver&&) noexcept = default;
template <class T>
KrylovSolver<T>& KrylovSolver<T>::operator=(KrylovSolver&&) noexcept = default;

template <class T>
SolveReport KrylovSolver<T>::solve(const std::vector<T>& b, std::vector<T>& x) {
  return impl_->solve(b, x);
}

template <class T>
SolveReport KrylovSolver<T>::solve(const DeviceVectors<T>& b, DeviceVectors<T>& x, std::size_t first,
                                   std::size_t count) {
  return impl_->solve(b, x, first, count);
}

template <class T>
void KrylovSolver<T>::deflate(const std::vector<T>& w, const std::vector<T>& aw, std::size_t m) {
  impl_->set_deflation(w, aw, m);
}

template <class T>
void KrylovSolver<T>::deflate(const DeviceVectors<T>& w, const DeviceVectors<T>& aw) {
  impl_->set_deflation(w, aw);
}

template <class T>
void KrylovSolver<T>::precondition_with(std::shared_ptr<LinearOperator<T>> m) {
  Impl& s = *impl_;
  if (m && s.options.preconditioner != PreconditionerKind::none)
    throw InvalidArgument(std::string("the solver has its own preconditioner (") + to_string(s.options.preconditioner) +
                          "); an operator's M^-1 needs the preconditioner none");
  if (m && (m->size() != s.rows || m->vectors() != s.k))
    throw InvalidArgument("the preconditioner's operator is " + std::to_string(m->size()) + " x " +
                          std::to_string(m->size()) + " for " + std::to_string(m->vectors()) + " vectors; the system is " +
                          std::to_string(s.rows) + " x " + std::to_string(s.rows) + " for " + std::to_string(s.k));
  s.preconditioner_operator = std::move(m);
  if (s.preconditioner_operator && !s.operator_in) {
    s.operator_in.emplace(input_vectors(s.context, s.matrix, s.k));
    s.operator_out.emplace(input_vectors(s.context, s.matrix, s.k));
  }
}

template <class T>
void KrylovSolver<T>::apply_preconditioner(const std::vector<T>& in, std::vector<T>& out) {
  Impl& impl = *impl_;
  if (in.size() != impl.rows * impl.k)
    throw InvalidArgument("the preconditioner's input holds " + std::to_string(in.size()) + " values; it needs " +
                          std::to_string(impl.rows * impl.k) + " (" + std::to_string(impl.rows) + " rows x " +
                          std::to_string(impl.k) + " vectors)");
  checked_column_norms(in, "the preconditioner's input", impl.k);  // only to refuse non-finite values
  impl.vec(impl.to_device(in, impl.k, impl.s.buffer(), impl.r.buffer()));
  impl.precondition(impl.r, impl.z);
  impl.to_host(impl.z, out);
  impl.resolve();
}

template <class T>
void KrylovSolver<T>::set_stopping(double tolerance, double absolute_tolerance, std::size_t max_iterations) {
  SolverOptions o = impl_->options;
  o.tolerance = tolerance;
  o.absolute_tolerance = absolute_tolerance;
  o.max_iterations = max_iterations;
  check_options(o, impl_->k);
  impl_->options = std::move(o);
}

template <class T>
void KrylovSolver<T>::set_hooks(std::function<void(const SolveProgress&)> progress,
                                std::function<void(const SolveProgress&)> cycle_end) {
  impl_->options.progress = std::move(progress);
  impl_->options.cycle_end = std::move(cycle_end);
}

template <class T>
const SolverOptions& KrylovSolver<T>::options() const noexcept {
  return impl_->options;
}

template <class T>
SolveReport solve(const Context& context, const Bsr<T>& a, const std::vector<T>& b, std::vector<T>& x, std::size_t k,
                  const SolverOptions& options) {
  KrylovSolver<T> solver(context, a, k, options);
  return solver.solve(b, x);
}

template class KrylovSolver<float>;
template class KrylovSolver<double>;
template bool jacobi_sweeps_chosen<float>(const SolverOptions&, const Bsr<float>&, const DeviceInfo&, Validated);
template bool jacobi_sweeps_chosen<double>(const SolverOptions&, const Bsr<double>&, const DeviceInfo&, Validated);
template Ordering chosen_ordering<float>(Ordering, PreconditionerKind, const Bsr<float>&, const DeviceInfo&);
template Ordering chosen_ordering<double>(Ordering, PreconditionerKind, const Bsr<double>&, const DeviceInfo&);
template Ordering chosen_ordering<float>(Ordering, PreconditionerKind, const Bsr<float>&, const DeviceInfo&, Validated);
template Ordering chosen_ordering<double>(Ordering, PreconditionerKind, const Bsr<double>&, const DeviceInfo&,
                                          Validated);
template SolveReport solve<float>(const Context&, const Bsr<float>&, const std::vector<float>&, std::vector<float>&,
                                  std::size_t, const SolverOptions&);
template SolveReport solve<double>(const Context&, const Bsr<double>&, const std::vector<double>&,
                                   std::vector<double>&, std::size_t, const SolverOptions&);

}  // namespace ziggurat::sparse
