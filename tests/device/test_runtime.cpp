// Contexts, queues, buffers, pinned memory, events and user kernels on every device.

#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>
#include <chrono>
#include <mutex>
#include <thread>
#include <type_traits>

#include "../support/devices.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/base/memory.hpp"
#include "ziggurat/base/program.hpp"

using namespace ziggurat;
using test::for_each_device;

TEST_CASE("device capabilities are complete and plausible" * doctest::test_suite("oclgrind")) {
  for_each_device([](Context& context) {
    const DeviceInfo& d = context.device();
    CHECK_FALSE(d.name.empty());
    CHECK_FALSE(d.platform_name.empty());
    CHECK_FALSE(d.driver_version.empty());
    CHECK(d.global_mem_bytes > 0);
    CHECK(d.max_alloc_bytes > 0);
    CHECK(d.max_alloc_bytes <= d.global_mem_bytes);
    CHECK(d.local_mem_bytes > 0);
    CHECK(d.max_work_group_size >= 1);
    CHECK(d.compute_units >= 1);
    CHECK(d.base_address_align_bytes >= sizeof(double));
    const std::size_t multiple = context.preferred_work_group_multiple();
    CHECK(multiple >= 1);
    CHECK(multiple <= d.max_work_group_size);
    if (d.type == DeviceType::cpu) CHECK(d.host_unified_memory);
  });
}

TEST_CASE("a context has three distinct queues that all work" * doctest::test_suite("oclgrind")) {
  for_each_device([](Context& context) {
    CHECK(context.compute_queue()() != context.upload_queue()());
    CHECK(context.upload_queue()() != context.download_queue()());
    std::vector<int> values(1000);
    std::iota(values.begin(), values.end(), 0);
    DeviceBuffer<int> buffer(context, values.size());
    copy_to_device(context.upload_queue(), values.data(), buffer);
    std::vector<int> back(values.size());
    copy_to_host(context.download_queue(), buffer, back.data());
    CHECK(back == values);
    CHECK_NOTHROW(context.finish());
  });
}

TEST_CASE("pinned host memory round-trips through the device" * doctest::test_suite("oclgrind")) {
  for_each_device([](Context& context) {
    const std::size_t n = 4099;
    PinnedHostBuffer<float> pinned(context, n);
    REQUIRE(pinned.data() != nullptr);
    for (std::size_t i = 0; i < n; ++i) pinned[i] = static_cast<float>(i) * 0.5f;
    DeviceBuffer<float> device(context, n);
    copy_to_device(context.upload_queue(), pinned.data(), device);

    PinnedHostBuffer<float> back(context, n);
    copy_to_host(context.download_queue(), device, back.data());
    CHECK(std::equal(pinned.begin(), pinned.end(), back.begin()));

    PinnedHostBuffer<float> moved(std::move(back));  // move construction keeps the mapping
    CHECK(back.data() == nullptr);
    CHECK(moved[n - 1] == static_cast<float>(n - 1) * 0.5f);
    PinnedHostBuffer<float> other(context, 1);
    other[0] = -1.0f;
    moved = std::move(other);  // move assignment releases the old mapping, takes the new one
    CHECK(moved.size() == 1);
    CHECK(moved[0] == -1.0f);
  });
}

TEST_CASE("large uploads, staged through pinned memory in chunks, arrive whole") {
  test::for_each_device([](Context& context) {
    // 20 MiB + 12 bytes: above the staging threshold, and not a whole number of chunks.
    const std::size_t count = (std::size_t{20} << 20) / sizeof(std::uint32_t) + 3;
    std::vector<std::uint32_t> values(count);
    std::iota(values.begin(), values.end(), 7u);
    DeviceBuffer<std::uint32_t> buffer(context, count);
    copy_to_device(context.compute_queue(), values.data(), buffer);
    std::vector<std::uint32_t> back(count, 0);
    copy_to_host(context.compute_queue(), buffer, back.data());
    CHECK(back == values);
  });
}

TEST_CASE("large uploads from two threads at once share a Context's staging buffers, and arrive whole") {
  test::for_each_device([](Context& context) {
    // Above the staging threshold: on GPUs both go through the Context's two pinned buffers.
    const std::size_t count = (std::size_t{18} << 20) / sizeof(std::uint32_t) + 5;
    std::vector<std::uint32_t> first(count), second(count);
    std::iota(first.begin(), first.end(), 11u);
    std::iota(second.rbegin(), second.rend(), 5u);
    DeviceBuffer<std::uint32_t> a(context, count), b(context, count);
    for (int round = 0; round < 2; ++round) {  // the second round reuses the buffers made by the first
      std::thread other([&] { copy_to_device(context.upload_queue(), second.data(), b); });
      copy_to_device(context.compute_queue(), first.data(), a);
      other.join();
      std::vector<std::uint32_t> back(count, 0);
      copy_to_host(context.compute_queue(), a, back.data());
      CHECK(back == first);
      copy_to_host(context.compute_queue(), b, back.data());
      CHECK(back == second);
    }
    Context{context.device()};  // another Context's staging comes and goes without touching this one's
    copy_to_device(context.compute_queue(), second.data(), a);
    std::vector<std::uint32_t> back(count, 0);
    copy_to_host(context.compute_queue(), a, back.data());
    CHECK(back == second);
  });
}

TEST_CASE("large writes at an offset arrive whole and leave the rest, and a copy between buffers is exact") {
  test::for_each_device([](Context& context) {
    // 24 MiB: on CPU devices a buffer of the library's huge-page memory, written through a map.
    const std::size_t count = (std::size_t{24} << 20) / sizeof(std::uint32_t), offset = 1001;
    std::vector<std::uint32_t> values(count);
    std::iota(values.begin(), values.end(), 3u);
    DeviceBuffer<std::uint32_t> buffer(context, count), copy(context, count);
    copy_to_device(context.compute_queue(), values.data(), buffer);
    const std::vector<std::uint32_t> part(count - 2 * offset, 0xdeadbeefu);
    detail::write_buffer(context.compute_queue(), buffer.get(), part.data(), part.size() * sizeof(std::uint32_t),
                         offset * sizeof(std::uint32_t));
    std::fill(values.begin() + offset, values.end() - offset, 0xdeadbeefu);
    detail::copy_buffer(context.compute_queue(), buffer.get(), copy.get(), buffer.bytes());
    std::vector<std::uint32_t> back(count, 0);
    copy_to_host(context.compute_queue(), copy, back.data());
    CHECK(back == values);
  });
}

TEST_CASE("a CPU device's large buffer of a released one's size takes its memory, and writes arrive whole there") {
  test::for_each_device([](Context& context) {
    if (context.device().type != DeviceType::cpu) return;  // a GPU's buffers are the driver's
    // 40 MiB: the library's huge-page memory, and past the size from which glibc always maps fresh
    // (zeroed) pages, so that only a kept block still holds the released buffer's values.
    const std::size_t count = (std::size_t{40} << 20) / sizeof(std::uint32_t);
    std::vector<std::uint32_t> values(count);
    std::iota(values.begin(), values.end(), 7u);
    {
      DeviceBuffer<std::uint32_t> released(context, count);
      copy_to_device(context.compute_queue(), values.data(), released);
    }
    context.compute_queue().finish();
    DeviceBuffer<std::uint32_t> again(context, count);
    std::vector<std::uint32_t> back(count, 0);
    copy_to_host(context.compute_queue(), again, back.data());
    CHECK(back == values);  // the released block, not fresh pages (a buffer's first contents are undefined)
    std::reverse(values.begin(), values.end());
    copy_to_device(context.compute_queue(), values.data(), again);
    copy_to_host(context.compute_queue(), again, back.data());
    CHECK(back == values);
  });
}

TEST_CASE("buffers refuse empty and impossible sizes with clear errors") {
  for_each_device([](Context& context) {
    CHECK_THROWS_WITH_AS(DeviceBuffer<float>(context, 0, "test grid"), doctest::Contains("empty test grid"),
                         InvalidArgument);
    const std::size_t too_many = context.device().max_alloc_bytes / sizeof(float) + 1;
    CHECK_THROWS_WITH_AS(DeviceBuffer<float>(context, too_many, "test grid"),
                         doctest::Contains("largest allocation"), OutOfDeviceMemory);
    CHECK_THROWS_AS(DeviceBuffer<double>(context, SIZE_MAX / 4), InvalidArgument);
  });
}

TEST_CASE("a user kernel from source runs, and profiling events time it" * doctest::test_suite("oclgrind")) {
  const std::string source = R"(
    __kernel void axpy(const float a, __global const float* x, __global float* y) {
      const size_t i = get_global_id(0);
      y[i] = a * x[i] + y[i];
    })";
  for_each_device([&](Context& context) {
    const std::size_t n = 512;
    std::vector<float> x(n), y(n);
    for (std::size_t i = 0; i < n; ++i) {
      x[i] = static_cast<float>(i);
      y[i] = 1.0f;
    }
    DeviceBuffer<float> dx(context, n), dy(context, n);
    copy_to_device(context.upload_queue(), x.data(), dx);
    copy_to_device(context.upload_queue(), y.data(), dy);
    cl::Kernel axpy = context.kernel(context.program_from_source("axpy test", source), "axpy");
    check(axpy.setArg(0, 2.0f), "clSetKernelArg");
    check(axpy.setArg(1, dx.get()), "clSetKernelArg");
    check(axpy.setArg(2, dy.get()), "clSetKernelArg");
    cl::Event event;
    check(context.compute_queue().enqueueNDRangeKernel(axpy, cl::NullRange, cl::NDRange(n), cl::NullRange, nullptr,
                                                       &event),
          "clEnqueueNDRangeKernel");
    copy_to_host(context.compute_queue(), dy, y.data());
    for (std::size_t i = 0; i < n; ++i) CHECK(y[i] == 2.0f * static_cast<float>(i) + 1.0f);
    if (context.device().profiling) {
      const double seconds = profiled_seconds(event, event);
      CHECK(seconds > 0.0);
      CHECK(seconds < 10.0);
    }
  });
}

TEST_CASE("a Context is a handle: copies share programs, and probing is thread-safe") {
  static_assert(!std::is_copy_constructible_v<DeviceBuffer<float>>, "a copy would share device memory");
  for_each_device([](Context& shared) {
    Context context(shared.device(), BinaryCache::disabled());
    const Context copy = context;
    const cl::Program& built = context.program("stream", BuildOptions().real_type<double>().str());
    CHECK(copy.program("stream", BuildOptions().real_type<double>().str())() == built());
    CHECK(copy.build_stats().from_memory == 1);

    Context fresh(shared.device(), BinaryCache::disabled());
    std::size_t multiples[4] = {};
    std::vector<std::thread> threads;
    for (auto& multiple : multiples) threads.emplace_back([&fresh, &multiple] { multiple = fresh.preferred_work_group_multiple(); });
    for (auto& thread : threads) thread.join();
    for (const auto multiple : multiples) CHECK(multiple == shared.preferred_work_group_multiple());
    CHECK(fresh.build_stats().from_source == 1);
  });
}

TEST_CASE("threads build different programs at once, and each program once") {
  for_each_device([](Context& shared) {
    Context context(shared.device(), BinaryCache::disabled());
    constexpr int kThreads = 8, kPrograms = 4;
    cl_program handles[kThreads][kPrograms] = {};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&context, &handles, t] {
        for (int p = 0; p < kPrograms; ++p) {
          const int which = (p + t) % kPrograms;  // every thread in another order
          handles[t][which] = context.program("stream", BuildOptions().real_type<float>().define("VARIANT", which).str())();
        }
      });
    }
    for (auto& thread : threads) thread.join();
    for (int t = 0; t < kThreads; ++t) {
      for (int p = 0; p < kPrograms; ++p) CHECK(handles[t][p] == handles[0][p]);
    }
    for (int p = 1; p < kPrograms; ++p) CHECK(handles[0][p] != handles[0][0]);
    const ProgramBuildStats stats = context.build_stats();
    CHECK(stats.from_source == kPrograms);
    CHECK(stats.from_memory == kThreads * kPrograms - kPrograms);
    // A long build holds up no other program: one that is built already comes back while it runs.
    // (A source of its own each run would be slower still, but PoCL 3.1 leaks what it compiles
    // whenever its kernel cache misses, which the sanitizer build reports.)
    std::string slow;
    for (int i = 0; i < 60; ++i) {
      slow += "__kernel void k" + std::to_string(i) + "(__global float* x) { const size_t g = get_global_id(0); " +
              "for (int j = 0; j < " + std::to_string(i + 2) + "; ++j) x[g] = x[g] * x[g] + (float)j; }\n";
    }
    using Clock = std::chrono::steady_clock;
    Clock::duration slow_build{};
    std::thread building([&] {
      const auto start = Clock::now();
      context.program_from_source("slow", slow, "");
      slow_build = Clock::now() - start;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // the slow build has begun
    const auto asked = Clock::now();
    const cl::Program& ready = context.program("stream", BuildOptions().real_type<float>().define("VARIANT", 0).str());
    const Clock::duration lookup = Clock::now() - asked;
    building.join();
    CHECK(ready() == handles[0][0]);
    const double slow_ms = std::chrono::duration<double, std::milli>(slow_build).count();
    const double lookup_ms = std::chrono::duration<double, std::milli>(lookup).count();
    CAPTURE(slow_ms);
    CAPTURE(lookup_ms);
    if (slow_ms >= 10) {
      CHECK(lookup_ms < slow_ms / 3);
    } else {  // the driver had the program cached: too quick to tell waiting from not
      MESSAGE("the slow program built in " << slow_ms << " ms: too quick to time a lookup beside it");
    }
    // A program that fails to build fails for every thread that asked, and is tried again later.
    std::vector<std::thread> failing;
    int errors = 0;
    std::mutex mutex;
    for (int t = 0; t < 4; ++t) {
      failing.emplace_back([&] {
        try {
          context.program_from_source("broken", "__kernel void broken( {", "");
        } catch (const BuildError&) {
          std::lock_guard<std::mutex> lock(mutex);
          ++errors;
        }
      });
    }
    for (auto& thread : failing) thread.join();
    CHECK(errors == 4);
    CHECK_THROWS_AS(context.program_from_source("broken", "__kernel void broken( {", ""), BuildError);
  });
}

TEST_CASE("asking for a kernel that is not there is a clear error") {
  for_each_device([](Context& context) {
    const cl::Program& program = context.program("stream", BuildOptions().real_type<float>().str());
    CHECK_THROWS_WITH_AS(context.kernel(program, "no_such_kernel"),
                         doctest::Contains("CL_INVALID_KERNEL_NAME"), OpenCLError);
  });
}
