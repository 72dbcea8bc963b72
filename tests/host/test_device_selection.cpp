// Device selection syntax, and the choices made by a device's type, on hand-made device lists (no OpenCL needed).

#include <doctest/doctest.h>

#include "../support/util.hpp"
#include "ziggurat/automatic/heat.hpp"
#include "ziggurat/base/device.hpp"
#include "ziggurat/base/error.hpp"

using namespace ziggurat;

namespace {

DeviceInfo make(std::size_t index, std::string name, std::string platform, std::string vendor,
                DeviceType type, bool fp64) {
  DeviceInfo d;
  d.index = index;
  d.name = std::move(name);
  d.platform_name = std::move(platform);
  d.platform_vendor = std::move(vendor);
  d.type = type;
  d.fp64 = fp64;
  return d;
}

const std::vector<DeviceInfo> kDevices = {
    make(0, "NVIDIA H100 80GB HBM3", "NVIDIA CUDA", "NVIDIA Corporation", DeviceType::gpu, true),
    make(1, "pthread-haswell-AMD EPYC", "Portable Computing Language", "The pocl project", DeviceType::cpu, true),
    make(2, "gfx1100", "AMD Accelerated Parallel Processing", "Advanced Micro Devices, Inc.", DeviceType::gpu, true),
    make(3, "Intel(R) FPGA Emulation Device", "Intel(R) FPGA Emulation Platform for OpenCL(TM)", "Intel(R) Corporation",
         DeviceType::accelerator, false),
    make(4, "Intel(R) UHD Graphics 770", "Intel(R) OpenCL Graphics", "Intel(R) Corporation", DeviceType::gpu, false),
};

std::vector<std::size_t> indices(std::string_view spec, const std::vector<DeviceInfo>& all = kDevices) {
  std::vector<std::size_t> out;
  for (const auto& d : filter_devices(all, spec)) out.push_back(d.index);
  return out;
}

using List = std::vector<std::size_t>;

}  // namespace

TEST_CASE("device selection: types, fp64, numbers and text") {
  CHECK(indices("") == List{0, 1, 2, 3, 4});
  CHECK(indices("all") == List{0, 1, 2, 3, 4});
  CHECK(indices("gpu") == List{0, 2, 4});
  CHECK(indices("cpu") == List{1});
  CHECK(indices("accelerator") == List{3});
  CHECK(indices("fp64") == List{0, 1, 2});
  CHECK(indices("2") == List{2});
  CHECK(indices("002") == List{2});
  CHECK(indices("0") == List{0});
  CHECK(indices("9").empty());
  CHECK(indices("nvidia") == List{0});        // device name and platform
  CHECK(indices("NviDIA") == List{0});        // case-insensitive
  CHECK(indices("pocl") == List{1});          // platform vendor
  CHECK(indices("intel") == List{3, 4});
  CHECK(indices("platform:portable") == List{1});
  CHECK(indices("platform:advanced micro") == List{2});  // platform vendor
  CHECK(indices("name:h100") == List{0});
  CHECK(indices("name:cuda").empty());        // the platform's name is not the device's
  CHECK(indices("nosuchthing").empty());
}

TEST_CASE("device selection: terms combine with AND, spaces are trimmed") {
  CHECK(indices("gpu,fp64") == List{0, 2});
  CHECK(indices(" gpu , fp64 ") == List{0, 2});
  CHECK(indices("gpu,intel") == List{4});
  CHECK(indices("cpu,nvidia").empty());
  CHECK(indices("gpu,2") == List{2});
}

TEST_CASE("device selection: malformed specs are clear errors, with or without devices") {
  const std::vector<DeviceInfo> none;
  for (const auto* devices : {&kDevices, &none}) {
    CHECK_THROWS_WITH_AS(filter_devices(*devices, "gpu,,fp64"), doctest::Contains("empty term"), InvalidArgument);
    CHECK_THROWS_WITH_AS(filter_devices(*devices, ","), doctest::Contains("empty term"), InvalidArgument);
    CHECK_THROWS_WITH_AS(filter_devices(*devices, "vendor:nvidia"), doctest::Contains("unknown key 'vendor:'"),
                         InvalidArgument);
    CHECK_THROWS_WITH_AS(filter_devices(*devices, "name:"), doctest::Contains("nothing after the colon"),
                         InvalidArgument);
  }
}

TEST_CASE("device selection: the default is the first GPU, else the first CPU") {
  test::EnvGuard no_environment("ZIGGURAT_DEVICE", nullptr);
  CHECK(select_device(kDevices, "").index == 0);
  const std::vector<DeviceInfo> cpu_first = {kDevices[3], kDevices[1], kDevices[2]};
  CHECK(select_device(cpu_first, "").index == 2);
  const std::vector<DeviceInfo> no_gpu = {kDevices[3], kDevices[1]};
  CHECK(select_device(no_gpu, "").index == 1);
  const std::vector<DeviceInfo> only_accelerator = {kDevices[3]};
  CHECK(select_device(only_accelerator, "").index == 3);
  CHECK(select_device(kDevices, "cpu").index == 1);
  CHECK(select_device(kDevices, "gpu,fp64").index == 0);
}

TEST_CASE("device selection: ZIGGURAT_DEVICE applies when no spec is given") {
  test::EnvGuard environment("ZIGGURAT_DEVICE", "platform:portable");
  CHECK(select_device(kDevices, "").index == 1);
  CHECK(select_device(kDevices, "gpu").index == 0);  // an explicit spec wins
}

TEST_CASE("device selection: no match names the spec and lists the devices") {
  test::EnvGuard no_environment("ZIGGURAT_DEVICE", nullptr);
  CHECK_THROWS_WITH_AS(select_device(kDevices, "name:radeon"),
                       doctest::Contains("no OpenCL device matches the selection 'name:radeon'"), DeviceNotFound);
  CHECK_THROWS_WITH_AS(select_device(kDevices, "name:radeon"), doctest::Contains("#1 pthread-haswell-AMD EPYC"),
                       DeviceNotFound);
  CHECK_THROWS_WITH_AS(select_device({}, ""), doctest::Contains("no OpenCL device is installed"), DeviceNotFound);
  test::EnvGuard environment("ZIGGURAT_DEVICE", "accelerator,fp64");
  CHECK_THROWS_WITH_AS(select_device(kDevices, ""), doctest::Contains("ZIGGURAT_DEVICE 'accelerator,fp64'"),
                       DeviceNotFound);
}

TEST_CASE("device labels name the device and its platform") {
  CHECK(kDevices[0].label() == "NVIDIA H100 80GB HBM3 [NVIDIA CUDA]");
  CHECK(std::string(to_string(DeviceType::accelerator)) == "accelerator");
}

TEST_CASE("heat runs that name no depth take the tuned one on GPUs and accelerators, single steps elsewhere") {
  CHECK(default_blocking_depth(kDevices[0]) == 0);  // NVIDIA GPU
  CHECK(default_blocking_depth(kDevices[1]) == 1);  // PoCL CPU
  CHECK(default_blocking_depth(kDevices[2]) == 0);  // AMD GPU
  CHECK(default_blocking_depth(kDevices[3]) == 0);  // accelerator
}
