// Device profiles: JSON round trips, refusal of corrupt or stale files, and the model constants
// derived from them (no device needed: the profiles here are made by hand).

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "../support/util.hpp"
#include "ziggurat/calibration.hpp"
#include "ziggurat/device.hpp"
#include "ziggurat/error.hpp"
#include "ziggurat/version.hpp"

using namespace ziggurat;

namespace {

TransferFit fit(double latency, double bandwidth) {
  TransferFit f;
  f.latency_s = latency;
  f.bytes_per_s = bandwidth;
  f.max_relative_error = 0.02;
  f.samples = {{4096, latency + 4096 / bandwidth, latency + 4000 / bandwidth},
               {1 << 20, latency + (1 << 20) / bandwidth, latency + (1 << 20) / bandwidth}};
  return f;
}

DeviceInfo device() {
  DeviceInfo d;
  d.name = "Test GPU";
  d.vendor = "Test Vendor";
  d.platform_name = "Test Platform";
  d.driver_version = "1.2.3";
  return d;
}

DeviceProfile profile() {
  DeviceProfile p;
  p.library_version = version;
  p.platform = "Test Platform";
  p.device = "Test GPU";
  p.vendor = "Test Vendor";
  p.driver = "1.2.3";
  p.date = "2026-11-21T00:00:00Z";
  p.timer = "profiling events";
  p.calibration_s = 0.8;
  p.upload_pinned = fit(8e-6, 50e9);
  p.download_pinned = fit(9e-6, 40e9);
  p.upload_pageable = fit(10e-6, 12e9);
  p.download_pageable = fit(11e-6, 14e9);
  p.upload_rect = fit(12e-6, 20e9);
  p.download_rect = fit(13e-6, 25e9);
  // Contiguous transfers: 1 ms each alone; with all three running the upload takes 1.05 ms.
  p.overlap = {1e-3, 1e-3, 1e-3, 1.1e-3, 1.05e-3, 1.05e-3, 1e-3, 1.1e-3, 0.95, 0.97};
  // Rect transfers: upload 1, download 1.2, kernels 2 ms; all three 3.6 ms: efficiency
  // (4.2 - 3.6) / 2.2 < 0.5, no overlap; up and down 1.5 ms: duplex efficiency 0.7.
  p.rect_overlap = {1e-3, 1.2e-3, 2e-3, 3.6e-3, 1.5e-3, 1.5e-3, 1.5e-3, 2e-3, 0.6 / 2.2, 0.7};
  p.launch_pipelined_s = 4e-6;
  p.launch_blocking_s = 10e-6;
  p.copy_kernel_bytes_per_s = 3e12;
  p.copy_driver_bytes_per_s = 4e12;
  p.kernels = {{"heat2d_step", 2, 4, {8192, 8192}, 0.004}, {"heat2d_step", 2, 8, {4096, 4096}, 0.005}};
  p.numstreams = 270336;
  p.axpy_wave_s = 2e-6;
  p.axpy_call_s = 5e-6;
  return p;
}

void check_refused(const std::string& text, const std::string& expected) {
  CAPTURE(expected);
  CHECK_THROWS_WITH_AS(profile_from_json(text), doctest::Contains(expected.c_str()), IoError);
}

}  // namespace

TEST_CASE("a profile survives the round trip through JSON") {
  const std::string text = profile_to_json(profile());
  const DeviceProfile back = profile_from_json(text);
  CHECK(profile_to_json(back) == text);
  CHECK(back.upload_pinned.bytes_per_s == 50e9);
  CHECK(back.kernels.size() == 2);
  CHECK(back.numstreams == 270336);
  CHECK(back.overlap.transfers_overlap_compute());
  CHECK_FALSE(back.rect_overlap.transfers_overlap_compute());
}

TEST_CASE("corrupt profiles are refused, naming the problem") {
  const nlohmann::json good = nlohmann::json::parse(profile_to_json(profile()));
  const auto edited = [&](const std::function<void(nlohmann::json&)>& edit) {
    nlohmann::json j = good;
    edit(j);
    return j.dump();
  };
  check_refused("", "not valid JSON");
  check_refused(profile_to_json(profile()).substr(0, 200), "not valid JSON");
  check_refused("[1, 2]", "is not an object");
  check_refused(edited([](auto& j) { j["format"] = 0; }), "format 0 is not this library's");
  check_refused(edited([](auto& j) { j.erase("numstreams"); }), "'numstreams' is missing");
  check_refused(edited([](auto& j) { j["numstreams"] = 0.5; }), "'numstreams' = 0.5 is not a whole number");
  check_refused(edited([](auto& j) { j["numstreams"] = -3; }), "is not a whole number");
  check_refused(edited([](auto& j) { j["kernels"][0]["dims"] = 0; }), "'dims' = 0 is not a whole number from 1 to 3");
  check_refused(edited([](auto& j) { j["calibration_s"] = 0; }), "not a possible measurement");
  check_refused(edited([](auto& j) { j["launch_pipelined_s"] = -1e-6; }), "not a possible measurement");
  check_refused(edited([](auto& j) { j["launch_pipelined_s"] = "fast"; }), "is not a number");
  check_refused(edited([](auto& j) { j["upload_pinned"]["bytes_per_s"] = nullptr; }), "upload_pinned: 'bytes_per_s' is not a number");
  check_refused(edited([](auto& j) { j["upload_pinned"]["samples"] = nlohmann::json::array(); }), "at least two samples");
  check_refused(edited([](auto& j) { j["overlap"]["efficiency"] = 1.5; }), "above 1");
  check_refused(edited([](auto& j) { j["kernels"] = nlohmann::json::array(); }), "no kernel rate");
  check_refused(edited([](auto& j) { j["kernels"][0]["extents"] = {-5}; }), "node counts");
  check_refused(edited([](auto& j) { j["host_unified_memory"] = 1; }), "not true or false");
}

TEST_CASE("the cache holds profiles per device; corrupt or stale ones are not used") {
  test::TempDir dir;
  test::EnvGuard cache("ZIGGURAT_CACHE_DIR", dir.path().c_str()), on("ZIGGURAT_CACHE", nullptr);
  std::string why;
  CHECK_FALSE(load_cached_profile(device(), &why).has_value());
  CHECK(why.empty());  // simply nothing there

  CHECK(store_profile(device(), profile()).empty());
  CHECK(profile_path(device()).parent_path() == dir.path() / "profiles");
  REQUIRE(load_cached_profile(device()).has_value());
  CHECK(profile_to_json(*load_cached_profile(device())) == profile_to_json(profile()));

  DeviceInfo updated = device();
  updated.driver_version = "1.2.4";  // another file, none yet
  CHECK_FALSE(load_cached_profile(updated).has_value());
  test::write_bytes(profile_path(updated), profile_to_json(profile()));  // a file for the old driver under the new name
  CHECK_FALSE(load_cached_profile(updated, &why).has_value());
  CHECK(why.find("stale: the driver is '1.2.4' now") != std::string::npos);

  DeviceProfile older = profile();
  older.library_version = "0.0.1";
  CHECK(store_profile(device(), older).empty());
  CHECK_FALSE(load_cached_profile(device(), &why).has_value());
  CHECK(why.find("the library version") != std::string::npos);

  test::write_bytes(profile_path(device()), "{\"format\": 1, \"truncated");
  CHECK_FALSE(load_cached_profile(device(), &why).has_value());
  CHECK(why.find("unusable") != std::string::npos);

  test::EnvGuard off("ZIGGURAT_CACHE", "off");
  CHECK(profile_path(device()).empty());
  CHECK(store_profile(device(), profile()) == "caching is off");
}

TEST_CASE("model constants from a profile") {
  const DeviceProfile p = profile();
  const model::DeviceConstants k = p.constants(2, 4);
  CHECK(k.upload.latency_ns == doctest::Approx(8000));
  CHECK(k.upload.ns_per_value == doctest::Approx(4.0 / 50));
  CHECK(k.download.ns_per_value == doctest::Approx(4.0 / 40));
  CHECK(k.rect_upload.ns_per_value == doctest::Approx(4.0 / 20));
  CHECK(k.tau_a_ns == 0.004);
  CHECK(k.launch_ns == doctest::Approx(4000));
  CHECK(k.engines.overlap_compute);
  CHECK(k.engines.duplex);
  CHECK(k.engines.upload_slowdown == doctest::Approx(1.05));
  CHECK(k.engines.download_slowdown == doctest::Approx(1));
  CHECK(k.engines.compute_slowdown == doctest::Approx(1.1));
  CHECK_FALSE(k.rect_engines.overlap_compute);
  CHECK(k.rect_engines.duplex);
  CHECK(k.rect_engines.upload_slowdown == doctest::Approx(1.5));
  CHECK(k.rect_engines.download_slowdown == doctest::Approx(1.25));
  CHECK(p.constants(2, 8).tau_a_ns == 0.005);
  CHECK(p.constants(2, 8).upload.ns_per_value == doctest::Approx(8.0 / 50));
  CHECK_THROWS_WITH_AS(p.constants(3, 4), doctest::Contains("no measured compute rate for a 3D float stencil"),
                       UnsupportedFeature);
  CHECK(p.constants(3, 4, 0.02).tau_a_ns == 0.02);
  CHECK(p.copy_bytes_per_s() == 4e12);

  DeviceProfile without_clblast = p;
  without_clblast.numstreams = 0;  // CLBlast could not run: a valid profile, without these constants
  CHECK(profile_from_json(profile_to_json(without_clblast)).numstreams == 0);
  CHECK_THROWS_WITH_AS(without_clblast.long_vector_constants(4, 1e6), doctest::Contains("no long-vector constants"),
                       UnsupportedFeature);
  const model::LongVectorConstants c = p.long_vector_constants(4, 1e6);
  CHECK(c.numstreams == 270336);
  CHECK(c.t_kernel_ns == doctest::Approx(5000));
  CHECK(c.t_saxpy_ns == doctest::Approx(2000));
  CHECK(c.transfer_ns == doctest::Approx((8e-6 + 4e6 / 50e9 + 9e-6 + 4e6 / 40e9) * 1e9));
}
