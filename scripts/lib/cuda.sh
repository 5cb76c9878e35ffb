# CUDA for building llama.cpp's CUDA back-end, sourced by scripts/setup and bench/gpu/run.
# llama_cuda_flags ARCHITECTURES prints CMake flags, one per line: the machine's toolkit (nvcc on PATH)
# as it is; else the PyPI one setup installs at deps/cuda, through a folder of links that adds the
# unversioned library names CMake's FindCUDAToolkit looks for (the wheels ship only libX.so.13).
# Without the driver's libcuda.so to link (PyPI has none), ggml's virtual-memory pool is left out.
# cuda_library_dir: the toolkit's libraries, for the build's RPATH (the PyPI ones are on no path).
cuda_toolkit_root() {
  local nvcc
  nvcc=$(command -v nvcc || true)
  if [ -n "$nvcc" ]; then dirname "$(dirname "$(readlink -f "$nvcc")")"; else echo "$KOTAE_CACHE/deps/cuda-toolkit"; fi
}
cuda_library_dir() { echo "$(cuda_toolkit_root)/lib64"; }
llama_cuda_flags() {
  local root view f
  root=$(cuda_toolkit_root)
  if [ "$root" = "$KOTAE_CACHE/deps/cuda-toolkit" ]; then
    [ -x "$KOTAE_CACHE/deps/cuda/bin/nvcc" ] || die "no nvcc: install CUDA, or run scripts/setup (it installs nvcc from PyPI)"
    view=$root.tmp; rm -rf "$view"; mkdir -p "$view/lib64"
    for f in bin include nvvm; do ln -s "$KOTAE_CACHE/deps/cuda/$f" "$view/$f"; done
    for f in "$KOTAE_CACHE"/deps/cuda/lib/*; do ln -s "$f" "$view/lib64/"; done
    for f in cudart cublas cublasLt; do ln -s "lib$f.so.13" "$view/lib64/lib$f.so"; done
    ln -s lib64 "$view/lib"
    rm -rf "$root"; mv "$view" "$root"
  fi
  printf '%s\n' -DGGML_CUDA=ON "-DCMAKE_CUDA_ARCHITECTURES=$1" "-DCMAKE_CUDA_COMPILER=$root/bin/nvcc" "-DCUDAToolkit_ROOT=$root"
  if ! grep -q 'libcuda\.so ' <<<"$(ldconfig -p 2>/dev/null)" && [ ! -e "$root/lib64/stubs/libcuda.so" ]; then
    echo -DGGML_CUDA_NO_VMM=ON
  fi
}
