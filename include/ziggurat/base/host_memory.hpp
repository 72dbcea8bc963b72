#pragma once
// The host's physical memory, checked before a large allocation: a problem larger than the machine
// is refused at once, naming what needs the memory, not after minutes of allocating.

#include <cstdint>
#include <string>

namespace ziggurat {

/// The machine's physical memory in bytes; 0 where the system does not say.
std::uint64_t host_memory_bytes();

/// Throws InvalidArgument naming `what` unless `bytes` fit in the machine's physical memory; the
/// message ends with `advice`.
void check_host_memory(std::uint64_t bytes, const std::string& what, const std::string& advice = "make the grid smaller");

}  // namespace ziggurat
