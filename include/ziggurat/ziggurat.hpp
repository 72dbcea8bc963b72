#pragma once
// Everything ziggurat offers, in one include, layer by layer (docs/architecture.md).

#include "ziggurat/base/binary_cache.hpp"
#include "ziggurat/base/context.hpp"
#include "ziggurat/base/device.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/base/files.hpp"
#include "ziggurat/base/memory.hpp"
#include "ziggurat/base/precision.hpp"
#include "ziggurat/base/program.hpp"
#include "ziggurat/base/version.hpp"

#include "ziggurat/matrix/device_sparse.hpp"
#include "ziggurat/matrix/grid.hpp"
#include "ziggurat/matrix/ilu_factors.hpp"
#include "ziggurat/matrix/ordering.hpp"
#include "ziggurat/matrix/sparse.hpp"

#include "ziggurat/io/matrix_market.hpp"
#include "ziggurat/io/npy.hpp"

#include "ziggurat/ops/block_ilu.hpp"
#include "ziggurat/ops/heat_scheme.hpp"
#include "ziggurat/ops/poisson_scheme.hpp"
#include "ziggurat/ops/spmm.hpp"
#include "ziggurat/ops/vector_ops.hpp"

#include "ziggurat/solver/in_device_heat.hpp"
#include "ziggurat/solver/heat_pyramid.hpp"
#include "ziggurat/solver/krylov.hpp"
#include "ziggurat/solver/long_vector_heat.hpp"
#include "ziggurat/solver/poisson_pyramid.hpp"
#include "ziggurat/solver/pyramid_layout.hpp"
#include "ziggurat/solver/step_timing.hpp"

#include "ziggurat/tuning/bsr_autotune.hpp"
#include "ziggurat/tuning/calibration.hpp"
#include "ziggurat/tuning/cost_model.hpp"
#include "ziggurat/tuning/device_profile.hpp"
#include "ziggurat/tuning/heat_planner.hpp"
#include "ziggurat/tuning/model_constants.hpp"
#include "ziggurat/tuning/poisson_planner.hpp"
#include "ziggurat/tuning/profile_store.hpp"

#include "ziggurat/automatic/heat.hpp"
#include "ziggurat/automatic/poisson.hpp"
#include "ziggurat/automatic/spmm.hpp"
