#pragma once
// Finite-element operators given element by element (method notes, section 4): m element matrices
// L_i (l x l, symmetric) with index vectors V_i, the global DOF of each local DOF; a negative index
// marks a constrained DOF, whose row and column are dropped. The operator is
// K = sum_i P_i^T L_i P_i, never assembled unless asked for (assemble_csr / assemble_bsr).
//
// Sets of k vectors are interleaved (a dofs x k row-major array), as everywhere in ziggurat. The
// host functions here are the references the device kernels (ops/ebe.hpp) are tested against and
// the multithreaded CPU route the benchmarks compare with. They take a set that passes validate(),
// and check themselves only what keeps them in bounds (l, the array sizes, dofs, every index below
// dofs; InvalidArgument naming the element), not the values.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "ziggurat/matrix/sparse.hpp"

namespace ziggurat::fem {

/// How element matrices are stored: whole (l x l row-major), or as packed upper triangles, row by
/// row: L(0,0), L(0,1), ..., L(0,l-1), L(1,1), ..., L(l-1,l-1), l(l+1)/2 values.
enum class ElementStorage { full, upper };

template <class T>
struct ElementSet {
  std::size_t dofs = 0;          ///< v: the global (free) DOFs; every index is below it
  std::size_t element_size = 0;  ///< l: local DOFs of every element
  ElementStorage storage = ElementStorage::upper;
  std::vector<T> matrices;              ///< count() * stored_per_element() values, element after element
  std::vector<std::int32_t> indices;    ///< count() * l global DOFs; negative: constrained (dropped)

  std::size_t count() const noexcept { return element_size == 0 ? 0 : indices.size() / element_size; }
  std::size_t stored_per_element() const noexcept {
    return storage == ElementStorage::full ? element_size * element_size : element_size * (element_size + 1) / 2;
  }
};

/// Throws InvalidArgument naming the first problem: l = 0 or above kMaxElementSize, array sizes that
/// do not match count() and l, dofs = 0 or above 2^31 - 1, an index >= dofs, a DOF listed twice in
/// one element, a NaN or infinite value, or (full storage) an element matrix that is not symmetric:
/// |L(r,c) - L(c,r)| > symmetry_tolerance * max |L_i| names the element and the pair.
inline constexpr std::size_t kMaxElementSize = 64;
template <class T>
void validate(const ElementSet<T>& elements, double symmetry_tolerance = 1e-12);

/// The same operator with upper-triangle storage (the upper triangles of full matrices are kept;
/// validate() first to know they were symmetric). A set already upper is returned as it is.
template <class T>
ElementSet<T> to_upper(const ElementSet<T>& elements);

/// L_i(r, c) of element i, from either storage; InvalidArgument outside the set.
template <class T>
T element_entry(const ElementSet<T>& elements, std::size_t element, std::size_t r, std::size_t c);

/// Y = K X on the host for k vectors (x: dofs * k interleaved; InvalidArgument otherwise), on every
/// core. Each element's product L_i X_i is formed in T and added into Y colour by colour of
/// colour_elements(), the elements of one colour (which share no DOF) in parallel: the same bits on
/// any number of threads.
template <class T>
std::vector<T> multiply(const ElementSet<T>& elements, const std::vector<T>& x, std::size_t k);

/// K+ = X^T K X = sum_i X_i^T L_i X_i (k x k, row-major, symmetric) on every host core. Elements go
/// in chunks of kProjectionChunk, each chunk summed in element order in T, the chunk sums added in
/// chunk order in double: the same bits on any number of threads.
inline constexpr std::size_t kProjectionChunk = 256;
template <class T>
std::vector<double> project(const ElementSet<T>& elements, const std::vector<T>& x, std::size_t k);

/// The diagonal of K (dofs values).
template <class T>
std::vector<T> diagonal(const ElementSet<T>& elements);

/// True when every element matrix is diagonal (a lumped mass): K is then diagonal(elements).
template <class T>
bool is_diagonal(const ElementSet<T>& elements);

/// K assembled: CSR with sorted columns, every entry summed over its elements in element order (in
/// T). InvalidArgument when K would have 2^32 or more entries.
template <class T>
sparse::Csr<T> assemble_csr(const ElementSet<T>& elements);
/// The same as block CSR with b x b blocks (b = DOFs per node, 1..16).
template <class T>
sparse::Bsr<T> assemble_bsr(const ElementSet<T>& elements, std::size_t block_size);
/// Only K's b x b diagonal blocks (DOFs d and e with d / b == e / b), as block CSR with one block
/// per block row, summed in element order like assemble_bsr: what Jacobi and block Jacobi need of a
/// matrix-free K (solver/krylov.hpp). InvalidArgument for b outside 1..16.
template <class T>
sparse::Bsr<T> assemble_block_diagonal(const ElementSet<T>& elements, std::size_t block_size);

/// Elements in groups that share no DOF (constrained DOFs do not count), so that the elements of one
/// group can add into Y at the same time without atomics. Greedy, in element order: each element
/// takes the lowest colour none of its DOFs has yet. InvalidArgument for 2^32 or more elements.
struct ElementColouring {
  std::vector<std::uint32_t> order;        ///< element numbers, colour after colour, ascending inside one
  std::vector<std::size_t> colour_start;   ///< colours + 1 offsets into order
  std::size_t colours() const noexcept { return colour_start.empty() ? 0 : colour_start.size() - 1; }
};
template <class T>
ElementColouring colour_elements(const ElementSet<T>& elements);

}  // namespace ziggurat::fem
