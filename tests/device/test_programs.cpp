// Program building: build errors, the in-memory and on-disk caches, damaged and refused binaries,
// and kernel-source overrides, with the real binaries of every device.

#include <doctest/doctest.h>

#include <random>

#include "../support/devices.hpp"
#include "../support/util.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/base/memory.hpp"
#include "ziggurat/base/program.hpp"

using namespace ziggurat;
using test::for_each_device;
using test::TempDir;

namespace {

const std::string kOptions = BuildOptions().real_type<float>().str();

// Runs `fill` from the program and returns the value it wrote.
float run_fill(Context& context, const cl::Program& program, float value) {
  DeviceBuffer<float> out(context, 64);
  cl::Kernel fill = context.kernel(program, "fill");
  check(fill.setArg(0, out.get()), "clSetKernelArg");
  check(fill.setArg(1, value), "clSetKernelArg");
  check(fill.setArg(2, static_cast<cl_ulong>(64)), "clSetKernelArg");
  check(context.compute_queue().enqueueNDRangeKernel(fill, cl::NullRange, cl::NDRange(64)), "clEnqueueNDRangeKernel");
  std::vector<float> host(64);
  copy_to_host(context.compute_queue(), out, host.data());
  return host[63];
}

ProgramBuildStats build_once(const DeviceInfo& device, const std::filesystem::path& folder, float& written) {
  Context context(device, BinaryCache(folder));
  written = run_fill(context, context.program("stream", kOptions), 3.5f);
  return context.build_stats();
}

}  // namespace

TEST_CASE("a program that does not compile is a BuildError with the log and the source") {
  for_each_device([](Context& context) {
    try {
      context.program_from_source("broken example",
                                  "__kernel void k(__global float* x) {\n  x[0] = undefined_name;\n}\n", "-DX=1");
      FAIL("the build did not fail");
    } catch (const BuildError& error) {
      CHECK(error.program() == "broken example");
      CHECK(error.options() == "-DX=1");
      CHECK_FALSE(error.log().empty());
      const std::string text = error.what();
      CHECK(text.find("'broken example' failed to build for " + context.device().label()) != std::string::npos);
      CHECK(text.find("undefined_name") != std::string::npos);
    }
    CHECK_THROWS_WITH_AS(context.program_from_source("bad options", "__kernel void k() {}", "-cl-no-such-option"),
                         doctest::Contains("-cl-no-such-option"), BuildError);
  });
}

TEST_CASE("programs are built once per context, then loaded from the disk cache" * doctest::test_suite("oclgrind")) {
  for_each_device([](Context& shared) {
    TempDir dir;
    float written = 0;
    const auto cold = build_once(shared.device(), dir.path(), written);
    CHECK(cold.from_source == 1);
    CHECK(cold.from_disk == 0);
    CHECK(written == 3.5f);
    CHECK(test::count_files(dir.path(), ".bin") == 1);

    const auto warm = build_once(shared.device(), dir.path(), written);
    CHECK(warm.from_source == 0);
    CHECK(warm.from_disk == 1);
    CHECK(written == 3.5f);

    Context context(shared.device(), BinaryCache(dir.path()));
    const cl::Program& first = context.program("stream", kOptions);
    const cl::Program& again = context.program("stream", kOptions);
    CHECK(first() == again());
    CHECK(context.build_stats().from_memory == 1);
    context.program("stream", BuildOptions().real_type<float>().define("UNUSED", 1).str());
    CHECK(context.build_stats().from_source == 1);  // other options, other program
    CHECK(test::count_files(dir.path(), ".bin") == 2);
  });
}

TEST_CASE("a truncated cache entry is deleted and rebuilt, not trusted") {
  for_each_device([](Context& shared) {
    TempDir dir;
    float written = 0;
    build_once(shared.device(), dir.path(), written);
    const auto key = program_cache_key(shared.device(), kernel_source("stream"), kOptions);
    const auto entry = BinaryCache(dir.path()).entry_path(key);
    const std::string whole = test::read_bytes(entry);
    test::write_bytes(entry, whole.substr(0, whole.size() / 2));

    Context context(shared.device(), BinaryCache(dir.path()));
    CHECK(run_fill(context, context.program("stream", kOptions), 1.25f) == 1.25f);
    CHECK(context.build_stats().from_source == 1);
    CHECK(context.binary_cache().damaged_entries_deleted() == 1);
    CHECK(test::read_bytes(entry) == whole);  // rebuilt and stored again

    const auto again = build_once(shared.device(), dir.path(), written);
    CHECK(again.from_disk == 1);
  });
}

TEST_CASE("a cached binary the driver refuses is deleted and rebuilt from source") {
  for_each_device([](Context& shared) {
    TempDir dir;
    const auto key = program_cache_key(shared.device(), kernel_source("stream"), kOptions);
    BinaryCache planted(dir.path());
    BinaryCache::Binary garbage(4096);
    std::mt19937 generator(42);
    for (auto& byte : garbage) byte = static_cast<unsigned char>(generator());
    planted.store(key, garbage);

    Context context(shared.device(), BinaryCache(dir.path()));
    CHECK(run_fill(context, context.program("stream", kOptions), 2.0f) == 2.0f);
    CHECK(context.build_stats().refused_binaries == 1);
    CHECK(context.build_stats().from_source == 1);
    float written = 0;
    CHECK(build_once(shared.device(), dir.path(), written).from_disk == 1);  // replaced by a good one
  });
}

TEST_CASE("without a cache every context compiles from source and writes nothing") {
  for_each_device([](Context& shared) {
    for (int round = 0; round < 2; ++round) {
      Context context(shared.device(), BinaryCache::disabled());
      CHECK(run_fill(context, context.program("stream", kOptions), 4.0f) == 4.0f);
      CHECK(context.build_stats().from_source == 1);
    }
  });
}

TEST_CASE("ZIGGURAT_KERNEL_DIR sources are the ones built") {
  for_each_device([](Context& shared) {
    TempDir dir;
    std::string source = kernel_source("stream");  // the prologue, then the family's own file
    const std::string original = "out[i] = value;";
    REQUIRE(source.find(original) != std::string::npos);
    source.replace(source.find(original), original.size(), "out[i] = 2 * value;");
    test::write_bytes(dir / "prologue.cl", "");
    test::write_bytes(dir / "stream.cl", source);
    test::EnvGuard override_dir("ZIGGURAT_KERNEL_DIR", dir.path().c_str());
    Context context(shared.device(), BinaryCache::disabled());
    CHECK(run_fill(context, context.program("stream", kOptions), 3.0f) == 6.0f);
  });
}
