#pragma once
// An OpenCL context on one device, its command queues, and the programs built for it.

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "ziggurat/base/binary_cache.hpp"
#include "ziggurat/base/device.hpp"
#include "ziggurat/base/opencl.hpp"

namespace ziggurat {

/// How the programs of a Context were obtained, for diagnostics and tests.
struct ProgramBuildStats {
  std::size_t from_memory = 0;   ///< built, or being built by another thread, in this Context
  std::size_t from_disk = 0;     ///< loaded from the on-disk binary cache
  std::size_t from_source = 0;   ///< compiled from source (then stored in the cache)
  std::size_t refused_binaries = 0;  ///< cached binaries the driver refused (deleted, rebuilt)
};

/// A context on one device with three in-order queues, compute, upload and download, so that
/// transfers and kernels can overlap; profiling is enabled on them where the device supports it.
/// Programs are built once per (source, options) and kept for the Context's lifetime; builds go
/// through the on-disk binary cache.
///
/// A Context is a handle, like cl::Context: copies share one OpenCL context, its queues and its
/// programs, and objects that work on a Context (solvers, buffers) keep a copy, so it lives as
/// long as they do. Building programs and querying the Context are thread-safe; a queue must not
/// be used by two threads at once.
class Context {
 public:
  explicit Context(const DeviceInfo& device);
  Context(const DeviceInfo& device, BinaryCache cache);
  /// The device select_device(spec) picks.
  explicit Context(std::string_view spec = {});

  const DeviceInfo& device() const;
  const cl::Context& cl_context() const;
  cl::CommandQueue& compute_queue() const;
  cl::CommandQueue& upload_queue() const;
  cl::CommandQueue& download_queue() const;
  /// Blocks until all three queues are empty.
  void finish() const;

  /// The program of the embedded kernel family `name` (kernel_source()), built with `options`.
  const cl::Program& program(std::string_view name, const std::string& options = {}) const;
  /// A program from caller-supplied source; `name` only labels it in errors.
  const cl::Program& program_from_source(std::string_view name, const std::string& source,
                                         const std::string& options = {}) const;
  /// A new kernel object (kernels are not thread-safe, so each caller gets its own).
  cl::Kernel kernel(const cl::Program& program, const char* kernel_name) const;

  /// The work-group size multiple the device prefers (warp or wavefront width; the SIMD width
  /// on CPUs), as the driver reports it for a simple kernel.
  std::size_t preferred_work_group_multiple() const;

  ProgramBuildStats build_stats() const;
  /// A snapshot of the binary cache's state (its folder, damaged entries deleted, last write error).
  BinaryCache binary_cache() const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

/// Seconds from the start of `first` to the end of `last`, read from profiling counters. Both
/// events must come from queues with profiling enabled (DeviceInfo::profiling).
double profiled_seconds(const cl::Event& first, const cl::Event& last);

/// A profiling counter of a command, in ns (CL_PROFILING_COMMAND_START, _END, ...); its queue
/// must have profiling enabled.
cl_ulong profiling_time(const cl::Event& event, cl_profiling_info what);

}  // namespace ziggurat
