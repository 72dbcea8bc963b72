// The Krylov solvers' settings from Python's keywords (ziggurat/_settings.py gives them as a dict
// of checked types): app::SolverSettings, whose values app checks as it does the CLI's.

#include "ziggurat/app/solver_settings.hpp"

#include <map>
#include <type_traits>
#include <variant>

#include "module.hpp"

namespace ziggurat::python {

app::SolverSettings solver_settings(const py::dict& keywords) {
  app::SolverSettings s;
  using Field = std::variant<std::string*, double*, std::size_t*>;
  const std::map<std::string, Field> fields = {
      {"method", &s.method}, {"preconditioner", &s.preconditioner}, {"ordering", &s.ordering}, {"sweep", &s.sweep},
      {"jacobi_sweeps", &s.jacobi_sweeps},
      {"static_pivoting", &s.static_pivoting}, {"kernel", &s.kernel}, {"rtol", &s.rtol}, {"atol", &s.atol},
      {"max_iterations", &s.max_iterations}, {"restart", &s.restart}, {"aggregate", &s.aggregate},
      {"threshold", &s.threshold}, {"shift", &s.shift}};
  for (const auto& item : keywords) {
    const std::string name = py::str(item.first);
    const auto field = fields.find(name);
    if (field == fields.end()) throw InvalidArgument("unknown solver setting '" + name + "'");
    std::visit([&](auto* value) { *value = item.second.cast<std::remove_pointer_t<decltype(value)>>(); }, field->second);
  }
  app::check_solver_settings(s);
  return s;
}

}  // namespace ziggurat::python
