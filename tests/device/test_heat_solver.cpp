// The out-of-core heat solver (pyramid passes) against stepping the whole grid in device memory:
// every mode, decomposition, height, budget and schedule must give the SAME BITS as InDeviceHeat
// on the same device (the pyramid recomputes, it never approximates), and both must stay within
// the stated tolerance of the CPU reference (test_heat.cpp explains it).

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "../support/devices.hpp"
#include "../support/fixed_profile.hpp"
#include "../support/util.hpp"
#include "ziggurat/automatic/heat.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/solver/in_device_heat.hpp"
#include "ziggurat/tuning/blocking_autotune.hpp"
#include "ziggurat/tuning/heat_planner.hpp"
#include "ziggurat/tuning/profile_store.hpp"

using namespace ziggurat;
using test::fixed_profile;
using test::for_each_device;
using test::identical_nodes;

namespace {

template <class T>
double tolerance(std::size_t steps) {
  return 8.0 * static_cast<double>(steps) * std::numeric_limits<T>::epsilon();  // the fields lie in [-1, 1]
}

std::string describe(const PlannedHeatRun& planned) {
  const model::Plan& plan = planned.predicted;
  return std::string(to_string(plan.layout.decomposition)) + " n=" + std::to_string(plan.layout.height) +
         " extent=" + std::to_string(plan.layout.task_extent) + " " + to_string(planned.schedule) +
         " depth=" + std::to_string(planned.depth);
}

// Runs `request` and requires the in-device result bit for bit; returns the plan that ran.
template <class T>
model::Plan check_identical(Context& context, const Grid<T>& initial, double alpha, std::size_t steps,
                            const HeatPlanRequest& request, const Grid<T>& expected) {
  HeatSolver<T> solver(context, initial, alpha);
  const HeatOutcome outcome = advance_heat(solver, steps, request, fixed_profile());
  CAPTURE(extents_string(initial.extents()));
  CAPTURE(describe(outcome.planned));
  CHECK(identical_nodes(solver.field(), expected) == expected.size());
  CHECK(solver.steps_done() == steps);
  CHECK(outcome.run.device_bytes <= outcome.planned.budget_bytes);
  return outcome.planned.predicted;
}

// Every mode and schedule on one grid, with budgets from the smallest that holds a pyramid of
// height n (one owned row or node a side, n = (R-1)/2) to a few times that; `depth` steps a
// kernel launch (2D). `blocks`: the block decomposition too (2D), whose smallest budgets cut the
// grid into a task a node (the cost of these tests: 0.1 s a pass on 133 x 71 nodes on a CPU, where
// 47 x 29 nodes hold as many kinds of block, interior, edge, corner and partial).
template <class T>
void check_all_modes(Context& context, const std::vector<std::size_t>& extents, std::size_t steps,
                     const std::vector<std::size_t>& heights, std::size_t depth = 1, bool blocks = true) {
  const Grid<T> initial = test::random_field<T>(extents, 4321);
  const double alpha = 0.9 * max_stable_alpha(extents.size());
  InDeviceHeat<T> in_device(context, initial, alpha);
  in_device.advance(steps);
  const Grid<T> expected = in_device.read();
  Grid<T> reference = initial;
  heat_steps_reference(reference, alpha, steps);
  CHECK(test::max_abs_difference(expected, reference) <= tolerance<T>(steps));

  const HeatSolver<T> planner(context, initial, alpha);
  std::vector<Decomposition> cuts{Decomposition::strip};
  if (extents.size() == 2 && blocks) cuts.push_back(Decomposition::block);
  for (const Schedule schedule : {Schedule::serial, Schedule::overlapped}) {
    HeatPlanRequest request;
    request.schedule = schedule;
    request.depth = depth;
    request.mode = HeatMode::incore;
    CHECK(check_identical(context, initial, alpha, steps, request, expected).layout.decomposition == Decomposition::incore);
    for (const Decomposition cut : cuts) {
      request.mode = HeatMode::trivial;
      request.decomposition = cut;
      request.device_memory = 3 * minimum_heat_budget(planner, steps, cut, 1, schedule);
      CHECK(check_identical(context, initial, alpha, steps, request, expected).layout.height == 1);
      request.decomposition.reset();
      request.mode = cut == Decomposition::strip ? HeatMode::strip : HeatMode::block;
      for (const std::size_t n : heights) {
        for (const std::uint64_t factor : {1, 3}) {
          request.height = n;
          request.device_memory = factor * minimum_heat_budget(planner, steps, cut, n, schedule);
          const model::Plan plan = check_identical(context, initial, alpha, steps, request, expected);
          CHECK(plan.layout.decomposition == cut);
          CHECK(plan.layout.height == n);
        }
      }
      request.height.reset();
    }
    // Below what the whole grid needs: a pyramid, of several tasks where the grid allows.
    const std::uint64_t incore = 2 * InDeviceHeat<T>::buffer_bytes(context.device(), extents);
    const std::uint64_t smallest = minimum_heat_budget(planner, steps, Decomposition::strip, 1, schedule);
    if (smallest < incore) {
      request.mode = HeatMode::automatic;
      request.device_memory = std::min(4 * smallest, incore - 1);
      CHECK(check_identical(context, initial, alpha, steps, request, expected).layout.decomposition != Decomposition::incore);
    }
  }
}

}  // namespace

TEST_CASE_TEMPLATE("every pyramid mode is bit-identical to in-device stepping, in 1D, 2D and 3D", T, float, double) {
  for_each_device([](Context& context) {
    // 13 steps: passes of n = 2, 3, 5 end with a shorter pass. Strips on rows wider than a
    // work-group; blocks (and strips) on the smaller grid.
    check_all_modes<T>(context, {301}, 13, {1, 3, 13});
    check_all_modes<T>(context, {133, 71}, 13, {1, 2, 5}, 1, false);
    check_all_modes<T>(context, {47, 29}, 13, {1, 2, 5});
    check_all_modes<T>(context, {37, 29, 23}, 13, {1, 3});
  }, test::needs_for<T>());
}

TEST_CASE_TEMPLATE("several steps a launch (on chip) give the bits of single steps in every mode", T, float, double) {
  for_each_device([](Context& context) {
    // Depths that exceed the pass height (passes of 2 steps) and leave a shorter last launch
    // (passes of 13 steps: 5 + 5 + 3, 3 x 4 + 1).
    check_all_modes<T>(context, {133, 71}, 13, {2, 13}, std::is_same_v<T, float> ? 5 : 3, false);
    check_all_modes<T>(context, {47, 29}, 13, {2, 13}, std::is_same_v<T, float> ? 5 : 3);
    const std::size_t depth = std::is_same_v<T, float> ? 2 : 3;  // the depths test_heat.cpp builds
    for (const auto& extents : std::vector<std::vector<std::size_t>>{{3, 3}, {3, 40}, {300, 3}, {3}, {301}, {4, 3, 5}})
      check_all_modes<T>(context, extents, 6, {1, 6}, depth);
    check_all_modes<T>(context, {37, 29, 23}, 13, {2, 13}, depth);
  }, test::needs_for<T>());
}

TEST_CASE("pyramids on odd shapes: one interior node, thin grids, grids narrower than a work-group") {
  for_each_device([](Context& context) {
    for (const auto& extents : std::vector<std::vector<std::size_t>>{{3}, {3, 3}, {3, 40}, {300, 3}, {4, 3, 5}, {3, 9, 3}}) {
      check_all_modes<float>(context, extents, 6, {1, 2, 6});
    }
  });
}

TEST_CASE("a pyramid follows the exact discrete solution, and stepping in pieces changes nothing") {
  for_each_device([](Context& context) {
    const std::vector<std::size_t> extents{96, 80};
    const double alpha = 0.24;
    const Grid<double> mode = heat_mode_field<double>(extents);
    HeatSolver<double> solver(context, mode, alpha);
    HeatPlanRequest request;
    request.mode = HeatMode::block;
    request.height = 7;
    request.device_memory = 4 * 4 * 40 * 64 * 8;  // blocks of about 40 x 40 values
    advance_heat(solver, 30, request, fixed_profile());
    request.mode = HeatMode::strip;
    advance_heat(solver, 50, request, fixed_profile());
    const double factor = std::pow(heat_mode_decay(extents, alpha), 80.0);
    double error = 0;
    const Grid<double> field = solver.field();
    for (std::size_t i = 0; i < field.size(); ++i) error = std::max(error, std::abs(field.data()[i] - factor * mode.data()[i]));
    CHECK(solver.steps_done() == 80);
    CHECK(error <= 8.0 * 80 * std::numeric_limits<double>::epsilon());
  }, test::Needs::fp64);
}

TEST_CASE("a named launch depth is planned at the rate its tuning record holds for it") {
  for_each_device([](Context& context) {
    const test::TempDir cache;
    const test::EnvGuard guard("ZIGGURAT_CACHE_DIR", cache.path().c_str());
    HeatSolver<float> solver(context, test::random_field<float>({300, 200}, 3), 0.2);
    HeatPlanRequest request;
    request.mode = HeatMode::incore;
    request.depth = 2;
    // No record: the profile's single-step rate, as if the rate were not known.
    const PlannedHeatRun without_record = plan_tuned_heat(solver, 10, request, fixed_profile()).planned;
    CHECK(without_record.kernel_rate == "profile");
    const double unknown = without_record.predicted.prediction.compute_ns;
    HeatPlanRequest given = request;
    given.kernel_ns_per_node = fixed_profile().tau_a_ns(2, sizeof(float));
    CHECK(plan_tuned_heat(solver, 10, given, fixed_profile()).planned.predicted.prediction.compute_ns == unknown);
    // A record of depth 2 in every row the tuner tries, each at its own rate, of depth 3 and of
    // single steps: the rate of depth 2 in the row asked for is charged.
    std::vector<std::pair<std::string, double>> seconds{{blocking_candidate_name(3, {256, 1}), 1e-12}, {"1", 3e-9}};
    for (const std::size_t row : {64, 128, 256, 512, 1024})
      seconds.emplace_back(blocking_candidate_name(2, {row, 1}), static_cast<double>(row) * 1e-11);
    REQUIRE(store_tuning_record(context.device(), {heat_blocking_key<float>(2), seconds}).empty());
    const auto compute_ns = [&](const HeatPlanRequest& r) {
      return plan_tuned_heat(solver, 10, r, fixed_profile()).planned.predicted.prediction.compute_ns;
    };
    request.group = {128, 1};
    given.group = request.group;
    given.kernel_ns_per_node = 1.28;
    const PlannedHeatRun with_record = plan_tuned_heat(solver, 10, request, fixed_profile()).planned;
    const double recorded = with_record.predicted.prediction.compute_ns;
    CHECK(recorded == compute_ns(given));
    CHECK(with_record.kernel_rate == "tuning record");
    CHECK(with_record.kernel_ns_per_node == doctest::Approx(1.28));
    CHECK(plan_tuned_heat(solver, 10, given, fixed_profile()).planned.kernel_rate == "given");
    CHECK(recorded != unknown);
    // Single steps named: the record's, timed as the depths were (as the joint choice charges them).
    request.depth = given.depth = 1;
    given.kernel_ns_per_node = 3.0;
    CHECK(compute_ns(request) == compute_ns(given));
  });
}

TEST_CASE("a CPU device tunes heat steps briefly: depths 1, 2 and 4 in the default group") {
  for_each_device([](Context& context) {
    if (context.device().type != DeviceType::cpu) return;  // GPUs time every depth and group
    const test::TempDir cache;
    const test::EnvGuard guard("ZIGGURAT_CACHE_DIR", cache.path().c_str());
    for (const std::size_t dims : {2, 3}) {
      const BlockingChoice choice = choose_heat_blocking<float>(context, dims);
      CHECK(choice.measured_now);
      std::vector<std::size_t> depths;
      for (const auto& [name, seconds] : choice.seconds) {
        depths.push_back(parse_blocking_candidate(name).first);
        CHECK(seconds > 0);
      }
      std::sort(depths.begin(), depths.end());
      CHECK(std::adjacent_find(depths.begin(), depths.end()) == depths.end());  // one group a depth
      for (const std::size_t depth : depths) CHECK((depth == 1 || depth == 2 || depth == 4));
      CHECK(depths.front() == 1);
    }
  });
}

TEST_CASE("progress is reported after every pass, in order, up to the last step") {
  for_each_device([](Context& context) {
    const Grid<float> initial = test::random_field<float>({64, 90}, 7);
    HeatSolver<float> solver(context, initial, 0.2);
    HeatPlanRequest request;
    request.mode = HeatMode::strip;
    request.height = 4;
    request.device_memory = 2 * minimum_heat_budget(solver, 22, Decomposition::strip, 4, request.schedule);
    std::vector<HeatProgress> reports;
    HeatRunOptions options;
    options.progress = [&](const HeatProgress& p) { reports.push_back(p); };
    const HeatOutcome outcome = advance_heat(solver, 22, request, fixed_profile(), options);
    const HeatRun& run = outcome.run;
    REQUIRE(reports.size() == 6);  // ceil(22 / 4) passes
    for (std::size_t i = 0; i < reports.size(); ++i) {
      CHECK(reports[i].passes_done == i + 1);
      CHECK(reports[i].passes == 6);
      CHECK(reports[i].steps == 22);
      CHECK(reports[i].steps_done == std::min<std::size_t>(22, 4 * (i + 1)));
      CHECK(reports[i].seconds >= (i > 0 ? reports[i - 1].seconds : 0.0));
      CHECK(reports[i].nodes_per_second > 0);
    }
    CHECK(reports.back().eta_seconds == 0);
    CHECK(run.seconds >= reports.back().seconds);
    CHECK(run.passes == 6);
    CHECK(outcome.planned.predicted.prediction.passes == 6);
  });
}

TEST_CASE("a recorded timeline holds every task's upload, kernels and download, in dependency order") {
  for_each_device([](Context& context) {
    const Grid<float> initial = test::random_field<float>({40, 70}, 8);
    for (const Decomposition decomposition : {Decomposition::strip, Decomposition::block}) {
      for (const Schedule schedule : {Schedule::serial, Schedule::overlapped}) {
        CAPTURE(to_string(decomposition));
        CAPTURE(to_string(schedule));
        HeatSolver<float> solver(context, initial, 0.2);
        HeatPlanRequest request;
        request.mode = decomposition == Decomposition::strip ? HeatMode::strip : HeatMode::block;
        request.height = 3;
        request.schedule = schedule;
        request.device_memory = 3 * minimum_heat_budget(solver, 7, decomposition, 3, schedule);
        HeatRunOptions options;
        options.record_timeline = true;
        if (!context.device().profiling) {
          CHECK_THROWS_AS(advance_heat(solver, 7, request, fixed_profile(), options), UnsupportedFeature);
          continue;
        }
        const HeatOutcome outcome = advance_heat(solver, 7, request, fixed_profile(), options);
        const HeatRun& run = outcome.run;
        const std::size_t tasks = run.tasks, passes = run.passes;
        CHECK(tasks == outcome.planned.predicted.prediction.tasks);
        CHECK(passes == outcome.planned.predicted.prediction.passes);
        REQUIRE(run.timeline.size() == 3 * tasks * passes);
        double earliest = 1e300;
        using Engine = HeatTimelineEntry::Engine;
        for (std::size_t j = 0; j < tasks * passes; ++j) {
          const HeatTimelineEntry& up = run.timeline[3 * j];
          const HeatTimelineEntry& kernels = run.timeline[3 * j + 1];
          const HeatTimelineEntry& down = run.timeline[3 * j + 2];
          CHECK(up.engine == Engine::upload);
          CHECK(kernels.engine == Engine::compute);
          CHECK(down.engine == Engine::download);
          CHECK(up.pass == j / tasks);
          CHECK(up.task == j % tasks);
          CHECK(up.start_s <= up.end_s);
          CHECK(up.end_s <= kernels.start_s);
          CHECK(kernels.start_s <= kernels.end_s);
          CHECK(kernels.end_s <= down.start_s);
          CHECK(down.start_s <= down.end_s);
          CHECK(down.end_s <= run.seconds);
          earliest = std::min(earliest, up.start_s);
          // The serial schedule runs one command at a time.
          if (schedule == Schedule::serial && j > 0) CHECK(run.timeline[3 * j - 1].end_s <= up.start_s);
        }
        CHECK(earliest == 0);
      }
    }
  });
}

TEST_CASE("the heat solver refuses bad requests with clear errors and keeps the field") {
  for_each_device([](Context& context) {
    const Grid<float> initial = test::random_field<float>({200, 100}, 3);
    HeatSolver<float> solver(context, initial, 0.2);
    const auto advance = [&](std::size_t steps, const HeatPlanRequest& request) {
      return advance_heat(solver, steps, request, fixed_profile());
    };
    HeatPlanRequest request;
    request.mode = HeatMode::strip;
    request.height = 3;
    const std::uint64_t minimum = minimum_heat_budget(solver, 10, Decomposition::strip, 3, request.schedule);
    request.device_memory = minimum - 1;
    CHECK_THROWS_WITH_AS(advance(10, request), doctest::Contains("needs at least"), InvalidArgument);
    request.schedule = Schedule::serial;  // the solver's serial budget counts its two layers
    request.device_memory = minimum_heat_budget(solver, 10, Decomposition::strip, 3, request.schedule) - 1;
    CHECK_THROWS_WITH_AS(advance(10, request), doctest::Contains("2 buffers) needs at least"), InvalidArgument);
    request.schedule = Schedule::overlapped;
    request.mode = HeatMode::automatic;
    request.device_memory = 64;  // neither strips nor blocks
    CHECK_THROWS_WITH_AS(advance(10, request), doctest::Contains("too small"), InvalidArgument);
    request.height = 11;
    request.device_memory.reset();
    CHECK_THROWS_WITH_AS(advance(10, request), doctest::Contains("between 1 and"), InvalidArgument);
    request = {};
    request.mode = HeatMode::incore;
    request.device_memory = 1000;
    CHECK_THROWS_WITH_AS(advance(10, request), doctest::Contains("does not fit"), InvalidArgument);
    // A plan given straight to the solver is checked too.
    CHECK_THROWS_WITH_AS(solver.advance(10, HeatPlan{{Decomposition::strip, 11, 5}, Schedule::overlapped}),
                         doctest::Contains("between 1 and the number of steps 10"), InvalidArgument);
    CHECK_THROWS_WITH_AS(solver.advance(10, HeatPlan{{Decomposition::strip, 2, 0}, Schedule::overlapped}),
                         doctest::Contains("at least one row"), InvalidArgument);
    CHECK(identical_nodes(solver.field(), initial) == initial.size());
    CHECK(solver.steps_done() == 0);

    CHECK_THROWS_WITH_AS(HeatSolver<float>(context, initial, 0.26), doctest::Contains("unstable"), InvalidArgument);
    CHECK_THROWS_WITH_AS(HeatSolver<float>(context, Grid<float>({2, 9}), 0.2), doctest::Contains("at least 3 nodes"),
                         InvalidArgument);
    CHECK_THROWS_AS(Grid<float>({0, 9}), InvalidArgument);
    HeatSolver<float> cube(context, Grid<float>({5, 5, 5}), 0.1);
    request = {};
    request.mode = HeatMode::block;
    CHECK_THROWS_WITH_AS(advance_heat(cube, 1, request, fixed_profile()), doctest::Contains("block decomposition is for 2D"),
                         InvalidArgument);
    CHECK_THROWS_WITH_AS(cube.advance(1, HeatPlan{{Decomposition::block, 1, 2}, Schedule::serial}),
                         doctest::Contains("block decomposition is for 2D"), InvalidArgument);
    CHECK(solver.advance(0, HeatPlan{}).steps == 0);
  });
}

TEST_CASE("a run that fails part-way leaves the field of its last complete pass, and goes on from there") {
  for_each_device([](Context& context) {
    const Grid<float> initial = test::random_field<float>({64, 90}, 17);
    const double alpha = 0.2;
    // Strips of the whole interior (one task a pass: later passes are in flight when a pass ends)
    // and of 10 rows (9 tasks a pass), in both schedules.
    for (const std::size_t extent : {88, 10}) {
      for (const Schedule schedule : {Schedule::serial, Schedule::overlapped}) {
        CAPTURE(extent);
        CAPTURE(to_string(schedule));
        HeatSolver<float> solver(context, initial, alpha);
        const HeatPlan plan{{Decomposition::strip, 3, extent}, schedule};
        HeatRunOptions options;
        options.progress = [](const HeatProgress& p) {
          if (p.passes_done == 2) throw OpenCLError(CL_OUT_OF_RESOURCES, "clEnqueueNDRangeKernel", "a test's injected failure");
        };
        CHECK_THROWS_AS(solver.advance(30, plan, options), OpenCLError);
        const std::size_t done = solver.steps_done();
        CHECK(done % 3 == 0);  // whole passes only
        CHECK(done >= 6);
        CHECK(done < 30);
        InDeviceHeat<float> reference(context, initial, alpha);
        reference.advance(done);
        CHECK(identical_nodes(solver.field(), reference.read()) == initial.size());
        solver.advance(30 - done, plan);
        reference.advance(30 - done);
        CHECK(solver.steps_done() == 30);
        CHECK(identical_nodes(solver.field(), reference.read()) == initial.size());
      }
    }
  });
}

TEST_CASE_TEMPLATE("pyramid passes on small grids (the Oclgrind subset)" * doctest::test_suite("oclgrind"), T, float,
                   double) {
  for_each_device([](Context& context) {
    for (const auto& extents : std::vector<std::vector<std::size_t>>{{40}, {45, 21}, {9, 7, 11}}) {
      const Grid<T> initial = test::random_field<T>(extents, 11);
      const double alpha = 0.9 * max_stable_alpha(extents.size());
      InDeviceHeat<T> in_device(context, initial, alpha);
      in_device.advance(5);
      const Grid<T> expected = in_device.read();
      const HeatSolver<T> planner(context, initial, alpha);
      for (const Schedule schedule : {Schedule::serial, Schedule::overlapped}) {
        for (const HeatMode mode : {HeatMode::strip, HeatMode::block}) {
          if (mode == HeatMode::block && extents.size() != 2) continue;
          HeatPlanRequest request;
          request.mode = mode;
          request.schedule = schedule;
          request.height = 2;
          const Decomposition cut = mode == HeatMode::strip ? Decomposition::strip : Decomposition::block;
          request.device_memory = 3 * minimum_heat_budget(planner, 5, cut, 2, schedule);
          check_identical(context, initial, alpha, 5, request, expected);
        }
      }
    }
  }, test::needs_for<T>());
}
