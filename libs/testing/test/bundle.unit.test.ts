import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';
import { ownLocation, REPO_ROOT } from '@oan/testing';

// Inside the repository, like the e2e run's bundles; removed at the end.
const dir = join(REPO_ROOT, '.tmp', `bundle-unit-${process.pid}`);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a bundled module keeps its own location (ADR 0048)', () => {
  it("import.meta.url, __dirname and __filename are each source file's, and a module's own __dirname stays", async () => {
    mkdirSync(join(dir, 'src', 'deep'), { recursive: true });
    writeFileSync(join(dir, 'src', 'deep', 'meta.ts'), 'export const url: string = import.meta.url;\n');
    writeFileSync(
      join(dir, 'src', 'deep', 'dir.cjs'),
      'module.exports = { dir: __dirname, file: __filename };\n',
    );
    writeFileSync(join(dir, 'src', 'own.mjs'), "const __dirname = 'its own';\nexport default __dirname;\n");
    writeFileSync(
      join(dir, 'src', 'main.ts'),
      [
        "import { url } from './deep/meta.ts';",
        "import where from './deep/dir.cjs';",
        "import own from './own.mjs';",
        'console.log(JSON.stringify({ url, where, own }));',
      ].join('\n'),
    );
    const out = join(dir, 'out', 'main.mjs');
    await build({
      entryPoints: [join(dir, 'src', 'main.ts')],
      outfile: out,
      bundle: true,
      platform: 'node',
      format: 'esm',
      plugins: [ownLocation],
      logLevel: 'silent',
    });
    const printed = JSON.parse(execFileSync(process.execPath, [out], { encoding: 'utf8' })) as unknown;
    expect(printed).toEqual({
      url: pathToFileURL(join(dir, 'src', 'deep', 'meta.ts')).href,
      where: { dir: join(dir, 'src', 'deep'), file: join(dir, 'src', 'deep', 'dir.cjs') },
      own: 'its own',
    });
  });
});
