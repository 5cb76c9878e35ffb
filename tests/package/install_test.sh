#!/usr/bin/env bash
# The .deb proven by installing it: a clean Debian 12 root made by mmdebstrap from Debian's archive
# (systemd in it, none of kotae's dependencies: apt must pull them from the package's Depends), the
# package installed there with apt, then inside that root, as the package's user kotae:
# kotae doctor, the example documents indexed, the example question asked, and kotae serve started
# on a free port until /readyz answers 200 (the seconds it took are printed; target <= 10 s) and one
# POST /v1/ask answers with citations. Nothing from the build tree or the host may leak in: ldd and
# the RUNPATH of the installed binary must name only the root's own library folders. Then the real
# unit: systemd-analyze verify inside the root, and the root booted with systemd-nspawn to start,
# reload and read the journal of kotae.service (Type=notify: `systemctl start` returns once ready).
#
# usage: tests/package/install_test.sh DEB WORK_DIR EXAMPLES_DIR
# Every check prints "ok ..." or "FAIL ..."; the exit status is 1 when any failed.
set -uo pipefail
source "$(dirname "$0")/checks.sh"

readonly ready_bound_s=60     # a hung server fails; the target (10 s) is reported, not asserted
readonly boot_bound_s=90
deb=${1:?usage: install_test.sh DEB WORK_DIR EXAMPLES_DIR}
work_parent=${2:?usage: install_test.sh DEB WORK_DIR EXAMPLES_DIR}
examples=${3:?usage: install_test.sh DEB WORK_DIR EXAMPLES_DIR}
deb=$(realpath "$deb")
examples=$(realpath "$examples")


mkdir -p "$work_parent"
work=$(mktemp -d "$(realpath "$work_parent")/install.XXXXXX")
root="$work/root"
serve_pid="" serve_port=""
nspawn_pid=""

# unshare --fork passes no SIGTERM on: the server itself is told (found by its port), and unshare
# exits with it.
stop_serve() {
  [ -n "$serve_pid" ] || return 0
  pkill -TERM -f "^kotae serve --port $serve_port\$"
  wait "$serve_pid" 2>/dev/null
  serve_pid=""
}

cleanup() {
  stop_serve
  stop_container
  # Whatever mmdebstrap or a check left mounted under the root goes before the root itself.
  if [ -d "$root" ]; then
    findmnt -rn -o TARGET | grep -F "$root" | sort -r | while read -r mount; do umount -l "$mount"; done
  fi
  rm -rf --one-file-system "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
http_code() { curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$@"; }
now() { date +%s.%N; }
seconds_since() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.2f}')" "$1" "$(now)"; }

# A command inside the root as user kotae: its own mount and PID namespaces with /proc mounted (ONNX
# Runtime reads /proc/cpuinfo), a clean environment, so nothing of the host's leaks in through it.
as_kotae() {
  unshare --mount --pid --fork --kill-child --root="$root" --mount-proc \
    setpriv --reuid=kotae --regid=kotae --init-groups \
    env -i PATH=/usr/bin:/bin HOME=/var/lib/kotae KOTAE_DATA=/var/lib/kotae LANG=C.UTF-8 "$@"
}
# The same as root (for the checks that inspect the installation).
in_root() { unshare --mount --pid --fork --kill-child --root="$root" --mount-proc env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin "$@"; }

make_root() {
  note "mmdebstrap: a clean bookworm root (apt, systemd) in $root"
  local start; start=$(now)
  if mmdebstrap --quiet --variant=apt --include=systemd bookworm "$root" >"$work/mmdebstrap.log" 2>&1; then
    ok "clean Debian 12 root made ($(seconds_since "$start") s, $(du -sh --one-file-system "$root" | cut -f1))"
  else
    fail "mmdebstrap: $(tail -5 "$work/mmdebstrap.log")"
    return 1
  fi
}

# The dependencies must come from the package's Depends, not from the root we made.
check_root_is_clean() {
  local present
  present=$(chroot "$root" dpkg-query -W -f='${Package} ${Status}\n' libpoppler-cpp0v5 libsodium23 libgomp1 2>/dev/null | grep -c ' installed$')
  if [ "$present" = 0 ]; then ok "the fresh root has none of kotae's libraries (libpoppler-cpp0v5, libsodium23, libgomp1)"
  else fail "the fresh root already has some of kotae's libraries: Depends would not be proven"; fi
  if [ -e "$root/usr/bin/kotae" ] || [ -e "$root/work" ] || [ -e "$root/root/.cache/kotae" ]; then
    fail "the fresh root holds kotae or host paths before the install"
  fi
}

install_deb() {
  note "apt-get install $(basename "$deb")"
  cp "$deb" "$root/tmp/kotae.deb"
  local start; start=$(now)
  if in_root apt-get update -qq >"$work/apt.log" 2>&1 &&
     in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends /tmp/kotae.deb \
       >>"$work/apt.log" 2>&1; then
    ok "apt installed the package and its Depends ($(seconds_since "$start") s, $(grep -c '^Setting up' "$work/apt.log") packages set up)"
  else
    fail "apt-get install: $(grep -E '^(E:|dpkg:)' "$work/apt.log" | head -5)"
    return 1
  fi
  rm -f "$root/tmp/kotae.deb"
  if in_root getent passwd kotae >/dev/null; then ok "postinst made the system user kotae"; else fail "no user kotae"; return 1; fi
  local owner; owner=$(in_root stat -c %U /var/lib/kotae 2>/dev/null)
  if [ "$owner" = kotae ]; then ok "/var/lib/kotae belongs to kotae"; else fail "/var/lib/kotae owner: '${owner:-missing}'"; fi
}

# The installed binary must load only the root's own libraries: its private ones from /usr/lib/kotae,
# the rest from Debian's. A build-tree or ~/.cache path in ldd or RUNPATH means it only works here.
check_nothing_leaks() {
  local resolved bad
  resolved=$(in_root ldd /usr/bin/kotae 2>&1)
  if grep -q 'not found' <<<"$resolved"; then fail "ldd: $(grep 'not found' <<<"$resolved" | tr -s '\t ' ' ')"; fi
  bad=$(grep -v 'not found' <<<"$resolved" | awk '/=>/ { print $3 } !/=>/ { print $1 }' |
        grep -vE '^(/usr/lib/kotae/|/usr/lib/x86_64-linux-gnu/|/lib/x86_64-linux-gnu/|/lib64/|/usr/lib64/|linux-vdso)' || true)
  [ -n "$bad" ] && fail "libraries from outside the root's library folders: $bad"
  if grep -qE '/work|/root/\.cache|build' <<<"$resolved"; then fail "ldd names a build or host path: $(grep -E '/work|\.cache|build' <<<"$resolved" | head -3)"; fi
  local private; private=$(grep -c '/usr/lib/kotae/' <<<"$resolved")
  [ -z "$bad" ] && ! grep -qE 'not found|/work|/root/\.cache|build' <<<"$resolved" &&
    ok "ldd /usr/bin/kotae: only the root's libraries ($private from /usr/lib/kotae)"
  local runpaths; runpaths=$(for f in "$root"/usr/bin/kotae "$root"/usr/lib/kotae/*.so*; do
    readelf -d "$f" 2>/dev/null | grep -E 'RUNPATH|RPATH'; done)
  if grep -qE '/work|/root|/tmp|/home|build' <<<"$runpaths"; then
    fail "a RUNPATH names a host path: $(grep -E '/work|/root|/tmp|/home|build' <<<"$runpaths" | head -3)"
  else ok "RUNPATHs name only the installed folders ($(grep -oE '\[[^]]*\]' <<<"$runpaths" | sort -u | tr '\n' ' '))"; fi
}

copy_examples() {
  mkdir -p "$root/srv/docs"
  cp -r "$examples"/. "$root/srv/docs/"
  chmod -R a+rX "$root/srv/docs"
}

check_cli() {
  note "the command line, as kotae"
  if as_kotae kotae doctor >"$work/doctor.log" 2>&1; then ok "kotae doctor: $(tail -1 "$work/doctor.log")"
  else fail "kotae doctor: $(tail -5 "$work/doctor.log")"; fi
  # llama.cpp's CPU back-end is a variant the library loads at run time from beside itself.
  local llama; llama=$(as_kotae kotae doctor --json 2>/dev/null | jq -r '.llama_cpp | "\(.backend_dir) \(.backends | join(","))"')
  if [ "$llama" = "/usr/lib/kotae CPU" ]; then ok "llama.cpp loaded its CPU back-end from /usr/lib/kotae"
  else fail "llama.cpp's back-ends (folder, names): '$llama'"; fi
  if as_kotae kotae index /srv/docs --collection examples >"$work/index.log" 2>&1; then ok "kotae index: $(tail -1 "$work/index.log")"
  else fail "kotae index: $(tail -5 "$work/index.log")"; fi
  if as_kotae kotae ask "$question" --collection examples >"$work/ask.log" 2>&1 &&
     grep -qE '\[[0-9]+\]' "$work/ask.log" && grep -qE 'sqlite-[a-z-]+\.(pdf|html|md|docx)' "$work/ask.log"; then
    ok "kotae ask: an answer citing $(grep -oE 'sqlite-[a-z-]+\.(pdf|html|md|docx)' "$work/ask.log" | sort -u | tr '\n' ' ')"
  else fail "kotae ask (no cited source): $(head -c 600 "$work/ask.log")"; fi
}

check_serve() {
  note "kotae serve, as kotae"
  local port start code=000 elapsed
  port=$(free_port)
  serve_port=$port
  start=$(now)
  as_kotae kotae serve --port "$port" >"$work/serve.log" 2>&1 &
  serve_pid=$!
  while :; do
    code=$(http_code "http://127.0.0.1:$port/readyz")
    [ "$code" = 200 ] && break
    if ! kill -0 "$serve_pid" 2>/dev/null; then fail "kotae serve exited: $(tail -5 "$work/serve.log")"; serve_pid=""; return 1; fi
    if python3 -c "import sys; sys.exit(float(sys.argv[1]) < $ready_bound_s)" "$(seconds_since "$start")"; then
      fail "kotae serve not ready after $ready_bound_s s (/readyz $code)"; return 1
    fi
    sleep 0.05
  done
  elapsed=$(seconds_since "$start")
  echo "ready_seconds=$elapsed (target <= 10)"
  ok "kotae serve: /readyz 200 after $elapsed s"
  local body="$work/ask.json"
  code=$(curl -s -o "$body" -w '%{http_code}' --max-time 60 -H 'Content-Type: application/json' \
    -d "$(jq -n --arg q "$question" '{collection: "examples", question: $q}')" "http://127.0.0.1:$port/v1/ask")
  if [ "$code" = 200 ] && jq -e '(.citations | length) > 0 and (.sources | length) > 0 and (.answer | length) > 0' "$body" >/dev/null; then
    ok "POST /v1/ask: 200, $(jq '.citations | length' "$body") citations from $(jq -r '[.sources[].title // .sources[].document // empty] | unique | join(", ")' "$body")"
  else fail "POST /v1/ask: $code $(head -c 400 "$body")"; fi
  stop_serve
}

unit_path() { for d in /lib/systemd/system /usr/lib/systemd/system; do [ -f "$root$d/kotae.service" ] && { echo "$d/kotae.service"; return; }; done; }

check_unit_verifies() {
  local unit; unit=$(unit_path)
  [ -n "$unit" ] || { fail "the package installs no kotae.service"; return 1; }
  if in_root systemd-analyze verify --man=no "$unit" >"$work/verify.log" 2>&1; then ok "systemd-analyze verify $unit"
  else fail "systemd-analyze verify $unit: $(cat "$work/verify.log")"; fi
}

# --- the real unit, under the root's own systemd booted in a container ------------------------------
container_leader() { pgrep -P "$nspawn_pid" | head -1; }
in_container() { nsenter -t "$(container_leader)" -a env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin "$@"; }

stop_container() {
  [ -n "$nspawn_pid" ] || return 0
  if kill -0 "$nspawn_pid" 2>/dev/null; then
    in_container systemctl poweroff >/dev/null 2>&1
    for _ in $(seq 100); do kill -0 "$nspawn_pid" 2>/dev/null || break; sleep 0.2; done
    kill -0 "$nspawn_pid" 2>/dev/null && kill -KILL "$nspawn_pid"
  fi
  wait "$nspawn_pid" 2>/dev/null
  nspawn_pid=""
}

# A key for the service, made by the installed kotae itself: prints KEY, appends its entry to FILE.
add_key() {
  local made; made=$(in_root kotae keygen --tenant "$2" 2>/dev/null) || return 1
  jq -c .entry <<<"$made" >>"$root$1.entries"
  jq -s '{keys: .}' "$root$1.entries" >"$root$1"
  in_root chown root:kotae "$1" && in_root chmod 0640 "$1"
  jq -r .key <<<"$made"
}
authorized() { http_code -H "Authorization: Bearer $2" "http://127.0.0.1:$1/v1/collections"; }

check_systemd_unit() {
  note "kotae.service under systemd (the root booted with systemd-nspawn)"
  local port; port=$(free_port)
  # The container shares the host's network: the unit listens on a free port rather than 8080, and
  # with a keys file, so that `systemctl reload` has something to read again.
  local keys=/etc/kotae/test-keys.json first second
  first=$(add_key "$keys" first) || { fail "kotae keygen in the root"; return 1; }
  mkdir -p "$root/etc/systemd/system/kotae.service.d"
  printf '[Service]\nExecStart=\nExecStart=/usr/bin/kotae serve --config /etc/kotae/config.toml --port %s --api-keys %s\n' \
    "$port" "$keys" >"$root/etc/systemd/system/kotae.service.d/test.conf"
  systemd-nspawn --quiet --register=no --keep-unit -D "$root" -b --console=read-only >"$work/boot.log" 2>&1 &
  nspawn_pid=$!
  local state="" waited=0
  while [ "$waited" -lt $((boot_bound_s * 5)) ]; do
    if [ -n "$(container_leader)" ]; then
      state=$(in_container systemctl is-system-running 2>/dev/null)
      case "$state" in running|degraded) break ;; esac
    fi
    kill -0 "$nspawn_pid" 2>/dev/null || break
    sleep 0.2; waited=$((waited + 1))
  done
  case "$state" in running|degraded) ok "the root boots under systemd ($state)" ;;
    *) fail "the root did not boot: '$state' $(tail -5 "$work/boot.log")"; stop_container; return 1 ;; esac

  in_container systemctl stop kotae >/dev/null 2>&1   # the package enables it: it may have started at boot
  local start; start=$(now)
  if in_container timeout 150 systemctl start kotae >"$work/start.log" 2>&1; then
    ok "systemctl start kotae returned after $(seconds_since "$start") s"
  else fail "systemctl start kotae: $(cat "$work/start.log")"; fi
  local props; props=$(in_container systemctl show -p Type,ActiveState,SubState,StatusText,MainPID kotae)
  echo "$props" | sed 's/^/     /'
  if grep -qx 'Type=notify' <<<"$props" && grep -qx 'ActiveState=active' <<<"$props" && grep -qx 'SubState=running' <<<"$props"; then
    ok "kotae.service is Type=notify and active/running once started"
  else fail "kotae.service after start: $(tr '\n' ' ' <<<"$props")"; fi
  local code; code=$(http_code "http://127.0.0.1:$port/readyz")
  if [ "$code" = 200 ]; then ok "the service answers /readyz 200"; else fail "the service's /readyz: $code"; fi

  # Reload: a key added to the file after the start is refused before and accepted after it.
  second=$(add_key "$keys" second)
  local before after pid_before pid_after
  before="$(authorized "$port" "$first") $(authorized "$port" "$second")"
  pid_before=$(in_container systemctl show -p MainPID --value kotae)
  if in_container timeout 30 systemctl reload kotae >"$work/reload.log" 2>&1; then ok "systemctl reload kotae"
  else fail "systemctl reload kotae: $(cat "$work/reload.log") $(in_container journalctl -u kotae -n 3 -o cat --no-pager)"; fi
  sleep 0.5
  after="$(authorized "$port" "$first") $(authorized "$port" "$second")"
  if [ "$before" = "200 401" ] && [ "$after" = "200 200" ]; then ok "reload re-read the keys (first, second key: $before before, $after after)"
  else fail "keys before reload '$before' (want 200 401), after '$after' (want 200 200)"; fi
  pid_after=$(in_container systemctl show -p MainPID --value kotae)
  if [ "$(in_container systemctl is-active kotae)" = active ] && [ "$pid_before" = "$pid_after" ] && [ "$pid_after" != 0 ]; then
    ok "still active after reload, same process ($pid_after)"
  else fail "after reload: $(in_container systemctl is-active kotae), MainPID $pid_before -> $pid_after"; fi

  in_container journalctl -u kotae -o cat --no-pager >"$work/journal.log" 2>&1
  local json_lines; json_lines=$(grep '^{' "$work/journal.log" | jq -c 'select(type == "object")' 2>/dev/null | wc -l)
  if [ "$json_lines" -gt 0 ] && grep -q '"ready"' "$work/journal.log"; then ok "the journal holds $json_lines JSON log lines of kotae.service"
  else fail "no JSON log lines in journalctl -u kotae: $(tail -5 "$work/journal.log")"; fi
  stop_container
  rm -rf "$root/etc/systemd/system/kotae.service.d" "$root$keys" "$root$keys.entries"
}

main() {
  make_root || exit 1
  check_root_is_clean
  install_deb || exit 1
  check_nothing_leaks
  copy_examples
  check_cli
  check_serve
  check_unit_verifies
  check_systemd_unit
  finish_checks install
}
main
