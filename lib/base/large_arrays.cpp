#include "base/large_arrays.hpp"

#include <cstdint>

#include "base/parallel.hpp"

#ifdef __linux__
#include <sys/mman.h>
#endif

namespace ziggurat::detail {

void advise_huge_pages(void* data, std::size_t bytes) {
#ifdef __linux__
  constexpr std::uintptr_t kHuge = std::uintptr_t{2} << 20;
  const auto begin = reinterpret_cast<std::uintptr_t>(data);
  const std::uintptr_t first = (begin + kHuge - 1) / kHuge * kHuge, last = (begin + bytes) / kHuge * kHuge;
  // A refusal (no THP in this kernel) leaves ordinary pages: the advice is only a speed-up.
  if (last > first) (void)::madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
#else
  (void)data;
  (void)bytes;
#endif
}

void touch_pages(void* data, std::size_t bytes) {
  constexpr std::size_t kPage = 4096, kPagesPerPart = 1024;  // 4 MiB a thread at least
  char* const bytes_at = static_cast<char*>(data);
  parallel_for(bytes / kPage, kPagesPerPart, [&](std::size_t first, std::size_t last) {
    for (std::size_t page = first; page < last; ++page) bytes_at[page * kPage] = 0;
  });
}

}  // namespace ziggurat::detail
