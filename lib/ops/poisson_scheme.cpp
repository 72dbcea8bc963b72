#include "ziggurat/ops/poisson_scheme.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>
#include <string>

#include "base/parallel.hpp"
#include "ziggurat/base/error.hpp"

namespace ziggurat {

namespace {

// Calls body(z) for every interior plane z, planes split across cores, and returns the
// larger_update() of what the calls return.
template <class Body>
double over_interior_planes(std::size_t depth, Body body) {
  std::mutex mutex;
  double most = 0;
  detail::parallel_for(depth - 2, 1, [&](std::size_t begin, std::size_t end) {
    double local = 0;
    for (std::size_t z = begin + 1; z < end + 1; ++z) local = larger_update(local, body(z));
    const std::lock_guard<std::mutex> lock(mutex);
    most = larger_update(most, local);
  });
  return most;
}

// One sweep of plane z from u into v, in the order of poisson_scheme.hpp; returns max |v - u|.
template <class T>
double sweep_plane(const Grid<T>& grid, const T* f, T* v, JacobiCoefficients<T> k, std::size_t z) {
  const T* u = grid.data();
  const std::size_t sy = grid.width(), sz = grid.width() * grid.height();
  double most = 0;
  for (std::size_t y = 1; y + 1 < grid.height(); ++y) {
    for (std::size_t x = 1; x + 1 < grid.width(); ++x) {
      const std::size_t c = z * sz + y * sy + x;
      const T sum = ((((u[c - 1] + u[c + 1]) + u[c - sy]) + u[c + sy]) + u[c - sz]) + u[c + sz];
      v[c] = k.sixth * (sum + k.h2 * f[c]);
      most = larger_update(most, std::abs(static_cast<double>(v[c]) - static_cast<double>(u[c])));
    }
  }
  return most;
}

}  // namespace

double larger_update(double a, double b) { return std::isnan(a) || a > b ? a : b; }

template <class T>
JacobiCoefficients<T> jacobi_coefficients(double spacing) {
  const double h2 = spacing * spacing;
  if (!(spacing > 0 && std::isfinite(h2) && static_cast<T>(h2) >= std::numeric_limits<T>::min())) {
    throw InvalidArgument("grid spacing h = " + std::to_string(spacing) + " is not usable: h must be positive and h^2 a normal " +
                          (sizeof(T) == 4 ? std::string("float") : std::string("double")) + "; give a spacing such as 1/(N-1)");
  }
  return {static_cast<T>(1.0 / 6.0), static_cast<T>(h2)};
}

void require_poisson_grid(const std::vector<std::size_t>& extents, const char* who) {
  if (extents.size() != 3) {
    throw InvalidArgument(std::string(who) + " needs a 3D grid (N x N x L), got " + std::to_string(extents.size()) + " extents");
  }
  for (const std::size_t extent : extents) {
    if (extent < 3) {
      throw InvalidArgument(std::string(who) + ": grid " + extents_string(extents) +
                            " needs at least 3 nodes on every axis (an interior node between two boundary nodes)");
    }
  }
  checked_node_count(extents);
}

template <class T>
double jacobi_sweeps_reference(Grid<T>& u, const Grid<T>& f, double spacing, std::size_t sweeps) {
  require_poisson_grid(u.extents(), "the Jacobi reference");
  if (f.extents() != u.extents()) throw InvalidArgument("the right-hand side must have the grid's extents");
  const JacobiCoefficients<T> k = jacobi_coefficients<T>(spacing);
  Grid<T> next = u;
  double update = 0;
  for (std::size_t s = 0; s < sweeps; ++s) {
    update = over_interior_planes(u.depth(), [&](std::size_t z) { return sweep_plane(u, f.data(), next.data(), k, z); });
    std::swap(u, next);
  }
  return update;
}

template <class T>
double poisson_residual(const std::vector<std::size_t>& extents, const T* u, const T* f, double spacing) {
  require_poisson_grid(extents, "the Poisson residual");
  const std::size_t W = extents[0], H = extents[1], sz = W * H;
  const double inverse_h2 = 1.0 / (spacing * spacing);
  return over_interior_planes(extents[2], [&](std::size_t z) {
    double most = 0;
    for (std::size_t y = 1; y + 1 < H; ++y) {
      for (std::size_t x = 1; x + 1 < W; ++x) {
        const std::size_t c = z * sz + y * W + x;
        double sum = 0;
        for (const std::size_t step : {std::size_t{1}, W, sz}) sum += double(u[c - step]) + double(u[c + step]);
        most = larger_update(most, std::abs(double(f[c]) + (sum - 6.0 * double(u[c])) * inverse_h2));
      }
    }
    return most;
  });
}

template <class T>
double poisson_residual(const Grid<T>& u, const Grid<T>& f, double spacing) {
  if (f.extents() != u.extents()) throw InvalidArgument("the right-hand side must have the grid's extents");
  return poisson_residual(u.extents(), u.data(), f.data(), spacing);
}

template <class T>
ManufacturedPoisson<T> manufactured_poisson(const std::vector<std::size_t>& extents, double spacing) {
  require_poisson_grid(extents, "the manufactured Poisson problem");
  jacobi_coefficients<T>(spacing);
  // u* = s(x) c(y) + w(z) with s = sin(0.3 x), c = cos(0.2 y), w = sin(0.1 z + 0.5). Each factor is
  // a discrete eigenfunction of the second difference: s(x-1) + s(x+1) = 2 cos(0.3) s(x), and so
  // on, so -Laplace_h u* = -((2 cos 0.3 - 2) + (2 cos 0.2 - 2)) s c / h^2 - (2 cos 0.1 - 2) w / h^2.
  const std::size_t W = extents[0], H = extents[1], D = extents[2];
  std::vector<double> s(W), c(H), w(D);
  for (std::size_t x = 0; x < W; ++x) s[x] = std::sin(0.3 * double(x));
  for (std::size_t y = 0; y < H; ++y) c[y] = std::cos(0.2 * double(y));
  for (std::size_t z = 0; z < D; ++z) w[z] = std::sin(0.1 * double(z) + 0.5);
  const double inverse_h2 = 1.0 / (spacing * spacing);
  const double plane_factor = -((2 * std::cos(0.3) - 2) + (2 * std::cos(0.2) - 2)) * inverse_h2;
  const double axis_factor = -(2 * std::cos(0.1) - 2) * inverse_h2;
  ManufacturedPoisson<T> p{Grid<T>(extents), Grid<T>(extents), Grid<T>(extents)};
  detail::parallel_for(D, 1, [&](std::size_t begin, std::size_t end) {
    for (std::size_t z = begin; z < end; ++z) {
      for (std::size_t y = 0; y < H; ++y) {
        for (std::size_t x = 0; x < W; ++x) {
          const double centre = s[x] * c[y] + w[z];
          const bool boundary = x == 0 || y == 0 || z == 0 || x + 1 == W || y + 1 == H || z + 1 == D;
          p.solution(x, y, z) = static_cast<T>(centre);
          p.rhs(x, y, z) = static_cast<T>(plane_factor * s[x] * c[y] + axis_factor * w[z]);
          p.initial(x, y, z) = boundary ? static_cast<T>(centre) : T(0);
        }
      }
    }
  });
  return p;
}

template JacobiCoefficients<float> jacobi_coefficients<float>(double);
template JacobiCoefficients<double> jacobi_coefficients<double>(double);
template double jacobi_sweeps_reference<float>(Grid<float>&, const Grid<float>&, double, std::size_t);
template double jacobi_sweeps_reference<double>(Grid<double>&, const Grid<double>&, double, std::size_t);
template double poisson_residual<float>(const Grid<float>&, const Grid<float>&, double);
template double poisson_residual<double>(const Grid<double>&, const Grid<double>&, double);
template double poisson_residual<float>(const std::vector<std::size_t>&, const float*, const float*, double);
template double poisson_residual<double>(const std::vector<std::size_t>&, const double*, const double*, double);
template ManufacturedPoisson<float> manufactured_poisson<float>(const std::vector<std::size_t>&, double);
template ManufacturedPoisson<double> manufactured_poisson<double>(const std::vector<std::size_t>&, double);

}  // namespace ziggurat
