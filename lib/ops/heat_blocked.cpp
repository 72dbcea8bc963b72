#include "ops/heat_blocked.hpp"

#include <algorithm>
#include <string>

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

std::size_t local_budget(const DeviceInfo& device) {
  return std::min<std::size_t>(device.local_mem_bytes, kLocalBudget);
}

// A group `side` nodes across on its narrower side re-reads `depth` nodes on each side: it must
// own at least half of them.
void require_depth(std::size_t depth, std::size_t side, const std::string& group, const DeviceInfo& device) {
  if (4 * depth > side)
    throw UnsupportedFeature("a time depth of " + std::to_string(depth) + " steps leaves work-groups of " + group +
                             " on " + device.label() + " less than half of their tile to own: choose a depth of at "
                             "most " + std::to_string(side / 4));
}

[[noreturn]] void refuse_group(const DeviceInfo& device, const std::string& group) {
  throw UnsupportedFeature("work-groups of " + group + " do not fit " + device.label() + " (at most " +
                           std::to_string(device.max_work_group_size) + " work-items, two copies of their rows in " +
                           std::to_string(local_budget(device) / 1024) + " KiB of local memory): choose another group");
}

// Whether a row group of `width` items fits `device`: two copies of `rows` rows in local memory.
bool row_group_fits(const DeviceInfo& device, std::size_t value_bytes, std::size_t rows, std::size_t width) {
  return width >= 1 && width <= device.max_work_group_size && 2 * rows * width * value_bytes <= local_budget(device);
}

// The row group of the 1D (rows 1) and 2D (rows kRowsAtOnce) kernels: `requested`, or the widest
// of 256, 128 and 64 that fits.
std::size_t blocked_group(const DeviceInfo& device, std::size_t value_bytes, std::size_t depth, std::size_t rows,
                          const BlockedGroup& requested) {
  std::size_t width = requested.x;
  if (!requested.is_default()) {
    if (requested.y != 1 || !row_group_fits(device, value_bytes, rows, width)) refuse_group(device, to_string(requested));
  } else {
    width = std::min<std::size_t>(power_of_two_at_most(device.max_work_group_size), 256);
    while (width > 64 && !row_group_fits(device, value_bytes, rows, width)) width /= 2;
    if (!row_group_fits(device, value_bytes, rows, width)) refuse_group(device, "64 items");
  }
  require_depth(depth, width, std::to_string(width) + " x 1 items", device);
  return width;
}

// Strips (planes) long enough that re-reading 2 steps at their ends costs little, short enough to
// keep about eight groups per compute unit.
std::size_t strip_length(std::size_t extent, std::size_t groups, std::size_t depth, unsigned compute_units) {
  const std::size_t target = 8 * std::max(1u, compute_units);
  return std::clamp<std::size_t>(ceil_div(extent * groups, target), 4 * depth, 512);
}

}  // namespace

std::array<std::size_t, 2> blocked_tile_3d(const DeviceInfo& device, std::size_t value_bytes, std::size_t depth,
                                           const BlockedGroup& requested) {
  const std::array<std::size_t, 2> tile =
      requested.is_default() ? box_tile(device) : std::array<std::size_t, 2>{requested.x, requested.y};
  const std::size_t rows = tile[1] * kBlockedRowsPerItem;
  const std::string group = std::to_string(tile[0]) + " x " + std::to_string(tile[1]) + " items (" +
                            std::to_string(tile[0]) + " x " + std::to_string(rows) + " nodes)";
  if (tile[0] == 0 || tile[1] == 0 || tile[0] * tile[1] > device.max_work_group_size ||
      2 * rows * tile[0] * value_bytes > local_budget(device))
    refuse_group(device, group);
  require_depth(depth, std::min(tile[0], rows), group, device);
  return tile;
}

BlockedGroup blocked_group_for(const DeviceInfo& device, std::size_t dims, std::size_t value_bytes, std::size_t depth,
                               const BlockedGroup& requested) {
  if (dims == 3) {
    const auto tile = blocked_tile_3d(device, value_bytes, depth, requested);
    return {tile[0], tile[1]};
  }
  return {blocked_group(device, value_bytes, depth, dims == 2 ? kRowsAtOnce : 1, requested), 1};
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
                                    std::size_t depth, const BlockedGroup& group)
    : context_(context), dims_(dims), coefficients_(coefficients), depth_(depth) {
  if (depth == 0) throw InvalidArgument("a blocked heat kernel advances at least one step a launch");
  if (dims < 1 || dims > 3) throw InvalidArgument("a blocked heat kernel steps 1D, 2D or 3D grids");
  BuildOptions options;
  options.real_type<T>().define("BLOCKED_DIMS", dims).define("TIME_STEPS", depth);
  const BlockedGroup resolved = blocked_group_for(context.device(), dims, sizeof(T), depth, group);
  tile_ = {resolved.x, resolved.y};
  if (dims == 3) {
    options.define("TILE_X", tile_[0]).define("TILE_Y", tile_[1]).define("ROWS_PER_ITEM", kBlockedRowsPerItem);
  } else {
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
