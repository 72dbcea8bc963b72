#include "ops/stream.hpp"

#include <algorithm>

#include "base/integer_math.hpp"
#include "base/kernel_launch.hpp"
#include "ziggurat/base/program.hpp"

namespace ziggurat::detail {

namespace {

template <class T>
cl::Kernel stream_kernel(const Context& context, const char* name) {
  return context.kernel(stream_program<T>(context), name);
}

}  // namespace

template <class T>
const cl::Program& stream_program(const Context& context) {
  return context.program("stream", BuildOptions().real_type<T>().str());
}

cl::Event enqueue_zero(const Context& context, cl::CommandQueue& queue, const cl::Buffer& buffer, std::size_t bytes) {
  if (bytes % sizeof(float) != 0) {
    throw InvalidArgument("zeroing " + std::to_string(bytes) + " bytes: the fill kernel writes whole floats (4 bytes)");
  }
  const std::size_t count = bytes / sizeof(float);
  cl::Kernel fill = stream_kernel<float>(context, "fill");
  set_args(fill, "fill", buffer, 0.0f, static_cast<cl_ulong>(count));
  cl::Event done;
  check(queue.enqueueNDRangeKernel(fill, cl::NullRange, cl::NDRange(round_up(count, 64)), cl::NDRange(64), nullptr,
                                   &done),
        "clEnqueueNDRangeKernel", "filling a buffer");
  return done;
}

template <class T>
CopyKernel<T>::CopyKernel(const Context& context, const cl::Buffer& in, const cl::Buffer& out, std::size_t count)
    : kernel_(stream_kernel<T>(context, "copy")) {
  set_args(kernel_, "copy", in, out, static_cast<cl_ulong>(count));
  const std::size_t group = std::min<std::size_t>(256, work_group_limit(context.device(), kernel_, "copy"));
  global_ = cl::NDRange(round_up(count, group));
  local_ = cl::NDRange(group);
}

template <class T>
void CopyKernel<T>::enqueue(cl::CommandQueue& queue, cl::Event* done) {
  check(queue.enqueueNDRangeKernel(kernel_, cl::NullRange, global_, local_, nullptr, done), "clEnqueueNDRangeKernel",
        "running the copy kernel");
}

// The empty kernel is built for float: the prologue wants an element type.
EmptyKernel::EmptyKernel(const Context& context) : kernel_(stream_kernel<float>(context, "empty")) {}

void EmptyKernel::enqueue(cl::CommandQueue& queue, cl::Event* done) {
  check(queue.enqueueNDRangeKernel(kernel_, cl::NullRange, cl::NDRange(1), cl::NDRange(1), nullptr, done),
        "clEnqueueNDRangeKernel", "launching the empty kernel");
}

template const cl::Program& stream_program<float>(const Context&);
template const cl::Program& stream_program<double>(const Context&);
template class CopyKernel<float>;
template class CopyKernel<double>;

}  // namespace ziggurat::detail
