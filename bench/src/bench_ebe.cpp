// `ziggurat-bench ebe`: the element-by-element projection K+ = X^T K X and the subspace-iteration
// eigen-solve (method notes, section 4) beside their peers and the device's physical limits.
//   1. The projection with k vectors on a generated brick cantilever (default ~1.87 M DOF, the
//      paper's size): ziggurat's EBE kernels resident and streamed, ziggurat's multithreaded CPU
//      EBE, the assembled route (block CSR x k vectors, then X^T Y by CLBlast's GEMM or by
//      ziggurat's Gram kernel), PyTorch's or
//      CuPy's batched matrix products (ebe_peers.py), and the roofline: the bytes the projection
//      must move over the measured copy bandwidth, its flops over the measured FMA peak (and, where
//      the tensor layout runs, over the measured tensor-core peak too).
//   2. Y = K X with either scatter (colouring, atomics).
//   3. The eigen-solve of `modes` modes (section solve): ziggurat on the device with CG on the
//      assembled K (ILU(0), and block Jacobi) and matrix-free (block Jacobi), and SciPy's
//      shift-invert eigsh on the assembled matrices.
//   4. The same on a smaller model (section cpu): also without deflation, and the same algorithm on
//      a CPU OpenCL device (all cores).
//   5. The first bending frequencies of a slender cantilever against Euler-Bernoulli as the mesh is
//      refined (section convergence).

#include <clblast.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <thread>

#include "bench.hpp"
#include "format.hpp"
#include "peer_support.hpp"
#include "ziggurat/base/timestamp.hpp"
#include "ziggurat/app/json_output.hpp"
#include "ziggurat/base/host_cores.hpp"
#include "ziggurat/base/context.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/base/memory.hpp"
#include "ziggurat/base/precision.hpp"
#include "ziggurat/base/version.hpp"
#include "ziggurat/io/element_files.hpp"
#include "ziggurat/io/npy.hpp"
#include "ziggurat/matrix/hex_mesh.hpp"
#include "ziggurat/ops/block_products.hpp"
#include "ziggurat/ops/ebe.hpp"
#include "ziggurat/ops/spmm.hpp"
#include "ziggurat/solver/subspace_iteration.hpp"
#include "ziggurat/tuning/calibration.hpp"
#include "ziggurat/tuning/ebe_autotune.hpp"
#include "ziggurat/tuning/profile_store.hpp"

namespace ziggurat::cli {

namespace {

using namespace ziggurat::fem;
using Clock = std::chrono::steady_clock;

struct BenchEbeOptions {
  std::string mesh = "9.6x2.8x2.8:192,56,56";  // 1,871,424 DOF (the paper's model: 1,858,824)
  std::string solve_mesh;                       // empty: --mesh
  std::string cpu_solve_mesh = "2.4x0.7x0.7:48,14,14";
  std::size_t vectors = 27;
  std::size_t modes = 27;
  std::size_t repeat = 5;
  double tolerance = 1e-10;
  std::size_t iterations = 100;  // subspace iterations at most (fewer: a per-iteration comparison)
  std::size_t cg_iterations = 20000;  // CG iterations a solve at most (fewer: a per-CG-iteration comparison)
  std::string preconditioner = "ilu0";
  std::string ordering = "colours";
  std::string precision = "f64";
  std::string device;
  std::string cpu_device = "cpu";
  std::string python = "python3";
  double eigsh_timeout = 900;
  bool peers = true;
  std::string sections = "projection,solve,cpu";
  std::string convergence_meshes = "20x1x2,40x2x4,80x4x8,160x8x16";
  bool json = false;
};

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

template <class F>
double best_of(std::size_t repeat, F run) {
  run();  // warm-up: first touches, lazy builds
  double best = HUGE_VAL;
  for (std::size_t i = 0; i < repeat; ++i) {
    const auto start = Clock::now();
    run();
    best = std::min(best, seconds_since(start));
  }
  return best;
}

template <class T>
std::vector<T> random_vectors(std::size_t n, std::size_t k) {
  std::mt19937_64 random(7);
  std::uniform_real_distribution<double> value(-1, 1);
  std::vector<T> x(n * k);
  for (T& v : x) v = T(value(random));
  return x;
}

double relative_difference(const std::vector<double>& a, const std::vector<double>& b) {
  double worst = 0, scale = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    worst = std::max(worst, std::abs(a[i] - b[i]));
    scale = std::max(scale, std::abs(b[i]));
  }
  return scale > 0 ? worst / scale : worst;
}

// Best-of-3 seconds of a peak kernel `name`(out, n, a, b) over `items` work-items in groups of 128,
// with its output of T.
template <class T>
double time_peak_kernel(const Context& context, const cl::Program& program, const char* name, std::size_t items,
                        std::size_t n) {
  cl::Kernel kernel = context.kernel(program, name);
  DeviceBuffer<T> out(context, items, "peak kernel output");
  check(kernel.setArg(0, out.get()), "clSetKernelArg", name);
  check(kernel.setArg(1, cl_uint(n)), "clSetKernelArg", name);
  check(kernel.setArg(2, T(0.999)), "clSetKernelArg", name);
  check(kernel.setArg(3, T(0.001)), "clSetKernelArg", name);
  return best_of(3, [&] {
    check(context.compute_queue().enqueueNDRangeKernel(kernel, cl::NullRange, cl::NDRange(items), cl::NDRange(128)),
          "clEnqueueNDRangeKernel", name);
    check(context.compute_queue().finish(), "clFinish", name);
  });
}

// The device's fused multiply-add rate in flops/s (2 per FMA): eight independent chains per
// work-item, enough work-items to fill every compute unit.
template <class T>
double measure_fma_peak(const Context& context) {
  const std::string source = std::string(std::is_same_v<T, double> ? "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" : "") +
                             "__kernel void fma_peak(__global REAL* out, const uint n, const REAL a, const REAL b) {\n"
                             "  REAL x[8];\n"
                             "  for (int c = 0; c < 8; ++c) x[c] = get_global_id(0) * 1e-9 + c;\n"
                             "  for (uint i = 0; i < n; ++i)\n"
                             "    for (int c = 0; c < 8; ++c) x[c] = fma(x[c], a, b);\n"
                             "  REAL s = 0;\n"
                             "  for (int c = 0; c < 8; ++c) s += x[c];\n"
                             "  out[get_global_id(0)] = s;\n"
                             "}\n";
  const cl::Program& program = context.program_from_source(
      "bench_fma_peak", source, std::string("-DREAL=") + (std::is_same_v<T, double> ? "double" : "float"));
  const std::size_t items = std::size_t{context.device().compute_units} * 2048, n = 4096;
  return 2.0 * 8 * double(n) * double(items) / time_peak_kernel<T>(context, program, "fma_peak", items, n);
}

// The device's tensor-core rate in double (flops/s, 2 per multiply-add) with the instruction ebe.cl's
// tensor layout uses there (m16n8k8 from compute capability 9.0 on, else m8n8k4): eight independent
// chains per warp.
double measure_tensor_peak(const Context& context) {
  const std::string source =
      "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
      "__kernel void tensor_peak(__global double* out, const uint n, const double a, const double b) {\n"
      "  double c[32];\n"
      "  for (int i = 0; i < 32; ++i) c[i] = get_global_id(0) * 1e-9 + i;\n"
      "  for (uint i = 0; i < n; ++i)\n"
      "    for (int j = 0; j < 8; ++j)\n"
      "#ifdef MMA16\n"
      "      asm volatile(\"mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %4, %4, %4}, \"\n"
      "                   \"{%5, %5}, {%0, %1, %2, %3};\"\n"
      "                   : \"+d\"(c[4 * j]), \"+d\"(c[4 * j + 1]), \"+d\"(c[4 * j + 2]), \"+d\"(c[4 * j + 3])\n"
      "                   : \"d\"(a), \"d\"(b));\n"
      "#else\n"
      "      asm volatile(\"mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};\"\n"
      "                   : \"+d\"(c[4 * j]), \"+d\"(c[4 * j + 1]) : \"d\"(a), \"d\"(b));\n"
      "#endif\n"
      "  double s = 0;\n"
      "  for (int i = 0; i < 32; ++i) s += c[i];\n"
      "  out[get_global_id(0)] = s;\n"
      "}\n";
  const bool mma16 = ebe_tensor_uses_m16n8k8(context.device());
  const cl::Program& program = context.program_from_source("bench_tensor_peak", source, mma16 ? "-DMMA16" : "");
  const std::size_t items = std::size_t{context.device().compute_units} * 1024, n = 2048;
  const double multiply_adds_per_warp_step = mma16 ? 16 * 8 * 8 : 8 * 8 * 4;
  return 2.0 * multiply_adds_per_warp_step * 8 * double(n) * double(items / 32) /
         time_peak_kernel<double>(context, program, "tensor_peak", items, n);
}

struct Route {
  std::string name;
  double seconds = 0;
  double difference = 0;  // max |K+ - K+_device| / max |K+_device|
  std::string note;
};

// The assembled routes: Y = K X with K in block CSR (b = 3), then K+ = X^T Y by CLBlast's GEMM (the
// general routine a user would call) or by ziggurat's Gram kernel for tall sets (ops/block_products).
template <class T>
std::vector<Route> assembled_routes(const Context& context, const ElementSet<T>& stiffness, const std::vector<T>& x,
                                    std::size_t k, std::size_t repeat, const std::vector<double>& reference) {
  const sparse::Bsr<T> bsr = assemble_bsr(stiffness, 3);
  sparse::DeviceBsr<T> a(context, bsr);
  sparse::BsrMultiplier<T> product(context, a, k, sparse::BsrKernel{});
  sparse::DeviceVectors<T> dx = sparse::input_vectors(context, a, k), dy = sparse::output_vectors(context, a, k);
  dx.upload(x);
  DeviceBuffer<T> kp(context, k * k, "K+");
  cl_command_queue queue = context.compute_queue()();
  sparse::BlockProducts<T> gram(context, stiffness.dofs, k, k);
  const auto product_run = [&] {
    product.enqueue(dx, dy);
    check(context.compute_queue().finish(), "clFinish", "the assembled product");
  };
  const auto clblast_run = [&] {
    const auto status = clblast::Gemm<T>(clblast::Layout::kRowMajor, clblast::Transpose::kYes, clblast::Transpose::kNo,
                                         k, k, stiffness.dofs, T(1), dx.buffer().get()(), 0, k, dy.buffer().get()(), 0,
                                         k, T(0), kp.get()(), 0, k, &queue);
    if (status != clblast::StatusCode::kSuccess)
      throw Error("CLBlast's GEMM failed with status " + std::to_string(int(status)));
    check(context.compute_queue().finish(), "clFinish", "the assembled projection");
  };
  const auto gram_run = [&] {
    gram.gram(dx.buffer().get(), dy.buffer().get(), kp.get());
    check(context.compute_queue().finish(), "clFinish", "the assembled projection");
  };
  const auto difference = [&] {
    std::vector<T> values(k * k);
    detail::read_buffer(context.compute_queue(), kp.get(), values.data(), values.size() * sizeof(T));
    return relative_difference(std::vector<double>(values.begin(), values.end()), reference);
  };
  const double product_s = best_of(repeat, product_run);
  const std::string blocks = std::to_string(bsr.blocks()) + " blocks, " + bytes_text(bsr.values.size() * sizeof(T)) +
                             " of values";
  const std::string name = "assembled: block CSR (b = 3, " + product.kernel().name() + ") x " + std::to_string(k) +
                           " vectors + ";
  std::vector<Route> routes;
  const double clblast_s = best_of(repeat, clblast_run);
  routes.push_back({name + "CLBlast GEMM X^T Y", product_s + clblast_s, difference(),
                    "product " + number_text(product_s * 1e3) + " ms + GEMM " + number_text(clblast_s * 1e3) + " ms; " +
                        blocks});
  const double gram_s = best_of(repeat, gram_run);
  routes.push_back({name + "ziggurat Gram kernel X^T Y", product_s + gram_s, difference(),
                    "product " + number_text(product_s * 1e3) + " ms + Gram " + number_text(gram_s * 1e3) + " ms"});
  return routes;
}

// PyTorch's or CuPy's batched products (ebe_peers.py project), on element files in a scratch folder.
template <class T>
Route torch_route(const BenchEbeOptions& o, const ElementSet<T>& stiffness, const std::vector<T>& x, std::size_t k,
                  const std::vector<double>& reference) {
  Route route{"PyTorch / CuPy batched matmul (gather, bmm, sum)", 0, 0, ""};
  const std::string why = run_peer_script(
      o.python, "ebe_peers.py",
      [&](const std::filesystem::path& folder) {
        save_elements(folder / "L.npy", folder / "V.npy", stiffness);
        write_npy(folder / "X.npy", x.data(), {stiffness.dofs, k});
        const std::string request = nlohmann::json{{"command", "project"}, {"repeat", o.repeat}}.dump();
        write_file(folder / "request.json", request.data(), request.size());
      },
      [&](const std::filesystem::path&, const nlohmann::json& answer) {
        if (answer.contains("unavailable")) {
          route.note = answer["unavailable"].get<std::string>();
          return;
        }
        route.name = answer.value("peer", route.name) + " on " + answer.value("device", std::string("?"));
        route.seconds = answer["seconds"].get<double>();
        const auto result = answer["result"].get<std::vector<std::vector<double>>>();
        std::vector<double> flat;
        for (const auto& row : result) flat.insert(flat.end(), row.begin(), row.end());
        route.difference = relative_difference(flat, reference);
        route.note = "upload " + number_text(answer.value("upload_seconds", 0.0)) + " s, not counted";
      });
  if (!why.empty()) route.note = why;
  return route;
}

template <class T>
void projection_section(const BenchEbeOptions& o, const Context& context, const ElasticModel<T>& model,
                        nlohmann::json& report) {
  std::ostream& out = std::cout;
  const ElementSet<T>& stiffness = model.stiffness;
  const std::size_t k = o.vectors;
  const std::vector<T> x = random_vectors<T>(stiffness.dofs, k);
  const auto [kernel_copy, driver_copy] =
      measure_copy_bandwidth(context, std::min<std::size_t>(context.device().max_alloc_bytes / 4, 512u << 20), 3);
  const double copy = std::max(kernel_copy, driver_copy);
  const double peak = measure_fma_peak<T>(context);
  // Where the tensor layout runs, its multiply-adds have a second, higher limit.
  const double tensor_peak =
      ebe_tensor_refusal(context.device(), sizeof(T), stiffness.element_size, k).empty() ? measure_tensor_peak(context) : 0;
  const DeviceProfile profile = load_or_calibrate(context);

  // The layout a user's tuned run takes (measured on a prefix of the model, or read from its record).
  const EbeLayoutChoice layout = choose_ebe_layout(context, stiffness, k);
  EbeOperator<T> resident(context, stiffness, k, {EbeScatter::colouring, 0, layout.layout});
  sparse::DeviceVectors<T> dx(context, stiffness.dofs, k), dy(context, stiffness.dofs, k);
  dx.upload(x);
  std::vector<double> reference;
  const double device_s = best_of(o.repeat, [&] { reference = resident.project(dx); });
  const double bytes = resident.project_bytes(), flops = resident.project_flops();
  const double roofline_s = std::max(bytes / copy, flops / peak);
  // The layouts automatic did not take, for comparison (a refused one says why).
  std::vector<Route> other_routes;
  for (const EbeLayout other : {EbeLayout::tiles, EbeLayout::columns, EbeLayout::tensor}) {
    if (other == layout.layout) continue;
    Route route{std::string("ziggurat EBE, resident, ") + to_string(other) + " layout", 0, 0, ""};
    try {
      EbeOperator<T> op(context, stiffness, k, {EbeScatter::colouring, 0, other});
      if (op.factored()) route.name += ", elements factored";
      std::vector<double> result;
      route.seconds = best_of(o.repeat, [&] { result = op.project(dx); });
      route.difference = relative_difference(result, reference);
      route.note = "device " + number_text(op.last_timing().kernels * 1e3) + " ms in kernels";
    } catch (const UnsupportedFeature& e) {
      route.note = e.what();
    }
    other_routes.push_back(route);
  }

  const std::size_t batch = std::max<std::size_t>(kEbeChunk, (std::size_t{256} << 20) / (300 * sizeof(T) + 96));
  EbeOperator<T> streamed(context, stiffness, k, {EbeScatter::colouring, batch, layout.layout});
  std::vector<double> streamed_result;
  const double streamed_s = best_of(std::max<std::size_t>(1, o.repeat / 2), [&] { streamed_result = streamed.project(dx); });
  const double bus_s = bytes / profile.upload_pinned.bytes_per_s;

  std::vector<double> cpu_result;
  const double cpu_s = best_of(std::max<std::size_t>(1, o.repeat / 2), [&] { cpu_result = project(stiffness, x, k); });

  std::vector<Route> routes;
  routes.push_back({std::string("ziggurat EBE, resident, ") + to_string(layout.layout) + " layout" +
                        (resident.factored() ? ", elements factored" : "") + " (measured faster; " +
                        std::to_string(resident.colours()) + " colours, chunks of " + std::to_string(kEbeChunk) + ")",
                    device_s, 0, "device " + number_text(resident.last_timing().kernels * 1e3) + " ms in kernels"});
  for (const Route& route : other_routes) routes.push_back(route);
  routes.push_back({"ziggurat EBE, streamed in batches of " + std::to_string(batch) + " elements", streamed_s,
                    relative_difference(streamed_result, reference),
                    "bus limit " + number_text(bus_s * 1e3) + " ms (pinned upload " +
                        number_text(profile.upload_pinned.bytes_per_s * 1e-9) + " GB/s)"});
  routes.push_back({"ziggurat CPU EBE, " + std::to_string(usable_host_cores()) + " host threads", cpu_s,
                    relative_difference(cpu_result, reference), "host"});
  for (Route& route : assembled_routes(context, stiffness, x, k, o.repeat, reference)) routes.push_back(route);
  if (o.peers) routes.push_back(torch_route(o, stiffness, x, k, reference));

  out << "## Projection K+ = X^T K X, " << k << " vectors, " << type_name<T>() << "\n\n"
      << "model: " << stiffness.dofs << " DOFs, " << stiffness.count() << " bricks (l = 24, packed upper triangles); "
      << "must move " << bytes_text(std::uint64_t(bytes)) << " (matrices, indices, X once) and compute "
      << number_text(flops * 1e-9) << " GFLOP\n"
      << "limits: copy " << number_text(copy * 1e-9) << " GB/s -> " << number_text(bytes / copy * 1e3)
      << " ms; FMA peak " << number_text(peak * 1e-12) << " TFLOP/s -> " << number_text(flops / peak * 1e3)
      << " ms; roofline " << number_text(roofline_s * 1e3) << " ms\n\n"
      << "| route | time (ms) | of roofline | vs CPU EBE | GB/s | GFLOP/s | max diff | note |\n"
      << "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n";
  nlohmann::json rows = nlohmann::json::array();
  for (const Route& r : routes) {
    if (r.seconds <= 0) {
      out << "| " << r.name << " | - | - | - | - | - | - | " << r.note << " |\n";
      continue;
    }
    out << "| " << r.name << " | " << number_text(r.seconds * 1e3) << " | " << number_text(roofline_s / r.seconds, 3)
        << " | " << number_text(cpu_s / r.seconds, 3) << " | " << number_text(bytes / r.seconds * 1e-9) << " | "
        << number_text(flops / r.seconds * 1e-9) << " | " << number_text(r.difference, 2) << " | " << r.note << " |\n";
    rows.push_back({{"route", r.name}, {"time_s", r.seconds}, {"difference", r.difference}, {"note", r.note}});
  }
  if (tensor_peak > 0) {
    const double tensor_roofline_s = std::max(bytes / copy, flops / tensor_peak);
    double fastest = HUGE_VAL;
    for (const Route& r : routes)
      if (r.seconds > 0) fastest = std::min(fastest, r.seconds);
    out << "\nwith the tensor cores' peak (" << number_text(tensor_peak * 1e-12) << " TFLOP/s in double, measured) as the "
        << "compute limit, the roofline is " << number_text(tensor_roofline_s * 1e3) << " ms; the fastest route reaches "
        << number_text(tensor_roofline_s / fastest, 3) << " of it\n";
  }
  out << "\n";
  report["projection"] = {{"dofs", stiffness.dofs}, {"elements", stiffness.count()}, {"k", k}, {"bytes", bytes},
                          {"flops", flops}, {"copy_bytes_per_s", copy}, {"fma_flops_per_s", peak},
                          {"tensor_flops_per_s", tensor_peak},
                          {"roofline_s", roofline_s}, {"layout", to_string(layout.layout)},
                          {"layout_sample_s", layout.seconds}, {"routes", rows}};

  // Y = K X with each scatter.
  out << "## Y = K X, " << k << " vectors\n\n| scatter | time (ms) | launches |\n| --- | ---: | ---: |\n";
  for (const EbeScatter scatter : {EbeScatter::colouring, EbeScatter::atomics}) {
    try {
      EbeOperator<T> op(context, stiffness, k, {scatter, 0});
      const double s = best_of(o.repeat, [&] { op.multiply(dx, dy); });
      out << "| " << to_string(scatter) << " | " << number_text(s * 1e3) << " | " << op.last_timing().launches << " |\n";
      report["multiply"][to_string(scatter)] = s;
    } catch (const UnsupportedFeature& e) {
      out << "| " << to_string(scatter) << " | - | " << e.what() << " |\n";
    }
  }
  out << "\n" << std::flush;
}

struct SolveRow {
  std::string who;
  double seconds = 0, first_iteration = 0;
  std::size_t iterations = 0, cg = 0;
  double worst_residual = 0;
  std::vector<double> eigenvalues;
  std::string note;
};

// The solver's settings of a benchmark run: the bench's preconditioner, ordering and tolerance.
SubspaceOptions solve_options(const BenchEbeOptions& o, std::size_t modes) {
  SubspaceOptions options;
  options.modes = modes;
  options.tolerance = o.tolerance;
  options.max_iterations = o.iterations;
  options.max_solve_iterations = o.cg_iterations;
  options.preconditioner = sparse::parse_preconditioner(o.preconditioner);
  options.ordering = sparse::parse_ordering(o.ordering);
  return options;
}

// The same settings with CG matrix-free on the element operator, preconditioned by block Jacobi
// (ILU(0) needs K assembled).
SubspaceOptions matrix_free(SubspaceOptions options) {
  options.cg_operator = CgOperator::matrix_free;
  options.preconditioner = sparse::PreconditionerKind::block_jacobi;
  return options;
}

template <class T>
SolveRow ziggurat_solve(const Context& context, const ElasticModel<T>& model, SubspaceOptions options,
                        const std::string& label) {
  SolveRow row{context.device().label() + label, 0, 0, 0, 0, 0, {}, ""};
  const auto start = Clock::now();
  options.progress = [&](const SubspaceProgress& p) {
    if (p.iteration == 1) row.first_iteration = seconds_since(start);
  };
  const SubspaceResult<T> r = subspace_iteration(context, model.stiffness, model.mass, options);
  const SubspaceTimes& t = r.times;
  row.seconds = t.total;
  row.first_iteration -= t.setup;
  row.iterations = r.iterations;
  row.cg = r.solve_iterations;
  row.eigenvalues = r.eigenvalues;
  for (const double v : r.residuals) row.worst_residual = std::max(row.worst_residual, v);
  row.note = std::string(to_string(options.cg_operator)) + " K, " + to_string(options.preconditioner) +
             (options.preconditioner == sparse::PreconditionerKind::ilu0 ? std::string(" ") + to_string(options.ordering)
                                                                         : std::string()) +
             (options.deflation && std::is_same_v<T, double> ? ", deflated" : ", not deflated") + "; setup " + number_text(t.setup) + " s, solve " +
             number_text(t.solve) + " s (device: products " + number_text(t.solve_products) + ", preconditioner " +
             number_text(t.solve_preconditioner) + ", vector ops " + number_text(t.solve_vector_ops) + ", deflation " +
             number_text(t.solve_deflation) + "), projection " + number_text(t.projection) + " s, M X " +
             number_text(t.mass) + " s, small " + number_text(t.small) + " s, update " + number_text(t.update) + " s; " +
             r.reason;
  return row;
}

template <class T>
SolveRow eigsh_peer(const BenchEbeOptions& o, const ElasticModel<T>& model, std::size_t modes) {
  SolveRow row{"SciPy eigsh (shift-invert, sigma = 0, SuperLU)", 0, 0, 0, 0, 0, {}, ""};
  const std::string why = run_peer_script(
      o.python, "ebe_peers.py",
      [&](const std::filesystem::path& folder) {
        save_elements(folder / "K.npy", folder / "V.npy", model.stiffness);
        save_elements(folder / "M.npy", folder / "V.npy", model.mass);
        const std::string request =
            nlohmann::json{{"command", "eigsh"}, {"modes", modes}, {"timeout", o.eigsh_timeout}}.dump();
        write_file(folder / "request.json", request.data(), request.size());
      },
      [&](const std::filesystem::path&, const nlohmann::json& answer) {
        if (answer.contains("unavailable")) row.note = answer["unavailable"].get<std::string>();
        if (answer.contains("timeout")) row.note = "did not finish in " + number_text(o.eigsh_timeout) + " s";
        if (!answer.contains("seconds")) return;
        row.seconds = answer["seconds"].get<double>() + answer.value("assembly_seconds", 0.0);
        row.eigenvalues = answer["eigenvalues"].get<std::vector<double>>();
        row.note = "assembly " + number_text(answer.value("assembly_seconds", 0.0)) + " s";
      });
  if (!why.empty()) row.note = why;
  return row;
}

// A table of eigen-solves printed row by row as each finishes (a long CPU run must not hide the
// rows measured before it), the first solve that ran the reference of the others; into
// report["solves"] at the end.
class SolveTable {
 public:
  SolveTable(const std::string& title, std::size_t dofs, nlohmann::json& report)
      : title_(title), dofs_(dofs), report_(report) {
    std::cout << "## " << title << " (" << dofs << " DOFs)\n\n"
              << "| solver | total (s) | first iteration (s) | iterations | CG iterations | vs this device | worst "
                 "residual | max eigenvalue diff | f1 (Hz) | note |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: | "
                 "---: | ---: | --- |\n" << std::flush;
  }
  SolveTable(const SolveTable&) = delete;
  SolveTable& operator=(const SolveTable&) = delete;
  ~SolveTable() {
    std::cout << "\n" << std::flush;
    report_["solves"].push_back({{"title", title_}, {"dofs", dofs_}, {"rows", rows_}});
  }

  void add(const SolveRow& r) {
    std::ostream& out = std::cout;
    if (r.seconds <= 0) {
      out << "| " << r.who << " | - | - | - | - | - | - | - | - | " << r.note << " |\n" << std::flush;
      return;
    }
    if (!reference_) reference_ = r;  // the first solve that ran
    double diff = 0;
    for (std::size_t i = 0; i < std::min(r.eigenvalues.size(), reference_->eigenvalues.size()); ++i)
      diff = std::max(diff, std::abs(r.eigenvalues[i] - reference_->eigenvalues[i]) / reference_->eigenvalues[i]);
    const double f1 = r.eigenvalues.empty() ? 0 : std::sqrt(r.eigenvalues[0]) / (2 * 3.14159265358979323846);
    out << "| " << r.who << " | " << number_text(r.seconds) << " | "
        << (r.first_iteration > 0 ? number_text(r.first_iteration) : "-") << " | "
        << (r.iterations > 0 ? std::to_string(r.iterations) : "-") << " | " << (r.cg > 0 ? std::to_string(r.cg) : "-")
        << " | " << number_text(r.seconds / reference_->seconds, 3) << " | "
        << (r.worst_residual > 0 ? number_text(r.worst_residual, 2) : "-") << " | " << number_text(diff, 2) << " | "
        << number_text(f1, 5) << " | " << r.note << " |\n" << std::flush;
    rows_.push_back({{"solver", r.who}, {"time_s", r.seconds}, {"first_iteration", r.first_iteration},
                     {"iterations", r.iterations}, {"cg", r.cg}, {"eigenvalues", r.eigenvalues}, {"note", r.note}});
  }

 private:
  std::string title_;
  std::size_t dofs_;
  nlohmann::json& report_;
  std::optional<SolveRow> reference_;
  nlohmann::json rows_ = nlohmann::json::array();
};

// The eigen-solve of the projection's model (or --solve-mesh) on the device, beside SciPy.
template <class T>
void device_solve_section(const BenchEbeOptions& o, const Context& context, nlohmann::json& report) {
  const ElasticModel<T> model = cantilever<T>(parse_box(o.solve_mesh.empty() ? o.mesh : o.solve_mesh), Material{});
  const SubspaceOptions options = solve_options(o, o.modes);
  SubspaceOptions same_preconditioner = matrix_free(options);  // the operator's cost alone
  same_preconditioner.cg_operator = CgOperator::assembled;
  SolveTable table("Eigen-solve, " + std::to_string(o.modes) + " modes, on the device", model.stiffness.dofs, report);
  table.add(ziggurat_solve(context, model, options, ""));
  table.add(ziggurat_solve(context, model, same_preconditioner, ", CG assembled, block Jacobi"));
  table.add(ziggurat_solve(context, model, matrix_free(options), ", CG matrix-free"));
  if (o.peers) table.add(eigsh_peer(o, model, o.modes));
}

// The same algorithm on the device and on a CPU OpenCL device (all its cores), with and without
// deflation, beside SciPy, on a model the CPU can solve in a few minutes.
template <class T>
void cpu_solve_section(const BenchEbeOptions& o, const Context& context, nlohmann::json& report) {
  const ElasticModel<T> model = cantilever<T>(parse_box(o.cpu_solve_mesh), Material{});
  const SubspaceOptions options = solve_options(o, o.modes);
  SubspaceOptions plain = options;
  plain.deflation = false;
  SolveTable table("Eigen-solve, " + std::to_string(o.modes) + " modes: the device against all CPU cores",
                   model.stiffness.dofs, report);
  table.add(ziggurat_solve(context, model, options, ""));
  table.add(ziggurat_solve(context, model, plain, ", CG not deflated"));
  table.add(ziggurat_solve(context, model, matrix_free(options), ", CG matrix-free"));
  try {
    const Context cpu(o.cpu_device);
    table.add(ziggurat_solve(cpu, model, options, ""));
  } catch (const Error& e) {
    table.add({"the same algorithm on '" + o.cpu_device + "'", 0, 0, 0, 0, 0, {}, e.what()});
  }
  if (o.peers) table.add(eigsh_peer(o, model, o.modes));
}

// The share of mode j's kinetic-energy-like norm sum u_d^2 along direction d (0 x, 1 y, 2 z).
template <class T>
double direction_share(const ElasticModel<T>& model, const std::vector<T>& modes, std::size_t p, std::size_t j,
                       int direction) {
  double along = 0, all = 0;
  for (std::size_t n = 0; n < model.box.nodes(); ++n)
    for (int d = 0; d < 3; ++d) {
      const std::int32_t dof = model.node_dofs[3 * n + d];
      if (dof < 0) continue;
      const double v = double(modes[std::size_t(dof) * p + j]);
      all += v * v;
      if (d == direction) along += v * v;
    }
  return all > 0 ? along / all : 0;
}

// The first bending frequencies in y of a slender cantilever 2 x 0.1 x 0.2 m (the y side is the
// thinner, so bending in y comes first) as the mesh is refined, beside Euler-Bernoulli.
template <class T>
void convergence_section(const BenchEbeOptions& o, const Context& context, nlohmann::json& report) {
  const double length = 2, width = 0.1, height = 0.2;
  const Material material;
  const std::size_t wanted = 3;
  const std::vector<double> beam = euler_bernoulli_frequencies(length, material.young, material.density,
                                                               height * width * width * width / 12, width * height, wanted);
  std::ostream& out = std::cout;
  out << "## Convergence to Euler-Bernoulli: cantilever " << length << " x " << width << " x " << height
      << " m, bending in y (E = " << material.young << ", nu = " << material.poisson << ", rho = " << material.density
      << ", consistent mass)\n\n| bricks | DOFs | f1 (Hz) | / EB | f2 (Hz) | / EB | f3 (Hz) | / EB | seconds |\n"
      << "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n";
  nlohmann::json rows = nlohmann::json::array();
  for (const std::string& divisions : split(o.convergence_meshes, ',')) {
    const auto n = parse_extents(divisions, 3, 3, "--convergence-meshes");
    const ElasticModel<T> model = cantilever<T>({length, width, height, n[0], n[1], n[2]}, material);
    SubspaceOptions options = solve_options(o, 12);
    const SubspaceResult<T> r = subspace_iteration(context, model.stiffness, model.mass, options);
    std::vector<double> bending;
    for (std::size_t j = 0; j < options.modes && bending.size() < wanted; ++j)
      if (direction_share(model, r.modes, options.modes, j, 1) > 0.9) bending.push_back(r.frequencies[j]);
    out << "| " << divisions << " | " << model.stiffness.dofs;
    for (std::size_t i = 0; i < wanted; ++i) {
      if (i < bending.size()) {
        out << " | " << number_text(bending[i], 6) << " | " << number_text(bending[i] / beam[i], 4);
      } else {
        out << " | - | -";
      }
    }
    out << " | " << number_text(r.times.total) << " |\n" << std::flush;
    rows.push_back({{"mesh", divisions}, {"dofs", model.stiffness.dofs}, {"bending_hz", bending}});
  }
  out << "| Euler-Bernoulli | |";
  for (const double f : beam) out << " " << number_text(f, 6) << " | 1 |";
  out << " |\n\n";
  report["convergence"] = {{"euler_bernoulli_hz", beam}, {"rows", rows}};
}

// Every option that is text, checked before anything is measured.
void check_options(const BenchEbeOptions& o) {
  for (const std::string& name : split(o.sections, ','))
    if (name != "projection" && name != "solve" && name != "cpu" && name != "convergence")
      throw InvalidArgument("unknown section '" + name + "' in --sections: use projection, solve, cpu, convergence");
  for (const auto& [option, mesh] : {std::pair{"--mesh", &o.mesh}, {"--solve-mesh", &o.solve_mesh},
                                     {"--cpu-solve-mesh", &o.cpu_solve_mesh}}) {
    try {
      if (!mesh->empty()) parse_box(*mesh);
    } catch (const InvalidArgument& e) {
      throw InvalidArgument(std::string(option) + ": " + e.what());
    }
  }
  for (const std::string& divisions : split(o.convergence_meshes, ','))
    parse_extents(divisions, 3, 3, "--convergence-meshes");
  sparse::parse_preconditioner(o.preconditioner);
  sparse::parse_ordering(o.ordering);
}

template <class T>
void run(const BenchEbeOptions& o) {
  check_options(o);
  Context context(o.device);
  require_device_precision(context.device(), o.precision);
  const DeviceInfo& device = context.device();
  std::cout << "# Element-by-element projection and subspace iteration (" << type_name<T>() << ")\n\n"
            << "device: " << device.label() << ", driver " << device.driver_version << "; host: "
            << usable_host_cores() << " threads; ziggurat " << version << "; " << utc_timestamp() << "\n\n";
  nlohmann::json report = {{"benchmark", "ebe"}, {"date", utc_timestamp()},
                           {"device", {{"name", device.name}, {"platform", device.platform_name}, {"driver", device.driver_version}}},
                           {"precision", type_name<T>()}};
  const std::vector<std::string> sections = split(o.sections, ',');
  const auto wanted = [&](const char* name) { return std::find(sections.begin(), sections.end(), name) != sections.end(); };
  // Every kernel of the solves built before anything is timed (programs are kept per context).
  SubspaceOptions warm = solve_options(o, o.modes);
  warm.max_iterations = 1;
  subspace_iteration(context, cantilever<T>({1, 0.25, 0.25, 8, 2, 2}, Material{}).stiffness,
                     cantilever<T>({1, 0.25, 0.25, 8, 2, 2}, Material{}).mass, warm);
  if (wanted("projection")) {
    const auto start = Clock::now();
    const ElasticModel<T> model = cantilever<T>(parse_box(o.mesh), Material{});
    std::cout << "model generated in " << number_text(seconds_since(start)) << " s: cantilever " << o.mesh << ", "
              << model.stiffness.dofs << " DOFs\n\n";
    projection_section(o, context, model, report);
  }
  if (wanted("solve")) device_solve_section<T>(o, context, report);
  if (wanted("cpu")) cpu_solve_section<T>(o, context, report);
  if (wanted("convergence")) convergence_section<T>(o, context, report);
  if (o.json) std::cout << "```json\n" << app::json_output(report, 1) << "```\n";
}

}  // namespace

void add_bench_ebe_command(CLI::App& app) {
  auto o = std::make_shared<BenchEbeOptions>();
  // The capability's one name, as in `ziggurat modes` and ziggurat.modes(); `ebe`, its name before,
  // still runs it: the committed results' command lines name it.
  auto* command = app.add_subcommand("modes", "Element-by-element projection X^T K X beside the CPU, the assembled "
                                              "route, PyTorch/CuPy and the roofline; the subspace-iteration eigen-solve "
                                              "beside all CPU cores and SciPy's eigsh (also: ebe)");
  command->alias("ebe");
  command->add_option("--mesh", o->mesh, "Cantilever LxWxH:nx,ny,nz of the projection")->capture_default_str();
  command->add_option("--solve-mesh", o->solve_mesh, "Cantilever of the device eigen-solve (default: --mesh)");
  command->add_option("--cpu-solve-mesh", o->cpu_solve_mesh, "Cantilever of the device-against-CPU eigen-solve")
      ->capture_default_str();
  command->add_option("--vectors", o->vectors, "Vectors of the projection")->capture_default_str()->check(whole_number(1));
  command->add_option("--modes", o->modes, "Modes of the eigen-solves")->capture_default_str()->check(whole_number(1));
  command->add_option("--repeat", o->repeat, "Timed repeats (the best counts)")->capture_default_str()->check(whole_number(1));
  command->add_option("--iterations", o->iterations, "Subspace iterations of the solves at most (1: one iteration, "
                                                    "device against CPU on models too large to solve on the CPU)")
      ->capture_default_str()
      ->check(whole_number(1));
  command->add_option("--cg-iterations", o->cg_iterations,
                      "CG iterations a solve at most (with --iterations 1: every run does the same work, so the "
                      "device and the CPU compare per CG iteration on models too large to solve on the CPU)")
      ->capture_default_str()
      ->check(whole_number(1));
  command->add_option("--tol", o->tolerance, "Eigenvalue tolerance of the solves")
      ->capture_default_str()
      ->check(positive_number());
  command->add_option("--preconditioner", o->preconditioner, "CG's preconditioner in the solves")->capture_default_str();
  command->add_option("--ordering", o->ordering, "ILU(0)'s ordering in the solves")->capture_default_str();
  command->add_option("--cpu-device", o->cpu_device, "The CPU OpenCL device of the same-algorithm run")
      ->capture_default_str();
  command->add_option("--python", o->python, "Python of the peers (ebe_peers.py)")->capture_default_str();
  command->add_option("--eigsh-timeout", o->eigsh_timeout, "Seconds SciPy's eigsh may take")
      ->capture_default_str()
      ->check(positive_number());
  command->add_flag("!--no-peers", o->peers, "Skip PyTorch/CuPy and SciPy");
  command->add_option("--sections", o->sections, "What to run, comma-separated: projection (and the products), solve "
                                                "(the eigen-solve on the device), cpu (device against a CPU device), "
                                                "convergence (bending frequencies against Euler-Bernoulli)")
      ->capture_default_str();
  command->add_option("--convergence-meshes", o->convergence_meshes, "Divisions nx x ny x nz of the refinement")
      ->capture_default_str();
  add_precision_option(command, o->precision, "f32 or f64");
  command->add_option("--device", o->device, "Device selection");
  command->add_flag("--json", o->json, "Also print the results as JSON");
  command->callback([o] { with_precision(o->precision, [&](auto zero) { run<decltype(zero)>(*o); }); });
}

}  // namespace ziggurat::cli
