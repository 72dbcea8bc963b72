#include "ziggurat/tuning/blocking_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "ziggurat/base/error.hpp"

namespace ziggurat::model {

std::vector<std::size_t> blocked_kernel_tile(std::size_t dims) {
  return dims == 3 ? std::vector<std::size_t>{32, 32} : std::vector<std::size_t>{256};
}

std::size_t blocked_deepest(const std::vector<std::size_t>& tile, std::size_t most) {
  if (tile.empty()) return most;
  const std::size_t side = *std::min_element(tile.begin(), tile.end());
  return std::min(most, side == 0 ? 0 : (side - 1) / 2);
}

double blocked_redundancy(const std::vector<std::size_t>& tile, std::size_t depth) {
  if (tile.empty()) throw InvalidArgument("a blocked tile has at least one blocked axis");
  double redundancy = 1;
  for (const std::size_t side : tile) {
    if (side <= 2 * depth)
      throw InvalidArgument("a tile side of " + std::to_string(side) + " nodes owns nothing at depth " +
                            std::to_string(depth) + " (it re-computes " + std::to_string(depth) +
                            " nodes on each side): choose a smaller depth or a wider tile");
    redundancy *= static_cast<double>(side) / static_cast<double>(side - 2 * depth);
  }
  return redundancy;
}

double blocked_ns_per_node(double stream_ns, double update_ns, double redundancy, std::size_t depth) {
  if (depth == 0) throw InvalidArgument("a blocked kernel advances at least one step a launch");
  if (!(stream_ns > 0) || !(update_ns >= 0) || !(redundancy >= 1))
    throw InvalidArgument("the blocking model needs a positive stream time, a non-negative update time and a "
                          "redundancy of at least 1");
  return std::max(stream_ns / static_cast<double>(depth), update_ns * redundancy);
}

double fit_update_ns(const std::vector<std::pair<std::size_t, double>>& measured, double stream_ns,
                     const std::vector<std::size_t>& tile) {
  double least = std::numeric_limits<double>::infinity();
  for (const auto& [depth, ns] : measured) {
    if (depth == 0 || stream_ns / static_cast<double>(depth) >= ns) continue;  // streaming-bound: says nothing
    least = std::min(least, ns / blocked_redundancy(tile, depth));
  }
  if (!std::isfinite(least))
    throw InvalidArgument("no measured depth computes longer than it streams, so the measurements do not bound the "
                          "on-chip update time: measure deeper depths");
  return least;
}

std::size_t blocked_best_depth(double stream_ns, double update_ns, const std::vector<std::size_t>& tile,
                               std::size_t most) {
  std::size_t best = 1;
  double best_ns = blocked_ns_per_node(stream_ns, update_ns, blocked_redundancy(tile, 1), 1);
  for (std::size_t depth = 2; depth <= blocked_deepest(tile, most); ++depth) {
    const double ns = blocked_ns_per_node(stream_ns, update_ns, blocked_redundancy(tile, depth), depth);
    if (ns < best_ns) best = depth, best_ns = ns;
  }
  return best;
}

}  // namespace ziggurat::model
