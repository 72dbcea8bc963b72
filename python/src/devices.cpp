// Devices, contexts and calibration: ziggurat.devices(), ziggurat.Context, Context.calibrate(),
// as `ziggurat devices` and `ziggurat calibrate` give them.

#include <pybind11/stl.h>

#include <cstdlib>
#include <map>
#include <mutex>

#include "module.hpp"
#include "ziggurat/app/devices.hpp"
#include "ziggurat/app/text.hpp"
#include "ziggurat/base/device.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/tuning/profile_store.hpp"

namespace ziggurat::python {

namespace {

py::list devices(const std::string& spec) {
  py::list list;
  for (const DeviceInfo& device : filter_devices(list_devices(), spec)) list.append(to_python(app::to_json(device)));
  return list;
}

py::dict calibrate(const Context& context, bool force) {
  DeviceProfile profile;
  {
    const ReleasedGil release;
    const DeviceWork work;
    profile = load_or_calibrate(context, force);
  }
  return profile_dict(profile);
}

std::string type_name(const py::handle& value) { return py::str(py::type::of(value).attr("__name__")); }

}  // namespace

namespace {

// The selection text of `device` (None: "", a number, a text).
std::string selection_of(const py::object& device) {
  if (device.is_none()) return "";
  // True is an int to Python, but no device number.
  if (PyBool_Check(device.ptr()) == 0 && PyIndex_Check(device.ptr()) != 0) {
    return std::to_string(py::int_(device).cast<long long>());
  }
  if (!py::isinstance<py::str>(device)) {
    throw InvalidArgument("the device is a selection text ('gpu', 'name:H100', ...), a device number, a Context or None, "
                          "not a " + type_name(device));
  }
  return device.cast<std::string>();
}

// A new context on the device `selection` names ("": ZIGGURAT_DEVICE, else the default).
Context new_context(const std::string& selection) { return selection.empty() ? Context() : Context(selection); }

}  // namespace

Context context_of(const py::object& context) {
  if (py::isinstance<Context>(context)) return context.cast<Context>();
  // One context a selection for the process: its queues and built programs serve every later call,
  // so a call pays no device set-up or program load after the first. ZIGGURAT_DEVICE is read at
  // each call, so a changed variable selects again.
  std::string key = selection_of(context);
  if (key.empty()) {
    const char* environment = std::getenv("ZIGGURAT_DEVICE");
    key = "\n" + std::string(environment ? environment : "");
  }
  static std::mutex mutex;
  static std::map<std::string, Context> contexts;
  const std::lock_guard<std::mutex> lock(mutex);
  if (const auto found = contexts.find(key); found != contexts.end()) return found->second;
  return contexts.emplace(key, new_context(selection_of(context))).first->second;
}

std::uint64_t memory_size(const py::object& size, const char* what) {
  const auto refuse = [&](const std::string& given) {
    return InvalidArgument(std::string(what) + " is a positive number of bytes or a size text ('512MiB', '2GB'), not " +
                           given);
  };
  if (PyBool_Check(size.ptr()) != 0) throw refuse("a bool");
  if (PyFloat_Check(size.ptr()) != 0) {  // 1.5e9 is a whole number of bytes; 1.5 is not
    const double bytes = size.cast<double>();
    if (!(bytes >= 1 && bytes < 1.8e19 && bytes == static_cast<double>(static_cast<std::uint64_t>(bytes)))) {
      throw refuse(py::repr(size).cast<std::string>());
    }
    return static_cast<std::uint64_t>(bytes);
  }
  if (PyIndex_Check(size.ptr()) != 0) {
    const py::int_ bytes(size);
    if (bytes < py::int_(1)) throw refuse(py::repr(size).cast<std::string>());
    return bytes.cast<std::uint64_t>();
  }
  if (!py::isinstance<py::str>(size)) throw refuse("a " + type_name(size));
  return app::parse_bytes(size.cast<std::string>());
}

DeviceProfile profile_of(const py::dict& profile) {
  std::string text;
  try {
    text = py::module_::import("json").attr("dumps")(profile).cast<std::string>();
  } catch (const py::error_already_set& e) {  // values JSON cannot hold
    throw InvalidArgument(std::string("profile is the dict Context.calibrate() returns; this one is no JSON: ") + e.what());
  }
  try {
    return profile_from_json(text);
  } catch (const IoError& e) {  // a dict, not a file: the argument is wrong
    throw InvalidArgument(std::string("profile is the dict Context.calibrate() returns; this one is not a usable "
                                      "profile: ") + e.what());
  }
}

py::dict profile_dict(const DeviceProfile& profile) {
  return to_python(nlohmann::json::parse(profile_to_json(profile)));
}

void register_devices(py::module_& module) {
  module.def("devices", &devices, py::arg("spec") = "all",
             "Every OpenCL device that `spec` selects (default all), in the order `ziggurat devices` lists, as dicts "
             "of the properties it lists with --json.");
  py::class_<Context>(module, "Context",
                      "An OpenCL context on one device with its compute, upload and download queues and the programs "
                      "built for it. Copies share one context; keep one and pass it to every call to build kernels once.")
      .def(py::init([](const py::object& device) {
             if (py::isinstance<Context>(device)) return device.cast<Context>();
             return new_context(selection_of(device));
           }),
           py::arg("device") = py::none(),
           "The device `device` selects: a selection text ('gpu', 'cpu', 'nvidia', 'name:H100', 'gpu,fp64', ...), a "
           "device number of ziggurat.devices(), or None (ZIGGURAT_DEVICE, else the first GPU, else the first CPU).")
      .def_property_readonly("device", [](const Context& c) { return to_python(app::to_json(c.device())); },
                             "The device, as a dict like those of ziggurat.devices().")
      .def("calibrate", &calibrate, py::arg("force") = false,
           "The device's profile (what calibration measured) as a dict: read from the cache, or measured now and "
           "cached (force=True measures again).")
      .def("finish", [](const Context& c) {
             const ReleasedGil release;
             const DeviceWork work;
             c.finish();
           },
           "Waits until the device has done everything enqueued on this context.")
      .def("__repr__", [](const Context& c) { return "<ziggurat.Context on " + c.device().label() + ">"; });
}

}  // namespace ziggurat::python
