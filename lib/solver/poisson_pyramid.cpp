#include "ziggurat/solver/poisson_pyramid.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>

#include "ops/poisson_blocked.hpp"
#include "ops/poisson_stencil.hpp"
#include "solver/pass_runner.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/base/host_memory.hpp"
#include "ziggurat/base/precision.hpp"
#include "ziggurat/ops/heat_scheme.hpp"
#include "ziggurat/ops/poisson_scheme.hpp"

namespace ziggurat {

namespace {

using Clock = std::chrono::steady_clock;
using detail::Box;
using detail::BufferShape;

constexpr std::size_t kDefaultIncoreCheck = 32;  // sweeps between stopping tests in core

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// Work-groups a sweep of any box inside a buffer of `extents` (x: the padded pitch) launches at
// most: one tile more on x and y than the buffer holds, for boxes that start off a tile boundary.
std::size_t most_groups(const Context& context, const std::array<std::size_t, 3>& extents) {
  const auto tile = detail::box_tile(context.device());
  return (detail::ceil_div(extents[0], tile[0]) + 1) * (detail::ceil_div(extents[1], tile[1]) + 1) * extents[2];
}

// Jacobi sweeps on each task, the last one recording its largest update; each task's update comes
// back (one value, before its field) into a ring of recent passes.
template <class T>
class JacobiTaskKernels final : public detail::TaskKernels<T> {
 public:
  // `buffer`: the nodes of a task's buffer (x: the padded pitch); `depth` sweeps a launch in
  // work-groups of `group`.
  JacobiTaskKernels(const Context& context, JacobiCoefficients<T> k, const T* rhs, const std::array<std::size_t, 3>& buffer,
                    std::size_t tasks, std::size_t depth, const BlockedGroup& group)
      : sweep_(context, k), reduce_(context), rhs_(rhs), tasks_(tasks), updates_(kRing * tasks, T(0)),
        result_(context, 2, "Jacobi task updates") {
    std::size_t partial_values = most_groups(context, buffer);
    if (depth > 1) {
      blocked_.emplace(context, k, depth, group);
      partial_values = std::max(partial_values, blocked_->most_groups(buffer));
    }
    for (auto& partial : partial_) partial = DeviceBuffer<T>(context, partial_values, "Jacobi partial updates");
  }
  std::size_t depth() const override { return blocked_ ? blocked_->depth() : 1; }
  void launch(cl::CommandQueue& queue, const cl::Buffer& in, const cl::Buffer& out,
              const std::vector<DeviceBuffer<T>>& inputs, std::size_t slot, const BufferShape& shape, const Box& box,
              const Box& interior, std::size_t sweeps, bool last, const std::vector<cl::Event>* wait,
              cl::Event* done) override {
    if (!blocked_) return step(queue, in, out, inputs, slot, shape, box, last, wait, done);
    if (!last) return blocked_->enqueue(queue, in, out, inputs[0].get(), nullptr, shape, box, interior, sweeps, wait, done);
    cl::Event swept;
    blocked_->enqueue(queue, in, out, inputs[0].get(), &partial_[slot].get(), shape, box, interior, sweeps, wait, &swept);
    const std::vector<cl::Event> after{swept};
    reduce_.enqueue(queue, partial_[slot].get(), blocked_->groups(box), result_.get(), slot, &after, done);
  }
  std::vector<const T*> inputs() const override { return {rhs_}; }
  void step(cl::CommandQueue& queue, const cl::Buffer& in, const cl::Buffer& out, const std::vector<DeviceBuffer<T>>& inputs,
            std::size_t slot, const BufferShape& shape, const Box& box, bool last, const std::vector<cl::Event>* wait,
            cl::Event* done) override {
    if (!last) return sweep_.enqueue(queue, in, out, inputs[0].get(), nullptr, shape, box, wait, done);
    cl::Event swept;
    sweep_.enqueue(queue, in, out, inputs[0].get(), &partial_[slot].get(), shape, box, wait, &swept);
    const std::vector<cl::Event> after{swept};
    reduce_.enqueue(queue, partial_[slot].get(), sweep_.groups(box), result_.get(), slot, &after, done);
  }
  void download_results(cl::CommandQueue& queue, std::size_t slot, std::size_t pass, std::size_t task,
                        const cl::Event& computed) override {
    const std::vector<cl::Event> after{computed};
    check(queue.enqueueReadBuffer(result_.get(), CL_FALSE, slot * sizeof(T), sizeof(T),
                                  &updates_[(pass % kRing) * tasks_ + task], &after, nullptr),
          "clEnqueueReadBuffer", "reading a Jacobi task's update");
  }
  // The largest update of the pass's last sweep, once its downloads are done.
  double pass_update(std::size_t pass) const {
    double most = 0;
    for (std::size_t t = 0; t < tasks_; ++t) most = larger_update(most, static_cast<double>(updates_[(pass % kRing) * tasks_ + t]));
    return most;
  }

 private:
  // Passes whose updates are kept: more than can be unretired at once (the runner keeps a few
  // tasks in flight).
  static constexpr std::size_t kRing = 8;
  detail::JacobiBoxSweep<T> sweep_;
  std::optional<detail::JacobiBlockedSweep<T>> blocked_;
  detail::MaxReduce<T> reduce_;
  const T* rhs_;
  std::size_t tasks_;
  std::vector<T> updates_;
  DeviceBuffer<T> result_;
  DeviceBuffer<T> partial_[2];  // per task slot
};

// Sweeps left to the tolerance at the decay rate between the last two tests, else to max_sweeps.
std::size_t sweeps_left(const PoissonStop& stop, std::size_t done, double update, double previous,
                        std::size_t sweeps_between) {
  const std::size_t most = stop.max_sweeps - std::min(stop.max_sweeps, done);
  // The first test has no previous one (previous is infinite): no rate yet.
  if (!(std::isfinite(previous) && previous > update && update > stop.tolerance && stop.tolerance > 0 && sweeps_between > 0)) {
    return most;
  }
  const double rate = std::pow(update / previous, 1.0 / static_cast<double>(sweeps_between));
  return std::min(most, static_cast<std::size_t>(std::ceil(std::log(stop.tolerance / update) / std::log(rate))));
}

// Follows the stopping tests of a run: the reason to stop, and the progress reports.
class StopTracker {
 public:
  StopTracker(const PoissonStop& stop, const PoissonRunOptions& options) : stop_(stop), options_(options) {}

  // Records the test after `sweeps` sweeps; returns whether to go on.
  bool record(std::size_t sweeps, double update) {
    const double previous = update_;
    const std::size_t between = sweeps - sweeps_;
    sweeps_ = sweeps;
    update_ = update;
    reason_ = !std::isfinite(update) ? PoissonReason::diverged
              : update < stop_.tolerance ? PoissonReason::converged
                                         : PoissonReason::max_sweeps;
    if (options_.progress) {
      PoissonProgress p;
      p.sweeps_done = sweeps;
      p.max_sweeps = stop_.max_sweeps;
      p.update = update;
      p.seconds = seconds_since(start_);
      p.eta_seconds = sweeps > 0 ? p.seconds / static_cast<double>(sweeps) *
                                       static_cast<double>(sweeps_left(stop_, sweeps, update, previous, between))
                                 : 0;
      options_.progress(p);
    }
    return reason_ == PoissonReason::max_sweeps && sweeps < stop_.max_sweeps;
  }
  void start() { start_ = Clock::now(); }
  double seconds() const { return seconds_since(start_); }
  PoissonReason reason() const { return reason_; }
  double update() const { return update_; }

 private:
  PoissonStop stop_;
  const PoissonRunOptions& options_;
  Clock::time_point start_ = Clock::now();
  std::size_t sweeps_ = 0;
  double update_ = std::numeric_limits<double>::infinity();
  PoissonReason reason_ = PoissonReason::max_sweeps;
};

}  // namespace

const char* to_string(PoissonReason reason) {
  switch (reason) {
    case PoissonReason::converged: return "converged";
    case PoissonReason::max_sweeps: return "max-sweeps";
    case PoissonReason::diverged: return "diverged";
  }
  return "?";
}

template <class T>
struct PoissonSolver<T>::Impl {
  Context context;
  std::vector<std::size_t> extents;
  double spacing;
  JacobiCoefficients<T> coefficients;
  std::size_t value_alignment;  // row alignment of device buffers, in values
  std::array<detail::HostLayer<T>, 2> layers;
  detail::HostLayer<T> rhs;
  std::size_t current = 0;  // the layer that holds the field
  std::size_t sweeps_done = 0;

  Impl(const Context& c, const Grid<T>& initial, const Grid<T>& f, double h)
      : context(c), extents(initial.extents()), spacing(h), coefficients(jacobi_coefficients<T>(h)),
        value_alignment(detail::row_alignment(c.device(), sizeof(T))),
        layers{detail::HostLayer<T>(c, initial.size()), detail::HostLayer<T>(c, initial.size())},
        rhs(c, f.size()) {
    for (auto& layer : layers) std::copy_n(initial.data(), initial.size(), layer.data());
    std::copy_n(f.data(), f.size(), rhs.data());
  }

  bool pinned() const { return layers[0].pinned && layers[1].pinned && rhs.pinned; }
  double interior() const {
    return static_cast<double>(extents[0] - 2) * static_cast<double>(extents[1] - 2) * static_cast<double>(extents[2] - 2);
  }
  PoissonRun incore(const PoissonStop& stop, std::size_t test_every, std::size_t depth, const BlockedGroup& group,
                    StopTracker& tracker);
  PoissonRun passes(const PoissonStop& stop, const PyramidLayout& layout, bool overlapped, std::size_t depth,
                    const BlockedGroup& group, StopTracker& tracker);
};

// In core: the field in two buffers and f in a third, rows padded; every `test_every` sweeps a test.
template <class T>
PoissonRun PoissonSolver<T>::Impl::incore(const PoissonStop& stop, std::size_t test_every, std::size_t depth,
                                          const BlockedGroup& group, StopTracker& tracker) {
  BufferShape shape;
  shape.pitch = detail::grid_pitch(context.device(), sizeof(T), 3, extents[0]);
  shape.plane = shape.pitch * extents[1];
  const std::size_t values = shape.plane * extents[2];
  DeviceBuffer<T> u[2] = {DeviceBuffer<T>(context, values, "Poisson field"), DeviceBuffer<T>(context, values, "Poisson field")};
  DeviceBuffer<T> f(context, values, "Poisson right-hand side");
  const Box interior_box{{1, 1, 1}, {extents[0] - 1, extents[1] - 1, extents[2] - 1}};
  detail::JacobiBoxSweep<T> sweep(context, coefficients);
  std::optional<detail::JacobiBlockedSweep<T>> blocked;
  if (depth > 1) blocked.emplace(context, coefficients, depth, group);
  const std::size_t groups = blocked ? blocked->groups(interior_box) : sweep.groups(interior_box);
  detail::MaxReduce<T> reduce(context);
  DeviceBuffer<T> partial(context, groups, "Jacobi partial updates"), result(context, 1, "Jacobi update");
  const std::array<cl::size_type, 3> origin{0, 0, 0}, region{extents[0] * sizeof(T), extents[1], extents[2]};
  const std::size_t row = shape.pitch * sizeof(T), slice = shape.plane * sizeof(T);
  const std::size_t host_row = extents[0] * sizeof(T), host_slice = host_row * extents[1];
  // Unpadded rows move as one contiguous transfer: the fastest kind, and the only kind whose data
  // Oclgrind 21.10's uninitialised-value check sees as written.
  const bool contiguous = shape.pitch == extents[0];
  const std::size_t bytes = values * sizeof(T);
  const auto upload = [&](const cl::Buffer& buffer, const T* host) {
    cl::CommandQueue& queue = context.compute_queue();
    check(contiguous ? queue.enqueueWriteBuffer(buffer, CL_FALSE, 0, bytes, host)
                     : queue.enqueueWriteBufferRect(buffer, CL_FALSE, origin, origin, region, row, slice, host_row,
                                                    host_slice, host),
          "clEnqueueWriteBuffer", "uploading the Poisson problem");
  };
  const auto download = [&](const cl::Buffer& buffer, T* host) {
    cl::CommandQueue& queue = context.compute_queue();
    check(contiguous ? queue.enqueueReadBuffer(buffer, CL_TRUE, 0, bytes, host)
                     : queue.enqueueReadBufferRect(buffer, CL_TRUE, origin, origin, region, row, slice, host_row,
                                                   host_slice, host),
          "clEnqueueReadBuffer", "downloading the Poisson field");
  };
  tracker.start();
  upload(u[0].get(), layers[current].data());
  upload(f.get(), rhs.data());
  // The second layer needs the boundary values: a copy on the device, not a second crossing of the bus.
  check(context.compute_queue().enqueueCopyBuffer(u[0].get(), u[1].get(), 0, 0, bytes), "clEnqueueCopyBuffer",
        "copying the Poisson field");
  PoissonRun run;
  std::size_t in = 0, done = 0;
  T update = 0;
  for (bool go_on = true; go_on;) {
    const std::size_t batch = std::min(test_every, stop.max_sweeps - done);
    // Launches of up to `depth` sweeps (one each without blocking); the last records its update.
    for (std::size_t k = 0; k < batch; in ^= 1) {
      const std::size_t n = std::min(depth, batch - k);
      k += n;
      const cl::Buffer* record = k == batch ? &partial.get() : nullptr;
      if (blocked) {
        blocked->enqueue(context.compute_queue(), u[in].get(), u[1 - in].get(), f.get(), record, shape, interior_box,
                         interior_box, n, nullptr, nullptr);
      } else {
        sweep.enqueue(context.compute_queue(), u[in].get(), u[1 - in].get(), f.get(), record, shape, interior_box,
                      nullptr, nullptr);
      }
    }
    reduce.enqueue(context.compute_queue(), partial.get(), groups, result.get(), 0, nullptr, nullptr);
    check(context.compute_queue().enqueueReadBuffer(result.get(), CL_TRUE, 0, sizeof(T), &update), "clEnqueueReadBuffer",
          "reading the Jacobi update");
    done += batch;
    ++run.passes;
    go_on = tracker.record(done, static_cast<double>(update));
  }
  download(u[in].get(), layers[1 - current].data());
  run.seconds = tracker.seconds();
  run.sweeps = done;
  run.tasks = 1;
  run.device_bytes = 3 * static_cast<std::uint64_t>(values) * sizeof(T);
  current = 1 - current;
  return run;
}

template <class T>
PoissonRun PoissonSolver<T>::Impl::passes(const PoissonStop& stop, const PyramidLayout& layout, bool overlapped,
                                          std::size_t depth, const BlockedGroup& group, StopTracker& tracker) {
  const std::size_t height = layout.height;
  const std::size_t tasks = detail::Cut(extents[2], layout.task_extent).tiles();
  const std::size_t planes = std::min(extents[2], layout.task_extent + 2 * height);
  JacobiTaskKernels<T> kernels(context, coefficients, rhs.data(),
                               {detail::grid_pitch(context.device(), sizeof(T), 3, extents[0]), extents[1], planes}, tasks,
                               depth, group);
  detail::PassRunner<T> runner(context, extents, kernels, value_alignment, layout, stop.max_sweeps, overlapped);
  PoissonRun run;
  run.device_bytes = runner.device_bytes();
  run.tasks = runner.tasks();
  context.finish();  // buffers cleared; the clock starts with the first upload
  const std::size_t start_layer = current;
  const auto on_pass = [&](std::size_t done) {
    return tracker.record(std::min(stop.max_sweeps, done * height), kernels.pass_update(done - 1));
  };
  const std::array<T*, 2> host{layers[start_layer].data(), layers[1 - start_layer].data()};
  tracker.start();
  run.passes = detail::run_passes(runner, context, host, on_pass, [&](std::size_t passes_done) {
    current = (start_layer + passes_done) % 2;
    sweeps_done += std::min(stop.max_sweeps, passes_done * height);
  });
  run.seconds = tracker.seconds();
  run.sweeps = std::min(stop.max_sweeps, run.passes * height);
  current = (start_layer + run.passes) % 2;
  return run;
}

template <class T>
PoissonSolver<T>::PoissonSolver(const Context& context, const Grid<T>& initial, const Grid<T>& rhs, double spacing) {
  require_poisson_grid(initial.extents(), "the Poisson solver");
  if (rhs.extents() != initial.extents()) {
    throw InvalidArgument("the right-hand side f is " + extents_string(rhs.extents()) + " but the grid is " +
                          extents_string(initial.extents()) + ": give f on the same grid");
  }
  jacobi_coefficients<T>(spacing);
  require_precision<T>(context.device(), "the Poisson solver");
  require_finite(initial, "initial field");
  require_finite(rhs, "right-hand side f");
  check_host_memory(3 * initial.size() * sizeof(T),
                    "the Poisson solver's two layers of grid " + extents_string(initial.extents()) + " and its right-hand side");
  impl_ = std::make_unique<Impl>(context, initial, rhs, spacing);
}

template <class T>
PoissonSolver<T>::PoissonSolver(PoissonSolver&&) noexcept = default;
template <class T>
PoissonSolver<T>& PoissonSolver<T>::operator=(PoissonSolver&&) noexcept = default;
template <class T>
PoissonSolver<T>::~PoissonSolver() = default;

template <class T>
PoissonRun PoissonSolver<T>::solve(const PoissonStop& stop, const HeatPlan& plan, const PoissonRunOptions& options) {
  Impl& s = *impl_;
  if (!(stop.tolerance >= 0)) {
    throw InvalidArgument("the tolerance must be zero (run every sweep) or positive, not " + std::to_string(stop.tolerance));
  }
  PoissonRun run;
  if (plan.depth == 0) throw InvalidArgument("a Poisson plan runs at least one sweep a launch (depth >= 1)");
  if (stop.max_sweeps > 0) {
    StopTracker tracker(stop, options);
    const bool incore = plan.layout.decomposition == Decomposition::incore;
    if (incore) {
      run = s.incore(stop, plan.layout.height > 0 ? plan.layout.height : kDefaultIncoreCheck, plan.depth, plan.group,
                     tracker);
    } else {
      if (plan.layout.decomposition != Decomposition::strip) {
        throw InvalidArgument(std::string("the Poisson solver runs in core or in strip passes, not ") +
                              to_string(plan.layout.decomposition));
      }
      validate(plan.layout, s.extents, stop.max_sweeps);
      run = s.passes(stop, plan.layout, plan.schedule == Schedule::overlapped, plan.depth, plan.group, tracker);
    }
    run.reason = tracker.reason();
    run.update = tracker.update();
  }
  run.plan = plan;
  run.pinned_host_memory = s.pinned();
  run.ns_per_node = run.sweeps > 0 ? run.seconds * 1e9 / (s.interior() * static_cast<double>(run.sweeps)) : 0;
  s.sweeps_done += run.sweeps;
  return run;
}

template <class T>
Grid<T> PoissonSolver<T>::field() const {
  const T* values = data();
  return Grid<T>(impl_->extents, std::vector<T>(values, values + checked_node_count(impl_->extents)));
}

template <class T>
const T* PoissonSolver<T>::data() const noexcept { return impl_->layers[impl_->current].data(); }

template <class T>
double PoissonSolver<T>::residual() const {
  return poisson_residual(impl_->extents, data(), impl_->rhs.data(), impl_->spacing);
}

template <class T>
double PoissonSolver<T>::spacing() const noexcept { return impl_->spacing; }
template <class T>
const std::vector<std::size_t>& PoissonSolver<T>::extents() const noexcept { return impl_->extents; }
template <class T>
std::size_t PoissonSolver<T>::sweeps_done() const noexcept { return impl_->sweeps_done; }
template <class T>
const Context& PoissonSolver<T>::context() const noexcept { return impl_->context; }
template <class T>
std::size_t PoissonSolver<T>::row_alignment() const noexcept { return impl_->value_alignment; }
template <class T>
bool PoissonSolver<T>::pinned_host_memory() const noexcept { return impl_->pinned(); }

template class PoissonSolver<float>;
template class PoissonSolver<double>;

}  // namespace ziggurat
