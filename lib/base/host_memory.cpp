#include "ziggurat/base/host_memory.hpp"

#include <unistd.h>

#include "ziggurat/base/error.hpp"

namespace ziggurat {

std::uint64_t host_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return 0;
  return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page);
}

void check_host_memory(std::uint64_t bytes, const std::string& what, const std::string& advice) {
  const std::uint64_t physical = host_memory_bytes();
  if (physical == 0) return;  // unknown: the allocation itself will tell
  if (bytes > physical) {
    throw InvalidArgument(what + " needs " + std::to_string(bytes >> 20) + " MiB of host memory; this machine has " +
                          std::to_string(physical >> 20) + " MiB: " + advice);
  }
}

}  // namespace ziggurat
