#!/usr/bin/env bash
# Installs svc on a Linux host: as root with systemd, a hardened service (binary, system user, config, data
# directory, unit); otherwise the executable in ~/.local/bin for the current user. Re-running upgrades in place.
# With --runner, it installs a runner instead (svc runner as the service svc-runner, for a server elsewhere).
#
# Usage: ./install.sh [--binary FILE] [--uninstall [--purge]]
#        ./install.sh --runner --server URL [--labels a,b] [--concurrency N] [--ca-file PEM] [--binary FILE]
#        ./install.sh --runner --uninstall [--purge]
#   --binary FILE  the svc executable to install (default: dist/svc or svc beside this script,
#                  else dist/svc-linux-<arch>)
#   --uninstall    stop and remove the service and the executable; keeps /etc/svc and /var/lib/svc
#   --purge        with --uninstall, also delete the configuration, the data and the svc user
#   --runner       the runner service svc-runner (root with systemd only). Its token is read from
#                  SVC_RUNNER_TOKEN, else from standard input (svc admin create-runner-token, or create_runner);
#                  it is kept in /etc/svc/runner.env (mode 0600) with the other settings. Re-running with
#                  --runner alone upgrades the executable and keeps them.
#   --server URL   the server the runner claims runs from (https://, or http:// to this machine)
#   --labels a,b   labels the runner offers besides its token's; --concurrency N: runs at once (default 4)
#   --ca-file PEM  the certificate authority that signed the server's certificate, when it is your own
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
runner=no
server=""
labels=""
concurrency=""
ca_file=""

say() { printf '%s\n' "$*"; }
fail() {
  printf 'install.sh: %s\n' "$*" >&2
  exit 1
}
usage() {
  printf 'install.sh: %s\nusage: ./install.sh [--binary FILE] [--uninstall [--purge]]\n       ./install.sh --runner --server URL [--labels a,b] [--concurrency N] [--ca-file PEM] [--binary FILE]\n       ./install.sh --runner --uninstall [--purge]\n' "$*" >&2
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
    --runner) runner=yes; shift ;;
    --server | --labels | --concurrency | --ca-file)
      [ $# -ge 2 ] || usage "$1 needs a value"
      case "$1" in
        --server) server=$2 ;;
        --labels) labels=$2 ;;
        --concurrency) concurrency=$2 ;;
        --ca-file) ca_file=$2 ;;
      esac
      shift 2
      ;;
    -h | --help)
      # The comment at the top of this file, up to its first line of code.
      awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
      exit 0
      ;;
    *) usage "unknown argument $1" ;;
  esac
done
[ "$purge" = no ] || [ "$mode" = uninstall ] || usage "--purge only goes with --uninstall"
if [ "$runner" = no ] && [ -n "$server$labels$concurrency$ca_file" ]; then usage "--server, --labels, --concurrency and --ca-file go with --runner"; fi
if [ "$mode" = uninstall ] && [ -n "$server$labels$concurrency$ca_file" ]; then usage "--uninstall takes no runner settings"; fi

bin_dir="$root$prefix/bin"
etc_dir="$root/etc/svc"
data_dir_abs=/var/lib/svc
data_dir="$root$data_dir_abs"
unit_file="$root/etc/systemd/system/svc.service"
runner_unit_file="$root/etc/systemd/system/svc-runner.service"
runner_env="$etc_dir/runner.env"
runner_ca="$etc_dir/runner-ca.pem"

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

# Stops and removes one of the two services (unit name, unit file, what it is called); the executable goes too,
# unless the other service (its unit file, what it is called) still uses it.
remove_service() {
  if [ -f "$2" ]; then
    systemctl disable --now "$1" || true
    rm -f "$2"
    systemctl daemon-reload
  fi
  if [ -f "$4" ]; then
    say "removed $3; kept $bin_dir/svc, which $5 uses"
  else
    rm -f "$bin_dir/svc"
    say "removed $3 and $bin_dir/svc"
  fi
}

uninstall_service() {
  remove_service svc "$unit_file" "the svc service" "$runner_unit_file" "the runner service svc-runner"
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

# A value written into runner.env: one line, nothing a shell or systemd would read as more than the value.
plain_value() {
  case "$2" in
    "" | *[[:space:]]* | *[\"\'\\\$\`]* | *[[:cntrl:]]*) fail "$1 \"$2\" is not a plain value (no spaces, quotes, backslashes or \$)" ;;
  esac
}

runner_token() { # sets token, from SVC_RUNNER_TOKEN or standard input
  token=${SVC_RUNNER_TOKEN:-}
  if [ -z "$token" ]; then
    if [ -t 0 ]; then
      read -r -s -p "runner token (svcr_…): " token || true
      printf '\n' >&2
    else
      read -r token || true
    fi
  fi
  token=${token//[[:space:]]/}
  [[ "$token" =~ ^svcr_[0-9A-Za-z]{43}$ ]] || fail "the runner token must be svcr_ and 43 letters or digits, as svc admin create-runner-token or create_runner printed it (give it in SVC_RUNNER_TOKEN or on standard input)"
}

# Everything runner.env will hold, checked before anything is installed; sets token.
check_runner_settings() {
  case "$server" in
    https://?*) ;;
    http://localhost | http://localhost[:/]* | http://127.* | "http://[::1]"*) ;;
    http://*) fail "--server $server is plain http:// to another machine: the token and the runs' secrets would travel unencrypted; use https://" ;;
    *) fail "--server must be an https:// address like https://svc.example.com, not \"$server\"" ;;
  esac
  plain_value --server "$server"
  if [ -n "$labels" ]; then
    [[ "$labels" =~ ^[A-Za-z0-9][A-Za-z0-9._-]*(,[A-Za-z0-9][A-Za-z0-9._-]*)*$ ]] || fail "--labels must be comma-separated labels of letters, digits, . _ -, not \"$labels\""
  fi
  if [ -n "$concurrency" ]; then
    if ! [[ "$concurrency" =~ ^[1-9][0-9]{0,2}$ ]] || [ "$concurrency" -gt 256 ]; then
      fail "--concurrency must be a whole number from 1 to 256, not \"$concurrency\""
    fi
  fi
  if [ -n "$ca_file" ]; then
    [ -f "$ca_file" ] || fail "--ca-file $ca_file does not exist"
    grep -q -- "-----BEGIN CERTIFICATE-----" "$ca_file" || fail "--ca-file $ca_file holds no PEM certificate"
  fi
  runner_token
}

write_runner_env() {
  mkdir -p "$etc_dir"
  if [ -n "$ca_file" ]; then
    cp "$ca_file" "$runner_ca.new"
    chmod 0644 "$runner_ca.new"
    mv -f "$runner_ca.new" "$runner_ca"
  fi
  # Only root reads it (systemd does, before starting the runner): it holds the token.
  (
    umask 077
    {
      printf '# svc runner settings, read by svc-runner.service; after a change: systemctl restart svc-runner\n'
      printf 'SVC_RUNNER_SERVER=%s\n' "$server"
      printf 'SVC_RUNNER_TOKEN=%s\n' "$token"
      if [ -n "$labels" ]; then printf 'SVC_RUNNER_LABELS=%s\n' "$labels"; fi
      if [ -n "$concurrency" ]; then printf 'SVC_RUNNER_CONCURRENCY=%s\n' "$concurrency"; fi
      if [ -n "$ca_file" ]; then printf 'NODE_EXTRA_CA_CERTS=%s\n' "${runner_ca#"$root"}"; fi
    } >"$runner_env.new"
  )
  chown root:root "$runner_env.new" 2>/dev/null || true
  chmod 0600 "$runner_env.new"
  mv -f "$runner_env.new" "$runner_env"
  say "wrote $runner_env (the token and settings; mode 0600)"
}

install_runner() {
  local src upgrade=no token=""
  src=$(find_binary)
  [ -f "$here/config/svc-runner.service" ] || fail "$here/config/svc-runner.service is missing: run install.sh from the svc source or release directory"
  if [ -z "$server" ]; then
    [ -f "$runner_env" ] || fail "--runner needs --server URL (and the token in SVC_RUNNER_TOKEN or on standard input) the first time"
    [ -z "$labels$concurrency$ca_file" ] || fail "--labels, --concurrency and --ca-file need --server (and the token): runner.env is written whole"
    upgrade=yes
  else
    check_runner_settings
  fi
  install_executable "$src" "$bin_dir/svc"
  if [ "$upgrade" = no ]; then write_runner_env; else say "kept the existing $runner_env"; fi

  mkdir -p "$(dirname "$runner_unit_file")"
  sed "s|^ExecStart=/usr/local/bin/svc |ExecStart=$prefix/bin/svc |" "$here/config/svc-runner.service" >"$runner_unit_file.new"
  chmod 0644 "$runner_unit_file.new"
  mv "$runner_unit_file.new" "$runner_unit_file"

  systemctl daemon-reload
  systemctl enable svc-runner
  systemctl restart svc-runner
  say "svc-runner is running svc $("$bin_dir/svc" --version) as a runner for $(sed -n 's/^SVC_RUNNER_SERVER=//p' "$runner_env")"
  say "  status: systemctl status svc-runner; logs: journalctl -u svc-runner"
  say "  it shows as connected on the server's Runners page (or svc runners list) once it said hello"
}

uninstall_runner() {
  remove_service svc-runner "$runner_unit_file" "the runner service svc-runner" "$unit_file" "the svc service"
  if [ "$purge" = yes ]; then
    rm -rf "$runner_env" "$runner_ca" "$root/var/lib/svc-runner" "$root/var/lib/private/svc-runner"
    say "purged $runner_env (the token), the authority's certificate and the runner's state"
  else
    say "kept $runner_env (it holds the token; --runner --uninstall --purge deletes it)"
  fi
}

case "$runner:$as_service:$mode" in
  no:yes:install) install_service ;;
  no:yes:uninstall) uninstall_service ;;
  no:no:install) install_for_user ;;
  no:no:uninstall) uninstall_for_user ;;
  yes:yes:install) install_runner ;;
  yes:yes:uninstall) uninstall_runner ;;
  yes:no:*)
    fail "--runner installs a system service: run it as root on a machine with systemd, or run a runner in the foreground: SVC_RUNNER_TOKEN=svcr_… svc runner --server URL"
    ;;
esac
