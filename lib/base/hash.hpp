#pragma once
// FNV-1a, 64 bit: a stable hash for cache file names and checksums. Stable across compilers and
// versions, unlike std::hash; collisions are harmless where it is used, because every cache
// entry also stores and compares its full key.

#include <cstddef>
#include <cstdint>

namespace ziggurat::detail {

inline std::uint64_t fnv1a64(const void* data, std::size_t size,
                             std::uint64_t hash = 0xcbf29ce484222325ull) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < size; ++i) {
    hash ^= bytes[i];
    hash *= 0x100000001b3ull;
  }
  return hash;
}

}  // namespace ziggurat::detail
