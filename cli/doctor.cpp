#include "cli/doctor.h"

#include <cstdio>
#include <iostream>

#include "assembly/doctor_report.h"

namespace kotae::cli {
namespace {

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
  const auto& ocr = r["ocr"];
  std::string languages;
  for (const auto& l : ocr["languages"]) languages += l.get<std::string>() + " ";
  std::printf("OCR          %s %s\n  languages  %s(in %s)\n", ocr["engine"].get<std::string>().c_str(),
              ocr["version"].get<std::string>().c_str(), languages.empty() ? "none " : languages.c_str(),
              ocr["data_path"].get<std::string>().c_str());
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
    std::printf("CUDA plugin  built for %s (%s)\n", plugin["built_for"].get<std::string>().c_str(),
                plugin["path"].get<std::string>().c_str());
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

int run_doctor(const std::filesystem::path& data_dir, bool json) {
  const nlohmann::json report = assembly::doctor_report(data_dir);
  if (json) {
    std::cout << report.dump() << "\n";
  } else {
    print_text(report);
  }
  return report["ok"].get<bool>() ? 0 : 1;
}

}  // namespace kotae::cli
