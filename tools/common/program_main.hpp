#pragma once
// What the `ziggurat` tool and the `ziggurat-bench` benchmarks share as programs: one way to run a
// command line and report its errors, and where the running executable lies.

#include <CLI/CLI.hpp>
#include <filesystem>

namespace ziggurat::cli {

/// Thrown by a command that has printed its result but must exit with `status` (e.g. 2: a solve
/// that did not converge), after the stack has unwound.
struct ExitStatus {
  int status;
};

/// Parses and runs `app`; returns the exit status: 0, 1 for a ziggurat::Error or the host running
/// out of memory (the message on stderr), 3 for an internal error, an ExitStatus's status, CLI11's
/// status for bad usage.
int run_app(CLI::App& app, int argc, char** argv);

/// The folder of the running executable (from /proc/self/exe).
std::filesystem::path executable_folder();

}  // namespace ziggurat::cli
