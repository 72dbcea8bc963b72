#pragma once
// Progress of a long run on stderr: rewritten in place on a terminal; off one (a batch job's log),
// one timestamped line every few seconds, so that a log shows how far a job got.

#include <chrono>
#include <string>

#include <CLI/CLI.hpp>

namespace ziggurat::cli {

/// --progress: auto (unless --quiet or --json), always, or never.
struct ProgressOption {
  std::string mode = "auto";
  /// Adds --progress to `command`.
  void add(CLI::App* command);
  /// Whether progress is shown, given --quiet and --json. InvalidArgument for an unknown mode.
  bool enabled(bool quiet, bool json) const;
};

/// Prints progress lines of one run on stderr.
class ProgressLines {
 public:
  /// `enabled` false: show() and finish() print nothing. Off a terminal, a line at most every
  /// `interval` (ZIGGURAT_PROGRESS_SECONDS where set).
  explicit ProgressLines(bool enabled, std::chrono::duration<double> interval = std::chrono::seconds(5));
  bool enabled() const noexcept { return enabled_; }
  /// Shows `text` (one line of progress); `last`: the run's final state, always printed. On a
  /// terminal, the line is redrawn at most every 0.2 s.
  void show(const std::string& text, bool last = false);
  /// Ends the line rewritten in place on a terminal.
  void finish();

 private:
  bool enabled_, terminal_, open_line_ = false;
  std::chrono::duration<double> interval_;
  std::chrono::steady_clock::time_point last_{};
  bool printed_ = false;
  std::string shown_;  // off a terminal, the last line printed
};

}  // namespace ziggurat::cli
