#pragma once
// Pinned staging buffers for large uploads to a device across a bus: write_buffer copies a chunk
// into one on every core while the other's chunk travels. Pinning a pair anew took 8-9 ms an
// upload on the GPU machine, as long as copying 117 MB through them, so each Context keeps a pair
// (its StagingArea), made on its first large upload, and write_buffer finds it by the queue's
// OpenCL context. Internal to the library.
#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>

#include "ziggurat/base/opencl.hpp"

namespace ziggurat::detail {

constexpr std::size_t kStagingChunk = std::size_t{8} << 20;

/// One page-locked buffer of kStagingChunk bytes, mapped while it lives.
struct Staging {
  cl::CommandQueue queue;  // maps and unmaps it
  cl::Buffer buffer;
  char* data = nullptr;
  cl::Event written;  // the last write out of it
  Staging(const cl::CommandQueue& q, const cl::Context& context);
  ~Staging();
  Staging(const Staging&) = delete;
  Staging& operator=(const Staging&) = delete;
};

/// A Context's two staging buffers; one upload at a time holds `mutex` while it uses them.
class StagingArea {
 public:
  explicit StagingArea(const cl::Context& context) : context_(context) {}
  ~StagingArea();  // no longer found by its context
  StagingArea(const StagingArea&) = delete;
  StagingArea& operator=(const StagingArea&) = delete;

  std::mutex mutex;
  /// The two buffers, made and mapped on the first call through the caller's queue (under
  /// `mutex`), so that no other thread's queue is used.
  std::pair<Staging*, Staging*> buffers(const cl::CommandQueue& queue);

 private:
  cl::Context context_;
  std::optional<Staging> first_, second_;
};

/// A new area for `context`, found by kept_staging_area() while the returned handle lives.
std::shared_ptr<StagingArea> keep_staging_area(const cl::Context& context);
/// The area kept for `context`, or none.
std::shared_ptr<StagingArea> kept_staging_area(const cl::Context& context);

}  // namespace ziggurat::detail
