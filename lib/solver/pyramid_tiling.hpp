#pragma once
// How a pyramid pass cuts an axis into tasks: shared by the solver (solver/heat_pyramid.cpp),
// which runs the tasks, and the cost model (tuning/cost_model.cpp), which counts what they move
// and compute, so that the model describes exactly the tasks that run.

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "base/integer_math.hpp"

namespace ziggurat::detail {

// The range [begin, end) grown by m a side and clipped to [lo, hi): its new ends.
inline std::size_t grown_begin(std::size_t begin, std::size_t m, std::size_t lo) { return std::max(begin > m ? begin - m : 0, lo); }
inline std::size_t grown_end(std::size_t end, std::size_t m, std::size_t hi) { return std::min(end + m, hi); }

// Sum over k = 0 .. count-1 of min(a + k, cap): the first terms grow, the rest are capped.
inline double capped_rising_sum(double a, double cap, double count) {
  const double rising = std::clamp(cap - a + 1, 0.0, count);
  return rising * a + rising * (rising - 1) / 2 + (count - rising) * cap;
}

// Sum over k = 0 .. count-1 of max(a - k, floor).
inline double floored_falling_sum(double a, double floor, double count) {
  const double falling = std::clamp(a - floor + 1, 0.0, count);
  return falling * a - falling * (falling - 1) / 2 + (count - falling) * floor;
}

// One axis of `length` nodes whose interior (1 .. length-2) is cut into tiles of `tile` nodes (a
// tile longer than the interior is the whole interior). A tile's extent grown by m a side is
// clipped to [lo, hi): to the grid (0, length) for what is sent, to the interior (1, length-1)
// for what is computed. Sums over tiles are closed forms.
struct Cut {
  Cut(std::size_t nodes, std::size_t tile_nodes) : length(nodes), tile(std::min(tile_nodes, nodes - 2)) {}

  std::size_t length;
  std::size_t tile;

  std::size_t tiles() const { return ceil_div(length - 2, tile); }
  std::size_t begin(std::size_t t) const { return 1 + t * tile; }
  std::size_t end(std::size_t t) const { return std::min(begin(t) + tile, length - 1); }
  double width(std::size_t t, std::size_t m, std::size_t lo, std::size_t hi) const {
    return static_cast<double>(grown_end(t, m, hi) - grown_begin(t, m, lo));
  }
  double sent(std::size_t t, std::size_t halo) const { return width(t, halo, 0, length); }
  double owned(std::size_t t) const { return static_cast<double>(end(t) - begin(t)); }
  // The nodes tile t grown by m a side, clipped to [lo, hi): [grown_begin, grown_end).
  std::size_t grown_begin(std::size_t t, std::size_t m, std::size_t lo) const { return detail::grown_begin(begin(t), m, lo); }
  std::size_t grown_end(std::size_t t, std::size_t m, std::size_t hi) const { return detail::grown_end(end(t), m, hi); }
  // Nodes of tile t computed over `steps` steps: at step k it still needs steps-k nodes a side.
  double computed(std::size_t t, std::size_t steps) const {
    const double s = static_cast<double>(steps);
    return capped_rising_sum(static_cast<double>(end(t)), static_cast<double>(length - 1), s) -
           floored_falling_sum(static_cast<double>(begin(t)), 1, s);
  }
  // Whether tile t is whole and far enough from both boundaries that it computes tile + 2m
  // nodes at margin m, like every other such tile.
  bool regular(std::size_t t, std::size_t steps) const {
    return end(t) - begin(t) == tile && begin(t) >= steps && end(t) + steps <= length;
  }
  // Sum over all tiles of width(t, m, lo, hi).
  double total_width(std::size_t m, std::size_t lo, std::size_t hi) const {
    const double T = static_cast<double>(tiles()), b = static_cast<double>(tile), mm = static_cast<double>(m);
    const double H = static_cast<double>(hi), L = static_cast<double>(lo);
    // Ends: 1 + (t+1) b + m for t < T-1, then length-1+m; each capped at hi.
    const double grow = hi >= 1 + m ? std::floor((H - 1 - mm) / b) : 0;
    const double p = std::clamp(grow, 0.0, T - 1);
    const double ends = p * (1 + mm) + b * p * (p + 1) / 2 + (T - 1 - p) * H +
                        std::min(static_cast<double>(length - 1) + mm, H);
    // Begins: 1 + t b - m, floored at lo.
    const double q = std::clamp(std::ceil((mm + L - 1) / b), 0.0, T);
    const double begins = q * L + (T - q) * (1 - mm) + b * (T * (T - 1) - q * (q - 1)) / 2;
    return ends - begins;
  }
  double total_sent(std::size_t halo) const { return total_width(halo, 0, length); }
  double total_computed_at(std::size_t margin) const { return total_width(margin, 1, length - 1); }
  // The most any tile sends with a halo of `halo`: the device buffer a task needs. Growing t, a
  // tile's region grows while it is clipped at the start, stays at tile + 2 halo while clipped
  // nowhere, and shrinks once clipped at the end, so the largest is at one of a few tiles.
  double max_sent(std::size_t halo) const {
    const std::size_t last = tiles() - 1;
    const std::size_t unclipped_start = halo > 1 ? ceil_div(halo - 1, tile) : 0;  // begin(t) >= halo
    const std::size_t clipped_end = length > halo + 1 ? (length - halo - 1) / tile : 0;  // end(t) + halo > length
    double most = 0;
    for (const std::size_t t : {std::size_t{0}, unclipped_start - (unclipped_start > 0), unclipped_start,
                                clipped_end - (clipped_end > 0), clipped_end, last}) {
      most = std::max(most, sent(std::min(t, last), halo));
    }
    return most;
  }
  // The last tile whose nodes tile t reads with a halo of `halo`.
  std::size_t last_source(std::size_t t, std::size_t halo) const {
    const std::size_t last_node = std::min(end(t) + halo, length - 1) - 1;
    return std::min((last_node - 1) / tile, tiles() - 1);
  }
};

}  // namespace ziggurat::detail
