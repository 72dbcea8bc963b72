#include "ziggurat/solver/wave.hpp"

#include <algorithm>
#include <chrono>
#include <numeric>
#include <string>

#include "ops/stream.hpp"
#include "solver/pass_runner.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/base/memory.hpp"

namespace ziggurat::wave {

namespace {

constexpr std::size_t kRecordChunk = 256;  // steps recorded on the device between downloads
constexpr std::size_t kAlign = 16;         // DOFs: a block starts 64-byte aligned in its buffer

std::size_t align_down(std::size_t v) { return v / kAlign * kAlign; }
std::size_t align_up(std::size_t v) { return (v + kAlign - 1) / kAlign * kAlign; }

// Block starts: the weights' shares of n, at multiples of kAlign.
std::vector<std::size_t> block_starts(std::size_t n, std::vector<double> weights, std::size_t parts) {
  if (weights.empty()) weights.assign(parts, 1.0);
  if (weights.size() != parts)
    throw InvalidArgument("the split has " + std::to_string(weights.size()) + " weights for " + std::to_string(parts) +
                          " devices: give one a device");
  for (const double w : weights)
    if (!(w > 0)) throw InvalidArgument("the split's weights must be positive");
  const double total = std::accumulate(weights.begin(), weights.end(), 0.0);
  std::vector<std::size_t> starts{0};
  double sum = 0;
  for (std::size_t p = 0; p + 1 < parts; ++p) {
    sum += weights[p];
    starts.push_back(align_down(static_cast<std::size_t>(double(n) * sum / total)));
  }
  starts.push_back(n);
  return starts;
}

}  // namespace

// One device's block: it owns [owned.first, owned.end()) and stores `stored` (the block and its halos).
template <class T>
struct WavePart {
  Context context;
  DofRange owned, stored;
  WaveStep<T> step;
  DeviceBuffer<T> layers[3];
  std::vector<std::size_t> receiver_slots;  // the global receiver DOF index of each it records
  DeviceBuffer<T> recorded;

  WavePart(const Context& c, const WaveSystem<T>& system, const PointSource& source, DofRange own, DofRange store,
           const std::optional<WaveWalk>& walk)
      : context(c), owned(own), stored(store), step(c, system, source, store, 0, walk) {
    for (DeviceBuffer<T>& layer : layers) {  // the medium at rest
      layer = DeviceBuffer<T>(c, stored.count, "wave field layer");
      detail::enqueue_zero(c, c.compute_queue(), layer.get(), layer.bytes());
    }
  }

  void set_receivers(const std::vector<std::uint32_t>& dofs) {
    std::vector<std::uint32_t> local;
    for (std::size_t r = 0; r < dofs.size(); ++r)
      if (dofs[r] >= owned.first && dofs[r] < owned.end()) {
        local.push_back(static_cast<std::uint32_t>(dofs[r] - stored.first));
        receiver_slots.push_back(r);
      }
    step.set_receivers(local);
    recorded = DeviceBuffer<T>(context, std::max<std::size_t>(kRecordChunk * local.size(), 1), "seismogram chunk");
  }

  // The local positions step j of s computes: the block and (s - 1 - j) bands each side.
  DofRange computed(std::size_t j, std::size_t s, std::size_t band, std::size_t n) const {
    const std::size_t reach = (s - 1 - j) * band;
    const std::size_t first = owned.first >= reach ? owned.first - reach : 0;
    const std::size_t end = std::min(n, owned.end() + reach);
    return {first - stored.first, end - first};
  }

  // The local positions whose step reads no halo value: the block less a band on each side that
  // has a halo.
  DofRange interior(std::size_t band) const {
    const std::size_t first = owned.first + (stored.first < owned.first ? band : 0);
    const std::size_t end = std::max(first, owned.end() - (stored.end() > owned.end() ? std::min(band, owned.count) : 0));
    return {first - stored.first, end - first};
  }
};

template <class T>
struct WaveSolver<T>::Impl {
  WaveSystem<T> system;
  double frequency;
  std::size_t halo_steps, band;
  std::vector<std::unique_ptr<WavePart<T>>> parts;
  int previous = 0, current = 1;  // the third layer is the next
  std::size_t done = 0;
  std::size_t receiver_dofs = 0;
  // The global split: every block's owned and stored DOFs; parts[i] is block first_block + i.
  std::vector<DofRange> owned, stored;
  std::size_t first_block = 0;
  HaloTransport* transport = nullptr;

  int next() const { return 3 - previous - current; }
  bool local(std::size_t block) const { return block >= first_block && block < first_block + parts.size(); }

  // A halo exchange in flight: the values of the two current layers each local block owns and
  // another needs, downloaded to host memory, sent and received, and uploaded where they belong.
  struct Transfer {
    std::size_t from, to, first, count;  // blocks, and the global DOFs [first, first + count)
    int layer;
    detail::HostLayer<T> data;  // page-locked where the runtime gives it: transfers at bus speed
    std::size_t bytes() const { return count * sizeof(T); }
  };
  std::vector<Transfer> transfers;  // the same list every exchange; the buffers live between them
  std::vector<cl::Event> downloads, uploads;

  void list_transfers() {
    for (std::size_t to = 0; to < owned.size(); ++to)
      for (std::size_t from = 0; from < owned.size(); ++from) {
        const std::size_t first = std::max(stored[to].first, owned[from].first);
        const std::size_t end = std::min(stored[to].end(), owned[from].end());
        if (from == to || first >= end || (!local(to) && !local(from))) continue;
        const Context& host = parts[(local(to) ? to : from) - first_block]->context;  // the side that copies
        for (const int layer : {0, 1})
          transfers.push_back({from, to, first, end - first, layer, detail::HostLayer<T>(host, end - first)});
      }
  }

  // Layer 0 of a transfer is the previous time layer, 1 the current one.
  int layer_of(const Transfer& t) const { return t.layer == 0 ? previous : current; }

  // Downloads what the local blocks send, once each block's earlier steps are done and the last
  // exchange's uploads have left the host buffers (other devices' queues do not wait for them);
  // returns at once.
  void start_exchange() {
    for (const cl::Event& u : uploads) check(u.wait(), "clWaitForEvents", "uploading the halos");
    uploads.clear();
    downloads.clear();
    std::vector<cl::Event> stepped(parts.size());
    for (std::size_t p = 0; p < parts.size(); ++p)
      check(parts[p]->context.compute_queue().enqueueMarkerWithWaitList(nullptr, &stepped[p]), "clEnqueueMarker",
            "a halo exchange");
    for (Transfer& t : transfers) {
      if (!local(t.from)) continue;
      const WavePart<T>& part = *parts[t.from - first_block];
      const std::vector<cl::Event> after{stepped[t.from - first_block]};
      check(part.context.download_queue().enqueueReadBuffer(part.layers[layer_of(t)].get(), CL_FALSE,
                                                           (t.first - part.stored.first) * sizeof(T),
                                                           t.bytes(), t.data.data(), &after,
                                                           &downloads.emplace_back()),
            "clEnqueueReadBuffer", "downloading a halo");
    }
    for (auto& part : parts) check(part->context.download_queue().flush(), "clFlush", "a halo exchange");
  }

  // Waits for the downloads, moves the halos between processes, and uploads every local block's
  // arrivals; returns each local block's upload events.
  std::vector<std::vector<cl::Event>> finish_exchange() {
    for (const cl::Event& d : downloads) check(d.wait(), "clWaitForEvents", "downloading the halos");  // contexts differ
    std::vector<HaloTransport::Send> sends;
    std::vector<HaloTransport::Receive> receives;
    for (Transfer& t : transfers) {
      if (local(t.from) && !local(t.to)) sends.push_back({t.to, t.data.data(), t.bytes(), t.layer});
      if (!local(t.from)) receives.push_back({t.from, t.data.data(), t.bytes(), t.layer});
    }
    if (!sends.empty() || !receives.empty()) transport->exchange(sends, receives);
    std::vector<std::vector<cl::Event>> arrived(parts.size());
    for (Transfer& t : transfers) {
      if (!local(t.to)) continue;
      WavePart<T>& part = *parts[t.to - first_block];
      check(part.context.upload_queue().enqueueWriteBuffer(part.layers[layer_of(t)].get(), CL_FALSE,
                                                          (t.first - part.stored.first) * sizeof(T),
                                                          t.bytes(), t.data.data(), nullptr,
                                                          &arrived[t.to - first_block].emplace_back()),
            "clEnqueueWriteBuffer", "uploading a halo");
      uploads.push_back(arrived[t.to - first_block].back());
    }
    for (auto& part : parts) check(part->context.upload_queue().flush(), "clFlush", "a halo exchange");
    return arrived;
  }

  // Step j of s on every local block. At j = 0 the halos are exchanged while each block computes
  // the positions that read none (its interior), then the rest once its halos have arrived.
  void step(std::size_t j, std::size_t s, double amplitude, std::size_t recorded_at) {
    const std::size_t n = system.dofs();
    const bool exchange = j == 0 && owned.size() > 1;
    if (exchange) start_exchange();
    const auto recording = [&](WavePart<T>& part) {
      return Recording{part.recorded.get(), recorded_at * part.receiver_slots.size()};
    };
    std::vector<DofRange> rest(2 * parts.size());  // the two parts of each block left for after the halos
    for (std::size_t p = 0; p < parts.size(); ++p) {
      WavePart<T>& part = *parts[p];
      const DofRange all = part.computed(j, s, band, n);
      const cl::Buffer &u1 = part.layers[previous].get(), &u2 = part.layers[current].get(),
                       &u3 = part.layers[next()].get();
      if (!exchange) {
        part.step.update(u1, u2, u3, all, amplitude, recording(part));
        part.step.finish(u3, amplitude, recording(part));
      } else {
        const DofRange inner = part.interior(band);
        part.step.update(u1, u2, u3, inner, amplitude, recording(part));
        rest[2 * p] = {all.first, inner.first - all.first};
        rest[2 * p + 1] = {inner.end(), all.end() - inner.end()};
      }
      check(part.context.compute_queue().flush(), "clFlush", "wave steps");
    }
    if (!exchange) return;
    const std::vector<std::vector<cl::Event>> arrived = finish_exchange();
    for (std::size_t p = 0; p < parts.size(); ++p) {
      WavePart<T>& part = *parts[p];
      const cl::Buffer &u1 = part.layers[previous].get(), &u2 = part.layers[current].get(),
                       &u3 = part.layers[next()].get();
      part.step.update(u1, u2, u3, rest[2 * p], amplitude, recording(part), arrived[p]);
      part.step.update(u1, u2, u3, rest[2 * p + 1], amplitude, recording(part), arrived[p]);
      part.step.finish(u3, amplitude, recording(part));
      check(part.context.compute_queue().flush(), "clFlush", "wave steps");
    }
  }

  // Copies each part's recorded chunk (steps x its receiver DOFs) into the seismograms
  // (receivers x steps x components).
  void collect(std::size_t first, std::size_t count, std::size_t total, std::vector<T>& out) {
    for (auto& part : parts) {
      const std::size_t mine = part->receiver_slots.size();
      if (mine == 0) continue;
      std::vector<T> chunk(count * mine);
      detail::read_buffer(part->context.compute_queue(), part->recorded.get(), chunk.data(), chunk.size() * sizeof(T));
      for (std::size_t s = 0; s < count; ++s)
        for (std::size_t r = 0; r < mine; ++r) {
          const std::size_t slot = part->receiver_slots[r], c = system.dims;  // receiver slot / c, component slot % c
          out[((slot / c) * total + first + s) * c + slot % c] = chunk[s * mine + r];
        }
    }
  }

  std::vector<T> gather(int layer) const {
    std::vector<T> u(system.dofs());
    for (const auto& part : parts)
      detail::read_buffer(part->context.compute_queue(), part->layers[layer].get(), u.data() + part->owned.first,
                          part->owned.count * sizeof(T), (part->owned.first - part->stored.first) * sizeof(T));
    return u;
  }
};

template <class T>
WaveSolver<T>::WaveSolver(const std::vector<Context>& devices, WaveSystem<T> system, PointSource source,
                          double frequency, const std::vector<GridNode>& receivers, WaveSplit split) {
  if (devices.empty()) throw InvalidArgument("a wave solver needs at least one device");
  if (!(frequency > 0)) throw InvalidArgument("the source's peak frequency must be positive");
  if (split.halo_steps == 0) throw InvalidArgument("halos are exchanged every s >= 1 steps, not 0");
  std::vector<std::uint32_t> dofs;
  for (std::size_t r = 0; r < receivers.size(); ++r) {
    const GridNode& node = receivers[r];
    check_node(system, node, "receiver " + std::to_string(r));
    const std::size_t first = system.dims * system.node(node);
    for (std::size_t c = 0; c < system.dims; ++c) dofs.push_back(static_cast<std::uint32_t>(first + c));
  }
  auto im = std::make_unique<Impl>();
  im->frequency = frequency;
  im->halo_steps = split.halo_steps;
  im->band = static_cast<std::size_t>(system.k1.offsets.back());
  im->receiver_dofs = dofs.size();
  const std::size_t n = system.dofs(), halo = split.halo_steps * im->band;
  const std::size_t blocks = split.blocks == 0 ? devices.size() : split.blocks;
  if (split.first_block + devices.size() > blocks)
    throw InvalidArgument("blocks " + std::to_string(split.first_block) + " to " +
                          std::to_string(split.first_block + devices.size() - 1) + " do not exist in a split of " +
                          std::to_string(blocks));
  if (blocks > devices.size() && split.transport == nullptr)
    throw InvalidArgument("a split with blocks in other processes needs a halo transport");
  const std::vector<std::size_t> starts = block_starts(n, split.weights, blocks);
  for (std::size_t b = 0; b < blocks; ++b) {
    const DofRange owned{starts[b], starts[b + 1] - starts[b]};
    if (blocks > 1 && owned.count < halo + kAlign)
      throw InvalidArgument("block " + std::to_string(b) + " of " + std::to_string(owned.count) +
                            " DOFs is smaller than its halo of " + std::to_string(halo) +
                            ": use fewer devices or ranks, a smaller --halo-steps, or a larger grid");
    const std::size_t first = owned.first >= halo ? align_down(owned.first - halo) : 0;
    im->owned.push_back(owned);
    im->stored.push_back({first, std::min(n, align_up(owned.end() + halo)) - first});
  }
  im->first_block = split.first_block;
  im->transport = split.transport;
  for (std::size_t p = 0; p < devices.size(); ++p) {
    const std::size_t b = split.first_block + p;
    im->parts.push_back(std::make_unique<WavePart<T>>(devices[p], system, source, im->owned[b], im->stored[b], split.walk));
    im->parts.back()->set_receivers(dofs);
  }
  im->system = std::move(system);
  im->list_transfers();
  impl_ = std::move(im);
}

template <class T>
WaveSolver<T>::WaveSolver(const Context& context, WaveSystem<T> system, PointSource source, double frequency,
                          const std::vector<GridNode>& receivers)
    : WaveSolver(std::vector<Context>{context}, std::move(system), std::move(source), frequency, receivers) {}

template <class T>
WaveSolver<T>::~WaveSolver() = default;

template <class T>
WaveRun<T> WaveSolver<T>::run(std::size_t steps, const std::function<void(const WaveProgress&)>& progress) {
  Impl& im = *impl_;
  const auto start = std::chrono::steady_clock::now();
  WaveRun<T> result;
  result.steps = steps;
  result.components = im.system.dims;
  result.receivers = im.receiver_dofs / im.system.dims;
  result.seismograms.assign(im.receiver_dofs * steps, T(0));
  const std::size_t s_steps = im.owned.size() > 1 ? im.halo_steps : 1;
  std::size_t chunk_first = 0;
  for (std::size_t s = 0; s < steps; ++s) {
    const double amplitude = ricker(double(im.done) * im.system.dt, im.frequency);  // at u2's time
    im.step(im.done % s_steps, s_steps, amplitude, s - chunk_first);
    const int next = im.next();
    im.previous = im.current;
    im.current = next;
    ++im.done;
    if (s + 1 - chunk_first == kRecordChunk || s + 1 == steps) {
      im.collect(chunk_first, s + 1 - chunk_first, steps, result.seismograms);
      chunk_first = s + 1;
      if (progress)
        progress({s + 1, steps, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()});
    }
  }
  for (auto& part : im.parts)
    for (cl::CommandQueue* queue : {&part->context.compute_queue(), &part->context.upload_queue()})
      check(queue->finish(), "clFinish", "wave steps");
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.nodes_per_second = result.seconds > 0 ? double(im.system.nodes()) * double(steps) / result.seconds : 0;
  return result;
}

template <class T>
std::vector<T> WaveSolver<T>::previous() const { return impl_->gather(impl_->previous); }

template <class T>
std::vector<T> WaveSolver<T>::current() const { return impl_->gather(impl_->current); }

template <class T>
std::size_t WaveSolver<T>::steps_done() const noexcept { return impl_->done; }

template <class T>
void WaveSolver<T>::restore(const std::vector<T>& previous, const std::vector<T>& current, std::size_t steps_done) {
  Impl& im = *impl_;
  for (const std::vector<T>* u : {&previous, &current})
    if (u->size() != im.system.dofs())
      throw InvalidArgument("a wave state of " + std::to_string(u->size()) + " values cannot start a system of " +
                            std::to_string(im.system.dofs()) + " DOFs: it comes from another grid");
  // Each block's halos too: whatever step of the s between exchanges comes next finds them valid.
  for (auto& part : im.parts)
    for (const auto& [layer, u] : {std::pair{im.previous, &previous}, std::pair{im.current, &current}})
      detail::write_buffer(part->context.compute_queue(), part->layers[layer].get(), u->data() + part->stored.first,
                           part->stored.count * sizeof(T));
  im.done = steps_done;
}

template <class T>
const WaveSystem<T>& WaveSolver<T>::system() const noexcept { return impl_->system; }

template <class T>
std::vector<DofRange> WaveSolver<T>::blocks() const {
  std::vector<DofRange> blocks;
  for (const auto& part : impl_->parts) blocks.push_back(part->owned);
  return blocks;
}

template class WaveSolver<float>;
template class WaveSolver<double>;

}  // namespace ziggurat::wave
