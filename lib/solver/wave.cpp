#include "ziggurat/solver/wave.hpp"

#include <algorithm>
#include <chrono>
#include <numeric>
#include <string>
#include <tuple>

#include "ops/stream.hpp"
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

  WavePart(const Context& c, const WaveSystem<T>& system, const PointSource& source, DofRange own, DofRange store)
      : context(c), owned(own), stored(store), step(c, system, source, store) {
    for (DeviceBuffer<T>& layer : layers) {  // the medium at rest
      layer = DeviceBuffer<T>(c, stored.count, "wave field layer");
      detail::enqueue_fill<T>(c, c.compute_queue(), layer.get(), layer.size(), T(0));
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

  // The halos of the two current layers from the blocks that own them: device -> host -> device
  // between this process's blocks, through the transport from and to the others'.
  void exchange() {
    if (owned.size() < 2) return;
    std::vector<std::vector<T>> buffers;
    std::vector<HaloTransport::Send> sends;
    std::vector<HaloTransport::Receive> receives;
    // part, layer, first DOF, buffer; sends and receives point into `buffers`, whose vectors keep
    // their data where they are when `buffers` grows.
    std::vector<std::tuple<WavePart<T>*, int, std::size_t, std::size_t>> arrivals;
    for (std::size_t to = 0; to < owned.size(); ++to)
      for (std::size_t from = 0; from < owned.size(); ++from) {
        const std::size_t first = std::max(stored[to].first, owned[from].first);
        const std::size_t end = std::min(stored[to].end(), owned[from].end());
        if (from == to || first >= end || (!local(to) && !local(from))) continue;
        for (const int layer : {previous, current}) {
          const int tag = layer == previous ? 0 : 1;
          std::vector<T>& data = buffers.emplace_back(end - first);
          if (local(from)) {
            const WavePart<T>& part = *parts[from - first_block];
            detail::read_buffer(part.context.compute_queue(), part.layers[layer].get(), data.data(),
                                data.size() * sizeof(T), (first - part.stored.first) * sizeof(T));
            if (!local(to)) sends.push_back({to, data.data(), data.size() * sizeof(T), tag});
          } else {
            receives.push_back({from, data.data(), data.size() * sizeof(T), tag});
          }
          if (local(to)) arrivals.emplace_back(parts[to - first_block].get(), layer, first, buffers.size() - 1);
        }
      }
    if (!sends.empty() || !receives.empty()) transport->exchange(sends, receives);
    for (const auto& [part, layer, first, index] : arrivals)
      detail::write_buffer(part->context.compute_queue(), part->layers[layer].get(), buffers[index].data(),
                           buffers[index].size() * sizeof(T), (first - part->stored.first) * sizeof(T));
  }

  // Copies each part's recorded chunk (steps x its receivers) into the seismograms (receivers x steps x 2).
  void collect(std::size_t first, std::size_t count, std::size_t total, std::vector<T>& out) {
    for (auto& part : parts) {
      const std::size_t mine = part->receiver_slots.size();
      if (mine == 0) continue;
      std::vector<T> chunk(count * mine);
      detail::read_buffer(part->context.compute_queue(), part->recorded.get(), chunk.data(), chunk.size() * sizeof(T));
      for (std::size_t s = 0; s < count; ++s)
        for (std::size_t r = 0; r < mine; ++r) {
          const std::size_t slot = part->receiver_slots[r];  // receiver slot / 2, component slot % 2
          out[((slot / 2) * total + first + s) * 2 + slot % 2] = chunk[s * mine + r];
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
                          double frequency, const std::vector<std::size_t>& receivers, WaveSplit split) {
  if (devices.empty()) throw InvalidArgument("a wave solver needs at least one device");
  if (!(frequency > 0)) throw InvalidArgument("the source's peak frequency must be positive");
  if (split.halo_steps == 0) throw InvalidArgument("halos are exchanged every s >= 1 steps, not 0");
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
    im->parts.push_back(std::make_unique<WavePart<T>>(devices[p], system, source, im->owned[b], im->stored[b]));
    im->parts.back()->set_receivers(dofs);
  }
  im->system = std::move(system);
  impl_ = std::move(im);
}

template <class T>
WaveSolver<T>::WaveSolver(const Context& context, WaveSystem<T> system, PointSource source, double frequency,
                          const std::vector<std::size_t>& receivers)
    : WaveSolver(std::vector<Context>{context}, std::move(system), std::move(source), frequency, receivers) {}

template <class T>
WaveSolver<T>::~WaveSolver() = default;

template <class T>
WaveRun<T> WaveSolver<T>::run(std::size_t steps, const std::function<void(const WaveProgress&)>& progress) {
  Impl& im = *impl_;
  const auto start = std::chrono::steady_clock::now();
  WaveRun<T> result;
  result.steps = steps;
  result.receivers = im.receiver_dofs / 2;
  result.seismograms.assign(im.receiver_dofs * steps, T(0));
  const std::size_t n = im.system.dofs(), s_steps = im.owned.size() > 1 ? im.halo_steps : 1;
  std::size_t chunk_first = 0;
  for (std::size_t s = 0; s < steps; ++s) {
    const std::size_t j = im.done % s_steps;
    if (j == 0) im.exchange();
    const double amplitude = ricker(double(im.done) * im.system.dt, im.frequency);  // at u2's time
    for (auto& part : im.parts) {
      part->step.enqueue(part->layers[im.previous].get(), part->layers[im.current].get(),
                         part->layers[im.next()].get(), amplitude, part->computed(j, s_steps, im.band, n));
      part->step.record(part->layers[im.next()].get(), part->recorded.get(),
                        (s - chunk_first) * part->receiver_slots.size());
      check(part->context.compute_queue().flush(), "clFlush", "wave steps");
    }
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
  for (auto& part : im.parts) check(part->context.compute_queue().finish(), "clFinish", "wave steps");
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.nodes_per_second = result.seconds > 0 ? double(im.system.nx * im.system.nz) * double(steps) / result.seconds : 0;
  return result;
}

template <class T>
std::vector<T> WaveSolver<T>::previous() const { return impl_->gather(impl_->previous); }

template <class T>
std::vector<T> WaveSolver<T>::current() const { return impl_->gather(impl_->current); }

template <class T>
std::size_t WaveSolver<T>::steps_done() const noexcept { return impl_->done; }

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
