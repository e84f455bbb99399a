/*
 * The e2e project's global setup (ADR 0048): bundles every service once per run, so each fleet's
 * processes start from one file each; the test files' TestFleets find the bundles through
 * OAN_FLEET_BUNDLES. A run's bundles are its own (a directory per run) and go when it ends.
 * `OAN_FLEET_BUNDLES=off` runs every fleet from the sources instead.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { bundleServices, REPO_ROOT } from '@oan/testing';

export default async function setup(): Promise<() => void> {
  if (process.env.OAN_FLEET_BUNDLES === 'off') return () => {};
  const dir = join(REPO_ROOT, '.tmp', 'bundles', `${process.pid}-${Date.now().toString(36)}`);
  const t0 = performance.now();
  await bundleServices(dir);
  console.log(`[e2e] services bundled into ${dir} in ${Math.round(performance.now() - t0)} ms`);
  process.env.OAN_FLEET_BUNDLES = dir;
  return () => rmSync(dir, { recursive: true, force: true });
}
