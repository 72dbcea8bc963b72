#pragma once
// 2D elastic (P-SV) models on a structured grid for explicit FEM wave propagation (method notes,
// section 5): nx x nz nodes dx apart, x to the right and z down, cells of bilinear plane-strain
// elements (2x2 Gauss) with vp, vs and rho each, lumped mass. Two DOFs per node, interleaved:
// DOF 2 (iz nx + ix) + c, c = 0 for ux and 1 for uz. The top row (iz = 0) is a free surface;
// absorbing sponge layers damp the other three sides.
//
// Central differences in time in the paper's form, for M u'' + C u' + K u = f with C = d M
// (d the sponge's damping rate, 0 outside it):
//     m u3 = dt^2 f - K1 u2 - K2 u1,   K1 = dt^2 K - 2 M,   K2 = M - dt C / 2,   m = M + dt C / 2
// u1, u2, u3 the previous, current and next displacements. K1 is banded and symmetric, stored as
// a half DIA (11 diagonals, offsets 0..3 and 2 nx - 3 .. 2 nx + 3); K2 and m are diagonal.
#include <cstddef>
#include <string_view>
#include <vector>

#include "ziggurat/matrix/sparse.hpp"

namespace ziggurat::wave {

/// Properties per cell: cell (ix, iz), 0 <= ix < nx - 1, 0 <= iz < nz - 1, at [iz (nx - 1) + ix].
struct ElasticGrid2D {
  std::size_t nx = 0, nz = 0;  ///< nodes
  double dx = 0;               ///< node spacing, m
  std::vector<double> vp, vs, rho;
  std::size_t cells() const noexcept { return (nx - 1) * (nz - 1); }
  std::size_t dofs() const noexcept { return 2 * nx * nz; }
};

/// A horizontal layer from depth `top` (m) down to the next layer's top (the last to the bottom).
struct Layer {
  double top = 0, vp = 0, vs = 0, rho = 0;
};

/// The grid with each cell taking the layer its centre lies in. InvalidArgument for no layer, tops
/// not increasing from 0, and what validate() refuses.
ElasticGrid2D layered_grid(std::size_t nx, std::size_t nz, double dx, const std::vector<Layer>& layers);

/// Throws InvalidArgument naming the first problem: fewer than 4 nodes on an axis, dx <= 0, arrays
/// that are not cells() long, a value that is not finite, rho <= 0, vs < 0, or vp^2 <= 4/3 vs^2
/// (a Poisson ratio outside (-1, 0.5): no elastic solid), with the cell.
void validate(const ElasticGrid2D& grid);

/// The sponge: `cells` cells thick on the left, right and bottom sides, damping rate growing as
/// the square of the depth into it up to 3 vp_max ln(1 / reflection) / (2 width).
struct Sponge {
  std::size_t cells = 0;
  double reflection = 1e-3;
};

/// The system of one time step, values rounded to T from double.
template <class T>
struct WaveSystem {
  std::size_t nx = 0, nz = 0;
  double dt = 0;
  sparse::Dia<T> k1;   ///< dt^2 K - 2 M, symmetric half-stored
  std::vector<T> k2;   ///< M - dt C / 2
  std::vector<T> m;    ///< M + dt C / 2
  std::size_t dofs() const noexcept { return 2 * nx * nz; }
};

/// K of the grid (symmetric half DIA, double), assembled cell by cell in a fixed order.
sparse::Dia<double> stiffness(const ElasticGrid2D& grid);
/// The lumped mass, one value per DOF: rho dx^2 / 4 from each cell around the node.
std::vector<double> lumped_mass(const ElasticGrid2D& grid);

/// The largest stable dt of central differences on this grid: 2 / sqrt(lambda_max(M^-1 K)), with
/// lambda_max bounded from above by Gershgorin's row sums of M^-1 K (so any dt up to it is stable).
double stable_time_step(const ElasticGrid2D& grid);

/// Throws InvalidArgument when dt <= 0 or above stable_time_step() (both named), a sponge thicker
/// than a third of the grid, or a reflection outside (0, 1).
template <class T>
WaveSystem<T> wave_system(const ElasticGrid2D& grid, double dt, const Sponge& sponge = {});

}  // namespace ziggurat::wave
