// The I/O engine interface, after fio's engine table (fio ioengines.h): one mechanism per file
// behind one small interface, and typed capability flags the caller checks instead of asking
// which engine it has.
//
// Life cycle: setup(fd, options) -> { prep(slot) -> queue(slot) ... commit() -> reap() }* -> teardown().
// Requests live in index-stable slots 0 .. depth()-1. A slot's index is also its fixed-buffer
// index (io_uring registered buffers) and its user_data, so no lookup happens on completion.
// Each slot owns one buffer of `buffer_bytes`, aligned to kDirectAlign for O_DIRECT.
//
// Hot path (prep, queue, commit, reap) never throws and returns negative errno like liburing;
// setup() throws IoError (a boundary: it names the errno, the operation and a hint).
// An engine belongs to one thread (io_uring rings are created with SINGLE_ISSUER).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/io_memory.hpp"
#include "engine/engine_kind.hpp"

namespace ioprobe {

/// Buffer, offset and length alignment used for O_DIRECT (bytes). 4096 covers 512-byte and
/// 4Kn devices alike; the page size on x86-64 and most arm64 kernels.
constexpr uint32_t kDirectAlign = 4096;

/// Direction of one request.
enum class IoDir : uint8_t { read, write };

/// What an engine can do, decided at setup() (requested features may fall back).
struct EngineCaps {
  bool async = false;              // more than one request in flight per engine (queue depth > 1)
  bool fixed_buffers = false;      // slot buffers are registered with the kernel (io_uring)
  bool registered_files = false;   // the fd is registered (io_uring IOSQE_FIXED_FILE)
  bool sqpoll = false;             // a kernel thread polls the submission queue (io_uring SQPOLL)
  unsigned max_depth = 1;          // requests in flight at most
  std::vector<std::string> notes;  // how each feature was decided, e.g. "sqpoll: off (EPERM)"
};

/// What the caller asks for at setup().
struct EngineOptions {
  unsigned depth = 1;            // slots = requests in flight at most (psync: forced to 1)
  uint32_t buffer_bytes = 4096;  // size of each slot's buffer (bytes), the largest request
  unsigned sq_entries = 0;       // submission queue size; 0 = depth. Smaller gives back-pressure.
  bool direct = false;           // the fd was opened with O_DIRECT: prep() enforces alignment
  bool fixed_buffers = true;     // register buffers when the memlock limit allows
  bool register_file = true;     // register the fd
  bool sqpoll = false;           // ask for SQPOLL (needs privileges on older kernels)
};

/// One request slot. `res` is bytes transferred or negative errno once complete.
struct IoSlot {
  void* buf = nullptr;
  uint64_t offset = 0;  // bytes
  uint32_t len = 0;     // bytes
  IoDir dir = IoDir::read;
  bool in_flight = false;
  int64_t start_ns = 0;  // CLOCK_MONOTONIC ns at queue()
  int res = 0;
};

/// One completed request: its slot, the result and its latency (queue() to reap, ns).
struct IoCompletion {
  unsigned slot = 0;
  int res = 0;  // bytes transferred, or negative errno
  uint64_t latency_ns = 0;
};

/// queue() outcome, as fio's FIO_Q_COMPLETED / FIO_Q_QUEUED / FIO_Q_BUSY.
enum class QueueStatus : uint8_t {
  completed,  // done synchronously: slot(i).res and last_latency_ns() hold the result
  queued,     // waits for commit() and reap()
  busy,       // no room now: commit() and reap(), then queue the slot again
};

/// Base of all engines: owns the slots and their aligned buffers.
class Engine {
 public:
  virtual ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  /// Engine name as users type it: "io_uring", "psync".
  virtual const char* name() const = 0;

  /// Prepares the engine for `fd` (opened by the caller, kept open until teardown()).
  /// Allocates the slot buffers. Throws IoError when the mechanism is unavailable.
  virtual void setup(int fd, const EngineOptions& options) = 0;

  /// Releases kernel resources and buffers; setup() may be called again. Idempotent.
  virtual void teardown() = 0;

  /// Capabilities decided at setup().
  const EngineCaps& caps() const { return caps_; }
  unsigned depth() const { return static_cast<unsigned>(slots_.size()); }
  IoSlot& slot(unsigned i) { return slots_[i]; }
  unsigned in_flight() const { return in_flight_; }

  /// Fills slot `i` with a request of `len` bytes at `offset`, using the slot's buffer.
  /// Returns 0, -EINVAL when O_DIRECT alignment is violated (see misalignment()) or when `len`
  /// exceeds the buffer, -EBUSY when the slot is still in flight.
  int prep(unsigned i, IoDir dir, uint64_t offset, uint32_t len);

  /// Hands the prepared slot `i` to the engine.
  virtual QueueStatus queue(unsigned i) = 0;

  /// Submits everything queued since the last commit. Returns the number submitted or -errno.
  virtual int commit() = 0;

  /// Waits until at least `min_complete` requests completed (0 = do not wait), then stores up to
  /// `max` completions in `out`. Returns the number stored or -errno (-EINTR on a signal).
  virtual int reap(IoCompletion* out, unsigned max, unsigned min_complete) = 0;

  /// commit() and reap() in one step; io_uring does both in one system call.
  virtual int commit_and_reap(IoCompletion* out, unsigned max, unsigned min_complete);

  /// Latency (ns) of the last request that queue() completed synchronously.
  uint64_t last_latency_ns() const { return last_latency_ns_; }

  /// Why a request would be rejected under O_DIRECT, or "" when it is aligned. Cold path.
  std::string misalignment(uint64_t offset, uint32_t len) const;

 protected:
  Engine() = default;
  void allocate_slots(unsigned depth, uint32_t buffer_bytes, const char* path_for_errors);
  void free_slots();
  size_t buffer_stride() const { return stride_; }

  EngineCaps caps_;
  EngineOptions options_;
  std::vector<IoSlot> slots_;
  unsigned in_flight_ = 0;
  uint64_t last_latency_ns_ = 0;

 private:
  IoMemory mem_;  // owns buffers_
  void* buffers_ = nullptr;
  size_t stride_ = 0;
  size_t mapped_bytes_ = 0;
};

/// io_uring engine (uring_engine.cpp). Throws IoError at setup() when io_uring is unavailable.
std::unique_ptr<Engine> make_uring_engine();
/// psync engine (pread_engine.cpp): pread/pwrite, one request at a time.
std::unique_ptr<Engine> make_pread_engine();
/// The engine of kind `kind`.
std::unique_ptr<Engine> make_engine(EngineKind kind);

}  // namespace ioprobe
