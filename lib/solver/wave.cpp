#include "ziggurat/solver/wave.hpp"

#include <chrono>
#include <string>

#include "ziggurat/base/error.hpp"
#include "ziggurat/base/memory.hpp"

namespace ziggurat::wave {

namespace {

constexpr std::size_t kRecordChunk = 256;  // steps recorded on the device between downloads

}  // namespace

template <class T>
struct WaveSolver<T>::Impl {
  Context context;
  WaveSystem<T> system;
  double frequency;
  WaveStep<T> step;
  DeviceBuffer<T> layers[3];
  int previous = 0, current = 1;  // the third layer is the next
  std::size_t done = 0;
  std::size_t receivers;
  DeviceBuffer<T> recorded;

  Impl(const Context& c, WaveSystem<T> s, const PointSource& source, double f, const std::vector<std::uint32_t>& dofs)
      : context(c), system(std::move(s)), frequency(f), step(c, system, source), receivers(dofs.size()) {
    for (DeviceBuffer<T>& layer : layers) {
      layer = DeviceBuffer<T>(c, system.dofs(), "wave field layer");
      const std::vector<T> zeros(system.dofs(), T(0));
      copy_to_device(c.compute_queue(), zeros.data(), layer);
    }
    step.set_receivers(dofs);
    recorded = DeviceBuffer<T>(c, std::max<std::size_t>(kRecordChunk * receivers, 1), "seismogram chunk");
  }

  int next() const { return 3 - previous - current; }

  // Copies the chunk's samples (steps x receiver DOFs) into the seismograms (receivers x steps x 2).
  void collect(std::size_t first, std::size_t count, std::size_t total, std::vector<T>& out) {
    std::vector<T> chunk(count * receivers);
    detail::read_buffer(context.compute_queue(), recorded.get(), chunk.data(), chunk.size() * sizeof(T));
    const std::size_t stations = receivers / 2;
    for (std::size_t s = 0; s < count; ++s)
      for (std::size_t r = 0; r < stations; ++r)
        for (std::size_t c = 0; c < 2; ++c)
          out[(r * total + first + s) * 2 + c] = chunk[s * receivers + 2 * r + c];
  }
};

template <class T>
WaveSolver<T>::WaveSolver(const Context& context, WaveSystem<T> system, PointSource source, double frequency,
                          const std::vector<std::size_t>& receivers) {
  if (!(frequency > 0)) throw InvalidArgument("the source's peak frequency must be positive");
  if (receivers.size() % 2 != 0) throw InvalidArgument("receivers are nodes given as (ix, iz) pairs");
  std::vector<std::uint32_t> dofs;
  for (std::size_t r = 0; r < receivers.size(); r += 2) {
    const std::size_t ix = receivers[r], iz = receivers[r + 1];
    if (ix >= system.nx || iz >= system.nz)
      throw InvalidArgument("receiver " + std::to_string(r / 2) + " at node (" + std::to_string(ix) + ", " +
                            std::to_string(iz) + ") lies outside the grid (" + std::to_string(system.nx) + " x " +
                            std::to_string(system.nz) + " nodes)");
    const auto node = static_cast<std::uint32_t>(iz * system.nx + ix);
    dofs.push_back(2 * node);
    dofs.push_back(2 * node + 1);
  }
  impl_ = std::make_unique<Impl>(context, std::move(system), source, frequency, dofs);
}

template <class T>
WaveSolver<T>::~WaveSolver() = default;

template <class T>
WaveRun<T> WaveSolver<T>::run(std::size_t steps, const std::function<void(const WaveProgress&)>& progress) {
  Impl& im = *impl_;
  const auto start = std::chrono::steady_clock::now();
  WaveRun<T> result;
  result.steps = steps;
  result.receivers = im.receivers / 2;
  result.seismograms.assign(im.receivers * steps, T(0));
  std::size_t chunk_first = 0;
  for (std::size_t s = 0; s < steps; ++s) {
    const double t = double(im.done) * im.system.dt;  // u2's time: the force acts there
    im.step.enqueue(im.layers[im.previous].get(), im.layers[im.current].get(), im.layers[im.next()].get(),
                    ricker(t, im.frequency));
    im.step.record(im.layers[im.next()].get(), im.recorded.get(), (s - chunk_first) * im.receivers);
    const int next = im.next();
    im.previous = im.current;
    im.current = next;
    ++im.done;
    if (s + 1 - chunk_first == kRecordChunk || s + 1 == steps) {
      if (im.receivers > 0) im.collect(chunk_first, s + 1 - chunk_first, steps, result.seismograms);
      check(im.context.compute_queue().finish(), "clFinish", "wave steps");
      chunk_first = s + 1;
      if (progress)
        progress({s + 1, steps, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()});
    }
  }
  check(im.context.compute_queue().finish(), "clFinish", "wave steps");
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.nodes_per_second = result.seconds > 0 ? double(im.system.nx * im.system.nz) * double(steps) / result.seconds : 0;
  return result;
}

template <class T>
std::vector<T> WaveSolver<T>::previous() const {
  std::vector<T> u(impl_->system.dofs());
  copy_to_host(impl_->context.compute_queue(), impl_->layers[impl_->previous], u.data());
  return u;
}

template <class T>
std::vector<T> WaveSolver<T>::current() const {
  std::vector<T> u(impl_->system.dofs());
  copy_to_host(impl_->context.compute_queue(), impl_->layers[impl_->current], u.data());
  return u;
}

template <class T>
std::size_t WaveSolver<T>::steps_done() const noexcept { return impl_->done; }

template <class T>
const WaveSystem<T>& WaveSolver<T>::system() const noexcept { return impl_->system; }

template class WaveSolver<float>;
template class WaveSolver<double>;

}  // namespace ziggurat::wave
