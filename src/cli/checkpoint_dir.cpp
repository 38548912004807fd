#include "cli/checkpoint_dir.hpp"

#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <system_error>

#include <fmt/format.h>

#include "checkpoint/saver.hpp"
#include "cli/checkpoint_cluster_steps.hpp"
#include "cli/checkpoint_preflight.hpp"
#include "cli/options.hpp"
#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/text.hpp"

namespace ioprobe::cli {

using namespace checkpoint;

CheckpointDir::CheckpointDir(const std::string& dir, const StateSpec& state, const std::string& json_path,
                             CheckpointJob& job)
    : dir_(dir) {
  try {
    std::error_code ec;
    job.create_in_turn([&] {
      if (!std::filesystem::exists(dir, ec)) {
        std::vector<std::string> made;
        for (std::filesystem::path p = std::filesystem::absolute(dir, ec);
             !p.empty() && p != p.parent_path() && !std::filesystem::exists(p, ec); p = p.parent_path())
          made.push_back(p.string());
        if (!std::filesystem::create_directories(dir, ec)) {
          if (ec || !std::filesystem::is_directory(dir, ec))
            throw UsageError(fmt::format("--dir '{}' cannot be created: {}; give --dir a writable directory",
                                         escape_bytes(dir), ec ? ec.message() : "it exists and is not a directory"));
          made.clear();  // another process made it at the same moment: not ours to remove
        }
        made_ = std::move(made);
      } else if (!std::filesystem::is_directory(dir, ec)) {
        throw UsageError(fmt::format("--dir '{}' exists and is not a directory; give a directory (created if missing)",
                                     escape_bytes(dir)));
      }
    });
    if (::access(dir.c_str(), W_OK) != 0) {
      const int e = errno;
      throw UsageError(fmt::format("--dir '{}' is not writable: {}; choose a --dir you may write to", escape_bytes(dir),
                                   errno_text(e)));
    }
    check_can_create_in(dir, "--dir");  // /proc passes access(W_OK) as root; the state is not built yet
    job.detect_dir_placement(dir);
    if (job.locks_dir()) {  // waits for another run there
      bool remade = false;
      lock_checkpoint_dir(dir, lock_, made_, remade);
    }
    for (const auto& r : state.ranks)
      if (std::filesystem::exists(shard_path(dir, r.rank), ec))
        throw UsageError(
            fmt::format("'{}' already exists; ioprobe never overwrites files: remove it or choose another --dir",
                        escape_bytes(shard_path(dir, r.rank))));
    if (!json_path.empty()) {
      // After --dir exists, so that the document may go inside a --dir this run creates.
      check_output_path(json_path, "--json", "checkpoint");
      const auto json_abs = std::filesystem::weakly_canonical(json_path, ec);
      for (const auto& r : state.ranks)
        if (json_abs == std::filesystem::weakly_canonical(shard_path(dir, r.rank), ec))
          throw UsageError(
              fmt::format("--json '{}' is where rank {}'s shard goes; give the result document another name",
                          escape_bytes(json_path), r.rank));
    }
  } catch (...) {
    remove_made();
    throw;
  }
}

CheckpointDir::~CheckpointDir() { remove_made(); }

void CheckpointDir::remove_made() {
  lock_.reset();  // its lock file would keep the directory from being empty
  for (const auto& m : made_)
    if (::rmdir(m.c_str()) != 0) break;  // only empty ones go; a parent of a kept one stays
  made_.clear();
}

CheckpointDir::Made CheckpointDir::finish(bool keep, const std::string& json_path) {
  lock_.reset();
  Made made{made_, 0};
  if (keep || made_.empty()) return made;
  // Not the directory the result document is about to be written into, nor those above it
  // (made_ runs deepest first).
  std::error_code ec;
  const std::string json_dir = json_path.empty()
                                   ? std::string()
                                   : std::filesystem::absolute(json_path, ec).parent_path().lexically_normal().string();
  for (const auto& m : made_) {
    if (std::filesystem::path(m).lexically_normal().string() == json_dir || ::rmdir(m.c_str()) != 0) break;
    ++made.removed;
  }
  made_.clear();
  return made;
}

}  // namespace ioprobe::cli
