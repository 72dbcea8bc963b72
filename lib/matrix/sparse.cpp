#include "ziggurat/matrix/sparse.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <memory>
#include <new>
#include <random>
#include <string>
#include <type_traits>
#include <utility>

#include "base/integer_math.hpp"
#include "base/large_arrays.hpp"
#include "base/parallel.hpp"
#include "ziggurat/base/error.hpp"

namespace ziggurat::sparse {

namespace {

// Products of floats are exact in double, and a double sum rounds far less than a float one.
using Acc = double;

constexpr std::size_t kMaxIndex = std::numeric_limits<Index>::max();
constexpr std::size_t kMaxBlock = 16;

std::string str(std::size_t n) { return std::to_string(n); }

// InvalidArgument naming `what` unless the matrix is square.
void require_square(std::size_t rows, std::size_t cols, const char* what) {
  if (rows != cols) {
    throw InvalidArgument(std::string(what) + ": the matrix is " + str(rows) + " x " + str(cols) + ", not square");
  }
}

// The shortest text that reads back as the same value.
template <class T>
std::string str_value(T value) {
  char text[64];
  return std::string(text, std::to_chars(text, text + sizeof text, value).ptr);
}

[[noreturn]] void too_large(const std::string& what) {
  throw InvalidArgument(what + ": more than 2^32 - 1, which 32-bit indices cannot address");
}

void check_count(std::size_t count, const std::string& what) {
  if (count > kMaxIndex) too_large(what + " = " + str(count));
}

// a * b, refused when above 2^32 - 1 (checked before multiplying, so it cannot wrap).
std::size_t checked_product(std::size_t a, std::size_t b, const std::string& what) {
  if (b != 0 && a > kMaxIndex / b) too_large(what + " = " + str(a) + " x " + str(b));
  return a * b;
}

void check_block_size(std::size_t b, const std::string& where) {
  if (b < 1 || b > kMaxBlock) {
    throw InvalidArgument(where + ": block size " + str(b) + " is outside 1.." + str(kMaxBlock));
  }
}

void check_nonnegative(double value, const std::string& what) {
  if (!(value >= 0)) throw InvalidArgument(what + " is " + str_value(value) + ", expected >= 0");
}

using detail::ceil_div;

// The rows (columns) of block `block` that lie inside a size of `size`.
std::size_t extent(std::size_t size, std::size_t b, std::size_t block) { return std::min(b, size - block * b); }

// What the messages call the parts of CSR and of BSR, which share their pattern checks.
struct Names {
  const char* format;
  const char* row;
  const char* column;
  const char* ptr;
  const char* col;
};
constexpr Names kCsr{"CSR", "row", "column", "row_ptr", "col"};
constexpr Names kBsr{"BSR", "block row", "block column", "block_row_ptr", "block_col"};

void check_shape(const char* format, std::size_t rows, std::size_t cols) {
  check_count(rows, std::string(format) + ": rows");
  check_count(cols, std::string(format) + ": cols");
}

// Whether the indices of lines [first, last) hold one outside 0..length - 1, and one that does not
// increase strictly within its line: one flat pass over the entries that vectorises, counting
// every descent, of which only those where a non-empty line starts are allowed.
struct ChunkFaults {
  bool outside = false, unordered = false;
};
template <class P, class I>
ChunkFaults chunk_faults(const P* ptr, const I* indices, std::size_t first, std::size_t last, std::size_t length) {
  const P begin = ptr[first], end = ptr[last];
  if (begin == end) return {};
  I least = indices[begin], largest = indices[begin];
  std::size_t descents = 0, at_starts = 0;
  for (P p = begin + 1; p < end; ++p) {
    if constexpr (std::is_signed_v<I>) least = std::min(least, indices[p]);
    largest = std::max(largest, indices[p]);
    descents += indices[p] <= indices[p - 1];
  }
  for (std::size_t i = first; i < last; ++i) {
    const P start = ptr[i];
    if (start > begin && start < ptr[i + 1]) at_starts += indices[start] <= indices[start - 1];
  }
  bool outside = static_cast<std::uint64_t>(largest) >= length;
  if constexpr (std::is_signed_v<I>) outside = outside || least < 0;
  return {outside, descents != at_starts};
}

void check_pattern(const Names& n, std::size_t rows, std::size_t cols, const std::vector<Index>& ptr,
                   const std::vector<Index>& col) {
  const std::string at = std::string(n.format) + ": ";
  if (ptr.size() != rows + 1) {
    throw InvalidArgument(at + n.ptr + " has " + str(ptr.size()) + " entries, expected " + n.row + "s + 1 = " +
                          str(rows + 1));
  }
  if (ptr[0] != 0) throw InvalidArgument(at + n.ptr + "[0] is " + str(ptr[0]) + ", expected 0");
  // The pointers, then each row's columns, on every core, chunk by chunk without a branch per
  // entry; the least row that fails is named.
  constexpr std::size_t kChunk = 16384, kNone = ~std::size_t{0};
  const std::size_t chunks = ceil_div(rows, kChunk);
  std::vector<char> falls(chunks, 0);
  detail::for_chunks(rows, kChunk, [&](std::size_t first, std::size_t last) {
    bool fall = false;
    for (std::size_t i = first; i < last; ++i) fall |= ptr[i + 1] < ptr[i];
    falls[first / kChunk] = fall;
  });
  for (std::size_t c = 0; c < chunks; ++c) {
    for (std::size_t i = c * kChunk; falls[c] && i < rows; ++i) {
      if (ptr[i + 1] >= ptr[i]) continue;
      throw InvalidArgument(at + n.ptr + "[" + str(i + 1) + "] = " + str(ptr[i + 1]) + " is less than " + n.ptr +
                            "[" + str(i) + "] = " + str(ptr[i]) + " (it must be non-decreasing)");
    }
  }
  if (col.size() != ptr[rows]) {
    throw InvalidArgument(at + n.col + " has " + str(col.size()) + " entries, expected " + n.ptr + "[" + n.row +
                          "s] = " + str(ptr[rows]));
  }
  const auto bad = [&](std::size_t i, std::size_t p) {
    return col[p] >= cols || (p > ptr[i] && col[p] <= col[p - 1]);
  };
  std::vector<std::size_t> first_bad(chunks, kNone);
  detail::for_chunks(rows, kChunk, [&](std::size_t first, std::size_t last) {
    const ChunkFaults faults = chunk_faults(ptr.data(), col.data(), first, last, cols);
    if (!faults.outside && !faults.unordered) return;
    for (std::size_t i = first; i < last && first_bad[first / kChunk] == kNone; ++i)
      for (std::size_t p = ptr[i]; p < ptr[i + 1]; ++p)
        if (bad(i, p)) first_bad[first / kChunk] = i;
  });
  for (const std::size_t i : first_bad) {
    if (i == kNone) continue;
    std::size_t p = ptr[i];
    while (!bad(i, p)) ++p;
    const std::string where = at + n.row + " " + str(i) + ": " + n.column + " " + str(col[p]);
    if (col[p] >= cols) throw InvalidArgument(where + " is out of range (" + str(cols) + " " + n.column + "s)");
    throw InvalidArgument(where + " not after " + n.column + " " + str(col[p - 1]) + " (" + n.column +
                          "s must be strictly increasing)");
  }
}

// Products may read the padding of partial blocks (a kernel loads whole blocks), so it must be zero.
template <class T>
void check_padding(const Bsr<T>& a) {
  const std::size_t b = a.block_size;
  if (a.rows % b == 0 && a.cols % b == 0) return;
  for (std::size_t br = 0; br < a.block_rows; ++br) {
    const std::size_t h = extent(a.rows, b, br);
    for (std::size_t p = a.block_row_ptr[br]; p < a.block_row_ptr[br + 1]; ++p) {
      const std::size_t w = extent(a.cols, b, a.block_col[p]);
      for (std::size_t r = 0; r < b; ++r) {
        for (std::size_t c = r < h ? w : 0; c < b; ++c) {  // rows past h: every column; others: past w
          const T value = a.values[(p * b + r) * b + c];
          if (value == T(0)) continue;
          throw InvalidArgument("BSR: block row " + str(br) + ", block column " + str(a.block_col[p]) + ": value (" +
                                str(r) + ", " + str(c) + ") of the block lies past the matrix's " + str(a.rows) +
                                " x " + str(a.cols) + " and is " + str_value(value) + " (padding must be zero)");
        }
      }
    }
  }
}

template <class T>
Bsr<T> bsr_shell(std::size_t rows, std::size_t cols, std::size_t b, const std::string& where) {
  Bsr<T> m;
  m.rows = rows;
  m.cols = cols;
  m.block_size = b;
  m.block_rows = ceil_div(rows, b);
  m.block_cols = ceil_div(cols, b);
  checked_product(m.block_rows, b, where + ": padded rows");
  checked_product(m.block_cols, b, where + ": padded cols");
  return m;
}

// The block columns holding an entry in block row br, sorted, into `out`. The entries of the block
// row's b rows lie together in a.col, hence a single loop.
template <class T>
void block_columns(const Csr<T>& a, std::size_t b, std::size_t br, std::vector<Index>& out) {
  out.clear();
  const auto block = static_cast<Index>(b);
  const std::size_t end = a.row_ptr[std::min(a.rows, (br + 1) * b)];
  for (std::size_t p = a.row_ptr[br * b]; p < end; ++p) out.push_back(a.col[p] / block);
  if (b == 1) return;  // a row's columns are increasing already
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
}

// Block rows a chunk of the host loops takes: enough to amortise a thread, few enough to share.
constexpr std::size_t kBlockRowChunk = 4096;

// Refuses x unless it holds cols x k values, k >= 1 (written so that cols * k cannot wrap).
void check_x(const char* format, std::size_t cols, std::size_t k, std::size_t given) {
  const std::string at = std::string("multiply (") + format + "): ";
  if (k == 0) throw InvalidArgument(at + "k is 0, expected at least 1 vector");
  if (cols == 0 ? given == 0 : given % cols == 0 && given / cols == k) return;
  throw InvalidArgument(at + "x has " + str(given) + " values, expected cols x k = " + str(cols) + " x " + str(k));
}

template <class T>
void add_product(Acc* sum, T a, const T* x, std::size_t k) {
  for (std::size_t j = 0; j < k; ++j) sum[j] += Acc(a) * Acc(x[j]);
}

template <class T>
void store(const Acc* sum, T* y, std::size_t k) {
  for (std::size_t j = 0; j < k; ++j) y[j] = static_cast<T>(sum[j]);
}

// The value of the next draw: (r >> 40) / 2^23 - 1, a multiple of 2^-23 in [-1, 1), exact in float.
double draw(std::mt19937_64& engine) { return static_cast<double>(engine() >> 40) / 8388608.0 - 1.0; }

}  // namespace

template <class I>
std::vector<Index> copy_indices(const I* from, std::size_t count, const char* what) {
  static_assert(std::is_integral_v<I> && std::is_signed_v<I>, "foreign indices are signed integers");
  std::vector<Index> indices = detail::large_vector<Index>(count);
  constexpr std::size_t kChunk = 1 << 16, kNone = ~std::size_t{0};
  std::vector<std::size_t> first_bad(ceil_div(count, kChunk), kNone);  // per chunk: the first bad entry
  detail::for_chunks(count, kChunk, [&](std::size_t first, std::size_t last) {
    for (std::size_t i = first; i < last; ++i) {
      if (from[i] < 0 || static_cast<std::uint64_t>(from[i]) > std::numeric_limits<Index>::max()) {
        first_bad[first / kChunk] = i;
        return;
      }
      indices[i] = static_cast<Index>(from[i]);
    }
  });
  for (const std::size_t i : first_bad) {
    if (i == kNone) continue;
    throw InvalidArgument(std::string(what) + "[" + str(i) + "] = " + std::to_string(from[i]) +
                          " is outside 0..2^32 - 1");
  }
  return indices;
}

template <class T>
std::vector<T> copy_values(const T* from, std::size_t count) {
  std::vector<T> values = detail::large_vector<T>(count);
  detail::for_chunks(count, std::size_t{1} << 18,
                     [&](std::size_t first, std::size_t last) { std::copy(from + first, from + last, values.data() + first); });
  return values;
}

template <class I>
IndexOrder index_order(const I* ptr, std::size_t lines, const I* indices, std::size_t length) {
  constexpr std::size_t kChunk = std::size_t{1} << 14;
  const std::size_t chunks = ceil_div(lines, kChunk);
  std::vector<char> outside(chunks, 0), unordered(chunks, 0);
  detail::for_chunks(lines, kChunk, [&](std::size_t first, std::size_t last) {
    const ChunkFaults faults = chunk_faults(ptr, indices, first, last, length);
    outside[first / kChunk] = faults.outside;
    unordered[first / kChunk] = faults.unordered;
  });
  IndexOrder order;
  order.in_range = std::none_of(outside.begin(), outside.end(), [](char c) { return c != 0; });
  order.strictly_increasing = std::none_of(unordered.begin(), unordered.end(), [](char c) { return c != 0; });
  return order;
}

template IndexOrder index_order<std::int32_t>(const std::int32_t*, std::size_t, const std::int32_t*, std::size_t);
template IndexOrder index_order<std::int64_t>(const std::int64_t*, std::size_t, const std::int64_t*, std::size_t);
template std::vector<Index> copy_indices<std::int32_t>(const std::int32_t*, std::size_t, const char*);
template std::vector<Index> copy_indices<std::int64_t>(const std::int64_t*, std::size_t, const char*);
template std::vector<float> copy_values<float>(const float*, std::size_t);
template std::vector<double> copy_values<double>(const double*, std::size_t);

template <class T>
void validate(const Csr<T>& a) {
  check_shape("CSR", a.rows, a.cols);
  check_pattern(kCsr, a.rows, a.cols, a.row_ptr, a.col);
  if (a.values.size() != a.col.size()) {
    throw InvalidArgument("CSR: values has " + str(a.values.size()) + " entries, expected row_ptr[rows] = " +
                          str(a.col.size()));
  }
}

template <class T>
void validate(const Bsr<T>& a) {
  const std::size_t b = a.block_size;
  check_block_size(b, "BSR");
  check_shape("BSR", a.rows, a.cols);
  if (a.block_rows != ceil_div(a.rows, b) || a.block_cols != ceil_div(a.cols, b)) {
    throw InvalidArgument("BSR: block_rows x block_cols is " + str(a.block_rows) + " x " + str(a.block_cols) +
                          ", expected ceil(rows / b) x ceil(cols / b) = " + str(ceil_div(a.rows, b)) + " x " +
                          str(ceil_div(a.cols, b)));
  }
  checked_product(a.block_rows, b, "BSR: padded rows");
  checked_product(a.block_cols, b, "BSR: padded cols");
  check_pattern(kBsr, a.block_rows, a.block_cols, a.block_row_ptr, a.block_col);
  const std::size_t expected = checked_product(a.blocks(), b * b, "BSR: stored values (blocks x b x b)");
  if (a.values.size() != expected) {
    throw InvalidArgument("BSR: values has " + str(a.values.size()) + " entries, expected blocks x b x b = " +
                          str(a.blocks()) + " x " + str(b * b) + " = " + str(expected));
  }
  check_padding(a);
}

template <class T>
void validate(const Dia<T>& a) {
  check_shape("DIA", a.rows, a.cols);
  if (a.symmetric && a.rows != a.cols) {
    throw InvalidArgument("DIA: the symmetric form needs a square matrix, got " + str(a.rows) + " x " + str(a.cols));
  }
  const auto rows = static_cast<std::int64_t>(a.rows), cols = static_cast<std::int64_t>(a.cols);
  for (std::size_t d = 0; d < a.offsets.size(); ++d) {
    const std::int64_t o = a.offsets[d];
    const std::string at = "DIA: offsets[" + str(d) + "] = " + std::to_string(o);
    if (d > 0 && o <= a.offsets[d - 1]) {
      throw InvalidArgument(at + " not after " + std::to_string(a.offsets[d - 1]) +
                            " (offsets must be strictly increasing)");
    }
    if (o <= -rows || o >= cols) {
      throw InvalidArgument(at + " misses the " + str(a.rows) + " x " + str(a.cols) + " matrix (offsets " +
                            std::to_string(1 - rows) + ".." + std::to_string(cols - 1) + ")");
    }
    if (a.symmetric && o < 0) throw InvalidArgument(at + ": the symmetric form stores no negative offset");
  }
  const std::size_t expected = checked_product(a.offsets.size(), a.rows, "DIA: stored values (diagonals x rows)");
  if (a.values.size() != expected) {
    throw InvalidArgument("DIA: values has " + str(a.values.size()) + " entries, expected diagonals x rows = " +
                          str(a.offsets.size()) + " x " + str(a.rows) + " = " + str(expected));
  }
  // Values whose column falls outside the matrix must be zero: kernels may read them unguarded.
  for (std::size_t d = 0; d < a.offsets.size(); ++d) {
    const std::int64_t o = a.offsets[d];
    for (std::int64_t i = 0; i < rows; ++i) {
      if (i + o >= 0 && i + o < cols) continue;
      const T value = a.values[d * a.rows + static_cast<std::size_t>(i)];
      if (value == T(0)) continue;
      throw InvalidArgument("DIA: offset " + std::to_string(o) + ", row " + std::to_string(i) + ": column " +
                            std::to_string(i + o) + " lies outside the matrix but its value is " +
                            str_value(value) + " (it must be zero)");
    }
  }
}

template <class T>
Bsr<T> to_bsr(const Csr<T>& a, std::size_t block_size) {
  check_block_size(block_size, "to_bsr");
  validate(a);
  const std::size_t b = block_size;
  Bsr<T> m = bsr_shell<T>(a.rows, a.cols, b, "to_bsr");
  if (b == 1) {  // the same arrays
    m.block_row_ptr = a.row_ptr;
    m.block_col = a.col;
    m.values = a.values;
    return m;
  }
  // The block columns of each block row, counted, then placed (each holds an entry, so blocks <=
  // nonzeros); every pass on every core.
  m.block_row_ptr.assign(m.block_rows + 1, 0);
  detail::for_chunks(m.block_rows, kBlockRowChunk, [&](std::size_t first, std::size_t last) {
    std::vector<Index> columns;
    for (std::size_t br = first; br < last; ++br) {
      block_columns(a, b, br, columns);
      m.block_row_ptr[br + 1] = static_cast<Index>(columns.size());
    }
  });
  for (std::size_t br = 0; br < m.block_rows; ++br) m.block_row_ptr[br + 1] += m.block_row_ptr[br];
  detail::resize_large(m.block_col, m.block_row_ptr.back());
  detail::resize_large(m.values, checked_product(m.blocks(), b * b, "to_bsr: stored values (blocks x b x b)"));
  detail::for_chunks(m.block_rows, kBlockRowChunk, [&](std::size_t first, std::size_t last) {
    std::vector<Index> columns;
    for (std::size_t br = first; br < last; ++br) {
      block_columns(a, b, br, columns);
      std::copy(columns.begin(), columns.end(), m.block_col.begin() + m.block_row_ptr[br]);
      for (std::size_t r = br * b; r < std::min(a.rows, (br + 1) * b); ++r) {
        for (std::size_t q = a.row_ptr[r]; q < a.row_ptr[r + 1]; ++q) {
          const Index bc = a.col[q] / static_cast<Index>(b);  // 32-bit division: cheaper
          const std::size_t slot =
              m.block_row_ptr[br] + std::size_t(std::lower_bound(columns.begin(), columns.end(), bc) - columns.begin());
          m.values[(slot * b + r - br * b) * b + a.col[q] - bc * b] = a.values[q];
        }
      }
    }
  });
  return m;
}

template <class T>
Bsr<T> to_bsr(Csr<T>&& a, std::size_t block_size) {
  if (block_size != 1) return to_bsr(static_cast<const Csr<T>&>(a), block_size);
  validate(a);
  Bsr<T> m = bsr_shell<T>(a.rows, a.cols, 1, "to_bsr");
  m.block_row_ptr = std::move(a.row_ptr);
  m.block_col = std::move(a.col);
  m.values = std::move(a.values);
  return m;
}

template <class T>
Csr<T> to_csr(const Bsr<T>& a) {
  validate(a);
  const std::size_t b = a.block_size;
  std::size_t count = 0;
  for (std::size_t br = 0; br < a.block_rows; ++br) {
    std::size_t width = 0;
    for (std::size_t p = a.block_row_ptr[br]; p < a.block_row_ptr[br + 1]; ++p) {
      width += extent(a.cols, b, a.block_col[p]);
    }
    count += extent(a.rows, b, br) * width;
  }
  check_count(count, "to_csr: stored values");
  Csr<T> m;
  m.rows = a.rows;
  m.cols = a.cols;
  m.row_ptr.reserve(a.rows + 1);
  m.col.reserve(count);
  m.values.reserve(count);
  for (std::size_t br = 0; br < a.block_rows; ++br) {
    const std::size_t h = extent(a.rows, b, br);
    for (std::size_t r = 0; r < h; ++r) {
      for (std::size_t p = a.block_row_ptr[br]; p < a.block_row_ptr[br + 1]; ++p) {
        const std::size_t first = a.block_col[p] * b, w = extent(a.cols, b, a.block_col[p]);
        for (std::size_t c = 0; c < w; ++c) m.col.push_back(static_cast<Index>(first + c));
        const auto line = a.values.begin() + static_cast<std::ptrdiff_t>((p * b + r) * b);
        m.values.insert(m.values.end(), line, line + static_cast<std::ptrdiff_t>(w));
      }
      m.row_ptr.push_back(static_cast<Index>(m.col.size()));
    }
  }
  return m;
}

namespace {

// The blocks of size B in the block rows [0, block_rows) whose index is a multiple of `stride`,
// and the entries of their rows, counted on every core in one pass over the entries: a block
// column is counted when its stamp (1 + the last block row that met it, 0 for none) is not this
// block row's. The stamps are calloc's zeroed pages, so a thread faults in only the pages its rows'
// columns touch, not the whole array (a filled std::vector cost every thread a page fault a 4 KiB
// of columns, for every B). B is a constant, so that the division by it is a multiplication.
template <std::size_t B, class T>
std::pair<std::size_t, std::size_t> count_blocks_of(const Csr<T>& a, std::size_t stride) {
  const std::size_t sampled = ceil_div(ceil_div(a.rows, B), stride);
  std::vector<std::size_t> blocks(sampled);
  detail::parallel_for(sampled, std::max<std::size_t>(1, kBlockRowChunk / B), [&](std::size_t first, std::size_t last) {
    const std::unique_ptr<Index[], decltype(&std::free)> stamp(
        static_cast<Index*>(std::calloc(std::max<std::size_t>(1, ceil_div(a.cols, B)), sizeof(Index))), &std::free);
    if (!stamp) throw std::bad_alloc();
    for (std::size_t s = first; s < last; ++s) {
      const std::size_t br = s * stride;
      const auto mark = static_cast<Index>(br + 1);  // block rows < 2^32 - 1
      const std::size_t end = a.row_ptr[std::min(a.rows, (br + 1) * B)];
      std::size_t count = 0;
      for (std::size_t p = a.row_ptr[br * B]; p < end; ++p) {
        Index& seen = stamp[a.col[p] / static_cast<Index>(B)];
        count += seen != mark;
        seen = mark;
      }
      blocks[s] = count;
    }
  });
  std::pair<std::size_t, std::size_t> total{0, 0};
  for (std::size_t s = 0; s < sampled; ++s) {
    const std::size_t br = s * stride;
    total.first += blocks[s];
    total.second += a.row_ptr[std::min(a.rows, (br + 1) * B)] - a.row_ptr[br * B];
  }
  return total;
}

template <class T, std::size_t... B>
std::pair<std::size_t, std::size_t> count_blocks(const Csr<T>& a, std::size_t b, std::size_t stride,
                                                 std::index_sequence<B...>) {
  std::pair<std::size_t, std::size_t> total;
  ((b == B + 1 ? (total = count_blocks_of<B + 1>(a, stride), 0) : 0), ...);
  return total;
}

template <class T>
std::pair<std::size_t, std::size_t> count_blocks(const Csr<T>& a, std::size_t b, std::size_t stride) {
  return count_blocks(a, b, stride, std::make_index_sequence<16>{});
}

BlockFill fill_of(std::size_t b, std::pair<std::size_t, std::size_t> counted) {
  const auto [blocks, entries] = counted;
  return {b, blocks, entries == 0 ? 1.0 : static_cast<double>(blocks * b * b) / static_cast<double>(entries)};
}

// propose_block_size samples every kSampleStride-th block row of matrices of at least
// kSampledRows rows, and counts exactly only the block sizes whose sampled fill is within
// kSampleSlack of max_fill. The stride is prime so that the sample does not alias a grid's period:
// with the old stride of 16, a quarter of the sampled rows of a 128^3 seven-point grid lay on its
// x = 0 face, where the missing neighbour lets blocks of 2 fill better than anywhere else, and at
// 64 (tried) all of them did: the sample then passed b = 2, and a block size that passes costs an
// exact pass over the whole matrix.
constexpr std::size_t kSampleStride = 61, kSampledRows = 1 << 16;
constexpr double kSampleSlack = 1.25;

}  // namespace

template <class T>
std::vector<BlockFill> block_fills(const Csr<T>& a, std::size_t max_block) {
  check_block_size(max_block, "block_fills: max_block");
  validate(a);
  std::vector<BlockFill> fills;
  for (std::size_t b = 1; b <= max_block; ++b) fills.push_back(fill_of(b, count_blocks(a, b, 1)));
  return fills;
}

template <class T>
std::size_t propose_block_size(const Csr<T>& a, std::size_t max_block, double tolerance, double max_fill) {
  check_nonnegative(tolerance, "propose_block_size: tolerance");
  check_block_size(max_block, "propose_block_size: max_block");
  validate(a);
  const bool sample = a.rows >= kSampledRows;
  std::vector<BlockFill> fills;  // b = 1 is the fallback, never a candidate
  for (std::size_t b = 2; b <= max_block; ++b) {
    if (sample && fill_of(b, count_blocks(a, b, kSampleStride)).fill > kSampleSlack * max_fill) continue;
    fills.push_back(fill_of(b, count_blocks(a, b, 1)));
  }
  if (fills.empty()) return 1;
  const double least =
      std::min_element(fills.begin(), fills.end(), [](const auto& u, const auto& v) { return u.fill < v.fill; })->fill;
  if (least > max_fill) return 1;
  return std::find_if(fills.rbegin(), fills.rend(), [&](const auto& f) { return f.fill <= least + tolerance; })
      ->block_size;
}

template <class T>
double skewness(const Bsr<T>& a) {
  validate(a);
  return skewness(a, Validated{});
}

template <class T>
double skewness(const Bsr<T>& a, Validated) {
  require_square(a.rows, a.cols, "skewness");
  const std::size_t b = a.block_size, bb = b * b, chunks = ceil_div(a.block_rows, kBlockRowChunk);
  std::vector<double> skew(chunks, 0.0), sum(chunks, 0.0);  // per chunk: ||A - A^T||^2, ||A + A^T||^2
  detail::for_chunks(a.block_rows, kBlockRowChunk, [&](std::size_t first, std::size_t last) {
    double d = 0, s = 0;
    for (std::size_t i = first; i < last; ++i) {
      for (Index p = a.block_row_ptr[i]; p < a.block_row_ptr[i + 1]; ++p) {
        const Index j = a.block_col[p];
        const auto row = a.block_col.begin() + a.block_row_ptr[j], row_end = a.block_col.begin() + a.block_row_ptr[j + 1];
        const auto q = std::lower_bound(row, row_end, static_cast<Index>(i));
        const T* mirror = q != row_end && *q == i ? a.values.data() + (q - a.block_col.begin()) * bb : nullptr;
        const T* block = a.values.data() + std::size_t{p} * bb;
        // Each pair of stored blocks is visited from both sides; a block with no stored mirror
        // counts twice, for the mirror that is never visited.
        const double weight = mirror != nullptr ? 1.0 : 2.0;
        for (std::size_t r = 0; r < b; ++r)
          for (std::size_t c = 0; c < b; ++c) {
            const double x = block[r * b + c], y = mirror != nullptr ? double(mirror[c * b + r]) : 0.0;
            d += weight * (x - y) * (x - y);
            s += weight * (x + y) * (x + y);
          }
      }
    }
    skew[first / kBlockRowChunk] = d;
    sum[first / kBlockRowChunk] = s;
  });
  double d = 0, s = 0;
  for (std::size_t c = 0; c < chunks; ++c) d += skew[c], s += sum[c];
  if (s == 0) return d == 0 ? 0.0 : 1.0;
  return std::sqrt(d / s);
}

template <class T>
bool diagonally_dominant(const Bsr<T>& a, Validated) {
  require_square(a.rows, a.cols, "diagonally_dominant");
  const std::size_t b = a.block_size, chunks = ceil_div(a.block_rows, kBlockRowChunk);
  std::vector<char> dominant(chunks, 1);
  detail::for_chunks(a.block_rows, kBlockRowChunk, [&](std::size_t first, std::size_t last) {
    std::vector<double> diagonal(b), off(b);
    for (std::size_t i = first; i < last && dominant[first / kBlockRowChunk]; ++i) {
      std::fill(diagonal.begin(), diagonal.end(), 0.0);
      std::fill(off.begin(), off.end(), 0.0);
      for (Index p = a.block_row_ptr[i]; p < a.block_row_ptr[i + 1]; ++p) {
        const T* block = a.values.data() + std::size_t{p} * b * b;
        for (std::size_t r = 0; r < b; ++r)
          for (std::size_t c = 0; c < b; ++c) {
            const double x = std::abs(double(block[r * b + c]));
            if (a.block_col[p] == i && r == c) diagonal[r] += x;
            else off[r] += x;
          }
      }
      // Rows past a.rows (the padding of a last block) are zero and left out.
      for (std::size_t r = 0; r < b && i * b + r < a.rows; ++r)
        if (diagonal[r] < off[r]) dominant[first / kBlockRowChunk] = 0;
    }
  });
  return std::all_of(dominant.begin(), dominant.end(), [](char d) { return d != 0; });
}

template <class T>
std::string asymmetry(const Csr<T>& a) {
  validate(a);
  require_square(a.rows, a.cols, "asymmetry");
  for (std::size_t i = 0; i < a.rows; ++i) {
    for (std::size_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
      const Index j = a.col[p];
      if (j == i) continue;
      const auto first = a.col.begin() + a.row_ptr[j], last = a.col.begin() + a.row_ptr[j + 1];
      const auto q = std::lower_bound(first, last, static_cast<Index>(i));
      const bool stored = q != last && *q == i;
      const T mirror = stored ? a.values[static_cast<std::size_t>(q - a.col.begin())] : T(0);
      if (mirror == a.values[p]) continue;
      return "A(" + str(i) + ", " + str(j) + ") = " + str_value(a.values[p]) + " but A(" + str(j) + ", " + str(i) +
             ") = " + str_value(mirror) + (stored ? "" : " (not stored)");
    }
  }
  return {};
}

template <class T>
Dia<T> to_dia(const Csr<T>& a, bool symmetric, double max_fill) {
  check_nonnegative(max_fill, "to_dia: max_fill");
  validate(a);
  if (symmetric) {
    if (a.rows != a.cols) {
      throw InvalidArgument("to_dia: the symmetric form needs a square matrix, got " + str(a.rows) + " x " +
                            str(a.cols));
    }
    const std::string asymmetric = asymmetry(a);
    if (!asymmetric.empty()) throw InvalidArgument("to_dia: the matrix is not symmetric: " + asymmetric);
  }
  Dia<T> m;
  m.rows = a.rows;
  m.cols = a.cols;
  m.symmetric = symmetric;
  if (a.rows == 0 || a.cols == 0) return m;
  // slot[o + rows - 1]: the diagonal of offset o (the symmetric form maps o to |o|).
  constexpr Index kNone = std::numeric_limits<Index>::max();
  std::vector<Index> slot(a.rows + a.cols - 1, kNone);
  const auto diagonal = [&](std::size_t i, std::size_t c) {
    return symmetric && c < i ? a.rows - 1 + i - c : a.rows - 1 + c - i;
  };
  for (std::size_t i = 0; i < a.rows; ++i) {
    for (std::size_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) slot[diagonal(i, a.col[p])] = 0;
  }
  for (std::size_t s = 0; s < slot.size(); ++s) {
    if (slot[s] == kNone) continue;
    const auto o = static_cast<std::int64_t>(s) - static_cast<std::int64_t>(a.rows - 1);
    if (o < std::numeric_limits<std::int32_t>::min() || o > std::numeric_limits<std::int32_t>::max()) {
      throw InvalidArgument("to_dia: offset " + std::to_string(o) + " does not fit the 32-bit offsets");
    }
    slot[s] = static_cast<Index>(m.offsets.size());
    m.offsets.push_back(static_cast<std::int32_t>(o));
  }
  const std::size_t diagonals = m.offsets.size();
  if (static_cast<double>(diagonals) * static_cast<double>(a.rows) > max_fill * static_cast<double>(a.nonzeros())) {
    throw InvalidArgument("to_dia: the band has " + str(diagonals) + " diagonals (offsets " +
                          std::to_string(m.offsets.front()) + ".." + std::to_string(m.offsets.back()) + "): " +
                          str(diagonals) + " x " + str(a.rows) + " stored values for " + str(a.nonzeros()) +
                          " stored entries, more than max_fill = " + str_value(max_fill) +
                          " times as many; use CSR or BSR");
  }
  m.values.assign(checked_product(diagonals, a.rows, "to_dia: stored values (diagonals x rows)"), T(0));
  for (std::size_t i = 0; i < a.rows; ++i) {
    for (std::size_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
      if (symmetric && a.col[p] < i) continue;  // the mirror of a stored upper value (checked above)
      m.values[slot[diagonal(i, a.col[p])] * a.rows + i] = a.values[p];
    }
  }
  return m;
}

template <class T>
std::vector<T> multiply(const Csr<T>& a, const std::vector<T>& x, std::size_t k) {
  validate(a);
  check_x("CSR", a.cols, k, x.size());
  std::vector<T> y(a.rows * k);
  std::vector<Acc> sum(k);
  for (std::size_t i = 0; i < a.rows; ++i) {
    std::fill(sum.begin(), sum.end(), Acc(0));
    for (std::size_t p = a.row_ptr[i]; p < a.row_ptr[i + 1]; ++p) {
      add_product(sum.data(), a.values[p], &x[a.col[p] * k], k);
    }
    store(sum.data(), &y[i * k], k);
  }
  return y;
}

template <class T>
std::vector<T> multiply(const Bsr<T>& a, const std::vector<T>& x, std::size_t k) {
  validate(a);
  check_x("BSR", a.cols, k, x.size());
  const std::size_t b = a.block_size;
  std::vector<T> y(a.rows * k);
  std::vector<Acc> sum(b * k);
  for (std::size_t br = 0; br < a.block_rows; ++br) {
    const std::size_t h = extent(a.rows, b, br);
    std::fill(sum.begin(), sum.end(), Acc(0));
    // Each row's terms in column order (blocks in order, then columns in a block), as in CSR.
    for (std::size_t p = a.block_row_ptr[br]; p < a.block_row_ptr[br + 1]; ++p) {
      const std::size_t first = a.block_col[p] * b, w = extent(a.cols, b, a.block_col[p]);
      for (std::size_t r = 0; r < h; ++r) {
        const T* line = &a.values[(p * b + r) * b];
        for (std::size_t c = 0; c < w; ++c) add_product(&sum[r * k], line[c], &x[(first + c) * k], k);
      }
    }
    for (std::size_t r = 0; r < h; ++r) store(&sum[r * k], &y[(br * b + r) * k], k);
  }
  return y;
}

template <class T>
std::vector<T> multiply(const Dia<T>& a, const std::vector<T>& x, std::size_t k) {
  validate(a);
  check_x("DIA", a.cols, k, x.size());
  std::vector<T> y(a.rows * k);
  std::vector<Acc> sum(k);
  const auto cols = static_cast<std::int64_t>(a.cols);
  for (std::size_t i = 0; i < a.rows; ++i) {
    std::fill(sum.begin(), sum.end(), Acc(0));
    // Column order: first the mirrored terms A(i, i - o) = A(i - o, i), largest o first.
    for (std::size_t d = a.symmetric ? a.offsets.size() : 0; d-- > 0;) {
      const auto o = static_cast<std::size_t>(a.offsets[d]);
      if (o > 0 && o <= i) add_product(sum.data(), a.values[d * a.rows + i - o], &x[(i - o) * k], k);
    }
    for (std::size_t d = 0; d < a.offsets.size(); ++d) {
      const std::int64_t c = static_cast<std::int64_t>(i) + a.offsets[d];
      if (c >= 0 && c < cols) add_product(sum.data(), a.values[d * a.rows + i], &x[static_cast<std::size_t>(c) * k], k);
    }
    store(sum.data(), &y[i * k], k);
  }
  return y;
}

template <class T>
RowStats row_stats(const Bsr<T>& a) {
  validate(a);
  return row_stats(a.block_row_ptr);
}

RowStats row_stats(const std::vector<Index>& row_ptr) {
  RowStats s;
  s.rows = row_ptr.empty() ? 0 : row_ptr.size() - 1;
  for (std::size_t r = 0; r < s.rows; ++r) {
    const std::size_t length = row_ptr[r + 1] - row_ptr[r];
    s.max = std::max(s.max, length);
    s.empty += length == 0 ? 1 : 0;
  }
  s.mean = s.rows == 0 ? 0.0 : static_cast<double>(row_ptr.back()) / static_cast<double>(s.rows);
  return s;
}

// The seven-point block pattern of an nx x ny x nz grid: calls fill(i, j, block) for every block
// (i, j) in storage order, block (b x b, zeroed) to be filled in place, and row_done(i) after
// block row i. Block row (x, y, z) is x + nx * (y + ny * z).
template <class T, class Fill, class RowDone>
Bsr<T> seven_point_pattern(std::size_t nx, std::size_t ny, std::size_t nz, std::size_t block_size, const char* what,
                           Fill fill, RowDone row_done) {
  check_block_size(block_size, what);
  const std::size_t b = block_size, bb = b * b;
  const std::string name(what);
  const std::size_t n = checked_product(checked_product(nx, ny, name + ": block rows"), nz, name + ": block rows");
  const std::size_t rows = checked_product(n, b, name + ": rows");
  Bsr<T> m = bsr_shell<T>(rows, rows, b, what);
  // Every block row couples to itself and 2 neighbours per axis, less the missing ones on faces.
  const std::size_t blocks = n == 0 ? 0 : 7 * n - 2 * (ny * nz + nx * nz + nx * ny);
  m.block_row_ptr.reserve(n + 1);
  m.block_col.reserve(blocks);
  m.values.reserve(checked_product(blocks, bb, name + ": stored values (blocks x b x b)"));
  std::size_t i = 0;
  const auto add = [&](std::size_t j) {
    m.block_col.push_back(static_cast<Index>(j));
    m.values.resize(m.values.size() + bb, T(0));
    fill(i, j, m.values.data() + m.values.size() - bb);
  };
  for (std::size_t z = 0; z < nz; ++z) {
    for (std::size_t y = 0; y < ny; ++y) {
      for (std::size_t x = 0; x < nx; ++x, ++i) {
        if (z > 0) add(i - nx * ny);
        if (y > 0) add(i - nx);
        if (x > 0) add(i - 1);
        add(i);
        if (x + 1 < nx) add(i + 1);
        if (y + 1 < ny) add(i + nx);
        if (z + 1 < nz) add(i + nx * ny);
        m.block_row_ptr.push_back(static_cast<Index>(m.block_col.size()));
        row_done(m, i);
      }
    }
  }
  return m;
}

template <class T>
Bsr<T> seven_point_bsr(std::size_t nx, std::size_t ny, std::size_t nz, std::size_t block_size, std::uint64_t seed) {
  std::mt19937_64 engine(seed);
  const std::size_t b = block_size;
  const auto fill = [&](std::size_t i, std::size_t j, T* block) {
    for (std::size_t e = 0; e < b * b; ++e) block[e] = static_cast<T>(draw(engine));
    // The draws are exact in T, so this rounds once, as the sum in double would.
    if (j == i) {
      for (std::size_t r = 0; r < b; ++r) block[r * (b + 1)] += static_cast<T>(7 * b);
    }
  };
  return seven_point_pattern<T>(nx, ny, nz, block_size, "seven_point_bsr", fill, [](Bsr<T>&, std::size_t) {});
}

template <class T>
Bsr<T> convection_diffusion_bsr(std::size_t nx, std::size_t ny, std::size_t nz, std::size_t block_size,
                                std::uint64_t seed) {
  constexpr double upwind = 0.5;  // the convection term: the upstream neighbour weighs 1 + upwind
  std::mt19937_64 engine(seed);
  const std::size_t b = block_size, bb = b * b;
  std::vector<double> coupling(b);  // per line of the block row: the sum of |c|
  const auto fill = [&](std::size_t i, std::size_t j, T* block) {
    for (std::size_t e = 0; e < bb; ++e) {
      // A multiple of 2^-9 in [-1/32, 1/32): exact in float, and so is every sum below.
      const double c = (static_cast<double>(engine() >> 59) - 16.0) / 512.0;
      coupling[e / b] += std::abs(c);
      block[e] = static_cast<T>(c);
    }
    if (j != i) {
      const double weight = j < i ? 1.0 + upwind : 1.0;
      for (std::size_t r = 0; r < b; ++r) block[r * (b + 1)] -= static_cast<T>(weight);
    }
  };
  // The diagonal: 6 + 3 upwind + the row's coupling (less the draw that sat on the diagonal), so
  // |a_ii| >= the sum of the row's other |a_ij|, strictly in the rows of the grid's faces
  // (Dirichlet boundaries).
  const auto row_done = [&](Bsr<T>& m, std::size_t i) {
    const Index* cols = m.block_col.data();
    Index p = m.block_row_ptr[i];
    while (static_cast<std::size_t>(cols[p]) != i) ++p;
    T* diagonal = m.values.data() + static_cast<std::size_t>(p) * bb;
    for (std::size_t r = 0; r < b; ++r) {
      const double own = static_cast<double>(diagonal[r * (b + 1)]);
      diagonal[r * (b + 1)] = static_cast<T>(6.0 + 3.0 * upwind + coupling[r] - std::abs(own));
      coupling[r] = 0;
    }
  };
  return seven_point_pattern<T>(nx, ny, nz, block_size, "convection_diffusion_bsr", fill, row_done);
}

template <class T>
Bsr<T> symmetric_part(const Bsr<T>& a) {
  validate(a);
  if (a.rows != a.cols) throw InvalidArgument("symmetric_part needs a square matrix");
  const std::size_t b = a.block_size, bb = b * b;
  Bsr<T> out = a;
  for (std::size_t i = 0; i < a.block_rows; ++i) {
    for (Index p = a.block_row_ptr[i]; p < a.block_row_ptr[i + 1]; ++p) {
      const Index j = a.block_col[p];
      const auto first = a.block_col.begin() + a.block_row_ptr[j], last = a.block_col.begin() + a.block_row_ptr[j + 1];
      const auto mirror = std::lower_bound(first, last, static_cast<Index>(i));
      if (mirror == last || *mirror != i) {
        throw InvalidArgument("symmetric_part: block (" + std::to_string(i) + ", " + std::to_string(j) +
                              ") is stored but block (" + std::to_string(j) + ", " + std::to_string(i) + ") is not");
      }
      const T* m = a.values.data() + (mirror - a.block_col.begin()) * bb;
      for (std::size_t r = 0; r < b; ++r)
        for (std::size_t c = 0; c < b; ++c)
          out.values[p * bb + r * b + c] = (a.values[p * bb + r * b + c] + m[c * b + r]) / T(2);
    }
  }
  return out;
}

#define ZIGGURAT_SPARSE_INSTANTIATE(T)                                                                   \
  template void validate<T>(const Csr<T>&);                                                              \
  template void validate<T>(const Bsr<T>&);                                                              \
  template void validate<T>(const Dia<T>&);                                                              \
  template Bsr<T> to_bsr<T>(const Csr<T>&, std::size_t);                                                 \
  template Bsr<T> to_bsr<T>(Csr<T>&&, std::size_t);                                                      \
  template Csr<T> to_csr<T>(const Bsr<T>&);                                                              \
  template std::vector<BlockFill> block_fills<T>(const Csr<T>&, std::size_t);                            \
  template std::size_t propose_block_size<T>(const Csr<T>&, std::size_t, double, double);                \
  template Dia<T> to_dia<T>(const Csr<T>&, bool, double);                                                \
  template std::string asymmetry<T>(const Csr<T>&);                                                       \
  template double skewness<T>(const Bsr<T>&);                                                              \
  template double skewness<T>(const Bsr<T>&, Validated);                                                   \
  template bool diagonally_dominant<T>(const Bsr<T>&, Validated);                                          \
  template std::vector<T> multiply<T>(const Csr<T>&, const std::vector<T>&, std::size_t);                \
  template std::vector<T> multiply<T>(const Bsr<T>&, const std::vector<T>&, std::size_t);                \
  template std::vector<T> multiply<T>(const Dia<T>&, const std::vector<T>&, std::size_t);                \
  template RowStats row_stats<T>(const Bsr<T>&);                                                         \
  template Bsr<T> seven_point_bsr<T>(std::size_t, std::size_t, std::size_t, std::size_t, std::uint64_t); \
  template Bsr<T> convection_diffusion_bsr<T>(std::size_t, std::size_t, std::size_t, std::size_t, std::uint64_t); \
  template Bsr<T> symmetric_part<T>(const Bsr<T>&);

ZIGGURAT_SPARSE_INSTANTIATE(float)
ZIGGURAT_SPARSE_INSTANTIATE(double)

#undef ZIGGURAT_SPARSE_INSTANTIATE

}  // namespace ziggurat::sparse
