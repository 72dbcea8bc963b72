#pragma once
// Device buffers, pinned host memory, and blocking transfers between them, all RAII.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "ziggurat/base/context.hpp"
#include "ziggurat/base/opencl.hpp"

namespace ziggurat {

/// Throws OutOfDeviceMemory unless `count` buffers of `bytes` each fit the device: each within its
/// largest allocation, all within its memory. The message says "`what` needs `count` device buffers
/// of ... each", the device's limits, and then `advice`.
void check_device_buffers(const DeviceInfo& device, std::size_t count, std::uint64_t bytes, const std::string& what,
                          const std::string& advice);

namespace detail {
/// Creates a buffer of count * element_size bytes (over `host` where flags hold
/// CL_MEM_USE_HOST_PTR; on CPU devices, a buffer of 4 MiB or more that names no host memory lies
/// over the library's own, on huge pages). Throws InvalidArgument for zero or overflowing sizes and
/// OutOfDeviceMemory when the size exceeds the device's largest allocation.
cl::Buffer create_buffer(const Context& context, std::size_t count, std::size_t element_size,
                         cl_mem_flags flags, std::string_view purpose, void* host = nullptr);
void* map_buffer(cl::CommandQueue& queue, const cl::Buffer& buffer, std::size_t bytes);
void unmap_buffer(cl::CommandQueue& queue, const cl::Buffer& buffer, void* pointer) noexcept;
/// Blocking copies of `bytes` bytes at byte `buffer_offset` of the buffer (large writes: staged
/// through pinned memory on GPUs, mapped and copied on every core on CPU devices).
void write_buffer(cl::CommandQueue& queue, const cl::Buffer& buffer, const void* source, std::size_t bytes,
                  std::size_t buffer_offset = 0);
void read_buffer(cl::CommandQueue& queue, const cl::Buffer& buffer, void* destination, std::size_t bytes,
                 std::size_t buffer_offset = 0);
/// The first `bytes` bytes of `from` into `to`, in the queue's order (on CPU devices a large copy
/// is made on every core before the call returns).
void copy_buffer(cl::CommandQueue& queue, const cl::Buffer& from, const cl::Buffer& to, std::size_t bytes);
}  // namespace detail

/// `count` values of T in device memory.
template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(const Context& context, std::size_t count, std::string_view purpose = "buffer",
               cl_mem_flags flags = CL_MEM_READ_WRITE)
      : buffer_(detail::create_buffer(context, count, sizeof(T), flags, purpose)), count_(count) {}
  /// A buffer over `count` values the caller holds (CL_MEM_USE_HOST_PTR): a CPU device computes in
  /// them in place, where other devices copy. They must outlive the buffer; the host reads what
  /// kernels wrote only after mapping it (OpenCL's rule for such memory).
  DeviceBuffer(const Context& context, T* host, std::size_t count, std::string_view purpose, cl_mem_flags flags)
      : buffer_(detail::create_buffer(context, count, sizeof(T), flags | CL_MEM_USE_HOST_PTR, purpose, host)),
        count_(count) {}
  // Move-only: a copy would silently share the device memory with the original.
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : buffer_(std::move(other.buffer_)), count_(std::exchange(other.count_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    buffer_ = std::move(other.buffer_);
    count_ = std::exchange(other.count_, 0);
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  std::size_t size() const noexcept { return count_; }
  std::size_t bytes() const noexcept { return count_ * sizeof(T); }
  const cl::Buffer& get() const noexcept { return buffer_; }

 private:
  cl::Buffer buffer_;
  std::size_t count_ = 0;
};

/// Page-locked host memory, allocated by the OpenCL runtime (CL_MEM_ALLOC_HOST_PTR) and mapped
/// for the host for its whole lifetime: transfers between it and device buffers run at full bus
/// speed. Move-only; unmapped and freed on destruction.
template <class T>
class PinnedHostBuffer {
 public:
  PinnedHostBuffer(const Context& context, std::size_t count)
      : buffer_(detail::create_buffer(context, count, sizeof(T),
                                      CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR,
                                      "pinned host buffer")),
        queue_(context.upload_queue()),
        data_(static_cast<T*>(detail::map_buffer(queue_, buffer_, count * sizeof(T)))),
        count_(count) {}
  PinnedHostBuffer(PinnedHostBuffer&& other) noexcept { swap(other); }
  PinnedHostBuffer& operator=(PinnedHostBuffer&& other) noexcept {
    PinnedHostBuffer(std::move(other)).swap(*this);
    return *this;
  }
  PinnedHostBuffer(const PinnedHostBuffer&) = delete;
  PinnedHostBuffer& operator=(const PinnedHostBuffer&) = delete;
  ~PinnedHostBuffer() {
    if (data_ != nullptr) detail::unmap_buffer(queue_, buffer_, data_);
  }

  T* data() noexcept { return data_; }
  const T* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return count_; }
  T& operator[](std::size_t i) noexcept { return data_[i]; }
  const T& operator[](std::size_t i) const noexcept { return data_[i]; }
  T* begin() noexcept { return data_; }
  T* end() noexcept { return data_ + count_; }

 private:
  void swap(PinnedHostBuffer& other) noexcept {
    std::swap(buffer_, other.buffer_);
    std::swap(queue_, other.queue_);
    std::swap(data_, other.data_);
    std::swap(count_, other.count_);
  }

  cl::Buffer buffer_;
  cl::CommandQueue queue_;
  T* data_ = nullptr;
  std::size_t count_ = 0;
};

/// Blocking copy of buffer.size() values from host memory to the device.
template <class T>
void copy_to_device(cl::CommandQueue& queue, const T* source, DeviceBuffer<T>& destination) {
  detail::write_buffer(queue, destination.get(), source, destination.bytes());
}

/// Blocking copy of buffer.size() values from the device to host memory.
template <class T>
void copy_to_host(cl::CommandQueue& queue, const DeviceBuffer<T>& source, T* destination) {
  detail::read_buffer(queue, source.get(), destination, source.bytes());
}

}  // namespace ziggurat
