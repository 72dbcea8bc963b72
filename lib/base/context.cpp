#include "ziggurat/base/context.hpp"

#include <chrono>
#include <future>
#include <map>
#include <mutex>
#include <optional>

#include "base/kernel_launch.hpp"
#include "base/staging_area.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/base/log.hpp"
#include "ziggurat/base/program.hpp"

namespace ziggurat {

namespace {

cl::CommandQueue make_queue(const cl::Context& context, const DeviceInfo& device) {
  cl_int err = CL_SUCCESS;
  const cl_command_queue_properties properties = device.profiling ? CL_QUEUE_PROFILING_ENABLE : 0;
  cl::CommandQueue queue(context, device.device, properties, &err);
  check(err, "clCreateCommandQueue", "creating a command queue on " + device.label());
  return queue;
}

std::string build_log(const cl::Program& program, const cl::Device& device) {
  cl_int err = CL_SUCCESS;
  std::string log = program.getBuildInfo<CL_PROGRAM_BUILD_LOG>(device, &err);
  return err == CL_SUCCESS ? log : "(the build log could not be read: " + cl_error_name(err) + ")";
}

}  // namespace

struct Context::Impl {
  DeviceInfo device;
  cl::Context context;
  cl::CommandQueue compute, upload, download;
  BinaryCache cache;
  std::mutex mutex;        // guards programs and stats; builds run outside it
  std::mutex cache_mutex;  // guards the binary cache, so that its disk I/O holds up no lookup
  // By program_cache_key: a program built, or being built by the first thread that asked for it
  // (the others wait for it), so that different programs compile at the same time.
  std::map<std::string, std::shared_future<cl::Program>> programs;
  ProgramBuildStats stats;
  std::once_flag probed;  // the preferred work-group multiple is asked for once
  std::size_t work_group_multiple = 0;
  std::shared_ptr<detail::StagingArea> staging;  // for write_buffer, while this context lives

  Impl(const DeviceInfo& info, BinaryCache binary_cache) : device(info), cache(std::move(binary_cache)) {
    if (device.device() == nullptr) {
      throw InvalidArgument("DeviceInfo for '" + device.name + "' has no OpenCL device handle; "
                            "take devices from list_devices() or select_device()");
    }
    cl_int err = CL_SUCCESS;
    context = cl::Context(device.device, nullptr, nullptr, nullptr, &err);
    check(err, "clCreateContext", "creating a context on " + device.label());
    compute = make_queue(context, device);
    upload = make_queue(context, device);
    download = make_queue(context, device);
    if (device.type != DeviceType::cpu) staging = detail::keep_staging_area(context);
  }

  // A program from a cached binary, or nothing if the driver refuses it.
  cl::Program from_binary(const BinaryCache::Binary& binary, const std::string& options) {
    cl_int err = CL_SUCCESS;
    std::vector<cl_int> status;
    cl::Program program(context, {device.device}, cl::Program::Binaries{binary}, &status, &err);
    if (err != CL_SUCCESS || status.empty() || status[0] != CL_SUCCESS) return {};
    if (program.build({device.device}, options.c_str()) != CL_SUCCESS) return {};
    return program;
  }

  cl::Program from_source(std::string_view name, const std::string& source, const std::string& options) {
    cl_int err = CL_SUCCESS;
    cl::Program program(context, source, false, &err);
    check(err, "clCreateProgramWithSource", "creating program '" + std::string(name) + "'");
    err = program.build({device.device}, options.c_str());
    if (err == CL_BUILD_PROGRAM_FAILURE || err == CL_INVALID_BUILD_OPTIONS) {
      throw BuildError(std::string(name), options, device.label(), build_log(program, device.device), source);
    }
    check(err, "clBuildProgram", "building program '" + std::string(name) + "'");
    return program;
  }

  static BinaryCache::Binary binary_of(const cl::Program& program) {
    cl_int err = CL_SUCCESS;
    auto binaries = program.getInfo<CL_PROGRAM_BINARIES>(&err);
    if (err != CL_SUCCESS || binaries.empty()) return {};  // the driver cannot export: no caching
    return std::move(binaries.front());
  }

  const cl::Program& build(std::string_view name, const std::string& source, const std::string& options) {
    const std::string key = program_cache_key(device, source, options);
    std::promise<cl::Program> promise;
    std::shared_future<cl::Program> program;
    bool first = false;  // this thread asked first, so it builds the program
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (const auto found = programs.find(key); found != programs.end()) {
        ++stats.from_memory;
        program = found->second;
      } else {
        program = programs.emplace(key, promise.get_future().share()).first->second;
        first = true;
      }
    }
    if (first) {
      try {
        promise.set_value(load_or_compile(name, key, source, options));
      } catch (...) {
        std::lock_guard<std::mutex> lock(mutex);
        programs.erase(key);  // a later call tries again
        promise.set_exception(std::current_exception());
      }
    }
    return program.get();  // the map keeps the program alive for the Context's lifetime
  }

  // The program from the binary cache if the driver takes it, else compiled from source (and
  // then cached).
  cl::Program load_or_compile(std::string_view name, const std::string& key, const std::string& source,
                              const std::string& options) {
    std::optional<BinaryCache::Binary> binary;
    {
      std::lock_guard<std::mutex> lock(cache_mutex);
      binary = cache.load(key);
    }
    if (binary) {
      cl::Program program = from_binary(*binary, options);
      if (program() != nullptr) {
        count(stats.from_disk);
        log(LogLevel::debug, "program", "'" + std::string(name) + "' from the binary cache");
        return program;
      }
      std::lock_guard<std::mutex> lock(cache_mutex);
      cache.remove(key);
      count(stats.refused_binaries);
      log(LogLevel::info, "program", "the driver refused the cached binary of '" + std::string(name) +
                                         "': compiling it again");
    }
    const auto start = std::chrono::steady_clock::now();
    cl::Program program = from_source(name, source, options);
    count(stats.from_source);
    log(LogLevel::info, "program", "compiled '" + std::string(name) + "' for " + device.label() + " in " +
                                       std::to_string(std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                                                                    start).count()) + " s");
    const BinaryCache::Binary compiled = binary_of(program);
    std::lock_guard<std::mutex> lock(cache_mutex);
    cache.store(key, compiled);
    return program;
  }

  void count(std::size_t& counter) {
    std::lock_guard<std::mutex> lock(mutex);
    ++counter;
  }
};

Context::Context(const DeviceInfo& device) : Context(device, BinaryCache::from_environment()) {}
Context::Context(const DeviceInfo& device, BinaryCache cache)
    : impl_(std::make_shared<Impl>(device, std::move(cache))) {}
Context::Context(std::string_view spec) : Context(select_device(spec)) {}

const DeviceInfo& Context::device() const { return impl_->device; }
const cl::Context& Context::cl_context() const { return impl_->context; }
cl::CommandQueue& Context::compute_queue() const { return impl_->compute; }
cl::CommandQueue& Context::upload_queue() const { return impl_->upload; }
cl::CommandQueue& Context::download_queue() const { return impl_->download; }
ProgramBuildStats Context::build_stats() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->stats;
}

BinaryCache Context::binary_cache() const {
  std::lock_guard<std::mutex> lock(impl_->cache_mutex);
  return impl_->cache;
}

void Context::finish() const {
  for (auto* queue : {&impl_->compute, &impl_->upload, &impl_->download}) {
    check(queue->finish(), "clFinish", "waiting for the device");
  }
}

const cl::Program& Context::program(std::string_view name, const std::string& options) const {
  return impl_->build(name, kernel_source(name), options);
}

const cl::Program& Context::program_from_source(std::string_view name, const std::string& source,
                                                const std::string& options) const {
  return impl_->build(name, source, options);
}

cl::Kernel Context::kernel(const cl::Program& program, const char* kernel_name) const {
  cl_int err = CL_SUCCESS;
  cl::Kernel kernel(program, kernel_name, &err);
  check(err, "clCreateKernel", std::string("creating kernel '") + kernel_name + "'");
  return kernel;
}

std::size_t Context::preferred_work_group_multiple() const {
  // call_once: thread-safe, and tried again if the probe throws.
  std::call_once(impl_->probed, [this] {
    // A kernel of its own: the base layer builds no kernel family of a higher layer.
    const char* source = "__kernel void probe(__global float* x) { x[get_global_id(0)] = 0; }";
    const cl::Kernel probe = kernel(program_from_source("work-group probe", source), "probe");
    impl_->work_group_multiple = detail::preferred_multiple(impl_->device, probe, "the work-group probe");
  });
  return impl_->work_group_multiple;
}

double profiled_seconds(const cl::Event& first, const cl::Event& last) {
  const cl_ulong start = profiling_time(first, CL_PROFILING_COMMAND_START);
  return static_cast<double>(profiling_time(last, CL_PROFILING_COMMAND_END) - start) * 1e-9;
}

cl_ulong profiling_time(const cl::Event& event, cl_profiling_info what) {
  cl_ulong time = 0;
  check(event.getProfilingInfo(what, &time), "clGetEventProfilingInfo",
        "reading when a command ran (its queue needs profiling enabled)");
  return time;
}

}  // namespace ziggurat
