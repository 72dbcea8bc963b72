#pragma once
// Large host arrays on transparent huge pages where the kernel offers them on request (its
// "madvise" mode), their pages first touched on every core: a solver's set-up fills hundreds of
// MiB of fresh memory, and on virtual machines the kernel's fault and zeroing of each fresh page
// costs more than the copy into it. One thread value-initialising 117 MB took 60-75 ms on the
// GPU machine's 16 cores; touched on every core first, 18 ms. The values are those of
// std::vector's resize; only the pages differ. Internal to the library.
#include <cstddef>
#include <type_traits>
#include <vector>

namespace ziggurat::detail {

/// Asks the kernel for huge pages over the 2 MiB-aligned part of [data, data + bytes) (Linux
/// madvise; nothing elsewhere, or when refused). Call it before the memory is first touched.
void advise_huge_pages(void* data, std::size_t bytes);

/// Writes a byte into each page of [data, data + bytes) on every core, so that the kernel faults
/// the fresh pages in on all of them rather than in the one thread that fills them first.
void touch_pages(void* data, std::size_t bytes);

/// v resized to n values (new values value-initialised, as resize does); an empty v of at least
/// 4 MiB's worth asks for huge pages and has its pages touched on every core before resize writes
/// them.
template <class T>
void resize_large(std::vector<T>& v, std::size_t n) {
  static_assert(std::is_trivially_copyable_v<T>, "large arrays hold plain values");
  if (v.empty() && n * sizeof(T) >= (std::size_t{4} << 20)) {
    v.reserve(n);
    advise_huge_pages(v.data(), n * sizeof(T));
    touch_pages(v.data(), n * sizeof(T));
  }
  v.resize(n);
}

/// A vector of n value-initialised values, on huge pages where they are offered.
template <class T>
std::vector<T> large_vector(std::size_t n) {
  std::vector<T> v;
  resize_large(v, n);
  return v;
}

}  // namespace ziggurat::detail
