#pragma once
// Enumerating OpenCL devices and selecting them by a short text specification.
//
// Selection syntax (the same for the library, `--device` and the ZIGGURAT_DEVICE variable):
//
//   spec  := term (',' term)*      a device must match every term; matching is case-insensitive
//   term  := all                   every device
//          | gpu | cpu | accelerator
//          | fp64                  devices with double precision (cl_khr_fp64)
//          | N                     the device listed as #N by `ziggurat devices`
//          | platform:TEXT         TEXT is part of the platform's name or vendor
//          | name:TEXT             TEXT is part of the device's name
//          | TEXT                  TEXT is part of the device name, platform name or vendor
//
// Examples: "nvidia", "gpu", "cpu,platform:portable", "1", "name:H100", "gpu,fp64".
// With no spec, ZIGGURAT_DEVICE is used; without that, the first GPU, else the first CPU device.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ziggurat/base/opencl.hpp"

namespace ziggurat {

enum class DeviceType { gpu, cpu, accelerator, other };

const char* to_string(DeviceType type);

/// What the rest of the library needs to know about a device, read once at enumeration.
struct DeviceInfo {
  std::size_t index = 0;  ///< position in list_devices(), as `ziggurat devices` prints it
  std::string platform_name, platform_vendor, platform_version;
  std::string name, vendor, version, driver_version, opencl_c_version;
  DeviceType type = DeviceType::other;
  bool fp64 = false;
  bool host_unified_memory = false;    ///< host and device share memory (zero-copy, e.g. PoCL)
  bool profiling = false;              ///< command queues can record profiling events
  std::uint64_t global_mem_bytes = 0;
  std::uint64_t max_alloc_bytes = 0;   ///< largest single buffer
  std::uint64_t local_mem_bytes = 0;
  std::size_t max_work_group_size = 0;
  std::size_t base_address_align_bytes = 0;
  unsigned compute_units = 0;
  /// NVIDIA's compute capability as 10 major + minor (90 for an H100), read through
  /// cl_nv_device_attribute_query; 0 on other devices. Kernels that use NVIDIA's own instructions
  /// (inline PTX) run only where it is high enough.
  unsigned nvidia_compute_capability = 0;
  cl::Device device;                   ///< null in DeviceInfo values built by hand (tests)

  /// "NVIDIA H100 80GB HBM3 [NVIDIA CUDA]": what messages and test output name a device by.
  std::string label() const;
};

/// Every device of every OpenCL platform, in platform order. Empty when no platform is installed.
/// A platform that fails to list its devices is left out (one broken driver must not hide the
/// others); what went wrong is added to `problems` when given.
std::vector<DeviceInfo> list_devices(std::vector<std::string>* problems = nullptr);

/// The devices of `all` that match `spec` (syntax above), in order. An empty or "all" spec
/// matches everything. Throws InvalidArgument for a malformed spec.
std::vector<DeviceInfo> filter_devices(const std::vector<DeviceInfo>& all, std::string_view spec);

/// One device: the first that `spec` matches, or with an empty spec the one ZIGGURAT_DEVICE
/// selects, or by default the first GPU, else the first CPU device. Throws DeviceNotFound
/// (listing the devices there are) when nothing matches.
DeviceInfo select_device(std::string_view spec = {});
DeviceInfo select_device(const std::vector<DeviceInfo>& all, std::string_view spec);

/// The devices a test run covers: those ZIGGURAT_DEVICE selects, or all when it is unset.
std::vector<DeviceInfo> devices_from_environment();

}  // namespace ziggurat
