// `svc login`, `svc logout`: the CLI's credentials, saved as PRODUCT.md says (`svc whoami` shows them in use).
import type { Command } from "commander";
import { removeLogin, saveLogin } from "../src/client/settings";
import { UsageError } from "./usage";
import { printable } from "./output";
import { KEY_PATTERN } from "../src/security/api-keys";
import { clientFor, runCommand, settingsFor } from "./session";

/** Reads a line at the terminal without echoing it (a key or password must not land on screen or in scrollback). */
export async function promptHidden(question: string): Promise<string> {
  const stdin = process.stdin;
  // The terminal stops echoing before the question shows: what is typed (or pasted) at once after it is never shown.
  stdin.setRawMode(true);
  stdin.resume();
  stdin.setEncoding("utf8");
  process.stderr.write(question);
  return new Promise((resolve, reject) => {
    let value = "";
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === "\r" || ch === "\n") {
          done();
          resolve(value);
          return;
        }
        if (ch === "\u0003") {
          done();
          reject(new UsageError("cancelled"));
          return;
        }
        if (ch === "\u007f" || ch === "\b") value = value.slice(0, -1);
        else value += ch;
      }
    };
    const done = () => {
      stdin.off("data", onData);
      stdin.setRawMode(false);
      stdin.pause();
      process.stderr.write("\n");
    };
    stdin.on("data", onData);
  });
}

async function readKey(): Promise<string> {
  if (process.stdin.isTTY) return (await promptHidden("API key (input hidden): ")).trim();
  return (await new Response(Bun.stdin.stream()).text()).trim();
}

export function registerAuthCommands(program: Command): void {
  program
    .command("login")
    .description("Save an API key for this machine (read from stdin, or a hidden prompt), after checking it with the server")
    .option("--server <url>", "server URL (default: SVC_SERVER, .svc.json, the machine config, or http://127.0.0.1:8080)")
    .action((o: { server?: string }) =>
      runCommand(async () => {
        const settings = settingsFor(o);
        const key = await readKey();
        if (!key) throw new UsageError("no key given: paste it at the prompt or pipe it on stdin (`svc login < key.txt`)");
        if (!KEY_PATTERN.test(key)) throw new UsageError("that is not an API key: keys look like svc_ followed by 43 letters and digits");
        const me = await clientFor(settings, { key }).call("whoami", {});
        const path = saveLogin(settings.server.value, key);
        process.stdout.write(
          `Logged in to ${settings.server.value} as ${printable(me.user.email)} in workspace ${printable(me.workspace.slug)}.\nKey ${printable(me.key?.prefix ?? "")}… saved to ${path} (mode 0600).\n`,
        );
        return;
      }),
    );

  program
    .command("logout")
    .description("Remove the key saved by `svc login`")
    .action(() =>
      runCommand(async () => {
        const path = removeLogin();
        process.stdout.write(path ? `Removed the saved key ${path}.\n` : "No saved login.\n");
        if (process.env.SVC_API_KEY) process.stdout.write("SVC_API_KEY is still set in this environment and will be used.\n");
        return;
      }),
    );
}
