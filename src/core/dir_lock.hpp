// One writer or many readers per directory ioprobe writes into (a dataset, a checkpoint
// directory), across processes and, where the filesystem supports flock(2), across hosts.
//
// The lock is flock(2) on "DIR/.ioprobe-lock". Its holder (PID, host, command line, time) is
// written into that file when taken exclusively, so that a process that has to wait can say who
// it waits for (without it, two `gen` into one --dir regenerate the set under each other, and two
// `checkpoint` runs measure each other's I/O).
// The file is removed by the last holder to leave (checked under an exclusive lock, and a taker
// checks that the file it locked is still the one in the directory).
#pragma once

#include <functional>
#include <string>

namespace ioprobe {

/// The name of the lock file inside a locked directory (listings skip it as ioprobe's own).
constexpr const char* kDirLockName = ".ioprobe-lock";

class DirLock {
 public:
  enum class Mode { kExclusive, kShared };

  /// Takes the lock on existing directory `dir` in `mode`, waiting while another process holds a
  /// conflicting one. `on_wait` is called once, before waiting, with a sentence naming the holder
  /// (e.g. "PID 4242 on host 'n1' ('ioprobe gen --dir d', since 2026-12-01 20:30:02 UTC)").
  /// `purpose` is recorded as the holder's command; "" records this process's command line.
  /// Where this process may not write `dir`, an existing lock file is locked read-only.
  /// Throws IoError when the lock file cannot be created or locked (EACCES, EROFS: `dir` is not
  /// writable and holds no lock file; ENOENT: the directory was
  /// removed, e.g. by the holder that had created it, while this one waited), and Error with the signal's
  /// exit code (130 / 143) when SIGINT or SIGTERM arrives while waiting.
  DirLock(const std::string& dir, Mode mode, const std::string& purpose,
          const std::function<void(const std::string& holder)>& on_wait);
  ~DirLock();
  DirLock(const DirLock&) = delete;
  DirLock& operator=(const DirLock&) = delete;

  /// Turns an exclusive lock into a shared one (writing done, readers may join). flock(2) does
  /// not promise the conversion is atomic, so the caller re-checks what the lock guards.
  /// No-op when already shared.
  void downgrade();

  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
  Mode mode_;
};

}  // namespace ioprobe
