#include "tuning/recorded_timings.hpp"

#include <algorithm>
#include <cstdio>

#include "ziggurat/base/error.hpp"
#include "ziggurat/base/log.hpp"

namespace ziggurat::detail {

namespace {

// "multirow/4 1.2e-05 s, row 3.1e-05 s".
std::string timings_text(const Timings& timings) {
  std::string text;
  for (const auto& [name, seconds] : timings) {
    char value[32];
    std::snprintf(value, sizeof value, "%.3g", seconds);
    text += (text.empty() ? "" : ", ") + name + " " + value + " s";
  }
  return text;
}

// Why `record` cannot serve; "" when it can.
std::string refusal(const TuningRecord& record, const std::function<void(const std::string&)>& parse,
                    const std::vector<std::string>& required) {
  if (record.seconds.empty()) return "it holds no timings";
  try {
    for (const auto& entry : record.seconds) parse(entry.first);
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  for (const std::string& candidate : required)
    if (std::none_of(record.seconds.begin(), record.seconds.end(), [&](const auto& e) { return e.first == candidate; }))
      return "it has no timing of " + candidate + ", a newer candidate";
  return "";
}

}  // namespace

Timings recorded_or_measured(const DeviceInfo& device, const std::string& key,
                             const std::function<void(const std::string&)>& parse,
                             const std::function<Timings()>& measure, bool& measured_now,
                             const std::vector<std::string>& required) {
  const std::string where = "'" + key + "' on " + device.label();
  if (auto record = load_tuning_record(device, key)) {
    const std::string why = refusal(*record, parse, required);
    if (why.empty()) {
      measured_now = false;
      log(LogLevel::info, "tuning", where + ": " + record->seconds.front().first + " from the tuning record (" +
                                        timings_text(record->seconds) + ")");
      return std::move(record->seconds);
    }
    log(LogLevel::info, "tuning", where + ": the tuning record is refused (" + why + "); measuring again");
  }
  Timings timings = measure();
  measured_now = true;
  if (timings.empty()) return timings;  // nothing ran: the tuner says so
  std::string not_kept;
  try {
    not_kept = store_tuning_record(device, {key, timings});
  } catch (const InvalidArgument& refused) {  // a timer's fault: the run goes on with this choice, unrecorded
    not_kept = refused.what();
    log(LogLevel::warning, "tuning", where + ": not recorded: " + not_kept);
  }
  if (log_enabled(LogLevel::info))
    log(LogLevel::info, "tuning", where + ": timed " + std::to_string(timings.size()) + " candidates (" +
                                      timings_text(timings) + "); " + timings.front().first + " wins" +
                                      (not_kept.empty() ? "" : "; not recorded: " + not_kept));
  return timings;
}

}  // namespace ziggurat::detail
