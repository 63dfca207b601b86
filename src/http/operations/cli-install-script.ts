// The POSIX sh script served at GET /install.sh: downloads the CLI from the same server, checks its SHA-256
// and puts it on PATH. It installs the CLI only; the top-level install.sh of the repository installs the service.

/** Single-quoted for sh: the server URL is embedded literally, never expanded by the shell. */
const shQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

export function cliInstallScript(serverUrl: string): string {
  return `#!/bin/sh
# Installs the svc CLI from ${serverUrl.replace(/[\r\n]/g, "")}
# Usage: curl -fsSL <server>/install.sh | sh
# SVC_INSTALL_DIR chooses the directory (default: /usr/local/bin as root, else ~/.local/bin).
set -eu

SERVER=${shQuote(serverUrl)}

fail() {
  printf 'svc install: %s\\n' "$1" >&2
  exit 1
}

case "$(uname -s)" in
  Linux) os=linux ;;
  Darwin) os=darwin ;;
  *) fail "unsupported operating system $(uname -s): builds exist for Linux and macOS" ;;
esac
case "$(uname -m)" in
  x86_64 | amd64) arch=x64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) fail "unsupported CPU $(uname -m): builds exist for x64 and arm64" ;;
esac

if [ -n "\${SVC_INSTALL_DIR:-}" ]; then
  dir=$SVC_INSTALL_DIR
elif [ "$(id -u)" = 0 ]; then
  dir=/usr/local/bin
else
  dir="$HOME/.local/bin"
fi

tmp=$(mktemp -d "\${TMPDIR:-/tmp}/svc-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

# fetch URL FILE: fails with the server's own message when it answers with an error.
fetch() {
  if command -v curl >/dev/null 2>&1; then
    code=$(curl -sSL -o "$2" -w '%{http_code}' "$1") || fail "cannot reach $1"
    if [ "$code" != 200 ]; then
      fail "$1 answered $code: $(cat "$2" 2>/dev/null)"
    fi
  elif command -v wget >/dev/null 2>&1; then
    wget -q -O "$2" "$1" || fail "download of $1 failed (the server may have no build for $os-$arch)"
  else
    fail "curl or wget is needed to download svc"
  fi
}

query="os=$os&arch=$arch"
printf 'downloading svc for %s-%s from %s\\n' "$os" "$arch" "$SERVER"
fetch "$SERVER/download/svc?$query" "$tmp/svc"
fetch "$SERVER/download/svc.sha256?$query" "$tmp/svc.sha256"

want=$(cut -d ' ' -f 1 <"$tmp/svc.sha256")
if command -v sha256sum >/dev/null 2>&1; then
  got=$(sha256sum "$tmp/svc" | cut -d ' ' -f 1)
elif command -v shasum >/dev/null 2>&1; then
  got=$(shasum -a 256 "$tmp/svc" | cut -d ' ' -f 1)
else
  fail "sha256sum or shasum is needed to verify the download"
fi
if [ "$want" != "$got" ]; then
  fail "checksum mismatch (expected $want, got $got): the download is damaged; nothing was installed"
fi

mkdir -p "$dir"
chmod 755 "$tmp/svc"
# Move within the target directory last, so a running svc is replaced atomically, never half-written.
cp "$tmp/svc" "$dir/.svc.new"
mv -f "$dir/.svc.new" "$dir/svc"
printf 'installed %s (%s)\\n' "$dir/svc" "$("$dir/svc" --version)"

case ":$PATH:" in
  *":$dir:"*) ;;
  *) printf 'add it to your PATH:  export PATH="%s:%sPATH"\\n' "$dir" '$' ;;
esac
printf 'next:  svc login --server %s\\n' "$SERVER"
`;
}
