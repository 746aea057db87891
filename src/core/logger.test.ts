import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, logFormat, logRequest, type LogFormat } from './logger.js';

function capture(format: LogFormat) {
  const out = new PassThrough();
  let text = '';
  out.on('data', (d) => (text += d));
  return { log: createLogger('info', format, out), text: () => text };
}

const line = { method: 'POST', path: '/db', route: 'POST /db', status: 200, ms: 3.14159, requestId: 'abc-1' };

describe('logFormat', () => {
  it('takes LOG_FORMAT over the command default and refuses anything else in one line', () => {
    expect(logFormat({}, 'pretty')).toBe('pretty');
    expect(logFormat({ LOG_FORMAT: '' }, 'json')).toBe('json');
    expect(logFormat({ LOG_FORMAT: 'json' }, 'pretty')).toBe('json');
    expect(logFormat({ LOG_FORMAT: 'pretty' }, 'json')).toBe('pretty');
    expect(() => logFormat({ LOG_FORMAT: 'xml' }, 'json')).toThrow('LOG_FORMAT must be json or pretty, not "xml"');
  });
});

describe('request lines', () => {
  it('are JSON for machines: method, path, route, status, ms, request id; level by status', () => {
    const c = capture('json');
    logRequest(c.log, line);
    logRequest(c.log, { ...line, status: 429 });
    logRequest(c.log, { ...line, status: 503 });
    logRequest(c.log, { ...line, status: 500, path: `/${'x'.repeat(500)}` });
    const rows = c
      .text()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(rows[0]).toMatchObject({ level: 30, msg: 'request', method: 'POST', path: '/db', route: 'POST /db', status: 200, ms: 3.1, requestId: 'abc-1' });
    expect(rows.map((r) => r.level)).toEqual([30, 40, 40, 50]);
    expect(rows[3].path.length).toBeLessThan(210);
  });

  it('are one short line for people: time, level, method, path, status, ms, request id', () => {
    const c = capture('pretty');
    logRequest(c.log, line);
    c.log.warn({ what: 'x' }, 'something odd');
    const [req, warn] = c.text().trim().split('\n');
    expect(req).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: POST \/db 200 3\.1ms abc-1$/);
    expect(warn).toMatch(/WARN: something odd \{"what":"x"\}$/);
  });

  it('are the same line the redacting logger writes (written without redaction: none of their keys is redacted)', () => {
    const c = capture('json');
    logRequest(c.log, line);
    c.log.info({ ...line, ms: 3.1 }, 'request');
    const [fast, redacting] = c.text().trim().split('\n');
    expect(JSON.parse(fast!)).toEqual({ ...JSON.parse(redacting!), time: JSON.parse(fast!).time });
    expect(Object.keys(JSON.parse(fast!))).toEqual(Object.keys(JSON.parse(redacting!)));
  });

  it('never print a redacted field, in either format', () => {
    for (const format of ['json', 'pretty'] as const) {
      const c = capture(format);
      c.log.info({ password: 'hunter2', headers: { authorization: 'Bearer t0ken' } }, 'x');
      expect(c.text()).not.toMatch(/hunter2|t0ken/);
    }
  });
});
