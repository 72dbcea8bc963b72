#include "ziggurat/ops/block_ilu.hpp"

#include <algorithm>
#include <limits>

#include "base/integer_math.hpp"
#include "base/kernel_launch.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/base/precision.hpp"
#include "ziggurat/base/program.hpp"

namespace ziggurat::sparse {

namespace {

using ziggurat::detail::round_up;
using ziggurat::detail::set_args;

constexpr cl_uint kNoFailure = std::numeric_limits<cl_uint>::max();
constexpr std::size_t kLocal = 64;

template <class V>
DeviceBuffer<V> upload(const Context& context, const std::vector<V>& values, const char* purpose) {
  DeviceBuffer<V> buffer(context, values.size(), purpose);
  copy_to_device(context.compute_queue(), values.data(), buffer);
  return buffer;
}

template <class T>
const cl::Program& ilu_program(const Context& context, std::size_t b, std::size_t k) {
  BuildOptions options;
  options.real_type<T>().define("B", b).define("K", k);
  return context.program("block_ilu", options.str());
}

void check_k(std::size_t k) {
  if (k < 1 || k > 16) throw InvalidArgument("preconditioners take 1 to 16 vectors, not " + std::to_string(k));
}

cl::Event launch(const Context& context, cl::Kernel& kernel, std::size_t items, const char* what) {
  cl::Event event;
  check(context.compute_queue().enqueueNDRangeKernel(kernel, cl::NullRange, round_up(items, kLocal), kLocal, nullptr,
                                                     &event),
        "clEnqueueNDRangeKernel", what);
  return event;
}

// Reads the failure status (blocking) and throws ZeroPivot for a failed row.
void check_status(const Context& context, const DeviceBuffer<Index>& status, double shift) {
  cl_uint failed = kNoFailure;
  check(context.compute_queue().enqueueReadBuffer(status.get(), CL_TRUE, 0, sizeof(failed), &failed),
        "clEnqueueReadBuffer", "reading the factorisation's status");
  if (failed != kNoFailure) throw ZeroPivot(failed, pivot_failure_message(failed, -1, shift));
}

}  // namespace

template <class T>
DeviceBlockIlu<T>::DeviceBlockIlu(const Context& context, const IluInput<T>& input, std::size_t k, double shift)
    : context_(context),
      block_size_(input.matrix.block_size),
      k_(k),
      block_rows_(input.matrix.block_rows),
      lower_(sparse::lower_levels(input.matrix)),
      upper_(sparse::upper_levels(input.matrix)) {
  require_precision<T>(context.device(), "block ILU(0) in double");
  check_k(k);
  const Bsr<T>& a = input.matrix;
  row_ptr_ = upload(context, a.block_row_ptr, "ILU row pointers");
  col_ = upload(context, a.block_col, "ILU block columns");
  diagonal_ = upload(context, input.diagonal, "ILU diagonal positions");
  lower_rows_ = upload(context, lower_.rows, "ILU lower level rows");
  upper_rows_ = upload(context, upper_.rows, "ILU upper level rows");
  status_ = upload(context, std::vector<Index>{kNoFailure}, "ILU status");
  values_ = upload(context, a.values, "ILU factors");
  work_ = DeviceBuffer<T>(context, block_rows_ * block_size_ * k_, "ILU forward solve");
  const cl::Program& program = ilu_program<T>(context, block_size_, k_);
  eliminate_ = context.kernel(program, "ilu_eliminate");
  invert_ = context.kernel(program, "ilu_invert");
  lower_solve_ = context.kernel(program, "lower_solve");
  upper_solve_ = context.kernel(program, "upper_solve");
  factorization_ = factorize(shift);
}

template <class T>
Span DeviceBlockIlu<T>::factorize(double shift) {
  Span span;
  for (std::size_t level = 0; level < lower_.levels(); ++level) {
    const cl_uint first = lower_.level_ptr[level], count = lower_.level_ptr[level + 1] - first;
    if (level > 0) {  // level 0 has no lower blocks to eliminate
      set_args(eliminate_, "ilu_eliminate", row_ptr_.get(), col_.get(), diagonal_.get(), values_.get(),
               lower_rows_.get(), first, count, status_.get());
      launch(context_, eliminate_, std::size_t(count) * block_size_, "ILU(0) elimination");
    }
    set_args(invert_, "ilu_invert", row_ptr_.get(), diagonal_.get(), values_.get(), lower_rows_.get(), first, count,
             status_.get());
    span.last = launch(context_, invert_, count, "ILU(0) diagonal inversion");
    if (level == 0) span.first = span.last;
  }
  check_status(context_, status_, shift);
  return span;
}

template <class T>
Span DeviceBlockIlu<T>::apply(const VectorRef& r, const VectorRef& z) {
  Span span;
  const std::size_t per_row = block_size_ * k_;
  for (std::size_t level = 0; level < lower_.levels(); ++level) {
    const cl_uint first = lower_.level_ptr[level], count = lower_.level_ptr[level + 1] - first;
    set_args(lower_solve_, "lower_solve", row_ptr_.get(), col_.get(), diagonal_.get(), values_.get(), lower_rows_.get(),
             first, count, r.buffer, cl_ulong(r.offset), work_.get());
    span.last = launch(context_, lower_solve_, count * per_row, "the forward solve of ILU(0)");
    if (level == 0) span.first = span.last;
  }
  for (std::size_t level = 0; level < upper_.levels(); ++level) {
    const cl_uint first = upper_.level_ptr[level], count = upper_.level_ptr[level + 1] - first;
    set_args(upper_solve_, "upper_solve", row_ptr_.get(), col_.get(), diagonal_.get(), values_.get(), upper_rows_.get(),
             first, count, work_.get(), z.buffer, cl_ulong(z.offset));
    span.last = launch(context_, upper_solve_, count * per_row, "the backward solve of ILU(0)");
  }
  return span;
}

template <class T>
std::vector<T> DeviceBlockIlu<T>::factors() const {
  std::vector<T> values(values_.size());
  copy_to_host(context_.compute_queue(), values_, values.data());
  return values;
}

template <class T>
DeviceBlockJacobi<T>::DeviceBlockJacobi(const Context& context, const IluInput<T>& input, std::size_t k, double shift)
    : context_(context), block_size_(input.matrix.block_size), k_(k), block_rows_(input.matrix.block_rows) {
  require_precision<T>(context.device(), "block Jacobi in double");
  check_k(k);
  // Only the diagonal blocks go to the device, one after another, and are inverted in place.
  const Bsr<T>& a = input.matrix;
  const std::size_t bb = block_size_ * block_size_;
  std::vector<T> blocks(block_rows_ * bb);
  for (std::size_t i = 0; i < block_rows_; ++i) {
    std::copy_n(a.values.begin() + input.diagonal[i] * bb, bb, blocks.begin() + i * bb);
  }
  inverse_ = upload(context, blocks, "inverted diagonal blocks");
  const DeviceBuffer<Index> status = upload(context, std::vector<Index>{kNoFailure}, "block Jacobi status");
  const cl::Program& program = ilu_program<T>(context, block_size_, k_);
  cl::Kernel invert = context.kernel(program, "invert_diagonal");
  set_args(invert, "invert_diagonal", inverse_.get(), cl_uint(block_rows_), status.get());
  setup_.first = setup_.last = launch(context, invert, block_rows_, "inverting the diagonal blocks");
  check_status(context, status, shift);
  apply_ = context.kernel(program, "block_jacobi");
}

template <class T>
Span DeviceBlockJacobi<T>::apply(const VectorRef& r, const VectorRef& z) {
  set_args(apply_, "block_jacobi", inverse_.get(), cl_uint(block_rows_), r.buffer, cl_ulong(r.offset), z.buffer,
           cl_ulong(z.offset));
  Span span;
  span.first = span.last = launch(context_, apply_, block_rows_ * block_size_ * k_, "block Jacobi");
  return span;
}

template class DeviceBlockIlu<float>;
template class DeviceBlockIlu<double>;
template class DeviceBlockJacobi<float>;
template class DeviceBlockJacobi<double>;

}  // namespace ziggurat::sparse
