// Sparse products: ziggurat.DeviceMatrix (a matrix kept in device memory in block CSR, CSR or DIA,
// with its kernels built once per number of vectors) and ziggurat.DeviceVectors (a set of k
// vectors kept there), as `ziggurat spmm` runs them (ops/spmm.hpp). `matrix @ X` hands X's NumPy
// buffer to the OpenCL write (no host copy of ours when X is C-contiguous of the matrix's dtype)
// and reads Y into a new NumPy array the same way.

#include <pybind11/stl.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "device_operator.hpp"
#include "module.hpp"
#include "sparse_arrays.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/matrix/device_sparse.hpp"
#include "ziggurat/ops/spmm.hpp"
#include "ziggurat/tuning/bsr_autotune.hpp"

namespace ziggurat::python {

namespace {

using sparse::DeviceVectors;

// ziggurat.DeviceVectors: k vectors of one matrix's input or output in device memory.
class Vectors {
 public:
  virtual ~Vectors() = default;
  virtual std::size_t rows() const = 0;
  virtual std::size_t k() const = 0;
  virtual std::string dtype() const = 0;
  virtual void upload(const py::handle& values) = 0;
  virtual py::array download(const py::object& out) const = 0;
};

template <class T>
class TypedVectors final : public Vectors {
 public:
  TypedVectors(const Context& context, DeviceVectors<T> vectors) : context_(context), vectors_(std::move(vectors)) {}
  std::size_t rows() const override { return vectors_.rows(); }
  std::size_t k() const override { return vectors_.k(); }
  std::string dtype() const override { return dtype_name<T>(); }

  void upload(const py::handle& values) override {
    const auto array = real_array<T>(values, "the vectors");
    // The write reads rows * k values from the buffer: nothing less will do.
    const bool one = array.ndim() == 1 && k() == 1 && array.shape(0) == py::ssize_t(rows());
    if (!one && !(array.ndim() == 2 && array.shape(0) == py::ssize_t(rows()) && array.shape(1) == py::ssize_t(k()))) {
      std::string given = "(";
      for (py::ssize_t i = 0; i < array.ndim(); ++i) given += (i > 0 ? ", " : "") + std::to_string(array.shape(i));
      given += array.ndim() == 1 ? ",)" : ")";
      const std::string n = std::to_string(rows());
      throw InvalidArgument("the vectors are " + n + " x " + std::to_string(k()) + ": upload an array of shape (" + n +
                            ", " + std::to_string(k()) + ")" + (k() == 1 ? " or (" + n + ",)" : "") + ", not " + given);
    }
    const T* data = array.data();
    const ReleasedGil release;
    const DeviceWork work;
    vectors_.upload(data, rows() * k());
  }

  py::array download(const py::object& out) const override {
    const std::vector<py::ssize_t> shape{py::ssize_t(rows()), py::ssize_t(k())};
    py::array_t<T> values;
    if (out.is_none()) {
      values = py::array_t<T>(shape);
    } else {
      if (!py::array_t<T, py::array::c_style>::check_(out)) {
        throw InvalidArgument(std::string("out must be a C-contiguous ") + dtype_name<T>() + " array");
      }
      values = out.cast<py::array_t<T>>();
      if (values.ndim() != 2 || values.shape(0) != shape[0] || values.shape(1) != shape[1] || !values.writeable()) {
        throw InvalidArgument("out must be a writeable array of shape (" + std::to_string(rows()) + ", " +
                              std::to_string(k()) + ")");
      }
    }
    T* data = values.mutable_data();
    const ReleasedGil release;
    const DeviceWork work;
    vectors_.download(data, rows() * k());
    return std::move(values);
  }

  const Context& context() const { return context_; }
  DeviceVectors<T>& vectors() { return vectors_; }

 private:
  Context context_;
  DeviceVectors<T> vectors_;
};

// ziggurat._core.DeviceMatrix: the device side of ziggurat.DeviceMatrix.
class Matrix {
 public:
  virtual ~Matrix() = default;
  virtual py::array multiply_array(const py::handle& x) = 0;
  virtual void multiply(Vectors& x, Vectors& y) = 0;
  virtual std::unique_ptr<Vectors> input_vectors(std::size_t k) const = 0;
  virtual std::unique_ptr<Vectors> output_vectors(std::size_t k) const = 0;
  virtual py::dict info() const = 0;
  virtual std::vector<double> native_seconds(const py::handle& x, std::size_t repeat, bool resident) = 0;
  /// (capsule, context): the product for one vector as a Krylov solver's operator (device_operator.hpp).
  virtual py::tuple linear_operator() = 0;
};

template <class T>
class TypedMatrix final : public Matrix {
 public:
  // Block CSR (CSR is b = 1) with `kernel`: "" the rule's (no measurement), "auto" what
  // autotuning finds fastest for each k, else a variant's name ("row", "group", "multirow/4").
  TypedMatrix(const Context& context, const sparse::Bsr<T>& a, std::string format, std::string kernel)
      : context_(context), format_(std::move(format)), kernel_(std::move(kernel)), bsr_(std::in_place, context, a) {
    if (!kernel_.empty() && kernel_ != "auto") sparse::parse_bsr_kernel(kernel_);
  }
  TypedMatrix(const Context& context, const sparse::Dia<T>& a) : context_(context), format_("dia"), dia_(std::in_place, context, a) {}

  py::array multiply_array(const py::handle& x_values) override {
    const auto x = real_array<T>(x_values, "X");
    if (x.ndim() < 1 || x.ndim() > 2 || x.shape(0) != py::ssize_t(cols()) || (x.ndim() == 2 && x.shape(1) == 0)) {
      throw InvalidArgument("X must have shape (" + std::to_string(cols()) + ",) or (" + std::to_string(cols()) +
                            ", k): the matrix has " + std::to_string(cols()) + " columns");
    }
    const std::size_t k = x.ndim() == 2 ? static_cast<std::size_t>(x.shape(1)) : 1;
    py::array_t<T> y(x.ndim() == 2 ? std::vector<py::ssize_t>{py::ssize_t(rows()), py::ssize_t(k)}
                                   : std::vector<py::ssize_t>{py::ssize_t(rows())});
    const T* in = x.data();
    T* out = y.mutable_data();
    const ReleasedGil release;
    const DeviceWork work;
    const std::lock_guard<std::mutex> lock(mutex_);
    Slot& slot = slot_for(k);
    if (in_place(k)) {
      // x and y as they are: a CPU device reads and writes them with no copy (a third of the time
      // of a CSR product with k = 1, 1 M rows and 7 M values on PoCL).
      const DeviceVectors<T> x_here(context_, const_cast<T*>(in), cols(), k, CL_MEM_READ_ONLY);
      DeviceVectors<T> y_here(context_, out, rows(), k, CL_MEM_WRITE_ONLY);
      slot.enqueue(x_here, y_here).wait();
      y_here.show_to_host();
    } else {
      slot.x.upload(in, cols() * k);
      slot.enqueue(slot.x, slot.y).wait();
      slot.y.download(out, rows() * k);
    }
    return std::move(y);
  }

  void multiply(Vectors& x, Vectors& y) override {
    auto& typed_x = typed(x, "x");
    auto& typed_y = typed(y, "out");
    const ReleasedGil release;
    const DeviceWork work;
    const std::lock_guard<std::mutex> lock(mutex_);
    slot_for(typed_x.k()).enqueue(typed_x.vectors(), typed_y.vectors()).wait();
  }

  std::unique_ptr<Vectors> input_vectors(std::size_t k) const override {
    return new_vectors(cols(), k, bsr_ ? bsr_->block_cols() * bsr_->block_size() : cols());
  }

  std::unique_ptr<Vectors> output_vectors(std::size_t k) const override {
    return new_vectors(rows(), k, bsr_ ? bsr_->block_rows() * bsr_->block_size() : rows());
  }

  // The seconds of each of `repeat` calls of what `matrix @ X` (resident: `multiply(x, out)`) runs,
  // timed in C++ with no Python between the calls: what bench/src/python_overhead.py compares the
  // bound calls with.
  std::vector<double> native_seconds(const py::handle& x_values, std::size_t repeat, bool resident) override {
    const auto x = real_array<T>(x_values, "X");
    const std::size_t k = x.ndim() == 2 ? static_cast<std::size_t>(x.shape(1)) : 1;
    if (static_cast<std::size_t>(x.size()) != cols() * k) throw InvalidArgument("X must have the matrix's columns");
    std::vector<T> y(rows() * k);
    std::vector<double> seconds;
    const ReleasedGil release;
    const DeviceWork work;
    const std::lock_guard<std::mutex> lock(mutex_);
    Slot& slot = slot_for(k);
    slot.x.upload(x.data(), cols() * k);
    for (std::size_t i = 0; i < repeat; ++i) {
      const auto start = std::chrono::steady_clock::now();
      if (!resident) slot.x.upload(x.data(), cols() * k);
      slot.enqueue(slot.x, slot.y).wait();
      if (!resident) slot.y.download(y.data(), y.size());
      seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    return seconds;
  }

  py::dict info() const override {
    py::dict d;
    d["shape"] = py::make_tuple(rows(), cols());
    d["dtype"] = dtype_name<T>();
    d["format"] = format_;
    d["block_size"] = bsr_ ? bsr_->block_size() : 1;
    d["stored_values"] = bsr_ ? bsr_->blocks() * bsr_->block_size() * bsr_->block_size() : dia_->diagonals() * dia_->rows();
    d["symmetric"] = dia_ && dia_->symmetric();
    py::dict kernels;
    for (const auto& [k, name] : kernel_names()) kernels[py::int_(k)] = name;
    d["kernels"] = kernels;
    d["device"] = context_.device().label();
    return d;
  }

 private:
  // The product for k vectors: its kernels and a pair of vectors for products of NumPy arrays.
  struct Slot {
    std::function<cl::Event(const DeviceVectors<T>&, DeviceVectors<T>&)> enqueue;
    std::string kernel;
    DeviceVectors<T> x, y;
  };

  // The kernel built for each k so far, read under the matrix's lock (a product in another thread
  // may be adding a slot).
  std::map<std::size_t, std::string> kernel_names() const {
    std::map<std::size_t, std::string> names;
    const ReleasedGil release;
    const std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& [k, slot] : slots_) names.emplace(k, slot.kernel);
    return names;
  }

  // New vectors (zeroed on the device: device work).
  std::unique_ptr<Vectors> new_vectors(std::size_t rows, std::size_t k, std::size_t padded) const {
    const ReleasedGil release;
    const DeviceWork work;
    return std::make_unique<TypedVectors<T>>(context_, DeviceVectors<T>(context_, rows, k, padded));
  }

  // Whether `matrix @ X` with k vectors runs on X and Y in place: on a CPU device, where the kernels
  // need no padding past them, and one vector a work-item (wider vector loads may need an alignment
  // that NumPy's arrays lack).
  bool in_place(std::size_t k) const {
    const Slot& slot = slots_.at(k);
    return context_.device().type == DeviceType::cpu && k == 1 && rows() > 0 && cols() > 0 && slot.x.padded_rows() == cols() &&
           slot.y.padded_rows() == rows();
  }

  std::size_t rows() const { return bsr_ ? bsr_->rows() : dia_->rows(); }
  std::size_t cols() const { return bsr_ ? bsr_->cols() : dia_->cols(); }

  TypedVectors<T>& typed(Vectors& v, const char* name) const {
    auto* typed = dynamic_cast<TypedVectors<T>*>(&v);
    if (typed == nullptr) {
      throw InvalidArgument(std::string(name) + " holds " + v.dtype() + " vectors; the matrix is " + dtype_name<T>());
    }
    if (typed->context().cl_context()() != context_.cl_context()()) {
      throw InvalidArgument(std::string(name) + " lives in another context than the matrix: make it with the matrix's "
                            "input_vectors() or output_vectors()");
    }
    return *typed;
  }

  // The matrix's own product: its vectors are the solver's (no padding rows).
  py::tuple linear_operator() override {
    if (rows() != cols())
      throw InvalidArgument("a solve needs a square matrix; this DeviceMatrix is " + std::to_string(rows()) + " x " +
                            std::to_string(cols()));
    typename ProductOperator<T>::Product product;
    std::size_t padded = 0;
    {
      const ReleasedGil release;
      const DeviceWork work;
      const std::lock_guard<std::mutex> lock(mutex_);
      Slot& slot = slot_for(1);
      product = slot.enqueue;
      padded = std::max(slot.x.padded_rows(), slot.y.padded_rows());
    }
    if (padded != rows())
      throw InvalidArgument("this DeviceMatrix's blocks pad its " + std::to_string(rows()) + " rows to " +
                            std::to_string(padded) + ": a solve on it needs block_size=1 (or format='csr' or 'dia'), or "
                            "the SciPy matrix itself");
    return py::make_tuple(operator_capsule<T>(std::make_shared<ProductOperator<T>>(std::move(product), rows())),
                          py::cast(context_));
  }

  Slot& slot_for(std::size_t k) {
    const auto found = slots_.find(k);
    if (found != slots_.end()) return found->second;
    if (dia_) {
      auto product = std::make_shared<sparse::DiaMultiplier<T>>(context_, *dia_, k);
      return slots_.try_emplace(k, Slot{[product](const DeviceVectors<T>& x, DeviceVectors<T>& y) { return product->enqueue(x, y); },
                                        "dia", DeviceVectors<T>(context_, cols(), k), DeviceVectors<T>(context_, rows(), k)})
          .first->second;
    }
    const sparse::BsrKernel kernel = kernel_.empty()     ? sparse::BsrKernel{}
                                     : kernel_ == "auto" ? sparse::choose_bsr_kernel(context_, *bsr_, k).kernel
                                                         : sparse::parse_bsr_kernel(kernel_);
    auto product = std::make_shared<sparse::BsrMultiplier<T>>(context_, *bsr_, k, kernel);
    return slots_.try_emplace(k, Slot{[product](const DeviceVectors<T>& x, DeviceVectors<T>& y) { return product->enqueue(x, y); },
                                      product->kernel().name(), sparse::input_vectors(context_, *bsr_, k),
                                      sparse::output_vectors(context_, *bsr_, k)})
        .first->second;
  }

  Context context_;
  std::string format_, kernel_;
  std::optional<sparse::DeviceBsr<T>> bsr_;
  std::optional<sparse::DeviceDia<T>> dia_;
  std::map<std::size_t, Slot> slots_;
  mutable std::mutex mutex_;  // guards slots_: the GIL is released while a product runs
};

struct MatrixArguments {
  std::string format;
  std::optional<std::size_t> block_size;
  std::string kernel;
  bool symmetric = false;
};

template <class T>
std::unique_ptr<Matrix> make_matrix(const py::tuple& arrays, const MatrixArguments& a, const Context& context) {
  if (a.format != "dia" && a.symmetric) throw InvalidArgument("symmetric=True is for format='dia' (the half-stored form)");
  if (a.format != "bsr" && a.block_size) {
    throw InvalidArgument("block_size is for format='bsr'; format='" + a.format + "' has none");
  }
  if (a.format == "dia") {
    if (!a.kernel.empty()) throw InvalidArgument("kernel chooses among block CSR kernels; DIA has one");
    const sparse::Dia<T> dia = sparse::to_dia(csr_of<T>(arrays), a.symmetric);
    const ReleasedGil release;
    const DeviceWork work;
    return std::make_unique<TypedMatrix<T>>(context, dia);
  }
  if (a.format != "bsr" && a.format != "csr") throw InvalidArgument("format is 'bsr', 'csr' or 'dia', not '" + a.format + "'");
  const sparse::Bsr<T> bsr = bsr_of<T>(arrays, a.format == "csr" ? std::optional<std::size_t>(1) : a.block_size);
  const ReleasedGil release;
  const DeviceWork work;
  return std::make_unique<TypedMatrix<T>>(context, bsr, a.format, a.kernel);
}

}  // namespace

void register_sparse(py::module_& module) {
  module.def("index_order", &index_order, py::arg("indptr"), py::arg("indices"), py::arg("length"),
             "(in_range, strictly_increasing) of a CSR's or BSR's index arrays, checked on every core");
  py::class_<Vectors>(module, "DeviceVectors",
                      "k vectors of n values in device memory, the input or output of a DeviceMatrix's products "
                      "(made by DeviceMatrix.input_vectors() and output_vectors()). They stay on the device until "
                      "download() copies them out.")
      .def_property_readonly("shape", [](const Vectors& v) { return py::make_tuple(v.rows(), v.k()); }, "(n, k)")
      .def_property_readonly("dtype", [](const Vectors& v) { return py::dtype(v.dtype()); }, "float32 or float64")
      .def("upload", &Vectors::upload, py::arg("values"),
           "Copies an (n, k) array (or (n,) when k = 1) into the device: its buffer is handed to the OpenCL "
           "write when it is C-contiguous of this dtype, else a converted copy's.")
      .def("download", &Vectors::download, py::arg("out") = py::none(),
           "The vectors as an (n, k) array: a new one, or `out` (C-contiguous, this dtype and shape) written in place "
           "and returned.");
  py::class_<Matrix>(module, "DeviceMatrix")
      .def("__matmul__", &Matrix::multiply_array, py::arg("x"))
      .def("multiply", &Matrix::multiply, py::arg("x"), py::arg("out"))
      .def("input_vectors", &Matrix::input_vectors, py::arg("k"))
      .def("output_vectors", &Matrix::output_vectors, py::arg("k"))
      .def_property_readonly("info", &Matrix::info)
      .def("native_seconds", &Matrix::native_seconds, py::arg("x"), py::arg("repeat"), py::arg("resident"))
      .def("linear_operator", &Matrix::linear_operator);
  const auto define = [&module](auto zero) {
    using T = decltype(zero);
    module.def(
        sizeof(T) == 4 ? "device_matrix_float32" : "device_matrix_float64",
        [](const py::tuple& arrays, std::string format, std::optional<std::size_t> block_size, std::string kernel,
           bool symmetric, const py::object& context) {
          return make_matrix<T>(arrays, {std::move(format), block_size, std::move(kernel), symmetric}, context_of(context));
        },
        py::arg("arrays"), py::arg("format"), py::arg("block_size"), py::arg("kernel"), py::arg("symmetric"),
        py::arg("context"));
  };
  define(float{});
  define(double{});
}

}  // namespace ziggurat::python
