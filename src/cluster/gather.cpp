#include "cluster/gather.hpp"

#include <fmt/format.h>

namespace ioprobe::cluster {

void throw_unreadable_part(int rank, const char* step, const std::string& why) {
  throw Error(fmt::format("rank {} sent a part rank 0 cannot read ({}: {}): run the same ioprobe build on every host",
                          rank, step, why),
              kExitFailure);
}

}  // namespace ioprobe::cluster
