/**
 * STYLE.md: no cycles, pure domain, libs never import services, no deep or relative imports between
 * packages, one home for the Kafka client. The rules match resolved paths: `@oan/<lib>` resolves through its
 * workspace symlink and package.json `exports` to `libs/<lib>/src/index.ts`, npm packages to
 * `node_modules/<name>/…` and Node's own modules to their bare name (dependency type `core`).
 * test/dependencyRules.unit.test.ts plants a violation of each rule and sees it fail.
 */

// Packages and libs that do I/O; a service's domain/ decides on plain data and imports none of them.
const infrastructure = [
  '^node_modules/(fastify|@fastify|fastify-[^/]+|kafkajs|@mikro-orm|ioredis|socket\\.io|pg|undici|@aws-sdk)/',
  '^libs/(db|http|kafka|eventstore|projection|readmodels|storage|auth|webhooks)/',
];

module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', from: {}, to: { circular: true } },
    {
      name: 'domain-is-pure',
      severity: 'error',
      comment: 'services/*/src/domain imports no infrastructure package or lib',
      from: { path: '^services/[^/]+/src/domain/' },
      to: { path: infrastructure },
    },
    {
      name: 'domain-uses-no-node-modules',
      severity: 'error',
      comment: 'services/*/src/domain imports no node:* module',
      from: { path: '^services/[^/]+/src/domain/' },
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'libs-do-not-import-services',
      severity: 'error',
      from: { path: '^libs/' },
      to: { path: '^services/' },
    },
    {
      name: 'only-libs-kafka-imports-kafkajs',
      severity: 'error',
      from: { pathNot: '^libs/kafka/' },
      to: { path: '^node_modules/kafkajs/' },
    },
    {
      name: 'no-deep-imports-between-packages',
      severity: 'error',
      comment: 'a lib is imported by its name (its src/index.ts), never by a path inside it',
      from: { path: '^(libs|services)/([^/]+)/' },
      to: { path: '^libs/[^/]+/', pathNot: ['^$1/$2/', '^libs/[^/]+/src/index\\.ts$'] },
    },
    {
      name: 'no-relative-imports-between-packages',
      severity: 'error',
      comment:
        'another workspace package (a lib or a service, tests included) is imported by its name and ' +
        'what its package.json exports, never by a relative path into its folder',
      from: { path: '^(libs|services)/([^/]+)/' },
      to: { dependencyTypes: ['local'], path: '^(libs|services)/', pathNot: '^$1/$2/' },
    },
  ],
  options: {
    // npm packages appear as the modules they resolve to, so rules can name them, but are not cruised.
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(\\.tmp|\\.data)' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    // Follow the workspace packages the way Node does: package.json `exports`, import conditions.
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default'],
    },
  },
};
