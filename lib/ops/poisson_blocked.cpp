#include "ops/poisson_blocked.hpp"

#include "base/integer_math.hpp"
#include "base/kernel_launch.hpp"
#include "ops/heat_blocked.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/base/program.hpp"

namespace ziggurat::detail {

template <class T>
JacobiBlockedSweep<T>::JacobiBlockedSweep(const Context& context, JacobiCoefficients<T> coefficients, std::size_t depth,
                                          const BlockedGroup& group)
    : context_(context),
      coefficients_(coefficients),
      depth_(depth),
      tile_(blocked_tile_3d(context.device(), sizeof(T), depth, group)) {
  if (depth == 0) throw InvalidArgument("a blocked Jacobi kernel advances at least one sweep a launch");
  const std::string options = BuildOptions()
                                  .real_type<T>()
                                  .define("BLOCKED_DIMS", 3)
                                  .define("TIME_STEPS", depth)
                                  .define("TILE_X", tile_[0])
                                  .define("TILE_Y", tile_[1])
                                  .define("ROWS_PER_ITEM", kBlockedRowsPerItem)
                                  .str();
  kernel_ = context.kernel(context.program("poisson_blocked", options), "jacobi3d_blocked");
  require_work_group(context.device(), kernel_, tile_[0] * tile_[1], "jacobi3d_blocked");
}

template <class T>
std::size_t JacobiBlockedSweep<T>::groups(const Box& box) const {
  return blocked_launch_3d(box, tile_, depth_, context_.device().compute_units).groups;
}

template <class T>
std::size_t JacobiBlockedSweep<T>::most_groups(const std::array<std::size_t, 3>& extents) const {
  // Every strip holds at least one plane.
  return ceil_div(extents[0], tile_[0] - 2 * depth_) * ceil_div(extents[1], tile_[1] * kBlockedRowsPerItem - 2 * depth_) *
         extents[2];
}

template <class T>
void JacobiBlockedSweep<T>::enqueue(cl::CommandQueue& queue, const cl::Buffer& in, const cl::Buffer& out,
                                    const cl::Buffer& f, const cl::Buffer* partial, const BufferShape& shape,
                                    const Box& box, const Box& interior, std::size_t sweeps,
                                    const std::vector<cl::Event>* wait, cl::Event* done) {
  if (sweeps == 0 || sweeps > depth_)
    throw InvalidArgument("a blocked launch of depth " + std::to_string(depth_) + " runs 1 to " +
                          std::to_string(depth_) + " sweeps, not " + std::to_string(sweeps));
  const BlockedLaunch3d launch = blocked_launch_3d(box, tile_, depth_, context_.device().compute_units);
  const auto i32 = [](std::size_t value) { return static_cast<cl_int>(value); };
  const auto u32 = [](std::size_t value) { return static_cast<cl_uint>(value); };
  set_args(kernel_, "jacobi3d_blocked", in, out, f, partial != nullptr ? *partial : f, u32(partial != nullptr ? 1 : 0),
           u32(shape.pitch), u32(shape.plane), u32(in.getInfo<CL_MEM_SIZE>() / (shape.plane * sizeof(T))),
           i32(box.begin[0]), i32(box.end[0]), i32(box.begin[1]), i32(box.end[1]), i32(box.begin[2]), i32(box.end[2]),
           i32(interior.begin[0]), i32(interior.end[0]), i32(interior.begin[1]), i32(interior.end[1]),
           i32(interior.begin[2]), i32(interior.end[2]), u32(sweeps), u32(launch.strip), coefficients_.sixth,
           coefficients_.h2);
  check(queue.enqueueNDRangeKernel(kernel_, cl::NullRange, launch.global, launch.local, wait, done),
        "clEnqueueNDRangeKernel", "running blocked Jacobi sweeps");
}

template class JacobiBlockedSweep<float>;
template class JacobiBlockedSweep<double>;

}  // namespace ziggurat::detail
