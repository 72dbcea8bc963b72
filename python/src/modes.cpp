// ziggurat.modes(): natural frequencies and mode shapes by subspace iteration on the device, as
// `ziggurat modes` runs them: the same model, settings and summary (app/modes_run.hpp).
// The modes come back as a NumPy array that owns the solver's result: no copy.

#include <pybind11/stl.h>

#include <limits>
#include <optional>

#include "module.hpp"
#include "ziggurat/app/modes_run.hpp"
#include "ziggurat/app/output_files.hpp"
#include "ziggurat/matrix/elements.hpp"

namespace ziggurat::python {

namespace {

struct ModesArguments {
  std::string mesh, material;
  bool lumped = false;
  app::ModesSettings settings;
  py::object progress, context;
  std::string vtk;  // a generated mesh and its modes as a .vtu; empty: none
};

// An element set from NumPy: matrices (m, l, l), indices (m, l) of whole numbers (negative:
// constrained), stored full and checked (validate()).
template <class T>
fem::ElementSet<T> element_set(const py::handle& matrices, const py::handle& indices, std::size_t dofs, const char* what) {
  const auto values = real_array<T>(matrices, what);
  const auto index = py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>::ensure(indices);
  if (!index || py::array::ensure(indices).dtype().kind() == 'f')
    throw InvalidArgument("dofs must be an integer array of shape (m, l), one global DOF a local DOF");
  if (values.ndim() != 3 || values.shape(1) != values.shape(2))
    throw InvalidArgument(std::string(what) + " must have shape (m, l, l): m element matrices of l x l");
  if (index.ndim() != 2 || index.shape(0) != values.shape(0) || index.shape(1) != values.shape(1))
    throw InvalidArgument("dofs must have shape (m, l) = (" + std::to_string(values.shape(0)) + ", " +
                          std::to_string(values.shape(1)) + ") to match " + what);
  fem::ElementSet<T> set;
  set.element_size = static_cast<std::size_t>(values.shape(1));
  set.storage = fem::ElementStorage::full;
  set.matrices.assign(values.data(), values.data() + values.size());
  set.indices.reserve(static_cast<std::size_t>(index.size()));
  std::int64_t largest = -1;
  for (py::ssize_t i = 0; i < index.size(); ++i) {
    const std::int64_t v = index.data()[i];
    if (v > std::numeric_limits<std::int32_t>::max())
      throw InvalidArgument("dofs holds " + std::to_string(v) + ", above the largest DOF index, 2^31 - 1");
    set.indices.push_back(v < 0 ? -1 : static_cast<std::int32_t>(v));
    largest = std::max(largest, v);
  }
  set.dofs = dofs > 0 ? dofs : static_cast<std::size_t>(largest + 1);
  fem::validate(set);
  return set;
}

template <class T>
py::tuple find_modes(const py::object& elements, const py::object& dofs, const py::object& mass, const ModesArguments& a) {
  const Context context = context_of(a.context);
  std::optional<app::ModesModel<T>> model;
  if (elements.is_none()) {
    model = app::cantilever_model<T>(a.mesh, a.material, a.lumped);
  } else {
    fem::ElementSet<T> k = element_set<T>(elements, dofs, 0, "elements");
    std::optional<fem::ElementSet<T>> m;
    if (!mass.is_none()) m = element_set<T>(mass, dofs, k.dofs, "mass");
    model = app::element_model<T>(std::move(k), std::move(m),
                                  std::string("NumPy elements") + (mass.is_none() ? ", identity mass" : ", NumPy mass"));
  }
  if (!a.vtk.empty() && !model->generated)
    throw InvalidArgument("vtk= writes the mesh of a generated mesh=; element matrices carry no geometry");
  fem::SubspaceOptions options;
  fem::SubspaceResult<T> result;
  {
    const ReleasedGil release;
    const DeviceWork work;
    options = app::subspace_options<T>(context, a.settings, model->k(), "cg_operator / preconditioner / ordering / scatter / projection");
    // Always a hook, so that Ctrl-C stops the run after the iteration it interrupted.
    options.progress = [&a](const fem::SubspaceProgress& p) {
      report_progress(a.progress, [&] { return app::to_json(p); });
    };
    result = fem::subspace_iteration(context, model->k(), model->m(), options);
    if (!a.vtk.empty()) app::write_modes_vtk(a.vtk, *model->generated, result.modes, result.frequencies);
  }
  const py::object report = to_python(app::to_json(result, context, a.settings, *model, options));
  std::vector<double> frequencies = result.frequencies;
  const auto p = static_cast<py::ssize_t>(frequencies.size());
  return py::make_tuple(array_owning(std::move(frequencies), {p}),
                        array_owning(std::move(result.modes), {static_cast<py::ssize_t>(model->k().dofs), p}), report);
}

}  // namespace

void register_modes(py::module_& module) {
  module.def(
      "modes",
      [](const py::object& elements, const py::object& dofs, const py::object& mass, const std::string& dtype,
         const std::string& mesh, const std::string& material, bool lumped, std::size_t modes, std::size_t vectors,
         double tol, std::size_t max_iterations, double solve_tol, const std::string& cg_operator,
         const std::string& preconditioner, const std::string& ordering, const std::string& scatter,
         const std::string& projection, std::size_t batch_elements, std::size_t block_size, bool deflation, py::object progress, py::object context, std::string vtk) {
        ModesArguments a{mesh, material, lumped, {}, std::move(progress), std::move(context), std::move(vtk)};
        a.settings = {modes,  vectors,       tol,      max_iterations, solve_tol,  cg_operator, preconditioner,
                      ordering, scatter, projection, batch_elements, block_size, deflation};
        return dtype == "float32" ? find_modes<float>(elements, dofs, mass, a) : find_modes<double>(elements, dofs, mass, a);
      },
      py::arg("elements"), py::arg("dofs"), py::arg("mass"), py::arg("dtype"), py::arg("mesh"), py::arg("material"),
      py::arg("lumped"), py::arg("modes"), py::arg("vectors"), py::arg("tol"), py::arg("max_iterations"),
      py::arg("solve_tol"), py::arg("cg_operator"), py::arg("preconditioner"), py::arg("ordering"), py::arg("scatter"),
      py::arg("projection"), py::arg("batch_elements"), py::arg("block_size"), py::arg("deflation"), py::arg("progress"), py::arg("context"), py::arg("vtk"),
      "Natural frequencies and modes: the checked arguments of ziggurat.modes().");
}

}  // namespace ziggurat::python
