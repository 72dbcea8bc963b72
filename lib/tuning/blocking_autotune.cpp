#include "ziggurat/tuning/blocking_autotune.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <optional>
#include <tuple>

#include "ops/heat_blocked.hpp"
#include "tuning/recorded_timings.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/ops/heat_scheme.hpp"
#include "ziggurat/solver/in_device_heat.hpp"
#include "ziggurat/solver/poisson_pyramid.hpp"
#include "ziggurat/tuning/profile_store.hpp"

namespace ziggurat {

namespace {

constexpr std::size_t kSteps = 48;  // a multiple of every 2D and 3D candidate depth

bool is_gpu(const DeviceInfo& device) {
  return device.type == DeviceType::gpu || device.type == DeviceType::accelerator;
}

// Depths timed in the default group. A CPU device times only the shallow ones, so that its tuning,
// which every run without --depth does once, stays well under a second: PoCL's single steps
// outrun its blocked kernels (bench/results/2026-11-28-pocl-cpu-device.md).
std::vector<std::size_t> candidates(const DeviceInfo& device, std::size_t dims) {
  if (!is_gpu(device)) return {1, 2, 4};
  if (dims == 1) return {1, 2, 4, 8, 16, 32};
  if (dims == 2) return {1, 2, 3, 4, 6, 8, 12};
  return {1, 2, 3, 4, 6, 8};
}

// Work-groups tried at the fastest depths: rows of 64 to 1024 items (1D, 2D); tiles of 32 to 256
// by 4 to 16 items (3D), each item holding 4 rows. Those the device cannot run are skipped.
std::vector<BlockedGroup> group_candidates(std::size_t dims) {
  if (dims < 3) return {{64, 1}, {128, 1}, {256, 1}, {512, 1}, {1024, 1}};
  return {{32, 8}, {64, 4}, {32, 16}, {64, 8}, {128, 4}, {64, 16}, {128, 8}, {256, 4}};
}

// A grid large enough to fill the device and to stream from its memory (about 16 M nodes on a GPU),
// small enough to time every candidate in a second or so on a CPU (256 K nodes, 64 K in 3D, where
// the blocked kernels run 3 to 8 times as slowly as single steps on PoCL).
std::vector<std::size_t> timing_extents(const DeviceInfo& device, std::size_t dims) {
  const double nodes = is_gpu(device) ? 16.0 * (1 << 20) : dims == 3 ? 64.0 * 1024 : 256.0 * 1024;
  const auto side = static_cast<std::size_t>(std::round(std::pow(nodes, 1.0 / static_cast<double>(dims))));
  return std::vector<std::size_t>(dims, side);
}

// Seconds a node and step of a candidate (depth, group), or nothing where the device cannot run it.
using CandidateTimer = std::function<std::optional<double>(std::size_t, const BlockedGroup&)>;

// Heat steps of an in-device grid, timed on the device.
template <class T>
CandidateTimer heat_timer(const Context& context, std::size_t dims) {
  auto initial = std::make_shared<const Grid<T>>(heat_mode_field<T>(timing_extents(context.device(), dims)));
  double nodes = 1;
  for (const std::size_t extent : initial->extents()) nodes *= static_cast<double>(extent - 2);
  return [context, initial, nodes](std::size_t depth, const BlockedGroup& group) -> std::optional<double> {
    try {
      InDeviceHeat<T> solver(context, *initial, 0.9 * max_stable_alpha(initial->dims()),
                             depth == 1 ? StepKernel::aligned : StepKernel::blocked, depth == 1 ? 0 : depth, group);
      solver.advance(depth);  // warm-up: programs, first touches
      double best = HUGE_VAL;
      for (int round = 0; round < 2; ++round) {
        const StepTiming t = solver.advance(kSteps);
        best = std::min(best, t.device_seconds >= 0 ? t.device_seconds : t.wall_seconds);
      }
      return best / (nodes * kSteps);
    } catch (const UnsupportedFeature&) {
      return std::nullopt;
    }
  };
}

// Jacobi sweeps of an in-core Poisson solve: the least wall time of 2K sweeps less the least of K
// (each solve uploads and downloads the grid, which the difference leaves out), one stopping test a
// solve. K = 480 on a GPU, where the transfers take as long as a few hundred sweeps; 48 on a CPU.
// Where other work on the host hides the difference (zero or less), up to 6 rounds are timed
// instead of 2; past them, half the time of 2K sweeps, transfers included, bounds a sweep's time
// from above: a record never holds zero.
template <class T>
CandidateTimer jacobi_timer(const Context& context) {
  const std::vector<std::size_t> extents = timing_extents(context.device(), 3);
  auto grids = std::make_shared<const std::pair<Grid<T>, Grid<T>>>(Grid<T>(extents, T(0)), Grid<T>(extents, T(1)));
  const double nodes = std::pow(static_cast<double>(extents[0] - 2), 3.0);
  const std::size_t kSweeps = is_gpu(context.device()) ? 10 * kSteps : kSteps;
  return [context, grids, nodes, kSweeps](std::size_t depth, const BlockedGroup& group) -> std::optional<double> {
    try {
      PoissonSolver<T> solver(context, grids->first, grids->second, 1.0 / 64);
      const auto seconds = [&](std::size_t sweeps) {
        const HeatPlan plan{{Decomposition::incore, sweeps, 0}, Schedule::overlapped, depth, group};
        return solver.solve(PoissonStop{0, sweeps}, plan).seconds;
      };
      seconds(depth);  // warm-up: programs, first touches
      double single = HUGE_VAL, twice = HUGE_VAL;
      for (int round = 0; round < 2 || (twice <= single && round < 6); ++round) {
        twice = std::min(twice, seconds(2 * kSweeps));
        single = std::min(single, seconds(kSweeps));
      }
      const double sweeps_seconds = twice > single ? twice - single : twice / 2;
      return sweeps_seconds / (nodes * kSweeps);
    } catch (const UnsupportedFeature&) {
      return std::nullopt;
    }
  };
}

// The depths in the device's default group (deeper ones left out once a depth runs 3 times as
// slowly as the fastest so far), then, on GPUs, the other groups at the fastest blocked depth and
// the next deeper one, unless blocking runs at less than half the speed of single steps; fastest
// first.
std::vector<std::pair<std::string, double>> measure_candidates(const DeviceInfo& device, std::size_t dims,
                                                               std::size_t value_bytes, const CandidateTimer& time) {
  std::vector<std::pair<std::string, double>> seconds;
  std::size_t best_depth = 0;  // the fastest blocked depth, whether or not single steps beat it
  double best = HUGE_VAL, fastest = HUGE_VAL;
  for (const std::size_t depth : candidates(device, dims)) {
    if (!seconds.empty() && seconds.back().second > 3 * fastest) break;
    BlockedGroup group;
    try {
      if (depth > 1) group = detail::blocked_group_for(device, dims, value_bytes, depth, {});
    } catch (const UnsupportedFeature&) {
      continue;
    }
    if (const auto t = time(depth, group)) {
      seconds.emplace_back(blocking_candidate_name(depth, group), *t);
      fastest = std::min(fastest, *t);
      if (depth > 1 && *t < best) best = *t, best_depth = depth;
    }
  }
  if (is_gpu(device) && best_depth > 1 && best < 2 * fastest) {
    const std::vector<std::size_t> depths = candidates(device, dims);
    const auto first = std::find(depths.begin(), depths.end(), best_depth);
    for (auto depth = first; depth != depths.end() && depth != first + 2; ++depth)
      for (const BlockedGroup& group : group_candidates(dims)) {
        const std::string name = blocking_candidate_name(*depth, group);
        const bool timed = std::any_of(seconds.begin(), seconds.end(), [&](const auto& p) { return p.first == name; });
        if (!timed)
          if (const auto t = time(*depth, group)) seconds.emplace_back(name, *t);
      }
  }
  std::sort(seconds.begin(), seconds.end(), [](const auto& p, const auto& q) { return p.second < q.second; });
  return seconds;
}

// The record under `key`, or the candidates measured now (and recorded); the fastest is the choice.
BlockingChoice choose(const Context& context, const std::string& key, std::size_t dims, std::size_t value_bytes,
                      const std::function<CandidateTimer()>& make_timer) {
  BlockingChoice choice;
  choice.key = key;
  choice.seconds = detail::recorded_or_measured(
      context.device(), key, [](const std::string& name) { parse_blocking_candidate(name); },
      [&] { return measure_candidates(context.device(), dims, value_bytes, make_timer()); }, choice.measured_now);
  if (choice.seconds.empty()) throw UnsupportedFeature(context.device().label() + " ran none of the candidates of " + key);
  std::tie(choice.depth, choice.group) = parse_blocking_candidate(choice.seconds.front().first);
  choice.ns_per_node = choice.seconds.front().second * 1e9;
  return choice;
}

std::string precision_name(std::size_t value_bytes) { return value_bytes == 4 ? "f32" : "f64"; }

}  // namespace

std::size_t default_blocking_depth(const DeviceInfo& device) { return is_gpu(device) ? 0 : 1; }

std::string blocking_candidate_name(std::size_t depth, const BlockedGroup& group) {
  return depth == 1 ? "1" : std::to_string(depth) + "/" + to_string(group);
}

std::pair<std::size_t, BlockedGroup> parse_blocking_candidate(const std::string& name) {
  const InvalidArgument refused("'" + name + "' names no heat kernel candidate (\"1\" or \"<depth>/<x>x<y>\")");
  const auto whole = [&](const std::string& text) -> std::size_t {
    if (text.empty() || text.size() > 9 || text.find_first_not_of("0123456789") != std::string::npos) throw refused;
    return std::stoul(text);
  };
  if (name == "1") return {1, {}};
  const std::size_t slash = name.find('/'), cross = name.find('x', slash == std::string::npos ? 0 : slash);
  if (slash == std::string::npos || cross == std::string::npos) throw refused;
  const std::size_t depth = whole(name.substr(0, slash));
  const BlockedGroup group{whole(name.substr(slash + 1, cross - slash - 1)), whole(name.substr(cross + 1))};
  if (depth < 2 || group.x == 0 || group.y == 0) throw refused;
  return {depth, group};
}

template <class T>
std::string heat_blocking_key(std::size_t dims) {
  return "heat-blocking " + precision_name(sizeof(T)) + " " + std::to_string(dims) + "d";
}

template <class T>
BlockingChoice choose_heat_blocking(const Context& context, std::size_t dims) {
  if (dims < 1 || dims > 3) throw InvalidArgument("heat grids have 1 to 3 axes, not " + std::to_string(dims));
  return choose(context, heat_blocking_key<T>(dims), dims, sizeof(T), [&] { return heat_timer<T>(context, dims); });
}

template <class T>
std::string jacobi_blocking_key() {
  return "jacobi-blocking " + precision_name(sizeof(T)) + " 3d";
}

template <class T>
BlockingChoice choose_jacobi_blocking(const Context& context) {
  return choose(context, jacobi_blocking_key<T>(), 3, sizeof(T), [&] { return jacobi_timer<T>(context); });
}

#define ZIGGURAT_BLOCKING(T)                                                  \
  template std::string heat_blocking_key<T>(std::size_t);                     \
  template BlockingChoice choose_heat_blocking<T>(const Context&, std::size_t); \
  template std::string jacobi_blocking_key<T>();                              \
  template BlockingChoice choose_jacobi_blocking<T>(const Context&);
ZIGGURAT_BLOCKING(float)
ZIGGURAT_BLOCKING(double)
#undef ZIGGURAT_BLOCKING

}  // namespace ziggurat
