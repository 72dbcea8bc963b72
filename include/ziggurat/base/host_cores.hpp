#pragma once
// The host cores this process may run on. Under mpirun a rank is often bound to fewer cores than
// the host has (Open MPI binds each rank to one core when it starts two or fewer), and the
// library's host loops must not start more threads than the cores they can use.

#include <cstddef>

namespace ziggurat {

/// The cores in this process's CPU affinity (Linux), else std::thread::hardware_concurrency();
/// at least 1.
std::size_t usable_host_cores();

/// All the host's cores, whatever the affinity; at least 1.
std::size_t host_cores();

/// The threads the library's host loops may start: usable_host_cores(), capped by
/// ZIGGURAT_NUM_THREADS where set, else by OMP_NUM_THREADS (its first level, as OpenMP reads
/// "8,2"), so that a batch job's thread budget holds for ziggurat too. At least 1. Throws
/// InvalidArgument, naming the variable, when the one read is not a whole number above 0.
std::size_t host_threads();

}  // namespace ziggurat
