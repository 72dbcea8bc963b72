// ziggurat.heat(): the explicit heat scheme on a NumPy grid, planned by the cost model with the
// device's profile and run by the pyramid solver (or in core where it fits), as `ziggurat heat`
// runs it (advance_heat()).

#include <pybind11/stl.h>

#include <algorithm>
#include <optional>

#include "module.hpp"
#include "ziggurat/app/output_files.hpp"
#include "ziggurat/app/reports.hpp"
#include "ziggurat/app/run_profile.hpp"
#include "ziggurat/automatic/heat.hpp"
#include "ziggurat/ops/heat_scheme.hpp"

namespace ziggurat::python {

namespace {

struct HeatArguments {
  std::size_t steps = 0;
  std::optional<double> alpha;
  py::object device_memory, context, progress, profile;
  std::string mode;
  std::optional<std::size_t> height, depth;
  bool serial = false;
  std::string vtk;  // the field as a VTK image (.vti or .pvti); empty: none
};

HeatPlanRequest plan_request(const HeatArguments& a) {
  HeatPlanRequest request;
  request.mode = parse_heat_mode(a.mode);
  request.height = a.height;
  request.depth = a.depth;
  if (!a.device_memory.is_none()) request.device_memory = memory_size(a.device_memory);
  request.schedule = a.serial ? Schedule::serial : Schedule::overlapped;
  return request;
}

// What the run did, as `ziggurat heat --json` says it (the keys the package documents in heat()).
template <class T>
py::object report(const Context& context, const std::vector<std::size_t>& extents, double alpha, const HeatArguments& a,
                  const HeatOutcome& outcome, const std::string& profile_origin) {
  nlohmann::json r = app::to_json(outcome, a.mode, profile_origin);
  r.update({{"device", context.device().label()},
            {"size", extents},
            {"dtype", dtype_name<T>()},
            {"alpha", alpha},
            {"steps", a.steps}});
  return to_python(r);
}

// The field after `steps` steps of u0 (C order, shape (D, H, W): extents W x H x D) and the report.
template <class T>
py::tuple heat(const py::array_t<T, py::array::c_style>& u0, const HeatArguments& a) {
  const std::vector<std::size_t> extents(u0.shape(), u0.shape() + u0.ndim());
  const std::vector<std::size_t> fastest_first(extents.rbegin(), extents.rend());
  require_heat_grid(fastest_first, "ziggurat.heat");
  const double alpha = a.alpha ? *a.alpha : 0.8 * max_stable_alpha(extents.size());
  heat_coefficients<T>(alpha, extents.size());  // refuse an unstable alpha before any work
  const Context context = context_of(a.context);
  HeatPlanRequest request = plan_request(a);
  if (!a.depth) request.depth = 0;  // tuned, briefly on CPUs (tuning/blocking_autotune.hpp)
  std::optional<DeviceProfile> given_profile;
  if (!a.profile.is_none()) given_profile = profile_of(a.profile.cast<py::dict>());

  HeatRunOptions options;
  // Always a hook, so that Ctrl-C stops the run after the pass it interrupted.
  options.progress = [&a](const HeatProgress& p) { report_progress(a.progress, [&] { return app::to_json(p); }); };
  py::array_t<T> field(std::vector<py::ssize_t>(u0.shape(), u0.shape() + u0.ndim()));
  const T* initial = u0.data();
  T* result = field.mutable_data();
  const std::size_t nodes = static_cast<std::size_t>(u0.size());
  std::string origin;
  HeatOutcome outcome;
  {
    const ReleasedGil release;
    const DeviceWork work;
    HeatSolver<T> solver(context, Grid<T>(fastest_first, std::vector<T>(initial, initial + nodes)), alpha);
    const app::RunProfile planning = app::planning_profile(context, given_profile, ProfileNeeds::heat(fastest_first.size(), sizeof(T)));
    origin = planning.origin;
    outcome = advance_heat(solver, a.steps, request, planning.profile, options);
    std::copy(solver.data(), solver.data() + nodes, result);
    if (!a.vtk.empty()) app::write_field_vtk(a.vtk, result, fastest_first, "u");
  }
  return py::make_tuple(field, report<T>(context, fastest_first, alpha, a, outcome, origin));
}

template <class T>
void define_heat(py::module_& module) {
  module.def(
      "heat",
      [](const py::array_t<T, py::array::c_style>& u0, std::size_t steps, std::optional<double> alpha,
         py::object device_memory, std::string mode, std::optional<std::size_t> height, std::optional<std::size_t> depth,
         bool serial, py::object progress, py::object profile, py::object context, std::string vtk) {
        return heat<T>(u0, {steps, alpha, std::move(device_memory), std::move(context), std::move(progress),
                            std::move(profile), std::move(mode), height, depth, serial, std::move(vtk)});
      },
      py::arg("u0").noconvert(), py::arg("steps"), py::arg("alpha"), py::arg("device_memory"), py::arg("mode"),
      py::arg("height"), py::arg("depth"), py::arg("serial"), py::arg("progress"), py::arg("profile"),
      py::arg("context"), py::arg("vtk"));
}

}  // namespace

void register_heat(py::module_& module) {
  define_heat<float>(module);
  define_heat<double>(module);
  module.def("max_stable_alpha", &max_stable_alpha, py::arg("dims"), "The largest stable alpha in `dims` dimensions: 1 / (2 dims).");
}

}  // namespace ziggurat::python
