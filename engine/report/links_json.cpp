#include "engine/report/links_json.hpp"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "engine/common/version.hpp"
#include "engine/report/json_text.hpp"
#include "engine/report/text_file.hpp"

namespace simumax::report {

std::string links_json(const executor::Timeline& tl) {
  std::string out = "{\n  \"schema\": \"simumax_sim_links_v1\",\n  \"version\": ";
  append_quoted(out, common::version());
  out += ",\n  \"makespan_s\": ";
  append_double(out, tl.makespan);
  out += ",\n  \"utilisation\": \"bytes / (bandwidth_bytes_per_s x makespan_s)\",\n  \"series_bucket_s\": ";
  append_double(out, tl.link_bucket_seconds);
  out += ",\n  \"series\": \"the busiest links: busy_series = fraction of each bucket with a flow on the link, "
         "utilisation_series = bytes carried in the bucket / (bandwidth_bytes_per_s x series_bucket_s), each flow's "
         "bytes spread evenly over its life\",\n  \"links\": [";
  for (size_t i = 0; i < tl.links.size(); ++i) {
    const executor::LinkUsage& l = tl.links[i];
    out += i == 0 ? "\n    {\"name\": " : ",\n    {\"name\": ";
    append_quoted(out, l.name);
    out += ", \"bandwidth_bytes_per_s\": ";
    append_double(out, l.bandwidth_bytes_per_s);
    out += ", \"bytes\": ";
    append_double(out, l.bytes);
    out += ", \"flows\": ";
    append_int(out, static_cast<int64_t>(l.flows));
    out += ", \"busy_s\": ";
    append_double(out, l.busy_seconds);
    out += ", \"busy_fraction\": ";
    append_double(out, tl.makespan > 0 ? l.busy_seconds / tl.makespan : 0);
    out += ", \"utilisation\": ";
    append_double(out, l.utilisation);
    for (const auto& [key, series] : {std::pair{"busy_series", &l.busy_series},
                                      std::pair{"utilisation_series", &l.utilisation_series}}) {
      if (series->empty()) continue;
      out += std::string(", \"") + key + "\": [";
      for (size_t b = 0; b < series->size(); ++b) {
        if (b) out += ", ";
        append_double(out, (*series)[b]);
      }
      out += "]";
    }
    out += "}";
  }
  out += tl.links.empty() ? "]\n}\n" : "\n  ]\n}\n";
  return out;
}

std::string write_links_json(const std::string& dir, const executor::Timeline& tl) {
  const std::string path = dir + "/links.json";
  write_file_atomically(path, links_json(tl));
  return path;
}

std::string busiest_links_table(const executor::Timeline& tl, size_t count) {
  if (tl.links.empty()) return "";
  std::string out = "\nbusiest links (" + std::to_string(std::min(count, tl.links.size())) + " of " +
                    std::to_string(tl.links.size()) + " used; utilisation = bytes / (bandwidth x step time)):\n";
  char line[256];
  std::snprintf(line, sizeof line, "  %-32s %11s %8s %12s %12s\n", "link", "utilisation", "busy", "GB carried",
                "GiB/s");
  out += line;
  for (size_t i = 0; i < count && i < tl.links.size(); ++i) {
    const executor::LinkUsage& l = tl.links[i];
    std::snprintf(line, sizeof line, "  %-32s %10.1f%% %7.1f%% %12.3f %12.2f\n", l.name.c_str(), 100 * l.utilisation,
                  tl.makespan > 0 ? 100 * l.busy_seconds / tl.makespan : 0.0, l.bytes / 1e9,
                  l.bandwidth_bytes_per_s / (1024.0 * 1024.0 * 1024.0));
    out += line;
  }
  return out;
}

}  // namespace simumax::report
