#pragma once
// What the `ziggurat` tool and the `ziggurat-bench` benchmarks share as programs: one way to run a
// command line and report its errors, and where the running executable lies.

#include <CLI/CLI.hpp>
#include <filesystem>

namespace ziggurat::cli {

/// The exit status of every command (README, "Exit status").
enum ExitCode : int {
  kSucceeded = 0,      ///< the command did what was asked
  kFailed = 1,         ///< bad usage or input, a file or device that failed: the message on stderr
  kNotReached = 2,     ///< the run ended without the result asked for (e.g. not converged); its report printed
  kInternalError = 3,  ///< a bug: the message asks for a report
};

/// Thrown by a command that has printed its report but did not reach the result asked for (a
/// solve that did not converge): the process exits with kNotReached once the stack has unwound.
struct ResultNotReached {};

/// Parses and runs `app`; returns its ExitCode. A usage error (an unknown command or option, a
/// value CLI11's checks refuse), a ziggurat::Error and the host running out of memory are
/// kFailed with the message on stderr, as is a run whose output could not be written to stdout
/// (a full disk, a closed pipe).
int run_app(CLI::App& app, int argc, char** argv);

/// The folder of the running executable (from /proc/self/exe).
std::filesystem::path executable_folder();

}  // namespace ziggurat::cli
