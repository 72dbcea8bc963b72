#pragma once
// Orderings of the block rows of a square block CSR matrix for factorisations and triangular
// solves: level sets (rows that can be processed at once because they depend only on earlier
// levels) and a multicolour reordering (rows of one colour share no coupling, so a factorisation
// in colour order has as many levels as colours). Host algorithms on the pattern alone; the
// device kernels that follow these schedules are in ops/block_ilu.hpp.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "ziggurat/matrix/sparse.hpp"

namespace ziggurat::sparse {

/// Block rows grouped into levels, level after level; inside a level rows are increasing.
struct LevelSets {
  std::vector<Index> level_ptr{0};  ///< levels() + 1 entries
  std::vector<Index> rows;          ///< every block row once
  std::size_t levels() const noexcept { return level_ptr.size() - 1; }
  /// The most rows in one level.
  std::size_t widest() const noexcept;
};

/// Levels of the lower triangle (forward substitution, and the rows of an ILU(0) factorisation):
/// block row i depends on every block column j < i stored in row i. InvalidArgument unless the
/// block structure is square.
template <class T> LevelSets lower_levels(const Bsr<T>& a);
/// Levels of the upper triangle (backward substitution): row i depends on every stored j > i;
/// level 0 is solved first.
template <class T> LevelSets upper_levels(const Bsr<T>& a);
/// The level sets of both triangles of one matrix.
struct TriangleLevels {
  LevelSets lower, upper;
};
/// lower_levels and upper_levels, the upper computed on another thread meanwhile: each has serial
/// passes (its scan, its arrays' first touch) that the other's then overlaps.
template <class T> TriangleLevels lower_and_upper_levels(const Bsr<T>& a);

/// How the block rows of a system are ordered for a factorisation (method notes, section 3).
enum class Ordering {
  natural,  ///< as given; the device still processes each level's rows at once
  levels,   ///< renumbered level by level (the same factors in exact arithmetic when the pattern is
            ///< symmetric; rows of a level adjacent in memory)
  colours,  ///< multicolour: rows of one colour contiguous, few levels, more iterations
  block_colours,  ///< block multicolour (Iwashita et al.): aggregates of neighbouring rows coloured,
                  ///< natural order inside an aggregate: levels and iterations between the two
  nested_dissection,  ///< bordered blocks (nested_dissection.hpp, METIS): subdomains first, then their
                      ///< separators; a factorisation with fill (ILU2) stays inside them
  automatic,  ///< one of the above, chosen by whoever factorises (the Krylov solver's rule,
              ///< solver/krylov.hpp); make_ordering refuses it
};
const char* to_string(Ordering ordering);
/// "natural", "levels", "colours", "block-colours" ("colors" too), "nested-dissection" or "auto";
/// InvalidArgument otherwise.
Ordering parse_ordering(std::string_view text);

/// Block rows per aggregate of the block-colours ordering, by default.
constexpr std::size_t kDefaultAggregate = 8;

/// A renumbering of block rows (and, symmetrically, block columns): new row r is old row
/// old_of_new[r]. Empty means the identity.
struct Permutation {
  std::vector<Index> old_of_new;
  bool identity() const noexcept { return old_of_new.empty(); }
};

/// The colour of every block row from a greedy colouring of the pattern made symmetric (rows i
/// and j conflict when block (i, j) or (j, i) is stored), rows taken in natural order, each the
/// smallest colour no conflicting row has.
template <class T> std::vector<Index> greedy_colours(const Bsr<T>& a);

/// The permutation of `ordering` (identity for natural); `groups`, when given, receives the
/// number of colours (colours, block colours), levels (levels ordering) or subdomains (the leaves
/// of nested dissection, at default_dissection_depth), or 0 for natural. Block
/// colours: aggregates of at most `aggregate` block rows, each grown breadth-first over the
/// symmetric pattern from the first row not yet taken; the aggregates coloured greedily (two
/// conflict when any of their rows do); rows ordered by colour, aggregate and then naturally. A
/// padded last block row (rows not a multiple of b) is kept last.
template <class T>
Permutation make_ordering(const Bsr<T>& a, Ordering ordering, std::size_t* groups = nullptr,
                          std::size_t aggregate = kDefaultAggregate);

/// P A P^T: block rows and block columns renumbered; columns stay sorted inside each row.
/// InvalidArgument unless the block structure is square and p fits it.
template <class T> Bsr<T> permute(const Bsr<T>& a, const Permutation& p);
/// x renumbered by blocks of b rows, k interleaved vectors: new block r is old block
/// old_of_new[r]. x holds old_of_new.size() * b * k values (InvalidArgument otherwise).
template <class T>
std::vector<T> permute_rows(const std::vector<T>& x, const Permutation& p, std::size_t b, std::size_t k);
/// The inverse of permute_rows: old block old_of_new[r] is new block r.
template <class T>
std::vector<T> unpermute_rows(const std::vector<T>& x, const Permutation& p, std::size_t b, std::size_t k);

}  // namespace ziggurat::sparse
