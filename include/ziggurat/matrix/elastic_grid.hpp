#pragma once
// Elastic models on a structured grid for explicit FEM wave propagation (method notes, section 5),
// in 2D (P-SV, the x-z plane) or 3D: nodes dx apart, x to the right, y across (3D) and z down;
// cells of bilinear (2D, plane strain) or trilinear (3D) elements integrated by 2-point Gauss per
// axis, with vp, vs and rho each; lumped mass. `dims` DOFs per node, interleaved: node
// (iz ny + iy) nx + ix (ny = 1 in 2D) has DOFs dims node + c, c = 0 for ux, then uy (3D), then uz.
// The top (iz = 0) is a free surface; absorbing sponge layers damp every other side.
//
// Central differences in time in the paper's form, for M u'' + C u' + K u = f with C = d M
// (d the sponge's damping rate, 0 outside it):
//     m u3 = dt^2 f - K1 u2 - K2 u1,   K1 = dt^2 K - 2 M,   K2 = M - dt C / 2,   m = M + dt C / 2
// u1, u2, u3 the previous, current and next displacements. K1 is banded and symmetric, stored as
// a half DIA (2D: 11 diagonals, offsets 0..3 and 2 nx - 3 .. 2 nx + 3; 3D: 50 diagonals, the
// offsets to the node's 13 neighbours ahead of it, 5 wide each, merged); K2 and m are diagonal.
// The slowest axis is z, so the band's half-width is one row (2D) or one plane (3D) of nodes.
#include <cstddef>
#include <string_view>
#include <vector>

#include "ziggurat/matrix/sparse.hpp"

namespace ziggurat::wave {

/// Properties per cell: cell (ix, iy, iz), ix < nx - 1, iy < ny - 1 (0 in 2D), iz < nz - 1, at
/// [(iz cy + iy) (nx - 1) + ix] with cy = ny - 1 (1 in 2D): x fastest, z slowest.
struct ElasticGrid {
  std::size_t dims = 2;                 ///< 2 (P-SV) or 3
  std::size_t nx = 0, ny = 1, nz = 0;   ///< nodes; ny = 1 in 2D
  double dx = 0;                        ///< node spacing, m
  std::vector<double> vp, vs, rho;
  std::size_t cells_y() const noexcept { return dims == 3 ? ny - 1 : 1; }
  std::size_t cells() const noexcept { return (nx - 1) * cells_y() * (nz - 1); }
  std::size_t nodes() const noexcept { return nx * ny * nz; }
  std::size_t dofs() const noexcept { return dims * nodes(); }
  std::size_t node(std::size_t ix, std::size_t iy, std::size_t iz) const noexcept { return (iz * ny + iy) * nx + ix; }
};

/// A node by its indices (iy = 0 in 2D).
struct GridNode {
  std::size_t ix = 0, iy = 0, iz = 0;
};

/// A horizontal layer from depth `top` (m) down to the next layer's top (the last to the bottom).
struct Layer {
  double top = 0, vp = 0, vs = 0, rho = 0;
};

/// The grid with each cell taking the layer its centre lies in: 2D (nx x nz nodes) or 3D
/// (nx x ny x nz). InvalidArgument for no layer, tops not increasing from 0, and what validate()
/// refuses.
ElasticGrid layered_grid(std::size_t nx, std::size_t nz, double dx, const std::vector<Layer>& layers);
ElasticGrid layered_grid(std::size_t nx, std::size_t ny, std::size_t nz, double dx, const std::vector<Layer>& layers);

/// Throws InvalidArgument naming the first problem: dims not 2 or 3 (or ny != 1 in 2D), fewer than
/// 4 nodes on an axis, dx <= 0, arrays that are not cells() long, a value that is not finite,
/// rho <= 0, vp <= 0, vs < 0, or vp^2 <= 4/3 vs^2 (a Poisson ratio outside (-1, 0.5): no elastic solid),
/// with the cell.
void validate(const ElasticGrid& grid);

/// The sponge: `cells` cells thick on every side but the top, damping rate growing as the square
/// of the depth into it up to 3 vp_max ln(1 / reflection) / (2 width).
struct Sponge {
  std::size_t cells = 0;
  double reflection = 1e-3;
};

/// The system of one time step, values rounded to T from double.
template <class T>
struct WaveSystem {
  std::size_t dims = 2;
  std::size_t nx = 0, ny = 1, nz = 0;  ///< nodes, as the grid's
  double dt = 0;
  sparse::Dia<T> k1;   ///< dt^2 K - 2 M, symmetric half-stored
  std::vector<T> k2;   ///< M - dt C / 2
  std::vector<T> inverse_mass;  ///< 1 / (M + dt C / 2), so that a step multiplies (a division need
                                ///< not round correctly in OpenCL's float)
  std::size_t nodes() const noexcept { return nx * ny * nz; }
  std::size_t dofs() const noexcept { return dims * nodes(); }
  std::size_t node(const GridNode& n) const noexcept { return (n.iz * ny + n.iy) * nx + n.ix; }
};

/// K of the grid (symmetric half DIA, double): each DOF's row summed over the cells around its
/// node in cell order (the same bits on any number of threads). wave_system() gathers the same
/// rows straight into K1 in T, so that no K in double is held beside it.
sparse::Dia<double> stiffness(const ElasticGrid& grid);
/// The lumped mass, one value per DOF: rho dx^dims / 2^dims from each cell around the node.
std::vector<double> lumped_mass(const ElasticGrid& grid);

/// The largest stable dt of central differences on this grid: 2 / sqrt(lambda_max(M^-1 K)), with
/// lambda_max bounded from above by Gershgorin's row sums of M^-1 K (so any dt up to it is stable).
double stable_time_step(const ElasticGrid& grid);

/// Throws InvalidArgument when dt <= 0 or above stable_time_step() (both named), a sponge thicker
/// than a third of the grid's smallest side, or a reflection outside (0, 1).
template <class T>
WaveSystem<T> wave_system(const ElasticGrid& grid, double dt, const Sponge& sponge = {});

}  // namespace ziggurat::wave
