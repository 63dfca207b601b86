#!/usr/bin/env bash
# Installs svc on a Linux host: as root with systemd, a hardened service (binary, system user, config, data
# directory, unit); otherwise the executable in ~/.local/bin for the current user. Re-running upgrades in place.
#
# Usage: ./install.sh [--binary FILE] [--uninstall [--purge]]
#   --binary FILE  the svc executable to install (default: dist/svc or svc beside this script,
#                  else dist/svc-linux-<arch>)
#   --uninstall    stop and remove the service and the executable; keeps /etc/svc and /var/lib/svc
#   --purge        with --uninstall, also delete the configuration, the data and the svc user
#
# Environment (for packaging and tests): SVC_ROOT (a root directory every system path is placed under,
# default /), SVC_PREFIX (default /usr/local), SVC_BINARY (as --binary), SVC_USER_PREFIX (default ~/.local).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=${SVC_ROOT:-}
root=${root%/}
prefix=${SVC_PREFIX:-/usr/local}
binary=${SVC_BINARY:-}
mode=install
purge=no

say() { printf '%s\n' "$*"; }
fail() {
  printf 'install.sh: %s\n' "$*" >&2
  exit 1
}
usage() {
  printf 'install.sh: %s\nusage: ./install.sh [--binary FILE] [--uninstall [--purge]]\n' "$*" >&2
  exit 2
}

while [ $# -gt 0 ]; do
  case "$1" in
    --binary)
      [ $# -ge 2 ] || usage "--binary needs a file"
      binary=$2
      shift 2
      ;;
    --uninstall) mode=uninstall; shift ;;
    --purge) purge=yes; shift ;;
    -h | --help)
      sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    *) usage "unknown argument $1" ;;
  esac
done
[ "$purge" = no ] || [ "$mode" = uninstall ] || usage "--purge only goes with --uninstall"

bin_dir="$root$prefix/bin"
etc_dir="$root/etc/svc"
data_dir_abs=/var/lib/svc
data_dir="$root$data_dir_abs"
unit_file="$root/etc/systemd/system/svc.service"

as_service=no
if [ "$(id -u)" = 0 ] && command -v systemctl >/dev/null 2>&1 && [ -d "$root/run/systemd/system" ]; then
  as_service=yes
fi

find_binary() {
  if [ -n "$binary" ]; then
    [ -f "$binary" ] || fail "$binary does not exist"
    printf '%s\n' "$binary"
    return
  fi
  local arch
  case "$(uname -m)" in
    x86_64 | amd64) arch=x64 ;;
    aarch64 | arm64) arch=arm64 ;;
    *) fail "no svc build for CPU $(uname -m)" ;;
  esac
  for candidate in "$here/dist/svc" "$here/svc" "$here/dist/svc-linux-$arch" "$here/svc-linux-$arch"; do
    if [ -f "$candidate" ]; then
      printf '%s\n' "$candidate"
      return
    fi
  done
  fail "no svc executable found: run 'bun run build' first, or pass --binary FILE"
}

# Copies $1 to $2 through a temporary name in the same directory, so a running svc is replaced atomically.
install_executable() {
  mkdir -p "$(dirname "$2")"
  cp "$1" "$2.new"
  chmod 0755 "$2.new"
  mv -f "$2.new" "$2"
}

# The svc account; with SVC_ROOT the account files under it are edited, never the host's.
user_exists() {
  if [ -n "$root" ]; then grep -q '^svc:' "$root/etc/passwd"; else id -u svc >/dev/null 2>&1; fi
}
user_ids() {
  if [ -n "$root" ]; then
    awk -F: '$1 == "svc" { print $3 ":" $4 }' "$root/etc/passwd"
  else
    printf '%s:%s\n' "$(id -u svc)" "$(id -g svc)"
  fi
}
shell_nologin() {
  for s in /usr/sbin/nologin /sbin/nologin; do
    if [ -x "$s" ]; then
      printf '%s\n' "$s"
      return
    fi
  done
  printf '/bin/false\n'
}
# With SVC_ROOT, useradd and userdel edit the account files under it.
account_prefix=()
if [ -n "$root" ]; then account_prefix=(--prefix "$root"); fi

config_value() { # section ("" for the top level), key, default: a value of the installed config
  local v
  v=$(awk -v want="$1" -v key="$2" '
    /^[[:space:]]*\[/ { section = $0; gsub(/^[[:space:]]*\[|\][[:space:]]*(#.*)?$/, "", section); next }
    section == want && $0 ~ "^[[:space:]]*" key "[[:space:]]*=" {
      sub(/^[^=]*=[[:space:]]*/, ""); sub(/[[:space:]]*#.*$/, ""); gsub(/^"|"$/, ""); print; exit
    }' "$etc_dir/svc.toml")
  printf '%s\n' "${v:-$3}"
}

install_for_user() {
  local dir="${SVC_USER_PREFIX:-$HOME/.local}/bin"
  local src
  src=$(find_binary)
  install_executable "$src" "$dir/svc"
  say "installed $dir/svc ($("$dir/svc" --version))"
  if [ "$(id -u)" != 0 ]; then
    say "not root: installed for $(id -un) only, without a system service (run as root with systemd for that)."
  else
    say "no systemd here: installed without a system service."
  fi
  case ":$PATH:" in
    *":$dir:"*) ;;
    *) say "add it to your PATH:  export PATH=\"$dir:\$PATH\"" ;;
  esac
  say "run the service in the foreground (data in ./svc-data, http://127.0.0.1:8080):"
  say "  svc serve"
  say "then create the first user and an API key:"
  say "  svc admin create-user --email you@example.com --name You --workspace main --password-stdin"
  say "  svc admin create-key --email you@example.com --workspace main"
}

uninstall_for_user() {
  local file="${SVC_USER_PREFIX:-$HOME/.local}/bin/svc"
  rm -f "$file"
  say "removed $file (data directories such as ./svc-data are left as they are)"
}

install_service() {
  local src upgrade=no ids
  src=$(find_binary)
  [ -f "$here/config/svc.service" ] || fail "$here/config/svc.service is missing: run install.sh from the svc source or release directory"
  [ -f "$here/config/svc.toml" ] || fail "$here/config/svc.toml is missing: run install.sh from the svc source or release directory"
  [ -e "$bin_dir/svc" ] && upgrade=yes

  if ! user_exists; then
    useradd "${account_prefix[@]}" --system --user-group --home-dir "$data_dir_abs" --no-create-home \
      --shell "$(shell_nologin)" --comment "svc service" svc
    say "created the system user svc"
  fi
  ids=$(user_ids)

  install_executable "$src" "$bin_dir/svc"

  mkdir -p "$etc_dir"
  if [ ! -f "$etc_dir/svc.toml" ]; then
    sed "s|^data_dir = .*|data_dir = \"$data_dir_abs\"|" "$here/config/svc.toml" >"$etc_dir/svc.toml.new"
    chown "root:${ids#*:}" "$etc_dir/svc.toml.new"
    chmod 0640 "$etc_dir/svc.toml.new"
    mv "$etc_dir/svc.toml.new" "$etc_dir/svc.toml"
    say "wrote $etc_dir/svc.toml"
  else
    say "kept the existing $etc_dir/svc.toml"
  fi

  mkdir -p "$data_dir"
  chown "$ids" "$data_dir"
  chmod 0750 "$data_dir"

  mkdir -p "$(dirname "$unit_file")"
  sed "s|^ExecStart=/usr/local/bin/svc |ExecStart=$prefix/bin/svc |" "$here/config/svc.service" >"$unit_file.new"
  chmod 0644 "$unit_file.new"
  mv "$unit_file.new" "$unit_file"

  systemctl daemon-reload
  systemctl enable svc
  # restart also starts a stopped service, and picks up the new executable on an upgrade.
  systemctl restart svc

  local host port url scheme=http
  host=$(config_value "" host 127.0.0.1)
  port=$(config_value "" port 8080)
  url=$(config_value "" base_url "")
  if [ -n "$(config_value tls cert "")" ]; then scheme=https; fi
  [ -n "$url" ] || url="$scheme://$host:$port"
  if [ "$upgrade" = yes ]; then say "upgraded svc to $("$bin_dir/svc" --version); data and configuration kept"; else say "installed svc $("$bin_dir/svc" --version)"; fi
  say "svc is running at $url  (status: systemctl status svc; logs: journalctl -u svc)"
  say "create the first user and an API key (as the svc user, so the data stays its own):"
  say "  sudo -u svc $prefix/bin/svc admin create-user --config /etc/svc/svc.toml --email you@example.com --name You --workspace main --password-stdin"
  say "  sudo -u svc $prefix/bin/svc admin create-key --config /etc/svc/svc.toml --email you@example.com --workspace main"
  say "to reach it from other machines set host = \"0.0.0.0\" in /etc/svc/svc.toml (or put a reverse proxy in front) and run: systemctl restart svc"
}

uninstall_service() {
  if [ -f "$unit_file" ]; then
    systemctl disable --now svc || true
    rm -f "$unit_file"
    systemctl daemon-reload
  fi
  rm -f "$bin_dir/svc"
  say "removed the svc service and $bin_dir/svc"
  if [ "$purge" = yes ]; then
    rm -rf "$etc_dir" "$data_dir"
    if user_exists; then
      userdel "${account_prefix[@]}" svc
    fi
    say "purged $etc_dir, $data_dir and the svc user"
  else
    say "kept the configuration ($etc_dir) and the data ($data_dir); --uninstall --purge deletes them"
  fi
}

case "$as_service:$mode" in
  yes:install) install_service ;;
  yes:uninstall) uninstall_service ;;
  no:install) install_for_user ;;
  no:uninstall) uninstall_for_user ;;
esac
