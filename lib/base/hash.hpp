#pragma once
// FNV-1a, 64 bit: a stable hash for cache file names and checksums. Stable across compilers and
// versions, unlike std::hash; collisions are harmless where it is used, because every cache
// entry also stores and compares its full key.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

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

/// The hash of `text` as 16 hex digits: a file name for a cache entry.
inline std::string hash_name(const std::string& text) {
  char name[17];
  std::snprintf(name, sizeof name, "%016llx", static_cast<unsigned long long>(fnv1a64(text.data(), text.size())));
  return name;
}

}  // namespace ziggurat::detail
