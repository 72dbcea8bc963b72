#pragma once
// How the tuning layer times things, in one place: every measurement drops a warm-up round and
// keeps the rounds after it. Device work is timed with OpenCL profiling events where the device
// has them, else with the host clock around issuing it and waiting.

#include <chrono>
#include <cstddef>
#include <functional>
#include <utility>
#include <vector>

#include "ziggurat/base/context.hpp"
#include "ziggurat/tuning/device_profile.hpp"

namespace ziggurat::detail {

using Clock = std::chrono::steady_clock;
using EventPair = std::pair<cl::Event, cl::Event>;  ///< the first and the last command of some work

double seconds_since(Clock::time_point start);
double median(std::vector<double> values);

/// Runs `round(r)` for r = 0 .. repeat: round 0 warms up (drivers finish compiling, caches fill),
/// and what rounds 1 .. repeat return is kept, in order.
template <class Round>
auto kept_rounds(std::size_t repeat, Round&& round) {
  std::vector<decltype(round(std::size_t{0}))> kept;
  for (std::size_t r = 0; r <= repeat; ++r) {
    auto result = round(r);
    if (r > 0) kept.push_back(std::move(result));
  }
  return kept;
}

/// Times work on the device of a context.
class DeviceTimer {
 public:
  explicit DeviceTimer(const Context& context);
  bool events() const { return events_; }

  /// Issues the work (`enqueue` returns its first and last commands) and waits for the context:
  /// seconds from the first's start to the last's end, or by the host clock.
  double seconds(const std::function<EventPair()>& enqueue) const;
  /// The median and minimum of `repeat` rounds after a warm-up; `size` labels the sample.
  TimingSample measure(double size, std::size_t repeat, const std::function<EventPair()>& enqueue) const;
  /// Seconds from the earliest start to the latest end of commands that ran (profiling events).
  static double span(const std::vector<cl::Event>& events);

 private:
  const Context& context_;
  bool events_;
};

/// Host seconds per call in a stream of `calls` calls issued back to back and then waited for:
/// the median of `rounds` rounds after a warm-up round.
double seconds_per_call(const Context& context, std::size_t calls, const std::function<void()>& call,
                        std::size_t rounds = 3);

}  // namespace ziggurat::detail
