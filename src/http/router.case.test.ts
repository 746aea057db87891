/**
 * The router's behaviour as a table of cases (in the style of Hono's router/common.case.test.ts):
 * each case is a route table, a request and what must match — a route and its params, a 405
 * with its Allow header, or nothing (404).
 */
import { describe, expect, it } from 'vitest';
import { ApiError } from '../core/errors.js';
import type { DeclaredRoute, Method } from './declare.js';
import { Router } from './router.js';

/** The router reads only method and path; a minimal route value stands in for a declaration. */
const route = (method: Method, path: string) => ({ method, path, label: `${method} ${path}` }) as unknown as DeclaredRoute;

type Expect = { route: string; params?: Record<string, string> } | { allow: string } | null;

const CASES: [name: string, routes: [Method, string][], request: [string, string], expected: Expect][] = [
  ['a static path', [['GET', '/db']], ['GET', '/db'], { route: 'GET /db' }],
  [
    'the method picks among a path’s routes',
    [
      ['GET', '/db'],
      ['POST', '/db'],
    ],
    ['POST', '/db'],
    { route: 'POST /db' },
  ],
  [
    'a known path with another method is 405 with Allow',
    [
      ['GET', '/db'],
      ['POST', '/db'],
    ],
    ['PUT', '/db'],
    { allow: 'GET, POST' },
  ],
  ['HEAD falls back to GET', [['GET', '/health']], ['HEAD', '/health'], { route: 'GET /health' }],
  ['an unknown path is nothing', [['GET', '/db']], ['GET', '/nope'], null],
  ['a trailing slash is another path', [['GET', '/db']], ['GET', '/db/'], null],
  ['a parameter', [['GET', '/img/:id']], ['GET', '/img/ph_1'], { route: 'GET /img/:id', params: { id: 'ph_1' } }],
  ['a parameter is percent-decoded', [['GET', '/img/:id']], ['GET', '/img/a%20b'], { route: 'GET /img/:id', params: { id: 'a b' } }],
  ['a bad percent-escape is kept as sent', [['GET', '/img/:id']], ['GET', '/img/%E0%A4%A'], { route: 'GET /img/:id', params: { id: '%E0%A4%A' } }],
  ['an empty parameter does not match', [['GET', '/img/:id']], ['GET', '/img/'], null],
  ['a parameter spans one segment only', [['GET', '/img/:id']], ['GET', '/img/a/b'], null],
  ['two parameters', [['PATCH', '/db/custom/:name/many']], ['PATCH', '/db/custom/bump/many'], { route: 'PATCH /db/custom/:name/many', params: { name: 'bump' } }],
  [
    'a static path wins over a pattern',
    [
      ['GET', '/img/:id'],
      ['GET', '/img/list'],
    ],
    ['GET', '/img/list'],
    { route: 'GET /img/list' },
  ],
  [
    'a parameterized path with another method is 405',
    [
      ['GET', '/img/:id'],
      ['DELETE', '/img/:id'],
    ],
    ['POST', '/img/x'],
    { allow: 'GET, DELETE' },
  ],
  ['a tail wildcard takes one segment', [['GET', '/_/:path*']], ['GET', '/_/tables'], { route: 'GET /_/:path*', params: { path: 'tables' } }],
  ['a tail wildcard takes many segments', [['GET', '/_/:path*']], ['GET', '/_/tables/tasks/tk_1'], { route: 'GET /_/:path*', params: { path: 'tables/tasks/tk_1' } }],
  ['a tail wildcard decodes each segment', [['GET', '/_/:path*']], ['GET', '/_/a%2Fb/c%20d'], { route: 'GET /_/:path*', params: { path: 'a/b/c d' } }],
  ['a tail wildcard needs at least one segment', [['GET', '/_/:path*']], ['GET', '/_'], null],
  ['a tail wildcard refuses an empty segment', [['GET', '/_/:path*']], ['GET', '/_/tables/'], null],
  [
    'a tail wildcard beside the static root',
    [
      ['GET', '/_'],
      ['GET', '/_/:path*'],
    ],
    ['GET', '/_'],
    { route: 'GET /_' },
  ],
  ['a tail wildcard with another method is 405', [['GET', '/_/:path*']], ['POST', '/_/x'], { allow: 'GET' }],
];

describe('Router', () => {
  for (const [name, routes, [method, path], expected] of CASES) {
    it(name, () => {
      const router = new Router(routes.map(([m, p]) => route(m, p)));
      let got: Expect;
      try {
        const m = router.match(method, path);
        got = m && { route: m.route.label, params: m.params };
      } catch (err) {
        if (!(err instanceof ApiError) || err.code !== 'METHOD_NOT_ALLOWED') throw err;
        got = { allow: err.headers!.Allow! };
      }
      if (expected && 'route' in expected) expect(got).toEqual({ params: {}, ...expected });
      else expect(got).toEqual(expected);
    });
  }
});
