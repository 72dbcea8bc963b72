// The host sparse formats: validation, CSR <-> BSR <-> DIA conversions, block-size choice, the
// reference products and the seven-point test matrix.

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "ziggurat/base/error.hpp"
#include "ziggurat/matrix/sparse.hpp"

using namespace ziggurat;
using namespace ziggurat::sparse;

namespace {

template <class T>
Csr<T> csr(std::size_t rows, std::size_t cols, std::vector<Index> row_ptr, std::vector<Index> col,
           std::vector<T> values) {
  Csr<T> a;
  a.rows = rows;
  a.cols = cols;
  a.row_ptr = std::move(row_ptr);
  a.col = std::move(col);
  a.values = std::move(values);
  return a;
}

// The nonzeros of a row-major dense matrix.
template <class T>
Csr<T> from_dense(std::size_t rows, std::size_t cols, const std::vector<double>& dense) {
  Csr<T> a;
  a.rows = rows;
  a.cols = cols;
  for (std::size_t i = 0; i < rows; ++i) {
    for (std::size_t j = 0; j < cols; ++j) {
      if (dense[i * cols + j] == 0) continue;
      a.col.push_back(static_cast<Index>(j));
      a.values.push_back(static_cast<T>(dense[i * cols + j]));
    }
    a.row_ptr.push_back(static_cast<Index>(a.col.size()));
  }
  return a;
}

template <class T>
std::vector<double> to_dense(const Csr<T>& a) {
  std::vector<double> dense(a.rows * a.cols, 0.0);
  for (std::size_t i = 0; i < a.rows; ++i) {
    for (std::size_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) dense[i * a.cols + a.col[p]] = a.values[p];
  }
  return dense;
}

template <class T>
std::optional<T> entry(const Csr<T>& a, std::size_t i, std::size_t j) {
  for (std::size_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
    if (a.col[p] == j) return a.values[p];
  }
  return std::nullopt;
}

// Each entry stored with probability `density`, values in +-[0.5, 2) (never zero).
template <class T>
Csr<T> random_csr(std::size_t rows, std::size_t cols, double density, std::uint64_t seed) {
  std::mt19937_64 engine(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0), magnitude(0.5, 2.0);
  std::vector<double> dense(rows * cols, 0.0);
  for (auto& v : dense) {
    if (unit(engine) < density) v = (unit(engine) < 0.5 ? -1 : 1) * magnitude(engine);
  }
  return from_dense<T>(rows, cols, dense);
}

template <class T>
std::vector<T> random_vector(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 engine(seed);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  std::vector<T> x(n);
  for (auto& v : x) v = static_cast<T>(value(engine));
  return x;
}

template <class M>
void check_rejected(const M& good, const std::function<void(M&)>& spoil, const std::string& expected) {
  M bad = good;
  spoil(bad);
  CAPTURE(expected);
  CHECK_THROWS_WITH_AS(validate(bad), doctest::Contains(expected.c_str()), InvalidArgument);
}

// A symmetric pentadiagonal n x n matrix with distinct values.
Csr<double> pentadiagonal(std::size_t n) {
  std::vector<double> dense(n * n, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    dense[i * n + i] = 10.0 + static_cast<double>(i);
    for (std::size_t o = 1; o <= 2 && i + o < n; ++o) {
      dense[i * n + i + o] = dense[(i + o) * n + i] = -0.5 * static_cast<double>(o) - 0.125 * static_cast<double>(i);
    }
  }
  return from_dense<double>(n, n, dense);
}

// The 5 x 5 matrix the hand-written BSR arrays below come from.
Csr<double> five_by_five() {
  return csr<double>(5, 5, {0, 2, 3, 5, 6, 8}, {0, 3, 1, 2, 4, 0, 1, 4}, {1, 2, 3, 4, 5, 6, 8, 7});
}

}  // namespace

TEST_CASE("validate names the first inconsistency of a CSR matrix") {
  const auto good = csr<double>(3, 4, {0, 2, 2, 3}, {0, 3, 1}, {1, 2, 3});
  CHECK_NOTHROW(validate(good));
  CHECK_NOTHROW(validate(Csr<double>{}));
  using M = Csr<double>;
  check_rejected<M>(good, [](M& a) { a.row_ptr.pop_back(); }, "CSR: row_ptr has 3 entries, expected rows + 1 = 4");
  check_rejected<M>(good, [](M& a) { a.row_ptr[0] = 1; }, "CSR: row_ptr[0] is 1, expected 0");
  check_rejected<M>(good, [](M& a) { a.row_ptr = {0, 2, 1, 3}; },
                    "CSR: row_ptr[2] = 1 is less than row_ptr[1] = 2 (it must be non-decreasing)");
  check_rejected<M>(good, [](M& a) { a.col.push_back(2); }, "CSR: col has 4 entries, expected row_ptr[rows] = 3");
  check_rejected<M>(good, [](M& a) { a.values.pop_back(); }, "CSR: values has 2 entries, expected row_ptr[rows] = 3");
  check_rejected<M>(good, [](M& a) { a.col[1] = 4; }, "CSR: row 0: column 4 is out of range (4 columns)");
  check_rejected<M>(good, [](M& a) { a.col[0] = 3; },
                    "CSR: row 0: column 3 not after column 3 (columns must be strictly increasing)");
  check_rejected<M>(good, [](M& a) { a.col = {3, 0, 1}; }, "CSR: row 0: column 0 not after column 3");
  check_rejected<M>(good, [](M& a) { a.rows = std::size_t{1} << 32; },
                    "CSR: rows = 4294967296: more than 2^32 - 1");
}

TEST_CASE("validate checks many rows chunk by chunk and names the least faulty row, empty rows between") {
  // 70,000 rows of a band (row i: columns i - 1, i, i + 1 within 0..n - 1), every fifth row empty:
  // the rows' first columns fall below the previous rows' last ones, which is no fault.
  const std::size_t n = 70000;
  Csr<double> good;
  good.rows = good.cols = n;
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = i == 0 ? 0 : i - 1; i % 5 != 4 && j <= std::min(n - 1, i + 1); ++j) {
      good.col.push_back(static_cast<Index>(j));
      good.values.push_back(1.0);
    }
    good.row_ptr.push_back(static_cast<Index>(good.col.size()));
  }
  CHECK_NOTHROW(validate(good));
  using M = Csr<double>;
  const auto at = [&](std::size_t row, std::size_t k) { return good.row_ptr[row] + k; };
  check_rejected<M>(good, [&](M& a) { a.col[at(52001, 1)] = a.col[at(52001, 0)]; },
                    "CSR: row 52001: column 52000 not after column 52000");
  check_rejected<M>(good, [&](M& a) { a.col[at(60000, 2)] = n; }, "CSR: row 60000: column 70000 is out of range");
  check_rejected<M>(good, [&](M& a) { std::swap(a.col[at(n - 2, 0)], a.col[at(n - 2, 1)]); },
                    "CSR: row 69998: column 69997 not after column 69998");
  check_rejected<M>(good, [&](M& a) { a.col[at(40001, 0)] = n + 1, a.col[at(3, 2)] = 2; },
                    "CSR: row 3: column 2 not after column 3");
}

TEST_CASE_TEMPLATE("index_order: range and strict increase of foreign CSR indices, across chunks and empty rows", I,
                   std::int32_t, std::int64_t) {
  // 50,000 rows of 3 increasing columns, every tenth row empty: rows restart lower (allowed), and
  // the rows span several of the check's chunks.
  const std::size_t lines = 50000, length = 40;
  std::vector<I> ptr{0}, indices;
  for (std::size_t i = 0; i < lines; ++i) {
    if (i % 10 != 9)
      for (const I c : {I(i % 7), I(i % 7 + 5), I(i % 7 + 30)}) indices.push_back(c);
    ptr.push_back(static_cast<I>(indices.size()));
  }
  const auto order = [&] { return index_order(ptr.data(), lines, indices.data(), length); };
  CHECK(order().in_range);
  CHECK(order().strictly_increasing);
  const std::size_t mid = static_cast<std::size_t>(ptr[30001]) + 1;  // a row's second entry
  const I kept = indices[mid];
  indices[mid] = indices[mid - 1];  // a duplicate inside a row
  CHECK(order().in_range);
  CHECK_FALSE(order().strictly_increasing);
  indices[mid] = indices[mid - 1] - 1;  // a descent inside a row
  CHECK_FALSE(order().strictly_increasing);
  indices[mid] = kept;
  indices.back() = I(length);  // past the end, in the last stored entry
  CHECK_FALSE(order().in_range);
  CHECK(order().strictly_increasing);
  indices.back() = I(35);
  indices[0] = I(-1);
  CHECK_FALSE(order().in_range);
  indices[0] = I(0);
  CHECK(order().in_range);
  CHECK(index_order(ptr.data(), 0, indices.data(), 0).in_range);  // no rows: nothing out of range
}

TEST_CASE("foreign index arrays convert on every core; the first entry out of range is named") {
  std::vector<std::int64_t> wide(300000);
  for (std::size_t i = 0; i < wide.size(); ++i) wide[i] = std::int64_t(i) * 14321;  // up to 4.3e9: past 2^32 - 1
  const std::size_t fits = (std::numeric_limits<Index>::max() / 14321) + 1;
  const std::vector<Index> head = copy_indices(wide.data(), fits, "indices");
  CHECK(head.size() == fits);
  CHECK(head.back() == Index(std::int64_t(fits - 1) * 14321));
  CHECK_THROWS_WITH_AS(copy_indices(wide.data(), wide.size(), "indices"),
                       ("indices[" + std::to_string(fits) + "] = " + std::to_string(std::int64_t(fits) * 14321) +
                        " is outside 0..2^32 - 1").c_str(),
                       InvalidArgument);
  std::vector<std::int32_t> narrow(200000, 7);
  narrow[150000] = -1;
  narrow[190000] = -2;
  CHECK_THROWS_WITH_AS(copy_indices(narrow.data(), narrow.size(), "indptr"), "indptr[150000] = -1 is outside 0..2^32 - 1",
                       InvalidArgument);
  CHECK(copy_indices(narrow.data(), 150000, "indptr") == std::vector<Index>(150000, 7));
  std::vector<double> values(600000);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = 0.5 * double(i);
  CHECK(copy_values(values.data(), values.size()) == values);
}

TEST_CASE("validate names the first inconsistency of a BSR matrix") {
  // 3 x 3 with b = 2: the last block row and block column are half padding.
  Bsr<double> good;
  good.rows = good.cols = 3;
  good.block_size = 2;
  good.block_rows = good.block_cols = 2;
  good.block_row_ptr = {0, 2, 3};
  good.block_col = {0, 1, 1};
  good.values = {1, 2, 3, 4, 5, 0, 6, 0, 7, 0, 0, 0};
  CHECK_NOTHROW(validate(good));
  CHECK_NOTHROW(validate(Bsr<double>{}));
  using M = Bsr<double>;
  check_rejected<M>(good, [](M& a) { a.block_size = 0; }, "BSR: block size 0 is outside 1..16");
  check_rejected<M>(good, [](M& a) { a.block_size = 17; }, "BSR: block size 17 is outside 1..16");
  check_rejected<M>(good, [](M& a) { a.block_rows = 3; },
                    "BSR: block_rows x block_cols is 3 x 2, expected ceil(rows / b) x ceil(cols / b) = 2 x 2");
  check_rejected<M>(good, [](M& a) { a.block_row_ptr = {0, 3}; },
                    "BSR: block_row_ptr has 2 entries, expected block rows + 1 = 3");
  check_rejected<M>(good, [](M& a) { a.block_col = {1, 0, 1}; },
                    "BSR: block row 0: block column 0 not after block column 1 "
                    "(block columns must be strictly increasing)");
  check_rejected<M>(good, [](M& a) { a.block_col[2] = 2; },
                    "BSR: block row 1: block column 2 is out of range (2 block columns)");
  check_rejected<M>(good, [](M& a) { a.values.pop_back(); },
                    "BSR: values has 11 entries, expected blocks x b x b = 3 x 4 = 12");
  check_rejected<M>(good, [](M& a) { a.values[5] = 1; },
                    "BSR: block row 0, block column 1: value (0, 1) of the block lies past the matrix's 3 x 3 "
                    "and is 1 (padding must be zero)");
  check_rejected<M>(good, [](M& a) { a.values[10] = std::nan(""); },
                    "BSR: block row 1, block column 1: value (1, 0) of the block lies past");
}

TEST_CASE("validate names the first inconsistency of a DIA matrix") {
  Dia<double> good;
  good.rows = good.cols = 3;
  good.offsets = {-1, 0, 2};
  good.values = {0, 1, 2, 3, 4, 5, 6, 0, 0};
  CHECK_NOTHROW(validate(good));
  CHECK_NOTHROW(validate(Dia<double>{}));
  using M = Dia<double>;
  check_rejected<M>(good, [](M& a) { a.offsets = {0, -1, 2}; },
                    "DIA: offsets[1] = -1 not after 0 (offsets must be strictly increasing)");
  check_rejected<M>(good, [](M& a) { a.offsets[0] = -3; },
                    "DIA: offsets[0] = -3 misses the 3 x 3 matrix (offsets -2..2)");
  check_rejected<M>(good, [](M& a) { a.values.pop_back(); },
                    "DIA: values has 8 entries, expected diagonals x rows = 3 x 3 = 9");
  check_rejected<M>(good, [](M& a) { a.values[0] = 1; },
                    "DIA: offset -1, row 0: column -1 lies outside the matrix but its value is 1");
  check_rejected<M>(good, [](M& a) { a.values[8] = 2; }, "DIA: offset 2, row 2: column 4 lies outside");
  check_rejected<M>(good, [](M& a) { a.symmetric = true; },
                    "DIA: offsets[0] = -1: the symmetric form stores no negative offset");
  check_rejected<M>(good, [](M& a) {
    a.symmetric = true;
    a.cols = 4;
  },
                    "DIA: the symmetric form needs a square matrix, got 3 x 4");
}

TEST_CASE("to_bsr of a 5 x 5 matrix with b = 2 zero-fills partial blocks, past the last row too") {
  const auto m = to_bsr(five_by_five(), 2);
  CHECK(m.rows == 5);
  CHECK(m.cols == 5);
  CHECK(m.block_size == 2);
  CHECK(m.block_rows == 3);
  CHECK(m.block_cols == 3);
  CHECK(m.block_row_ptr == std::vector<Index>{0, 2, 5, 7});
  // Block row 1 meets block columns 1, 2 (row 2) before 0 (row 3).
  CHECK(m.block_col == std::vector<Index>{0, 1, 0, 1, 2, 0, 2});
  CHECK(m.values == std::vector<double>{1, 0, 0, 3, /**/ 0, 2, 0, 0, /**/ 0, 0, 6, 0, /**/ 4, 0, 0, 0, /**/ 5, 0, 0, 0,
                                        /**/ 0, 8, 0, 0, /**/ 7, 0, 0, 0});
  CHECK_NOTHROW(validate(m));

  const auto back = to_csr(m);
  CHECK(back.row_ptr == std::vector<Index>{0, 4, 8, 13, 18, 21});
  CHECK(to_dense(back) == to_dense(five_by_five()));
}

TEST_CASE("to_bsr refuses block sizes outside 1..16") {
  for (const std::size_t b : {0, 17, 64}) {
    CHECK_THROWS_WITH_AS(to_bsr(five_by_five(), b),
                         doctest::Contains(("to_bsr: block size " + std::to_string(b) + " is outside 1..16").c_str()),
                         InvalidArgument);
  }
}

TEST_CASE_TEMPLATE("to_bsr and to_csr round trip random matrices for b = 1..16", T, float, double) {
  struct Shape {
    std::size_t rows, cols;
    double density;
  };
  std::uint64_t seed = 10;
  for (const auto& s : {Shape{37, 29, 0.1}, Shape{64, 64, 0.3}, Shape{1, 50, 0.5}, Shape{50, 1, 0.5},
                        Shape{17, 17, 0.02}, Shape{0, 0, 0.5}, Shape{3, 0, 0.5}}) {
    const auto a = random_csr<T>(s.rows, s.cols, s.density, ++seed);
    for (std::size_t b = 1; b <= 16; ++b) {
      CAPTURE(s.rows);
      CAPTURE(s.cols);
      CAPTURE(b);
      const auto m = to_bsr(a, b);
      REQUIRE_NOTHROW(validate(m));
      if (b == 1) {  // BSR with b = 1 is CSR, array for array
        CHECK(m.block_row_ptr == a.row_ptr);
        CHECK(m.block_col == a.col);
        CHECK(m.values == a.values);
      }
      const auto back = to_csr(m);
      REQUIRE_NOTHROW(validate(back));
      CHECK(back.nonzeros() >= a.nonzeros());
      bool kept = true, only_zeros_added = true;
      for (std::size_t i = 0; i < a.rows; ++i) {
        for (std::size_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) kept &= entry(back, i, a.col[p]) == a.values[p];
        for (std::size_t p = back.row_ptr[i]; p < back.row_ptr[i + 1]; ++p) {
          only_zeros_added &= entry(a, i, back.col[p]).has_value() || back.values[p] == T(0);
        }
      }
      CHECK(kept);
      CHECK(only_zeros_added);
      const auto again = to_bsr(back, b);  // the blocks' pattern is stable
      CHECK(again.block_col == m.block_col);
      CHECK(again.values == m.values);
    }
  }
}

TEST_CASE("multiply on a hand-computed example, in all three formats") {
  // [1 2 0; 0 0 0; 3 0 4] times X = [1 10; 2 20; 3 30]: row 1 is empty, 3 is not a multiple of b = 2.
  const auto a = from_dense<double>(3, 3, {1, 2, 0, 0, 0, 0, 3, 0, 4});
  const std::vector<double> x{1, 10, 2, 20, 3, 30};
  const std::vector<double> y{5, 50, 0, 0, 15, 150};
  CHECK(multiply(a, x, 2) == y);
  CHECK(multiply(to_bsr(a, 2), x, 2) == y);
  const auto dia = to_dia(a);
  CHECK(dia.offsets == std::vector<std::int32_t>{-2, 0, 1});
  CHECK(multiply(dia, x, 2) == y);
  // A wide matrix: its last block column is half padding, which must not read past x.
  const auto wide = from_dense<double>(2, 3, {1, 0, 2, 0, 3, 0});
  CHECK(multiply(to_bsr(wide, 2), std::vector<double>{1, 2, 3}) == std::vector<double>{7, 6});
  CHECK(multiply(to_dia(wide), std::vector<double>{1, 2, 3}) == std::vector<double>{7, 6});
}

TEST_CASE("float input sums in double") {
  // In float, 1e8 + 1 rounds back to 1e8; in double the row sums to exactly 1.
  const auto a = from_dense<float>(1, 3, {1, 1, 1});
  const std::vector<float> x{1e8f, 1.0f, -1e8f};
  CHECK(multiply(a, x) == std::vector<float>{1.0f});
  CHECK(multiply(to_bsr(a, 3), x) == std::vector<float>{1.0f});
  CHECK(multiply(to_dia(a, false, 10.0), x) == std::vector<float>{1.0f});
}

TEST_CASE_TEMPLATE("the BSR product equals the CSR product for b = 1..8, k = 1..16", T, float, double) {
  // Exactly: both sum each row in column order, and the fill's zeros add nothing to a finite sum.
  const auto a = random_csr<T>(23, 19, 0.2, 7);
  for (std::size_t k = 1; k <= 16; ++k) {
    const auto x = random_vector<T>(a.cols * k, 100 + k);
    const auto expected = multiply(a, x, k);
    for (std::size_t b = 1; b <= 8; ++b) {
      CAPTURE(k);
      CAPTURE(b);
      CHECK(multiply(to_bsr(a, b), x, k) == expected);
    }
    // And against a plain double product, to a tolerance (the order of its sums is the same).
    const auto dense = to_dense(a);
    double worst = 0;
    for (std::size_t i = 0; i < a.rows; ++i) {
      for (std::size_t j = 0; j < k; ++j) {
        double sum = 0;
        for (std::size_t c = 0; c < a.cols; ++c) sum += dense[i * a.cols + c] * static_cast<double>(x[c * k + j]);
        worst = std::max(worst, std::abs(sum - static_cast<double>(expected[i * k + j])));
      }
    }
    CHECK(worst <= (sizeof(T) == 4 ? 1e-6 : 0.0));
  }
}

TEST_CASE("products of empty rows, a single row, a 1 x 1 and an empty matrix") {
  const auto empty_rows = csr<double>(4, 3, {0, 0, 0, 0, 0}, {}, {});
  CHECK(multiply(empty_rows, std::vector<double>(6, 1.0), 2) == std::vector<double>(8, 0.0));
  CHECK(multiply(to_bsr(empty_rows, 3), std::vector<double>(6, 1.0), 2) == std::vector<double>(8, 0.0));
  CHECK(to_bsr(empty_rows, 3).blocks() == 0);
  CHECK(to_dia(empty_rows).offsets.empty());

  const auto row = from_dense<double>(1, 5, {1, 0, -2, 0, 0.5});
  const std::vector<double> x{1, 2, 3, 4, 5};
  CHECK(multiply(row, x) == std::vector<double>{-2.5});
  for (std::size_t b = 1; b <= 6; ++b) CHECK(multiply(to_bsr(row, b), x) == std::vector<double>{-2.5});

  const auto one = from_dense<double>(1, 1, {3});
  CHECK(multiply(one, std::vector<double>{2, -1}, 2) == std::vector<double>{6, -3});
  const auto one_bsr = to_bsr(one, 4);
  CHECK(one_bsr.values == std::vector<double>{3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
  CHECK(multiply(one_bsr, std::vector<double>{2, -1}, 2) == std::vector<double>{6, -3});
  CHECK(multiply(to_dia(one, true), std::vector<double>{2, -1}, 2) == std::vector<double>{6, -3});

  CHECK(multiply(Csr<double>{}, std::vector<double>{}, 3).empty());
}

TEST_CASE("multiply refuses an x of the wrong size and k = 0") {
  const auto a = from_dense<double>(2, 3, {1, 0, 2, 0, 3, 0});
  CHECK_THROWS_WITH_AS(multiply(a, std::vector<double>(5), 2),
                       doctest::Contains("multiply (CSR): x has 5 values, expected cols x k = 3 x 2"), InvalidArgument);
  CHECK_THROWS_WITH_AS(multiply(to_bsr(a, 2), std::vector<double>(7), 2),
                       doctest::Contains("multiply (BSR): x has 7 values, expected cols x k = 3 x 2"), InvalidArgument);
  CHECK_THROWS_WITH_AS(multiply(to_dia(a), std::vector<double>(2)),
                       doctest::Contains("multiply (DIA): x has 2 values, expected cols x k = 3 x 1"), InvalidArgument);
  CHECK_THROWS_WITH_AS(multiply(a, std::vector<double>{}, 0), doctest::Contains("k is 0"), InvalidArgument);
}

TEST_CASE("block fills of a matrix made of exact 3 x 3 blocks, and the block size proposed") {
  // 8 x 8 blocks of 3 x 3, block-tridiagonal, every value of a kept block stored.
  const std::size_t n = 24;
  std::vector<double> dense(n * n, 0.0);
  std::size_t blocks = 0;
  for (std::size_t bi = 0; bi < 8; ++bi) {
    for (std::size_t bj = bi == 0 ? 0 : bi - 1; bj <= std::min<std::size_t>(7, bi + 1); ++bj, ++blocks) {
      for (std::size_t r = 0; r < 3; ++r) {
        for (std::size_t c = 0; c < 3; ++c) dense[(3 * bi + r) * n + 3 * bj + c] = 1.0 + static_cast<double>(r + c);
      }
    }
  }
  const auto a = from_dense<double>(n, n, dense);
  const auto fills = block_fills(a);
  REQUIRE(fills.size() == 16);
  for (std::size_t b = 1; b <= 16; ++b) {
    CAPTURE(b);
    CHECK(fills[b - 1].block_size == b);
    CHECK(fills[b - 1].blocks == to_bsr(a, b).blocks());  // counting agrees with converting
    if (b == 1 || b == 3) {
      CHECK(fills[b - 1].fill == 1.0);
    } else {
      CHECK(fills[b - 1].fill > 1.0);
    }
  }
  CHECK(fills[2].blocks == blocks);
  CHECK(propose_block_size(a) == 3);
  // With max_block = 2 only b = 2 is a candidate, taken unless its fill exceeds max_fill.
  CHECK(propose_block_size(a, 2, 0.0, fills[1].fill) == 2);
  CHECK(propose_block_size(a, 2, 0.0, std::nextafter(fills[1].fill, 0.0)) == 1);
  CHECK(propose_block_size(a, 16, 100.0) == 16);  // every fill within the tolerance: the largest wins
  CHECK(propose_block_size(a, 1) == 1);
  CHECK_THROWS_AS(block_fills(a, 0), InvalidArgument);
  CHECK_THROWS_WITH_AS(block_fills(a, 17), doctest::Contains("block size 17 is outside 1..16"), InvalidArgument);
  CHECK_THROWS_AS(propose_block_size(a, 16, -1.0), InvalidArgument);
}

TEST_CASE("block fills of the 5 x 5 example, and b = 1 for a scattered matrix") {
  const auto fills = block_fills(five_by_five(), 3);
  CHECK(fills[0].blocks == 8);
  CHECK(fills[0].fill == 1.0);
  CHECK(fills[1].blocks == 7);
  CHECK(fills[1].fill == 7.0 * 4 / 8);
  CHECK(fills[2].blocks == to_bsr(five_by_five(), 3).blocks());
  CHECK(propose_block_size(random_csr<double>(200, 200, 0.02, 3)) == 1);
}

TEST_CASE("block fills count the blocks that conversion makes, for every b, on scattered and banded matrices") {
  for (const auto& a : {random_csr<double>(300, 277, 0.03, 5), random_csr<double>(1000, 1000, 0.002, 6),
                        to_csr(seven_point_bsr<double>(9, 8, 7, 1, 2))}) {
    const auto fills = block_fills(a);
    for (std::size_t b = 1; b <= 16; ++b) {
      CAPTURE(b);
      CHECK(fills[b - 1].blocks == to_bsr(a, b).blocks());
    }
  }
}

TEST_CASE("to_dia of a tridiagonal matrix") {
  // A(i, i) = 2 + i, A(i, i + 1) = -1 - i, A(i + 1, i) = 0.5 + i.
  const std::size_t n = 5;
  std::vector<double> dense(n * n, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    const double v = static_cast<double>(i);
    dense[i * n + i] = 2 + v;
    if (i + 1 < n) dense[i * n + i + 1] = -1 - v, dense[(i + 1) * n + i] = 0.5 + v;
  }
  const auto a = from_dense<double>(n, n, dense);
  const auto dia = to_dia(a);
  CHECK_NOTHROW(validate(dia));
  CHECK_FALSE(dia.symmetric);
  CHECK(dia.rows == n);
  CHECK(dia.cols == n);
  CHECK(dia.offsets == std::vector<std::int32_t>{-1, 0, 1});
  CHECK(dia.values == std::vector<double>{0, 0.5, 1.5, 2.5, 3.5, /**/ 2, 3, 4, 5, 6, /**/ -1, -2, -3, -4, 0});
  const auto x = random_vector<double>(n * 3, 5);
  CHECK(multiply(dia, x, 3) == multiply(a, x, 3));
}

TEST_CASE("to_dia keeps the offsets col - row of a non-square matrix") {
  const auto a = from_dense<double>(2, 4, {1, 0, 0, 2, 0, 3, 0, 0});
  const auto dia = to_dia(a, false, 10.0);
  CHECK(dia.offsets == std::vector<std::int32_t>{0, 3});
  CHECK(dia.values == std::vector<double>{1, 3, 2, 0});
  CHECK(multiply(dia, std::vector<double>{1, 2, 3, 4}) == std::vector<double>{9, 6});
}

TEST_CASE("the symmetric half-stored DIA of a pentadiagonal matrix") {
  const std::size_t n = 9;
  const auto a = pentadiagonal(n);
  const auto dia = to_dia(a, true);
  CHECK_NOTHROW(validate(dia));
  CHECK(dia.symmetric);
  CHECK(dia.offsets == std::vector<std::int32_t>{0, 1, 2});
  REQUIRE(dia.values.size() == 3 * n);
  for (std::size_t i = 0; i < n; ++i) {
    CAPTURE(i);
    CHECK(dia.values[i] == entry(a, i, i));
    CHECK(dia.values[n + i] == (i + 1 < n ? entry(a, i, i + 1).value() : 0.0));
    CHECK(dia.values[2 * n + i] == (i + 2 < n ? entry(a, i, i + 2).value() : 0.0));
  }
  for (std::size_t k : {1, 3, 8}) {
    const auto x = random_vector<double>(n * k, 20 + k);
    CHECK(multiply(dia, x, k) == multiply(a, x, k));
    CHECK(multiply(to_dia(a), x, k) == multiply(a, x, k));
  }
  CHECK(to_dia(a).offsets == std::vector<std::int32_t>{-2, -1, 0, 1, 2});
}

TEST_CASE("to_dia refuses a wide band, naming its number of diagonals") {
  const auto a = random_csr<double>(40, 40, 0.05, 9);
  std::set<long> offsets;
  for (std::size_t i = 0; i < a.rows; ++i) {
    for (std::size_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
      offsets.insert(static_cast<long>(a.col[p]) - static_cast<long>(i));
    }
  }
  REQUIRE(offsets.size() * 40 > 3 * a.nonzeros());
  const std::string expected = "to_dia: the band has " + std::to_string(offsets.size()) + " diagonals";
  CHECK_THROWS_WITH_AS(to_dia(a), doctest::Contains(expected.c_str()), InvalidArgument);
  CHECK_THROWS_WITH_AS(to_dia(a), doctest::Contains("use CSR or BSR"), InvalidArgument);
  CHECK(to_dia(a, false, 1e9).offsets.size() == offsets.size());
}

TEST_CASE("to_dia refuses an asymmetric or non-square matrix for the symmetric form") {
  const std::size_t n = 9;
  auto dense = to_dense(pentadiagonal(n));
  dense[3 * n + 5] = 7.5;  // A(5, 3) stays -1.375
  CHECK_THROWS_WITH_AS(to_dia(from_dense<double>(n, n, dense), true),
                       doctest::Contains("the matrix is not symmetric: A(3, 5) = 7.5 but A(5, 3) = -1.375"),
                       InvalidArgument);
  dense[3 * n + 5] = -1.375;
  dense[6 * n + 4] = 0;  // A(4, 6) is stored, A(6, 4) is not
  CHECK_THROWS_WITH_AS(to_dia(from_dense<double>(n, n, dense), true),
                       doctest::Contains("A(4, 6) = -1.5 but A(6, 4) = 0 (not stored)"), InvalidArgument);
  CHECK_THROWS_WITH_AS(to_dia(from_dense<double>(2, 3, {1, 0, 0, 0, 1, 0}), true),
                       doctest::Contains("the symmetric form needs a square matrix, got 2 x 3"), InvalidArgument);
}

TEST_CASE("skewness: 0 when symmetric, 1 when skew, a dense reference's value otherwise, any block size") {
  const std::size_t n = 9;
  std::vector<double> dense = to_dense(pentadiagonal(n));
  CHECK(skewness(to_bsr(from_dense<double>(n, n, dense), 1)) == 0.0);
  dense[3 * n + 5] = 7.5;   // A(5, 3) stays -1.375
  dense[6 * n + 4] = 0;     // A(4, 6) = -1.5 loses its mirror
  double d = 0, s = 0;  // the Frobenius norms of A - A^T and A + A^T, densely
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      d += std::pow(dense[i * n + j] - dense[j * n + i], 2);
      s += std::pow(dense[i * n + j] + dense[j * n + i], 2);
    }
  const Csr<double> a = from_dense<double>(n, n, dense);
  for (const std::size_t b : {1, 2, 3, 4}) {  // padded blocks of 2 and 4: their zeros count for nothing
    CHECK(skewness(to_bsr(a, b)) == doctest::Approx(std::sqrt(d / s)).epsilon(1e-12));
    CHECK(skewness(to_bsr(a, b), Validated{}) == skewness(to_bsr(a, b)));  // the set-up's unchecked call
  }
  CHECK(skewness(to_bsr(from_dense<double>(2, 2, {0, 1, -1, 0}), 1)) == 1.0);
  CHECK(skewness(to_bsr(from_dense<double>(2, 2, {0, 0, 0, 0}), 1)) == 0.0);
  CHECK_THROWS_WITH_AS(skewness(to_bsr(from_dense<double>(2, 3, {1, 0, 0, 0, 1, 0}), 1)),
                       doctest::Contains("not square"), InvalidArgument);
}

TEST_CASE("diagonally_dominant: every scalar row, whatever the block size, the padding left out") {
  const std::size_t n = 7;
  // Tridiagonal (-1, 2, -1): weakly dominant in its middle rows, strictly at both ends.
  std::vector<double> dense(n * n, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    dense[i * n + i] = 2;
    if (i > 0) dense[i * n + i - 1] = -1;
    if (i + 1 < n) dense[i * n + i + 1] = -1;
  }
  for (const std::size_t b : {1, 2, 3, 4}) {  // 7 rows: blocks of 2, 3 and 4 are padded
    INFO("b = " << b);
    CHECK(diagonally_dominant(to_bsr(from_dense<double>(n, n, dense), b), Validated{}));
    std::vector<double> weak = dense;
    weak[3 * n + 3] = 1.999;  // one row below its off-diagonal sum
    CHECK_FALSE(diagonally_dominant(to_bsr(from_dense<double>(n, n, weak), b), Validated{}));
    weak[3 * n + 3] = -2;  // the magnitude counts, not the sign
    CHECK(diagonally_dominant(to_bsr(from_dense<double>(n, n, weak), b), Validated{}));
  }
  CHECK_THROWS_WITH_AS(diagonally_dominant(to_bsr(from_dense<double>(2, 3, {1, 0, 0, 0, 1, 0}), 1), Validated{}),
                       doctest::Contains("not square"), InvalidArgument);
}

TEST_CASE("row_stats counts blocks per block row") {
  const auto s = row_stats(to_bsr(five_by_five(), 2));
  CHECK(s.rows == 3);
  CHECK(s.mean == doctest::Approx(7.0 / 3));
  CHECK(s.max == 3);
  CHECK(s.empty == 0);
  const auto sparse = row_stats(to_bsr(csr<double>(4, 4, {0, 2, 2, 3, 3}, {0, 3, 1}, {1, 2, 3}), 1));
  CHECK(sparse.rows == 4);
  CHECK(sparse.mean == 0.75);
  CHECK(sparse.max == 2);
  CHECK(sparse.empty == 2);
  const auto none = row_stats(Bsr<double>{});
  CHECK(none.rows == 0);
  CHECK(none.mean == 0.0);
}

TEST_CASE_TEMPLATE("seven_point_bsr: structure, symmetry of the pattern, diagonal dominance", T, float, double) {
  const std::size_t nx = 4, ny = 3, nz = 5, b = 3, n = nx * ny * nz;
  const auto m = seven_point_bsr<T>(nx, ny, nz, b, 42);
  REQUIRE_NOTHROW(validate(m));
  CHECK(m.rows == n * b);
  CHECK(m.cols == n * b);
  CHECK(m.block_rows == n);
  CHECK(m.blocks() == 7 * n - 2 * (ny * nz + nx * nz + nx * ny));
  const std::size_t extents[3] = {nx, ny, nz};
  const auto coords = [&](std::size_t i) {
    return std::vector<std::size_t>{i % nx, i / nx % ny, i / (nx * ny)};
  };
  std::size_t shortest = 7, longest = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const auto c = coords(i);
    std::size_t interior_axes = 0;
    for (std::size_t axis = 0; axis < 3; ++axis) interior_axes += c[axis] > 0 && c[axis] + 1 < extents[axis];
    const std::size_t length = m.block_row_ptr[i + 1] - m.block_row_ptr[i];
    CAPTURE(i);
    CHECK(length == 4 + interior_axes);  // 1 + one neighbour per axis + one more per interior axis
    shortest = std::min(shortest, length);
    longest = std::max(longest, length);
    for (std::size_t p = m.block_row_ptr[i]; p < m.block_row_ptr[i + 1]; ++p) {
      const auto d = coords(m.block_col[p]);
      std::size_t distance = 0;
      for (std::size_t axis = 0; axis < 3; ++axis) {
        distance += d[axis] > c[axis] ? d[axis] - c[axis] : c[axis] - d[axis];
      }
      CHECK(distance <= 1);
      // The pattern is symmetric: block (j, i) exists too.
      const std::size_t j = m.block_col[p];
      const auto first = m.block_col.begin() + m.block_row_ptr[j], last = m.block_col.begin() + m.block_row_ptr[j + 1];
      CHECK(std::find(first, last, static_cast<Index>(i)) != last);
    }
  }
  CHECK(shortest == 4);
  CHECK(longest == 7);
  CHECK(row_stats(m).max == 7);

  const auto a = to_csr(m);
  for (std::size_t i = 0; i < a.rows; ++i) {
    double diagonal = 0, others = 0;
    for (std::size_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
      if (a.col[p] == i) {
        diagonal = std::abs(static_cast<double>(a.values[p]));
      } else {
        const double v = a.values[p];
        CHECK(v >= -1.0);
        CHECK(v < 1.0);
        CHECK(std::ldexp(v, 23) == std::round(std::ldexp(v, 23)));  // a multiple of 2^-23
        others += std::abs(v);
      }
    }
    CHECK(diagonal > others);
    CHECK(diagonal >= 7.0 * b - 1);
  }
}

TEST_CASE("seven_point_bsr values: seeded, the same in float and double") {
  const auto d = seven_point_bsr<double>(5, 4, 3, 4, 7);
  CHECK(seven_point_bsr<double>(5, 4, 3, 4, 7).values == d.values);
  CHECK(seven_point_bsr<double>(5, 4, 3, 4, 8).values != d.values);
  const auto f = seven_point_bsr<float>(5, 4, 3, 4, 7);
  REQUIRE(f.values.size() == d.values.size());
  bool same = true;
  for (std::size_t e = 0; e < d.values.size(); ++e) same &= f.values[e] == static_cast<float>(d.values[e]);
  CHECK(same);
  // The first draw of mt19937_64(7), by the documented formula, is the first value.
  std::mt19937_64 engine(7);
  CHECK(d.values[0] == static_cast<double>(engine() >> 40) / 8388608.0 - 1.0 + 7.0 * 4);
}

TEST_CASE("convection_diffusion_bsr: the seven-point pattern, weakly dominant, nonsymmetric, exact in float") {
  const auto d = convection_diffusion_bsr<double>(5, 4, 3, 3, 7);
  const auto pattern = seven_point_bsr<double>(5, 4, 3, 3);
  CHECK(d.block_row_ptr == pattern.block_row_ptr);
  CHECK(d.block_col == pattern.block_col);
  const auto f = convection_diffusion_bsr<float>(5, 4, 3, 3, 7);
  bool same = true;
  for (std::size_t e = 0; e < d.values.size(); ++e) same &= double(f.values[e]) == d.values[e];
  CHECK(same);
  CHECK(convection_diffusion_bsr<double>(5, 4, 3, 3, 8).values != d.values);
  // Row by row: |a_ii| >= sum of the other |a_ij|, with equality nowhere on the faces' rows and
  // the diagonal within the coupling of 7.5; upstream and downstream neighbours differ.
  const Csr<double> a = to_csr(d);
  std::size_t strict = 0;
  for (std::size_t r = 0; r < a.rows; ++r) {
    double diagonal = 0, others = 0;
    for (Index p = a.row_ptr[r]; p < a.row_ptr[r + 1]; ++p) {
      (a.col[p] == r ? diagonal : others) += std::abs(a.values[p]);
    }
    CHECK(diagonal >= others);
    CHECK(diagonal >= 7.5);
    CHECK(diagonal < 7.5 + 7 * 3 / 32.0);
    strict += diagonal > others ? 1 : 0;
  }
  CHECK(strict > 0);
  CHECK_FALSE(asymmetry(a).empty());
}

TEST_CASE("seven_point_bsr: chains, single cells, empty grids and refusals") {
  const auto chain = seven_point_bsr<double>(5, 1, 1, 2);
  CHECK(chain.block_col == std::vector<Index>{0, 1, 0, 1, 2, 1, 2, 3, 2, 3, 4, 3, 4});
  const auto cell = seven_point_bsr<double>(1, 1, 1, 1);
  CHECK(cell.blocks() == 1);
  CHECK(seven_point_bsr<double>(1, 3, 1, 1).block_col == std::vector<Index>{0, 1, 0, 1, 2, 1, 2});
  const auto empty = seven_point_bsr<double>(0, 3, 3, 2);
  CHECK(empty.rows == 0);
  CHECK(empty.blocks() == 0);
  CHECK_NOTHROW(validate(empty));
  CHECK_THROWS_WITH_AS(seven_point_bsr<double>(3, 3, 3, 17), doctest::Contains("block size 17 is outside 1..16"),
                       InvalidArgument);
  CHECK_THROWS_WITH_AS(seven_point_bsr<float>(2048, 2048, 1024, 1), doctest::Contains("more than 2^32 - 1"),
                       InvalidArgument);
  CHECK_THROWS_WITH_AS(seven_point_bsr<float>(1024, 1024, 1024, 4), doctest::Contains("more than 2^32 - 1"),
                       InvalidArgument);
}

TEST_CASE("conversions and the block size of large matrices: chunks on every core, the same arrays") {
  // 27,000 block rows of 3 x 3: more than a chunk of the host loops, and sampled by propose_block_size.
  const Bsr<double> blocks = seven_point_bsr<double>(30, 30, 30, 3, 5);
  Csr<double> csr = to_csr(blocks);
  const Bsr<double> again = to_bsr(csr, 3);
  CHECK(again.block_row_ptr == blocks.block_row_ptr);
  CHECK(again.block_col == blocks.block_col);
  CHECK(again.values == blocks.values);
  CHECK(block_fills(csr, 4)[2].blocks == blocks.blocks());
  CHECK(propose_block_size(csr) == 3);
  const Bsr<double> scalar = to_bsr(Csr<double>(csr), 1);
  const Bsr<double> moved = to_bsr(std::move(csr), 1);
  CHECK(moved.block_col == scalar.block_col);
  CHECK(moved.values == scalar.values);
  CHECK(moved.block_size == 1);
  CHECK(propose_block_size(to_csr(seven_point_bsr<double>(45, 45, 45, 1, 5))) == 1);  // sampled, no b fits
}
