#pragma once
// Sparse products on a device: Y = A X for a set of k vectors stored interleaved (an n x k
// row-major array), A in block CSR (CSR is block CSR with b = 1, array for array) or diagonal
// format (method notes, sections 3 and 5). The matrices and vectors are in matrix/device_sparse.hpp.
//
// Block CSR has three kernel strategies, each specialised at build time for (type, b, k):
//   row       one work-item per block row (P11)
//   group     one work-group per block row, blocks staged in local memory, in rounds when the
//             row has more blocks than the group holds (P13)
//   multirow  several block rows per work-group, `lanes` work-items per (line, vector) (P14)
// A product runs the kernel it is given; the default, multirow by the rule below, is a sound choice
// without any measurement.
//
// A Multiplier builds its kernels once and enqueues products on the context's compute queue; the
// free multiply() functions are the blocking one-call form.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "ziggurat/base/context.hpp"
#include "ziggurat/matrix/device_sparse.hpp"

namespace ziggurat::sparse {

namespace detail {
/// One kernel launch of a product (one per chunk of at most 16 vectors).
struct ProductLaunch {
  cl::Kernel kernel;
  cl::NDRange global, local;
  std::size_t first_vector = 0;  ///< j0: the launch computes vectors j0 .. j0 + KC - 1
};
}  // namespace detail

enum class BsrStrategy { row, group, multirow };
const char* to_string(BsrStrategy strategy);
/// "row", "group" or "multirow"; InvalidArgument otherwise.
BsrStrategy parse_bsr_strategy(std::string_view text);

/// A kernel variant. lanes and vector_width matter for multirow only, where 0 means "by the rule":
/// lanes the largest power of two not above the mean blocks per row, at most 32, and small enough
/// that the work-items of a block row fit one work-group (1 on CPU devices: no barrier for PoCL); vector_width the widest OpenCL vector (up
/// to 16) that divides k, each work-item then owning that many vectors.
struct BsrKernel {
  BsrStrategy strategy = BsrStrategy::multirow;
  std::size_t lanes = 0;
  std::size_t vector_width = 0;
  std::string name() const;  ///< "row", "group", "multirow/4" (one vector per work-item), "multirow/1/v8"
};

/// The inverse of BsrKernel::name ("group", "multirow/4", "multirow/1/v8"); InvalidArgument for
/// anything else.
BsrKernel parse_bsr_kernel(const std::string& name);

/// Products Y = A X with one matrix and k vectors, kernels built once. Keeps the matrix's
/// buffers (not the DeviceBsr object) alive.
template <class T>
class BsrMultiplier {
 public:
  /// Throws UnsupportedFeature when the device cannot run `kernel` (work-group or local memory
  /// limits), InvalidArgument for multirow lanes or a vector width that are not powers of two.
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

/// Products y = A x with a DIA matrix, kernels built once. Throws UnsupportedFeature when the
/// offsets do not fit the device's constant memory, where the kernel reads them.
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
  cl_uint diagonals_ = 0, symmetric_ = 0;
};

/// The bytes one product Y = A X must move at least: the matrix's arrays once, X and Y once
/// (what "effective bandwidth" and the traffic limit of the benchmarks count).
template <class T> double product_bytes(const DeviceBsr<T>& a, std::size_t k);
template <class T> double product_bytes(const DeviceDia<T>& a, std::size_t k);

/// Y = A X on the device with `kernel` (a concrete variant), blocking; X is a.cols() x k
/// interleaved, Y a.rows() x k.
template <class T>
std::vector<T> multiply(const Context& context, const DeviceBsr<T>& a, const std::vector<T>& x, std::size_t k,
                        BsrKernel kernel);
template <class T>
std::vector<T> multiply(const Context& context, const DeviceDia<T>& a, const std::vector<T>& x, std::size_t k);

}  // namespace ziggurat::sparse
