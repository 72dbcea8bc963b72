#pragma once
// Autotuning the block CSR products (ops/spmm.hpp): the first time a kind of problem is met on a
// device, every kernel variant is timed on the matrix itself, and the timings are kept as a
// tuning record (tuning/profile_store.hpp) that later runs only read. Choosing a kernel never
// calibrates the device.

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "ziggurat/base/context.hpp"
#include "ziggurat/matrix/device_sparse.hpp"
#include "ziggurat/ops/spmm.hpp"

namespace ziggurat::sparse {

/// What autotuning found for one kind of problem: every variant's time, best first.
struct BsrChoice {
  BsrKernel kernel;
  std::string key;            ///< the kind of problem, as kept in the tuning record
  bool measured_now = false;  ///< false when read from the record
  std::vector<std::pair<std::string, double>> seconds;  ///< per variant, fastest first
};

/// The kind of problem a choice holds for: precision, b, k, row length (log2 of the mean blocks
/// per row), whether rows are about even, and size (log10 of the stored values), e.g.
/// "bsr f32 b4 k8 len3 even size8".
template <class T>
std::string bsr_problem_key(const DeviceBsr<T>& a, std::size_t k);

/// The fastest kernel for products of `a` with k vectors on this device: from the tuning record
/// of this kind of problem when there is one, else measured now on `a` (every variant the device
/// can run, a few products each) and recorded. InvalidArgument for k = 0; UnsupportedFeature
/// when no variant runs on the device.
template <class T>
BsrChoice choose_bsr_kernel(const Context& context, const DeviceBsr<T>& a, std::size_t k);

}  // namespace ziggurat::sparse
