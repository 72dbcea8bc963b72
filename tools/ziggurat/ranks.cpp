#include "ranks.hpp"

#include <cstdlib>
#include <iostream>

#include "stop_signal.hpp"
#include "ziggurat/base/device.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/base/host_cores.hpp"
#include "ziggurat/base/launcher.hpp"

namespace ziggurat::cli {

bool launched_with_ranks() {
#ifdef ZIGGURAT_HAVE_MPI
  return mpi::launched_with_ranks();
#else
  if (launcher_ranks() > 1)
    throw UnsupportedFeature("this ziggurat was built without MPI: rebuild with libopenmpi-dev installed to run "
                             "under mpirun or srun");
  return false;
#endif
}

#ifdef ZIGGURAT_HAVE_MPI
Context rank_device(const std::string& device, const mpi::Communicator& world) {
  if (!device.empty() || std::getenv("ZIGGURAT_DEVICE") != nullptr) return Context(device);
  const std::vector<DeviceInfo> all = list_devices();
  std::vector<DeviceInfo> pool = filter_devices(all, "gpu");
  if (pool.empty()) pool = filter_devices(all, "cpu");
  // One visible device (srun --gpus-per-task, or a host with one): every rank takes it.
  if (pool.size() == 1) return Context(pool.front());
  if (static_cast<std::size_t>(world.local_rank()) >= pool.size())
    throw InvalidArgument(std::to_string(world.local_size()) + " ranks on this host but " +
                          std::to_string(pool.size()) + " device(s) for them: start fewer ranks, or give --device "
                          "(e.g. --device cpu) for ranks to share one");
  return Context(pool[static_cast<std::size_t>(world.local_rank())]);
}

void require_launcher_ranks(const mpi::Communicator& world) {
  const std::size_t launched = launcher_ranks();
  if (launched == static_cast<std::size_t>(world.size())) return;
  throw InvalidArgument("the launcher started " + std::to_string(launched) + " tasks but MPI sees " +
                        std::to_string(world.size()) + " rank(s): each would run the whole problem alone. Under "
                        "Slurm, give srun an MPI plugin (srun --mpi=pmix), or start the ranks with mpirun");
}

int agreed_stop(const mpi::Communicator& world) { return static_cast<int>(world.max(stop_requested())); }

void warn_if_bound(const mpi::Communicator& world) {
  const std::size_t share = std::max<std::size_t>(1, host_cores() / static_cast<std::size_t>(world.local_size()));
  if (world.local_rank() != 0 || usable_host_cores() >= share) return;
  std::cerr << "ziggurat: warning: rank " << world.rank() << " may run on " << usable_host_cores() << " of this host's "
            << host_cores() << " cores (mpirun binds each rank to one core when it starts two or fewer); the set-up and "
            << "the host side of each step share them. `mpirun --bind-to none`, or `--map-by slot:PE=" << share
            << "`, gives each rank its share.\n";
}
#endif

}  // namespace ziggurat::cli
