#pragma once
// An OpenCL context on one device, its command queues, and the programs built for it.

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "ziggurat/binary_cache.hpp"
#include "ziggurat/device.hpp"
#include "ziggurat/opencl.hpp"

namespace ziggurat {

/// How the programs of a Context were obtained, for diagnostics and tests.
struct ProgramBuildStats {
  std::size_t from_memory = 0;   ///< already built in this Context
  std::size_t from_disk = 0;     ///< loaded from the on-disk binary cache
  std::size_t from_source = 0;   ///< compiled from source (then stored in the cache)
  std::size_t refused_binaries = 0;  ///< cached binaries the driver refused (deleted, rebuilt)
};

/// A context on one device with three in-order queues, compute, upload and download, so that
/// transfers and kernels can overlap; profiling is enabled on them where the device supports it.
/// Programs are built once per (source, options) and kept for the Context's lifetime; builds go
/// through the on-disk binary cache. Program building is thread-safe; queues are not shared
/// between threads by the library.
class Context {
 public:
  explicit Context(const DeviceInfo& device);
  Context(const DeviceInfo& device, BinaryCache cache);
  /// The device select_device(spec) picks.
  explicit Context(std::string_view spec = {});
  Context(Context&&) noexcept;
  Context& operator=(Context&&) noexcept;
  ~Context();

  const DeviceInfo& device() const;
  const cl::Context& cl_context() const;
  cl::CommandQueue& compute_queue();
  cl::CommandQueue& upload_queue();
  cl::CommandQueue& download_queue();
  /// Blocks until all three queues are empty.
  void finish();

  /// The program of the embedded kernel file `name` (kernels/NAME.cl), built with `options`.
  const cl::Program& program(std::string_view name, const std::string& options = {});
  /// A program from caller-supplied source; `name` only labels it in errors.
  const cl::Program& program_from_source(std::string_view name, const std::string& source,
                                         const std::string& options = {});
  /// A new kernel object (kernels are not thread-safe, so each caller gets its own).
  cl::Kernel kernel(const cl::Program& program, const char* kernel_name);

  /// The work-group size multiple the device prefers (warp or wavefront width; the SIMD width
  /// on CPUs), as the driver reports it for a simple kernel.
  std::size_t preferred_work_group_multiple();

  const ProgramBuildStats& build_stats() const;
  const BinaryCache& binary_cache() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Seconds from the start of `first` to the end of `last`, read from profiling counters. Both
/// events must come from queues with profiling enabled (DeviceInfo::profiling).
double profiled_seconds(const cl::Event& first, const cl::Event& last);

}  // namespace ziggurat
