// Device profiles and the profile store: validation, JSON round trips, refusal of corrupt or stale
// files, autotuning records written by several processes at once, and the model constants derived
// from profiles (no device needed: the profiles here are made by hand).

#include <doctest/doctest.h>

#include <functional>
#include <nlohmann/json.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <limits>

#include "../support/test_profiles.hpp"
#include "../support/util.hpp"
#include "tuning/recorded_timings.hpp"
#include "tuning/timing.hpp"
#include "ziggurat/base/device.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/base/version.hpp"
#include "ziggurat/tuning/model_constants.hpp"
#include "ziggurat/tuning/profile_store.hpp"

using namespace ziggurat;

namespace {

void check_refused(const std::string& text, const std::string& expected) {
  CAPTURE(expected);
  CHECK_THROWS_WITH_AS(profile_from_json(text), doctest::Contains(expected.c_str()), IoError);
}

}  // namespace

TEST_CASE("a profile survives the round trip through JSON") {
  const std::string text = profile_to_json(test::test_profile());
  const DeviceProfile back = profile_from_json(text);
  CHECK(profile_to_json(back) == text);
  CHECK(back.upload_pinned.bytes_per_s == 50e9);
  CHECK(back.kernels.size() == 2);
  CHECK(back.numstreams == 270336);
  CHECK(back.overlap.transfers_overlap_compute());
  CHECK_FALSE(back.rect_overlap.transfers_overlap_compute());
}

TEST_CASE("corrupt profiles are refused, naming the problem") {
  const nlohmann::json good = nlohmann::json::parse(profile_to_json(test::test_profile()));
  const auto edited = [&](const std::function<void(nlohmann::json&)>& edit) {
    nlohmann::json j = good;
    edit(j);
    return j.dump();
  };
  check_refused("", "not valid JSON");
  check_refused(profile_to_json(test::test_profile()).substr(0, 200), "not valid JSON");
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
  // A profile without kernel rates is partial, and valid (test_partial_profile.cpp); one rate twice is not.
  check_refused(edited([](auto& j) { j["kernels"].push_back(j["kernels"][0]); }), "'heat2d_box' in 4-byte values is given twice");
  check_refused(edited([](auto& j) { j["kernels"][0]["extents"] = {-5}; }), "node counts");
  check_refused(edited([](auto& j) { j["host_unified_memory"] = 1; }), "not true or false");
}

TEST_CASE("the cache holds profiles per device; corrupt or stale ones are not used") {
  test::TempDir dir;
  test::EnvGuard cache("ZIGGURAT_CACHE_DIR", dir.path().c_str()), on("ZIGGURAT_CACHE", nullptr);
  std::string why;
  CHECK_FALSE(load_cached_profile(test::test_device(), &why).has_value());
  CHECK(why.empty());  // simply nothing there

  CHECK(store_profile(test::test_device(), test::test_profile()).empty());
  CHECK(profile_path(test::test_device()).parent_path() == dir.path() / "profiles");
  REQUIRE(load_cached_profile(test::test_device()).has_value());
  CHECK(profile_to_json(*load_cached_profile(test::test_device())) == profile_to_json(test::test_profile()));

  DeviceInfo updated = test::test_device();
  updated.driver_version = "1.2.4";  // another file, none yet
  CHECK_FALSE(load_cached_profile(updated).has_value());
  test::write_bytes(profile_path(updated), profile_to_json(test::test_profile()));  // a file for the old driver under the new name
  CHECK_FALSE(load_cached_profile(updated, &why).has_value());
  CHECK(why.find("stale: the driver is '1.2.4' now") != std::string::npos);

  DeviceProfile older = test::test_profile();
  older.library_version = "0.0.1";
  CHECK(store_profile(test::test_device(), older).empty());
  CHECK_FALSE(load_cached_profile(test::test_device(), &why).has_value());
  CHECK(why.find("the library version") != std::string::npos);

  test::write_bytes(profile_path(test::test_device()), "{\"format\": 1, \"truncated");
  CHECK_FALSE(load_cached_profile(test::test_device(), &why).has_value());
  CHECK(why.find("unusable") != std::string::npos);

  test::EnvGuard off("ZIGGURAT_CACHE", "off");
  CHECK(profile_path(test::test_device()).empty());
  CHECK(store_profile(test::test_device(), test::test_profile()) == "caching is off");
}

TEST_CASE("model constants from a profile") {
  const DeviceProfile p = test::test_profile();
  const model::DeviceConstants k = model::heat_constants(p, 2, 4);
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
  CHECK(model::heat_constants(p, 2, 8).tau_a_ns == 0.005);
  CHECK(model::heat_constants(p, 2, 8).upload.ns_per_value == doctest::Approx(8.0 / 50));
  CHECK(model::heat_constants(p, 2, 4, std::nullopt, false).upload.ns_per_value == doctest::Approx(4.0 / 12));  // pageable
  CHECK_THROWS_WITH_AS(model::heat_constants(p, 3, 4), doctest::Contains("no measured compute rate for a 3D float stencil"),
                       UnsupportedFeature);
  CHECK_FALSE(p.tau_a_ns(3, 4).has_value());
  CHECK(model::heat_constants(p, 3, 4, 0.02).tau_a_ns == 0.02);
  CHECK(p.copy_bytes_per_s() == 4e12);

  DeviceProfile without_clblast = p;
  without_clblast.numstreams = 0;  // CLBlast could not run: a valid profile, without these constants
  CHECK(profile_from_json(profile_to_json(without_clblast)).numstreams == 0);
  CHECK_THROWS_WITH_AS(model::long_vector_constants(without_clblast, 4, 1e6), doctest::Contains("no long-vector constants"),
                       UnsupportedFeature);
  const model::LongVectorConstants c = model::long_vector_constants(p, 4, 1e6);
  CHECK(c.numstreams == 270336);
  CHECK(c.t_kernel_ns == doctest::Approx(3000));  // the call less its one wave
  CHECK(c.t0_ns == doctest::Approx(5000));        // the restore: one whole call
  CHECK(c.t_add_ns == doctest::Approx(3000));     // an addition: 1.5 axpy waves
  CHECK(c.t_saxpy_ns == doctest::Approx(2000));
  CHECK(c.transfer_ns == doctest::Approx((8e-6 + 4e6 / 50e9 + 9e-6 + 4e6 / 40e9) * 1e9));
}

TEST_CASE("validation is a function: it refuses, naming the field, what no measurement gives") {
  CHECK_NOTHROW(validate(test::test_profile()));
  const auto refused = [](const std::function<void(DeviceProfile&)>& edit, const std::string& expected) {
    DeviceProfile p = test::test_profile();
    edit(p);
    CAPTURE(expected);
    CHECK_THROWS_WITH_AS(validate(p), doctest::Contains(expected.c_str()), InvalidArgument);
  };
  refused([](DeviceProfile& p) { p.device.clear(); }, "'device' is empty");
  refused([](DeviceProfile& p) { p.calibration_s = 0; }, "'calibration_s' = 0.0 is not a possible measurement");
  refused([](DeviceProfile& p) { p.launch_blocking_s = std::numeric_limits<double>::quiet_NaN(); }, "'launch_blocking_s'");
  refused([](DeviceProfile& p) { p.phases.push_back({"overlap", -1}); }, "phase 'overlap': 'seconds' = -1.0");
  refused([](DeviceProfile& p) { p.download_rect.bytes_per_s = 0; }, ".download_rect: 'bytes_per_s' = 0.0");
  refused([](DeviceProfile& p) { p.upload_pageable.samples.resize(1); }, ".upload_pageable: a transfer fit needs at least two samples");
  refused([](DeviceProfile& p) { p.upload_pinned.samples[1].min_s = -1e-6; }, "sample: 'min_s'");
  refused([](DeviceProfile& p) { p.rect_overlap.duplex_efficiency = 1.01; }, ".rect_overlap: 'duplex_efficiency' is above 1");
  refused([](DeviceProfile& p) { p.overlap.compute_together_s = 0; }, ".overlap: 'compute_together_s' = 0.0");
  refused([](DeviceProfile& p) { p.copy_driver_bytes_per_s = -1; }, "'copy_driver_bytes_per_s' = -1.0");
  refused([](DeviceProfile& p) { p.kernels.push_back(p.kernels[1]); }, "'heat2d_box' in 8-byte values is given twice");
  refused([](DeviceProfile& p) { p.kernels[1].dims = 4; }, "'dims' = 4 is not a whole number from 1 to 3");
  refused([](DeviceProfile& p) { p.kernels[0].value_bytes = 2; }, "'value_bytes' = 2 is neither 4 (float) nor 8 (double)");
  refused([](DeviceProfile& p) { p.kernels[0].ns_per_node = 0; }, "'ns_per_node' = 0.0");
  refused([](DeviceProfile& p) { p.axpy_wave_s = -2e-6; }, "'axpy_wave_s'");
  // Finite and positive is not enough: values beyond any device leave the cost models no plan.
  refused([](DeviceProfile& p) { p.launch_blocking_s = 1e308; }, "'launch_blocking_s' = 1e+308 is not a possible measurement (above 0 to 3600.0 s)");
  refused([](DeviceProfile& p) { p.upload_pinned.latency_s = 7200; }, ".upload_pinned: 'latency_s' = 7200.0");
  refused([](DeviceProfile& p) { p.download_pinned.bytes_per_s = 1e300; }, ".download_pinned: 'bytes_per_s' = 1e+300");
  refused([](DeviceProfile& p) { p.upload_rect.bytes_per_s = 10; }, ".upload_rect: 'bytes_per_s' = 10.0");
  refused([](DeviceProfile& p) { p.kernels[0].ns_per_node = 1e-300; }, "'ns_per_node' = 1e-300");
  refused([](DeviceProfile& p) { p.kernels[0].ns_per_node = 1e300; }, "'ns_per_node' = 1e+300");
  refused([](DeviceProfile& p) { p.upload_pinned.samples[0].bytes = 1e300; }, "sample: 'bytes' = 1e+300");
  refused([](DeviceProfile& p) { p.numstreams = std::size_t(1) << 50; }, "'numstreams' = 1125899906842624");
  // What a device without timers or CLBlast gives is a valid profile.
  DeviceProfile host_clock = test::test_profile();
  host_clock.copy_kernel_bytes_per_s = host_clock.copy_driver_bytes_per_s = 0;
  host_clock.numstreams = 0;
  host_clock.axpy_wave_s = host_clock.axpy_call_s = 0;
  CHECK_NOTHROW(validate(host_clock));
}

TEST_CASE("autotuning records: one file each, kept per device, driver and library version") {
  test::TempDir dir;
  test::EnvGuard cache("ZIGGURAT_CACHE_DIR", dir.path().c_str()), on("ZIGGURAT_CACHE", nullptr);
  const TuningRecord record{"bsr f32 b4 k8 len3 even size8", {{"multirow/1/v8", 2e-4}, {"group", 3e-4}}};
  CHECK_FALSE(load_tuning_record(test::test_device(), record.key).has_value());
  CHECK(store_tuning_record(test::test_device(), record).empty());
  const auto path = tuning_record_path(test::test_device(), record.key);
  CHECK(path.parent_path().parent_path() == dir.path() / "tuning");
  const auto back = load_tuning_record(test::test_device(), record.key);
  REQUIRE(back.has_value());
  CHECK(back->key == record.key);
  CHECK(back->seconds == record.seconds);
  CHECK_FALSE(load_cached_profile(test::test_device()).has_value());  // a record is not a profile

  DeviceInfo updated = test::test_device();
  updated.driver_version = "1.2.4";
  CHECK_FALSE(load_tuning_record(updated, record.key).has_value());  // another folder
  std::filesystem::create_directories(tuning_record_path(updated, record.key).parent_path());
  std::filesystem::copy_file(path, tuning_record_path(updated, record.key));
  CHECK_FALSE(load_tuning_record(updated, record.key).has_value());  // a file for the old driver: stale
  test::write_bytes(path, test::read_bytes(path).substr(0, 40));     // damaged
  CHECK_FALSE(load_tuning_record(test::test_device(), record.key).has_value());
  CHECK(list_tuning_records(test::test_device()).empty());

  CHECK_THROWS_WITH_AS(store_tuning_record(test::test_device(), {"empty", {}}), doctest::Contains("has no timings"), InvalidArgument);
  CHECK_THROWS_WITH_AS(store_tuning_record(test::test_device(), {"k", {{"row", -1.0}}}), doctest::Contains("which no measurement gives"),
                       InvalidArgument);
  test::EnvGuard off("ZIGGURAT_CACHE", "off");
  CHECK(tuning_record_path(test::test_device(), record.key).empty());
  CHECK(store_tuning_record(test::test_device(), record) == "caching is off");
}

TEST_CASE("a tuner whose timer gives zero keeps its choice and records nothing; a measured record serves next time") {
  test::TempDir dir;
  test::EnvGuard cache("ZIGGURAT_CACHE_DIR", dir.path().c_str()), on("ZIGGURAT_CACHE", nullptr);
  const auto parse = [](const std::string&) {};
  int measured = 0;
  bool now = false;
  const detail::Timings zero{{"a", 0.0}, {"b", 2e-4}}, fine{{"a", 1e-4}, {"b", 2e-4}};
  // A run on a loaded host once timed a difference of two wall times as zero: the store refuses
  // it, and the user's run must go on (CI's cli_poisson failed there).
  CHECK(detail::recorded_or_measured(test::test_device(), "zero", parse, [&] { return ++measured, zero; }, now) == zero);
  CHECK(now);
  CHECK_FALSE(load_tuning_record(test::test_device(), "zero").has_value());
  CHECK(detail::recorded_or_measured(test::test_device(), "zero", parse, [&] { return ++measured, fine; }, now) == fine);
  CHECK(detail::recorded_or_measured(test::test_device(), "zero", parse, [&] { return ++measured, zero; }, now) == fine);
  CHECK_FALSE(now);
  CHECK(measured == 2);
}

TEST_CASE("processes that store autotuning records at the same time lose none of them") {
  test::TempDir dir;
  test::EnvGuard cache("ZIGGURAT_CACHE_DIR", dir.path().c_str()), on("ZIGGURAT_CACHE", nullptr);
  // Each process stores records of its own, all of them also the same shared key, all at once
  // (a read-modify-write of one shared file would lose most of them).
  constexpr int kProcesses = 8, kRecords = 25;
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      int failures = 0;
      for (int r = 0; r < kRecords; ++r) {
        const double seconds = 1e-3 * (p + 1) + 1e-6 * r;
        failures += !store_tuning_record(test::test_device(), {"process " + std::to_string(p) + " record " + std::to_string(r),
                                                    {{"row", seconds}}}).empty();
        failures += !store_tuning_record(test::test_device(), {"shared", {{"group", 1e-3 * (p + 1)}}}).empty();
      }
      ::_exit(failures == 0 ? 0 : 1);
    }
    children.push_back(child);
  }
  for (const pid_t child : children) {
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
  }
  for (int p = 0; p < kProcesses; ++p) {
    for (int r = 0; r < kRecords; ++r) {
      const auto record = load_tuning_record(test::test_device(), "process " + std::to_string(p) + " record " + std::to_string(r));
      REQUIRE(record.has_value());
      CHECK(record->seconds.front().second == 1e-3 * (p + 1) + 1e-6 * r);
    }
  }
  const auto shared = load_tuning_record(test::test_device(), "shared");
  REQUIRE(shared.has_value());  // whole: one of the writers' records, never a mix
  bool a_writers = false;
  for (int p = 0; p < kProcesses; ++p) a_writers = a_writers || shared->seconds.front().second == 1e-3 * (p + 1);
  CHECK(a_writers);
  CHECK(list_tuning_records(test::test_device()).size() == kProcesses * kRecords + 1);
}

TEST_CASE("every measurement drops its warm-up round, and only that one") {
  // The overlap measurement once kept its warm-up samples; now every timing goes through this.
  std::vector<std::size_t> called;
  const auto kept = detail::kept_rounds(3, [&](std::size_t round) {
    called.push_back(round);
    return round == 0 ? 1000.0 : static_cast<double>(round);  // a slow first round, as on a device
  });
  CHECK(called == std::vector<std::size_t>{0, 1, 2, 3});
  CHECK(kept == std::vector<double>{1, 2, 3});
  CHECK(detail::median(kept) == 2);
  CHECK(detail::median({4, 1, 3, 2}) == 2.5);
  CHECK_THROWS_AS(detail::median({}), InvalidArgument);
}
