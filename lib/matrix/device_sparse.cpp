#include "ziggurat/matrix/device_sparse.hpp"

#include <algorithm>

#include "ziggurat/base/error.hpp"
#include "ziggurat/base/precision.hpp"

namespace ziggurat::sparse {

namespace {

// A device copy of `values`; an empty array still gets a one-element buffer (OpenCL has no
// empty buffers), which no kernel reads.
template <class V>
DeviceBuffer<V> upload_array(const Context& context, const std::vector<V>& values, const char* purpose) {
  DeviceBuffer<V> buffer(context, std::max<std::size_t>(values.size(), 1), purpose, CL_MEM_READ_ONLY);
  if (!values.empty()) ziggurat::detail::write_buffer(context.compute_queue(), buffer.get(), values.data(), values.size() * sizeof(V));
  return buffer;
}

}  // namespace

template <class T>
DeviceBsr<T>::DeviceBsr(const Context& context, std::size_t rows, std::size_t cols, std::size_t block_size,
                        std::size_t block_cols, const std::vector<Index>& row_ptr, const std::vector<Index>& col,
                        const std::vector<T>& values, RowStats stats)
    : rows_((require_precision<T>(context.device(), "a sparse matrix"), rows)),
      cols_(cols),
      block_size_(block_size),
      block_cols_(block_cols),
      stats_(stats),
      row_ptr_(upload_array(context, row_ptr, "block row pointers")),
      col_(upload_array(context, col, "block columns")),
      values_(upload_array(context, values, "matrix values")) {}

template <class T>
DeviceBsr<T>::DeviceBsr(const Context& context, const Bsr<T>& a) : DeviceBsr(context, (validate(a), a), Validated{}) {}

template <class T>
DeviceBsr<T>::DeviceBsr(const Context& context, const Bsr<T>& a, Validated)
    : DeviceBsr(context, a.rows, a.cols, a.block_size, a.block_cols, a.block_row_ptr, a.block_col, a.values,
                sparse::row_stats(a.block_row_ptr)) {}

template <class T>
DeviceBsr<T>::DeviceBsr(const Context& context, const Csr<T>& a)
    : DeviceBsr(context, (validate(a), a.rows), a.cols, 1, a.cols, a.row_ptr, a.col, a.values, sparse::row_stats(a.row_ptr)) {}

template <class T>
DeviceDia<T>::DeviceDia(const Context& context, const Dia<T>& a)
    : rows_((validate(a), require_precision<T>(context.device(), "a sparse matrix"), a.rows)),
      cols_(a.cols),
      symmetric_(a.symmetric),
      offsets_(upload_array(context, a.offsets, "diagonal offsets")),
      values_(upload_array(context, a.values, "diagonal values")) {}

template <class T>
DeviceVectors<T>::DeviceVectors(const Context& context, std::size_t rows, std::size_t k, std::size_t padded_rows)
    : context_(context), rows_(rows), k_(k) {
  if (k == 0) throw InvalidArgument("a set of vectors needs k >= 1");
  if (padded_rows == 0) padded_rows = rows;
  if (padded_rows < rows) throw InvalidArgument("padded_rows is below rows");
  require_precision<T>(context.device(), "a set of vectors");
  buffer_ = DeviceBuffer<T>(context, std::max<std::size_t>(padded_rows * k, 1), "vectors");
  const T zero = 0;
  check(context.compute_queue().enqueueFillBuffer(buffer_.get(), zero, 0, buffer_.bytes()), "clEnqueueFillBuffer",
        "zeroing vectors");
}

template <class T>
DeviceVectors<T>::DeviceVectors(const Context& context, T* values, std::size_t rows, std::size_t k, cl_mem_flags flags)
    : context_(context), rows_(rows), k_(k) {
  if (k == 0 || rows == 0) throw InvalidArgument("vectors over the caller's values need rows >= 1 and k >= 1");
  require_precision<T>(context.device(), "a set of vectors");
  buffer_ = DeviceBuffer<T>(context, values, rows * k, "vectors", flags);
}

template <class T>
void DeviceVectors<T>::show_to_host() const {
  cl::CommandQueue& queue = context_.compute_queue();
  ziggurat::detail::unmap_buffer(queue, buffer_.get(), ziggurat::detail::map_buffer(queue, buffer_.get(), buffer_.bytes()));
}

template <class T>
void DeviceVectors<T>::upload(const std::vector<T>& values) {
  upload(values.data(), values.size());
}

template <class T>
void DeviceVectors<T>::upload(const T* values, std::size_t count) {
  require_count(count, "given");
  if (count > 0) ziggurat::detail::write_buffer(context_.compute_queue(), buffer_.get(), values, count * sizeof(T));
}

template <class T>
std::vector<T> DeviceVectors<T>::download() const {
  std::vector<T> values(rows_ * k_);
  download(values.data(), values.size());
  return values;
}

template <class T>
void DeviceVectors<T>::download(T* values, std::size_t count) const {
  require_count(count, "asked for");
  if (count > 0) ziggurat::detail::read_buffer(context_.compute_queue(), buffer_.get(), values, count * sizeof(T));
}

template <class T>
void DeviceVectors<T>::require_count(std::size_t count, const char* what) const {
  if (count != rows_ * k_) {
    throw InvalidArgument("vectors: " + std::to_string(count) + " values " + what + ", " + std::to_string(rows_) + " x " +
                          std::to_string(k_) + " expected");
  }
}

template <class T>
DeviceVectors<T> input_vectors(const Context& context, const DeviceBsr<T>& a, std::size_t k) {
  return DeviceVectors<T>(context, a.cols(), k, a.block_cols() * a.block_size());
}

template <class T>
DeviceVectors<T> output_vectors(const Context& context, const DeviceBsr<T>& a, std::size_t k) {
  return DeviceVectors<T>(context, a.rows(), k, a.block_rows() * a.block_size());
}

#define ZIGGURAT_DEVICE_SPARSE(T)                                                             \
  template class DeviceBsr<T>;                                                                \
  template class DeviceDia<T>;                                                                \
  template class DeviceVectors<T>;                                                            \
  template DeviceVectors<T> input_vectors(const Context&, const DeviceBsr<T>&, std::size_t);  \
  template DeviceVectors<T> output_vectors(const Context&, const DeviceBsr<T>&, std::size_t);
ZIGGURAT_DEVICE_SPARSE(float)
ZIGGURAT_DEVICE_SPARSE(double)
#undef ZIGGURAT_DEVICE_SPARSE

}  // namespace ziggurat::sparse
