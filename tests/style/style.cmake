# The tree's style, kept by machines (tests/style): C++ as .clang-format writes it, Python as ruff
# formats and checks it. Seconds each; scripts/format mends what they find.
add_test(NAME Style.CppIsFormatted COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/style/cpp_format.sh)
add_test(NAME Style.PythonIsFormattedAndLinted COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/style/python_lint.sh)
