// Cross-builds (bun build --compile --target) for linux-arm64 and darwin-arm64, and a compiled server handing
// them out from <data_dir>/downloads with their checksums.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { buildExecutable } from "../scripts/build";
import { requireBinary, type ServeProcess, startServe } from "./helpers/binary";
import { tempDir } from "./helpers/server";

let work: string;
let downloads: string;
beforeAll(async () => {
  requireBinary();
  work = tempDir("svc-cross-");
  downloads = join(work, "data", "downloads");
  mkdirSync(downloads, { recursive: true });
  // The build resolves sources relative to the repository.
  process.chdir(join(import.meta.dir, ".."));
  await buildExecutable(join(downloads, "svc-linux-arm64"), "bun-linux-arm64");
  await buildExecutable(join(downloads, "svc-darwin-arm64"), "bun-darwin-arm64");
}, 240_000);
afterAll(() => rmSync(work, { recursive: true, force: true }));

test("the cross-built executables are an ARM64 ELF and an ARM64 Mach-O", () => {
  const elf = readFileSync(join(downloads, "svc-linux-arm64"));
  expect(elf.subarray(0, 4)).toEqual(Buffer.from([0x7f, 0x45, 0x4c, 0x46]));
  expect(elf.readUInt16LE(18)).toBe(0xb7); // e_machine EM_AARCH64
  const macho = readFileSync(join(downloads, "svc-darwin-arm64"));
  expect(macho.readUInt32LE(0)).toBe(0xfeedfacf); // MH_MAGIC_64
  expect(macho.readUInt32LE(4)).toBe(0x0100000c); // CPU_TYPE_ARM64
});

test("a running server hands them out by os and arch, each with its SHA-256", async () => {
  const s: ServeProcess = await startServe(["--data-dir", join(work, "data")], { cwd: work, env: { SVC_LOG_LEVEL: "warn" } });
  try {
    for (const [os, arch] of [
      ["linux", "arm64"],
      ["darwin", "arm64"],
    ] as const) {
      const file = join(downloads, `svc-${os}-${arch}`);
      const r = await fetch(`${s.url}/download/svc?os=${os}&arch=${arch}`);
      expect(r.status).toBe(200);
      const bytes = new Uint8Array(await r.arrayBuffer());
      const hex = new Bun.CryptoHasher("sha256").update(bytes).digest("hex");
      expect(hex).toBe(new Bun.CryptoHasher("sha256").update(readFileSync(file)).digest("hex"));
      expect(await (await fetch(`${s.url}/download/svc.sha256?os=${os}&arch=${arch}`)).text()).toBe(`${hex}  svc-${os}-${arch}\n`);
    }
    const none = await fetch(`${s.url}/download/svc?os=darwin&arch=x64`);
    expect(none.status).toBe(404);
  } finally {
    await s.stop();
  }
});
