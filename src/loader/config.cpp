#include "loader/config.hpp"

#include <utility>

namespace ioprobe {

LoaderConfig in_job(const LoaderConfig& l, uint32_t processes, uint32_t process) {
  LoaderConfig c = l;
  c.world_ranks = processes * l.ranks;
  c.first_rank = process * l.ranks;
  return c;
}

LoaderConfig with_ranks(const LoaderConfig& l, uint32_t ranks) {
  LoaderConfig c = l;
  c.ranks = ranks;
  return c;
}

LoaderConfig with_num_workers(const LoaderConfig& l, uint32_t num_workers) {
  LoaderConfig c = l;
  c.num_workers = num_workers;
  return c;
}

LoaderConfig with_epoch_mark(const LoaderConfig& l, std::function<void()> mark) {
  LoaderConfig c = l;
  c.epoch_mark = std::move(mark);
  return c;
}

}  // namespace ioprobe
