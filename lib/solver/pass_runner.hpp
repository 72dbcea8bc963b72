#pragma once
// The pyramid passes of a grid held in host memory, shared by the explicit heat solver
// (solver/heat_pyramid.cpp) and the Jacobi Poisson solver (solver/poisson_pyramid.cpp): how a pass
// cuts the grid into tasks (exactly as the cost model counts them, pyramid_tiling.hpp), the host
// layers, and the runner that issues each task's uploads, kernels and downloads on the context's
// three queues. What a task computes is the solver's TaskKernels.

#include <algorithm>
#include <array>
#include <deque>
#include <functional>
#include <limits>
#include <optional>
#include <tuple>
#include <vector>

#include "base/integer_math.hpp"
#include "ops/heat_stencil.hpp"
#include "ops/stream.hpp"
#include "solver/pyramid_tiling.hpp"
#include "ziggurat/base/error.hpp"
#include "ziggurat/base/memory.hpp"
#include "ziggurat/solver/pyramid_layout.hpp"

namespace ziggurat::detail {

// One task of a pass, in grid coordinates: the region it sends (its owned tile plus the halo,
// clipped to the grid), the region it brings back, its tile on each cut axis, and the last task
// of the previous pass whose results it reads (tasks are numbered with axis 0 fastest).
struct PassTask {
  Box sent, received, tile;
  std::size_t halo_source = 0;
};

// The tasks of a pass of `steps` steps, cut exactly as the cost model cuts them (pyramid_tiling.hpp):
// strips cut the slowest axis and move whole rows; blocks cut both axes of a 2D grid and move
// their owned tile.
inline std::vector<PassTask> pass_tasks(const std::vector<std::size_t>& extents, const PyramidLayout& layout,
                                 std::size_t steps) {
  const std::size_t dims = extents.size();
  const bool block = layout.decomposition == Decomposition::block;
  std::vector<std::size_t> cut_axes = block ? std::vector<std::size_t>{0, 1} : std::vector<std::size_t>{dims - 1};
  std::vector<Cut> cuts;
  std::size_t count = 1;
  for (const std::size_t axis : cut_axes) {
    cuts.emplace_back(extents[axis], layout.task_extent);
    count *= cuts.back().tiles();
  }
  std::vector<PassTask> tasks(count);
  for (std::size_t index = 0; index < count; ++index) {
    PassTask& task = tasks[index];
    for (std::size_t axis = 0; axis < dims; ++axis) {
      task.sent.end[axis] = task.received.end[axis] = task.tile.end[axis] = extents[axis];
    }
    std::size_t rest = index, source = 0, stride = 1;
    for (std::size_t c = 0; c < cuts.size(); ++c) {
      const Cut& cut = cuts[c];
      const std::size_t axis = cut_axes[c], t = rest % cut.tiles();
      rest /= cut.tiles();
      task.sent.begin[axis] = cut.grown_begin(t, steps, 0);
      task.sent.end[axis] = cut.grown_end(t, steps, cut.length);
      task.tile.begin[axis] = task.received.begin[axis] = cut.begin(t);
      task.tile.end[axis] = task.received.end[axis] = cut.end(t);
      source += cut.last_source(t, steps) * stride;
      stride *= cut.tiles();
    }
    if (block) task.received = task.tile;
    task.halo_source = source;
  }
  return tasks;
}

// The nodes a task computes at margin m (m more steps to go after this one), in grid coordinates:
// its tile grown by m, clipped to the interior (an axis that is not cut is the whole interior).
inline Box compute_box(const PassTask& task, const std::vector<std::size_t>& extents, std::size_t margin) {
  Box box;
  for (std::size_t axis = 0; axis < extents.size(); ++axis) {
    box.begin[axis] = grown_begin(task.tile.begin[axis], margin, 1);
    box.end[axis] = grown_end(task.tile.end[axis], margin, extents[axis] - 1);
  }
  return box;
}

// The grid's interior [1, extent - 1) within the region a task sent, in its buffer's coordinates.
inline Box interior_in(const PassTask& task, const std::vector<std::size_t>& extents) {
  Box box;
  for (std::size_t axis = 0; axis < extents.size(); ++axis) {
    box.begin[axis] = std::max<std::size_t>(1, task.sent.begin[axis]) - task.sent.begin[axis];
    box.end[axis] = std::min(extents[axis] - 1, task.sent.end[axis]) - task.sent.begin[axis];
  }
  return box;
}

inline Box shifted(const Box& box, const Box& origin) {
  Box result = box;
  for (std::size_t axis = 0; axis < 3; ++axis) {
    result.begin[axis] -= origin.begin[axis];
    result.end[axis] -= origin.begin[axis];
  }
  return result;
}

// Host memory for the grid: page-locked where the runtime gives it, else ordinary memory. Devices
// that share host memory (CPUs) gain nothing from page-locking and get ordinary memory; so does
// Oclgrind, which would otherwise see host writes into a mapped buffer as uninitialised.
template <class T>
struct HostLayer {
  HostLayer(const Context& context, std::size_t count) {
    try {
      if (!context.device().host_unified_memory) pinned.emplace(context, count);
    } catch (const Error&) {
    }
    if (!pinned) ordinary.resize(count);
  }
  T* data() { return pinned ? pinned->data() : ordinary.data(); }
  const T* data() const { return pinned ? pinned->data() : ordinary.data(); }

  std::optional<PinnedHostBuffer<T>> pinned;
  std::vector<T> ordinary;
};

using Origin = std::array<cl::size_type, 3>;

inline Origin byte_origin(const std::array<std::size_t, 3>& nodes, std::size_t value_bytes) {
  return {nodes[0] * value_bytes, nodes[1], nodes[2]};
}

// What a pass computes on each task: the heat scheme's steps (HeatSolver), or Jacobi sweeps with a
// right-hand side and the update of the stopping test (PoissonSolver).
template <class T>
class TaskKernels {
 public:
  virtual ~TaskKernels() = default;
  // Host arrays uploaded beside the grid over the same region, read-only on the device.
  virtual std::vector<const T*> inputs() const { return {}; }
  // One step of the nodes of `box` (buffer coordinates) from `in` to `out`, for a task in `slot`;
  // `last`: the task's last step of the pass. `done` is the last command enqueued.
  virtual void step(cl::CommandQueue& queue, const cl::Buffer& in, const cl::Buffer& out,
                    const std::vector<DeviceBuffer<T>>& inputs, std::size_t slot, const BufferShape& shape,
                    const Box& box, bool last, const std::vector<cl::Event>* wait, cl::Event* done) = 0;
  // Steps one launch advances (kernels that block in time keep a tile on chip that long).
  virtual std::size_t depth() const { return 1; }
  // `steps` (1..depth()) steps in one launch: step t computes `box` grown by steps - t within
  // `interior` (buffer coordinates; beyond it the grid's boundary keeps its values). With depth 1
  // this is step().
  virtual void launch(cl::CommandQueue& queue, const cl::Buffer& in, const cl::Buffer& out,
                      const std::vector<DeviceBuffer<T>>& inputs, std::size_t slot, const BufferShape& shape,
                      const Box& box, const Box& /*interior*/, std::size_t /*steps*/, bool last,
                      const std::vector<cl::Event>* wait, cl::Event* done) {
    step(queue, in, out, inputs, slot, shape, box, last, wait, done);
  }
  // What a task returns beside the field, enqueued on the download queue before the field's
  // download, once the task's kernels (`computed`) are done.
  virtual void download_results(cl::CommandQueue&, std::size_t /*slot*/, std::size_t /*pass*/, std::size_t /*task*/,
                                const cl::Event& /*computed*/) {}
};

// Runs the passes of one plan: the schedule the cost model predicts (tuning/cost_model.hpp,
// predict()), made of OpenCL commands on the context's three queues, ordered by events.
template <class T>
class PassRunner {
 public:
  PassRunner(const Context& context, const std::vector<std::size_t>& extents, TaskKernels<T>& kernels,
             std::size_t alignment, const PyramidLayout& layout, std::size_t steps, bool overlapped)
      : context_(context), extents_(extents), kernels_(kernels) {
    height_ = layout.decomposition == Decomposition::trivial ? 1 : layout.height;
    passes_ = detail::ceil_div(steps, height_);
    last_steps_ = steps - height_ * (passes_ - 1);
    full_ = pass_tasks(extents, layout, height_);
    last_ = last_steps_ == height_ ? full_ : pass_tasks(extents, layout, last_steps_);
    // One buffer shape for every task: the largest region, rows padded to the alignment.
    std::array<std::size_t, 3> most{1, 1, 1};
    for (const auto& task : full_) {
      for (std::size_t axis = 0; axis < 3; ++axis) most[axis] = std::max(most[axis], task.sent.count(axis));
    }
    const std::size_t dims = extents.size();
    shape_.pitch = dims == 1 ? most[0] : detail::ceil_div(most[0], alignment) * alignment;
    shape_.plane = shape_.pitch * most[1];
    const std::size_t values = dims == 3 ? shape_.plane * most[2] : dims == 2 ? shape_.plane : most[0];
    slots_.resize(overlapped ? 2 : 1);
    serial_ = !overlapped;
    // Zeroed once by a kernel, so that padding never holds uninitialised memory.
    const std::size_t inputs = kernels.inputs().size();
    for (auto& slot : slots_) {
      for (auto& layer : slot.layer) {
        layer = DeviceBuffer<T>(context, values, "pyramid task buffer");
        enqueue_zero(context, context.compute_queue(), layer.get(), values * sizeof(T));
      }
      for (std::size_t i = 0; i < inputs; ++i) {
        slot.inputs.emplace_back(context, values, "pyramid task input");
        enqueue_zero(context, context.compute_queue(), slot.inputs.back().get(), values * sizeof(T));
      }
    }
    device_bytes_ = static_cast<std::uint64_t>(values) * sizeof(T) * (2 + inputs) * slots_.size();
  }

  std::uint64_t device_bytes() const { return device_bytes_; }
  std::size_t passes() const { return passes_; }
  std::size_t height() const { return height_; }
  std::size_t tasks() const { return full_.size(); }

  // The passes whose every download has completed, after a failure once the device has finished
  // what it could: each download waits for the one before it, so the completed ones are the
  // retired ones and a prefix of those in flight. Later passes write the other host layer or have
  // not started, so the layer of the last completed pass holds its result.
  std::size_t passes_completed() const {
    std::size_t completed = retired_;
    for (const auto& task : in_flight_) {
      cl_int status = CL_QUEUED;
      if (task.download.getInfo(CL_EVENT_COMMAND_EXECUTION_STATUS, &status) != CL_SUCCESS || status != CL_COMPLETE) break;
      ++completed;
    }
    return completed / full_.size();
  }

  // Keeps every task's events, so that timeline() can say when each ran.
  void record_timeline() { record_ = true; }

  // Runs the passes, pass p from host[p % 2] into host[(p + 1) % 2]; calls `on_pass(passes done)`
  // as each pass completes, and stops after the pass for which it returns false. Returns the
  // passes done. Passes overlap: when a run stops, tasks of the next pass may have run, writing
  // only into the host layer that does not hold the result.
  std::size_t run(std::array<T*, 2> host, const std::function<bool(std::size_t)>& on_pass) {
    std::size_t task_number = 0;
    for (std::size_t pass = 0; pass < passes_ && !stopped_; ++pass) {
      const auto& tasks = pass + 1 == passes_ ? last_ : full_;
      const std::size_t pass_steps = pass + 1 == passes_ ? last_steps_ : height_;
      previous_downloads_ = std::move(current_downloads_);
      current_downloads_.clear();
      for (std::size_t i = 0; i < tasks.size(); ++i, ++task_number) {
        run_task(tasks[i], pass, i, pass_steps, host[pass % 2], host[(pass + 1) % 2], task_number % slots_.size());
        if (record_) {
          recorded_.back().pass = pass;
          recorded_.back().task = i;
        }
        in_flight_.push_back({pass, i + 1 == tasks.size(), current_downloads_.back()});
        while (in_flight_.size() > kTasksInFlight && !stopped_) retire(on_pass);
      }
    }
    while (!in_flight_.empty() && !stopped_) retire(on_pass);
    if (stopped_) check(context_.download_queue().finish(), "clFinish", "stopping pyramid passes");
    return passes_done_;
  }

  // The recorded tasks' engine times, relative to the earliest start (after run()).
  std::vector<HeatTimelineEntry> timeline() const {
    using Engine = HeatTimelineEntry::Engine;
    std::vector<HeatTimelineEntry> entries;
    cl_ulong origin = std::numeric_limits<cl_ulong>::max();
    for (const auto& r : recorded_) origin = std::min(origin, profiling_time(r.uploaded, CL_PROFILING_COMMAND_START));
    const auto seconds = [&](cl_ulong time) { return static_cast<double>(time - std::min(time, origin)) * 1e-9; };
    for (const auto& r : recorded_) {
      for (const auto& [engine, first, last] : {std::tuple{Engine::upload, &r.uploaded, &r.uploaded},
                                                std::tuple{Engine::compute, &r.first_kernel, &r.last_kernel},
                                                std::tuple{Engine::download, &r.downloaded, &r.downloaded}}) {
        entries.push_back({engine, r.pass, r.task, seconds(profiling_time(*first, CL_PROFILING_COMMAND_START)),
                           seconds(profiling_time(*last, CL_PROFILING_COMMAND_END))});
      }
    }
    return entries;
  }

 private:
  static constexpr std::size_t kTasksInFlight = 4;  // enough to keep three engines busy
  static constexpr std::size_t kKernelBatch = 256;  // long tasks wait now and then (see InDeviceHeat)

  struct Slot {
    DeviceBuffer<T> layer[2];
    std::vector<DeviceBuffer<T>> inputs;  // TaskKernels::inputs(), over the same region
    std::size_t result = 1;           // the layer holding the last task's result
    cl::Event computed, downloaded;   // the last task's final kernel and download
  };
  struct Recorded {
    std::size_t pass = 0, task = 0;
    cl::Event uploaded, first_kernel, last_kernel, downloaded;
  };
  struct InFlight {
    std::size_t pass;
    bool ends_pass;
    cl::Event download;
  };

  static std::vector<cl::Event> events(std::initializer_list<const cl::Event*> candidates) {
    std::vector<cl::Event> list;
    for (const cl::Event* event : candidates) {
      if (event != nullptr && (*event)() != nullptr) list.push_back(*event);
    }
    return list;
  }

  void retire(const std::function<bool(std::size_t)>& on_pass) {
    check(in_flight_.front().download.wait(), "clWaitForEvents", "running a pyramid pass");
    const InFlight done = in_flight_.front();
    in_flight_.pop_front();
    ++retired_;
    if (!done.ends_pass) return;
    passes_done_ = done.pass + 1;
    stopped_ = !on_pass(passes_done_);
  }

  // Moves `box` (grid coordinates) between the host grid and `buffer`, where the box's corner sits
  // at `at` (buffer coordinates): one contiguous transfer where both sides are contiguous, else a
  // rectangular one.
  void transfer(bool upload, const cl::Buffer& buffer, const Box& box, const std::array<std::size_t, 3>& at, T* host,
                const std::vector<cl::Event>& wait, cl::Event& done) {
    cl::CommandQueue& queue = upload ? context_.upload_queue() : context_.download_queue();
    const std::size_t width = extents_[0], height = extents_.size() > 1 ? extents_[1] : 1;
    const BufferShape host_shape{width, width * height};
    const bool rows_whole = box.count(1) * box.count(2) == 1 || (box.count(0) == width && shape_.pitch == width);
    const bool planes_whole = box.count(2) == 1 || (box.count(1) == height && shape_.plane == width * height);
    const std::vector<cl::Event>* wait_list = wait.empty() ? nullptr : &wait;
    if (rows_whole && planes_whole && at[0] == 0) {
      const std::size_t bytes = box.nodes() * sizeof(T);
      const std::size_t device_offset = shape_.offset(at[0], at[1], at[2]) * sizeof(T);
      T* host_values = host + host_shape.offset(box.begin[0], box.begin[1], box.begin[2]);
      check(upload ? queue.enqueueWriteBuffer(buffer, CL_FALSE, device_offset, bytes, host_values, wait_list, &done)
                   : queue.enqueueReadBuffer(buffer, CL_FALSE, device_offset, bytes, host_values, wait_list, &done),
            upload ? "clEnqueueWriteBuffer" : "clEnqueueReadBuffer", "moving a pyramid task");
      return;
    }
    const Origin device_origin = byte_origin(at, sizeof(T)), host_origin = byte_origin(box.begin, sizeof(T));
    const Origin region{box.count(0) * sizeof(T), box.count(1), box.count(2)};
    const std::size_t device_row = shape_.pitch * sizeof(T), device_slice = shape_.plane * sizeof(T);
    const std::size_t host_row = host_shape.pitch * sizeof(T), host_slice = host_shape.plane * sizeof(T);
    check(upload ? queue.enqueueWriteBufferRect(buffer, CL_FALSE, device_origin, host_origin, region, device_row,
                                                device_slice, host_row, host_slice, host, wait_list, &done)
                 : queue.enqueueReadBufferRect(buffer, CL_FALSE, device_origin, host_origin, region, device_row,
                                               device_slice, host_row, host_slice, host, wait_list, &done),
          upload ? "clEnqueueWriteBufferRect" : "clEnqueueReadBufferRect", "moving a pyramid task");
  }

  // Copies the task's physical-boundary nodes from the uploaded layer into the other one, which
  // the kernels write: boundary nodes are read by every step but never computed.
  void copy_boundary(const PassTask& task, const cl::Buffer& from, const cl::Buffer& to,
                     std::vector<cl::Event>& wait, cl::Event& done) {
    const Box local = shifted(task.sent, task.sent);
    for (std::size_t axis = 0; axis < extents_.size(); ++axis) {
      for (const bool high : {false, true}) {
        if (high ? task.sent.end[axis] != extents_[axis] : task.sent.begin[axis] != 0) continue;
        Box slab = local;
        slab.begin[axis] = high ? local.end[axis] - 1 : 0;
        slab.end[axis] = slab.begin[axis] + 1;
        const Origin origin = byte_origin(slab.begin, sizeof(T));
        const Origin region{slab.count(0) * sizeof(T), slab.count(1), slab.count(2)};
        const std::size_t row = shape_.pitch * sizeof(T), slice = shape_.plane * sizeof(T);
        check(context_.compute_queue().enqueueCopyBufferRect(from, to, origin, origin, region, row, slice, row, slice,
                                                             wait.empty() ? nullptr : &wait, &done),
              "clEnqueueCopyBufferRect", "copying the boundary of a pyramid task");
        wait.clear();  // the queue is in order: later commands follow this one
      }
    }
  }

  void run_task(const PassTask& task, std::size_t pass, std::size_t index, std::size_t pass_steps, T* source, T* target,
                std::size_t slot_number) {
    Slot& slot = slots_[slot_number];
    const bool after_first_pass = pass > 0;
    const std::size_t up_layer = 1 - slot.result;
    // The upload overwrites the slot's other layer once the slot's previous task has finished
    // computing in it, and reads host values that the previous pass's downloads must have written.
    const cl::Event* halo = after_first_pass ? &previous_downloads_[task.halo_source] : nullptr;
    cl::Event uploaded;
    transfer(true, slot.layer[up_layer].get(), task.sent, {0, 0, 0}, source,
             events({&slot.computed, halo, serial_ ? &last_download_ : nullptr}), uploaded);
    // The kernels write into the layer the slot's previous download reads.
    std::vector<cl::Event> wait = events({&uploaded, &slot.downloaded});
    const std::vector<const T*> inputs = kernels_.inputs();
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      cl::Event input_uploaded;
      transfer(true, slot.inputs[i].get(), task.sent, {0, 0, 0}, const_cast<T*>(inputs[i]),
               events({&slot.computed, serial_ ? &last_download_ : nullptr}), input_uploaded);
      wait.push_back(input_uploaded);
    }
    cl::Event done;
    copy_boundary(task, slot.layer[up_layer].get(), slot.layer[1 - up_layer].get(), wait, done);
    cl::Event first_kernel = done;
    std::deque<cl::Event> batch;
    // Launches of up to depth() steps, each ending on the box of its last step.
    const std::size_t depth = kernels_.depth();
    std::size_t launches = 0;
    for (std::size_t k = 0; k < pass_steps; ++launches) {
      const std::size_t n = std::min(depth, pass_steps - k);
      k += n;
      const std::size_t in = up_layer ^ (launches % 2);
      const Box box = shifted(compute_box(task, extents_, pass_steps - k), task.sent);
      kernels_.launch(context_.compute_queue(), slot.layer[in].get(), slot.layer[1 - in].get(), slot.inputs,
                      slot_number, shape_, box, interior_in(task, extents_), n, k == pass_steps, wait.empty() ? nullptr : &wait,
                      &done);
      wait.clear();
      if (first_kernel() == nullptr) first_kernel = done;
      if ((launches + 1) % kKernelBatch == 0) {
        batch.push_back(done);
        if (batch.size() > 1) {
          check(batch.front().wait(), "clWaitForEvents", "running a pyramid task");
          batch.pop_front();
        }
      }
    }
    slot.result = up_layer ^ (launches % 2);
    slot.computed = done;
    cl::Event downloaded;
    std::array<std::size_t, 3> at{};
    for (std::size_t axis = 0; axis < 3; ++axis) at[axis] = task.received.begin[axis] - task.sent.begin[axis];
    kernels_.download_results(context_.download_queue(), slot_number, pass, index, done);
    // After the previous download too: a download that fails then stops every later one, so the
    // completed downloads stay a prefix of those issued (passes_completed) on every driver.
    transfer(false, slot.layer[slot.result].get(), task.received, at, target, events({&done, &last_download_}),
             downloaded);
    slot.downloaded = last_download_ = downloaded;
    current_downloads_.push_back(downloaded);
    if (record_) recorded_.push_back({0, 0, uploaded, first_kernel, done, downloaded});
    for (auto* queue : {&context_.upload_queue(), &context_.compute_queue(), &context_.download_queue()}) {
      check(queue->flush(), "clFlush", "running a pyramid pass");
    }
  }

  Context context_;
  std::vector<std::size_t> extents_;
  TaskKernels<T>& kernels_;
  std::size_t height_ = 1, passes_ = 1, last_steps_ = 1;
  std::vector<PassTask> full_, last_;
  BufferShape shape_;
  std::vector<Slot> slots_;
  bool serial_ = false;
  std::uint64_t device_bytes_ = 0;
  std::vector<cl::Event> previous_downloads_, current_downloads_;
  cl::Event last_download_;
  std::deque<InFlight> in_flight_;
  std::size_t retired_ = 0;  // tasks whose download was waited for
  std::size_t passes_done_ = 0;
  bool stopped_ = false;  // on_pass asked to stop
  bool record_ = false;
  std::vector<Recorded> recorded_;
};

// Runs the runner's passes between the two host layers. If one fails (an OpenCL error, or an
// exception from on_pass), waits for what the device still does, tells `on_failure` how many
// passes completed entirely (their result is in host[passes % 2]) and rethrows.
template <class T>
std::size_t run_passes(PassRunner<T>& runner, const Context& context, std::array<T*, 2> host,
                       const std::function<bool(std::size_t)>& on_pass,
                       const std::function<void(std::size_t)>& on_failure) {
  try {
    return runner.run(host, on_pass);
  } catch (...) {
    try {
      context.finish();  // nothing may still write into host memory
    } catch (const Error&) {  // the device is already in trouble; the error rethrown says why
    }
    on_failure(runner.passes_completed());
    throw;
  }
}

}  // namespace ziggurat::detail
