// Element-by-element operators on the host (matrix/elements.hpp) against the assembled matrix,
// their validation and colouring, integer .npy files and element files (io/element_files.hpp).

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "../support/util.hpp"
#include "../support/elements.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/io/element_files.hpp"
#include "ziggurat/io/npy.hpp"
#include "ziggurat/matrix/elements.hpp"
#include "ziggurat/matrix/sparse.hpp"

using namespace ziggurat;
using namespace ziggurat::fem;
using test::assembled_projection;
using test::random_elements;
using test::random_vectors;
using test::TempDir;

namespace {

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

// The largest |got - want| over the largest |want|.
template <class A, class B>
double relative_error(const std::vector<A>& got, const std::vector<B>& want) {
  REQUIRE(got.size() == want.size());
  double worst = 0, scale = 1e-300;
  for (std::size_t i = 0; i < got.size(); ++i) {
    worst = std::max(worst, std::abs(double(got[i]) - double(want[i])));
    scale = std::max(scale, std::abs(double(want[i])));
  }
  return worst / scale;
}


// K dense (dofs x dofs, in T), summed over the elements in element order; `coupled` marks every
// pair some element couples (constrained DOFs left out).
template <class T>
std::vector<T> dense_sum(const ElementSet<T>& set, std::vector<bool>& coupled) {
  const std::size_t n = set.dofs, l = set.element_size;
  std::vector<T> k(n * n, T(0));
  coupled.assign(n * n, false);
  for (std::size_t e = 0; e < set.count(); ++e) {
    for (std::size_t r = 0; r < l; ++r) {
      for (std::size_t c = 0; c < l; ++c) {
        const std::int32_t i = set.indices[e * l + r], j = set.indices[e * l + c];
        if (i < 0 || j < 0) continue;
        k[i * n + j] += element_entry(set, e, r, c);
        coupled[i * n + j] = true;
      }
    }
  }
  return k;
}

template <class T>
double tolerance() {
  return std::is_same_v<T, double> ? 1e-12 : 2e-5;
}

// A .npy file with the given header dict and data bytes (version 1.0), as tests/host/test_npy.cpp.
std::string npy_file(const std::string& dict, const std::string& data) {
  std::string header = dict;
  header.append(63 - (10 + header.size()) % 64, ' ');
  header += '\n';
  std::string file = "\x93NUMPY\x01";
  file += '\0';
  file += static_cast<char>(header.size() & 0xff);
  file += static_cast<char>(header.size() >> 8);
  return file + header + data;
}

template <class T>
std::string raw(const std::vector<T>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
}

std::string int64_file(const std::string& shape, const std::vector<std::int64_t>& values) {
  return npy_file("{'descr': '<i8', 'fortran_order': False, 'shape': " + shape + ", }", raw(values));
}

}  // namespace

TEST_CASE_TEMPLATE("element Y = K X and X^T K X match the assembled CSR", T, float, double) {
  for (const std::size_t l : {4, 9, 24}) {
    for (const ElementStorage storage : {ElementStorage::full, ElementStorage::upper}) {
      for (const std::size_t k : {1, 5}) {
        CAPTURE(l);
        CAPTURE(k);
        CAPTURE(storage == ElementStorage::full);
        const ElementSet<T> set = random_elements<T>(300, l, storage, 10 * l + k);
        validate(set);
        const std::vector<T> x = random_vectors<T>(set.dofs, k, l + 1);
        const std::vector<T> y = multiply(set, x, k);
        CHECK(relative_error(y, sparse::multiply(assemble_csr(set), x, k)) <= tolerance<T>());
        const std::vector<double> p = project(set, x, k);
        // Float sums chunks of 256 element terms in float: 1e-4 of the largest entry bounds that.
        CHECK(relative_error(p, assembled_projection(set, x, k)) <= 10 * tolerance<T>());
        for (std::size_t i = 0; i < k; ++i)
          for (std::size_t j = 0; j < k; ++j) CHECK(p[i * k + j] == p[j * k + i]);
        CHECK(same_bits(multiply(set, x, k), y));  // the same bits every call
        CHECK(same_bits(project(set, x, k), p));
      }
    }
  }
}

TEST_CASE_TEMPLATE("element sets: constrained DOFs act as DOFs whose X rows are zero and whose Y rows are dropped", T, float,
                   double) {
  const ElementSet<T> set = random_elements<T>(200, 6, ElementStorage::upper, 3);
  // The same elements with every constrained DOF made a DOF of its own, past the others.
  ElementSet<T> freed = set;
  for (std::int32_t& v : freed.indices) {
    if (v < 0) v = static_cast<std::int32_t>(freed.dofs++);
  }
  const std::size_t k = 3;
  const std::vector<T> x = random_vectors<T>(set.dofs, k, 4);
  std::vector<T> x_freed = x;
  x_freed.resize(freed.dofs * k, T(0));
  CHECK(same_bits(project(set, x, k), project(freed, x_freed, k)));  // zeros add nothing, bit for bit
  std::vector<T> y_freed = multiply(freed, x_freed, k);
  y_freed.resize(set.dofs * k);  // other colours, so other bits: compare values
  CHECK(relative_error(multiply(set, x, k), y_freed) <= tolerance<T>());
}

// A chain of m two-node bars with three DOFs a node, node 0 clamped: the DOFs of a node lie in the
// same elements, as in a mesh.
template <class T>
ElementSet<T> bar_chain(std::size_t m, ElementStorage storage) {
  ElementSet<T> set = random_elements<T>(m, 6, storage, 12);
  set.dofs = 3 * m;
  for (std::size_t e = 0; e < m; ++e)
    for (std::size_t i = 0; i < 6; ++i) set.indices[e * 6 + i] = static_cast<std::int32_t>(3 * e + i) - 3;
  return set;
}

TEST_CASE_TEMPLATE("element assemble_csr sums every entry over its elements in element order, columns sorted", T, float,
                   double) {
  for (const ElementStorage storage : {ElementStorage::full, ElementStorage::upper}) {
    for (const ElementSet<T>& set : {random_elements<T>(40, 5, storage, 7), bar_chain<T>(30, storage)}) {
      const sparse::Csr<T> a = assemble_csr(set);
      sparse::validate(a);  // sorted, unique columns
      std::vector<bool> coupled;
      const std::vector<T> want = dense_sum(set, coupled);
      std::size_t stored = 0;
      for (std::size_t i = 0; i < a.rows; ++i) {
        for (std::size_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
          CHECK(coupled[i * set.dofs + a.col[p]]);
          CHECK(a.values[p] == want[i * set.dofs + a.col[p]]);
        }
        stored += a.row_ptr[i + 1] - a.row_ptr[i];
      }
      CHECK(stored == static_cast<std::size_t>(std::count(coupled.begin(), coupled.end(), true)));
      CHECK(sparse::asymmetry(a).empty());
      for (const std::size_t b : {1, 3, 4}) {
        const sparse::Bsr<T> blocks = assemble_bsr(set, b), want_blocks = sparse::to_bsr(a, b);
        CHECK(blocks.block_row_ptr == want_blocks.block_row_ptr);
        CHECK(blocks.block_col == want_blocks.block_col);
        CHECK(same_bits(blocks.values, want_blocks.values));
      }
    }
  }
}

TEST_CASE_TEMPLATE("element assemble_block_diagonal holds the assembled diagonal blocks, bit for bit", T, float, double) {
  for (const ElementStorage storage : {ElementStorage::full, ElementStorage::upper}) {
    const ElementSet<T> set = random_elements<T>(40, 5, storage, 3);
    for (const std::size_t b : {1, 3, 4}) {  // 4 leaves a padded last block row
      CAPTURE(b);
      const sparse::Bsr<T> all = assemble_bsr(set, b), d = assemble_block_diagonal(set, b);
      sparse::validate(d);
      REQUIRE(d.block_rows == all.block_rows);
      CHECK(d.rows == set.dofs);
      CHECK(d.blocks() == d.block_rows);
      for (std::size_t i = 0; i < all.block_rows; ++i) {
        CHECK(d.block_col[i] == static_cast<sparse::Index>(i));
        std::vector<T> want(b * b, T(0));  // zero where K's block is not stored
        for (std::size_t p = all.block_row_ptr[i]; p < all.block_row_ptr[i + 1]; ++p)
          if (all.block_col[p] == static_cast<sparse::Index>(i))
            want.assign(all.values.begin() + p * b * b, all.values.begin() + (p + 1) * b * b);
        CHECK(same_bits(std::vector<T>(d.values.begin() + i * b * b, d.values.begin() + (i + 1) * b * b), want));
      }
    }
  }
  CHECK_THROWS_AS(assemble_block_diagonal(random_elements<T>(4, 3, ElementStorage::upper, 1), 0), InvalidArgument);
}

TEST_CASE_TEMPLATE("element to_upper keeps the operator, entry for entry", T, float, double) {
  const ElementSet<T> full = random_elements<T>(60, 7, ElementStorage::full, 9);
  const ElementSet<T> upper = to_upper(full);
  CHECK(upper.storage == ElementStorage::upper);
  CHECK(upper.matrices.size() == full.count() * 7 * 8 / 2);
  CHECK(upper.indices == full.indices);
  for (std::size_t e = 0; e < full.count(); ++e)
    for (std::size_t r = 0; r < 7; ++r)
      for (std::size_t c = 0; c < 7; ++c) CHECK(element_entry(upper, e, r, c) == element_entry(full, e, r, c));
  CHECK(same_bits(to_upper(upper).matrices, upper.matrices));
  const std::vector<T> x = random_vectors<T>(full.dofs, 3, 2);
  CHECK(same_bits(multiply(upper, x, 3), multiply(full, x, 3)));
  CHECK(same_bits(project(upper, x, 3), project(full, x, 3)));
  CHECK(same_bits(assemble_csr(upper).values, assemble_csr(full).values));
  CHECK_THROWS_WITH_AS(element_entry(full, 60, 0, 0), doctest::Contains("element 60"), InvalidArgument);
  CHECK_THROWS_AS(element_entry(full, 0, 7, 0), InvalidArgument);
}

TEST_CASE_TEMPLATE("element diagonal is the assembled diagonal; is_diagonal finds lumped masses", T, float, double) {
  ElementSet<T> set = random_elements<T>(80, 8, ElementStorage::upper, 5);
  const sparse::Csr<T> a = assemble_csr(set);
  const std::vector<T> d = diagonal(set);
  for (std::size_t i = 0; i < set.dofs; ++i) {
    T want = 0;
    for (std::size_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) want = a.col[p] == i ? a.values[p] : want;
    CHECK(d[i] == want);
  }
  CHECK_FALSE(is_diagonal(set));
  for (std::size_t e = 0; e < set.count(); ++e)
    for (std::size_t r = 0; r < 8; ++r)
      for (std::size_t c = r + 1; c < 8; ++c) set.matrices[e * 36 + r * (17 - r) / 2 + (c - r)] = T(0);
  for (std::size_t e = 0; e < set.count(); ++e) CHECK(element_entry(set, e, 2, 5) == T(0));
  CHECK(is_diagonal(set));
  set.matrices[77 * 36 + 35 - 1] = T(0.5);  // L(6, 7) of element 77
  CHECK_FALSE(is_diagonal(set));
}

TEST_CASE("element colouring: greedy in element order, no two elements of a colour share a DOF") {
  ElementSet<double> mesh = random_elements<double>(500, 12, ElementStorage::upper, 1);
  // 150 elements that all hold DOF 0: more than 64 colours, the list path of the colouring.
  ElementSet<double> star;
  star.element_size = 3;
  star.dofs = 400;
  for (std::int32_t e = 0; e < 150; ++e) {
    star.indices.insert(star.indices.end(), {e % 4 == 1 ? -1 : 0, 1 + 2 * e, e % 3 == 0 ? -2 : 2 + 2 * e});
    star.matrices.insert(star.matrices.end(), 6, 1.0);
  }
  for (const ElementSet<double>* set : {&mesh, &star}) {
    const ElementColouring colouring = colour_elements(*set);
    const std::size_t m = set->count(), l = set->element_size;
    REQUIRE(colouring.colour_start.front() == 0);
    REQUIRE(colouring.colour_start.back() == m);
    std::vector<std::size_t> colour(m, ~std::size_t{0});
    for (std::size_t c = 0; c < colouring.colours(); ++c) {
      CHECK(colouring.colour_start[c + 1] > colouring.colour_start[c]);  // no empty colour
      for (std::size_t p = colouring.colour_start[c]; p < colouring.colour_start[c + 1]; ++p) {
        if (p > colouring.colour_start[c]) CHECK(colouring.order[p] > colouring.order[p - 1]);
        REQUIRE(colouring.order[p] < m);
        CHECK(colour[colouring.order[p]] == ~std::size_t{0});  // each element once
        colour[colouring.order[p]] = c;
      }
    }
    // Brute force: each element takes the lowest colour no earlier element sharing a DOF has.
    for (std::size_t e = 0; e < m; ++e) {
      std::set<std::size_t> taken;
      for (std::size_t f = 0; f < e; ++f)
        for (std::size_t r = 0; r < l; ++r)
          for (std::size_t s = 0; s < l; ++s) {
            const std::int32_t a = set->indices[e * l + r], b = set->indices[f * l + s];
            if (a >= 0 && a == b) taken.insert(colour[f]);
          }
      std::size_t lowest = 0;
      while (taken.count(lowest) != 0) ++lowest;
      CHECK(colour[e] == lowest);
    }
  }
  CHECK(colour_elements(star).colours() == 112);  // 112 of the 150 hold DOF 0 (every fourth has -1 there)
}

TEST_CASE("element validate names the element and the problem") {
  const auto base = [] { return random_elements<double>(20, 5, ElementStorage::full, 2); };
  const auto refused = [](const ElementSet<double>& set, const char* expected) {
    CAPTURE(expected);
    CHECK_THROWS_WITH_AS(validate(set), doctest::Contains(expected), InvalidArgument);
  };
  ElementSet<double> set = base();
  validate(set);
  set.element_size = 0;
  refused(set, "element_size (l) is 0");
  set.element_size = 65;
  refused(set, "element_size (l) is 65");
  set = base();
  set.indices.pop_back();
  refused(set, "not a multiple of element_size = 5");
  set = base();
  set.matrices.pop_back();
  refused(set, "matrices has 499 values");
  set = base();
  set.dofs = 0;
  refused(set, "dofs is 0");
  set.dofs = std::size_t{1} << 31;
  refused(set, "dofs is 2147483648");
  set = base();
  set.indices[7 * 5 + 2] = static_cast<std::int32_t>(set.dofs);
  refused(set, "element 7: local DOF 2 has index 30, not below dofs = 30");
  set = base();
  set.indices[3 * 5 + 4] = set.indices[3 * 5 + 1];
  refused(set, "element 3: DOF");
  refused(set, "listed twice (local DOFs 1 and 4)");
  set.indices[3 * 5 + 4] = set.indices[3 * 5 + 1] = -1;  // two constrained DOFs are no duplicate
  validate(set);
  set = base();
  set.matrices[5 * 25 + 6] = std::nan("");
  refused(set, "element 5: stored value 6 is NaN");
  set.matrices[5 * 25 + 6] = HUGE_VAL;
  refused(set, "element 5: stored value 6 is inf");
  set = base();
  set.matrices[2 * 25 + 1 * 5 + 3] += 1e-9;
  refused(set, "element 2 is not symmetric: L(1, 3)");
  validate(set, 1e-6);  // within a looser tolerance
  to_upper(set);        // the upper triangle kept, unchecked
}

TEST_CASE("element validate and the operations report the first problem, whatever the threads") {
  ElementSet<float> set = random_elements<float>(6000, 4, ElementStorage::upper, 8);
  set.indices[4 * 5000 + 1] = static_cast<std::int32_t>(set.dofs) + 5;
  set.matrices[10 * 10 + 3] = std::numeric_limits<float>::infinity();
  CHECK_THROWS_WITH_AS(validate(set), doctest::Contains("element 10:"), InvalidArgument);
  // The operations check indices (they must not write out of bounds), not values.
  const std::vector<float> x = random_vectors<float>(set.dofs, 1, 1);
  CHECK_THROWS_WITH_AS(multiply(set, x, 1), doctest::Contains("element 5000: local DOF 1"), InvalidArgument);
  CHECK_THROWS_WITH_AS(assemble_csr(set), doctest::Contains("element 5000"), InvalidArgument);
  CHECK_THROWS_WITH_AS(colour_elements(set), doctest::Contains("element 5000"), InvalidArgument);
  set.indices[4 * 5000 + 1] = 0;
  CHECK_THROWS_WITH_AS(multiply(set, std::vector<float>(3), 1), doctest::Contains("x has 3 values"), InvalidArgument);
  CHECK_THROWS_WITH_AS(project(set, x, 0), doctest::Contains("k is 0"), InvalidArgument);
  CHECK_THROWS_AS(assemble_bsr(set, 17), InvalidArgument);
}

TEST_CASE("npy integer arrays: int32 round trip, int64 read, floats and integers kept apart") {
  TempDir dir;
  const std::vector<std::int32_t> values = {0, -1, 7, 2147483647, -2147483647 - 1, 42};
  write_npy(dir / "i.npy", values.data(), {2, 3});
  CHECK(read_npy_header(dir / "i.npy").type == NpyType::i32);
  CHECK(read_npy_header(dir / "i.npy").data_offset % 64 == 0);
  std::vector<std::size_t> shape;
  const std::vector<std::int64_t> back = read_npy_integers(dir / "i.npy", shape);
  CHECK(shape == std::vector<std::size_t>{2, 3});
  CHECK(back == std::vector<std::int64_t>(values.begin(), values.end()));
  CHECK(test::read_bytes(dir / "i.npy").find("'descr': '<i4'") != std::string::npos);

  const std::vector<std::int64_t> wide = {-5, 1LL << 40, 3};
  test::write_bytes(dir / "w.npy", int64_file("(3,)", wide));
  CHECK(read_npy_header(dir / "w.npy").type == NpyType::i64);
  CHECK(read_npy_integers(dir / "w.npy", shape) == wide);
  CHECK(shape == std::vector<std::size_t>{3});

  CHECK_THROWS_WITH_AS(read_npy<double>(dir / "i.npy", shape), doctest::Contains("dtype is '<i4' (integers)"), IoError);
  CHECK_THROWS_WITH_AS(read_npy<float>(dir / "w.npy", shape), doctest::Contains("('<f8')"), IoError);
  CHECK_THROWS_AS(load_grid<double>(dir / "w.npy"), IoError);
  const std::vector<double> floats = {1, 2};
  write_npy(dir / "f.npy", floats.data(), {2});
  CHECK_THROWS_WITH_AS(read_npy_integers(dir / "f.npy", shape),
                       doctest::Contains("dtype is '<f8'; indices are read from int32 ('<i4')"), IoError);
  test::write_bytes(dir / "b.npy", npy_file("{'descr': '>i8', 'fortran_order': False, 'shape': (3,), }", raw(wide)));
  CHECK_THROWS_WITH_AS(read_npy_integers(dir / "b.npy", shape), doctest::Contains("big-endian"), IoError);
  test::write_bytes(dir / "u.npy", npy_file("{'descr': '<u2', 'fortran_order': False, 'shape': (2,), }", "abcd"));
  CHECK_THROWS_WITH_AS(read_npy_integers(dir / "u.npy", shape), doctest::Contains("int64 ('<i8')"), IoError);
  CHECK(test::count_files(dir.path(), ".tmp") == 0);
}

TEST_CASE_TEMPLATE("element files: save and load keep the operator", T, float, double) {
  TempDir dir;
  for (const ElementStorage storage : {ElementStorage::full, ElementStorage::upper}) {
    const ElementSet<T> set = random_elements<T>(30, 6, storage, 4);
    save_elements(dir / "K.npy", dir / "V.npy", set);
    CHECK(read_npy_header(dir / "K.npy").shape == std::vector<std::size_t>{30, 6, 6});
    CHECK(read_npy_header(dir / "V.npy").shape == std::vector<std::size_t>{30, 6});
    CHECK(read_npy_header(dir / "V.npy").type == NpyType::i32);
    const ElementSet<T> back = load_elements<T>(dir / "K.npy", dir / "V.npy", set.dofs);
    CHECK(back.storage == ElementStorage::full);
    CHECK(back.dofs == set.dofs);
    CHECK(back.indices == set.indices);
    for (std::size_t e = 0; e < set.count(); ++e)
      for (std::size_t r = 0; r < 6; ++r)
        for (std::size_t c = 0; c < 6; ++c) CHECK(element_entry(back, e, r, c) == element_entry(set, e, r, c));
    const auto largest = *std::max_element(set.indices.begin(), set.indices.end());
    CHECK(load_elements<T>(dir / "K.npy", dir / "V.npy").dofs == std::size_t(largest) + 1);
    const ElementSet<double> wide = load_elements<double>(dir / "K.npy", dir / "V.npy", set.dofs);
    CHECK(wide.matrices == std::vector<double>(back.matrices.begin(), back.matrices.end()));
  }
  CHECK(test::count_files(dir.path(), ".tmp") == 0);
}

TEST_CASE("element files: bad shapes, indices and sets are clear errors naming the file") {
  TempDir dir;
  const ElementSet<double> set = random_elements<double>(4, 3, ElementStorage::upper, 6);
  save_elements(dir / "K.npy", dir / "V.npy", set);
  const auto k = dir / "K.npy", v = dir / "V.npy";
  const std::vector<double> nine(9 * 5, 1.0);
  write_npy(dir / "K5.npy", nine.data(), {5, 3, 3});
  CHECK_THROWS_WITH_AS(load_elements<double>(dir / "K5.npy", v), doctest::Contains("holds 5 elements of 3 DOFs"),
                       InvalidArgument);
  write_npy(dir / "K1.npy", nine.data(), {5, 9});
  CHECK_THROWS_WITH_AS(load_elements<double>(dir / "K1.npy", v), doctest::Contains("K1.npy' is not a file of element matrices"),
                       IoError);
  write_npy(dir / "Kr.npy", nine.data(), {3, 5, 3});
  CHECK_THROWS_WITH_AS(load_elements<double>(dir / "Kr.npy", v), doctest::Contains("expected (m, l, l)"), IoError);
  const std::vector<std::int32_t> twelve(12, 1);
  write_npy(dir / "V3.npy", twelve.data(), {4, 3, 1});
  CHECK_THROWS_WITH_AS(load_elements<double>(k, dir / "V3.npy"), doctest::Contains("V3.npy' is not a file of element DOF"),
                       IoError);
  write_npy(dir / "V4.npy", twelve.data(), {3, 4});
  CHECK_THROWS_WITH_AS(load_elements<double>(k, dir / "V4.npy"), doctest::Contains("indices for 3 elements of 4"),
                       InvalidArgument);
  std::vector<std::int64_t> indices(set.indices.begin(), set.indices.end());
  indices[7] = std::int64_t{1} << 31;
  test::write_bytes(dir / "Vbig.npy", int64_file("(4, 3)", indices));
  CHECK_THROWS_WITH_AS(load_elements<double>(k, dir / "Vbig.npy"),
                       doctest::Contains("Vbig.npy': element 2, local DOF 1 has index 2147483648, above 2^31 - 1"),
                       IoError);
  indices[7] = -9;  // any negative index: constrained
  test::write_bytes(dir / "Vneg.npy", int64_file("(4, 3)", indices));
  CHECK(load_elements<double>(k, dir / "Vneg.npy").indices[7] == -1);
  CHECK_THROWS_WITH_AS(load_elements<double>(k, v, 2), doctest::Contains("V.npy': element 0: local DOF"),
                       InvalidArgument);
  CHECK_THROWS_WITH_AS(load_elements<double>(k, k), doctest::Contains("is not a file of element DOF"), IoError);
  write_npy(dir / "Vf.npy", nine.data(), {4, 3});
  CHECK_THROWS_WITH_AS(load_elements<double>(k, dir / "Vf.npy"), doctest::Contains("indices are read from int32"),
                       IoError);
  CHECK_THROWS_WITH_AS(load_elements<double>(dir / "missing.npy", v), doctest::Contains("cannot open"), IoError);
  ElementSet<double> broken = set;
  broken.indices.pop_back();
  CHECK_THROWS_AS(save_elements(dir / "K2.npy", dir / "V2.npy", broken), InvalidArgument);
  CHECK_FALSE(std::filesystem::exists(dir / "K2.npy"));
}
