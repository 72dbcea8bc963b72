#include "ops/poisson_stencil.hpp"

#include <algorithm>

#include "base/integer_math.hpp"
#include "base/kernel_launch.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/base/program.hpp"

namespace ziggurat::detail {

namespace {

cl_uint u32(std::size_t value) { return static_cast<cl_uint>(value); }

std::size_t reduce_group(const DeviceInfo& device) {
  return power_of_two_at_most(std::min<std::size_t>(device.max_work_group_size, 256));
}

}  // namespace

template <class T>
const cl::Program& poisson_stencil_program(const Context& context) {
  const auto tile = box_tile(context.device());
  return context.program("poisson_stencil", BuildOptions()
                                                .real_type<T>()
                                                .define("TILE_X", tile[0])
                                                .define("TILE_Y", tile[1])
                                                .define("REDUCE_GROUP", reduce_group(context.device()))
                                                .str());
}

template <class T>
JacobiBoxSweep<T>::JacobiBoxSweep(const Context& context, JacobiCoefficients<T> coefficients)
    : context_(context), coefficients_(coefficients), tile_(box_tile(context.device())) {
  kernel_ = context.kernel(poisson_stencil_program<T>(context), "jacobi3d_box");
  require_work_group(context.device(), kernel_, tile_[0] * tile_[1], "jacobi3d_box");
}

template <class T>
std::size_t JacobiBoxSweep<T>::groups(const Box& box) const {
  const BoxLaunch launch = box_launch_3d(box, tile_, context_.device().compute_units);
  return launch.global[0] / tile_[0] * (launch.global[1] / tile_[1]) * launch.global[2];
}

template <class T>
void JacobiBoxSweep<T>::enqueue(cl::CommandQueue& queue, const cl::Buffer& in, const cl::Buffer& out,
                                const cl::Buffer& f, const cl::Buffer* partial, const BufferShape& shape,
                                const Box& box, const std::vector<cl::Event>* wait, cl::Event* done) {
  const BoxLaunch launch = box_launch_3d(box, tile_, context_.device().compute_units);
  // Without a record the kernel never touches `partial`; f stands in for the argument.
  set_args(kernel_, "jacobi3d_box", in, out, f, partial != nullptr ? *partial : f, u32(partial != nullptr),
           u32(shape.pitch), u32(shape.plane), u32(launch.first_column), u32(box.begin[0]), u32(box.end[0]),
           u32(box.begin[1]), u32(box.end[1]), u32(box.begin[2]), u32(box.end[2]), u32(launch.planes_per_group),
           coefficients_.sixth, coefficients_.h2);
  check(queue.enqueueNDRangeKernel(kernel_, cl::NullRange, launch.global, launch.local, wait, done),
        "clEnqueueNDRangeKernel", "running a Jacobi sweep");
}

template <class T>
MaxReduce<T>::MaxReduce(const Context& context) : group_(reduce_group(context.device())) {
  kernel_ = context.kernel(poisson_stencil_program<T>(context), "max_reduce");
  require_work_group(context.device(), kernel_, group_, "max_reduce");
}

template <class T>
void MaxReduce<T>::enqueue(cl::CommandQueue& queue, const cl::Buffer& values, std::size_t count,
                           const cl::Buffer& result, std::size_t slot, const std::vector<cl::Event>* wait,
                           cl::Event* done) {
  set_args(kernel_, "max_reduce", values, u32(count), result, u32(slot));
  check(queue.enqueueNDRangeKernel(kernel_, cl::NullRange, cl::NDRange(group_), cl::NDRange(group_), wait, done),
        "clEnqueueNDRangeKernel", "reducing the Jacobi update");
}

template const cl::Program& poisson_stencil_program<float>(const Context&);
template const cl::Program& poisson_stencil_program<double>(const Context&);
template class JacobiBoxSweep<float>;
template class JacobiBoxSweep<double>;
template class MaxReduce<float>;
template class MaxReduce<double>;

}  // namespace ziggurat::detail
