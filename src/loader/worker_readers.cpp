#include "loader/worker_readers.hpp"

namespace ioprobe {

WorkerRangeReaders::WorkerRangeReaders(const SourceEnv& env) : env_(&env), readers_(env.cfg->num_workers) {
  fetch_env_.dirfd = env.dirfd;
  fetch_env_.index = env.index;
  fetch_env_.layout = env.layout;
  fetch_env_.read_size = env.cfg->read_size;
  fetch_env_.on_error = env.on_error;
}

void WorkerRangeReaders::init_worker(uint32_t w) {
  readers_[w] = make_range_reader(env_->cfg->engine, env_->cfg->direct);
}

}  // namespace ioprobe
