import { describe, expect, it } from 'vitest';
import { compileProject } from '../../core/model.js';
import { column, defineProject, table, view } from '../../define/index.js';
import type { ColumnMap } from '../../define/columns.js';
import { sqliteDialect } from '../sqlite/dialect.js';
import { describeChange, diffSchemas, slugOf, type Change } from './diff.js';
import { schemaOf } from './snapshot.js';

function snap(columns: ColumnMap, extra: Parameters<typeof table>[1]['indexes'] = undefined) {
  const project = defineProject({ tables: [table('tasks', { prefix: 'tk', columns, indexes: extra })] });
  return schemaOf(compileProject(project), sqliteDialect);
}

const summary = (changes: Change[]) => changes.map((c) => `${describeChange(c)}${c.destructive ? ' !' : ''}`);

describe('schemaOf', () => {
  it('lists id first, stored defaults in JSON form, and no function defaults', () => {
    const s = snap({
      title: column.text(),
      isComplete: column.boolean().default(false),
      tags: column.list('text').default([]),
      code: column.text().default(() => 'x'),
      meta: column.json().default({ b: 1, a: [2] }),
    });
    const cols = s.tables[0]!.columns;
    expect(cols.map((c) => c.name)).toEqual(['id', 'title', 'is_complete', 'tags', 'code', 'meta']);
    expect(cols[0]).toMatchObject({ kind: 'id', type: 'TEXT', nullable: false, unique: true });
    expect(cols[2]).toMatchObject({ type: 'INTEGER', nullable: false, default: false });
    expect(cols[3]).toMatchObject({ of: 'text', default: [] });
    expect(cols[4]!.default).toBeNull();
    expect(JSON.stringify(cols[5]!.default)).toBe('{"a":[2],"b":1}');
  });

  it('names column-level and declared indexes, dedupes them, and indexes references', () => {
    const project = defineProject({
      tables: [
        table('users', { prefix: 'us', columns: { name: column.text() } }),
        table('tasks', {
          prefix: 'tk',
          columns: {
            title: column.text().unique(),
            rank: column.integer().index(),
            ownerId: column.text().nullable().references('users'),
            editorId: column.text().nullable().references('users'),
          },
          indexes: [{ columns: ['title'], unique: true }, { columns: ['editorId', 'rank'] }],
        }),
      ],
    });
    const s = schemaOf(compileProject(project), sqliteDialect);
    expect(s.tables.map((t) => t.name)).toEqual(['tasks', 'users']);
    expect(s.tables[0]!.indexes).toEqual([
      { name: 'idx_tasks_editor_id_rank', columns: ['editor_id', 'rank'], unique: false },
      { name: 'idx_tasks_owner_id', columns: ['owner_id'], unique: false },
      { name: 'idx_tasks_rank', columns: ['rank'], unique: false },
      { name: 'uq_tasks_title', columns: ['title'], unique: true },
    ]);
  });

  it('is deterministic: the same project gives the same JSON', () => {
    const make = () => snap({ a: column.text(), b: column.integer().default(1).index() });
    expect(JSON.stringify(make())).toBe(JSON.stringify(make()));
  });
});

describe('diffSchemas', () => {
  const base = { title: column.text(), score: column.real().default(0) };

  it('creates every table from nothing, referenced tables first', () => {
    const project = defineProject({
      tables: [
        table('aa', { prefix: 'aa', columns: { zzId: column.text().references('zz') } }),
        table('zz', { prefix: 'zz', columns: {} }),
      ],
    });
    const changes = diffSchemas(null, schemaOf(compileProject(project), sqliteDialect));
    expect(summary(changes)).toEqual(['create table zz', 'create table aa']);
    expect(slugOf(changes, true)).toBe('init');
  });

  it('finds nothing between equal schemas', () => {
    expect(diffSchemas(snap(base), snap(base))).toEqual([]);
  });

  it('classifies added columns by whether existing rows can get a value', () => {
    const changes = diffSchemas(
      snap(base),
      snap({ ...base, note: column.text().nullable(), rank: column.integer().default(0), must: column.text(), createdAt: column.createdAt() }),
    );
    expect(summary(changes)).toEqual(['add column tasks.note', 'add column tasks.rank', 'add column tasks.must !', 'add column tasks.created_at']);
    expect(slugOf(changes, false)).toBe('add_tasks_note_and_add_tasks_rank_and_more');
  });

  it('marks drops and narrowing changes destructive, widenings not', () => {
    expect(summary(diffSchemas(snap(base), snap({ title: column.text() })))).toEqual(['drop column tasks.score !']);
    expect(summary(diffSchemas(snap(base), snap({ title: column.integer(), score: column.real().default(0) })))).toEqual([
      'change column tasks.title (kind, type) !',
    ]);
    expect(summary(diffSchemas(snap({ n: column.integer() }), snap({ n: column.real() })))).toEqual(['change column tasks.n (kind, type)']);
    expect(summary(diffSchemas(snap({ e: column.email() }), snap({ e: column.text() })))).toEqual(['change column tasks.e (kind)']);
  });

  it('requires a default to make a column NOT NULL without the flag', () => {
    const from = snap({ note: column.text().nullable() });
    expect(summary(diffSchemas(from, snap({ note: column.text() })))).toEqual(['change column tasks.note (nullable) !']);
    expect(summary(diffSchemas(from, snap({ note: column.text().default('') })))).toEqual(['change column tasks.note (nullable, default)']);
    expect(summary(diffSchemas(snap({ note: column.text() }), from))).toEqual(['change column tasks.note (nullable)']);
  });

  it('turns unique and index changes into index drops and creations', () => {
    const changes = diffSchemas(snap({ title: column.text().index() }), snap({ title: column.text().unique() }));
    expect(summary(changes)).toEqual(['drop index idx_tasks_title', 'create unique index uq_tasks_title']);
  });

  it('drops removed tables last, destructively', () => {
    const two = defineProject({ tables: [table('tasks', { prefix: 'tk', columns: base }), table('old', { prefix: 'ol', columns: {} })] });
    const changes = diffSchemas(schemaOf(compileProject(two), sqliteDialect), snap({ ...base, x: column.text().nullable() }));
    expect(summary(changes)).toEqual(['add column tasks.x', 'drop table old !']);
  });

  it('ignores views, which are never stored', () => {
    const tasks = table('tasks', { prefix: 'tk', columns: base });
    const board = view('board', { from: tasks, select: { id: tasks.col('id'), title: tasks.col('title') } });
    const withView = defineProject({ tables: [tasks], views: [board] });
    expect(compileProject(withView).views).toHaveLength(1);
    expect(diffSchemas(snap(base), schemaOf(compileProject(withView), sqliteDialect))).toEqual([]);
  });
});
