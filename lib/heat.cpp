#include "ziggurat/heat.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <type_traits>

#include "ziggurat/error.hpp"
#include "ziggurat/program.hpp"

namespace ziggurat {

namespace {

constexpr double kPi = 3.14159265358979323846;

std::size_t round_up(std::size_t value, std::size_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

template <class T>
const char* type_name() {
  return std::is_same_v<T, float> ? "float" : "double";
}

void require_2d_interior(const std::vector<std::size_t>& extents, const char* who) {
  if (extents.size() != 2) {
    throw InvalidArgument(std::string(who) + " needs a 2D grid, got " + std::to_string(extents.size()) +
                          "D grid " + extents_string(extents));
  }
  if (extents[0] < 3 || extents[1] < 3) {
    throw InvalidArgument(std::string(who) + " needs at least 3 x 3 nodes (one interior node inside "
                          "the boundary), got " + extents_string(extents));
  }
}

// The five-point update of heat.hpp, written once for the CPU. The library is compiled with
// -ffp-contract=off so that the compiler cannot fuse the multiply-adds either.
template <class T>
void reference_step(const T* u, T* v, std::size_t width, std::size_t height, HeatCoefficients<T> k) {
  for (std::size_t y = 1; y + 1 < height; ++y) {
    for (std::size_t x = 1; x + 1 < width; ++x) {
      const std::size_t c = y * width + x;
      const T sum = ((u[c - 1] + u[c + 1]) + u[c - width]) + u[c + width];
      v[c] = k.a * sum + k.b * u[c];
    }
  }
}

// Rows start on the device's base-address alignment, so that every row is read aligned.
template <class T>
std::size_t row_pitch(const DeviceInfo& device, std::size_t width) {
  return round_up(width, std::max<std::size_t>(1, device.base_address_align_bytes / sizeof(T)));
}

// The grid's rows spread to `pitch` values each (padding zero), or the grid itself when no padding
// is needed. Grids move between host and device as whole buffers: the fastest kind of transfer,
// and the only kind whose data Oclgrind 21.10's uninitialised-value check sees as written (it loses
// host writes into parts of a buffer, such as clEnqueueWriteBufferRect rows).
template <class T>
std::vector<T> pitched_rows(const Grid<T>& grid, std::size_t pitch) {
  std::vector<T> rows(pitch * grid.height(), T{0});
  for (std::size_t y = 0; y < grid.height(); ++y) {
    std::copy_n(grid.data() + y * grid.width(), grid.width(), rows.data() + y * pitch);
  }
  return rows;
}

}  // namespace

double max_stable_alpha(std::size_t dims) { return 1.0 / (2.0 * static_cast<double>(dims)); }

template <class T>
HeatCoefficients<T> heat_coefficients(double alpha, std::size_t dims) {
  if (dims < 1 || dims > 3) throw InvalidArgument("the heat scheme has 1 to 3 dimensions, got " + std::to_string(dims));
  const double limit = max_stable_alpha(dims);
  if (!(alpha > 0.0 && alpha <= limit)) {
    std::ostringstream text;
    text << "A = " << alpha << " makes the " << dims << "D explicit scheme "
         << (alpha > limit ? "unstable" : "meaningless") << ": it needs 0 < A <= 1/" << 2 * dims
         << " (A = a^2 ht / h^2); " << (alpha > limit ? "reduce the time step" : "give a positive A");
    throw InvalidArgument(text.str());
  }
  return {static_cast<T>(alpha), static_cast<T>(1.0 - 2.0 * static_cast<double>(dims) * alpha)};
}

template <class T>
void heat_steps_reference(Grid<T>& grid, double alpha, std::size_t steps) {
  require_2d_interior(grid.extents(), "heat_steps_reference");
  const auto k = heat_coefficients<T>(alpha, 2);
  Grid<T> next = grid;  // boundary values are the same in both grids
  for (std::size_t step = 0; step < steps; ++step) {
    reference_step(grid.data(), next.data(), grid.width(), grid.height(), k);
    std::swap(grid, next);
  }
}

template <class T>
Grid<T> heat_mode_field(std::size_t width, std::size_t height) {
  require_2d_interior({width, height}, "heat_mode_field");
  Grid<T> grid({width, height});
  for (std::size_t y = 1; y + 1 < height; ++y) {
    const double sy = std::sin(kPi * static_cast<double>(y) / static_cast<double>(height - 1));
    for (std::size_t x = 1; x + 1 < width; ++x) {
      grid(x, y) = static_cast<T>(sy * std::sin(kPi * static_cast<double>(x) / static_cast<double>(width - 1)));
    }
  }
  return grid;
}

double heat_mode_decay(std::size_t width, std::size_t height, double alpha) {
  require_2d_interior({width, height}, "heat_mode_decay");
  return 1.0 - 4.0 * alpha +
         2.0 * alpha * (std::cos(kPi / static_cast<double>(width - 1)) + std::cos(kPi / static_cast<double>(height - 1)));
}

template <class T>
void require_finite(const Grid<T>& grid, const char* what) {
  for (std::size_t i = 0; i < grid.size(); ++i) {
    if (!std::isfinite(grid.data()[i])) {
      std::ostringstream text;
      text << "the " << what << " has a non-finite value (" << grid.data()[i] << ") at node " << i % grid.width();
      for (std::size_t axis = 1, stride = grid.width(); axis < grid.dims(); stride *= grid.extent(axis++)) {
        text << ", " << i / stride % grid.extent(axis);
      }
      text << " (fastest axis first); every value must be a finite number";
      throw InvalidArgument(text.str());
    }
  }
}

template <class T>
void InDeviceHeat2D<T>::check_fits(const DeviceInfo& device, std::size_t width, std::size_t height) {
  const std::size_t pitch = row_pitch<T>(device, width);
  // The kernel indexes columns and rows with 32-bit integers, over a launch grid rounded up to
  // whole work-groups (at most 256 wide).
  constexpr std::size_t kIndexLimit = std::numeric_limits<cl_uint>::max() - 256;
  if (pitch > kIndexLimit || height > kIndexLimit) {
    throw InvalidArgument("grid " + extents_string({width, height}) + " is too large for the heat kernel, which "
                          "indexes rows and columns with 32-bit integers");
  }
  const std::size_t nodes = checked_node_count({pitch, height});
  if (nodes > std::numeric_limits<std::size_t>::max() / (2 * sizeof(T))) {
    throw InvalidArgument("grid " + extents_string({width, height}) + " has more nodes than memory can address");
  }
  const std::uint64_t bytes = nodes * sizeof(T);
  const auto mib = [](std::uint64_t b) { return std::to_string((b + (1u << 20) - 1) >> 20) + " MiB"; };
  if (bytes > device.max_alloc_bytes || 2 * bytes > device.global_mem_bytes) {
    throw OutOfDeviceMemory("a " + extents_string({width, height}) + " grid of " + type_name<T>() +
                            " needs two device buffers of " + mib(bytes) + " each, but " + device.label() +
                            " allows " + mib(device.max_alloc_bytes) + " per buffer and has " +
                            mib(device.global_mem_bytes) + " in all: make the grid smaller or choose a "
                            "device with more memory");
  }
}

template <class T>
InDeviceHeat2D<T>::InDeviceHeat2D(const Context& context, const Grid<T>& initial, double alpha)
    : context_(context), width_(initial.width()), height_(initial.height()), pitch_(0),
      coefficients_(heat_coefficients<T>(alpha, 2)) {
  require_2d_interior(initial.extents(), "the in-device heat solver");
  const DeviceInfo& device = context.device();
  if (std::is_same_v<T, double> && !device.fp64) {
    throw UnsupportedFeature(device.label() + " has no double precision (cl_khr_fp64): use single "
                             "precision (--precision f32) or a device with fp64 (--device fp64)");
  }
  check_fits(device, width_, height_);
  require_finite(initial, "initial field");

  pitch_ = row_pitch<T>(device, width_);
  const std::size_t nodes = pitch_ * height_;
  current_ = DeviceBuffer<T>(context, nodes, "heat grid");
  next_ = DeviceBuffer<T>(context, nodes, "second heat grid");
  const std::vector<T> staged = pitch_ == width_ ? std::vector<T>() : pitched_rows(initial, pitch_);
  const T* source = pitch_ == width_ ? initial.data() : staged.data();
  copy_to_device(context.upload_queue(), source, current_);
  copy_to_device(context.upload_queue(), source, next_);

  kernel_ = context.kernel(context.program("heat2d", BuildOptions().real_type<T>().str()), "heat2d_step");
  check(kernel_.setArg(2, static_cast<cl_uint>(width_)), "clSetKernelArg", "setting the grid width");
  check(kernel_.setArg(3, static_cast<cl_uint>(height_)), "clSetKernelArg", "setting the grid height");
  check(kernel_.setArg(4, static_cast<cl_uint>(pitch_)), "clSetKernelArg", "setting the row pitch");
  check(kernel_.setArg(5, coefficients_.a), "clSetKernelArg", "setting A");
  check(kernel_.setArg(6, coefficients_.b), "clSetKernelArg", "setting B");

  // Work-groups of up to 256 work-items, rows of 32 (a whole warp or a CPU vector multiple).
  cl_int err = CL_SUCCESS;
  const std::size_t kernel_limit = kernel_.getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(device.device, &err);
  check(err, "clGetKernelWorkGroupInfo", "asking for the step kernel's work-group limit");
  const std::size_t limit = std::min<std::size_t>(256, kernel_limit);
  const std::size_t lx = std::min(limit, round_up(32, context.preferred_work_group_multiple()));
  const std::size_t ly = std::max<std::size_t>(1, limit / lx);
  local_ = cl::NDRange(lx, ly);
  global_ = cl::NDRange(round_up(width_ - 2, lx), round_up(height_ - 2, ly));
}

template <class T>
StepTiming InDeviceHeat2D<T>::advance(std::size_t steps) {
  StepTiming timing;
  timing.steps = steps;
  if (steps == 0) return timing;
  cl::CommandQueue& queue = context_.compute_queue();
  // Long runs wait now and then for the batch before last, so that the driver never holds more
  // than about 2 x kBatch launches (and their memory) while the device stays busy.
  constexpr std::size_t kBatch = 256;
  cl::Event first, last, batch_end;
  const auto start = std::chrono::steady_clock::now();
  for (std::size_t step = 0; step < steps; ++step) {
    check(kernel_.setArg(0, current_.get()), "clSetKernelArg", "setting the input grid");
    check(kernel_.setArg(1, next_.get()), "clSetKernelArg", "setting the output grid");
    check(queue.enqueueNDRangeKernel(kernel_, cl::NullRange, global_, local_, nullptr, &last),
          "clEnqueueNDRangeKernel", "running heat2d_step");
    if (step == 0) first = last;
    std::swap(current_, next_);
    if ((step + 1) % kBatch == 0) {
      if (batch_end() != nullptr) check(batch_end.wait(), "clWaitForEvents", "running the heat steps");
      batch_end = last;
    }
  }
  check(queue.finish(), "clFinish", "running the heat steps");
  timing.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (context_.device().profiling) timing.device_seconds = profiled_seconds(first, last);
  steps_done_ += steps;
  return timing;
}

template <class T>
Grid<T> InDeviceHeat2D<T>::read() {
  Grid<T> field({width_, height_});
  if (pitch_ == width_) {
    copy_to_host(context_.download_queue(), current_, field.data());
    return field;
  }
  std::vector<T> rows(current_.size());
  copy_to_host(context_.download_queue(), current_, rows.data());
  for (std::size_t y = 0; y < height_; ++y) {
    std::copy_n(rows.data() + y * pitch_, width_, field.data() + y * width_);
  }
  return field;
}

template struct HeatCoefficients<float>;
template struct HeatCoefficients<double>;
template HeatCoefficients<float> heat_coefficients<float>(double, std::size_t);
template HeatCoefficients<double> heat_coefficients<double>(double, std::size_t);
template void heat_steps_reference<float>(Grid<float>&, double, std::size_t);
template void heat_steps_reference<double>(Grid<double>&, double, std::size_t);
template Grid<float> heat_mode_field<float>(std::size_t, std::size_t);
template Grid<double> heat_mode_field<double>(std::size_t, std::size_t);
template void require_finite<float>(const Grid<float>&, const char*);
template void require_finite<double>(const Grid<double>&, const char*);
template class InDeviceHeat2D<float>;
template class InDeviceHeat2D<double>;

}  // namespace ziggurat
