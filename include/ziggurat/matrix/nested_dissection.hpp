#pragma once
// Nested dissection of a square block CSR matrix (method notes, section 3: the bordered block
// structure of Karpenko and Chernov's triangular solves): the block rows are split by vertex
// separators of the pattern made symmetric (METIS), recursively, into subdomains (the leaves)
// that share no coupling, bordered by the separators. The ordering puts every leaf's rows
// together first, then the separators, each after both of its children, so that neither a
// factorisation nor its triangular solves ever couple two leaves (their fill stays inside the leaf
// and the separators above it).
#include <cstddef>
#include <vector>

#include "ziggurat/matrix/sparse.hpp"

namespace ziggurat::sparse {

/// The dissection tree as its ordering lays it out: node t holds the new block rows
/// [node_ptr[t], node_ptr[t + 1]). Nodes are ordered by stage (0 for the leaves, 1 + the larger
/// stage of its two children for a separator) and, inside a stage, from left to right; nodes of
/// one stage are never coupled, so each stage can be processed node by node in parallel.
struct DissectionTree {
  std::vector<Index> old_of_new;   ///< new block row r is old block row old_of_new[r]
  std::vector<Index> node_ptr{0};  ///< nodes() + 1 entries
  std::vector<Index> stage;        ///< per node
  std::size_t leaves = 0;          ///< the nodes of stage 0
  std::size_t nodes() const noexcept { return node_ptr.size() - 1; }
};

/// The depth used when none is given: the largest d <= 8 whose 2^d leaves keep at least 64 block
/// rows each (a property of the matrix alone, so the ordering is the same on every machine).
std::size_t default_dissection_depth(std::size_t block_rows);

/// Recursive bisection by METIS_ComputeVertexSeparator (fixed seed: the same tree on every run)
/// to `depth` levels (0: default_dissection_depth), a part of fewer than 8 block rows, or one
/// whose separator would leave a side empty, is a leaf. Diagonal blocks and the directions of the
/// couplings do not matter. InvalidArgument unless the block structure is square; Error naming
/// METIS' status when METIS fails.
template <class T>
DissectionTree nested_dissection(const Bsr<T>& a, std::size_t depth = 0);

}  // namespace ziggurat::sparse
