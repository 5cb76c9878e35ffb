#!/usr/bin/env bash
# Fixture for the server tests: DATA with the installed models and a collection "faq" of three Debian
# FAQ chapters, indexed by the real CLI.
set -euo pipefail
kotae=$1 data=$2
models=${KOTAE_DATA:-${XDG_DATA_HOME:-$HOME/.local/share}/kotae}/models
rm -rf "$data" && mkdir -p "$data"
ln -s "$models" "$data/models"
faq=/usr/share/doc/debian/FAQ
"$kotae" index "$faq/pkg-basics.en.html" "$faq/basic-defs.en.html" "$faq/uptodate.en.html" --collection faq --data "$data" >/dev/null
