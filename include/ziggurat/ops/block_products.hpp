#pragma once
// Products of tall sets of interleaved vectors (rows x m and rows x k row-major arrays, the layout
// of DeviceVectors) with each other and with small matrices, on a device:
//   gram     G = A^T B (m x k), its sums reduced in a fixed order: the same bits every run;
//   combine  Z = beta Z + alpha W H (W rows x m, H m x k, Z rows x k).
// The solvers use them for deflation (solver/krylov.hpp) and for X = Y Q (the subspace iteration):
// sets of a few dozen vectors over millions of rows, the shape on which general GEMMs are slow.
#include <cstddef>

#include "ziggurat/base/context.hpp"
#include "ziggurat/base/memory.hpp"
#include "ziggurat/ops/vector_ops.hpp"

namespace ziggurat::sparse {

template <class T>
class BlockProducts {
 public:
  /// Products over `rows` rows of sets of m and k vectors (1..64 each). Throws InvalidArgument
  /// outside those bounds or for rows = 0, UnsupportedFeature for double without fp64.
  BlockProducts(const Context& context, std::size_t rows, std::size_t m, std::size_t k);

  std::size_t rows() const noexcept { return rows_; }
  std::size_t m() const noexcept { return m_; }
  std::size_t k() const noexcept { return k_; }

  /// g (m x k values) = A^T B, A rows x m, B rows x k.
  Span gram(const cl::Buffer& a, const cl::Buffer& b, const cl::Buffer& g);
  /// z = beta z + alpha w h: w rows x m, h m x k, z rows x k.
  Span combine(const cl::Buffer& w, const cl::Buffer& h, T alpha, T beta, const cl::Buffer& z);

 private:
  Context context_;
  std::size_t rows_, m_, k_, group_, groups_;
  DeviceBuffer<T> partial_;
  cl::Kernel partials_, finish_, combine_;
};

}  // namespace ziggurat::sparse
