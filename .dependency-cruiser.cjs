/**
 * The layers of src/ (README "Layout", docs/lifecycle.md), checked on every `npm test`.
 * From the floor up:
 *
 *   define/        the project-definition API users import: imports nothing of the server
 *   core/          model, error catalog, config, sink, shared interfaces: imports only define/
 *   storage/       driver + dialect interfaces, compiler, writer, migrations
 *   pipeline/      the stages: rate limit → token + rules → plan → execute → row filter → extend
 *   auth/ photos/ email/ live/ cron/ dashboard/ ratelimit/ push/   services taking and returning values
 *   cluster/       what nodes share over Redis (change bus, revocations, rate-limit store, cron
 *                  leadership): sits beside the services it connects (live, auth, ratelimit), below
 *                  http/ and server/, so it is checked as a feature folder (never imports http/)
 *   http/          the only folder that knows HTTP: server, route declarations, lifecycle
 *   openapi/       the document, from the declarations and the model
 *   server/        the composition root (createApp)
 *   cli/           one file per command
 *
 * Tests beside the code may reach across (a live test drives the transport over http/sink.ts).
 */
/* global module */
const TESTS = '(\\.test\\.ts|/test-support\\.ts|/test-fixtures\\.ts|/store-conformance\\.ts)$';
const FEATURES = '^src/(auth|photos|email|live|cron|dashboard|ratelimit|push|cluster|pipeline|storage|core|define|backup)/';

module.exports = {
  forbidden: [
    { name: 'no-cycles', severity: 'error', comment: 'Zero import cycles, type-only imports included.', from: {}, to: { circular: true } },
    {
      name: 'define-imports-nothing-of-the-server',
      severity: 'error',
      comment: 'tablebase.config.ts files import define/; it must not drag the server in.',
      from: { path: '^src/define/' },
      to: { path: '^src/', pathNot: '^src/define/' },
    },
    {
      name: 'core-is-the-floor',
      severity: 'error',
      comment: 'core/ imports only define/. One stated exception: runtime.ts names the storage Driver and WriteQueue types (type-only), because the Runtime every stage receives carries them.',
      from: { path: '^src/core/' },
      to: { path: '^src/', pathNot: ['^src/(core|define)/', '^src/storage/(driver|writer)\\.ts$'] },
    },
    {
      name: 'core-storage-types-only',
      severity: 'error',
      comment: 'The exception above is for types only.',
      from: { path: '^src/core/' },
      to: { path: '^src/storage/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'only-http-knows-http',
      severity: 'error',
      comment:
        "node:http is used by http/ (and the composition root and CLI that start the server); features write to core/sink.ts. push/https.ts is push's outgoing client (Web Push, FCM), like its node:http2 one for APNs.",
      from: { path: '^src/', pathNot: ['^src/(http|server|cli)/', '^src/push/https\\.ts$', TESTS] },
      to: { dependencyTypes: ['core'], path: '^(node:)?https?$' },
    },
    {
      name: 'http2-for-push-only',
      severity: 'error',
      comment: "APNs speaks HTTP/2: push/'s client may use node:http2; nothing else outside http/.",
      from: { path: '^src/', pathNot: ['^src/(http|push|server|cli)/', TESTS] },
      to: { dependencyTypes: ['core'], path: '^(node:)?http2$' },
    },
    {
      name: 'features-never-import-http',
      severity: 'error',
      comment: 'Feature folders export services; http/ declares their routes.',
      from: { path: FEATURES, pathNot: TESTS },
      to: { path: '^src/http/' },
    },
    {
      name: 'only-the-top-imports-the-composition-root',
      severity: 'error',
      from: { path: '^src/', pathNot: ['^src/(server|cli)/', TESTS] },
      to: { path: '^src/server/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'] },
  },
};
