import closeWithGrace from 'close-with-grace';
import { buildApp } from './app';
import { loadEdgeConfig } from './config';

const config = loadEdgeConfig();
const app = await buildApp({ config });

closeWithGrace({ delay: 10_000 }, async ({ err }) => {
  if (err) app.log.error({ err }, 'closing after an error');
  await app.close();
});

await app.listen({ port: config.OAN_PORT, host: config.HOST });
