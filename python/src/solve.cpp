// ziggurat.solve(): A x = b by a preconditioned Krylov method on the device, as `ziggurat solve`
// runs it (solver/krylov.hpp). x comes back as a NumPy array that owns the solver's result: no copy.

#include <pybind11/stl.h>

#include <algorithm>
#include <optional>

#include "module.hpp"
#include "sparse_arrays.hpp"
#include "ziggurat/app/reports.hpp"
#include "ziggurat/solver/krylov.hpp"

namespace ziggurat::python {

namespace {

struct SolveArguments {
  app::SolverSettings settings;
  std::optional<std::size_t> block_size;
  py::object progress, context;
};

sparse::SolverOptions solver_options(const SolveArguments& a, const Context& context) {
  sparse::SolverOptions o = app::solver_options(a.settings, context);
  // Always a hook, so that Ctrl-C stops the solve after the iteration it interrupted.
  o.progress = [&a](const sparse::SolveProgress& p) {
    between_tasks([&] {
      if (!a.progress.is_none()) a.progress(p.iteration, p.relative_residual);
    });
  };
  return o;
}

// "(n,)" or "(n, k)".
std::string shape_text(const py::array& a) {
  std::string text = "(";
  for (py::ssize_t i = 0; i < a.ndim(); ++i) text += (i > 0 ? ", " : "") + std::to_string(a.shape(i));
  return text + (a.ndim() == 1 ? ",)" : ")");
}

// The convergence report: `ziggurat solve --json`'s (the keys the package documents in solve()),
// with each vector's residual history.
py::object report(const Context& context, const sparse::SolveReport& r, const SolveArguments& a, std::size_t block_size) {
  nlohmann::json summary = {{"device", context.device().label()},
                            {"method", a.settings.method},
                            {"preconditioner", a.settings.preconditioner},
                            {"block_size", block_size}};
  summary.update(app::to_json(r, true));
  return to_python(summary);
}

// x (shape of b) and the report for A (SciPy's arrays) and b, (n,) or (n, k), from x0 when given.
template <class T>
py::tuple solve(const py::tuple& arrays, const py::handle& b_values, const py::object& x0_values, const SolveArguments& a) {
  const sparse::Bsr<T> matrix = bsr_of<T>(arrays, a.block_size);
  const auto b = real_array<T>(b_values, "b");
  if (b.ndim() < 1 || b.ndim() > 2 || b.shape(0) != py::ssize_t(matrix.rows)) {
    throw InvalidArgument("b must have shape (" + std::to_string(matrix.rows) + ",) or (" + std::to_string(matrix.rows) +
                          ", k): the matrix has " + std::to_string(matrix.rows) + " rows");
  }
  const std::size_t k = b.ndim() == 2 ? static_cast<std::size_t>(b.shape(1)) : 1;
  const std::vector<T> rhs = sparse::copy_values(b.data(), static_cast<std::size_t>(b.size()));  // on every core
  std::vector<T> x;
  if (!x0_values.is_none()) {
    const auto x0 = real_array<T>(x0_values, "x0");
    if (x0.ndim() != b.ndim() || !std::equal(b.shape(), b.shape() + b.ndim(), x0.shape())) {
      throw InvalidArgument("x0 must have the shape of b, " + shape_text(b) + "; it has " + shape_text(x0));
    }
    x.assign(x0.data(), x0.data() + x0.size());
  }
  const Context context = context_of(a.context);
  const sparse::SolverOptions options = solver_options(a, context);
  sparse::SolveReport result;
  {
    const ReleasedGil release;
    const DeviceWork work;
    sparse::KrylovSolver<T> solver(context, matrix, k, options, sparse::Validated{});  // bsr_of validated it
    result = solver.solve(rhs, x);
  }
  const std::vector<py::ssize_t> shape(b.shape(), b.shape() + b.ndim());
  return py::make_tuple(array_owning(std::move(x), shape), report(context, result, a, matrix.block_size));
}

template <class T>
void define_solve(py::module_& module) {
  module.def(
      "solve",
      [](const py::tuple& arrays, const py::array_t<T>& b, const py::object& x0, const py::dict& settings,
         std::optional<std::size_t> block_size, py::object progress, py::object context) {
        return solve<T>(arrays, b, x0, {solver_settings(settings), block_size, std::move(progress), std::move(context)});
      },
      py::arg("arrays"), py::arg("b").noconvert(), py::arg("x0"), py::arg("settings"), py::arg("block_size"),
      py::arg("progress"), py::arg("context"));
}

}  // namespace

void register_solve(py::module_& module) {
  module.attr("ILU2_THRESHOLD") = sparse::kDefaultIlu2Threshold;
  define_solve<float>(module);
  define_solve<double>(module);
}

}  // namespace ziggurat::python
