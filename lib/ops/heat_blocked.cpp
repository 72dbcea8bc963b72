#include "ops/heat_blocked.hpp"

#include <algorithm>

#include "base/integer_math.hpp"
#include "base/kernel_launch.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/base/program.hpp"

namespace ziggurat::detail {

namespace {

constexpr std::size_t kLocalBudget = 48 * 1024;  // NVIDIA's OpenCL offers 48 KiB; never rely on more

cl_uint u32(std::size_t value) { return static_cast<cl_uint>(value); }

// The widest work-group (256, 128 or 64) whose rings fit the local budget and that owns at least
// half its columns (2 depth are re-read on each side).
std::size_t blocked_group(const DeviceInfo& device, std::size_t value_bytes, std::size_t depth) {
  const std::size_t budget = std::min<std::size_t>(device.local_mem_bytes, kLocalBudget);
  for (std::size_t width = std::min<std::size_t>(power_of_two_at_most(device.max_work_group_size), 256); width >= 64;
       width /= 2)
    if (depth * 3 * width * value_bytes <= budget && 4 * depth <= width) return width;
  throw UnsupportedFeature("a time depth of " + std::to_string(depth) + " steps does not fit the work-groups and " +
                           std::to_string(budget / 1024) + " KiB of local memory of " + device.label() +
                           ": choose a smaller depth");
}

}  // namespace

template <class T>
HeatBlockedStep<T>::HeatBlockedStep(const Context& context, std::size_t dims, HeatCoefficients<T> coefficients,
                                    std::size_t depth)
    : context_(context), dims_(dims), coefficients_(coefficients), depth_(depth) {
  if (depth == 0) throw InvalidArgument("a blocked heat kernel advances at least one step a launch");
  if (dims != 1 && dims != 2)
    throw UnsupportedFeature("several steps a launch (depth " + std::to_string(depth) + ") is 1D and 2D only so far; a " +
                             std::to_string(dims) + "D grid runs with depth 1");
  group_ = blocked_group(context.device(), sizeof(T), depth);
  const cl::Program& program = context.program(
      "heat_blocked", BuildOptions().real_type<T>().define("ROW_GROUP", group_).define("TIME_STEPS", depth).str());
  const char* name = dims == 1 ? "heat1d_blocked" : "heat2d_blocked";
  kernel_ = context.kernel(program, name);
  require_work_group(context.device(), kernel_, group_, name);
}

template <class T>
void HeatBlockedStep<T>::enqueue(cl::CommandQueue& queue, const cl::Buffer& in, const cl::Buffer& out,
                                 const BufferShape& shape, const Box& box, const Box& interior, std::size_t steps,
                                 const std::vector<cl::Event>* wait, cl::Event* done) {
  if (steps == 0 || steps > depth_)
    throw InvalidArgument("a blocked launch of depth " + std::to_string(depth_) + " advances 1 to " +
                          std::to_string(depth_) + " steps, not " + std::to_string(steps));
  const std::size_t owned = group_ - 2 * depth_;
  const std::size_t groups_x = ceil_div(box.count(0), owned);
  const auto i32 = [](std::size_t value) { return static_cast<cl_int>(value); };
  if (dims_ == 1) {
    set_args(kernel_, "heat1d_blocked", in, out, u32(shape.pitch), i32(box.begin[0]), i32(box.end[0]),
             i32(interior.begin[0]), i32(interior.end[0]), u32(steps), coefficients_.a, coefficients_.b);
    check(queue.enqueueNDRangeKernel(kernel_, cl::NullRange, cl::NDRange(groups_x * group_), cl::NDRange(group_), wait,
                                     done),
          "clEnqueueNDRangeKernel", "running blocked heat steps");
    return;
  }
  // Strips long enough that re-reading 2 steps rows at their ends costs little, short enough to
  // keep about eight groups per compute unit.
  const std::size_t target = 8 * std::max(1u, context_.device().compute_units);
  const std::size_t strip = std::clamp<std::size_t>(ceil_div(box.count(1) * groups_x, target), 4 * depth_, 512);
  set_args(kernel_, "heat2d_blocked", in, out, u32(shape.pitch), u32(shape.plane / shape.pitch), i32(box.begin[0]),
           i32(box.end[0]), i32(box.begin[1]), i32(box.end[1]), i32(interior.begin[0]), i32(interior.end[0]),
           i32(interior.begin[1]), i32(interior.end[1]), u32(steps), u32(strip), coefficients_.a, coefficients_.b);
  check(queue.enqueueNDRangeKernel(kernel_, cl::NullRange, cl::NDRange(groups_x * group_, ceil_div(box.count(1), strip)),
                                   cl::NDRange(group_, 1), wait, done),
        "clEnqueueNDRangeKernel", "running blocked heat steps");
}

template class HeatBlockedStep<float>;
template class HeatBlockedStep<double>;

}  // namespace ziggurat::detail
