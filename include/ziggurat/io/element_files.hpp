#pragma once
// Element sets (matrix/elements.hpp) as a pair of NumPy .npy files: the element matrices, an
// (m, l, l) float32 or float64 array, and the DOF indices, an (m, l) int32 or int64 array whose
// negative entries mark constrained DOFs (read as -1). A mass matrix given element by element is a second
// matrices file with the same indices file.
#include <cstddef>
#include <filesystem>

#include "ziggurat/matrix/elements.hpp"

namespace ziggurat::fem {

/// The element set of two files, stored full and checked with validate(). dofs = 0 takes the
/// largest index + 1. IoError naming the file for a file that cannot be read, a matrices array that
/// is not (m, l, l), an indices array that is not (m, l) or holds an index above 2^31 - 1;
/// InvalidArgument naming both files when their m or l differ or validate() fails.
template <class T>
ElementSet<T> load_elements(const std::filesystem::path& matrices, const std::filesystem::path& indices,
                            std::size_t dofs = 0);

/// Writes `elements` (which must pass validate()) as the two files, each atomically: the matrices
/// as an (m, l, l) array of T (upper storage expanded), the indices as they are, int32 (m, l).
template <class T>
void save_elements(const std::filesystem::path& matrices, const std::filesystem::path& indices,
                   const ElementSet<T>& elements);

}  // namespace ziggurat::fem
