/**
 * A throw-away certificate authority for TLS stand-ins, made with `openssl`: a CA and one server
 * certificate for 127.0.0.1/localhost. The server under test trusts the CA through
 * NODE_EXTRA_CA_CERTS, exactly as a deployment behind a private relay would; nothing turns
 * verification off.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestCa {
  dir: string;
  /** PEM file of the CA certificate (for NODE_EXTRA_CA_CERTS). */
  caFile: string;
  key: string;
  cert: string;
}

export function makeTestCa(): TestCa {
  const dir = mkdtempSync(join(tmpdir(), 'tb-ca-'));
  const f = (name: string) => join(dir, name);
  const ssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  ssl(
    'req',
    '-x509',
    ...ec,
    '-keyout',
    f('ca.key'),
    '-out',
    f('ca.pem'),
    '-days',
    '2',
    '-subj',
    '/CN=Tablebase test CA',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  );
  ssl('req', ...ec, '-keyout', f('srv.key'), '-out', f('srv.csr'), '-subj', '/CN=localhost');
  writeFileSync(f('srv.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n');
  ssl('x509', '-req', '-in', f('srv.csr'), '-CA', f('ca.pem'), '-CAkey', f('ca.key'), '-CAcreateserial', '-out', f('srv.pem'), '-days', '2', '-extfile', f('srv.ext'));
  return { dir, caFile: f('ca.pem'), key: readFileSync(f('srv.key'), 'utf8'), cert: readFileSync(f('srv.pem'), 'utf8') };
}
