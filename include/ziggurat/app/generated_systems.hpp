#pragma once
// The generated systems that `ziggurat solve --system` and `ziggurat bench solve --systems` name:
// one list of names, one error for an unknown one.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ziggurat/base/error.hpp"
#include "ziggurat/matrix/model_problems.hpp"
#include "ziggurat/matrix/sparse.hpp"

namespace ziggurat::app {

/// Whether `kind` names a model problem (matrix/model_problems.hpp), whose block size is its own.
inline bool is_model_problem(const std::string& kind) { return kind != "convection" && kind != "dominant"; }

/// InvalidArgument naming `option` unless kind is dominant, convection or a model problem.
inline void check_system_name(const std::string& kind, const char* option) {
  if (!is_model_problem(kind)) return;
  try {
    sparse::parse_model_problem(kind);
  } catch (const InvalidArgument&) {
    throw InvalidArgument(std::string(option) + " takes dominant, convection, laplace7, laplace27, anisotropic, "
                          "upwind or elasticity, not '" + kind + "'");
  }
}

/// "convection": convection_diffusion_bsr (weakly dominant, iterations grow with the grid);
/// "dominant": seven_point_bsr (strongly dominant, a few iterations), both of b x b blocks; a model
/// problem of its own block size, which b (0: not given) must then match. grid holds NX, NY, NZ.
/// InvalidArgument naming `option` for an unknown kind or a mismatched b.
template <class T>
sparse::Bsr<T> generated_system(const std::string& kind, const std::vector<std::size_t>& grid, std::size_t b,
                                std::uint64_t seed, const char* option) {
  check_system_name(kind, option);
  if (is_model_problem(kind)) {
    const sparse::ModelProblem problem = sparse::parse_model_problem(kind);
    const std::size_t own = sparse::model_problem_block_size(problem);
    if (b != 0 && b != own)
      throw InvalidArgument(std::string(option) + " " + kind + " has blocks of " + std::to_string(own) + ", not " +
                            std::to_string(b) + ": leave the block size out");
    return sparse::model_problem<T>(problem, grid[0], grid[1], grid[2]);
  }
  if (b == 0) throw InvalidArgument(std::string(option) + " " + kind + " needs a block size b (1 to 16)");
  return kind == "convection" ? sparse::convection_diffusion_bsr<T>(grid[0], grid[1], grid[2], b, seed)
                              : sparse::seven_point_bsr<T>(grid[0], grid[1], grid[2], b, seed);
}

}  // namespace ziggurat::app
