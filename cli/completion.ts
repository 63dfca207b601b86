// `svc completion bash|zsh|fish`: a completion script generated from the command tree itself.
import type { Command } from "commander";
import { UsageError } from "./usage";

interface Node {
  path: string[];
  subcommands: string[];
  options: string[];
}

function walk(cmd: Command, path: string[] = []): Node[] {
  const subs = cmd.commands.filter((c) => c.name() !== "help");
  const options = cmd.options.map((o) => o.long).filter((l): l is string => typeof l === "string");
  const here: Node = { path, subcommands: subs.map((c) => c.name()), options: [...options, "--help"] };
  return [here, ...subs.flatMap((c) => walk(c, [...path, c.name()]))];
}

function bashScript(nodes: Node[]): string {
  const cases = nodes.map((n) => `    "${n.path.join(" ")}") words="${[...n.subcommands, ...n.options].join(" ")}" ;;`).join("\n");
  const known = nodes.map((n) => `"${n.path.join(" ")}"`).join(" ");
  return `# svc completion for bash: eval "$(svc completion bash)" or save it under /etc/bash_completion.d/svc
_svc_complete() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" path="" words="" candidate i
  local known=(${known})
  for ((i = 1; i < COMP_CWORD; i++)); do
    candidate="\${path:+$path }\${COMP_WORDS[i]}"
    for k in "\${known[@]}"; do
      if [[ "$k" == "$candidate" ]]; then path="$candidate"; break; fi
    done
  done
  case "$path" in
${cases}
  esac
  COMPREPLY=( $(compgen -W "$words" -- "$cur") )
}
complete -F _svc_complete svc
`;
}

function fishScript(nodes: Node[]): string {
  const lines = ["# svc completion for fish: svc completion fish > ~/.config/fish/completions/svc.fish"];
  for (const n of nodes) {
    const cond = n.path.length === 0 ? "__fish_use_subcommand" : n.path.map((w) => `__fish_seen_subcommand_from ${w}`).join("; and ");
    if (n.subcommands.length) lines.push(`complete -c svc -f -n '${cond}' -a '${n.subcommands.join(" ")}'`);
    for (const o of n.options) if (n.path.length) lines.push(`complete -c svc -n '${cond}' -l ${o.replace(/^--/, "")}`);
  }
  return `${lines.join("\n")}\n`;
}

export function completionScript(shell: string, root: Command): string {
  const nodes = walk(root);
  if (shell === "bash") return bashScript(nodes);
  if (shell === "zsh") return `# svc completion for zsh: eval "$(svc completion zsh)"\nautoload -U +X bashcompinit && bashcompinit\n${bashScript(nodes)}`;
  if (shell === "fish") return fishScript(nodes);
  throw new UsageError(`no completion for "${shell}": choose bash, zsh or fish`);
}

export function registerCompletion(program: Command): void {
  program
    .command("completion")
    .description("Print a shell completion script (bash, zsh or fish)")
    .argument("<shell>", "bash | zsh | fish")
    .action((shell: string) => {
      process.stdout.write(completionScript(shell, program));
    });
}
