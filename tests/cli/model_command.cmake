# `kotae model keygen | sign | verify | add` (cli/model_command), through the real binary.
kotae_test(model_command_tests SOURCES cli/model_command_test.cpp LIBS kotae_core nlohmann_json::nlohmann_json)
target_compile_definitions(model_command_tests PRIVATE KOTAE_BINARY="$<TARGET_FILE:kotae>")
add_dependencies(model_command_tests kotae)

# Settings from files, the environment and flags (cli/settings), through the real binary.
kotae_test(config_tests SOURCES cli/config_test.cpp LIBS kotae_core nlohmann_json::nlohmann_json)
target_compile_definitions(config_tests PRIVATE KOTAE_BINARY="$<TARGET_FILE:kotae>" KOTAE_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
add_dependencies(config_tests kotae)
