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

// The sweep's work-group: the box tile, or on CPU devices the largest flat group, with no more rows
// than keep its local array of T within half the device's local memory.
template <class T>
std::array<std::size_t, 2> sweep_group(const DeviceInfo& device) {
  if (!runs_flat_kernels(device)) return box_tile(device);
  std::array<std::size_t, 2> group = flat_group(device);
  while (group[1] > 1 && group[0] * group[1] * sizeof(T) > device.local_mem_bytes / 2) group[1] /= 2;
  return group;
}

}  // namespace

template <class T>
const cl::Program& poisson_stencil_program(const Context& context) {
  const auto tile = box_tile(context.device());
  const auto flat = sweep_group<T>(context.device());
  return context.program("poisson_stencil", BuildOptions()
                                                .real_type<T>()
                                                .define("TILE_X", tile[0])
                                                .define("TILE_Y", tile[1])
                                                .define("REDUCE_GROUP", reduce_group(context.device()))
                                                .define("FLAT_KERNELS", runs_flat_kernels(context.device()) ? 1 : 0)
                                                .define("FLAT_ITEMS", flat[0] * flat[1])
                                                .str());
}

template <class T>
JacobiBoxSweep<T>::JacobiBoxSweep(const Context& context, JacobiCoefficients<T> coefficients)
    : context_(context),
      coefficients_(coefficients),
      flat_(runs_flat_kernels(context.device())),
      tile_(sweep_group<T>(context.device())) {
  const char* name = flat_ ? "jacobi3d_flat" : "jacobi3d_box";
  kernel_ = context.kernel(poisson_stencil_program<T>(context), name);
  require_work_group(context.device(), kernel_, tile_[0] * tile_[1], name);
}

template <class T>
BoxLaunch JacobiBoxSweep<T>::launch(const Box& box) const {
  return flat_ ? flat_launch(box, tile_) : box_launch_3d(box, tile_, context_.device().compute_units);
}

template <class T>
std::size_t JacobiBoxSweep<T>::groups(const Box& box) const {
  const BoxLaunch l = launch(box);
  return l.global[0] / l.local[0] * (l.global[1] / l.local[1]) * l.global[2];
}

template <class T>
void JacobiBoxSweep<T>::enqueue(cl::CommandQueue& queue, const cl::Buffer& in, const cl::Buffer& out,
                                const cl::Buffer& f, const cl::Buffer* partial, const BufferShape& shape,
                                const Box& box, const std::vector<cl::Event>* wait, cl::Event* done) {
  const BoxLaunch l = launch(box);
  // Without a record the kernel never touches `partial`; f stands in for the argument.
  const cl::Buffer& recorded = partial != nullptr ? *partial : f;
  const cl_uint record = partial != nullptr;
  if (flat_)
    set_args(kernel_, "jacobi3d_flat", in, out, f, recorded, record, u32(shape.pitch), u32(shape.plane),
             u32(l.first_column), u32(box.begin[0]), u32(box.end[0]), u32(box.begin[1]), u32(box.end[1]),
             u32(box.begin[2]), coefficients_.sixth, coefficients_.h2);
  else
    set_args(kernel_, "jacobi3d_box", in, out, f, recorded, record, u32(shape.pitch), u32(shape.plane),
             u32(l.first_column), u32(box.begin[0]), u32(box.end[0]), u32(box.begin[1]), u32(box.end[1]),
             u32(box.begin[2]), u32(box.end[2]), u32(l.planes_per_group), coefficients_.sixth, coefficients_.h2);
  check(queue.enqueueNDRangeKernel(kernel_, cl::NullRange, l.global, l.local, wait, done), "clEnqueueNDRangeKernel",
        "running a Jacobi sweep");
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
