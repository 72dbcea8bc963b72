// The compiled module ziggurat._core: one registration per capability.

#include <cassert>

#include "module.hpp"
#include "ziggurat/base/version.hpp"

namespace ziggurat::python {

namespace {
thread_local bool holds_device_work = false;  // this thread holds device_work()
}  // namespace

std::mutex& device_work() {
  static std::mutex lock;
  return lock;
}

DeviceWork::DeviceWork() {
  if (holds_device_work) {
    throw InvalidArgument("device work cannot start inside a progress callback of device work (one device call at a "
                          "time per process): start it after the call returns");
  }
  assert(PyGILState_Check() == 0 && "device_work() is taken after releasing the GIL");
  device_work().lock();
  holds_device_work = true;
}

DeviceWork::~DeviceWork() {
  holds_device_work = false;
  device_work().unlock();
}

}  // namespace ziggurat::python

PYBIND11_MODULE(_core, module) {
  using namespace ziggurat::python;
  module.doc() = "ziggurat's C++ library, bound for the package `ziggurat` (use that, not this module)";
  module.attr("__version__") = ziggurat::version;
  register_errors(module);
  register_devices(module);
  register_heat(module);
  register_poisson(module);
  register_model(module);
  register_sparse(module);
  register_solve(module);
  register_modes(module);
  register_wave(module);
  register_krylov_solver(module);
}
