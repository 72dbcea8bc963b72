#include "ziggurat/matrix/elements.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <string>

#include "base/integer_math.hpp"
#include "base/parallel.hpp"
#include "ziggurat/base/error.hpp"

namespace ziggurat::fem {

namespace {

constexpr std::size_t kMaxDofs = std::numeric_limits<std::int32_t>::max();
constexpr std::size_t kMaxStored = std::numeric_limits<sparse::Index>::max();
constexpr std::size_t kGrain = 1024;  // elements (or rows) below which a thread is not worth starting

std::string str(std::size_t n) { return std::to_string(n); }

// The shortest text that reads back as the same value; NaN as NumPy prints it.
template <class T>
std::string str_value(T value) {
  if (std::isnan(value)) return "NaN";
  char text[64];
  return std::string(text, std::to_chars(text, text + sizeof text, value).ptr);
}

std::string element_name(std::size_t element) { return "element " + str(element); }

// Where L(r, c) lies among an element's stored values. Packed row r starts after
// l + (l - 1) + ... + (l - r + 1) = r (2l - r + 1) / 2 values.
std::size_t stored_position(ElementStorage storage, std::size_t l, std::size_t r, std::size_t c) {
  if (storage == ElementStorage::full) return r * l + c;
  if (r > c) std::swap(r, c);
  return r * (2 * l - r + 1) / 2 + (c - r);
}

// l, the array sizes and dofs: what every function needs before it may index anything.
template <class T>
void check_shape(const ElementSet<T>& s) {
  const std::size_t l = s.element_size;
  if (l == 0 || l > kMaxElementSize) {
    throw InvalidArgument("element_size (l) is " + str(l) + ": give 1 to " + str(kMaxElementSize) + " local DOFs");
  }
  if (s.indices.size() % l != 0) {
    throw InvalidArgument("indices has " + str(s.indices.size()) + " entries, not a multiple of element_size = " +
                          str(l) + ": give l indices per element");
  }
  if (s.matrices.size() != s.count() * s.stored_per_element()) {
    throw InvalidArgument("matrices has " + str(s.matrices.size()) + " values; " + str(s.count()) +
                          " elements of " + str(s.stored_per_element()) + " stored values each (l = " + str(l) +
                          ", " + (s.storage == ElementStorage::full ? "full" : "upper") + " storage) need " +
                          str(s.count() * s.stored_per_element()));
  }
  if (s.dofs == 0 || s.dofs > kMaxDofs) {
    throw InvalidArgument("dofs is " + str(s.dofs) + ": give 1 to 2^31 - 1 global DOFs");
  }
}

template <class T>
void check_index_range(const ElementSet<T>& s, std::size_t e) {
  const std::size_t l = s.element_size;
  for (std::size_t r = 0; r < l; ++r) {
    const std::int32_t v = s.indices[e * l + r];
    if (v >= 0 && static_cast<std::size_t>(v) >= s.dofs) {
      throw InvalidArgument(element_name(e) + ": local DOF " + str(r) + " has index " + str(v) +
                            ", not below dofs = " + str(s.dofs));
    }
  }
}

template <class T>
void check_duplicates(const ElementSet<T>& s, std::size_t e) {
  const std::int32_t* v = s.indices.data() + e * s.element_size;
  for (std::size_t r = 1; r < s.element_size; ++r) {
    for (std::size_t c = 0; c < r; ++c) {
      if (v[r] < 0 || v[r] != v[c]) continue;
      throw InvalidArgument(element_name(e) + ": DOF " + str(v[r]) + " is listed twice (local DOFs " + str(c) +
                            " and " + str(r) + "): an element lists each DOF once");
    }
  }
}

template <class T>
void check_values(const ElementSet<T>& s, std::size_t e, double symmetry_tolerance) {
  const std::size_t l = s.element_size, stored = s.stored_per_element();
  const T* a = s.matrices.data() + e * stored;
  double largest = 0;
  for (std::size_t p = 0; p < stored; ++p) {
    if (!std::isfinite(a[p])) {
      throw InvalidArgument(element_name(e) + ": stored value " + str(p) + " is " +
                            str_value(a[p]) +
                            "; element matrices must be finite");
    }
    largest = std::max(largest, std::abs(static_cast<double>(a[p])));
  }
  if (s.storage == ElementStorage::upper) return;
  for (std::size_t r = 0; r < l; ++r) {
    for (std::size_t c = r + 1; c < l; ++c) {
      const double upper = a[r * l + c], lower = a[c * l + r];
      if (std::abs(upper - lower) <= symmetry_tolerance * largest) continue;
      throw InvalidArgument(element_name(e) + " is not symmetric: L(" + str(r) + ", " + str(c) + ") = " +
                            str_value(a[r * l + c]) + " but L(" + str(c) + ", " + str(r) + ") = " +
                            str_value(a[c * l + r]) + ": give symmetric matrices, e.g. (L + L^T) / 2");
    }
  }
}

// What the operations check: the shape and every index in range, so they never index out of bounds.
template <class T>
void check_operands(const ElementSet<T>& s) {
  check_shape(s);
  detail::parallel_for(s.count(), kGrain, [&](std::size_t begin, std::size_t end) {
    for (std::size_t e = begin; e < end; ++e) check_index_range(s, e);
  });
}

template <class T>
void check_vectors(const ElementSet<T>& s, const std::vector<T>& x, std::size_t k, const char* operation) {
  if (k == 0) throw InvalidArgument(std::string(operation) + ": k is 0; give at least one vector");
  if (x.size() != s.dofs * k) {
    throw InvalidArgument(std::string(operation) + ": x has " + str(x.size()) + " values, expected dofs x k = " +
                          str(s.dofs) + " x " + str(k) + " (interleaved)");
  }
}

// One element as the products see it: its free local DOFs (index >= 0), L restricted to them
// (f x f, row-major), X gathered on them and Y_i = L_i X_i (f x k each). Constrained DOFs are left
// out, which gives the same bits as reading their X rows as zero.
template <class T>
struct LocalElement {
  std::vector<std::int32_t> dofs;
  std::vector<std::size_t> position;  // l x l: where L(r, c) lies among an element's stored values
  std::vector<T> a, x, y, term;

  explicit LocalElement(const ElementSet<T>& s) : position(s.element_size * s.element_size) {
    const std::size_t l = s.element_size;
    for (std::size_t r = 0; r < l; ++r)
      for (std::size_t c = 0; c < l; ++c) position[r * l + c] = stored_position(s.storage, l, r, c);
    dofs.reserve(l);
    a.reserve(l * l);
  }

  // The element's free DOFs, its matrix on them (f x f) and their rows of X (f x k).
  void load(const ElementSet<T>& s, std::size_t e, const std::vector<T>& global_x, std::size_t k) {
    const std::size_t l = s.element_size;
    const std::int32_t* v = s.indices.data() + e * l;
    const T* stored = s.matrices.data() + e * s.stored_per_element();
    dofs.clear();
    for (std::size_t r = 0; r < l; ++r)
      if (v[r] >= 0) dofs.push_back(v[r]);
    const std::size_t f = dofs.size();
    a.resize(f * f);
    x.resize(f * k);
    std::size_t row = 0;
    for (std::size_t r = 0; r < l; ++r) {
      if (v[r] < 0) continue;
      std::copy_n(global_x.begin() + static_cast<std::size_t>(v[r]) * k, k, x.begin() + row * k);
      std::size_t column = 0;
      for (std::size_t c = 0; c < l; ++c)
        if (v[c] >= 0) a[row * f + column++] = stored[position[r * l + c]];
      ++row;
    }
  }

  // Y_i = L_i X_i in T, each row summed over the columns in order.
  void product(std::size_t k) {
    const std::size_t f = dofs.size();
    y.assign(f * k, T(0));
    for (std::size_t r = 0; r < f; ++r) {
      T* __restrict yr = y.data() + r * k;
      for (std::size_t c = 0; c < f; ++c) {
        const T arc = a[r * f + c];
        const T* __restrict xc = x.data() + c * k;
        for (std::size_t j = 0; j < k; ++j) yr[j] += arc * xc[j];
      }
    }
  }

  // sum += the upper triangle of X_i^T Y_i (k x k row-major), each entry summed over rows in order.
  void add_projection(std::size_t k, T* sum) {
    term.assign(k * k, T(0));
    for (std::size_t r = 0; r < dofs.size(); ++r) {
      const T* __restrict yr = y.data() + r * k;
      for (std::size_t i = 0; i < k; ++i) {
        const T xi = x[r * k + i];
        T* __restrict ti = term.data() + i * k;
        for (std::size_t j = i; j < k; ++j) ti[j] += xi * yr[j];
      }
    }
    for (std::size_t i = 0; i < k; ++i)
      for (std::size_t j = i; j < k; ++j) sum[i * k + j] += term[i * k + j];
  }
};

// Greedy colours, elements in order. A DOF's colours below 64 are the bits of a mask; higher ones
// (only where more than 64 elements meet) are listed per DOF.
class Colourer {
 public:
  explicit Colourer(std::size_t dofs) : dofs_(dofs), low_(dofs, 0) {}

  std::uint32_t colour(const std::int32_t* v, std::size_t l) {
    std::uint64_t taken = 0;
    for (std::size_t r = 0; r < l; ++r) taken |= v[r] >= 0 ? low_[v[r]] : 0;
    if (~taken == 0) return high_colour(v, l);
    const auto c = static_cast<std::uint32_t>(__builtin_ctzll(~taken));
    for (std::size_t r = 0; r < l; ++r) {
      if (v[r] >= 0) low_[v[r]] |= std::uint64_t{1} << c;
    }
    return c;
  }

 private:
  std::uint32_t high_colour(const std::int32_t* v, std::size_t l) {
    if (high_.empty()) high_.resize(dofs_);
    std::vector<std::uint32_t> taken;
    for (std::size_t r = 0; r < l; ++r) {
      if (v[r] >= 0) taken.insert(taken.end(), high_[v[r]].begin(), high_[v[r]].end());
    }
    std::sort(taken.begin(), taken.end());
    std::uint32_t c = 64;
    for (const std::uint32_t t : taken) {
      if (t == c) ++c;
      if (t > c) break;
    }
    for (std::size_t r = 0; r < l; ++r) {
      if (v[r] >= 0) high_[v[r]].push_back(c);
    }
    return c;
  }

  std::size_t dofs_;
  std::vector<std::uint64_t> low_;
  std::vector<std::vector<std::uint32_t>> high_;
};

template <class T>
ElementColouring colouring_of(const ElementSet<T>& s) {
  const std::size_t m = s.count();
  if (m > std::numeric_limits<std::uint32_t>::max()) {
    throw InvalidArgument("colour_elements: " + str(m) + " elements are more than 2^32 - 1; split the model");
  }
  Colourer colourer(s.dofs);
  std::vector<std::uint32_t> colour(m);
  for (std::size_t e = 0; e < m; ++e) colour[e] = colourer.colour(s.indices.data() + e * s.element_size, s.element_size);
  // A counting sort by colour, stable: ascending element numbers inside a colour.
  ElementColouring result;
  const std::size_t colours = m == 0 ? 0 : std::size_t{*std::max_element(colour.begin(), colour.end())} + 1;
  result.colour_start.assign(colours + 1, 0);
  for (const std::uint32_t c : colour) ++result.colour_start[c + 1];
  for (std::size_t c = 0; c < colours; ++c) result.colour_start[c + 1] += result.colour_start[c];
  std::vector<std::size_t> next(result.colour_start.begin(), result.colour_start.end() - 1);
  result.order.resize(m);
  for (std::size_t e = 0; e < m; ++e) result.order[next[colour[e]]++] = static_cast<std::uint32_t>(e);
  return result;
}

// For every DOF, the (element, local DOF) pairs that hold it, as element * l + r, in element order.
struct Incidence {
  std::vector<std::size_t> ptr, entries;
};

Incidence incidence_of(const std::vector<std::int32_t>& indices, std::size_t dofs) {
  Incidence inc;
  inc.ptr.assign(dofs + 1, 0);
  for (const std::int32_t v : indices) {
    if (v >= 0) ++inc.ptr[v + 1];
  }
  for (std::size_t d = 0; d < dofs; ++d) inc.ptr[d + 1] += inc.ptr[d];
  inc.entries.resize(inc.ptr[dofs]);
  std::vector<std::size_t> next(inc.ptr.begin(), inc.ptr.end() - 1);
  for (std::size_t p = 0; p < indices.size(); ++p) {
    if (indices[p] >= 0) inc.entries[next[indices[p]]++] = p;
  }
  return inc;
}

// Calls add(column) once for each distinct column of row d of K. stamp[column] == d + 1 marks a
// column already met in row d, so one array serves every row of a thread without clearing.
template <class T, class Add>
void for_each_column(const ElementSet<T>& s, const Incidence& inc, std::size_t d, std::vector<std::uint32_t>& stamp,
                     Add add) {
  const std::size_t l = s.element_size;
  const auto mark = static_cast<std::uint32_t>(d + 1);
  for (std::size_t p = inc.ptr[d]; p < inc.ptr[d + 1]; ++p) {
    const std::int32_t* v = s.indices.data() + inc.entries[p] / l * l;
    for (std::size_t c = 0; c < l; ++c) {
      if (v[c] < 0 || stamp[v[c]] == mark) continue;
      stamp[v[c]] = mark;
      add(static_cast<sparse::Index>(v[c]));
    }
  }
}

// Whether rows d - 1 and d lie in the same elements, so have the same columns (as the DOFs of one
// node do): the row before's pattern then serves again, which saves most of the work.
bool same_elements(const Incidence& inc, std::size_t l, std::size_t d) {
  const std::size_t n = inc.ptr[d + 1] - inc.ptr[d];
  if (d == 0 || inc.ptr[d] - inc.ptr[d - 1] != n) return false;
  for (std::size_t i = 0; i < n; ++i) {
    if (inc.entries[inc.ptr[d - 1] + i] / l != inc.entries[inc.ptr[d] + i] / l) return false;
  }
  return true;
}

// Row d of K: its columns sorted, its values summed over the elements in element order. slot maps
// a column to its place in the row; it still holds row d - 1's when `same` (same_elements()).
template <class T>
void fill_row(const ElementSet<T>& s, const Incidence& inc, std::size_t d, bool same, std::vector<std::uint32_t>& stamp,
              std::vector<std::uint32_t>& slot, sparse::Index* col, std::size_t n, T* values) {
  const std::size_t l = s.element_size, stored = s.stored_per_element();
  if (same) {
    std::copy(col - n, col, col);
  } else {
    std::size_t found = 0;
    for_each_column(s, inc, d, stamp, [&](sparse::Index c) { col[found++] = c; });
    std::sort(col, col + n);
    for (std::size_t p = 0; p < n; ++p) slot[col[p]] = static_cast<std::uint32_t>(p);
  }
  for (std::size_t p = inc.ptr[d]; p < inc.ptr[d + 1]; ++p) {
    const std::size_t e = inc.entries[p] / l, r = inc.entries[p] % l;
    const std::int32_t* v = s.indices.data() + e * l;
    const T* a = s.matrices.data() + e * stored;
    for (std::size_t c = 0; c < l; ++c) {
      if (v[c] >= 0) values[slot[v[c]]] += a[stored_position(s.storage, l, r, c)];
    }
  }
}

// Row pointers of K: the distinct columns of every row counted, then summed.
template <class T>
std::vector<sparse::Index> row_pointers(const ElementSet<T>& s, const Incidence& inc) {
  std::vector<std::size_t> length(s.dofs);
  detail::parallel_for(s.dofs, kGrain, [&](std::size_t begin, std::size_t end) {
    std::vector<std::uint32_t> stamp(s.dofs, 0);
    for (std::size_t d = begin; d < end; ++d) {
      if (d > begin && same_elements(inc, s.element_size, d)) {
        length[d] = length[d - 1];
      } else {
        for_each_column(s, inc, d, stamp, [&](sparse::Index) { ++length[d]; });
      }
    }
  });
  std::vector<sparse::Index> ptr(s.dofs + 1, 0);
  std::size_t total = 0;
  for (std::size_t d = 0; d < s.dofs; ++d) {
    total += length[d];
    if (total > kMaxStored) {
      throw InvalidArgument("assemble_csr: K would have more than 2^32 - 1 stored entries, which 32-bit indices "
                            "cannot address: use the element-by-element operators (ops/ebe.hpp) instead");
    }
    ptr[d + 1] = static_cast<sparse::Index>(total);
  }
  return ptr;
}

}  // namespace

template <class T>
void validate(const ElementSet<T>& elements, double symmetry_tolerance) {
  check_shape(elements);
  detail::parallel_for(elements.count(), kGrain, [&](std::size_t begin, std::size_t end) {
    for (std::size_t e = begin; e < end; ++e) {
      check_index_range(elements, e);
      check_duplicates(elements, e);
      check_values(elements, e, symmetry_tolerance);
    }
  });
}

template <class T>
ElementSet<T> to_upper(const ElementSet<T>& elements) {
  if (elements.storage == ElementStorage::upper) return elements;
  check_shape(elements);
  ElementSet<T> upper{elements.dofs, elements.element_size, ElementStorage::upper, {}, elements.indices};
  const std::size_t l = elements.element_size, packed = upper.stored_per_element();
  upper.matrices.resize(elements.count() * packed);
  detail::parallel_for(elements.count(), kGrain, [&](std::size_t begin, std::size_t end) {
    for (std::size_t e = begin; e < end; ++e) {
      const T* full = elements.matrices.data() + e * l * l;
      T* out = upper.matrices.data() + e * packed;
      for (std::size_t r = 0; r < l; ++r) out = std::copy(full + r * l + r, full + (r + 1) * l, out);
    }
  });
  return upper;
}

template <class T>
T element_entry(const ElementSet<T>& elements, std::size_t element, std::size_t r, std::size_t c) {
  check_shape(elements);
  const std::size_t l = elements.element_size;
  if (element >= elements.count() || r >= l || c >= l) {
    throw InvalidArgument("element_entry: entry (" + str(r) + ", " + str(c) + ") of " + element_name(element) +
                          " lies outside the set's " + str(elements.count()) + " elements of " + str(l) + " x " +
                          str(l));
  }
  return elements.matrices[element * elements.stored_per_element() + stored_position(elements.storage, l, r, c)];
}

template <class T>
std::vector<T> multiply(const ElementSet<T>& elements, const std::vector<T>& x, std::size_t k) {
  check_operands(elements);
  check_vectors(elements, x, k, "multiply");
  const ElementColouring colouring = colouring_of(elements);
  std::vector<T> y(elements.dofs * k, T(0));
  for (std::size_t colour = 0; colour < colouring.colours(); ++colour) {
    const std::uint32_t* order = colouring.order.data() + colouring.colour_start[colour];
    const std::size_t n = colouring.colour_start[colour + 1] - colouring.colour_start[colour];
    detail::parallel_for(n, kGrain / 4, [&](std::size_t begin, std::size_t end) {
      LocalElement<T> local(elements);
      for (std::size_t i = begin; i < end; ++i) {
        local.load(elements, order[i], x, k);
        local.product(k);
        for (std::size_t r = 0; r < local.dofs.size(); ++r) {
          T* out = y.data() + static_cast<std::size_t>(local.dofs[r]) * k;
          for (std::size_t j = 0; j < k; ++j) out[j] += local.y[r * k + j];
        }
      }
    });
  }
  return y;
}

template <class T>
std::vector<double> project(const ElementSet<T>& elements, const std::vector<T>& x, std::size_t k) {
  check_operands(elements);
  check_vectors(elements, x, k, "project");
  const std::size_t chunks = detail::ceil_div(elements.count(), kProjectionChunk);
  std::vector<T> chunk_sums(chunks * k * k, T(0));
  detail::parallel_for(chunks, 4, [&](std::size_t begin, std::size_t end) {
    LocalElement<T> local(elements);
    for (std::size_t chunk = begin; chunk < end; ++chunk) {
      const std::size_t last = std::min(elements.count(), (chunk + 1) * kProjectionChunk);
      for (std::size_t e = chunk * kProjectionChunk; e < last; ++e) {
        local.load(elements, e, x, k);
        local.product(k);
        local.add_projection(k, chunk_sums.data() + chunk * k * k);
      }
    }
  });
  std::vector<double> result(k * k, 0.0);
  for (std::size_t chunk = 0; chunk < chunks; ++chunk) {
    for (std::size_t i = 0; i < k; ++i)
      for (std::size_t j = i; j < k; ++j) result[i * k + j] += static_cast<double>(chunk_sums[(chunk * k + i) * k + j]);
  }
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t j = 0; j < i; ++j) result[i * k + j] = result[j * k + i];
  return result;
}

template <class T>
std::vector<T> diagonal(const ElementSet<T>& elements) {
  check_operands(elements);
  const std::size_t l = elements.element_size, stored = elements.stored_per_element();
  std::vector<T> d(elements.dofs, T(0));
  for (std::size_t e = 0; e < elements.count(); ++e) {
    const std::int32_t* v = elements.indices.data() + e * l;
    for (std::size_t r = 0; r < l; ++r) {
      if (v[r] >= 0) d[v[r]] += elements.matrices[e * stored + stored_position(elements.storage, l, r, r)];
    }
  }
  return d;
}

template <class T>
bool is_diagonal(const ElementSet<T>& elements) {
  check_shape(elements);
  const std::size_t l = elements.element_size, stored = elements.stored_per_element();
  for (std::size_t e = 0; e < elements.count(); ++e) {
    const T* a = elements.matrices.data() + e * stored;
    for (std::size_t r = 0; r < l; ++r) {
      for (std::size_t c = elements.storage == ElementStorage::full ? 0 : r; c < l; ++c) {
        if (c != r && a[stored_position(elements.storage, l, r, c)] != T(0)) return false;
      }
    }
  }
  return true;
}

template <class T>
sparse::Csr<T> assemble_csr(const ElementSet<T>& elements) {
  check_operands(elements);
  const Incidence inc = incidence_of(elements.indices, elements.dofs);
  sparse::Csr<T> k;
  k.rows = k.cols = elements.dofs;
  k.row_ptr = row_pointers(elements, inc);
  k.col.resize(k.row_ptr.back());
  k.values.assign(k.row_ptr.back(), T(0));
  detail::parallel_for(elements.dofs, kGrain, [&](std::size_t begin, std::size_t end) {
    std::vector<std::uint32_t> stamp(elements.dofs, 0), slot(elements.dofs);
    for (std::size_t d = begin; d < end; ++d) {
      const bool same = d > begin && same_elements(inc, elements.element_size, d);
      fill_row(elements, inc, d, same, stamp, slot, k.col.data() + k.row_ptr[d], k.row_ptr[d + 1] - k.row_ptr[d],
               k.values.data() + k.row_ptr[d]);
    }
  });
  return k;
}

template <class T>
sparse::Bsr<T> assemble_bsr(const ElementSet<T>& elements, std::size_t block_size) {
  return sparse::to_bsr(assemble_csr(elements), block_size);
}

template <class T>
sparse::Bsr<T> assemble_block_diagonal(const ElementSet<T>& elements, std::size_t block_size) {
  check_operands(elements);
  if (block_size < 1 || block_size > 16)
    throw InvalidArgument("the block size is 1 to 16, not " + str(block_size));
  const std::size_t l = elements.element_size, stored = elements.stored_per_element(), b = block_size;
  sparse::Bsr<T> d;
  d.rows = d.cols = elements.dofs;
  d.block_size = b;
  d.block_rows = d.block_cols = (elements.dofs + b - 1) / b;
  d.block_row_ptr.resize(d.block_rows + 1);
  d.block_col.resize(d.block_rows);
  for (std::size_t i = 0; i < d.block_rows; ++i) {
    d.block_row_ptr[i + 1] = static_cast<sparse::Index>(i + 1);
    d.block_col[i] = static_cast<sparse::Index>(i);
  }
  d.values.assign(d.block_rows * b * b, T(0));
  for (std::size_t e = 0; e < elements.count(); ++e) {  // element order, as assemble_csr sums
    const std::int32_t* v = elements.indices.data() + e * l;
    for (std::size_t r = 0; r < l; ++r) {
      for (std::size_t c = 0; c < l; ++c) {
        if (v[r] < 0 || v[c] < 0 || std::size_t(v[r]) / b != std::size_t(v[c]) / b) continue;
        d.values[std::size_t(v[r]) / b * b * b + std::size_t(v[r]) % b * b + std::size_t(v[c]) % b] +=
            elements.matrices[e * stored + stored_position(elements.storage, l, r, c)];
      }
    }
  }
  return d;
}

template <class T>
ElementColouring colour_elements(const ElementSet<T>& elements) {
  check_operands(elements);
  return colouring_of(elements);
}

#define ZIGGURAT_ELEMENTS_INSTANTIATE(T)                                                                             \
  template void validate<T>(const ElementSet<T>&, double);                                                  \
  template ElementSet<T> to_upper<T>(const ElementSet<T>&);                                                 \
  template T element_entry<T>(const ElementSet<T>&, std::size_t, std::size_t, std::size_t);                 \
  template std::vector<T> multiply<T>(const ElementSet<T>&, const std::vector<T>&, std::size_t);            \
  template std::vector<double> project<T>(const ElementSet<T>&, const std::vector<T>&, std::size_t);        \
  template std::vector<T> diagonal<T>(const ElementSet<T>&);                                                \
  template bool is_diagonal<T>(const ElementSet<T>&);                                                       \
  template sparse::Csr<T> assemble_csr<T>(const ElementSet<T>&);                                            \
  template sparse::Bsr<T> assemble_bsr<T>(const ElementSet<T>&, std::size_t);                               \
  template sparse::Bsr<T> assemble_block_diagonal<T>(const ElementSet<T>&, std::size_t);                    \
  template ElementColouring colour_elements<T>(const ElementSet<T>&);
ZIGGURAT_ELEMENTS_INSTANTIATE(float)
ZIGGURAT_ELEMENTS_INSTANTIATE(double)
#undef ZIGGURAT_ELEMENTS_INSTANTIATE

}  // namespace ziggurat::fem
