# Third-party libraries. scripts/setup installs the pinned ones into $KOTAE_CACHE/deps; the rest come
# from Debian. Each is wrapped in one imported target so only the part that owns it links it.

if(DEFINED ENV{KOTAE_CACHE})
  set(_kotae_cache "$ENV{KOTAE_CACHE}")
elseif(DEFINED ENV{XDG_CACHE_HOME})
  set(_kotae_cache "$ENV{XDG_CACHE_HOME}/kotae")
else()
  set(_kotae_cache "$ENV{HOME}/.cache/kotae")
endif()
set(KOTAE_DEPS_DIR "${_kotae_cache}/deps" CACHE PATH "Where scripts/setup installed the pinned dependencies")
# Go modules of deploy/validate, downloaded by scripts/setup as deploy/validate/go.sum pins them.
set(KOTAE_GO_MODULES_DIR "${_kotae_cache}/go-mod" CACHE PATH "Where scripts/setup downloaded the Go modules")

function(kotae_require_dep path what)
  if(NOT EXISTS "${path}")
    message(FATAL_ERROR "${what} not found at ${path}: run scripts/setup first (or set KOTAE_DEPS_DIR)")
  endif()
endfunction()

# ONNX Runtime (C/C++ API)
set(_ort "${KOTAE_DEPS_DIR}/onnxruntime")
kotae_require_dep("${_ort}/lib/libonnxruntime.so" "ONNX Runtime")
add_library(kotae::onnxruntime SHARED IMPORTED)
set_target_properties(kotae::onnxruntime PROPERTIES
  IMPORTED_LOCATION "${_ort}/lib/libonnxruntime.so.1"
  INTERFACE_SYSTEM_INCLUDE_DIRECTORIES "${_ort}/include"
  INTERFACE_INCLUDE_DIRECTORIES "${_ort}/include")

# llama.cpp: the shared libraries the binary links (deps/llama.cpp: npm's prebuilt CPU build, or with
# scripts/setup --cuda the source build with its CUDA back-end); the CPU back-end's variants are loaded
# at run time from the folder libggml was loaded from (model/llama_runtime.cpp). And llama.cpp's own tools from the source build (deps/llama.cpp-tools,
# scripts/setup without --main-job): llama-server, the real OpenAI-compatible server the tests talk to,
# and llama-bench, the peer in bench/generate.
# Named by the folder deps/llama.cpp links to, so that when setup links another build (--cuda, or
# the prebuilt after a source build) the link command changes and the binary is linked again.
kotae_require_dep("${KOTAE_DEPS_DIR}/llama.cpp/lib/libllama.so" "llama.cpp")
get_filename_component(_llama "${KOTAE_DEPS_DIR}/llama.cpp" REALPATH)
add_library(kotae::ggml_base SHARED IMPORTED)
set_target_properties(kotae::ggml_base PROPERTIES
  IMPORTED_LOCATION "${_llama}/lib/libggml-base.so"
  INTERFACE_INCLUDE_DIRECTORIES "${_llama}/include"
  INTERFACE_SYSTEM_INCLUDE_DIRECTORIES "${_llama}/include")
add_library(kotae::ggml SHARED IMPORTED)
set_target_properties(kotae::ggml PROPERTIES
  IMPORTED_LOCATION "${_llama}/lib/libggml.so"
  INTERFACE_LINK_LIBRARIES kotae::ggml_base)
add_library(kotae::llama SHARED IMPORTED)
set_target_properties(kotae::llama PROPERTIES
  IMPORTED_LOCATION "${_llama}/lib/libllama.so"
  INTERFACE_LINK_LIBRARIES "kotae::ggml;kotae::ggml_base")
set(KOTAE_LLAMA_SERVER "${KOTAE_DEPS_DIR}/llama.cpp-tools/bin/llama-server")
set(KOTAE_LLAMA_BENCH "${KOTAE_DEPS_DIR}/llama.cpp-tools/bin/llama-bench")

# usearch (header only)
set(_usearch "${KOTAE_DEPS_DIR}/usearch")
kotae_require_dep("${_usearch}/include/usearch/index.hpp" "usearch")
add_library(kotae::usearch INTERFACE IMPORTED)
set_target_properties(kotae::usearch PROPERTIES
  INTERFACE_INCLUDE_DIRECTORIES "${_usearch}/include"
  INTERFACE_SYSTEM_INCLUDE_DIRECTORIES "${_usearch}/include")

# hnswlib 0.8.0 (header only, pinned: scripts/setup): the graph inside store/vector_index.cpp, through
# its public API only; pinned because the index file is its saveIndex output, never whatever the system has
set(_hnswlib "${KOTAE_DEPS_DIR}/hnswlib")
kotae_require_dep("${_hnswlib}/include/hnswlib/hnswalg.h" "hnswlib")
add_library(kotae::hnswlib INTERFACE IMPORTED)
set_target_properties(kotae::hnswlib PROPERTIES
  INTERFACE_INCLUDE_DIRECTORIES "${_hnswlib}/include"
  INTERFACE_SYSTEM_INCLUDE_DIRECTORIES "${_hnswlib}/include")

# Debian packages
find_package(OpenSSL 3 REQUIRED COMPONENTS Crypto)
find_package(nlohmann_json 3.11 REQUIRED)
find_package(CLI11 2 REQUIRED)
find_package(Threads REQUIRED)
find_package(PkgConfig REQUIRED)
pkg_check_modules(UTF8PROC REQUIRED IMPORTED_TARGET libutf8proc)
pkg_check_modules(POPPLER_CPP REQUIRED IMPORTED_TARGET poppler-cpp)
pkg_check_modules(LIBZIP REQUIRED IMPORTED_TARGET libzip)
pkg_check_modules(GMIME REQUIRED IMPORTED_TARGET gmime-3.0)  # EML and MBOX (text/loaders/mail_loader)
pkg_check_modules(TESSERACT REQUIRED IMPORTED_TARGET tesseract)  # OCR (text/loaders/ocr)
pkg_check_modules(LEPTONICA REQUIRED IMPORTED_TARGET lept)  # images for OCR (text/loaders/image_loader)
find_package(LibXml2 REQUIRED)
find_package(SQLite3 REQUIRED)
pkg_check_modules(LIBPQ REQUIRED IMPORTED_TARGET libpq)  # the PostgreSQL store (store/postgres_*)
pkg_check_modules(HIREDIS REQUIRED IMPORTED_TARGET hiredis)  # the Redis work queue (queue/)
find_package(CURL 7.88 REQUIRED)  # the OpenAI-compatible client (model/openai_chat_client)
find_package(Boost 1.81 REQUIRED)  # Beast and Asio (header only): the HTTP server
find_package(prometheus-cpp REQUIRED COMPONENTS core)  # /metrics (Debian's 1.0.1 declares no version)
# libsodium: Ed25519 signatures of model manifests and the SHA-256 of model files (model/model_integrity)
pkg_check_modules(SODIUM REQUIRED IMPORTED_TARGET libsodium)
add_library(kotae::sodium INTERFACE IMPORTED)
set_target_properties(kotae::sodium PROPERTIES INTERFACE_LINK_LIBRARIES PkgConfig::SODIUM)

# Python with the pinned reference packages (tokenizers, onnxruntime, onnx), for tests that compare
# against them. scripts/setup creates it from scripts/python/test.lock.
set(KOTAE_PYTHON "${KOTAE_DEPS_DIR}/python-test/bin/python" CACHE FILEPATH "Python with scripts/python/test.lock installed")
if(KOTAE_BUILD_TESTS)  # the main job alone (scripts/start) needs none of it
  kotae_require_dep("${KOTAE_PYTHON}" "the test Python environment")
  kotae_require_dep("${KOTAE_LLAMA_SERVER}" "llama-server (llama.cpp's tools)")
endif()
