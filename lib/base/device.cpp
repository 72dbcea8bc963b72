#include "ziggurat/base/device.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <sstream>

#include "ziggurat/base/error.hpp"

namespace ziggurat {

namespace {

// Drivers pad some strings with spaces or a trailing NUL.
std::string trimmed(std::string text) {
  const auto junk = [](unsigned char c) { return c == '\0' || std::isspace(c); };
  while (!text.empty() && junk(text.back())) text.pop_back();
  std::size_t start = 0;
  while (start < text.size() && junk(text[start])) ++start;
  return text.substr(start);
}

std::string lowercase(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool contains(std::string_view haystack, std::string_view needle) {
  return lowercase(haystack).find(lowercase(needle)) != std::string::npos;
}

template <cl_device_info Name>
auto device_info(const cl::Device& device) {
  cl_int err = CL_SUCCESS;
  auto value = device.getInfo<Name>(&err);
  check(err, "clGetDeviceInfo", "reading device properties");
  return value;
}

template <cl_platform_info Name>
std::string platform_info(const cl::Platform& platform) {
  cl_int err = CL_SUCCESS;
  auto value = platform.getInfo<Name>(&err);
  check(err, "clGetPlatformInfo", "reading platform properties");
  return trimmed(value);
}

DeviceType device_type(cl_device_type type) {
  if (type & CL_DEVICE_TYPE_GPU) return DeviceType::gpu;
  if (type & CL_DEVICE_TYPE_CPU) return DeviceType::cpu;
  if (type & CL_DEVICE_TYPE_ACCELERATOR) return DeviceType::accelerator;
  return DeviceType::other;
}

// cl_nv_device_attribute_query's CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV and _MINOR_NV, as 10 major +
// minor; 0 when the driver does not answer.
unsigned nvidia_compute_capability(const cl::Device& device) {
  constexpr cl_device_info kMajor = 0x4000, kMinor = 0x4001;
  cl_uint major = 0, minor = 0;
  if (clGetDeviceInfo(device(), kMajor, sizeof major, &major, nullptr) != CL_SUCCESS ||
      clGetDeviceInfo(device(), kMinor, sizeof minor, &minor, nullptr) != CL_SUCCESS)
    return 0;
  return 10 * major + minor;
}

DeviceInfo describe(const cl::Platform& platform, const cl::Device& device, std::size_t index) {
  DeviceInfo info;
  info.index = index;
  info.device = device;
  info.platform_name = platform_info<CL_PLATFORM_NAME>(platform);
  info.platform_vendor = platform_info<CL_PLATFORM_VENDOR>(platform);
  info.platform_version = platform_info<CL_PLATFORM_VERSION>(platform);
  info.name = trimmed(device_info<CL_DEVICE_NAME>(device));
  info.vendor = trimmed(device_info<CL_DEVICE_VENDOR>(device));
  info.version = trimmed(device_info<CL_DEVICE_VERSION>(device));
  info.driver_version = trimmed(device_info<CL_DRIVER_VERSION>(device));
  info.opencl_c_version = trimmed(device_info<CL_DEVICE_OPENCL_C_VERSION>(device));
  info.type = device_type(device_info<CL_DEVICE_TYPE>(device));
  const std::string extensions = device_info<CL_DEVICE_EXTENSIONS>(device);
  info.fp64 = extensions.find("cl_khr_fp64") != std::string::npos;
  info.host_unified_memory = device_info<CL_DEVICE_HOST_UNIFIED_MEMORY>(device) == CL_TRUE;
  info.profiling = (device_info<CL_DEVICE_QUEUE_PROPERTIES>(device) & CL_QUEUE_PROFILING_ENABLE) != 0;
  info.global_mem_bytes = device_info<CL_DEVICE_GLOBAL_MEM_SIZE>(device);
  info.max_alloc_bytes = device_info<CL_DEVICE_MAX_MEM_ALLOC_SIZE>(device);
  info.local_mem_bytes = device_info<CL_DEVICE_LOCAL_MEM_SIZE>(device);
  info.max_work_group_size = device_info<CL_DEVICE_MAX_WORK_GROUP_SIZE>(device);
  info.base_address_align_bytes = device_info<CL_DEVICE_MEM_BASE_ADDR_ALIGN>(device) / 8;
  info.compute_units = device_info<CL_DEVICE_MAX_COMPUTE_UNITS>(device);
  if (extensions.find("cl_nv_device_attribute_query") != std::string::npos)
    info.nvidia_compute_capability = nvidia_compute_capability(device);
  return info;
}

bool is_number(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(),
                                      [](unsigned char c) { return std::isdigit(c); });
}

// One term of a selection spec, parsed.
struct Term {
  enum Kind { all, type, fp64, index, platform, name, any_text } kind;
  std::string text;  // the device type, index or text to look for
};

Term parse_term(const std::string& term, std::string_view spec) {
  const std::string word = lowercase(term);
  if (word == "all") return {Term::all, {}};
  if (word == "gpu" || word == "cpu" || word == "accelerator") return {Term::type, word};
  if (word == "fp64") return {Term::fp64, {}};
  if (is_number(word)) return {Term::index, word.substr(std::min(word.find_first_not_of('0'), word.size() - 1))};

  const auto colon = term.find(':');
  if (colon == std::string::npos) return {Term::any_text, term};
  const std::string key = lowercase(term.substr(0, colon));
  const std::string text = term.substr(colon + 1);
  if (key != "platform" && key != "name") {
    throw InvalidArgument("device selection '" + std::string(spec) + "': unknown key '" + key +
                          ":'; use platform:TEXT, name:TEXT, gpu, cpu, accelerator, fp64, all "
                          "or a device number (see `ziggurat devices`)");
  }
  if (text.empty()) {
    throw InvalidArgument("device selection '" + std::string(spec) + "': '" + term +
                          "' has nothing after the colon; write e.g. name:H100");
  }
  return {key == "platform" ? Term::platform : Term::name, text};
}

std::vector<Term> parse_spec(std::string_view spec) {
  std::vector<Term> terms;
  const std::string text(spec);
  std::size_t start = 0;
  while (true) {
    const auto comma = text.find(',', start);
    const auto length = comma == std::string::npos ? std::string::npos : comma - start;
    const std::string term = trimmed(text.substr(start, length));
    if (term.empty()) {
      throw InvalidArgument("device selection '" + text + "' has an empty term; separate terms "
                            "with single commas, e.g. 'gpu,fp64'");
    }
    terms.push_back(parse_term(term, spec));
    if (comma == std::string::npos) return terms;
    start = comma + 1;
  }
}

bool matches(const DeviceInfo& device, const Term& term) {
  switch (term.kind) {
    case Term::all: return true;
    case Term::type: return term.text == to_string(device.type);
    case Term::fp64: return device.fp64;
    case Term::index: return std::to_string(device.index) == term.text;
    case Term::platform:
      return contains(device.platform_name, term.text) || contains(device.platform_vendor, term.text);
    case Term::name: return contains(device.name, term.text);
    case Term::any_text:
      return contains(device.name, term.text) || contains(device.platform_name, term.text) ||
             contains(device.platform_vendor, term.text);
  }
  return false;
}

std::string device_list(const std::vector<DeviceInfo>& all) {
  if (all.empty()) {
    return "no OpenCL device is installed: install a driver (scripts/setup.sh installs PoCL, a CPU "
           "device) and check with `clinfo -l`";
  }
  std::ostringstream text;
  text << "the devices are:";
  for (const auto& device : all) {
    text << "\n  #" << device.index << " " << device.label() << " (" << to_string(device.type) << ")";
  }
  return text.str();
}

const char* environment_spec() {
  const char* spec = std::getenv("ZIGGURAT_DEVICE");
  return spec != nullptr && *spec != '\0' ? spec : nullptr;
}

}  // namespace

const char* to_string(DeviceType type) {
  switch (type) {
    case DeviceType::gpu: return "gpu";
    case DeviceType::cpu: return "cpu";
    case DeviceType::accelerator: return "accelerator";
    case DeviceType::other: break;
  }
  return "other";
}

std::string DeviceInfo::label() const { return name + " [" + platform_name + "]"; }

std::vector<DeviceInfo> list_devices(std::vector<std::string>* problems) {
  std::vector<cl::Platform> platforms;
  const cl_int err = cl::Platform::get(&platforms);
  if (err == CL_PLATFORM_NOT_FOUND_KHR) return {};
  check(err, "clGetPlatformIDs", "listing OpenCL platforms");

  std::vector<DeviceInfo> devices;
  for (std::size_t p = 0; p < platforms.size(); ++p) {
    try {
      std::vector<cl::Device> platform_devices;
      const cl_int status = platforms[p].getDevices(CL_DEVICE_TYPE_ALL, &platform_devices);
      if (status == CL_DEVICE_NOT_FOUND) continue;
      check(status, "clGetDeviceIDs", "listing the devices of an OpenCL platform");
      std::vector<DeviceInfo> found;
      for (const auto& device : platform_devices) found.push_back(describe(platforms[p], device, devices.size() + found.size()));
      devices.insert(devices.end(), found.begin(), found.end());
    } catch (const OpenCLError& error) {
      if (problems != nullptr) problems->push_back("OpenCL platform " + std::to_string(p) + " left out: " + error.what());
    }
  }
  return devices;
}

std::vector<DeviceInfo> filter_devices(const std::vector<DeviceInfo>& all, std::string_view spec) {
  if (trimmed(std::string(spec)).empty()) return all;
  const auto terms = parse_spec(spec);
  std::vector<DeviceInfo> selected;
  for (const auto& device : all) {
    const auto match = [&](const Term& term) { return matches(device, term); };
    if (std::all_of(terms.begin(), terms.end(), match)) selected.push_back(device);
  }
  return selected;
}

DeviceInfo select_device(const std::vector<DeviceInfo>& all, std::string_view spec) {
  std::string source = "selection";
  if (spec.empty() && environment_spec() != nullptr) {
    spec = environment_spec();
    source = "ZIGGURAT_DEVICE";
  }
  if (spec.empty()) {
    for (const auto* type : {"gpu", "cpu"}) {
      const auto found = filter_devices(all, type);
      if (!found.empty()) return found.front();
    }
    if (!all.empty()) return all.front();
    throw DeviceNotFound(device_list(all));
  }
  const auto found = filter_devices(all, spec);
  if (found.empty()) {
    throw DeviceNotFound("no OpenCL device matches the " + source + " '" + std::string(spec) +
                         "'; " + device_list(all));
  }
  return found.front();
}

DeviceInfo select_device(std::string_view spec) { return select_device(list_devices(), spec); }

std::vector<DeviceInfo> devices_from_environment() {
  const char* spec = environment_spec();
  return filter_devices(list_devices(), spec != nullptr ? spec : "");
}

}  // namespace ziggurat
