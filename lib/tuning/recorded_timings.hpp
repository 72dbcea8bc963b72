#pragma once
// What every autotuner does with its cache: the timings of one kind of problem come from its
// tuning record where the record can serve, else are measured now and recorded. Each decision is
// logged (source "tuning"): a record taken, a record refused and why, or what was timed and what
// won, and a record that could not be kept.

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "ziggurat/base/device.hpp"
#include "ziggurat/tuning/profile_store.hpp"

namespace ziggurat::detail {

/// Seconds a call of each candidate, fastest first: the winner is the first.
using Timings = std::vector<std::pair<std::string, double>>;

/// The timings of `key` on `device`: its record where parse(name) takes every candidate it names
/// (InvalidArgument otherwise: a record edited, or of other candidates) and it names each of
/// `required` (candidates added since older records were written); else measure()'s, recorded (a
/// record that cannot be written, or that holds a time no measurement gives, a timer's fault
/// logged as a warning, is measured again next time; the choice stands either way).
/// `measured_now` tells which.
Timings recorded_or_measured(const DeviceInfo& device, const std::string& key,
                             const std::function<void(const std::string&)>& parse,
                             const std::function<Timings()>& measure, bool& measured_now,
                             const std::vector<std::string>& required = {});

}  // namespace ziggurat::detail
