#include "ziggurat/app/modes_run.hpp"

#include <utility>

#include "ziggurat/app/product_kernel.hpp"
#include "ziggurat/app/text.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/ops/ebe.hpp"
#include "ziggurat/tuning/ebe_autotune.hpp"

namespace ziggurat::app {

using namespace ziggurat::fem;

namespace {

BoxMesh parse_mesh(const std::string& text) {
  const std::string prefix = "cantilever:";
  if (text.rfind(prefix, 0) != 0)
    throw InvalidArgument("--mesh is cantilever:LxWxH:nx,ny,nz (e.g. cantilever:2x0.1x0.1:40,2,2), not '" + text + "'");
  return parse_box(text.substr(prefix.size()));
}

// The identity as elements of one DOF each: the standard problem K phi = lambda phi.
template <class T>
ElementSet<T> identity_mass(std::size_t dofs) {
  ElementSet<T> m;
  m.dofs = dofs;
  m.element_size = 1;
  m.matrices.assign(dofs, T(1));
  m.indices.resize(dofs);
  for (std::size_t i = 0; i < dofs; ++i) m.indices[i] = static_cast<std::int32_t>(i);
  return m;
}

}  // namespace

template <class T>
ModesModel<T> cantilever_model(const std::string& mesh, const std::string& material, bool lumped) {
  const BoxMesh box = parse_mesh(mesh);
  ModesModel<T> model;
  model.generated = cantilever<T>(box, parse_material(material), lumped ? MassKind::lumped : MassKind::consistent);
  model.description = "cantilever " + number_text(box.lx) + " x " + number_text(box.ly) + " x " + number_text(box.lz) +
                      " m, " + std::to_string(box.nx) + " x " + std::to_string(box.ny) + " x " +
                      std::to_string(box.nz) + " bricks, clamped at x = 0, " + (lumped ? "lumped" : "consistent") +
                      " mass";
  return model;
}

template <class T>
ModesModel<T> element_model(ElementSet<T> stiffness, std::optional<ElementSet<T>> mass, std::string description) {
  ModesModel<T> model;
  model.mass = mass ? std::move(*mass) : identity_mass<T>(stiffness.dofs);
  model.stiffness = std::move(stiffness);
  model.description = std::move(description);
  return model;
}

template <class T>
SubspaceOptions subspace_options(const Context& context, const ModesSettings& settings, const ElementSet<T>& stiffness,
                                 const char* names) {
  SubspaceOptions s;
  s.modes = settings.modes;
  s.vectors = settings.vectors;
  s.tolerance = settings.tolerance;
  s.max_iterations = settings.max_iterations;
  s.solve_tolerance = settings.solve_tolerance;
  s.block_size = settings.block_size;
  s.deflation = settings.deflation;
  try {
    s.cg_operator = parse_cg_operator(settings.cg_operator);
    // auto: ILU(0) on the assembled K; block Jacobi matrix-free, where ILU(0) cannot run.
    s.preconditioner = settings.preconditioner != "auto"       ? sparse::parse_preconditioner(settings.preconditioner)
                       : s.cg_operator == CgOperator::assembled ? sparse::PreconditionerKind::ilu0
                                                                : sparse::PreconditionerKind::block_jacobi;
    s.ordering = sparse::parse_ordering(settings.ordering);
    if (settings.scatter != "auto") s.ebe.scatter = parse_ebe_scatter(settings.scatter);
    if (settings.projection != "auto") s.ebe.projection = parse_ebe_layout(settings.projection);
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(std::string(e.what()) + " (" + names + ")");
  }
  // auto: the scatter and the layout that measured faster for this kind of problem on this device.
  if (settings.scatter == "auto")
    s.ebe.scatter = choose_ebe_scatter(context, stiffness, iteration_vectors(s, stiffness.dofs)).scatter;
  if (settings.projection == "auto")
    s.ebe.projection = choose_ebe_layout(context, stiffness, iteration_vectors(s, stiffness.dofs)).layout;
  // 0: resident where the stiffness and the mass fit in half the device's memory, else streamed.
  s.ebe.batch_elements = settings.batch_elements != 0 ? settings.batch_elements
                                                      : default_batch_elements(context, stiffness, s.ebe.projection, 2);
  // The assembled K's products: the kernel that measured fastest for this kind of matrix.
  s.product_kernel = measured_product_kernel(context);
  return s;
}

nlohmann::json to_json(const SubspaceProgress& p) {
  return {{"iteration", p.iteration}, {"change", p.change}, {"cg_iterations", p.solve_iterations}};
}

template <class T>
nlohmann::json to_json(const SubspaceResult<T>& r, const Context& context, const ModesSettings& o,
                       const ModesModel<T>& model, const SubspaceOptions& options) {
  const SubspaceTimes& t = r.times;
  nlohmann::json summary = {{"device", context.device().name},
          {"platform", context.device().platform_name},
          {"driver", context.device().driver_version},
          {"model", model.description},
          {"dofs", model.k().dofs},
          {"elements", model.k().count()},
          {"element_size", model.k().element_size},
          {"precision", sizeof(T) == 4 ? "f32" : "f64"},
          {"modes", o.modes},
          {"vectors", r.vectors},
          {"scatter", to_string(options.ebe.scatter)},
          {"projection_layout", to_string(options.ebe.projection)},
          {"projection_factored", {{"stiffness", r.stiffness_factored}, {"mass", r.mass_factored}}},
          {"batch_elements", options.ebe.batch_elements},
          {"cg_operator", to_string(options.cg_operator)},
          {"preconditioner", sparse::to_string(options.preconditioner)},
          {"product_kernel", r.product_kernel},
          {"deflation", o.deflation && std::is_same_v<T, double>},
          {"ordering", options.preconditioner == sparse::PreconditionerKind::ilu0 ? o.ordering : "natural"},
          {"converged", r.converged},
          {"reason", r.reason},
          {"iterations", r.iterations},
          {"cg_iterations", r.solve_iterations},
          {"eigenvalues", r.eigenvalues},
          {"frequencies_hz", r.frequencies},
          {"residuals", r.residuals},
          {"changes", r.changes},
          {"times",
           {{"setup_s", t.setup},
            {"mass_s", t.mass},
            {"solve_s", t.solve},
            {"solve_device",
             {{"products_s", t.solve_products},
              {"preconditioner_s", t.solve_preconditioner},
              {"vector_ops_s", t.solve_vector_ops},
              {"deflation_s", t.solve_deflation}}},
            {"projection_s", t.projection},
            {"small_s", t.small},
            {"update_s", t.update},
            {"residual_s", t.residual},
            {"total_s", t.total}}}};
  if (!r.solve_report.empty()) summary["cg_not_converged"] = r.solve_report;
  return summary;
}

#define ZIGGURAT_MODES_RUN(T)                                                                                    \
  template ModesModel<T> cantilever_model<T>(const std::string&, const std::string&, bool);                          \
  template ModesModel<T> element_model<T>(ElementSet<T>, std::optional<ElementSet<T>>, std::string);                 \
  template SubspaceOptions subspace_options<T>(const Context&, const ModesSettings&, const ElementSet<T>&,            \
                                               const char*);                                                        \
  template nlohmann::json to_json<T>(const SubspaceResult<T>&, const Context&, const ModesSettings&,                \
                                     const ModesModel<T>&, const SubspaceOptions&);
ZIGGURAT_MODES_RUN(float)
ZIGGURAT_MODES_RUN(double)
#undef ZIGGURAT_MODES_RUN

}  // namespace ziggurat::app
