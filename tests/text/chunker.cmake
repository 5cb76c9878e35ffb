# Chunker (text/chunker, text/text_boundaries): unit cases on hand-built documents and property
# tests over the Debian FAQ (package doc-debian), all with the real all-minilm-l6-v2 tokenizer
# that scripts/setup installs. Tables are written by the loaders' DocumentBuilder.
kotae_test(chunker_tests SOURCES text/chunker_test.cpp LIBS kotae_loaders kotae_text kotae_core)
