#include "assembly/doctor_report.h"

#include <chrono>
#include <set>

#include "assembly/model_files.h"
#include "core/paths.h"
#include "model/cuda_plugin.h"
#include "model/llama_runtime.h"
#include "model/model_integrity.h"
#include "model/onnx_session.h"
#include "model/sentence_encoder.h"
#include "platform/cpu_features.h"
#include "platform/gpu_devices.h"
#include "text/loaders/ocr.h"

namespace kotae::assembly {
namespace {

// Models every installation must have, whether or not their folder exists.
const std::set<std::string> kRequiredModels = {"all-minilm-l6-v2", "all-minilm-l6-v2-int8"};

// Each model through the same gate loading uses (model/model_integrity.h), so doctor says "ok" only
// for a model that would load.
nlohmann::json model_entry(const std::filesystem::path& models, const std::string& name,
                           const IntegrityPolicy& policy) {
  const ModelInspection inspection = inspect_model(models, name, policy);
  nlohmann::json entry = verdict_json(inspection);
  entry["path"] = (models / name).string();
  entry["required"] = kRequiredModels.count(name) > 0 || inspection.manifest.required;
  if (!inspection.manifest.name.empty()) {
    entry["kind"] = inspection.manifest.kind;
    entry["precision"] = inspection.manifest.precision;
    entry["sha256"] = inspection.manifest.files.front().sha256;
  } else {
    entry["sha256"] = nullptr;
  }
  return entry;
}

nlohmann::json models_report(const std::filesystem::path& dir, const IntegrityPolicy& policy) {
  std::set<std::string> names = kRequiredModels;
  std::error_code ec;
  for (const auto& child : std::filesystem::directory_iterator(dir, ec)) {
    if (child.is_directory() && std::filesystem::exists(child.path() / "manifest.json")) {
      names.insert(child.path().filename().string());
    }
  }
  nlohmann::json models = nlohmann::json::array();
  for (const auto& name : names) models.push_back(model_entry(dir, name, policy));
  return models;
}

// The native encoder's plugin: where it is and which GPU architectures it was built for.
nlohmann::json cuda_plugin_report(const Result<std::vector<std::string>>& architectures) {
  nlohmann::json report = {{"path", default_cuda_encoder_plugin().string()}};
  if (architectures) {
    report["architectures"] = *architectures;
    report["built_for"] = describe_cuda_architectures(*architectures);
  } else {
    report["error"] = architectures.error().message;
  }
  return report;
}

// Whether the native encoder runs on a GPU, and why not: a GPU the plugin was not built for is named
// with its compute capability, never left to fail at the first request.
nlohmann::json native_encoder_on(const GpuDevice& d, const Result<std::vector<std::string>>& architectures) {
  if (!architectures) return {{"runs", false}, {"reason", architectures.error().message}};
  const std::string built_for = describe_cuda_architectures(*architectures);
  if (cuda_architectures_run_on(*architectures, d.compute_major, d.compute_minor)) {
    return {{"runs", true}, {"reason", "the plugin has code for it (built for " + built_for + ")"}};
  }
  return {{"runs", false},
          {"reason", "compute capability " + std::to_string(d.compute_major) + "." + std::to_string(d.compute_minor) +
                         " is not one the plugin was built for (" + built_for +
                         "): embeddings and reranking run on the CPU"}};
}

nlohmann::json gpu_report() {
  const GpuReport gpus = probe_gpus();
  const auto architectures = cuda_plugin_architectures(default_cuda_encoder_plugin());
  nlohmann::json devices = nlohmann::json::array();
  for (const auto& d : gpus.devices) {
    nlohmann::json mig = nlohmann::json::array();
    for (const auto& m : d.mig_instances) mig.push_back({{"name", m.name}, {"memory_bytes", m.memory_bytes}});
    const PrecisionAdvice advice = advise_precision(d.compute_major, d.compute_minor);
    devices.push_back({{"index", d.index},
                       {"name", d.name},
                       {"pci_bus_id", d.pci_bus_id},
                       {"compute_capability", std::to_string(d.compute_major) + "." + std::to_string(d.compute_minor)},
                       {"multiprocessors", d.multiprocessors},
                       {"memory_bytes", d.memory_bytes},
                       {"memory_bandwidth_gb_s", d.memory_bandwidth_gb_s},
                       {"mig_enabled", d.mig_enabled},
                       {"mig_instances", mig},
                       {"precision",
                        {{"recommended", advice.recommended},
                         {"fp16", advice.fp16},
                         {"int8", advice.int8},
                         {"reason", advice.reason}}},
                       {"native_encoder", native_encoder_on(d, architectures)}});
  }
  return {{"present", gpus.present},
          {"driver_version", gpus.driver_version},
          {"devices", devices},
          {"note", gpus.note},
          {"cuda_plugin", cuda_plugin_report(architectures)}};
}

// Loads the default embedding model with every provider in priority order, to show which one this
// machine would run it on.
nlohmann::json inference_report(const std::filesystem::path& dir) {
  EncoderOptions options;
  options.session.providers = {"tensorrt", "cuda", "cpu"};
  const auto start = std::chrono::steady_clock::now();
  auto encoder = SentenceEncoder::load(dir / kDefaultEmbeddingModel, options);
  if (!encoder) return {{"model", kDefaultEmbeddingModel}, {"error", encoder.error().message}};
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return {{"model", kDefaultEmbeddingModel},
          {"priority", options.session.providers},
          {"provider", (*encoder)->provider()},
          {"skipped", (*encoder)->skipped_providers()},
          {"load_and_warm_up_ms", ms}};
}

}  // namespace

nlohmann::json doctor_report(const std::filesystem::path& data_dir) {
  const CpuFeatures cpu = detect_cpu_features();
  const LlamaBuildInfo& llama = llama_build_info();
  nlohmann::json report;
  report["version"] = KOTAE_VERSION;
  report["cpu"] = {
      {"vendor", cpu.vendor}, {"brand", cpu.brand}, {"logical_cores", cpu.logical_cores}, {"features", cpu.names()}};
  report["onnxruntime"] = {{"version", onnxruntime_version()}, {"providers", onnxruntime_providers()}};
  report["llama_cpp"] = {{"version", llama.version},
                         {"ggml_version", llama.ggml_version},
                         {"commit", llama.ggml_commit},
                         {"backends", llama.backends},
                         {"devices", llama.devices},
                         {"backend_dir", llama.backend_dir},
                         {"gpu_offload", llama.gpu_offload},
                         {"cpu_features", llama.cpu_features},
                         {"cpu_weight_layouts", llama.cpu_weight_layouts},
                         {"amx", llama.uses_amx()}};
  const text::OcrInfo ocr = text::ocr_info();
  report["ocr"] = {
      {"engine", ocr.engine}, {"version", ocr.version}, {"data_path", ocr.data_path}, {"languages", ocr.languages}};
  report["gpu"] = gpu_report();
  report["data_dir"] = data_dir.string();
  report["models_dir"] = models_dir(data_dir).string();
  auto policy = integrity_policy(data_dir);
  bool ok = policy.ok();
  if (policy) {
    nlohmann::json keys = nlohmann::json::array();
    for (const auto& k : policy->trusted_keys) keys.push_back({{"id", k.id}, {"file", k.origin}});
    report["signatures"] = {{"required", !policy->trusted_keys.empty()},
                            {"trusted_keys", keys},
                            {"max_file_bytes", policy->max_file_bytes}};
  } else {
    report["signatures"] = {{"error", policy.error().message}};
  }
  report["models"] = policy ? models_report(models_dir(data_dir), *policy) : nlohmann::json::array();
  for (const auto& m : report["models"]) {
    if (m["required"].get<bool>() && !m["ok"].get<bool>()) ok = false;
  }
  report["inference"] =
      ok ? inference_report(models_dir(data_dir)) : nlohmann::json{{"error", "required models do not verify"}};
  report["ok"] = ok;
  return report;
}

}  // namespace kotae::assembly
