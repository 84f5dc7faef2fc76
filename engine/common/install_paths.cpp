#include "engine/common/install_paths.hpp"

#include <dlfcn.h>
#include <link.h>

#include <cstdlib>
#include <string>

#include "engine/common/error.hpp"

namespace simumax::common {

namespace fs = std::filesystem;

namespace {

// The shared object this function was linked into, or empty when it is the main program (whose link map has
// an empty name; dladdr would give argv[0], which is relative to a folder the process may have left).
fs::path this_shared_object() {
  Dl_info info{};
  link_map* map = nullptr;
  if (dladdr1(reinterpret_cast<void*>(&this_shared_object), &info, reinterpret_cast<void**>(&map),
              RTLD_DL_LINKMAP) == 0 ||
      map == nullptr || map->l_name == nullptr || map->l_name[0] == '\0') {
    return {};
  }
  std::error_code ec;
  const fs::path p = fs::weakly_canonical(fs::absolute(map->l_name, ec), ec);
  return ec ? fs::path(map->l_name) : p;
}

}  // namespace

fs::path install_root() {
  const fs::path object = this_shared_object();
  if (!object.empty()) return (object.parent_path() / SIMUMAX_MODULE_TO_ROOT).lexically_normal();
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  return exe.parent_path().parent_path();
}

fs::path data_dir() {
  const char* env = std::getenv("SIMUMAX_DATA_DIR");
  const bool from_env = env != nullptr && *env != '\0';
  const fs::path dir = from_env ? fs::path(env) : install_root() / "share" / "simumax-sim";
  std::error_code ec;
  if (!fs::is_regular_file(dir / "data" / "kernel_classes.json", ec)) {
    throw UsageError("simumax-sim's data folder was not found: " + (dir / "data" / "kernel_classes.json").string() +
                     " does not exist (" +
                     (from_env ? std::string("from $SIMUMAX_DATA_DIR")
                               : std::string("looked beside the installed binary; set SIMUMAX_DATA_DIR to the "
                                             "folder holding data/, models/ and platforms/")) +
                     ")");
  }
  return dir;
}

}  // namespace simumax::common
