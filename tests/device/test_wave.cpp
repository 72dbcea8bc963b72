// Explicit FEM elastic waves on every device, in 2D and 3D: the grid's matrices (rigid motions,
// mass, the stability limit; in 3D against the brick elements of matrix/hex_mesh.hpp), the device
// step against the host reference bit for bit, every split over devices and halo depth, a run
// restored from a stopped one's state, discrete energy conservation, and the arrival times of
// direct P and S waves in a homogeneous medium.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "../support/devices.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/base/memory.hpp"
#include "ziggurat/matrix/elastic_grid.hpp"
#include "ziggurat/matrix/hex_mesh.hpp"
#include "ziggurat/matrix/sparse.hpp"
#include "ziggurat/ops/wave_step.hpp"
#include "ziggurat/solver/wave.hpp"

using namespace ziggurat;
using namespace ziggurat::wave;

namespace {

ElasticGrid homogeneous(std::size_t nx, std::size_t nz, double dx, double vp = 3000, double vs = 1500,
                          double rho = 2500) {
  return layered_grid(nx, nz, dx, {{0, vp, vs, rho}});
}

// Two layers and a column of slower cells, so that no two neighbouring rows are alike.
ElasticGrid layered(std::size_t nx, std::size_t nz) {
  ElasticGrid grid = layered_grid(nx, nz, 10, {{0, 2000, 900, 2000}, {60, 3200, 1800, 2600}});
  for (std::size_t iz = 0; iz + 1 < nz; ++iz) grid.vs[iz * (nx - 1) + nx / 3] *= 0.7;
  return grid;
}

// The 3D counterpart: two layers and a slower column through every depth.
ElasticGrid layered3d(std::size_t nx, std::size_t ny, std::size_t nz) {
  ElasticGrid grid = layered_grid(nx, ny, nz, 10, {{0, 2000, 900, 2000}, {40, 3200, 1800, 2600}});
  for (std::size_t iz = 0; iz + 1 < nz; ++iz)
    for (std::size_t iy = 0; iy + 1 < ny; ++iy) grid.vs[(iz * (ny - 1) + iy) * (nx - 1) + nx / 3] *= 0.7;
  return grid;
}

// The device's seismograms and last field against the host reference's, step by step.
template <class T>
void check_against_reference(Context& context, const ElasticGrid& grid, std::size_t sponge, const PointSource& source,
                             double f, const std::vector<GridNode>& receivers, std::size_t steps) {
  const WaveSystem<T> system = wave_system<T>(grid, 0.9 * stable_time_step(grid), {sponge});
  WaveSolver<T> solver(context, system, source, f, receivers);
  const WaveRun<T> run = solver.run(steps);
  const std::size_t c = grid.dims;
  const std::vector<T> weights = source_weights(system, source);
  std::vector<T> u1(system.dofs(), T(0)), u2 = u1, u3;
  std::vector<T> seismograms(receivers.size() * steps * c);
  for (std::size_t s = 0; s < steps; ++s) {
    wave_step_reference(system, u1, u2, u3, source, weights, ricker(double(s) * system.dt, f));
    for (std::size_t r = 0; r < receivers.size(); ++r)
      for (std::size_t d = 0; d < c; ++d) seismograms[(r * steps + s) * c + d] = u3[c * system.node(receivers[r]) + d];
    std::swap(u1, u2);
    std::swap(u2, u3);
  }
  CHECK(run.components == c);
  CHECK(run.receivers == receivers.size());
  CHECK(run.seismograms == seismograms);
  CHECK(solver.current() == u2);
  CHECK(solver.previous() == u1);
  double largest = 0;
  for (const T v : seismograms) largest = std::max(largest, std::abs(double(v)));
  CHECK(largest > 0);  // the wave reached the receivers
}

// The discrete energy of the step from u to v: 1/2 w^T M w + 1/2 v^T K u, w = (v - u) / dt,
// which central differences keep constant without damping and sources.
double energy(const ElasticGrid& grid, double dt, const std::vector<double>& u, const std::vector<double>& v) {
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

// The seismograms and the last field of `steps` steps with the vector split as `split` says.
template <class T>
std::pair<std::vector<T>, std::vector<T>> split_run(const std::vector<Context>& devices, const WaveSystem<T>& system,
                                                    const PointSource& source, double f,
                                                    const std::vector<GridNode>& receivers, std::size_t steps,
                                                    const WaveSplit& split) {
  WaveSolver<T> solver(devices, system, source, f, receivers, split);
  WaveRun<T> r = solver.run(steps);
  return {r.seismograms, solver.current()};
}

// Without a sponge, from when the source is quiet (a(t) < 1e-20), the discrete energy after each
// of `checks` runs of `steps` steps stays that of the first.
void check_energy_constant(Context& context, const ElasticGrid& grid, const PointSource& source, double f, int checks,
                           std::size_t steps) {
  const double dt = 0.95 * stable_time_step(grid);
  WaveSolver<double> solver(context, wave_system<double>(grid, dt), source, f, {});
  solver.run(static_cast<std::size_t>(std::ceil(3 * ricker_delay(f) / dt)));
  const double e0 = energy(grid, dt, solver.previous(), solver.current());
  CHECK(e0 > 0);
  for (int i = 0; i < checks; ++i) {
    solver.run(steps);
    CHECK(std::abs(energy(grid, dt, solver.previous(), solver.current()) - e0) <= 1e-9 * e0);
  }
}

}  // namespace

TEST_CASE("wave grid: K holds rigid translations, M the model's mass, dt the stability limit") {
  const ElasticGrid grid = layered(23, 17);
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
  ElasticGrid grid = homogeneous(10, 10, 10);
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
  CHECK_THROWS_WITH_AS(point_force(grid, {10, 0, 3}, {0, 0, 1}), doctest::Contains("outside the grid"), InvalidArgument);
  CHECK_THROWS_AS(explosion(grid, {0, 0, 3}), InvalidArgument);
  CHECK_THROWS_WITH_AS(point_force(grid, {3, 0, 3}, {0, 1, 0}), doctest::Contains("no force along y"), InvalidArgument);
  CHECK_THROWS_WITH_AS(point_force(grid, {3, 0, 3}, {0, 0, 0}), doctest::Contains("needs a direction"), InvalidArgument);
  CHECK_THROWS_WITH_AS(point_force(grid, {3, 1, 3}, {0, 0, 1}), doctest::Contains("outside the grid"), InvalidArgument);
  grid.dims = 4;
  CHECK_THROWS_WITH_AS(validate(grid), doctest::Contains("2D or 3D"), InvalidArgument);
  CHECK_THROWS_WITH_AS(layered_grid(10, 3, 10, 10, {{0, 3000, 1500, 2500}}), doctest::Contains("10 x 3 x 10"),
                       InvalidArgument);
  ElasticGrid solid = layered_grid(5, 6, 7, 10, {{0, 3000, 1500, 2500}});
  solid.vs[2 * 4 * 5 + 3 * 4 + 1] = -1;  // cell (1, 3, 2)
  CHECK_THROWS_WITH_AS(validate(solid), doctest::Contains("cell (1, 3, 2)"), InvalidArgument);
}

TEST_CASE_TEMPLATE("wave step: the device gives the host reference's bits, with a source and a sponge", T, float,
                   double) {
  test::for_each_device(
      [](Context& context) {
        const ElasticGrid grid = layered(41, 29);
        // Receivers out of DOF order, one twice, one on a node where the source acts (the step
        // records the value with the source's term).
        check_against_reference<T>(context, grid, 6, explosion(grid, {20, 0, 8}), 25,
                                   {{20, 0, 20}, {5, 0, 0}, {30, 0, 0}, {21, 0, 8}, {30, 0, 0}}, 300);
        // Going on continues the same run.
        const WaveSystem<T> system = wave_system<T>(grid, 0.9 * stable_time_step(grid), {6});
        WaveSolver<T> solver(context, system, explosion(grid, {20, 0, 8}), 25, {});
        solver.run(7);
        solver.run(10);
        CHECK(solver.steps_done() == 17);
      },
      test::needs_for<T>());
}

TEST_CASE_TEMPLATE("wave: every split over devices and every halo depth gives the bits of one device", T, float,
                   double) {
  test::for_each_device(
      [](Context& context) {
        // The same device several times: each block with its own buffers and halos, as on several.
        const ElasticGrid grid = layered(37, 31);
        const WaveSystem<T> system = wave_system<T>(grid, 0.9 * stable_time_step(grid), {4});
        const PointSource source = explosion(grid, {18, 0, 9});  // near a block boundary for 2 and 3 blocks
        const std::vector<GridNode> receivers{{2, 0, 0}, {18, 0, 0}, {30, 0, 0}, {18, 0, 15}, {18, 0, 29}};
        const auto run = [&](std::vector<Context> devices, WaveSplit split) {
          return split_run<T>(devices, system, source, 30, receivers, 97, split);
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

TEST_CASE_TEMPLATE("wave: a solver restored from a stopped run's two displacements ends on the bits of one that ran on",
                   T, float, double) {
  test::for_each_device(
      [](Context& context) {
        const ElasticGrid grid = layered(37, 31);
        const WaveSystem<T> system = wave_system<T>(grid, 0.9 * stable_time_step(grid), {4});
        const PointSource source = explosion(grid, {18, 0, 9});
        const std::vector<GridNode> receivers{{2, 0, 0}, {18, 0, 15}};
        const std::size_t stopped = 41, rest = 56, c = grid.dims;  // 41: between two exchanges of every 3 steps
        // One device, and two with halos every 3 steps: the restored halos serve the steps before the next exchange.
        for (const std::size_t parts : {1, 2}) {
          CAPTURE(parts);
          const std::vector<Context> devices(parts, context);
          const WaveSplit split{{}, 3};
          WaveSolver<T> first(devices, system, source, 30, receivers, split);
          first.run(stopped);
          WaveSolver<T> again(devices, system, source, 30, receivers, split);
          again.restore(first.previous(), first.current(), first.steps_done());
          CHECK(again.steps_done() == stopped);
          const WaveRun<T> resumed = again.run(rest);
          const auto whole = split_run<T>(devices, system, source, 30, receivers, stopped + rest, split);
          for (std::size_t r = 0; r < receivers.size(); ++r)
            CHECK(std::equal(resumed.seismograms.begin() + r * rest * c, resumed.seismograms.begin() + (r + 1) * rest * c,
                             whole.first.begin() + (r * (stopped + rest) + stopped) * c));
          CHECK(again.current() == whole.second);
        }
        WaveSolver<T> solver(context, system, source, 30, receivers);
        CHECK_THROWS_WITH_AS(solver.restore(std::vector<T>(7), std::vector<T>(7), 1),
                             doctest::Contains("comes from another grid"), InvalidArgument);
      },
      test::needs_for<T>());
}

TEST_CASE("wave step: the discrete energy stays constant once the source is quiet") {
  test::for_each_device(
      [](Context& context) {
        const ElasticGrid grid = layered(61, 41);
        check_energy_constant(context, grid, point_force(grid, {30, 0, 15}, {0.3, 0, 1}), 20, 4, 150);
      },
      test::Needs::fp64);
}

TEST_CASE("wave step: direct P and S waves arrive at distance / velocity") {
  test::for_each_device([](Context& context) {
    // Homogeneous, 10 m nodes, 15 Hz (20 nodes a P wavelength); a force at 45 degrees at the centre
    // and a receiver 600 m to its side: P moves it along x (radially), S along z.
    const double vp = 3000, vs = 1500, f = 15, dx = 10, distance = 600;
    const ElasticGrid grid = homogeneous(241, 241, dx, vp, vs);
    const double dt = 0.9 * stable_time_step(grid);
    WaveSolver<float> solver(context, wave_system<float>(grid, dt, {30}), point_force(grid, {120, 0, 120}, {1, 0, 1}), f,
                             {{120 + static_cast<std::size_t>(distance / dx), 0, 120}});
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
        const ElasticGrid grid = layered(12, 9);
        const WaveSystem<T> system = wave_system<T>(grid, stable_time_step(grid), {2});
        const PointSource source = explosion(grid, {5, 0, 3});
        WaveSolver<T> solver(context, system, source, 80, {{1, 0, 0}, {10, 0, 8}});
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

TEST_CASE("3D wave grid: K is the bricks' stiffness and holds rigid motions, M the model's mass") {
  const ElasticGrid grid = layered3d(6, 5, 7);
  const sparse::Dia<double> k = stiffness(grid);
  sparse::validate(k);
  CHECK(k.offsets.size() == 50);
  // K u against the sum over cells of the 24 x 24 brick matrices of matrix/hex_mesh.hpp (another
  // quadrature code, another local order), with E and nu from each cell's vp, vs and rho.
  std::vector<double> u(grid.dofs());
  for (std::size_t i = 0; i < u.size(); ++i) u[i] = std::sin(1.3 * double(i) + 0.2);
  const std::vector<double> ku = sparse::multiply(k, u);
  std::vector<double> want(grid.dofs(), 0.0);
  const std::size_t corner[8][3] = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}, {0, 0, 1}, {1, 0, 1}, {1, 1, 1}, {0, 1, 1}};
  for (std::size_t iz = 0; iz + 1 < grid.nz; ++iz)
    for (std::size_t iy = 0; iy + 1 < grid.ny; ++iy)
      for (std::size_t ix = 0; ix + 1 < grid.nx; ++ix) {
        const std::size_t cell = (iz * (grid.ny - 1) + iy) * (grid.nx - 1) + ix;
        const double mu = grid.rho[cell] * grid.vs[cell] * grid.vs[cell];
        const double lambda = grid.rho[cell] * grid.vp[cell] * grid.vp[cell] - 2 * mu;
        const fem::Material material{mu * (3 * lambda + 2 * mu) / (lambda + mu), lambda / (2 * (lambda + mu)),
                                     grid.rho[cell]};
        const std::array<double, 576> ke = fem::brick_stiffness(grid.dx, grid.dx, grid.dx, material);
        std::size_t dofs[24];
        for (std::size_t a = 0; a < 8; ++a)
          for (std::size_t c = 0; c < 3; ++c)
            dofs[3 * a + c] = 3 * grid.node(ix + corner[a][0], iy + corner[a][1], iz + corner[a][2]) + c;
        for (std::size_t p = 0; p < 24; ++p)
          for (std::size_t q = 0; q < 24; ++q) want[dofs[p]] += ke[p * 24 + q] * u[dofs[q]];
      }
  double scale = 0, diff = 0;
  for (std::size_t i = 0; i < u.size(); ++i) {
    scale = std::max(scale, std::abs(want[i]));
    diff = std::max(diff, std::abs(ku[i] - want[i]));
  }
  CHECK(diff <= 1e-12 * scale);
  // Three translations and three rotations (u = w x r) cost no force.
  for (int motion = 0; motion < 6; ++motion) {
    std::vector<double> rigid(grid.dofs(), 0.0);
    for (std::size_t iz = 0; iz < grid.nz; ++iz)
      for (std::size_t iy = 0; iy < grid.ny; ++iy)
        for (std::size_t ix = 0; ix < grid.nx; ++ix) {
          const double r[3] = {double(ix), double(iy), double(iz)};
          double* v = &rigid[3 * grid.node(ix, iy, iz)];
          if (motion < 3) {
            v[motion] = 1;
          } else {  // rotation about axis a: v_b = -r_c, v_c = r_b
            const int b = (motion - 3 + 1) % 3, c = (motion - 3 + 2) % 3;
            v[b] = -r[c];
            v[c] = r[b];
          }
        }
    double largest = 0;
    for (const double f : sparse::multiply(k, rigid)) largest = std::max(largest, std::abs(f));
    CHECK(largest <= 1e-12 * scale * double(grid.nz));
  }
  const std::vector<double> m = lumped_mass(grid);
  double total = 0, mass = 0;
  for (const double v : m) total += v;
  for (const double rho : grid.rho) mass += 3 * rho * grid.dx * grid.dx * grid.dx;  // three components
  CHECK(std::abs(total - mass) <= 1e-12 * mass);
  CHECK(stable_time_step(grid) > 0);
}

TEST_CASE_TEMPLATE("3D wave step: the device gives the host reference's bits, with a source and a sponge", T, float,
                   double) {
  test::for_each_device(
      [](Context& context) {
        const ElasticGrid grid = layered3d(13, 11, 12);
        check_against_reference<T>(context, grid, 2, explosion(grid, {6, 5, 4}), 40,
                                   {{2, 5, 0}, {10, 3, 0}, {6, 5, 9}}, 60);
        check_against_reference<T>(context, grid, 0, point_force(grid, {4, 7, 5}, {0.5, -1, 0.25}), 40,
                                   {{6, 5, 0}, {4, 7, 5}, {4, 7, 8}, {4, 7, 5}}, 40);
      },
      test::needs_for<T>());
}

TEST_CASE_TEMPLATE("3D wave: every split over devices and every halo depth gives the bits of one device", T, float,
                   double) {
  test::for_each_device(
      [](Context& context) {
        // 3 DOFs a node and blocks that start at multiples of 16 DOFs: blocks split nodes.
        const ElasticGrid grid = layered3d(9, 8, 21);
        const WaveSystem<T> system = wave_system<T>(grid, 0.9 * stable_time_step(grid), {2});
        const PointSource source = explosion(grid, {4, 4, 10});
        const std::vector<GridNode> receivers{{4, 4, 0}, {1, 2, 7}, {4, 4, 10}, {7, 6, 19}};
        const auto run = [&](std::vector<Context> devices, WaveSplit split) {
          return split_run<T>(devices, system, source, 40, receivers, 45, split);
        };
        const auto one = run({context}, {});
        for (const std::size_t parts : {2, 3})
          for (const std::size_t s : {1, 3}) {
            CAPTURE(parts);
            CAPTURE(s);
            const auto split = run(std::vector<Context>(parts, context), {{}, s});
            CHECK(split.first == one.first);
            CHECK(split.second == one.second);
          }
      },
      test::needs_for<T>());
}

TEST_CASE_TEMPLATE("3D wave step: K1 held in several buffers gives the bits of one", T, float, double) {
  test::for_each_device(
      [](Context& context) {
        const ElasticGrid grid = layered3d(9, 8, 7);
        const WaveSystem<T> system = wave_system<T>(grid, 0.9 * stable_time_step(grid), {1});
        const PointSource source = explosion(grid, {4, 4, 3});
        const std::size_t n = system.dofs(), diagonal_bytes = n * sizeof(T);
        std::vector<T> u1(n), u2(n);
        for (std::size_t i = 0; i < n; ++i) {
          u1[i] = T(std::sin(0.37 * double(i)));
          u2[i] = T(std::cos(0.11 * double(i)));
        }
        std::vector<T> want;
        wave_step_reference(system, u1, u2, want, source, source_weights(system, source), 0.75);
        DeviceBuffer<T> d1(context, n), d2(context, n), d3(context, n);
        copy_to_device(context.compute_queue(), u1.data(), d1);
        copy_to_device(context.compute_queue(), u2.data(), d2);
        // 50 diagonals in parts of 17, 13 and 50 (one part).
        for (const std::size_t per_part : {17, 13, 50}) {
          CAPTURE(per_part);
          WaveStep<T> step(context, system, source, {0, n}, per_part * diagonal_bytes);
          step.update(d1.get(), d2.get(), d3.get(), {0, n}, 0.75);
          step.finish(d3.get(), 0.75);
          std::vector<T> got(n);
          copy_to_host(context.compute_queue(), d3, got.data());
          CHECK(got == want);
        }
        CHECK_THROWS_AS(WaveStep<T>(context, system, source, {0, n}, 12 * diagonal_bytes), OutOfDeviceMemory);
      },
      test::needs_for<T>());
}

// u3 of one step at the local positions `computed` with K1 in parts of `per_part` diagonals and
// the walk `walk`; the other positions keep a marker the step must not touch.
template <class T>
std::vector<T> walked_step(Context& context, const WaveSystem<T>& system, const PointSource& source,
                           std::size_t per_part, WaveWalk walk, DofRange computed) {
  const std::size_t n = system.dofs();
  std::vector<T> u1(n), u2(n), got(n, T(-7));
  for (std::size_t i = 0; i < n; ++i) {
    u1[i] = T(std::sin(0.37 * double(i)));
    u2[i] = T(std::cos(0.11 * double(i)));
  }
  DeviceBuffer<T> d1(context, n), d2(context, n), d3(context, n);
  copy_to_device(context.compute_queue(), u1.data(), d1);
  copy_to_device(context.compute_queue(), u2.data(), d2);
  copy_to_device(context.compute_queue(), got.data(), d3);
  WaveStep<T> step(context, system, source, {0, n}, per_part * n * sizeof(T), walk);
  step.update(d1.get(), d2.get(), d3.get(), computed, 0);
  copy_to_host(context.compute_queue(), d3, got.data());
  return got;
}

// The reference's u3 (no source) at `computed`, the marker elsewhere.
template <class T>
std::vector<T> reference_at(const WaveSystem<T>& system, DofRange computed) {
  const std::size_t n = system.dofs();
  std::vector<T> u1(n), u2(n), u3, want(n, T(-7));
  for (std::size_t i = 0; i < n; ++i) {
    u1[i] = T(std::sin(0.37 * double(i)));
    u2[i] = T(std::cos(0.11 * double(i)));
  }
  wave_step_reference(system, u1, u2, u3, PointSource{}, {}, 0);
  std::copy(u3.begin() + computed.first, u3.begin() + computed.end(), want.begin() + computed.first);
  return want;
}

TEST_CASE_TEMPLATE("wave step: every walk (DOFs a work-item, strips of planes) gives the host reference's bits", T,
                   float, double) {
  test::for_each_device(
      [](Context& context) {
        const PointSource none;
        {
          const ElasticGrid grid = layered(23, 19);
          const WaveSystem<T> system = wave_system<T>(grid, 0.9 * stable_time_step(grid), {3});
          const std::size_t n = system.dofs();
          for (const DofRange computed : {DofRange{0, n}, DofRange{37, n - 101}})
            for (const std::size_t rows : {1, 2, 3, 4}) {
              CAPTURE(rows);
              CHECK(walked_step(context, system, none, 11, {rows, 0}, computed) == reference_at(system, computed));
            }
          CHECK_THROWS_AS(WaveStep<T>(context, system, none, {0, n}, 0, WaveWalk{2, 4}), InvalidArgument);
          CHECK_THROWS_AS(WaveStep<T>(context, system, none, {0, n}, 0, WaveWalk{0, 0}), InvalidArgument);
          CHECK_THROWS_AS(WaveStep<T>(context, system, none, {0, n}, 0, WaveWalk{9, 0}), InvalidArgument);
        }
        // 3D: strips of 1 to 8 rows of 8 (the last strip shorter, or the whole plane), ranges
        // that start and end inside planes, K1 in one buffer or in parts of 17 diagonals.
        const ElasticGrid grid = layered3d(9, 8, 7);
        const WaveSystem<T> system = wave_system<T>(grid, 0.9 * stable_time_step(grid), {1});
        const std::size_t n = system.dofs();
        for (const DofRange computed : {DofRange{0, n}, DofRange{250, n - 517}})
          for (const std::size_t per_part : {17, 50})
            for (const WaveWalk walk : {WaveWalk{1, 1}, WaveWalk{2, 3}, WaveWalk{2, 8}, WaveWalk{3, 5}, WaveWalk{2, 0}}) {
              CAPTURE(computed.first);
              CAPTURE(per_part);
              CAPTURE(walk.rows_per_item);
              CAPTURE(walk.strip_rows);
              CHECK(walked_step(context, system, none, per_part, walk, computed) == reference_at(system, computed));
            }
        // Blocks held from inside a plane (two devices, halos every 2 steps) walked in strips.
        const PointSource source = explosion(grid, {4, 4, 3});
        const std::vector<GridNode> receivers{{4, 4, 0}, {1, 2, 5}};
        WaveSplit strips{{}, 2};
        strips.walk = WaveWalk{2, 3};
        CHECK(split_run<T>({context, context}, system, source, 40, receivers, 12, strips) ==
              split_run<T>({context}, system, source, 40, receivers, 12, WaveSplit{}));
      },
      test::needs_for<T>());
}

TEST_CASE("3D wave step: the discrete energy stays constant once the source is quiet") {
  test::for_each_device(
      [](Context& context) {
        const ElasticGrid grid = layered3d(14, 12, 13);
        check_energy_constant(context, grid, point_force(grid, {6, 5, 6}, {0.3, 0.2, 1}), 40, 3, 60);
      },
      test::Needs::fp64);
}

TEST_CASE("3D wave step: the direct P wave arrives at distance / vp") {
  test::for_each_device([](Context& context) {
    // Homogeneous, 10 m nodes, 20 Hz (15 nodes a P wavelength); an explosion 200 m below the top
    // and 12 nodes inside the sponge on every other side, and a receiver 200 m along x, 2 nodes
    // before the sponge: P moves it radially (ux). The peak comes at the step it comes on a grid
    // of 61^3 nodes (surface and sponge reflections arrive later and weaker), at 38% of the nodes.
    const double vp = 3000, vs = 1500, f = 20, dx = 10, distance = 200;
    const ElasticGrid grid = layered_grid(51, 41, 41, dx, {{0, vp, vs, 2500}});
    const double dt = 0.9 * stable_time_step(grid);
    WaveSolver<float> solver(context, wave_system<float>(grid, dt, {8}), explosion(grid, {20, 20, 20}), f,
                             {{20 + static_cast<std::size_t>(distance / dx), 20, 20}});
    const auto steps = static_cast<std::size_t>((distance / vp + ricker_delay(f) + 1 / f) / dt);
    const WaveRun<float> run = solver.run(steps);
    std::size_t best = 0;
    for (std::size_t s = 0; s < steps; ++s)
      if (std::abs(run.seismograms[s * 3]) > std::abs(run.seismograms[best * 3])) best = s;
    CHECK(std::abs(double(best + 1) * dt - ricker_delay(f) - distance / vp) <= 1 / f);
  });
}

TEST_CASE_TEMPLATE("3D wave step on a small grid (the Oclgrind subset)" * doctest::test_suite("oclgrind"), T, float,
                   double) {
  test::for_each_device(
      [](Context& context) {
        const ElasticGrid grid = layered3d(6, 5, 6);
        check_against_reference<T>(context, grid, 1, explosion(grid, {2, 2, 2}), 80, {{2, 2, 0}, {4, 3, 4}}, 6);
      },
      test::needs_for<T>());
}
