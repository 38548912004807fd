#include "loader/pin_stage.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <utility>

#include "core/clock.hpp"

namespace ioprobe {

namespace {

// How many pinned batches may wait for the training loop (PyTorch's pin thread is ahead by the
// batches the workers have ready; two keeps the copy overlapped with the step).
constexpr size_t kReadyDepth = 2;

void unmap(char* p, uint64_t n) {
  if (p) munmap(p, n);
}

}  // namespace

PinStage::PinStage(PrefetchQueue& queue, double bytes_per_batch, uint32_t batch_size, std::function<bool()> stop)
    : queue_(queue), bytes_per_batch_(bytes_per_batch), batch_size_(batch_size), stop_(std::move(stop)) {}

PinStage::~PinStage() {
  end_epoch();
  unmap(src_, cap_);
  if (dst_ && locked_) munlock(dst_, cap_);
  unmap(dst_, cap_);
}

void PinStage::start_epoch() {
  std::lock_guard<std::mutex> g(mu_);
  ready_.clear();
  done_ = quit_ = false;
  thread_ = std::thread([this] { loop(); });
}

void PinStage::end_epoch() {
  {
    std::lock_guard<std::mutex> g(mu_);
    quit_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::optional<Batch> PinStage::next() {
  std::unique_lock<std::mutex> lk(mu_);
  for (;;) {
    if (!ready_.empty()) {
      Batch r = std::move(ready_.front());
      ready_.pop_front();
      cv_.notify_all();
      return r;
    }
    if (done_) return std::nullopt;
    if (stop_()) return std::nullopt;
    cv_.wait_for(lk, std::chrono::milliseconds(50));
  }
}

bool PinStage::reserve(uint64_t bytes) {
  if (bytes > cap_) {
    unmap(src_, cap_);
    if (dst_ && locked_) munlock(dst_, cap_);
    unmap(dst_, cap_);
    src_ = dst_ = nullptr;
    cap_ = bytes;
    void* s = mmap(nullptr, cap_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    void* d = mmap(nullptr, cap_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (s == MAP_FAILED || d == MAP_FAILED) {  // no memory: nothing to pin into; count no copy
      if (s != MAP_FAILED) munmap(s, cap_);
      if (d != MAP_FAILED) munmap(d, cap_);
      cap_ = 0;
      return false;
    }
    src_ = static_cast<char*>(s);
    dst_ = static_cast<char*>(d);
    std::memset(src_, 0x5a, cap_);
    if (locked_ && mlock(dst_, cap_) != 0) locked_ = false;
  }
  return true;
}

void PinStage::copy(uint64_t bytes) {
  if (bytes == 0 || bytes > cap_) return;
  std::memcpy(dst_, src_, bytes);
}

void PinStage::loop() {
  auto should_stop = [this] {
    {
      std::lock_guard<std::mutex> g(mu_);
      if (quit_) return true;
    }
    return stop_();
  };
  bool exhausted = false;
  for (;;) {
    std::optional<Batch> r = queue_.next(should_stop);
    if (!r) {
      exhausted = !should_stop();
      break;
    }
    const double share = batch_size_ ? std::min(1.0, static_cast<double>(r->samples) / batch_size_) : 1.0;
    const uint64_t bytes = bytes_per_batch_ > 0 ? static_cast<uint64_t>(bytes_per_batch_ * share) : r->bytes;
    const int64_t g0 = now_ns();
    reserve(bytes);  // not the copy's cost: measured apart (setup_ns)
    const int64_t t0 = now_ns(), c0 = thread_cpu_ns();
    setup_ns_ += t0 - g0;
    copy(bytes);
    busy_ns_ += now_ns() - t0;
    cpu_ns_ += thread_cpu_ns() - c0;
    ++batches_;
    bytes_ += bytes;
    std::unique_lock<std::mutex> lk(mu_);
    cv_.wait(lk, [this] { return ready_.size() < kReadyDepth || quit_; });
    if (quit_) break;
    ready_.push_back(std::move(*r));
    cv_.notify_all();
  }
  if (!exhausted) queue_.cancel();  // stopped: no read in flight when the epoch ends
  {
    std::lock_guard<std::mutex> g(mu_);
    done_ = true;
  }
  cv_.notify_all();
}

}  // namespace ioprobe
