// One thread per item, joined before returning, with exceptions carried to the caller: the
// checkpoint's per-rank work (generating state, the raw baseline, restoring) runs this way.
#pragma once

#include <cstddef>
#include <exception>
#include <functional>
#include <thread>
#include <vector>

namespace ioprobe {

/// Runs fn(0) .. fn(n-1), each on a thread of its own, and returns once all have ended. An
/// exception thrown by fn (std::bad_alloc...) is caught on its thread and rethrown here after the
/// join (the lowest index's first). When a thread cannot be started (std::system_error, e.g.
/// EAGAIN at a thread or memory limit) no further ones are started, the started ones run to their
/// end, and that error is rethrown. Never calls std::terminate.
inline void run_threads(size_t n, const std::function<void(size_t)>& fn) {
  std::vector<std::exception_ptr> failed(n);
  std::exception_ptr spawn_failed;
  {
    std::vector<std::jthread> threads;  // joined when this scope ends, whatever happens
    threads.reserve(n);
    for (size_t i = 0; i < n && !spawn_failed; ++i) {
      try {
        threads.emplace_back([&fn, &failed, i] {
          try {
            fn(i);
          } catch (...) {
            failed[i] = std::current_exception();
          }
        });
      } catch (...) {
        spawn_failed = std::current_exception();
      }
    }
  }
  if (spawn_failed) std::rethrow_exception(spawn_failed);
  for (auto& e : failed)
    if (e) std::rethrow_exception(e);
}

}  // namespace ioprobe
