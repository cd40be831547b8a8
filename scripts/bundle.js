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

// Chunk names carry a hash: without emptying the folder first, every build would leave the last one's behind.
await fs.rm('dist/bundle', { recursive: true, force: true });
await build({
  entryPoints: ['dist/src/cli/main.js', 'dist/src/datasets/dbt3/block-worker.js', 'dist/src/input/parquet/decode-worker.js', 'dist/src/cluster/write-check-child.js'],
  outdir: 'dist/bundle',
  entryNames: '[name]',
  // Code reached only through import() (the Parquet reader and writer) goes into chunks of its own beside the
  // entry points, loaded when a command needs it. They stay in dist/bundle: the bundle finds its workers by
  // paths relative to import.meta.url.
  splitting: true,
  chunkNames: '[name]-[hash]',
  bundle: true,
  // Whitespace and syntax minified (names kept): ~30% less source for V8 to read at every start, and pure ASCII
  // (comments with non-ASCII characters made V8 hold the whole source as two-byte text): ~20 ms less per command.
  // The linked source map points stack traces (--verbose turns source maps on, bin/pgsurge.js) at dist/src.
  minifyWhitespace: true,
  minifySyntax: true,
  sourcemap: 'linked',
  sourcesContent: false,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  logLevel: 'warning',
  plugins: [pgOnNode],
  // The CommonJS packages inside (pg) require Node's modules; an ES module has no `require` of its own.
  banner: { js: "import { createRequire as __pgsurgeRequire } from 'node:module'; const require = __pgsurgeRequire(import.meta.url);" },
});
