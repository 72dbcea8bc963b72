#include "base/kernel_launch.hpp"

namespace ziggurat::detail {

std::size_t work_group_limit(const DeviceInfo& device, const cl::Kernel& kernel, std::string_view what) {
  cl_int err = CL_SUCCESS;
  const std::size_t limit = kernel.getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(device.device, &err);
  check(err, "clGetKernelWorkGroupInfo", "asking for the work-group limit of " + std::string(what));
  return limit;
}

std::size_t preferred_multiple(const DeviceInfo& device, const cl::Kernel& kernel, std::string_view what) {
  cl_int err = CL_SUCCESS;
  const std::size_t multiple = kernel.getWorkGroupInfo<CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE>(device.device, &err);
  check(err, "clGetKernelWorkGroupInfo", "asking for the preferred work-group multiple of " + std::string(what));
  return multiple > 0 ? multiple : 1;
}

void require_work_group(const DeviceInfo& device, const cl::Kernel& kernel, std::size_t items, std::string_view what) {
  const std::size_t limit = work_group_limit(device, kernel, what);
  if (limit < items) {
    throw UnsupportedFeature(device.label() + " runs " + std::string(what) + " in work-groups of at most " +
                             std::to_string(limit) + " work-items; it needs " + std::to_string(items));
  }
}

}  // namespace ziggurat::detail
