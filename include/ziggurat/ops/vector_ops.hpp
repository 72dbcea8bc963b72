#pragma once
// Vector operations of the Krylov solvers on a device: linear combinations, dot products and the
// fused steps of CG and BiCGStab, on k vectors stored interleaved (an n x k row-major array, as the
// sparse products use), with one coefficient per vector.
//
// Dot products go into numbered result slots on the device (k values per slot) and are read with
// read(), the only call that waits. They are reduced in a fixed order (work-group partial sums in a
// fixed tree, then the groups in order), so the same inputs give the same bits every time on a
// device. Coefficients are written to the device by the operation that uses them, from a ring of
// slots that a read() frees.
//
// With fuse = false every fused step runs as the elementwise kernels and dot products it
// replaces (the same results up to rounding), so that both can be measured.
#include <cstddef>
#include <initializer_list>
#include <vector>

#include "ziggurat/base/context.hpp"
#include "ziggurat/base/memory.hpp"
#include "ziggurat/matrix/device_sparse.hpp"

namespace ziggurat::sparse {

/// Where a set of k interleaved vectors starts: a buffer and an offset in elements.
struct VectorRef {
  cl::Buffer buffer;
  std::size_t offset = 0;
  template <class T>
  VectorRef(const DeviceVectors<T>& v) : buffer(v.buffer().get()) {}  // NOLINT: implicit on purpose
  template <class T>
  VectorRef(const DeviceBuffer<T>& v, std::size_t offset_ = 0) : buffer(v.get()), offset(offset_) {}  // NOLINT
};

/// Rows renumbered by blocks of block_size rows: block i of the device's order is block
/// old_of_new[i] of the caller's; rows at or past `rows` (a partial last block) are padding.
struct RowRenumbering {
  const DeviceBuffer<Index>& old_of_new;
  std::size_t block_size = 1, rows = 0;
  /// The rows of the device's order: whole blocks, padding included.
  std::size_t padded_rows() const { return old_of_new.size() * block_size; }
};

/// Columns [first, first + count) of vectors whose rows hold `width` values.
struct ColumnWindow {
  std::size_t width = 0, first = 0, count = 0;
};

/// The first and last commands of an operation, for timing it with profiling events.
struct Span {
  cl::Event first, last;
};

/// k coefficients, one per vector.
template <class T>
using Coefficients = std::vector<T>;

template <class T>
class VectorOps {
 public:
  /// Operations on `rows` x k vectors (rows padded as the vectors are); at most `max_sets` dot
  /// products in one multi_dot, and `slots` result slots. Throws UnsupportedFeature for double
  /// without fp64, InvalidArgument for k outside 1..16 or rows = 0.
  VectorOps(const Context& context, std::size_t rows, std::size_t k, bool fuse = true, std::size_t max_sets = 2,
            std::size_t slots = 64);

  std::size_t rows() const noexcept { return rows_; }
  std::size_t k() const noexcept { return k_; }
  bool fused() const noexcept { return fuse_; }

  /// y = a x + b y.
  Span axpby(const Coefficients<T>& a, const VectorRef& x, const Coefficients<T>& b, const VectorRef& y);
  /// y = a x.
  Span scale(const Coefficients<T>& a, const VectorRef& x, const VectorRef& y);
  /// y = x.
  Span copy(const VectorRef& x, const VectorRef& y);
  /// y = d .* x with one value of d per row (the same for every vector).
  Span multiply_rows(const DeviceBuffer<T>& d, const VectorRef& x, const VectorRef& y);
  /// Renumbering with a window of columns (RowRenumbering, ColumnWindow), x and y distinct.
  /// Gather, into the device's order: row r of block i of y (y_width values) = columns `from` of
  /// row r of block old_of_new[i] of x; zeros past from.count and in the padding rows.
  Span gather_columns(const RowRenumbering& order, const VectorRef& x, ColumnWindow from, const VectorRef& y,
                      std::size_t y_width);
  /// Scatter, back to the caller's order: the first to.count values of each row of x (x_width
  /// values a row) into columns `to` of y; y's other columns and padding rows are left as they are.
  Span scatter_columns(const RowRenumbering& order, const VectorRef& x, std::size_t x_width, const VectorRef& y,
                       ColumnWindow to);
  /// results[slot] = x . y (offsets in whole rows: multiples of k; InvalidArgument otherwise).
  Span dot(const VectorRef& x, const VectorRef& y, std::size_t slot);
  /// results[slot] = a . b, results[slot + 1] = c . d, in one pass.
  Span dot_pair(const VectorRef& a, const VectorRef& b, const VectorRef& c, const VectorRef& d, std::size_t slot);
  /// results[slot + s] = V_s . w for s < count, V_s = basis + s * stride elements (count <= max_sets;
  /// stride and w's offset in whole rows).
  Span multi_dot(const DeviceBuffer<T>& basis, std::size_t stride, std::size_t count, const VectorRef& w,
                 std::size_t slot);
  /// w += sign * sum_s results[slot + s] V_s over s < count (the coefficients stay on the device).
  Span combine(const DeviceBuffer<T>& basis, std::size_t stride, std::size_t count, std::size_t slot, T sign,
               const VectorRef& w);
  /// CG: x += alpha p; r -= alpha q; results[slot] = r . r.
  Span cg_update(const Coefficients<T>& alpha, const VectorRef& x, const VectorRef& p, const VectorRef& r,
                 const VectorRef& q, std::size_t slot);
  /// BiCGStab: p = r + beta (p - omega v).
  Span bicg_direction(const Coefficients<T>& beta, const Coefficients<T>& omega, const VectorRef& p,
                      const VectorRef& r, const VectorRef& v);
  /// BiCGStab: s = r - alpha v; results[slot] = s . s.
  Span bicg_half(const Coefficients<T>& alpha, const VectorRef& r, const VectorRef& v, const VectorRef& s,
                 std::size_t slot);
  /// BiCGStab: x += alpha phat + omega shat; r = s - omega t; results[slot] = r . r and
  /// results[slot + 1] = r0 . r.
  Span bicg_update(const Coefficients<T>& alpha, const Coefficients<T>& omega, const VectorRef& x,
                   const VectorRef& phat, const VectorRef& shat, const VectorRef& s, const VectorRef& t,
                   const VectorRef& r, const VectorRef& r0, std::size_t slot);

  /// Waits for the queue and returns results[slot .. slot + count) as count * k values (slot
  /// after slot), in double.
  std::vector<double> read(std::size_t slot, std::size_t count);

 private:
  cl_uint put(const Coefficients<T>& values, cl::Event* event);
  Span elementwise(cl::Kernel& kernel, cl::Event* write_event);
  void check_renumbering(const RowRenumbering& order, const VectorRef& x, const VectorRef& y, ColumnWindow window,
                         std::size_t other_width, const char* what) const;
  void require_values(const VectorRef& v, std::size_t values, const char* what) const;
  Span per_value(cl::Kernel& kernel, std::size_t n, const char* what);
  Span reduce(cl::Kernel& kernel, std::size_t sets, std::size_t slot, const cl::Event& first_write);
  void check_slot(std::size_t slot, std::size_t count) const;
  void check_whole_rows(std::initializer_list<std::size_t> offsets, const char* what) const;

  Context context_;
  std::size_t rows_, k_;
  bool fuse_;
  std::size_t max_sets_, slots_, group_, groups_;
  std::vector<T> staged_;  // the coefficient ring on the host, alive until the writes complete
  std::size_t next_coefficient_ = 0, coefficient_slots_;
  DeviceBuffer<T> coefficients_, partial_, results_;
  cl::Kernel axpby_, scale_, multiply_rows_, combine_, direction_, dot_, pair_, finish_, cg_, half_, update_, gather_,
      scatter_;
};

}  // namespace ziggurat::sparse
