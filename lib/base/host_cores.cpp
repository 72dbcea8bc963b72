#include "ziggurat/base/host_cores.hpp"

#include <algorithm>
#include <thread>

#ifdef __linux__
#include <sched.h>
#endif

namespace ziggurat {

std::size_t host_cores() { return std::max(1u, std::thread::hardware_concurrency()); }

std::size_t usable_host_cores() {
#ifdef __linux__
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
#endif
  return host_cores();
}

}  // namespace ziggurat
