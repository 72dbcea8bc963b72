#pragma once
// SciPy's sparse arrays (CSR, or BSR with square blocks), as the package passes them, made into
// the library's host matrices: the tuple (rows, cols, b, indptr, indices, data), b = 1 for CSR,
// indices int32 or int64, data (nnz,) or (blocks, b, b). The values and indices are copied once,
// on every core and without the GIL, into the library's arrays (32-bit unsigned indices); the
// package has made the indices sorted and free of duplicates.

#include <cstddef>
#include <optional>

#include "module.hpp"
#include "ziggurat/matrix/sparse.hpp"

namespace ziggurat::python {

/// (in_range, strictly_increasing) of SciPy's index arrays (sparse::index_order), on every core
/// without the GIL: indptr already checked, `length` the bound of the indices.
py::tuple index_order(const py::handle& indptr, const py::handle& indices, std::size_t length);

/// The matrix in CSR (a BSR's blocks become entries, zeros included).
template <class T>
sparse::Csr<T> csr_of(const py::tuple& arrays);

/// The matrix in block CSR with b x b blocks; without `block_size`, its own blocks (a BSR's), or
/// for a CSR the block size of least fill (propose_block_size(), as `ziggurat spmm --block auto`).
/// The result has passed sparse::validate() (sparse::Validated).
template <class T>
sparse::Bsr<T> bsr_of(const py::tuple& arrays, std::optional<std::size_t> block_size);

}  // namespace ziggurat::python
