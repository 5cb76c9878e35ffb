# What the package tests share: a line per check ("ok", "FAIL", "----" for a note), counted, and
# the exit code from the count. Sourced.
failures=0
ok() { echo "ok   $*"; }
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
note() { echo "---- $*"; }
# Exits 1 when a check failed, else says `all` passed.
finish_checks() {
  if [ "$failures" -gt 0 ]; then echo "FAIL $failures check(s) failed"; exit 1; fi
  echo "ok   all $1 checks passed"
}
# The example question both tests ask.
readonly question="Can SQLite be used as the database of a website?"
