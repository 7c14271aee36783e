// The `memledger` command as users run it: dist/cli/main.js and what it imports, bundled into
// a few files (dist/cli/main.js over tsc's, and dist/cli/chunks/), so a command loads tens of
// files instead of hundreds (about 0.2 s less per command; docs/ARCHITECTURE.md, "Start-up").
// Packages stay external; a module imported with import() stays a chunk of its own, loaded when
// a command needs it. The store host's program is bundled beside the chunk that starts it
// (src/pglite/host-launch.ts looks for host-main.js next to itself).
export default {
  input: {
    main: 'dist/cli/main.js',
    'chunks/host-main': 'dist/src/pglite/host-main.js',
  },
  platform: 'node',
  // the code is tsc's ES2022 already: nothing to lower (lowering would import helper packages)
  transform: { target: 'esnext' },
  external: (id) => !id.startsWith('.') && !id.startsWith('/'),
  output: {
    dir: 'dist/cli',
    format: 'esm',
    chunkFileNames: 'chunks/[name]-[hash].js',
  },
};
