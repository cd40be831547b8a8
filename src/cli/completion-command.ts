import { Argument, type Command } from 'commander';
import { commandPath } from './help-examples.js';

/** One command of the tree, as the completion scripts need it. */
interface CommandNode {
  /** `''` for the program itself, else `dbt3 load`. */
  readonly path: string;
  readonly subcommands: readonly string[];
  /** Every flag, long and short: `--workers`, `-w`. */
  readonly options: readonly string[];
}

/** Walks commander's tree: what the completion offers is what the parser takes, never a hand-kept list. */
export function commandTree(program: Command): CommandNode[] {
  const out: CommandNode[] = [];
  const walk = (cmd: Command): void => {
    const options = cmd.options.flatMap((o) => [o.long, o.short]).filter((f): f is string => f !== undefined);
    out.push({ path: cmd.parent ? commandPath(cmd) : '', subcommands: cmd.commands.map((c) => c.name()), options: [...options, '--help'] });
    cmd.commands.forEach(walk);
  };
  walk(program);
  return out;
}

const caseArms = (nodes: readonly CommandNode[], pick: (n: CommandNode) => readonly string[], indent: string): string =>
  nodes.map((n) => `${indent}'${n.path}') echo '${pick(n).join(' ')}' ;;`).join('\n');

/** The two lookups both scripts use (the same shell syntax in bash and zsh): a command's subcommands, its options. */
function lookupFunctions(nodes: readonly CommandNode[]): string {
  return `_pgsurge_subcommands() {
  case "$1" in
${caseArms(nodes, (n) => n.subcommands, '    ')}
  esac
}
_pgsurge_options() {
  case "$1" in
${caseArms(nodes, (n) => n.options, '    ')}
  esac
}
`;
}

export function bashCompletion(nodes: readonly CommandNode[]): string {
  return `# pgsurge completion for bash: source <(pgsurge completion bash)
${lookupFunctions(nodes)}_pgsurge() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" path="" word i subs
  for ((i = 1; i < COMP_CWORD; i++)); do
    word="\${COMP_WORDS[i]}"
    [[ $word == -* ]] && continue
    subs=" $(_pgsurge_subcommands "$path") "
    if [[ $subs == *" $word "* ]]; then path="\${path:+$path }$word"; fi
  done
  if [[ $cur == -* ]]; then
    COMPREPLY=( $(compgen -W "$(_pgsurge_options "$path")" -- "$cur") )
  else
    subs="$(_pgsurge_subcommands "$path")"
    if [[ -n $subs ]]; then COMPREPLY=( $(compgen -W "$subs" -- "$cur") ); else COMPREPLY=( $(compgen -f -- "$cur") ); fi
  fi
}
complete -o default -F _pgsurge pgsurge
`;
}

export function zshCompletion(nodes: readonly CommandNode[]): string {
  return `#compdef pgsurge
# pgsurge completion for zsh: pgsurge completion zsh > "\${fpath[1]}/_pgsurge" (then restart zsh)
${lookupFunctions(nodes)}_pgsurge() {
  local path_="" word i
  local -a subs
  for ((i = 2; i < CURRENT; i++)); do
    word="\${words[i]}"
    [[ $word == -* ]] && continue
    subs=($(_pgsurge_subcommands "$path_"))
    if (( \${subs[(Ie)$word]} )); then path_="\${path_:+$path_ }$word"; fi
  done
  if [[ \${words[CURRENT]} == -* ]]; then
    compadd -- $(_pgsurge_options "$path_")
  else
    subs=($(_pgsurge_subcommands "$path_"))
    if (( \${#subs} )); then compadd -- $subs; else _files; fi
  fi
}
# Autoloaded from $fpath: complete now; sourced: register.
if [[ \${zsh_eval_context[-1]} == loadautofunc ]]; then _pgsurge "$@"; else compdef _pgsurge pgsurge; fi
`;
}

export function registerCompletionCommand(program: Command): void {
  program
    .command('completion')
    .description('print a shell completion script for every command and option: source <(pgsurge completion bash)')
    .addArgument(new Argument('<shell>', 'the shell').choices(['bash', 'zsh']))
    .action((shell: 'bash' | 'zsh') => {
      const nodes = commandTree(program);
      process.stdout.write(shell === 'bash' ? bashCompletion(nodes) : zshCompletion(nodes));
    });
}
