import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '@oan/testing';

const HOOK = join(REPO_ROOT, '.githooks/commit-msg');
const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'oan-hooks-'));
  dirs.push(dir);
  return dir;
};
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** Runs the hook as git does: the message file as its one argument. */
function commitMsg(message: string) {
  const file = join(tempDir(), 'COMMIT_EDITMSG');
  writeFileSync(file, message);
  const run = spawnSync(HOOK, [file], { encoding: 'utf8' });
  return { status: run.status, stderr: run.stderr };
}

const subjectOf = (length: number, start = 'area: ') => start + 'x'.repeat(length - start.length);

describe('the commit-msg hook', () => {
  it('refuses a subject of 73 characters and says why', () => {
    const run = commitMsg(`${subjectOf(73)}\n\nThe body may be as long as it needs.\n`);
    expect(run.status).not.toBe(0);
    expect(run.stderr).toContain('73 characters; at most 72');
  });

  it('accepts a subject of 72 characters, whatever the body', () => {
    expect(commitMsg(`${subjectOf(72)}\n\n${'a long body line '.repeat(20)}\n`).status).toBe(0);
  });

  it('refuses a merge commit whose subject is too long', () => {
    expect(commitMsg(`${subjectOf(73, "Merge branch 'wt-x': ")}\n`).status).not.toBe(0);
  });

  it('reads the subject past the blank and comment lines git leaves in the file', () => {
    const comment = `# ${'a long comment line '.repeat(6)}\n`;
    expect(commitMsg(`\n${comment}${subjectOf(72)}\n${comment}`).status).toBe(0);
    expect(commitMsg(`\n${comment}${subjectOf(73)}\n`).status).not.toBe(0);
  });

  it('counts characters, not bytes', () => {
    expect(commitMsg(`${subjectOf(71)}’\n`).status).toBe(0);
  });
});

/** A copy of infra/deps.sh in a directory of its own, its dependencies already in place. */
function depsCopy(): string {
  const root = tempDir();
  mkdirSync(join(root, 'infra'));
  mkdirSync(join(root, 'node_modules'));
  copyFileSync(join(REPO_ROOT, 'infra/deps.sh'), join(root, 'infra/deps.sh'));
  writeFileSync(join(root, 'package-lock.json'), '{}\n');
  const hash = createHash('sha256').update('{}\n').digest('hex');
  writeFileSync(join(root, 'node_modules/.oan-lock.sha256'), `${hash}\n`);
  return root;
}

/** Sources deps.sh as `npm test` does (`set -euo pipefail`), in `root`. */
function sourceDeps(root: string) {
  const run = spawnSync('bash', ['-c', 'set -euo pipefail; source infra/deps.sh; echo sourced'], {
    cwd: root,
    encoding: 'utf8',
  });
  return { status: run.status, out: run.stdout + run.stderr };
}

const git = (root: string, ...args: string[]) =>
  spawnSync('git', ['-C', root, ...args], { encoding: 'utf8' }).stdout.trim();

describe('infra/deps.sh and the hooks path', () => {
  it('points a git work tree at .githooks, silently, and leaves it so on a second run', () => {
    const root = depsCopy();
    git(root, 'init', '-q');
    expect(sourceDeps(root)).toEqual({ status: 0, out: 'sourced\n' });
    expect(git(root, 'config', '--get', 'core.hooksPath')).toBe('.githooks');
    const config = readFileSync(join(root, '.git/config'), 'utf8');
    expect(sourceDeps(root)).toEqual({ status: 0, out: 'sourced\n' });
    expect(readFileSync(join(root, '.git/config'), 'utf8')).toBe(config);
  });

  it('keeps a hooks path someone already set', () => {
    const root = depsCopy();
    git(root, 'init', '-q');
    git(root, 'config', 'core.hooksPath', 'my-hooks');
    expect(sourceDeps(root).status).toBe(0);
    expect(git(root, 'config', '--get', 'core.hooksPath')).toBe('my-hooks');
  });

  it('does nothing and does not fail outside a git work tree', () => {
    expect(sourceDeps(depsCopy())).toEqual({ status: 0, out: 'sourced\n' });
  });
});
