#pragma once
// Sparse products on a device: Y = A X for a set of k vectors stored interleaved (an n x k
// row-major array), A in block CSR (CSR is block CSR with b = 1, array for array) or diagonal
// format (method notes, sections 3 and 5).
//
// Block CSR has three kernel strategies, each specialised at build time for (type, b, k):
//   row       one work-item per block row (P11)
//   group     one work-group per block row, blocks staged in local memory, in rounds when the
//             row has more blocks than the group holds (P13)
//   multirow  several block rows per work-group, `lanes` work-items per (line, vector) (P14)
// `automatic` times every variant on the matrix the first time a kind of problem is seen
// (precision, b, k, row-length class, size class) and keeps the timings in the device profile
// (calibration.hpp), so the choice is measured once per device and then read.
//
// A Multiplier builds its kernels once and enqueues products on the context's compute queue; the
// free multiply() functions are the blocking one-call form.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ziggurat/context.hpp"
#include "ziggurat/memory.hpp"
#include "ziggurat/sparse.hpp"

namespace ziggurat::sparse {

/// A block CSR matrix in device memory. From a Csr it is the same arrays with b = 1.
template <class T>
class DeviceBsr {
 public:
  DeviceBsr(const Context& context, const Bsr<T>& a);
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
  /// Throws UnsupportedFeature when the offsets do not fit the device's constant memory.
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
  std::size_t rows() const noexcept { return rows_; }
  std::size_t k() const noexcept { return k_; }
  std::size_t padded_rows() const noexcept { return buffer_.size() / k_; }
  const DeviceBuffer<T>& buffer() const noexcept { return buffer_; }
  /// Copies rows * k values (interleaved) in; the padding stays zero. Blocking.
  void upload(const std::vector<T>& values);
  /// The rows * k values, interleaved. Blocking.
  std::vector<T> download() const;

 private:
  Context context_;
  std::size_t rows_, k_;
  DeviceBuffer<T> buffer_;
};

/// Vectors shaped for the input X (cols rows) or the output Y (rows rows) of products with `a`.
template <class T> DeviceVectors<T> input_vectors(const Context& context, const DeviceBsr<T>& a, std::size_t k);
template <class T> DeviceVectors<T> output_vectors(const Context& context, const DeviceBsr<T>& a, std::size_t k);

namespace detail {
/// One kernel launch of a product (one per chunk of at most 16 vectors).
struct ProductLaunch {
  cl::Kernel kernel;
  cl::NDRange global, local;
};
}  // namespace detail

enum class BsrStrategy { automatic, row, group, multirow };
const char* to_string(BsrStrategy strategy);
/// "auto", "row", "group" or "multirow"; InvalidArgument otherwise.
BsrStrategy parse_bsr_strategy(std::string_view text);

/// A concrete kernel variant. lanes and vector_width matter for multirow only, where 0 means "by
/// the rule": lanes the largest power of two not above the mean blocks per row, at most 32, and
/// small enough that the work-items of a block row fit one work-group; vector_width the widest
/// OpenCL vector (up to 16) that divides k, each work-item then owning that many vectors.
struct BsrKernel {
  BsrStrategy strategy = BsrStrategy::automatic;
  std::size_t lanes = 0;
  std::size_t vector_width = 0;
  std::string name() const;  ///< "row", "group", "multirow/4" (one vector per work-item), "multirow/1/v8"
};

/// What `automatic` found for one kind of problem: every variant's time, best first.
struct BsrChoice {
  BsrKernel kernel;
  std::string key;  ///< the kind of problem, as kept in the profile
  bool measured_now = false;  ///< false when read from the profile
  std::vector<std::pair<std::string, double>> seconds;  ///< per variant, fastest first
};

/// The kernel `automatic` picks for products of `a` with k vectors on this device: from the
/// device profile when it has timings for this kind of problem, else measured now on `a` (every
/// variant, a few runs each) and added to the profile (which is calibrated first if there is
/// none cached). Timings are also kept for the life of the process.
template <class T>
BsrChoice choose_bsr_kernel(const Context& context, const DeviceBsr<T>& a, std::size_t k);

/// Products Y = A X with one matrix and k vectors, kernels built once. Keeps the matrix's
/// buffers (not the DeviceBsr object) alive.
template <class T>
class BsrMultiplier {
 public:
  /// `kernel` must name a strategy (automatic is resolved by choose_bsr_kernel first). Throws
  /// UnsupportedFeature when the device cannot run that variant (work-group or local memory
  /// limits).
  BsrMultiplier(const Context& context, const DeviceBsr<T>& a, std::size_t k, BsrKernel kernel);
  /// Enqueues Y = A X on the compute queue; returns the last kernel's event (and the first's in
  /// `first`, for timing: the product takes one launch per 16 vectors). X and Y must be distinct
  /// and shaped by input_vectors / output_vectors (InvalidArgument otherwise).
  cl::Event enqueue(const DeviceVectors<T>& x, DeviceVectors<T>& y, const std::vector<cl::Event>* wait = nullptr,
                    cl::Event* first = nullptr);
  const BsrKernel& kernel() const noexcept { return kernel_; }

 private:
  Context context_;
  void resolve_multirow(std::size_t k, std::size_t per_launch, const RowStats& stats, std::size_t group);
  std::size_t rows_, cols_, padded_rows_, padded_cols_, block_rows_, block_size_, k_;
  BsrKernel kernel_;
  std::vector<detail::ProductLaunch> launches_;
  cl::Buffer row_ptr_, col_, values_;
};

/// Products y = A x with a DIA matrix, kernels built once.
template <class T>
class DiaMultiplier {
 public:
  DiaMultiplier(const Context& context, const DeviceDia<T>& a, std::size_t k);
  /// As BsrMultiplier::enqueue; X and Y are exactly a.cols() and a.rows() rows.
  cl::Event enqueue(const DeviceVectors<T>& x, DeviceVectors<T>& y, const std::vector<cl::Event>* wait = nullptr,
                    cl::Event* first = nullptr);

 private:
  Context context_;
  std::size_t rows_, cols_, k_;
  std::vector<detail::ProductLaunch> launches_;
  cl::Buffer offsets_, values_;
};

/// The bytes one product Y = A X must move at least: the matrix's arrays once, X and Y once
/// (what "effective bandwidth" and the traffic limit of the benchmarks count).
template <class T> double product_bytes(const DeviceBsr<T>& a, std::size_t k);
template <class T> double product_bytes(const DeviceDia<T>& a, std::size_t k);

/// Y = A X on the device, blocking; X is a.cols() x k interleaved, Y a.rows() x k.
template <class T>
std::vector<T> multiply(const Context& context, const DeviceBsr<T>& a, const std::vector<T>& x, std::size_t k,
                        BsrKernel kernel = {});
template <class T>
std::vector<T> multiply(const Context& context, const DeviceDia<T>& a, const std::vector<T>& x, std::size_t k);

}  // namespace ziggurat::sparse
