#pragma once
// Explicit FEM elastic waves on one or several devices (method notes, section 5): a 2D P-SV or
// 3D elastic grid (matrix/elastic_grid.hpp) stepped by central differences, one fused kernel a step
// (ops/wave_step.hpp), a Ricker point source, receivers sampled every step into seismograms.
// The three time layers rotate by handle, not by copy.
//
// Several devices: the vector is cut into consecutive blocks, one a device (sizes by the weights,
// block starts at multiples of 16 DOFs so that each block is 64-byte aligned in its buffer), each
// held with halos of s H DOFs on both sides, H the band's half-width (2 nx + 3 in 2D, one plane of
// nodes and a row and a node more in 3D). Every s steps the
// halos of the two current layers come from the neighbours' blocks (device -> host -> device);
// in between each device also recomputes the halo DOFs still valid (s - 1 - j bands wide at step
// j of the s), the pyramid idea: fewer, larger exchanges. Each DOF's arithmetic does not depend
// on where it lies, so every split and every s gives the bits of one device.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
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
  std::size_t components = 2;  ///< the grid's dims: ux, uz (2D) or ux, uy, uz (3D)
  std::vector<T> seismograms;  ///< receivers x steps x components; sample s is the time (s + 1) dt
  double seconds = 0;          ///< wall time of the steps, recording and downloads included
  double nodes_per_second = 0;
};

/// Moves halo values between processes, each holding some of the blocks (the distributed layer
/// implements it with MPI). exchange() posts every receive and send, and returns when all are done.
class HaloTransport {
 public:
  struct Send {
    std::size_t to_block;
    const void* data;
    std::size_t bytes;
    int tag;
  };
  struct Receive {
    std::size_t from_block;
    void* data;
    std::size_t bytes;
    int tag;
  };
  virtual ~HaloTransport() = default;
  virtual void exchange(const std::vector<Send>& sends, const std::vector<Receive>& receives) = 0;
};

/// How the vector is split: into `blocks` blocks (0: one a device given), of which this process
/// holds blocks first_block .. first_block + devices - 1, one a device; the others' halos come
/// through `transport`.
struct WaveSplit {
  std::vector<double> weights;  ///< one a block, its share of the DOFs; empty: equal shares
  std::size_t halo_steps = 1;   ///< s: steps between halo exchanges, >= 1
  std::size_t blocks = 0;
  std::size_t first_block = 0;
  HaloTransport* transport = nullptr;  ///< needed when blocks > devices; not owned
  std::optional<WaveWalk> walk{};      ///< each device's walk over its DOFs; empty: plan_walk()'s
};

template <class T>
class WaveSolver {
 public:
  /// The medium at rest; every component of each receiver node is recorded. InvalidArgument for a
  /// receiver outside the grid, a frequency <= 0, weights that are not one a block and positive, s = 0, a
  /// block smaller than its halo (too many devices or too large an s for the grid), or blocks
  /// beyond this process's devices without a transport.
  WaveSolver(const std::vector<Context>& devices, WaveSystem<T> system, PointSource source, double frequency,
             const std::vector<GridNode>& receivers, WaveSplit split = {});
  /// One device.
  WaveSolver(const Context& context, WaveSystem<T> system, PointSource source, double frequency,
             const std::vector<GridNode>& receivers);
  ~WaveSolver();

  /// Advances `steps` steps from where the last run stopped, recording every receiver each step.
  /// `progress` (if set) is called every few hundred steps.
  WaveRun<T> run(std::size_t steps, const std::function<void(const WaveProgress&)>& progress = {});

  /// The previous and the current displacements (u1, u2), as the host reference needs them (on
  /// the blocks of this process; zero elsewhere).
  std::vector<T> previous() const;
  std::vector<T> current() const;
  std::size_t steps_done() const noexcept;
  /// Sets the state to that of a run after `steps_done` steps whose previous() and current() (the
  /// whole vector, system().dofs() values each) are given: a run from here computes the bits of
  /// the run that was not stopped. InvalidArgument for vectors of another length.
  void restore(const std::vector<T>& previous, const std::vector<T>& current, std::size_t steps_done);
  /// The global DOFs each device of this process owns.
  std::vector<DofRange> blocks() const;
  const WaveSystem<T>& system() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ziggurat::wave
