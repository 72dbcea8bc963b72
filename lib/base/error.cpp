#include "ziggurat/base/error.hpp"

#include <algorithm>
#include <iomanip>
#include <regex>
#include <set>
#include <sstream>
#include <vector>

namespace ziggurat {

namespace {

struct CodeInfo {
  cl_int code;
  const char* name;
};

constexpr CodeInfo kCodes[] = {
    {0, "CL_SUCCESS"},
    {-1, "CL_DEVICE_NOT_FOUND"},
    {-2, "CL_DEVICE_NOT_AVAILABLE"},
    {-3, "CL_COMPILER_NOT_AVAILABLE"},
    {-4, "CL_MEM_OBJECT_ALLOCATION_FAILURE"},
    {-5, "CL_OUT_OF_RESOURCES"},
    {-6, "CL_OUT_OF_HOST_MEMORY"},
    {-7, "CL_PROFILING_INFO_NOT_AVAILABLE"},
    {-8, "CL_MEM_COPY_OVERLAP"},
    {-9, "CL_IMAGE_FORMAT_MISMATCH"},
    {-10, "CL_IMAGE_FORMAT_NOT_SUPPORTED"},
    {-11, "CL_BUILD_PROGRAM_FAILURE"},
    {-12, "CL_MAP_FAILURE"},
    {-13, "CL_MISALIGNED_SUB_BUFFER_OFFSET"},
    {-14, "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST"},
    {-15, "CL_COMPILE_PROGRAM_FAILURE"},
    {-16, "CL_LINKER_NOT_AVAILABLE"},
    {-17, "CL_LINK_PROGRAM_FAILURE"},
    {-18, "CL_DEVICE_PARTITION_FAILED"},
    {-19, "CL_KERNEL_ARG_INFO_NOT_AVAILABLE"},
    {-30, "CL_INVALID_VALUE"},
    {-31, "CL_INVALID_DEVICE_TYPE"},
    {-32, "CL_INVALID_PLATFORM"},
    {-33, "CL_INVALID_DEVICE"},
    {-34, "CL_INVALID_CONTEXT"},
    {-35, "CL_INVALID_QUEUE_PROPERTIES"},
    {-36, "CL_INVALID_COMMAND_QUEUE"},
    {-37, "CL_INVALID_HOST_PTR"},
    {-38, "CL_INVALID_MEM_OBJECT"},
    {-39, "CL_INVALID_IMAGE_FORMAT_DESCRIPTOR"},
    {-40, "CL_INVALID_IMAGE_SIZE"},
    {-41, "CL_INVALID_SAMPLER"},
    {-42, "CL_INVALID_BINARY"},
    {-43, "CL_INVALID_BUILD_OPTIONS"},
    {-44, "CL_INVALID_PROGRAM"},
    {-45, "CL_INVALID_PROGRAM_EXECUTABLE"},
    {-46, "CL_INVALID_KERNEL_NAME"},
    {-47, "CL_INVALID_KERNEL_DEFINITION"},
    {-48, "CL_INVALID_KERNEL"},
    {-49, "CL_INVALID_ARG_INDEX"},
    {-50, "CL_INVALID_ARG_VALUE"},
    {-51, "CL_INVALID_ARG_SIZE"},
    {-52, "CL_INVALID_KERNEL_ARGS"},
    {-53, "CL_INVALID_WORK_DIMENSION"},
    {-54, "CL_INVALID_WORK_GROUP_SIZE"},
    {-55, "CL_INVALID_WORK_ITEM_SIZE"},
    {-56, "CL_INVALID_GLOBAL_OFFSET"},
    {-57, "CL_INVALID_EVENT_WAIT_LIST"},
    {-58, "CL_INVALID_EVENT"},
    {-59, "CL_INVALID_OPERATION"},
    {-60, "CL_INVALID_GL_OBJECT"},
    {-61, "CL_INVALID_BUFFER_SIZE"},
    {-62, "CL_INVALID_MIP_LEVEL"},
    {-63, "CL_INVALID_GLOBAL_WORK_SIZE"},
    {-64, "CL_INVALID_PROPERTY"},
    {-65, "CL_INVALID_IMAGE_DESCRIPTOR"},
    {-66, "CL_INVALID_COMPILER_OPTIONS"},
    {-67, "CL_INVALID_LINKER_OPTIONS"},
    {-68, "CL_INVALID_DEVICE_PARTITION_COUNT"},
    {-69, "CL_INVALID_PIPE_SIZE"},
    {-70, "CL_INVALID_DEVICE_QUEUE"},
    {-71, "CL_INVALID_SPEC_ID"},
    {-72, "CL_MAX_SIZE_RESTRICTION_EXCEEDED"},
    {-1001, "CL_PLATFORM_NOT_FOUND_KHR"},
};

// What the user can do about an error, where there is something better to say than "report it".
const char* advice(cl_int code) {
  switch (code) {
    case CL_MEM_OBJECT_ALLOCATION_FAILURE:
    case CL_INVALID_BUFFER_SIZE:
      return "the device has not enough memory for this problem: make the problem smaller, "
             "free device memory used by other programs, or choose a device with more memory";
    case CL_OUT_OF_RESOURCES:
      return "the device ran out of resources (memory, or a kernel faulted): make the problem "
             "smaller or try another device; if it persists, report it with the device name";
    case CL_OUT_OF_HOST_MEMORY:
      return "the host ran out of memory: make the problem smaller";
    case CL_DEVICE_NOT_AVAILABLE:
      return "the device is busy or switched off: check it with `ziggurat devices`";
    case CL_COMPILER_NOT_AVAILABLE:
      return "the OpenCL driver has no compiler: install the full driver";
    case CL_PLATFORM_NOT_FOUND_KHR:
      return "no OpenCL platform is installed: install a driver (e.g. pocl-opencl-icd)";
    default:
      return "this is an OpenCL runtime failure: check the driver with `ziggurat devices`, and "
             "report it with the device name and the command that failed";
  }
}

bool is_out_of_memory(cl_int code) {
  return code == CL_MEM_OBJECT_ALLOCATION_FAILURE || code == CL_INVALID_BUFFER_SIZE;
}

std::string opencl_message(cl_int code, const std::string& call, std::string_view context) {
  std::ostringstream text;
  text << call << " failed with " << cl_error_name(code) << " (" << code << ")";
  if (!context.empty()) text << " while " << context;
  text << ": " << advice(code);
  return text.str();
}

// The source lines around each line a compiler log points at ("<source>:12:5: error: ..."),
// numbered, so that the message shows the offending code (at most three places).
std::string source_excerpt(const std::string& log, const std::string& source) {
  std::vector<std::string> lines;
  std::istringstream in(source);
  for (std::string line; std::getline(in, line);) lines.push_back(line);

  std::set<std::size_t> shown;
  std::ostringstream text;
  const std::regex location(R"(:(\d+):\d+: (fatal )?error)");
  int places = 0;
  for (auto it = std::sregex_iterator(log.begin(), log.end(), location);
       it != std::sregex_iterator() && places < 3; ++it, ++places) {
    const std::size_t line = std::stoul((*it)[1].str());
    if (line == 0 || line > lines.size()) continue;
    const std::size_t first = line > 2 ? line - 2 : 1;
    const std::size_t last = std::min(lines.size(), line + 2);
    for (std::size_t n = first; n <= last; ++n) {
      if (!shown.insert(n).second) continue;
      text << (n == line ? ">" : " ") << std::setw(5) << n << " | " << lines[n - 1] << "\n";
    }
    text << "  ...\n";
  }
  return text.str();
}

std::string build_message(const std::string& program, const std::string& options,
                          const std::string& device, const std::string& log,
                          const std::string& source) {
  std::ostringstream text;
  text << "OpenCL program '" << program << "' failed to build for " << device
       << " with options '" << options << "'.\nBuild log:\n"
       << (log.empty() ? std::string("(the driver gave no log)") : log) << "\n";
  const std::string excerpt = source_excerpt(log, source);
  if (!excerpt.empty()) text << "Source:\n" << excerpt;
  text << "If this is a ziggurat kernel, report it with the device name; if the source is "
          "yours (or from ZIGGURAT_KERNEL_DIR), fix it at the lines the log names.";
  return text.str();
}

}  // namespace

std::string cl_error_name(cl_int code) {
  for (const auto& entry : kCodes) {
    if (entry.code == code) return entry.name;
  }
  return "unknown OpenCL error " + std::to_string(code);
}

OpenCLError::OpenCLError(cl_int code, std::string call, std::string_view context)
    : Error(opencl_message(code, call, context)), code_(code), call_(std::move(call)) {}

OpenCLError::OpenCLError(const std::string& message, cl_int code) : Error(message), code_(code) {}

OutOfDeviceMemory::OutOfDeviceMemory(const std::string& message)
    : OpenCLError(message, CL_MEM_OBJECT_ALLOCATION_FAILURE) {}

BuildError::BuildError(std::string program, std::string options, std::string device,
                       std::string log, std::string source)
    : Error(build_message(program, options, device, log, source)),
      program_(std::move(program)),
      options_(std::move(options)),
      log_(std::move(log)),
      source_(std::move(source)) {}

void check(cl_int code, const char* call, std::string_view context) {
  if (code == CL_SUCCESS) return;
  if (is_out_of_memory(code)) throw OutOfDeviceMemory(code, call, context);
  throw OpenCLError(code, call, context);
}

}  // namespace ziggurat
