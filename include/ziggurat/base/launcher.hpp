#pragma once
// What a parallel launcher (mpirun, srun, another PMI launcher) tells a process it started, read
// from the environment before MPI is initialised: whether this process is one of several ranks.

#include <cstddef>

namespace ziggurat {

/// The number of ranks this process was started among, as its launcher says: Open MPI's mpirun
/// (OMPI_COMM_WORLD_SIZE), a PMI launcher (PMI_SIZE, PMIX_SIZE), or Slurm's srun: its PMIx plugin
/// exports a rank (PMIX_RANK) but no size (open-mpi/ompi#9167), so a step's task count
/// (SLURM_STEP_NUM_TASKS, or SLURM_NTASKS beside PMIX_RANK) is read. A batch script's own shell,
/// which has SLURM_NTASKS but is one process, is not a step. 1 where no launcher is seen.
std::size_t launcher_ranks();

}  // namespace ziggurat
