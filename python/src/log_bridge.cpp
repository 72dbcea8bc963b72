// The library's log (base/log.hpp) in Python's logging, under the logger "ziggurat". The library
// logs on any thread, often with the GIL released and sometimes from threads that Python does not
// know; a sink that took the GIL there could wait for a thread that holds it while it waits for
// the logging one. So the sink only queues each record, and the records reach logging under the
// GIL, in the order they came: between a long run's tasks (between_tasks()), and when a binding
// takes the GIL back after its work (ReleasedGil).

#include <deque>
#include <mutex>
#include <string>
#include <utility>

#include "module.hpp"
#include "ziggurat/base/log.hpp"

namespace ziggurat::python {

namespace {

struct Record {
  LogLevel level;
  std::string source, message;
};

constexpr std::size_t kMostQueued = 10000;  // a call that logs without end keeps the newest

std::mutex queue_mutex;
std::deque<Record> queued;
std::size_t dropped = 0;

void queue(LogLevel level, std::string_view source, std::string_view message) {
  const std::lock_guard<std::mutex> lock(queue_mutex);
  if (queued.size() == kMostQueued) {
    queued.pop_front();
    ++dropped;
  }
  queued.push_back({level, std::string(source), std::string(message)});
}

int python_level(LogLevel level) {
  switch (level) {
    case LogLevel::debug: return 10;
    case LogLevel::info: return 20;
    case LogLevel::warning: return 30;
    default: return 40;
  }
}

// The library's level for Python's: the records the logger would drop are not even made.
LogLevel library_level(int python) {
  if (python <= 10) return LogLevel::debug;  // NOTSET (0) on every logger up to the root: all
  if (python <= 20) return LogLevel::info;
  if (python <= 30) return LogLevel::warning;
  if (python <= 40) return LogLevel::error;
  return LogLevel::off;
}

py::object logger() { return py::module_::import("logging").attr("getLogger")("ziggurat"); }

void sync_log_level() { set_log_level(library_level(logger().attr("getEffectiveLevel")().cast<int>())); }

void deliver_queued() {
  std::deque<Record> records;
  std::size_t lost = 0;
  {
    const std::lock_guard<std::mutex> lock(queue_mutex);
    records.swap(queued);
    std::swap(lost, dropped);
  }
  if (records.empty() && lost == 0) return;
  const py::object log = logger().attr("log");
  if (lost > 0)
    log(30, "log: %d records of the library were dropped (more than %d waited for the GIL)", lost, kMostQueued);
  for (const Record& r : records) log(python_level(r.level), "%s: %s", r.source, r.message);
}

}  // namespace

void deliver_log_records() noexcept {
  try {
    deliver_queued();
  } catch (...) {  // a failing handler: the log never fails the work it describes
  }
}

ReleasedGil::ReleasedGil() {
  sync_log_level();
  release_.emplace();
}

ReleasedGil::~ReleasedGil() {
  release_.reset();  // the GIL back
  deliver_log_records();
}

void register_log(py::module_&) {
  set_log_sink(queue, LogLevel::warning);
  sync_log_level();
}

}  // namespace ziggurat::python
