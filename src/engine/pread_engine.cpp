// psync engine: pread(2)/pwrite(2), one request at a time, completed inside queue().
// The fastest path for data already in memory (page cache, tmpfs): one system call and one copy,
// with no ring or worker-thread hand-off.
#include <unistd.h>

#include <cerrno>

#include "core/clock.hpp"
#include "engine/engine.hpp"

namespace ioprobe {

namespace {

class PreadEngine final : public Engine {
 public:
  ~PreadEngine() override { teardown(); }
  const char* name() const override { return "psync"; }

  void setup(int fd, const EngineOptions& options) override {
    teardown();
    fd_ = fd;
    options_ = options;
    options_.depth = 1;
    caps_ = EngineCaps{};
    caps_.max_depth = 1;
    if (options.depth > 1) caps_.notes.emplace_back("psync is synchronous: queue depth 1 per job");
    allocate_slots(1, options.buffer_bytes, "psync engine");
  }

  void teardown() override {
    free_slots();
    fd_ = -1;
  }

  QueueStatus queue(unsigned i) override {
    IoSlot& s = slots_[i];
    int64_t t0 = now_ns();
    ssize_t n = s.dir == IoDir::read ? pread(fd_, s.buf, s.len, static_cast<off_t>(s.offset))
                                     : pwrite(fd_, s.buf, s.len, static_cast<off_t>(s.offset));
    int64_t t1 = now_ns();
    s.res = n < 0 ? -errno : static_cast<int>(n);
    s.start_ns = t0;
    last_latency_ns_ = static_cast<uint64_t>(t1 - t0);
    return QueueStatus::completed;
  }

  int commit() override { return 0; }
  int reap(IoCompletion*, unsigned, unsigned) override { return 0; }

 private:
  int fd_ = -1;
};

}  // namespace

std::unique_ptr<Engine> make_pread_engine() { return std::make_unique<PreadEngine>(); }

}  // namespace ioprobe
