import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { it } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** The header both modules include (scripts/build-wasm.sh hashes it after each module's source). */
const SHARED_HEADER = 'src/codecs/wasm/numeric-send.h';

/**
 * The two checks of a committed WebAssembly module (scripts/build-wasm.sh): built from the
 * committed C source and the shared header (their sha256), and, where clang-14 and
 * wasm-ld-14 are installed (CI installs them), rebuilt into the same bytes. Paths from the
 * repository's root.
 */
export function committedModuleTests(source: string, generated: string, sha256: string): void {
  it('the committed module was built from the committed source', () => {
    const hash = createHash('sha256').update(readFileSync(path.join(root, source))).update(readFileSync(path.join(root, SHARED_HEADER)));
    assert.equal(hash.digest('hex'), sha256, `${source} or ${SHARED_HEADER} changed: run scripts/build-wasm.sh`);
  });

  const toolchain = spawnSync('sh', ['-c', 'command -v clang-14 && command -v wasm-ld-14'], { encoding: 'utf8' }).status === 0;
  it('rebuilding it gives the same module', { skip: toolchain ? false : 'clang-14 and wasm-ld-14 are not installed (apt-get install clang-14 lld-14)' }, () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'pgsurge-wasm-'));
    try {
      execFileSync('bash', [path.join(root, 'scripts/build-wasm.sh')], { env: { ...process.env, OUT_DIR: dir }, stdio: 'pipe' });
      assert.equal(readFileSync(path.join(dir, path.basename(generated)), 'utf8'), readFileSync(path.join(root, generated), 'utf8'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}
