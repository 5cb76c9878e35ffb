# The fuzz preset (KOTAE_FUZZ=ON): clang's libFuzzer with AddressSanitizer (and LeakSanitizer) and
# UndefinedBehaviorSanitizer. Libraries get the coverage instrumentation (fuzzer-no-link); only the
# targets in fuzz/ link libFuzzer's main. Any UB aborts, so the fuzzer reports it as a crash.
if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "KOTAE_FUZZ needs clang (libFuzzer): use the fuzz preset (clang++-16)")
endif()
add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
                    -fno-omit-frame-pointer -g)
set(KOTAE_FUZZ_LINK_OPTIONS -fsanitize=fuzzer,address,undefined)

# Only the Debian libraries the fuzzed parsers use.
find_package(OpenSSL 3 REQUIRED COMPONENTS Crypto)
find_package(nlohmann_json 3.11 REQUIRED)
find_package(PkgConfig REQUIRED)
pkg_check_modules(UTF8PROC REQUIRED IMPORTED_TARGET libutf8proc)
pkg_check_modules(POPPLER_CPP REQUIRED IMPORTED_TARGET poppler-cpp)
pkg_check_modules(LIBZIP REQUIRED IMPORTED_TARGET libzip)
pkg_check_modules(GMIME REQUIRED IMPORTED_TARGET gmime-3.0)  # EML and MBOX (text/loaders/mail_loader)
pkg_check_modules(TESSERACT REQUIRED IMPORTED_TARGET tesseract)  # OCR (text/loaders/ocr)
pkg_check_modules(LEPTONICA REQUIRED IMPORTED_TARGET lept)  # images for OCR (text/loaders/image_loader)
find_package(LibXml2 REQUIRED)
