/** STYLE.md: no cycles, pure domain, libs never import services, no deep imports between packages. */
module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', from: {}, to: { circular: true } },
    {
      name: 'domain-is-pure',
      severity: 'error',
      comment: 'services/*/src/domain imports no infrastructure and no node:* module',
      from: { path: '^services/[^/]+/src/domain/' },
      to: {
        path: '(fastify|kafkajs|@mikro-orm|ioredis|socket\\.io|^node:|^(fs|path|crypto|net|http)$|@oan/(db|http|log|eventstore|projection))',
      },
    },
    {
      name: 'libs-do-not-import-services',
      severity: 'error',
      from: { path: '^libs/' },
      to: { path: '^services/' },
    },
    {
      name: 'only-libs-log-imports-kafkajs',
      severity: 'error',
      from: { pathNot: '^libs/kafka/' },
      to: { path: 'node_modules/kafkajs' },
    },
    {
      name: 'no-deep-imports-between-packages',
      severity: 'error',
      from: { path: '^(libs|services)/([^/]+)/' },
      to: { path: '^libs/([^/]+)/src/.+', pathNot: ['^libs/$2/', '^libs/[^/]+/src/index\\.ts$'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    exclude: { path: '(node_modules|\\.tmp|\\.data)' },
  },
};
