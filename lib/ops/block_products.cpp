#include "ziggurat/ops/block_products.hpp"

#include <algorithm>
#include <string>

#include "base/integer_math.hpp"
#include "base/kernel_launch.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/base/precision.hpp"
#include "ziggurat/base/program.hpp"

namespace ziggurat::sparse {

namespace {

using ziggurat::detail::ceil_div;
using ziggurat::detail::round_up;
using ziggurat::detail::set_args;

constexpr std::size_t kMaxWidth = 64;
constexpr std::size_t kTile = 16;  // rows staged per step of the Gram matrix

}  // namespace

template <class T>
BlockProducts<T>::BlockProducts(const Context& context, std::size_t rows, std::size_t m, std::size_t k)
    : context_(context),
      rows_(rows),
      m_(m),
      k_(k),
      group_(ziggurat::detail::power_of_two_at_most(std::min<std::size_t>(256, context.device().max_work_group_size))),
      // Enough work-groups to fill the device a few times over, fixed for a device and a length:
      // the order of the sums is fixed.
      groups_(std::max<std::size_t>(1, std::min<std::size_t>(ceil_div(rows, kTile),
                                                             8 * std::max(1u, context.device().compute_units)))) {
  require_precision<T>(context.device(), "block products in double");
  if (rows == 0) throw InvalidArgument("block products need at least one row");
  if (m < 1 || m > kMaxWidth || k < 1 || k > kMaxWidth)
    throw InvalidArgument("block products take sets of 1 to " + std::to_string(kMaxWidth) + " vectors, not " +
                          std::to_string(m) + " and " + std::to_string(k));
  partial_ = DeviceBuffer<T>(context, groups_ * m * k, "partial sums of a Gram matrix");
  BuildOptions options;
  options.real_type<T>()
      .define("M", m)
      .define("K", k)
      .define("GROUP", group_)
      .define("GROUPS", groups_)
      .define("TILE", kTile)
      .define("EPT", ceil_div(m * k, group_));
  const cl::Program& program = context.program("block_products", options.str());
  partials_ = context.kernel(program, "gram_partials");
  finish_ = context.kernel(program, "gram_finish");
  combine_ = context.kernel(program, "combine_rows");
  ziggurat::detail::require_work_group(context.device(), partials_, group_, "gram_partials");
  ziggurat::detail::require_work_group(context.device(), combine_, group_, "combine_rows");
}

template <class T>
Span BlockProducts<T>::gram(const cl::Buffer& a, const cl::Buffer& b, const cl::Buffer& g) {
  cl::CommandQueue& queue = context_.compute_queue();
  Span span;
  set_args(partials_, "gram_partials", static_cast<cl_uint>(rows_), a, b, partial_.get());
  check(queue.enqueueNDRangeKernel(partials_, cl::NullRange, groups_ * group_, group_, nullptr, &span.first),
        "clEnqueueNDRangeKernel", "the partial sums of a Gram matrix");
  set_args(finish_, "gram_finish", partial_.get(), g);
  check(queue.enqueueNDRangeKernel(finish_, cl::NullRange, round_up(m_ * k_, 64), cl::NullRange, nullptr, &span.last),
        "clEnqueueNDRangeKernel", "a Gram matrix");
  return span;
}

template <class T>
Span BlockProducts<T>::combine(const cl::Buffer& w, const cl::Buffer& h, T alpha, T beta, const cl::Buffer& z) {
  Span span;
  set_args(combine_, "combine_rows", static_cast<cl_uint>(rows_), alpha, beta, w, h, z);
  check(context_.compute_queue().enqueueNDRangeKernel(combine_, cl::NullRange, round_up(rows_ * k_, group_), group_,
                                                      nullptr, &span.last),
        "clEnqueueNDRangeKernel", "a combination of vectors");
  span.first = span.last;
  return span;
}

template class BlockProducts<float>;
template class BlockProducts<double>;

}  // namespace ziggurat::sparse
