// The top-level install.sh in a throwaway root (SVC_ROOT), with systemctl replaced at its boundary by a
// stand-in that records each call: fresh install, upgrade in place, uninstall, purge, user-mode installs.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { VERSION } from "../src/version";
import { BINARY as BUILT, requireBinary } from "./helpers/binary";
import { tempDir } from "./helpers/server";

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

function runInstall(host: Host, args: string[], env: Record<string, string> = {}) {
  const p = Bun.spawnSync(["bash", SCRIPT, ...args], {
    env: { PATH: `${host.fakeBin}:${process.env.PATH ?? "/usr/bin:/bin"}`, HOME: join(host.root, "..", "home"), SVC_ROOT: host.root, ...env },
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

test("the systemd unit passes systemd-analyze verify", () => {
  const unit = join(work, "svc.service");
  writeFileSync(unit, readFileSync(join(ROOT_DIR, "config", "svc.service"), "utf8").replace("ExecStart=/usr/local/bin/svc ", `ExecStart=${BINARY} `));
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
