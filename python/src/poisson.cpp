// ziggurat.poisson(): -Laplace(u) = f on a 3D NumPy grid by Jacobi sweeps of the seven-point
// scheme, in core or in pyramid passes as the cost model plans them, as `ziggurat poisson` runs it
// (solve_poisson()).

#include <pybind11/stl.h>

#include <algorithm>
#include <optional>

#include "module.hpp"
#include "ziggurat/app/output_files.hpp"
#include "ziggurat/app/reports.hpp"
#include "ziggurat/app/run_profile.hpp"
#include "ziggurat/automatic/poisson.hpp"
#include "ziggurat/ops/poisson_scheme.hpp"

namespace ziggurat::python {

namespace {

struct PoissonArguments {
  std::optional<double> spacing;
  double tol = 0;
  std::size_t max_sweeps = 0;
  py::object device_memory, context, progress, profile;
  std::string mode;
  std::optional<std::size_t> height;
  std::optional<std::size_t> depth;  // none: the device's default
  bool serial = false;
  std::string vtk;  // the solution as a VTK image (.vti or .pvti); empty: none
};

PoissonPlanRequest plan_request(const PoissonArguments& a) {
  PoissonPlanRequest request;
  request.mode = parse_poisson_mode(a.mode);
  request.height = a.height;
  request.depth = a.depth.value_or(1);
  if (!a.device_memory.is_none()) request.device_memory = memory_size(a.device_memory);
  request.schedule = a.serial ? Schedule::serial : Schedule::overlapped;
  return request;
}

// What the run did, like `ziggurat poisson --json` (the keys the package documents in poisson()).
template <class T>
py::object report(const Context& context, const std::vector<std::size_t>& extents, double spacing,
                  const PoissonArguments& a, const PoissonOutcome& outcome, double residual,
                  const std::string& origin) {
  nlohmann::json r = app::to_json(outcome, a.mode, extents, origin);
  r.update({{"device", context.device().label()},
            {"size", extents},
            {"dtype", dtype_name<T>()},
            {"spacing", spacing},
            {"tolerance", a.tol},
            {"max_sweeps", a.max_sweeps},
            {"residual", residual}});
  return to_python(r);
}

// u after the sweeps from u0 (boundary values and first guess) with right-hand side f, both C order
// of shape (D, H, W), and the report.
template <class T>
py::tuple poisson(const py::array_t<T, py::array::c_style>& f, const py::array_t<T, py::array::c_style>& u0,
                  const PoissonArguments& a) {
  const std::vector<std::size_t> extents(f.shape(), f.shape() + f.ndim());
  const std::vector<std::size_t> fastest_first(extents.rbegin(), extents.rend());
  require_poisson_grid(fastest_first, "ziggurat.poisson");
  if (u0.ndim() != f.ndim() || !std::equal(extents.begin(), extents.end(), u0.shape())) {
    throw InvalidArgument("u0 must have the shape of f");
  }
  const double spacing = a.spacing ? *a.spacing : 1.0 / static_cast<double>(fastest_first[0] - 1);
  jacobi_coefficients<T>(spacing);  // refuse a bad spacing before any work
  PoissonPlanRequest request = plan_request(a);
  const Context context = context_of(a.context);
  if (!a.depth) request.depth = default_blocking_depth(context.device());  // tuned on GPUs
  std::optional<DeviceProfile> given_profile;
  if (!a.profile.is_none()) given_profile = profile_of(a.profile.cast<py::dict>());

  PoissonRunOptions options;
  // Always a hook, so that Ctrl-C stops the run after the pass (or stopping test) it interrupted.
  options.progress = [&a](const PoissonProgress& p) { report_progress(a.progress, [&] { return app::to_json(p); }); };
  py::array_t<T> field(std::vector<py::ssize_t>(f.shape(), f.shape() + f.ndim()));
  const T *rhs = f.data(), *initial = u0.data();
  T* result = field.mutable_data();
  const std::size_t nodes = static_cast<std::size_t>(f.size());
  std::string origin;
  double residual = 0;
  PoissonOutcome outcome;
  {
    const ReleasedGil release;
    const DeviceWork work;
    PoissonSolver<T> solver(context, Grid<T>(fastest_first, std::vector<T>(initial, initial + nodes)),
                            Grid<T>(fastest_first, std::vector<T>(rhs, rhs + nodes)), spacing);
    const app::RunProfile planning = app::planning_profile(context, given_profile, ProfileNeeds::jacobi(sizeof(T)));
    origin = planning.origin;
    outcome = solve_poisson(solver, PoissonStop{a.tol, a.max_sweeps}, request, planning.profile, options);
    residual = solver.residual();
    std::copy(solver.data(), solver.data() + nodes, result);
    if (!a.vtk.empty()) app::write_field_vtk(a.vtk, result, fastest_first, "u");
  }
  return py::make_tuple(field, report<T>(context, fastest_first, spacing, a, outcome, residual, origin));
}

template <class T>
void define_poisson(py::module_& module) {
  module.def(
      "poisson",
      [](const py::array_t<T, py::array::c_style>& f, const py::array_t<T, py::array::c_style>& u0,
         std::optional<double> spacing, double tol, std::size_t max_sweeps, py::object device_memory, std::string mode,
         std::optional<std::size_t> height, std::optional<std::size_t> depth, bool serial, py::object progress, py::object profile,
         py::object context, std::string vtk) {
        return poisson<T>(f, u0, {spacing, tol, max_sweeps, std::move(device_memory), std::move(context),
                                  std::move(progress), std::move(profile), std::move(mode), height, depth, serial,
                                  std::move(vtk)});
      },
      py::arg("f").noconvert(), py::arg("u0").noconvert(), py::arg("spacing"), py::arg("tol"), py::arg("max_sweeps"),
      py::arg("device_memory"), py::arg("mode"), py::arg("height"), py::arg("depth"), py::arg("serial"),
      py::arg("progress"), py::arg("profile"), py::arg("context"), py::arg("vtk"));
}

}  // namespace

void register_poisson(py::module_& module) {
  define_poisson<float>(module);
  define_poisson<double>(module);
}

}  // namespace ziggurat::python
