#!/usr/bin/env bash
# Installs clients/python with every framework extra, as a user would (pip install
# './clients/python[langchain,llamaindex,haystack]'), into VENV: a virtual environment of its own in
# the build tree that sees the locked packages of scripts/python/integrations.lock through a .pth
# file, so nothing shared changes and pip, offline (--no-index), fails if the extras' requirements
# are not in the lock. The source is copied first: setuptools writes build/ and *.egg-info beside it.
# Usage: install_python_client.sh INTEGRATIONS_PYTHON VENV
set -euo pipefail
python=$1 venv=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
rm -rf "$venv" && "$python" -m venv --without-pip "$venv"  # pip and setuptools: the locked ones
locked=$("$python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
own=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
echo "$locked" >"$own/kotae-integrations-lock.pth"
cp -r "$root/clients/python" "$venv/client-source"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-index --no-build-isolation \
  "$venv/client-source[langchain,llamaindex,haystack]"
"$venv/bin/python" -c 'import kotae, kotae.integrations.langchain, kotae.integrations.llamaindex, kotae.integrations.haystack; print("installed kotae", kotae.__version__)'
