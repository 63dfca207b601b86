#!/usr/bin/env bash
# Runs the Dockerfile's steps where no Docker engine runs. Build stage: its COPY and RUN instructions, in order,
# in a copy of the build context filtered by .dockerignore. Runtime stage: the apt packages resolved against
# Debian (simulated), the user created in a throwaway root, the binary copied, then the ENTRYPOINT/CMD started
# with the image's ENV as an unprivileged user and probed with the HEALTHCHECK command; then a runner container
# (`svc runner --server …` with a runner token, a volume of its own) started the same way and probed with it too.
# Differences from a real container, all path or port only: the throwaway root prefixes /var/lib/svc and
# /usr/local/bin, the port is a free one (SVC_PORT=0), SVC_HOST is 127.0.0.1, and tini is not interposed.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/svc-docker-steps.XXXXXX")
server_pid=
runner_pid=
cleanup() {
  if [ -n "$runner_pid" ]; then kill "$runner_pid" 2>/dev/null || true; fi
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; fi
  if [ -z "${SVC_KEEP_WORK:-}" ]; then rm -rf "$work"; fi
}
trap cleanup EXIT

step() { printf '== %s\n' "$*"; }
fail() {
  printf 'docker-steps: %s\n' "$*" >&2
  exit 1
}

# The Dockerfile's instructions, one per line: comments dropped, continuation lines joined.
instructions() {
  sed -e '/^[[:space:]]*#/d' "$repo/Dockerfile" | sed -e ':a' -e '/\\$/N; s/\\\n[[:space:]]*/ /; ta' | grep -v '^[[:space:]]*$'
}

step "build context: the repository without what .dockerignore lists"
tar -C "$repo" --exclude-from="$repo/.dockerignore" -cf - . | tar -C "$work" -xf - --one-top-level=context-all
build="$work/build"
mkdir -p "$build"

stage=-1
root="$work/image"
mkdir -p "$root"
env_line=
user=
volume=
expose=
healthcheck=
entry=
while IFS= read -r line; do
  keyword=${line%% *}
  args=${line#* }
  case "$keyword" in
    FROM) stage=$((stage + 1)); step "stage $stage: $line" ;;
    WORKDIR) step "$line" ;;
    USER) user=$args; step "$line" ;;
    VOLUME) volume=$args; step "$line" ;;
    EXPOSE) expose=$args; step "$line" ;;
    COPY)
      if [ "$stage" = 0 ]; then
        # shellcheck disable=SC2086 # the instruction's sources are separate words
        set -- $args
        dest=${*: -1}
        for ((i = 1; i < $#; i++)); do
          src=${!i}
          if [ "$src" = . ]; then cp -a "$work/context-all/." "$build/$dest"; else cp -a "$work/context-all/$src" "$build/$dest"; fi
        done
        step "COPY $args"
      else
        # COPY --from=build /src/dist/svc /usr/local/bin/svc: /src is the build stage's WORKDIR.
        # shellcheck disable=SC2086
        set -- $args
        src=${2#/src/}
        mkdir -p "$root$(dirname "$3")"
        cp "$build/$src" "$root$3"
        step "COPY $args -> $root$3"
      fi
      ;;
    RUN)
      if [ "$stage" = 0 ]; then
        step "RUN $args"
        (cd "$build" && bash -euo pipefail -c "$args")
      elif [[ "$args" == *"apt-get install"* ]]; then
        pkgs=$(printf '%s\n' "$args" | sed -e 's/.*--no-install-recommends //' -e 's/ &&.*//')
        step "RUN apt-get install (simulated): $pkgs"
        if compgen -G "/var/lib/apt/lists/*Packages*" >/dev/null; then
          # shellcheck disable=SC2086 # a list of package names
          apt-get install --simulate --no-install-recommends $pkgs >/dev/null || fail "the runtime packages do not resolve: $pkgs"
        else
          fail "no apt package lists to resolve $pkgs against: run apt-get update first"
        fi
      elif [[ "$args" == *useradd* ]]; then
        step "RUN (in the throwaway root) $args"
        mkdir -p "$root/etc"
        for f in passwd group shadow gshadow; do
          [ -f "$root/etc/$f" ] || grep -E '^(root|nobody|nogroup):' "/etc/$f" >"$root/etc/$f" || true
        done
        cp /etc/login.defs "$root/etc/login.defs"
        cmd=${args//groupadd /groupadd --prefix $root }
        cmd=${cmd//useradd /useradd --prefix $root }
        cmd=${cmd//mkdir -p \/var/mkdir -p $root\/var}
        cmd=${cmd//chown svc:svc /: }
        bash -euo pipefail -c "$cmd"
        grep -q '^svc:' "$root/etc/passwd" || fail "the svc user was not created"
      else
        fail "a runtime RUN step this script does not know how to check: $args"
      fi
      ;;
    ENV) env_line=$args; step "ENV $args" ;;
    HEALTHCHECK) healthcheck=${args#* CMD }; step "HEALTHCHECK $healthcheck" ;;
    ENTRYPOINT) entry=$args; step "ENTRYPOINT $args" ;;
    CMD) entry="$entry $args"; step "CMD $args" ;;
    *) fail "unexpected Dockerfile instruction: $line" ;;
  esac
done < <(instructions)

[ "$stage" = 1 ] || fail "expected a two-stage Dockerfile, found $((stage + 1)) stages"
[ -x "$root/usr/local/bin/svc" ] || fail "the runtime stage has no /usr/local/bin/svc"
case "$user" in "" | root | 0 | 0:*) fail "the image must run as a non-root USER" ;; esac
[ "$volume" = /var/lib/svc ] || fail "the image must declare VOLUME /var/lib/svc"
[ "$expose" = 8080 ] || fail "the image must EXPOSE 8080"
[[ " $env_line " == *" SVC_HOST=0.0.0.0 "* ]] || fail "inside the container svc must listen on 0.0.0.0 (ENV SVC_HOST=0.0.0.0)"
[[ "$healthcheck" == "svc healthcheck"* ]] || fail "the HEALTHCHECK must be svc healthcheck (it checks a server's /healthz, or a runner)"

step "container start: $entry, as an unprivileged user, with: $env_line"
declare -a image_env
read -r -a image_env <<<"$env_line"
data="$root/var/lib/svc"
mkdir -p "$data"
run_as=()
if [ "$(id -u)" = 0 ]; then
  chown -R nobody:nogroup "$data"
  chmod 755 "$work"
  run_as=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
fi
(
  cd "$data"
  exec env -i PATH=/usr/bin:/bin "${image_env[@]}" SVC_HOST=127.0.0.1 SVC_PORT=0 SVC_DATA_DIR="$data" HOME="$data" \
    "${run_as[@]}" "$root/usr/local/bin/svc" serve
) 2>"$work/serve.log" &
server_pid=$!
url=
for _ in $(seq 1 100); do
  url=$(sed -n 's/^svc listening on \(http[^ ]*\).*/\1/p' "$work/serve.log" | head -n 1)
  [ -n "$url" ] && break
  kill -0 "$server_pid" 2>/dev/null || fail "svc exited at start: $(cat "$work/serve.log")"
  sleep 0.1
done
[ -n "$url" ] || fail "svc did not start: $(cat "$work/serve.log")"
port=${url##*:}
# The HEALTHCHECK as Docker runs it: through sh, with the image's environment, as the image's user, in the container
# whose volume is $1 and where a server would listen on port $2.
healthcheck_in() {
  (cd "$1" && env -i PATH="$root/usr/local/bin:/usr/bin:/bin" "${image_env[@]}" SVC_PORT="$2" HOME="$1" "${run_as[@]}" sh -c "$healthcheck")
}
step "HEALTHCHECK against $url"
healthcheck_in "$data" "$port" || fail "the HEALTHCHECK failed"
[ -f "$data/svc.sqlite" ] || fail "no database in the data volume"

step "a runner container: svc runner --server $url, with a runner token and a volume of its own"
runner_home="$work/runner-volume"
mkdir -p "$runner_home"
if [ "$(id -u)" = 0 ]; then chown nobody:nogroup "$runner_home"; fi
token=$(cd "$data" && env -i PATH=/usr/bin:/bin "${image_env[@]}" SVC_DATA_DIR="$data" HOME="$data" "${run_as[@]}" \
  "$root/usr/local/bin/svc" admin create-runner-token --name docker-steps) || fail "could not make a runner token"
(
  cd "$runner_home"
  exec env -i PATH=/usr/bin:/bin "${image_env[@]}" HOME="$runner_home" SVC_RUNNER_TOKEN="$token" \
    "${run_as[@]}" "$root/usr/local/bin/svc" runner --server "$url"
) 2>"$work/runner.log" &
runner_pid=$!
healthy=
for _ in $(seq 1 100); do
  # No server listens in a runner container (port 1 here: nothing does): only the runner can make it healthy.
  if healthcheck_in "$runner_home" 1 >"$work/runner-health.out" 2>&1; then
    healthy=1
    break
  fi
  kill -0 "$runner_pid" 2>/dev/null || fail "svc runner exited at start: $(cat "$work/runner.log")"
  sleep 0.1
done
[ -n "$healthy" ] || fail "the HEALTHCHECK never passed in the runner container: $(cat "$work/runner-health.out") $(cat "$work/runner.log")"
grep -q "^healthy: the runner" "$work/runner-health.out" || fail "the runner container's HEALTHCHECK did not check the runner: $(cat "$work/runner-health.out")"
step "HEALTHCHECK in the runner container: $(cat "$work/runner-health.out")"
kill -TERM "$runner_pid"
code=0
wait "$runner_pid" || code=$?
runner_pid=
[ "$code" = 0 ] || fail "svc runner exited $code on SIGTERM"
kill -TERM "$server_pid"
code=0
wait "$server_pid" || code=$?
server_pid=
[ "$code" = 0 ] || fail "svc exited $code on SIGTERM"
step "ok: built, started from the image layout (a server, a runner), healthy, stopped cleanly"
