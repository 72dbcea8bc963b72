#pragma once
// Generated 3D linear-elastic models to run the element-by-element operators and the eigen-solver
// on: a box of nx x ny x nz 8-node bricks (trilinear hexahedra), isotropic material, faces clamped
// on request. Stiffness 24 x 24 per element by 2x2x2 Gauss quadrature, mass consistent (the same
// quadrature of rho N^T N) or lumped (row sums on the diagonal).
//
// Nodes are numbered x fastest: node (i, j, l) is i + (nx+1) (j + (ny+1) l). Each node has DOFs
// ux, uy, uz; the free DOFs are numbered node after node, skipping clamped nodes, so a node's three
// DOFs are consecutive and block CSR with b = 3 has one block row per free node. An element's local
// DOFs are its nodes in the order (0,0,0) (1,0,0) (1,1,0) (0,1,0) (0,0,1) (1,0,1) (1,1,1) (0,1,1)
// (offsets in x, y, z), three DOFs each: local DOF 3 n + d.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "ziggurat/matrix/elements.hpp"

namespace ziggurat::fem {

struct Material {
  double young = 210e9;   ///< E, Pa
  double poisson = 0.3;   ///< nu, in (-1, 0.5)
  double density = 7850;  ///< rho, kg/m^3
};

/// Box [0, lx] x [0, ly] x [0, lz] cut into nx x ny x nz equal bricks.
struct BoxMesh {
  double lx = 1, ly = 1, lz = 1;
  std::size_t nx = 1, ny = 1, nz = 1;
  std::size_t nodes() const noexcept { return (nx + 1) * (ny + 1) * (nz + 1); }
  std::size_t elements() const noexcept { return nx * ny * nz; }
};

/// Faces whose nodes are clamped (all three DOFs constrained), as a bit set.
enum Face : unsigned { x_min = 1u, x_max = 2u, y_min = 4u, y_max = 8u, z_min = 16u, z_max = 32u };

enum class MassKind { consistent, lumped };

/// The element matrices of one brick of sides hx, hy, hz (576 values, row-major, symmetric to the
/// last bit). InvalidArgument for a non-positive side, E or rho, or nu outside (-1, 0.5).
std::array<double, 576> brick_stiffness(double hx, double hy, double hz, const Material& material);
std::array<double, 576> brick_mass(double hx, double hy, double hz, double density, MassKind kind);

template <class T>
struct ElasticModel {
  BoxMesh box;
  Material material;
  unsigned clamped = 0;                 ///< Face bits
  ElementSet<T> stiffness;              ///< upper storage, l = 24
  ElementSet<T> mass;                   ///< the same indices; diagonal element matrices when lumped
  std::vector<std::int32_t> node_dofs;  ///< 3 per node: its free DOF numbers, -1 where clamped
};

/// The model of a box. Every element of a box has the same matrices, computed once in double and
/// copied (rounded to T) m times, on every core: a model of millions of DOF takes seconds. Throws
/// InvalidArgument for a zero division, a non-positive length, E or rho, nu outside (-1, 0.5), more
/// than 2^31 - 1 free DOFs, more elements than the host's memory holds (checked before any is
/// made), no clamped face (the stiffness would be singular: rigid-body motion), a bit that is no
/// Face, or every node clamped.
template <class T>
ElasticModel<T> box_model(const BoxMesh& box, const Material& material, unsigned clamped_faces,
                          MassKind mass = MassKind::consistent);

/// A cantilever along x clamped at x = 0: box_model(box, material, Face::x_min, mass).
template <class T>
ElasticModel<T> cantilever(const BoxMesh& box, const Material& material, MassKind mass = MassKind::consistent);

/// "LxWxH:nx,ny,nz" (lengths in metres, e.g. "2x0.1x0.1:40,2,2") as a BoxMesh; InvalidArgument
/// naming the problem otherwise.
BoxMesh parse_box(std::string_view text);
/// "E,nu,rho" (e.g. "210e9,0.3,7850"); InvalidArgument naming the problem otherwise.
Material parse_material(std::string_view text);

/// The Euler-Bernoulli bending frequencies (Hz) of a clamped-free beam of length L, the first n:
/// f_j = (beta_j L)^2 / (2 pi L^2) sqrt(E I / (rho A)), with beta_j L the roots of
/// 1 + cos(x) cosh(x) = 0 (1.8751, 4.6941, 7.8548, ...), for the second moment of area i_area and
/// the section area.
std::vector<double> euler_bernoulli_frequencies(double length, double young, double density, double i_area,
                                                double area, std::size_t n);

}  // namespace ziggurat::fem
