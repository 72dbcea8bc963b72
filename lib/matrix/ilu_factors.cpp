#include "ziggurat/matrix/ilu_factors.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "base/integer_math.hpp"
#include "base/large_arrays.hpp"
#include "base/parallel.hpp"
#include "ziggurat/base/error.hpp"

namespace ziggurat::sparse {

namespace {

// Block rows a chunk of the host loops takes.
constexpr std::size_t kRowChunk = 4096;

}  // namespace

template <class T>
IluPattern<T> ilu_pattern(const Bsr<T>& a, double shift) {
  validate(a);
  return ilu_pattern(a, shift, Validated{});
}

template <class T>
IluPattern<T> ilu_pattern(const Bsr<T>& a, double shift, Validated) {
  if (a.rows != a.cols || a.block_rows != a.block_cols) {
    throw InvalidArgument("ILU(0) needs a square matrix; this one is " + std::to_string(a.rows) + " x " +
                          std::to_string(a.cols));
  }
  if (!(shift >= 0) || !std::isfinite(shift)) {
    throw InvalidArgument("the diagonal shift must be finite and >= 0, not " + std::to_string(shift));
  }
  const std::size_t b = a.block_size, bb = b * b;
  IluPattern<T> pattern{ziggurat::detail::large_vector<Index>(a.block_rows), {}};
  // The diagonal blocks' positions on every core; the least row without one is named.
  constexpr Index kNone = ~Index{0};
  std::vector<Index> missing(ziggurat::detail::ceil_div(a.block_rows, kRowChunk), kNone);
  ziggurat::detail::for_chunks(a.block_rows, kRowChunk, [&](std::size_t first, std::size_t last) {
    for (std::size_t i = first; i < last; ++i) {
      const auto begin = a.block_col.begin() + a.block_row_ptr[i], end = a.block_col.begin() + a.block_row_ptr[i + 1];
      const auto at = std::lower_bound(begin, end, static_cast<Index>(i));
      if (at == end || *at != i) {
        missing[first / kRowChunk] = static_cast<Index>(i);
        return;
      }
      pattern.diagonal[i] = static_cast<Index>(at - a.block_col.begin());
    }
  });
  for (const Index i : missing) {
    if (i == kNone) continue;
    throw InvalidArgument("block row " + std::to_string(i) + " has no diagonal block: ILU(0) and block Jacobi need "
                          "every diagonal block stored (store explicit zeros there and use a diagonal shift, or "
                          "choose the preconditioner none)");
  }
  for (std::size_t i = 0; i < a.block_rows; ++i) {
    const bool padded = (i + 1) * b > a.rows;
    if (!padded && shift == 0) continue;  // nothing changes: the values stay untouched (and uncached)
    const T* d = a.values.data() + pattern.diagonal[i] * bb;
    // Padding lines get the block's largest diagonal magnitude: decoupled from the matrix, and of
    // its scale, so that the pivot rule (relative to the block) never trips on them.
    T scale = 0;
    for (std::size_t r = 0; r < b && i * b + r < a.rows; ++r) scale = std::max(scale, std::abs(d[r * b + r]));
    for (std::size_t r = 0; r < b; ++r) {
      if (i * b + r >= a.rows) {
        pattern.changes.push_back({i, r, scale > 0 ? scale : T(1)});
      } else if (shift > 0) {
        double largest = 0;
        for (Index p = a.block_row_ptr[i]; p < a.block_row_ptr[i + 1]; ++p) {
          for (std::size_t c = 0; c < b; ++c) largest = std::max(largest, std::abs(double(a.values[p * bb + r * b + c])));
        }
        pattern.changes.push_back({i, r, static_cast<T>(d[r * b + r] + shift * largest)});
      }
    }
  }
  return pattern;
}

template <class T>
IluInput<T> prepare_ilu(const Bsr<T>& a, double shift) {
  const IluPattern<T> pattern = ilu_pattern(a, shift);
  IluInput<T> input{a, pattern.diagonal};
  for (const DiagonalChange<T>& change : pattern.changes) {
    input.matrix.values[pattern.position(change, a.block_size)] = change.value;
  }
  return input;
}

std::string pivot_failure_message(std::size_t row, double pivot, double shift, const char* factorization) {
  std::ostringstream text;
  text << factorization << " failed: the diagonal block of block row " << row << " has a zero, tiny or NaN pivot after elimination";
  if (pivot >= 0 || std::isnan(pivot)) text << " (|pivot| = " << pivot << ")";
  text << (shift > 0 ? " even with the diagonal shift " : "; use a diagonal shift (--shift S, e.g. 1e-6; ")
       << (shift > 0 ? std::to_string(shift) + ": try a larger shift" : "SolverOptions::shift)")
       << ", another ordering, or the preconditioner block-jacobi or none";
  return text.str();
}

template <class T>
bool invert_block(T* d, std::size_t b, double* pivot) {
  // [d | inverse] reduced to [I | d^-1]; the same steps as the device's invert_block (block_ilu.cl).
  T inverse[16 * 16];
  T largest = 0;
  for (std::size_t e = 0; e < b * b; ++e) largest = std::max(largest, std::abs(d[e]));
  const T tiny = static_cast<T>(b) * std::numeric_limits<T>::epsilon() * largest;
  for (std::size_t r = 0; r < b; ++r)
    for (std::size_t c = 0; c < b; ++c) inverse[r * b + c] = r == c ? T(1) : T(0);
  for (std::size_t c = 0; c < b; ++c) {
    std::size_t best = c;
    for (std::size_t r = c + 1; r < b; ++r)
      if (std::abs(d[r * b + c]) > std::abs(d[best * b + c])) best = r;
    const T p = d[best * b + c];
    if (!(std::abs(p) > tiny)) {
      if (pivot != nullptr) *pivot = std::abs(double(p));
      return false;
    }
    for (std::size_t e = 0; e < b; ++e) {
      std::swap(d[c * b + e], d[best * b + e]);
      std::swap(inverse[c * b + e], inverse[best * b + e]);
    }
    const T scale = T(1) / p;
    for (std::size_t e = 0; e < b; ++e) {
      d[c * b + e] *= scale;
      inverse[c * b + e] *= scale;
    }
    for (std::size_t r = 0; r < b; ++r) {
      if (r == c) continue;
      const T f = d[r * b + c];
      for (std::size_t e = 0; e < b; ++e) {
        d[r * b + e] -= f * d[c * b + e];
        inverse[r * b + e] -= f * inverse[c * b + e];
      }
    }
  }
  std::copy_n(inverse, b * b, d);
  return true;
}

namespace {

// out = a (row vector, b values) times the b x b block m: out[c] = sum_m a[m] m[m][c].
template <class T>
void line_times_block(const T* a, const T* m, std::size_t b, T* out) {
  for (std::size_t c = 0; c < b; ++c) {
    T s = 0;
    for (std::size_t e = 0; e < b; ++e) s += a[e] * m[e * b + c];
    out[c] = s;
  }
}

}  // namespace

template <class T>
Bsr<T> factorize_ilu0(const IluInput<T>& input, double shift) {
  Bsr<T> f = input.matrix;
  const std::size_t b = f.block_size, bb = b * b;
  const std::vector<Index>& diag = input.diagonal;
  T a[16], line[16];
  for (std::size_t i = 0; i < f.block_rows; ++i) {
    const Index end = f.block_row_ptr[i + 1];
    for (Index p = f.block_row_ptr[i]; p < diag[i]; ++p) {
      const Index k = f.block_col[p];
      for (std::size_t l = 0; l < b; ++l) {  // line by line, as the device does
        T* block_line = f.values.data() + p * bb + l * b;
        std::copy_n(block_line, b, a);
        line_times_block(a, f.values.data() + diag[k] * bb, b, block_line);
        Index r = p + 1;
        for (Index q = diag[k] + 1; q < f.block_row_ptr[k + 1]; ++q) {
          const Index j = f.block_col[q];
          while (r < end && f.block_col[r] < j) ++r;
          if (r == end) break;
          if (f.block_col[r] != j) continue;
          T* target = f.values.data() + r * bb + l * b;
          const T* u = f.values.data() + q * bb;
          for (std::size_t c = 0; c < b; ++c) {
            T s = target[c];
            for (std::size_t e = 0; e < b; ++e) s -= a[e] * u[e * b + c];
            target[c] = s;
          }
        }
      }
    }
    T* d = f.values.data() + diag[i] * bb;
    double pivot = 0;
    if (!invert_block(d, b, &pivot)) throw ZeroPivot(i, pivot_failure_message(i, pivot, shift));
    for (Index q = diag[i] + 1; q < end; ++q) {  // U_ij <- D_i^-1 U_ij, column by column
      T* u = f.values.data() + q * bb;
      for (std::size_t c = 0; c < b; ++c) {
        for (std::size_t e = 0; e < b; ++e) line[e] = u[e * b + c];
        for (std::size_t r = 0; r < b; ++r) {
          T s = 0;
          for (std::size_t e = 0; e < b; ++e) s += d[r * b + e] * line[e];
          u[r * b + c] = s;
        }
      }
    }
  }
  return f;
}

template <class T>
std::vector<T> apply_ilu0(const Bsr<T>& f, const std::vector<Index>& diag, const std::vector<T>& r, std::size_t k) {
  const std::size_t b = f.block_size, bb = b * b, n = f.block_rows * b;
  if (r.size() != n * k || diag.size() != f.block_rows) {
    throw InvalidArgument("apply_ilu0: r holds " + std::to_string(r.size()) + " values; the factors need " +
                          std::to_string(n * k) + " (block rows x b x k)");
  }
  std::vector<T> y(n * k), z(n * k);
  for (std::size_t i = 0; i < f.block_rows; ++i) {
    for (std::size_t l = 0; l < b; ++l) {
      for (std::size_t j = 0; j < k; ++j) {
        T acc = r[(i * b + l) * k + j];
        for (Index p = f.block_row_ptr[i]; p < diag[i]; ++p) {
          const T* line = f.values.data() + p * bb + l * b;
          for (std::size_t c = 0; c < b; ++c) acc -= line[c] * y[(f.block_col[p] * b + c) * k + j];
        }
        y[(i * b + l) * k + j] = acc;
      }
    }
  }
  for (std::size_t i = f.block_rows; i-- > 0;) {
    for (std::size_t l = 0; l < b; ++l) {
      for (std::size_t j = 0; j < k; ++j) {
        const T* dline = f.values.data() + diag[i] * bb + l * b;
        T acc = 0;
        for (std::size_t c = 0; c < b; ++c) acc += dline[c] * y[(i * b + c) * k + j];
        for (Index q = diag[i] + 1; q < f.block_row_ptr[i + 1]; ++q) {
          const T* line = f.values.data() + q * bb + l * b;
          for (std::size_t c = 0; c < b; ++c) acc -= line[c] * z[(f.block_col[q] * b + c) * k + j];
        }
        z[(i * b + l) * k + j] = acc;
      }
    }
  }
  return z;
}

#define ZIGGURAT_ILU_INSTANTIATE(T)                                                     \
  template IluPattern<T> ilu_pattern<T>(const Bsr<T>&, double);                         \
  template IluPattern<T> ilu_pattern<T>(const Bsr<T>&, double, Validated);              \
  template IluInput<T> prepare_ilu<T>(const Bsr<T>&, double);                           \
  template bool invert_block<T>(T*, std::size_t, double*);                              \
  template Bsr<T> factorize_ilu0<T>(const IluInput<T>&, double);                        \
  template std::vector<T> apply_ilu0<T>(const Bsr<T>&, const std::vector<Index>&, const std::vector<T>&, std::size_t);

ZIGGURAT_ILU_INSTANTIATE(float)
ZIGGURAT_ILU_INSTANTIATE(double)

#undef ZIGGURAT_ILU_INSTANTIATE

}  // namespace ziggurat::sparse
