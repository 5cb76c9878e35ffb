// The GPU benchmark's device report: what `kotae doctor --json` says of GPUs, as one JSON line, from a
// program built with nothing but a C++ compiler (the GPU machines carry no Kotae dependencies).
#include <cstdio>
#include <string>

#include "platform/gpu_devices.h"

namespace {

std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) >= 0x20) out += c;
  }
  return out + "\"";
}

}  // namespace

int main() {
  const kotae::GpuReport report = kotae::probe_gpus();
  std::printf("{\"name\": \"gpu\", \"present\": %s, \"driver_version\": %d, \"note\": %s, \"devices\": [",
              report.present ? "true" : "false", report.driver_version, quoted(report.note).c_str());
  for (std::size_t i = 0; i < report.devices.size(); ++i) {
    const auto& d = report.devices[i];
    const auto advice = kotae::advise_precision(d.compute_major, d.compute_minor);
    std::printf(
        "%s{\"index\": %d, \"name\": %s, \"compute_capability\": \"%d.%d\", \"multiprocessors\": %d, "
        "\"memory_bytes\": %zu, \"memory_bandwidth_gb_s\": %.1f, \"mig_enabled\": %s, \"mig_instances\": %zu, "
        "\"precision\": %s, \"int8\": %s}",
        i ? ", " : "", d.index, quoted(d.name).c_str(), d.compute_major, d.compute_minor, d.multiprocessors,
        d.memory_bytes, d.memory_bandwidth_gb_s, d.mig_enabled ? "true" : "false", d.mig_instances.size(),
        quoted(advice.recommended).c_str(), advice.int8 ? "true" : "false");
  }
  std::printf("]}\n");
  return 0;
}
