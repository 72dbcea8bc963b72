// The Krylov solvers' SciPy-facing parts on every device: the absolute tolerance in the stopping
// test, progress hooks that read the iterate, M^-1 applied by an operator (precondition_with) or
// on its own (apply_preconditioner), and GMRES on a preconditioner that is singular.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "../support/devices.hpp"
#include "../support/util.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/solver/krylov.hpp"

using namespace ziggurat;
using namespace ziggurat::sparse;

namespace {

// ||b - A x|| on the host, in double.
double residual_norm(const Bsr<double>& a, const std::vector<double>& x, const std::vector<double>& b) {
  const Csr<double> csr = to_csr(a);
  double sum = 0;
  for (std::size_t i = 0; i < csr.rows; ++i) {
    double r = b[i];
    for (Index p = csr.row_ptr[i]; p < csr.row_ptr[i + 1]; ++p) r -= csr.values[p] * x[csr.col[p]];
    sum += r * r;
  }
  return std::sqrt(sum);
}

double norm(const std::vector<double>& v) {
  double sum = 0;
  for (double value : v) sum += value * value;
  return std::sqrt(sum);
}

// y = scale * x, elementwise, computed on the host: an operator the device cannot see into.
class HostScaling final : public LinearOperator<double> {
 public:
  explicit HostScaling(std::vector<double> scale) : scale_(std::move(scale)) {}
  std::size_t size() const noexcept override { return scale_.size(); }
  std::size_t vectors() const noexcept override { return 1; }
  Span enqueue(const DeviceVectors<double>& x, DeviceVectors<double>& y) override {
    std::vector<double> values = x.download();
    for (std::size_t i = 0; i < values.size(); ++i) values[i] *= scale_[i];
    y.upload(values);
    ++calls;
    return {};
  }
  std::size_t calls = 0;

 private:
  std::vector<double> scale_;
};

// A symmetric positive definite tridiagonal matrix whose diagonal grows along the rows (so that
// Jacobi helps): 2 + i / 16 on the diagonal, -1 beside it.
Bsr<double> spd_tridiagonal(std::size_t n) {
  Csr<double> csr;
  csr.rows = csr.cols = n;
  for (std::size_t i = 0; i < n; ++i) {
    if (i > 0) csr.col.push_back(Index(i - 1)), csr.values.push_back(-1);
    csr.col.push_back(Index(i)), csr.values.push_back(2 + double(i) / 16);
    if (i + 1 < n) csr.col.push_back(Index(i + 1)), csr.values.push_back(-1);
    csr.row_ptr.push_back(Index(csr.col.size()));
  }
  return to_bsr(csr, 1);
}

std::vector<double> inverse_diagonal(const Bsr<double>& a) {
  const Csr<double> csr = to_csr(a);
  std::vector<double> d(csr.rows);
  for (std::size_t i = 0; i < csr.rows; ++i)
    for (Index p = csr.row_ptr[i]; p < csr.row_ptr[i + 1]; ++p)
      if (csr.col[p] == i) d[i] = 1 / csr.values[p];
  return d;
}

}  // namespace

TEST_CASE("the absolute tolerance bounds ||b - A x||; the two tolerances are checked") {
  test::for_each_device([](Context& context) {
    if (!context.device().fp64) return;
    const Bsr<double> a = spd_tridiagonal(120);
    std::vector<double> b = test::random_vectors<double>(a.rows, 1, 4);
    for (double& v : b) v *= 1e3;
    for (const KrylovMethod method : {KrylovMethod::cg, KrylovMethod::bicgstab, KrylovMethod::gmres}) {
      const std::string name = to_string(method);
      CAPTURE(name);
      SolverOptions options;
      options.method = method;
      options.preconditioner = PreconditionerKind::jacobi;
      options.tolerance = 0;
      double previous = 0;
      for (const double atol : {1e-6, 1e-1, 10.0}) {
        options.absolute_tolerance = atol;
        std::vector<double> x;
        const SolveReport report = solve(context, a, b, x, 1, options);
        CHECK(report.converged);
        const double r = residual_norm(a, x, b);
        CHECK(r < atol);
        CHECK(r > previous);  // a looser bound stops earlier
        previous = r;
      }
      // rtol wins where it is the larger bound: max(rtol ||b||, atol).
      options.tolerance = 1e-3;
      options.absolute_tolerance = 1e-9;
      std::vector<double> x;
      CHECK(solve(context, a, b, x, 1, options).converged);
      CHECK(residual_norm(a, x, b) < 1e-3 * norm(b));
      CHECK(residual_norm(a, x, b) > 1e-9);
    }
    SolverOptions bad;
    bad.tolerance = 0;
    std::vector<double> x;
    CHECK_THROWS_WITH_AS(solve(context, a, b, x, 1, bad), doctest::Contains("both 0"), InvalidArgument);
    bad.tolerance = std::numeric_limits<double>::quiet_NaN();
    CHECK_THROWS_AS(solve(context, a, b, x, 1, bad), InvalidArgument);
    bad.tolerance = 1e-8;
    bad.absolute_tolerance = -1;
    CHECK_THROWS_AS(solve(context, a, b, x, 1, bad), InvalidArgument);
  });
}

TEST_CASE("progress reads each iterate; GMRES's cycle_end comes with x formed") {
  test::for_each_device([](Context& context) {
    if (!context.device().fp64) return;
    const Bsr<double> a = spd_tridiagonal(100);
    const std::vector<double> b = test::random_vectors<double>(a.rows, 1, 5);
    for (const KrylovMethod method : {KrylovMethod::cg, KrylovMethod::bicgstab}) {
      SolverOptions options;
      options.method = method;
      options.preconditioner = PreconditionerKind::ilu0;
      std::vector<double> last;
      std::size_t calls = 0;
      options.progress = [&](const SolveProgress& p) {
        ++calls;
        REQUIRE(p.iterate);
        last = p.iterate();
      };
      std::vector<double> x;
      const SolveReport report = solve(context, a, b, x, 1, options);
      CHECK(report.converged);
      CHECK(calls == report.iterations);
      CHECK(last == x);  // the last iterate is the solution, in the caller's order
    }
    SolverOptions options;
    options.method = KrylovMethod::gmres;
    options.preconditioner = PreconditionerKind::none;
    options.restart = 4;
    options.max_iterations = 12;
    std::vector<double> residuals;
    std::size_t inner = 0;
    options.progress = [&](const SolveProgress& p) {
      ++inner;
      CHECK_FALSE(p.iterate);  // GMRES holds no x inside a cycle
    };
    options.cycle_end = [&](const SolveProgress& p) { residuals.push_back(residual_norm(a, p.iterate(), b)); };
    std::vector<double> x;
    const SolveReport report = solve(context, a, b, x, 1, options);
    CHECK(inner == report.iterations);
    CHECK(residuals.size() == (report.iterations + 3) / 4);
    CHECK(residuals.back() == doctest::Approx(residual_norm(a, x, b)));
  });
}

TEST_CASE("M^-1 by an operator is the preconditioner it computes; apply_preconditioner applies the solver's") {
  test::for_each_device([](Context& context) {
    if (!context.device().fp64) return;
    const Bsr<double> a = spd_tridiagonal(150);
    const std::vector<double> b = test::random_vectors<double>(a.rows, 1, 6);
    const std::vector<double> d = inverse_diagonal(a);
    for (const KrylovMethod method : {KrylovMethod::cg, KrylovMethod::bicgstab, KrylovMethod::gmres}) {
      const std::string name = to_string(method);
      CAPTURE(name);
      SolverOptions options;
      options.method = method;
      options.preconditioner = PreconditionerKind::jacobi;
      KrylovSolver<double> on_device(context, a, 1, options);
      std::vector<double> x_device, applied;
      const SolveReport device = on_device.solve(b, x_device);
      on_device.apply_preconditioner(b, applied);
      for (std::size_t i = 0; i < b.size(); ++i) CHECK(applied[i] == doctest::Approx(d[i] * b[i]).epsilon(1e-14));

      options.preconditioner = PreconditionerKind::none;
      KrylovSolver<double> by_operator(context, a, 1, options);
      auto host = std::make_shared<HostScaling>(d);
      by_operator.precondition_with(host);
      std::vector<double> x_host;
      const SolveReport report = by_operator.solve(b, x_host);
      CHECK(report.converged);
      CHECK(host->calls >= report.iterations);
      CHECK(report.iterations == device.iterations);
      CHECK(residual_norm(a, x_host, b) < 1e-8 * norm(b));
      // Not beside a preconditioner of the solver's own, and only of the system's size.
      CHECK_THROWS_AS(on_device.precondition_with(host), InvalidArgument);
      CHECK_THROWS_AS(by_operator.precondition_with(std::make_shared<HostScaling>(std::vector<double>(3, 1.0))),
                      InvalidArgument);
    }
  });
}

TEST_CASE("GMRES with a singular preconditioner stops with x finite, solved outside M's null space") {
  test::for_each_device([](Context& context) {
    if (!context.device().fp64) return;
    // SciPy's test_defective_precond_breakdown: A = diag(2, 3, 4), M = diag(1, 1, 0).
    Csr<double> csr;
    csr.rows = csr.cols = 3;
    csr.row_ptr = {0, 1, 2, 3};
    csr.col = {0, 1, 2};
    csr.values = {2, 3, 4};
    const Bsr<double> a = to_bsr(csr, 1);
    SolverOptions options;
    options.method = KrylovMethod::gmres;
    options.preconditioner = PreconditionerKind::none;
    options.tolerance = 1e-15;
    for (const std::size_t restart : {1, 2, 3, 20}) {
      options.restart = restart;
      KrylovSolver<double> solver(context, a, 1, options);
      solver.precondition_with(std::make_shared<HostScaling>(std::vector<double>{1, 1, 0}));
      std::vector<double> x = {1, 0, 0};
      const SolveReport report = solver.solve({0, 1, 1}, x);
      CAPTURE(restart);
      CHECK_FALSE(report.converged);
      CHECK(x[0] == doctest::Approx(0).epsilon(1e-12));
      CHECK(x[1] == doctest::Approx(1.0 / 3));
      CHECK(x[2] == 0);
    }
  });
}
