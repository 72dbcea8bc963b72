// ILU2 and IC2 on every device: host factors (matrix/ilu2.hpp) applied by the device's triangular
// solves against the sequential reference, and the solvers with ilu2 on real systems where ILU(0)
// cannot start.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "../support/devices.hpp"
#include "../support/util.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/io/matrix_market.hpp"
#include "ziggurat/matrix/ilu2.hpp"
#include "ziggurat/matrix/ilu_factors.hpp"
#include "ziggurat/matrix/ordering.hpp"
#include "ziggurat/ops/block_ilu.hpp"
#include "ziggurat/solver/krylov.hpp"

using namespace ziggurat;
using namespace ziggurat::sparse;
using test::random_vectors;

namespace {

// max |device - reference| / max(1, max |reference|).
template <class T>
double max_difference(const std::vector<T>& a, const std::vector<T>& b) {
  double worst = 0, largest = 1;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double d = std::abs(double(a[i]) - double(b[i]));
    worst = std::isnan(d) ? std::numeric_limits<double>::infinity() : std::max(worst, d);
    largest = std::max(largest, std::abs(double(b[i])));
  }
  return worst / largest;
}

template <class T>
Bsr<T> read_bsr(const char* name, std::size_t b) {
  const auto path = std::filesystem::path(ZIGGURAT_TEST_DATA_DIR) / "matrices" / name;
  return to_bsr(read_matrix_market<T>(path.string()).matrix, b);
}

template <class T>
std::vector<T> device_apply(const Context& context, DeviceBlockIlu<T>& ilu, const std::vector<T>& r) {
  DeviceBuffer<T> dr(context, r.size()), dz(context, r.size());
  copy_to_device(context.compute_queue(), r.data(), dr);
  ilu.apply(dr, dz);
  std::vector<T> z(r.size());
  copy_to_host(context.compute_queue(), dz, z.data());
  return z;
}

}  // namespace

TEST_CASE_TEMPLATE("the device's triangular solves apply ILU2 and IC2 factors as apply_ilu0 does", T, float, double) {
  test::for_each_device(
      [](Context& context) {
        for (std::size_t b : {1, 2, 3}) {
          for (Ordering ordering : {Ordering::natural, Ordering::nested_dissection}) {
            for (bool symmetric : {false, true}) {
              const Bsr<T> base = convection_diffusion_bsr<T>(8, 6, 5, b, 2 + b);
              const Bsr<T> ordered = permute(base, make_ordering(base, ordering));
              const Bsr<T> a = symmetric ? symmetric_part(ordered) : ordered;
              Ilu2Options o;
              o.threshold = 0.01;
              o.symmetric = symmetric;
              const Ilu2Factors<T> f = factorize_ilu2(a, o);
              CHECK(f.fill > 1);
              const std::size_t k = b == 2 ? 2 : 1, n = a.block_rows * b;
              DeviceBlockIlu<T> levels(context, f.factors, f.diagonal, k, TriangularSweep::levels);
              DeviceBlockIlu<T> sync_free(context, f.factors, f.diagonal, k, TriangularSweep::sync_free);
              DeviceBlockIlu<T> sequential(context, f.factors, f.diagonal, k, TriangularSweep::sequential);
              const std::size_t exact = std::max(levels.lower_levels(), levels.upper_levels()) - 1;
              DeviceBlockIlu<T> jacobi(context, f.factors, f.diagonal, k, TriangularSweep::jacobi, exact);
              CHECK(levels.lower_levels() == lower_levels(f.factors).levels());
              CHECK(levels.factors() == f.factors.values);
              const std::vector<T> r = random_vectors<T>(n, k, 5);
              const std::vector<T> z = device_apply(context, levels, r), z2 = device_apply(context, sync_free, r),
                                   z3 = device_apply(context, sequential, r), z4 = device_apply(context, jacobi, r);
              INFO("b = " << b << ", " << std::string(to_string(ordering)) << (symmetric ? ", IC2" : ", ILU2"));
              CHECK(max_difference(z, apply_ilu0(f.factors, f.diagonal, r, k)) <= 256 * std::numeric_limits<T>::epsilon());
              CHECK(std::memcmp(z.data(), z2.data(), z.size() * sizeof(T)) == 0);
              CHECK(std::memcmp(z.data(), z3.data(), z.size() * sizeof(T)) == 0);
              CHECK(std::memcmp(z.data(), z4.data(), z.size() * sizeof(T)) == 0);
            }
          }
        }
      },
      test::needs_for<T>());
}

TEST_CASE("GMRES(50) + ILU2 solves bp_1200 and west0067, where ILU(0) cannot start, in every ordering") {
  test::for_each_device([](Context& context) {
    for (const char* file : {"bp_1200.mtx", "west0067.mtx"}) {
      const Bsr<double> a = read_bsr<double>(file, 1);
      const std::vector<double> rhs(a.rows, 1.0);
      SolverOptions options;
      options.method = KrylovMethod::gmres;
      options.restart = 50;
      options.tolerance = 1e-9;
      std::vector<double> x;
      CHECK_THROWS_AS(solve(context, a, rhs, x, 1, options), InvalidArgument);  // ILU(0): zero diagonal blocks
      options.preconditioner = PreconditionerKind::ilu2;
      for (Ordering ordering : {Ordering::natural, Ordering::levels, Ordering::nested_dissection}) {
        options.ordering = ordering;
        const SolveReport report = solve(context, a, rhs, x, 1, options);
        INFO(file << ", " << std::string(to_string(ordering)) << ": " << report.reason);
        CHECK(report.converged);
        CHECK(report.relative_residual < 1e-9);
        CHECK(report.iterations <= 15);  // SciPy's spilu + GMRES(50): 7 and 2 (python/tests/test_solve.py)
        CHECK(report.matched_rows);
        CHECK(report.fill > 1);
        CHECK(report.times.host_factorization > 0);
        CHECK(report.lower_levels > 0);
      }
      options.static_pivoting = StaticPivoting::off;  // without it, a zero pivot names its row
      options.ordering = Ordering::natural;
      try {
        solve(context, a, rhs, x, 1, options);
        FAIL("no ZeroPivot");
      } catch (const ZeroPivot& error) {
        CHECK(std::string(error.what()).find("ILU2 failed") != std::string::npos);
        CHECK(std::string(error.what()).find("block row " + std::to_string(error.block_row())) != std::string::npos);
      }
    }
  }, test::Needs::fp64);
}

TEST_CASE("cg with ilu2 runs IC2: fewer iterations than ILU(0) on an SPD system; static pivoting on is refused") {
  test::for_each_device([](Context& context) {
    const Bsr<double> a = symmetric_part(convection_diffusion_bsr<double>(10, 8, 6, 2, 4));
    const std::vector<double> rhs = random_vectors<double>(a.rows, 1, 8);
    SolverOptions options;
    options.method = KrylovMethod::cg;
    options.tolerance = 1e-9;
    std::vector<double> x;
    const SolveReport ilu0 = solve(context, a, rhs, x, 1, options);
    options.preconditioner = PreconditionerKind::ilu2;
    options.ordering = Ordering::nested_dissection;
    const SolveReport ic2 = solve(context, a, rhs, x, 1, options);
    CHECK(ilu0.converged);
    CHECK(ic2.converged);
    CHECK(ic2.iterations < ilu0.iterations);
    CHECK(!ic2.matched_rows);
    options.static_pivoting = StaticPivoting::on;
    CHECK_THROWS_AS(solve(context, a, rhs, x, 1, options), InvalidArgument);
    options.static_pivoting = StaticPivoting::automatic;
    options.threshold = -1;
    CHECK_THROWS_AS(solve(context, a, rhs, x, 1, options), InvalidArgument);
  }, test::Needs::fp64);
}
