#include "ziggurat/distributed/heat.hpp"

#include <algorithm>
#include <cstdio>
#include <chrono>
#include <map>
#include <string>

#include "ziggurat/base/error.hpp"
#include "ziggurat/base/files.hpp"
#include "ziggurat/base/precision.hpp"
#include "ziggurat/io/npy.hpp"

namespace ziggurat::mpi {

namespace {

using Clock = std::chrono::steady_clock;

// This rank's rows, refused when any rank would own fewer than `depth` (its neighbours' halos
// would reach past it) or fewer than 2 (a slab at the grid's edge needs a row besides the boundary).
RowRange owned_rows(const Communicator& communicator, const std::vector<std::size_t>& extents, std::size_t depth) {
  if (depth == 0) throw InvalidArgument("the halo depth of a distributed heat run must be at least 1");
  const std::vector<RowRange> split = split_rows(extents.back(), static_cast<std::size_t>(communicator.size()));
  for (std::size_t r = 0; r < split.size(); ++r)
    if (split[r].count < std::max<std::size_t>(depth, 2))
      throw InvalidArgument("rank " + std::to_string(r) + " of " + std::to_string(split.size()) + " would own " +
                            std::to_string(split[r].count) + " of the grid's " + std::to_string(extents.back()) +
                            " rows on its slowest axis, fewer than the halo depth " + std::to_string(depth) +
                            " (and 2): start fewer ranks, or give a smaller --height");
  return split[static_cast<std::size_t>(communicator.rank())];
}

// The values every rank of a heat run must hold alike, checked before any exchange.
template <class T>
std::vector<SharedValue> run_values(const std::vector<std::size_t>& extents) {
  return {{"the element type", type_name<T>()}, {"the grid's extents", extents_string(extents)}};
}

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", value);
  return text;
}

// The slab: the owned rows and `depth` halo rows on each side with a neighbour.
RowRange stored_rows(const Communicator& communicator, RowRange owned, std::size_t depth) {
  const std::size_t before = communicator.rank() > 0 ? depth : 0;
  const std::size_t after = communicator.rank() + 1 < communicator.size() ? depth : 0;
  return {owned.first - before, owned.count + before + after};
}

}  // namespace

std::vector<RowRange> split_rows(std::size_t rows, std::size_t ranks) {
  std::vector<RowRange> split;
  for (std::size_t r = 0; r < ranks; ++r) split.push_back({rows * r / ranks, rows * (r + 1) / ranks - rows * r / ranks});
  return split;
}

template <class T>
std::size_t plan_halo_depth(const Communicator& communicator, const DeviceInfo& device,
                            const std::vector<std::size_t>& extents, std::size_t steps, const HeatPlanRequest& request,
                            const DeviceProfile& profile) {
  std::vector<SharedValue> values = run_values<T>(extents);
  values.push_back({"the steps", std::to_string(steps)});
  communicator.require_agreement(values);
  if (steps == 0) return 1;
  std::size_t smallest = extents.back();
  for (const RowRange& r : split_rows(extents.back(), static_cast<std::size_t>(communicator.size())))
    smallest = std::min(smallest, r.count);
  std::vector<std::size_t> slab = extents;
  slab.back() = std::max<std::size_t>(smallest, 3);
  // Planned as if in pinned host memory, as the solver's layers are where the runtime allows, and
  // with single-step kernels when the depth is still to be tuned (each interval tunes it).
  HeatPlanRequest single = request;
  if (single.depth == std::size_t{0}) single.depth = 1;
  PlannedHeatRun planned = plan_heat<T>(device, slab, true, steps, single, profile);
  if (planned.predicted.layout.decomposition == Decomposition::incore) {
    HeatPlanRequest strips = single;
    strips.mode = HeatMode::strip;
    planned = plan_heat<T>(device, slab, true, steps, strips, profile);
  }
  return communicator.min(std::clamp<std::size_t>(planned.predicted.layout.height, 1, std::min(smallest, steps)));
}

template <class T>
DistributedHeat<T>::DistributedHeat(const Communicator& communicator, const Context& device,
                                    const std::vector<std::size_t>& extents, double alpha, std::size_t depth,
                                    const std::function<Grid<T>(std::size_t, std::size_t)>& rows)
    : communicator_(communicator),
      extents_(agreed(communicator, extents, alpha, depth)),
      depth_(depth),
      owned_(owned_rows(communicator, extents, depth)),
      stored_(stored_rows(communicator, owned_, depth)),
      row_values_(checked_node_count(extents) / extents.back()),
      solver_(device, rows(stored_.first, stored_.count), alpha) {}

template <class T>
std::vector<std::size_t> DistributedHeat<T>::agreed(const Communicator& communicator,
                                                    const std::vector<std::size_t>& extents, double alpha,
                                                    std::size_t depth) {
  std::vector<SharedValue> values = run_values<T>(extents);
  values.push_back({"alpha", number(alpha)});
  values.push_back({"the halo depth", std::to_string(depth)});
  communicator.require_agreement(values);
  return extents;
}

template <class T>
const T* DistributedHeat<T>::owned_data() const noexcept {
  return solver_.data() + (owned_.first - stored_.first) * row_values_;
}

// The `depth` owned rows next to each neighbour go to it; its rows fill this rank's halo there.
template <class T>
void DistributedHeat<T>::exchange() {
  const std::size_t rank = static_cast<std::size_t>(communicator_.rank());
  const std::size_t bytes = depth_ * row_values_ * sizeof(T);
  T* slab = solver_.data();
  const auto at = [&](std::size_t row) { return slab + (row - stored_.first) * row_values_; };
  std::vector<wave::HaloTransport::Send> sends;
  std::vector<wave::HaloTransport::Receive> receives;
  if (owned_.first > stored_.first) {  // a neighbour before: tag 0 travels down, 1 up
    sends.push_back({rank - 1, at(owned_.first), bytes, 0});
    receives.push_back({rank - 1, at(stored_.first), bytes, 1});
  }
  if (stored_.end() > owned_.end()) {
    sends.push_back({rank + 1, at(owned_.end() - depth_), bytes, 1});
    receives.push_back({rank + 1, at(owned_.end()), bytes, 0});
  }
  HaloTransport(communicator_).exchange(sends, receives);
}

template <class T>
DistributedHeatRun DistributedHeat<T>::advance(std::size_t steps, const HeatPlanRequest& request,
                                               const DeviceProfile& profile,
                                               const std::function<void(std::size_t)>& progress) {
  if (request.height && *request.height > depth_)
    throw InvalidArgument("a pass of " + std::to_string(*request.height) + " steps reaches past the halos of " +
                          std::to_string(depth_) + " rows: give a height of at most the halo depth");
  communicator_.require_agreement({{"the steps", std::to_string(steps)}});
  DistributedHeatRun run;
  run.depth = depth_;
  run.steps = steps;
  // The plans first (at most two interval lengths; searching block pyramids takes a while), so
  // that the clocks time the run alone, as a single process's run is timed.
  std::map<std::size_t, HeatPlan> plans;
  for (const std::size_t n : {std::min(depth_, steps), steps % depth_}) {
    if (n == 0 || plans.count(n) > 0) continue;
    HeatPlanRequest interval = request;
    if (interval.height) interval.height = std::min(*interval.height, n);
    const HeatOutcome outcome = plan_tuned_heat(solver_, n, interval, profile);
    plans.emplace(n, outcome.planned.plan());
    if (plans.size() == 1) run.planned = outcome.planned;
  }
  communicator_.barrier();  // the clocks start together: no rank's time holds another's set-up
  const auto start = Clock::now();
  double exchanging = 0;
  for (std::size_t done = 0; done < steps;) {
    if (done > 0) {
      const auto before = Clock::now();
      exchange();
      exchanging += std::chrono::duration<double>(Clock::now() - before).count();
    }
    const std::size_t n = std::min(depth_, steps - done);
    solver_.advance(n, plans.at(n));
    ++run.intervals;
    done += n;
    if (progress) progress(done);
  }
  run.seconds = communicator_.max(std::chrono::duration<double>(Clock::now() - start).count());
  run.exchange_seconds = communicator_.max(exchanging);
  double interior = 1;
  for (const std::size_t extent : extents_) interior *= double(extent - 2);
  run.ns_per_node = steps > 0 ? run.seconds * 1e9 / (interior * double(steps)) : 0;
  return run;
}

template <class T>
void DistributedHeat<T>::write_npy(const std::filesystem::path& path) const {
  std::string partial;
  if (communicator_.rank() == 0) {
    partial = temporary_beside(path).string();
    create_npy<T>(partial, std::vector<std::size_t>(extents_.rbegin(), extents_.rend()));
  }
  communicator_.broadcast(partial);
  write_npy_rows<T>(partial, owned_.first, owned_data(), owned_.count);
  communicator_.barrier();
  if (communicator_.rank() == 0) publish_file(partial, path);
  communicator_.barrier();
}

#define ZIGGURAT_DISTRIBUTED_HEAT(T)                                                                                \
  template std::size_t plan_halo_depth<T>(const Communicator&, const DeviceInfo&, const std::vector<std::size_t>&, \
                                          std::size_t, const HeatPlanRequest&, const DeviceProfile&);              \
  template class DistributedHeat<T>;
ZIGGURAT_DISTRIBUTED_HEAT(float)
ZIGGURAT_DISTRIBUTED_HEAT(double)
#undef ZIGGURAT_DISTRIBUTED_HEAT

}  // namespace ziggurat::mpi
