// ziggurat.KrylovSolver and ziggurat.sparse.linalg's solvers: a system set up once on the device
// (solver/krylov.hpp's KrylovSolver: upload, ordering, factorisation), solved as often as asked.
// A is a SciPy matrix's arrays, or a Python function (a LinearOperator's matvec) called on the
// host for every product; M^-1 may be one too.

#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include <chrono>
#include <memory>
#include <optional>

#include "device_operator.hpp"
#include "module.hpp"
#include "ziggurat/app/reports.hpp"
#include "sparse_arrays.hpp"
#include "ziggurat/solver/krylov.hpp"

namespace ziggurat::python {

namespace {

// Y = f(X) by a Python function on the host: X is downloaded, f called with the GIL, Y uploaded.
// Each product costs a download and an upload of n x k values and the function's own time.
template <class T>
class HostOperator final : public sparse::LinearOperator<T> {
 public:
  HostOperator(std::size_t n, std::size_t k, py::object function, std::string what)
      : n_(n), k_(k), function_(std::move(function)), what_(std::move(what)) {}
  ~HostOperator() override {
    const py::gil_scoped_acquire gil;
    function_ = py::object();
  }
  std::size_t size() const noexcept override { return n_; }
  std::size_t vectors() const noexcept override { return k_; }
  sparse::Span enqueue(const sparse::DeviceVectors<T>& x, sparse::DeviceVectors<T>& y) override {
    std::vector<T> in = x.download();
    std::vector<T> out;
    between_tasks([&] {
      const std::vector<py::ssize_t> shape = k_ == 1 ? std::vector<py::ssize_t>{py::ssize_t(n_)}
                                                     : std::vector<py::ssize_t>{py::ssize_t(n_), py::ssize_t(k_)};
      const py::object result = function_(array_owning(std::move(in), shape));
      const auto values = real_array<T>(result, what_.c_str());
      if (std::size_t(values.size()) != n_ * k_)
        throw InvalidArgument(what_ + " returned " + std::to_string(values.size()) + " values; it must return " +
                              std::to_string(n_ * k_) + " (the shape of its input)");
      out.assign(values.data(), values.data() + values.size());
    });
    y.upload(out);
    return {};
  }

 private:
  std::size_t n_, k_;
  py::object function_;
  std::string what_;
};

// The n x n identity: the matrix a matrix-free solve without preconditioner is built beside.
template <class T>
sparse::Bsr<T> identity(std::size_t n) {
  sparse::Csr<T> csr;
  csr.rows = csr.cols = n;
  csr.row_ptr.resize(n + 1);
  csr.col.resize(n);
  csr.values.assign(n, T(1));
  for (std::size_t i = 0; i <= n; ++i) csr.row_ptr[i] = sparse::Index(i);
  for (std::size_t i = 0; i < n; ++i) csr.col[i] = sparse::Index(i);
  return sparse::to_bsr(csr, 1);
}

// One system on a device, set up in the constructor; solve() as often as asked.
template <class T>
class System {
 public:
  // A from SciPy's arrays.
  System(const py::tuple& arrays, const app::SolverSettings& settings, std::optional<std::size_t> block_size,
         std::size_t vectors, const py::object& context)
      : context_(context_of(context)), options_(app::solver_options(settings, context_)), k_(vectors) {
    const sparse::Bsr<T> matrix = bsr_of<T>(arrays, block_size);  // validated
    rows_ = matrix.rows;
    block_size_ = matrix.block_size;
    set_up([&] { return sparse::KrylovSolver<T>(context_, matrix, k_, options_, sparse::Validated{}); });
  }
  // A as a function of x, on the host: matrix-free, preconditioner none (or an operator's).
  System(std::size_t n, py::object matvec, const app::SolverSettings& settings, std::size_t vectors,
         const py::object& context)
      : context_(context_of(context)), options_(app::solver_options(settings, context_)), k_(vectors), rows_(n) {
    auto op = std::make_shared<HostOperator<T>>(n, k_, std::move(matvec), "A's matvec");
    const sparse::Bsr<T> none = identity<T>(n);
    set_up([&] { return sparse::KrylovSolver<T>(context_, op, none, options_); });
  }

  // A's products by an operator on the device (a DeviceMatrix's): matrix-free, preconditioner none
  // (or an operator's).
  System(std::size_t n, std::shared_ptr<sparse::LinearOperator<T>> op, const app::SolverSettings& settings,
         const py::object& context)
      : context_(context_of(context)), options_(app::solver_options(settings, context_)), k_(op->vectors()), rows_(n) {
    const sparse::Bsr<T> none = identity<T>(n);
    set_up([&] { return sparse::KrylovSolver<T>(context_, op, none, options_); });
  }

  // M^-1 by a Python function on the host (None: no preconditioner).
  void precondition_with(const py::object& function) {
    solver_->precondition_with(function.is_none() ? nullptr
                                                  : std::make_shared<HostOperator<T>>(rows_, k_, function, "M's matvec"));
  }

  // x and the report for b (n,) or (n, k), from x0 (None: zeros). `callback(iteration, residual,
  // iterate)` after each iteration (iterate: a function giving x on the host); `cycle_callback`
  // the same at each GMRES restart cycle's end.
  py::tuple solve(const py::handle& b_values, const py::object& x0_values, const py::object& callback,
                  const py::object& cycle_callback) {
    const auto b = real_array<T>(b_values, "b");
    if (std::size_t(b.size()) != rows_ * k_)
      throw InvalidArgument("b must hold " + std::to_string(rows_ * k_) + " values (" + std::to_string(rows_) + " rows x " +
                            std::to_string(k_) + " vectors); it holds " + std::to_string(b.size()));
    const std::vector<T> rhs(b.data(), b.data() + b.size());
    std::vector<T> x;
    if (!x0_values.is_none()) {
      const auto x0 = real_array<T>(x0_values, "x0");
      if (x0.size() != b.size())
        throw InvalidArgument("x0 must have b's " + std::to_string(b.size()) + " values; it has " +
                              std::to_string(x0.size()));
      x.assign(x0.data(), x0.data() + x0.size());
    }
    solver_->set_hooks(hook(callback), cycle_callback.is_none() ? nullptr : hook(cycle_callback));
    sparse::SolveReport result;
    {
      const ReleasedGil release;
      const DeviceWork work;
      result = solver_->solve(rhs, x);
    }
    const std::vector<py::ssize_t> shape(b.shape(), b.shape() + b.ndim());
    return py::make_tuple(array_owning(std::move(x), shape), report(result));
  }

  // M^-1 x on the device, for x of b's shape.
  py::array_t<T> apply_preconditioner(const py::handle& values) {
    const auto in = real_array<T>(values, "x");
    const std::vector<T> host(in.data(), in.data() + in.size());
    std::vector<T> out;
    {
      const ReleasedGil release;
      const DeviceWork work;
      solver_->apply_preconditioner(host, out);
    }
    return array_owning(std::move(out), std::vector<py::ssize_t>(in.shape(), in.shape() + in.ndim()));
  }

  void set_stopping(double rtol, double atol, std::size_t max_iter) {
    solver_->set_stopping(rtol, atol, max_iter);
    options_.tolerance = rtol;
    options_.absolute_tolerance = atol;
  }

  double setup_seconds() const { return setup_seconds_; }

 private:
  template <class Make>
  void set_up(Make&& make) {
    const auto start = std::chrono::steady_clock::now();
    {
      const ReleasedGil release;
      const DeviceWork work;
      solver_.emplace(make());
    }
    setup_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }

  // Always a hook, so that Ctrl-C stops the solve after the iteration it interrupted.
  // The callback is held by a shared_ptr: the library copies its hooks without the GIL.
  static std::function<void(const sparse::SolveProgress&)> hook(const py::object& function) {
    return [callback = std::make_shared<py::object>(function)](const sparse::SolveProgress& p) {
      between_tasks([&] {
        if (callback->is_none()) return;
        const auto iterate = p.iterate;
        (*callback)(p.iteration, p.relative_residual,
                 py::cpp_function([iterate]() -> py::object {
                   if (!iterate) return py::none();
                   std::vector<double> values = iterate();
                   return array_owning(std::move(values), {py::ssize_t(values.size())});
                 }));
      });
    };
  }

  py::object report(const sparse::SolveReport& r) const {
    nlohmann::json summary = {{"device", context_.device().label()},
                              {"method", sparse::to_string(options_.method)},
                              {"preconditioner", solver_->options().preconditioner == sparse::PreconditionerKind::none
                                                     ? "none"
                                                     : sparse::to_string(options_.preconditioner)},
                              {"block_size", block_size_},
                              {"rtol", options_.tolerance},
                              {"atol", options_.absolute_tolerance}};
    summary.update(app::to_json(r, true));
    return to_python(summary);
  }

  Context context_;
  sparse::SolverOptions options_;
  std::size_t k_ = 1, rows_ = 0, block_size_ = 1;
  std::optional<sparse::KrylovSolver<T>> solver_;
  double setup_seconds_ = 0;
};

template <class T>
void define_system(py::module_& module, const char* name) {
  py::class_<System<T>>(module, name)
      .def(py::init([](const py::tuple& arrays, const py::dict& settings, std::optional<std::size_t> block_size,
                       std::size_t vectors, const py::object& context) {
             return std::make_unique<System<T>>(arrays, solver_settings(settings), block_size, vectors, context);
           }),
           py::arg("arrays"), py::arg("settings"), py::arg("block_size"), py::arg("vectors"), py::arg("context"))
      .def(py::init([](std::size_t n, const py::capsule& product, const py::dict& settings, const py::object& context) {
             return std::make_unique<System<T>>(n, operator_of<T>(product), solver_settings(settings), context);
           }),
           py::arg("n"), py::arg("product"), py::arg("settings"), py::arg("context"))
      .def(py::init([](std::size_t n, py::object matvec, const py::dict& settings, std::size_t vectors,
                       const py::object& context) {
             return std::make_unique<System<T>>(n, std::move(matvec), solver_settings(settings), vectors, context);
           }),
           py::arg("n"), py::arg("matvec"), py::arg("settings"), py::arg("vectors"), py::arg("context"))
      .def("precondition_with", &System<T>::precondition_with, py::arg("function"))
      .def("apply_preconditioner", &System<T>::apply_preconditioner, py::arg("x"))
      .def("set_stopping", &System<T>::set_stopping, py::arg("rtol"), py::arg("atol"), py::arg("max_iter"))
      .def("solve", &System<T>::solve, py::arg("b"), py::arg("x0"), py::arg("callback"), py::arg("cycle_callback"))
      .def_property_readonly("setup_seconds", &System<T>::setup_seconds);
}

}  // namespace

void register_krylov_solver(py::module_& module) {
  define_system<float>(module, "KrylovSystemFloat32");
  define_system<double>(module, "KrylovSystemFloat64");
}

}  // namespace ziggurat::python
