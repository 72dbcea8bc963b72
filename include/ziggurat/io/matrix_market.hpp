#pragma once
// Matrix Market files (https://math.nist.gov/MatrixMarket/formats.html), coordinate format:
// fields real, integer and pattern; symmetry general, symmetric and skew-symmetric.
//
// The reader streams the file in large chunks and parses numbers in place into flat index and
// value arrays (no object per entry), then sorts them into CSR, summing duplicates. Symmetric and
// skew-symmetric files are expanded to the full matrix. Every malformed input is an IoError that
// names the file and the line, "<name>:<line>: <what>": a bad banner, a size line with wrong counts,
// an index out of range, a non-numeric or non-finite value, an entry above the diagonal of a
// symmetric file (or on it, for skew-symmetric), too few or too many entries, a truncated file.
//
// What the reader accepts beyond the letter of the format: banner words in any case, comment
// lines ('%') and blank lines anywhere after the banner, CRLF line ends, tabs, a '+' before a
// value. What it refuses: the array format, complex and hermitian files, NaN and infinity, rows,
// columns or (expanded) entries beyond 32-bit indices, more entries than the matrix has places
// (duplicates included). A size line declaring a matrix whose arrays exceed the host's memory is
// refused there, before anything is allocated (InvalidArgument naming the file and the line).
#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include "ziggurat/matrix/sparse.hpp"

namespace ziggurat::sparse {

enum class MatrixMarketField { real, integer, pattern };
enum class MatrixMarketSymmetry { general, symmetric, skew_symmetric };

/// What the banner and size line of a file say.
struct MatrixMarketHeader {
  MatrixMarketField field = MatrixMarketField::real;
  MatrixMarketSymmetry symmetry = MatrixMarketSymmetry::general;
  std::size_t rows = 0, cols = 0;
  std::size_t entries = 0;  ///< as the size line gives them (one triangle for symmetric files)
};

template <class T>
struct MatrixMarketMatrix {
  MatrixMarketHeader header;
  /// The full matrix (both triangles; skew-symmetric mirrors negated), columns sorted inside each
  /// row. Duplicates of an entry are summed in T, in file order; pattern values are 1.
  Csr<T> matrix;
};

/// Reads a file. `T` is float or double; real values are rounded once, correctly, from their
/// decimal text to T (a nonzero value that would round to infinity or to zero is an error);
/// integer values are parsed as 64-bit integers and rounded once to T.
template <class T>
MatrixMarketMatrix<T> read_matrix_market(const std::filesystem::path& path);
/// The banner and size line of a file, read without its entries (what a command checks before it
/// reads a large matrix); the same errors as read_matrix_market() for those lines.
MatrixMarketHeader read_matrix_market_header(const std::filesystem::path& path);
/// Parses the text of a file already in memory; `name` stands for the file in error messages.
template <class T>
MatrixMarketMatrix<T> parse_matrix_market(std::string_view text, std::string_view name = "<memory>");

/// Writes `a` as "coordinate real general", or as "coordinate real symmetric": the lower triangle
/// only, for a square matrix that sparse::asymmetry() finds symmetric (InvalidArgument naming the
/// first asymmetric pair otherwise; an explicitly stored zero above the diagonal without a stored
/// mirror is not written, and one below comes back mirrored), with
/// a "% written by ziggurat <version>" comment, 1-based indices, rows in order, and each value
/// as the shortest decimal that reads back to the same T (std::to_chars). InvalidArgument also
/// for skew_symmetric, a non-finite value or an inconsistent Csr (sizes, column order or range).
/// The text is built in memory, then written atomically (temporary file, fsync, rename).
template <class T>
void write_matrix_market(const std::filesystem::path& path, const Csr<T>& a,
                         MatrixMarketSymmetry symmetry = MatrixMarketSymmetry::general);
/// The same as text.
template <class T>
std::string format_matrix_market(const Csr<T>& a,
                                 MatrixMarketSymmetry symmetry = MatrixMarketSymmetry::general);

}  // namespace ziggurat::sparse
