#pragma once
// A square operator Y = A X on a device for a set of k vectors, as the Krylov solvers
// (solver/krylov.hpp) apply it when they do not hold the assembled matrix: e.g. a stiffness given
// element by element (fem::EbeOperator), never assembled.
#include <cstddef>

#include "ziggurat/matrix/device_sparse.hpp"
#include "ziggurat/ops/vector_ops.hpp"

namespace ziggurat::sparse {

template <class T>
class LinearOperator {
 public:
  virtual ~LinearOperator() = default;
  /// n: A is n x n.
  virtual std::size_t size() const noexcept = 0;
  /// k: the vectors of each product.
  virtual std::size_t vectors() const noexcept = 0;
  /// Enqueues Y = A X on the context's compute queue (in order: after what is there) and returns
  /// its first and last commands. X and Y are distinct, n x k (Y's padding rows, if any, become 0).
  virtual Span enqueue(const DeviceVectors<T>& x, DeviceVectors<T>& y) = 0;
};

}  // namespace ziggurat::sparse
