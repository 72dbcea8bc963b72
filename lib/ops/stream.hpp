#pragma once
// The launchers of the streaming kernels (stream.cl): fill a buffer, copy one, launch nothing.

#include <cstddef>

#include "ziggurat/base/context.hpp"

namespace ziggurat::detail {

/// The program of stream.cl for T (built on first use; calling it early builds it ahead).
template <class T>
const cl::Program& stream_program(const Context& context);

/// Enqueues a kernel that sets the first `bytes` of `buffer` (a multiple of 4) to zero bits, +0 in
/// float and in double alike: float's program serves both precisions, and a double run builds no
/// stream program of its own. (A kernel, not clEnqueueFillBuffer: Oclgrind's uninitialised-value
/// check sees what kernels write.) Returns its event.
cl::Event enqueue_zero(const Context& context, cl::CommandQueue& queue, const cl::Buffer& buffer, std::size_t bytes);

/// The `copy` kernel from one buffer of `count` values to another, in work-groups of up to 256.
template <class T>
class CopyKernel {
 public:
  CopyKernel(const Context& context, const cl::Buffer& in, const cl::Buffer& out, std::size_t count);
  void enqueue(cl::CommandQueue& queue, cl::Event* done);

 private:
  cl::Kernel kernel_;
  cl::NDRange global_, local_;
};

/// The `empty` kernel, one work-item: its time is the cost of a launch.
class EmptyKernel {
 public:
  explicit EmptyKernel(const Context& context);
  void enqueue(cl::CommandQueue& queue, cl::Event* done = nullptr);

 private:
  cl::Kernel kernel_;
};

}  // namespace ziggurat::detail
