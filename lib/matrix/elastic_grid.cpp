#include "ziggurat/matrix/elastic_grid.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>

#include "ziggurat/base/error.hpp"

namespace ziggurat::wave {

namespace {

std::string str(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", value);
  return text;
}

std::string cell_name(const ElasticGrid2D& grid, std::size_t cell) {
  return "cell (" + std::to_string(cell % (grid.nx - 1)) + ", " + std::to_string(cell / (grid.nx - 1)) + ")";
}

// The unit stiffness matrices of a square bilinear plane-strain element, K_e = lambda A + mu B
// (8 x 8, local DOFs 2 a + c over the nodes (0,0) (1,0) (0,1) (1,1)); the side cancels in 2D.
struct UnitStiffness {
  std::array<double, 64> lambda{}, mu{};
  UnitStiffness() {
    constexpr double g = 0.57735026918962576451;  // 1 / sqrt(3): 2-point Gauss, weight 1
    constexpr double sx[4] = {-1, 1, -1, 1}, sz[4] = {-1, -1, 1, 1};
    for (const double eta : {-g, g})
      for (const double xi : {-g, g}) {
        // dN/dx and dN/dz for a side h: (2 / h) dN/dxi; with det J = h^2 / 4 the h cancels, so
        // use h = 2: derivatives dN/dxi and weight 1.
        double dx[4], dz[4];
        for (int a = 0; a < 4; ++a) {
          dx[a] = sx[a] * (1 + sz[a] * eta) / 4;
          dz[a] = sz[a] * (1 + sx[a] * xi) / 4;
        }
        for (int a = 0; a < 4; ++a)
          for (int b = 0; b < 4; ++b) {
            // lambda (div u)(div v): div = dx ux + dz uz
            lambda[(2 * a) * 8 + 2 * b] += dx[a] * dx[b];
            lambda[(2 * a) * 8 + 2 * b + 1] += dx[a] * dz[b];
            lambda[(2 * a + 1) * 8 + 2 * b] += dz[a] * dx[b];
            lambda[(2 * a + 1) * 8 + 2 * b + 1] += dz[a] * dz[b];
            // mu (2 exx exx + 2 ezz ezz + gxz gxz), gxz = dz ux + dx uz
            mu[(2 * a) * 8 + 2 * b] += 2 * dx[a] * dx[b] + dz[a] * dz[b];
            mu[(2 * a) * 8 + 2 * b + 1] += dz[a] * dx[b];
            mu[(2 * a + 1) * 8 + 2 * b] += dx[a] * dz[b];
            mu[(2 * a + 1) * 8 + 2 * b + 1] += 2 * dz[a] * dz[b] + dx[a] * dx[b];
          }
      }
  }
};

// The offsets of the half band: 0..3 inside and beside a node, 2 nx - 3 .. 2 nx + 3 to the row below.
std::vector<std::int32_t> band_offsets(std::size_t nx) {
  std::vector<std::int32_t> offsets{0, 1, 2, 3};
  for (int o = -3; o <= 3; ++o) offsets.push_back(static_cast<std::int32_t>(2 * nx) + o);
  return offsets;
}

void check_dt(double dt, double limit) {
  if (!(dt > 0) || !std::isfinite(dt)) throw InvalidArgument("the time step must be positive, not " + str(dt));
  if (dt > limit)
    throw InvalidArgument("the time step " + str(dt) + " s exceeds the stability (CFL) limit of this grid, " +
                          str(limit) + " s: take a smaller --dt or a coarser --dx");
}

// 2 / sqrt(lambda_max(M^-1 K)), lambda_max bounded by Gershgorin's row sums of M^-1 K.
double gershgorin_time_step(const sparse::Dia<double>& k, const std::vector<double>& m) {
  std::vector<double> row_sums(k.rows, 0.0);
  for (std::size_t d = 0; d < k.offsets.size(); ++d) {
    const std::size_t o = static_cast<std::size_t>(k.offsets[d]);
    for (std::size_t i = 0; i + o < k.rows; ++i) {
      const double v = std::abs(k.values[d * k.rows + i]);
      row_sums[i] += v;
      if (o > 0) row_sums[i + o] += v;
    }
  }
  double lambda_max = 0;
  for (std::size_t i = 0; i < k.rows; ++i) lambda_max = std::max(lambda_max, row_sums[i] / m[i]);
  return 2 / std::sqrt(lambda_max);
}

// The sponge's damping rate at each node (1/s): 0 inside, growing as the square of the depth into
// the layer on the left, right and bottom sides.
std::vector<double> damping(const ElasticGrid2D& grid, const Sponge& sponge) {
  std::vector<double> d(grid.nx * grid.nz, 0.0);
  if (sponge.cells == 0) return d;
  const double width = sponge.cells * grid.dx;
  const double vp_max = *std::max_element(grid.vp.begin(), grid.vp.end());
  const double d0 = 3 * vp_max * std::log(1 / sponge.reflection) / (2 * width);
  const double w = static_cast<double>(sponge.cells);
  for (std::size_t iz = 0; iz < grid.nz; ++iz)
    for (std::size_t ix = 0; ix < grid.nx; ++ix) {
      const double left = w - double(ix), right = w - double(grid.nx - 1 - ix), bottom = w - double(grid.nz - 1 - iz);
      const double into = std::max({left, right, bottom, 0.0}) / w;
      d[iz * grid.nx + ix] = d0 * into * into;
    }
  return d;
}

}  // namespace

void validate(const ElasticGrid2D& grid) {
  if (grid.nx < 4 || grid.nz < 4)
    throw InvalidArgument("a wave grid needs at least 4 nodes on each axis, not " + std::to_string(grid.nx) + " x " +
                          std::to_string(grid.nz));
  if (!(grid.dx > 0) || !std::isfinite(grid.dx)) throw InvalidArgument("the node spacing must be positive, not " + str(grid.dx));
  const std::size_t n = grid.cells();
  for (const auto& [values, name] : {std::pair{&grid.vp, "vp"}, {&grid.vs, "vs"}, {&grid.rho, "rho"}})
    if (values->size() != n)
      throw InvalidArgument(std::string(name) + " has " + std::to_string(values->size()) + " values; the grid has " +
                            std::to_string(grid.nx - 1) + " x " + std::to_string(grid.nz - 1) + " = " +
                            std::to_string(n) + " cells");
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

ElasticGrid2D layered_grid(std::size_t nx, std::size_t nz, double dx, const std::vector<Layer>& layers) {
  if (layers.empty()) throw InvalidArgument("a layered model needs at least one layer");
  if (layers.front().top != 0) throw InvalidArgument("the first layer must start at depth 0, not " + str(layers.front().top));
  for (std::size_t i = 1; i < layers.size(); ++i)
    if (!(layers[i].top > layers[i - 1].top))
      throw InvalidArgument("layer tops must increase: layer " + std::to_string(i) + " starts at " +
                            str(layers[i].top) + " m, layer " + std::to_string(i - 1) + " at " +
                            str(layers[i - 1].top) + " m");
  ElasticGrid2D grid{nx, nz, dx, {}, {}, {}};
  if (nx < 4 || nz < 4) validate(grid);
  for (std::size_t iz = 0; iz + 1 < nz; ++iz) {
    const double depth = (double(iz) + 0.5) * dx;
    std::size_t l = 0;
    while (l + 1 < layers.size() && layers[l + 1].top <= depth) ++l;
    for (std::size_t ix = 0; ix + 1 < nx; ++ix) {
      grid.vp.push_back(layers[l].vp);
      grid.vs.push_back(layers[l].vs);
      grid.rho.push_back(layers[l].rho);
    }
  }
  validate(grid);
  return grid;
}

sparse::Dia<double> stiffness(const ElasticGrid2D& grid) {
  validate(grid);
  static const UnitStiffness unit;
  sparse::Dia<double> k;
  k.rows = k.cols = grid.dofs();
  k.symmetric = true;
  k.offsets = band_offsets(grid.nx);
  k.values.assign(k.offsets.size() * k.rows, 0.0);
  const std::size_t nx = grid.nx;
  // Every cell's local DOF pairs (a, b) lie on the same diagonals: find each pair's once. -1: the
  // pair's global DOFs go the other way, stored by (b, a).
  const std::size_t local_node[4] = {0, 1, nx, nx + 1};
  std::array<int, 64> diagonal{};
  for (int a = 0; a < 8; ++a)
    for (int b = 0; b < 8; ++b) {
      const std::size_t p = 2 * local_node[a / 2] + a % 2, q = 2 * local_node[b / 2] + b % 2;
      diagonal[a * 8 + b] =
          p > q ? -1 : int(std::find(k.offsets.begin(), k.offsets.end(), std::int32_t(q - p)) - k.offsets.begin());
    }
  for (std::size_t iz = 0; iz + 1 < grid.nz; ++iz)
    for (std::size_t ix = 0; ix + 1 < nx; ++ix) {
      const std::size_t cell = iz * (nx - 1) + ix;
      const double mu = grid.rho[cell] * grid.vs[cell] * grid.vs[cell];
      const double lambda = grid.rho[cell] * grid.vp[cell] * grid.vp[cell] - 2 * mu;
      const std::size_t node[4] = {iz * nx + ix, iz * nx + ix + 1, (iz + 1) * nx + ix, (iz + 1) * nx + ix + 1};
      for (int a = 0; a < 8; ++a)
        for (int b = 0; b < 8; ++b) {
          if (diagonal[a * 8 + b] < 0) continue;
          const std::size_t p = 2 * node[a / 2] + a % 2;
          k.values[std::size_t(diagonal[a * 8 + b]) * k.rows + p] +=
              lambda * unit.lambda[a * 8 + b] + mu * unit.mu[a * 8 + b];
        }
    }
  return k;
}

std::vector<double> lumped_mass(const ElasticGrid2D& grid) {
  validate(grid);
  std::vector<double> m(grid.dofs(), 0.0);
  const std::size_t nx = grid.nx;
  for (std::size_t iz = 0; iz + 1 < grid.nz; ++iz)
    for (std::size_t ix = 0; ix + 1 < nx; ++ix) {
      const double quarter = grid.rho[iz * (nx - 1) + ix] * grid.dx * grid.dx / 4;
      for (const std::size_t node : {iz * nx + ix, iz * nx + ix + 1, (iz + 1) * nx + ix, (iz + 1) * nx + ix + 1}) {
        m[2 * node] += quarter;
        m[2 * node + 1] += quarter;
      }
    }
  return m;
}

double stable_time_step(const ElasticGrid2D& grid) { return gershgorin_time_step(stiffness(grid), lumped_mass(grid)); }

template <class T>
WaveSystem<T> wave_system(const ElasticGrid2D& grid, double dt, const Sponge& sponge) {
  const sparse::Dia<double> k = stiffness(grid);  // validates the grid
  const std::vector<double> mass = lumped_mass(grid);
  check_dt(dt, gershgorin_time_step(k, mass));
  if (3 * sponge.cells > std::min(grid.nx, grid.nz))
    throw InvalidArgument("a sponge of " + std::to_string(sponge.cells) + " cells leaves too little of a " +
                          std::to_string(grid.nx) + " x " + std::to_string(grid.nz) +
                          " grid: at most a third of its smaller side");
  if (!(sponge.reflection > 0 && sponge.reflection < 1))
    throw InvalidArgument("the sponge's reflection must lie in (0, 1), not " + str(sponge.reflection));
  const std::vector<double> d = damping(grid, sponge);
  WaveSystem<T> s;
  s.nx = grid.nx;
  s.nz = grid.nz;
  s.dt = dt;
  s.k1.rows = s.k1.cols = k.rows;
  s.k1.symmetric = true;
  s.k1.offsets = k.offsets;
  s.k1.values.resize(k.values.size());
  for (std::size_t i = 0; i < k.values.size(); ++i) {
    const double diagonal = i < k.rows ? 2 * mass[i] : 0.0;  // diagonal 0 is offset 0
    s.k1.values[i] = T(dt * dt * k.values[i] - diagonal);
  }
  s.k2.resize(k.rows);
  s.m.resize(k.rows);
  for (std::size_t i = 0; i < k.rows; ++i) {
    const double c = dt * d[i / 2] / 2;  // dt C / 2 over M
    s.k2[i] = T(mass[i] * (1 - c));
    s.m[i] = T(mass[i] * (1 + c));
  }
  return s;
}

template WaveSystem<float> wave_system<float>(const ElasticGrid2D&, double, const Sponge&);
template WaveSystem<double> wave_system<double>(const ElasticGrid2D&, double, const Sponge&);

}  // namespace ziggurat::wave
