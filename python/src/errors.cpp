// ziggurat's exceptions (base/error.hpp) as Python exceptions with the same names and messages:
//
//   Error (Exception)
//   ├─ InvalidArgument (also ValueError)
//   ├─ DeviceNotFound (also LookupError)
//   ├─ UnsupportedFeature
//   ├─ IoError (also OSError)
//   ├─ BuildError                 .log: the compiler's output
//   ├─ ZeroPivot (also ArithmeticError)   .block_row
//   └─ OpenCLError                .code: the OpenCL error code
//      └─ OutOfDeviceMemory (also MemoryError)

#include <exception>
#include <string_view>

#include "module.hpp"
#include "ziggurat/base/error.hpp"

namespace ziggurat::python {

namespace {

// A new exception class ziggurat.<name> deriving from `bases`, added to the module. The classes
// live as long as the interpreter, like the module.
PyObject* add_exception(py::module_& module, const char* name, const char* doc, std::initializer_list<PyObject*> bases) {
  py::tuple base_tuple(bases.size());
  std::size_t i = 0;
  for (PyObject* base : bases) base_tuple[i++] = py::reinterpret_borrow<py::object>(base);
  const std::string qualified = std::string("ziggurat.") + name;
  PyObject* type = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, base_tuple.ptr(), nullptr);
  if (type == nullptr) throw py::error_already_set();
  module.add_object(name, py::reinterpret_borrow<py::object>(type));
  return type;
}

struct Classes {
  PyObject *error, *invalid_argument, *device_not_found, *unsupported_feature, *io_error, *build_error, *zero_pivot,
      *opencl_error, *out_of_device_memory;
};

// `text` as a str; bytes that are not UTF-8 (a driver's build log, a path) become U+FFFD, so that
// the exception is still the right one.
py::str text_of(std::string_view text) {
  PyObject* decoded = PyUnicode_DecodeUTF8(text.data(), static_cast<Py_ssize_t>(text.size()), "replace");
  if (decoded == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(decoded);
}

// Raises `type(message)` with `attributes` set on the instance.
void raise(PyObject* type, std::string_view message, std::initializer_list<std::pair<const char*, py::object>> attributes = {}) {
  py::object instance = py::reinterpret_borrow<py::object>(type)(text_of(message));
  for (const auto& [name, value] : attributes) instance.attr(name) = value;
  PyErr_SetObject(type, instance.ptr());
}

}  // namespace

void register_errors(py::module_& module) {
  static Classes c;
  c.error = add_exception(module, "Error", "Base of every error ziggurat raises; the message says what failed and what "
                                           "to do.", {PyExc_Exception});
  c.invalid_argument = add_exception(module, "InvalidArgument", "A value passed is out of range or malformed.",
                                     {c.error, PyExc_ValueError});
  c.device_not_found = add_exception(module, "DeviceNotFound", "No OpenCL device matches the selection.",
                                     {c.error, PyExc_LookupError});
  c.unsupported_feature = add_exception(module, "UnsupportedFeature",
                                        "The device lacks something required (e.g. float64), or ziggurat does.", {c.error});
  c.io_error = add_exception(module, "IoError", "A file could not be read or written, or is malformed.",
                             {c.error, PyExc_OSError});
  c.build_error = add_exception(module, "BuildError", "An OpenCL program failed to compile (.log: the build log).",
                                {c.error});
  c.zero_pivot = add_exception(module, "ZeroPivot", "A factorisation met a zero, tiny or NaN pivot (.block_row: where).",
                               {c.error, PyExc_ArithmeticError});
  c.opencl_error = add_exception(module, "OpenCLError", "An OpenCL call failed (.code: the OpenCL error code).", {c.error});
  c.out_of_device_memory = add_exception(module, "OutOfDeviceMemory", "The device could not allocate memory.",
                                         {c.opencl_error, PyExc_MemoryError});
  // Most derived first: the first handler that matches translates.
  py::register_exception_translator([](std::exception_ptr thrown) {
    try {
      std::rethrow_exception(thrown);
    } catch (const OutOfDeviceMemory& e) {
      raise(c.out_of_device_memory, e.what(), {{"code", py::int_(e.code())}});
    } catch (const OpenCLError& e) {
      raise(c.opencl_error, e.what(), {{"code", py::int_(e.code())}});
    } catch (const InvalidArgument& e) {
      raise(c.invalid_argument, e.what());
    } catch (const DeviceNotFound& e) {
      raise(c.device_not_found, e.what());
    } catch (const UnsupportedFeature& e) {
      raise(c.unsupported_feature, e.what());
    } catch (const IoError& e) {
      raise(c.io_error, e.what());
    } catch (const BuildError& e) {
      raise(c.build_error, e.what(), {{"log", text_of(e.log())}});
    } catch (const ZeroPivot& e) {
      raise(c.zero_pivot, e.what(), {{"block_row", py::int_(e.block_row())}});
    } catch (const Error& e) {
      raise(c.error, e.what());
    }
  });
}

}  // namespace ziggurat::python
