#include "ziggurat/base/host_cores.hpp"

#include <algorithm>
#include <cstdlib>
#include <string>
#include <thread>

#include "ziggurat/base/error.hpp"

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

std::size_t host_threads() {
  const std::size_t usable = usable_host_cores();
  for (const char* name : {"ZIGGURAT_NUM_THREADS", "OMP_NUM_THREADS"}) {
    const char* value = std::getenv(name);
    if (value == nullptr || *value == '\0') continue;
    char* end = nullptr;
    const long cap = std::strtol(value, &end, 10);
    if (end == value || (*end != '\0' && *end != ',') || cap < 1)
      throw InvalidArgument(std::string(name) + "=" + value + " is no thread count: give a whole number above 0, or unset it");
    return std::min(usable, static_cast<std::size_t>(cap));
  }
  return usable;
}

}  // namespace ziggurat
