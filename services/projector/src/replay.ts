/** `npm run replay`: rebuilds every read model and the OAN event table from the topics. */
import { SingleBar, Presets } from 'cli-progress';
import { loadProjectorConfig } from './config.ts';
import { runReplay } from './replayRun.ts';

const bar = new SingleBar(
  { format: 'replay [{bar}] {percentage}% | {value}/{total} records | {eta_formatted} left' },
  Presets.shades_classic,
);
let startedBar = false;
try {
  const { records, seconds, stopSeconds } = await runReplay(loadProjectorConfig(), ({ done, total }) => {
    if (!startedBar) {
      bar.start(total, 0);
      startedBar = true;
    }
    bar.update(done);
  });
  bar.stop();
  const rate = seconds > 0 ? Math.round(records / seconds) : records;
  console.log(
    `replayed ${records} records in ${seconds.toFixed(1)} s (${rate} records/s); ` +
      `leaving the consumer groups took ${stopSeconds.toFixed(1)} s more`,
  );
  process.exit(0);
} catch (err) {
  if (startedBar) bar.stop();
  console.error(`replay failed: ${(err as Error).message}`);
  process.exit(1);
}
