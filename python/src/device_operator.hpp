#pragma once
// A DeviceMatrix's product as the Krylov solvers' LinearOperator, passed from the module's sparse
// source (which makes it) to its krylov_solver source (which solves with it) in a capsule: the
// matrix stays on the device, and a solve's products are its kernels, with nothing on the host.

#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "module.hpp"
#include "ziggurat/ops/linear_operator.hpp"

namespace ziggurat::python {

/// Y = A X by a product enqueued on the context's compute queue, for one vector: n x n.
template <class T>
class ProductOperator final : public sparse::LinearOperator<T> {
 public:
  using Product = std::function<cl::Event(const sparse::DeviceVectors<T>&, sparse::DeviceVectors<T>&)>;
  ProductOperator(Product product, std::size_t n) : product_(std::move(product)), n_(n) {}
  std::size_t size() const noexcept override { return n_; }
  std::size_t vectors() const noexcept override { return 1; }
  sparse::Span enqueue(const sparse::DeviceVectors<T>& x, sparse::DeviceVectors<T>& y) override {
    const cl::Event done = product_(x, y);
    return {done, done};
  }

 private:
  Product product_;
  std::size_t n_;
};

template <class T>
const char* operator_capsule_name() {
  return sizeof(T) == 4 ? "ziggurat.LinearOperator<float>" : "ziggurat.LinearOperator<double>";
}

/// A capsule holding `op` (a shared_ptr, released with the capsule).
template <class T>
py::capsule operator_capsule(std::shared_ptr<sparse::LinearOperator<T>> op) {
  using Held = std::shared_ptr<sparse::LinearOperator<T>>;
  return py::capsule(new Held(std::move(op)), operator_capsule_name<T>(), [](PyObject* capsule) {
    delete static_cast<Held*>(PyCapsule_GetPointer(capsule, operator_capsule_name<T>()));
  });
}

/// The operator an operator_capsule<T>() holds; InvalidArgument for a capsule of another type.
template <class T>
std::shared_ptr<sparse::LinearOperator<T>> operator_of(const py::capsule& capsule) {
  if (std::string(capsule.name()) != operator_capsule_name<T>())
    throw InvalidArgument(std::string("the matrix's operator is a ") + capsule.name() + "; the solve needs a " +
                          operator_capsule_name<T>() + " (the matrix's dtype)");
  return *static_cast<std::shared_ptr<sparse::LinearOperator<T>>*>(capsule.get_pointer());
}

}  // namespace ziggurat::python
