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

constexpr std::size_t kRowsPerItem = 4;  // 3D: nodes of a column in y each work-item holds

// Strips (planes) long enough that re-reading 2 steps at their ends costs little, short enough to
// keep about eight groups per compute unit.
std::size_t strip_length(std::size_t extent, std::size_t groups, std::size_t depth, unsigned compute_units) {
  const std::size_t target = 8 * std::max(1u, compute_units);
  return std::clamp<std::size_t>(ceil_div(extent * groups, target), 4 * depth, 512);
}

}  // namespace

template <class T>
HeatBlockedStep<T>::HeatBlockedStep(const Context& context, std::size_t dims, HeatCoefficients<T> coefficients,
                                    std::size_t depth)
    : context_(context), dims_(dims), coefficients_(coefficients), depth_(depth) {
  if (depth == 0) throw InvalidArgument("a blocked heat kernel advances at least one step a launch");
  if (dims < 1 || dims > 3) throw InvalidArgument("a blocked heat kernel steps 1D, 2D or 3D grids");
  BuildOptions options;
  options.real_type<T>().define("BLOCKED_DIMS", dims).define("TIME_STEPS", depth);
  if (dims == 3) {
    tile_ = box_tile(context.device());
    if (4 * depth > std::min(tile_[0], tile_[1] * kRowsPerItem))
      throw UnsupportedFeature("a time depth of " + std::to_string(depth) + " steps leaves too little of a " +
                               std::to_string(tile_[0]) + " x " + std::to_string(tile_[1] * kRowsPerItem) +
                               " tile of " + context.device().label() + " to own: choose a depth of at most " +
                               std::to_string(std::min(tile_[0], tile_[1] * kRowsPerItem) / 4));
    options.define("TILE_X", tile_[0]).define("TILE_Y", tile_[1]).define("ROWS_PER_ITEM", kRowsPerItem);
  } else {
    tile_ = {blocked_group(context.device(), sizeof(T), depth), 1};
    options.define("ROW_GROUP", tile_[0]);
  }
  static const char* const names[] = {"heat1d_blocked", "heat2d_blocked", "heat3d_blocked"};
  kernel_ = context.kernel(context.program("heat_blocked", options.str()), names[dims - 1]);
  require_work_group(context.device(), kernel_, tile_[0] * tile_[1], names[dims - 1]);
}

template <class T>
void HeatBlockedStep<T>::enqueue(cl::CommandQueue& queue, const cl::Buffer& in, const cl::Buffer& out,
                                 const BufferShape& shape, const Box& box, const Box& interior, std::size_t steps,
                                 const std::vector<cl::Event>* wait, cl::Event* done) {
  if (steps == 0 || steps > depth_)
    throw InvalidArgument("a blocked launch of depth " + std::to_string(depth_) + " advances 1 to " +
                          std::to_string(depth_) + " steps, not " + std::to_string(steps));
  const std::size_t groups_x = ceil_div(box.count(0), tile_[0] - 2 * depth_);
  const auto i32 = [](std::size_t value) { return static_cast<cl_int>(value); };
  const unsigned units = context_.device().compute_units;
  cl::NDRange global, local(tile_[0], tile_[1]);
  if (dims_ == 1) {
    set_args(kernel_, "heat1d_blocked", in, out, u32(shape.pitch), i32(box.begin[0]), i32(box.end[0]),
             i32(interior.begin[0]), i32(interior.end[0]), u32(steps), coefficients_.a, coefficients_.b);
    global = cl::NDRange(groups_x * tile_[0], 1);
  } else if (dims_ == 2) {
    const std::size_t strip = strip_length(box.count(1), groups_x, depth_, units);
    set_args(kernel_, "heat2d_blocked", in, out, u32(shape.pitch), u32(shape.plane / shape.pitch), i32(box.begin[0]),
           i32(box.end[0]), i32(box.begin[1]), i32(box.end[1]), i32(interior.begin[0]), i32(interior.end[0]),
           i32(interior.begin[1]), i32(interior.end[1]), u32(steps), u32(strip), coefficients_.a, coefficients_.b);
    global = cl::NDRange(groups_x * tile_[0], ceil_div(box.count(1), strip));
  } else {
    const std::size_t groups_y = ceil_div(box.count(1), tile_[1] * kRowsPerItem - 2 * depth_);
    const std::size_t strip = strip_length(box.count(2), groups_x * groups_y, depth_, units);
    set_args(kernel_, "heat3d_blocked", in, out, u32(shape.pitch), u32(shape.plane), u32(in.getInfo<CL_MEM_SIZE>() / (shape.plane * sizeof(T))),
             i32(box.begin[0]), i32(box.end[0]), i32(box.begin[1]), i32(box.end[1]), i32(box.begin[2]),
             i32(box.end[2]), i32(interior.begin[0]), i32(interior.end[0]), i32(interior.begin[1]),
             i32(interior.end[1]), i32(interior.begin[2]), i32(interior.end[2]), u32(steps), u32(strip),
             coefficients_.a, coefficients_.b);
    global = cl::NDRange(groups_x * tile_[0], groups_y * tile_[1], ceil_div(box.count(2), strip));
    local = cl::NDRange(tile_[0], tile_[1], 1);
  }
  check(queue.enqueueNDRangeKernel(kernel_, cl::NullRange, global, local, wait, done), "clEnqueueNDRangeKernel",
        "running blocked heat steps");
}

template class HeatBlockedStep<float>;
template class HeatBlockedStep<double>;

}  // namespace ziggurat::detail
