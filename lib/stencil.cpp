#include "stencil.hpp"

#include <algorithm>

#include "ziggurat/error.hpp"
#include "ziggurat/program.hpp"

namespace ziggurat::detail {

namespace {

std::size_t round_up(std::size_t value, std::size_t multiple) { return (value + multiple - 1) / multiple * multiple; }
std::size_t ceil_div(std::size_t a, std::size_t b) { return (a + b - 1) / b; }

// The largest power of two <= limit, at most `wanted`.
std::size_t power_of_two_at_most(std::size_t limit, std::size_t wanted) {
  std::size_t size = 1;
  while (size * 2 <= std::min(limit, wanted)) size *= 2;
  return size;
}

// Rows (planes) per work-group: as many as keep about 32 groups per compute unit in flight, so
// that the device stays busy on small boxes, and at most 64, beyond which the two extra rows a
// group reads cost nothing more.
std::size_t rows_per_group(std::size_t rows, std::size_t groups_per_row, unsigned compute_units) {
  const std::size_t target = 32 * std::max(1u, compute_units);
  return std::clamp<std::size_t>(rows * groups_per_row / target, 1, 64);
}

}  // namespace

template <class T>
std::size_t StencilKernels<T>::aligned_pitch(const DeviceInfo& device, std::size_t width) {
  return round_up(width, std::max<std::size_t>(1, device.base_address_align_bytes / sizeof(T)));
}

template <class T>
StencilKernels<T>::StencilKernels(const Context& context, std::size_t dims, HeatCoefficients<T> coefficients)
    : context_(context), dims_(dims) {
  const DeviceInfo& device = context.device();
  const std::size_t most = device.max_work_group_size;
  const std::size_t row_group = power_of_two_at_most(most, 256);
  const std::size_t tile_x = power_of_two_at_most(most, 32);
  const std::size_t tile_y = power_of_two_at_most(most / tile_x, 8);
  const std::string options = BuildOptions()
                                  .real_type<T>()
                                  .define("ROW_GROUP", row_group)
                                  .define("TILE_X", tile_x)
                                  .define("TILE_Y", tile_y)
                                  .str();
  static const char* const names[] = {"heat1d_box", "heat2d_box", "heat3d_box"};
  kernel_ = context.kernel(context.program("stencil", options), names[dims - 1]);
  group_ = dims == 3 ? std::array<std::size_t, 2>{tile_x, tile_y} : std::array<std::size_t, 2>{row_group, 1};
  cl_int err = CL_SUCCESS;
  const std::size_t limit = kernel_.getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(device.device, &err);
  check(err, "clGetKernelWorkGroupInfo", std::string("asking for the work-group limit of ") + names[dims - 1]);
  if (limit < group_[0] * group_[1]) {
    throw UnsupportedFeature(device.label() + " runs " + names[dims - 1] + " in work-groups of at most " +
                             std::to_string(limit) + " work-items; it needs " + std::to_string(group_[0] * group_[1]));
  }
  // The last two arguments are the same for every launch.
  const cl_uint a_index = dims == 1 ? 5 : dims == 2 ? 9 : 12;
  check(kernel_.setArg(a_index, coefficients.a), "clSetKernelArg", "setting A");
  check(kernel_.setArg(a_index + 1, coefficients.b), "clSetKernelArg", "setting B");
}

template <class T>
void StencilKernels<T>::enqueue(cl::CommandQueue& queue, const cl::Buffer& in, const cl::Buffer& out,
                                const BufferShape& shape, const Box& box, const std::vector<cl::Event>* wait,
                                cl::Event* done) {
  const auto arg = [&](cl_uint index, auto value) {
    check(kernel_.setArg(index, value), "clSetKernelArg", "setting a heat step argument");
  };
  const auto u32 = [](std::size_t value) { return static_cast<cl_uint>(value); };
  const std::size_t first = box.begin[0] / group_[0] * group_[0];
  const std::size_t columns = round_up(box.end[0] - first, group_[0]);
  arg(0, in);
  arg(1, out);
  cl::NDRange global, local;
  if (dims_ == 1) {
    arg(2, u32(first));
    arg(3, u32(box.begin[0]));
    arg(4, u32(box.end[0]));
    global = cl::NDRange(columns);
    local = cl::NDRange(group_[0]);
  } else if (dims_ == 2) {
    const std::size_t rows = box.count(1);
    const std::size_t chunk = rows_per_group(rows, columns / group_[0], context_.device().compute_units);
    arg(2, u32(shape.pitch));
    arg(3, u32(first));
    arg(4, u32(box.begin[0]));
    arg(5, u32(box.end[0]));
    arg(6, u32(box.begin[1]));
    arg(7, u32(box.end[1]));
    arg(8, u32(chunk));
    global = cl::NDRange(columns, ceil_div(rows, chunk));
    local = cl::NDRange(group_[0], 1);
  } else {
    const std::size_t rows = round_up(box.count(1), group_[1]);
    const std::size_t planes = box.count(2);
    const std::size_t chunk =
        rows_per_group(planes, columns / group_[0] * (rows / group_[1]), context_.device().compute_units);
    arg(2, u32(shape.pitch));
    arg(3, u32(shape.plane));
    arg(4, u32(first));
    arg(5, u32(box.begin[0]));
    arg(6, u32(box.end[0]));
    arg(7, u32(box.begin[1]));
    arg(8, u32(box.end[1]));
    arg(9, u32(box.begin[2]));
    arg(10, u32(box.end[2]));
    arg(11, u32(chunk));
    global = cl::NDRange(columns, rows, ceil_div(planes, chunk));
    local = cl::NDRange(group_[0], group_[1], 1);
  }
  check(queue.enqueueNDRangeKernel(kernel_, cl::NullRange, global, local, wait, done), "clEnqueueNDRangeKernel",
        "running a heat step");
}

template class StencilKernels<float>;
template class StencilKernels<double>;

}  // namespace ziggurat::detail
