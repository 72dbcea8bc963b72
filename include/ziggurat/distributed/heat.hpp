#pragma once
// The heat pyramid across MPI ranks (component ziggurat::mpi), HHRT's setting: a grid larger than
// one host's memory is split along its slowest axis into one slab of rows (planes in 3D, nodes in
// 1D) a rank; each rank holds its slab plus `depth` halo rows on every side it shares with a
// neighbour in a HeatSolver on its device, runs the pyramid passes of `depth` steps the cost model
// plans for its slab, and between them trades the `depth` outer rows it owns with its neighbours
// (MPI_Irecv / MPI_Isend through host memory).
//
// Why the bits are those of one process: a halo row i rows from the slab's edge is wrong after j
// steps only if j > i (the edge row is held fixed as a boundary), so after at most `depth` steps
// every owned row has done exactly the unsplit run's arithmetic; the exchange then makes the
// halos true again.

#include <cstddef>
#include <filesystem>
#include <functional>
#include <vector>

#include "ziggurat/automatic/heat.hpp"
#include "ziggurat/distributed/mpi.hpp"
#include "ziggurat/matrix/grid.hpp"
#include "ziggurat/solver/heat_pyramid.hpp"

namespace ziggurat::mpi {

/// Rows [first, first + count) of the slowest axis.
struct RowRange {
  std::size_t first = 0, count = 0;
  std::size_t end() const noexcept { return first + count; }
};

/// The rows each of `ranks` ranks owns in a grid of `rows` rows on its slowest axis: consecutive,
/// as equal as can be, rank 0 from row 0, the last rank to row rows - 1.
std::vector<RowRange> split_rows(std::size_t rows, std::size_t ranks);

/// The halo depth (= pass height) of a run of `steps` steps when none is given: the pyramid height
/// the cost model plans for the smallest rank's own rows alone under `request` (the strip pyramid's
/// when the model would run them in core), at most the rows that rank owns and `steps`.
template <class T>
std::size_t plan_halo_depth(const Communicator& communicator, const DeviceInfo& device,
                            const std::vector<std::size_t>& extents, std::size_t steps, const HeatPlanRequest& request,
                            const DeviceProfile& profile);

/// What a distributed run did, on every rank.
struct DistributedHeatRun {
  PlannedHeatRun planned;       ///< this rank's plan of `depth` steps (the last interval may be shorter)
  std::size_t depth = 0;        ///< halo rows, and steps between exchanges
  std::size_t intervals = 0;    ///< runs of up to `depth` steps; exchanges between them
  std::size_t steps = 0;
  double seconds = 0;           ///< wall time of the slowest rank
  double exchange_seconds = 0;  ///< of which halo exchanges, the slowest rank's
  double ns_per_node = 0;       ///< seconds / (the whole grid's interior nodes x steps)
};

/// One rank's slab of a heat run split across the ranks of `communicator`.
template <class T>
class DistributedHeat {
 public:
  /// `rows(first, count)` gives the initial field's rows [first, first + count) (a grid of the
  /// extents with `count` rows; each rank reads only its slab). InvalidArgument when a rank would
  /// own fewer than `depth` rows (fewer ranks, or a smaller depth), or for depth 0; the errors of
  /// HeatSolver otherwise.
  DistributedHeat(const Communicator& communicator, const Context& device, const std::vector<std::size_t>& extents,
                  double alpha, std::size_t depth,
                  const std::function<Grid<T>(std::size_t first, std::size_t count)>& rows);

  /// Advances `steps` steps in intervals of `depth` steps, each planned by plan_heat() for this
  /// rank's slab as `request` asks (a height above `depth` is refused), halos exchanged between
  /// them. `progress(steps_done)` (if set) is called after each interval.
  DistributedHeatRun advance(std::size_t steps, const HeatPlanRequest& request, const DeviceProfile& profile,
                             const std::function<void(std::size_t)>& progress = {});

  /// The rows this rank owns, and their values (valid until the next advance()).
  RowRange owned() const noexcept { return owned_; }
  const T* owned_data() const noexcept;
  /// The whole grid's extents.
  const std::vector<std::size_t>& extents() const noexcept { return extents_; }

  /// Writes the whole field as a .npy file at `path`, each rank its own rows, atomically (a
  /// temporary file renamed once every rank has written). Called on every rank.
  void write_npy(const std::filesystem::path& path) const;

 private:
  // `extents`, once every rank holds the same grid, type, alpha and depth.
  static std::vector<std::size_t> agreed(const Communicator& communicator, const std::vector<std::size_t>& extents,
                                         double alpha, std::size_t depth);
  void exchange();

  const Communicator& communicator_;
  std::vector<std::size_t> extents_;
  std::size_t depth_;
  RowRange owned_, stored_;  // stored: the slab, halos included
  std::size_t row_values_ = 1;
  HeatSolver<T> solver_;
};

}  // namespace ziggurat::mpi
