#pragma once
// The kotae_gpu_* metrics: utilisation, memory in use and total, and temperature per GPU, in the text
// format, one series per GPU labelled by its index, name and UUID. /metrics appends them where NVML
// lists a GPU (platform/gpu_telemetry); without one there are none.

#include <string>
#include <vector>

#include "platform/gpu_telemetry.h"

namespace kotae::server {

std::string gpu_metrics_text(const std::vector<GpuSample>& gpus);

}  // namespace kotae::server
