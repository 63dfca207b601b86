#!/usr/bin/env bash
# Hurl 7 for checking `svc export hurl` files: `scripts/hurl.sh ARGS…` runs hurl with ARGS, `scripts/hurl.sh
# --fetch` only makes sure it is there. Hurl 7 is packaged in Debian sid only, so its packages (hurl, libxml2-16 and
# sid's libc6, which that build needs) are downloaded from a sid source list kept in a private apt folder (the
# system's apt sources and state are not touched; no root needed), unpacked with dpkg-deb, and hurl is started
# through that libc's own loader. Everything lives under .cache/hurl/ (override with SVC_HURL_DIR); a second call
# downloads nothing.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
dir="${SVC_HURL_DIR:-$here/.cache/hurl}"
root="$dir/root"
lib="$root/usr/lib/x86_64-linux-gnu"
mirror="${SVC_DEBIAN_MIRROR:-http://deb.debian.org/debian}"

# The loader path for hurl: sid's libc and libxml2 first, then the system's libraries (libcurl and its own).
libpath() {
  local p="$lib"
  local d
  for d in /usr/lib/x86_64-linux-gnu /lib/x86_64-linux-gnu /usr/lib64 /lib64 /usr/lib /lib; do
    [ -d "$d" ] && p="$p:$d"
  done
  printf '%s' "$p"
}

run_hurl() {
  "$lib/ld-linux-x86-64.so.2" --library-path "$(libpath)" "$root/usr/bin/hurl" "$@"
}

fetch() {
  if [ "$(uname -m)" != "x86_64" ]; then
    echo "scripts/hurl.sh: only x86_64 is supported (this machine is $(uname -m))" >&2
    return 1
  fi
  for tool in apt-get dpkg-deb; do
    command -v "$tool" >/dev/null 2>&1 || {
      echo "scripts/hurl.sh: $tool is needed (a Debian or Ubuntu machine)" >&2
      return 1
    }
  done
  local keyring=/usr/share/keyrings/debian-archive-keyring.gpg
  [ -r "$keyring" ] || {
    echo "scripts/hurl.sh: $keyring is needed (the debian-archive-keyring package)" >&2
    return 1
  }
  mkdir -p "$dir"
  local work
  work="$(mktemp -d "$dir/.fetch.XXXXXX")"
  # shellcheck disable=SC2064 # expand now: the folder is this call's own
  trap "rm -rf '$work'" EXIT
  mkdir -p "$work/etc/preferences.d" "$work/lists/partial" "$work/cache/archives/partial" "$work/debs" "$work/root"
  echo "deb [signed-by=$keyring] $mirror sid main" >"$work/etc/sources.list"
  local apt=(
    -o "Dir::Etc::sourcelist=$work/etc/sources.list" -o "Dir::Etc::sourceparts=-"
    -o "Dir::Etc::preferencesparts=$work/etc/preferences.d" -o "Dir::State::Lists=$work/lists"
    -o "Dir::Cache=$work/cache" -o "Debug::NoLocking=1" -o "APT::Architecture=amd64"
  )
  # Downloads go to a folder the _apt user cannot write to when running as root: download as root, without the sandbox.
  [ "$(id -u)" = "0" ] && apt+=(-o "APT::Sandbox::User=root")
  echo "fetching Hurl 7 from Debian sid into $dir" >&2
  apt-get "${apt[@]}" -qq update >&2
  (cd "$work/debs" && apt-get "${apt[@]}" -qq download hurl libxml2-16 libc6 >&2)
  local deb
  for deb in "$work"/debs/*.deb; do dpkg-deb -x "$deb" "$work/root"; done
  # Anything hurl links to that neither these packages nor the system have (libcurl4 is the system's).
  local missing
  missing="$("$work/root/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2" --library-path "$work/root/usr/lib/x86_64-linux-gnu:$(libpath)" --list "$work/root/usr/bin/hurl" | grep 'not found' || true)"
  if [ -n "$missing" ]; then
    echo "scripts/hurl.sh: hurl needs libraries this machine lacks (apt-get install libcurl4 gives most):" >&2
    echo "$missing" >&2
    return 1
  fi
  # Another call may have finished first: keep what it unpacked.
  if [ -x "$root/usr/bin/hurl" ] && run_hurl --version >/dev/null 2>&1; then return 0; fi
  rm -rf "$root"
  mv "$work/root" "$root"
}

if [ ! -x "$root/usr/bin/hurl" ] || ! run_hurl --version >/dev/null 2>&1; then
  fetch
fi
if [ "${1:-}" = "--fetch" ]; then
  run_hurl --version | head -n 1 >&2
  exit 0
fi
exec "$lib/ld-linux-x86-64.so.2" --library-path "$(libpath)" "$root/usr/bin/hurl" "$@"
