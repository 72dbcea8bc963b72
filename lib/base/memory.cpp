#include "ziggurat/base/memory.hpp"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <new>

#include "base/kept_blocks.hpp"
#include "base/large_arrays.hpp"
#include "base/parallel.hpp"
#include "base/staging_area.hpp"
#include "ziggurat/base/error.hpp"

namespace ziggurat {

void check_device_buffers(const DeviceInfo& device, std::size_t count, std::uint64_t bytes, const std::string& what,
                          const std::string& advice) {
  if (bytes <= device.max_alloc_bytes && count * bytes <= device.global_mem_bytes) return;
  const auto mib = [](std::uint64_t b) { return std::to_string((b + (1u << 20) - 1) >> 20) + " MiB"; };
  static const char* const words[] = {"no", "one", "two", "three", "four"};
  const std::string number = count < 5 ? words[count] : std::to_string(count);
  throw OutOfDeviceMemory(what + " needs " + number + " device buffers of " + mib(bytes) + " each, but " +
                          device.label() + " allows " + mib(device.max_alloc_bytes) + " per buffer and has " +
                          mib(device.global_mem_bytes) + " in all: " + advice);
}

namespace detail {

namespace {

std::string mebibytes(std::uint64_t bytes) {
  return std::to_string((bytes + (1u << 20) - 1) >> 20) + " MiB";
}

// A CPU device's large buffer over memory of the library's own on huge pages: the device's own
// allocation faults each 4 KiB page at its first touch, which costs more than the copy into it.
// The memory is a block of device_buffer_blocks(), given back when OpenCL releases the buffer;
// null where the memory or the buffer is refused (the caller then asks the device).
constexpr std::size_t kHugeBufferFrom = std::size_t{4} << 20, kHugePage = std::size_t{2} << 20;

struct HugeBlock {
  void* memory;
  std::size_t bytes;
};

cl::Buffer huge_page_buffer(const Context& context, cl_mem_flags flags, std::size_t bytes) {
  const std::size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  void* memory = device_buffer_blocks().take(rounded);
  if (memory == nullptr) return {};
  auto* block = new (std::nothrow) HugeBlock{memory, rounded};
  if (block == nullptr) {
    device_buffer_blocks().give_back(memory, rounded);
    return {};
  }
  const auto release = [](cl_mem, void* b) {
    const auto* released = static_cast<HugeBlock*>(b);
    device_buffer_blocks().give_back(released->memory, released->bytes);
    delete released;
  };
  cl_int err = CL_SUCCESS;
  cl::Buffer buffer(context.cl_context(), flags | CL_MEM_USE_HOST_PTR, bytes, memory, &err);
  if (err != CL_SUCCESS || clSetMemObjectDestructorCallback(buffer(), release, block) != CL_SUCCESS) {
    buffer = cl::Buffer();  // released before its memory is given back
    release(nullptr, block);
    return {};
  }
  return buffer;
}

}  // namespace

cl::Buffer create_buffer(const Context& context, std::size_t count, std::size_t element_size,
                         cl_mem_flags flags, std::string_view purpose, void* host) {
  const std::string what(purpose);
  if (count == 0) throw InvalidArgument("cannot create an empty " + what + " (0 values)");
  if (count > std::numeric_limits<std::size_t>::max() / element_size) {
    throw InvalidArgument("the " + what + " of " + std::to_string(count) + " values overflows the address space");
  }
  const std::size_t bytes = count * element_size;
  const DeviceInfo& device = context.device();
  if (bytes > device.max_alloc_bytes) {
    throw OutOfDeviceMemory("the " + what + " of " + mebibytes(bytes) + " does not fit on " +
                            device.label() + ", whose largest allocation is " +
                            mebibytes(device.max_alloc_bytes) +
                            ": make the problem smaller or choose a device with more memory");
  }
  if (host == nullptr && device.type == DeviceType::cpu && bytes >= kHugeBufferFrom &&
      (flags & (CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR)) == 0) {
    cl::Buffer buffer = huge_page_buffer(context, flags, bytes);
    if (buffer() != nullptr) return buffer;
  }
  cl_int err = CL_SUCCESS;
  cl::Buffer buffer(context.cl_context(), flags, bytes, host, &err);
  check(err, "clCreateBuffer", "allocating the " + what + " of " + mebibytes(bytes) + " on " + device.label());
  return buffer;
}

void* map_buffer(cl::CommandQueue& queue, const cl::Buffer& buffer, std::size_t bytes) {
  cl_int err = CL_SUCCESS;
  void* pointer = queue.enqueueMapBuffer(buffer, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes,
                                         nullptr, nullptr, &err);
  check(err, "clEnqueueMapBuffer", "mapping pinned host memory");
  return pointer;
}

void unmap_buffer(cl::CommandQueue& queue, const cl::Buffer& buffer, void* pointer) noexcept {
  // Errors cannot be reported from a destructor; the buffer is released either way.
  if (queue.enqueueUnmapMemObject(buffer, pointer) == CL_SUCCESS) queue.finish();
}

namespace {

constexpr std::size_t kStagedFrom = std::size_t{16} << 20;  // pageable copies below this size
constexpr std::size_t kMappedFrom = std::size_t{4} << 20;  // CPU devices: mapped copies from this size

bool on_cpu_device(const cl::CommandQueue& queue) {
  return queue.getInfo<CL_QUEUE_DEVICE>().getInfo<CL_DEVICE_TYPE>() == CL_DEVICE_TYPE_CPU;
}

// Unmaps `mapped` from `buffer`, and waits until it is.
void unmap(cl::CommandQueue& queue, const cl::Buffer& buffer, void* mapped, const char* what) {
  cl::Event unmapped;
  check(queue.enqueueUnmapMemObject(buffer, mapped, nullptr, &unmapped), "clEnqueueUnmapMemObject", what);
  check(unmapped.wait(), "clWaitForEvents", what);
}

// A CPU device's buffer is host memory: a large write maps it and copies on every core (the
// device's own write is one thread's copy, and staging would copy every byte twice).
void write_mapped(cl::CommandQueue& queue, const cl::Buffer& buffer, const void* source, std::size_t bytes,
                  std::size_t buffer_offset) {
  cl_int err = CL_SUCCESS;
  void* to = queue.enqueueMapBuffer(buffer, CL_TRUE, CL_MAP_WRITE_INVALIDATE_REGION, buffer_offset, bytes, nullptr,
                                    nullptr, &err);
  check(err, "clEnqueueMapBuffer", "mapping a CPU device's buffer to copy into it");
  const char* from = static_cast<const char*>(source);
  parallel_for(bytes, std::size_t{1} << 20, [&](std::size_t first, std::size_t last) {
    std::copy(from + first, from + last, static_cast<char*>(to) + first);
  });
  unmap(queue, buffer, to, "copying to the device");
}

// `bytes` from `source` through the two staging buffers in turn; the queue finished on return.
void write_staged(cl::CommandQueue& queue, Staging* const (&staging)[2], const cl::Buffer& buffer, const char* from,
                  std::size_t bytes, std::size_t buffer_offset) {
  for (std::size_t offset = 0, chunk = 0; offset < bytes; offset += kStagingChunk, ++chunk) {
    Staging& s = *staging[chunk % 2];
    if (s.written() != nullptr) check(s.written.wait(), "clWaitForEvents", "waiting for a staged upload");
    const std::size_t size = std::min(kStagingChunk, bytes - offset);
    parallel_for(size, std::size_t{1} << 20, [&](std::size_t first, std::size_t last) {
      std::copy(from + offset + first, from + offset + last, s.data + first);
    });
    check(queue.enqueueWriteBuffer(buffer, CL_FALSE, buffer_offset + offset, size, s.data, nullptr, &s.written),
          "clEnqueueWriteBuffer", "copying to the device");
  }
  check(queue.finish(), "clFinish", "copying to the device");
}

}  // namespace

// Large copies go through two pinned staging buffers in turn: the host copies a chunk into one
// (on every core) while the previous chunk travels from the other at full bus speed. A pageable
// copy of the same size runs at a fraction of it (bench/results/2026-11-28-design-measurements.md).
// CPU devices have no bus to cross: their large writes are mapped copies.
void write_buffer(cl::CommandQueue& queue, const cl::Buffer& buffer, const void* source, std::size_t bytes,
                  std::size_t buffer_offset) {
  if (on_cpu_device(queue) && bytes >= kMappedFrom) return write_mapped(queue, buffer, source, bytes, buffer_offset);
  if (bytes < kStagedFrom) {
    check(queue.enqueueWriteBuffer(buffer, CL_TRUE, buffer_offset, bytes, source), "clEnqueueWriteBuffer",
          "copying to the device");
    return;
  }
  const cl::Context context = queue.getInfo<CL_QUEUE_CONTEXT>();
  const char* from = static_cast<const char*>(source);
  if (const std::shared_ptr<StagingArea> area = kept_staging_area(context)) {
    const std::lock_guard<std::mutex> lock(area->mutex);
    const auto [first, second] = area->buffers(queue);
    Staging* const staging[2] = {first, second};
    return write_staged(queue, staging, buffer, from, bytes, buffer_offset);
  }
  Staging first(queue, context), second(queue, context);
  Staging* const staging[2] = {&first, &second};
  write_staged(queue, staging, buffer, from, bytes, buffer_offset);
}

void copy_buffer(cl::CommandQueue& queue, const cl::Buffer& from, const cl::Buffer& to, std::size_t bytes) {
  if (!on_cpu_device(queue) || bytes < kMappedFrom) {
    check(queue.enqueueCopyBuffer(from, to, 0, 0, bytes), "clEnqueueCopyBuffer", "copying between device buffers");
    return;
  }
  cl_int err = CL_SUCCESS;
  void* source = queue.enqueueMapBuffer(from, CL_TRUE, CL_MAP_READ, 0, bytes, nullptr, nullptr, &err);
  check(err, "clEnqueueMapBuffer", "mapping a CPU device's buffer to copy from it");
  write_mapped(queue, to, source, bytes, 0);
  unmap(queue, from, source, "copying between device buffers");
}

void read_buffer(cl::CommandQueue& queue, const cl::Buffer& buffer, void* destination, std::size_t bytes,
                 std::size_t buffer_offset) {
  check(queue.enqueueReadBuffer(buffer, CL_TRUE, buffer_offset, bytes, destination), "clEnqueueReadBuffer",
        "copying from the device");
}

}  // namespace detail

}  // namespace ziggurat
