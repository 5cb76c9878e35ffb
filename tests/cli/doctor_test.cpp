// Runs the real kotae binary, as a user would, and reads its JSON.

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/paths.h"
#include "support/test_data.h"

namespace kotae {
namespace {

struct CommandResult {
  int exit_code = -1;
  std::string out;
};

CommandResult run_kotae(const std::string& args) {
  CommandResult run;
  FILE* pipe = popen((std::string(KOTAE_BINARY) + " " + args + " 2>/dev/null").c_str(), "r");
  if (!pipe) return run;
  std::array<char, 4096> buffer;
  while (size_t n = fread(buffer.data(), 1, buffer.size(), pipe)) run.out.append(buffer.data(), n);
  const int status = pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

const nlohmann::json* find_model(const nlohmann::json& report, const std::string& name) {
  for (const auto& m : report["models"]) {
    if (m["name"] == name) return &m;
  }
  return nullptr;
}

TEST(KotaeBinary, PrintsItsVersion) {
  const CommandResult run = run_kotae("--version");
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_EQ(run.out, std::string("kotae ") + KOTAE_VERSION + "\n");
}

TEST(KotaeDoctor, ReportsLibrariesHardwareAndVerifiedModels) {
  const CommandResult run = run_kotae("doctor --json --data " + default_data_dir().string());
  ASSERT_EQ(run.exit_code, 0) << run.out;
  const auto report = nlohmann::json::parse(run.out);
  EXPECT_EQ(report["onnxruntime"]["version"], "1.29.0");
  const auto& providers = report["onnxruntime"]["providers"];
  EXPECT_NE(std::find(providers.begin(), providers.end(), "CPUExecutionProvider"), providers.end());
  EXPECT_FALSE(report["llama_cpp"]["version"].get<std::string>().empty());
  const auto& backends = report["llama_cpp"]["backends"];
  EXPECT_NE(std::find(backends.begin(), backends.end(), "CPU"), backends.end());
  EXPECT_TRUE(report["cpu"]["features"].is_array());
  // OCR: Debian's Tesseract 5 and the English model scripts/setup installs.
  EXPECT_EQ(report["ocr"]["engine"], "Tesseract");
  EXPECT_TRUE(report["ocr"]["version"].get<std::string>().starts_with("5.")) << report["ocr"];
  const auto& languages = report["ocr"]["languages"];
  EXPECT_NE(std::find(languages.begin(), languages.end(), "eng"), languages.end()) << report["ocr"];
  EXPECT_TRUE(report["gpu"]["present"].is_boolean());
  EXPECT_EQ(report["gpu"]["present"].get<bool>(), !report["gpu"]["devices"].empty());
  // The native encoder's plugin (built wherever setup's nvcc is) names its architectures, Turing's too;
  // each GPU says whether the plugin runs on it.
  const auto& plugin = report["gpu"]["cuda_plugin"];
  if (std::filesystem::exists(plugin["path"].get<std::string>())) {
    ASSERT_TRUE(plugin.contains("architectures")) << plugin.dump();
    EXPECT_EQ(plugin["architectures"].front(), "75") << plugin.dump();
  } else {
    EXPECT_TRUE(plugin.contains("error")) << plugin.dump();
  }
  for (const auto& d : report["gpu"]["devices"]) EXPECT_TRUE(d["native_encoder"]["runs"].is_boolean()) << d.dump();
  for (const char* name : {"all-minilm-l6-v2", "all-minilm-l6-v2-int8"}) {
    const auto* m = find_model(report, name);
    ASSERT_NE(m, nullptr) << name;
    EXPECT_TRUE((*m)["ok"].get<bool>()) << m->dump();
    EXPECT_EQ((*m)["sha256"].get<std::string>().size(), 64u);
  }
  EXPECT_TRUE(report["ok"].get<bool>());
  // Without GPU provider libraries the default model runs on the CPU, and says why.
  // ...and llama.cpp offloads nothing (no GPU, or a CPU build: scripts/setup --cuda builds the other).
  if (!report["gpu"]["present"].get<bool>()) {
    EXPECT_EQ(report["inference"]["provider"], "CPUExecutionProvider");
    EXPECT_FALSE(report["llama_cpp"]["gpu_offload"].get<bool>());
  }
  EXPECT_EQ(report["inference"]["priority"].front(), "tensorrt");

  // ggml loads the variant of its CPU back-end built for this processor: its CPU kernels are the CPU's
  // own, and AMX (tiles for quantised matrices) is in use exactly where the CPU has it.
  const auto has = [](const nlohmann::json& list, const char* name) {
    return std::find(list.begin(), list.end(), name) != list.end();
  };
  const auto& cpu = report["cpu"]["features"];
  const auto& ggml = report["llama_cpp"]["cpu_features"];
  ASSERT_TRUE(ggml.is_array());
  EXPECT_EQ(has(ggml, "AVX2"), has(cpu, "avx2")) << ggml.dump() << " on " << cpu.dump();
  EXPECT_EQ(has(ggml, "AVX512"), has(cpu, "avx512f")) << ggml.dump() << " on " << cpu.dump();
  EXPECT_EQ(has(ggml, "AVX512_VNNI"), has(cpu, "avx512-vnni")) << ggml.dump() << " on " << cpu.dump();
  EXPECT_EQ(has(ggml, "AMX_INT8"), has(cpu, "amx-int8")) << ggml.dump() << " on " << cpu.dump();
  EXPECT_EQ(report["llama_cpp"]["amx"].get<bool>(), has(cpu, "amx-int8") && has(cpu, "avx512-vnni"));
}

TEST(KotaeDoctor, FailsWhenARequiredModelIsMissingOrCorrupt) {
  const auto data = testing::fresh_temp_dir("kotae-doctor");
  // One required model copied with a damaged tokenizer, the other absent.
  const auto source = testing::model_dir("all-minilm-l6-v2");
  const auto copy = data / "models" / "all-minilm-l6-v2";
  std::filesystem::create_directories(copy);
  std::filesystem::copy_file(source / "manifest.json", copy / "manifest.json");
  std::filesystem::create_symlink(source / "model.onnx", copy / "model.onnx");
  std::ofstream(copy / "tokenizer.json") << "{}";

  const CommandResult run = run_kotae("doctor --json --data " + data.string());
  EXPECT_EQ(run.exit_code, 1);
  const auto report = nlohmann::json::parse(run.out);
  EXPECT_FALSE(report["ok"].get<bool>());
  EXPECT_EQ((*find_model(report, "all-minilm-l6-v2"))["status"], "corrupt");
  EXPECT_EQ((*find_model(report, "all-minilm-l6-v2-int8"))["status"], "missing");
  std::filesystem::remove_all(data);
}

TEST(KotaeEmbed, PrintsAUnitVectorPerText) {
  const CommandResult run = run_kotae("embed --json \"Kotae answers questions about documents.\"");
  ASSERT_EQ(run.exit_code, 0);
  const auto line = nlohmann::json::parse(run.out);
  EXPECT_EQ(line["dimension"], 384);
  EXPECT_NEAR(line["norm"].get<double>(), 1.0, 1e-5);
  EXPECT_EQ(line["embedding"].size(), 384u);
}

}  // namespace
}  // namespace kotae
