/**
 * The photo transfer benchmark's project (bench/photo-memory.ts, second part): anyone signed in
 * may upload photos up to 64 MiB, anyone may view them, no rate limits, so a 50 MB upload and
 * download measure the store alone (local folder against S3).
 */
import { authTable, defineProject } from 'tablebase';

const anyone = () => true;

const users = authTable('users', {
  prefix: 'us',
  columns: {},
  authRules: { canSignUp: anyone, canSignIn: anyone },
  policies: { signUp: null, signIn: null, refresh: null },
});

export default defineProject({
  name: 'bench-photos',
  tables: [users],
  photos: {
    maxBytes: 64 * 1024 * 1024,
    rules: { canUpload: (jwt) => jwt !== null, canView: anyone },
    policies: { upload: null, view: null, delete: null },
  },
});
