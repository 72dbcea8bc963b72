#pragma once
// Block ILU(0) and block Jacobi on a device (method notes, section 3): the factorisation runs on
// the device level by level (the host only computes the level sets), with the b x b diagonal
// blocks inverted once; the triangular solves run level by level, every (block row, line, vector)
// of a level at once (parallel across independent rows and inside each block: the paper's P24).
// Factor layout and operation order: matrix/ilu_factors.hpp, whose sequential reference they match.
#include <cstddef>
#include <vector>

#include "ziggurat/base/context.hpp"
#include "ziggurat/base/memory.hpp"
#include "ziggurat/matrix/ilu_factors.hpp"
#include "ziggurat/matrix/ordering.hpp"
#include "ziggurat/ops/vector_ops.hpp"

namespace ziggurat::sparse {

template <class T>
class DeviceBlockIlu {
 public:
  /// Uploads `input` (prepare_ilu: shift and padding applied) and factorises it on the device for
  /// solves with k interleaved vectors. Throws ZeroPivot naming the least failing block row of the
  /// first level that fails (`shift` only goes into its message), UnsupportedFeature for double
  /// without fp64.
  DeviceBlockIlu(const Context& context, const IluInput<T>& input, std::size_t k, double shift = 0);
  /// z = U^-1 L^-1 r on the compute queue; r and z are block_rows * b x k, distinct.
  Span apply(const VectorRef& r, const VectorRef& z);
  /// The factors (values in the layout of ilu_factors.hpp), blocking.
  std::vector<T> factors() const;
  std::size_t lower_levels() const noexcept { return lower_.levels(); }
  std::size_t upper_levels() const noexcept { return upper_.levels(); }
  /// The factorisation's commands, for timing it.
  const Span& factorization() const noexcept { return factorization_; }

 private:
  Span factorize(double shift);
  Context context_;
  std::size_t block_size_, k_, block_rows_;
  LevelSets lower_, upper_;
  DeviceBuffer<Index> row_ptr_, col_, diagonal_, lower_rows_, upper_rows_, status_;
  DeviceBuffer<T> values_;
  DeviceBuffer<T> work_;  // the forward solve's result
  cl::Kernel eliminate_, invert_, lower_solve_, upper_solve_;
  Span factorization_;
};

template <class T>
class DeviceBlockJacobi {
 public:
  /// Inverts the diagonal blocks of `input` on the device. Throws ZeroPivot naming the least block
  /// row whose diagonal block is singular.
  DeviceBlockJacobi(const Context& context, const IluInput<T>& input, std::size_t k, double shift = 0);
  /// z = D^-1 r block by block.
  Span apply(const VectorRef& r, const VectorRef& z);
  const Span& setup() const noexcept { return setup_; }

 private:
  Context context_;
  std::size_t block_size_, k_, block_rows_;
  DeviceBuffer<T> inverse_;
  cl::Kernel apply_;
  Span setup_;
};

}  // namespace ziggurat::sparse
