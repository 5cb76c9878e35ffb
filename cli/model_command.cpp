#include "cli/model_command.h"

#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "assembly/model_files.h"

namespace kotae::cli {
namespace {

int fail(const std::string& message, int code = 2) {
  std::fprintf(stderr, "kotae model: %s\n", message.c_str());
  return code;
}

void print_verdict(const nlohmann::json& r) {
  std::printf("model %s (%s)\n", r["name"].get<std::string>().c_str(), r["path"].get<std::string>().c_str());
  std::string signature;
  if (r["signatures_required"].get<bool>()) {
    signature =
        r["signed_by"].is_null() ? "not verified" : "valid, by trusted key " + r["signed_by"].get<std::string>();
  } else {
    signature = "not required (no trusted keys configured)";
    if (!r["signers"].empty()) {
      signature += "; carries signatures by";
      for (const auto& id : r["signers"]) signature.append(" ").append(id.get<std::string>());
    }
  }
  std::printf("  signature  %s\n", signature.c_str());
  if (const auto& why = r["refused_because"].get_ref<const std::string&>(); !why.empty())
    std::printf("  REFUSED    %s\n", why.c_str());
  for (const auto& f : r["files"]) {
    const auto& problem = f["problem"].get_ref<const std::string&>();
    std::printf("  %-9s  %s%s%s\n", f["status"].get<std::string>().c_str(), f["path"].get<std::string>().c_str(),
                problem.empty() ? "" : "  ", problem.c_str());
  }
  std::printf("%s\n", r["ok"].get<bool>() ? "verified: every check passed" : "refused: this model will not be loaded");
}

}  // namespace

int run_model_keygen(const ModelCommandOptions& o) {
  if (o.out.empty()) return fail("--out PREFIX is needed");
  const std::string comment = o.comment.empty() ? o.out.filename().string() : o.comment;
  auto id = assembly::make_signing_key(o.out, comment);
  if (!id) return fail(id.error().message);
  std::printf("key %s\n  secret  %s.key (keep it private; mode 0600)\n  public  %s.pub\n", id->c_str(),
              o.out.string().c_str(), o.out.string().c_str());
  std::printf("To trust it: copy %s.pub into %s (or list it in KOTAE_TRUSTED_KEYS).\n", o.out.string().c_str(),
              assembly::trusted_keys_folder(o.data_dir).string().c_str());
  return 0;
}

int run_model_sign(const ModelCommandOptions& o) {
  auto signing = assembly::sign_model(o.data_dir, o.name, o.key);
  if (!signing) return fail(signing.error().message);
  if (!signing->signed_now) {
    print_verdict(signing->verdict);
    return fail("model " + o.name + " does not verify; it is not signed", 1);
  }
  std::printf("signed %s with key %s (%s)\n", o.name.c_str(), signing->key_id.c_str(),
              signing->manifest.string().c_str());
  if (!signing->key_trusted) {
    std::printf(
        "note: key %s is not trusted on this machine; signatures are only required once a key is "
        "(copy its .pub into %s)\n",
        signing->key_id.c_str(), assembly::trusted_keys_folder(o.data_dir).string().c_str());
  }
  return 0;
}

int run_model_verify(const ModelCommandOptions& o) {
  auto verdict = assembly::model_verdict(o.data_dir, o.name);
  if (!verdict) return fail(verdict.error().message);
  if (o.json) {
    std::cout << verdict->dump() << "\n";
  } else {
    print_verdict(*verdict);
  }
  return (*verdict)["ok"].get<bool>() ? 0 : 1;
}

int run_model_add(const ModelCommandOptions& o) {
  auto added = assembly::add_gguf_model(o.data_dir, o.name, o.file, o.description);
  if (!added) return fail(added.error().message);
  std::printf("added %s (%s, %ju bytes, sha256 %s)\nUse it: kotae ask QUESTION -c COLLECTION --model %s\n",
              o.name.c_str(), added->file.string().c_str(), static_cast<std::uintmax_t>(added->size),
              added->sha256.c_str(), o.name.c_str());
  return 0;
}

}  // namespace kotae::cli
