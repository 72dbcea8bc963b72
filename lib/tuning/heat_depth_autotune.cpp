#include "ziggurat/tuning/heat_depth_autotune.hpp"

#include <algorithm>
#include <cmath>

#include "ziggurat/base/error.hpp"
#include "ziggurat/ops/heat_scheme.hpp"
#include "ziggurat/solver/in_device_heat.hpp"
#include "ziggurat/tuning/profile_store.hpp"

namespace ziggurat {

namespace {

constexpr std::size_t kSteps = 48;  // a multiple of every 2D and 3D candidate

std::vector<std::size_t> candidates(std::size_t dims) {
  if (dims == 1) return {1, 2, 4, 8, 16, 32};
  if (dims == 2) return {1, 2, 3, 4, 6, 8, 12};
  return {1, 2, 3, 4, 6, 8};
}

// A grid large enough to fill the device and to stream from its memory (about 16 M nodes on a GPU),
// small enough to time every candidate in a second or two on a CPU (about 256 K nodes).
std::vector<std::size_t> timing_extents(const DeviceInfo& device, std::size_t dims) {
  const bool gpu = device.type == DeviceType::gpu || device.type == DeviceType::accelerator;
  const double nodes = gpu ? 16.0 * (1 << 20) : 256.0 * 1024;
  const auto side = static_cast<std::size_t>(std::round(std::pow(nodes, 1.0 / static_cast<double>(dims))));
  return std::vector<std::size_t>(dims, side);
}

bool names_depths(const TuningRecord& record) {
  if (record.seconds.empty()) return false;
  for (const auto& entry : record.seconds)
    if (entry.first.empty() || entry.first.find_first_not_of("0123456789") != std::string::npos) return false;
  return true;
}

template <class T>
std::vector<std::pair<std::string, double>> measure_depths(const Context& context, std::size_t dims) {
  const std::vector<std::size_t> extents = timing_extents(context.device(), dims);
  const Grid<T> initial = heat_mode_field<T>(extents);
  const double alpha = 0.9 * max_stable_alpha(dims);
  double nodes = 1;
  for (const std::size_t extent : extents) nodes *= static_cast<double>(extent - 2);
  std::vector<std::pair<std::string, double>> seconds;
  for (const std::size_t depth : candidates(dims)) {
    try {
      InDeviceHeat<T> solver(context, initial, alpha, depth == 1 ? StepKernel::aligned : StepKernel::blocked,
                             depth == 1 ? 0 : depth);
      solver.advance(depth);  // warm-up: programs, first touches
      double best = HUGE_VAL;
      for (int round = 0; round < 2; ++round) {
        const StepTiming t = solver.advance(kSteps);
        best = std::min(best, t.device_seconds >= 0 ? t.device_seconds : t.wall_seconds);
      }
      seconds.emplace_back(std::to_string(depth), best / (nodes * kSteps));
    } catch (const UnsupportedFeature&) {
      // A depth whose tile does not fit this device is not a candidate.
    }
  }
  std::sort(seconds.begin(), seconds.end(), [](const auto& p, const auto& q) { return p.second < q.second; });
  return seconds;
}

}  // namespace

template <class T>
std::string heat_depth_key(std::size_t dims) {
  return "heat-depth " + std::string(sizeof(T) == 4 ? "f32" : "f64") + " " + std::to_string(dims) + "d";
}

template <class T>
HeatDepthChoice choose_heat_depth(const Context& context, std::size_t dims) {
  if (dims < 1 || dims > 3) throw InvalidArgument("heat grids have 1 to 3 axes, not " + std::to_string(dims));
  HeatDepthChoice choice;
  choice.key = heat_depth_key<T>(dims);
  if (auto record = load_tuning_record(context.device(), choice.key); record && names_depths(*record)) {
    choice.seconds = std::move(record->seconds);
  } else {
    choice.seconds = measure_depths<T>(context, dims);
    choice.measured_now = true;
    // A record that cannot be written is measured again next time; the choice stands either way.
    store_tuning_record(context.device(), {choice.key, choice.seconds});
  }
  choice.depth = std::stoul(choice.seconds.front().first);
  choice.ns_per_node = choice.seconds.front().second * 1e9;
  return choice;
}

#define ZIGGURAT_HEAT_DEPTH(T)                                  \
  template std::string heat_depth_key<T>(std::size_t);          \
  template HeatDepthChoice choose_heat_depth<T>(const Context&, std::size_t);
ZIGGURAT_HEAT_DEPTH(float)
ZIGGURAT_HEAT_DEPTH(double)
#undef ZIGGURAT_HEAT_DEPTH

}  // namespace ziggurat
