#pragma once
// The explicit heat scheme (method notes, section 1) in 1, 2 and 3 dimensions: its coefficients,
// its CPU reference, and the slowest mode, an exact discrete solution. Its kernels step grids in
// device memory (solver/in_device_heat.hpp) and pyramid tasks (solver/heat_pyramid.hpp).
//
// Three-, five- or seven-point stencil, Dirichlet boundary: the boundary nodes keep their initial
// values and every interior node is updated as
//
//     U' = A * (((((U[x-1] + U[x+1]) + U[y-1]) + U[y+1]) + U[z-1]) + U[z+1]) + B * U
//
// (the terms of the axes the grid has), B = 1 - 2 dims A, in exactly this order of operations and
// without fused multiply-add, in the CPU reference and in every kernel. A and B are rounded to
// the element type once, on the host. The scheme is stable for 0 < A <= 1/(2 dims); then each new
// value is a convex combination of old ones.

#include <cstddef>
#include <string>
#include <vector>

#include "ziggurat/matrix/grid.hpp"

namespace ziggurat {

/// The largest stable A for a grid of `dims` dimensions: 1 / (2 dims).
double max_stable_alpha(std::size_t dims);

/// The work-group of the blocked (several steps a launch) heat and Jacobi kernels: x by y
/// work-items. 1D and 2D: a row of x items (y = 1), each 2D item holding a column of the strip;
/// 3D: a tile of x by y items, each holding 4 rows, so that the group covers x by 4y nodes of a
/// plane. Zeros: the device's default (256 x 1 in 1D and 2D, 32 x 8 in 3D, as far as the device
/// allows). The tuner (tuning/blocking_autotune.hpp) chooses it with the depth.
struct BlockedGroup {
  std::size_t x = 0, y = 0;
  bool is_default() const { return x == 0 && y == 0; }
  bool operator==(const BlockedGroup& other) const { return x == other.x && y == other.y; }
};

/// "256x1"; "default" for zeros.
std::string to_string(const BlockedGroup& group);

template <class T>
struct HeatCoefficients {
  T a;  ///< weight of each neighbour
  T b;  ///< weight of the node itself, 1 - 2 dims A
};

/// A and B for `dims` dimensions. Throws InvalidArgument unless 0 < alpha <= max_stable_alpha.
template <class T>
HeatCoefficients<T> heat_coefficients(double alpha, std::size_t dims);

/// Throws InvalidArgument unless the grid has 1 to 3 axes of at least 3 nodes each (one interior
/// node between two boundary nodes); `who` names the caller in the message.
void require_heat_grid(const std::vector<std::size_t>& extents, const char* who);

/// CPU reference: advances a grid of 1 to 3 dimensions by `steps` steps in place.
template <class T>
void heat_steps_reference(Grid<T>& grid, double alpha, std::size_t steps);

/// The slowest discrete mode, the product of sin(pi i / (E-1)) over the axes (E nodes on the axis),
/// zero on the boundary. It is an eigenvector of the scheme: after K steps the exact discrete
/// solution is decay^K times it. With `rows`, only rows [first_row, first_row + rows) of the
/// slowest axis (what one process of a distributed run holds).
template <class T>
Grid<T> heat_mode_field(const std::vector<std::size_t>& extents, std::size_t first_row = 0, std::size_t rows = 0);

/// The mode's factor per step: 1 - 2 dims A + 2A (sum over the axes of cos(pi / (E-1))).
double heat_mode_decay(const std::vector<std::size_t>& extents, double alpha);

/// The distance of a field from the exact discrete solution after `steps` steps of A = alpha from
/// the slowest mode: max |u - decay^steps mode| over its nodes, the mode computed axis by axis
/// instead of built as a field (the grid may fill most of host memory), on every core. `values`
/// hold the grid fastest axis first, or with `rows` only the rows [first_row, first_row + rows) of
/// the slowest axis (one process's part of a distributed run). A NaN value is passed over. Throws
/// InvalidArgument for a grid require_heat_grid() refuses or rows outside it.
template <class T>
double heat_mode_error(const T* values, const std::vector<std::size_t>& extents, double alpha, std::size_t steps,
                       std::size_t first_row = 0, std::size_t rows = 0);

/// Throws InvalidArgument naming the first node that is NaN or infinite.
template <class T>
void require_finite(const Grid<T>& grid, const char* what);

}  // namespace ziggurat
