#pragma once
// What the peers of `ziggurat-bench` share (peers.cpp for spmm, solve_peers.cpp for solve): a
// peer's Python script (or the `ziggurat` tool under a launcher such as mpirun) run on data
// written into a scratch folder, and ViennaCL set up on ziggurat's own OpenCL context.

#include <cstddef>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ziggurat/base/context.hpp"
#include "ziggurat/matrix/sparse.hpp"

namespace ziggurat::cli {

/// Writes `bytes` bytes of `data` to `path`; IoError when it cannot (a full temporary folder).
void write_file(const std::filesystem::path& path, const void* data, std::size_t bytes);

/// The values as a raw array in the host's byte order (the scripts run on the same machine).
template <class U>
void write_array(const std::filesystem::path& path, const std::vector<U>& values) {
  write_file(path, values.data(), sizeof(U) * values.size());
}

/// A CSR matrix as the scripts read it: descriptor.json (`descriptor` with rows, cols, nnz and
/// dtype added) and the raw arrays row_ptr, col and values. Indices go out as they are (uint32);
/// below 2^31 they have int32's bytes.
template <class T>
void write_csr(const std::filesystem::path& folder, const sparse::Csr<T>& a, nlohmann::json descriptor) {
  descriptor["rows"] = a.rows;
  descriptor["cols"] = a.cols;
  descriptor["nnz"] = a.nonzeros();
  descriptor["dtype"] = sizeof(T) == 4 ? "float32" : "float64";
  const std::string text = descriptor.dump() + "\n";
  write_file(folder / "descriptor.json", text.data(), text.size());
  write_array(folder / "row_ptr", a.row_ptr);
  write_array(folder / "col", a.col);
  write_array(folder / "values", a.values);
}

/// Runs a peer's script, `script_name` beside the program (the build tree and the installed bench
/// component put it there), with the interpreter `python` in a fresh scratch folder that is
/// removed afterwards however it ends: write(folder) puts the input there, the script gets the
/// folder as its one argument, and read(folder, answer) is given the JSON of its last line of
/// output while the folder (and what the script wrote into it) still exists.
///
/// Returns "" once read has been called, else why there is no answer, as a sentence: the script
/// is not there, or it printed no JSON (no such interpreter, a crash: its exit status and last
/// line of stderr). Exceptions of write and read, and IoError, go to the caller.
std::string run_peer_script(const std::string& python, const std::string& script_name,
                            const std::function<void(const std::filesystem::path&)>& write,
                            const std::function<void(const std::filesystem::path&, const nlohmann::json&)>& read);

/// The same for the `ziggurat` tool of this installation (bin/ beside libexec/ziggurat/), started
/// by `launcher` (a command line such as "mpirun -np 2", inserted as it is) with the arguments
/// arguments(folder).
std::string run_tool(const std::string& launcher,
                     const std::function<std::vector<std::string>(const std::filesystem::path&)>& arguments,
                     const std::function<void(const std::filesystem::path&)>& write,
                     const std::function<void(const std::filesystem::path&, const nlohmann::json&)>& read);

/// "ViennaCL 1.7": the peer's name in tables, from the headers compiled in.
std::string viennacl_name();

/// ViennaCL's id of the OpenCL context of `context`, set up on first use with the context's
/// cl_context, device and compute queue (no second OpenCL context); pass it to
/// viennacl::ocl::switch_context. One table for the whole program, so that ViennaCL never gets
/// one id twice.
///
/// ViennaCL's current context is process-wide: not thread-safe, and the compute queue of
/// `context` must not be in use by another thread while ViennaCL runs. ViennaCL keeps a reference
/// to the OpenCL context and queue until the program exits (its context table has no removal).
long viennacl_context_id(const Context& context);

/// Why ViennaCL 1.7 cannot hold a rows x cols matrix with `nonzeros` stored values and k vectors
/// of `value_bytes` values, or "" when it can: it sizes OpenCL buffers with a 32-bit unsigned int,
/// so a buffer of 4 GiB or more would silently come out too small.
std::string viennacl_size_problem(std::size_t rows, std::size_t cols, std::size_t nonzeros, std::size_t k,
                                  std::size_t value_bytes);

}  // namespace ziggurat::cli
