#pragma once
// Sparse matrices and sets of vectors in device memory: block CSR (a CSR matrix is block CSR with
// b = 1, array for array), diagonal format, and k vectors stored interleaved (an n x k row-major
// array, element i of all k vectors contiguous; method notes, section 3). The products that use
// them are in ops/spmm.hpp.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ziggurat/base/context.hpp"
#include "ziggurat/base/memory.hpp"
#include "ziggurat/matrix/sparse.hpp"

namespace ziggurat::sparse {

/// A block CSR matrix in device memory. From a Csr it is the same arrays with b = 1. Throws
/// UnsupportedFeature for double on a device without fp64.
template <class T>
class DeviceBsr {
 public:
  DeviceBsr(const Context& context, const Bsr<T>& a);
  /// The same for a matrix that has passed validate() (sparse.hpp: Validated).
  DeviceBsr(const Context& context, const Bsr<T>& a, Validated);
  DeviceBsr(const Context& context, const Csr<T>& a);
  std::size_t rows() const noexcept { return rows_; }
  std::size_t cols() const noexcept { return cols_; }
  std::size_t block_size() const noexcept { return block_size_; }
  std::size_t block_rows() const noexcept { return stats_.rows; }
  std::size_t block_cols() const noexcept { return block_cols_; }
  std::size_t blocks() const noexcept { return col_.size(); }
  const RowStats& row_stats() const noexcept { return stats_; }
  const DeviceBuffer<Index>& row_ptr() const noexcept { return row_ptr_; }
  const DeviceBuffer<Index>& col() const noexcept { return col_; }
  const DeviceBuffer<T>& values() const noexcept { return values_; }

 private:
  DeviceBsr(const Context& context, std::size_t rows, std::size_t cols, std::size_t block_size,
            std::size_t block_cols, const std::vector<Index>& row_ptr, const std::vector<Index>& col,
            const std::vector<T>& values, RowStats stats);
  std::size_t rows_, cols_, block_size_, block_cols_;
  RowStats stats_;
  DeviceBuffer<Index> row_ptr_, col_;
  DeviceBuffer<T> values_;
};

/// A DIA matrix in device memory (general or symmetric half-stored).
template <class T>
class DeviceDia {
 public:
  DeviceDia(const Context& context, const Dia<T>& a);
  std::size_t rows() const noexcept { return rows_; }
  std::size_t cols() const noexcept { return cols_; }
  std::size_t diagonals() const noexcept { return offsets_.size(); }
  bool symmetric() const noexcept { return symmetric_; }
  const DeviceBuffer<std::int32_t>& offsets() const noexcept { return offsets_; }
  const DeviceBuffer<T>& values() const noexcept { return values_; }

 private:
  std::size_t rows_, cols_;
  bool symmetric_;
  DeviceBuffer<std::int32_t> offsets_;
  DeviceBuffer<T> values_;
};

/// k vectors of `rows` elements in device memory, interleaved, with zero rows after the last up
/// to `padded_rows` (block CSR products read and write whole blocks).
template <class T>
class DeviceVectors {
 public:
  /// padded_rows = 0 means rows. The buffer starts all zeros.
  DeviceVectors(const Context& context, std::size_t rows, std::size_t k, std::size_t padded_rows = 0);
  /// Vectors over rows * k values the caller holds (interleaved, no padding; e.g. a NumPy array's):
  /// a CPU device's products read and write them in place, other devices copy (CL_MEM_USE_HOST_PTR
  /// and `flags`). `values` must outlive these vectors; read results after show_to_host().
  DeviceVectors(const Context& context, T* values, std::size_t rows, std::size_t k, cl_mem_flags flags);
  std::size_t rows() const noexcept { return rows_; }
  std::size_t k() const noexcept { return k_; }
  std::size_t padded_rows() const noexcept { return buffer_.size() / k_; }
  const DeviceBuffer<T>& buffer() const noexcept { return buffer_; }
  /// Copies rows * k values (interleaved) in; the padding stays zero. Blocking.
  void upload(const std::vector<T>& values);
  /// The same from `count` values the caller holds (e.g. an array of another language's), copied
  /// straight into the device: count must be rows * k (InvalidArgument otherwise).
  void upload(const T* values, std::size_t count);
  /// The rows * k values, interleaved. Blocking.
  std::vector<T> download() const;
  /// The same into `count` values the caller holds, written straight from the device: count must
  /// be rows * k (InvalidArgument otherwise).
  void download(T* values, std::size_t count) const;
  /// Vectors over the caller's values: makes what kernels wrote visible there (a blocking map and
  /// unmap, which copies nothing where the device computed in place).
  void show_to_host() const;

 private:
  void require_count(std::size_t count, const char* what) const;
  Context context_;
  std::size_t rows_, k_;
  DeviceBuffer<T> buffer_;
};

/// Vectors shaped for the input X (cols rows) or the output Y (rows rows) of products with `a`.
template <class T> DeviceVectors<T> input_vectors(const Context& context, const DeviceBsr<T>& a, std::size_t k);
template <class T> DeviceVectors<T> output_vectors(const Context& context, const DeviceBsr<T>& a, std::size_t k);

}  // namespace ziggurat::sparse
