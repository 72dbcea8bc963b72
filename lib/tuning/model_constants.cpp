#include "ziggurat/tuning/model_constants.hpp"

#include <algorithm>
#include <string>

#include "ziggurat/base/error.hpp"

namespace ziggurat::model {

TransferEngines transfer_engines(const OverlapMeasurement& o) {
  const auto slowdown = [](double together, double alone) { return alone > 0 ? std::max(1.0, together / alone) : 1.0; };
  return {o.transfers_overlap_compute(), o.duplex(), slowdown(o.upload_together_s, o.upload_s),
          slowdown(o.download_together_s, o.download_s), slowdown(o.compute_together_s, o.compute_s)};
}

double crossing_ns(const DeviceProfile& profile, std::size_t value_bytes) {
  const double bytes_per_s = profile.copy_bytes_per_s();
  return bytes_per_s > 0 ? 2.0 * static_cast<double>(value_bytes) / bytes_per_s * 1e9 : 0.0;
}

DeviceConstants heat_constants(const DeviceProfile& profile, std::size_t dims, std::size_t value_bytes,
                               std::optional<double> tau_a_ns, bool pinned_host) {
  if (!tau_a_ns) tau_a_ns = profile.tau_a_ns(dims, value_bytes);
  if (!tau_a_ns) {
    throw UnsupportedFeature("the profile of " + profile.device + " has no measured compute rate for a " +
                             std::to_string(dims) + "D " + (value_bytes == 4 ? "float" : "double") + " stencil (" +
                             RateNeed::heat(dims, value_bytes).label() +
                             "): measure it with load_or_calibrate(context, ProfileNeeds::heat(" + std::to_string(dims) +
                             ", " + std::to_string(value_bytes) +
                             ")) or `ziggurat calibrate`, or give tau_a_ns (ziggurat has no such kernel, or the "
                             "device lacks fp64, if calibration does not measure it)");
  }
  const auto per_value = [&](const TransferFit& fit) {
    return TransferCost{fit.latency_s * 1e9, static_cast<double>(value_bytes) / fit.bytes_per_s * 1e9};
  };
  DeviceConstants k;
  k.upload = per_value(pinned_host ? profile.upload_pinned : profile.upload_pageable);
  k.download = per_value(pinned_host ? profile.download_pinned : profile.download_pageable);
  k.rect_upload = per_value(profile.upload_rect);
  k.rect_download = per_value(profile.download_rect);
  k.tau_a_ns = *tau_a_ns;
  k.launch_ns = profile.launch_pipelined_s * 1e9;
  k.crossing_ns = crossing_ns(profile, value_bytes);
  k.engines = transfer_engines(profile.overlap);
  k.rect_engines = transfer_engines(profile.rect_overlap);
  return k;
}

LongVectorConstants long_vector_constants(const DeviceProfile& profile, std::size_t value_bytes, double values) {
  if (!profile.vector_calls_measured) {
    throw UnsupportedFeature("the profile of " + profile.device + " has no long-vector constants: CLBlast's xAXPY was "
                             "not measured; measure it with load_or_calibrate(context, ProfileNeeds::long_vector()) or "
                             "`ziggurat calibrate`");
  }
  if (profile.numstreams == 0) {
    throw UnsupportedFeature("the profile of " + profile.device + " has no long-vector constants: CLBlast could not run there");
  }
  // What model (1) counts, in the calls that solver/long_vector_heat.hpp makes. The model charges
  // a call t_kernel plus at least one wave; the call cost was measured on one-element calls, which
  // is that sum, so t_kernel is the call less a wave. The restore (t0) is a CLBlast call too, an
  // xOMATCOPY of 2(N-1) values: one call's cost, wave included. CLBlast has no out-of-place
  // addition, so the model's two additions are three calls' vector work (xCOPY + xAXPY, then
  // xHAD as an axpby): an addition costs 1.5 axpy waves (on a memory-bound device too: a copy
  // moves 2 values an element, an xHAD 4, an xAXPY 3), the saxpy one.
  const double call_ns = profile.axpy_call_s * 1e9;
  const double wave_ns = profile.axpy_wave_s * 1e9 * static_cast<double>(value_bytes) / 4;  // measured in float
  LongVectorConstants c;
  c.t_kernel_ns = std::max(0.0, call_ns - wave_ns);
  c.t_add_ns = 1.5 * wave_ns;
  c.t_saxpy_ns = wave_ns;
  c.t0_ns = call_ns;
  c.numstreams = static_cast<double>(profile.numstreams);
  const double bytes = values * static_cast<double>(value_bytes);
  c.transfer_ns = (profile.upload_pinned.seconds(bytes) + profile.download_pinned.seconds(bytes)) * 1e9;
  return c;
}

}  // namespace ziggurat::model
