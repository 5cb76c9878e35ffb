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
