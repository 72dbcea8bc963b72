#include "ziggurat/heat.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <sstream>
#include <type_traits>

#include "ziggurat/error.hpp"
#include "ziggurat/memory.hpp"
#include "ziggurat/program.hpp"
#include "stencil.hpp"

namespace ziggurat {

namespace {

constexpr double kPi = 3.14159265358979323846;

std::size_t round_up(std::size_t value, std::size_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

// One step of the update of heat.hpp, written once for the CPU. The library is compiled with
// -ffp-contract=off so that the compiler cannot fuse the multiply-adds either.
template <class T>
void reference_step(const Grid<T>& grid, T* v, HeatCoefficients<T> k) {
  const T* u = grid.data();
  const std::size_t dims = grid.dims(), sy = grid.width(), sz = grid.width() * grid.height();
  // The interior of each axis; an axis the grid does not have is the single index 0.
  const auto first = [&](std::size_t axis) { return axis < dims ? std::size_t{1} : std::size_t{0}; };
  const auto last = [&](std::size_t axis) { return axis < dims ? grid.extent(axis) - 1 : std::size_t{1}; };
  for (std::size_t z = first(2); z < last(2); ++z) {
    for (std::size_t y = first(1); y < last(1); ++y) {
      for (std::size_t x = 1; x + 1 < grid.width(); ++x) {
        const std::size_t c = z * sz + y * sy + x;
        T sum = u[c - 1] + u[c + 1];
        if (dims >= 2) sum = (sum + u[c - sy]) + u[c + sy];
        if (dims == 3) sum = (sum + u[c - sz]) + u[c + sz];
        v[c] = k.a * sum + k.b * u[c];
      }
    }
  }
}

// The grid's rows spread to `pitch` values each (padding zero), or the grid itself when no padding
// is needed. Grids move between host and device as whole buffers: the fastest kind of transfer,
// and the only kind whose data Oclgrind 21.10's uninitialised-value check sees as written (it loses
// host writes into parts of a buffer, such as clEnqueueWriteBufferRect rows).
template <class T>
std::vector<T> pitched_rows(const Grid<T>& grid, std::size_t pitch) {
  const std::size_t rows = grid.size() / grid.width();
  std::vector<T> padded(pitch * rows, T{0});
  for (std::size_t row = 0; row < rows; ++row) {
    std::copy_n(grid.data() + row * grid.width(), grid.width(), padded.data() + row * pitch);
  }
  return padded;
}

std::size_t rows_of(const std::vector<std::size_t>& extents) {
  std::size_t rows = 1;
  for (std::size_t axis = 1; axis < extents.size(); ++axis) rows *= extents[axis];
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

void require_heat_grid(const std::vector<std::size_t>& extents, const char* who) {
  if (extents.empty() || extents.size() > 3) {
    throw InvalidArgument(std::string(who) + " needs a grid of 1 to 3 dimensions, got " +
                          std::to_string(extents.size()) + " extents");
  }
  for (const std::size_t extent : extents) {
    if (extent < 3) {
      throw InvalidArgument(std::string(who) + " needs at least 3 nodes on every axis (one interior node "
                            "between two boundary nodes), got " + extents_string(extents));
    }
  }
  checked_node_count(extents);
}

template <class T>
void heat_steps_reference(Grid<T>& grid, double alpha, std::size_t steps) {
  require_heat_grid(grid.extents(), "heat_steps_reference");
  const auto k = heat_coefficients<T>(alpha, grid.dims());
  Grid<T> next = grid;  // boundary values are the same in both grids
  for (std::size_t step = 0; step < steps; ++step) {
    reference_step(grid, next.data(), k);
    std::swap(grid, next);
  }
}

template <class T>
Grid<T> heat_mode_field(const std::vector<std::size_t>& extents) {
  require_heat_grid(extents, "heat_mode_field");
  Grid<T> grid(extents);
  const auto mode = [&](std::size_t axis, std::size_t i) {
    return axis < extents.size()
               ? std::sin(kPi * static_cast<double>(i) / static_cast<double>(extents[axis] - 1))
               : 1.0;
  };
  for (std::size_t z = 0; z < grid.depth(); ++z) {
    const double sz = mode(2, z);
    for (std::size_t y = 0; y < grid.height(); ++y) {
      const double syz = sz * mode(1, y);
      for (std::size_t x = 0; x < grid.width(); ++x) {
        const bool boundary = x == 0 || x + 1 == grid.width() || (extents.size() > 1 && (y == 0 || y + 1 == grid.height())) ||
                              (extents.size() > 2 && (z == 0 || z + 1 == grid.depth()));
        grid(x, y, z) = boundary ? T(0) : static_cast<T>(syz * mode(0, x));
      }
    }
  }
  return grid;
}

double heat_mode_decay(const std::vector<std::size_t>& extents, double alpha) {
  require_heat_grid(extents, "heat_mode_decay");
  double cosines = 0;
  for (const std::size_t extent : extents) cosines += std::cos(kPi / static_cast<double>(extent - 1));
  return 1.0 - 2.0 * static_cast<double>(extents.size()) * alpha + 2.0 * alpha * cosines;
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
struct InDeviceHeat<T>::Impl {
  Context context;
  std::vector<std::size_t> extents;
  detail::BufferShape shape;
  HeatCoefficients<T> coefficients;
  DeviceBuffer<T> current, next;
  std::optional<detail::StencilKernels<T>> aligned;
  cl::Kernel naive;  // StepKernel::naive
  cl::NDRange naive_local, naive_global;
  std::size_t steps_done = 0;

  void enqueue_step(cl::Event& done);
};

template <class T>
std::uint64_t InDeviceHeat<T>::buffer_bytes(const DeviceInfo& device, const std::vector<std::size_t>& extents) {
  require_heat_grid(extents, "the in-device heat solver");
  const std::size_t pitch = extents.size() == 1 ? extents[0] : detail::StencilKernels<T>::aligned_pitch(device, extents[0]);
  const std::size_t rows = rows_of(extents);
  if (rows > std::numeric_limits<std::size_t>::max() / pitch / sizeof(T)) {
    throw InvalidArgument("grid " + extents_string(extents) + " has more nodes than memory can address");
  }
  return static_cast<std::uint64_t>(pitch) * rows * sizeof(T);
}

template <class T>
void InDeviceHeat<T>::check_fits(const DeviceInfo& device, const std::vector<std::size_t>& extents) {
  const std::uint64_t bytes = buffer_bytes(device, extents);
  // The kernels index columns, rows, planes and the plane size with 32-bit integers, over launch
  // grids rounded up to whole work-groups (at most 256 wide).
  constexpr std::uint64_t kIndexLimit = std::numeric_limits<cl_uint>::max() - 256;
  const std::uint64_t pitch = extents.size() == 1 ? extents[0] : detail::StencilKernels<T>::aligned_pitch(device, extents[0]);
  const bool too_large = pitch > kIndexLimit || rows_of(extents) > kIndexLimit ||
                         (extents.size() == 3 && pitch * extents[1] > kIndexLimit);
  if (too_large) {
    throw InvalidArgument("grid " + extents_string(extents) + " is too large for the heat kernels, which index "
                          "rows, columns and planes with 32-bit integers");
  }
  const auto mib = [](std::uint64_t b) { return std::to_string((b + (1u << 20) - 1) >> 20) + " MiB"; };
  if (bytes > device.max_alloc_bytes || 2 * bytes > device.global_mem_bytes) {
    throw OutOfDeviceMemory("a " + extents_string(extents) + " grid of " + detail::type_name<T>() +
                            " needs two device buffers of " + mib(bytes) + " each, but " + device.label() +
                            " allows " + mib(device.max_alloc_bytes) + " per buffer and has " +
                            mib(device.global_mem_bytes) + " in all: make the grid smaller, choose a "
                            "device with more memory, or solve it out of core (heat_solver.hpp)");
  }
}

template <class T>
InDeviceHeat<T>::InDeviceHeat(const Context& context, const Grid<T>& initial, double alpha, StepKernel kernel)
    : impl_(std::make_unique<Impl>(Impl{context, initial.extents(), {}, heat_coefficients<T>(alpha, initial.dims()),
                                        {}, {}, std::nullopt, {}, {}, {}, 0})) {
  require_heat_grid(initial.extents(), "the in-device heat solver");
  const DeviceInfo& device = context.device();
  if (std::is_same_v<T, double> && !device.fp64) {
    throw UnsupportedFeature(device.label() + " has no double precision (cl_khr_fp64): use single "
                             "precision (--precision f32) or a device with fp64 (--device fp64)");
  }
  if (kernel == StepKernel::naive && initial.dims() != 2) {
    throw UnsupportedFeature("the naive step kernel is 2D only; a " + std::to_string(initial.dims()) +
                             "D grid is stepped by the aligned kernels");
  }
  check_fits(device, initial.extents());
  require_finite(initial, "initial field");

  Impl& s = *impl_;
  s.shape.pitch = initial.dims() == 1 ? initial.width() : detail::StencilKernels<T>::aligned_pitch(device, initial.width());
  s.shape.plane = s.shape.pitch * initial.height();
  const std::size_t values = s.shape.pitch * rows_of(s.extents);
  s.current = DeviceBuffer<T>(context, values, "heat grid");
  s.next = DeviceBuffer<T>(context, values, "second heat grid");
  const std::vector<T> staged = s.shape.pitch == initial.width() ? std::vector<T>() : pitched_rows(initial, s.shape.pitch);
  const T* source = staged.empty() ? initial.data() : staged.data();
  copy_to_device(context.upload_queue(), source, s.current);
  copy_to_device(context.upload_queue(), source, s.next);  // the boundary values, in both buffers

  if (kernel == StepKernel::aligned) {
    s.aligned.emplace(context, initial.dims(), s.coefficients);
    return;
  }
  s.naive = context.kernel(context.program("heat2d", BuildOptions().real_type<T>().str()), "heat2d_step");
  check(s.naive.setArg(2, static_cast<cl_uint>(initial.width())), "clSetKernelArg", "setting the grid width");
  check(s.naive.setArg(3, static_cast<cl_uint>(initial.height())), "clSetKernelArg", "setting the grid height");
  check(s.naive.setArg(4, static_cast<cl_uint>(s.shape.pitch)), "clSetKernelArg", "setting the row pitch");
  check(s.naive.setArg(5, s.coefficients.a), "clSetKernelArg", "setting A");
  check(s.naive.setArg(6, s.coefficients.b), "clSetKernelArg", "setting B");
  // Work-groups of up to 256 work-items, rows of 32 (a whole warp or a CPU vector multiple).
  cl_int err = CL_SUCCESS;
  const std::size_t kernel_limit = s.naive.template getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(device.device, &err);
  check(err, "clGetKernelWorkGroupInfo", "asking for the step kernel's work-group limit");
  const std::size_t limit = std::min<std::size_t>(256, kernel_limit);
  const std::size_t lx = std::min(limit, round_up(32, context.preferred_work_group_multiple()));
  const std::size_t ly = std::max<std::size_t>(1, limit / lx);
  s.naive_local = cl::NDRange(lx, ly);
  s.naive_global = cl::NDRange(round_up(initial.width() - 2, lx), round_up(initial.height() - 2, ly));
}

template <class T>
InDeviceHeat<T>::InDeviceHeat(InDeviceHeat&&) noexcept = default;
template <class T>
InDeviceHeat<T>& InDeviceHeat<T>::operator=(InDeviceHeat&&) noexcept = default;
template <class T>
InDeviceHeat<T>::~InDeviceHeat() = default;

template <class T>
void InDeviceHeat<T>::Impl::enqueue_step(cl::Event& done) {
  cl::CommandQueue& queue = context.compute_queue();
  if (aligned) {
    detail::Box box;
    for (std::size_t axis = 0; axis < extents.size(); ++axis) box.begin[axis] = 1, box.end[axis] = extents[axis] - 1;
    aligned->enqueue(queue, current.get(), next.get(), shape, box, nullptr, &done);
  } else {
    check(naive.setArg(0, current.get()), "clSetKernelArg", "setting the input grid");
    check(naive.setArg(1, next.get()), "clSetKernelArg", "setting the output grid");
    check(queue.enqueueNDRangeKernel(naive, cl::NullRange, naive_global, naive_local, nullptr, &done),
          "clEnqueueNDRangeKernel", "running heat2d_step");
  }
  std::swap(current, next);
}

template <class T>
StepTiming InDeviceHeat<T>::advance(std::size_t steps) {
  StepTiming timing;
  timing.steps = steps;
  if (steps == 0) return timing;
  Impl& s = *impl_;
  // Long runs wait now and then for the batch before last, so that the driver never holds more
  // than about 2 x kBatch launches (and their memory) while the device stays busy.
  constexpr std::size_t kBatch = 256;
  cl::Event first, last, batch_end;
  const auto start = std::chrono::steady_clock::now();
  for (std::size_t step = 0; step < steps; ++step) {
    s.enqueue_step(last);
    if (step == 0) first = last;
    if ((step + 1) % kBatch == 0) {
      if (batch_end() != nullptr) check(batch_end.wait(), "clWaitForEvents", "running the heat steps");
      batch_end = last;
    }
  }
  check(s.context.compute_queue().finish(), "clFinish", "running the heat steps");
  timing.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (s.context.device().profiling) timing.device_seconds = profiled_seconds(first, last);
  s.steps_done += steps;
  return timing;
}

template <class T>
Grid<T> InDeviceHeat<T>::read() {
  Impl& s = *impl_;
  Grid<T> field(s.extents);
  if (s.shape.pitch == field.width()) {
    copy_to_host(s.context.download_queue(), s.current, field.data());
    return field;
  }
  std::vector<T> rows(s.current.size());
  copy_to_host(s.context.download_queue(), s.current, rows.data());
  for (std::size_t row = 0; row < rows_of(s.extents); ++row) {
    std::copy_n(rows.data() + row * s.shape.pitch, field.width(), field.data() + row * field.width());
  }
  return field;
}

template <class T>
std::size_t InDeviceHeat<T>::steps_done() const noexcept { return impl_->steps_done; }
template <class T>
const std::vector<std::size_t>& InDeviceHeat<T>::extents() const noexcept { return impl_->extents; }
template <class T>
std::size_t InDeviceHeat<T>::pitch() const noexcept { return impl_->shape.pitch; }

template struct HeatCoefficients<float>;
template struct HeatCoefficients<double>;
template HeatCoefficients<float> heat_coefficients<float>(double, std::size_t);
template HeatCoefficients<double> heat_coefficients<double>(double, std::size_t);
template void heat_steps_reference<float>(Grid<float>&, double, std::size_t);
template void heat_steps_reference<double>(Grid<double>&, double, std::size_t);
template Grid<float> heat_mode_field<float>(const std::vector<std::size_t>&);
template Grid<double> heat_mode_field<double>(const std::vector<std::size_t>&);
template void require_finite<float>(const Grid<float>&, const char*);
template void require_finite<double>(const Grid<double>&, const char*);
template class InDeviceHeat<float>;
template class InDeviceHeat<double>;

}  // namespace ziggurat
