# llama.cpp's source as Kotae builds it, sourced by scripts/setup and bench/gpu/pack: the pinned commit
# from node-llama-cpp's git bundle with scripts/patches/llama.cpp/*.patch applied (its README says why
# each exists). The patches' checksum goes into every cache key of a build from this source.
# shellcheck shell=bash

LLAMA_PATCH_DIR="$KOTAE_ROOT/scripts/patches/llama.cpp"

# llama_patches_key -> 8 hex digits that change whenever a patch is added, removed or edited
llama_patches_key() { cat "$LLAMA_PATCH_DIR"/*.patch 2>/dev/null | sha256sum | cut -c1-8; }

# llama_cpp_checkout BUNDLE DIR: clones the bundle's commit into DIR and applies the patches.
llama_cpp_checkout() {
  local patch
  git clone -q "$1" "$2" 2>/dev/null || die "cannot clone llama.cpp from $1"
  for patch in "$LLAMA_PATCH_DIR"/*.patch; do
    [ -f "$patch" ] || continue
    git -C "$2" apply "$patch" || die "$(basename "$patch") does not apply to llama.cpp $(git -C "$2" rev-parse --short HEAD)"
  done
}

# llama_cpp_configure TMP RPATH [CMAKE_FLAGS...]: the pinned source package's bundle in
# TMP/package/llama/gitRelease.bundle, checked out and patched in TMP/src, configured in TMP/build
# as shared libraries without tests, examples or network code (needs common.sh's fetch).
llama_cpp_configure() {
  local tmp=$1 rpath=$2; shift 2
  tar -xzf "$(fetch llama-cpp-source)" -C "$tmp" package/llama/gitRelease.bundle
  llama_cpp_checkout "$tmp/package/llama/gitRelease.bundle" "$tmp/src"
  cmake -S "$tmp/src" -B "$tmp/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=ON \
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_CURL=OFF \
    "-DCMAKE_BUILD_RPATH=$rpath" "$@" >"$tmp/cmake.log" 2>&1 \
    || { cat "$tmp/cmake.log" >&2; die "configuring llama.cpp failed"; }
}
