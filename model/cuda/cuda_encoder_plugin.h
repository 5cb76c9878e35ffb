#pragma once
// The C interface of libkotae_cuda_encoder.so, the native CUDA encoder as a plugin: Kotae's binary
// opens it at run time where a GPU is, so the binary itself never links CUDA. Errors are written to
// `error` (NUL-terminated, at most error_size bytes); functions return null or non-zero on failure.

extern "C" {

// Loads FP16/FP32 safetensors of a BERT encoder and sizes its buffers.
using KotaeCudaEncoderOpen = void* (*)(const char* safetensors, int heads, int max_batch, int max_tokens, char* error,
                                       int error_size);
// `texts` texts, their token ids one after another (lengths[i] each). Writes texts x hidden unit
// vectors, and, when `states` is not null, sum(lengths) x hidden token states.
using KotaeCudaEncoderEmbed = int (*)(void* encoder, const int* ids, const int* lengths, int texts, float* vectors,
                                      float* states, char* error, int error_size);
// Cross-encoder weights only: `pairs` pairs, their ids and segment types one after another
// (lengths[i] each); writes one score per pair. Returns non-zero for weights without a classifier.
using KotaeCudaEncoderScore = int (*)(void* encoder, const int* ids, const int* types, const int* lengths, int pairs,
                                      float* scores, char* error, int error_size);
using KotaeCudaEncoderHidden = int (*)(void* encoder);
using KotaeCudaEncoderDevice = const char* (*)(void* encoder);
using KotaeCudaEncoderClose = void (*)(void* encoder);
// The GPU architectures the plugin was built for, CMake's CUDA_ARCHITECTURES joined by commas ("75,80,90");
// empty where the build did not record them.
using KotaeCudaEncoderArchitectures = const char* (*)();
}
