# Fuzzing (fuzz/): every libFuzzer target of the fuzz preset replays its regression inputs and fuzzes
# for a short while. The targets are built by their own preset (clang, sanitizers), which scripts/test
# builds before running the tests; without that build the tests are skipped, not failed.
set(KOTAE_FUZZ_BUILD_DIR ${PROJECT_SOURCE_DIR}/build/fuzz CACHE PATH "The fuzz preset's build folder")
set(KOTAE_FUZZ_TEST_SECONDS 30 CACHE STRING "Seconds each Fuzz.* test fuzzes (scripts/fuzz runs longer campaigns)")
# The targets of fuzz/CMakeLists.txt (and scripts/lib/fuzz.sh).
foreach(target tokenizer chunker html pdf docx pptx odt epub xlsx ods csv eml mbox markdown image manifest requests multipart url jwt where_filter)
  add_test(NAME Fuzz.${target}
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz_test.sh ${KOTAE_FUZZ_BUILD_DIR} ${target}
                   ${CMAKE_CURRENT_BINARY_DIR}/fuzz/${target} ${KOTAE_FUZZ_TEST_SECONDS})
  set_tests_properties(Fuzz.${target} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300 LABELS fuzz)
endforeach()
