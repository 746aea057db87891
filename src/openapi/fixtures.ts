/**
 * Test projects for the generator's unit tests: one table holding every column kind, a view, an
 * internal `_` table the project opened with rules and one it did not (docs/reference/dashboard.md).
 */
import { compileProject, type ProjectModel } from '../core/model.js';
import { authTable, column, defineProject, table, view } from '../define/index.js';

const anyone = () => true;

export function kitchenSinkModel(): ProjectModel {
  const photos = table('_photos', {
    prefix: 'ph',
    columns: { mimeType: column.text(), size: column.integer(), ownerId: column.text().nullable(), createdAt: column.createdAt() },
    rules: { canList: anyone, canView: anyone },
  });
  const sessions = table('_sessions', { prefix: 'se', columns: { userId: column.text() } });
  const members = authTable('members', {
    prefix: 'mb',
    columns: { nickname: column.text().nullable(), level: column.integer().default(1) },
    signUpFields: ['nickname'],
    authRules: { canSignUp: anyone, canSignIn: anyone },
  });
  const things = table('things', {
    prefix: 'th',
    columns: {
      title: column.text(),
      contact: column.email().nullable(),
      count: column.integer().default(0),
      ratio: column.real().nullable(),
      flag: column.boolean().default(false),
      due: column.timestamp().nullable(),
      labels: column.list('text').default([]),
      scores: column.list('integer').default([]),
      meta: column.json().nullable(),
      picture: column.photo().nullable(),
      flaggedAt: column.updatedWhen('flag'),
      createdAt: column.createdAt(),
      updatedAt: column.updatedAt(),
    },
    rules: { canList: anyone, canCreate: anyone, custom: { touch: anyone } },
  });
  const closed = table('closed_things', { prefix: 'ct', columns: { note: column.text() } });
  const thingView = view('thing_view', {
    from: things,
    joins: [{ table: members, on: [things.col('title'), members.col('id')] }],
    select: { id: things.col('id'), title: things.col('title'), memberEmail: members.col('email').nullable() },
    rules: { canList: anyone },
  });
  // Names whose type stems would meet the client runtime's own (AuthShape, TableShape, ...).
  const clashing = ['auth', 'table', 'collection'].map((name, i) => table(name, { prefix: `x${i}`, columns: { note: column.text() } }));
  const project = defineProject({ name: 'sink', tables: [members, things, closed, ...clashing], views: [thingView] });
  return compileProject(project, [photos, sessions]);
}
