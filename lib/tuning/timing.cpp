#include "tuning/timing.hpp"

#include <algorithm>
#include <limits>

#include "ziggurat/base/error.hpp"

namespace ziggurat::detail {

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

double median(std::vector<double> values) {
  if (values.empty()) throw InvalidArgument("the median of no values");
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

DeviceTimer::DeviceTimer(const Context& context) : context_(context), events_(context.device().profiling) {}

double DeviceTimer::seconds(const std::function<EventPair()>& enqueue) const {
  const auto start = Clock::now();
  const auto [first, last] = enqueue();
  context_.finish();
  return events_ ? profiled_seconds(first, last) : seconds_since(start);
}

TimingSample DeviceTimer::measure(double size, std::size_t repeat, const std::function<EventPair()>& enqueue) const {
  const std::vector<double> times = kept_rounds(repeat, [&](std::size_t) { return seconds(enqueue); });
  return {size, median(times), *std::min_element(times.begin(), times.end())};
}

double DeviceTimer::span(const std::vector<cl::Event>& events) {
  cl_ulong first = std::numeric_limits<cl_ulong>::max(), last = 0;
  for (const auto& event : events) {
    first = std::min(first, profiling_time(event, CL_PROFILING_COMMAND_START));
    last = std::max(last, profiling_time(event, CL_PROFILING_COMMAND_END));
  }
  return static_cast<double>(last - first) * 1e-9;
}

double seconds_per_call(const Context& context, std::size_t calls, const std::function<void()>& call, std::size_t rounds) {
  return median(kept_rounds(rounds, [&](std::size_t) {
    const auto start = Clock::now();
    for (std::size_t i = 0; i < calls; ++i) call();
    context.finish();
    return seconds_since(start) / static_cast<double>(calls);
  }));
}

}  // namespace ziggurat::detail
