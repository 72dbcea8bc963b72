#pragma once
// SIGTERM (which Slurm sends before it kills a job) and SIGINT stop a long run after its current
// pass instead of ending the process: the command writes the last whole pass, from which the run
// can go on.

#include <cstddef>
#include <stdexcept>
#include <string>

namespace ziggurat::cli {

/// Thrown by throw_if_stop_requested(): the run stopped at a whole pass on a signal.
struct RunStopped : std::runtime_error {
  explicit RunStopped(int signal);
  int signal;  ///< SIGTERM or SIGINT
};

/// While alive, SIGTERM and SIGINT set a flag instead of ending the process; the previous handlers
/// come back at destruction.
class StopOnSignal {
 public:
  StopOnSignal();
  ~StopOnSignal();
  StopOnSignal(const StopOnSignal&) = delete;
  StopOnSignal& operator=(const StopOnSignal&) = delete;
};

/// The signal received since a StopOnSignal was made (0: none).
int stop_requested();

/// Throws RunStopped when a signal was received: called between passes.
void throw_if_stop_requested();

/// The exit status of a run stopped by `signal`: 128 + its number, as a shell reports it.
int stopped_exit_status(int signal);

}  // namespace ziggurat::cli
