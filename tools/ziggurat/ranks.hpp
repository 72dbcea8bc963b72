#pragma once
// What the subcommands that run on MPI ranks share (`mpirun -np R ziggurat wave|heat ...`): whether
// this process is one of several ranks, each rank's device, and one failing rank ending the job.

#include <exception>
#include <string>
#include <vector>

#include "ziggurat/base/context.hpp"
#ifdef ZIGGURAT_HAVE_MPI
#include "ziggurat/distributed/mpi.hpp"
#endif

namespace ziggurat::cli {

/// Whether mpirun, srun or another PMI launcher started this process as one of several ranks
/// (launcher_ranks()). Throws UnsupportedFeature when it did and this tool was built without MPI.
bool launched_with_ranks();

#ifdef ZIGGURAT_HAVE_MPI
/// Rank r's device: device r of its host (the GPUs, else the CPU devices), unless `device` or
/// ZIGGURAT_DEVICE names one for every rank. Where a rank sees one device (srun --gpus-per-task
/// gives each its own), it takes that one. InvalidArgument when the host has more ranks than
/// devices, and more than one device.
Context rank_device(const std::string& device, const mpi::Communicator& world);

/// Throws InvalidArgument when the launcher started more tasks than MPI joined into `world`, as
/// srun without an MPI plugin does (every task a world of one, each running the whole problem).
void require_launcher_ranks(const mpi::Communicator& world);

/// Warns on stderr (once per host) when this rank may use fewer than its share of the host's cores,
/// as when mpirun binds each rank to one core: the host side of a run (set-up, packing, the
/// runtime's transfer threads) then shares that core.
void warn_if_bound(const mpi::Communicator& world);

/// The signal that stops a run (stop_signal.hpp) on any rank, the same on every rank (0: none):
/// called by every rank once a pass, so that all stop after the same pass.
int agreed_stop(const mpi::Communicator& world);

/// Runs body(world) on this rank once every rank holds the same `options` (those that decide
/// what the ranks do together: the type, the steps, the exchange depth); an exception on any rank
/// ends the whole job with its message, so that no rank is left waiting for one that failed. MPI
/// is finalised at exit.
template <class Body>
void on_ranks(const std::vector<mpi::SharedValue>& options, Body body) {
  static mpi::Environment environment;
  const mpi::Communicator world;
  try {
    require_launcher_ranks(world);
    world.require_agreement(options);
    warn_if_bound(world);
    body(world);
  } catch (const std::exception& e) {
    world.abort(e.what());
  }
}
#endif

}  // namespace ziggurat::cli
