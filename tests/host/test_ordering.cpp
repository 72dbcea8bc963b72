// Orderings (level sets, colours, permutations) and the sequential block ILU(0) reference.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "ziggurat/base/error.hpp"
#include "ziggurat/matrix/ilu_factors.hpp"
#include "ziggurat/matrix/ordering.hpp"

using namespace ziggurat;
using namespace ziggurat::sparse;

namespace {

// Every dependency of a row lies in an earlier level.
template <class T>
void check_levels(const Bsr<T>& a, const LevelSets& sets, bool lower) {
  std::vector<std::size_t> level(a.block_rows);
  for (std::size_t l = 0; l < sets.levels(); ++l)
    for (Index p = sets.level_ptr[l]; p < sets.level_ptr[l + 1]; ++p) level[sets.rows[p]] = l;
  CHECK(sets.rows.size() == a.block_rows);
  CHECK(std::set<Index>(sets.rows.begin(), sets.rows.end()).size() == a.block_rows);
  for (std::size_t i = 0; i < a.block_rows; ++i)
    for (Index p = a.block_row_ptr[i]; p < a.block_row_ptr[i + 1]; ++p) {
      const Index j = a.block_col[p];
      if (lower ? j < i : j > i) REQUIRE(level[j] < level[i]);
    }
}

// The levels of the serial recursion: row i's level is 1 + the largest level of the rows before
// (lower) or after (upper) it that it stores, 0 for none; rows increasing inside a level.
template <class T>
LevelSets serial_levels(const Bsr<T>& a, bool lower) {
  const std::size_t n = a.block_rows;
  std::vector<Index> level(n, 0);
  for (std::size_t t = 0; t < n; ++t) {
    const std::size_t i = lower ? t : n - 1 - t;
    for (Index p = a.block_row_ptr[i]; p < a.block_row_ptr[i + 1]; ++p) {
      const Index j = a.block_col[p];
      if (lower ? j < i : j > i) level[i] = std::max(level[i], level[j] + 1);
    }
  }
  LevelSets sets;
  const Index levels = n == 0 ? 0 : *std::max_element(level.begin(), level.end()) + 1;
  sets.level_ptr.assign(levels + 1, 0);
  for (Index l = 0; l < levels; ++l) {
    for (std::size_t i = 0; i < n; ++i)
      if (level[i] == l) sets.rows.push_back(static_cast<Index>(i));
    sets.level_ptr[l + 1] = static_cast<Index>(sets.rows.size());
  }
  return sets;
}

}  // namespace

TEST_CASE("level sets respect every dependency; colours leave no coupled pair alike") {
  const Bsr<double> a = seven_point_bsr<double>(7, 6, 5, 2, 1);
  const LevelSets lower = lower_levels(a), upper = upper_levels(a);
  check_levels(a, lower, true);
  check_levels(a, upper, false);
  CHECK(lower.levels() == 7 + 6 + 5 - 2);  // the wavefronts x + y + z of the grid
  const std::vector<Index> colour = greedy_colours(a);
  for (std::size_t i = 0; i < a.block_rows; ++i)
    for (Index p = a.block_row_ptr[i]; p < a.block_row_ptr[i + 1]; ++p)
      if (a.block_col[p] != i) REQUIRE(colour[i] != colour[a.block_col[p]]);
  CHECK(*std::max_element(colour.begin(), colour.end()) == 1);  // red-black
  std::size_t groups = 0;
  const Permutation p = make_ordering(a, Ordering::colours, &groups);
  CHECK(groups == 2);
  const Bsr<double> pa = permute(a, p);
  validate(pa);
  CHECK(lower_levels(pa).levels() == 2);
  // Renumbering vectors there and back is the identity; P A P^T x' = (A x)' for x' = P x.
  std::mt19937_64 random(3);
  std::vector<double> x(a.block_rows * 2 * 3);
  for (double& v : x) v = double(random() % 1000);
  CHECK(unpermute_rows(permute_rows(x, p, 2, 3), p, 2, 3) == x);
  CHECK(multiply(pa, permute_rows(x, p, 2, 3), 3) == permute_rows(multiply(a, x, 3), p, 2, 3));
  CHECK(parse_ordering("colors") == Ordering::colours);
  CHECK_THROWS_AS(parse_ordering("random"), InvalidArgument);
}

TEST_CASE("level sets computed group by group on every core are the serial recursion's") {
  // Large enough for groups of rows at once (colours: one group a colour) and for level counts in
  // chunks; natural orders (wavefronts of one row) take the serial recursion.
  const Bsr<double> scalar = convection_diffusion_bsr<double>(50, 50, 32, 1, 1);
  Bsr<double> unsymmetric = scalar;  // every third row without its upper blocks: a pattern not symmetric
  unsymmetric.block_col.clear();
  unsymmetric.values.clear();
  for (std::size_t i = 0; i < scalar.block_rows; ++i) {
    for (Index p = scalar.block_row_ptr[i]; p < scalar.block_row_ptr[i + 1]; ++p) {
      if (i % 3 == 0 && scalar.block_col[p] > i) continue;
      unsymmetric.block_col.push_back(scalar.block_col[p]);
      unsymmetric.values.push_back(scalar.values[p]);
    }
    unsymmetric.block_row_ptr[i + 1] = static_cast<Index>(unsymmetric.block_col.size());
  }
  for (const Bsr<double>& a : {scalar, unsymmetric, seven_point_bsr<double>(30, 30, 30, 3, 1)}) {
    for (const Ordering ordering : {Ordering::natural, Ordering::colours, Ordering::block_colours, Ordering::levels}) {
      INFO("b = " << a.block_size << ", " << to_string(ordering));
      const Bsr<double> pa = permute(a, make_ordering(a, ordering));
      for (const bool lower : {true, false}) {
        const LevelSets sets = lower ? lower_levels(pa) : upper_levels(pa), serial = serial_levels(pa, lower);
        CHECK(sets.level_ptr == serial.level_ptr);
        CHECK(sets.rows == serial.rows);
      }
    }
  }
}

TEST_CASE("permute on every core: each new row the old row's blocks, sorted by new column") {
  for (const std::size_t b : {1, 2}) {
    CAPTURE(b);
    const Bsr<double> a = seven_point_bsr<double>(24, 20, 18, b, 1);
    const Permutation p = make_ordering(a, Ordering::colours);
    const Bsr<double> pa = permute(a, p);
    std::vector<Index> new_of_old(a.block_rows);
    for (std::size_t r = 0; r < a.block_rows; ++r) new_of_old[p.old_of_new[r]] = static_cast<Index>(r);
    const auto block = [&](const Bsr<double>& m, Index q) {
      return std::vector<double>(m.values.begin() + q * b * b, m.values.begin() + (q + 1) * b * b);
    };
    for (std::size_t r = 0; r < a.block_rows; ++r) {
      const Index old = p.old_of_new[r];
      std::vector<std::pair<Index, std::vector<double>>> expected;
      for (Index q = a.block_row_ptr[old]; q < a.block_row_ptr[old + 1]; ++q)
        expected.emplace_back(new_of_old[a.block_col[q]], block(a, q));
      std::sort(expected.begin(), expected.end());
      std::vector<std::pair<Index, std::vector<double>>> got;
      for (Index q = pa.block_row_ptr[r]; q < pa.block_row_ptr[r + 1]; ++q) got.emplace_back(pa.block_col[q], block(pa, q));
      REQUIRE(got == expected);
    }
  }
}

TEST_CASE("block colours: aggregates of neighbours, no coupled aggregates alike, few levels") {
  const Bsr<double> a = convection_diffusion_bsr<double>(30, 30, 30, 1, 1);  // 88 levels in natural order
  for (std::size_t size : {1, 8, 27}) {
    std::size_t colours = 0;
    const Permutation p = make_ordering(a, Ordering::block_colours, &colours, size);
    INFO("aggregate " << size);
    REQUIRE(p.old_of_new.size() == a.block_rows);
    CHECK(std::set<Index>(p.old_of_new.begin(), p.old_of_new.end()).size() == a.block_rows);
    const Bsr<double> pa = permute(a, p);
    validate(pa);
    const LevelSets lower = lower_levels(pa);
    check_levels(pa, lower, true);
    check_levels(pa, upper_levels(pa), false);
    // Aggregates of 1 are rows: plain greedy colours (red-black here).
    if (size == 1) CHECK(colours == 2);
    if (size == 1) CHECK(lower.levels() == 2);
    // Larger aggregates: more levels than colours, far fewer than the natural order's.
    if (size > 1) CHECK(lower.levels() > colours);
    CHECK(lower.levels() < lower_levels(a).levels() * (size <= 8 ? 1 : 2) / 3);  // 26 and 49 of 88 today
  }
  std::size_t colours = 0;
  const Permutation p = make_ordering(a, Ordering::block_colours, &colours, 8);
  // Rows of one aggregate are consecutive and increasing; every new row after the first of the
  // renumbering either continues the run or starts an aggregate no bigger than 8.
  std::size_t run = 1, longest = 1;
  for (std::size_t r = 1; r < p.old_of_new.size(); ++r) {
    run = p.old_of_new[r] > p.old_of_new[r - 1] ? run + 1 : 1;
    longest = std::max(longest, run);
  }
  CHECK(longest >= 8);
  CHECK(parse_ordering("block-colours") == Ordering::block_colours);
  CHECK_THROWS_AS(make_ordering(a, Ordering::block_colours, nullptr, 0), InvalidArgument);
}

TEST_CASE("ILU(0) of a tridiagonal matrix is its exact LU: one application solves the system") {
  // Block tridiagonal b = 2: ILU(0) has no fill to drop, so M = A.
  Bsr<double> a = seven_point_bsr<double>(9, 1, 1, 2, 4);
  const IluInput<double> input = prepare_ilu(a);
  const Bsr<double> f = factorize_ilu0(input);
  std::vector<double> x(a.rows);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = double(i % 7) - 3;
  const std::vector<double> solved = apply_ilu0(f, input.diagonal, multiply(a, x));
  for (std::size_t i = 0; i < x.size(); ++i) CHECK(solved[i] == doctest::Approx(x[i]).epsilon(1e-12));
}

TEST_CASE("block inversion with pivoting; pivot failures and missing diagonal blocks are named") {
  double d[9] = {0, 2, 1, 1, 0, 3, 4, 1, 0};  // needs row exchanges
  const double original[9] = {0, 2, 1, 1, 0, 3, 4, 1, 0};
  REQUIRE(invert_block(d, 3));
  for (std::size_t r = 0; r < 3; ++r)
    for (std::size_t c = 0; c < 3; ++c) {
      double s = 0;
      for (std::size_t e = 0; e < 3; ++e) s += original[r * 3 + e] * d[e * 3 + c];
      CHECK(s == doctest::Approx(r == c ? 1.0 : 0.0));
    }
  double singular[4] = {1, 2, 2, 4};
  double pivot = 1;
  CHECK_FALSE(invert_block(singular, 2, &pivot));
  CHECK(pivot < 1e-12);
  double nan_block[1] = {std::nan("")};
  CHECK_FALSE(invert_block(nan_block, 1));

  Bsr<double> a = seven_point_bsr<double>(3, 3, 1, 1, 2);
  a.values[a.block_row_ptr[4] + 2] = 0;  // row 4's diagonal (x, y neighbours before it)
  // After elimination the pivot is not exactly zero; a zero row is: clear row 0.
  for (Index p = a.block_row_ptr[0]; p < a.block_row_ptr[1]; ++p) a.values[p] = 0;
  try {
    factorize_ilu0(prepare_ilu(a));
    FAIL("no ZeroPivot");
  } catch (const ZeroPivot& error) {
    CHECK(error.block_row() == 0);
    CHECK(std::string(error.what()).find("--shift") != std::string::npos);
  }
  Bsr<double> holes = seven_point_bsr<double>(3, 1, 1, 1, 2);
  // Drop block (1, 1): row 1 keeps (1, 0) and (1, 2).
  holes.block_col.erase(holes.block_col.begin() + 3);
  holes.values.erase(holes.values.begin() + 3);
  for (std::size_t r = 2; r < holes.block_row_ptr.size(); ++r) --holes.block_row_ptr[r];
  CHECK_THROWS_WITH_AS(prepare_ilu(holes), doctest::Contains("block row 1 has no diagonal block"), InvalidArgument);
  CHECK_THROWS_AS(prepare_ilu(a, -1.0), InvalidArgument);
}

TEST_CASE("greedy colours: each row the least colour its neighbours leave, for symmetric and other patterns") {
  // The rule itself, over every neighbour in either direction, rows in order.
  const auto reference = [](const Bsr<double>& a) {
    std::vector<std::set<Index>> neighbours(a.block_rows);
    for (std::size_t i = 0; i < a.block_rows; ++i)
      for (Index p = a.block_row_ptr[i]; p < a.block_row_ptr[i + 1]; ++p)
        if (a.block_col[p] != i) neighbours[i].insert(a.block_col[p]), neighbours[a.block_col[p]].insert(Index(i));
    std::vector<Index> colour(a.block_rows, 0);
    for (std::size_t v = 0; v < a.block_rows; ++v) {
      std::set<Index> taken;
      for (const Index u : neighbours[v])
        if (u < v) taken.insert(colour[u]);
      while (taken.count(colour[v]) > 0) ++colour[v];
    }
    return colour;
  };
  const Bsr<double> symmetric = seven_point_bsr<double>(9, 7, 5, 1, 3);
  CHECK(greedy_colours(symmetric) == reference(symmetric));
  // Drop the upper (or the lower) blocks of every third row: the pattern is no longer symmetric,
  // the dropped blocks' mirrors standing alone below (or above) the diagonal.
  for (const bool upper : {true, false}) {
    Bsr<double> lopsided = symmetric;
    lopsided.block_col.clear();
    lopsided.values.clear();
    lopsided.block_row_ptr.assign(1, 0);
    for (std::size_t i = 0; i < symmetric.block_rows; ++i) {
      for (Index p = symmetric.block_row_ptr[i]; p < symmetric.block_row_ptr[i + 1]; ++p) {
        if (i % 3 == 0 && (upper ? symmetric.block_col[p] > i : symmetric.block_col[p] < i)) continue;
        lopsided.block_col.push_back(symmetric.block_col[p]);
        lopsided.values.push_back(symmetric.values[p]);
      }
      lopsided.block_row_ptr.push_back(Index(lopsided.block_col.size()));
    }
    INFO((upper ? "upper" : "lower") << " blocks dropped");
    REQUIRE_NOTHROW(validate(lopsided));
    CHECK(greedy_colours(lopsided) == reference(lopsided));
  }
}
