// The Matrix Market reader and writer: real files checked against a naive reader, symmetric and
// skew-symmetric expansion, duplicates, exact round trips, text fed in pieces of every size, a
// large file spanning several read chunks, and every kind of malformed input with its line.

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <sstream>

#include "../support/util.hpp"
#include "io/matrix_market.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/io/matrix_market.hpp"
#include "ziggurat/base/version.hpp"

using namespace ziggurat;
using namespace ziggurat::sparse;
using test::TempDir;

namespace {

const std::filesystem::path kMatrices = std::filesystem::path(ZIGGURAT_TEST_DATA_DIR) / "matrices";
const std::string kGeneral = "%%MatrixMarket matrix coordinate real general\n";
const std::string kSymmetric = "%%MatrixMarket matrix coordinate real symmetric\n";
const std::string kSkew = "%%MatrixMarket matrix coordinate real skew-symmetric\n";
const std::string kInteger = "%%MatrixMarket matrix coordinate integer general\n";
const std::string kPattern = "%%MatrixMarket matrix coordinate pattern general\n";

using Entries = std::map<std::pair<std::size_t, std::size_t>, double>;

// The entries of a file the simplest way (streams, a map; both triangles, duplicates summed),
// to check the reader against on files that are known to be well formed.
Entries naive_entries(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::string banner, line;
  std::getline(in, banner);
  const bool symmetric = banner.find(" symmetric") != std::string::npos;
  const bool pattern = banner.find(" pattern ") != std::string::npos;
  do {
    std::getline(in, line);
  } while (line[0] == '%');  // comments, up to the size line
  Entries entries;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::size_t row = 0, col = 0;
    double value = 1;
    fields >> row >> col;
    if (!pattern) fields >> value;
    entries[{row - 1, col - 1}] += value;
    if (symmetric && row != col) entries[{col - 1, row - 1}] += value;
  }
  return entries;
}

// Every stored entry, checking the CSR invariants on the way.
template <class T>
Entries entries_of(const Csr<T>& a) {
  REQUIRE(a.row_ptr.size() == a.rows + 1);
  REQUIRE(a.row_ptr.front() == 0);
  REQUIRE(a.row_ptr.back() == a.col.size());
  REQUIRE(a.values.size() == a.col.size());
  Entries entries;
  for (std::size_t row = 0; row < a.rows; ++row) {
    for (Index k = a.row_ptr[row]; k < a.row_ptr[row + 1]; ++k) {
      REQUIRE(a.col[k] < a.cols);
      if (k > a.row_ptr[row]) REQUIRE(a.col[k] > a.col[k - 1]);
      entries[{row, a.col[k]}] = a.values[k];
    }
  }
  return entries;
}

template <class T>
std::optional<T> at(const Csr<T>& a, std::size_t row, std::size_t col) {
  for (Index k = a.row_ptr[row]; k < a.row_ptr[row + 1]; ++k) {
    if (a.col[k] == col) return a.values[k];
  }
  return std::nullopt;
}

template <class T>
void check_identical(const Csr<T>& a, const Csr<T>& b) {
  CHECK(a.rows == b.rows);
  CHECK(a.cols == b.cols);
  CHECK(a.row_ptr == b.row_ptr);
  CHECK(a.col == b.col);
  REQUIRE(a.values.size() == b.values.size());
  CHECK(
      (a.values.empty() || std::memcmp(a.values.data(), b.values.data(), a.values.size() * sizeof(T)) == 0));
}

template <class T>
Csr<T> from_rows(std::size_t rows, std::size_t cols,
                 const std::vector<std::vector<std::pair<Index, T>>>& entries) {
  Csr<T> a;
  a.rows = rows;
  a.cols = cols;
  for (const auto& row : entries) {
    for (const auto& [col, value] : row) {
      a.col.push_back(col);
      a.values.push_back(value);
    }
    a.row_ptr.push_back(static_cast<Index>(a.col.size()));
  }
  return a;
}

template <class T = double>
void check_rejected(const std::string& text, const std::string& expected) {
  CAPTURE(text);
  CAPTURE(expected);
  CHECK_THROWS_WITH_AS(parse_matrix_market<T>(text, "bad.mtx"), doctest::Contains(expected.c_str()), IoError);
}

// The parser's result (or error message) when the text arrives in pieces of `piece` bytes.
template <class T>
std::string parse_in_pieces(std::string_view text, std::size_t piece, MatrixMarketMatrix<T>& result) {
  try {
    sparse::detail::MatrixMarketParser<T> parser("pieces.mtx");
    for (std::size_t at = 0; at < text.size(); at += piece) parser.feed(text.substr(at, piece));
    result = parser.finish();
    return {};
  } catch (const IoError& error) {
    return error.what();
  }
}

}  // namespace

TEST_CASE_TEMPLATE("Matrix Market: the real test files read as a naive reader sees them", T, float, double) {
  for (const char* name : {"bcsstk01.mtx", "can___24.mtx", "west0067.mtx", "fs_183_1.mtx"}) {
    CAPTURE(name);
    const auto read = read_matrix_market<T>(kMatrices / name);
    Entries expected = naive_entries(kMatrices / name);
    for (auto& [position, value] : expected) value = static_cast<T>(value);
    CHECK(entries_of(read.matrix) == expected);
  }
}

TEST_CASE_TEMPLATE("Matrix Market: bcsstk01 is expanded from its lower triangle", T, float, double) {
  const auto read = read_matrix_market<T>(kMatrices / "bcsstk01.mtx");
  CHECK(read.header.field == MatrixMarketField::real);
  CHECK(read.header.symmetry == MatrixMarketSymmetry::symmetric);
  CHECK(read.header.entries == 224);
  const auto& a = read.matrix;
  CHECK(a.rows == 48);
  CHECK(a.cols == 48);
  CHECK(a.nonzeros() == 2 * 224 - 48);  // 48 diagonal entries are not mirrored
  CHECK(at(a, 0, 0) == static_cast<T>(2.83226851852e+06));
  CHECK(at(a, 4, 0) == static_cast<T>(1.0e+06));  // "5 1 1.0e+06"
  CHECK(at(a, 0, 4) == static_cast<T>(1.0e+06));
  CHECK(at(a, 17, 16) == static_cast<T>(-1.09779731332e+08));
  CHECK(at(a, 16, 17) == static_cast<T>(-1.09779731332e+08));
  CHECK(at(a, 47, 47) == static_cast<T>(5.31278103775e+08));
  CHECK(at(a, 0, 1) == std::nullopt);
}

TEST_CASE("Matrix Market: pattern files hold ones, general files keep their comments out") {
  const auto pattern = read_matrix_market<float>(kMatrices / "can___24.mtx");
  CHECK(pattern.header.field == MatrixMarketField::pattern);
  CHECK(pattern.matrix.nonzeros() == 2 * 92 - 24);
  for (const float value : pattern.matrix.values) CHECK(value == 1.0f);
  CHECK(at(pattern.matrix, 5, 0) == 1.0f);  // "6 1"
  CHECK(at(pattern.matrix, 0, 5) == 1.0f);

  const auto west = read_matrix_market<double>(kMatrices / "west0067.mtx");
  CHECK(west.header.symmetry == MatrixMarketSymmetry::general);
  CHECK(west.matrix.rows == 67);
  CHECK(west.matrix.nonzeros() == 294);
  CHECK(at(west.matrix, 4, 0) == -0.2788416);  // "5 1 -.2788416"
  CHECK(at(west.matrix, 0, 4) == std::nullopt);
  CHECK(at(west.matrix, 54, 66) == 1.0);  // the last line, "55 67 1"

  const auto fs = read_matrix_market<double>(kMatrices / "fs_183_1.mtx");
  CHECK(fs.matrix.nonzeros() == 1069);
  CHECK(at(fs.matrix, 0, 0) == 0.002560366756349);
  CHECK(at(fs.matrix, 1, 0) == -1.1708957011e-07);
  CHECK(at(fs.matrix, 182, 182) == 2236.002525756);
}

TEST_CASE_TEMPLATE("Matrix Market: skew-symmetric files are mirrored with the sign flipped", T, float,
                   double) {
  const auto read = parse_matrix_market<T>(kSkew + "3 3 2\n2 1 5\n3 2 -1.5\n");
  CHECK(read.header.symmetry == MatrixMarketSymmetry::skew_symmetric);
  CHECK(entries_of(read.matrix) == Entries{{{1, 0}, 5}, {{0, 1}, -5}, {{2, 1}, -1.5}, {{1, 2}, 1.5}});
}

TEST_CASE("Matrix Market: duplicates are summed in file order, in both triangles of a symmetric file") {
  const auto general =
      parse_matrix_market<double>(kGeneral + "2 3 5\n1 1 1.5\n2 3 1\n1 1 2.25\n2 3 -4\n1 1 0.25\n");
  CHECK(entries_of(general.matrix) == Entries{{{0, 0}, 4}, {{1, 2}, -3}});
  CHECK(general.header.entries == 5);

  const auto symmetric = parse_matrix_market<double>(kSymmetric + "2 2 3\n2 1 1\n2 1 2\n2 2 7\n");
  CHECK(entries_of(symmetric.matrix) == Entries{{{1, 0}, 3}, {{0, 1}, 3}, {{1, 1}, 7}});

  // (0.1 + 0.2) + 0.3 and 0.1 + (0.2 + 0.3) differ in double: the file's order is kept.
  const auto ordered = parse_matrix_market<double>(kGeneral + "2 2 3\n1 1 0.1\n1 1 0.2\n1 1 0.3\n");
  CHECK(ordered.matrix.values == std::vector<double>{(0.1 + 0.2) + 0.3});
  // Also in a row whose entries come out of column order.
  const auto shuffled =
      parse_matrix_market<double>(kGeneral + "2 4 6\n1 4 0.1\n1 2 2\n1 4 0.2\n2 3 5\n1 1 3\n1 4 0.3\n");
  CHECK(shuffled.matrix.row_ptr == std::vector<Index>{0, 3, 4});
  CHECK(shuffled.matrix.col == std::vector<Index>{0, 1, 3, 2});
  CHECK(shuffled.matrix.values == std::vector<double>{3, 2, (0.1 + 0.2) + 0.3, 5});
  // Duplicates count as entries: no more of them than the matrix has places.
  check_rejected(kGeneral + "1 1 2\n1 1 1\n1 1 1\n",
                 "bad.mtx:2: size line: 2 entries do not fit in a 1 x 1 matrix");
}

TEST_CASE("Matrix Market: integer fields, comments, blank lines, CRLF, tabs, signs, any case") {
  const auto integer =
      parse_matrix_market<double>(kInteger + "2 2 3\n1 1 7\n2 1 -3\n2 2 +9007199254740993\n");
  CHECK(integer.header.field == MatrixMarketField::integer);
  CHECK(entries_of(integer.matrix) == Entries{{{0, 0}, 7}, {{1, 0}, -3}, {{1, 1}, 9007199254740992.0}});

  const std::string messy =
      "%%matrixmarket MATRIX Coordinate REAL General\r\n"
      "% a comment\r\n"
      "\r\n"
      "   \t\r\n"
      "  3\t4   3  \r\n"
      "% a comment between entries\r\n"
      "1 1 +2.5\r\n"
      "\r\n"
      "\t3  4\t.5e1\r\n"
      "2 2 -0\r\n";
  const auto read = parse_matrix_market<double>(messy);
  CHECK(read.matrix.rows == 3);
  CHECK(read.matrix.cols == 4);
  CHECK(entries_of(read.matrix) == Entries{{{0, 0}, 2.5}, {{2, 3}, 5}, {{1, 1}, 0}});
  CHECK(std::signbit(*at(read.matrix, 1, 1)));  // an explicit -0 is kept, bit for bit

  // No newline after the last entry; empty rows and an empty matrix.
  CHECK(entries_of(parse_matrix_market<float>(kPattern + "4 2 1\n3 2").matrix) == Entries{{{2, 1}, 1}});
  const auto empty = parse_matrix_market<double>(kGeneral + "0 0 0\n");
  CHECK(empty.matrix.rows == 0);
  CHECK(empty.matrix.row_ptr == std::vector<Index>{0});
  CHECK(parse_matrix_market<double>(kGeneral + "5 5 0").matrix.row_ptr == std::vector<Index>(6, 0));
}

TEST_CASE_TEMPLATE("Matrix Market: text fed in pieces of any size parses as one buffer does", T, float,
                   double) {
  const std::vector<std::string> texts = {
      kSymmetric + "% comment\r\n4 4 5\r\n1 1 1.25\r\n\r\n3 1 -2e-3\r\n4 2 7\r\n4 4 1e10\r\n4 2 0.5",
      kSkew + "3 3 2\n2 1 5\n3 2 -1.5\n",
      kGeneral + "2 2 2\n1 1 1\n2 2 2\n3 3 3\n",  // too many entries
      kGeneral + "2 2 3\n1 1 1\n2 2 nan\n",       // a bad value
      kGeneral + "2 2 3\n1 1 1\n2 2 2\n",         // truncated
      kSymmetric + "2 2 1\r\n1 2 1\r\n",          // above the diagonal
  };
  for (const auto& text : texts) {
    CAPTURE(text);
    MatrixMarketMatrix<T> whole, pieces;
    const std::string whole_error = parse_in_pieces(text, text.size(), whole);
    for (std::size_t piece = 1; piece <= 17; ++piece) {
      CAPTURE(piece);
      CHECK(parse_in_pieces(text, piece, pieces) == whole_error);
      if (whole_error.empty()) check_identical(pieces.matrix, whole.matrix);
    }
  }
}

TEST_CASE("Matrix Market: the banner is checked word by word") {
  check_rejected("", "bad.mtx:1: empty input: expected the banner '%%MatrixMarket matrix coordinate");
  check_rejected("\n" + kGeneral, "bad.mtx:1: expected the banner");
  check_rejected("hello world\n1 1 0\n",
                 "bad.mtx:1: expected the banner '%%MatrixMarket matrix coordinate "
                 "real|integer|pattern general|symmetric|skew-symmetric', found 'hello world'");
  check_rejected("%MatrixMarket matrix coordinate real general\n", "bad.mtx:1: expected the banner");
  check_rejected("%%MatrixMarket\n", "bad.mtx:1: banner: missing the object");
  check_rejected("%%MatrixMarket matrix coordinate real\n", "bad.mtx:1: banner: missing the symmetry");
  check_rejected("%%MatrixMarket vector coordinate real general\n",
                 "bad.mtx:1: banner: object 'vector' is not supported");
  check_rejected("%%MatrixMarket matrix array real general\n",
                 "bad.mtx:1: banner: the dense 'array' format is not supported (only 'coordinate')");
  check_rejected("%%MatrixMarket matrix sparse real general\n", "bad.mtx:1: banner: unknown format 'sparse'");
  check_rejected("%%MatrixMarket matrix coordinate complex general\n",
                 "bad.mtx:1: banner: complex matrices are not supported");
  check_rejected("%%MatrixMarket matrix coordinate double general\n",
                 "bad.mtx:1: banner: unknown field 'double'");
  check_rejected("%%MatrixMarket matrix coordinate real hermitian\n",
                 "bad.mtx:1: banner: hermitian matrices are not supported");
  check_rejected("%%MatrixMarket matrix coordinate real diagonal\n",
                 "bad.mtx:1: banner: unknown symmetry 'diagonal'");
  check_rejected("%%MatrixMarket matrix coordinate pattern skew-symmetric\n",
                 "bad.mtx:1: banner: a pattern matrix cannot be skew-symmetric");
  check_rejected("%%MatrixMarket matrix coordinate real general extra\n",
                 "bad.mtx:1: banner: unexpected 'extra' after the symmetry");
}

TEST_CASE("Matrix Market: the size line must be three fitting non-negative integers") {
  check_rejected(kGeneral, "bad.mtx:2: truncated: no size line 'rows columns entries' after the banner");
  check_rejected(kGeneral + "% only comments\n\n", "bad.mtx:4: truncated: no size line");
  check_rejected(kGeneral + "3 3\n", "bad.mtx:2: size line: missing the entry count");
  check_rejected(kGeneral + "3\n", "bad.mtx:2: size line: missing the column count");
  check_rejected(kGeneral + "3 -3 1\n",
                 "bad.mtx:2: size line: column count '-3' is not a non-negative integer");
  check_rejected(kGeneral + "3 3.0 1\n",
                 "bad.mtx:2: size line: column count '3.0' is not a non-negative integer");
  check_rejected(kGeneral + "% c\nx 3 1\n",
                 "bad.mtx:3: size line: row count 'x' is not a non-negative integer");
  check_rejected(kGeneral + "3 3 1 4\n", "bad.mtx:2: size line: unexpected '4' after 'rows columns entries'");
  check_rejected(kGeneral + "99999999999999999999 1 1\n",
                 "bad.mtx:2: size line: row count '99999999999999999999' is too large");
  check_rejected(kGeneral + "4294967296 1 0\n",
                 "bad.mtx:2: size line: 4294967296 x 1 is larger than the 4294967295 rows and columns");
  check_rejected(kGeneral + "1 4294967296 0\n", "bad.mtx:2: size line: 1 x 4294967296 is larger");
  check_rejected(kSymmetric + "3 4 1\n",
                 "bad.mtx:2: size line: a symmetric matrix must be square, not 3 x 4");
  check_rejected(kSkew + "4 3 1\n",
                 "bad.mtx:2: size line: a skew-symmetric matrix must be square, not 4 x 3");
  check_rejected(kGeneral + "2 2 5\n",
                 "bad.mtx:2: size line: 5 entries do not fit in a 2 x 2 matrix (at most 4)");
  check_rejected(kSymmetric + "2 2 4\n",
                 "bad.mtx:2: size line: 4 entries do not fit in a 2 x 2 matrix (at most 3 in");
  check_rejected(kSkew + "2 2 2\n",
                 "bad.mtx:2: size line: 2 entries do not fit in a 2 x 2 matrix (at most 1 in");
  check_rejected(kGeneral + "0 0 1\n",
                 "bad.mtx:2: size line: 1 entries do not fit in a 0 x 0 matrix (at most 0)");
  check_rejected(kGeneral + "100000 100000 4294967296\n",
                 "bad.mtx:2: size line: 4294967296 entries are more than 32-bit indices");
}

TEST_CASE("Matrix Market: a size line beyond the host's memory is refused before anything is allocated") {
  const std::string text = kGeneral + "4294967295 4294967295 2147483647\n1 1 1\n";
  const double needed = 4294967296.0 * 4 + 2147483647.0 * (3 * 4 + 2 * 8);
  const double physical = double(::sysconf(_SC_PHYS_PAGES)) * double(::sysconf(_SC_PAGE_SIZE));
  if (physical > needed) return;  // this host holds it: nothing to refuse
  // An input of unknown size may hold every entry its size line declares.
  sparse::detail::MatrixMarketParser<double> parser("big.mtx");
  CHECK_THROWS_WITH_AS(parser.feed(text),
                       doctest::Contains("big.mtx:2: a 4294967295 x 4294967295 matrix of 2147483647 entries needs"),
                       InvalidArgument);
}

TEST_CASE("Matrix Market: the header alone is read without the entries") {
  TempDir dir;
  test::write_bytes(dir / "a.mtx", kSymmetric + "% comment\n3 3 2\nnot an entry\n");
  const MatrixMarketHeader header = read_matrix_market_header(dir / "a.mtx");
  CHECK(header.rows == 3);
  CHECK(header.cols == 3);
  CHECK(header.entries == 2);
  CHECK(header.symmetry == MatrixMarketSymmetry::symmetric);
  test::write_bytes(dir / "b.mtx", kGeneral + "4 5 0");  // no newline at the end
  CHECK(read_matrix_market_header(dir / "b.mtx").cols == 5);
  test::write_bytes(dir / "c.mtx", kGeneral);
  CHECK_THROWS_WITH_AS(read_matrix_market_header(dir / "c.mtx"), doctest::Contains("no size line"), IoError);
  CHECK_THROWS_WITH_AS(read_matrix_market_header(dir / "missing.mtx"), doctest::Contains("cannot open"), IoError);
}

TEST_CASE("Matrix Market: too few or too many entries name the line where the count goes wrong") {
  check_rejected(kGeneral + "2 2 3\n1 1 1\n2 2 2\n", "bad.mtx:5: truncated: expected 3 entries, found 2");
  check_rejected(kGeneral + "2 2 3\n1 1 1\n2 2 2", "bad.mtx:5: truncated: expected 3 entries, found 2");
  check_rejected(kGeneral + "2 2 3\n% comment\n\n1 1 1\n\n",
                 "bad.mtx:7: truncated: expected 3 entries, found 1");
  check_rejected(kGeneral + "2 2 1\n1 1 1\n2 2 2\n",
                 "bad.mtx:4: more entries than the 1 the size line declares");
  check_rejected(kGeneral + "2 2 0\n\n1 1 1\n", "bad.mtx:4: more entries than the 0 the size line declares");
  // A count far beyond what the input holds reserves no memory for it: the file is just short.
  check_rejected(kGeneral + "4000000000 4000000000 4000000000\n1 1 1\n",
                 "bad.mtx:4: truncated: expected 4000000000 entries, found 1");
}

TEST_CASE("Matrix Market: indices must be integers inside the matrix") {
  const std::string size = "2 4 1\n";
  check_rejected(kGeneral + size + "0 1 1\n", "bad.mtx:3: row index '0' out of range 1..2");
  check_rejected(kGeneral + size + "3 1 1\n", "bad.mtx:3: row index '3' out of range 1..2");
  check_rejected(kGeneral + size + "1 5 1\n", "bad.mtx:3: column index '5' out of range 1..4");
  check_rejected(kGeneral + size + "1 0 1\n", "bad.mtx:3: column index '0' out of range 1..4");
  check_rejected(kGeneral + size + "99999999999999999999999 1 1\n",
                 "bad.mtx:3: row index '99999999999999999999999' out of range 1..2");
  check_rejected(kGeneral + size + "1.0 1 1\n", "bad.mtx:3: row index '1.0' is not a positive integer");
  check_rejected(kGeneral + size + "-1 1 1\n", "bad.mtx:3: row index '-1' is not a positive integer");
  check_rejected(kGeneral + size + "1 +1 1\n", "bad.mtx:3: column index '+1' is not a positive integer");
  check_rejected(kGeneral + size + "1 x 1\n", "bad.mtx:3: column index 'x' is not a positive integer");
  check_rejected(kGeneral + size + std::string("1\0 1 1\n", 7),
                 "bad.mtx:3: row index '1\\x00' is not a positive integer");
  check_rejected(kGeneral + size + "1\n",
                 "bad.mtx:3: missing the column index (an entry is 'row column value')");
  check_rejected(kPattern + size + "1\n", "bad.mtx:3: missing the column index (an entry is 'row column')");
}

TEST_CASE("Matrix Market: values must be finite numbers of the declared field, alone at the end") {
  const std::string size = "3 3 1\n";
  check_rejected(kGeneral + size + "1 1\n", "bad.mtx:3: missing the value (an entry is 'row column value')");
  check_rejected(kGeneral + size + "1 2 3.0 x\n", "bad.mtx:3: unexpected 'x' after the value");
  check_rejected(kGeneral + size + "1 2 3.0 4.0\n", "bad.mtx:3: unexpected '4.0' after the value");
  check_rejected(kPattern + size + "1 2 1.0\n",
                 "bad.mtx:3: unexpected '1.0' after the column index (a pattern entry is 'row column')");
  for (const char* value : {"abc", "1.5e", "1,5", "0x1p3", "+-1", "--1", "1.0d0", "."}) {
    check_rejected(kGeneral + size + "1 1 " + value + "\n",
                   "bad.mtx:3: value '" + std::string(value) + "' is not a number");
  }
  for (const char* value : {"nan", "NaN", "-nan", "inf", "-Infinity"}) {
    check_rejected(
        kGeneral + size + "1 1 " + value + "\n",
        "bad.mtx:3: value '" + std::string(value) + "' is not finite (NaN and infinity are not allowed)");
  }
  check_rejected(
      kGeneral + size + "1 1 1e999\n",
      "bad.mtx:3: value '1e999' is beyond the range of double (it would round to infinity or to zero)");
  check_rejected(kGeneral + size + "1 1 -1e-999\n",
                 "bad.mtx:3: value '-1e-999' is beyond the range of double");
  check_rejected<float>(kGeneral + size + "1 1 -1e39\n",
                        "bad.mtx:3: value '-1e39' is beyond the range of float");
  check_rejected<float>(kGeneral + size + "1 1 1e-50\n",
                        "bad.mtx:3: value '1e-50' is beyond the range of float");
  CHECK(parse_matrix_market<double>(kGeneral + size + "1 1 -1e39\n").matrix.values ==
        std::vector<double>{-1e39});
  CHECK(parse_matrix_market<double>(kGeneral + size + "1 1 1e-50\n").matrix.values ==
        std::vector<double>{1e-50});
  CHECK(parse_matrix_market<double>(kGeneral + size + "1 1 0e-999\n").matrix.values ==
        std::vector<double>{0});
  // Around the largest float, and a subnormal one.
  CHECK(parse_matrix_market<float>(kGeneral + size + "1 1 3.40282356e38\n").matrix.values[0] ==
        std::numeric_limits<float>::max());
  check_rejected<float>(kGeneral + size + "1 1 3.40282357e38\n", "is beyond the range of float");
  CHECK(parse_matrix_market<float>(kGeneral + size + "1 1 1e-45\n").matrix.values[0] ==
        std::numeric_limits<float>::denorm_min());

  check_rejected(kInteger + size + "1 1 1.5\n",
                 "bad.mtx:3: value '1.5' is not an integer (the field is 'integer')");
  check_rejected(kInteger + size + "1 1 1e3\n", "bad.mtx:3: value '1e3' is not an integer");
  check_rejected(kInteger + size + "1 1 99999999999999999999\n",
                 "bad.mtx:3: value '99999999999999999999' is beyond the range of a 64-bit integer");
  const std::string long_token(100, '7');
  check_rejected(kGeneral + size + "1 1 1 " + long_token + "\n",
                 "unexpected '" + long_token.substr(0, 40) + "...'");
}

TEST_CASE("Matrix Market: symmetric files store one triangle; line numbers count every line") {
  check_rejected(
      kSymmetric + "3 3 2\n2 1 1\n1 2 1\n",
      "bad.mtx:4: entry (1, 2) is above the diagonal: a symmetric file stores the lower triangle only");
  check_rejected(
      kSkew + "3 3 2\n2 1 1\n2 2 1\n",
      "bad.mtx:4: entry (2, 2) is not below the diagonal: a skew-symmetric file stores the strict lower");
  check_rejected(kSkew + "3 3 1\n1 3 1\n", "bad.mtx:3: entry (1, 3) is not below the diagonal");
  check_rejected(kGeneral + "% one\r\n% two\r\n\r\n3 3 2\r\n\r\n1 1 1\r\n% three\r\n2 2 z\r\n",
                 "bad.mtx:9: value 'z' is not a number");
  // Not one line's fault: the sum of duplicates overflows.
  check_rejected(kGeneral + "2 2 2\n2 1 1e308\n2 1 1e308\n",
                 "bad.mtx: the duplicates of entry (2, 1) sum to inf in double");
  check_rejected<float>(kGeneral + "2 2 2\n2 1 -3e38\n2 1 -3e38\n",
                        "bad.mtx: the duplicates of entry (2, 1) sum to -inf in float");
}

TEST_CASE("Matrix Market: files that cannot be read say why") {
  TempDir dir;
  CHECK_THROWS_WITH_AS(read_matrix_market<double>(dir / "missing.mtx"),
                       doctest::Contains(("cannot open '" + (dir / "missing.mtx").string() + "'").c_str()),
                       IoError);
  CHECK_THROWS_WITH_AS(read_matrix_market<double>(dir.path()), doctest::Contains("cannot read"), IoError);
  test::write_bytes(dir / "short.mtx", kGeneral + "2 2 2\n1 1 1\n");
  CHECK_THROWS_WITH_AS(read_matrix_market<double>(dir / "short.mtx"),
                       doctest::Contains(((dir / "short.mtx").string() + ":4: truncated").c_str()), IoError);
}

TEST_CASE_TEMPLATE("Matrix Market: written files read back bit for bit", T, float, double) {
  std::mt19937 generator(7);
  std::uniform_real_distribution<double> uniform(-1, 1);
  std::uniform_int_distribution<int> exponent(-30, 30);  // inside float's range
  const std::size_t n = 40;
  std::vector<std::vector<std::pair<Index, T>>> rows(n);
  const T specials[] = {T(0),
                        -T(0),
                        T(1) / T(3),
                        std::numeric_limits<T>::max(),
                        std::numeric_limits<T>::lowest(),
                        std::numeric_limits<T>::min(),
                        std::numeric_limits<T>::denorm_min(),
                        std::numeric_limits<T>::epsilon()};
  for (std::size_t row = 0; row < n; ++row) {
    for (Index col = 0; col < n; ++col) {
      if ((row * 7 + col * 3) % 5 != 0) continue;
      const std::size_t k = rows[row].size();
      const T value = row < 2 && k < std::size(specials)
                          ? specials[k]
                          : static_cast<T>(uniform(generator) * std::pow(10.0, exponent(generator)));
      rows[row].emplace_back(col, value);
    }
  }
  const auto a = from_rows<T>(n, n + 3, rows);  // not square, and the last columns empty
  TempDir dir;
  write_matrix_market(dir / "a.mtx", a);
  CHECK(test::count_files(dir.path(), ".tmp") == 0);
  const auto back = read_matrix_market<T>(dir / "a.mtx");
  CHECK(back.header.symmetry == MatrixMarketSymmetry::general);
  CHECK(back.header.entries == a.nonzeros());
  check_identical(back.matrix, a);

  const std::string text = format_matrix_market(a);
  const std::string header = "%%MatrixMarket matrix coordinate real general\n% written by ziggurat " +
                             std::string(version) + "\n40 43 " + std::to_string(a.nonzeros()) + "\n";
  CHECK(text.substr(0, header.size()) == header);
  CHECK(text == test::read_bytes(dir / "a.mtx"));
  CHECK(format_matrix_market(Csr<T>{}) ==
        "%%MatrixMarket matrix coordinate real general\n% written by ziggurat " + std::string(version) +
            "\n0 0 0\n");
}

TEST_CASE("Matrix Market: floats round once, so what the writer prints reads back exactly") {
  // Read as double and then rounded to float, "7.038531e-26" (what std::to_chars writes for this
  // float) would give the float after it: an exhaustive search over all floats finds only this
  // pair, +-0x15ae43fd.
  for (const std::uint32_t bits : {0x15ae43fdu, 0x95ae43fdu}) {
    float value = 0;
    std::memcpy(&value, &bits, sizeof value);
    const auto a = from_rows<float>(1, 1, {{{0, value}}});
    const std::string text = format_matrix_market(a);
    CHECK(text.find(value > 0 ? " 7.038531e-26\n" : " -7.038531e-26\n") != std::string::npos);
    check_identical(parse_matrix_market<float>(text).matrix, a);
  }
}

TEST_CASE_TEMPLATE("Matrix Market: symmetric matrices are written as their lower triangle", T, float,
                   double) {
  std::mt19937 generator(11);
  std::uniform_real_distribution<double> uniform(-10, 10);
  const std::size_t n = 30;
  std::vector<std::vector<T>> dense(n, std::vector<T>(n, T(0)));
  std::vector<std::vector<bool>> stored(n, std::vector<bool>(n, false));
  for (std::size_t row = 0; row < n; ++row) {
    for (std::size_t col = 0; col <= row; ++col) {
      if ((row + 2 * col) % 3 != 0) continue;
      dense[row][col] = dense[col][row] = static_cast<T>(uniform(generator));
      stored[row][col] = stored[col][row] = true;
    }
  }
  std::vector<std::vector<std::pair<Index, T>>> rows(n);
  std::size_t lower = 0;
  for (std::size_t row = 0; row < n; ++row) {
    for (std::size_t col = 0; col < n; ++col) {
      if (!stored[row][col]) continue;
      rows[row].emplace_back(static_cast<Index>(col), dense[row][col]);
      lower += col <= row;
    }
  }
  const auto a = from_rows<T>(n, n, rows);
  const std::string text = format_matrix_market(a, MatrixMarketSymmetry::symmetric);
  CHECK(text.rfind("%%MatrixMarket matrix coordinate real symmetric\n", 0) == 0);
  CHECK(text.find("\n30 30 " + std::to_string(lower) + "\n") != std::string::npos);
  const auto back = parse_matrix_market<T>(text);
  CHECK(back.header.symmetry == MatrixMarketSymmetry::symmetric);
  CHECK(back.header.entries == lower);
  check_identical(back.matrix, a);
}

TEST_CASE("Matrix Market: the writer refuses what it cannot write") {
  using Rows = std::vector<std::vector<std::pair<Index, double>>>;
  const auto asymmetric = from_rows<double>(2, 2, Rows{{{0, 1.0}, {1, 2.0}}, {{0, 3.0}}});
  CHECK_NOTHROW(format_matrix_market(asymmetric));
  CHECK_THROWS_WITH_AS(format_matrix_market(asymmetric, MatrixMarketSymmetry::symmetric),
                       "Matrix Market writer: not symmetric: A(0, 1) = 2 but A(1, 0) = 3 (0-based)",
                       InvalidArgument);
  const auto one_sided = from_rows<double>(2, 2, Rows{{{1, 2.0}}, {}});
  CHECK_THROWS_WITH_AS(format_matrix_market(one_sided, MatrixMarketSymmetry::symmetric),
                       "Matrix Market writer: not symmetric: A(0, 1) = 2 but A(1, 0) = 0 (not stored) (0-based)",
                       InvalidArgument);
  // The one symmetry rule (sparse::asymmetry): an entry not stored counts as zero, so a stored
  // zero needs no mirror. Below the diagonal it is written and comes back mirrored.
  const auto stored_zero = from_rows<double>(2, 2, Rows{{{0, 1.0}}, {{0, 0.0}, {1, 4.0}}});
  const auto back = parse_matrix_market<double>(format_matrix_market(stored_zero, MatrixMarketSymmetry::symmetric));
  CHECK(entries_of(back.matrix) == Entries{{{0, 0}, 1}, {{0, 1}, 0}, {{1, 0}, 0}, {{1, 1}, 4}});
  CHECK(to_dia(stored_zero, true).offsets == std::vector<std::int32_t>{0, 1});  // to_dia agrees
  CHECK_THROWS_WITH_AS(
      format_matrix_market(from_rows<double>(1, 2, Rows{{}}), MatrixMarketSymmetry::symmetric),
      doctest::Contains("a symmetric matrix must be square, not 1 x 2"), InvalidArgument);
  CHECK_THROWS_WITH_AS(format_matrix_market(asymmetric, MatrixMarketSymmetry::skew_symmetric),
                       doctest::Contains("skew-symmetric output is not supported"), InvalidArgument);

  const auto infinite = from_rows<float>(1, 1, {{{0, std::numeric_limits<float>::infinity()}}});
  CHECK_THROWS_WITH_AS(
      format_matrix_market(infinite),
      doctest::Contains("A(0, 0) = inf (0-based): Matrix Market files hold finite values only"),
      InvalidArgument);
  auto broken = asymmetric;
  broken.col[1] = 2;
  CHECK_THROWS_WITH_AS(format_matrix_market(broken),
                       doctest::Contains("the columns of row 0 are not strictly increasing inside 0..2"),
                       InvalidArgument);
  broken = asymmetric;
  broken.row_ptr = {0, 2, 4};
  CHECK_THROWS_WITH_AS(format_matrix_market(broken),
                       doctest::Contains("col and values must have row_ptr[rows] = 4 entries, not 3 and 3"),
                       InvalidArgument);
  broken.row_ptr = {0, 4, 3};
  CHECK_THROWS_WITH_AS(format_matrix_market(broken),
                       doctest::Contains("row_ptr[1] = 4 is not between row_ptr[0] and the entry count"),
                       InvalidArgument);
  broken.row_ptr = {0, 3};
  CHECK_THROWS_WITH_AS(format_matrix_market(broken),
                       doctest::Contains("row_ptr must have rows + 1 = 3 entries starting at 0"),
                       InvalidArgument);
  TempDir dir;
  CHECK_THROWS_AS(write_matrix_market(dir / "no.mtx", infinite), InvalidArgument);
  CHECK_FALSE(std::filesystem::exists(dir / "no.mtx"));
}

TEST_CASE("Matrix Market: a file of 2 million entries streams through several read chunks") {
  // 100000 x 2^20, 20 entries a row, values over 80 decades: about 70 MB, five 16 MiB chunks.
  const std::size_t rows = 100000, cols = std::size_t{1} << 20, per_row = 20, step = cols / per_row;
  std::mt19937_64 generator(3);
  std::uniform_real_distribution<double> uniform(-1, 1);
  std::uniform_int_distribution<int> exponent(-40, 40);
  Csr<double> a;
  a.rows = rows;
  a.cols = cols;
  a.row_ptr.reserve(rows + 1);
  a.col.reserve(rows * per_row);
  a.values.reserve(rows * per_row);
  for (std::size_t row = 0; row < rows; ++row) {
    const std::size_t first = generator() % step;
    for (std::size_t k = 0; k < per_row; ++k) {
      a.col.push_back(static_cast<Index>(first + k * step));
      a.values.push_back(uniform(generator) * std::pow(10.0, exponent(generator)));
    }
    a.row_ptr.push_back(static_cast<Index>(a.col.size()));
  }
  TempDir dir;
  write_matrix_market(dir / "large.mtx", a);
  REQUIRE(std::filesystem::file_size(dir / "large.mtx") > 3 * (std::size_t{16} << 20));
  const auto back = read_matrix_market<double>(dir / "large.mtx");
  CHECK(back.header.entries == rows * per_row);
  check_identical(back.matrix, a);
}
