#pragma once
// The analytic model of temporal blocking on chip (issue 16): a kernel that advances its tile T
// steps a launch moves the grid through device memory once a launch instead of once a step, and
// computes the tile's margins again (T nodes on each blocked side: the on-chip pyramid). A node
// and step then costs the larger of its memory time and its on-chip time,
//
//   t(T) = max(stream_ns / T, update_ns * redundancy(T)),
//
// stream_ns: a single step's memory time a node (a value read and one written, at the copy
// bandwidth); update_ns: one node update on chip (arithmetic, local-memory traffic, barriers),
// which only a measurement gives (fit_update_ns); redundancy(T): nodes computed a node owned.
// What it leaves out: past some depth the kernels' register queues (T values a step) spill and
// the rate falls (bench/results/2026-11-25-h100-heat-blocked.md), so the depth a run uses is
// measured (tuning/blocking_autotune.hpp); the model says why blocking pays and where it stops.

#include <cstddef>
#include <utility>
#include <vector>

namespace ziggurat::model {

/// The blocked side(s) of ziggurat's blocked kernels' tiles on a GPU: 256 columns a work-group in
/// 1D and 2D, 32 x 32 nodes in 3D (lib/ops/heat_blocked.cpp chooses them per device).
std::vector<std::size_t> blocked_kernel_tile(std::size_t dims);

/// The deepest depth up to `most` at which every side of `tile` still owns a node (side > 2T); 0
/// when none does.
std::size_t blocked_deepest(const std::vector<std::size_t>& tile, std::size_t most);

/// Nodes a tile computes for each one it owns at depth T: the product over its blocked axes of
/// tile / (tile - 2T). Throws InvalidArgument when a side owns nothing (tile <= 2T) or is empty.
double blocked_redundancy(const std::vector<std::size_t>& tile, std::size_t depth);

/// t(T) above, ns a node and step. Throws InvalidArgument for depth 0 or negative times.
double blocked_ns_per_node(double stream_ns, double update_ns, double redundancy, std::size_t depth);

/// The on-chip time of one node update that the measured rates `measured` (depth, ns a node and
/// step) bound from above: the least measured / redundancy over the depths at which the memory
/// term stream_ns / T is below the measured time (where the kernel computes longer than it
/// streams). Throws InvalidArgument when no measurement is such.
double fit_update_ns(const std::vector<std::pair<std::size_t, double>>& measured, double stream_ns,
                     const std::vector<std::size_t>& tile);

/// The depth at which the memory term falls to the on-chip one: beyond it blocking gains nothing
/// (the model's best depth; ties go to the smaller depth). `most` bounds the search.
std::size_t blocked_best_depth(double stream_ns, double update_ns, const std::vector<std::size_t>& tile,
                               std::size_t most);

}  // namespace ziggurat::model
