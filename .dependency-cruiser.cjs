/**
 * The source tree's layers, checked by `npm test` and `npm run test:unit` (scripts/check-layers.js):
 * an import runs down the floors or stays in its room, never up, never sideways to another
 * room on the same floor, never in a circle. Type-only imports count (`import type`, inline
 * `import('…').T` types): a type names the room it comes from as surely as a value does.
 * docs/internals.md draws the same floors.
 */
const FLOORS = [
  // lowest first: a room may import its own files and the rooms on floors below
  ['core'], // Chunk, ChunkLocation, LoadTarget, LoadError, identifiers, formatting, retry, threads
  ['codecs'], // one file per PostgreSQL type family: a value's binary layout
  ['cluster', 'datasets'], // the managed PostgreSQL; the deterministic generators
  ['input'], // byte sources, encodings, headers, column planning; input/text, input/json, input/parquet
  ['wire'], // a chunk's COPY data: text as framed, or binary records
  ['writer'], // COPY or INSERT, the chunk's transaction, the ledger, rejects, Citus routing
  ['metrics'], // counters, server samples, wait looks
  ['diagnose'], // the verdict rules; the disk and scan probes
  ['load'], // the flow of a load: load.ts, its worker, parts, durability
  ['report'], // terminal, files, charts
  ['dbt3', 'decay', 'compare'], // the experiments built on loads
  ['cli'], // options, messages, exit codes: the only room that prints or reads the environment
];

const floorOf = new Map(FLOORS.flatMap((rooms, floor) => rooms.map((room) => [room, floor])));
const roomsAbove = (floor) => FLOORS.slice(floor + 1).flat();
const roomPath = (rooms) => `^src/(${rooms.join('|')})/`;

const layerRules = FLOORS.flatMap((rooms, floor) =>
  rooms.flatMap((room) => {
    const rules = [];
    const above = roomsAbove(floor);
    if (above.length > 0)
      rules.push({
        name: `upward-from-${room}`,
        comment: `src/${room}/ is on floor ${floor}: it may not import ${above.join(', ')} (floors above)`,
        severity: 'error',
        from: { path: roomPath([room]) },
        to: { path: roomPath(above) },
      });
    const beside = rooms.filter((r) => r !== room);
    if (beside.length > 0)
      rules.push({
        name: `sideways-from-${room}`,
        comment: `src/${room}/ shares floor ${floor} with ${beside.join(', ')}: neither imports the other`,
        severity: 'error',
        from: { path: roomPath([room]) },
        to: { path: roomPath(beside) },
      });
    return rules;
  }),
);

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'an import cycle: these files depend on each other (type-only imports included)',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'no-unknown-room',
      comment: 'every file under src/ lives in a room on a floor (.dependency-cruiser.cjs FLOORS)',
      severity: 'error',
      from: { path: '^src/', pathNot: roomPath([...floorOf.keys()]) },
      to: {},
    },
    {
      name: 'src-not-to-tests',
      comment: 'product code does not import tests, benches or scripts',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^(test|bench|scripts)/' },
    },
    {
      name: 'src-not-to-dev-dependency',
      comment: 'product code does not import a devDependency (it is not installed with the package)',
      severity: 'error',
      from: { path: '^src/' },
      to: { dependencyTypes: ['npm-dev'] },
    },
    {
      name: 'not-to-unresolvable',
      comment: 'an import that resolves to no file',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
    {
      name: 'input-format-sideways',
      comment: 'a format folder of src/input/ (text/, json/, parquet/) does not import another: each reads through the generic input/ files',
      severity: 'error',
      from: { path: '^src/input/([^/]+)/' },
      to: { path: '^src/input/[^/]+/', pathNot: '^src/input/$1/' },
    },
    {
      name: 'input-format-through-registry',
      comment: 'the generic src/input/ files reach a format folder only through input/format-registry.ts',
      severity: 'error',
      from: { path: '^src/input/[^/]+$', pathNot: '^src/input/format-registry[.]ts$' },
      to: { path: '^src/input/[^/]+/' },
    },
    ...layerRules,
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|node_modules)/' },
    // TypeScript 7 (tsgo) has no JavaScript API: swc parses the .ts sources, type-only imports included.
    parser: 'swc',
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { extensions: ['.ts', '.js'], exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
    reporterOptions: { text: { highlightFocused: true } },
  },

};
