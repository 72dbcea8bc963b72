// The Krylov solvers' settings from Python's keywords (ziggurat/_settings.py gives them as a dict
// of checked types): app::SolverSettings, whose values app checks as it does the CLI's.

#include "ziggurat/app/solver_settings.hpp"

#include <set>

#include "module.hpp"

namespace ziggurat::python {

namespace {

template <class Value>
void take(const py::dict& keywords, const char* key, Value& field, std::set<std::string>& known) {
  known.insert(key);
  if (keywords.contains(key)) field = keywords[key].cast<Value>();
}

}  // namespace

app::SolverSettings solver_settings(const py::dict& keywords) {
  app::SolverSettings s;
  std::set<std::string> known;
  take(keywords, "method", s.method, known);
  take(keywords, "preconditioner", s.preconditioner, known);
  take(keywords, "ordering", s.ordering, known);
  take(keywords, "sweep", s.sweep, known);
  take(keywords, "static_pivoting", s.static_pivoting, known);
  take(keywords, "kernel", s.kernel, known);
  take(keywords, "rtol", s.rtol, known);
  take(keywords, "atol", s.atol, known);
  take(keywords, "max_iterations", s.max_iterations, known);
  take(keywords, "restart", s.restart, known);
  take(keywords, "aggregate", s.aggregate, known);
  take(keywords, "threshold", s.threshold, known);
  take(keywords, "shift", s.shift, known);
  for (const auto& item : keywords) {
    const std::string name = py::str(item.first);
    if (!known.count(name)) throw InvalidArgument("unknown solver setting '" + name + "'");
  }
  app::check_solver_settings(s);
  return s;
}

}  // namespace ziggurat::python
