// The compiled module ziggurat._core: one registration per capability.

#include <cassert>
#include <cmath>
#include <cstdint>
#include <string>

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

py::object to_python(const nlohmann::json& value, NonFinite non_finite) {
  using Type = nlohmann::json::value_t;
  switch (value.type()) {
    case Type::object: {
      py::dict dict;
      for (const auto& item : value.items()) dict[py::str(item.key())] = to_python(item.value(), non_finite);
      return std::move(dict);
    }
    case Type::array: {
      py::list list;
      for (const nlohmann::json& item : value) list.append(to_python(item, non_finite));
      return std::move(list);
    }
    case Type::string: return py::str(value.get_ref<const std::string&>());
    case Type::boolean: return py::bool_(value.get<bool>());
    case Type::number_integer: return py::int_(value.get<std::int64_t>());
    case Type::number_unsigned: return py::int_(value.get<std::uint64_t>());
    case Type::number_float: {
      const double number = value.get<double>();
      if (!std::isfinite(number) && non_finite == NonFinite::as_none) return py::none();
      return py::float_(number);
    }
    default: return py::none();  // null (and nothing else a to_json makes)
  }
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
  register_log(module);
}
