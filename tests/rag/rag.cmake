# Grounded answers (rag/ answer pipeline, prompt assembly, citations, extractive back-end) and the
# sentence vectors they read (text/sentences, store/sentence_vectors, late chunking in the encoder).
kotae_test(rag_tests
  SOURCES rag/citations_test.cpp rag/extractive_answerer_test.cpp rag/standalone_sentence_test.cpp
          rag/sentence_vectors_test.cpp rag/prompt_builder_test.cpp rag/instruction_embedders_test.cpp
          rag/answer_json_test.cpp
  LIBS kotae_rag)
kotae_test(answer_pipeline_tests SOURCES rag/answer_pipeline_test.cpp LIBS kotae_rag SQLite::SQLite3 PROPERTIES TIMEOUT 600)
target_compile_definitions(answer_pipeline_tests PRIVATE KOTAE_LLAMA_SERVER="${KOTAE_LLAMA_SERVER}")
kotae_test(ask_command_tests SOURCES rag/ask_command_test.cpp
           LIBS kotae_core nlohmann_json::nlohmann_json PkgConfig::LIBZIP PkgConfig::POPPLER_CPP PkgConfig::LEPTONICA
           PROPERTIES TIMEOUT 600)
target_compile_definitions(ask_command_tests PRIVATE KOTAE_BINARY="$<TARGET_FILE:kotae>"
                                             KOTAE_EXAMPLES_DIR="${PROJECT_SOURCE_DIR}/examples/docs")
add_dependencies(ask_command_tests kotae)
