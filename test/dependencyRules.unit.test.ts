import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '@oan/testing';

// A rule that cannot fail is a defect: each rule of the repository's dependency-cruiser config is run
// on a small workspace of the same layout (npm workspace symlinks, package.json exports), once clean
// and once with one planted violation of that rule, run as `npm run check` runs depcruise.

const CONFIG = join(REPO_ROOT, '.dependency-cruiser.cjs');
const DEPCRUISE = join(REPO_ROOT, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs');

const pkg = (name: string) =>
  JSON.stringify({ name, private: true, type: 'module', exports: { '.': './src/index.ts' } });

/** A clean tree: a service on three libs, only libs/kafka on kafkajs, a domain on @oan/domain only. */
const clean: Record<string, string> = {
  'package.json': JSON.stringify({ name: 'tree', private: true, workspaces: ['libs/*', 'services/*'] }),
  'tsconfig.json': JSON.stringify({
    compilerOptions: { module: 'ESNext', moduleResolution: 'Bundler', allowImportingTsExtensions: true },
  }),
  'node_modules/kafkajs/package.json': JSON.stringify({ name: 'kafkajs', main: 'index.js' }),
  'node_modules/kafkajs/index.js': 'export class Kafka {}\n',
  'libs/domain/package.json': pkg('@oan/domain'),
  'libs/domain/src/index.ts': 'export type GoferEvent = { type: string };\n',
  'libs/db/package.json': pkg('@oan/db'),
  'libs/db/src/index.ts': "export { pool } from './pool.ts';\n",
  'libs/db/src/pool.ts': 'export const pool = {};\n',
  'libs/kafka/package.json': pkg('@oan/kafka'),
  'libs/kafka/src/index.ts': "import { Kafka } from 'kafkajs';\nexport const kafka = new Kafka();\n",
  'services/gofers/package.json': pkg('@oan/gofers'),
  'services/gofers/src/index.ts': "export { decide } from './domain/gofer.ts';\n",
  'services/gofers/src/main.ts': "import '@oan/db';\nimport '@oan/kafka';\nimport './domain/gofer.ts';\n",
  'services/gofers/src/domain/gofer.ts':
    "import type { GoferEvent } from '@oan/domain';\nexport const decide = (e: GoferEvent) => [e];\n",
};
const workspaceLinks = {
  'node_modules/@oan/domain': 'libs/domain',
  'node_modules/@oan/db': 'libs/db',
  'node_modules/@oan/kafka': 'libs/kafka',
  'node_modules/@oan/gofers': 'services/gofers',
};

/** One planted violation per rule: the files that differ from the clean tree. */
const planted: Record<string, Record<string, string>> = {
  'no-circular': {
    'libs/domain/src/index.ts': "import '@oan/db';\nexport type GoferEvent = { type: string };\n",
    'libs/db/src/pool.ts': "import '@oan/domain';\nexport const pool = {};\n",
  },
  'domain-is-pure': {
    'services/gofers/src/domain/gofer.ts':
      "import { pool } from '@oan/db';\nexport const decide = () => [pool];\n",
  },
  'domain-uses-no-node-modules': {
    'services/gofers/src/domain/gofer.ts':
      "import { randomUUID } from 'node:crypto';\nexport const decide = () => [randomUUID()];\n",
  },
  'libs-do-not-import-services': {
    'libs/db/src/pool.ts': "import '@oan/gofers';\nexport const pool = {};\n",
  },
  'only-libs-kafka-imports-kafkajs': {
    'services/gofers/src/main.ts': "import 'kafkajs';\nimport '@oan/db';\n",
  },
  // By name, into a lib whose package.json exports no entry point (a relative path is the next rule).
  'no-deep-imports-between-packages': {
    'libs/db/package.json': JSON.stringify({ name: '@oan/db', private: true, type: 'module' }),
    'services/gofers/src/main.ts': "import '@oan/db/src/pool.ts';\nimport '@oan/kafka';\n",
  },
  // Even to another package's entry point.
  'no-relative-imports-between-packages': {
    'services/gofers/src/main.ts': "import '../../../libs/db/src/index.ts';\nimport '@oan/kafka';\n",
  },
};

interface Cruise {
  violations: string[];
  unresolved: string[];
}

const roots: string[] = [];
afterEach(async () => {
  await Promise.all(roots.splice(0).map((root) => rm(root, { recursive: true, force: true })));
});

/** Writes `files` and the workspace symlinks into a fresh directory; returns its real path. */
async function tree(files: Record<string, string>): Promise<string> {
  // The real path: depcruise reports resolved paths relative to the directory it runs in.
  const root = await realpath(await mkdtemp(join(tmpdir(), 'oan-depcruise-')));
  roots.push(root);
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), text);
  }
  for (const [link, target] of Object.entries(workspaceLinks)) {
    await mkdir(dirname(join(root, link)), { recursive: true });
    await symlink(join(root, target), join(root, link), 'dir');
  }
  return root;
}

async function cruise(files: Record<string, string>): Promise<Cruise> {
  const root = await tree(files);
  const args = [DEPCRUISE, 'libs', 'services', '--config', CONFIG, '--output-type', 'json'];
  // The JSON reporter exits 0 whatever it finds; the verdict is its list of violations.
  const { stdout } = await promisify(execFile)(process.execPath, args, { cwd: root });
  const result = JSON.parse(stdout) as {
    modules: { source: string; dependencies: { module: string; couldNotResolve: boolean }[] }[];
    summary: { violations: { rule: { name: string } }[] };
  };
  return {
    violations: [...new Set(result.summary.violations.map((v) => v.rule.name))].sort(),
    unresolved: result.modules.flatMap((m) =>
      m.dependencies.filter((d) => d.couldNotResolve).map((d) => d.module),
    ),
  };
}

/**
 * depcruise as `npm run check` runs it (package.json: `depcruise libs services --config …`, the
 * default reporter): its exit code (the number of errors) and the rules its report names.
 */
async function check(files: Record<string, string>): Promise<{ exitCode: number; rules: string[] }> {
  const root = await tree(files);
  const args = [DEPCRUISE, 'libs', 'services', '--config', CONFIG];
  const { exitCode, stdout } = await promisify(execFile)(process.execPath, args, { cwd: root }).then(
    (r) => ({ exitCode: 0, stdout: r.stdout }),
    (err: { code?: number; stdout?: string }) => ({ exitCode: err.code ?? -1, stdout: err.stdout ?? '' }),
  );
  const rules = [...stdout.matchAll(/^\s*error ([\w-]+):/gm)].map((m) => m[1]!);
  return { exitCode, rules: [...new Set(rules)].sort() };
}

describe('the dependency rules', () => {
  it('plant a violation for every rule the config declares', () => {
    const config = createRequire(import.meta.url)(CONFIG) as { forbidden: { name: string }[] };
    expect(Object.keys(planted).sort()).toEqual(config.forbidden.map((rule) => rule.name).sort());
  });

  describe('on a clean tree', () => {
    it('resolve every workspace package and find no violation', async () => {
      const result = await cruise(clean);
      expect(result).toEqual({ violations: [], unresolved: [] });
    });

    it("pass `npm run check`'s depcruise step", async () => {
      expect(await check(clean)).toEqual({ exitCode: 0, rules: [] });
    });
  });

  describe.each(Object.entries(planted))('when %s is broken', (rule, files) => {
    it("fails `npm run check`'s depcruise step, naming that rule alone", async () => {
      const result = await check({ ...clean, ...files });
      expect(result.rules).toEqual([rule]);
      expect(result.exitCode).toBeGreaterThan(0);
    });
  });
});
