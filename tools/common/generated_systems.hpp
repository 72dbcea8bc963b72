#pragma once
// The generated block systems that `ziggurat solve --system` and `ziggurat bench solve --systems`
// name: one list of names, one error for an unknown one.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ziggurat/base/error.hpp"
#include "ziggurat/matrix/sparse.hpp"

namespace ziggurat::cli {

/// InvalidArgument naming `option` unless kind is "convection" or "dominant".
inline void check_system_name(const std::string& kind, const char* option) {
  if (kind != "convection" && kind != "dominant") {
    throw InvalidArgument(std::string(option) + " takes dominant or convection, not '" + kind + "'");
  }
}

/// "convection": convection_diffusion_bsr (weakly dominant, iterations grow with the grid);
/// "dominant": seven_point_bsr (strongly dominant, a few iterations). Anything else is an
/// InvalidArgument naming `option`. grid holds NX, NY, NZ.
template <class T>
sparse::Bsr<T> generated_system(const std::string& kind, const std::vector<std::size_t>& grid, std::size_t b,
                                std::uint64_t seed, const char* option) {
  check_system_name(kind, option);
  return kind == "convection" ? sparse::convection_diffusion_bsr<T>(grid[0], grid[1], grid[2], b, seed)
                              : sparse::seven_point_bsr<T>(grid[0], grid[1], grid[2], b, seed);
}

}  // namespace ziggurat::cli
