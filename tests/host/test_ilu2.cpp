// ILU2 and IC2 (matrix/ilu2.hpp) against dense references, static pivoting, and the
// nested-dissection ordering (matrix/nested_dissection.hpp).
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "ziggurat/base/error.hpp"
#include "ziggurat/io/matrix_market.hpp"
#include "ziggurat/matrix/ilu2.hpp"
#include "ziggurat/matrix/ilu_factors.hpp"
#include "ziggurat/matrix/nested_dissection.hpp"
#include "ziggurat/matrix/ordering.hpp"
#include "ziggurat/matrix/static_pivoting.hpp"

using namespace ziggurat;
using namespace ziggurat::sparse;

namespace {

using Dense = std::vector<std::vector<double>>;

Dense dense(const Bsr<double>& a) {
  const std::size_t n = a.block_rows * a.block_size, b = a.block_size;
  Dense d(n, std::vector<double>(n, 0));
  for (std::size_t i = 0; i < a.block_rows; ++i)
    for (Index p = a.block_row_ptr[i]; p < a.block_row_ptr[i + 1]; ++p)
      for (std::size_t r = 0; r < b; ++r)
        for (std::size_t c = 0; c < b; ++c) d[i * b + r][a.block_col[p] * b + c] = a.values[p * b * b + r * b + c];
  return d;
}

Dense product(const Dense& x, const Dense& y) {
  const std::size_t n = x.size();
  Dense z(n, std::vector<double>(n, 0));
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t k = 0; k < n; ++k)
      if (x[i][k] != 0)
        for (std::size_t j = 0; j < n; ++j) z[i][j] += x[i][k] * y[k][j];
  return z;
}

Dense inverse(Dense m) {
  const std::size_t n = m.size();
  Dense inv(n, std::vector<double>(n, 0));
  for (std::size_t i = 0; i < n; ++i) inv[i][i] = 1;
  for (std::size_t c = 0; c < n; ++c) {
    std::size_t best = c;
    for (std::size_t r = c + 1; r < n; ++r)
      if (std::abs(m[r][c]) > std::abs(m[best][c])) best = r;
    std::swap(m[c], m[best]);
    std::swap(inv[c], inv[best]);
    const double p = m[c][c];
    for (std::size_t e = 0; e < n; ++e) {
      m[c][e] /= p;
      inv[c][e] /= p;
    }
    for (std::size_t r = 0; r < n; ++r) {
      if (r == c || m[r][c] == 0) continue;
      const double f = m[r][c];
      for (std::size_t e = 0; e < n; ++e) {
        m[r][e] -= f * m[c][e];
        inv[r][e] -= f * inv[c][e];
      }
    }
  }
  return inv;
}

// L (unit lower) and U (D on the diagonal, D (D^-1 U) above) from the layout of ilu_factors.hpp.
std::pair<Dense, Dense> unpack(const Ilu2Factors<double>& f) {
  const Bsr<double>& m = f.factors;
  const std::size_t b = m.block_size, n = m.block_rows * b;
  Dense l(n, std::vector<double>(n, 0)), u = l;
  for (std::size_t i = 0; i < n; ++i) l[i][i] = 1;
  const Dense all = dense(m);
  for (std::size_t i = 0; i < m.block_rows; ++i) {
    Dense dinv(b, std::vector<double>(b));
    for (std::size_t r = 0; r < b; ++r)
      for (std::size_t c = 0; c < b; ++c) dinv[r][c] = all[i * b + r][i * b + c];
    const Dense d = inverse(dinv);
    for (Index p = m.block_row_ptr[i]; p < m.block_row_ptr[i + 1]; ++p) {
      const std::size_t j = m.block_col[p];
      for (std::size_t r = 0; r < b; ++r)
        for (std::size_t c = 0; c < b; ++c) {
          if (j < i) l[i * b + r][j * b + c] = all[i * b + r][j * b + c];
          if (j == i) u[i * b + r][j * b + c] = d[r][c];
          if (j > i) {
            double s = 0;
            for (std::size_t e = 0; e < b; ++e) s += d[r][e] * all[i * b + e][j * b + c];
            u[i * b + r][j * b + c] = s;
          }
        }
    }
  }
  return {l, u};
}

// ||A - L U||_F / ||A||_F over the matrix's own rows and columns.
double factor_error(const Bsr<double>& a, const Ilu2Factors<double>& f) {
  const auto [l, u] = unpack(f);
  const Dense lu = product(l, u), d = dense(a);
  double num = 0, den = 0;
  for (std::size_t i = 0; i < a.rows; ++i)
    for (std::size_t j = 0; j < a.cols; ++j) {
      num += (lu[i][j] - d[i][j]) * (lu[i][j] - d[i][j]);
      den += d[i][j] * d[i][j];
    }
  return std::sqrt(num / den);
}

Ilu2Options with_threshold(double tau, std::size_t threads = 0) {
  Ilu2Options o;
  o.threshold = tau;
  o.threads = threads;
  return o;
}

Bsr<double> read_bsr(const char* name, std::size_t b) {
  const auto path = std::filesystem::path(ZIGGURAT_TEST_DATA_DIR) / "matrices" / name;
  return to_bsr(read_matrix_market<double>(path.string()).matrix, b);
}

}  // namespace

TEST_CASE("ILU2 with threshold 0 is the complete LU: L U is A") {
  for (std::size_t b : {1, 2, 3}) {
    const Bsr<double> a = convection_diffusion_bsr<double>(4, 3, 3, b, 7);
    const Ilu2Factors<double> f = factorize_ilu2(a, with_threshold(0));
    INFO("b = " << b);
    CHECK(factor_error(a, f) < 1e-13);
    CHECK(f.fill > 1.5);  // the fill of a complete factorisation of a 3D grid
    CHECK(f.second_order_blocks == 0);
  }
  // A padded last block (48 rows in blocks of 5) and a real matrix's scales.
  const Bsr<double> real = read_bsr("bcsstk01.mtx", 5);
  CHECK(factor_error(real, factorize_ilu2(real, with_threshold(0))) < 1e-12);
}

// A - L U = L R + W U - E: the second-order parts, of norms below tau, are what the preconditioner leaves out.
TEST_CASE("ILU2's error ||A - L U|| falls with tau, below 1.5 tau, as its fill grows; a huge tau leaves block Jacobi") {
  const Bsr<double> a = convection_diffusion_bsr<double>(6, 5, 4, 2, 3);
  double previous_error = 1, previous_fill = 0;
  for (double tau : {0.3, 0.1, 0.03, 0.01}) {
    const Ilu2Factors<double> f = factorize_ilu2(a, with_threshold(tau));
    const double error = factor_error(a, f);
    INFO("tau = " << tau << ": error " << error << ", fill " << f.fill);
    CHECK(error < previous_error);
    CHECK(f.fill >= previous_fill);
    CHECK(error < 1.5 * tau);
    previous_error = error;
    previous_fill = f.fill;
  }
  const Ilu2Factors<double> jacobi = factorize_ilu2(a, with_threshold(1e6));
  CHECK(jacobi.factors.blocks() == a.block_rows);
  for (std::size_t i = 0; i < a.block_rows; ++i) {
    CHECK(jacobi.factors.block_col[jacobi.diagonal[i]] == i);
    std::vector<double> d(a.values.begin() + prepare_ilu(a).diagonal[i] * 4, a.values.begin() + prepare_ilu(a).diagonal[i] * 4 + 4);
    REQUIRE(invert_block(d.data(), 2));
    CHECK(std::memcmp(d.data(), jacobi.factors.values.data() + i * 4, 4 * sizeof(double)) == 0);
  }
}

TEST_CASE("IC2's lower blocks are the exact transposes of its upper ones, and U^T D^-1 U approximates A") {
  const Bsr<double> a = symmetric_part(seven_point_bsr<double>(5, 4, 4, 3, 2));
  Ilu2Options o = with_threshold(0.05);
  o.symmetric = true;
  const Ilu2Factors<double> f = factorize_ilu2(a, o);
  const Bsr<double>& m = f.factors;
  const std::size_t bb = 9;
  std::size_t lower = 0;
  for (std::size_t i = 0; i < m.block_rows; ++i) {
    for (Index p = m.block_row_ptr[i]; p < f.diagonal[i]; ++p) {
      const Index k = m.block_col[p];
      // Block (k, i) holds D_k^-1 U_ki; block (i, k) holds L_ik = U_ki^T D_k^-1 = (D_k^-1 U_ki)^T.
      const auto first = m.block_col.begin() + m.block_row_ptr[k], last = m.block_col.begin() + m.block_row_ptr[k + 1];
      const auto at = std::lower_bound(first, last, static_cast<Index>(i));
      REQUIRE((at != last && *at == i));
      const double* up = m.values.data() + (at - m.block_col.begin()) * bb;
      const double* low = m.values.data() + p * bb;
      for (std::size_t r = 0; r < 3; ++r)
        for (std::size_t c = 0; c < 3; ++c) REQUIRE(low[r * 3 + c] == up[c * 3 + r]);
      ++lower;
    }
  }
  CHECK(2 * lower + m.block_rows == m.blocks());  // the pattern is symmetric
  CHECK(factor_error(a, f) < 1.5 * 0.05);
  // With threshold 0, IC2 is the complete factorisation A = U^T D^-1 U.
  o.threshold = 0;
  CHECK(factor_error(a, factorize_ilu2(a, o)) < 1e-13);
}

TEST_CASE("ILU2 and IC2 factors have the same bits on any number of threads") {
  const Bsr<double> base = convection_diffusion_bsr<double>(14, 12, 10, 2, 5);
  const Bsr<double> a = permute(base, make_ordering(base, Ordering::nested_dissection));
  for (bool symmetric : {false, true}) {
    const Bsr<double> m = symmetric ? symmetric_part(a) : a;
    Ilu2Options o = with_threshold(0.01, 1);
    o.symmetric = symmetric;
    const Ilu2Factors<double> one = factorize_ilu2(m, o);
    CHECK(one.parallel_rows == 0);
    for (std::size_t threads : {2, 3, 8}) {
      o.threads = threads;
      const Ilu2Factors<double> many = factorize_ilu2(m, o);
      INFO((symmetric ? "IC2" : "ILU2") << " on " << threads << " threads");
      CHECK(many.parallel_rows > m.block_rows / 2);  // the subdomains side by side
      CHECK(many.factors.block_row_ptr == one.factors.block_row_ptr);
      CHECK(many.factors.block_col == one.factors.block_col);
      REQUIRE(many.factors.values.size() == one.factors.values.size());
      CHECK(std::memcmp(many.factors.values.data(), one.factors.values.data(), one.factors.values.size() * sizeof(double)) == 0);
    }
  }
}

TEST_CASE("a failing ILU2 pivot names its block row and the remedies; static pivoting replaces it") {
  // Block row 0 of a 2x2-block system has a zero diagonal block: no elimination can change it.
  Bsr<double> a = seven_point_bsr<double>(3, 3, 2, 2, 4);
  const std::vector<Index> diagonal = prepare_ilu(a).diagonal;
  std::fill_n(a.values.begin() + diagonal[0] * 4, 4, 0.0);
  for (bool symmetric : {false, true}) {
    Ilu2Options o;
    o.symmetric = symmetric;
    try {
      factorize_ilu2(symmetric ? symmetric_part(a) : a, o);
      FAIL("no ZeroPivot");
    } catch (const ZeroPivot& error) {
      const std::string text = error.what();
      CHECK(error.block_row() == 0);
      CHECK(text.find(symmetric ? "IC2 failed" : "ILU2 failed") != std::string::npos);
      CHECK(text.find("block row 0") != std::string::npos);
      CHECK(text.find("--shift") != std::string::npos);
      CHECK(text.find("--threshold") != std::string::npos);
      CHECK((text.find("--static-pivoting") != std::string::npos) == !symmetric);
    }
  }
  Ilu2Options o;
  o.replace_tiny_pivots = true;
  const Ilu2Factors<double> f = factorize_ilu2(a, o);
  CHECK(f.replaced_pivots == 1);
  o.threshold = 0;  // the smallest replacement, sqrt(eps) s_i, sits on the bound: still taken
  CHECK(factorize_ilu2(a, o).replaced_pivots == 1);
  // A missing diagonal block is filled: a 2 x 2 matrix of blocks with none on its diagonal.
  Bsr<double> swap;
  swap.rows = swap.cols = 2;
  swap.block_rows = swap.block_cols = 2;
  swap.block_row_ptr = {0, 1, 2};
  swap.block_col = {1, 0};
  swap.values = {3, 5};
  CHECK(needs_matching(swap));
  CHECK_THROWS_AS(factorize_ilu2(swap, Ilu2Options{}), ZeroPivot);
  const Permutation rows = diagonal_matching(swap);
  CHECK(rows.old_of_new == std::vector<Index>{1, 0});
  const Bsr<double> matched = permute_block_rows(swap, rows);
  CHECK(!needs_matching(matched));
  CHECK(factor_error(matched, factorize_ilu2(matched, Ilu2Options{})) < 1e-15);
  CHECK_THROWS_AS(factorize_ilu2(a, with_threshold(-1)), InvalidArgument);
  CHECK(parse_static_pivoting("on") == StaticPivoting::on);
  CHECK_THROWS_AS(parse_static_pivoting("yes"), InvalidArgument);
}

TEST_CASE("static pivoting's matching maximises the product of the diagonal; structural singularity is refused") {
  // bp_1200: 816 of its 822 diagonal entries are zero.
  const Bsr<double> a = read_bsr("bp_1200.mtx", 1);
  CHECK(needs_matching(a));
  const Permutation p = diagonal_matching(a);
  CHECK(std::set<Index>(p.old_of_new.begin(), p.old_of_new.end()).size() == a.block_rows);
  const Bsr<double> m = permute_block_rows(a, p);
  validate(m);
  CHECK(!needs_matching(m));
  // In blocks of 3 the block matching leaves singular diagonal blocks (zeros inside them): single
  // rows are matched instead and the matched matrix cut into blocks again, padding kept last.
  const Bsr<double> blocked = read_bsr("bp_1200.mtx", 3);
  const MatchedRows<double> rows = match_rows(blocked);
  CHECK(rows.block == 1);
  REQUIRE(rows.rows.old_of_new.size() == blocked.block_rows * 3);
  CHECK(std::set<Index>(rows.rows.old_of_new.begin(), rows.rows.old_of_new.end()).size() == blocked.block_rows * 3);
  const Csr<double> single = to_csr(rows.matrix);  // every diagonal entry stored and non-zero now
  for (std::size_t r = 0; r < single.rows; ++r) {
    const auto first = single.col.begin() + single.row_ptr[r], last = single.col.begin() + single.row_ptr[r + 1];
    const auto at = std::lower_bound(first, last, static_cast<Index>(r));
    REQUIRE((at != last && *at == r && single.values[at - single.col.begin()] != 0));
  }
  CHECK(multiply(rows.matrix, std::vector<double>(822, 1.0)) ==
        permute_rows(multiply(blocked, std::vector<double>(822, 1.0)), Permutation{{rows.rows.old_of_new.begin(),
                                                                                     rows.rows.old_of_new.begin() + 822}}, 1, 1));
  CHECK(match_rows(read_bsr("fs_183_1.mtx", 3)).rows.identity());  // its diagonal is already the largest
  // No other permutation of a small matrix has a larger product: all 4! of a dense 4 x 4.
  Bsr<double> d;
  d.rows = d.cols = d.block_rows = d.block_cols = 4;
  d.block_row_ptr = {0, 4, 8, 12, 16};
  d.block_col = {0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3};
  d.values = {1, 9, 2, 8, 7, 1, 8, 2, 3, 2, 1, 9, 9, 3, 4, 1};
  std::vector<Index> best{0, 1, 2, 3}, q = best;
  double most = 0;
  do {
    double product = 1;
    for (std::size_t c = 0; c < 4; ++c) product *= d.values[q[c] * 4 + c];
    if (product > most) {
      most = product;
      best = q;
    }
  } while (std::next_permutation(q.begin(), q.end()));
  CHECK(diagonal_matching(d).old_of_new == best);
  // A column with no stored block: structurally singular.
  Bsr<double> singular = d;
  singular.block_row_ptr = {0, 1, 2, 3, 4};
  singular.block_col = {0, 0, 2, 3};
  singular.values = {1, 2, 3, 4};
  CHECK_THROWS_AS(diagonal_matching(singular), InvalidArgument);
}

TEST_CASE("nested dissection: a permutation whose subdomains share no block, separators after their children") {
  const Bsr<double> a = seven_point_bsr<double>(16, 12, 8, 1, 3);
  const DissectionTree tree = nested_dissection(a);
  REQUIRE(tree.old_of_new.size() == a.block_rows);
  CHECK(std::set<Index>(tree.old_of_new.begin(), tree.old_of_new.end()).size() == a.block_rows);
  CHECK(default_dissection_depth(a.block_rows) == 4);  // 1536 rows: 16 leaves of 96
  CHECK(tree.leaves == 16);
  CHECK(tree.node_ptr.back() == a.block_rows);
  // Node of every new row; nodes of one stage (the leaves, or separators of one height) never couple.
  std::vector<std::size_t> node(a.block_rows);
  for (std::size_t t = 0; t < tree.nodes(); ++t)
    for (Index r = tree.node_ptr[t]; r < tree.node_ptr[t + 1]; ++r) node[r] = t;
  for (std::size_t t = 1; t < tree.nodes(); ++t) CHECK(tree.stage[t] >= tree.stage[t - 1]);
  const Bsr<double> pa = permute(a, Permutation{tree.old_of_new});
  for (std::size_t i = 0; i < pa.block_rows; ++i)
    for (Index p = pa.block_row_ptr[i]; p < pa.block_row_ptr[i + 1]; ++p) {
      const std::size_t s = node[i], t = node[pa.block_col[p]];
      if (s != t) REQUIRE(tree.stage[s] != tree.stage[t]);
    }
  // The same ordering through make_ordering, on every call (METIS with a fixed seed).
  std::size_t groups = 0;
  CHECK(make_ordering(a, Ordering::nested_dissection, &groups).old_of_new == tree.old_of_new);
  CHECK(groups == 16);
  CHECK(nested_dissection(a).old_of_new == tree.old_of_new);
  CHECK(parse_ordering("nested-dissection") == Ordering::nested_dissection);
  CHECK(std::string(to_string(Ordering::nested_dissection)) == "nested-dissection");
  // ILU2's fill stays inside the bordered blocks: no block between two subdomains.
  const Ilu2Factors<double> f = factorize_ilu2(pa, with_threshold(0));
  for (std::size_t i = 0; i < pa.block_rows; ++i)
    for (Index p = f.factors.block_row_ptr[i]; p < f.factors.block_row_ptr[i + 1]; ++p) {
      const std::size_t s = node[i], t = node[f.factors.block_col[p]];
      if (s != t) REQUIRE(tree.stage[s] != tree.stage[t]);
    }
  // A small matrix is one leaf; a padded last block stays last.
  const Bsr<double> real = read_bsr("bcsstk01.mtx", 5);
  const Permutation p = make_ordering(real, Ordering::nested_dissection);
  CHECK(p.old_of_new.back() == real.block_rows - 1);
}
