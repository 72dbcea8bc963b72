// The in-device heat solver against the CPU reference and the exact discrete solution.
//
// Tolerance: each step replaces a node by a convex combination of old values, rounding it by a
// few ulps of max|u|; the rounding errors of K steps add up at most linearly, so
//     max |device - CPU| <= 8 K eps max|u0|.
// A device that rounds like the CPU (IEEE round-to-nearest, no fused multiply-add, no
// flush-to-zero of subnormals) matches bit for bit; the tests report how many nodes do.

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "../support/devices.hpp"
#include "../support/util.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/solver/in_device_heat.hpp"

using namespace ziggurat;
using test::for_each_device;
using test::identical_nodes;

namespace {

template <class T>
double tolerance(std::size_t steps, const Grid<T>& initial) {
  double peak = 0;
  for (const T value : initial.values()) peak = std::max(peak, std::abs(static_cast<double>(value)));
  return 8.0 * static_cast<double>(steps) * std::numeric_limits<T>::epsilon() * peak;
}

// Steps a seeded random field on the device and on the CPU and compares them; the naive 2D kernel
// must agree with the aligned one bit for bit.
template <class T>
void compare_with_reference(Context& context, std::vector<std::size_t> extents, std::size_t steps, double alpha) {
  const Grid<T> initial = test::random_field<T>(extents, 1234);
  InDeviceHeat<T> solver(context, initial, alpha);
  solver.advance(steps);
  const Grid<T> device = solver.read();
  Grid<T> reference = initial;
  heat_steps_reference(reference, alpha, steps);
  CAPTURE(extents_string(extents));
  CAPTURE(steps);
  REQUIRE(device.extents() == extents);
  CHECK(test::max_abs_difference(device, reference) <= tolerance(steps, initial));
  CHECK(solver.steps_done() == steps);
  if (extents.size() == 2) {
    InDeviceHeat<T> naive(context, initial, alpha, StepKernel::naive);
    naive.advance(steps);
    CHECK(identical_nodes(naive.read(), device) == device.size());
  }
  if (extents == std::vector<std::size_t>{1023, 777}) {
    const std::string type = sizeof(T) == 4 ? "float" : "double";
    MESSAGE(context.device().label() << ", " << extents_string(extents) << " " << type << ", " << steps
                                     << " steps: " << identical_nodes(device, reference) << " of " << device.size()
                                     << " nodes bit-identical to the CPU reference");
  }
}

}  // namespace

TEST_CASE_TEMPLATE("in-device heat matches the CPU reference on odd sizes", T, float, double) {
  for_each_device([](Context& context) {
    for (const auto& extents : std::vector<std::vector<std::size_t>>{{3, 3}, {3, 1000}, {1000, 3}, {1023, 777}, {33, 17}}) {
      for (const std::size_t steps : {0, 1, 2, 7, 50}) compare_with_reference<T>(context, extents, steps, 0.2);
    }
    compare_with_reference<T>(context, {129, 65}, 20, 0.25);  // B = 0: the centre drops out
    for (const auto& extents : std::vector<std::vector<std::size_t>>{{3}, {1000}, {4099}}) {
      for (const std::size_t steps : {1, 7, 50}) compare_with_reference<T>(context, extents, steps, 0.4);
    }
    for (const auto& extents : std::vector<std::vector<std::size_t>>{{3, 3, 3}, {37, 11, 9}, {5, 40, 7}, {70, 3, 30}}) {
      for (const std::size_t steps : {1, 7, 20}) compare_with_reference<T>(context, extents, steps, 0.15);
    }
    // Enough groups that a GPU's work-items walk several planes each, the planes they load ahead
    // running past the end of their walk.
    compare_with_reference<T>(context, {258, 130, 130}, 2, 0.15);
  }, test::needs_for<T>());
}

// The blocked kernel (several steps a launch on chip) against single steps of the aligned
// kernel, bit for bit, at every depth; steps not a multiple of the depth end with a shorter launch.
template <class T>
void compare_blocked(Context& context, const std::vector<std::size_t>& extents, std::size_t depth, std::size_t steps,
                     const BlockedGroup& group = {}) {
  const Grid<T> initial = test::random_field<T>(extents, 77);
  const double alpha = 0.9 * max_stable_alpha(extents.size());
  InDeviceHeat<T> single(context, initial, alpha);
  single.advance(steps);
  InDeviceHeat<T> blocked(context, initial, alpha, StepKernel::blocked, depth, group);
  blocked.advance(steps);
  const Grid<T> want = single.read(), got = blocked.read();
  CAPTURE(extents_string(extents));
  CAPTURE(to_string(group));
  CAPTURE(depth);
  CAPTURE(steps);
  CHECK(identical_nodes(got, want) == want.size());
  CHECK(blocked.steps_done() == steps);
}

TEST_CASE_TEMPLATE("blocked in-device heat gives the bits of single steps", T, float, double) {
  for_each_device([](Context& context) {
    // Grids narrower than a work-group's columns, several groups and strips, odd sizes; 1D; 3D
    // with several tiles on x and y and several strips of planes.
    // Every depth is a program of its own, which PoCL builds slowly: the depths the other tests
    // use too (float 2 and 5, double 3).
    const std::vector<std::size_t> depths = std::is_same_v<T, float> ? std::vector<std::size_t>{2, 5} : std::vector<std::size_t>{3};
    for (const auto& extents : std::vector<std::vector<std::size_t>>{{3, 3}, {33, 17}, {517, 301}, {70, 900}, {3}, {1000}})
      for (const std::size_t depth : depths)
        for (const std::size_t steps : {1, 7, 20}) compare_blocked<T>(context, extents, depth, steps);
    for (const auto& extents : std::vector<std::vector<std::size_t>>{{3, 3, 3}, {45, 37, 70}, {5, 60, 9}})
      for (const std::size_t depth : depths)
        for (const std::size_t steps : {1, 11}) compare_blocked<T>(context, extents, depth, steps);
  }, test::needs_for<T>());
}

TEST_CASE("every work-group the tuner tries gives the bits of single steps") {
  for_each_device([](Context& context) {
    // Rows of other widths (2D), tiles of other shapes (3D), each with several groups a side.
    for (const BlockedGroup group : {BlockedGroup{64, 1}, BlockedGroup{128, 1}})
      for (const auto& extents : std::vector<std::vector<std::size_t>>{{33, 17}, {517, 301}}) compare_blocked<float>(context, extents, 5, 11, group);
    for (const BlockedGroup group : {BlockedGroup{64, 4}, BlockedGroup{16, 16}})
      compare_blocked<float>(context, {45, 37, 70}, 2, 7, group);
  });
}

TEST_CASE("blocked in-device heat refuses what it cannot do") {
  for_each_device([](Context& context) {
    const Grid<float> grid = test::random_field<float>({40, 30}, 5);
    CHECK_THROWS_AS(InDeviceHeat<float>(context, grid, 0.2, StepKernel::blocked), InvalidArgument);
    CHECK_THROWS_AS(InDeviceHeat<float>(context, grid, 0.2, StepKernel::aligned, 4), InvalidArgument);
    CHECK_THROWS_AS(InDeviceHeat<float>(context, grid, 0.2, StepKernel::blocked, 200), UnsupportedFeature);
    // A group the depth would leave less than half of to own, or more work-items than any device runs.
    CHECK_THROWS_AS(InDeviceHeat<float>(context, grid, 0.2, StepKernel::blocked, 5, {16, 1}), UnsupportedFeature);
    CHECK_THROWS_AS(InDeviceHeat<float>(context, grid, 0.2, StepKernel::blocked, 2, {1u << 20, 1}), UnsupportedFeature);
    CHECK_THROWS_AS(InDeviceHeat<float>(context, grid, 0.2, StepKernel::aligned, 0, {64, 1}), InvalidArgument);
  });
}

TEST_CASE_TEMPLATE("in-device heat on small grids (the Oclgrind subset)" * doctest::test_suite("oclgrind"), T, float,
                   double) {
  for_each_device([](Context& context) {
    for (const auto& extents : std::vector<std::vector<std::size_t>>{{3, 3}, {37, 29}, {5, 70}}) {
      compare_with_reference<T>(context, extents, 3, 0.2);
    }
    compare_with_reference<T>(context, {300}, 3, 0.4);
    compare_with_reference<T>(context, {35, 10, 6}, 3, 0.15);
    compare_with_reference<T>(context, {35, 10, 70}, 3, 0.15);  // walks of several planes, the last group's shorter
    const std::size_t depth = std::is_same_v<T, float> ? 2 : 3;  // the depths the other tests build
    compare_blocked<T>(context, {37, 29}, depth, 4);
    compare_blocked<T>(context, {300}, depth, 4);
    compare_blocked<T>(context, {20, 19, 9}, depth, 3);
  }, test::needs_for<T>());
}

TEST_CASE_TEMPLATE("in-device heat follows the exact discrete solution in 1D, 2D and 3D", T, float, double) {
  for_each_device([](Context& context) {
    const std::size_t steps = 200;
    for (const auto& extents : std::vector<std::vector<std::size_t>>{{40}, {64, 48}, {20, 17, 12}}) {
      const double alpha = 0.95 * max_stable_alpha(extents.size());
      const Grid<T> initial = heat_mode_field<T>(extents);
      InDeviceHeat<T> solver(context, initial, alpha);
      solver.advance(steps);
      const Grid<T> field = solver.read();
      const double factor = std::pow(heat_mode_decay(extents, alpha), static_cast<double>(steps));
      double error = 0;
      for (std::size_t i = 0; i < field.size(); ++i) {
        error = std::max(error, std::abs(static_cast<double>(field.data()[i]) - factor * initial.data()[i]));
      }
      CAPTURE(extents_string(extents));
      CHECK(factor < 0.9);  // the field really decayed
      CHECK(error <= 8.0 * steps * std::numeric_limits<T>::epsilon());
    }
  }, test::needs_for<T>());
}

TEST_CASE("stepping in pieces equals stepping at once, bit for bit, and keeps the boundary") {
  for_each_device([](Context& context) {
    const Grid<float> initial = test::random_field<float>({101, 57}, 99);
    InDeviceHeat<float> whole(context, initial, 0.2), pieces(context, initial, 0.2);
    whole.advance(7);
    pieces.advance(3);
    pieces.advance(0);
    pieces.advance(4);
    const Grid<float> a = whole.read(), b = pieces.read();
    CHECK(identical_nodes(a, b) == a.size());
    CHECK(pieces.steps_done() == 7);
    for (std::size_t x = 0; x < 101; ++x) {
      CHECK(a(x, 0) == initial(x, 0));
      CHECK(a(x, 56) == initial(x, 56));
    }
    for (std::size_t y = 0; y < 57; ++y) {
      CHECK(a(0, y) == initial(0, y));
      CHECK(a(100, y) == initial(100, y));
    }
    CHECK(whole.pitch() >= 101);
    CHECK(whole.pitch() * sizeof(float) % context.device().base_address_align_bytes == 0);
  });
}

TEST_CASE("the in-device solver refuses bad input with clear errors") {
  for_each_device([](Context& context) {
    CHECK_THROWS_WITH_AS(InDeviceHeat<float>(context, Grid<float>({2, 5}), 0.2), doctest::Contains("at least 3 nodes"),
                         InvalidArgument);
    CHECK_THROWS_WITH_AS(InDeviceHeat<float>(context, Grid<float>({8, 8}), 0.3), doctest::Contains("unstable"),
                         InvalidArgument);
    CHECK_THROWS_WITH_AS(InDeviceHeat<float>(context, Grid<float>({8, 8, 8}), 0.17), doctest::Contains("1/6"),
                         InvalidArgument);
    CHECK_THROWS_WITH_AS(InDeviceHeat<float>(context, Grid<float>({8, 8, 8}), 0.1, StepKernel::naive),
                         doctest::Contains("2D only"), UnsupportedFeature);
    Grid<float> bad({8, 8});
    bad(3, 4) = std::numeric_limits<float>::quiet_NaN();
    CHECK_THROWS_WITH_AS(InDeviceHeat<float>(context, bad, 0.2), doctest::Contains("at node 3, 4"), InvalidArgument);
    // Checked before anyone builds a field of that size on the host.
    CHECK_THROWS_WITH_AS(InDeviceHeat<float>::check_fits(context.device(), {1u << 20, 1u << 20}),
                         doctest::Contains("needs two device buffers of 4194304 MiB"), OutOfDeviceMemory);
    CHECK_THROWS_WITH_AS(InDeviceHeat<double>::check_fits(context.device(), {std::size_t(1) << 33, 3}),
                         doctest::Contains("32-bit integers"), InvalidArgument);
    CHECK_NOTHROW(InDeviceHeat<float>::check_fits(context.device(), {1023, 777}));
    static_assert(!std::is_copy_constructible_v<InDeviceHeat<float>>, "a copy would share the device grids");
  });
}
