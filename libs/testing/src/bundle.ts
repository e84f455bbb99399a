/*
 * One file per service for the end-to-end tests' fleets (ADR 0048): esbuild bundles each
 * `services/<kind>/src/main.ts` with the libraries it loads, so a process starts by compiling one
 * module instead of resolving and reading some two thousand (MikroORM and knex alone are about
 * 1,600 CommonJS files). What the image and `npm run dev` run is unchanged: the sources, which Node
 * 24 runs itself (ADR 0001); test/gofers.e2e.test.ts keeps that form under test.
 */
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { REPO_ROOT, sourceEntry } from './fleet.ts';
import { PROCESS_KINDS } from './replicas.ts';

/**
 * Left to Node's own resolution at run time. kafkajs: requestQueueFix patches the copy in
 * node_modules, so the bundle must load that same copy. The rest are knex's drivers for databases we
 * do not use, optional peers never installed: Node would fail on them only if one were loaded.
 */
const EXTERNAL = [
  'kafkajs',
  'better-sqlite3',
  'libsql',
  'mariadb',
  'mariadb/*',
  'mysql',
  'mysql2',
  'oracledb',
  'sqlite3',
  'tedious',
];

/**
 * A bundled module still knows where its source lives: `import.meta.url` becomes the source file's
 * URL, and a module that reads `__dirname` or `__filename` gets its own, so files found relative to a
 * module (the Avro schemas, the web build, a package's own assets, `createRequire`) are found as when
 * the sources run.
 */
export const ownLocation: Plugin = {
  name: 'own-location',
  setup(b) {
    b.onLoad({ filter: /\.(c|m)?(j|t)s$/ }, (args) => {
      const text = readFileSync(args.path, 'utf8');
      const usesMeta = text.includes('import.meta.url');
      // a module that declares its own (an ES module's `const __dirname = …`) keeps them
      const usesDir =
        /\b__(dirname|filename)\b/.test(text) && !/\b(const|let|var)\s+__(dirname|filename)\b/.test(text);
      if (!usesMeta && !usesDir) return undefined;
      let contents = usesMeta
        ? text.replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href))
        : text;
      if (usesDir) {
        contents =
          `var __filename = ${JSON.stringify(args.path)}, __dirname = ${JSON.stringify(dirname(args.path))};\n` +
          contents;
      }
      const loader = args.path.endsWith('.ts') ? 'ts' : 'js';
      return { contents, loader, resolveDir: dirname(args.path) };
    });
  },
};

/**
 * Bundles every service into `<outDir>/<kind>.mjs` (one esbuild run, about five seconds here). The directory
 * must lie inside the repository: the bundles' externals resolve from node_modules above it.
 */
export async function bundleServices(outDir: string): Promise<void> {
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  await build({
    absWorkingDir: REPO_ROOT,
    entryPoints: Object.fromEntries(PROCESS_KINDS.map((k) => [k, sourceEntry(k)])),
    outdir: outDir,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node24',
    external: EXTERNAL,
    // CommonJS modules in the bundle `require` the externals and Node's built-ins through this.
    banner: {
      js:
        "import { createRequire as __oanCreateRequire } from 'node:module'; " +
        'const require = __oanCreateRequire(import.meta.url); ' +
        // One copy of each @mikro-orm/* package is bundled; its check of their versions reads the
        // package.json files beside a module, which a bundle has not got.
        "process.env.MIKRO_ORM_ALLOW_VERSION_MISMATCH ??= '1';",
    },
    plugins: [ownLocation],
    logLevel: 'error',
  });
}
