// The top-level install.sh in a throwaway root (SVC_ROOT), with systemctl replaced at its boundary by a
// stand-in that records each call: fresh install, upgrade in place, uninstall, purge, user-mode installs.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { VERSION } from "../src/version";
import { BINARY as BUILT, requireBinary } from "./helpers/binary";
import { json, runToEnd } from "./helpers/runs";
import { startTestServer, type TestServer, tempDir } from "./helpers/server";
import { startTargetApp, type TargetApp } from "./helpers/target-app";
import { waitUntil } from "./helpers/wait";

const ROOT_DIR = join(import.meta.dir, "..");
const SCRIPT = join(ROOT_DIR, "install.sh");

interface Host {
  root: string;
  calls: string;
  fakeBin: string;
}

/** A root with the account files useradd needs, systemd's runtime marker, and a recording systemctl. */
function makeHost(base: string, withSystemd = true): Host {
  const root = join(base, "root");
  mkdirSync(join(root, "etc"), { recursive: true });
  writeFileSync(join(root, "etc", "passwd"), "root:x:0:0:root:/root:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n");
  writeFileSync(join(root, "etc", "group"), "root:x:0:\nnogroup:x:65534:\n");
  writeFileSync(join(root, "etc", "shadow"), "root:*:19000:0:99999:7:::\nnobody:*:19000:0:99999:7:::\n");
  writeFileSync(join(root, "etc", "gshadow"), "root:*::\nnogroup:*::\n");
  copyFileSync("/etc/login.defs", join(root, "etc", "login.defs"));
  if (withSystemd) mkdirSync(join(root, "run", "systemd", "system"), { recursive: true });
  const fakeBin = join(base, "fake-bin");
  mkdirSync(fakeBin, { recursive: true });
  const calls = join(base, "systemctl.calls");
  writeFileSync(join(fakeBin, "systemctl"), `#!/bin/sh\nprintf '%s\\n' "$*" >> '${calls}'\n`);
  chmodSync(join(fakeBin, "systemctl"), 0o755);
  return { root, calls, fakeBin };
}

function runInstall(host: Host, args: string[], env: Record<string, string> = {}, stdin?: string) {
  const p = Bun.spawnSync(["bash", SCRIPT, ...args], {
    env: { PATH: `${host.fakeBin}:${process.env.PATH ?? "/usr/bin:/bin"}`, HOME: join(host.root, "..", "home"), SVC_ROOT: host.root, ...env },
    stdin: stdin === undefined ? "ignore" : new TextEncoder().encode(stdin),
  });
  return { code: p.exitCode, out: p.stdout.toString(), err: p.stderr.toString() };
}

const systemctlCalls = (h: Host) => (existsSync(h.calls) ? readFileSync(h.calls, "utf8").trim().split("\n") : []);
const sha256 = (file: string) => new Bun.CryptoHasher("sha256").update(readFileSync(file)).digest("hex");

/** A stand-in executable for upgrades: install.sh only copies it and asks its version. */
function fakeSvc(dir: string, version: string): string {
  const file = join(dir, `svc-${version}`);
  writeFileSync(file, `#!/bin/sh\necho ${version}\n`);
  chmodSync(file, 0o755);
  return file;
}

let work: string;
/** A private copy, so that a rebuild of dist/svc during the run cannot change what is compared. */
let BINARY: string;
beforeAll(() => {
  requireBinary();
  work = tempDir("svc-install-");
  chmodSync(work, 0o755);
  BINARY = join(work, "svc-under-test");
  copyFileSync(BUILT, BINARY);
  chmodSync(BINARY, 0o755);
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

test("install.sh is shellcheck-clean", () => {
  const r = Bun.spawnSync(["shellcheck", SCRIPT]);
  expect(r.stdout.toString()).toBe("");
  expect(r.exitCode).toBe(0);
});

test.each(["svc.service", "svc-runner.service"])("the systemd unit %s passes systemd-analyze verify", (name) => {
  const unit = join(work, name);
  writeFileSync(unit, readFileSync(join(ROOT_DIR, "config", name), "utf8").replace("ExecStart=/usr/local/bin/svc ", `ExecStart=${BINARY} `));
  const r = Bun.spawnSync(["systemd-analyze", "verify", unit]);
  expect(r.stderr.toString()).toBe("");
  expect(r.exitCode).toBe(0);
});

describe("as root with systemd", () => {
  let h: Host;
  beforeAll(() => {
    h = makeHost(join(work, "systemd-host"));
  });

  test("a fresh install puts every piece in place, enables and starts the service, and says what next", () => {
    const r = runInstall(h, ["--binary", BINARY]);
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    const bin = join(h.root, "usr", "local", "bin", "svc");
    expect(sha256(bin)).toBe(sha256(BINARY));
    expect(statSync(bin).mode & 0o777).toBe(0o755);

    const passwd = readFileSync(join(h.root, "etc", "passwd"), "utf8");
    const entry = passwd.split("\n").find((l) => l.startsWith("svc:"));
    expect(entry).toBeDefined();
    const [, , uid, gid, , home, shell] = (entry as string).split(":");
    expect(Number(uid)).toBeLessThan(1000);
    expect(home).toBe("/var/lib/svc");
    expect(shell).toMatch(/nologin|false/);

    const config = readFileSync(join(h.root, "etc", "svc", "svc.toml"), "utf8");
    expect(config).toContain('data_dir = "/var/lib/svc"');
    expect(config).toBe(readFileSync(join(ROOT_DIR, "config", "svc.toml"), "utf8").replace('data_dir = "./svc-data"', 'data_dir = "/var/lib/svc"'));
    expect(statSync(join(h.root, "etc", "svc", "svc.toml")).mode & 0o777).toBe(0o640);

    const data = statSync(join(h.root, "var", "lib", "svc"));
    expect(data.uid).toBe(Number(uid));
    expect(data.gid).toBe(Number(gid));
    expect(data.mode & 0o777).toBe(0o750);

    const unit = readFileSync(join(h.root, "etc", "systemd", "system", "svc.service"), "utf8");
    for (const line of [
      "User=svc",
      "ExecStart=/usr/local/bin/svc serve --config /etc/svc/svc.toml",
      "Restart=on-failure",
      "NoNewPrivileges=true",
      "ProtectSystem=strict",
      "ReadWritePaths=/var/lib/svc",
      "PrivateTmp=true",
      "WantedBy=multi-user.target",
    ]) {
      expect(unit.split("\n")).toContain(line);
    }
    expect(systemctlCalls(h)).toEqual(["daemon-reload", "enable svc", "restart svc"]);
    expect(r.out).toContain(`installed svc ${VERSION}`);
    expect(r.out).toContain("svc is running at http://127.0.0.1:8080");
    expect(r.out).toContain("svc admin create-user --config /etc/svc/svc.toml");
  });

  test("re-running upgrades the executable in place and keeps the configuration, the data and the user", () => {
    const configFile = join(h.root, "etc", "svc", "svc.toml");
    // The operator moved the port, turned on TLS and set the LLM endpoint's base_url (a key of another section,
    // which must not be taken for the service's own base_url).
    writeFileSync(
      configFile,
      readFileSync(configFile, "utf8")
        .replace(/^port = 8080$/m, "port = 9090   # edited by the operator")
        .replace('# base_url = "http://127.0.0.1:11434/v1"', 'base_url = "http://127.0.0.1:11434/v1"')
        .replace('# cert = "/etc/svc/tls.crt"', 'cert = "/etc/svc/tls.crt"'),
    );
    writeFileSync(join(h.root, "var", "lib", "svc", "svc.sqlite"), "precious data");
    const before = readFileSync(configFile, "utf8");
    const r = runInstall(h, [], { SVC_BINARY: fakeSvc(work, "9.9.9") });
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    expect(r.out).toContain("upgraded svc to 9.9.9; data and configuration kept");
    expect(r.out).toContain("kept the existing");
    expect(r.out).toContain("svc is running at https://127.0.0.1:9090 ");
    expect(readFileSync(configFile, "utf8")).toBe(before);
    expect(readFileSync(join(h.root, "var", "lib", "svc", "svc.sqlite"), "utf8")).toBe("precious data");
    expect(
      Bun.spawnSync([join(h.root, "usr", "local", "bin", "svc")])
        .stdout.toString()
        .trim(),
    ).toBe("9.9.9");
    expect(readFileSync(join(h.root, "etc", "passwd"), "utf8").match(/^svc:/gm)?.length).toBe(1);
    expect(systemctlCalls(h).slice(3)).toEqual(["daemon-reload", "enable svc", "restart svc"]);
  });

  test("--uninstall removes the service and the executable but keeps data and configuration", () => {
    const r = runInstall(h, ["--uninstall"]);
    expect(r.code).toBe(0);
    expect(existsSync(join(h.root, "etc", "systemd", "system", "svc.service"))).toBe(false);
    expect(existsSync(join(h.root, "usr", "local", "bin", "svc"))).toBe(false);
    expect(readFileSync(join(h.root, "var", "lib", "svc", "svc.sqlite"), "utf8")).toBe("precious data");
    expect(existsSync(join(h.root, "etc", "svc", "svc.toml"))).toBe(true);
    expect(systemctlCalls(h).slice(6)).toEqual(["disable --now svc", "daemon-reload"]);
    expect(r.out).toContain("kept the configuration");
  });

  test("--uninstall --purge also deletes configuration, data and the svc user", () => {
    expect(runInstall(h, ["--binary", fakeSvc(work, "1.0.0")]).code).toBe(0);
    const r = runInstall(h, ["--uninstall", "--purge"]);
    expect(r.code).toBe(0);
    expect(existsSync(join(h.root, "var", "lib", "svc"))).toBe(false);
    expect(existsSync(join(h.root, "etc", "svc"))).toBe(false);
    expect(readFileSync(join(h.root, "etc", "passwd"), "utf8")).not.toMatch(/^svc:/m);
  });
});

test("--help prints the usage comment, both forms, and none of the script's code", () => {
  const r = runInstall(makeHost(join(work, "help")), ["--help"]);
  expect(r.code).toBe(0);
  expect(r.out).toContain("Usage: ./install.sh [--binary FILE] [--uninstall [--purge]]");
  expect(r.out).toContain("./install.sh --runner --server URL");
  expect(r.out).toContain("SVC_USER_PREFIX (default ~/.local).");
  expect(r.out).not.toContain("set -euo pipefail");
  expect(r.out).not.toContain("#");
});

describe("refusals", () => {
  test("an unknown argument, --purge without --uninstall, and a missing binary are clear errors", () => {
    const h = makeHost(join(work, "refusals"));
    const unknown = runInstall(h, ["--frobnicate"]);
    expect(unknown.code).toBe(2);
    expect(unknown.err).toContain("unknown argument --frobnicate");
    const purge = runInstall(h, ["--purge"]);
    expect(purge.code).toBe(2);
    expect(purge.err).toContain("--purge only goes with --uninstall");
    const missing = runInstall(h, ["--binary", join(work, "no-such-svc")]);
    expect(missing.code).toBe(1);
    expect(missing.err).toContain("does not exist");
    expect(existsSync(join(h.root, "usr", "local", "bin", "svc"))).toBe(false);
    expect(systemctlCalls(h)).toEqual([]);
  });
});

describe("without systemd or without root", () => {
  test("as root on a host without systemd it installs into ~/.local/bin and explains svc serve", () => {
    const h = makeHost(join(work, "no-systemd"), false);
    const r = runInstall(h, ["--binary", BINARY]);
    expect(r.code).toBe(0);
    const bin = join(h.root, "..", "home", ".local", "bin", "svc");
    expect(sha256(bin)).toBe(sha256(BINARY));
    expect(r.out).toContain("no systemd here");
    expect(r.out).toContain("svc serve");
    expect(systemctlCalls(h)).toEqual([]);
    expect(existsSync(join(h.root, "etc", "svc"))).toBe(false);
  });

  test("as an unprivileged user it installs into ~/.local/bin, and --uninstall removes it", () => {
    const base = join(work, "unprivileged");
    const h = makeHost(base);
    const home = join(base, "home");
    mkdirSync(home, { recursive: true });
    const exe = fakeSvc(base, "2.0.0");
    Bun.spawnSync(["chown", "-R", "nobody:nogroup", base]);
    const asNobody = (args: string[]) => {
      const p = Bun.spawnSync(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "bash", SCRIPT, ...args], {
        env: { PATH: `${h.fakeBin}:${process.env.PATH ?? "/usr/bin:/bin"}`, HOME: home, SVC_ROOT: h.root, SVC_BINARY: exe },
      });
      return { code: p.exitCode, out: p.stdout.toString(), err: p.stderr.toString() };
    };
    const r = asNobody([]);
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    expect(r.out).toContain(`installed ${home}/.local/bin/svc (2.0.0)`);
    expect(r.out).toContain("not root");
    expect(r.out).toContain("svc serve");
    expect(systemctlCalls(h)).toEqual([]);
    expect(asNobody(["--uninstall"]).code).toBe(0);
    expect(existsSync(join(home, ".local", "bin", "svc"))).toBe(false);
  });
});

describe("--runner: a runner on another machine as the service svc-runner", () => {
  let h: Host;
  let s: TestServer;
  let target: TargetApp;
  let token: string;
  const envFile = () => join(h.root, "etc", "svc", "runner.env");
  const unitFile = () => join(h.root, "etc", "systemd", "system", "svc-runner.service");
  beforeAll(async () => {
    h = makeHost(join(work, "runner-host"));
    target = startTargetApp();
    // The server executes nothing itself: a run that passes was executed by the installed runner.
    s = await startTestServer({ rate_limit: { enabled: false }, runner: { local: false } });
    token = (await json<{ token: string }>(await s.call("POST", "/runners", { name: "installed-box", labels: [] }), 201)).token;
  }, 60_000);
  afterAll(async () => {
    await s.stop();
    await target.stop();
  });

  /** What systemd would start: the unit's ExecStart, ${VAR}s filled from its EnvironmentFile and nothing else. */
  function startLikeSystemd() {
    const unit = readFileSync(unitFile(), "utf8");
    const envPath = /^EnvironmentFile=(.+)$/m.exec(unit)?.[1] ?? "";
    const env: Record<string, string> = {};
    for (const line of readFileSync(join(h.root, envPath), "utf8").split("\n")) {
      const m = /^([A-Z_]+)=(.*)$/.exec(line);
      if (m?.[1]) env[m[1]] = m[2] ?? "";
    }
    const words = (/^ExecStart=(.+)$/m.exec(unit)?.[1] ?? "").split(" ").map((w) => w.replace(/^\$\{(\w+)\}$/, (_, name: string) => env[name] ?? ""));
    const home = tempDir("svc-runner-home-");
    const exe = join(h.root, words[0] ?? "");
    return Bun.spawn([exe, ...words.slice(1)], {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, ...env },
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
  }

  test("it installs the executable, a token file only root reads and a hardened unit, starts svc-runner, and that command runs a run", async () => {
    const r = runInstall(h, ["--runner", "--server", s.url, "--labels", "eu,lab-2", "--concurrency", "2", "--binary", BINARY], { SVC_RUNNER_TOKEN: token });
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    expect(r.out).not.toContain(token);
    expect(r.out).toContain(`svc-runner is running svc ${VERSION} as a runner for ${s.url}`);
    expect(sha256(join(h.root, "usr", "local", "bin", "svc"))).toBe(sha256(BINARY));
    expect(statSync(envFile()).mode & 0o777).toBe(0o600);
    expect(
      readFileSync(envFile(), "utf8")
        .split("\n")
        .filter((l) => !l.startsWith("#")),
    ).toEqual([`SVC_RUNNER_SERVER=${s.url}`, `SVC_RUNNER_TOKEN=${token}`, "SVC_RUNNER_LABELS=eu,lab-2", "SVC_RUNNER_CONCURRENCY=2", ""]);
    const unit = readFileSync(unitFile(), "utf8").split("\n");
    for (const line of [
      "EnvironmentFile=/etc/svc/runner.env",
      "ExecStart=/usr/local/bin/svc runner --server ${SVC_RUNNER_SERVER}",
      "DynamicUser=yes",
      "StateDirectory=svc-runner",
      "RestartPreventExitStatus=2 3",
      "ProtectSystem=strict",
      "WantedBy=multi-user.target",
    ]) {
      expect(unit).toContain(line);
    }
    expect(systemctlCalls(h)).toEqual(["daemon-reload", "enable svc-runner", "restart svc-runner"]);

    // The installed command with the installed settings: a runner with the labels, taking an "eu" environment's run.
    const project = (await json<{ slug: string }>(await s.call("POST", "/projects", { name: "installed" }), 201)).slug;
    await json(await s.call("POST", `/projects/${project}/environments`, { name: "eu", variables: { BASE_URL: target.url }, runner_labels: ["eu"] }), 201);
    const runner = startLikeSystemd();
    let log = "";
    void new Response(runner.stderr).text().then((t) => {
      log = t;
    });
    try {
      const run = await runToEnd(s, project, {
        name: "via-installed-runner",
        kind: "http",
        environment: "eu",
        steps: [{ request: { url: "/items/1" }, expect: [{ status: 200 }] }],
      });
      expect(run.status).toBe("passed");
      const listed = await json<{ data: { name: string; labels: string[]; connected: boolean }[] }>(await s.call("GET", "/runners"));
      const box = listed.data.find((x) => x.name === "installed-box");
      expect(box?.connected).toBe(true);
      expect(box?.labels).toEqual(expect.arrayContaining(["eu", "lab-2"]));
    } finally {
      runner.kill("SIGTERM");
      expect(await runner.exited).toBe(0);
    }
    expect(await waitUntil(() => log !== "", 5_000)).toBe(true);
    expect(log).toContain('"concurrency":2');
    expect(log).not.toContain(token);
  }, 60_000);

  test("re-running --runner alone upgrades the executable and keeps the settings; a token on standard input and --ca-file rewrite them", () => {
    const before = readFileSync(envFile(), "utf8");
    const upgraded = runInstall(h, ["--runner"], { SVC_BINARY: fakeSvc(work, "9.9.9") });
    expect(upgraded.err).toBe("");
    expect(upgraded.code).toBe(0);
    expect(upgraded.out).toContain("kept the existing");
    expect(upgraded.out).toContain("svc-runner is running svc 9.9.9");
    expect(readFileSync(envFile(), "utf8")).toBe(before);

    const ca = join(work, "team-ca.pem");
    writeFileSync(ca, "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n");
    const rewritten = runInstall(h, ["--runner", "--server", "https://svc.example.com", "--ca-file", ca, "--binary", BINARY], {}, `${token}\n`);
    expect(rewritten.err).toBe("");
    expect(rewritten.code).toBe(0);
    expect(
      readFileSync(envFile(), "utf8")
        .split("\n")
        .filter((l) => !l.startsWith("#")),
    ).toEqual(["SVC_RUNNER_SERVER=https://svc.example.com", `SVC_RUNNER_TOKEN=${token}`, "NODE_EXTRA_CA_CERTS=/etc/svc/runner-ca.pem", ""]);
    expect(readFileSync(join(h.root, "etc", "svc", "runner-ca.pem"), "utf8")).toBe(readFileSync(ca, "utf8"));
  });

  test("bad settings are refused before anything is written: a token of another shape or with a second line, plain http to another machine, odd labels", () => {
    const fresh = makeHost(join(work, "runner-refusals"));
    const cases: [string[], Record<string, string>, string][] = [
      [["--runner", "--server", "https://svc.example.com"], { SVC_RUNNER_TOKEN: "svcr_short" }, "the runner token must be"],
      [["--runner", "--server", "https://svc.example.com"], { SVC_RUNNER_TOKEN: `${token}\nNODE_OPTIONS=--inspect` }, "the runner token must be"],
      [["--runner", "--server", "http://192.0.2.10:8080"], { SVC_RUNNER_TOKEN: token }, "plain http:// to another machine"],
      [["--runner", "--server", "https://svc.example.com x"], { SVC_RUNNER_TOKEN: token }, "is not a plain value"],
      [["--runner", "--server", "https://svc.example.com", "--labels", "eu west"], { SVC_RUNNER_TOKEN: token }, "--labels must be"],
      [["--runner", "--server", "https://svc.example.com", "--concurrency", "0"], { SVC_RUNNER_TOKEN: token }, "--concurrency must be"],
      [["--runner"], { SVC_RUNNER_TOKEN: token }, "--runner needs --server"],
    ];
    for (const [args, env, message] of cases) {
      const r = runInstall(fresh, [...args, "--binary", BINARY], env);
      expect(r.code).toBe(1);
      expect(r.err).toContain(message);
      expect(r.err).not.toContain(token);
    }
    expect(existsSync(join(fresh.root, "usr", "local", "bin", "svc"))).toBe(false);
    expect(existsSync(join(fresh.root, "etc", "svc", "runner.env"))).toBe(false);
    expect(existsSync(join(fresh.root, "etc", "systemd", "system", "svc-runner.service"))).toBe(false);
    expect(systemctlCalls(fresh)).toEqual([]);
    const misplaced = runInstall(fresh, ["--server", "https://svc.example.com"]);
    expect(misplaced.code).toBe(2);
    expect(misplaced.err).toContain("go with --runner");
    const noSystemd = runInstall(makeHost(join(work, "runner-no-systemd"), false), ["--runner", "--server", "https://svc.example.com"], {
      SVC_RUNNER_TOKEN: token,
    });
    expect(noSystemd.code).toBe(1);
    expect(noSystemd.err).toContain("svc runner --server URL");
  });

  test("--runner --uninstall keeps the executable the svc service uses and the token file; --purge deletes the token file", () => {
    expect(runInstall(h, ["--binary", BINARY]).code).toBe(0);
    const exe = join(h.root, "usr", "local", "bin", "svc");
    const calls = systemctlCalls(h).length;
    const r = runInstall(h, ["--runner", "--uninstall"]);
    expect(r.code).toBe(0);
    expect(existsSync(unitFile())).toBe(false);
    expect(existsSync(exe)).toBe(true);
    expect(existsSync(envFile())).toBe(true);
    expect(r.out).toContain("which the svc service uses");
    expect(systemctlCalls(h).slice(calls)).toEqual(["disable --now svc-runner", "daemon-reload"]);
    const purged = runInstall(h, ["--runner", "--uninstall", "--purge"]);
    expect(purged.code).toBe(0);
    expect(existsSync(envFile())).toBe(false);
    expect(existsSync(join(h.root, "etc", "svc", "runner-ca.pem"))).toBe(false);
    // With the runner gone, removing the service removes the executable too.
    expect(runInstall(h, ["--uninstall"]).code).toBe(0);
    expect(existsSync(exe)).toBe(false);
  });

  test("removing the svc service keeps the executable while svc-runner uses it", () => {
    const both = makeHost(join(work, "runner-and-service"));
    expect(runInstall(both, ["--binary", BINARY]).code).toBe(0);
    expect(runInstall(both, ["--runner", "--server", "https://svc.example.com", "--binary", BINARY], { SVC_RUNNER_TOKEN: token }).code).toBe(0);
    const r = runInstall(both, ["--uninstall"]);
    expect(r.code).toBe(0);
    expect(r.out).toContain("which the runner service svc-runner uses");
    expect(existsSync(join(both.root, "usr", "local", "bin", "svc"))).toBe(true);
  });
});
