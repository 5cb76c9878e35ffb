#pragma once
// ggml's back-ends from the folder of the libggml this process loaded: the prebuilt libraries keep
// their CPU back-end's variants there (loaded at run time); a build with its back-ends linked in has
// them registered already and loads nothing more.

#include <dlfcn.h>

#include <string>

#include "ggml-backend.h"

inline void load_ggml_backends() {
  Dl_info where{};
  std::string folder;
  if (dladdr(reinterpret_cast<void*>(&ggml_backend_load_all_from_path), &where) != 0 && where.dli_fname) {
    folder = where.dli_fname;
    folder.resize(folder.rfind('/') == std::string::npos ? 0 : folder.rfind('/'));
  }
  ggml_backend_load_all_from_path(folder.empty() ? nullptr : folder.c_str());
}
