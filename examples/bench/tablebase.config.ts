/** The benchmark project: one open table, no rate limits, no row rules. */
import { column, defineProject, table } from 'tablebase';

const anyone = () => true;

const items = table('items', {
  prefix: 'it',
  columns: {
    title: column.text(),
    n: column.integer().default(0),
    done: column.boolean().default(false),
    createdAt: column.createdAt(),
    updatedAt: column.updatedAt(),
  },
  rules: { canCreate: anyone, canList: anyone, canView: anyone, canCount: anyone, canUpdate: anyone, canDelete: anyone, requiresPerRowCheck: false },
  policies: { get: null, list: null, count: null, create: null, update: null, delete: null },
});

export default defineProject({ name: 'bench', tables: [items] });
