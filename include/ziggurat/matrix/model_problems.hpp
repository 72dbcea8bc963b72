#pragma once
// Model problems of PDE solvers, for benchmarks and tests of the sparse solvers on systems users
// bring: discretised operators on an nx x ny x nz grid of unknowns inside Dirichlet faces (the
// faces' values are known, so they are no unknowns), numbered x fastest. Scalar operators have
// one unknown a node (b = 1); 3D elasticity three (b = 3).
#include <cstddef>
#include <string_view>

#include "ziggurat/matrix/sparse.hpp"

namespace ziggurat::sparse {

enum class ModelProblem {
  laplace7,     ///< -Laplace u, seven points: 6 on the diagonal, -1 to each neighbour (SPD)
  laplace27,    ///< HPCG's 27-point operator: 26 on the diagonal, -1 to each of the 26 neighbours (SPD)
  anisotropic,  ///< -(u_xx + u_yy + 100 u_zz), seven points: coupling along z 100 times stronger (SPD)
  upwind,       ///< -Laplace u + 5 (u_x + u_y + u_z), first-order upwind: nonsymmetric M-matrix
  elasticity,   ///< linear elasticity of a steel cube of nx x ny x nz trilinear bricks (1 m side),
                ///< clamped at x = 0, assembled in blocks of 3 (SPD; fem::box_model)
};
const char* to_string(ModelProblem problem);
/// "laplace7", "laplace27", "anisotropic", "upwind" or "elasticity"; InvalidArgument otherwise.
ModelProblem parse_model_problem(std::string_view text);
/// 1, or 3 for elasticity.
std::size_t model_problem_block_size(ModelProblem problem);

/// The operator on nx x ny x nz nodes (elasticity: bricks, whose free nodes are the unknowns).
/// InvalidArgument for a zero extent or more than 2^31 - 1 unknowns. On every core.
template <class T>
Bsr<T> model_problem(ModelProblem problem, std::size_t nx, std::size_t ny, std::size_t nz);

}  // namespace ziggurat::sparse
