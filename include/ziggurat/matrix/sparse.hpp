#pragma once
// Sparse matrices on the host: CSR, block CSR (BSR) and diagonal format (DIA), conversions
// between them, and the sequential reference products the device kernels are tested against
// (method notes, sections 3 and 5).
//
// Indices are 32-bit (what the kernels read); a matrix with 2^32 or more stored values or rows
// is refused with InvalidArgument. Sets of k vectors are stored interleaved: an n x k row-major
// array, element i of all k vectors contiguous (method notes, section 3).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ziggurat::sparse {

using Index = std::uint32_t;

/// Compressed sparse rows. Column indices inside a row are strictly increasing (no duplicates);
/// explicitly stored zeros are allowed.
template <class T>
struct Csr {
  std::size_t rows = 0, cols = 0;
  std::vector<Index> row_ptr{0};  ///< rows + 1 entries, row_ptr[0] = 0
  std::vector<Index> col;         ///< row_ptr[rows] entries
  std::vector<T> values;          ///< row_ptr[rows] entries
  std::size_t nonzeros() const noexcept { return values.size(); }
};

/// Block CSR with dense b x b blocks (b = 1..16), row-major inside a block. The matrix is padded
/// with zeros to block_rows * b rows and block_cols * b columns when rows or cols are not
/// multiples of b. BSR with b = 1 is CSR, array for array.
template <class T>
struct Bsr {
  std::size_t rows = 0, cols = 0;  ///< the matrix's own size, before padding
  std::size_t block_size = 1;      ///< b
  std::size_t block_rows = 0, block_cols = 0;  ///< ceil(rows / b), ceil(cols / b)
  std::vector<Index> block_row_ptr{0};  ///< block_rows + 1 entries
  std::vector<Index> block_col;         ///< strictly increasing inside a block row
  std::vector<T> values;                ///< blocks() * b * b values, block after block
  std::size_t blocks() const noexcept { return block_col.size(); }
};

/// Diagonal format: diagonal d holds A(i, i + offsets[d]) at values[d * rows + i] (zero where
/// the column falls outside the matrix). Offsets are strictly increasing.
///
/// Symmetric half-stored form (method notes, section 5): only the main diagonal and the upper
/// diagonals (offsets >= 0) are stored, and each stored off-diagonal is used twice, as
/// A(i, i + o) and A(i + o, i).
template <class T>
struct Dia {
  std::size_t rows = 0, cols = 0;
  bool symmetric = false;
  std::vector<std::int32_t> offsets;
  std::vector<T> values;  ///< offsets.size() * rows values, diagonal after diagonal
};

/// Another library's index array (SciPy's indptr or indices: 32- or 64-bit signed integers) as
/// the library's indices, converted on every core. InvalidArgument names `what` and the first
/// entry outside 0..2^32 - 1.
template <class I> std::vector<Index> copy_indices(const I* from, std::size_t count, const char* what);
/// `count` values copied on every core (the single copy a foreign matrix's values take).
template <class T> std::vector<T> copy_values(const T* from, std::size_t count);

/// How another library's CSR index arrays stand, row pointers already valid (ptr[0] = 0,
/// non-decreasing, `lines` + 1 of them): whether every index lies in 0..length - 1, and whether
/// each line's indices increase strictly (sorted, no duplicates: SciPy's canonical format).
/// Checked on every core, in place of a pass on one thread.
struct IndexOrder {
  bool in_range = true;
  bool strictly_increasing = true;
};
template <class I> IndexOrder index_order(const I* ptr, std::size_t lines, const I* indices, std::size_t length);

/// Throws InvalidArgument naming the first inconsistency (array sizes, pointers not
/// non-decreasing, a column out of range or not strictly increasing, b outside 1..16, a symmetric
/// DIA with a negative offset or a non-square shape, a size or stored-value count above 2^32 - 1).
/// Values that lie outside the matrix (BSR padding, DIA values whose column falls outside) must be
/// zero, since kernels may read them.
template <class T> void validate(const Csr<T>& a);
template <class T> void validate(const Bsr<T>& a);
template <class T> void validate(const Dia<T>& a);

/// A caller's word that the matrix it passes has just passed validate() unchanged: the functions
/// that take it skip that check. The library's set-up checks a matrix once and hands it on with
/// this; a matrix that has not passed validate() is undefined behaviour there.
struct Validated {};

/// CSR -> BSR with blocks of b x b: every block that holds a stored entry is kept whole, the
/// rest of it zero-filled (also past the last row or column when b does not divide the size).
/// InvalidArgument when b is outside 1..16. On every core.
template <class T> Bsr<T> to_bsr(const Csr<T>& a, std::size_t block_size);
/// The same from a CSR that is no longer needed: for b = 1 its arrays move into the result.
template <class T> Bsr<T> to_bsr(Csr<T>&& a, std::size_t block_size);
/// BSR -> CSR: every value of every stored block inside the matrix's own size is kept, zeros
/// included (so to_csr(to_bsr(a, b)) has the pattern of a's blocks).
template <class T> Csr<T> to_csr(const Bsr<T>& a);

/// What a block size costs: stored values (blocks * b * b) over the matrix's stored entries.
struct BlockFill {
  std::size_t block_size = 1;
  std::size_t blocks = 0;
  double fill = 1;  ///< >= 1; 1 when the blocks hold nothing but stored entries
};
/// The fill of every b in 1..max_block (counting only, no conversion), in order of b; max_block
/// is 1..16. A matrix without stored entries has fill 1 at every b.
template <class T>
std::vector<BlockFill> block_fills(const Csr<T>& a, std::size_t max_block = 16);
/// The block size to use: the largest b in 2..max_block whose fill is at most least + `tolerance`
/// (an absolute tolerance >= 0), least being the least fill over b = 2..max_block (ties go to the
/// larger block, which moves fewer indices); or 1 when that least fill exceeds `max_fill` (blocks
/// would mostly move zeros), or when max_block is 1. On every core; from 65,536 rows, a block size
/// whose fill over every 61st block row exceeds 1.25 max_fill is dropped without counting the rest
/// (so a scalar matrix costs about one pass over its entries, its validation's).
template <class T>
std::size_t propose_block_size(const Csr<T>& a, std::size_t max_block = 16,
                               double tolerance = 0.0, double max_fill = 1.5);

/// How `a` fails to be symmetric, or "" when it is. ziggurat's one symmetry rule (to_dia's
/// symmetric form and the Matrix Market writer both apply it): A(i, j) == A(j, i) for every
/// stored entry, an entry that is not stored counting as zero, so an explicitly stored zero needs
/// no stored mirror. The text names the first asymmetric pair in row order, 0-based, e.g.
/// "A(3, 5) = 7.5 but A(5, 3) = -1.375" or "A(4, 6) = -1.5 but A(6, 4) = 0 (not stored)".
/// InvalidArgument when a is not square or not a valid Csr.
template <class T> std::string asymmetry(const Csr<T>& a);

/// How far a square block matrix is from symmetric: ||A - A^T||_F / ||A + A^T||_F, a block with no
/// stored mirror counting against zeros. 0 for a symmetric matrix, 1 for a skew-symmetric one (and
/// for the zero matrix, by convention 0). Summed chunk by chunk in a fixed order on every core, so
/// the value does not depend on the number of threads. InvalidArgument unless a is a valid square
/// Bsr.
template <class T> double skewness(const Bsr<T>& a);
/// The same for a matrix that has passed validate() (Validated).
template <class T> double skewness(const Bsr<T>& a, Validated);

/// Whether every row of a square matrix that has passed validate() is weakly diagonally dominant,
/// |a_rr| >= sum over c != r of |a_rc| (scalar entries, whatever the block size), on every core.
template <class T> bool diagonally_dominant(const Bsr<T>& a, Validated);

/// CSR -> DIA. Every diagonal holding a stored entry is kept. Throws InvalidArgument saying how
/// many diagonals the band has and what the storage would be when offsets.size() * rows exceeds
/// `max_fill` times the stored entries: such a band is too wide to be worth it (use CSR or BSR).
/// With `symmetric`, a must be square and symmetric (asymmetry(); InvalidArgument naming the first
/// asymmetric pair otherwise), and only offsets >= 0 are stored.
template <class T>
Dia<T> to_dia(const Csr<T>& a, bool symmetric = false, double max_fill = 3.0);

/// Sequential reference products Y = A X with X (a.cols x k) and Y (a.rows x k) interleaved
/// (row-major); k >= 1, and x must hold a.cols * k values (InvalidArgument otherwise). Each row
/// sums its terms in double (for float input too) in column order: the storage order of CSR and
/// BSR (blocks in order, then the columns inside a block); DIA goes by offset, the symmetric form
/// taking its mirrored terms A(i, i - o) first. So the three agree exactly on the same matrix
/// (the explicit zeros of fill add nothing while x is finite).
template <class T> std::vector<T> multiply(const Csr<T>& a, const std::vector<T>& x, std::size_t k = 1);
template <class T> std::vector<T> multiply(const Bsr<T>& a, const std::vector<T>& x, std::size_t k = 1);
template <class T> std::vector<T> multiply(const Dia<T>& a, const std::vector<T>& x, std::size_t k = 1);

/// Row-length statistics in blocks per block row (entries per row for b = 1), which the kernel
/// choice depends on.
struct RowStats {
  std::size_t rows = 0;  ///< block rows
  double mean = 0;
  std::size_t max = 0;
  std::size_t empty = 0;  ///< block rows without blocks
};
template <class T> RowStats row_stats(const Bsr<T>& a);
/// The same from row pointers alone (a CSR's row_ptr gives entries per row).
RowStats row_stats(const std::vector<Index>& row_ptr);

/// A 3D seven-point stencil matrix of nx * ny * nz block rows with b x b blocks (a test and
/// benchmark matrix: the structure of method notes section 3's finite-volume systems). Block row
/// (x, y, z) is x + nx * (y + ny * z); it couples to itself and its up to 6 neighbours, block
/// columns increasing. Values, in storage order, are (r >> 40) / 2^23 - 1 for successive draws r
/// of std::mt19937_64(seed): multiples of 2^-23 in [-1, 1), exact in float. The diagonal entries
/// of the diagonal blocks then get 7 * b added (rounded once to T; the only values where float
/// and double matrices differ), so every |A(i, i)| >= 7b - 1 >= the sum of the row's other |values|.
template <class T>
Bsr<T> seven_point_bsr(std::size_t nx, std::size_t ny, std::size_t nz, std::size_t block_size,
                       std::uint64_t seed = 1);

/// A 3D convection-diffusion block system on seven_point_bsr's pattern, the harder benchmark and
/// test system: a Laplacian with Dirichlet faces (6 on the diagonal, -1 to each neighbour, times
/// the b x b identity), upwind convection along +x, +y and +z (the upstream neighbours weigh
/// -1.5, the diagonal gains 1.5), and a weak random coupling inside and between the blocks
/// (multiples of 2^-9 in [-1/32, 1/32) on every entry, the same draws in float and double, every
/// value exact in float). Each diagonal entry is 7.5 plus the |coupling| of its row, so the matrix
/// is nonsymmetric and weakly diagonally dominant (strictly in the rows of the faces): Krylov
/// iterations grow with the grid like those of a discretised PDE, unlike seven_point_bsr's.
template <class T>
Bsr<T> convection_diffusion_bsr(std::size_t nx, std::size_t ny, std::size_t nz, std::size_t block_size,
                                std::uint64_t seed = 1);

/// (A + A^T) / 2 of a square block CSR matrix whose block pattern is symmetric (InvalidArgument
/// naming a block without its mirror otherwise): block (i, j) becomes (A_ij + A_ji^T) / 2. Of
/// seven_point_bsr's matrices it gives symmetric positive definite ones (diagonally dominant), in
/// float and double alike (halves of multiples of 2^-23 in [-1, 1) are exact).
template <class T>
Bsr<T> symmetric_part(const Bsr<T>& a);

}  // namespace ziggurat::sparse
