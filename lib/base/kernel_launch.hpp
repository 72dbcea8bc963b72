#pragma once
// What every kernel launcher does: set a kernel's arguments all at once, in the order the kernel
// declares them (so each launcher names them in one place), and ask how large its work-groups
// may be.

#include <cstddef>
#include <string>
#include <string_view>

#include "ziggurat/base/device.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/base/opencl.hpp"

namespace ziggurat::detail {

/// Sets argument `index` of `kernel` to `arg`; `what` names the kernel in errors. (The message is
/// made only on failure: launchers set arguments at every launch.)
template <class Arg>
void set_arg(cl::Kernel& kernel, cl_uint index, std::string_view what, const Arg& arg) {
  const cl_int err = kernel.setArg(index, arg);
  if (err != CL_SUCCESS) check(err, "clSetKernelArg", "setting the arguments of " + std::string(what));
}

/// Sets arguments 0, 1, 2, ... of `kernel` to `args`; `what` names the kernel in errors.
template <class... Args>
void set_args(cl::Kernel& kernel, std::string_view what, const Args&... args) {
  cl_uint index = 0;
  (set_arg(kernel, index++, what, args), ...);
}

/// The most work-items a work-group of `kernel` may have on `device`.
std::size_t work_group_limit(const DeviceInfo& device, const cl::Kernel& kernel, std::string_view what);

/// The multiple of work-items that work-groups of `kernel` should have on `device` (1 where the
/// driver names none).
std::size_t preferred_multiple(const DeviceInfo& device, const cl::Kernel& kernel, std::string_view what);

/// Throws UnsupportedFeature unless work-groups of `items` work-items can run `kernel` on `device`.
void require_work_group(const DeviceInfo& device, const cl::Kernel& kernel, std::size_t items, std::string_view what);

}  // namespace ziggurat::detail
