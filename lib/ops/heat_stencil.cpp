#include "ops/heat_stencil.hpp"

#include <algorithm>

#include "base/integer_math.hpp"
#include "base/kernel_launch.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/base/program.hpp"

namespace ziggurat::detail {

namespace {

// Rows (planes) per work-group: as many as keep about 32 groups per compute unit in flight, so
// that the device stays busy on small boxes, and at most 64, beyond which the two extra rows a
// group reads cost nothing more.
std::size_t rows_per_group(std::size_t rows, std::size_t groups_per_row, unsigned compute_units) {
  const std::size_t target = 32 * std::max(1u, compute_units);
  return std::clamp<std::size_t>(rows * groups_per_row / target, 1, 64);
}

cl_uint u32(std::size_t value) { return static_cast<cl_uint>(value); }

// The work-group shapes of the box kernels: 2D rows of up to 256 work-items, 3D tiles of up to
// 32 x 8, as the device allows.
struct BoxGroups {
  std::size_t row, tile_x, tile_y;
  explicit BoxGroups(const DeviceInfo& device)
      : row(power_of_two_at_most(std::min<std::size_t>(device.max_work_group_size, 256))),
        tile_x(power_of_two_at_most(std::min<std::size_t>(device.max_work_group_size, 32))),
        tile_y(power_of_two_at_most(std::min<std::size_t>(device.max_work_group_size / tile_x, 8))) {}
};

}  // namespace

template <class T>
const cl::Program& heat_stencil_program(const Context& context) {
  const BoxGroups groups(context.device());
  return context.program("heat_stencil", BuildOptions()
                                             .real_type<T>()
                                             .define("ROW_GROUP", groups.row)
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
  static const char* const names[] = {"heat1d_box", "heat2d_box", "heat3d_box"};
  kernel_ = context.kernel(heat_stencil_program<T>(context), names[dims - 1]);
  group_ = dims == 3 ? std::array<std::size_t, 2>{groups.tile_x, groups.tile_y} : std::array<std::size_t, 2>{groups.row, 1};
  require_work_group(device, kernel_, group_[0] * group_[1], names[dims - 1]);
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
  } else if (dims_ == 2) {
    const std::size_t rows = box.count(1);
    const std::size_t chunk = rows_per_group(rows, columns / group_[0], context_.device().compute_units);
    set_args(kernel_, "heat2d_box", in, out, u32(shape.pitch), u32(first), u32(box.begin[0]), u32(box.end[0]),
             u32(box.begin[1]), u32(box.end[1]), u32(chunk), a, b);
    global = cl::NDRange(columns, ceil_div(rows, chunk));
    local = cl::NDRange(group_[0], 1);
  } else {
    const std::size_t rows = round_up(box.count(1), group_[1]);
    const std::size_t planes = box.count(2);
    const std::size_t chunk =
        rows_per_group(planes, columns / group_[0] * (rows / group_[1]), context_.device().compute_units);
    set_args(kernel_, "heat3d_box", in, out, u32(shape.pitch), u32(shape.plane), u32(first), u32(box.begin[0]),
             u32(box.end[0]), u32(box.begin[1]), u32(box.end[1]), u32(box.begin[2]), u32(box.end[2]), u32(chunk), a,
             b);
    global = cl::NDRange(columns, rows, ceil_div(planes, chunk));
    local = cl::NDRange(group_[0], group_[1], 1);
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
  const std::size_t lx = std::min(limit, round_up(32, context.preferred_work_group_multiple()));
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
