// The "spyre" PyTorch device (the PrivateUse1 key): allocator, device guard with streams and
// events in simulated time, hooks, and the view kernels. Everything that reads or writes a
// tensor's values (copies, eager ops) is Python: spyre_mlir/torch_device/.
//
// Memory: host memory stands in for the card's DDR. An allocation is the bytes the card would
// use (DL16 sticks of the tensor's base shape, as storage.py computes them: not the storage's
// nbytes, which PyTorch computes from the host dtype) and records the base shape and dtype
// that fix their layout; the allocator counts them against a limit (the card's usable DDR)
// and raises torch.OutOfMemoryError past it. Only the Python kernels read or write the bytes.
//
// Time: each stream has a clock (seconds of simulated device time). Python advances the clock
// of the stream a kernel runs on; an event records a stream's clock, a wait moves the waiting
// stream's clock up to the event's, and elapsed_time is the difference of two events' clocks.

#include <torch/csrc/utils/pybind.h>
#include <torch/library.h>

#include <ATen/EmptyTensor.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/from_blob.h>
#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/view_native.h>
#include <ATen/ops/_reshape_alias_native.h>
#include <c10/core/CachingDeviceAllocator.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace spyre {

constexpr c10::DeviceType kSpyre = c10::DeviceType::PrivateUse1;
constexpr int kStreams = 32;  // stream ids 0 (default) .. kStreams - 1

// ------------------------------------------------------------------------------ allocator

struct Block {
  size_t physical = 0;   // host bytes behind the pointer
  size_t accounted = 0;  // bytes the card would use
  std::vector<int64_t> base;  // the shape whose layout the bytes are in
  int64_t dtype = -1;         // the at::ScalarType the values are of (-1: raw bytes)
};

void delete_block(void* ptr);

class Allocator final : public c10::DeviceAllocator {
 public:
  c10::DataPtr allocate(size_t nbytes) override {
    // PyTorch's own generic paths (a storage made without our empty kernels): the bytes as a
    // flat 1-d base of uint8
    return allocate_block(nbytes, {static_cast<int64_t>(nbytes)}, -1);
  }

  c10::DataPtr allocate_block(size_t accounted, std::vector<int64_t> base, int64_t dtype) {
    size_t physical = accounted;  // the card's bytes, no more: only this runtime reads them
    std::lock_guard<std::mutex> lock(mu_);
    if (allocated_ + accounted > limit_) {
      ++num_ooms_;
      TORCH_CHECK_WITH(
          OutOfMemoryError,
          false,
          "spyre: out of device memory: tried to allocate ",
          accounted,
          " bytes; ",
          limit_ - allocated_,
          " of ",
          limit_,
          " usable DDR bytes are free (",
          allocated_,
          " allocated to tensors)");
    }
    void* ptr = nullptr;
    if (physical > 0) {
      ptr = std::calloc(physical, 1);
      TORCH_CHECK_WITH(OutOfMemoryError, ptr != nullptr, "spyre: the card has room for ", accounted,
                       " bytes, but the host could not allocate them to stand in for its DDR");
      blocks_[ptr] = Block{physical, accounted, std::move(base), dtype};
    }
    allocated_ += accounted;
    peak_ = std::max(peak_, allocated_);
    total_allocated_ += accounted;
    ++num_allocs_;
    return {ptr, ptr, &delete_block, c10::Device(kSpyre, 0)};
  }

  void release(void* ptr) {
    if (ptr == nullptr) {
      return;
    }
    std::lock_guard<std::mutex> lock(mu_);
    auto it = blocks_.find(ptr);
    if (it == blocks_.end()) {
      return;
    }
    allocated_ -= it->second.accounted;
    total_freed_ += it->second.accounted;
    ++num_frees_;
    blocks_.erase(it);
    std::free(ptr);
  }

  c10::DeleterFnPtr raw_deleter() const override {
    return &delete_block;
  }

  void copy_data(void* dest, const void* src, std::size_t count) const override {
    std::memcpy(dest, src, count);
  }

  bool initialized() override {
    return true;
  }
  void emptyCache(c10::MempoolId_t) override {}
  void recordStream(const c10::DataPtr&, c10::Stream) override {}

  c10::CachingDeviceAllocator::DeviceStats getDeviceStats(c10::DeviceIndex) override {
    std::lock_guard<std::mutex> lock(mu_);
    c10::CachingDeviceAllocator::DeviceStats s;
    auto fill = [&](c10::CachingAllocator::Stat& st) {
      st.current = static_cast<int64_t>(allocated_);
      st.peak = static_cast<int64_t>(peak_);
      st.allocated = static_cast<int64_t>(total_allocated_);
      st.freed = static_cast<int64_t>(total_freed_);
    };
    // no cache: what is reserved is what is allocated
    fill(s.allocated_bytes[0]);
    fill(s.reserved_bytes[0]);
    fill(s.active_bytes[0]);
    fill(s.requested_bytes[0]);
    s.allocation[0].current = static_cast<int64_t>(blocks_.size());
    s.allocation[0].allocated = num_allocs_;
    s.allocation[0].freed = num_frees_;
    s.num_ooms = num_ooms_;
    s.num_device_alloc = num_allocs_;
    s.num_device_free = num_frees_;
    return s;
  }

  void resetAccumulatedStats(c10::DeviceIndex) override {
    std::lock_guard<std::mutex> lock(mu_);
    total_allocated_ = total_freed_ = 0;
    num_allocs_ = num_frees_ = num_ooms_ = 0;
  }

  void resetPeakStats(c10::DeviceIndex) override {
    std::lock_guard<std::mutex> lock(mu_);
    peak_ = allocated_;
  }

  std::pair<size_t, size_t> getMemoryInfo(c10::DeviceIndex) override {
    std::lock_guard<std::mutex> lock(mu_);
    return {limit_ - allocated_, limit_};
  }

  // for Python
  void set_limit(size_t limit) {
    std::lock_guard<std::mutex> lock(mu_);
    TORCH_CHECK(limit >= allocated_, "spyre: a memory limit of ", limit, " bytes is below the ", allocated_, " allocated");
    limit_ = limit;
  }
  size_t limit() {
    std::lock_guard<std::mutex> lock(mu_);
    return limit_;
  }
  size_t allocated() {
    std::lock_guard<std::mutex> lock(mu_);
    return allocated_;
  }
  size_t peak() {
    std::lock_guard<std::mutex> lock(mu_);
    return peak_;
  }
  bool find(const void* ptr, Block& out) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = blocks_.find(const_cast<void*>(ptr));
    if (it == blocks_.end()) {
      return false;
    }
    out = it->second;
    return true;
  }

 private:
  std::mutex mu_;
  std::unordered_map<void*, Block> blocks_;
  size_t limit_ = static_cast<size_t>(112) * 1024 * 1024 * 1024;
  size_t allocated_ = 0, peak_ = 0, total_allocated_ = 0, total_freed_ = 0;
  int64_t num_allocs_ = 0, num_frees_ = 0, num_ooms_ = 0;
};

Allocator g_allocator;
void delete_block(void* ptr) {
  g_allocator.release(ptr);
}
REGISTER_ALLOCATOR(kSpyre, &g_allocator);

// ------------------------------------------------------------------------------ clocks, guard

struct Event {
  double time = 0.0;
  bool recorded = false;
};

std::mutex g_clock_mu;
std::array<double, kStreams> g_clock{};  // seconds, per stream id
thread_local c10::StreamId t_current_stream = 0;
thread_local c10::DeviceIndex t_current_device = 0;
int g_next_pool_stream = 1;

c10::StreamId check_stream(c10::StreamId id) {
  TORCH_CHECK(id >= 0 && id < kStreams, "spyre: no stream ", id, " (ids 0..", kStreams - 1, ")");
  return id;
}

struct GuardImpl final : public c10::impl::DeviceGuardImplInterface {
  c10::DeviceType type() const override {
    return kSpyre;
  }
  c10::Device exchangeDevice(c10::Device d) const override {
    auto old = getDevice();
    setDevice(d);
    return old;
  }
  c10::Device getDevice() const override {
    return c10::Device(kSpyre, t_current_device);
  }
  void setDevice(c10::Device d) const override {
    TORCH_CHECK(d.type() == kSpyre, "spyre: not a spyre device: ", d);
    TORCH_CHECK(!d.has_index() || d.index() == 0, "spyre: one device (index 0), not ", d);
    t_current_device = 0;
  }
  void uncheckedSetDevice(c10::Device) const noexcept override {}
  c10::Stream getStream(c10::Device d) const override {
    return c10::Stream(c10::Stream::UNSAFE, c10::Device(kSpyre, 0), t_current_stream);
  }
  c10::Stream getDefaultStream(c10::Device) const override {
    return c10::Stream(c10::Stream::UNSAFE, c10::Device(kSpyre, 0), 0);
  }
  c10::Stream getStreamFromGlobalPool(c10::Device, bool = false) const override {
    std::lock_guard<std::mutex> lock(g_clock_mu);
    c10::StreamId id = g_next_pool_stream;
    g_next_pool_stream = g_next_pool_stream % (kStreams - 1) + 1;  // 1 .. kStreams-1, round robin
    return c10::Stream(c10::Stream::UNSAFE, c10::Device(kSpyre, 0), id);
  }
  c10::Stream getNewStream(c10::Device d, int = 0) const override {
    return getStreamFromGlobalPool(d);
  }
  c10::Stream exchangeStream(c10::Stream s) const override {
    auto old = getStream(s.device());
    t_current_stream = check_stream(s.id());
    return old;
  }
  c10::DeviceIndex deviceCount() const noexcept override {
    return 1;
  }

  void destroyEvent(void* event, const c10::DeviceIndex) const noexcept override {
    delete static_cast<Event*>(event);
  }
  void record(void** event, const c10::Stream& stream, const c10::DeviceIndex, const c10::EventFlag) const override {
    if (*event == nullptr) {
      *event = new Event();
    }
    auto* e = static_cast<Event*>(*event);
    std::lock_guard<std::mutex> lock(g_clock_mu);
    e->time = g_clock[check_stream(stream.id())];
    e->recorded = true;
  }
  void block(void* event, const c10::Stream& stream) const override {
    auto* e = static_cast<Event*>(event);
    if (e == nullptr || !e->recorded) {
      return;
    }
    std::lock_guard<std::mutex> lock(g_clock_mu);
    double& c = g_clock[check_stream(stream.id())];
    c = std::max(c, e->time);
  }
  // the model runs every kernel when it is launched: work is always complete on the host
  bool queryEvent(void*) const override {
    return true;
  }
  bool queryStream(const c10::Stream&) const override {
    return true;
  }
  void synchronizeStream(const c10::Stream&) const override {}
  void synchronizeEvent(void*) const override {}
  void synchronizeDevice(const c10::DeviceIndex) const override {}
  void recordDataPtrOnStream(const c10::DataPtr&, const c10::Stream&) const override {}
  double elapsedTime(void* a, void* b, const c10::DeviceIndex) const override {
    auto* e1 = static_cast<Event*>(a);
    auto* e2 = static_cast<Event*>(b);
    TORCH_CHECK(e1 != nullptr && e2 != nullptr && e1->recorded && e2->recorded,
                "spyre: elapsed_time needs two recorded events");
    return (e2->time - e1->time) * 1000.0;  // milliseconds, as torch.Event.elapsed_time gives
  }
};

C10_REGISTER_GUARD_IMPL(PrivateUse1, GuardImpl);

// ------------------------------------------------------------------------------ hooks

struct Hooks final : public at::PrivateUse1HooksInterface {
  bool isBuilt() const override {
    return true;
  }
  bool isAvailable() const override {
    return true;
  }
  bool hasPrimaryContext(c10::DeviceIndex) const override {
    return true;
  }
  c10::DeviceIndex deviceCount() const override {
    return 1;
  }
  c10::DeviceIndex getCurrentDevice() const override {
    return 0;
  }
  void setCurrentDevice(c10::DeviceIndex d) const override {
    TORCH_CHECK(d == 0, "spyre: one device (index 0), not ", static_cast<int>(d));
  }
  c10::DeviceIndex exchangeDevice(c10::DeviceIndex d) const override {
    setCurrentDevice(d);
    return 0;
  }
  c10::DeviceIndex maybeExchangeDevice(c10::DeviceIndex d) const override {
    return exchangeDevice(d);
  }
  at::Device getDeviceFromPtr(void*) const override {
    return c10::Device(kSpyre, 0);
  }
  // random numbers come from the host's generator (random ops run on the CPU)
  const at::Generator& getDefaultGenerator(c10::DeviceIndex) const override {
    return at::detail::getDefaultCPUGenerator();
  }
  bool isPinnedPtr(const void*) const override {
    return false;
  }
  c10::Allocator* getPinnedMemoryAllocator() const override {
    // host memory is already where the model's DDR lives: pinned memory is host memory
    return c10::GetCPUAllocator();
  }
  void resizePrivateUse1Bytes(const c10::Storage& storage, size_t newsize) const override {
    TORCH_CHECK(false, "spyre: storages are resized by the device's resize_ kernel, not by bytes");
  }
};

Hooks g_hooks;
struct RegisterHooks {
  RegisterHooks() {
    at::RegisterPrivateUse1HooksInterface(&g_hooks);
  }
};
RegisterHooks g_register_hooks;

// ------------------------------------------------------------------------------ kernels

at::Tensor set_storage(at::Tensor& self, c10::Storage source, c10::SymInt offset, c10::SymIntArrayRef size,
                       c10::SymIntArrayRef stride) {
  auto* impl = self.unsafeGetTensorImpl();
  impl->set_storage_keep_dtype(std::move(source));
  impl->set_sizes_and_strides(size, stride, offset);
  return self;
}

at::Tensor& set_storage_offset(at::Tensor& self, c10::Storage source, c10::SymInt offset, c10::SymIntArrayRef size,
                               c10::SymIntArrayRef stride) {
  set_storage(self, std::move(source), std::move(offset), size, stride);
  return self;
}

at::Tensor& set_source_storage(at::Tensor& self, c10::Storage source) {
  int64_t n = static_cast<int64_t>(source.nbytes() / self.dtype().itemsize());
  std::vector<c10::SymInt> size{c10::SymInt(n)};
  std::vector<c10::SymInt> stride{c10::SymInt(1)};
  set_storage(self, std::move(source), c10::SymInt(0), size, stride);
  return self;
}

at::Tensor& set_source_tensor(at::Tensor& self, const at::Tensor& source) {
  set_storage(self, source.storage(), source.sym_storage_offset(), source.sym_sizes(), source.sym_strides());
  return self;
}

at::Tensor& set_empty(at::Tensor& self) {
  // an empty storage of this device
  auto storage = c10::Storage(c10::Storage::use_byte_size_t(), 0, g_allocator.allocate_block(0, {0}, -1), &g_allocator, true);
  std::vector<c10::SymInt> size{c10::SymInt(0)};
  std::vector<c10::SymInt> stride{c10::SymInt(1)};
  set_storage(self, std::move(storage), c10::SymInt(0), size, stride);
  return self;
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("as_strided", TORCH_FN(at::native::as_strided_tensorimpl));
  m.impl("view", TORCH_FN(at::native::view));
  m.impl("_reshape_alias", TORCH_FN(at::native::_reshape_alias));
  m.impl("set_.source_Storage_storage_offset", TORCH_FN(set_storage_offset));
  m.impl("set_.source_Storage", TORCH_FN(set_source_storage));
  m.impl("set_.source_Tensor", TORCH_FN(set_source_tensor));
  m.impl("set_", TORCH_FN(set_empty));
}

// ------------------------------------------------------------------------------ for Python

at::Tensor empty(std::vector<int64_t> sizes, std::vector<int64_t> strides, at::ScalarType dtype, int64_t accounted,
                 std::vector<int64_t> base) {
  auto itemsize = c10::elementSize(dtype);
  size_t logical = at::detail::computeStorageNbytes(sizes, strides, itemsize);
  auto data = g_allocator.allocate_block(static_cast<size_t>(accounted), std::move(base), static_cast<int64_t>(dtype));
  auto storage = c10::Storage(c10::Storage::use_byte_size_t(), logical, std::move(data), &g_allocator, true);
  auto t = at::detail::make_tensor<c10::TensorImpl>(
      std::move(storage), c10::DispatchKeySet(c10::DispatchKey::PrivateUse1), c10::scalarTypeToTypeMeta(dtype));
  t.unsafeGetTensorImpl()->set_sizes_and_strides(sizes, strides);
  return t;
}

// (accounted bytes, base shape, dtype) of the allocation behind a tensor's storage
py::tuple storage_info(const at::Tensor& t) {
  TORCH_CHECK(t.device().type() == kSpyre, "spyre: not a spyre tensor");
  const void* ptr = t.storage().data_ptr().get();
  Block b;
  if (!g_allocator.find(ptr, b)) {
    return py::make_tuple(0, std::vector<int64_t>{0}, py::none());
  }
  py::object dtype = py::none();
  if (b.dtype >= 0) {
    dtype = py::cast(static_cast<at::ScalarType>(b.dtype));
  }
  return py::make_tuple(b.accounted, b.base, dtype);
}

// the allocation's bytes as a CPU uint8 tensor that keeps the storage alive
at::Tensor raw_bytes(const at::Tensor& t) {
  TORCH_CHECK(t.device().type() == kSpyre, "spyre: not a spyre tensor");
  c10::Storage storage = t.storage();
  void* ptr = storage.mutable_data_ptr().get();
  Block b;
  if (ptr == nullptr || !g_allocator.find(ptr, b)) {
    return at::empty({0}, at::TensorOptions().dtype(at::kByte));
  }
  return at::from_blob(
      ptr, {static_cast<int64_t>(b.physical)}, [storage](void*) mutable { storage = c10::Storage(); },
      at::TensorOptions().dtype(at::kByte));
}

void advance(int64_t stream, double seconds) {
  TORCH_CHECK(seconds >= 0.0, "spyre: a stream's clock only moves forward");
  std::lock_guard<std::mutex> lock(g_clock_mu);
  g_clock[check_stream(stream)] += seconds;
}

double clock(int64_t stream) {
  std::lock_guard<std::mutex> lock(g_clock_mu);
  return g_clock[check_stream(stream)];
}

int64_t current_stream_id() {
  return t_current_stream;
}

}  // namespace spyre

PYBIND11_MODULE(spyre_device_C, m) {
  m.def("empty", &spyre::empty, "a spyre tensor backed by a new allocation");
  m.def("storage_info", &spyre::storage_info);
  m.def("raw_bytes", &spyre::raw_bytes);
  m.def("set_memory_limit", [](size_t n) { spyre::g_allocator.set_limit(n); });
  m.def("memory_limit", []() { return spyre::g_allocator.limit(); });
  m.def("memory_allocated", []() { return spyre::g_allocator.allocated(); });
  m.def("max_memory_allocated", []() { return spyre::g_allocator.peak(); });
  m.def("reset_peak_memory_stats", []() { spyre::g_allocator.resetPeakStats(0); });
  m.def("advance", &spyre::advance, "move a stream's simulated clock forward (seconds)");
  m.def("clock", &spyre::clock, "a stream's simulated clock (seconds)");
  m.def("current_stream_id", &spyre::current_stream_id);
  m.attr("num_streams") = spyre::kStreams;
}
