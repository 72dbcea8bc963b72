// What the peers of `ziggurat-bench` share: their Python scripts run as child processes on data in
// a scratch folder, and ViennaCL's OpenCL context table.

#include "peer_support.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <sstream>
#include <system_error>
#include <utility>

#include "program_main.hpp"
#include "ziggurat/base/error.hpp"

// ViennaCL after ziggurat's headers: ziggurat/opencl.hpp sets the OpenCL API level (1.2) that
// CL/cl.h, which ViennaCL includes too, must see. VIENNACL_WITH_OPENCL comes from the build
// (bench/CMakeLists.txt), the same in every file, as ViennaCL's inline functions need.
#include <viennacl/ocl/backend.hpp>
#include <viennacl/version.hpp>

namespace ziggurat::cli {

namespace {

// A fresh folder under the system's temporary folder, removed with its files however the run ends.
class ScratchFolder {
 public:
  ScratchFolder() {
    static std::atomic<unsigned> counter{0};
    const auto root = std::filesystem::temp_directory_path();
    do {
      path_ = root / ("ziggurat-peer-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    } while (!std::filesystem::create_directory(path_));
  }
  ~ScratchFolder() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchFolder(const ScratchFolder&) = delete;
  ScratchFolder& operator=(const ScratchFolder&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

std::string shell_quoted(const std::string& text) {
  std::string quoted = "'";
  for (const char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string last_line(const std::string& text) {
  std::istringstream lines(text);
  std::string line, last;
  while (std::getline(lines, line))
    if (!line.empty()) last = line;
  return last;
}

struct ChildResult {
  std::string out;  ///< its standard output
  int status = 0;   ///< exit status, or -1 when it did not exit normally
};

// Runs `command` through the shell and returns its standard output.
ChildResult run_command(const std::string& command) {
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) throw std::system_error(errno, std::generic_category(), "could not start a shell");
  ChildResult result;
  char buffer[4096];
  for (std::size_t got; (got = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) result.out.append(buffer, got);
  const int wait_status = pclose(pipe);
  result.status = wait_status != -1 && WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : -1;
  return result;
}

std::string file_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

void write_file(const std::filesystem::path& path, const void* data, std::size_t bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
  out.close();
  if (!out) throw IoError("could not write " + path.string() + " (is the temporary folder full?)");
}

namespace {

// Runs command(folder) through the shell in a fresh scratch folder that write(folder) filled
// first, and gives read() the JSON of its output (all of it, else its last line: scripts may
// print before it); "" or why there is none.
std::string run_in_scratch(const std::string& who,
                           const std::function<std::string(const std::filesystem::path&)>& command,
                           const std::function<void(const std::filesystem::path&)>& write,
                           const std::function<void(const std::filesystem::path&, const nlohmann::json&)>& read) {
  const ScratchFolder folder;
  write(folder.path());
  const auto error_file = folder.path() / "stderr.txt";
  const ChildResult child = run_command(command(folder.path()) + " 2>" + shell_quoted(error_file.string()));
  nlohmann::json answer = nlohmann::json::parse(child.out, nullptr, false);
  try {
    if (answer.is_discarded()) answer = nlohmann::json::parse(last_line(child.out));
  } catch (const nlohmann::json::exception&) {
    const std::string errors = file_text(error_file);
    return who + " gave no answer (exit status " + std::to_string(child.status) + ")" +
           (errors.empty() ? "" : ": " + last_line(errors));
  }
  read(folder.path(), answer);
  return {};
}

}  // namespace

std::string run_peer_script(const std::string& python, const std::string& script_name,
                            const std::function<void(const std::filesystem::path&)>& write,
                            const std::function<void(const std::filesystem::path&, const nlohmann::json&)>& read) {
  const std::filesystem::path script = executable_folder() / script_name;
  if (!std::filesystem::is_regular_file(script))
    return "the script " + script.string() + " is not there (install the bench component whole)";
  return run_in_scratch(
      python,
      [&](const std::filesystem::path& folder) {
        return shell_quoted(python) + " " + shell_quoted(script.string()) + " " + shell_quoted(folder.string());
      },
      write, read);
}

std::string run_tool(const std::string& launcher,
                     const std::function<std::vector<std::string>(const std::filesystem::path&)>& arguments,
                     const std::function<void(const std::filesystem::path&)>& write,
                     const std::function<void(const std::filesystem::path&, const nlohmann::json&)>& read) {
  const std::filesystem::path tool = (executable_folder() / ZIGGURAT_TOOL_FROM_BENCH).lexically_normal();
  if (!std::filesystem::is_regular_file(tool)) return "the ziggurat tool is not at " + tool.string();
  return run_in_scratch(
      launcher,
      [&](const std::filesystem::path& folder) {
        std::string command = launcher + " " + shell_quoted(tool.string());
        for (const std::string& argument : arguments(folder)) command += " " + shell_quoted(argument);
        return command;
      },
      write, read);
}

std::string viennacl_name() {
  return "ViennaCL " + std::to_string(VIENNACL_MAJOR_VERSION) + "." + std::to_string(VIENNACL_MINOR_VERSION);
}

// ViennaCL keeps its OpenCL contexts in a process-wide table under a long id, and ignores (with a
// warning) setup_context on an id already set up, so each OpenCL context gets an id of its own;
// id 0, ViennaCL's default (which would create a context of its own), is never used.
//
// Sharing the handles (ViennaCL 1.7.1, viennacl/ocl/context.hpp): init_existing() retains the
// cl_context (clRetainContext) and add_queue() the queue (one clRetainCommandQueue net), and
// ViennaCL releases each once when its table is destroyed at exit. So ViennaCL never releases
// what is ziggurat's, and ziggurat releasing its Context leaves ViennaCL no dangling handle: the
// OpenCL context just lives on until exit (which also keeps its address, the key here, unique).
long viennacl_context_id(const Context& context) {
  static std::map<cl_context, long> ids;
  const cl_context handle = context.cl_context()();
  const auto [entry, added] = ids.try_emplace(handle, static_cast<long>(ids.size()) + 1);
  if (added)
    viennacl::ocl::setup_context(entry->second, handle, context.device().device(), context.compute_queue()());
  return entry->second;
}

std::string viennacl_size_problem(std::size_t rows, std::size_t cols, std::size_t nonzeros, std::size_t k,
                                  std::size_t value_bytes) {
  const std::pair<const char*, std::size_t> buffers[] = {
      {"values", nonzeros * value_bytes}, {"column indices", nonzeros * sizeof(cl_uint)},
      {"x", cols * k * value_bytes},      {"y", rows * k * value_bytes}};
  for (const auto& [name, bytes] : buffers)
    if (bytes > std::numeric_limits<unsigned int>::max())
      return std::string("its ") + name + " buffer would take " + std::to_string(bytes) +
             " bytes; ViennaCL 1.7 sizes OpenCL buffers with a 32-bit unsigned int";
  return {};
}

}  // namespace ziggurat::cli
