#pragma once
// The stationary 3D heat (Poisson) equation -Laplace(u) = f with Dirichlet values, solved by
// Jacobi sweeps of the seven-point scheme (method notes, section 2): its CPU reference, its true
// residual and a manufactured problem with a known discrete solution. Its kernels sweep grids in
// device memory and in pyramid passes (solver/poisson_pyramid.hpp).
//
// Grids are W x H x D (fastest axis first, boundary included) with spacing h on every axis. One
// sweep updates every interior node from the previous sweep's values as
//
//     U' = S * ((((((U[x-1] + U[x+1]) + U[y-1]) + U[y+1]) + U[z-1]) + U[z+1]) + H * f)
//
// with S = 1/6 and H = h^2 rounded to the element type once, on the host, in exactly this order
// and without fused multiply-add, in the CPU reference and in every kernel. Boundary nodes keep
// their values.

#include <cstddef>
#include <vector>

#include "ziggurat/matrix/grid.hpp"

namespace ziggurat {

/// S = 1/6 and H = h^2 in the element type.
template <class T>
struct JacobiCoefficients {
  T sixth;
  T h2;
};

/// The coefficients for spacing h. Throws InvalidArgument unless h is positive and finite and h^2
/// is a normal number of T.
template <class T>
JacobiCoefficients<T> jacobi_coefficients(double spacing);

/// Throws InvalidArgument unless the grid is 3D with at least 3 nodes on every axis; `who` names
/// the caller in the message.
void require_poisson_grid(const std::vector<std::size_t>& extents, const char* who);

/// The larger of two update sizes, where NaN wins: a diverged field must never look converged.
double larger_update(double a, double b);

/// CPU reference: `sweeps` Jacobi sweeps of `u` in place (f: the right-hand side on the same
/// grid; its boundary values are not used). Returns the largest |U' - U| of the last sweep (NaN
/// if a value is NaN).
template <class T>
double jacobi_sweeps_reference(Grid<T>& u, const Grid<T>& f, double spacing, std::size_t sweeps);

/// The true residual max |f + Laplace_h u| over the interior, in double, on every core (NaN if
/// a value is NaN).
template <class T>
double poisson_residual(const Grid<T>& u, const Grid<T>& f, double spacing);
/// The same for two arrays of a grid of `extents`.
template <class T>
double poisson_residual(const std::vector<std::size_t>& extents, const T* u, const T* f, double spacing);

/// A problem whose discrete solution is known: u* = sin(0.3 x) cos(0.2 y) + sin(0.1 z + 0.5) in
/// grid coordinates, f = -Laplace_h u* computed in double and rounded to T. `initial` holds u* on
/// the boundary and zero inside.
template <class T>
struct ManufacturedPoisson {
  Grid<T> solution, rhs, initial;
};

template <class T>
ManufacturedPoisson<T> manufactured_poisson(const std::vector<std::size_t>& extents, double spacing);

}  // namespace ziggurat
