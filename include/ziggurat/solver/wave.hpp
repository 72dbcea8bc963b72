#pragma once
// Explicit FEM elastic waves on one device (method notes, section 5): a 2D P-SV grid
// (matrix/elastic_grid.hpp) stepped by central differences, one fused kernel a step
// (ops/wave_step.hpp), a Ricker point source, receivers sampled every step into seismograms.
// The three time layers rotate by handle, not by copy. The same run gives the same bits every
// time; several devices and MPI ranks are not done yet (issue 15).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "ziggurat/base/context.hpp"
#include "ziggurat/matrix/elastic_grid.hpp"
#include "ziggurat/ops/wave_step.hpp"

namespace ziggurat::wave {

struct WaveProgress {
  std::size_t step = 0, steps = 0;
  double seconds = 0;
};

template <class T>
struct WaveRun {
  std::size_t steps = 0;
  std::size_t receivers = 0;
  std::vector<T> seismograms;  ///< receivers x steps x 2 (ux, uz); sample s is the time (s + 1) dt
  double seconds = 0;          ///< wall time of the steps, recording and downloads included
  double nodes_per_second = 0;
};

template <class T>
class WaveSolver {
 public:
  /// The medium at rest; `receivers` are nodes (ix, iz) in pairs. InvalidArgument for a receiver
  /// outside the grid or a frequency <= 0.
  WaveSolver(const Context& context, WaveSystem<T> system, PointSource source, double frequency,
             const std::vector<std::size_t>& receivers);
  ~WaveSolver();

  /// Advances `steps` steps from where the last run stopped, recording every receiver each step.
  /// `progress` (if set) is called every few hundred steps.
  WaveRun<T> run(std::size_t steps, const std::function<void(const WaveProgress&)>& progress = {});

  /// The previous and the current displacements (u1, u2), as the host reference needs them.
  std::vector<T> previous() const;
  std::vector<T> current() const;
  std::size_t steps_done() const noexcept;
  const WaveSystem<T>& system() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ziggurat::wave
