#include "ziggurat/ops/heat_scheme.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <charconv>
#include <sstream>
#include <string_view>
#include <string>

#include "base/parallel.hpp"
#include "ziggurat/base/error.hpp"

namespace ziggurat {

namespace {

constexpr double kPi = 3.14159265358979323846;

// One step of the update of heat_scheme.hpp, written once for the CPU. The library is compiled
// with -ffp-contract=off so that the compiler cannot fuse the multiply-adds either.
template <class T>
void reference_step(const Grid<T>& grid, T* v, HeatCoefficients<T> k) {
  const T* u = grid.data();
  const std::size_t dims = grid.dims(), sy = grid.width(), sz = grid.width() * grid.height();
  // The interior of each axis; an axis the grid does not have is the single index 0.
  const auto first = [&](std::size_t axis) { return axis < dims ? std::size_t{1} : std::size_t{0}; };
  const auto last = [&](std::size_t axis) { return axis < dims ? grid.extent(axis) - 1 : std::size_t{1}; };
  for (std::size_t z = first(2); z < last(2); ++z) {
    for (std::size_t y = first(1); y < last(1); ++y) {
      for (std::size_t x = 1; x + 1 < grid.width(); ++x) {
        const std::size_t c = z * sz + y * sy + x;
        T sum = u[c - 1] + u[c + 1];
        if (dims >= 2) sum = (sum + u[c - sy]) + u[c + sy];
        if (dims == 3) sum = (sum + u[c - sz]) + u[c + sz];
        v[c] = k.a * sum + k.b * u[c];
      }
    }
  }
}

}  // namespace

double max_stable_alpha(std::size_t dims) { return 1.0 / (2.0 * static_cast<double>(dims)); }

std::string to_string(const BlockedGroup& group) {
  return group.is_default() ? "default" : std::to_string(group.x) + "x" + std::to_string(group.y);
}

template <class T>
HeatCoefficients<T> heat_coefficients(double alpha, std::size_t dims) {
  if (dims < 1 || dims > 3) throw InvalidArgument("the heat scheme has 1 to 3 dimensions, got " + std::to_string(dims));
  const double limit = max_stable_alpha(dims);
  if (!(alpha > 0.0 && alpha <= limit)) {
    std::ostringstream text;
    char shortest[32];  // the shortest text that reads back as alpha: 0.2500001, not 0.25
    const auto written = std::to_chars(shortest, shortest + sizeof shortest, alpha);
    text << "A = " << std::string_view(shortest, std::size_t(written.ptr - shortest)) << " makes the " << dims
         << "D explicit scheme "
         << (alpha > limit ? "unstable" : "meaningless") << ": it needs 0 < A <= 1/" << 2 * dims
         << " (A = a^2 ht / h^2); " << (alpha > limit ? "reduce the time step" : "give a positive A");
    throw InvalidArgument(text.str());
  }
  return {static_cast<T>(alpha), static_cast<T>(1.0 - 2.0 * static_cast<double>(dims) * alpha)};
}

void require_heat_grid(const std::vector<std::size_t>& extents, const char* who) {
  if (extents.empty() || extents.size() > 3) {
    throw InvalidArgument(std::string(who) + " needs a grid of 1 to 3 dimensions, got " +
                          std::to_string(extents.size()) + " extents");
  }
  for (const std::size_t extent : extents) {
    if (extent < 3) {
      throw InvalidArgument(std::string(who) + " needs at least 3 nodes on every axis (one interior node "
                            "between two boundary nodes), got " + extents_string(extents));
    }
  }
  checked_node_count(extents);
}

template <class T>
void heat_steps_reference(Grid<T>& grid, double alpha, std::size_t steps) {
  require_heat_grid(grid.extents(), "heat_steps_reference");
  const auto k = heat_coefficients<T>(alpha, grid.dims());
  Grid<T> next = grid;  // boundary values are the same in both grids
  for (std::size_t step = 0; step < steps; ++step) {
    reference_step(grid, next.data(), k);
    std::swap(grid, next);
  }
}

template <class T>
Grid<T> heat_mode_field(const std::vector<std::size_t>& extents, std::size_t first_row, std::size_t rows) {
  require_heat_grid(extents, "heat_mode_field");
  if (rows == 0) rows = extents.back() - first_row;
  if (first_row + rows > extents.back())
    throw InvalidArgument("heat_mode_field: rows " + std::to_string(first_row) + " to " +
                          std::to_string(first_row + rows) + " lie outside the grid " + extents_string(extents));
  std::vector<std::size_t> part = extents;
  part.back() = rows;
  Grid<T> grid(part);
  const std::size_t slowest = extents.size() - 1;
  // Node i of `axis` in the whole grid: on the slowest axis, row i of the part is first_row + i.
  const auto whole = [&](std::size_t axis, std::size_t i) { return axis == slowest ? first_row + i : i; };
  const auto mode = [&](std::size_t axis, std::size_t i) {
    return axis < extents.size()
               ? std::sin(kPi * static_cast<double>(whole(axis, i)) / static_cast<double>(extents[axis] - 1))
               : 1.0;
  };
  const auto edge = [&](std::size_t axis, std::size_t i) {
    return axis < extents.size() && (whole(axis, i) == 0 || whole(axis, i) + 1 == extents[axis]);
  };
  for (std::size_t z = 0; z < grid.depth(); ++z) {
    const double sz = mode(2, z);
    for (std::size_t y = 0; y < grid.height(); ++y) {
      const double syz = sz * mode(1, y);
      for (std::size_t x = 0; x < grid.width(); ++x) {
        const bool boundary = edge(0, x) || edge(1, y) || edge(2, z);
        grid(x, y, z) = boundary ? T(0) : static_cast<T>(syz * mode(0, x));
      }
    }
  }
  return grid;
}

double heat_mode_decay(const std::vector<std::size_t>& extents, double alpha) {
  require_heat_grid(extents, "heat_mode_decay");
  double cosines = 0;
  for (const std::size_t extent : extents) cosines += std::cos(kPi / static_cast<double>(extent - 1));
  return 1.0 - 2.0 * static_cast<double>(extents.size()) * alpha + 2.0 * alpha * cosines;
}

template <class T>
double heat_mode_error(const T* values, const std::vector<std::size_t>& extents, double alpha, std::size_t steps,
                       std::size_t first_row, std::size_t rows) {
  require_heat_grid(extents, "heat_mode_error");
  if (rows == 0) rows = extents.back() - first_row;
  if (first_row + rows > extents.back())
    throw InvalidArgument("heat_mode_error: rows " + std::to_string(first_row) + " to " +
                          std::to_string(first_row + rows) + " lie outside the grid " + extents_string(extents));
  const double factor = std::pow(heat_mode_decay(extents, alpha), static_cast<double>(steps));
  // The mode on each axis (1 on the axes the grid lacks), the slowest axis cut to the rows held.
  std::array<std::vector<double>, 3> sines;
  for (std::size_t axis = 0; axis < 3; ++axis) {
    const std::size_t n = axis < extents.size() ? extents[axis] : 1;
    sines[axis].assign(n, 1.0);
    if (axis >= extents.size()) continue;
    for (std::size_t i = 0; i < n; ++i) {
      sines[axis][i] = i == 0 || i + 1 == n ? 0.0 : std::sin(kPi * static_cast<double>(i) / static_cast<double>(n - 1));
    }
  }
  std::vector<double>& slowest = sines[extents.size() - 1];
  slowest.erase(slowest.begin(), slowest.begin() + static_cast<std::ptrdiff_t>(first_row));
  slowest.resize(rows);
  // Lines along x, (z, y) in order; the largest of maxima is the maximum, whatever the split.
  const std::size_t width = sines[0].size(), height = sines[1].size(), lines = height * sines[2].size();
  std::vector<double> largest(lines, 0.0);
  detail::parallel_for(lines, std::max<std::size_t>(1, (std::size_t(1) << 16) / width), [&](std::size_t first,
                                                                                             std::size_t last) {
    for (std::size_t line = first; line < last; ++line) {
      const double sy = sines[1][line % height], sz = sines[2][line / height];
      const T* row = values + line * width;
      double error = 0;
      for (std::size_t x = 0; x < width; ++x) {
        error = std::max(error, std::abs(static_cast<double>(row[x]) - factor * sines[0][x] * sy * sz));
      }
      largest[line] = error;
    }
  });
  double error = 0;
  for (const double e : largest) error = std::max(error, e);
  return error;
}

template <class T>
void require_finite(const Grid<T>& grid, const char* what) {
  for (std::size_t i = 0; i < grid.size(); ++i) {
    if (!std::isfinite(grid.data()[i])) {
      std::ostringstream text;
      text << "the " << what << " has a non-finite value (" << grid.data()[i] << ") at node " << i % grid.width();
      for (std::size_t axis = 1, stride = grid.width(); axis < grid.dims(); stride *= grid.extent(axis++)) {
        text << ", " << i / stride % grid.extent(axis);
      }
      text << " (fastest axis first); every value must be a finite number";
      throw InvalidArgument(text.str());
    }
  }
}

template HeatCoefficients<float> heat_coefficients<float>(double, std::size_t);
template HeatCoefficients<double> heat_coefficients<double>(double, std::size_t);
template void heat_steps_reference<float>(Grid<float>&, double, std::size_t);
template void heat_steps_reference<double>(Grid<double>&, double, std::size_t);
template Grid<float> heat_mode_field<float>(const std::vector<std::size_t>&, std::size_t, std::size_t);
template Grid<double> heat_mode_field<double>(const std::vector<std::size_t>&, std::size_t, std::size_t);
template double heat_mode_error<float>(const float*, const std::vector<std::size_t>&, double, std::size_t, std::size_t,
                                       std::size_t);
template double heat_mode_error<double>(const double*, const std::vector<std::size_t>&, double, std::size_t, std::size_t,
                                        std::size_t);
template void require_finite<float>(const Grid<float>&, const char*);
template void require_finite<double>(const Grid<double>&, const char*);

}  // namespace ziggurat
