#pragma once
// The peers `ziggurat-bench spmm` sets beside ziggurat's sparse products (peers.cpp):
// ViennaCL's OpenCL CSR products on the same device, and cuSPARSE through CuPy on an NVIDIA GPU.

#include <cstddef>
#include <string>
#include <vector>

#include "ziggurat/base/context.hpp"
#include "ziggurat/matrix/sparse.hpp"

namespace ziggurat::cli {

/// One peer's product: median and best wall time of `repeat` timed runs after a warm-up, and the
/// largest relative error of its result against the reference given (so that the table never
/// compares against a wrong answer).
struct PeerTiming {
  std::string peer;     ///< "ViennaCL 1.7", "cuSPARSE (CuPy 13.3.0)"
  std::string product;  ///< "SpMV" (k = 1) or "CSR x dense" (k > 1)
  std::size_t k = 1;
  double median_s = 0, min_s = 0;
  /// max_i |y_i - ref_i| / max_i |ref_i| (normwise); NaN when the result holds a NaN.
  double max_error = 0;
  bool ran = false;
  std::string why_not;  ///< why it did not run, when !ran
  std::string device;   ///< where it ran, when ran: "NVIDIA H100 80GB HBM3, CUDA 12.4"
};

/// ViennaCL's CSR SpMV (k == 1: compressed_matrix * vector) or CSR x dense (k > 1:
/// prod(compressed_matrix, row-major matrix cols x k)) in ViennaCL's OpenCL backend, set up on the
/// cl_context, device and compute queue of `context` (no second OpenCL context). x is interleaved
/// cols x k (row-major), reference rows x k. Wall time around each product and a finish().
///
/// ran = false with why_not (never an exception) when ViennaCL cannot run it: a double product on a
/// device without fp64, a buffer of 4 GiB or more (ViennaCL 1.7 sizes buffers with 32-bit
/// unsigned int), an empty matrix, or any error ViennaCL throws. Throws InvalidArgument when x or
/// reference does not fit the matrix and k, or repeat is 0.
///
/// ViennaCL's current context is process-wide: not thread-safe, and the compute queue of `context`
/// must not be in use by another thread meanwhile. ViennaCL keeps a reference to the OpenCL
/// context and queue until the program exits (its context table has no removal).
template <class T>
PeerTiming time_viennacl(const Context& context, const sparse::Csr<T>& a, const std::vector<T>& x,
                         std::size_t k, const std::vector<T>& reference, std::size_t repeat);

/// cuSPARSE through CuPy: runs cusparse_spmm.py (beside the program) with the interpreter `python` on the
/// matrix (written into a temporary folder, deleted afterwards) and reads its JSON answer: CUDA
/// event times of A @ x (k == 1) or A @ X (k > 1, X C-ordered cols x k), and the max error of its
/// result against the reference. ran = false with why_not (never an exception) when it cannot run:
/// no such interpreter, no numpy or cupy, no CUDA device, indices beyond int32, the script missing
/// or failing. Throws InvalidArgument like time_viennacl.
template <class T>
PeerTiming time_cusparse(const std::string& python, const sparse::Csr<T>& a, const std::vector<T>& x,
                         std::size_t k, const std::vector<T>& reference, std::size_t repeat);

}  // namespace ziggurat::cli
