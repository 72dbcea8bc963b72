// `ziggurat modes`: natural frequencies and mode shapes of a finite-element model, K phi = lambda M phi,
// by subspace iteration on the device (solver/subspace_iteration.hpp), with K and M element by
// element: a generated brick cantilever or the user's element matrices.

#include <cmath>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "commands.hpp"
#include "file_options.hpp"
#include "format.hpp"
#include "picture.hpp"
#include "progress.hpp"
#include "program_main.hpp"
#include "ziggurat/app/json_output.hpp"
#include "ziggurat/app/modes_run.hpp"
#include "ziggurat/app/output_files.hpp"
#include "ziggurat/base/context.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/base/precision.hpp"
#include "ziggurat/io/element_files.hpp"
#include "ziggurat/io/npy.hpp"
#include "ziggurat/matrix/hex_mesh.hpp"
#include "ziggurat/solver/subspace_iteration.hpp"

namespace ziggurat::cli {

namespace {

using namespace ziggurat::fem;

struct ModesOptions {
  FileOptions files;  // every file read or written, checked before any work
  std::string mesh;
  std::string material = "210e9,0.3,7850";
  bool lumped = false;
  std::string elements, dofs, mass;
  app::ModesSettings settings;
  std::string precision;
  std::string device;
  std::string out;
  std::string png;
  std::string vtk;
  std::string save_model;
  bool quiet = false;
  ProgressOption progress;
  bool json = false;
};

template <class T>
app::ModesModel<T> load_model(const ModesOptions& o) {
  if (!o.mesh.empty()) return app::cantilever_model<T>(o.mesh, o.material, o.lumped);
  ElementSet<T> stiffness = load_elements<T>(o.elements, o.dofs);
  std::optional<ElementSet<T>> mass;
  if (!o.mass.empty()) mass = load_elements<T>(o.mass, o.dofs, stiffness.dofs);
  return app::element_model<T>(std::move(stiffness), std::move(mass),
                          o.elements + " with " + o.dofs + (o.mass.empty() ? ", identity mass" : ", mass " + o.mass));
}

void check_sources(const ModesOptions& o) {
  if (o.mesh.empty() == o.elements.empty())
    throw InvalidArgument("give the model: --mesh cantilever:LxWxH:nx,ny,nz, or --elements L.npy --dofs V.npy");
  if (!o.elements.empty() && o.dofs.empty()) throw InvalidArgument("--elements needs --dofs V.npy (the DOF of each local DOF)");
  if (o.mesh.empty() && (o.lumped || !o.save_model.empty()))
    throw InvalidArgument("--lumped and --save-model are for a generated --mesh");
  if (!o.mesh.empty() && (!o.mass.empty() || !o.dofs.empty()))
    throw InvalidArgument("--mass and --dofs go with --elements, not with --mesh");
  if (!o.png.empty() && o.mesh.empty())
    throw InvalidArgument("--png draws a generated --mesh; element files carry no geometry");
  if (!o.vtk.empty() && o.mesh.empty())
    throw InvalidArgument("--vtk writes the mesh of a generated --mesh; element files carry no geometry");
  if (!o.vtk.empty()) app::check_ending(o.vtk, {".vtu"}, "--vtk");
}

// The box's surface grid lines, displaced by `scale` times mode `mode`, in an oblique view (x right,
// z up, y receding): undisplaced in grey, displaced in blue.
template <class T>
void draw_mode(const std::string& path, const ElasticModel<T>& model, const std::vector<T>& modes, std::size_t p,
               std::size_t mode) {
  const BoxMesh& b = model.box;
  const auto node = [&](std::size_t i, std::size_t j, std::size_t l) { return i + (b.nx + 1) * (j + (b.ny + 1) * l); };
  double largest = 0;
  for (std::size_t n = 0; n < b.nodes(); ++n)
    for (int d = 0; d < 3; ++d) {
      const std::int32_t dof = model.node_dofs[3 * n + d];
      if (dof >= 0) largest = std::max(largest, std::abs(double(modes[std::size_t(dof) * p + mode])));
    }
  const double size = std::max({b.lx, b.ly, b.lz});
  const double scale = largest > 0 ? 0.15 * size / largest : 0;
  const double slant = 0.35;
  const auto position = [&](std::size_t i, std::size_t j, std::size_t l, double s) {
    std::array<double, 3> x = {b.lx * double(i) / double(b.nx), b.ly * double(j) / double(b.ny), b.lz * double(l) / double(b.nz)};
    const std::size_t n = node(i, j, l);
    for (int d = 0; d < 3; ++d) {
      const std::int32_t dof = model.node_dofs[3 * n + d];
      if (dof >= 0) x[d] += s * double(modes[std::size_t(dof) * p + mode]);
    }
    return std::array<double, 2>{x[0] + slant * x[1], x[2] + slant * x[1]};
  };
  // Segments in model units first, then fitted into the picture.
  std::vector<std::array<double, 4>> lines[2];
  const auto edge = [&](std::array<std::size_t, 3> a, std::array<std::size_t, 3> c) {
    for (int k = 0; k < 2; ++k) {
      const auto p0 = position(a[0], a[1], a[2], k * scale), p1 = position(c[0], c[1], c[2], k * scale);
      lines[k].push_back({p0[0], p0[1], p1[0], p1[1]});
    }
  };
  const std::size_t n[3] = {b.nx, b.ny, b.nz};
  for (std::size_t i = 0; i <= b.nx; ++i)
    for (std::size_t j = 0; j <= b.ny; ++j)
      for (std::size_t l = 0; l <= b.nz; ++l) {
        const std::size_t at[3] = {i, j, l};
        for (int axis = 0; axis < 3; ++axis) {
          if (at[axis] == n[axis]) continue;
          // Only lines on the surface: at least one of the other two coordinates on a face.
          int on_face = 0;
          for (int other = 0; other < 3; ++other)
            if (other != axis && (at[other] == 0 || at[other] == n[other])) ++on_face;
          if (on_face == 0) continue;
          std::array<std::size_t, 3> a = {i, j, l}, c = a;
          ++c[axis];
          edge(a, c);
        }
      }
  double lo[2] = {HUGE_VAL, HUGE_VAL}, hi[2] = {-HUGE_VAL, -HUGE_VAL};
  for (const auto& set : lines)
    for (const auto& s : set)
      for (int e = 0; e < 2; ++e)
        for (int d = 0; d < 2; ++d) lo[d] = std::min(lo[d], s[2 * e + d]), hi[d] = std::max(hi[d], s[2 * e + d]);
  const std::size_t width = 1200, margin = 20;
  const double unit = double(width - 2 * margin) / std::max(hi[0] - lo[0], 1e-300);
  const std::size_t height = std::min<std::size_t>(4000, std::size_t((hi[1] - lo[1]) * unit) + 2 * margin);
  std::vector<Segment> segments;
  const std::array<unsigned char, 3> colours[2] = {{{190, 190, 190}}, {{20, 60, 200}}};
  for (int k = 0; k < 2; ++k)
    for (const auto& s : lines[k])
      segments.push_back({margin + (s[0] - lo[0]) * unit, margin + (s[1] - lo[1]) * unit, margin + (s[2] - lo[0]) * unit,
                          margin + (s[3] - lo[1]) * unit, colours[k]});
  write_lines_png(path, segments, width, height);
}

// "modes: iteration 7, largest eigenvalue change 3.1e-06, CG 41 iterations".
std::string progress_text(const SubspaceProgress& p) {
  return "modes: iteration " + std::to_string(p.iteration) + ", largest eigenvalue change " + number_text(p.change, 3) +
         ", CG " + std::to_string(p.solve_iterations) + " iterations";
}

// How the elements reach the device, for the summary: resident says nothing.
std::string streaming_note(std::size_t batch_elements) {
  return batch_elements == 0 ? "" : ", streamed in batches of " + std::to_string(batch_elements) + " elements";
}

// Which operators' projections read factored elements (EbeOperator::factored), for the summary.
template <class T>
std::string factored_note(const SubspaceResult<T>& r) {
  if (r.stiffness_factored && r.mass_factored) return " (K's and M's elements factored)";
  if (r.stiffness_factored) return " (K's elements factored)";
  if (r.mass_factored) return " (M's elements factored)";
  return "";
}

template <class T>
void print_text(const Context& context, const ModesOptions& o, const app::ModesModel<T>& model,
                const SubspaceResult<T>& r, const SubspaceOptions& options) {
  const SubspaceTimes& t = r.times;
  std::cout << "device      " << context.device().label() << "\n"
            << "model       " << model.description << "\n"
            << "size        " << model.k().dofs << " DOFs, " << model.k().count() << " elements of "
            << model.k().element_size << " DOFs, " << type_name<T>() << ", element products scattered by "
            << to_string(options.ebe.scatter) << ", projected in " << to_string(options.ebe.projection)
            << factored_note(r) << streaming_note(options.ebe.batch_elements) << "\n"
            << "CG          on the " << to_string(options.cg_operator) << " K, preconditioned by "
            << sparse::to_string(options.preconditioner) << ", products by " << r.product_kernel << "\n"
            << "iteration   " << o.settings.modes << " modes with " << r.vectors << " vectors: " << r.reason << " ("
            << r.iterations << " iterations, " << r.solve_iterations << " CG iterations)\n"
            << "time        " << number_text(t.total) << " s: setup " << number_text(t.setup) << ", M X "
            << number_text(t.mass) << ", solve " << number_text(t.solve) << ", projection " << number_text(t.projection)
            << ", small problem " << number_text(t.small) << ", update " << number_text(t.update) << ", residual check "
            << number_text(t.residual) << "\n\n"
            << "mode  frequency (Hz)  eigenvalue      residual   last change\n";
  for (std::size_t i = 0; i < r.eigenvalues.size(); ++i) {
    char line[128];
    std::snprintf(line, sizeof line, "%4zu  %14.6g  %14.8e  %9.2e  %9.2e\n", i + 1, r.frequencies[i], r.eigenvalues[i],
                  r.residuals[i], r.changes[i]);
    std::cout << line;
  }
  if (!r.solve_report.empty()) std::cout << "\nwarning     a CG solve did not converge: " << r.solve_report << "\n";
  if (!o.out.empty()) std::cout << "\noutput      " << o.out << " (dofs x modes, M-orthonormal)\n";
  if (!o.png.empty()) std::cout << "picture     " << o.png << " (mode 1, displaced in blue)\n";
  if (!o.vtk.empty()) std::cout << "vtk         " << o.vtk << " (the mesh, each mode a point vector)\n";
}

template <class T>
void save_model(const std::string& prefix, const ElasticModel<T>& m) {
  save_elements(prefix + "-stiffness.npy", prefix + "-dofs.npy", m.stiffness);
  save_elements(prefix + "-mass.npy", prefix + "-dofs.npy", m.mass);
}

template <class T>
void run(const ModesOptions& o) {
  check_sources(o);
  Context context(o.device);
  require_device_precision(context.device(), o.precision);
  ProgressLines lines(o.progress.enabled(o.quiet, o.json));
  const app::ModesModel<T> model = load_model<T>(o);
  if (!o.save_model.empty()) save_model(o.save_model, *model.generated);
  SubspaceOptions options =
      app::subspace_options<T>(context, o.settings, model.k(), "--cg-operator / --preconditioner / --ordering / --scatter / --projection");
  std::string last;  // the last state, printed whatever the interval
  if (lines.enabled()) options.progress = [&](const SubspaceProgress& p) { lines.show(last = progress_text(p)); };
  const SubspaceResult<T> result = subspace_iteration(context, model.k(), model.m(), options);
  if (!last.empty()) lines.show(last, true);
  lines.finish();
  const std::size_t p = result.eigenvalues.size();
  if (!o.out.empty()) write_npy(o.out, result.modes.data(), {model.k().dofs, p});
  if (!o.png.empty()) draw_mode(o.png, *model.generated, result.modes, p, 0);
  if (!o.vtk.empty()) app::write_modes_vtk(o.vtk, *model.generated, result.modes, result.frequencies);
  if (o.json) {
    nlohmann::json s = app::to_json(result, context, o.settings, model, options);
    if (!o.out.empty()) s["output"] = o.out;
    if (!o.png.empty()) s["picture"] = o.png;
    if (!o.vtk.empty()) s["vtk"] = o.vtk;
    std::cout << app::json_output(s);
  } else {
    print_text(context, o, model, result, options);
  }
  // Not converged: the report is printed, the status says so. (A CG solve that stopped short of its
  // tolerance inside an eigen-solve that converged is a warning of the report: the eigenpairs are
  // the result, and inner solves routinely stop at the accuracy the precision attains.)
  if (!result.converged) throw ResultNotReached{};
}

}  // namespace

void add_modes_command(CLI::App& app) {
  auto options = std::make_shared<ModesOptions>();
  auto* command = app.add_subcommand("modes", "Natural frequencies and mode shapes (K phi = lambda M phi) of a "
                                              "finite-element model by subspace iteration on the device, K and M "
                                              "element by element");
  command->add_option("--mesh", options->mesh, "A generated model: cantilever:LxWxH:nx,ny,nz (metres and bricks), "
                                               "clamped at x = 0, e.g. cantilever:2x0.1x0.1:40,2,2");
  command->add_option("--material", options->material, "E,nu,rho of the generated model (Pa, -, kg/m^3)")
      ->capture_default_str();
  command->add_flag("--lumped", options->lumped, "Lumped (diagonal) mass for the generated model; default consistent");
  options->files.add_input(command, "--elements", options->elements, "Element stiffness matrices: .npy of shape (m, l, l)");
  options->files.add_input(command, "--dofs", options->dofs, "The DOF of each local DOF: integer .npy of shape (m, l); negative: "
                                               "constrained");
  options->files.add_input(command, "--mass", options->mass, "Element mass matrices, .npy (m, l, l) with the same --dofs; default: "
                                               "the identity (K phi = lambda phi)");
  command->add_option("--modes", options->settings.modes, "How many of the lowest modes")->capture_default_str()->check(whole_number(1));
  command->add_option("--vectors", options->settings.vectors, "Iteration vectors q (default min(2p, p + 8))")->check(whole_number(1));
  command->add_option("--tol", options->settings.tolerance, "Stop when no wanted eigenvalue changes by more than this, "
                                                   "relative (default 1e-10 in f64, 1e-4 in f32)")
      ->check(positive_number());
  command->add_option("--max-iterations", options->settings.max_iterations, "The most subspace iterations")
      ->capture_default_str()
      ->check(whole_number(1));
  command->add_option("--solve-tol", options->settings.solve_tolerance, "CG's tolerance on ||r|| / ||b|| (default 1e-10 in "
                                                               "f64, 1e-5 in f32)")
      ->check(positive_number());
  command->add_option("--cg-operator", options->settings.cg_operator, "How CG applies K: assembled (block CSR) or "
                                                             "matrix-free (element by element, nothing assembled)")
      ->capture_default_str();
  command->add_option("--preconditioner", options->settings.preconditioner, "CG's: ilu0 (assembled only), block-jacobi, "
                                                                   "jacobi, none, or auto (ilu0 assembled, "
                                                                   "block-jacobi matrix-free)")
      ->capture_default_str();
  command->add_option("--ordering", options->settings.ordering, "ILU(0)'s ordering: natural, levels, colours or "
                                                       "block-colours")
      ->capture_default_str();
  command->add_flag("--no-deflation", [options](std::int64_t count) { options->settings.deflation = count == 0; },
                    "Plain CG: no deflation by the Ritz vectors (f32 always runs without)");
  command->add_option("--block-size", options->settings.block_size, "DOFs per node: the block size of the assembled K")
      ->capture_default_str()
      ->check(whole_number(1, 16));
  command->add_option("--scatter", options->settings.scatter, "How element products add into M X: colouring, atomics, or "
                                                     "auto (the faster on this device, measured once and recorded)")
      ->capture_default_str();
  command->add_option("--projection", options->settings.projection, "The projection's work layout: tiles, columns, "
                                                           "tensor (NVIDIA compute capability 8.0+, f64), or auto (the "
                                                           "fastest on this device, measured once and recorded)")
      ->capture_default_str();
  command->add_option("--batch-elements", options->settings.batch_elements, "Stream the elements through the device in "
                                                                   "batches of this many (default: resident where the stiffness and the mass fit in half the device's memory, "
                                                                   "else batches of about 256 MiB)")
      ->check(whole_number(1));
  add_precision_option(command, options->precision, "f32 (float) or f64 (double); default f64");
  command->add_option("--device", options->device, "Device selection (see `ziggurat devices`); default: ZIGGURAT_DEVICE, else the first GPU");
  options->files.add_output(command, "--out", options->out, "Write the modes here (.npy of shape (dofs, modes), M-orthonormal)");
  options->files.add_output(command, "--png", options->png, "Draw mode 1 of a generated --mesh here (surface lines, displaced)");
  options->files.add_output(command, "--vtk", options->vtk, "Write a generated --mesh for ParaView: NAME.vtu (VTK "
                                                             "unstructured grid: nodes in m, bricks, each mode's "
                                                             "displacement a point vector named mode_K_FREQHz)");
  options->files.add_output_prefix(command, "--save-model", options->save_model,
                                   {"-stiffness.npy", "-mass.npy", "-dofs.npy"}, "Write the generated model's elements as "
                                                           "PREFIX-stiffness.npy, PREFIX-mass.npy, PREFIX-dofs.npy");
  command->add_flag("--quiet", options->quiet, "No progress on stderr");
  options->progress.add(command);
  command->add_flag("--json", options->json, "Print a machine-readable summary");
  command->callback([options] {
    options->files.check();
    if (options->precision.empty()) options->precision = "f64";
    with_precision(options->precision, [&](auto zero) { run<decltype(zero)>(*options); });
  });
}

}  // namespace ziggurat::cli
