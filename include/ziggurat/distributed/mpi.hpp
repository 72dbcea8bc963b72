#pragma once
// The distributed layer's MPI part (optional component ziggurat::mpi, built where Open MPI is
// found): thin RAII over MPI's C API, and the halo transport of the wave solver between ranks.
// One rank a block: block b of a split lives on rank b.
#include <mpi.h>

#include <cstddef>
#include <string>
#include <vector>

#include "ziggurat/solver/wave.hpp"

namespace ziggurat::mpi {

/// True when launcher_ranks() (base/launcher.hpp) is above 1.
bool launched_with_ranks();

/// MPI_Init on construction where MPI is not yet initialised; MPI_Finalize on destruction only if
/// this object initialised it. A host program that initialised MPI itself keeps it, and its error
/// handlers: errors are made to return as codes (becoming exceptions) on MPI_COMM_WORLD only where
/// this object started MPI.
class Environment {
 public:
  Environment();
  ~Environment();
  Environment(const Environment&) = delete;
  Environment& operator=(const Environment&) = delete;
  /// Whether this object called MPI_Init (and will call MPI_Finalize).
  bool initialised_here() const noexcept { return initialised_here_; }

 private:
  bool initialised_here_ = false;
};

/// A named value that every rank of a run must hold alike (a grid's extents, the element type, the
/// steps), as text.
struct SharedValue {
  std::string name, value;
};

/// A communicator, with what the distributed solvers need of it: MPI_COMM_WORLD by default, or one
/// of the caller's (a sub-communicator of an application that embeds ziggurat). The communicator is
/// used, not copied nor freed: the caller keeps it alive while this object and the solvers given it
/// are in use, and gives ziggurat one of its own (MPI_Comm_dup) where its own messages could share
/// tags with the halo exchange's. MPI must be initialised (Environment, or the caller's MPI_Init).
class Communicator {
 public:
  Communicator() : Communicator(MPI_COMM_WORLD) {}
  explicit Communicator(MPI_Comm communicator);
  MPI_Comm get() const noexcept { return communicator_; }
  int rank() const noexcept { return rank_; }
  int size() const noexcept { return size_; }
  /// This rank's index among the ranks on its host (MPI_COMM_TYPE_SHARED).
  int local_rank() const noexcept { return local_rank_; }
  int local_size() const noexcept { return local_size_; }
  /// Prints `message` (naming the rank) on stderr and ends every rank of the communicator: no rank is left
  /// waiting for one that failed.
  [[noreturn]] void abort(const std::string& message) const;
  /// Every rank's `values` (counts may differ, each below 2^31) on `root`, rank after rank; empty
  /// elsewhere.
  template <class T>
  std::vector<T> gather(const std::vector<T>& values, int root = 0) const;
  /// The largest (smallest) of every rank's value, on every rank.
  double max(double value) const;
  std::size_t min(std::size_t value) const;
  /// Returns when every rank has called it.
  void barrier() const;
  /// `text` of rank `root` on every rank.
  void broadcast(std::string& text, int root = 0) const;
  /// Returns when every rank passed the same names and values; else throws InvalidArgument on
  /// every rank, naming the first value that differs, rank 0's and the first other rank's. Ranks
  /// given different arguments then fail before any exchange rather than hang or compute garbage.
  void require_agreement(const std::vector<SharedValue>& values) const;

 private:
  MPI_Comm communicator_;
  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1;
};

/// Halo exchange between ranks by MPI_Irecv / MPI_Isend, waited for together: block b is rank b.
/// Messages above 1 GiB go in pieces (MPI counts are int).
class HaloTransport final : public wave::HaloTransport {
 public:
  explicit HaloTransport(const Communicator& communicator) : communicator_(communicator) {}
  void exchange(const std::vector<Send>& sends, const std::vector<Receive>& receives) override;

 private:
  const Communicator& communicator_;
};

/// The wave solver with one block per rank, on `device`: a WaveSolver of the split's block
/// rank(), its halos through MPI. run() returns the whole seismograms on rank 0 (gathered from the
/// ranks that own each receiver, bit for bit), this rank's elsewhere.
template <class T>
class DistributedWave {
 public:
  DistributedWave(const Communicator& communicator, const Context& device, wave::WaveSystem<T> system,
                  wave::PointSource source, double frequency, const std::vector<wave::GridNode>& receivers,
                  std::size_t halo_steps);
  wave::WaveRun<T> run(std::size_t steps, const std::function<void(const wave::WaveProgress&)>& progress = {});
  /// The previous and the current displacements of the whole vector on rank 0 (empty elsewhere),
  /// gathered from the ranks' blocks; called on every rank.
  std::vector<T> previous() const;
  std::vector<T> current() const;
  std::size_t steps_done() const noexcept { return solver_.steps_done(); }
  /// WaveSolver::restore() on every rank, each given the whole vectors.
  void restore(const std::vector<T>& previous, const std::vector<T>& current, std::size_t steps_done);

 private:
  std::vector<T> joined(const std::vector<T>& layer) const;
  // `receivers`, once every rank holds the same grid, type, time step, source, receivers and halo steps.
  static std::vector<wave::GridNode> agreed(const Communicator& communicator, const wave::WaveSystem<T>& system,
                                            const wave::PointSource& source, double frequency,
                                            const std::vector<wave::GridNode>& receivers, std::size_t halo_steps);

  const Communicator& communicator_;
  HaloTransport transport_;
  std::vector<wave::GridNode> receiver_nodes_;
  wave::WaveSolver<T> solver_;
};

}  // namespace ziggurat::mpi
