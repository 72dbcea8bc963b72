#pragma once
// Block CSR products in one call: the kernel that autotuning finds fastest for this kind of
// problem on this device (tuning/bsr_autotune.hpp; measured the first time, then read), run by
// ops/spmm.hpp.

#include <cstddef>
#include <vector>

#include "ziggurat/base/context.hpp"
#include "ziggurat/matrix/device_sparse.hpp"

namespace ziggurat::sparse {

/// Y = A X on the device with the kernel choose_bsr_kernel() picks, blocking; X is a.cols() x k
/// interleaved, Y a.rows() x k.
template <class T>
std::vector<T> multiply_autotuned(const Context& context, const DeviceBsr<T>& a, const std::vector<T>& x, std::size_t k);

}  // namespace ziggurat::sparse
