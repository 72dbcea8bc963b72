#include "ziggurat/automatic/spmm.hpp"

#include "ziggurat/ops/spmm.hpp"
#include "ziggurat/tuning/bsr_autotune.hpp"

namespace ziggurat::sparse {

template <class T>
std::vector<T> multiply_autotuned(const Context& context, const DeviceBsr<T>& a, const std::vector<T>& x, std::size_t k) {
  return multiply(context, a, x, k, choose_bsr_kernel(context, a, k).kernel);
}

template std::vector<float> multiply_autotuned(const Context&, const DeviceBsr<float>&, const std::vector<float>&,
                                               std::size_t);
template std::vector<double> multiply_autotuned(const Context&, const DeviceBsr<double>&, const std::vector<double>&,
                                                std::size_t);

}  // namespace ziggurat::sparse
