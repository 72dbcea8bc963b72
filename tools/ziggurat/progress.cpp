#include "progress.hpp"

#include <unistd.h>

#include <cstdlib>
#include <iostream>

#include "ziggurat/base/error.hpp"
#include "ziggurat/base/timestamp.hpp"

namespace ziggurat::cli {

void ProgressOption::add(CLI::App* command) {
  command->add_option("--progress", mode, "auto (unless --quiet or --json), always or never. On a terminal, one line "
                                          "rewritten in place; off one (a batch job's log), a timestamped line every "
                                          "few seconds (ZIGGURAT_PROGRESS_SECONDS)")
      ->capture_default_str();
}

bool ProgressOption::enabled(bool quiet, bool json) const {
  if (mode == "always") return true;
  if (mode == "never") return false;
  if (mode != "auto") throw InvalidArgument("--progress is auto, always or never, not '" + mode + "'");
  return !quiet && !json;
}

namespace {

std::chrono::duration<double> interval_of(std::chrono::duration<double> fallback) {
  const char* value = std::getenv("ZIGGURAT_PROGRESS_SECONDS");
  if (value == nullptr) return fallback;
  char* end = nullptr;
  const double seconds = std::strtod(value, &end);
  if (end == value || *end != '\0' || !(seconds >= 0))
    throw InvalidArgument(std::string("ZIGGURAT_PROGRESS_SECONDS=") + value + " is no number of seconds (0 or more)");
  return std::chrono::duration<double>(seconds);
}

}  // namespace

ProgressLines::ProgressLines(bool enabled, std::chrono::duration<double> interval)
    : enabled_(enabled), terminal_(::isatty(STDERR_FILENO) != 0), interval_(enabled ? interval_of(interval) : interval) {}

void ProgressLines::show(const std::string& text, bool last) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (terminal_) {
    // A solver's hook may come every iteration: the line is redrawn a few times a second at most.
    if (open_line_ && !last && now - last_ < std::chrono::milliseconds(200)) return;
    last_ = now;
    std::cerr << "\r" << text << "   " << std::flush;
    open_line_ = true;
    if (last) finish();
    return;
  }
  if (printed_ && ((!last && now - last_ < interval_) || text == shown_)) return;  // the same state says nothing new
  printed_ = true;
  last_ = now;
  shown_ = text;
  std::cerr << utc_timestamp() << " " << text << std::endl;
}

void ProgressLines::finish() {
  if (open_line_) std::cerr << "\n";
  open_line_ = false;
}

}  // namespace ziggurat::cli
