#include "ziggurat/tuning/wave_planner.hpp"

#include <algorithm>

#include "ziggurat/base/error.hpp"

namespace ziggurat::wave {

namespace {

constexpr std::size_t kLargestDepth = 64;  // deeper halos only add recomputation at any latency seen

}  // namespace

template <class T>
double modelled_step_seconds(const DeviceProfile& profile, const WaveSystem<T>& system, std::size_t blocks,
                             std::size_t s) {
  if (blocks == 0 || s == 0) throw InvalidArgument("a wave split has at least one block and s >= 1");
  const double band = system.k1.offsets.back(), n = double(system.dofs()) / double(blocks);
  const double bytes_per_dof = double((system.k1.offsets.size() + 5) * sizeof(T));
  const double launches = 3 * profile.launch_pipelined_s;  // step, source, receivers
  if (blocks == 1) return n * bytes_per_dof / profile.copy_bytes_per_s() + launches;
  // The solver's host buffers are page-locked unless the device shares host memory.
  const bool pinned = !profile.host_unified_memory;
  const TransferFit& down = pinned ? profile.download_pinned : profile.download_pageable;
  const TransferFit& up = pinned ? profile.upload_pinned : profile.upload_pageable;
  const double halo_bytes = double(s) * band * sizeof(T);
  const double exchange = 4 * (down.seconds(halo_bytes) + up.seconds(halo_bytes));
  return exchange / double(s) + (n + band * double(s - 1)) * bytes_per_dof / profile.copy_bytes_per_s() + launches;
}

template <class T>
std::size_t plan_halo_steps(const DeviceProfile& profile, const WaveSystem<T>& system, std::size_t blocks) {
  if (blocks <= 1 || profile.copy_bytes_per_s() <= 0) return 1;  // no bandwidth measured: nothing to trade
  const std::size_t band = static_cast<std::size_t>(system.k1.offsets.back());
  const std::size_t block = system.dofs() / blocks;
  const std::size_t largest = std::clamp<std::size_t>(block > 32 ? (block - 32) / band : 1, 1, kLargestDepth);
  std::size_t best = 1;
  for (std::size_t s = 2; s <= largest; ++s)
    if (modelled_step_seconds(profile, system, blocks, s) < modelled_step_seconds(profile, system, blocks, best)) best = s;
  return best;
}

std::vector<double> block_weights(const std::vector<DeviceProfile>& profiles) {
  std::vector<double> weights;
  for (const DeviceProfile& p : profiles) weights.push_back(p.copy_bytes_per_s() > 0 ? p.copy_bytes_per_s() : 1.0);
  return weights;
}

template double modelled_step_seconds(const DeviceProfile&, const WaveSystem<float>&, std::size_t, std::size_t);
template double modelled_step_seconds(const DeviceProfile&, const WaveSystem<double>&, std::size_t, std::size_t);
template std::size_t plan_halo_steps(const DeviceProfile&, const WaveSystem<float>&, std::size_t);
template std::size_t plan_halo_steps(const DeviceProfile&, const WaveSystem<double>&, std::size_t);

}  // namespace ziggurat::wave
