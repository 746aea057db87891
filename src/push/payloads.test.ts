import { describe, expect, it } from 'vitest';
import { apnsPayload } from './apns.js';
import { fcmMessage } from './fcm.js';

const expires = Date.now() + 60_000;

describe('provider payloads', () => {
  it('APNs: alert, badge and sound under aps; data beside it, never replacing aps', () => {
    const p = JSON.parse(apnsPayload({ title: 'T', body: 'B', badge: 3, sound: 'ping.caf', data: { messageId: 'ms_1', aps: 'nope' } }));
    expect(p).toEqual({ messageId: 'ms_1', aps: { alert: { title: 'T', body: 'B' }, badge: 3, sound: 'ping.caf' } });
  });

  it('FCM: notification, string-only data, ttl in seconds; an apns block only when badge or sound is set', () => {
    const m = fcmMessage('tok', { title: 'T', body: 'B', data: { n: 1, s: 'x', o: { a: true } } }, expires).message;
    expect(m).toMatchObject({ token: 'tok', notification: { title: 'T', body: 'B' }, data: { n: '1', s: 'x', o: '{"a":true}' } });
    expect(m.android.ttl).toMatch(/^(59|60)s$/);
    expect('apns' in m).toBe(false);
    expect(fcmMessage('tok', { title: 'T', body: 'B', badge: 2 }, expires).message).toMatchObject({ apns: { payload: { aps: { badge: 2 } } } });
  });
});
