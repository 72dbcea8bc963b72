#pragma once
// What the sources of the module ziggurat._core share: each registers one capability, and the
// helpers below carry arguments and results between Python and the library. The public API, with
// its argument checks and SciPy input, is the package around the module (python/ziggurat/).

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "ziggurat/app/solver_settings.hpp"
#include "ziggurat/base/context.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/tuning/device_profile.hpp"

namespace ziggurat::python {

namespace py = pybind11;

void register_errors(py::module_& module);
void register_devices(py::module_& module);
void register_heat(py::module_& module);
void register_poisson(py::module_& module);
void register_model(py::module_& module);
void register_sparse(py::module_& module);
void register_solve(py::module_& module);
void register_modes(py::module_& module);
void register_wave(py::module_& module);
void register_krylov_solver(py::module_& module);
void register_log(py::module_& module);

/// The records the library logged since the last delivery, into Python's logging under the logger
/// "ziggurat" (log_bridge.cpp); called with the GIL held. A handler's exception is dropped.
void deliver_log_records() noexcept;

/// Releases the GIL for its scope, as py::gil_scoped_release, around the library's work: before,
/// the library's log level follows the logger "ziggurat"'s; after, the records the library logged
/// meanwhile (on any thread) reach Python's logging (log_bridge.cpp). Made with the GIL held.
class ReleasedGil {
 public:
  ReleasedGil();
  ~ReleasedGil();
  ReleasedGil(const ReleasedGil&) = delete;
  ReleasedGil& operator=(const ReleasedGil&) = delete;

 private:
  std::optional<py::gil_scoped_release> release_;
};

/// The lock of the process's device work. A Context's queues must not be used by two threads at
/// once, and the bindings release the GIL while the device works: so each binding that works on a
/// device holds this lock meanwhile, and calls from several Python threads run one at a time.
std::mutex& device_work();

/// Holds device_work() for its scope. Take it only after releasing the GIL: a thread waiting for
/// it with the GIL would keep the holder's progress hook (which takes the GIL back) waiting in
/// turn. A thread that holds it already (a progress callback starting device work) gets
/// InvalidArgument, not a deadlock.
class DeviceWork {
 public:
  DeviceWork();
  ~DeviceWork();
  DeviceWork(const DeviceWork&) = delete;
  DeviceWork& operator=(const DeviceWork&) = delete;
};

/// The Context a call runs on: `context` itself when it is one, else the device it selects (a
/// selection text, a device number, or None for the default device), one context a selection for
/// the whole process, so that its built programs serve every later call.
Context context_of(const py::object& context);

/// The Krylov solvers' settings from the dict ziggurat/_settings.py makes of Python's keywords,
/// checked (app::check_solver_settings); InvalidArgument for an unknown key or a bad value.
app::SolverSettings solver_settings(const py::dict& keywords);

/// A memory size given as bytes (an int, or a float that is a whole number) or as text ("512MiB",
/// "2GB"), as the CLI reads it; anything else is refused with InvalidArgument naming `what`.
std::uint64_t memory_size(const py::object& size, const char* what = "device_memory");

/// A device profile given as the dict Context.calibrate() returns.
DeviceProfile profile_of(const py::dict& profile);
/// The profile as a dict.
py::dict profile_dict(const DeviceProfile& profile);

/// How to_python() gives the numbers JSON cannot hold (NaN and the infinities).
enum class NonFinite {
  as_none,   ///< None, as JSON writes them (null): a report is what the CLI's --json prints
  as_float,  ///< Python floats: a progress dict is a live value (a first iteration's change is inf)
};

/// The one conversion of the bindings' results: a JSON value (a result struct's app::to_json, the
/// report the CLI prints as --json) as the Python objects json.loads makes of it: dicts (keys in
/// the value's order), lists, str, int, float, bool and None.
py::object to_python(const nlohmann::json& value, NonFinite non_finite = NonFinite::as_none);

/// "float32" or "float64".
template <class T>
const char* dtype_name() {
  return sizeof(T) == 4 ? "float32" : "float64";
}

/// `values` as a C-contiguous array of T: the same array when it already is one, else a converted
/// copy (integers and booleans are converted; complex and other kinds are refused with
/// InvalidArgument naming `what`).
template <class T>
py::array_t<T, py::array::c_style> real_array(const py::handle& values, const char* what) {
  const py::array array = py::array::ensure(values);
  if (!array) throw py::error_already_set();
  const char kind = array.dtype().kind();
  if (kind != 'f' && kind != 'i' && kind != 'u' && kind != 'b') {
    throw InvalidArgument(std::string(what) + " must hold real numbers; its dtype is " +
                          py::str(array.dtype()).cast<std::string>());
  }
  return py::array_t<T, py::array::c_style | py::array::forcecast>::ensure(array);
}

/// A NumPy array that takes `values` over: the array's memory is the vector's, held by a capsule,
/// so nothing is copied.
template <class T>
py::array_t<T> array_owning(std::vector<T>&& values, std::vector<py::ssize_t> shape) {
  auto* held = new std::vector<T>(std::move(values));
  const py::capsule owner(held, [](void* vector) { delete static_cast<std::vector<T>*>(vector); });
  return py::array_t<T>(std::move(shape), held->data(), owner);
}

/// Runs `call` with the GIL held, from a library hook that runs between tasks while the GIL is
/// released: first raises KeyboardInterrupt (carried through the library as a C++ exception) when
/// Ctrl-C was pressed, so that a long run stops cleanly there, and delivers the log records so far
/// (a long run's log comes as it runs).
template <class Call>
void between_tasks(Call&& call) {
  const py::gil_scoped_acquire gil;
  if (PyErr_CheckSignals() != 0) throw py::error_already_set();
  deliver_log_records();
  call();
}

/// A long run's progress hook: between_tasks(), then `callback` (unless None) gets the dict of
/// the JSON value that `progress` returns (an app::to_json of the run's progress).
template <class Progress>
void report_progress(const py::object& callback, Progress&& progress) {
  between_tasks([&] {
    if (!callback.is_none()) callback(to_python(progress(), NonFinite::as_float));
  });
}

}  // namespace ziggurat::python
