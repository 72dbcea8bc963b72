// Partial device profiles (calibration by need): a profile of the device figures and only the
// rates some commands needed is valid and survives JSON; what it lacks is named, by missing_from()
// and by the models asked for it; a full profile written before calibration by need still loads.

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "../support/test_profiles.hpp"
#include "ziggurat/base/device.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/tuning/calibration.hpp"
#include "ziggurat/tuning/model_constants.hpp"
#include "ziggurat/tuning/poisson_planner.hpp"

using namespace ziggurat;

namespace {

KernelRate rate_of(const RateNeed& need, double ns) { return {need.kernel, need.dims, need.value_bytes, {256, 256}, ns}; }

}  // namespace

TEST_SUITE("partial profiles") {
  TEST_CASE("a profile of the device figures alone, or of some rates, is valid and survives JSON") {
    DeviceProfile p = test::device_figures_profile();
    CHECK_NOTHROW(validate(p));
    CHECK(profile_from_json(profile_to_json(p)).kernels.empty());
    CHECK_FALSE(profile_from_json(profile_to_json(p)).vector_calls_measured);
    p.kernels.push_back(rate_of(RateNeed::heat(2, 4), 0.004));
    const DeviceProfile back = profile_from_json(profile_to_json(p));
    REQUIRE(back.kernels.size() == 1);
    CHECK(back.tau_a_ns(2, 4) == 0.004);
    CHECK_FALSE(back.tau_a_ns(3, 4).has_value());
    CHECK(profile_to_json(back) == profile_to_json(p));
  }

  TEST_CASE("what a profile lacks of a command's needs is named, and nothing it holds") {
    DeviceProfile p = test::device_figures_profile();
    p.kernels.push_back(rate_of(RateNeed::heat(2, 4), 0.004));
    CHECK(missing_from(p, ProfileNeeds::heat(2, 4)).empty());
    const ProfileNeeds jacobi = missing_from(p, ProfileNeeds::jacobi(4));
    REQUIRE(jacobi.rates.size() == 1);
    CHECK(jacobi.rates[0].label() == "jacobi3d_box f32");
    CHECK_FALSE(jacobi.vector_calls);
    CHECK(missing_from(p, ProfileNeeds::long_vector()).vector_calls);
    const ProfileNeeds rest = missing_from(p, ProfileNeeds::everything());
    CHECK(rest.rates.size() == 7);  // 3 heat kernels x 2 precisions + 2 Jacobi sweeps, less heat2d f32
    CHECK(rest.vector_calls);
    p.vector_calls_measured = true;  // measured, CLBlast could not run there (numstreams 0): not missing
    CHECK_FALSE(missing_from(p, ProfileNeeds::long_vector()).vector_calls);
  }

  TEST_CASE("what cannot run is not asked of calibration: doubles without fp64, stencils beyond 3D") {
    DeviceInfo no_fp64;
    no_fp64.fp64 = false;
    const ProfileNeeds measurable = measurable_needs(no_fp64, ProfileNeeds::everything());
    CHECK(measurable.rates.size() == 4);
    for (const RateNeed& rate : measurable.rates) CHECK(rate.value_bytes == 4);
    DeviceInfo fp64;
    fp64.fp64 = true;
    CHECK(measurable_needs(fp64, ProfileNeeds::everything()).rates.size() == 8);
    CHECK(measurable_needs(fp64, ProfileNeeds::heat(4, 4)).empty());
  }

  TEST_CASE("a model asked for a rate the profile lacks names it and how to measure it, and guesses nothing") {
    const DeviceProfile p = test::device_figures_profile();
    CHECK_THROWS_WITH_AS(model::heat_constants(p, 3, 8), doctest::Contains("heat3d_box f64"), UnsupportedFeature);
    CHECK_THROWS_WITH_AS(model::heat_constants(p, 3, 8), doctest::Contains("ProfileNeeds::heat(3, 8)"), UnsupportedFeature);
    CHECK(model::heat_constants(p, 3, 8, 0.02).tau_a_ns == 0.02);  // a rate given is used
    CHECK_THROWS_WITH_AS(poisson_constants(p, 4), doctest::Contains("jacobi3d_box f32"), UnsupportedFeature);
    CHECK_THROWS_WITH_AS(model::long_vector_constants(p, 4, 1e6), doctest::Contains("xAXPY was not measured"),
                         UnsupportedFeature);
  }

  TEST_CASE("validation refuses vector-call constants that were not measured, and a rate given twice") {
    DeviceProfile p = test::device_figures_profile();
    p.numstreams = 4096;
    CHECK_THROWS_WITH_AS(validate(p), doctest::Contains("'vector_calls_measured' is false"), InvalidArgument);
    p.vector_calls_measured = true;
    CHECK_NOTHROW(validate(p));
    p.kernels = {rate_of(RateNeed::jacobi(8), 0.01), rate_of(RateNeed::jacobi(8), 0.02)};
    CHECK_THROWS_WITH_AS(validate(p), doctest::Contains("'jacobi3d_box' in 8-byte values is given twice"),
                         InvalidArgument);
  }

  TEST_CASE("a full profile written before calibration by need still loads, with every rate and the vector calls") {
    const DeviceProfile old = read_profile_file(ZIGGURAT_TEST_DATA_DIR "/../oclgrind/profile.json");
    CHECK(old.vector_calls_measured);
    CHECK(old.numstreams > 0);
    const nlohmann::json text = nlohmann::json::parse(profile_to_json(old));
    CHECK(text.at("vector_calls_measured") == true);
    DeviceInfo fp64;
    fp64.fp64 = true;
    const ProfileNeeds lacking = missing_from(old, measurable_needs(fp64, ProfileNeeds::everything()));
    CHECK(lacking.empty());
  }
}
