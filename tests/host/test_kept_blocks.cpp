// The memory of released CPU-device buffers, kept for the next buffer of its size.

#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "base/kept_blocks.hpp"

using ziggurat::detail::KeptBlocks;

namespace {
constexpr std::size_t kAlign = 4096, kMiB = std::size_t{1} << 20;
}

TEST_CASE("a released block serves the next take of its size, the last released first") {
  KeptBlocks blocks(kAlign, 64 * kMiB);
  void* a = blocks.take(2 * kMiB);
  void* b = blocks.take(2 * kMiB);
  void* c = blocks.take(4 * kMiB);
  REQUIRE((a != nullptr && b != nullptr && c != nullptr));
  CHECK(reinterpret_cast<std::uintptr_t>(a) % kAlign == 0);
  std::memset(b, 0x5a, 2 * kMiB);  // its values stay: a kept block is memory that is not zeroed again
  blocks.give_back(a, 2 * kMiB);
  blocks.give_back(b, 2 * kMiB);
  blocks.give_back(c, 4 * kMiB);
  CHECK(blocks.kept_bytes() == 8 * kMiB);
  void* again = blocks.take(2 * kMiB);
  CHECK(again == b);
  CHECK(static_cast<unsigned char*>(again)[kMiB] == 0x5a);
  CHECK(blocks.take(2 * kMiB) == a);
  CHECK(blocks.take(4 * kMiB) == c);
  CHECK(blocks.kept_bytes() == 0);
  blocks.give_back(a, 2 * kMiB);
  blocks.give_back(b, 2 * kMiB);
  blocks.give_back(c, 4 * kMiB);
}

TEST_CASE("kept blocks never take the memory past the most in use at once, nor past the limit") {
  SUBCASE("a new size frees the oldest kept blocks first") {
    KeptBlocks blocks(kAlign, 64 * kMiB);
    void* a = blocks.take(2 * kMiB);
    void* b = blocks.take(2 * kMiB);  // the peak: 4 MiB in use
    blocks.give_back(a, 2 * kMiB);
    blocks.give_back(b, 2 * kMiB);
    void* c = blocks.take(4 * kMiB);  // no kept block of 4 MiB: both kept ones go
    CHECK(blocks.kept_bytes() == 0);
    void* d = blocks.take(2 * kMiB);  // in use 6 MiB: a new peak, nothing kept to free
    CHECK(blocks.kept_bytes() == 0);
    blocks.give_back(c, 4 * kMiB);
    blocks.give_back(d, 2 * kMiB);
    CHECK(blocks.kept_bytes() == 6 * kMiB);
    void* e = blocks.take(2 * kMiB);  // kept: the last released
    CHECK(e == d);
    CHECK(blocks.kept_bytes() == 4 * kMiB);  // 2 in use and 4 kept: the peak of 6
    void* f = blocks.take(2 * kMiB);  // new: the kept 4 MiB block goes, or 2 + 2 + 4 would pass 6
    CHECK(blocks.kept_bytes() == 0);
    for (void* p : {e, f}) blocks.give_back(p, 2 * kMiB);
  }
  SUBCASE("past the limit the oldest kept blocks are freed; a block above it is never kept") {
    KeptBlocks blocks(kAlign, 5 * kMiB);
    std::vector<void*> taken;
    for (int i = 0; i < 3; ++i) taken.push_back(blocks.take(2 * kMiB));
    for (void* p : taken) blocks.give_back(p, 2 * kMiB);
    CHECK(blocks.kept_bytes() == 4 * kMiB);  // the first released went for the third
    CHECK(blocks.take(2 * kMiB) == taken[2]);
    CHECK(blocks.take(2 * kMiB) == taken[1]);
    blocks.give_back(taken[1], 2 * kMiB);
    blocks.give_back(taken[2], 2 * kMiB);
    void* large = blocks.take(6 * kMiB);
    blocks.give_back(large, 6 * kMiB);
    CHECK(blocks.kept_bytes() == 0);  // freed, not kept
  }
}

TEST_CASE("threads take and give back blocks at once, and each block serves one at a time") {
  KeptBlocks blocks(kAlign, 64 * kMiB);
  std::atomic<int> overwritten{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&blocks, &overwritten, t] {
      for (int i = 0; i < 200; ++i) {
        const std::size_t bytes = (1 + (i + t) % 3) * kAlign;
        auto* p = static_cast<unsigned char*>(blocks.take(bytes));
        std::memset(p, t, bytes);
        std::this_thread::yield();
        for (std::size_t at = 0; at < bytes; at += 512) overwritten += p[at] != t;  // another thread's block too?
        blocks.give_back(p, bytes);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  CHECK(overwritten == 0);
  CHECK(blocks.kept_bytes() <= 4 * 3 * kAlign);  // within the peak: 4 threads of at most 3 pages
}
