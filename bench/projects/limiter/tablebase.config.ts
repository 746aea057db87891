/**
 * The limiter benchmark's project (bench/limiter.ts): two identical open tables, one unlimited
 * (`null` policies) and one under the project's default policy. The default is raised to a
 * million per 10 s so the benchmark measures the cost of counting, never a 429.
 */
import { column, defineProject, table } from 'tablebase';

const anyone = () => true;
const columns = () => ({ title: column.text(), n: column.integer().default(0) });
const rules = { canCreate: anyone, canList: anyone, canView: anyone, canCount: anyone, requiresPerRowCheck: false };

const plain = table('plain', {
  prefix: 'pl',
  columns: columns(),
  rules,
  policies: { get: null, list: null, count: null, create: null, update: null, delete: null },
});

/** No `policies`: every operation uses `server.defaultPolicy`. */
const limited = table('limited', { prefix: 'lm', columns: columns(), rules });

export default defineProject({
  name: 'bench-limiter',
  tables: [plain, limited],
  server: {
    defaultPolicy: { maxRequests: 1_000_000, window: '10s' },
    // bench/limiter.ts's many-clients scenario sends X-Forwarded-For through the loopback "proxy".
    trustedProxies: ['127.0.0.1'],
  },
});
