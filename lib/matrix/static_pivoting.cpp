#include "ziggurat/matrix/static_pivoting.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <queue>
#include <string>
#include <utility>
#include <vector>

#include "ziggurat/base/error.hpp"
#include "ziggurat/matrix/ilu_factors.hpp"

namespace ziggurat::sparse {

namespace {

constexpr Index kNone = ~Index{0};

template <class T>
double norm(const T* block, std::size_t bb) {
  double sum = 0;
  for (std::size_t e = 0; e < bb; ++e) sum += double(block[e]) * double(block[e]);
  return std::sqrt(sum);
}

}  // namespace

const char* to_string(StaticPivoting pivoting) {
  switch (pivoting) {
    case StaticPivoting::automatic: return "auto";
    case StaticPivoting::on: return "on";
    case StaticPivoting::off: return "off";
  }
  return "?";
}

StaticPivoting parse_static_pivoting(std::string_view text) {
  for (auto p : {StaticPivoting::automatic, StaticPivoting::on, StaticPivoting::off}) {
    if (text == to_string(p)) return p;
  }
  throw InvalidArgument("unknown static pivoting '" + std::string(text) + "': use auto, on or off");
}

template <class T>
bool needs_matching(const Bsr<T>& a) {
  const std::size_t bb = a.block_size * a.block_size;
  std::vector<T> d(bb);
  for (std::size_t i = 0; i < a.block_rows; ++i) {
    const auto first = a.block_col.begin() + a.block_row_ptr[i], last = a.block_col.begin() + a.block_row_ptr[i + 1];
    const auto at = std::lower_bound(first, last, static_cast<Index>(i));
    if (at == last || *at != i) return true;
    std::copy_n(a.values.begin() + (at - a.block_col.begin()) * bb, bb, d.begin());
    // The padding lines of a partial last block are zero here; prepare_ilu gives them a diagonal.
    if ((i + 1) * a.block_size > a.rows)
      for (std::size_t r = a.rows - i * a.block_size; r < a.block_size; ++r) d[r * a.block_size + r] = T(1);
    if (!invert_block(d.data(), a.block_size)) return true;
  }
  return false;
}

template <class T>
Permutation diagonal_matching(const Bsr<T>& a) {
  validate(a);
  if (a.block_rows != a.block_cols) throw InvalidArgument("static pivoting needs a square block structure");
  const std::size_t bb = a.block_size * a.block_size, n = a.block_rows;
  const std::size_t m = a.rows != n * a.block_size ? n - 1 : n;  // a padded last block stays in place
  // Column lists of (row, cost), costs log(largest norm of the column) - log(norm) >= 0.
  std::vector<Index> ptr(m + 1, 0);
  std::vector<double> largest(m, 0), value(a.blocks(), 0);
  for (std::size_t i = 0; i < m; ++i)
    for (Index p = a.block_row_ptr[i]; p < a.block_row_ptr[i + 1]; ++p) {
      const Index j = a.block_col[p];
      if (j >= m) continue;
      value[p] = norm(a.values.data() + std::size_t{p} * bb, bb);
      if (value[p] > 0 && std::isfinite(value[p])) {
        largest[j] = std::max(largest[j], value[p]);
        ++ptr[j + 1];
      }
    }
  for (std::size_t j = 0; j < m; ++j) ptr[j + 1] += ptr[j];
  std::vector<Index> row(ptr[m]);
  std::vector<double> cost(ptr[m]);
  std::vector<Index> at(ptr.begin(), ptr.end() - 1);
  for (std::size_t i = 0; i < m; ++i)
    for (Index p = a.block_row_ptr[i]; p < a.block_row_ptr[i + 1]; ++p) {
      const Index j = a.block_col[p];
      if (j >= m || !(value[p] > 0) || !std::isfinite(value[p])) continue;
      row[at[j]] = static_cast<Index>(i);
      cost[at[j]++] = std::log(largest[j]) - std::log(value[p]);
    }
  const auto singular = [&](std::size_t j) {
    return InvalidArgument("static pivoting: A is structurally singular (no matching of its block rows to its block "
                           "columns reaches block column " + std::to_string(j) + "), so no ordering or factorisation "
                           "can solve it");
  };
  // Duals u (columns) and v (rows) keep every reduced cost c - u - v >= 0, matched ones at 0.
  std::vector<double> u(m, 0), v(m, 0);
  std::vector<Index> row_of(m, kNone), col_of(m, kNone);
  for (std::size_t j = 0; j < m; ++j) {  // the cheap matches first: each column's largest block,
    if (ptr[j] == ptr[j + 1]) throw singular(j);  // the diagonal one among equals
    Index pick = kNone;
    for (Index q = ptr[j]; q < ptr[j + 1]; ++q)
      if (cost[q] == 0 && col_of[row[q]] == kNone && (pick == kNone || row[q] == j)) pick = row[q];
    if (pick != kNone) {
      row_of[j] = pick;
      col_of[pick] = static_cast<Index>(j);
    }
  }
  // Then a shortest augmenting path (Dijkstra on the reduced costs) for each column left.
  const double infinity = std::numeric_limits<double>::infinity();
  std::vector<double> dist(m, infinity);
  std::vector<Index> via(m, kNone);
  std::vector<char> done(m, 0);
  std::vector<Index> touched, settled;
  using Item = std::pair<double, Index>;
  for (std::size_t j0 = 0; j0 < m; ++j0) {
    if (row_of[j0] != kNone) continue;
    std::priority_queue<Item, std::vector<Item>, std::greater<>> queue;
    const auto relax = [&](Index j, double base) {
      for (Index q = ptr[j]; q < ptr[j + 1]; ++q) {
        const Index i = row[q];
        if (done[i]) continue;
        const double d = base + std::max(0.0, cost[q] - u[j] - v[i]);
        if (d < dist[i]) {
          if (dist[i] == infinity) touched.push_back(i);
          dist[i] = d;
          via[i] = j;
          queue.emplace(d, i);
        }
      }
    };
    relax(static_cast<Index>(j0), 0);
    Index free_row = kNone;
    double reach = 0;
    while (!queue.empty()) {
      const auto [d, i] = queue.top();
      queue.pop();
      if (done[i] || d > dist[i]) continue;
      done[i] = 1;
      settled.push_back(i);
      if (col_of[i] == kNone) {
        free_row = i;
        reach = d;
        break;
      }
      relax(col_of[i], d);
    }
    if (free_row == kNone) throw singular(j0);
    for (Index i : settled) {  // the duals: rows and columns reached before the free row
      if (col_of[i] != kNone) u[col_of[i]] += reach - dist[i];
      v[i] += dist[i] - reach;
    }
    u[j0] += reach;
    for (Index i = free_row;;) {  // augment along the path
      const Index j = via[i], previous = row_of[j];
      row_of[j] = i;
      col_of[i] = j;
      if (j == j0) break;
      i = previous;
    }
    for (Index i : touched) {
      dist[i] = infinity;
      done[i] = 0;
    }
    touched.clear();
    settled.clear();
  }
  Permutation p;
  bool identity = true;
  for (std::size_t j = 0; j < m; ++j) identity = identity && row_of[j] == j;
  if (identity) return p;
  p.old_of_new.assign(row_of.begin(), row_of.end());
  if (m < n) p.old_of_new.push_back(static_cast<Index>(n - 1));
  return p;
}

template <class T>
Bsr<T> permute_block_rows(const Bsr<T>& a, const Permutation& rows) {
  if (rows.identity()) return a;
  if (rows.old_of_new.size() != a.block_rows) {
    throw InvalidArgument("permute_block_rows: the permutation has " + std::to_string(rows.old_of_new.size()) +
                          " entries for " + std::to_string(a.block_rows) + " block rows");
  }
  const std::size_t bb = a.block_size * a.block_size;
  Bsr<T> out = a;
  out.block_row_ptr.assign(1, 0);
  out.block_col.clear();
  out.values.clear();
  for (Index old : rows.old_of_new) {
    out.block_col.insert(out.block_col.end(), a.block_col.begin() + a.block_row_ptr[old],
                         a.block_col.begin() + a.block_row_ptr[old + 1]);
    out.values.insert(out.values.end(), a.values.begin() + std::size_t{a.block_row_ptr[old]} * bb,
                      a.values.begin() + std::size_t{a.block_row_ptr[old + 1]} * bb);
    out.block_row_ptr.push_back(static_cast<Index>(out.block_col.size()));
  }
  return out;
}

template <class T>
MatchedRows<T> match_rows(const Bsr<T>& a) {
  MatchedRows<T> m;
  m.block = a.block_size;
  m.rows = diagonal_matching(a);
  if (!m.rows.identity()) m.matrix = permute_block_rows(a, m.rows);
  if (a.block_size == 1 || !needs_matching(m.rows.identity() ? a : m.matrix)) return m;
  // Single rows: matched on A's entries (the matrix's own rows; the padding's stay last).
  const Bsr<T> single = to_bsr(to_csr(a), 1);
  Permutation p = diagonal_matching(single);
  m.block = 1;
  if (p.identity()) {
    m.rows = {};
    m.matrix = {};
    return m;
  }
  m.matrix = to_bsr(to_csr(permute_block_rows(single, p)), a.block_size);
  for (std::size_t r = a.rows; r < a.block_rows * a.block_size; ++r) p.old_of_new.push_back(static_cast<Index>(r));
  m.rows = std::move(p);
  return m;
}

#define ZIGGURAT_STATIC_PIVOTING_INSTANTIATE(T)                        \
  template MatchedRows<T> match_rows<T>(const Bsr<T>&);               \
  template bool needs_matching<T>(const Bsr<T>&);                     \
  template Permutation diagonal_matching<T>(const Bsr<T>&);           \
  template Bsr<T> permute_block_rows<T>(const Bsr<T>&, const Permutation&);

ZIGGURAT_STATIC_PIVOTING_INSTANTIATE(float)
ZIGGURAT_STATIC_PIVOTING_INSTANTIATE(double)

#undef ZIGGURAT_STATIC_PIVOTING_INSTANTIATE

}  // namespace ziggurat::sparse
