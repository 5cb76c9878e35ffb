# Shared by scripts/fuzz and the Fuzz.* tests (tests/fuzz/fuzz_test.sh): the fuzz targets and how
# libFuzzer runs each of them.
# shellcheck shell=bash

# Tesseract (the image target OCRs) runs as the kotae binary runs it: one OpenMP thread, read by libgomp
# once, when it loads (platform/openmp_limit.h); its spinning threads would otherwise take the cores.
export OMP_THREAD_LIMIT=${OMP_THREAD_LIMIT:-1}

# What libraries allocate once per process and keep is not a leak of ours (fuzz/lsan.supp says which).
export LSAN_OPTIONS="suppressions=$KOTAE_ROOT/fuzz/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"

# The targets, as built by fuzz/CMakeLists.txt into build/fuzz/fuzz/.
FUZZ_TARGETS=(tokenizer chunker html pdf docx pptx odt epub xlsx ods csv eml mbox markdown image manifest requests multipart url jwt where_filter)

# fuzz_options TARGET -> libFuzzer options for it, one a line: its dictionary, and room for whole
# documents where the input is one.
fuzz_options() {
  local dict="$KOTAE_ROOT/fuzz/dictionaries/$1.dict"
  [ "$1" = chunker ] && dict="$KOTAE_ROOT/fuzz/dictionaries/markdown.dict"  # it loads Markdown
  [ -f "$dict" ] && printf '%s\n' "-dict=$dict"
  case $1 in
    html|pdf|docx|pptx|odt|epub|xlsx|ods|csv|eml|mbox|markdown|image|chunker) printf '%s\n' -max_len=65536 ;;
    *) printf '%s\n' -max_len=8192 ;;
  esac
  printf '%s\n' -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
}

# fuzz_summary LOG -> "EXECS cov: N ft: M" from a libFuzzer log (-print_final_stats=1)
fuzz_summary() {
  local execs coverage
  execs=$(awk '/stat::number_of_executed_units/ { print $2 }' "$1")
  coverage=$(grep -Eo 'cov: [0-9]+ ft: [0-9]+' "$1" | tail -n 1)
  printf '%s execs, %s' "${execs:-?}" "${coverage:-cov: ? ft: ?}"
}
