#include "topology/sysfs_dir.hpp"

#include <dirent.h>
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>

#include <algorithm>

namespace ioprobe {

std::vector<std::string> list_dir(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = opendir(dir.c_str());
  if (!d) return out;
  while (dirent* e = readdir(d)) {
    std::string n = e->d_name;
    if (n != "." && n != "..") out.push_back(n);
  }
  closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

std::string read_sysfs_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  const size_t b = line.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  return line.substr(b, line.find_last_not_of(" \t\r\n") - b + 1);
}

long read_sysfs_long(const std::string& path, long fallback) {
  const std::string s = read_sysfs_line(path);
  char* end = nullptr;
  const long v = std::strtol(s.c_str(), &end, 10);
  return end == s.c_str() ? fallback : v;
}

bool sysfs_exists(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0;
}

std::string sysfs_resolve(const std::string& path) {
  char* r = realpath(path.c_str(), nullptr);
  if (!r) return "";
  std::string out = r;
  free(r);
  return out;
}

}  // namespace ioprobe
