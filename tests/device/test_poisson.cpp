// The Jacobi Poisson solver: every plan (in core, strip heights, task sizes, budgets, schedules)
// gives the SAME BITS as the same number of sweeps in core on the same device; in core matches
// the CPU reference within a stated tolerance; a manufactured problem converges to its known
// discrete solution; the stopping test stops where it should; bad input is refused by name.

#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "../support/devices.hpp"
#include "../support/fixed_profile.hpp"
#include "../support/util.hpp"
#include "ziggurat/automatic/poisson.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/ops/poisson_scheme.hpp"

using namespace ziggurat;
using test::fixed_profile;
using test::for_each_device;
using test::identical_nodes;

namespace {

template <class T>
struct Problem {
  Grid<T> initial, rhs;
  double spacing = 0.1;
};

template <class T>
Problem<T> random_problem(const std::vector<std::size_t>& extents) {
  return {test::random_field<T>(extents, 77), test::random_field<T>(extents, 78), 0.1};
}

// Exactly `sweeps` sweeps (tolerance 0) as `request` asks; the field must equal `expected`.
template <class T>
PoissonOutcome check_identical(Context& context, const Problem<T>& p, std::size_t sweeps, const PoissonPlanRequest& request,
                               const Grid<T>& expected) {
  PoissonSolver<T> solver(context, p.initial, p.rhs, p.spacing);
  const PoissonOutcome outcome = solve_poisson(solver, PoissonStop{0, sweeps}, request, fixed_profile());
  CAPTURE(extents_string(p.initial.extents()));
  CAPTURE(outcome.planned.predicted.layout.height);
  CAPTURE(outcome.planned.predicted.layout.task_extent);
  CHECK(identical_nodes(solver.field(), expected) == expected.size());
  CHECK(solver.sweeps_done() == sweeps);
  CHECK(outcome.run.sweeps == sweeps);
  CHECK(outcome.run.reason == PoissonReason::max_sweeps);
  CHECK(outcome.run.device_bytes <= outcome.planned.budget_bytes);
  return outcome;
}

template <class T>
void check_all_plans(Context& context, const std::vector<std::size_t>& extents, std::size_t sweeps,
                     const std::vector<std::size_t>& heights) {
  const Problem<T> p = random_problem<T>(extents);
  PoissonSolver<T> incore(context, p.initial, p.rhs, p.spacing);
  PoissonPlanRequest request;
  request.mode = PoissonMode::incore;
  request.height = 4;  // tests every 4 sweeps: the stopping test must not change the field
  const PoissonRun run = solve_poisson(incore, PoissonStop{0, sweeps}, request, fixed_profile()).run;
  CHECK(run.sweeps == sweeps);
  const Grid<T> expected = incore.field();
  Grid<T> reference = p.initial;
  const double reference_update = jacobi_sweeps_reference(reference, p.rhs, p.spacing, sweeps);
  // The same operations in the same order without fused multiply-add: the CPU rounds alike, so only
  // a device that ignores FP_CONTRACT OFF may differ, by a few ulps of the largest value.
  const double largest = std::max(1.0, test::max_abs_difference(reference, Grid<T>(extents)));
  CHECK(test::max_abs_difference(expected, reference) <= 4 * largest * std::numeric_limits<T>::epsilon() * sweeps);
  CHECK(run.update == doctest::Approx(reference_update).epsilon(1e-3));

  for (const Schedule schedule : {Schedule::serial, Schedule::overlapped}) {
    request.schedule = schedule;
    request.mode = PoissonMode::strip;
    for (const std::size_t h : heights) {
      for (const std::uint64_t factor : {1, 3}) {
        request.height = h;
        request.device_memory = factor * minimum_poisson_budget(incore, sweeps, h, schedule);
        const PoissonOutcome outcome = check_identical(context, p, sweeps, request, expected);
        CHECK(outcome.planned.predicted.layout.height == h);
        CHECK(outcome.planned.predicted.layout.decomposition == Decomposition::strip);
      }
    }
    request.height.reset();
    request.mode = PoissonMode::automatic;
    request.device_memory = 4 * minimum_poisson_budget(incore, sweeps, 1, schedule);
    check_identical(context, p, sweeps, request, expected);
  }
}

}  // namespace

TEST_CASE_TEMPLATE("every Poisson plan gives the bits of the same sweeps in core, and in core matches the CPU", T, float,
                   double) {
  for_each_device([](Context& context) {
    // 11 sweeps: heights 2, 3 and 5 end with a shorter pass.
    check_all_plans<T>(context, {21, 17, 40}, 11, {1, 2, 3, 5, 11});
    check_all_plans<T>(context, {37, 5, 13}, 7, {1, 3});
  }, test::needs_for<T>());
}

// Each request run with one sweep a launch and with `depth`: the same field bits and the same
// largest update of the last sweep (the stopping test's value).
template <class T>
void check_depth(Context& context, const std::vector<std::size_t>& extents, std::size_t sweeps, std::size_t depth,
                 const BlockedGroup& group = {}) {
  const Problem<T> p = random_problem<T>(extents);
  PoissonSolver<T> sizing(context, p.initial, p.rhs, p.spacing);
  std::vector<PoissonPlanRequest> requests;
  for (const std::size_t h : {std::size_t{4}, sweeps}) {
    PoissonPlanRequest r;
    r.mode = PoissonMode::incore;
    r.height = h;
    requests.push_back(r);
  }
  for (const std::size_t h : {std::size_t{2}, std::size_t{5}, sweeps})
    for (const std::uint64_t factor : {1, 3}) {
      PoissonPlanRequest r;
      r.mode = PoissonMode::strip;
      r.height = h;
      r.device_memory = factor * minimum_poisson_budget(sizing, sweeps, h, r.schedule);
      requests.push_back(r);
    }
  for (PoissonPlanRequest request : requests) {
    PoissonSolver<T> single(context, p.initial, p.rhs, p.spacing), blocked(context, p.initial, p.rhs, p.spacing);
    const PoissonRun one = solve_poisson(single, PoissonStop{0, sweeps}, request, fixed_profile()).run;
    request.depth = depth;
    request.group = group;
    const PoissonOutcome many = solve_poisson(blocked, PoissonStop{0, sweeps}, request, fixed_profile());
    CAPTURE(extents_string(extents));
    CAPTURE(depth);
    CAPTURE(to_string(group));
    CAPTURE(to_string(many.planned.predicted.layout.decomposition));
    CAPTURE(many.planned.predicted.layout.height);
    CHECK(many.planned.depth == depth);
    CHECK(identical_nodes(blocked.field(), single.field()) == single.field().size());
    CHECK(many.run.update == one.update);
    CHECK(many.run.sweeps == sweeps);
  }
}

TEST_CASE_TEMPLATE("several Jacobi sweeps a launch give the bits and the update of single sweeps", T, float, double) {
  for_each_device([](Context& context) {
    for (const std::size_t depth : std::is_same_v<T, float> ? std::vector<std::size_t>{2, 5} : std::vector<std::size_t>{3})
      check_depth<T>(context, {45, 39, 40}, 11, depth);
    check_depth<T>(context, {3, 3, 9}, 5, std::is_same_v<T, float> ? 2 : 3);
    if (std::is_same_v<T, float>) check_depth<T>(context, {45, 39, 40}, 11, 2, {64, 4});  // a tile the tuner tries
  }, test::needs_for<T>());
}

TEST_CASE("Poisson plans on odd shapes: one interior node a side, thin grids") {
  for_each_device([](Context& context) {
    for (const auto& extents : std::vector<std::vector<std::size_t>>{{3, 3, 3}, {3, 3, 9}, {40, 3, 6}, {5, 33, 4}}) {
      check_all_plans<float>(context, extents, 5, {1, 2});
    }
  });
}

TEST_CASE_TEMPLATE("a manufactured Poisson problem converges to its discrete solution, and the test stops it", T, float,
                   double) {
  for_each_device([](Context& context) {
    const std::vector<std::size_t> extents{14, 12, 30};
    const double h = 0.05;
    const ManufacturedPoisson<T> m = manufactured_poisson<T>(extents, h);
    const double tolerance = std::is_same_v<T, float> ? 1e-5 : 1e-11;
    for (const PoissonMode mode : {PoissonMode::incore, PoissonMode::strip}) {
      PoissonSolver<T> solver(context, m.initial, m.rhs, h);
      PoissonPlanRequest request;
      request.mode = mode;
      request.height = 6;
      if (mode == PoissonMode::strip) request.device_memory = 2 * minimum_poisson_budget(solver, 100000, 6, Schedule::overlapped);
      std::vector<double> updates;
      PoissonRunOptions options;
      options.progress = [&](const PoissonProgress& p) { updates.push_back(p.update); };
      const PoissonOutcome outcome = solve_poisson(solver, PoissonStop{tolerance, 100000}, request, fixed_profile(), options);
      CAPTURE(to_string(mode));
      REQUIRE(outcome.run.reason == PoissonReason::converged);
      // It stops at the first test below the tolerance, tests come every 6 sweeps.
      CHECK(outcome.run.update < tolerance);
      REQUIRE(updates.size() >= 2);
      CHECK(updates[updates.size() - 2] >= tolerance);
      CHECK(outcome.run.sweeps == 6 * updates.size());
      // Jacobi's error is at most the update over 1 - rho, rho = cos-like ~ 1 - pi^2/(2 N^2) for the
      // widest axis; 500x that bound is ample, and the update bounds the residual the same way.
      const double error = test::max_abs_difference(solver.field(), m.solution);
      CHECK(error < 500 * tolerance + 100 * std::numeric_limits<T>::epsilon());
      CHECK(solver.residual() < 6 * tolerance / (h * h) + 1e4 * std::numeric_limits<T>::epsilon() / (h * h));
    }
  }, test::needs_for<T>());
}

TEST_CASE("the Poisson solver refuses bad input by name") {
  for_each_device([](Context& context) {
    const Grid<float> good({8, 8, 8}, 0.0f);
    CHECK_THROWS_WITH_AS(PoissonSolver<float>(context, Grid<float>({8, 8}, 0.0f), Grid<float>({8, 8}, 0.0f), 0.1),
                         doctest::Contains("needs a 3D grid"), InvalidArgument);
    CHECK_THROWS_WITH_AS(PoissonSolver<float>(context, Grid<float>({2, 8, 8}, 0.0f), Grid<float>({2, 8, 8}, 0.0f), 0.1),
                         doctest::Contains("at least 3 nodes"), InvalidArgument);
    CHECK_THROWS_WITH_AS(PoissonSolver<float>(context, good, Grid<float>({8, 8, 9}, 0.0f), 0.1),
                         doctest::Contains("right-hand side f is 8x8x9"), InvalidArgument);
    Grid<float> nan_rhs = good;
    nan_rhs(3, 4, 5) = std::numeric_limits<float>::quiet_NaN();
    CHECK_THROWS_WITH_AS(PoissonSolver<float>(context, good, nan_rhs, 0.1), doctest::Contains("at node 3, 4, 5"),
                         InvalidArgument);
    CHECK_THROWS_WITH_AS(PoissonSolver<float>(context, good, good, -1.0), doctest::Contains("spacing"), InvalidArgument);
    PoissonSolver<float> solver(context, good, good, 0.1);
    CHECK_THROWS_WITH_AS(solver.solve(PoissonStop{-1, 3}, HeatPlan{}), doctest::Contains("tolerance"), InvalidArgument);
    PoissonPlanRequest request;
    request.mode = PoissonMode::strip;
    request.height = 2;
    const std::uint64_t smallest = minimum_poisson_budget(solver, 10, 2, Schedule::overlapped);
    request.device_memory = smallest - 1;
    CHECK_THROWS_WITH_AS(plan_poisson(solver, PoissonStop{0, 10}, request, fixed_profile()),
                         doctest::Contains("needs at least"), InvalidArgument);
    request.mode = PoissonMode::incore;
    request.device_memory = 1024;
    CHECK_THROWS_WITH_AS(plan_poisson(solver, PoissonStop{0, 10}, request, fixed_profile()),
                         doctest::Contains("does not fit in core"), InvalidArgument);
    request.height = 11;
    CHECK_THROWS_WITH_AS(plan_poisson(solver, PoissonStop{0, 10}, request, fixed_profile()),
                         doctest::Contains("height"), InvalidArgument);
  });
}

TEST_CASE("Poisson sweeps in core and in strip passes on a small grid (the Oclgrind subset)" *
          doctest::test_suite("oclgrind")) {
  for_each_device([](Context& context) {
    // 32 nodes wide: rows need no padding on Oclgrind (128-byte alignment), so every transfer is
    // contiguous, the kind its uninitialised-value check follows.
    const Problem<float> p = random_problem<float>({32, 5, 11});
    PoissonSolver<float> incore(context, p.initial, p.rhs, p.spacing);
    PoissonPlanRequest request;
    request.mode = PoissonMode::incore;
    request.height = 2;
    solve_poisson(incore, PoissonStop{0, 5}, request, fixed_profile());
    request.mode = PoissonMode::strip;
    request.device_memory = 2 * minimum_poisson_budget(incore, 5, 2, Schedule::overlapped);
    check_identical(context, p, 5, request, incore.field());
    request.depth = 3;  // the blocked sweeps
    check_identical(context, p, 5, request, incore.field());
  });
}
