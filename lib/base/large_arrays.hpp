#pragma once
// Large host arrays on transparent huge pages where the kernel offers them on request (its
// "madvise" mode): a solver's set-up fills hundreds of MiB of fresh memory, and on virtual
// machines the fault of each 4 KiB page costs more than the copy into it. The values are those of
// std::vector's resize; only the pages differ. Internal to the library.
#include <cstddef>
#include <vector>

namespace ziggurat::detail {

/// Asks the kernel for huge pages over the 2 MiB-aligned part of [data, data + bytes) (Linux
/// madvise; nothing elsewhere, or when refused). Call it before the memory is first touched.
void advise_huge_pages(void* data, std::size_t bytes);

/// v resized to n values (new values value-initialised, as resize does); an empty v of at least
/// 4 MiB's worth asks for huge pages before its first touch.
template <class T>
void resize_large(std::vector<T>& v, std::size_t n) {
  if (v.empty() && n * sizeof(T) >= (std::size_t{4} << 20)) {
    v.reserve(n);
    advise_huge_pages(v.data(), n * sizeof(T));
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
