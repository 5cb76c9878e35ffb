// write_tiny_gguf PATH [LAYERS EMBEDDING FEED_FORWARD]: the tiny random-weight chat model of tiny_gguf.h
// (with its tokenizer, 4096 tokens of context), for the tests written in Python.
#include <cstdio>
#include <cstdlib>

#include "support/tiny_gguf.h"

int main(int argc, char** argv) {
  if (argc != 2 && argc != 5) {
    std::fprintf(stderr, "usage: write_tiny_gguf PATH [LAYERS EMBEDDING FEED_FORWARD]\n");
    return 2;
  }
  kotae::testing::TinyLlamaShape shape{.context = 4096, .with_tokenizer = true};
  if (argc == 5) {
    shape.layers = static_cast<std::uint32_t>(std::atoi(argv[2]));
    shape.embedding = static_cast<std::uint32_t>(std::atoi(argv[3]));
    shape.feed_forward = static_cast<std::uint32_t>(std::atoi(argv[4]));
  }
  if (!kotae::testing::write_tiny_llama_gguf(argv[1], shape)) {
    std::fprintf(stderr, "write_tiny_gguf: cannot write %s\n", argv[1]);
    return 1;
  }
  return 0;
}
