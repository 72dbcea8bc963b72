#pragma once
// The memory of released CPU-device buffers, kept for the next buffer of its size. On CPU devices
// the library lays large buffers on huge-page memory of its own (memory.cpp); a solve repeated on
// one system (a time step's) releases and asks again for the same sizes, and fresh memory costs
// the kernel's zeroing of every page again: a quarter of a BSR set-up's time on PoCL. Internal to
// the library.
#include <cstddef>
#include <mutex>
#include <utility>
#include <vector>

namespace ziggurat::detail {

/// Blocks of memory aligned to `alignment`, their sizes multiples of it. A released block is kept
/// for a take() of its size, the last released first. What is kept never takes the blocks past the
/// most they held in use at once (kept + in use <= that peak), nor past `limit` bytes kept: the
/// oldest kept blocks are freed to make room. Thread-safe.
class KeptBlocks {
 public:
  KeptBlocks(std::size_t alignment, std::size_t limit) : alignment_(alignment), limit_(limit) {}
  ~KeptBlocks();  // frees what is kept
  KeptBlocks(const KeptBlocks&) = delete;
  KeptBlocks& operator=(const KeptBlocks&) = delete;

  /// A block of `bytes`: the last kept one of that size, else new (advised onto huge pages); null
  /// if the system has no memory for it.
  void* take(std::size_t bytes);
  /// Takes back a block from take(), of the size it was taken with: kept, or freed.
  void give_back(void* block, std::size_t bytes) noexcept;
  std::size_t kept_bytes() const;

 private:
  void free_oldest_while_over(std::size_t room);  // until at most `room` bytes are kept; the mutex held

  const std::size_t alignment_, limit_;
  mutable std::mutex mutex_;
  std::vector<std::pair<std::size_t, void*>> kept_;  // released order: the oldest first
  std::size_t kept_bytes_ = 0, in_use_ = 0, peak_ = 0;
};

/// The process's blocks for CPU-device buffers (2 MiB huge pages, at most an eighth of the host's
/// memory kept). Never destroyed: OpenCL may release a buffer while the process exits.
KeptBlocks& device_buffer_blocks();

}  // namespace ziggurat::detail
