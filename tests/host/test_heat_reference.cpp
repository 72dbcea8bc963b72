// The CPU reference of the heat scheme: coefficients, exact solutions, invariants.

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "../support/util.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/solver/in_device_heat.hpp"

using namespace ziggurat;

TEST_CASE("heat coefficients: B = 1 - 2 dims A, and only stable A is accepted") {
  const auto k2 = heat_coefficients<double>(0.2, 2);
  CHECK(k2.a == 0.2);
  CHECK(k2.b == doctest::Approx(0.2));
  CHECK(heat_coefficients<float>(0.25, 2).b == 0.0f);
  CHECK(heat_coefficients<double>(0.5, 1).b == 0.0);
  CHECK(heat_coefficients<double>(1.0 / 6.0, 3).b == doctest::Approx(0.0));
  CHECK(max_stable_alpha(2) == 0.25);

  CHECK_THROWS_WITH_AS(heat_coefficients<float>(0.2500001, 2), doctest::Contains("unstable: it needs 0 < A <= 1/4"),
                       InvalidArgument);
  CHECK_THROWS_WITH_AS(heat_coefficients<float>(0.17, 3), doctest::Contains("3D explicit scheme unstable"),
                       InvalidArgument);
  CHECK_THROWS_WITH_AS(heat_coefficients<float>(0.0, 2), doctest::Contains("give a positive A"), InvalidArgument);
  CHECK_THROWS_AS(heat_coefficients<float>(-0.1, 2), InvalidArgument);
  CHECK_THROWS_AS(heat_coefficients<float>(std::nan(""), 2), InvalidArgument);
  CHECK_THROWS_AS(heat_coefficients<float>(0.1, 4), InvalidArgument);
}

TEST_CASE("one reference step on a 3 x 3 grid, by hand") {
  Grid<double> grid({3, 3});
  grid(1, 0) = 1;  // top
  grid(0, 1) = 2;  // left
  grid(2, 1) = 3;  // right
  grid(1, 2) = 4;  // bottom
  grid(1, 1) = 10;
  const Grid<double> before = grid;
  heat_steps_reference(grid, 0.125, 1);
  CHECK(grid(1, 1) == 0.125 * (((2.0 + 3.0) + 1.0) + 4.0) + 0.5 * 10.0);
  grid(1, 1) = before(1, 1);
  CHECK(grid.values() == before.values());  // nothing else changed
}

TEST_CASE("one reference step in 1D and 3D, by hand: neighbours added x, then y, then z") {
  Grid<double> line({3});
  line(0) = 1, line(1) = 10, line(2) = 3;
  heat_steps_reference(line, 0.25, 1);
  CHECK(line(1) == 0.25 * (1.0 + 3.0) + 0.5 * 10.0);
  CHECK(line(0) == 1.0);
  CHECK(line(2) == 3.0);

  Grid<float> cube({3, 3, 3});
  const float xm = 0.1f, xp = 1e7f, ym = -1e7f, yp = 0.3f, zm = 0.7f, zp = 3.3f, c = 2.0f;
  cube(0, 1, 1) = xm, cube(2, 1, 1) = xp, cube(1, 0, 1) = ym, cube(1, 2, 1) = yp;
  cube(1, 1, 0) = zm, cube(1, 1, 2) = zp, cube(1, 1, 1) = c;
  heat_steps_reference(cube, 0.125, 1);
  const auto k = heat_coefficients<float>(0.125, 3);
  volatile float sum = xm + xp;  // volatile: rounded to float after every operation
  sum = sum + ym;
  sum = sum + yp;
  sum = sum + zm;
  sum = sum + zp;
  volatile float scaled = k.a * sum, kept = k.b * c;
  CHECK(cube(1, 1, 1) == scaled + kept);
}

TEST_CASE_TEMPLATE("the reference follows the exact discrete solution of the slowest mode", T, float, double) {
  using Case = std::pair<std::vector<std::size_t>, int>;
  for (const auto& [extents, steps] : {Case{{5, 5}, 10}, Case{{64, 48}, 200}, Case{{3, 9}, 7}, Case{{130}, 200},
                                       Case{{20, 17, 12}, 100}, Case{{3, 3, 3}, 5}}) {
    const double alpha = 0.96 * max_stable_alpha(extents.size());
    const Grid<T> initial = heat_mode_field<T>(extents);
    Grid<T> grid = initial;
    heat_steps_reference(grid, alpha, steps);
    const double factor = std::pow(heat_mode_decay(extents, alpha), steps);
    double error = 0;
    for (std::size_t i = 0; i < grid.size(); ++i) {
      error = std::max(error, std::abs(grid.data()[i] - factor * initial.data()[i]));
    }
    CAPTURE(extents_string(extents));
    CHECK(error <= 8.0 * steps * std::numeric_limits<T>::epsilon());
    CHECK(factor < 1.0);
  }
}

TEST_CASE("the reference keeps boundary values and the maximum principle") {
  const Grid<double> initial = test::random_field<double>({37, 23}, 7);
  Grid<double> grid = initial;
  heat_steps_reference(grid, 0.25, 40);
  const auto [lo, hi] = std::minmax_element(initial.values().begin(), initial.values().end());
  for (std::size_t y = 0; y < 23; ++y) {
    for (std::size_t x = 0; x < 37; ++x) {
      if (x == 0 || y == 0 || x == 36 || y == 22) {
        CHECK(grid(x, y) == initial(x, y));
      } else {
        CHECK(grid(x, y) >= *lo);
        CHECK(grid(x, y) <= *hi);
      }
    }
  }
}

TEST_CASE("the reference and the mode field refuse grids without an interior") {
  Grid<float> thin({2, 5});
  CHECK_THROWS_WITH_AS(heat_steps_reference(thin, 0.2, 1), doctest::Contains("at least 3 nodes on every axis"), InvalidArgument);
  Grid<float> line({9});
  CHECK_THROWS_WITH_AS(heat_steps_reference(line, 0.6, 1), doctest::Contains("1/2"), InvalidArgument);
  CHECK_THROWS_AS(heat_mode_field<float>({3, 2}), InvalidArgument);
  CHECK_THROWS_AS(heat_mode_field<float>({3, 3, 3, 3}), InvalidArgument);
  CHECK_THROWS_AS(heat_mode_decay({1, 5}, 0.2), InvalidArgument);
}

TEST_CASE("require_finite names the first bad node") {
  Grid<double> grid({4, 3}, 1.0);
  CHECK_NOTHROW(require_finite(grid, "initial field"));
  grid(2, 1) = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_WITH_AS(require_finite(grid, "initial field"), doctest::Contains("non-finite value (nan) at node 2, 1"),
                       InvalidArgument);
  Grid<float> cube({2, 2, 2}, 0.0f);
  cube(1, 0, 1) = std::numeric_limits<float>::infinity();
  CHECK_THROWS_WITH_AS(require_finite(cube, "field"), doctest::Contains("at node 1, 0, 1"), InvalidArgument);
}

TEST_CASE("grids check their extents") {
  CHECK(checked_node_count({1023, 777}) == 1023u * 777u);
  CHECK(extents_string({3, 1000}) == "3x1000");
  CHECK_THROWS_WITH_AS(Grid<float>(std::vector<std::size_t>{}), doctest::Contains("1 to 3 extents"), InvalidArgument);
  CHECK_THROWS_WITH_AS(Grid<float>({1, 2, 3, 4}), doctest::Contains("1 to 3 extents"), InvalidArgument);
  CHECK_THROWS_WITH_AS(Grid<float>({4, 0}), doctest::Contains("zero extent"), InvalidArgument);
  CHECK_THROWS_WITH_AS(Grid<float>({4, 3}, std::vector<float>(11)), doctest::Contains("needs 12 values, got 11"),
                       InvalidArgument);
  CHECK(Grid<float>({4, 3}, std::vector<float>(12, 2.0f))(3, 2) == 2.0f);
  CHECK_THROWS_WITH_AS(checked_node_count({std::size_t(1) << 40, std::size_t(1) << 40}),
                       doctest::Contains("more nodes than memory can address"), InvalidArgument);
}

TEST_CASE("the mode field's rows are the whole field's, bit for bit") {
  for (const std::vector<std::size_t>& extents :
       std::vector<std::vector<std::size_t>>{{23}, {9, 14}, {5, 6, 11}}) {
    const Grid<double> whole = heat_mode_field<double>(extents);
    const std::size_t row = whole.size() / extents.back();
    for (const auto& [first, count] : std::vector<std::pair<std::size_t, std::size_t>>{{0, 4}, {3, 5}, {extents.back() - 2, 2}}) {
      const Grid<double> part = heat_mode_field<double>(extents, first, count);
      CHECK(part.extents().back() == count);
      CHECK(part.values() == std::vector<double>(whole.values().begin() + static_cast<std::ptrdiff_t>(first * row),
                                                 whole.values().begin() + static_cast<std::ptrdiff_t>((first + count) * row)));
    }
    CHECK_THROWS_AS(heat_mode_field<double>(extents, extents.back() - 1, 2), InvalidArgument);
  }
}

TEST_CASE("the mode error is the distance from the exact discrete solution, whole or by rows") {
  for (const std::vector<std::size_t>& extents :
       std::vector<std::vector<std::size_t>>{{23}, {9, 14}, {5, 6, 11}, {300, 260}}) {
    CAPTURE(extents_string(extents));
    const double alpha = 0.8 * max_stable_alpha(extents.size());
    const std::size_t steps = 7;
    Grid<double> grid = heat_mode_field<double>(extents);
    CHECK(heat_mode_error(grid.data(), extents, alpha, 0) <= 1e-15);
    heat_steps_reference(grid, alpha, steps);
    const double error = heat_mode_error(grid.data(), extents, alpha, steps);
    CHECK(error <= 1e-13);
    // One node off by 0.25 is the error, and the rows of a distributed run find it in theirs.
    const std::size_t row = grid.size() / extents.back(), off = grid.size() / 2 + 1;
    grid.data()[off] += 0.25;
    CHECK(heat_mode_error(grid.data(), extents, alpha, steps) == doctest::Approx(0.25).epsilon(1e-12));
    double by_rows = 0;
    for (std::size_t first = 0, count = 1; first < extents.back(); first += count, count = count % 3 + 1) {
      count = std::min(count, extents.back() - first);
      const double part = heat_mode_error(grid.data() + first * row, extents, alpha, steps, first, count);
      CHECK((part > 0.2) == (first * row <= off && off < (first + count) * row));
      by_rows = std::max(by_rows, part);
    }
    CHECK(by_rows == heat_mode_error(grid.data(), extents, alpha, steps));
    CHECK_THROWS_AS(heat_mode_error(grid.data(), extents, alpha, steps, extents.back() - 1, 2), InvalidArgument);
  }
  const std::vector<float> thin(6, 0.0f);
  CHECK_THROWS_AS(heat_mode_error(thin.data(), {3, 2}, 0.2, 1), InvalidArgument);
}
