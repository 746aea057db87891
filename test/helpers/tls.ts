/**
 * A self-signed certificate for `localhost`/127.0.0.1, made at test time with openssl into a
 * temporary folder (keys are never committed). `dispose` removes the folder.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestCert {
  readonly cert: string;
  readonly key: string;
  dispose(): void;
}

export function makeTestCert(): TestCert {
  const dir = mkdtempSync(join(tmpdir(), 'tb-tls-'));
  const cert = join(dir, 'cert.pem');
  const key = join(dir, 'key.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=DNS:localhost,IP:127.0.0.1',
    ],
    { stdio: 'ignore' },
  );
  return { cert, key, dispose: () => rmSync(dir, { recursive: true, force: true }) };
}
