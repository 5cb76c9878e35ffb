# The tree's style and shape, kept by machines (tests/style): C++ as .clang-format writes it, clang-tidy
# quiet on what changed, Python as ruff formats and checks it, and each part including only the parts
# below it. scripts/format mends the formatting.
add_test(NAME Style.CppIsFormatted COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/style/cpp_format.sh)
add_test(NAME Style.CppChangesAreTidy COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/style/cpp_tidy.sh ${CMAKE_BINARY_DIR})
set_tests_properties(Style.CppChangesAreTidy PROPERTIES TIMEOUT 1200)
add_test(NAME Style.PythonIsFormattedAndLinted COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/style/python_lint.sh)
add_test(NAME Style.PartsIncludeOnlyWhatIsBelowThem COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/style/layering.sh)
# The Python twin of core/percentile.h against known values (numpy's linear method).
add_test(NAME Bench.OnePercentileDefinition COMMAND python3 ${PROJECT_SOURCE_DIR}/bench/latency_stats.py)
