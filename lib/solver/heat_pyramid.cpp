#include "ziggurat/solver/heat_pyramid.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <optional>

#include "ops/heat_blocked.hpp"
#include "solver/pass_runner.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/base/host_memory.hpp"
#include "ziggurat/base/precision.hpp"
#include "ziggurat/ops/heat_scheme.hpp"

namespace ziggurat {

namespace {

using Clock = std::chrono::steady_clock;
using detail::Box;
using detail::BufferShape;

// The heat scheme's steps on each task: one a launch, or `depth` a launch on chip.
template <class T>
class HeatTaskKernels final : public detail::TaskKernels<T> {
 public:
  HeatTaskKernels(const Context& context, std::size_t dims, HeatCoefficients<T> coefficients, std::size_t depth,
                  const BlockedGroup& group)
      : stencil_(context, dims, coefficients) {
    if (depth > 1) blocked_.emplace(context, dims, coefficients, depth, group);
  }
  std::size_t depth() const override { return blocked_ ? blocked_->depth() : 1; }
  void step(cl::CommandQueue& queue, const cl::Buffer& in, const cl::Buffer& out, const std::vector<DeviceBuffer<T>>&,
            std::size_t, const BufferShape& shape, const Box& box, bool, const std::vector<cl::Event>* wait,
            cl::Event* done) override {
    stencil_.enqueue(queue, in, out, shape, box, wait, done);
  }
  void launch(cl::CommandQueue& queue, const cl::Buffer& in, const cl::Buffer& out,
              const std::vector<DeviceBuffer<T>>& inputs, std::size_t slot, const BufferShape& shape, const Box& box,
              const Box& interior, std::size_t steps, bool last, const std::vector<cl::Event>* wait,
              cl::Event* done) override {
    if (!blocked_) return step(queue, in, out, inputs, slot, shape, box, last, wait, done);
    blocked_->enqueue(queue, in, out, shape, box, interior, steps, wait, done);
  }

 private:
  detail::HeatBoxStep<T> stencil_;
  std::optional<detail::HeatBlockedStep<T>> blocked_;
};

}  // namespace

template <class T>
struct HeatSolver<T>::Impl {
  Context context;
  std::vector<std::size_t> extents;
  HeatCoefficients<T> coefficients;
  std::size_t value_alignment;  // row alignment of device buffers, in values
  std::array<detail::HostLayer<T>, 2> layers;
  std::size_t current = 0;  // the layer that holds the field
  std::size_t steps_done = 0;

  Impl(const Context& c, const Grid<T>& initial, double alpha)
      : context(c), extents(initial.extents()), coefficients(heat_coefficients<T>(alpha, initial.dims())),
        value_alignment(detail::row_alignment(c.device(), sizeof(T))),
        layers{detail::HostLayer<T>(c, initial.size()), detail::HostLayer<T>(c, initial.size())} {
    for (auto& layer : layers) std::copy_n(initial.data(), initial.size(), layer.data());
  }

  bool pinned() const { return layers[0].pinned.has_value() && layers[1].pinned.has_value(); }
};

template <class T>
HeatSolver<T>::HeatSolver(const Context& context, const Grid<T>& initial, double alpha) {
  require_heat_grid(initial.extents(), "the heat solver");
  heat_coefficients<T>(alpha, initial.dims());
  require_precision<T>(context.device(), "the heat solver");
  require_finite(initial, "initial field");
  check_host_memory(2 * initial.size() * sizeof(T), "the heat solver's two layers of grid " + extents_string(initial.extents()));
  impl_ = std::make_unique<Impl>(context, initial, alpha);
}

template <class T>
HeatSolver<T>::HeatSolver(HeatSolver&&) noexcept = default;
template <class T>
HeatSolver<T>& HeatSolver<T>::operator=(HeatSolver&&) noexcept = default;
template <class T>
HeatSolver<T>::~HeatSolver() = default;

template <class T>
HeatRun HeatSolver<T>::advance(std::size_t steps, const HeatPlan& plan, const HeatRunOptions& options) {
  Impl& s = *impl_;
  HeatRun run;
  run.plan = plan;
  run.steps = steps;
  run.pinned_host_memory = s.pinned();
  if (steps == 0) return run;
  validate(plan.layout, s.extents, steps);
  if (plan.depth == 0) throw InvalidArgument("a heat plan's depth (steps a launch) is at least 1");
  if (options.record_timeline && !s.context.device().profiling) {
    throw UnsupportedFeature(s.context.device().label() + " cannot profile commands, so a run's timeline cannot be recorded");
  }

  // In core is one task that owns every row, for all K steps, in one slot.
  PyramidLayout layout = plan.layout;
  const bool incore = layout.decomposition == Decomposition::incore;
  if (incore) layout = {Decomposition::strip, steps, s.extents.back() - 2};
  const bool overlapped = !incore && plan.schedule == Schedule::overlapped;
  HeatTaskKernels<T> kernels(s.context, s.extents.size(), s.coefficients, plan.depth, plan.group);
  detail::PassRunner<T> runner(s.context, s.extents, kernels, s.value_alignment, layout, steps, overlapped);
  if (options.record_timeline) runner.record_timeline();
  run.device_bytes = runner.device_bytes();
  run.tasks = runner.tasks();
  run.passes = runner.passes();
  s.context.finish();  // buffers cleared; the clock starts with the first upload

  double interior = 1;
  for (const std::size_t extent : s.extents) interior *= static_cast<double>(extent - 2);
  const std::size_t start_layer = s.current, start_steps = s.steps_done;
  const auto start = Clock::now();
  const auto on_pass = [&](std::size_t done) {
    if (!options.progress) return true;
    HeatProgress p;
    p.passes_done = done;
    p.passes = runner.passes();
    p.steps = steps;
    p.steps_done = std::min(steps, done * runner.height());
    p.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    p.nodes_per_second = p.seconds > 0 ? interior * static_cast<double>(p.steps_done) / p.seconds : 0;
    p.eta_seconds = p.steps_done > 0 ? p.seconds * static_cast<double>(steps - p.steps_done) / static_cast<double>(p.steps_done) : 0;
    options.progress(p);
    return true;
  };
  const std::array<T*, 2> host{s.layers[start_layer].data(), s.layers[1 - start_layer].data()};
  detail::run_passes(runner, s.context, host, on_pass, [&](std::size_t passes_done) {
    s.current = (start_layer + passes_done) % 2;
    s.steps_done = start_steps + std::min(steps, passes_done * runner.height());
  });
  run.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  run.ns_per_node = run.seconds * 1e9 / (interior * static_cast<double>(steps));
  s.current = (start_layer + runner.passes()) % 2;
  s.steps_done = start_steps + steps;
  if (options.record_timeline) run.timeline = runner.timeline();
  return run;
}

template <class T>
Grid<T> HeatSolver<T>::field() const {
  const T* values = data();
  return Grid<T>(impl_->extents, std::vector<T>(values, values + checked_node_count(impl_->extents)));
}

template <class T>
const T* HeatSolver<T>::data() const noexcept { return impl_->layers[impl_->current].data(); }
template <class T>
T* HeatSolver<T>::data() noexcept { return impl_->layers[impl_->current].data(); }
template <class T>
const std::vector<std::size_t>& HeatSolver<T>::extents() const noexcept { return impl_->extents; }
template <class T>
std::size_t HeatSolver<T>::steps_done() const noexcept { return impl_->steps_done; }
template <class T>
const Context& HeatSolver<T>::context() const noexcept { return impl_->context; }
template <class T>
std::size_t HeatSolver<T>::row_alignment() const noexcept { return impl_->value_alignment; }
template <class T>
bool HeatSolver<T>::pinned_host_memory() const noexcept { return impl_->pinned(); }

template class HeatSolver<float>;
template class HeatSolver<double>;

}  // namespace ziggurat
