#pragma once
// Planning a wave run split over several devices or ranks (solver/wave.hpp): the blocks' shares
// from each device's measured copy bandwidth (the step is bound by memory traffic), and the halo
// depth s from the measured transfer latencies. Nothing is measured here.
//
// The model of one step of an inner block (two neighbours) when halos go every s steps:
//   t(s) = X(s) / s + (N_b + H (s - 1)) v / B + 3 launches,
//   X(s) = for each of the 2 exchanged layers and 2 neighbours, a download and an upload of s H
//          values through host memory: 4 (L_down + L_up) + 4 s H b (1 / B_down + 1 / B_up),
// N_b the block's DOFs, H the band's half-width, b the bytes of a value, v the bytes a DOF moves
// in a step ((diagonals + 5) values), B the device's copy bandwidth, L and B_down/B_up the pinned
// transfer fits (pageable on a device that shares host memory, where the solver's buffers are
// ordinary memory). The
// transfer volume per step does not depend on s; deeper halos trade the latencies (once per s
// steps) against recomputing H (s - 1) DOFs a step on average.

#include <cstddef>
#include <vector>

#include "ziggurat/matrix/elastic_grid.hpp"
#include "ziggurat/tuning/device_profile.hpp"

namespace ziggurat::wave {

/// The modelled seconds per step of `system` cut into `blocks` blocks exchanging halos every `s`
/// steps, with the constants of `profile` (an inner block's; one block exchanges nothing).
template <class T>
double modelled_step_seconds(const DeviceProfile& profile, const WaveSystem<T>& system, std::size_t blocks,
                             std::size_t s);

/// The s in 1 .. 64 (each block still holding more DOFs than its halo) of the smallest
/// modelled_step_seconds(); 1 for one block, or for a profile without a copy bandwidth.
template <class T>
std::size_t plan_halo_steps(const DeviceProfile& profile, const WaveSystem<T>& system, std::size_t blocks);

/// Each device's share of the DOFs: its measured copy bandwidth (equal profiles give equal shares).
std::vector<double> block_weights(const std::vector<DeviceProfile>& profiles);

}  // namespace ziggurat::wave
