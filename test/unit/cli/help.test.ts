import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, it } from 'node:test';
import type { Command } from 'commander';
import { bashCompletion, commandTree, zshCompletion } from '../../../src/cli/completion-command.js';
import { commandPath } from '../../../src/cli/help-examples.js';
import { buildProgram } from '../../../src/cli/main.js';

function helpOf(cmd: Command): string {
  let out = '';
  cmd.configureOutput({ writeOut: (s) => (out += s), writeErr: () => {} });
  cmd.outputHelp();
  return out;
}

function allCommands(cmd: Command): Command[] {
  return cmd.commands.flatMap((c) => [c, ...allCommands(c)]);
}

describe('--help and completion', () => {
  const program = buildProgram();
  const commands = allCommands(program);

  for (const cmd of commands) {
    it(`pgsurge ${commandPath(cmd)} --help ends with examples of real commands`, () => {
      const help = helpOf(cmd);
      const block = /\nExamples:\n((?:  .*\n?)+)/.exec(help);
      assert.ok(block, `no Examples: in pgsurge ${commandPath(cmd)} --help`);
      for (const line of block[1]!.split('\n').filter((l) => l.trim() !== '')) {
        for (const m of line.matchAll(/pgsurge ((?:[a-z0-9]+ ?)+)/g)) {
          const words = m[1]!.trim().split(' ');
          let at: Command = program;
          const first = at.commands.find((c) => c.name() === words[0]);
          assert.ok(first, `${line}: "${words[0]}" is not a command`);
          at = first;
          for (const w of words.slice(1)) at = at.commands.find((c) => c.name() === w) ?? at;
        }
      }
    });
  }

  it('the completion knows every command and option, from the parser', () => {
    const nodes = commandTree(program);
    const bash = bashCompletion(nodes);
    const zsh = zshCompletion(nodes);
    for (const cmd of commands) {
      assert.ok(bash.includes(`'${commandPath(cmd)}')`), `bash: ${commandPath(cmd)}`);
      assert.ok(zsh.includes(`'${commandPath(cmd)}')`), `zsh: ${commandPath(cmd)}`);
      for (const o of cmd.options) assert.match(bash, new RegExp(`'${commandPath(cmd)}'\\) echo '[^']*${o.long}\\b`), `${commandPath(cmd)} ${o.long}`);
    }
  });

  const complete = (words: string[]): string =>
    execFileSync('bash', ['-c', `${bashCompletion(commandTree(program))}\nCOMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _pgsurge; echo "\${COMPREPLY[*]}"`], { encoding: 'utf8' }).trim();
  it('bash completes commands, subcommands and options', () => {
    assert.equal(complete(['pgsurge', 'lo']), 'load');
    assert.equal(complete(['pgsurge', 'cluster', '']), 'start stop status url');
    assert.equal(complete(['pgsurge', 'load', 'x.tbl', '--trun']), '--truncate');
    assert.equal(complete(['pgsurge', 'dbt3', 'gen', '--sc']), '--scale');
    assert.equal(complete(['pgsurge', 'completion', '--he']), '--help');
  });
});
