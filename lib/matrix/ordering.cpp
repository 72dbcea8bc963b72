#include "ziggurat/matrix/ordering.hpp"

#include <algorithm>
#include <cstdint>
#include <future>
#include <numeric>

#include "base/integer_math.hpp"
#include "base/large_arrays.hpp"
#include "base/parallel.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/matrix/nested_dissection.hpp"

namespace ziggurat::sparse {

namespace {

template <class T>
void require_square_blocks(const Bsr<T>& a, const char* what) {
  if (a.block_rows != a.block_cols) {
    throw InvalidArgument(std::string(what) + " needs a square block structure; the matrix has " +
                          std::to_string(a.block_rows) + " x " + std::to_string(a.block_cols) + " blocks");
  }
}

// Block rows a chunk of the host loops takes.
constexpr std::size_t kRowChunk = 4096;

// Rows grouped by `level` (counting sort: stable, so rows stay increasing inside a level). Chunks
// of rows count their levels on every core and scatter into their own slots, which the counts
// make the serial sort's; with more levels than rows per chunk, the serial sort.
LevelSets group_by_level(const std::vector<Index>& level) {
  LevelSets sets;
  const std::size_t n = level.size(), chunk = 16 * kRowChunk, chunks = ziggurat::detail::ceil_div(n, chunk);
  const Index levels = level.empty() ? 0 : *std::max_element(level.begin(), level.end()) + 1;
  sets.level_ptr.assign(levels + 1, 0);
  ziggurat::detail::resize_large(sets.rows, n);
  if (chunks < 2 || levels > chunk) {
    for (Index l : level) ++sets.level_ptr[l + 1];
    for (Index l = 0; l < levels; ++l) sets.level_ptr[l + 1] += sets.level_ptr[l];
    std::vector<Index> next(sets.level_ptr.begin(), sets.level_ptr.end() - 1);
    for (std::size_t i = 0; i < n; ++i) sets.rows[next[level[i]]++] = static_cast<Index>(i);
    return sets;
  }
  std::vector<Index> next(chunks * levels, 0);  // next[c * levels + l]: chunk c's next slot of level l
  ziggurat::detail::for_chunks(n, chunk, [&](std::size_t first, std::size_t last) {
    Index* count = next.data() + first / chunk * levels;
    for (std::size_t i = first; i < last; ++i) ++count[level[i]];
  });
  Index at = 0;
  for (Index l = 0; l < levels; ++l) {
    for (std::size_t c = 0; c < chunks; ++c) {
      const Index count = next[c * levels + l];
      next[c * levels + l] = at;
      at += count;
    }
    sets.level_ptr[l + 1] = at;
  }
  ziggurat::detail::for_chunks(n, chunk, [&](std::size_t first, std::size_t last) {
    Index* slot = next.data() + first / chunk * levels;
    for (std::size_t i = first; i < last; ++i) sets.rows[slot[level[i]]++] = static_cast<Index>(i);
  });
  return sets;
}

// An undirected graph in CSR form; a vertex may list itself or a neighbour twice.
struct Graph {
  std::vector<Index> ptr{0}, adjacent;
  std::size_t vertices() const noexcept { return ptr.size() - 1; }
};

// Whether every stored block (i, j) has a stored (j, i), checked on every core. Only the blocks
// above the diagonal are looked up: when each (i, j), j > i, has its (j, i) and there are as many
// blocks below the diagonal as above, those mirrors are all the blocks below (a row's columns are
// distinct).
template <class T>
bool structurally_symmetric(const Bsr<T>& a) {
  const std::size_t chunks = ziggurat::detail::ceil_div(a.block_rows, kRowChunk);
  std::vector<char> mirrored(chunks, 1);
  std::vector<std::ptrdiff_t> above_minus_below(chunks, 0);
  ziggurat::detail::for_chunks(a.block_rows, kRowChunk, [&](std::size_t first, std::size_t last) {
    std::ptrdiff_t balance = 0;
    for (std::size_t i = first; i < last && mirrored[first / kRowChunk]; ++i) {
      const auto begin = a.block_col.begin() + a.block_row_ptr[i], end = a.block_col.begin() + a.block_row_ptr[i + 1];
      const auto above = std::upper_bound(begin, end, static_cast<Index>(i));
      const auto diagonal = above != begin && above[-1] == i ? 1 : 0;
      balance += (end - above) - (above - begin - diagonal);
      for (auto p = above; p < end; ++p) {
        const auto row = a.block_col.begin() + a.block_row_ptr[*p], row_end = a.block_col.begin() + a.block_row_ptr[*p + 1];
        if (!std::binary_search(row, row_end, static_cast<Index>(i))) mirrored[first / kRowChunk] = 0;
      }
    }
    above_minus_below[first / kRowChunk] = balance;
  });
  std::ptrdiff_t balance = 0;
  for (const std::ptrdiff_t b : above_minus_below) balance += b;
  return balance == 0 && std::all_of(mirrored.begin(), mirrored.end(), [](char m) { return m != 0; });
}

// The pattern made symmetric: row i's neighbours are the columns it stores and the rows that
// store column i (A's own pattern where it is symmetric already, as most PDE matrices are).
template <class T>
Graph symmetric_pattern(const Bsr<T>& a) {
  if (structurally_symmetric(a)) return {a.block_row_ptr, a.block_col};
  const std::size_t n = a.block_rows;
  std::vector<Index> t_ptr(n + 1, 0), t_row(a.blocks());
  for (Index c : a.block_col) ++t_ptr[c + 1];
  for (std::size_t i = 0; i < n; ++i) t_ptr[i + 1] += t_ptr[i];
  std::vector<Index> next(t_ptr.begin(), t_ptr.end() - 1);
  for (std::size_t i = 0; i < n; ++i) {
    for (Index p = a.block_row_ptr[i]; p < a.block_row_ptr[i + 1]; ++p) t_row[next[a.block_col[p]]++] = static_cast<Index>(i);
  }
  Graph g;
  g.ptr.reserve(n + 1);
  g.adjacent.reserve(2 * a.blocks());
  for (std::size_t i = 0; i < n; ++i) {
    g.adjacent.insert(g.adjacent.end(), a.block_col.begin() + a.block_row_ptr[i], a.block_col.begin() + a.block_row_ptr[i + 1]);
    g.adjacent.insert(g.adjacent.end(), t_row.begin() + t_ptr[i], t_row.begin() + t_ptr[i + 1]);
    g.ptr.push_back(static_cast<Index>(g.adjacent.size()));
  }
  return g;
}

// Greedy colouring of a structurally symmetric matrix's rows, in order, each the smallest colour
// none of its earlier neighbours has: those are the columns before the diagonal, so neither the
// graph nor the later columns are read (the same colours as greedy_colour of its pattern).
template <class T>
std::vector<Index> greedy_colour_lower(const Bsr<T>& a) {
  std::vector<Index> colour = ziggurat::detail::large_vector<Index>(a.block_rows);
  std::vector<std::size_t> seen_by;  // seen_by[c] == v + 1: colour c is taken by an earlier neighbour of v
  for (std::size_t v = 0; v < a.block_rows; ++v) {
    for (Index p = a.block_row_ptr[v]; p < a.block_row_ptr[v + 1] && a.block_col[p] < v; ++p) {
      const Index c = colour[a.block_col[p]];
      if (seen_by.size() <= c) seen_by.resize(c + 1, 0);
      seen_by[c] = v + 1;
    }
    Index c = 0;
    while (c < seen_by.size() && seen_by[c] == v + 1) ++c;
    colour[v] = c;
  }
  return colour;
}

// Greedy colouring, vertices in order, each the smallest colour no neighbour has.
std::vector<Index> greedy_colour(const Graph& g) {
  constexpr Index uncoloured = ~Index{0};
  std::vector<Index> colour(g.vertices(), uncoloured);
  std::vector<std::size_t> seen_by;  // seen_by[c] == v + 1: colour c is taken by a neighbour of v
  for (std::size_t v = 0; v < g.vertices(); ++v) {
    for (Index p = g.ptr[v]; p < g.ptr[v + 1]; ++p) {
      const Index u = g.adjacent[p];
      if (u == v || colour[u] == uncoloured) continue;
      if (seen_by.size() <= colour[u]) seen_by.resize(colour[u] + 1, 0);
      seen_by[colour[u]] = v + 1;
    }
    Index c = 0;
    while (c < seen_by.size() && seen_by[c] == v + 1) ++c;
    colour[v] = c;
  }
  return colour;
}

// Aggregates of at most `size` vertices, each grown breadth-first from the first vertex not yet
// taken: the aggregate of every vertex, numbered in order of their first vertex.
std::vector<Index> grow_aggregates(const Graph& g, std::size_t size, Index& count) {
  constexpr Index none = ~Index{0};
  std::vector<Index> aggregate(g.vertices(), none), queue;
  count = 0;
  for (std::size_t seed = 0; seed < g.vertices(); ++seed) {
    if (aggregate[seed] != none) continue;
    queue.assign(1, static_cast<Index>(seed));
    aggregate[seed] = count;
    for (std::size_t head = 0; head < queue.size() && queue.size() < size; ++head) {
      for (Index p = g.ptr[queue[head]]; p < g.ptr[queue[head] + 1] && queue.size() < size; ++p) {
        const Index v = g.adjacent[p];
        if (aggregate[v] != none) continue;
        aggregate[v] = count;
        queue.push_back(v);
      }
    }
    ++count;
  }
  return aggregate;
}

// The graph of the aggregates: two are adjacent when any of their vertices are.
Graph quotient(const Graph& g, const std::vector<Index>& aggregate, Index count) {
  const LevelSets members = group_by_level(aggregate);  // the vertices of each aggregate
  Graph q;
  q.ptr.reserve(count + 1);
  std::vector<std::size_t> seen_by(count, 0);
  for (Index a = 0; a < count; ++a) {
    for (Index m = members.level_ptr[a]; m < members.level_ptr[a + 1]; ++m) {
      const Index v = members.rows[m];
      for (Index p = g.ptr[v]; p < g.ptr[v + 1]; ++p) {
        const Index b = aggregate[g.adjacent[p]];
        if (seen_by[b] == a + 1u) continue;
        seen_by[b] = a + 1u;
        q.adjacent.push_back(b);
      }
    }
    q.ptr.push_back(static_cast<Index>(q.adjacent.size()));
  }
  return q;
}

// Block multicolour: rows by colour of their aggregate, then by aggregate, then in natural order.
template <class T>
std::vector<Index> block_colour_order(const Bsr<T>& a, std::size_t size, std::size_t* colours) {
  const Graph g = symmetric_pattern(a);
  Index count = 0;
  const std::vector<Index> aggregate = grow_aggregates(g, size, count);
  const std::vector<Index> colour = greedy_colour(quotient(g, aggregate, count));
  if (colours != nullptr) *colours = colour.empty() ? 0 : *std::max_element(colour.begin(), colour.end()) + 1;
  // Aggregates by colour (stable: in order inside a colour), then each aggregate's rows in order.
  const LevelSets by_colour = group_by_level(colour);
  const LevelSets members = group_by_level(aggregate);
  std::vector<Index> order;
  order.reserve(a.block_rows);
  for (Index b : by_colour.rows) {
    order.insert(order.end(), members.rows.begin() + members.level_ptr[b], members.rows.begin() + members.level_ptr[b + 1]);
  }
  return order;
}

// Rows a group must average for triangle_levels to work group by group.
constexpr std::size_t kLeastGroupRows = 1024;

// The levels of a triangle: level[i] = 1 + the largest level of the rows row i depends on (0 for
// none), rows visited at positions t = 0, 1, ... (row_of(t)), each depending only on rows at
// earlier positions: position_of(j) for each j that for_each_dependency(i, f) passes to f, and
// nearest(i) the latest of them (kNone for none). A scan cuts the positions into groups whose rows
// depend on no row of their own group; each group then takes its levels from earlier groups' on
// every core (a colour ordering gives a group a colour). The result is the serial recursion's,
// which runs instead when the groups are small (a natural ordering's wavefronts).
template <class RowOf, class PositionOf, class Nearest, class Dependencies>
std::vector<Index> triangle_levels(std::size_t n, RowOf row_of, PositionOf position_of, Nearest nearest,
                                   Dependencies for_each_dependency) {
  constexpr Index kNone = ~Index{0};
  std::vector<Index> level = ziggurat::detail::large_vector<Index>(n);
  const auto settle = [&](std::size_t t) {
    const Index i = row_of(t);
    Index l = 0;
    for_each_dependency(i, [&](Index j) { l = std::max(l, level[j] + 1); });
    level[i] = l;
  };
  std::vector<Index> latest = ziggurat::detail::large_vector<Index>(n);  // latest[t]: the latest position the row at t depends on
  ziggurat::detail::for_chunks(n, kRowChunk, [&](std::size_t first, std::size_t last) {
    for (std::size_t t = first; t < last; ++t) {
      const Index j = nearest(row_of(t));
      latest[t] = j == kNone ? kNone : position_of(j);
    }
  });
  std::vector<std::size_t> group_start{0};
  for (std::size_t t = 0; t < n && group_start.size() * kLeastGroupRows <= n; ++t)
    if (latest[t] != kNone && latest[t] >= group_start.back()) group_start.push_back(t);
  if (group_start.size() * kLeastGroupRows > n) {
    for (std::size_t t = 0; t < n; ++t) settle(t);
    return level;
  }
  group_start.push_back(n);
  for (std::size_t g = 0; g + 1 < group_start.size(); ++g) {
    const std::size_t first = group_start[g];
    ziggurat::detail::parallel_for(group_start[g + 1] - first, kRowChunk, [&](std::size_t begin, std::size_t end) {
      for (std::size_t t = first + begin; t < first + end; ++t) settle(t);
    });
  }
  return level;
}

// Sorts a row's keys: by insertion when the row is short (a PDE row's few blocks), where
// std::sort's set-up costs more than the sort.
void sort_short(std::vector<std::uint64_t>& keys) {
  constexpr std::size_t kShort = 32;
  if (keys.size() > kShort) {
    std::sort(keys.begin(), keys.end());
    return;
  }
  for (std::size_t i = 1; i < keys.size(); ++i) {
    const std::uint64_t key = keys[i];
    std::size_t j = i;
    for (; j > 0 && keys[j - 1] > key; --j) keys[j] = keys[j - 1];
    keys[j] = key;
  }
}

void check_permutation(const Permutation& p, std::size_t n, const char* what) {
  if (p.old_of_new.size() != n) {
    throw InvalidArgument(std::string(what) + ": the permutation has " + std::to_string(p.old_of_new.size()) +
                          " entries for " + std::to_string(n) + " block rows");
  }
}

}  // namespace

std::size_t LevelSets::widest() const noexcept {
  std::size_t widest = 0;
  for (std::size_t l = 0; l < levels(); ++l) widest = std::max<std::size_t>(widest, level_ptr[l + 1] - level_ptr[l]);
  return widest;
}

template <class T>
LevelSets lower_levels(const Bsr<T>& a) {
  require_square_blocks(a, "lower_levels");
  const auto& ptr = a.block_row_ptr;
  const auto& col = a.block_col;
  const auto below = [&](Index i) {  // the position after row i's last column below the diagonal
    return static_cast<Index>(std::lower_bound(col.begin() + ptr[i], col.begin() + ptr[i + 1], i) - col.begin());
  };
  return group_by_level(triangle_levels(
      a.block_rows, [](std::size_t t) { return static_cast<Index>(t); }, [](Index j) { return j; },
      [&](Index i) { const Index p = below(i); return p > ptr[i] ? col[p - 1] : ~Index{0}; },
      [&](Index i, auto&& f) { for (Index p = ptr[i], end = below(i); p < end; ++p) f(col[p]); }));
}

template <class T>
LevelSets upper_levels(const Bsr<T>& a) {
  require_square_blocks(a, "upper_levels");
  const auto& ptr = a.block_row_ptr;
  const auto& col = a.block_col;
  const Index last = a.block_rows == 0 ? 0 : static_cast<Index>(a.block_rows - 1);
  const auto above = [&](Index i) {  // the position of row i's first column above the diagonal
    return static_cast<Index>(std::upper_bound(col.begin() + ptr[i], col.begin() + ptr[i + 1], i) - col.begin());
  };
  // Solved from the last row up: position t is row n - 1 - t.
  return group_by_level(triangle_levels(
      a.block_rows, [&](std::size_t t) { return static_cast<Index>(last - t); }, [&](Index j) { return last - j; },
      [&](Index i) { const Index p = above(i); return p < ptr[i + 1] ? col[p] : ~Index{0}; },
      [&](Index i, auto&& f) { for (Index p = above(i); p < ptr[i + 1]; ++p) f(col[p]); }));
}

template <class T>
TriangleLevels lower_and_upper_levels(const Bsr<T>& a) {
  std::future<LevelSets> upper = std::async(std::launch::async, [&a] { return upper_levels(a); });
  LevelSets lower = lower_levels(a);
  return {std::move(lower), upper.get()};
}

const char* to_string(Ordering ordering) {
  switch (ordering) {
    case Ordering::natural: return "natural";
    case Ordering::levels: return "levels";
    case Ordering::colours: return "colours";
    case Ordering::block_colours: return "block-colours";
    case Ordering::nested_dissection: return "nested-dissection";
    case Ordering::automatic: return "auto";
  }
  return "?";
}

Ordering parse_ordering(std::string_view text) {
  if (text == "natural") return Ordering::natural;
  if (text == "levels") return Ordering::levels;
  if (text == "colours" || text == "colors") return Ordering::colours;
  if (text == "block-colours" || text == "block-colors") return Ordering::block_colours;
  if (text == "nested-dissection") return Ordering::nested_dissection;
  if (text == "auto") return Ordering::automatic;
  throw InvalidArgument("unknown ordering '" + std::string(text) +
                        "': use auto, natural, levels, colours, block-colours or nested-dissection");
}

template <class T>
std::vector<Index> greedy_colours(const Bsr<T>& a) {
  require_square_blocks(a, "greedy_colours");
  return structurally_symmetric(a) ? greedy_colour_lower(a) : greedy_colour(symmetric_pattern(a));
}

template <class T>
Permutation make_ordering(const Bsr<T>& a, Ordering ordering, std::size_t* groups, std::size_t aggregate) {
  if (groups != nullptr) *groups = 0;
  if (ordering == Ordering::natural) return {};
  if (ordering == Ordering::automatic)
    throw InvalidArgument("make_ordering needs a concrete ordering: the automatic one is chosen by the solver");
  Permutation p;
  if (ordering == Ordering::block_colours) {
    require_square_blocks(a, "make_ordering");
    if (aggregate < 1) throw InvalidArgument("block colours need aggregates of at least 1 block row");
    p.old_of_new = block_colour_order(a, aggregate, groups);
  } else if (ordering == Ordering::nested_dissection) {
    DissectionTree tree = nested_dissection(a);
    if (groups != nullptr) *groups = tree.leaves;
    p.old_of_new = std::move(tree.old_of_new);
  } else {
    const LevelSets sets = ordering == Ordering::levels ? lower_levels(a) : group_by_level(greedy_colours(a));
    if (groups != nullptr) *groups = sets.levels();
    p.old_of_new = sets.rows;
  }
  // A padded last block row stays last (permute's condition); the order is still valid for the
  // factorisation, whose levels are computed on the permuted matrix.
  if (a.rows != a.block_rows * a.block_size && !p.old_of_new.empty()) {
    const auto last = std::find(p.old_of_new.begin(), p.old_of_new.end(), static_cast<Index>(a.block_rows - 1));
    std::rotate(last, last + 1, p.old_of_new.end());
  }
  return p;
}

template <class T>
Bsr<T> permute(const Bsr<T>& a, const Permutation& p) {
  require_square_blocks(a, "permute");
  if (p.identity()) return a;
  check_permutation(p, a.block_rows, "permute");
  const std::size_t n = a.block_rows, bb = a.block_size * a.block_size;
  std::vector<Index> new_of_old = ziggurat::detail::large_vector<Index>(n);
  ziggurat::detail::for_chunks(n, kRowChunk, [&](std::size_t first, std::size_t last) {
    for (std::size_t r = first; r < last; ++r) new_of_old[p.old_of_new[r]] = static_cast<Index>(r);
  });
  Bsr<T> out;
  out.rows = a.rows;
  out.cols = a.cols;
  out.block_size = a.block_size;
  out.block_rows = a.block_rows;
  out.block_cols = a.block_cols;
  out.block_row_ptr = ziggurat::detail::large_vector<Index>(n + 1);
  ziggurat::detail::for_chunks(n, kRowChunk, [&](std::size_t first, std::size_t last) {
    for (std::size_t r = first; r < last; ++r) {
      const Index old = p.old_of_new[r];
      out.block_row_ptr[r + 1] = a.block_row_ptr[old + 1] - a.block_row_ptr[old];
    }
  });
  std::partial_sum(out.block_row_ptr.begin(), out.block_row_ptr.end(), out.block_row_ptr.begin());
  ziggurat::detail::resize_large(out.block_col, a.blocks());
  ziggurat::detail::resize_large(out.values, a.values.size());
  // Each new row: its blocks sorted by new column (keys: new column, then old position), values
  // copied block by block; on every core.
  const Index* col = a.block_col.data();
  const T* values = a.values.data();
  Index* out_col = out.block_col.data();
  T* out_values = out.values.data();
  ziggurat::detail::for_chunks(n, kRowChunk, [&](std::size_t first, std::size_t last) {
    std::vector<std::uint64_t> row;
    for (std::size_t r = first; r < last; ++r) {
      const Index old = p.old_of_new[r], begin = a.block_row_ptr[old], end = a.block_row_ptr[old + 1];
      row.resize(end - begin);
      for (Index q = begin; q < end; ++q) row[q - begin] = std::uint64_t{new_of_old[col[q]]} << 32 | q;
      sort_short(row);
      std::size_t at = out.block_row_ptr[r];
      for (const std::uint64_t key : row) {
        const std::size_t q = key & 0xffffffffu;
        out_col[at] = static_cast<Index>(key >> 32);
        if (bb == 1) out_values[at] = values[q];  // scalar rows: no copy call an entry
        else std::copy_n(values + q * bb, bb, out_values + at * bb);
        ++at;
      }
    }
  });
  // Padding stays in the last block row and column only when the permutation keeps them last:
  // a padded block moved inside would put its zero rows in the middle of the matrix.
  if (a.rows != a.block_rows * a.block_size && p.old_of_new.back() != n - 1) {
    throw InvalidArgument("permute: the matrix's last block is padded (" + std::to_string(a.rows) +
                          " rows in blocks of " + std::to_string(a.block_size) +
                          "), so the permutation must keep the last block row last");
  }
  return out;
}

template <class T>
std::vector<T> permute_rows(const std::vector<T>& x, const Permutation& p, std::size_t b, std::size_t k) {
  if (p.identity()) return x;
  const std::size_t width = b * k;
  if (x.size() != p.old_of_new.size() * width) {
    throw InvalidArgument("permute_rows: " + std::to_string(x.size()) + " values for " +
                          std::to_string(p.old_of_new.size()) + " blocks of " + std::to_string(b) + " rows x " +
                          std::to_string(k) + " vectors");
  }
  std::vector<T> out = ziggurat::detail::large_vector<T>(x.size());
  ziggurat::detail::parallel_for(p.old_of_new.size(), 16384, [&](std::size_t first, std::size_t last) {
    for (std::size_t r = first; r < last; ++r) std::copy_n(x.begin() + p.old_of_new[r] * width, width, out.begin() + r * width);
  });
  return out;
}

template <class T>
std::vector<T> unpermute_rows(const std::vector<T>& x, const Permutation& p, std::size_t b, std::size_t k) {
  if (p.identity()) return x;
  const std::size_t width = b * k;
  if (x.size() != p.old_of_new.size() * width) {
    throw InvalidArgument("unpermute_rows: " + std::to_string(x.size()) + " values for " +
                          std::to_string(p.old_of_new.size()) + " blocks of " + std::to_string(b) + " rows x " +
                          std::to_string(k) + " vectors");
  }
  std::vector<T> out = ziggurat::detail::large_vector<T>(x.size());
  ziggurat::detail::parallel_for(p.old_of_new.size(), 16384, [&](std::size_t first, std::size_t last) {
    for (std::size_t r = first; r < last; ++r) std::copy_n(x.begin() + r * width, width, out.begin() + p.old_of_new[r] * width);
  });
  return out;
}

#define ZIGGURAT_ORDERING_INSTANTIATE(T)                                                                      \
  template LevelSets lower_levels<T>(const Bsr<T>&);                                                          \
  template LevelSets upper_levels<T>(const Bsr<T>&);                                                          \
  template TriangleLevels lower_and_upper_levels<T>(const Bsr<T>&);                                           \
  template std::vector<Index> greedy_colours<T>(const Bsr<T>&);                                               \
  template Permutation make_ordering<T>(const Bsr<T>&, Ordering, std::size_t*, std::size_t);                   \
  template Bsr<T> permute<T>(const Bsr<T>&, const Permutation&);                                              \
  template std::vector<T> permute_rows<T>(const std::vector<T>&, const Permutation&, std::size_t, std::size_t); \
  template std::vector<T> unpermute_rows<T>(const std::vector<T>&, const Permutation&, std::size_t, std::size_t);

ZIGGURAT_ORDERING_INSTANTIATE(float)
ZIGGURAT_ORDERING_INSTANTIATE(double)

#undef ZIGGURAT_ORDERING_INSTANTIATE

}  // namespace ziggurat::sparse
