// The layering rule of docs/architecture.md, checked by test/layering.test.ts
// (so `npm test` and `--only unit` fail on a violation). Type-only imports
// count: a layer that names another's types depends on it.
//   base:       broker/protocol/, broker/common/   (import nothing else of the project)
//   metadata/:  the base only
//   remote-log/: the base and metadata/ (the local log only through remote-log/local-log.ts)
//   broker/:    everything (the composition root)
// and no two folders import each other, directly or round a longer loop.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'base-imports-only-base',
      comment: 'broker/protocol/ and broker/common/ are the base: they import nothing of the project outside themselves.',
      severity: 'error',
      from: { path: '^broker/(protocol|common)/' },
      to: { path: '^(broker|remote-log|metadata|test)/', pathNot: '^broker/(protocol|common)/' },
    },
    {
      name: 'metadata-stands-on-base',
      comment: 'metadata/ may import only the base (broker/protocol/, broker/common/).',
      severity: 'error',
      from: { path: '^metadata/' },
      to: { path: '^(broker|remote-log|test)/', pathNot: '^broker/(protocol|common)/' },
    },
    {
      name: 'remote-log-stands-on-base-and-metadata',
      comment: 'remote-log/ may import the base and metadata/; it sees the local log only through its port (remote-log/local-log.ts).',
      severity: 'error',
      from: { path: '^remote-log/' },
      to: { path: '^(broker|test)/', pathNot: '^broker/(protocol|common)/' },
    },
    {
      name: 'no-module-cycles',
      comment: 'Modules that import each other cannot be read, tested or moved one at a time.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-folder-cycles',
      comment: 'Two folders that import each other (directly or round a loop) are one part in two places.',
      severity: 'error',
      scope: 'folder',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|dist)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default'],
    },
  },
};
