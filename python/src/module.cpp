// The compiled module ziggurat._core: one registration per capability.

#include "module.hpp"
#include "ziggurat/base/version.hpp"

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
}
