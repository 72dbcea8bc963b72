// An MPI application that embeds ziggurat: it initialises and finalises MPI itself, and gives
// ziggurat a communicator of its own. Run on 2 ranks.

#include <mpi.h>

#include <ziggurat/distributed/mpi.hpp>

#include <iostream>
#include <string>
#include <vector>

namespace {

int fail(const std::string& what) {
  std::cerr << "downstream_mpi: " << what << "\n";
  MPI_Abort(MPI_COMM_WORLD, 1);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int world_rank = 0, world_size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  if (world_size != 2) return fail("run me on 2 ranks, not " + std::to_string(world_size));
  try {
    {
      const ziggurat::mpi::Environment environment;  // MPI is the application's: not ziggurat's to end
      if (environment.initialised_here()) return fail("Environment says it initialised MPI, which was running");
    }
    int finalised = 1;
    MPI_Finalized(&finalised);
    if (finalised) return fail("Environment finalised MPI that the application had initialised");

    // The application's own communicator: the two ranks in reverse order.
    MPI_Comm reversed;
    MPI_Comm_split(MPI_COMM_WORLD, 0, world_size - 1 - world_rank, &reversed);
    {
      const ziggurat::mpi::Communicator communicator(reversed);
      if (communicator.size() != 2 || communicator.rank() != 1 - world_rank)
        return fail("the wrapped communicator's rank is " + std::to_string(communicator.rank()) + ", not " +
                    std::to_string(1 - world_rank));
      // Rank 0 of the wrapped communicator is world rank 1: it gathers in its own order.
      const std::vector<double> gathered = communicator.gather(std::vector<double>{double(world_rank)});
      if (communicator.rank() == 0 && gathered != std::vector<double>{1, 0})
        return fail("gather on the wrapped communicator did not follow its order");
      if (communicator.max(world_rank) != 1) return fail("max on the wrapped communicator is wrong");
      communicator.require_agreement({{"a value", "same"}});
    }
    MPI_Comm_free(&reversed);
  } catch (const std::exception& error) {
    return fail(error.what());
  }
  if (world_rank == 0) std::cout << "downstream_mpi: ziggurat ran on the application's MPI and communicator\n";
  MPI_Finalize();
  return 0;
}
