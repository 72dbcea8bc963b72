#pragma once
// What `ziggurat spmm` and `ziggurat bench spmm` share: a product made ready on the device (matrix,
// vectors, kernels), its timing, and the check of its result against the CPU reference.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ziggurat/base/context.hpp"
#include "ziggurat/ops/spmm.hpp"
#include "ziggurat/tuning/bsr_autotune.hpp"

namespace ziggurat::app {

/// A product Y = A X ready to run: the matrix and both vector sets in device memory, kernels built.
template <class T>
struct PreparedProduct {
  std::string format;  ///< "bsr", "csr" or "dia"
  std::size_t block_size = 1;
  std::string kernel;  ///< the variant that runs: "row", "group", "multirow/4", "dia"
  sparse::BsrChoice choice;  ///< what autotuning measured or read (its key is empty otherwise)
  double bytes = 0;          ///< sparse::product_bytes
  std::shared_ptr<sparse::DeviceVectors<T>> x, y;
  std::function<cl::Event(cl::Event* first)> enqueue;
};

/// Block CSR (a Bsr, or a Csr as b = 1) with `kernel`, or without one the kernel autotuning picks.
template <class T, class Matrix>
PreparedProduct<T> prepare_block_product(const Context& context, const Matrix& a, std::size_t k,
                                         std::optional<sparse::BsrKernel> kernel);
template <class T>
PreparedProduct<T> prepare_dia_product(const Context& context, const sparse::Dia<T>& a, std::size_t k);

/// Median and best of `repeat` products after a warm-up. Each is timed from its first launch's
/// start to its last launch's end by profiling events where the device has them, else by the
/// host clock around the product and a finish.
struct ProductTiming {
  double median_s = 0, min_s = 0;
};
ProductTiming time_product(const Context& context, const std::function<cl::Event(cl::Event* first)>& product,
                           std::size_t repeat);

/// The sequential CPU reference of a product (sparse::multiply on the matrix as read) and the
/// tolerance of each element: |y - r| <= 2 (m + 1) eps (|A| |X|), m the most entries of a row,
/// the rounding bound of a sum of m products in any order (zeros that blocks or diagonals add
/// are exact and do not count).
template <class T>
struct ReferenceProduct {
  std::vector<T> y;
  std::vector<double> tolerance;
};
template <class T>
ReferenceProduct<T> reference_product(const sparse::Csr<T>& a, const std::vector<T>& x, std::size_t k);

/// A device result against the reference.
struct ProductCheck {
  double max_relative_error = 0;  ///< max |y - r| / max |r|
  std::size_t outside = 0;        ///< elements beyond the tolerance (NaN included)
  bool ok() const { return outside == 0; }
};
template <class T>
ProductCheck check_product(const ReferenceProduct<T>& reference, const std::vector<T>& y);

/// rows x k values, uniform in [-1, 1), from a fixed seed.
template <class T>
std::vector<T> random_vectors(std::size_t rows, std::size_t k, std::uint64_t seed);

}  // namespace ziggurat::app
