#include "ops/heat_blocked.hpp"

#include <algorithm>

#include "base/integer_math.hpp"
#include "base/kernel_launch.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/base/program.hpp"

namespace ziggurat::detail {

namespace {

constexpr std::size_t kLocalBudget = 48 * 1024;  // NVIDIA's OpenCL offers 48 KiB; never rely on more
// Input rows a 2D work-group takes an iteration: each step's barrier serves that many rows.
constexpr std::size_t kRowsAtOnce = 4;

cl_uint u32(std::size_t value) { return static_cast<cl_uint>(value); }

// The widest work-group (256, 128 or 64) whose two copies of kRowsAtOnce rows fit the local
// budget and that owns at least half its columns (depth are re-read on each side).
std::size_t blocked_group(const DeviceInfo& device, std::size_t value_bytes, std::size_t depth) {
  const std::size_t budget = std::min<std::size_t>(device.local_mem_bytes, kLocalBudget);
  for (std::size_t width = std::min<std::size_t>(power_of_two_at_most(device.max_work_group_size), 256); width >= 64;
       width /= 2)
    if (2 * kRowsAtOnce * width * value_bytes <= budget && 4 * depth <= width) return width;
  throw UnsupportedFeature("a time depth of " + std::to_string(depth) + " steps does not fit the work-groups and " +
                           std::to_string(budget / 1024) + " KiB of local memory of " + device.label() +
                           ": choose a smaller depth");
}

// Strips (planes) long enough that re-reading 2 steps at their ends costs little, short enough to
// keep about eight groups per compute unit.
std::size_t strip_length(std::size_t extent, std::size_t groups, std::size_t depth, unsigned compute_units) {
  const std::size_t target = 8 * std::max(1u, compute_units);
  return std::clamp<std::size_t>(ceil_div(extent * groups, target), 4 * depth, 512);
}

}  // namespace

std::array<std::size_t, 2> blocked_tile_3d(const DeviceInfo& device, std::size_t depth) {
  const std::array<std::size_t, 2> tile = box_tile(device);
  const std::size_t side = std::min(tile[0], tile[1] * kBlockedRowsPerItem);
  if (4 * depth > side)
    throw UnsupportedFeature("a time depth of " + std::to_string(depth) + " steps leaves too little of a " +
                             std::to_string(tile[0]) + " x " + std::to_string(tile[1] * kBlockedRowsPerItem) +
                             " tile of " + device.label() + " to own: choose a depth of at most " +
                             std::to_string(side / 4));
  return tile;
}

BlockedLaunch3d blocked_launch_3d(const Box& box, const std::array<std::size_t, 2>& tile, std::size_t depth,
                                  unsigned compute_units) {
  BlockedLaunch3d launch;
  const std::size_t groups_x = ceil_div(box.count(0), tile[0] - 2 * depth);
  const std::size_t groups_y = ceil_div(box.count(1), tile[1] * kBlockedRowsPerItem - 2 * depth);
  launch.strip = strip_length(box.count(2), groups_x * groups_y, depth, compute_units);
  const std::size_t groups_z = ceil_div(box.count(2), launch.strip);
  launch.groups = groups_x * groups_y * groups_z;
  launch.global = cl::NDRange(groups_x * tile[0], groups_y * tile[1], groups_z);
  launch.local = cl::NDRange(tile[0], tile[1], 1);
  return launch;
}

template <class T>
HeatBlockedStep<T>::HeatBlockedStep(const Context& context, std::size_t dims, HeatCoefficients<T> coefficients,
                                    std::size_t depth)
    : context_(context), dims_(dims), coefficients_(coefficients), depth_(depth) {
  if (depth == 0) throw InvalidArgument("a blocked heat kernel advances at least one step a launch");
  if (dims < 1 || dims > 3) throw InvalidArgument("a blocked heat kernel steps 1D, 2D or 3D grids");
  BuildOptions options;
  options.real_type<T>().define("BLOCKED_DIMS", dims).define("TIME_STEPS", depth);
  if (dims == 3) {
    tile_ = blocked_tile_3d(context.device(), depth);
    options.define("TILE_X", tile_[0]).define("TILE_Y", tile_[1]).define("ROWS_PER_ITEM", kBlockedRowsPerItem);
  } else {
    tile_ = {blocked_group(context.device(), sizeof(T), depth), 1};
    options.define("ROW_GROUP", tile_[0]);
    if (dims == 2) options.define("ROWS_AT_ONCE", kRowsAtOnce);
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
    const BlockedLaunch3d launch = blocked_launch_3d(box, tile_, depth_, units);
    set_args(kernel_, "heat3d_blocked", in, out, u32(shape.pitch), u32(shape.plane), u32(in.getInfo<CL_MEM_SIZE>() / (shape.plane * sizeof(T))),
             i32(box.begin[0]), i32(box.end[0]), i32(box.begin[1]), i32(box.end[1]), i32(box.begin[2]),
             i32(box.end[2]), i32(interior.begin[0]), i32(interior.end[0]), i32(interior.begin[1]),
             i32(interior.end[1]), i32(interior.begin[2]), i32(interior.end[2]), u32(steps), u32(launch.strip),
             coefficients_.a, coefficients_.b);
    global = launch.global;
    local = launch.local;
  }
  check(queue.enqueueNDRangeKernel(kernel_, cl::NullRange, global, local, wait, done), "clEnqueueNDRangeKernel",
        "running blocked heat steps");
}

template class HeatBlockedStep<float>;
template class HeatBlockedStep<double>;

}  // namespace ziggurat::detail
