#include "sparse_arrays.hpp"

#include <cstdint>
#include <string>
#include <vector>

#include "ziggurat/base/error.hpp"

namespace ziggurat::python {

namespace {

// An index array (int32 or int64, one dimension) as the library's 32-bit indices, converted on
// every core without the GIL.
std::vector<sparse::Index> index_vector(const py::handle& handle, const char* what) {
  const py::array array = py::array::ensure(handle);
  if (!array || array.ndim() != 1 || array.dtype().kind() != 'i') {
    throw InvalidArgument(std::string(what) + " must be a one-dimensional array of int32 or int64");
  }
  const auto convert = [&](auto integer) {
    using Integer = decltype(integer);
    const auto values = py::array_t<Integer, py::array::c_style | py::array::forcecast>::ensure(array);
    const py::gil_scoped_release release;
    return sparse::copy_indices(values.data(), static_cast<std::size_t>(values.size()), what);
  };
  return array.itemsize() == 4 ? convert(std::int32_t{}) : convert(std::int64_t{});
}

template <class T>
std::vector<T> value_vector(const py::handle& handle) {
  const auto values = real_array<T>(handle, "the matrix's data");
  const py::gil_scoped_release release;
  return sparse::copy_values(values.data(), static_cast<std::size_t>(values.size()));
}

struct Arrays {
  std::size_t rows, cols, block_size;
};

Arrays shape_of(const py::tuple& arrays) {
  if (arrays.size() != 6) throw InvalidArgument("a sparse matrix is passed as (rows, cols, b, indptr, indices, data)");
  return {arrays[0].cast<std::size_t>(), arrays[1].cast<std::size_t>(), arrays[2].cast<std::size_t>()};
}

// The arrays as they are, not yet validated: a Bsr of their b (b = 1 for CSR).
template <class T>
sparse::Bsr<T> own_blocks(const py::tuple& arrays) {
  const Arrays a = shape_of(arrays);
  sparse::Bsr<T> m;
  m.rows = a.rows;
  m.cols = a.cols;
  m.block_size = a.block_size;
  m.block_rows = a.block_size == 0 ? 0 : (a.rows + a.block_size - 1) / a.block_size;
  m.block_cols = a.block_size == 0 ? 0 : (a.cols + a.block_size - 1) / a.block_size;
  m.block_row_ptr = index_vector(arrays[3], "indptr");
  m.block_col = index_vector(arrays[4], "indices");
  m.values = value_vector<T>(arrays[5]);
  return m;
}

// A Bsr of b = 1 as the CSR it is, and back: the same arrays, moved.
template <class T>
sparse::Csr<T> entries_of(sparse::Bsr<T>&& m) {
  return {m.rows, m.cols, std::move(m.block_row_ptr), std::move(m.block_col), std::move(m.values)};
}

template <class T>
sparse::Bsr<T> scalar_blocks_of(sparse::Csr<T>&& csr) {
  sparse::Bsr<T> m;
  m.rows = m.block_rows = csr.rows;
  m.cols = m.block_cols = csr.cols;
  m.block_size = 1;
  m.block_row_ptr = std::move(csr.row_ptr);
  m.block_col = std::move(csr.col);
  m.values = std::move(csr.values);
  return m;
}

}  // namespace

py::tuple index_order(const py::handle& indptr, const py::handle& indices, std::size_t length) {
  const auto order = [&](auto integer) {
    using Integer = decltype(integer);
    using Array = py::array_t<Integer, py::array::c_style | py::array::forcecast>;
    const Array ptr = Array::ensure(indptr), index = Array::ensure(indices);
    if (!ptr || !index || ptr.ndim() != 1 || index.ndim() != 1 || ptr.size() < 1)
      throw InvalidArgument("indptr and indices must be one-dimensional integer arrays");
    const py::gil_scoped_release release;
    return sparse::index_order(ptr.data(), static_cast<std::size_t>(ptr.size() - 1), index.data(), length);
  };
  const py::array ptr = py::array::ensure(indptr), index = py::array::ensure(indices);
  const bool narrow = ptr && index && ptr.dtype().is(py::dtype::of<std::int32_t>()) &&
                      index.dtype().is(py::dtype::of<std::int32_t>());
  const sparse::IndexOrder o = narrow ? order(std::int32_t{}) : order(std::int64_t{});
  return py::make_tuple(o.in_range, o.strictly_increasing);
}

template <class T>
sparse::Csr<T> csr_of(const py::tuple& arrays) {
  if (shape_of(arrays).block_size != 1) return sparse::to_csr(own_blocks<T>(arrays));  // to_csr validates
  sparse::Csr<T> m = entries_of(own_blocks<T>(arrays));
  sparse::validate(m);
  return m;
}

// Each path validates the arrays once: validate(), propose_block_size() or to_bsr().
template <class T>
sparse::Bsr<T> bsr_of(const py::tuple& arrays, std::optional<std::size_t> block_size) {
  const Arrays a = shape_of(arrays);
  if (a.block_size != 1 && (!block_size || *block_size == a.block_size)) {
    sparse::Bsr<T> m = own_blocks<T>(arrays);
    sparse::validate(m);
    return m;
  }
  if (a.block_size != 1) return sparse::to_bsr(csr_of<T>(arrays), *block_size);
  sparse::Csr<T> csr = entries_of(own_blocks<T>(arrays));
  const std::size_t b = block_size ? *block_size : sparse::propose_block_size(csr);
  if (block_size || b != 1) return sparse::to_bsr(std::move(csr), b);
  return scalar_blocks_of(std::move(csr));
}

template sparse::Csr<float> csr_of<float>(const py::tuple&);
template sparse::Csr<double> csr_of<double>(const py::tuple&);
template sparse::Bsr<float> bsr_of<float>(const py::tuple&, std::optional<std::size_t>);
template sparse::Bsr<double> bsr_of<double>(const py::tuple&, std::optional<std::size_t>);

}  // namespace ziggurat::python
