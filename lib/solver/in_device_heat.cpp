#include "ziggurat/solver/in_device_heat.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>

#include "ops/heat_blocked.hpp"
#include "ops/heat_stencil.hpp"
#include "solver/timed_steps.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/base/memory.hpp"
#include "ziggurat/base/precision.hpp"

namespace ziggurat {

namespace {

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

template <class T>
struct InDeviceHeat<T>::Impl {
  Context context;
  std::vector<std::size_t> extents;
  detail::BufferShape shape;
  HeatCoefficients<T> coefficients;
  DeviceBuffer<T> current, next;
  std::optional<detail::HeatBoxStep<T>> aligned;
  std::optional<detail::NaiveHeatStep<T>> naive;
  std::optional<detail::HeatBlockedStep<T>> blocked;
  std::size_t steps_done = 0;

  detail::Box interior() const;
  // One launch of `steps` steps (1 unless blocked).
  void enqueue_launch(std::size_t steps, cl::Event& done);
};

template <class T>
std::uint64_t InDeviceHeat<T>::buffer_bytes(const DeviceInfo& device, const std::vector<std::size_t>& extents) {
  require_heat_grid(extents, "the in-device heat solver");
  const std::size_t pitch = detail::grid_pitch(device, sizeof(T), extents.size(), extents[0]);
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
  const std::uint64_t pitch = detail::grid_pitch(device, sizeof(T), extents.size(), extents[0]);
  const bool too_large = pitch > kIndexLimit || rows_of(extents) > kIndexLimit ||
                         (extents.size() == 3 && pitch * extents[1] > kIndexLimit);
  if (too_large) {
    throw InvalidArgument("grid " + extents_string(extents) + " is too large for the heat kernels, which index "
                          "rows, columns and planes with 32-bit integers");
  }
  check_device_buffers(device, 2, bytes, "a " + extents_string(extents) + " grid of " + type_name<T>(),
                       "make the grid smaller, choose a device with more memory, or solve it out of core (HeatSolver, "
                       "solver/heat_pyramid.hpp)");
}

template <class T>
InDeviceHeat<T>::InDeviceHeat(const Context& context, const Grid<T>& initial, double alpha, StepKernel kernel,
                              std::size_t depth, const BlockedGroup& group)
    : impl_(std::make_unique<Impl>(Impl{context, initial.extents(), {}, heat_coefficients<T>(alpha, initial.dims()),
                                        {}, {}, std::nullopt, std::nullopt, std::nullopt, 0})) {
  require_heat_grid(initial.extents(), "the in-device heat solver");
  const DeviceInfo& device = context.device();
  require_precision<T>(device, "the in-device heat solver");
  if (kernel == StepKernel::naive && initial.dims() != 2) {
    throw UnsupportedFeature("the naive step kernel is 2D only; a " + std::to_string(initial.dims()) +
                             "D grid is stepped by the aligned kernels");
  }
  if ((kernel == StepKernel::blocked) != (depth > 0))
    throw InvalidArgument(kernel == StepKernel::blocked
                              ? "the blocked kernel needs its depth, the steps a launch advances (at least 1)"
                              : "only the blocked kernel takes a depth (steps a launch)");
  if (kernel != StepKernel::blocked && !group.is_default())
    throw InvalidArgument("only the blocked kernel takes a work-group (" + to_string(group) + ")");
  check_fits(device, initial.extents());
  require_finite(initial, "initial field");

  Impl& s = *impl_;
  s.shape.pitch = detail::grid_pitch(device, sizeof(T), initial.dims(), initial.width());
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
  if (kernel == StepKernel::blocked) {
    s.blocked.emplace(context, initial.dims(), s.coefficients, depth, group);
    return;
  }
  s.naive.emplace(context, initial.width(), initial.height(), s.shape.pitch, s.coefficients);
}

template <class T>
InDeviceHeat<T>::InDeviceHeat(InDeviceHeat&&) noexcept = default;
template <class T>
InDeviceHeat<T>& InDeviceHeat<T>::operator=(InDeviceHeat&&) noexcept = default;
template <class T>
InDeviceHeat<T>::~InDeviceHeat() = default;

template <class T>
detail::Box InDeviceHeat<T>::Impl::interior() const {
  detail::Box box;
  for (std::size_t axis = 0; axis < extents.size(); ++axis) box.begin[axis] = 1, box.end[axis] = extents[axis] - 1;
  return box;
}

template <class T>
void InDeviceHeat<T>::Impl::enqueue_launch(std::size_t steps, cl::Event& done) {
  cl::CommandQueue& queue = context.compute_queue();
  if (aligned) {
    aligned->enqueue(queue, current.get(), next.get(), shape, interior(), nullptr, &done);
  } else if (blocked) {
    blocked->enqueue(queue, current.get(), next.get(), shape, interior(), interior(), steps, nullptr, &done);
  } else {
    naive->enqueue(queue, current.get(), next.get(), &done);
  }
  std::swap(current, next);
}

template <class T>
StepTiming InDeviceHeat<T>::advance(std::size_t steps) {
  Impl& s = *impl_;
  const std::size_t depth = s.blocked ? s.blocked->depth() : 1;
  std::size_t enqueued = 0;
  StepTiming timing = detail::run_timed_steps(s.context, (steps + depth - 1) / depth, "running the heat steps",
                                              [&](cl::Event* first, cl::Event* last) {
                                                cl::Event done;
                                                const std::size_t n = std::min(depth, steps - enqueued);
                                                s.enqueue_launch(n, done);
                                                enqueued += n;
                                                if (first != nullptr) *first = done;
                                                if (last != nullptr) *last = done;
                                              });
  timing.steps = steps;
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

template class InDeviceHeat<float>;
template class InDeviceHeat<double>;

}  // namespace ziggurat
