// The cost models against values computed by hand from their definitions (method notes, 1-2).

#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <random>

#include "ziggurat/base/error.hpp"
#include "ziggurat/tuning/blocking_model.hpp"
#include "ziggurat/tuning/cost_model.hpp"
#include "ziggurat/tuning/heat_planner.hpp"
#include "ziggurat/tuning/model_constants.hpp"
#include "ziggurat/tuning/model_sweep.hpp"
#include "ziggurat/tuning/wave_planner.hpp"
#include "../support/fixed_profile.hpp"

using namespace ziggurat;
using namespace ziggurat::model;

namespace {

// A budget of `bytes` shared by the buffers the pyramid solver keeps under `schedule`.
Budget held(std::uint64_t bytes, Schedule schedule) { return {bytes, solver_buffer_layers(schedule)}; }

std::vector<TaskCounts> counts(std::vector<std::size_t> extents, Decomposition d, std::size_t n, std::size_t extent,
                               std::size_t steps) {
  return pass_counts(Problem{std::move(extents), 100, 4}, PyramidLayout{d, n, extent}, steps);
}

TaskCounts tc(double sent, double received, double computed, std::size_t steps) {
  return {sent, received, computed, steps};
}

}  // namespace

TEST_CASE("strip counts of a 6 x 7 grid, edge and short tasks included") {
  // Interior rows 1..5 (5 rows); a row is 6 values, 4 of them interior.
  using V = std::vector<TaskCounts>;
  CHECK(counts({6, 7}, Decomposition::strip, 1, 2, 1) ==
        V{tc(4 * 6, 2 * 6, 2 * 4, 1), tc(4 * 6, 2 * 6, 2 * 4, 1), tc(3 * 6, 1 * 6, 1 * 4, 1)});
  // n = 2: rows sent [0,5), [1,7), [3,7); computed rows per step (3,2), (4,2), (2,1).
  CHECK(counts({6, 7}, Decomposition::strip, 2, 2, 2) ==
        V{tc(5 * 6, 12, 5 * 4, 2), tc(6 * 6, 12, 6 * 4, 2), tc(4 * 6, 6, 3 * 4, 2)});
  // Every interior node is computed once per step, in the last step of each task.
  double computed = 0;
  for (const auto& c : counts({6, 7}, Decomposition::trivial, 1, 2, 1)) computed += c.computed;
  CHECK(computed == 20);
}

TEST_CASE("a middle strip task computes exactly what the paper counts") {
  // R = r + 2n rows: n (R - n - 1) rows of interior nodes; the paper's rows are I-1 = 4 values.
  const auto tasks = counts({6, 40}, Decomposition::strip, 3, 5, 3);
  const TaskCounts paper = paper_strip_counts(11, 3, 4);
  CHECK(tasks[2].computed == paper.computed);
  CHECK(paper.sent == 44);
  CHECK(paper.received == 20);
  CHECK(tasks[2].sent == 11 * 6);     // whole rows, boundary columns included
  CHECK(tasks[2].received == 5 * 6);
}

TEST_CASE("block counts of a 7 x 7 grid, and a middle block against the paper") {
  const auto tasks = counts({7, 7}, Decomposition::block, 1, 2, 1);
  REQUIRE(tasks.size() == 9);
  CHECK(tasks[0] == tc(16, 4, 4, 1));  // corner: halo only inside
  CHECK(tasks[4] == tc(16, 4, 4, 1));  // middle: B = 4, the paper's B^2, (B-2n)^2, n((B-n)^2-2(B-n)+(n^2+2)/3)
  CHECK(tasks[8] == tc(9, 1, 1, 1));   // the last, 1 x 1 tile
  CHECK(paper_block_counts(4, 1) == tc(16, 4, 4, 1));

  const auto big = counts({13, 13}, Decomposition::block, 2, 3, 2);
  CHECK(big[5] == tc(49, 9, 34, 2));   // tile (1,1): B = 7; 5x5 then 3x3 computed
  CHECK(paper_block_counts(7, 2) == tc(49, 9, 34, 2));
}

TEST_CASE("1D and 3D strips") {
  using V = std::vector<TaskCounts>;
  CHECK(counts({10}, Decomposition::strip, 1, 3, 1) == V{tc(5, 3, 3, 1), tc(5, 3, 3, 1), tc(4, 2, 2, 1)});
  // 4 x 5 x 6: planes of 20 values, 2 x 3 = 6 interior; cut along the 6 planes.
  CHECK(counts({4, 5, 6}, Decomposition::strip, 1, 2, 1) == V{tc(80, 40, 12, 1), tc(80, 40, 12, 1)});
  CHECK_THROWS_WITH_AS(counts({4, 5, 6}, Decomposition::block, 1, 2, 1), doctest::Contains("for 2D grids"),
                       InvalidArgument);
}

TEST_CASE("the paper's approximate forms, by hand") {
  CHECK(strip_ns_per_node_approx(10, 2, 1, 0.5) == doctest::Approx(2.0));  // (8/6)(1 + 0.5)
  CHECK(block_ns_per_node_approx(10, 2, 1, 0.5) == doctest::Approx((68.0 + (64 + 4.0 / 3) * 0.5) / 36));
  CHECK(trivial_ns_per_node_approx(10, 1, 0.5) == doctest::Approx(2.75));
  // The paper's constants (GT330M: tau_c = 2.35 ns, tau_a = 0.6 ns) give its measured trivial
  // time, 5.44 ns/node, within its stated model error.
  CHECK(trivial_ns_per_node_approx(1000, 2.35, 0.6) == doctest::Approx(5.44).epsilon(0.05));
  // Strips: the approximate time falls as R grows and, for large R, as n grows.
  CHECK(strip_ns_per_node_approx(100, 5, 2, 1) > strip_ns_per_node_approx(200, 5, 2, 1));
  CHECK(strip_ns_per_node_approx(1000, 5, 2, 1) > strip_ns_per_node_approx(1000, 20, 2, 1));
}

TEST_CASE("serial predictions add up every transfer, launch and node") {
  const Problem problem{{6, 7}, 2, 4};
  DeviceConstants k = DeviceConstants::paper(1.0, 0.5);
  // One pass of n = 2: transfers 30+12 + 36+12 + 24+6 = 120, computed (20+24+12) x 0.5 = 28.
  Prediction p = predict(problem, PyramidLayout{Decomposition::strip, 2, 2}, k, Schedule::serial);
  CHECK(p.total_ns == doctest::Approx(148));
  CHECK(p.ns_per_node == doctest::Approx(148.0 / (2 * 20)));
  CHECK(p.tasks == 3);
  CHECK(p.passes == 1);
  k.launch_ns = 10;  // 3 tasks x 2 launches
  CHECK(predict(problem, PyramidLayout{Decomposition::strip, 2, 2}, k, Schedule::serial).total_ns == doctest::Approx(208));
  k.upload.latency_ns = k.download.latency_ns = 100;  // 6 transfers
  CHECK(predict(problem, PyramidLayout{Decomposition::strip, 2, 2}, k, Schedule::serial).total_ns == doctest::Approx(808));

  // K = 3 with n = 2: a full pass (148) and a last pass of one step (transfers 96, nodes 10).
  const Problem three{{6, 7}, 3, 4};
  p = predict(three, PyramidLayout{Decomposition::strip, 2, 2}, DeviceConstants::paper(1.0, 0.5), Schedule::serial);
  CHECK(p.passes == 2);
  CHECK(p.total_ns == doctest::Approx(148 + 106));
}

TEST_CASE("launches of T steps: a pass of s steps runs ceil(s/T) of them, a partial one crossing memory once") {
  // 1D, interior 6, one task owning it all: 8 values up, 6 down, 6 nodes a step (tau_c = 1).
  DeviceConstants k = DeviceConstants::paper(1.0, 0.5);
  k.launch_ns = 10;
  k.crossing_ns = 2;
  const PyramidLayout whole{Decomposition::strip, 4, 6};
  const Problem four{{8}, 4, 4};
  CHECK(predict(four, whole, k, Schedule::serial).total_ns == doctest::Approx(14 + 4 * 10 + 24 * 0.5));  // T = 1
  k.launch_depth = 3;
  // 2 launches; 3 steps of 6 nodes at tau_a, then 1 step of 6 nodes at a crossing and one step on
  // chip, tau_a - crossing / 3 (none here: a full launch is all crossing).
  CHECK(predict(four, whole, k, Schedule::serial).total_ns == doctest::Approx(14 + 2 * 10 + 18 * 0.5 + 6 * 2.0));
  CHECK(predict(four, whole, k, Schedule::overlapped).total_ns == doctest::Approx(55));  // one task: one after another
  CHECK(predict(four, PyramidLayout{Decomposition::incore, 0, 0}, k, Schedule::serial).total_ns == doctest::Approx(16 + 41));
  // Two passes of 2 steps: one partial launch each, at the crossing.
  CHECK(predict(four, PyramidLayout{Decomposition::strip, 2, 6}, k, Schedule::serial).total_ns ==
        doctest::Approx(2 * (14 + 10 + 6 * 2.0)));
  k.crossing_ns = 0.25;  // a full launch: 0.25 crossing, 3 x (0.5 - 0.25 / 3) on chip
  CHECK(predict(four, whole, k, Schedule::serial).total_ns ==
        doctest::Approx(14 + 2 * 10 + 18 * 0.5 + 6 * (0.25 + (0.5 - 0.25 / 3))));
  // T = 1 never pays a crossing: the predictions of single steps.
  k.launch_depth = 1;
  k.crossing_ns = 100;
  CHECK(predict(four, whole, k, Schedule::serial).total_ns == doctest::Approx(14 + 4 * 10 + 24 * 0.5));

  // Strips of a 2D grid, passes of 4, 4 and 1 steps at T = 3, against the tasks' counts.
  const Problem nine{{6, 7}, 9, 4};
  const PyramidLayout strips{Decomposition::strip, 4, 2};
  k.launch_depth = 3;
  k.crossing_ns = 2;
  double want = 0;
  for (const std::size_t s : {4, 4, 1}) {
    const double r = static_cast<double>(s % 3);
    for (const TaskCounts& c : pass_counts(nine, strips, s)) {
      const double step_nodes = c.computed / static_cast<double>(s);
      want += c.sent + c.received + static_cast<double>((s + 2) / 3) * 10 + (c.computed - r * step_nodes) * 0.5 +
              step_nodes * (2.0 + r * std::max(0.0, 0.5 - 2.0 / 3));
    }
  }
  CHECK(predict(nine, strips, k, Schedule::serial).total_ns == doctest::Approx(want));
}

TEST_CASE("the overlapped schedule, traced by hand") {
  // 1D, interior 6, r = 2, n = 1: three tasks of upload 4, compute 2, download 2 (tau = 1).
  DeviceConstants k = DeviceConstants::paper(1.0, 1.0);
  const PyramidLayout layout{Decomposition::strip, 1, 2};
  CHECK(predict(Problem{{8}, 1, 4}, layout, k, Schedule::serial).total_ns == doctest::Approx(24));
  CHECK(predict(Problem{{8}, 1, 4}, layout, k, Schedule::overlapped).total_ns == doctest::Approx(16));
  // Two passes: the second pass's uploads wait for the downloads holding their halo.
  CHECK(predict(Problem{{8}, 2, 4}, layout, k, Schedule::overlapped).total_ns == doctest::Approx(28));
  // From the second pass on the uploads run back to back, 12 a pass; the last pass ends with an
  // upload (12 K), its kernels (2) and its download (2). Long runs skip the repeating passes.
  for (const std::size_t passes : {10, 11, 1000}) {
    CAPTURE(passes);
    CHECK(predict(Problem{{8}, passes, 4}, layout, k, Schedule::overlapped).total_ns == doctest::Approx(12.0 * passes + 4));
  }
  // One task per pass: each pass waits for the one before: K (5 + 3 + 3).
  CHECK(predict(Problem{{5}, 7, 4}, PyramidLayout{Decomposition::strip, 1, 3}, k, Schedule::overlapped).total_ns ==
        doctest::Approx(77));
  // Transfers 1.5 times slower while the other engines run: uploads of 6, downloads of 3.
  k.engines.upload_slowdown = k.engines.download_slowdown = 1.5;
  CHECK(predict(Problem{{8}, 1, 4}, layout, k, Schedule::overlapped).total_ns == doctest::Approx(23));
  CHECK(predict(Problem{{8}, 1, 4}, layout, k, Schedule::serial).total_ns == doctest::Approx(24));
  // Kernels 1.5 times slower while transfers run beside them: task 1's kernels (2) run beside
  // task 2's upload and task 0's download, and take 3. Trace: uploads [0,6] [6,12] [12,18];
  // kernels [6,9] [12,15] [18,21] (the first and last, each beside one transfer, also 3);
  // downloads [9,12] [15,18] [21,24].
  k.engines.compute_slowdown = 1.5;
  CHECK(predict(Problem{{8}, 1, 4}, layout, k, Schedule::overlapped).total_ns == doctest::Approx(24));
  CHECK(predict(Problem{{8}, 1, 4}, layout, k, Schedule::serial).total_ns == doctest::Approx(24));
  k.engines.compute_slowdown = 1;
  // Blocks move rectangular regions: their engines are rect_engines.
  const Problem grid{{8, 8}, 1, 4};
  const PyramidLayout blocks{Decomposition::block, 1, 2};
  const double block_time = predict(grid, blocks, DeviceConstants::paper(1.0, 1.0), Schedule::overlapped).total_ns;
  CHECK(predict(grid, blocks, k, Schedule::overlapped).total_ns == block_time);
  k.rect_engines.upload_slowdown = 1.5;
  CHECK(predict(grid, blocks, k, Schedule::overlapped).total_ns > block_time);
  k.engines = k.rect_engines = TransferEngines{};
  // One copy engine for both directions.
  k.engines.duplex = false;
  CHECK(predict(Problem{{8}, 1, 4}, layout, k, Schedule::overlapped).total_ns == doctest::Approx(18));
  // No overlap at all: the serial sum.
  k.engines.overlap_compute = false;
  CHECK(predict(Problem{{8}, 1, 4}, layout, k, Schedule::overlapped).total_ns == doctest::Approx(24));
}

TEST_CASE("overlapped time lies between the busiest engine and the serial sum") {
  DeviceConstants k = DeviceConstants::paper(2.0, 0.3);
  k.launch_ns = 50;
  k.upload.latency_ns = k.download.latency_ns = 500;
  for (const auto& [extents, d, n, extent] :
       {std::tuple{std::vector<std::size_t>{300, 500}, Decomposition::strip, 7, 40},
        std::tuple{std::vector<std::size_t>{300, 500}, Decomposition::block, 5, 60},
        std::tuple{std::vector<std::size_t>{40, 50, 60}, Decomposition::strip, 3, 9}}) {
    const Problem problem{extents, 23, 4};
    const PyramidLayout layout{d, static_cast<std::size_t>(n), static_cast<std::size_t>(extent)};
    const Prediction serial = predict(problem, layout, k, Schedule::serial);
    const Prediction overlapped = predict(problem, layout, k, Schedule::overlapped);
    CHECK(overlapped.total_ns <= serial.total_ns);
    CHECK(overlapped.total_ns >= std::max(overlapped.compute_ns, overlapped.transfer_ns / 2));
    CHECK(serial.total_ns == doctest::Approx(serial.transfer_ns + serial.compute_ns));
  }
}

TEST_CASE("edge cases: n = 1 is the trivial algorithm, n = (R-1)/2 owns one row, bad layouts are refused") {
  const Problem problem{{50, 60}, 10, 4};
  const auto k = DeviceConstants::paper(1.0, 0.25);
  CHECK(predict(problem, PyramidLayout{Decomposition::strip, 1, 8}, k, Schedule::serial).total_ns ==
        predict(problem, PyramidLayout{Decomposition::trivial, 7, 8}, k, Schedule::serial).total_ns);
  const auto one_row = counts({50, 60}, Decomposition::strip, 4, 1, 4);  // R = 9 = 2n + 1
  CHECK(one_row.size() == 58);
  CHECK(one_row[10].received == 50);
  CHECK(one_row[10].computed == (7 + 5 + 3 + 1) * 48);
  CHECK_THROWS_WITH_AS(predict(problem, PyramidLayout{Decomposition::strip, 11, 8}, k, Schedule::serial),
                       doctest::Contains("between 1 and the number of steps 10"), InvalidArgument);
  CHECK_THROWS_AS(predict(problem, PyramidLayout{Decomposition::strip, 0, 8}, k, Schedule::serial), InvalidArgument);
  CHECK_THROWS_AS(predict(problem, PyramidLayout{Decomposition::strip, 2, 0}, k, Schedule::serial), InvalidArgument);
  CHECK_THROWS_WITH_AS(predict(Problem{{2, 60}, 10, 4}, PyramidLayout{}, k, Schedule::serial),
                       doctest::Contains("at least 3 nodes"), InvalidArgument);
  CHECK_THROWS_AS(predict(Problem{{50, 60}, 0, 4}, PyramidLayout{}, k, Schedule::serial), InvalidArgument);
  CHECK_THROWS_AS(predict(Problem{{50, 60}, 1, 2}, PyramidLayout{}, k, Schedule::serial), InvalidArgument);
}

TEST_CASE("constants no device has are refused by name, never planned into a division by zero") {
  const Problem problem{{130, 130}, 1000, 4};
  const Budget budget = held(1 << 20, Schedule::overlapped);
  for (const double tau_c : {std::numeric_limits<double>::infinity(), -1.0, DeviceConstants::kMostNs * 2}) {
    CAPTURE(tau_c);
    CHECK_THROWS_WITH_AS(best_plan(problem, budget, DeviceConstants::paper(tau_c, 0.1), Schedule::overlapped,
                                   Decomposition::strip),
                         doctest::Contains("upload.ns_per_value"), InvalidArgument);
  }
  CHECK_THROWS_WITH_AS(predict(problem, PyramidLayout{Decomposition::strip, 2, 10}, DeviceConstants::paper(1, 0),
                               Schedule::serial),
                       doctest::Contains("tau_a_ns must be above 0"), InvalidArgument);
  DeviceConstants slow = DeviceConstants::paper(1, 0.1);
  slow.engines.upload_slowdown = std::numeric_limits<double>::infinity();
  CHECK_THROWS_WITH_AS(best_plan(problem, budget, slow, Schedule::overlapped, Decomposition::strip),
                       doctest::Contains("slowdown"), InvalidArgument);
  // At the bound a plan is still made, its time finite.
  const Plan plan = best_plan(problem, budget, DeviceConstants::paper(DeviceConstants::kMostNs, DeviceConstants::kMostNs),
                              Schedule::overlapped, Decomposition::strip);
  CHECK(plan.layout.height >= 1);
  CHECK(std::isfinite(plan.prediction.total_ns));
}

TEST_CASE("budgets: buffer sizes, and a budget too small for any pyramid is a clear error") {
  const Problem problem{{1026, 1026}, 100, 4};
  CHECK(max_strip_rows(problem, held(2 * 1026 * 4 * 100, Schedule::serial)) == 100);      // 2 layers of whole rows
  CHECK(max_strip_rows(problem, held(4 * 1026 * 4 * 100, Schedule::overlapped)) == 100);  // 4 layers
  CHECK(max_strip_rows(problem, held(1ull << 40, Schedule::serial)) == 1026);             // never more than the grid
  Problem padded = problem;
  padded.row_alignment = 32;  // rows of 1026 values take 1056 in device buffers
  CHECK(max_strip_rows(padded, held(2 * 1056 * 4 * 100, Schedule::serial)) == 100);
  CHECK(max_strip_rows(padded, held(2 * 1056 * 4 * 100 - 1, Schedule::serial)) == 99);
  CHECK(task_buffer_values(padded, PyramidLayout{Decomposition::block, 2, 27}) == 32 * 31);  // 31 wide, padded to 32
  CHECK_FALSE(fits_incore(padded, 2ull * 1026 * 1026 * 4));
  CHECK(fits_incore(padded, 2ull * 1056 * 1026 * 4));
  CHECK(max_block_side(problem, held(2 * 4 * 300 * 300, Schedule::serial)) == 300);
  CHECK(max_block_side(problem, held(16 * 300 * 300, Schedule::overlapped)) == 300);
  CHECK(max_block_side(Problem{{10, 10, 10}, 1, 4}, held(1 << 20, Schedule::serial)) == 0);
  CHECK(fits_incore(problem, 2ull * 1026 * 1026 * 4));
  CHECK_FALSE(fits_incore(problem, 2ull * 1026 * 1026 * 4 - 1));

  const auto k = DeviceConstants::paper(10, 1);
  // The minimum: one owned row (node) and n halo rows a side, in every buffer of the schedule.
  CHECK(minimum_budget(problem, Decomposition::strip, 1, solver_buffer_layers(Schedule::serial)) == 3 * 4104 * 2);
  CHECK(minimum_budget(problem, Decomposition::strip, 5, solver_buffer_layers(Schedule::overlapped)) == 11 * 4104 * 4);
  CHECK(minimum_budget(problem, Decomposition::block, 1, solver_buffer_layers(Schedule::overlapped)) == 9 * 4 * 4);
  CHECK_THROWS_WITH_AS(best_plan(problem, held(3 * 4104 * 2 - 1, Schedule::serial), k, Schedule::serial, Decomposition::strip),
                       doctest::Contains("needs at least 24.05 KiB"), InvalidArgument);
  CHECK_NOTHROW(best_plan(problem, held(3 * 4104 * 2, Schedule::serial), k, Schedule::serial, Decomposition::strip));
  CHECK_THROWS_WITH_AS(best_plan(problem, held(16 * 4, Schedule::overlapped), k, Schedule::overlapped, Decomposition::block),
                       doctest::Contains("needs at least 144 bytes"), InvalidArgument);
  CHECK_THROWS_WITH_AS(best_plan(problem, held(4104 * 9, Schedule::serial), k, Schedule::serial, Decomposition::strip, 5),
                       doctest::Contains("n = 5 on grid 1026x1026"), InvalidArgument);
  CHECK_THROWS_WITH_AS(best_plan(problem, held(1 << 30, Schedule::serial), k, Schedule::serial, Decomposition::strip, 101),
                       doctest::Contains("between 1 and the 100 steps"), InvalidArgument);
  CHECK_THROWS_AS(best_plan(problem, held(1 << 20, Schedule::serial), k, Schedule::serial, Decomposition::incore), InvalidArgument);
}

TEST_CASE("a task's buffer is the largest region it sends; edge tasks need no halo beyond the boundary") {
  for (const auto& [extents, d] : {std::pair{std::vector<std::size_t>{31}, Decomposition::strip},
                                   std::pair{std::vector<std::size_t>{9, 26}, Decomposition::strip},
                                   std::pair{std::vector<std::size_t>{13, 21}, Decomposition::block},
                                   std::pair{std::vector<std::size_t>{5, 6, 17}, Decomposition::strip}}) {
    for (std::size_t n = 1; n <= 30; n += 3) {
      for (std::size_t extent = 1; extent <= 30; extent += 2) {
        const Problem problem{extents, n, 4};
        double most = 0;
        for (const auto& c : pass_counts(problem, PyramidLayout{d, n, extent}, n)) most = std::max(most, c.sent);
        CAPTURE(n);
        CAPTURE(extent);
        CHECK(task_buffer_values(problem, PyramidLayout{d, n, extent}) == most);
      }
    }
  }
  // One task owning the whole axis needs the whole axis, however tall the pyramid.
  const Problem problem{{9, 26}, 1000, 4};
  CHECK(task_buffer_values(problem, PyramidLayout{Decomposition::strip, 1000, 24}) == 26 * 9);
  CHECK(fits(problem, PyramidLayout{Decomposition::strip, 1000, 24}, held(2 * 26 * 9 * 4, Schedule::serial)));
  CHECK_FALSE(fits(problem, PyramidLayout{Decomposition::strip, 1000, 24}, held(2 * 26 * 9 * 4 - 1, Schedule::serial)));
}

TEST_CASE("closed-form pass totals equal the sum over the listed tasks") {
  // The serial prediction comes from closed-form totals; here it is rebuilt task by task.
  DeviceConstants k = DeviceConstants::paper(1.0, 1.0);
  k.rect_upload.ns_per_value = k.rect_download.ns_per_value = 1.0;
  for (const auto& [extents, d] : {std::pair{std::vector<std::size_t>{29}, Decomposition::strip},
                                   std::pair{std::vector<std::size_t>{17, 23}, Decomposition::strip},
                                   std::pair{std::vector<std::size_t>{17, 23}, Decomposition::block},
                                   std::pair{std::vector<std::size_t>{6, 7, 19}, Decomposition::strip}}) {
    for (std::size_t n = 1; n <= 9; ++n) {
      for (std::size_t extent = 1; extent <= 12; ++extent) {
        const Problem problem{extents, n, 4};  // one pass of n steps
        double sum = 0;
        for (const auto& c : pass_counts(problem, PyramidLayout{d, n, extent}, n)) sum += c.sent + c.received + c.computed;
        CAPTURE(n);
        CAPTURE(extent);
        CHECK(predict(problem, PyramidLayout{d, n, extent}, k, Schedule::serial).total_ns == doctest::Approx(sum));
      }
    }
  }
}

TEST_CASE("the optimiser is exhaustive: no fitting height or task size beats its choice") {
  const Problem problem{{202, 302}, 24, 4};
  DeviceConstants k = DeviceConstants::paper(4.0, 0.5);
  k.launch_ns = 300;
  for (const Schedule schedule : {Schedule::serial, Schedule::overlapped}) {
    for (const Decomposition d : {Decomposition::strip, Decomposition::block}) {
      const std::uint64_t budget = 24 * 1024;
      const Plan plan = best_plan(problem, held(budget, schedule), k, schedule, d);
      CHECK(fits(problem, plan.layout, held(budget, schedule)));
      CHECK(plan.speedup_over_trivial() >= 1.0);
      for (std::size_t n = 1; n <= problem.steps; ++n) {
        for (std::size_t extent = 1; extent <= 300; ++extent) {
          if (!fits(problem, PyramidLayout{d, n, extent}, held(budget, schedule))) continue;
          const Prediction p = predict(problem, PyramidLayout{d, n, extent}, k, schedule);
          CAPTURE(n);
          CAPTURE(extent);
          CHECK(plan.prediction.total_ns <= p.total_ns * (1 + 1e-12));
        }
      }
    }
  }
}

TEST_CASE("a short grid fits one task per pass: then the tallest pyramid wins") {
  // 1026 rows fit the buffer whole: one pass of n = K moves the grid once.
  const Problem problem{{1026, 1026}, 1000, 4};
  const Plan plan = best_plan(problem, held(2ull * 1026 * 1026 * 4, Schedule::serial), DeviceConstants::paper(10, 1), Schedule::serial,
                              Decomposition::strip);
  CHECK(plan.layout.height == 1000);
  CHECK(plan.prediction.passes == 1);
}

TEST_CASE("the optimiser is exhaustive on random problems, constants and schedules") {
  std::mt19937 random(20261121);
  const auto uniform = [&](double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(random); };
  const auto pick = [&](std::size_t lo, std::size_t hi) { return std::uniform_int_distribution<std::size_t>(lo, hi)(random); };
  int planned = 0;
  for (int trial = 0; trial < 60; ++trial) {
    const bool block = trial % 3 == 0;
    std::vector<std::size_t> extents;
    if (block) {
      extents = {pick(4, 24), pick(4, 24)};
    } else {
      extents = std::vector<std::size_t>(pick(1, 3), 0);
      for (auto& e : extents) e = pick(4, extents.size() == 3 ? 9 : 30);
    }
    const Problem problem{extents, pick(1, 14), 4};
    DeviceConstants k = DeviceConstants::paper(uniform(0.1, 20), uniform(0.1, 2));
    k.rect_upload.ns_per_value = uniform(0.1, 20);
    k.upload.latency_ns = k.download.latency_ns = uniform(0, 200);
    k.rect_upload.latency_ns = k.rect_download.latency_ns = uniform(0, 300);
    k.launch_ns = uniform(0, 100);
    k.engines.duplex = k.rect_engines.duplex = trial % 2 == 0;
    k.engines.overlap_compute = k.rect_engines.overlap_compute = trial % 5 != 0;
    const Schedule schedule = trial % 4 < 2 ? Schedule::serial : Schedule::overlapped;
    const Decomposition d = block ? Decomposition::block : Decomposition::strip;
    double values = 1;
    for (const auto e : extents) values *= static_cast<double>(e);
    const auto budget = static_cast<std::uint64_t>(uniform(0.15, 1.2) * values * 4 * solver_buffer_layers(schedule));
    k.crossing_ns = k.tau_a_ns * static_cast<double>(1 + trial % 4);  // paid by partial launches only
    CAPTURE(trial);
    // Single steps, and launches of several (where the kernels' time is no longer monotone in n).
    for (const std::size_t depth : {std::size_t{1}, std::size_t{2} + trial % 3}) {
      k.launch_depth = depth;
      CAPTURE(depth);
      Plan plan;
      try {
        plan = best_plan(problem, held(budget, schedule), k, schedule, d);
      } catch (const InvalidArgument&) {
        // Nothing fits: then no layout at all may fit.
        for (std::size_t extent = 1; extent <= 30; ++extent) CHECK_FALSE(fits(problem, PyramidLayout{d, 1, extent}, held(budget, schedule)));
        continue;
      }
      ++planned;
      CHECK(fits(problem, plan.layout, held(budget, schedule)));
      for (std::size_t n = 1; n <= problem.steps; ++n) {
        for (std::size_t extent = 1; extent <= 30; ++extent) {
          const PyramidLayout layout{d, n, extent};
          if (!fits(problem, layout, held(budget, schedule))) continue;
          CAPTURE(n);
          CAPTURE(extent);
          CHECK(plan.prediction.total_ns <= predict(problem, layout, k, schedule).total_ns * (1 + 1e-12));
        }
      }
    }
  }
  CHECK(planned >= 80);  // most random budgets hold some pyramid
}

TEST_CASE("the launch depth is chosen with the height: a budget that holds only low pyramids favours a shallower depth") {
  // 2000 x 1500 floats in strips; single steps at 5 ns a node, a crossing of device memory 4 ns
  // (8 bytes at 2 GB/s); in core, depth 4 runs at 1.0 ns, depth 3 at 1.2 ns.
  DeviceProfile profile = test::fixed_profile();
  profile.kernels = {{"heat2d_box", 2, 4, {}, 5.0}};
  profile.copy_kernel_bytes_per_s = 2e9;
  CHECK(heat_constants(profile, 2, 4).crossing_ns == doctest::Approx(4));
  const std::vector<std::pair<std::string, double>> record = {
      {"4/256x1", 1.0e-9}, {"3/256x1", 1.2e-9}, {"4/64x1", 1.5e-9}, {"1", 5e-9}};
  DeviceInfo device;
  device.global_mem_bytes = 1ull << 30;
  device.max_alloc_bytes = 1ull << 28;
  const std::vector<std::size_t> extents{2000, 1500};
  HeatPlanRequest request;
  request.mode = HeatMode::strip;
  // Buffers of 9 rows: n <= 4, and n = 4 owns a single row. Depth 4 then runs partial launches
  // (n = 3 is its best, at a crossing a node a pass), depth 3 full ones.
  request.device_memory = 9 * 2000 * 4 * solver_buffer_layers(Schedule::overlapped);
  const DepthPlans low = plan_heat_depths<float>(device, extents, true, 30, request, profile, record);
  REQUIRE(low.depths.size() == 3);
  CHECK(low.depths[0].candidate == "1");
  CHECK(low.depths[1].candidate == "3/256x1");
  CHECK(low.depths[2].candidate == "4/256x1");  // the fastest work-group of depth 4
  CHECK(low.chosen.depth == 3);
  CHECK(low.chosen.group.x == 256);
  CHECK(low.chosen.predicted.layout.height == 3);
  CHECK(low.depths[1].height == 3);
  for (const DepthPlan& other : low.depths) CHECK(low.depths[1].predicted_s <= other.predicted_s);
  CHECK(low.depths[1].predicted_s < low.depths[2].predicted_s);
  // A depth asked for is planned alone, as plan_heat_depths() planned it.
  request.depth = 4;
  request.group = {256, 1};
  request.kernel_ns_per_node = 1.0;
  CHECK(plan_heat<float>(device, extents, true, 30, request, profile).predicted.prediction.total_ns * 1e-9 ==
        doctest::Approx(low.depths[2].predicted_s));
  // Buffers of 400 rows hold tall pyramids of whole launches: the fastest depth in core wins.
  request.device_memory = 400 * 2000 * 4 * solver_buffer_layers(Schedule::overlapped);
  const DepthPlans tall = plan_heat_depths<float>(device, extents, true, 30, request, profile, record);
  CHECK(tall.chosen.depth == 4);
  CHECK(tall.chosen.predicted.layout.height >= 4);
  CHECK_THROWS_AS(plan_heat_depths<float>(device, extents, true, 30, request, profile, {}), InvalidArgument);
}

TEST_CASE("long runs and large grids are planned quickly") {
  const auto k = DeviceConstants::paper(1, 0.1);
  const auto start = std::chrono::steady_clock::now();
  const Plan plan = best_plan(Problem{{2050, 2050}, 100000000, 4}, held(4 << 20, Schedule::overlapped), k, Schedule::overlapped, Decomposition::strip);
  CHECK(plan.prediction.passes >= 1);
  CHECK(best_plan_auto(Problem{{32768, 32768}, 100000, 4}, held(16ull << 30, Schedule::overlapped), k, Schedule::overlapped).layout.decomposition ==
        Decomposition::incore);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(20));
}

TEST_CASE("more expensive transfers favour taller pyramids; the plan beats trivial by more") {
  const Problem problem{{32768, 32768}, 1000, 4};
  std::size_t previous_n = 0;
  double previous_speedup = 0;
  for (const double ratio : {1.0, 5.0, 10.0, 15.0}) {
    const Plan plan = best_plan(problem, held(512ull << 20, Schedule::serial), DeviceConstants::paper(ratio * 0.1, 0.1), Schedule::serial,
                                Decomposition::strip);
    CHECK(plan.layout.height >= previous_n);
    CHECK(plan.speedup_over_trivial() > previous_speedup);
    previous_n = plan.layout.height;
    previous_speedup = plan.speedup_over_trivial();
  }
}

TEST_CASE("automatic choice: incore when the grid fits, else the better decomposition") {
  const auto k = DeviceConstants::paper(5, 1);
  const Problem small{{100, 100}, 50, 4};
  CHECK(best_plan_auto(small, held(1 << 20, Schedule::overlapped), k, Schedule::overlapped).layout.decomposition == Decomposition::incore);
  const Problem big{{2000, 2000}, 50, 4};
  const Plan plan = best_plan_auto(big, held(1 << 20, Schedule::overlapped), k, Schedule::overlapped);
  CHECK(plan.layout.decomposition != Decomposition::incore);
  const Plan strip = best_plan(big, held(1 << 20, Schedule::overlapped), k, Schedule::overlapped, Decomposition::strip);
  const Plan block = best_plan(big, held(1 << 20, Schedule::overlapped), k, Schedule::overlapped, Decomposition::block);
  CHECK(plan.prediction.total_ns == std::min(strip.prediction.total_ns, block.prediction.total_ns));
  const Problem cube{{100, 100, 100}, 5, 4};
  CHECK(best_plan_auto(cube, held(1 << 20, Schedule::serial), k, Schedule::serial).layout.decomposition == Decomposition::strip);
}

TEST_CASE("the long-vector model (1) by hand, and its staircase") {
  LongVectorConstants c;
  c.t_kernel_ns = 1;
  c.t_add_ns = 2;
  c.t_saxpy_ns = 3;
  c.t0_ns = 5;
  c.numstreams = 4;
  c.transfer_ns = 100;
  // N = 2: (N+2)^2 - 1 = 15 -> 4 waves; N(N+2) - 2 = 6 -> 2 waves: 4 + 8 + 4 + 5 + 6 = 27 a step.
  CHECK(long_vector_ns(2, 10, c) == doctest::Approx(370));
  // Time grows in steps: lengths within one wave cost the same.
  c.numstreams = 1e6;
  CHECK(long_vector_ns(100, 1, c) == long_vector_ns(200, 1, c));
  c.numstreams = 0;
  CHECK_THROWS_AS(long_vector_ns(2, 1, c), InvalidArgument);
}

TEST_CASE("the Jacobi pyramid model (2) by hand, and its best halo") {
  // N = 10, 102 planes, R = 10, h = 2: 17 blocks of (3R - 2h) N^2 = 2600 values and
  // h (R-h-1)(N-2)^2 = 896 nodes.
  CHECK(jacobi_pyramid_ns(10, 102, 10, 2, 1, 1) == doctest::Approx(17 * (2600 + 896)));
  CHECK(jacobi_pyramid_ns(10, 102, 10, 2, 1, 4, 4) == doctest::Approx(17 * (2600 + 896)));
  CHECK_THROWS_AS(jacobi_pyramid_ns(10, 102, 4, 2, 1, 1), InvalidArgument);
  const std::size_t h = best_jacobi_halo(800, 4000, 200, 5, 0.01);
  for (std::size_t other = 1; 2 * other + 1 <= 200; ++other) {
    CHECK(jacobi_pyramid_ns(800, 4000, 200, h, 5, 0.01) / h <=
          jacobi_pyramid_ns(800, 4000, 200, other, 5, 0.01) / other * (1 + 1e-12));
  }
  CHECK(h > 1);
}

TEST_CASE("the serial schedule is the paper's model: its table's speedup for I = 32768, 128 MiB, strips, tau_c = tau_a") {
  // Method notes, section 1 (Golovashkin & Kochurov 2012, the pyramid method): one time layer of
  // task buffers fills the budget, transfers and kernels run one after another, every transfer
  // costs tau_c a value. The paper's table gives the strip pyramid 2.74 times the trivial
  // algorithm's speed on a 32768 x 32768 float grid with 128 MiB of device memory at tau_c/tau_a = 1.
  const Problem problem{{32768, 32768}, 1000, 4};
  const Plan plan = best_plan(problem, paper_budget(128ull << 20, Schedule::serial), DeviceConstants::paper(0.6, 0.6),
                              Schedule::serial, Decomposition::strip);
  CHECK(plan.buffer_extent == 1024);  // 128 MiB = 1024 rows of 32768 floats, one layer
  CHECK(plan.speedup_over_trivial() == doctest::Approx(2.74).epsilon(0.02));
  // The overlapped schedule counts what the solver allocates: two slots of two layers.
  CHECK(paper_budget(1 << 20, Schedule::serial).layers == 1);
  CHECK(paper_budget(1 << 20, Schedule::overlapped).layers == solver_buffer_layers(Schedule::overlapped));
  CHECK(solver_buffer_layers(Schedule::serial) == 2);
}

TEST_CASE("a sweep plans every point as best_plan does, tau_c at each ratio, and names the points no pyramid fits") {
  const Problem problem{{4098, 4098}, 200, 4};
  DeviceConstants base = DeviceConstants::paper(1, 0.5);
  base.upload.latency_ns = base.download.latency_ns = 8000;
  const std::vector<std::uint64_t> budgets{16, 1 << 24, 1 << 26};
  const std::vector<Decomposition> decompositions{Decomposition::strip, Decomposition::block};
  const std::vector<double> ratios{1, 5, 15};
  for (const Schedule schedule : {Schedule::serial, Schedule::overlapped}) {
    const std::vector<SweepPoint> points = sweep_plans(problem, base, budgets, decompositions, ratios, schedule);
    REQUIRE(points.size() == budgets.size() * decompositions.size() * ratios.size());
    std::size_t i = 0;
    for (const std::uint64_t budget : budgets) {
      for (const Decomposition decomposition : decompositions) {
        for (const double ratio : ratios) {
          const SweepPoint& point = points[i++];
          CAPTURE(i);
          CHECK((point.budget_bytes == budget && point.decomposition == decomposition && point.tau_c_over_tau_a == ratio));
          DeviceConstants k = base;
          k.set_tau_c(ratio * base.tau_a_ns);
          CHECK((k.upload.ns_per_value == ratio * 0.5 && k.rect_download.ns_per_value == ratio * 0.5 &&
                 k.upload.latency_ns == 8000));
          if (budget == 16) {  // no pyramid fits in 16 bytes
            CHECK_FALSE(point.plan);
            CHECK(point.error.find("needs at least") != std::string::npos);
            continue;
          }
          REQUIRE(point.plan);
          const Plan plan = best_plan(problem, paper_budget(budget, schedule), k, schedule, decomposition);
          CHECK(point.plan->layout.height == plan.layout.height);
          CHECK(point.plan->layout.task_extent == plan.layout.task_extent);
          CHECK(point.plan->prediction.total_ns == plan.prediction.total_ns);
          CHECK(point.plan->trivial.total_ns == plan.trivial.total_ns);
        }
      }
    }
  }
  // A fixed height is every point's.
  for (const SweepPoint& point : sweep_plans(problem, base, {1 << 26}, {Decomposition::strip}, {2, 4}, Schedule::serial, 3))
    CHECK(point.plan->layout.height == 3);
}

TEST_CASE("wave split: the halo depth trades transfer latencies against recomputation, by hand") {
  using namespace ziggurat::wave;
  DeviceProfile profile = test::fixed_profile();  // 10 us + bytes / 20 GB/s each way, launches 5 us
  profile.copy_kernel_bytes_per_s = 1e11;
  const ElasticGrid grid = layered_grid(101, 600, 10, {{0, 3000, 1500, 2500}});
  const WaveSystem<float> system = wave_system<float>(grid, 0.9 * stable_time_step(grid));
  const double band = 2 * 101 + 3, n = 2.0 * 101 * 600, v = (11 + 5) * 4.0;
  CHECK(system.k1.offsets.back() == band);
  // One block exchanges nothing: the block's bytes over the copy bandwidth and three launches.
  CHECK(modelled_step_seconds(profile, system, 1, 1) == doctest::Approx(n * v / 1e11 + 15e-6));
  for (const std::size_t s : {1, 3, 7}) {
    const double halo = double(s) * band * 4;
    const double exchange = 4 * 2 * (10e-6 + halo / 20e9);
    const double want = exchange / double(s) + (n / 2 + band * double(s - 1)) * v / 1e11 + 15e-6;
    CHECK(modelled_step_seconds(profile, system, 2, s) == doctest::Approx(want));
  }
  // The choice is the model's minimum among the depths the blocks can hold.
  for (const std::size_t blocks : {2, 3, 5}) {
    const std::size_t s = plan_halo_steps(profile, system, blocks);
    CAPTURE(blocks);
    CHECK(s >= 1);
    CHECK(double(s) * band + 32 <= n / double(blocks));
    for (std::size_t other = 1; other <= 64 && double(other) * band + 32 <= n / double(blocks); ++other)
      CHECK(modelled_step_seconds(profile, system, blocks, s) <= modelled_step_seconds(profile, system, blocks, other));
  }
  // Latencies 10x larger call for deeper halos: the pinned transfers', or the pageable ones on a
  // device that shares host memory (where the solver's host buffers are ordinary memory).
  DeviceProfile slow = profile;
  for (TransferFit* fit : {&slow.upload_pinned, &slow.download_pinned}) fit->latency_s *= 10;
  CHECK(plan_halo_steps(slow, system, 2) > plan_halo_steps(profile, system, 2));
  DeviceProfile shared = profile;
  shared.host_unified_memory = true;
  for (TransferFit* fit : {&shared.upload_pageable, &shared.download_pageable}) fit->latency_s *= 10;
  CHECK(plan_halo_steps(shared, system, 2) == plan_halo_steps(slow, system, 2));
  CHECK(plan_halo_steps(profile, system, 1) == 1);
  profile.copy_kernel_bytes_per_s = 0;
  CHECK(plan_halo_steps(profile, system, 2) == 1);
  // Shares by measured bandwidth.
  DeviceProfile faster = slow;
  faster.copy_kernel_bytes_per_s = 3e12;
  slow.copy_kernel_bytes_per_s = 1e12;
  CHECK(block_weights({slow, faster}) == std::vector<double>{1e12, 3e12});
}

TEST_CASE("the blocking model: redundancy, the two terms, and refusals") {
  using namespace ziggurat::model;
  CHECK(blocked_redundancy({256}, 6) == doctest::Approx(256.0 / 244));
  CHECK(blocked_redundancy({32, 32}, 4) == doctest::Approx(1024.0 / 576));
  CHECK(blocked_ns_per_node(1.0, 0.1, 1.0, 4) == doctest::Approx(0.25));  // memory-bound
  CHECK(blocked_ns_per_node(1.0, 0.1, 1.5, 8) == doctest::Approx(0.15));  // on-chip-bound
  CHECK(blocked_best_depth(1.0, 0.1, {256}, 12) == 10);                  // 1 / T meets 0.1 x 256 / (256 - 2T)
  CHECK(blocked_deepest({32, 32}, 20) == 15);  // 32 > 2 x 15
  CHECK(blocked_deepest({256}, 12) == 12);
  CHECK(blocked_deepest({3}, 5) == 1);
  CHECK_THROWS_AS(blocked_redundancy({32, 32}, 16), ziggurat::InvalidArgument);
  CHECK_THROWS_AS(blocked_ns_per_node(1.0, 0.1, 1.0, 0), ziggurat::InvalidArgument);
  CHECK_THROWS_AS(fit_update_ns({{1, 0.9}}, 1.0, {256}), ziggurat::InvalidArgument);  // streaming-bound only
}

// bench/results/2026-11-25-h100-heat-blocked.md: the blocked 2D float kernel on 16384^2 on an
// H100 (ns a node and step, one run; streaming limit 0.00275). Fitted on that run, the model is a
// lower bound at every depth and within 25 % of each up to depth 8 (the register queues spill
// beyond, which the model leaves out).
TEST_CASE("the blocking model against the H100's measured 2D rates") {
  using namespace ziggurat::model;
  const double stream = 0.00275;
  const std::vector<std::pair<std::size_t, double>> measured = {
      {1, 0.00331}, {2, 0.00168}, {3, 0.00132}, {4, 0.00123}, {5, 0.00114},
      {6, 0.00106}, {7, 0.00108}, {8, 0.00116}, {10, 0.00143}, {12, 0.00142}};
  const double update = fit_update_ns(measured, stream, {256});
  CHECK(update == doctest::Approx(0.00106 * 244 / 256));
  for (const auto& [depth, ns] : measured) {
    const double predicted = blocked_ns_per_node(stream, update, blocked_redundancy({256}, depth), depth);
    CAPTURE(depth);
    CHECK(predicted <= ns * (1 + 1e-12));
    if (depth <= 8) CHECK(predicted >= 0.75 * ns);
  }
}
