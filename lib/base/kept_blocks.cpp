#include "base/kept_blocks.hpp"

#include <algorithm>
#include <cstdlib>

#include "base/large_arrays.hpp"
#include "ziggurat/base/host_memory.hpp"

namespace ziggurat::detail {

KeptBlocks::~KeptBlocks() {
  for (const auto& kept : kept_) std::free(kept.second);
}

void* KeptBlocks::take(std::size_t bytes) {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    const auto last = std::find_if(kept_.rbegin(), kept_.rend(), [&](const auto& kept) { return kept.first == bytes; });
    if (last != kept_.rend()) {
      void* block = last->second;
      kept_.erase(std::next(last).base());
      kept_bytes_ -= bytes;
      in_use_ += bytes;
      return block;
    }
    // A new block: what is kept makes room first, so that kept + in use stays within the peak.
    // Its bytes count as in use from here, before the allocation, so that a take on another
    // thread meanwhile makes room for both.
    free_oldest_while_over(std::max(peak_, in_use_ + bytes) - in_use_ - bytes);
    in_use_ += bytes;
    peak_ = std::max(peak_, in_use_);
  }
  void* block = std::aligned_alloc(alignment_, bytes);
  if (block == nullptr) {
    const std::lock_guard<std::mutex> lock(mutex_);
    in_use_ -= bytes;
    return nullptr;
  }
  advise_huge_pages(block, bytes);
  return block;
}

void KeptBlocks::give_back(void* block, std::size_t bytes) noexcept {
  try {
    const std::lock_guard<std::mutex> lock(mutex_);
    in_use_ -= bytes;
    if (bytes <= limit_) {
      free_oldest_while_over(limit_ - bytes);
      kept_.emplace_back(bytes, block);
      kept_bytes_ += bytes;
      return;
    }
  } catch (...) {  // no memory for the entry, or no lock: the block goes back to the system
  }
  std::free(block);
}

std::size_t KeptBlocks::kept_bytes() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return kept_bytes_;
}

void KeptBlocks::free_oldest_while_over(std::size_t room) {
  std::size_t dropped = 0;
  while (dropped < kept_.size() && kept_bytes_ > room) {
    std::free(kept_[dropped].second);
    kept_bytes_ -= kept_[dropped].first;
    ++dropped;
  }
  kept_.erase(kept_.begin(), kept_.begin() + static_cast<std::ptrdiff_t>(dropped));
}

KeptBlocks& device_buffer_blocks() {
  static KeptBlocks* const blocks = new KeptBlocks(std::size_t{2} << 20, host_memory_bytes() / 8);
  return *blocks;
}

}  // namespace ziggurat::detail
