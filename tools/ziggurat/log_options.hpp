#pragma once
// The library's log on stderr: -v (info), -vv (debug) or --log-level LEVEL on any command, else
// ZIGGURAT_LOG_LEVEL, else warnings only.

#include <CLI/CLI.hpp>

namespace ziggurat::cli {

/// Adds -v and --log-level to `app` and each of its commands but bench (call after adding them), and sets
/// the library's log sink once the command line is parsed.
void add_log_options(CLI::App& app);

}  // namespace ziggurat::cli
