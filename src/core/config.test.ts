import { describe, expect, it } from 'vitest';
import { defineProject } from '../define/project.js';
import { resolveConfig } from './config.js';

const secrets = { jwtSecret: 'j'.repeat(32), passwordSecret: 'p'.repeat(32) };
const bare = defineProject({ tables: [] });
const withUrls = defineProject({ tables: [], server: { databaseUrl: 'postgres://file/db', redisUrl: 'redis://file:6379' } });

describe('resolveConfig: database and Redis URLs (docs/reference/configuration.md)', () => {
  it('leaves both undefined by default (SQLite, no Redis)', () => {
    const c = resolveConfig({}, {}, bare, secrets);
    expect(c.databaseUrl).toBeUndefined();
    expect(c.redisUrl).toBeUndefined();
  });

  it('takes flags over environment variables over the config file', () => {
    const env = { DATABASE_URL: 'postgresql://env/db', REDIS_URL: 'rediss://env:6380' };
    expect(resolveConfig({}, {}, withUrls, secrets)).toMatchObject({ databaseUrl: 'postgres://file/db', redisUrl: 'redis://file:6379' });
    expect(resolveConfig({}, env, withUrls, secrets)).toMatchObject({ databaseUrl: 'postgresql://env/db', redisUrl: 'rediss://env:6380' });
    expect(resolveConfig({ database: 'postgres://flag/db', redis: 'redis://flag:1' }, env, withUrls, secrets)).toMatchObject({ databaseUrl: 'postgres://flag/db', redisUrl: 'redis://flag:1' });
  });

  it('treats an empty environment variable as unset', () => {
    expect(resolveConfig({}, { DATABASE_URL: '', REDIS_URL: '' }, bare, secrets)).toMatchObject({ databaseUrl: undefined, redisUrl: undefined });
  });

  it('refuses a malformed URL from any source in one line naming the source, never the password', () => {
    expect(() => resolveConfig({}, { DATABASE_URL: 'mysql://root:hunter2@db/app' }, bare, secrets)).toThrow(/^DATABASE_URL must be a postgres:\/\/ or postgresql:\/\/ URL .*not mysql:\/\/…$/);
    expect(() => resolveConfig({}, { REDIS_URL: 'localhost:6379' }, bare, secrets)).toThrow(/^REDIS_URL must be a redis:\/\/ or rediss:\/\/ URL, not localhost:…$/);
    expect(() => resolveConfig({}, {}, defineProject({ tables: [], server: { databaseUrl: 'nope' } }), secrets)).toThrow(/^server\.databaseUrl must be .*not a URL$/);
    try {
      resolveConfig({}, { DATABASE_URL: 'mysql://root:hunter2@db/app' }, bare, secrets);
    } catch (err) {
      expect((err as Error).message).not.toContain('hunter2');
    }
  });
});
