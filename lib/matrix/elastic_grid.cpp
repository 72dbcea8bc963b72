#include "ziggurat/matrix/elastic_grid.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>

#include "base/parallel.hpp"
#include "ziggurat/base/error.hpp"

namespace ziggurat::wave {

namespace {

std::string str(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", value);
  return text;
}

// A cell's corner a (0 .. 2^dims - 1): bit k says which side of the cell it lies on along axis k
// (x, z in 2D; x, y, z in 3D).
int side(std::size_t corner, std::size_t axis) { return (corner >> axis & 1) ? 1 : -1; }

// The node of cell (ix, iy, iz)'s corner a.
std::size_t corner_node(const ElasticGrid& grid, std::size_t ix, std::size_t iy, std::size_t iz, std::size_t a) {
  if (grid.dims == 2) return grid.node(ix + (a & 1), 0, iz + (a >> 1 & 1));
  return grid.node(ix + (a & 1), iy + (a >> 1 & 1), iz + (a >> 2 & 1));
}

std::string cell_name(const ElasticGrid& grid, std::size_t cell) {
  const std::size_t ix = cell % (grid.nx - 1), rest = cell / (grid.nx - 1);
  if (grid.dims == 2) return "cell (" + std::to_string(ix) + ", " + std::to_string(rest) + ")";
  return "cell (" + std::to_string(ix) + ", " + std::to_string(rest % (grid.ny - 1)) + ", " +
         std::to_string(rest / (grid.ny - 1)) + ")";
}

// The unit stiffness matrices of the cube element of side 2 (the reference element, whose
// Jacobian is the identity): K_e = lambda A + mu B, local DOFs dims a + c over the corners a, by
// 2-point Gauss quadrature per axis (weights 1). For u = N_a e_i and v = N_b e_k the bilinear form
// lambda div u div v + 2 mu eps(u) : eps(v) gives A = dN_a/dx_i dN_b/dx_k and
// B = delta_ik grad N_a . grad N_b + dN_a/dx_k dN_b/dx_i. A cell of side h has (h / 2)^(dims - 2) K_e.
struct UnitStiffness {
  std::size_t dims, size;
  std::vector<double> lambda, mu;

  explicit UnitStiffness(std::size_t d) : dims(d), size(d << d), lambda(size * size, 0.0), mu(size * size, 0.0) {
    constexpr double g = 0.57735026918962576451;  // 1 / sqrt(3)
    const std::size_t corners = std::size_t{1} << d;
    for (std::size_t point = 0; point < corners; ++point) {
      double xi[3];
      for (std::size_t k = 0; k < d; ++k) xi[k] = side(point, k) * g;
      std::vector<std::array<double, 3>> grad(corners);  // dN_a / dx_k at the point
      for (std::size_t a = 0; a < corners; ++a)
        for (std::size_t k = 0; k < d; ++k) {
          double v = side(a, k) / 2.0;
          for (std::size_t j = 0; j < d; ++j)
            if (j != k) v *= (1 + side(a, j) * xi[j]) / 2;
          grad[a][k] = v;
        }
      for (std::size_t a = 0; a < corners; ++a)
        for (std::size_t b = 0; b < corners; ++b) {
          double dot = 0;
          for (std::size_t j = 0; j < d; ++j) dot += grad[a][j] * grad[b][j];
          for (std::size_t i = 0; i < d; ++i)
            for (std::size_t k = 0; k < d; ++k) {
              const std::size_t at = (d * a + i) * size + d * b + k;
              lambda[at] += grad[a][i] * grad[b][k];
              mu[at] += (i == k ? dot : 0.0) + grad[a][k] * grad[b][i];
            }
        }
    }
  }
};

const UnitStiffness& unit_stiffness(std::size_t dims) {
  static const UnitStiffness two(2), three(3);
  return dims == 2 ? two : three;
}

// The distance between the global DOFs of local DOFs p and q of any cell (q's minus p's).
long dof_distance(const ElasticGrid& grid, std::size_t p, std::size_t q) {
  const std::size_t d = grid.dims;
  return long(d * corner_node(grid, 0, 0, 0, q / d) + q % d) - long(d * corner_node(grid, 0, 0, 0, p / d) + p % d);
}

// The offsets of the half band: every distance between two DOFs of one cell, ascending.
std::vector<std::int32_t> band_offsets(const ElasticGrid& grid) {
  std::vector<std::int32_t> offsets;
  const std::size_t size = grid.dims << grid.dims;
  for (std::size_t p = 0; p < size; ++p)
    for (std::size_t q = 0; q < size; ++q)
      if (dof_distance(grid, p, q) >= 0) offsets.push_back(static_cast<std::int32_t>(dof_distance(grid, p, q)));
  std::sort(offsets.begin(), offsets.end());
  offsets.erase(std::unique(offsets.begin(), offsets.end()), offsets.end());
  return offsets;
}

void check_dt(double dt, double limit) {
  if (!(dt > 0) || !std::isfinite(dt)) throw InvalidArgument("the time step must be positive, not " + str(dt));
  if (dt > limit)
    throw InvalidArgument("the time step " + str(dt) + " s exceeds the stability (CFL) limit of this grid, " +
                          str(limit) + " s: take a smaller --dt or a coarser --dx");
}

// 2 / sqrt(lambda_max(M^-1 K)), lambda_max bounded by Gershgorin's row sums of M^-1 K. Row i sums
// its stored entries and, for each diagonal o > 0, the mirrored entry K(i - o, i).
double gershgorin_time_step(const sparse::Dia<double>& k, const std::vector<double>& m) {
  std::vector<double> ratio(k.rows, 0.0);
  detail::parallel_for(k.rows, 1 << 14, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      double sum = 0;
      for (std::size_t d = 0; d < k.offsets.size(); ++d) {
        const std::size_t o = static_cast<std::size_t>(k.offsets[d]);
        if (i + o < k.rows) sum += std::abs(k.values[d * k.rows + i]);
        if (o > 0 && i >= o) sum += std::abs(k.values[d * k.rows + i - o]);
      }
      ratio[i] = sum / m[i];
    }
  });
  return 2 / std::sqrt(*std::max_element(ratio.begin(), ratio.end()));
}

// The sponge's damping rate at each node (1/s): 0 inside, growing as the square of the depth into
// the layer on every side but the top.
std::vector<double> damping(const ElasticGrid& grid, const Sponge& sponge) {
  std::vector<double> d(grid.nodes(), 0.0);
  if (sponge.cells == 0) return d;
  const double width = sponge.cells * grid.dx;
  const double vp_max = *std::max_element(grid.vp.begin(), grid.vp.end());
  const double d0 = 3 * vp_max * std::log(1 / sponge.reflection) / (2 * width);
  const double w = static_cast<double>(sponge.cells);
  // How many cells deep node i of n along an axis lies in a sponge at both ends (or the far end only).
  const auto depth = [w](std::size_t i, std::size_t n, bool near_side) {
    const double far = w - double(n - 1 - i);
    return near_side ? std::max(w - double(i), far) : far;
  };
  for (std::size_t iz = 0; iz < grid.nz; ++iz)
    for (std::size_t iy = 0; iy < grid.ny; ++iy)
      for (std::size_t ix = 0; ix < grid.nx; ++ix) {
        double into = std::max({depth(ix, grid.nx, true), depth(iz, grid.nz, false), 0.0});
        if (grid.dims == 3) into = std::max(into, depth(iy, grid.ny, true));
        into /= w;
        d[grid.node(ix, iy, iz)] = d0 * into * into;
      }
  return d;
}

}  // namespace

void validate(const ElasticGrid& grid) {
  if (grid.dims != 2 && grid.dims != 3)
    throw InvalidArgument("elastic grids are 2D or 3D, not " + std::to_string(grid.dims) + "D");
  if (grid.dims == 2 && grid.ny != 1) throw InvalidArgument("a 2D elastic grid (x, z) has ny = 1");
  if (grid.nx < 4 || grid.nz < 4 || (grid.dims == 3 && grid.ny < 4))
    throw InvalidArgument("a wave grid needs at least 4 nodes on each axis, not " + std::to_string(grid.nx) + " x " +
                          (grid.dims == 3 ? std::to_string(grid.ny) + " x " : std::string()) + std::to_string(grid.nz));
  if (!(grid.dx > 0) || !std::isfinite(grid.dx)) throw InvalidArgument("the node spacing must be positive, not " + str(grid.dx));
  const std::size_t n = grid.cells();
  for (const auto& [values, name] : {std::pair{&grid.vp, "vp"}, {&grid.vs, "vs"}, {&grid.rho, "rho"}})
    if (values->size() != n)
      throw InvalidArgument(std::string(name) + " has " + std::to_string(values->size()) + " values; the grid has " +
                            std::to_string(grid.nx - 1) + " x " +
                            (grid.dims == 3 ? std::to_string(grid.ny - 1) + " x " : std::string()) +
                            std::to_string(grid.nz - 1) + " = " + std::to_string(n) + " cells");
  for (std::size_t c = 0; c < n; ++c) {
    const double vp = grid.vp[c], vs = grid.vs[c], rho = grid.rho[c];
    if (!std::isfinite(vp) || !std::isfinite(vs) || !std::isfinite(rho))
      throw InvalidArgument(cell_name(grid, c) + " holds a value that is not finite");
    if (!(rho > 0)) throw InvalidArgument(cell_name(grid, c) + " has rho = " + str(rho) + ": it must be positive");
    if (!(vs >= 0)) throw InvalidArgument(cell_name(grid, c) + " has vs = " + str(vs) + ": it must be >= 0");
    if (!(vp * vp > 4.0 / 3.0 * vs * vs))
      throw InvalidArgument(cell_name(grid, c) + " has vp = " + str(vp) + " and vs = " + str(vs) +
                            ": an elastic solid needs vp > 1.155 vs (a Poisson ratio in (-1, 0.5))");
  }
}

namespace {

ElasticGrid layered(ElasticGrid grid, const std::vector<Layer>& layers) {
  if (layers.empty()) throw InvalidArgument("a layered model needs at least one layer");
  if (layers.front().top != 0) throw InvalidArgument("the first layer must start at depth 0, not " + str(layers.front().top));
  for (std::size_t i = 1; i < layers.size(); ++i)
    if (!(layers[i].top > layers[i - 1].top))
      throw InvalidArgument("layer tops must increase: layer " + std::to_string(i) + " starts at " +
                            str(layers[i].top) + " m, layer " + std::to_string(i - 1) + " at " +
                            str(layers[i - 1].top) + " m");
  if (grid.nx < 4 || grid.nz < 4 || (grid.dims == 3 && grid.ny < 4)) validate(grid);
  const std::size_t per_depth = (grid.nx - 1) * grid.cells_y();
  for (std::size_t iz = 0; iz + 1 < grid.nz; ++iz) {
    const double depth = (double(iz) + 0.5) * grid.dx;
    std::size_t l = 0;
    while (l + 1 < layers.size() && layers[l + 1].top <= depth) ++l;
    grid.vp.insert(grid.vp.end(), per_depth, layers[l].vp);
    grid.vs.insert(grid.vs.end(), per_depth, layers[l].vs);
    grid.rho.insert(grid.rho.end(), per_depth, layers[l].rho);
  }
  validate(grid);
  return grid;
}

}  // namespace

ElasticGrid layered_grid(std::size_t nx, std::size_t nz, double dx, const std::vector<Layer>& layers) {
  return layered({2, nx, 1, nz, dx, {}, {}, {}}, layers);
}

ElasticGrid layered_grid(std::size_t nx, std::size_t ny, std::size_t nz, double dx, const std::vector<Layer>& layers) {
  return layered({3, nx, ny, nz, dx, {}, {}, {}}, layers);
}

sparse::Dia<double> stiffness(const ElasticGrid& grid) {
  validate(grid);
  const UnitStiffness& unit = unit_stiffness(grid.dims);
  const std::size_t size = unit.size, dims = grid.dims;
  const double scale = grid.dims == 3 ? grid.dx / 2 : 1.0;  // (h / 2)^(dims - 2)
  sparse::Dia<double> k;
  k.rows = k.cols = grid.dofs();
  k.symmetric = true;
  k.offsets = band_offsets(grid);
  k.values.assign(k.offsets.size() * k.rows, 0.0);
  // Every cell's local DOF pairs (p, q) lie on the same diagonals: find each pair's once. -1: the
  // pair's global DOFs go the other way, stored by (q, p).
  std::vector<int> diagonal(size * size);
  for (std::size_t p = 0; p < size; ++p)
    for (std::size_t q = 0; q < size; ++q) {
      const long o = dof_distance(grid, p, q);
      diagonal[p * size + q] =
          o < 0 ? -1 : int(std::find(k.offsets.begin(), k.offsets.end(), std::int32_t(o)) - k.offsets.begin());
    }
  // Layers of cells (one iz each) touch the node planes iz and iz + 1, so even layers never meet,
  // nor odd ones: each parity runs on every core, a layer on one thread in cell order, and every
  // entry gets its sums in the same order on any number of threads.
  const std::size_t layers = grid.nz - 1, per_layer = (grid.nx - 1) * grid.cells_y();
  for (std::size_t parity = 0; parity < 2; ++parity)
    detail::parallel_for((layers + 1 - parity) / 2, 1, [&](std::size_t begin, std::size_t end) {
      std::vector<std::size_t> dofs(size);
      for (std::size_t layer = begin; layer < end; ++layer) {
        const std::size_t iz = 2 * layer + parity;
        for (std::size_t c = 0; c < per_layer; ++c) {
          const std::size_t ix = c % (grid.nx - 1), iy = c / (grid.nx - 1), cell = iz * per_layer + c;
          const double mu = grid.rho[cell] * grid.vs[cell] * grid.vs[cell];
          const double lambda = grid.rho[cell] * grid.vp[cell] * grid.vp[cell] - 2 * mu;
          for (std::size_t p = 0; p < size; ++p) dofs[p] = dims * corner_node(grid, ix, iy, iz, p / dims) + p % dims;
          for (std::size_t p = 0; p < size; ++p)
            for (std::size_t q = 0; q < size; ++q) {
              if (diagonal[p * size + q] < 0) continue;
              k.values[std::size_t(diagonal[p * size + q]) * k.rows + dofs[p]] +=
                  scale * (lambda * unit.lambda[p * size + q] + mu * unit.mu[p * size + q]);
            }
        }
      }
    });
  return k;
}

std::vector<double> lumped_mass(const ElasticGrid& grid) {
  validate(grid);
  std::vector<double> m(grid.dofs(), 0.0);
  const std::size_t corners = std::size_t{1} << grid.dims, per_layer = (grid.nx - 1) * grid.cells_y();
  const double volume = grid.dims == 3 ? grid.dx * grid.dx * grid.dx : grid.dx * grid.dx;
  for (std::size_t cell = 0; cell < grid.cells(); ++cell) {
    const std::size_t iz = cell / per_layer, c = cell % per_layer;
    const double share = grid.rho[cell] * volume / double(corners);
    for (std::size_t a = 0; a < corners; ++a) {
      const std::size_t node = corner_node(grid, c % (grid.nx - 1), c / (grid.nx - 1), iz, a);
      for (std::size_t d = 0; d < grid.dims; ++d) m[grid.dims * node + d] += share;
    }
  }
  return m;
}

double stable_time_step(const ElasticGrid& grid) { return gershgorin_time_step(stiffness(grid), lumped_mass(grid)); }

template <class T>
WaveSystem<T> wave_system(const ElasticGrid& grid, double dt, const Sponge& sponge) {
  const sparse::Dia<double> k = stiffness(grid);  // validates the grid
  const std::vector<double> mass = lumped_mass(grid);
  check_dt(dt, gershgorin_time_step(k, mass));
  const std::size_t smallest = std::min({grid.nx, grid.nz, grid.dims == 3 ? grid.ny : grid.nx});
  if (3 * sponge.cells > smallest)
    throw InvalidArgument("a sponge of " + std::to_string(sponge.cells) + " cells leaves too little of a grid of " +
                          std::to_string(smallest) + " nodes on its smallest side: at most a third of it");
  if (!(sponge.reflection > 0 && sponge.reflection < 1))
    throw InvalidArgument("the sponge's reflection must lie in (0, 1), not " + str(sponge.reflection));
  const std::vector<double> d = damping(grid, sponge);
  WaveSystem<T> s;
  s.dims = grid.dims;
  s.nx = grid.nx;
  s.ny = grid.ny;
  s.nz = grid.nz;
  s.dt = dt;
  s.k1.rows = s.k1.cols = k.rows;
  s.k1.symmetric = true;
  s.k1.offsets = k.offsets;
  s.k1.values.resize(k.values.size());
  detail::parallel_for(k.values.size(), 1 << 16, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      const double diagonal = i < k.rows ? 2 * mass[i] : 0.0;  // diagonal 0 is offset 0
      s.k1.values[i] = T(dt * dt * k.values[i] - diagonal);
    }
  });
  s.k2.resize(k.rows);
  s.m.resize(k.rows);
  for (std::size_t i = 0; i < k.rows; ++i) {
    const double c = dt * d[i / grid.dims] / 2;  // dt C / 2 over M
    s.k2[i] = T(mass[i] * (1 - c));
    s.m[i] = T(mass[i] * (1 + c));
  }
  return s;
}

template WaveSystem<float> wave_system<float>(const ElasticGrid&, double, const Sponge&);
template WaveSystem<double> wave_system<double>(const ElasticGrid&, double, const Sponge&);

}  // namespace ziggurat::wave
