// The long-vector algorithm (CLBlast calls on the unrolled grid) against the CPU reference.
//
// Tolerance: the calls add the four neighbours and the centre in another order than the reference
// does ((A (right + lower) + B centre) + A (upper + left), each product rounded, where the
// reference rounds A (((left + right) + upper) + lower) + B centre), so it cannot match bit for
// bit. Each step is still a convex combination of old values, rounded a few times, so the
// difference grows at most linearly with the steps:
//     max |long-vector - CPU| <= 8 K eps max|u0|,
// the in-device solver's bound. Measured on PoCL 3.1 (CPU, random fields in [-1, 1], the sizes and
// steps below; the test prints it): at most 1.002 K eps max|u0| in float, 1.0001 in double, about
// one ulp of max|u0| a step, so the bound has a margin of 8.

#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "../support/devices.hpp"
#include "../support/util.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/base/precision.hpp"
#include "ziggurat/solver/long_vector_heat.hpp"

using namespace ziggurat;
using test::for_each_device;

namespace {

template <class T>
double peak_of(const Grid<T>& grid) {
  double peak = 0;
  for (const T value : grid.values()) peak = std::max(peak, std::abs(static_cast<double>(value)));
  return peak;
}

// Max |device - CPU| after `steps` steps, in units of K eps max|u0|; checks the extents, the step
// count and that every boundary node kept its initial bits.
template <class T>
double relative_difference(Context& context, const std::vector<std::size_t>& extents, std::size_t steps, double alpha) {
  const Grid<T> initial = test::random_field<T>(extents, 4321);
  LongVectorHeat<T> solver(context, initial, alpha);
  solver.advance(steps);
  const Grid<T> device = solver.read();
  Grid<T> reference = initial;
  heat_steps_reference(reference, alpha, steps);
  CAPTURE(extents_string(extents));
  CAPTURE(steps);
  REQUIRE(device.extents() == extents);
  CHECK(solver.steps_done() == steps);
  const std::size_t width = extents[0], height = extents[1];
  std::size_t boundary_kept = 0, boundary = 0;
  for (std::size_t y = 0; y < height; ++y) {
    for (std::size_t x = 0; x < width; ++x) {
      if (x != 0 && y != 0 && x + 1 != width && y + 1 != height) continue;
      ++boundary;
      boundary_kept += device(x, y) == initial(x, y) ? 1 : 0;
    }
  }
  CHECK(boundary_kept == boundary);
  const double unit = static_cast<double>(std::max<std::size_t>(steps, 1)) * std::numeric_limits<T>::epsilon() *
                      peak_of(initial);
  return test::max_abs_difference(device, reference) / unit;
}

}  // namespace

TEST_CASE_TEMPLATE("the long-vector algorithm matches the CPU reference on odd sizes and keeps the boundary", T, float,
                   double) {
  for_each_device([](Context& context) {
    double worst = 0;
    for (const auto& extents : std::vector<std::vector<std::size_t>>{
             {3, 3}, {4, 3}, {3, 4}, {5, 5}, {3, 200}, {200, 3}, {33, 17}, {102, 102}, {257, 131}}) {
      for (const std::size_t steps : {0, 1, 2, 7, 40}) {
        const double difference = relative_difference<T>(context, extents, steps, 0.2);
        CHECK(difference <= 8.0);
        worst = std::max(worst, difference);
      }
    }
    worst = std::max(worst, relative_difference<T>(context, {65, 49}, 20, 0.25));  // B = 0: the centre drops out
    MESSAGE(context.device().label() << ", " << std::string(type_name<T>()) << ": max |long-vector - CPU| = " << worst
                                     << " K eps max|u0| (bound 8)");
  }, test::needs_for<T>());
}

TEST_CASE("the long-vector algorithm follows the exact discrete solution and steps in pieces") {
  for_each_device([](Context& context) {
    const std::vector<std::size_t> extents{64, 48};
    const double alpha = 0.24;
    const std::size_t steps = 200;
    const Grid<float> initial = heat_mode_field<float>(extents);
    LongVectorHeat<float> whole(context, initial, alpha), pieces(context, initial, alpha);
    whole.advance(steps);
    pieces.advance(120);
    pieces.advance(0);
    pieces.advance(80);
    const Grid<float> field = whole.read();
    CHECK(test::identical_nodes(field, pieces.read()) == field.size());
    const double factor = std::pow(heat_mode_decay(extents, alpha), static_cast<double>(steps));
    double error = 0;
    for (std::size_t i = 0; i < field.size(); ++i) {
      error = std::max(error, std::abs(static_cast<double>(field.data()[i]) - factor * initial.data()[i]));
    }
    CHECK(factor < 0.9);
    CHECK(error <= 8.0 * steps * std::numeric_limits<float>::epsilon());
  });
}

TEST_CASE("a long-vector step makes the calls of the notes, of the lengths of model (1)") {
  // N interior nodes a side: an addition of (N+2)^2 - N - 3 (the notes round it to (N+2)^2 - 1),
  // the update over N(N+2) - 2 values, and a restore of the 2(N-1) boundary nodes inside it.
  const std::size_t n = 10;
  const auto calls = LongVectorHeat<float>::step_calls({n + 2, n + 2});
  REQUIRE(calls.size() == 5);
  CHECK(calls[0].routine == "xCOPY");
  CHECK(calls[1].routine == "xAXPY");
  CHECK(calls[0].length == (n + 2) * (n + 2) - n - 3);
  CHECK(calls[1].length == calls[0].length);
  CHECK(calls[2].routine == "xHAD");
  CHECK(calls[3].routine == "xAXPY");
  CHECK(calls[2].length == n * (n + 2) - 2);
  CHECK(calls[3].length == n * (n + 2) - 2);
  CHECK(calls[4].routine == "xOMATCOPY");
  CHECK(calls[4].length == 2 * (n - 1));
  CHECK(LongVectorHeat<float>::step_calls({3, 3}).size() == 4);  // no boundary node lies between interior ones
}

TEST_CASE("the long-vector solver refuses bad input with clear errors") {
  for_each_device([](Context& context) {
    CHECK_THROWS_WITH_AS(LongVectorHeat<float>(context, Grid<float>({2, 5}), 0.2), doctest::Contains("at least 3 nodes"),
                         InvalidArgument);
    CHECK_THROWS_WITH_AS(LongVectorHeat<float>(context, Grid<float>({8, 8, 8}), 0.1), doctest::Contains("2D grids"),
                         InvalidArgument);
    CHECK_THROWS_WITH_AS(LongVectorHeat<float>(context, Grid<float>({100}), 0.1), doctest::Contains("2D grids"),
                         InvalidArgument);
    CHECK_THROWS_WITH_AS(LongVectorHeat<float>(context, Grid<float>({8, 8}), 0.3), doctest::Contains("unstable"),
                         InvalidArgument);
    CHECK_THROWS_AS(LongVectorHeat<float>(context, Grid<float>({8, 8}), 0.0), InvalidArgument);
    Grid<float> bad({8, 8});
    bad(3, 4) = std::numeric_limits<float>::infinity();
    CHECK_THROWS_WITH_AS(LongVectorHeat<float>(context, bad, 0.2), doctest::Contains("at node 3, 4"), InvalidArgument);
    CHECK_THROWS_WITH_AS(LongVectorHeat<float>::check_fits(context.device(), {1u << 20, 1u << 20}),
                         doctest::Contains("three device buffers"), OutOfDeviceMemory);
    if (!context.device().fp64) {
      CHECK_THROWS_AS(LongVectorHeat<double>(context, Grid<double>({8, 8}), 0.2), UnsupportedFeature);
    }
    // The input is never modified.
    const Grid<float> initial = test::random_field<float>({9, 7}, 5);
    const Grid<float> copy = initial;
    LongVectorHeat<float> solver(context, initial, 0.2);
    solver.advance(3);
    CHECK(test::identical_nodes(initial, copy) == initial.size());
  });
}
