// Explicit FEM elastic waves on every device: the grid's matrices (rigid motions, mass, the
// stability limit), the device step against the host reference bit for bit, discrete energy
// conservation, and the arrival times of direct P and S waves in a homogeneous medium.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "../support/devices.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/matrix/elastic_grid.hpp"
#include "ziggurat/matrix/sparse.hpp"
#include "ziggurat/ops/wave_step.hpp"
#include "ziggurat/solver/wave.hpp"

using namespace ziggurat;
using namespace ziggurat::wave;

namespace {

ElasticGrid2D homogeneous(std::size_t nx, std::size_t nz, double dx, double vp = 3000, double vs = 1500,
                          double rho = 2500) {
  return layered_grid(nx, nz, dx, {{0, vp, vs, rho}});
}

// Two layers and a column of slower cells, so that no two neighbouring rows are alike.
ElasticGrid2D layered(std::size_t nx, std::size_t nz) {
  ElasticGrid2D grid = layered_grid(nx, nz, 10, {{0, 2000, 900, 2000}, {60, 3200, 1800, 2600}});
  for (std::size_t iz = 0; iz + 1 < nz; ++iz) grid.vs[iz * (nx - 1) + nx / 3] *= 0.7;
  return grid;
}

// The discrete energy of the step from u to v: 1/2 w^T M w + 1/2 v^T K u, w = (v - u) / dt,
// which central differences keep constant without damping and sources.
double energy(const ElasticGrid2D& grid, double dt, const std::vector<double>& u, const std::vector<double>& v) {
  const std::vector<double> m = lumped_mass(grid);
  const std::vector<double> ku = sparse::multiply(stiffness(grid), u);
  double kinetic = 0, potential = 0;
  for (std::size_t i = 0; i < u.size(); ++i) {
    const double w = (v[i] - u[i]) / dt;
    kinetic += m[i] * w * w;
    potential += v[i] * ku[i];
  }
  return 0.5 * (kinetic + potential);
}

}  // namespace

TEST_CASE("wave grid: K holds rigid translations, M the model's mass, dt the stability limit") {
  const ElasticGrid2D grid = layered(23, 17);
  const sparse::Dia<double> k = stiffness(grid);
  sparse::validate(k);
  CHECK(k.offsets.size() == 11);
  for (const int c : {0, 1}) {  // a translation in x, then in z, costs no force
    std::vector<double> u(grid.dofs(), 0.0);
    for (std::size_t i = c; i < u.size(); i += 2) u[i] = 1;
    double largest = 0;
    for (const double f : sparse::multiply(k, u)) largest = std::max(largest, std::abs(f));
    double scale = 0;
    for (const double v : k.values) scale = std::max(scale, std::abs(v));
    CHECK(largest <= 1e-12 * scale);
  }
  const std::vector<double> m = lumped_mass(grid);
  double total = 0, want = 0;
  for (const double v : m) total += v;
  for (const double rho : grid.rho) want += 2 * rho * grid.dx * grid.dx;  // two components
  CHECK(std::abs(total - want) <= 1e-12 * want);
  // The limit is below the exact 2 / sqrt(lambda_max), lambda_max by power iteration (from below).
  std::vector<double> x(grid.dofs(), 1.0);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37 * double(i));
  double lambda = 0;
  for (int it = 0; it < 400; ++it) {
    std::vector<double> y = sparse::multiply(k, x);
    double norm = 0;
    for (std::size_t i = 0; i < y.size(); ++i) norm += (y[i] /= m[i]) * y[i];
    norm = std::sqrt(norm);
    lambda = norm;
    for (std::size_t i = 0; i < y.size(); ++i) x[i] = y[i] / norm;
  }
  const double limit = stable_time_step(grid), exact_at_least = 2 / std::sqrt(lambda);
  CHECK(limit <= exact_at_least * (1 + 1e-6));
  CHECK(limit >= 0.5 * exact_at_least);  // Gershgorin is not far off on this grid
}

TEST_CASE("wave grid: bad input is refused by name") {
  CHECK_THROWS_WITH_AS(homogeneous(3, 10, 10), doctest::Contains("at least 4 nodes"), InvalidArgument);
  CHECK_THROWS_WITH_AS(homogeneous(10, 10, 10, 1000, 900), doctest::Contains("vp > 1.155 vs"), InvalidArgument);
  CHECK_THROWS_WITH_AS(layered_grid(10, 10, 10, {{5, 3000, 1500, 2500}}), doctest::Contains("depth 0"),
                       InvalidArgument);
  ElasticGrid2D grid = homogeneous(10, 10, 10);
  grid.rho[7] = std::nan("");
  CHECK_THROWS_WITH_AS(validate(grid), doctest::Contains("cell (7, 0)"), InvalidArgument);
  grid = homogeneous(10, 10, 10);
  grid.vp.pop_back();
  CHECK_THROWS_WITH_AS(validate(grid), doctest::Contains("81 cells"), InvalidArgument);
  grid = homogeneous(10, 10, 10);
  const double limit = stable_time_step(grid);
  CHECK_THROWS_WITH_AS(wave_system<double>(grid, 1.01 * limit), doctest::Contains("stability (CFL) limit"),
                       InvalidArgument);
  CHECK_NOTHROW(wave_system<double>(grid, limit));
  CHECK_THROWS_WITH_AS(point_force(grid, 10, 3, 0, 1), doctest::Contains("outside the grid"), InvalidArgument);
  CHECK_THROWS_AS(explosion(grid, 0, 3), InvalidArgument);
}

TEST_CASE_TEMPLATE("wave step: the device gives the host reference's bits, with a source and a sponge", T, float,
                   double) {
  test::for_each_device(
      [](Context& context) {
        const ElasticGrid2D grid = layered(41, 29);
        const WaveSystem<T> system = wave_system<T>(grid, 0.9 * stable_time_step(grid), {6});
        const PointSource source = explosion(grid, 20, 8);
        const double f = 25;
        WaveSolver<T> solver(context, system, source, f, {5, 0, 30, 0, 20, 20});
        const WaveRun<T> run = solver.run(300);
        // The host: the same steps, the same receivers.
        const std::vector<T> weights = source_weights(system, source);
        std::vector<T> u1(system.dofs(), T(0)), u2 = u1, u3;
        std::vector<T> seismograms(3 * 300 * 2);
        for (std::size_t s = 0; s < 300; ++s) {
          wave_step_reference(system, u1, u2, u3, source, weights, ricker(double(s) * system.dt, f));
          const std::size_t nodes[3] = {5, 30, 20 * 41 + 20};
          for (std::size_t r = 0; r < 3; ++r)
            for (std::size_t c = 0; c < 2; ++c) seismograms[(r * 300 + s) * 2 + c] = u3[2 * nodes[r] + c];
          std::swap(u1, u2);
          std::swap(u2, u3);
        }
        CHECK(run.receivers == 3);
        CHECK(run.seismograms == seismograms);
        CHECK(solver.current() == u2);
        CHECK(solver.previous() == u1);
        double largest = 0;
        for (const T v : seismograms) largest = std::max(largest, std::abs(double(v)));
        CHECK(largest > 0);  // the wave reached the receivers
        // Going on continues the same run.
        solver.run(10);
        CHECK(solver.steps_done() == 310);
      },
      test::needs_for<T>());
}

TEST_CASE_TEMPLATE("wave: every split over devices and every halo depth gives the bits of one device", T, float,
                   double) {
  test::for_each_device(
      [](Context& context) {
        // The same device several times: each block with its own buffers and halos, as on several.
        const ElasticGrid2D grid = layered(37, 31);
        const WaveSystem<T> system = wave_system<T>(grid, 0.9 * stable_time_step(grid), {4});
        const PointSource source = explosion(grid, 18, 9);  // near a block boundary for 2 and 3 blocks
        const std::vector<std::size_t> receivers{2, 0, 18, 0, 30, 0, 18, 15, 18, 29};
        const auto run = [&](std::vector<Context> devices, WaveSplit split) {
          WaveSolver<T> solver(devices, system, source, 30, receivers, split);
          WaveRun<T> r = solver.run(97);
          return std::make_pair(r.seismograms, solver.current());
        };
        const auto one = run({context}, {});
        for (const std::size_t parts : {2, 3})
          for (const std::size_t s : {1, 2, 3}) {
            CAPTURE(parts);
            CAPTURE(s);
            const auto split = run(std::vector<Context>(parts, context), {{}, s});
            CHECK(split.first == one.first);
            CHECK(split.second == one.second);
          }
        const auto uneven = run({context, context}, {{1, 3}, 2});
        CHECK(uneven.first == one.first);
        CHECK_THROWS_WITH_AS(WaveSolver<T>(std::vector<Context>(4, context), system, source, 30, receivers, {{}, 30}),
                             doctest::Contains("smaller than its halo"), InvalidArgument);
        CHECK_THROWS_AS(WaveSolver<T>(std::vector<Context>(2, context), system, source, 30, receivers, {{1}, 1}),
                        InvalidArgument);
      },
      test::needs_for<T>());
}

TEST_CASE("wave step: the discrete energy stays constant once the source is quiet") {
  test::for_each_device(
      [](Context& context) {
        const ElasticGrid2D grid = layered(61, 41);
        const double dt = 0.95 * stable_time_step(grid), f = 20;
        WaveSolver<double> solver(context, wave_system<double>(grid, dt), point_force(grid, 30, 15, 0.3, 1), f, {});
        const auto quiet = static_cast<std::size_t>(std::ceil(3 * ricker_delay(f) / dt));  // a(t) < 1e-20 after
        solver.run(quiet);
        const double e0 = energy(grid, dt, solver.previous(), solver.current());
        CHECK(e0 > 0);
        for (int i = 0; i < 4; ++i) {
          solver.run(150);
          CHECK(std::abs(energy(grid, dt, solver.previous(), solver.current()) - e0) <= 1e-9 * e0);
        }
      },
      test::Needs::fp64);
}

TEST_CASE("wave step: direct P and S waves arrive at distance / velocity") {
  test::for_each_device([](Context& context) {
    // Homogeneous, 10 m nodes, 15 Hz (20 nodes a P wavelength); a force at 45 degrees at the centre
    // and a receiver 600 m to its side: P moves it along x (radially), S along z.
    const double vp = 3000, vs = 1500, f = 15, dx = 10, distance = 600;
    const ElasticGrid2D grid = homogeneous(241, 241, dx, vp, vs);
    const double dt = 0.9 * stable_time_step(grid);
    WaveSolver<float> solver(context, wave_system<float>(grid, dt, {30}), point_force(grid, 120, 120, 1, 1), f,
                             {120 + static_cast<std::size_t>(distance / dx), 120});
    const auto steps = static_cast<std::size_t>((distance / vs + ricker_delay(f) + 1 / f) / dt);
    const WaveRun<float> run = solver.run(steps);
    // The peak of each component after the source's delay (the time of the wavelet's peak).
    const auto peak_time = [&](int c) {
      std::size_t best = 0;
      for (std::size_t s = 0; s < steps; ++s)
        if (std::abs(run.seismograms[s * 2 + c]) > std::abs(run.seismograms[best * 2 + c])) best = s;
      return double(best + 1) * dt - ricker_delay(f);
    };
    CHECK(std::abs(peak_time(0) - distance / vp) <= 1 / f);
    CHECK(std::abs(peak_time(1) - distance / vs) <= 1 / f);
  });
}

TEST_CASE_TEMPLATE("wave step on a small grid (the Oclgrind subset)" * doctest::test_suite("oclgrind"), T, float,
                   double) {
  test::for_each_device(
      [](Context& context) {
        const ElasticGrid2D grid = layered(12, 9);
        const WaveSystem<T> system = wave_system<T>(grid, stable_time_step(grid), {2});
        const PointSource source = explosion(grid, 5, 3);
        WaveSolver<T> solver(context, system, source, 80, {1, 0, 10, 8});
        const WaveRun<T> run = solver.run(12);
        const std::vector<T> weights = source_weights(system, source);
        std::vector<T> u1(system.dofs(), T(0)), u2 = u1, u3;
        for (std::size_t s = 0; s < 12; ++s) {
          wave_step_reference(system, u1, u2, u3, source, weights, ricker(double(s) * system.dt, 80));
          CHECK(run.seismograms[(1 * 12 + s) * 2 + 1] == u3[2 * (8 * 12 + 10) + 1]);
          std::swap(u1, u2);
          std::swap(u2, u3);
        }
        CHECK(solver.current() == u2);
      },
      test::needs_for<T>());
}
