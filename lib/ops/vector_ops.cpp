#include "ziggurat/ops/vector_ops.hpp"

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
using ziggurat::detail::power_of_two_at_most;
using ziggurat::detail::round_up;
using ziggurat::detail::set_args;

// Work-groups of a reduction: enough to fill the device a few times over, never more than the
// rows need. Fixed for a device and a length, which keeps the order of the sums fixed.
std::size_t reduction_groups(const DeviceInfo& device, std::size_t rows, std::size_t group) {
  return std::max<std::size_t>(1, std::min<std::size_t>(ceil_div(rows, group), 8 * std::max(1u, device.compute_units)));
}

template <class T>
Coefficients<T> negated(Coefficients<T> values) {
  for (T& value : values) value = -value;
  return values;
}

}  // namespace

template <class T>
VectorOps<T>::VectorOps(const Context& context, std::size_t rows, std::size_t k, bool fuse, std::size_t max_sets,
                        std::size_t slots)
    : context_(context),
      rows_(rows),
      k_(k),
      fuse_(fuse),
      max_sets_(std::max<std::size_t>(2, max_sets)),
      slots_(slots),
      group_(power_of_two_at_most(std::min<std::size_t>(256, context.device().max_work_group_size))),
      groups_(reduction_groups(context.device(), rows, group_)),
      coefficient_slots_(64) {
  require_precision<T>(context.device(), "vector operations in double");
  if (k < 1 || k > 16) throw InvalidArgument("vector operations take 1 to 16 vectors, not " + std::to_string(k));
  if (rows == 0) throw InvalidArgument("vector operations need at least one row");
  staged_.assign(coefficient_slots_ * k_, T(0));
  coefficients_ = DeviceBuffer<T>(context, coefficient_slots_ * k_, "solver coefficients");
  partial_ = DeviceBuffer<T>(context, max_sets_ * groups_ * k_, "partial sums of dot products");
  results_ = DeviceBuffer<T>(context, slots_ * k_, "dot products");
  next_coefficient_ = 0;

  BuildOptions options;
  options.real_type<T>().define("K", k_).define("GROUP", group_).define("GROUPS", groups_);
  options.define("VW", ziggurat::detail::widest_vector_dividing(k_, 8));  // rows read VW values at a time
  const cl::Program& program = context.program("vector_ops", options.str());
  const auto make = [&](const char* name) { return context.kernel(program, name); };
  axpby_ = make("axpby");
  scale_ = make("scale");
  multiply_rows_ = make("multiply_rows");
  combine_ = make("combine");
  direction_ = make("bicg_direction");
  dot_ = make("dot_partials");
  pair_ = make("dot_pair_partials");
  finish_ = make("finish");
  cg_ = make("cg_update");
  half_ = make("bicg_half");
  update_ = make("bicg_update");
  gather_ = make("gather_columns");
  scatter_ = make("scatter_columns");
  for (cl::Kernel* kernel : {&dot_, &pair_, &cg_, &half_, &update_}) {
    ziggurat::detail::require_work_group(context.device(), *kernel, group_, "a reduction of the vector operations");
  }
}

// dot_partials reads rows VW values at a time from its offsets: they must start rows.
template <class T>
void VectorOps<T>::check_whole_rows(std::initializer_list<std::size_t> offsets, const char* what) const {
  for (std::size_t offset : offsets)
    if (offset % k_ != 0)
      throw InvalidArgument(std::string(what) + " takes offsets and strides of whole rows (multiples of k = " +
                            std::to_string(k_) + "), not " + std::to_string(offset));
}

template <class T>
void VectorOps<T>::check_slot(std::size_t slot, std::size_t count) const {
  if (slot + count > slots_) {
    throw InvalidArgument("result slots " + std::to_string(slot) + ".." + std::to_string(slot + count - 1) +
                          " exceed the " + std::to_string(slots_) + " this VectorOps has");
  }
}

template <class T>
cl_uint VectorOps<T>::put(const Coefficients<T>& values, cl::Event* event) {
  if (values.size() != k_) {
    throw InvalidArgument("a coefficient per vector: " + std::to_string(k_) + " values, not " +
                          std::to_string(values.size()));
  }
  cl::CommandQueue& queue = context_.compute_queue();
  if (next_coefficient_ == coefficient_slots_) {  // every staged value may still be in flight
    check(queue.finish(), "clFinish", "waiting for coefficient writes");
    next_coefficient_ = 0;
  }
  const std::size_t slot = next_coefficient_++;
  std::copy(values.begin(), values.end(), staged_.begin() + slot * k_);
  check(queue.enqueueWriteBuffer(coefficients_.get(), CL_FALSE, slot * k_ * sizeof(T), k_ * sizeof(T),
                                 staged_.data() + slot * k_, nullptr, event),
        "clEnqueueWriteBuffer", "writing solver coefficients");
  return static_cast<cl_uint>(slot);
}

template <class T>
Span VectorOps<T>::elementwise(cl::Kernel& kernel, cl::Event* write_event) {
  Span span = per_value(kernel, rows_ * k_, "a vector operation");
  if (write_event != nullptr && (*write_event)() != nullptr) span.first = *write_event;
  return span;
}

// One work-item per value of n, the range rounded up to groups of 256 (the kernels test e < n).
template <class T>
Span VectorOps<T>::per_value(cl::Kernel& kernel, std::size_t n, const char* what) {
  Span span;
  check(context_.compute_queue().enqueueNDRangeKernel(kernel, cl::NullRange, round_up(n, 256), cl::NullRange, nullptr,
                                                      &span.last),
        "clEnqueueNDRangeKernel", what);
  span.first = span.last;
  return span;
}

template <class T>
Span VectorOps<T>::reduce(cl::Kernel& kernel, std::size_t sets, std::size_t slot, const cl::Event& first_write) {
  cl::CommandQueue& queue = context_.compute_queue();
  Span span;
  cl::Event partials;
  // Only dot_partials takes its sets from the second dimension; the others write theirs in one pass.
  const std::size_t launched_sets = &kernel == &dot_ ? sets : 1;
  check(queue.enqueueNDRangeKernel(kernel, cl::NullRange, cl::NDRange(groups_ * group_, launched_sets), cl::NDRange(group_, 1),
                                   nullptr, &partials),
        "clEnqueueNDRangeKernel", "the partial sums of a dot product");
  const cl_uint outputs = static_cast<cl_uint>(sets * k_);
  set_args(finish_, "finish", partial_.get(), outputs, results_.get(), static_cast<cl_uint>(slot * k_));
  check(queue.enqueueNDRangeKernel(finish_, cl::NullRange, round_up(outputs, 64), cl::NullRange, nullptr, &span.last),
        "clEnqueueNDRangeKernel", "the sum of a dot product");
  span.first = first_write() != nullptr ? first_write : partials;
  return span;
}

template <class T>
Span VectorOps<T>::axpby(const Coefficients<T>& a, const VectorRef& x, const Coefficients<T>& b, const VectorRef& y) {
  cl::Event write;
  const cl_uint sa = put(a, &write), sb = put(b, nullptr);
  set_args(axpby_, "axpby", cl_ulong(rows_ * k_), coefficients_.get(), sa, sb, x.buffer, cl_ulong(x.offset), y.buffer,
           cl_ulong(y.offset));
  return elementwise(axpby_, &write);
}

template <class T>
Span VectorOps<T>::scale(const Coefficients<T>& a, const VectorRef& x, const VectorRef& y) {
  cl::Event write;
  const cl_uint sa = put(a, &write);
  set_args(scale_, "scale", cl_ulong(rows_ * k_), coefficients_.get(), sa, x.buffer, cl_ulong(x.offset), y.buffer,
           cl_ulong(y.offset));
  return elementwise(scale_, &write);
}

template <class T>
Span VectorOps<T>::copy(const VectorRef& x, const VectorRef& y) {
  Span span;
  check(context_.compute_queue().enqueueCopyBuffer(x.buffer, y.buffer, x.offset * sizeof(T), y.offset * sizeof(T),
                                                   rows_ * k_ * sizeof(T), nullptr, &span.last),
        "clEnqueueCopyBuffer", "copying a vector");
  span.first = span.last;
  return span;
}

template <class T>
Span VectorOps<T>::gather_columns(const RowRenumbering& order, const VectorRef& x, ColumnWindow from,
                                  const VectorRef& y, std::size_t y_width) {
  check_renumbering(order, x, y, from, y_width, "gather_columns");
  const std::size_t n = order.padded_rows() * y_width;  // every row of y, padding too
  require_values(x, x.offset + order.rows * from.width, "gather_columns' x");
  require_values(y, y.offset + n, "gather_columns' y");
  set_args(gather_, "gather_columns", cl_ulong(n), cl_ulong(order.rows), cl_ulong(order.block_size),
           order.old_of_new.get(), x.buffer, cl_ulong(x.offset), cl_ulong(from.width), cl_ulong(from.first),
           cl_ulong(from.count), y.buffer, cl_ulong(y.offset), cl_ulong(y_width));
  return per_value(gather_, n, "renumbering vectors");
}

template <class T>
Span VectorOps<T>::scatter_columns(const RowRenumbering& order, const VectorRef& x, std::size_t x_width,
                                   const VectorRef& y, ColumnWindow to) {
  check_renumbering(order, x, y, to, x_width, "scatter_columns");
  require_values(x, x.offset + order.padded_rows() * x_width, "scatter_columns' x");
  require_values(y, y.offset + order.rows * to.width, "scatter_columns' y");
  const std::size_t n = order.padded_rows() * to.count;
  set_args(scatter_, "scatter_columns", cl_ulong(n), cl_ulong(order.rows), cl_ulong(order.block_size),
           order.old_of_new.get(), x.buffer, cl_ulong(x.offset), cl_ulong(x_width), cl_ulong(to.count), y.buffer,
           cl_ulong(y.offset), cl_ulong(to.width), cl_ulong(to.first));
  return per_value(scatter_, n, "renumbering vectors");
}

// The window lies inside its vectors' rows and fits the other side's `other_width` values a row.
template <class T>
void VectorOps<T>::check_renumbering(const RowRenumbering& order, const VectorRef& x, const VectorRef& y,
                                     ColumnWindow window, std::size_t other_width, const char* what) const {
  const std::string name(what);
  if (order.block_size == 0 || order.old_of_new.size() == 0) throw InvalidArgument(name + " needs at least one block of rows");
  if (order.rows > order.padded_rows())
    throw InvalidArgument(name + ": " + std::to_string(order.rows) + " rows do not fit " +
                          std::to_string(order.old_of_new.size()) + " blocks of " + std::to_string(order.block_size));
  if (window.count == 0 || window.first + window.count > window.width || window.count > other_width)
    throw InvalidArgument(name + ": columns " + std::to_string(window.first) + " to " +
                          std::to_string(window.first + window.count) + " of rows of " + std::to_string(window.width) +
                          " values, into rows of " + std::to_string(other_width) + ": the window must be non-empty and fit both");
  if (x.buffer() == y.buffer()) throw InvalidArgument(name + " needs distinct x and y");
}

template <class T>
void VectorOps<T>::require_values(const VectorRef& v, std::size_t values, const char* what) const {
  const std::size_t bytes = v.buffer.getInfo<CL_MEM_SIZE>();
  if (bytes < values * sizeof(T))
    throw InvalidArgument(std::string(what) + " holds " + std::to_string(bytes / sizeof(T)) + " values; it needs " +
                          std::to_string(values));
}

template <class T>
Span VectorOps<T>::multiply_rows(const DeviceBuffer<T>& d, const VectorRef& x, const VectorRef& y) {
  set_args(multiply_rows_, "multiply_rows", cl_ulong(rows_ * k_), d.get(), x.buffer, cl_ulong(x.offset), y.buffer,
           cl_ulong(y.offset));
  return elementwise(multiply_rows_, nullptr);
}

template <class T>
Span VectorOps<T>::dot(const VectorRef& x, const VectorRef& y, std::size_t slot) {
  check_slot(slot, 1);
  check_whole_rows({x.offset, y.offset}, "dot");
  set_args(dot_, "dot_partials", cl_ulong(rows_), x.buffer, cl_ulong(x.offset), cl_ulong(0), y.buffer,
           cl_ulong(y.offset), partial_.get());
  return reduce(dot_, 1, slot, cl::Event());
}

template <class T>
Span VectorOps<T>::dot_pair(const VectorRef& a, const VectorRef& b, const VectorRef& c, const VectorRef& d,
                            std::size_t slot) {
  check_slot(slot, 2);
  if (a.offset != 0 || b.offset != 0 || c.offset != 0 || d.offset != 0) {
    throw InvalidArgument("dot_pair takes whole vectors (offset 0)");
  }
  if (!fuse_) {
    const Span first = dot(a, b, slot);
    return {first.first, dot(c, d, slot + 1).last};
  }
  set_args(pair_, "dot_pair_partials", cl_ulong(rows_), a.buffer, b.buffer, c.buffer, d.buffer, partial_.get());
  return reduce(pair_, 2, slot, cl::Event());
}

template <class T>
Span VectorOps<T>::multi_dot(const DeviceBuffer<T>& basis, std::size_t stride, std::size_t count, const VectorRef& w,
                             std::size_t slot) {
  check_slot(slot, count);
  if (count == 0 || count > max_sets_) {
    throw InvalidArgument("multi_dot takes 1 to " + std::to_string(max_sets_) + " vectors, not " + std::to_string(count));
  }
  check_whole_rows({stride, w.offset}, "multi_dot");
  set_args(dot_, "dot_partials", cl_ulong(rows_), basis.get(), cl_ulong(0), cl_ulong(stride), w.buffer,
           cl_ulong(w.offset), partial_.get());
  return reduce(dot_, count, slot, cl::Event());
}

template <class T>
Span VectorOps<T>::combine(const DeviceBuffer<T>& basis, std::size_t stride, std::size_t count, std::size_t slot,
                           T sign, const VectorRef& w) {
  check_slot(slot, count);
  set_args(combine_, "combine", cl_ulong(rows_ * k_), basis.get(), cl_ulong(stride), cl_uint(count), results_.get(),
           cl_uint(slot * k_), sign, w.buffer, cl_ulong(w.offset));
  return elementwise(combine_, nullptr);
}

template <class T>
Span VectorOps<T>::cg_update(const Coefficients<T>& alpha, const VectorRef& x, const VectorRef& p, const VectorRef& r,
                             const VectorRef& q, std::size_t slot) {
  check_slot(slot, 1);
  if (!fuse_) {
    const Coefficients<T> minus = negated(alpha);
    const Coefficients<T> ones(k_, T(1));
    const Span first = axpby(alpha, p, ones, x);
    axpby(minus, q, ones, r);
    return {first.first, dot(r, r, slot).last};
  }
  cl::Event write;
  const cl_uint sa = put(alpha, &write);
  set_args(cg_, "cg_update", cl_ulong(rows_), coefficients_.get(), sa, x.buffer, p.buffer, r.buffer, q.buffer,
           partial_.get());
  return reduce(cg_, 1, slot, write);
}

template <class T>
Span VectorOps<T>::bicg_direction(const Coefficients<T>& beta, const Coefficients<T>& omega, const VectorRef& p,
                                  const VectorRef& r, const VectorRef& v) {
  if (!fuse_) {
    const Coefficients<T> minus = negated(omega);
    const Coefficients<T> ones(k_, T(1));
    const Span first = axpby(minus, v, ones, p);
    return {first.first, axpby(ones, r, beta, p).last};
  }
  cl::Event write;
  const cl_uint sb = put(beta, &write), so = put(omega, nullptr);
  set_args(direction_, "bicg_direction", cl_ulong(rows_ * k_), coefficients_.get(), sb, so, p.buffer, r.buffer,
           v.buffer);
  return elementwise(direction_, &write);
}

template <class T>
Span VectorOps<T>::bicg_half(const Coefficients<T>& alpha, const VectorRef& r, const VectorRef& v, const VectorRef& s,
                             std::size_t slot) {
  check_slot(slot, 1);
  if (!fuse_) {
    const Coefficients<T> minus = negated(alpha);
    const Span first = copy(r, s);
    axpby(minus, v, Coefficients<T>(k_, T(1)), s);
    return {first.first, dot(s, s, slot).last};
  }
  cl::Event write;
  const cl_uint sa = put(alpha, &write);
  set_args(half_, "bicg_half", cl_ulong(rows_), coefficients_.get(), sa, r.buffer, v.buffer, s.buffer, partial_.get());
  return reduce(half_, 1, slot, write);
}

template <class T>
Span VectorOps<T>::bicg_update(const Coefficients<T>& alpha, const Coefficients<T>& omega, const VectorRef& x,
                               const VectorRef& phat, const VectorRef& shat, const VectorRef& s, const VectorRef& t,
                               const VectorRef& r, const VectorRef& r0, std::size_t slot) {
  check_slot(slot, 2);
  if (!fuse_) {
    const Coefficients<T> minus = negated(omega);
    const Coefficients<T> ones(k_, T(1));
    const Span first = axpby(alpha, phat, ones, x);
    axpby(omega, shat, ones, x);
    copy(s, r);
    axpby(minus, t, ones, r);
    return {first.first, dot_pair(r, r, r0, r, slot).last};
  }
  cl::Event write;
  const cl_uint sa = put(alpha, &write), so = put(omega, nullptr);
  set_args(update_, "bicg_update", cl_ulong(rows_), coefficients_.get(), sa, so, x.buffer, phat.buffer, shat.buffer,
           s.buffer, t.buffer, r.buffer, r0.buffer, partial_.get());
  return reduce(update_, 2, slot, write);
}

template <class T>
std::vector<double> VectorOps<T>::read(std::size_t slot, std::size_t count) {
  check_slot(slot, count);
  std::vector<T> values(count * k_);
  check(context_.compute_queue().enqueueReadBuffer(results_.get(), CL_TRUE, slot * k_ * sizeof(T),
                                                   values.size() * sizeof(T), values.data()),
        "clEnqueueReadBuffer", "reading dot products");
  next_coefficient_ = 0;  // the read waited for every earlier command
  return {values.begin(), values.end()};
}

template class VectorOps<float>;
template class VectorOps<double>;

}  // namespace ziggurat::sparse
