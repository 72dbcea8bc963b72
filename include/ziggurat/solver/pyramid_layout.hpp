#pragma once
// How a grid held in host memory goes through a device (method notes, section 1): the plan the
// pyramid solver (solver/heat_pyramid.hpp) runs and the cost model (tuning/cost_model.hpp)
// predicts.
//
// Vocabulary. A grid has extents fastest axis first (W, W x H or W x H x D), boundary nodes
// included; its interior has (W-2)(H-2)(D-2) nodes. K steps run as passes of n steps (the pyramid
// height). Strips cut the slowest axis: a task owns r interior rows (planes in 3D, nodes in 1D)
// and its device buffer holds R = r + 2n of them. Blocks cut a 2D grid into b x b tiles held in
// B x B buffers, B = b + 2n. Tasks at the domain's edges need no halo beyond the boundary, so
// their regions do not shrink there. Strips move whole rows (boundary columns included) as single
// contiguous transfers; blocks move rectangular regions of the host array.

#include <cstddef>
#include <vector>

#include "ziggurat/ops/heat_scheme.hpp"

namespace ziggurat {

enum class Decomposition {
  incore,   ///< the whole grid on the device: one upload, K steps, one download
  trivial,  ///< sub-domains copied in, one step, copied back (the baseline the pyramid beats)
  strip,    ///< pyramid passes over strips of rows (planes in 3D, nodes in 1D)
  block,    ///< pyramid passes over 2D blocks, moved as rectangular regions
};

enum class Schedule {
  serial,      ///< the paper's: each task's upload, kernels and download one after another
  overlapped,  ///< uploads, kernels and downloads on three queues, two task slots
};

const char* to_string(Decomposition decomposition);
const char* to_string(Schedule schedule);

/// Decomposition, height n and task extent: the rows r a strip owns, or the side b of a block
/// (incore: unused). Trivial is a strip with n = 1.
struct PyramidLayout {
  Decomposition decomposition = Decomposition::strip;
  std::size_t height = 1;
  std::size_t task_extent = 0;
};

/// Throws InvalidArgument unless `layout` can run `steps` steps of a grid of `extents`: blocks
/// only on 2D grids, 1 <= n <= steps, a task extent of at least 1 (not for incore).
void validate(const PyramidLayout& layout, const std::vector<std::size_t>& extents, std::size_t steps);

/// What the pyramid solver runs.
struct HeatPlan {
  PyramidLayout layout;
  Schedule schedule = Schedule::overlapped;
  /// Steps a kernel launch advances with the tile on chip (1: one step a launch). A pass of
  /// height n runs as ceil(n / depth) launches, with the bits of single steps.
  std::size_t depth = 1;
  /// The blocked kernels' work-group when depth > 1 (zeros: the device's default).
  BlockedGroup group;
};

/// One task's work on one engine, in seconds since the run's first command started: its upload,
/// its kernels (boundary copy and n steps), or its download.
struct HeatTimelineEntry {
  enum class Engine { upload, compute, download };
  Engine engine = Engine::upload;
  std::size_t pass = 0, task = 0;
  double start_s = 0, end_s = 0;
};

const char* to_string(HeatTimelineEntry::Engine engine);

/// Task-sized buffers the pyramid solver keeps in device memory: two time layers per task slot
/// (ping-pong, so that no preparation kernel per step is needed), one slot in the serial schedule
/// and two in the overlapped one.
std::size_t solver_buffer_layers(Schedule schedule);

}  // namespace ziggurat
