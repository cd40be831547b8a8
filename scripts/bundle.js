// Bundles the compiled CLI (dist/src) into dist/bundle, so a command loads one file instead
// of ~150 modules: ~0.1 s less to start, which every load pays. Entry points that run in
// their own thread or process (located beside the bundle through import.meta.url) are
// bundled too. Tests import dist/src; the command (bin/pgsurge.js) runs the bundle.
import { promises as fs } from 'node:fs';
import { build } from 'esbuild';

/**
 * node-postgres asks at load time whether it runs in a Cloudflare Worker by building a
 * fetch `Response`, which makes Node load its whole fetch implementation (undici): ~50 ms
 * of CPU at the start of every command (node --cpu-prof of a load; `node -e` with and
 * without `new Response(...)`: 0.16 vs 0.11 CPU s). pgsurge runs on Node only, so the
 * answer is no. The build fails if the function is not found, so a pg upgrade is seen.
 */
const pgOnNode = {
  name: 'pg-on-node',
  setup(b) {
    b.onLoad({ filter: /[\\/]node_modules[\\/]pg[\\/]lib[\\/]stream\.js$/ }, async (args) => {
      const text = await fs.readFile(args.path, 'utf8');
      const head = 'function isCloudflareRuntime() {';
      if (!text.includes(head)) throw new Error(`${args.path}: no ${head} to answer (pg changed: check scripts/bundle.js)`);
      return { contents: text.replace(head, `${head}\n  return false; // pgsurge: Node only (scripts/bundle.js)`), loader: 'js' };
    });
  },
};

await build({
  entryPoints: ['dist/src/cli/main.js', 'dist/src/datasets/dbt3/block-worker.js', 'dist/src/source/parquet/decode-worker.js', 'dist/src/cluster/write-check-child.js'],
  outdir: 'dist/bundle',
  entryNames: '[name]',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  logLevel: 'warning',
  plugins: [pgOnNode],
  // The CommonJS packages inside (pg) require Node's modules; an ES module has no `require` of its own.
  banner: { js: "import { createRequire as __pgsurgeRequire } from 'node:module'; const require = __pgsurgeRequire(import.meta.url);" },
});
