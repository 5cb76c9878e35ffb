#include "cli/doctor.h"

#include <chrono>
#include <cstdio>
#include <iostream>
#include <set>

#include "cli/model_command.h"
#include "core/paths.h"
#include "model/cuda_plugin.h"
#include "model/llama_runtime.h"
#include "model/model_integrity.h"
#include "model/onnx_session.h"
#include "model/sentence_encoder.h"
#include "platform/cpu_features.h"
#include "platform/gpu_devices.h"

namespace kotae::cli {
namespace {

// Models every installation must have, whether or not their folder exists.
const std::set<std::string> kRequiredModels = {"all-minilm-l6-v2", "all-minilm-l6-v2-int8"};

// Each model through the same gate loading uses (model/model_integrity.h), so doctor says "ok" only
// for a model that would load.
nlohmann::json model_entry(const std::filesystem::path& models, const std::string& name,
                           const IntegrityPolicy& policy) {
  const ModelInspection inspection = inspect_model(models, name, policy);
  nlohmann::json entry = inspection_json(inspection);
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

void print_text(const nlohmann::json& r) {
  std::printf("kotae %s\n\n", r["version"].get<std::string>().c_str());
  const auto& cpu = r["cpu"];
  std::printf("CPU          %s (%d logical cores)\n", cpu["brand"].get<std::string>().c_str(),
              cpu["logical_cores"].get<int>());
  std::string features;
  for (const auto& f : cpu["features"]) features += f.get<std::string>() + " ";
  std::printf("  features   %s\n", features.c_str());
  std::string providers;
  for (const auto& p : r["onnxruntime"]["providers"]) providers += p.get<std::string>() + " ";
  std::printf("ONNX Runtime %s\n  providers  %s\n", r["onnxruntime"]["version"].get<std::string>().c_str(),
              providers.c_str());
  const auto& inference = r["inference"];
  if (inference.contains("provider")) {
    std::printf("  embedding  %s runs on %s (loaded and warmed up in %.0f ms)\n",
                inference["model"].get<std::string>().c_str(), inference["provider"].get<std::string>().c_str(),
                inference["load_and_warm_up_ms"].get<double>());
    for (const auto& s : inference["skipped"]) std::printf("             skipped %s\n", s.get<std::string>().c_str());
  }
  const auto& llama = r["llama_cpp"];
  std::string backends;
  for (const auto& b : llama["backends"]) backends += b.get<std::string>() + " ";
  std::printf("llama.cpp    %s (ggml %s)\n  backends   %s\n", llama["version"].get<std::string>().c_str(),
              llama["ggml_version"].get<std::string>().c_str(), backends.c_str());
  std::string kernels;
  bool amx_compiled = false;
  for (const auto& f : llama["cpu_features"]) {
    kernels += f.get<std::string>() + " ";
    amx_compiled = amx_compiled || f == "AMX_INT8";
  }
  std::printf("  CPU kernels %s\n", kernels.c_str());
  std::printf("  AMX        %s\n", llama["amx"].get<bool>() ? "yes: quantised matrices run on AMX tiles"
                                   : amx_compiled           ? "compiled in, but the kernel did not grant the tiles"
                                                            : "no (this CPU has none)");
  std::printf("  GPU offload %s\n", llama["gpu_offload"].get<bool>()
                                        ? "yes: the generator's layers go to the GPU (--gpu-layers)"
                                        : "no (a CPU build; scripts/setup --cuda builds the CUDA back-end)");
  const auto& gpu = r["gpu"];
  if (gpu["present"].get<bool>()) {
    for (const auto& d : gpu["devices"]) {
      std::printf("GPU %d        %s, compute %s, %d SMs, %.1f GiB, %.0f GB/s\n", d["index"].get<int>(),
                  d["name"].get<std::string>().c_str(), d["compute_capability"].get<std::string>().c_str(),
                  d["multiprocessors"].get<int>(), d["memory_bytes"].get<double>() / (1 << 30),
                  d["memory_bandwidth_gb_s"].get<double>());
      std::printf("  precision  %s (%s)\n", d["precision"]["recommended"].get<std::string>().c_str(),
                  d["precision"]["reason"].get<std::string>().c_str());
      std::printf("  encoder    %s: %s\n",
                  d["native_encoder"]["runs"].get<bool>() ? "native CUDA kernels" : "ONNX Runtime",
                  d["native_encoder"]["reason"].get<std::string>().c_str());
      if (d["mig_enabled"].get<bool>()) {
        for (const auto& m : d["mig_instances"]) {
          std::printf("  MIG        %s, %.1f GiB\n", m["name"].get<std::string>().c_str(),
                      m["memory_bytes"].get<double>() / (1 << 30));
        }
      }
    }
  } else {
    std::printf("GPU          none (%s)\n", gpu["note"].get<std::string>().c_str());
  }
  const auto& plugin = gpu["cuda_plugin"];
  if (plugin.contains("architectures")) {
    const std::string built_for = describe_cuda_architectures(plugin["architectures"].get<std::vector<std::string>>());
    std::printf("CUDA plugin  built for %s (%s)\n", built_for.c_str(), plugin["path"].get<std::string>().c_str());
  } else {
    std::printf("CUDA plugin  none (%s)\n", plugin["error"].get<std::string>().c_str());
  }
  const auto& signatures = r["signatures"];
  if (signatures.contains("error")) {
    std::printf("\nSignatures   %s\n", signatures["error"].get<std::string>().c_str());
  } else if (signatures["required"].get<bool>()) {
    std::string ids;
    for (const auto& k : signatures["trusted_keys"]) ids.append(" ").append(k["id"].get<std::string>());
    std::printf("\nSignatures   required, by one of the trusted keys%s\n", ids.c_str());
  } else {
    std::printf("\nSignatures   not required (no trusted keys in %s/trusted_keys or KOTAE_TRUSTED_KEYS)\n",
                r["data_dir"].get<std::string>().c_str());
  }
  std::printf("\nModels in %s\n", r["models_dir"].get<std::string>().c_str());
  for (const auto& m : r["models"]) {
    std::printf("  %-8s %-26s %s%s\n", m["status"].get<std::string>().c_str(), m["name"].get<std::string>().c_str(),
                m["required"].get<bool>() ? "required" : "optional",
                m.contains("error") ? ("  (" + m["error"].get<std::string>() + ")").c_str() : "");
  }
  std::printf("\n%s\n", r["ok"].get<bool>() ? "All required models verified."
                                            : "Some required models are missing or corrupt: run scripts/setup.");
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

int run_doctor(const std::filesystem::path& data_dir, bool json) {
  const nlohmann::json report = doctor_report(data_dir);
  if (json) {
    std::cout << report.dump() << "\n";
  } else {
    print_text(report);
  }
  return report["ok"].get<bool>() ? 0 : 1;
}

}  // namespace kotae::cli
