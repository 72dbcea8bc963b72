#pragma once
// The library's log: why a run is slow or planned as it is (a compile, a cached binary taken or
// refused by the driver, a calibration, the plan chosen). Records go to one sink the application
// sets (the CLI prints them on stderr; Python can pass them to its logging module); by default
// there is none, and a record below the level costs one atomic load.

#include <functional>
#include <string>
#include <string_view>

namespace ziggurat {

enum class LogLevel { debug, info, warning, error, off };

/// "debug", "info", "warning", "error" or "off" (any case); InvalidArgument naming the choices
/// otherwise.
LogLevel parse_log_level(std::string_view text);
const char* to_string(LogLevel level) noexcept;

/// Receives a record: its level, the part of the library it comes from ("program", "calibration",
/// "plan", ...) and the message. Called on the thread that logs, one record at a time.
using LogSink = std::function<void(LogLevel level, std::string_view source, std::string_view message)>;

/// Sets the sink (an empty function: none) and the lowest level passed to it. Thread-safe.
void set_log_sink(LogSink sink, LogLevel level = LogLevel::info);
void set_log_level(LogLevel level) noexcept;
LogLevel log_level() noexcept;

/// Whether a record of `level` would reach the sink (to skip building its message).
bool log_enabled(LogLevel level) noexcept;

/// Passes the record to the sink where log_enabled(level). An exception from the sink is dropped:
/// a log never fails the work it describes.
void log(LogLevel level, std::string_view source, const std::string& message);

}  // namespace ziggurat
