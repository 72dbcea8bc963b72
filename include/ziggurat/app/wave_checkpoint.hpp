#pragma once
// A wave run's state at a whole pass, from which `ziggurat wave --resume` goes on: the two
// displacements a leapfrog step needs, the seismograms so far, and what identifies the run, so
// that a run given another model or other options is refused instead of continued into garbage.
//
// The file: a line "ziggurat wave checkpoint 1", a line of JSON (the identity, the step count and
// the arrays' lengths), then the arrays' raw values in the host's byte order: previous, current,
// seismograms.

#include <cstddef>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <vector>

#include "ziggurat/app/wave_run.hpp"
#include "ziggurat/matrix/elastic_grid.hpp"

namespace ziggurat::app {

template <class T>
struct WaveCheckpoint {
  std::size_t steps_done = 0;
  std::vector<T> previous, current;  ///< u at steps_done - 1 and at steps_done: the whole vector
  std::vector<T> seismograms;        ///< receivers x steps_done x components
};

/// What identifies a run: the element type, the grid's nodes, dx, dt, the sponge, the source (its
/// DOFs, forces and frequency), the receivers, and a checksum of the system's values (the model).
template <class T>
nlohmann::json wave_run_identity(const WaveSetup& setup, const wave::WaveSystem<T>& system, double frequency);

/// Writes `state` of the run `identity` at `path`, atomically.
template <class T>
void write_wave_checkpoint(const std::filesystem::path& path, const WaveCheckpoint<T>& state,
                           const nlohmann::json& identity);

/// The state at `path`. InvalidArgument naming the file and the remedy when it is no checkpoint,
/// is cut short, or was written by a run whose identity differs from `identity` (the first
/// difference named); IoError when it cannot be read.
template <class T>
WaveCheckpoint<T> read_wave_checkpoint(const std::filesystem::path& path, const nlohmann::json& identity);

}  // namespace ziggurat::app
