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

void check_dt(double dt, double limit) {
  if (dt > limit)
    throw InvalidArgument("the time step " + str(dt) + " s exceeds the stability (CFL) limit of this grid, " +
                          str(limit) + " s: take a smaller --dt or a coarser --dx");
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
    if (!(vp > 0)) throw InvalidArgument(cell_name(grid, c) + " has vp = " + str(vp) + ": it must be positive");
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

namespace {

// K row by row: for every DOF p (on every core, each p on one thread), the sums K(p, q) over the
// cells around p's node, in cell order, for the q of the node's neighbourhood (3^dims nodes,
// slot = neighbour node dims + component); rows(p, k) gets them in double. One gather serves K, its
// Gershgorin bound and K1 in T, with no matrix in double held beside K1.
class RowAssembly {
 public:
  explicit RowAssembly(const ElasticGrid& grid)
      : grid_(grid), unit_(unit_stiffness(grid.dims)), slots_(grid.dims * (grid.dims == 3 ? 27 : 9)),
        scale_(grid.dims == 3 ? grid.dx / 2 : 1.0) {
    validate(grid);
    // The half band's offsets: every DOF distance ahead within a node's neighbourhood (the
    // neighbours are the nodes sharing a cell with it), ascending; then each slot's diagonal for
    // a DOF of component c (-1: the entry lies below the diagonal).
    for (std::size_t c = 0; c < grid.dims; ++c)
      for (std::size_t slot = 0; slot < slots_; ++slot)
        if (distance(c, slot) >= 0) offsets_.push_back(static_cast<std::int32_t>(distance(c, slot)));
    std::sort(offsets_.begin(), offsets_.end());
    offsets_.erase(std::unique(offsets_.begin(), offsets_.end()), offsets_.end());
    for (std::size_t c = 0; c < grid.dims; ++c)
      for (std::size_t slot = 0; slot < slots_; ++slot) {
        const long o = distance(c, slot);
        diagonal_.push_back(o < 0 ? -1 : int(std::find(offsets_.begin(), offsets_.end(), std::int32_t(o)) - offsets_.begin()));
      }
  }
  const std::vector<std::int32_t>& offsets() const { return offsets_; }
  std::size_t slots() const { return slots_; }
  // The stored diagonal of the entry (p, slot) for a row of component c, -1 when it lies below.
  int diagonal(std::size_t c, std::size_t slot) const { return diagonal_[c * slots_ + slot]; }

  template <class Rows>
  void run(Rows rows) const {
    const std::size_t nodes = grid_.nodes();
    detail::parallel_for(nodes, 1 << 10, [&](std::size_t begin, std::size_t end) {
      std::vector<double> k(grid_.dims * slots_);
      for (std::size_t node = begin; node < end; ++node) {
        row_values(node, k.data());
        for (std::size_t c = 0; c < grid_.dims; ++c) rows(grid_.dims * node + c, c, k.data() + c * slots_);
      }
    });
  }

 private:
  // Neighbour slot of the node (dx, dy, dz) away, each in -1..1 (dy = 0 in 2D).
  std::size_t slot_of(long dx, long dy, long dz, std::size_t c) const {
    const std::size_t n = grid_.dims == 3 ? std::size_t((dx + 1) + 3 * (dy + 1) + 9 * (dz + 1)) : std::size_t((dx + 1) + 3 * (dz + 1));
    return grid_.dims * n + c;
  }
  long distance(std::size_t c, std::size_t slot) const {
    const long n = long(slot / grid_.dims), c2 = long(slot % grid_.dims);
    const long dx = n % 3 - 1, rest = n / 3;
    const long dy = grid_.dims == 3 ? rest % 3 - 1 : 0, dz = grid_.dims == 3 ? rest / 3 - 1 : rest - 1;
    const long node = dx + long(grid_.nx) * (dy + long(grid_.ny) * dz);
    return long(grid_.dims) * node + c2 - long(c);
  }
  // The rows of the node's DOFs: k[c * slots + slot] = K(dims node + c, the slot's DOF).
  void row_values(std::size_t node, double* k) const {
    const std::size_t dims = grid_.dims, size = unit_.size, nx = grid_.nx, ny = grid_.ny;
    std::fill(k, k + dims * slots_, 0.0);
    const std::size_t ix = node % nx, iy = node / nx % ny, iz = node / (nx * ny);
    const auto first = [](std::size_t i) { return i > 0 ? i - 1 : 0; };
    const std::size_t cy_end = dims == 3 ? std::min(iy, ny - 2) + 1 : 1;
    for (std::size_t cz = first(iz); cz <= std::min(iz, grid_.nz - 2); ++cz)
      for (std::size_t cy = dims == 3 ? first(iy) : 0; cy < cy_end; ++cy)
        for (std::size_t cx = first(ix); cx <= std::min(ix, nx - 2); ++cx) {
          const std::size_t cell = (cz * grid_.cells_y() + cy) * (nx - 1) + cx;
          const double mu = grid_.rho[cell] * grid_.vs[cell] * grid_.vs[cell];
          const double lambda = grid_.rho[cell] * grid_.vp[cell] * grid_.vp[cell] - 2 * mu;
          // This node's corner in the cell, then every corner b's DOFs.
          const std::size_t a = dims == 3 ? (ix - cx) | (iy - cy) << 1 | (iz - cz) << 2 : (ix - cx) | (iz - cz) << 1;
          for (std::size_t b = 0; b < (std::size_t{1} << dims); ++b) {
            const long bx = long(cx + (b & 1)) - long(ix);
            const long by = dims == 3 ? long(cy + (b >> 1 & 1)) - long(iy) : 0;
            const long bz = long(cz + (b >> (dims - 1) & 1)) - long(iz);
            for (std::size_t c = 0; c < dims; ++c)
              for (std::size_t c2 = 0; c2 < dims; ++c2) {
                const std::size_t at = (dims * a + c) * size + dims * b + c2;
                k[c * slots_ + slot_of(bx, by, bz, c2)] += scale_ * (lambda * unit_.lambda[at] + mu * unit_.mu[at]);
              }
          }
        }
  }

  const ElasticGrid& grid_;
  const UnitStiffness& unit_;
  std::vector<std::int32_t> offsets_;
  std::size_t slots_;
  double scale_;
  std::vector<int> diagonal_;
};

// 2 / sqrt(max over rows of (sum_q |K(p, q)|) / m_p): Gershgorin's bound of lambda_max(M^-1 K).
double gershgorin_step(const std::vector<double>& ratio) {
  return 2 / std::sqrt(*std::max_element(ratio.begin(), ratio.end()));
}

double absolute_sum(const double* k, std::size_t count) {
  double sum = 0;
  for (std::size_t i = 0; i < count; ++i) sum += std::abs(k[i]);
  return sum;
}

}  // namespace

sparse::Dia<double> stiffness(const ElasticGrid& grid) {
  const RowAssembly assembly(grid);
  sparse::Dia<double> k;
  k.rows = k.cols = grid.dofs();
  k.symmetric = true;
  k.offsets = assembly.offsets();
  k.values.assign(k.offsets.size() * k.rows, 0.0);
  assembly.run([&](std::size_t p, std::size_t c, const double* row) {
    for (std::size_t slot = 0; slot < assembly.slots(); ++slot) {
      const int d = assembly.diagonal(c, slot);
      if (d >= 0 && p + std::size_t(k.offsets[std::size_t(d)]) < k.rows) k.values[std::size_t(d) * k.rows + p] = row[slot];
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

double stable_time_step(const ElasticGrid& grid) {
  const RowAssembly assembly(grid);
  const std::vector<double> mass = lumped_mass(grid);
  std::vector<double> ratio(grid.dofs());
  assembly.run([&](std::size_t p, std::size_t, const double* row) { ratio[p] = absolute_sum(row, assembly.slots()) / mass[p]; });
  return gershgorin_step(ratio);
}

template <class T>
WaveSystem<T> wave_system(const ElasticGrid& grid, double dt, const Sponge& sponge) {
  const RowAssembly assembly(grid);  // validates the grid
  if (!(dt > 0) || !std::isfinite(dt)) throw InvalidArgument("the time step must be positive, not " + str(dt));
  const std::size_t smallest = std::min({grid.nx, grid.nz, grid.dims == 3 ? grid.ny : grid.nx});
  if (3 * sponge.cells > smallest)
    throw InvalidArgument("a sponge of " + std::to_string(sponge.cells) + " cells leaves too little of a grid of " +
                          std::to_string(smallest) + " nodes on its smallest side: at most a third of it");
  if (!(sponge.reflection > 0 && sponge.reflection < 1))
    throw InvalidArgument("the sponge's reflection must lie in (0, 1), not " + str(sponge.reflection));
  const std::vector<double> mass = lumped_mass(grid);
  WaveSystem<T> s;
  s.dims = grid.dims;
  s.nx = grid.nx;
  s.ny = grid.ny;
  s.nz = grid.nz;
  s.dt = dt;
  const std::size_t n = grid.dofs();
  s.k1.rows = s.k1.cols = n;
  s.k1.symmetric = true;
  s.k1.offsets = assembly.offsets();
  s.k1.values.assign(s.k1.offsets.size() * n, T(0));
  // K1 = dt^2 K - 2 M straight into T, row by row, with each row's Gershgorin ratio.
  std::vector<double> ratio(n);
  assembly.run([&](std::size_t p, std::size_t c, const double* row) {
    ratio[p] = absolute_sum(row, assembly.slots()) / mass[p];
    for (std::size_t slot = 0; slot < assembly.slots(); ++slot) {
      const int d = assembly.diagonal(c, slot);
      if (d < 0 || p + std::size_t(s.k1.offsets[std::size_t(d)]) >= n) continue;
      s.k1.values[std::size_t(d) * n + p] = T(dt * dt * row[slot] - (d == 0 ? 2 * mass[p] : 0.0));
    }
  });
  check_dt(dt, gershgorin_step(ratio));
  const std::vector<double> d = damping(grid, sponge);
  s.k2.resize(n);
  s.inverse_mass.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double c = dt * d[i / grid.dims] / 2;  // dt C / 2 over M
    s.k2[i] = T(mass[i] * (1 - c));
    s.inverse_mass[i] = T(1 / (mass[i] * (1 + c)));
  }
  return s;
}

template WaveSystem<float> wave_system<float>(const ElasticGrid&, double, const Sponge&);
template WaveSystem<double> wave_system<double>(const ElasticGrid&, double, const Sponge&);

}  // namespace ziggurat::wave
