#include "ziggurat/base/log.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <mutex>

#include "ziggurat/base/error.hpp"

namespace ziggurat {

namespace {

constexpr std::array<std::pair<LogLevel, const char*>, 5> kLevels{{{LogLevel::debug, "debug"},
                                                                  {LogLevel::info, "info"},
                                                                  {LogLevel::warning, "warning"},
                                                                  {LogLevel::error, "error"},
                                                                  {LogLevel::off, "off"}}};

std::atomic<LogLevel> threshold{LogLevel::off};  // off while no sink is set
std::mutex sink_mutex;
LogSink& sink() {
  static LogSink instance;
  return instance;
}

}  // namespace

LogLevel parse_log_level(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  for (const auto& [level, name] : kLevels)
    if (lower == name) return level;
  throw InvalidArgument("the log level is debug, info, warning, error or off, not '" + std::string(text) + "'");
}

const char* to_string(LogLevel level) noexcept {
  for (const auto& [value, name] : kLevels)
    if (value == level) return name;
  return "off";
}

void set_log_sink(LogSink new_sink, LogLevel level) {
  std::lock_guard<std::mutex> lock(sink_mutex);
  threshold = new_sink ? level : LogLevel::off;
  sink() = std::move(new_sink);
}

void set_log_level(LogLevel level) noexcept {
  std::lock_guard<std::mutex> lock(sink_mutex);
  if (sink()) threshold = level;
}

LogLevel log_level() noexcept { return threshold.load(); }

bool log_enabled(LogLevel level) noexcept { return level != LogLevel::off && level >= threshold.load(); }

void log(LogLevel level, std::string_view source, const std::string& message) {
  if (!log_enabled(level)) return;
  std::lock_guard<std::mutex> lock(sink_mutex);
  if (!sink()) return;
  try {
    sink()(level, source, message);
  } catch (...) {  // a log never fails the work it describes
  }
}

}  // namespace ziggurat
