#include "ops/heat_stencil.hpp"

#include <algorithm>

#include "base/integer_math.hpp"
#include "base/kernel_launch.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/base/program.hpp"

namespace ziggurat::detail {

namespace {

cl_uint u32(std::size_t value) { return static_cast<cl_uint>(value); }

// The work-group shapes of the box kernels: 2D rows of up to 256 work-items (the flat kernels: up to
// 16 such rows, fewer and larger groups for PoCL to schedule), 3D tiles of up to 32 x 8, as the
// device allows.
struct BoxGroups {
  std::size_t row, flat_rows, tile_x, tile_y;
  explicit BoxGroups(const DeviceInfo& device)
      : row(power_of_two_at_most(std::min<std::size_t>(device.max_work_group_size, 256))),
        flat_rows(power_of_two_at_most(std::clamp<std::size_t>(device.max_work_group_size / row, 1, 16))),
        tile_x(box_tile(device)[0]),
        tile_y(box_tile(device)[1]) {}
};

}  // namespace

std::size_t rows_per_group(std::size_t rows, std::size_t groups_per_row, unsigned compute_units) {
  const std::size_t target = 32 * std::max(1u, compute_units);
  return std::clamp<std::size_t>(rows * groups_per_row / target, 1, 64);
}

bool runs_flat_kernels(const DeviceInfo& device) { return device.type == DeviceType::cpu; }

std::array<std::size_t, 2> flat_group(const DeviceInfo& device) {
  const BoxGroups groups(device);
  return {groups.row, groups.flat_rows};
}

BoxLaunch flat_launch(const Box& box, const std::array<std::size_t, 2>& largest) {
  // As wide as the box (from 8, PoCL's vector width of floats on AVX2), the rows making up the rest
  // of the largest group's work-items: a 30-wide box in 256-wide rows left 7 work-items of 8 idle.
  const std::size_t width =
      std::min(largest[0], std::max<std::size_t>(8, power_of_two_at_least(box.count(0))));
  const std::size_t rows = std::min(largest[0] * largest[1] / width, power_of_two_at_least(box.count(1)));
  BoxLaunch launch;
  launch.first_column = box.begin[0] / width * width;
  launch.global = cl::NDRange(round_up(box.end[0] - launch.first_column, width), round_up(box.count(1), rows),
                              box.count(2));
  launch.local = cl::NDRange(width, rows, 1);
  return launch;
}

std::array<std::size_t, 2> box_tile(const DeviceInfo& device) {
  const std::size_t x = power_of_two_at_most(std::min<std::size_t>(device.max_work_group_size, 32));
  return {x, power_of_two_at_most(std::min<std::size_t>(device.max_work_group_size / x, 8))};
}

BoxLaunch box_launch_3d(const Box& box, const std::array<std::size_t, 2>& tile, unsigned compute_units) {
  BoxLaunch launch;
  launch.first_column = box.begin[0] / tile[0] * tile[0];
  const std::size_t columns = round_up(box.end[0] - launch.first_column, tile[0]);
  const std::size_t rows = round_up(box.count(1), tile[1]);
  launch.planes_per_group = rows_per_group(box.count(2), columns / tile[0] * (rows / tile[1]), compute_units);
  launch.global = cl::NDRange(columns, rows, ceil_div(box.count(2), launch.planes_per_group));
  launch.local = cl::NDRange(tile[0], tile[1], 1);
  return launch;
}

template <class T>
const cl::Program& heat_stencil_program(const Context& context) {
  const BoxGroups groups(context.device());
  return context.program("heat_stencil", BuildOptions()
                                             .real_type<T>()
                                             .define("ROW_GROUP", groups.row)
                                             .define("FLAT_KERNELS", runs_flat_kernels(context.device()) ? 1 : 0)
                                             .define("TILE_X", groups.tile_x)
                                             .define("TILE_Y", groups.tile_y)
                                             .str());
}

std::size_t row_alignment(const DeviceInfo& device, std::size_t value_bytes) {
  return std::max<std::size_t>(1, device.base_address_align_bytes / value_bytes);
}

std::size_t grid_pitch(const DeviceInfo& device, std::size_t value_bytes, std::size_t dims, std::size_t width) {
  return dims == 1 ? width : round_up(width, row_alignment(device, value_bytes));
}

template <class T>
HeatBoxStep<T>::HeatBoxStep(const Context& context, std::size_t dims, HeatCoefficients<T> coefficients)
    : context_(context), dims_(dims), coefficients_(coefficients) {
  const DeviceInfo& device = context.device();
  const BoxGroups groups(device);
  flat_ = dims > 1 && runs_flat_kernels(device);
  static const char* const names[] = {"heat1d_box", "heat2d_box", "heat3d_box", "heat2d_flat", "heat3d_flat"};
  const char* name = names[flat_ ? dims + 1 : dims - 1];
  kernel_ = context.kernel(heat_stencil_program<T>(context), name);
  if (flat_)
    group_ = flat_group(device);  // the largest: flat_launch() fits each box's group within it
  else
    group_ = dims == 3 ? std::array<std::size_t, 2>{groups.tile_x, groups.tile_y} : std::array<std::size_t, 2>{groups.row, 1};
  require_work_group(device, kernel_, group_[0] * group_[1], name);
}

template <class T>
void HeatBoxStep<T>::enqueue(cl::CommandQueue& queue, const cl::Buffer& in, const cl::Buffer& out,
                             const BufferShape& shape, const Box& box, const std::vector<cl::Event>* wait,
                             cl::Event* done) {
  const std::size_t first = box.begin[0] / group_[0] * group_[0];
  const std::size_t columns = round_up(box.end[0] - first, group_[0]);
  const T a = coefficients_.a, b = coefficients_.b;
  cl::NDRange global, local;
  if (dims_ == 1) {
    set_args(kernel_, "heat1d_box", in, out, u32(first), u32(box.begin[0]), u32(box.end[0]), a, b);
    global = cl::NDRange(columns);
    local = cl::NDRange(group_[0]);
  } else if (flat_) {
    const BoxLaunch launch = flat_launch(box, group_);
    const cl_uint flat_first = u32(launch.first_column);
    if (dims_ == 2)
      set_args(kernel_, "heat2d_flat", in, out, u32(shape.pitch), flat_first, u32(box.begin[0]), u32(box.end[0]),
               u32(box.begin[1]), u32(box.end[1]), a, b);
    else
      set_args(kernel_, "heat3d_flat", in, out, u32(shape.pitch), u32(shape.plane), flat_first, u32(box.begin[0]),
               u32(box.end[0]), u32(box.begin[1]), u32(box.end[1]), u32(box.begin[2]), a, b);
    global = launch.global;
    local = launch.local;
  } else if (dims_ == 2) {
    const std::size_t rows = box.count(1);
    const std::size_t chunk = rows_per_group(rows, columns / group_[0], context_.device().compute_units);
    set_args(kernel_, "heat2d_box", in, out, u32(shape.pitch), u32(first), u32(box.begin[0]), u32(box.end[0]),
             u32(box.begin[1]), u32(box.end[1]), u32(chunk), a, b);
    global = cl::NDRange(columns, ceil_div(rows, chunk));
    local = cl::NDRange(group_[0], 1);
  } else {
    const BoxLaunch launch = box_launch_3d(box, group_, context_.device().compute_units);
    set_args(kernel_, "heat3d_box", in, out, u32(shape.pitch), u32(shape.plane), u32(launch.first_column),
             u32(box.begin[0]), u32(box.end[0]), u32(box.begin[1]), u32(box.end[1]), u32(box.begin[2]),
             u32(box.end[2]), u32(launch.planes_per_group), a, b);
    global = launch.global;
    local = launch.local;
  }
  check(queue.enqueueNDRangeKernel(kernel_, cl::NullRange, global, local, wait, done), "clEnqueueNDRangeKernel",
        "running a heat step");
}

template <class T>
NaiveHeatStep<T>::NaiveHeatStep(const Context& context, std::size_t width, std::size_t height, std::size_t pitch,
                                HeatCoefficients<T> coefficients)
    : width_(width), height_(height), pitch_(pitch), coefficients_(coefficients) {
  kernel_ = context.kernel(heat_stencil_program<T>(context), "heat2d_naive");
  // Work-groups of up to 256 work-items, rows of 32 (a whole warp or a CPU vector multiple).
  const std::size_t limit = std::min<std::size_t>(256, work_group_limit(context.device(), kernel_, "heat2d_naive"));
  const std::size_t lx = std::min(limit, round_up(32, preferred_multiple(context.device(), kernel_, "heat2d_naive")));
  const std::size_t ly = std::max<std::size_t>(1, limit / lx);
  local_ = cl::NDRange(lx, ly);
  global_ = cl::NDRange(round_up(width - 2, lx), round_up(height - 2, ly));
}

template <class T>
void NaiveHeatStep<T>::enqueue(cl::CommandQueue& queue, const cl::Buffer& in, const cl::Buffer& out, cl::Event* done) {
  set_args(kernel_, "heat2d_naive", in, out, u32(width_), u32(height_), u32(pitch_), coefficients_.a, coefficients_.b);
  check(queue.enqueueNDRangeKernel(kernel_, cl::NullRange, global_, local_, nullptr, done), "clEnqueueNDRangeKernel",
        "running heat2d_naive");
}

template const cl::Program& heat_stencil_program<float>(const Context&);
template const cl::Program& heat_stencil_program<double>(const Context&);
template class HeatBoxStep<float>;
template class HeatBoxStep<double>;
template class NaiveHeatStep<float>;
template class NaiveHeatStep<double>;

}  // namespace ziggurat::detail
