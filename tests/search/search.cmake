# Search (search/), ingestion pipeline (rag/), CLI index/search/eval and crash safety.
kotae_test(search_tests
  SOURCES search/rank_fusion_test.cpp search/retrieval_metrics_test.cpp search/file_selection_test.cpp
  LIBS kotae_search kotae_rag)
kotae_test(hybrid_search_tests SOURCES search/hybrid_search_test.cpp LIBS kotae_rag kotae_search)
kotae_test(crash_safety_tests SOURCES search/crash_safety_test.cpp LIBS kotae_store nlohmann_json::nlohmann_json
           PROPERTIES TIMEOUT 900 FIXTURES_REQUIRED postgres_server)
target_compile_definitions(crash_safety_tests PRIVATE KOTAE_BINARY="$<TARGET_FILE:kotae>"
                           KOTAE_TEST_POSTGRES_URL_FILE="${KOTAE_TEST_POSTGRES_URL_FILE}")
add_dependencies(crash_safety_tests kotae)
kotae_test(cli_commands_tests SOURCES search/cli_commands_test.cpp LIBS kotae_core nlohmann_json::nlohmann_json)
target_compile_definitions(cli_commands_tests PRIVATE KOTAE_BINARY="$<TARGET_FILE:kotae>")
add_dependencies(cli_commands_tests kotae)
