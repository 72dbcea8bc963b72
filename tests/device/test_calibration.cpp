// Calibration on every device: a complete, plausible profile, cached and re-measured as it should.

#include <doctest/doctest.h>

#include <algorithm>

#include <chrono>
#include <filesystem>

#include <cmath>

#include "../support/devices.hpp"
#include "../support/fixed_profile.hpp"
#include "../support/util.hpp"
#include "ziggurat/base/memory.hpp"
#include "ziggurat/base/program.hpp"
#include "ziggurat/solver/in_device_heat.hpp"
#include "ziggurat/tuning/model_constants.hpp"
#include "ziggurat/tuning/poisson_planner.hpp"
#include "ziggurat/tuning/profile_store.hpp"

using namespace ziggurat;
using test::for_each_device;

namespace {

// A fit of a discrete device's pinned transfers must describe them: a latency and, for the
// megabyte transfers the pyramid makes, times within a quarter of the fit. (Zero-copy devices
// such as PoCL copy within host memory, where caches bend the line, so only plausibility there.)
void check_fit(const TransferFit& fit, const char* what, bool straight_line) {
  CAPTURE(what);
  CHECK(fit.bytes_per_s > 1e7);    // faster than 10 MB/s
  CHECK(fit.bytes_per_s < 1e13);   // slower than 10 TB/s
  CHECK(fit.latency_s < 0.01);
  CHECK(fit.samples.size() >= 4);
  if (straight_line) {
    CHECK(fit.latency_s > 0);
    CHECK(fit.max_relative_error < 0.25);
  }
}

}  // namespace

TEST_CASE("calibration yields a complete, plausible profile, cached, and re-measured when the file is damaged") {
  for_each_device([](Context& context) {
    test::TempDir dir;
    test::EnvGuard cache("ZIGGURAT_CACHE_DIR", dir.path().c_str()), on("ZIGGURAT_CACHE", nullptr);
    // The cache holds a damaged profile (a truncated file) to begin with: the one calibration of
    // this test measures in its place, and replaces it. (A cache without a file is measured as
    // well: cli_cache's processes calibrating at once on an empty cache, test_profile.cpp.)
    const auto damaged = profile_path(context.device());
    std::filesystem::create_directories(damaged.parent_path());
    test::write_bytes(damaged, profile_to_json(test::fixed_profile()).substr(0, 100));  // truncated
    REQUIRE_FALSE(load_cached_profile(context.device()).has_value());
    ProfileOrigin origin;
    const DeviceProfile p = load_or_calibrate(context, false, &origin);
    CHECK_FALSE(origin.from_cache);
    CHECK(origin.remeasured_because.find("unusable") != std::string::npos);
    CHECK(origin.path == damaged);
    CHECK(origin.cache_write_error.empty());

    const DeviceInfo& d = context.device();
    CHECK(p.device == d.name);
    CHECK(p.driver == d.driver_version);
    CHECK(p.host_unified_memory == d.host_unified_memory);
    // The phases account for the calibration's time (all but the set-up between them).
    double phases = 0;
    for (const auto& phase : p.phases) phases += phase.seconds;
    CHECK(p.phases.size() >= 8);
    CHECK(phases <= p.calibration_s);
    CHECK(phases >= 0.8 * p.calibration_s);
    const bool discrete = !d.host_unified_memory;
    check_fit(p.upload_pinned, "upload pinned", discrete);
    check_fit(p.download_pinned, "download pinned", discrete);
    check_fit(p.upload_pageable, "upload pageable", false);  // staged by the driver: not a line
    check_fit(p.download_pageable, "download pageable", false);
    check_fit(p.upload_rect, "upload rect", discrete);
    check_fit(p.download_rect, "download rect", discrete);
    for (const auto* o : {&p.overlap, &p.rect_overlap}) {
      // Running beside the other engines never makes an engine much faster than alone.
      CHECK(o->upload_together_s >= 0.5 * o->upload_s);
      CHECK(o->download_together_s >= 0.5 * o->download_s);
      CHECK(o->compute_together_s >= 0.5 * o->compute_s);
    }
    // The overlap measurement's lone upload is one of the sweep's transfers, as the fit describes it
    // (the smallest from 4 MiB that takes 2 ms, else the largest).
    if (discrete) {
      CHECK(std::any_of(p.upload_pinned.samples.begin(), p.upload_pinned.samples.end(), [&](const TimingSample& s) {
        return std::abs(p.overlap.upload_s - p.upload_pinned.seconds(s.bytes)) < 0.5 * p.overlap.upload_s;
      }));
    }
    // Issued together, the three never take much longer than one after another.
    CHECK(p.overlap.all_three_s < 1.5 * (p.overlap.upload_s + p.overlap.download_s + p.overlap.compute_s));
    CHECK(p.launch_pipelined_s < 1e-2);
    CHECK(p.launch_pipelined_s <= 1.5 * p.launch_blocking_s);  // back to back is never dearer than waited for
    if (d.profiling) CHECK(p.copy_bytes_per_s() > 1e8);
    REQUIRE(!p.kernels.empty());
    // The heat step in 1D, 2D and 3D and the Jacobi sweep, each in float (and double).
    CHECK(p.kernels.size() == (d.fp64 ? 8u : 4u));
    for (const auto& k : p.kernels) {
      CHECK((k.kernel == "heat" + std::to_string(k.dims) + "d_box" || (k.kernel == kJacobiKernel && k.dims == 3)));
      CHECK(k.extents.size() == k.dims);
      CHECK_NOTHROW(model::heat_constants(p, k.dims, k.value_bytes));
      CHECK(k.ns_per_node < 1000);
    }
    CHECK(p.numstreams > 0);  // CLBlast runs on every device tested here
    CHECK(p.axpy_wave_s > 0);
    CHECK(p.axpy_call_s > 0);
    CHECK(model::heat_constants(p, 2, 4).tau_a_ns == p.kernels.front().ns_per_node);
    CHECK(poisson_constants(p, 4).tau_a_ns == p.jacobi_tau_a_ns(4));
    CHECK(poisson_constants(p, 4).tau_a_ns != model::heat_constants(p, 3, 4).tau_a_ns);
    // tau_a describes the kernel: an in-device run of the same kernel on another grid (a quarter of
    // the size, so caches may help a little) takes about tau_a a node and step.
    {
      const auto& rate = p.kernels.front();
      const std::vector<std::size_t> extents{rate.extents[0] / 2, rate.extents[1] / 2};
      InDeviceHeat<float> heat(context, Grid<float>(extents, 0.5f), 0.2);
      heat.advance(2);
      const StepTiming t = heat.advance(20);
      const double seconds = t.device_seconds >= 0 ? t.device_seconds : t.wall_seconds;
      const double ns_per_node = seconds * 1e9 / (20.0 * static_cast<double>((extents[0] - 2) * (extents[1] - 2)));
      CAPTURE(ns_per_node);
      CHECK(ns_per_node > 0.2 * rate.ns_per_node);
      CHECK(ns_per_node < 5 * rate.ns_per_node);
    }
    MESSAGE(d.label() << ": calibrated in " << p.calibration_s << " s; pinned upload "
                      << p.upload_pinned.bytes_per_s * 1e-9 << " GB/s, tau_a " << p.kernels.front().ns_per_node
                      << " ns/node, numstreams " << p.numstreams);

    ProfileOrigin second;
    const auto start = std::chrono::steady_clock::now();
    const DeviceProfile cached = load_or_calibrate(context, false, &second);
    const double load_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    CHECK(second.from_cache);
    MESSAGE(d.label() << ": cached profile loaded in " << load_ms << " ms");
    CHECK(profile_to_json(cached) == profile_to_json(p));  // the fresh measurement replaced the damaged file
  });
}

TEST_CASE("the calibration kernels compute what they claim (the Oclgrind subset)" * doctest::test_suite("oclgrind")) {
  for_each_device([](Context& context) {
    cl::Kernel empty = context.kernel(context.program("stream", BuildOptions().real_type<float>().str()), "empty");
    check(context.compute_queue().enqueueNDRangeKernel(empty, cl::NullRange, cl::NDRange(1), cl::NDRange(1)),
          "clEnqueueNDRangeKernel");

    const std::vector<float> values = {1, 2, 3, 4, 5, 6, 7};
    DeviceBuffer<float> in(context, values.size()), copied(context, values.size());
    copy_to_device(context.upload_queue(), values.data(), in);
    cl::Kernel copy = context.kernel(context.program("stream", BuildOptions().real_type<float>().str()), "copy");
    check(copy.setArg(0, in.get()), "clSetKernelArg");
    check(copy.setArg(1, copied.get()), "clSetKernelArg");
    check(copy.setArg(2, static_cast<cl_ulong>(values.size())), "clSetKernelArg");
    check(context.compute_queue().enqueueNDRangeKernel(copy, cl::NullRange, cl::NDRange(8), cl::NDRange(8)),
          "clEnqueueNDRangeKernel");
    std::vector<float> back(values.size());
    copy_to_host(context.compute_queue(), copied, back.data());
    CHECK(back == values);
  });
}
